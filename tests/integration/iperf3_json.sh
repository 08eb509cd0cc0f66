#!/usr/bin/env bash
# ferry bench -J reads like iperf3 -J: iperf3 -c -P 2 -J and ferry bench
# -P 2 -J run on one namespace pair in this run, and both documents go to
# one parser written for iperf3's schema (the fields iperf3 users read:
# end.sum_sent / sum_received bytes, seconds and bits_per_second, the
# sender's retransmits (both over tcp),
# end.streams[].sender, intervals[].sum and intervals[].streams[],
# end.cpu_utilization_percent). Both must parse, with sane values; ferry's
# per-stream bytes must add up to its sum. Then a failed run: with no
# server, both write a document whose "error" says why.
. "$(dirname "$0")/lib.sh"

need_root
command -v python3 >/dev/null || skip "python3 not found"
command -v iperf3 >/dev/null || skip "iperf3 not found (apt-get install iperf3; make test installs it)"
make_pair
"$FERRY" keygen "$T/key" >/dev/null || fail "keygen"

# parse FILE...: what an iperf3 -J reader takes from each document
parse() {
	python3 - "$@" <<'PY'
import json, sys

def read(path):
    d = json.load(open(path))
    if "error" in d:
        return {"error": d["error"]}
    end = d["end"]
    s, r = end["sum_sent"], end["sum_received"]
    cpu = end["cpu_utilization_percent"]
    streams = [st["sender"] for st in end["streams"]]
    iv = d["intervals"]
    return {
        "bits_per_second": s["bits_per_second"],
        "bytes_sent": s["bytes"], "bytes_received": r["bytes"],
        "seconds": s["seconds"],
        "streams": [(st["socket"], st["bytes"], st["bits_per_second"]) for st in streams],
        "intervals": [(i["sum"]["start"], i["sum"]["end"], i["sum"]["bytes"],
                       i["sum"]["bits_per_second"],
                       [x["bytes"] for x in i["streams"]]) for i in iv],
        "cpu": (cpu["host_total"], cpu["remote_total"]),
        "retransmits": s["retransmits"],
        "num_streams": d["start"]["test_start"]["num_streams"],
    }

for path in sys.argv[1:]:
    print(path.rsplit("/", 1)[-1], json.dumps(read(path)))
PY
}

note "iperf3 -P 2 -J and ferry bench -P 2 -J, 3 s each, A to B"
ip netns exec "$NSB" timeout -k 5 60 iperf3 -s -1 -B "$IPB" -p 5301 >"$T/iperf3-s.out" 2>&1 &
PIDS+=($!)
wait_listen 5301 "$NSB" || fail "iperf3 -s did not listen"
ip netns exec "$NSA" timeout -k 5 60 iperf3 -c "$IPB" -p 5301 -P 2 -t 3 -J \
	>"$T/iperf3.json" || fail "iperf3 -c failed: $(head -c 400 "$T/iperf3.json")"
RPORT=$(free_port)
ip netns exec "$NSB" timeout -k 5 60 "$FERRY" recv --key "$T/key" -B "$IPB" -p "$RPORT" \
	--once -q >"$T/recv.out" 2>&1 &
PIDS+=($!)
wait_listen "$RPORT" "$NSB" || fail "ferry recv did not listen"
ip netns exec "$NSA" timeout -k 5 60 "$FERRY" bench --key "$T/key" -P 2 -t 3 -J \
	"$IPB:$RPORT" >"$T/ferry.json" || fail "ferry bench -J failed"
parse "$T/iperf3.json" "$T/ferry.json" >"$T/parsed" || fail "the iperf3 parser cannot read both documents"
cat "$T/parsed"
python3 - "$T/parsed" <<'PY' || bad "the parsed values are not what both runs did"
import json, sys
got = {}
for ln in open(sys.argv[1]):
    name, doc = ln.split(" ", 1)
    got[name] = json.loads(doc)
for name, g in got.items():
    assert g["num_streams"] == 2 and len(g["streams"]) == 2, (name, g["streams"])
    assert g["bytes_sent"] > 0 and g["bits_per_second"] > 0, name
    assert 2.5 < g["seconds"] < 10, (name, g["seconds"])
    assert abs(g["bits_per_second"] - g["bytes_sent"] * 8 / g["seconds"]) < 0.01 * g["bits_per_second"], name
    assert all(b > 0 and bps > 0 for _, b, bps in g["streams"]), (name, g["streams"])
    assert len(g["intervals"]) >= 2, name
    assert all(len(i[4]) == 2 for i in g["intervals"]), name
    assert isinstance(g["retransmits"], int) and g["retransmits"] >= 0, (name, g["retransmits"])
    host, remote = g["cpu"]
    assert 0 < host <= 200 * 2 and 0 <= remote <= 200 * 2, (name, g["cpu"])
f = got["ferry.json"]
assert sum(b for _, b, _ in f["streams"]) == f["bytes_sent"] == f["bytes_received"], f
assert sum(i[2] for i in f["intervals"]) == f["bytes_sent"], "intervals do not add up"
assert all(sum(i[4]) == i[2] for i in f["intervals"]), "interval streams do not add up"
print("ok: one iperf3 parser reads throughput, bytes, seconds, streams and CPU from both")
PY

note "a failed run: no server at all"
# (iperf3 3.12 exits 0 here; its document still says error)
ip netns exec "$NSA" timeout -k 5 30 iperf3 -c "$IPB" -p 5302 -t 1 -J >"$T/iperf3-fail.json"
ip netns exec "$NSA" timeout -k 5 30 "$FERRY" bench --key "$T/key" -t 1 -J "$IPB:5302" \
	>"$T/ferry-fail.json" 2>/dev/null && bad "ferry bench with no server succeeded"
parse "$T/iperf3-fail.json" "$T/ferry-fail.json" | tee "$T/failed"
[ "$(grep -c '"error": "..*"' "$T/failed")" -eq 2 ] || bad "a failed run's document has no error for the parser"
finish
