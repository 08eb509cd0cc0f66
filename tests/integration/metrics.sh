#!/usr/bin/env bash
# --metrics: a receiver serves Prometheus text over HTTP while a bench
# session runs. curl scrapes it during the transfer and after; the real
# Prometheus parser (python3-prometheus-client) reads every scrape; the
# counters exist, never go back, and the bytes and chunks the receiver
# counted are what the bench report says were moved; ferry_build_info
# names the version `ferry version` prints; the goodput gauge falls to 0
# once the session is over; the host-wide series (ferry_host_*,
# ferry_netdev_*) are there only with --metrics-host. Bad --metrics
# values are refused with the reason.
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
tcp_rx='{transport="tcp",direction="receive"}'
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
for _ in $(seq 300); do
	scrape "$T/m3"
	grep -q '^ferry_sessions_total{role="receiver",outcome="ok"} 1$' "$T/m3" && break
	sleep 0.1
done
# no session moves data now: the receiver counts a session ended after
# its pipeline went, so the goodput gauge reads 0 from that scrape (m3)
# on, and stays 0 through the next samples (the bytes moved after the
# last sample of the session never show as a rate): scraped for 2 s
gp="ferry_goodput_bytes_per_second$tcp_rx"
for _ in $(seq 20); do
	scrape "$T/m4"
	grep -qxF "$gp 0.000" "$T/m4" ||
		fail "after the session: $(grep -F "$gp" "$T/m4" || echo "no $gp")"
	sleep 0.1
done
kill -0 $rpid 2>/dev/null || fail "the receiver died"
version=$("$FERRY" version | awk '{print $2; exit}')
[ -n "$version" ] || fail "ferry version printed no version"

"$PY" - "$version" "$T/m0" "$T/m1" "$T/m2" "$T/m3" "$T/m4" "$T/bench.json" <<'PY' || fail "metrics check failed"
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

version = sys.argv[1]
scrapes = [load(p) for p in sys.argv[2:7]]
end = json.load(open(sys.argv[7]))["end"]
tcp_rx = (("direction", "receive"), ("transport", "tcp"))

def v(i, name, labels=()):
    return scrapes[i][0].get((name, tuple(sorted(labels))))

# counters exist, from the first scrape on for those that need no session;
# the build is named in every scrape; the host-wide series are not asked
need = ["ferry_sessions_total", "ferry_session_errors_total",
        "ferry_checksum_failures_total", "ferry_cpu_seconds_total",
        "ferry_context_switches_total",
        "ferry_uroce_retransmitted_packets_total", "ferry_uroce_naks_total"]
for i in range(5):
    names = scrapes[i][1]
    for n in need:
        assert names.get(n) == "counter", "scrape %d: no counter %s" % (i, n)
    for n in ["ferry_sessions_active", "ferry_build_info"]:
        assert names.get(n) == "gauge", "scrape %d: no gauge %s" % (i, n)
    info = [k for k in scrapes[i][0] if k[0] == "ferry_build_info"]
    assert len(info) == 1, "scrape %d: build_info %r" % (i, info)
    labels = dict(info[0][1])
    assert labels.get("version") == version, \
        "build_info says version %r, ferry version %r" % (labels, version)
    assert "tcp" in labels.get("transports", "").split(","), labels
    assert scrapes[i][0][info[0]] == 1
    host = [n for n in names
            if n.startswith(("ferry_host_", "ferry_netdev_"))]
    assert not host, "scrape %d: host series without --metrics-host: %r" % (i, host)
for i in (1, 2, 3, 4):
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
for i in range(4):
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
# only senders stall: a receiver has no credit-stall series
assert v(3, "ferry_credit_stalls_total", tcp_rx) is None

# after it, the goodput gauge is 0
for i in (3, 4):
    g = v(i, "ferry_goodput_bytes_per_second", tcp_rx)
    assert g == 0, "scrape %d: goodput %r after the session ended" % (i, g)
print("ok: %d bytes in %d chunks counted, %d series per scrape, version %s"
      % (got, end["chunks"], len(scrapes[3][0]), version))
PY

note "--metrics-host: the host-wide series too"
hport=$(free_port)
"$FERRY" recv --no-auth -B 127.0.0.1 -p "$hport" --metrics 127.0.0.1:0 \
	--metrics-host >"$T/hrecv.out" 2>"$T/hrecv.err" &
PIDS+=($!)
wait_listen "$hport"
hurl=$(grep -o 'http://[^ ]*/metrics' "$T/hrecv.err" | head -1)
[ -n "$hurl" ] || { cat "$T/hrecv.err"; fail "no metrics URL with --metrics-host"; }
"$FERRY" bench --no-auth -n 64M -P 2 -i 0 --transport tcp \
	127.0.0.1:"$hport" >"$T/hbench.out" 2>&1 || { cat "$T/hbench.out"; fail "bench failed"; }
for _ in $(seq 300); do
	curl -sS --max-time 5 -o "$T/h1" "$hurl" || fail "curl $hurl"
	grep -q '^ferry_sessions_total{role="receiver",outcome="ok"} 1$' "$T/h1" && break
	sleep 0.1
done
"$PY" - "$T/h1" <<'PY' || fail "--metrics-host check failed"
import sys
from prometheus_client.parser import text_string_to_metric_families

vals = {}
for fam in text_string_to_metric_families(open(sys.argv[1]).read()):
    for s in fam.samples:
        vals[(s.name, tuple(sorted(s.labels.items())))] = s.value
for n in ["ferry_host_context_switches_total",
          "ferry_host_tcp_sent_segments_total",
          "ferry_host_tcp_retransmitted_segments_total"]:
    assert (n, ()) in vals, "no %s with --metrics-host" % n
assert ("ferry_netdev_rx_dropped_total", (("interface", "lo"),)) in vals, \
    "no rx drops for lo, the interface the session used"
assert ("ferry_build_info" in {k[0] for k in vals})
print("ok: host series with --metrics-host")
PY

note "SIGTERM stops the receiver and its metrics server"
kill -TERM $rpid
for _ in $(seq 300); do kill -0 $rpid 2>/dev/null || break; sleep 0.1; done
kill -0 $rpid 2>/dev/null && fail "the receiver did not stop on SIGTERM within 30 s"
curl -s --max-time 2 -o /dev/null "$url" && fail "metrics still served after exit"
echo "PASS"
