#!/usr/bin/env bash
# --metrics: a receiver serves Prometheus text over HTTP while a bench
# session runs. curl scrapes it during the transfer and after; the real
# Prometheus parser (python3-prometheus-client) reads every scrape; the
# counters exist, never go back, and the bytes and chunks the receiver
# counted are what the bench report says were moved. Bad --metrics values
# are refused with the reason.
. "$(dirname "$0")/lib.sh"

command -v curl >/dev/null || skip "curl is not installed (tools/deps.sh installs it)"
PY=
for p in python3 /usr/bin/python3; do
	if command -v "$p" >/dev/null &&
		"$p" -c 'import prometheus_client.parser' 2>/dev/null; then
		PY=$p
		break
	fi
done
[ -n "$PY" ] || skip "python3-prometheus-client is not installed (tools/deps.sh installs it)"

scrape() { # scrape FILE: the body in FILE, the headers in FILE.hdr
	curl -sS --max-time 5 -D "$1.hdr" -o "$1" "$url" || fail "curl $url"
}

note "bad values are refused with the reason"
port=$(free_port)
"$FERRY" recv --no-auth -B 127.0.0.1 -p "$port" --metrics nonsense \
	>"$T/bad.out" 2>&1
rc=$?
if grep -q "built without libmicrohttpd" "$T/bad.out"; then
	skip "this build has no libmicrohttpd (--metrics refused: $(cat "$T/bad.out"))"
fi
[ $rc -eq 2 ] || { cat "$T/bad.out"; fail "--metrics nonsense: exit $rc, not 2"; }
grep -q "want ADDR:PORT" "$T/bad.out" || { cat "$T/bad.out"; fail "no usage hint"; }

note "a receiver with --metrics on a port the kernel picks"
"$FERRY" recv --no-auth -B 127.0.0.1 -p "$port" --metrics 127.0.0.1:0 \
	>"$T/recv.out" 2>"$T/recv.err" &
