#!/usr/bin/env bash
# Sharing a bottleneck: two `ferry bench` sessions with their defaults and
# one `iperf3 -P 1` start together through ferry-wanem (bench/lib/wan.sh)
# and run for SECS seconds. Does either ferry session take more than its
# fair share + 20%?
#
# Fair share is max-min fair: a flow that cannot use a third of the cap
# (iperf3 -P 1's one window may carry less over a long path) is owed what
# it carries alone, and the rest is split evenly between the others. So
# before the shared run, iperf3 -P 1 runs alone through the same path for
# SOLO seconds, and its rate from OMIT s on is its demand. The equal third
# is printed beside it.
#
#   bench/wan_share.sh [RTT_MS [RATE]]     (default 150 ms, 1gbit)
#
# The bottleneck queue is one bandwidth-delay product (at most 64 MB).
# Each flow's bytes are what its receiver counted (ferry's session
# reports, iperf3's receiver sum) between OMIT s and the end; printed:
# each flow's Gb/s and share, share / fair share, Jain's fairness index,
# and the streams each ferry session chose (its path plan; "N of M" where
# its stream ramp kept N of the M planned; the windows its receiver held
# to the rate and their sum at the end), and iperf3's rate beside the two
# sessions over its rate alone.
#
# Environment: SECS (default 20), OMIT (default 5), SOLO (default 15; 0
# skips the solo run and takes a third as every flow's share), FERRY_ARGS (more
# options for both ferry bench sessions, e.g. "-P 1"), WAN_* and BUILD as for
# bench/lib/wan.sh. Needs root, a build with ferry-wanem, iperf3, python3.
# Exit status: 0 when all three flows ran (whatever the shares), 1 if not.
set -uo pipefail
. "$(dirname "$0")/lib/common.sh"
RTT=${1:-150}
RATE=${2:-1gbit}
SECS=${SECS:-20}
OMIT=${OMIT:-5}
SOLO=${SOLO:-15}
need_root
need_cmd iperf3 "apt-get install iperf3"
need_cmd python3 "apt-get install python3"
[ -x "$FERRY" ] || die "no ferry binary at $FERRY (build with meson first)"
RATE_BPS=$(python3 -c "import re,sys
m = re.fullmatch(r'([0-9.]+)([kmgt]?)bit', sys.argv[1].lower())
print(int(float(m.group(1)) * {'': 1, 'k': 1e3, 'm': 1e6, 'g': 1e9, 't': 1e12}[m.group(2)]))" "$RATE") ||
	die "RATE: a rate like 1gbit or 500mbit"
QUEUE=$(awk -v r="$RTT" -v b="$RATE_BPS" 'BEGIN { q = int(r / 1e3 * b / 8); print q < 64000000 ? q : 64000000 }')
WANEM=${WANEM:-$BUILD/apps/wanem/ferry-wanem}
# shellcheck source=bench/lib/wan.sh
. "$BENCH_ROOT/bench/lib/wan.sh"
trap 'wan_down; bench_cleanup' EXIT
bench_lock "${BENCH_LOCK_WAIT:-900}"
cp "$FERRY" "$T/ferry" || die "cannot copy $FERRY"
FERRY=$T/ferry
"$FERRY" keygen "$T/key" >/dev/null || die "ferry keygen failed"

note "RTT $RTT ms, $RATE, queue $QUEUE bytes: 2 x ferry bench ${FERRY_ARGS:-(defaults)} + iperf3 -P 1, $SECS s"
wan_up --delay "$(awk -v r="$RTT" 'BEGIN { print r / 2 }')" --rate "$RATE" \
	--queue "$QUEUE" || die "the WAN did not come up: $(tail -3 "$WAN_LOG" 2>/dev/null)"
P=7830
if [ "$SOLO" -gt 0 ]; then
	note "iperf3 -P 1 alone for $SOLO s: its demand on this path"
	wan_b timeout -k 5 $((SOLO + 30)) iperf3 -s -1 -J -B "$WAN_IPB" -p $((P + 3)) \
		>"$T/solo-srv.json" 2>&1 &
	solo_srv=$!
	wait_listen $((P + 3)) "$WAN_NSB" || die "iperf3 -s did not listen on $((P + 3))"
	wan_a timeout -k 5 $((SOLO + 30)) iperf3 -c "$WAN_IPB" -p $((P + 3)) -P 1 -t "$SOLO" \
		-i 1 -J --get-server-output >"$T/solo.json" 2>"$T/solo.err" ||
		die "iperf3 alone failed: $(tail -n 2 "$T/solo.err" | tr '\n' ' ')"
	wait "$solo_srv"
	sleep 2 # the queue drains
fi
for k in 0 1; do
	wan_b timeout -k 5 $((SECS + 40)) "$FERRY" recv --key "$T/key" -B "$WAN_IPB" \
		-p $((P + k)) --once --json -i 1 >"$T/ferry$k.json" 2>"$T/recv$k.err" &
done
wan_b timeout -k 5 $((SECS + 40)) iperf3 -s -1 -J -B "$WAN_IPB" -p $((P + 2)) \
	>"$T/iperf3-srv.json" 2>&1 &
for k in 0 1 2; do
	wait_listen $((P + k)) "$WAN_NSB" || die "a receiver did not listen on $((P + k))"
done
pids=()
for k in 0 1; do
	# shellcheck disable=SC2086 # FERRY_ARGS: words
	wan_a timeout -k 5 $((SECS + 40)) "$FERRY" bench --key "$T/key" -t "$SECS" -i 1 \
		--json ${FERRY_ARGS:-} "$WAN_IPB:$((P + k))" >"$T/send$k.json" 2>"$T/send$k.err" &
	pids+=($!)
done
wan_a timeout -k 5 $((SECS + 40)) iperf3 -c "$WAN_IPB" -p $((P + 2)) -P 1 -t "$SECS" \
	-i 1 -J --get-server-output >"$T/iperf3.json" 2>"$T/iperf3.err" &
pids+=($!)
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=1; done
sleep 1
[ $rc = 0 ] || die "a flow failed: $(tail -n 2 "$T"/*.err | tr '\n' ' ')"
python3 - "$T" "$OMIT" "$SECS" "$SOLO" "$RATE_BPS" <<'PY'
import json, os, sys
d, omit, secs, solo = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
cap = float(sys.argv[5]) / 8 # bytes/s
def steady(ivs, end=secs):
    return sum(b for s, e, b in ivs if s >= omit - 0.01 and e <= end + 0.5)
def iperf_ivs(path):
    r = json.load(open(path))
    ivs = r.get("server_output_json", {}).get("intervals") or r["intervals"]
    return [(i["sum"]["start"], i["sum"]["end"], i["sum"]["bytes"]) for i in ivs]
flows = []
for k in (0, 1):
    r = json.loads(open(f"{d}/ferry{k}.json").read().splitlines()[0])
    ivs = [(i["sum"]["start"], i["sum"]["end"], i["sum"]["bytes"]) for i in r["intervals"]]
    s = json.load(open(f"{d}/send{k}.json"))
    ramp = s['start'].get('path', {}).get('ramp')
    used = f"{ramp['streams_used']} of " if ramp else ""
    fit = r['start'].get('path', {}).get('fit')
    held = f", {fit['streams_held']} windows held to {fit['window_bytes'] / 2**20:.1f} MiB" if fit else ""
    flows.append((f"ferry bench #{k + 1} ({used}{s['start'].get('streams')} streams{held})", steady(ivs)))
flows.append(("iperf3 -P 1", steady(iperf_ivs(f"{d}/iperf3.json"))))
span = secs - omit
# max-min fair shares of the cap, in bytes/s: iperf3 is owed the smaller of
# a third and what it carries alone; the ferry sessions split the rest
fair = [cap / 3] * 3
alone = None
if solo > 0 and os.path.exists(f"{d}/solo.json"):
    alone = steady(iperf_ivs(f"{d}/solo.json"), solo) / (solo - omit)
    fair[2] = min(cap / 3, alone)
    fair[0] = fair[1] = (cap - fair[2]) / 2
print(f"| flow | Gb/s ({omit:g}-{secs:g} s) | share of the cap | / a third | / max-min fair share |")
print("|---|---|---|---|---|")
for (name, b), f in zip(flows, fair):
    rate = b / span
    print(f"| {name} | {rate * 8 / 1e9:.3f} | {rate / cap:.2f} | {rate / (cap / 3):.2f} | {rate / f:.2f} |")
x = [b for _, b in flows]
jain = sum(x) ** 2 / (len(x) * sum(v * v for v in x))
worst = max(b / span / f for (_, b), f in zip(flows[:2], fair[:2]))
if alone is not None:
    print(f"iperf3 -P 1 alone: {alone * 8 / 1e9:.3f} Gb/s ({omit:g}-{solo:g} s); "
          f"beside the two sessions {flows[2][1] / span / alone:.2f} of that")
print(f"Jain's index {jain:.3f}; the larger ferry session takes {worst:.2f}x its "
      f"{'max-min ' if alone is not None else ''}fair share "
      f"({'within' if worst <= 1.2 else 'above'} 1.2x)")
PY