rpid=$!
PIDS+=($rpid)
wait_listen "$port"
url=$(grep -o 'http://[^ ]*/metrics' "$T/recv.err" | head -1)
[ -n "$url" ] || { cat "$T/recv.err"; fail "the receiver did not print its metrics URL"; }
mport=${url##*:}
mport=${mport%%/*}

note "the metrics port in use: refused, exit 1"
"$FERRY" recv --no-auth -B 127.0.0.1 -p "$(free_port)" \
	--metrics "127.0.0.1:$mport" >"$T/busy.out" 2>&1
rc=$?
[ $rc -eq 1 ] && grep -q "cannot listen" "$T/busy.out" ||
	{ cat "$T/busy.out"; fail "a metrics port in use: exit $rc"; }

scrape "$T/m0"
grep -qi '^content-type: text/plain; version=0.0.4' "$T/m0.hdr" ||
	{ cat "$T/m0.hdr"; fail "wrong Content-Type"; }
code=$(curl -s --max-time 5 -o /dev/null -w '%{http_code}' "${url%/metrics}/nothing")
[ "$code" = 404 ] || fail "GET /nothing answered $code, not 404"

note "bench -t 4 over tcp, scraped twice while it runs"
"$FERRY" bench --no-auth -t 4 -P 4 -i 0 --transport tcp --json \
	127.0.0.1:"$port" >"$T/bench.json" 2>"$T/bench.err" &
bpid=$!
PIDS+=($bpid)
tcp_rx='{transport="tcp",direction="rx"}'
# first: once the data phase has begun (its streams run)
for _ in $(seq 75); do
	scrape "$T/m1"
	grep -qF "ferry_streams_active$tcp_rx 4" "$T/m1" && break
	sleep 0.2
done
# then: once a goodput sample has seen bytes flow (one a second)
for _ in $(seq 40); do
	sleep 0.2
	scrape "$T/m2"
	grep -F "ferry_goodput_bytes_per_second$tcp_rx " "$T/m2" |
		grep -qv " 0.000$" && break
done
wait $bpid || { cat "$T/bench.err"; fail "bench failed"; }
# the receiver ends the session just after the sender: wait for its count
for _ in $(seq 50); do
	scrape "$T/m3"
	grep -q '^ferry_sessions_total{role="receiver",outcome="ok"} 1$' "$T/m3" && break
	sleep 0.1
done
kill -0 $rpid 2>/dev/null || fail "the receiver died"

"$PY" - "$T/m0" "$T/m1" "$T/m2" "$T/m3" "$T/bench.json" <<'PY' || fail "metrics check failed"
import json, sys
from prometheus_client.parser import text_string_to_metric_families

def load(path):
    """{(sample name, labels): value}, {sample name: family type}"""
    vals, types = {}, {}
    for fam in text_string_to_metric_families(open(path).read()):
        assert fam.type in ("counter", "gauge"), (fam.name, fam.type)
        assert fam.documentation, fam.name + " has no HELP"
        for s in fam.samples:
            key = (s.name, tuple(sorted(s.labels.items())))
            assert key not in vals, "series twice: %r" % (key,)
            vals[key] = s.value
            types[s.name] = fam.type
    return vals, types

scrapes = [load(p) for p in sys.argv[1:5]]
end = json.load(open(sys.argv[5]))["end"]
tcp_rx = (("direction", "rx"), ("transport", "tcp"))

def v(i, name, labels=()):
    return scrapes[i][0].get((name, tuple(sorted(labels))))

# counters exist, from the first scrape on for those that need no session
need = ["ferry_sessions_total", "ferry_session_errors_total",
        "ferry_checksum_failures_total", "ferry_cpu_seconds_total",
        "ferry_context_switches_total", "ferry_host_context_switches_total",
        "ferry_host_tcp_sent_segments_total",
        "ferry_host_tcp_retransmitted_segments_total",
        "ferry_uroce_retransmitted_packets_total", "ferry_uroce_naks_total"]
for i in range(4):
    names = scrapes[i][1]
    for n in need:
        assert names.get(n) == "counter", "scrape %d: no counter %s" % (i, n)
    for n in ["ferry_sessions_active"]:
        assert names.get(n) == "gauge", "scrape %d: no gauge %s" % (i, n)
for i in (1, 2, 3):
    for n in ["ferry_payload_bytes_total", "ferry_chunks_total"]:
        assert v(i, n, tcp_rx) is not None, "scrape %d: no %s for tcp rx" % (i, n)
    assert v(i, "ferry_goodput_bytes_per_second", tcp_rx) is not None
    assert v(i, "ferry_streams_active", tcp_rx) is not None

# during the transfer: a session is on, bytes flow
assert v(1, "ferry_sessions_active", [("role", "receiver")]) == 1
assert v(1, "ferry_streams_active", tcp_rx) == 4
assert 0 <= v(1, "ferry_payload_bytes_total", tcp_rx) < v(2, "ferry_payload_bytes_total", tcp_rx)
assert v(2, "ferry_goodput_bytes_per_second", tcp_rx) > 0

# counters never go back (nor vanish) from one scrape to the next
for i in range(3):
    a, b = scrapes[i][0], scrapes[i + 1][0]
    for key, val in a.items():
        if scrapes[i][1][key[0]] != "counter":
            continue
        assert key in b, "scrape %d: %r vanished" % (i + 1, key)
        assert b[key] >= val, "%r went back: %g then %g" % (key, val, b[key])

# after the session: what the bench moved, nothing failed
got = v(3, "ferry_payload_bytes_total", tcp_rx)
assert got == end["bytes"], "metrics say %d bytes, bench %d" % (got, end["bytes"])
assert v(3, "ferry_chunks_total", tcp_rx) == end["chunks"]
assert v(3, "ferry_sessions_total", [("role", "receiver"), ("outcome", "ok")]) == 1
assert v(3, "ferry_sessions_total", [("role", "receiver"), ("outcome", "error")]) == 0
assert v(3, "ferry_sessions_active", [("role", "receiver")]) == 0
assert v(3, "ferry_streams_active", tcp_rx) == 0
assert v(3, "ferry_checksum_failures_total", [("kind", "chunk")]) == 0
assert v(3, "ferry_netdev_rx_dropped_total", [("interface", "lo")]) is not None, \
    "no rx drops for lo, the interface the session used"
print("ok: %d bytes in %d chunks counted, %d series per scrape"
      % (got, end["chunks"], len(scrapes[3][0])))
PY

note "SIGTERM stops the receiver and its metrics server"
kill -TERM $rpid
for _ in $(seq 50); do kill -0 $rpid 2>/dev/null || break; sleep 0.1; done
kill -0 $rpid 2>/dev/null && fail "the receiver did not stop on SIGTERM"
curl -s --max-time 2 -o /dev/null "$url" && fail "metrics still served after exit"
echo "PASS"
