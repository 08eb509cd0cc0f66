#!/usr/bin/env bash
# ferry bench --osu against qperf, on one veth pair between two fresh
# network namespaces (198.18.0.0/15 addresses), in the same run:
#
#   latency by size:   qperf tcp_lat          ferry --osu lat (tcp, uroce)
#   bandwidth by size: qperf tcp_bw           ferry --osu bw  (tcp, uroce)
#
# qperf reports half the round trip as its latency, and the receiver's
# rate of a stream of msg_size sends as its bandwidth; ferry's lat is the
# same half round trip, its bw windows of 64 messages with an ack after
# each (OSU's osu_bw). uroce (ferry's RoCEv2 over DPDK af_packet on the same
# veth pair) runs beside tcp when DPDK starts here, and is skipped (saying
# why) when it does not.
#
# Then the goals, measured REPS times alternating the tools (medians):
# ferry tcp latency at 64 B <= 1.1 x qperf tcp_lat, and ferry tcp
# bandwidth at 1 MiB >= 1.0 x qperf tcp_bw; where uroce runs, uroce's
# 64 B latency <= 1.0 x ferry tcp's and its 1 MiB bandwidth >= 1.0 x.
#
# Writes into RESULTS (outside git): the raw reports, lat.dat and bw.dat
# (size, then one column per tool, NaN where not run), lat.svg and bw.svg
# (gnuplot), ratios.txt.
#
# Environment:
#   LO, HI        message sizes of the sweep, powers of two (default 1, 4194304)
#   QTIME         qperf seconds per size (default 1)
#   REPS          repetitions of the goal measurements (default 5)
#   MTU           of the veth pair (default 9000)
#   POLL          ferry's --poll for tcp (default: the transport's, event)
#   UROCE_ITERS   uroce: --iters of lat and bw, e.g. "1000 20" (default:
#                 OSU's counts, as for tcp: 10000 round trips up to 8 KiB)
#   QUIET_WAIT    wait up to this many seconds for a quiet host before each
#                 part (default 30; 0: do not wait)
#   RESULTS       output directory (default /tmp/ferry-osu-compare.DATE)
#   FERRY, BUILD  the ferry binary (default build/apps/ferry/ferry)
#
# Exit status: 0 when everything ran (goals met or not: see the ratios),
# 1 with the reason when something failed.
#
# Example: REPS=7 bench/osu_compare.sh
# shellcheck source=bench/lib/common.sh
. "$(dirname "$0")/lib/common.sh"

LO=${LO:-1}
HI=${HI:-4194304}
QTIME=${QTIME:-1}
REPS=${REPS:-5}
MTU=${MTU:-9000}
POLL=${POLL:-}
QUIET_WAIT=${QUIET_WAIT:-30}
RESULTS=${RESULTS:-/tmp/ferry-osu-compare.$(date +%Y%m%d-%H%M%S)}
UROCE_ITERS=${UROCE_ITERS:-}
read -r UROCE_LAT_ITERS UROCE_BW_ITERS <<<"$UROCE_ITERS"

for v in LO HI QTIME REPS MTU QUIET_WAIT; do
	[[ "${!v}" =~ ^[0-9]+$ ]] || die "$v must be a whole number"
done
[[ "$UROCE_ITERS" =~ ^([1-9][0-9]*\ +[1-9][0-9]*)?$ ]] ||
	die "UROCE_ITERS is two counts, latency and bandwidth, e.g. \"1000 20\""
[ "$LO" -ge 1 ] && [ "$HI" -le 4194304 ] && [ "$LO" -le "$HI" ] ||
	die "sizes are 1 to 4194304 bytes, LO <= HI"

need_root
need_cmd qperf "apt-get install qperf (tools/deps.sh)"
need_cmd gnuplot "apt-get install gnuplot-nox (tools/deps.sh)"
need_cmd python3 "needed to read the reports"
need_cmd timeout "coreutils"
[ -x "$FERRY" ] || die "no ferry binary at $FERRY (build with meson first)"
mkdir -p "$RESULTS" || die "cannot make $RESULTS"

bench_lock "${BENCH_LOCK_WAIT:-900}"
# A private copy of the binary: a rebuild during the run cannot change it.
cp "$FERRY" "$T/ferry" || die "cannot copy $FERRY"
FERRY=$T/ferry

make_pair
ip -n "$NSA" link set "$VETHA" mtu "$MTU" || die "MTU $MTU"
ip -n "$NSB" link set "$VETHB" mtu "$MTU" || die "MTU $MTU"
"$FERRY" keygen "$T/key" >/dev/null || die "ferry keygen failed"
note "ferry $("$FERRY" version 2>&1 | head -n 1); qperf $(dpkg-query -W -f='${Version}' qperf 2>/dev/null); $NSA $IPA -> $NSB $IPB, MTU $MTU"

quiet() {
	[ "$QUIET_WAIT" -gt 0 ] && ! wait_quiet "$QUIET_WAIT" 10 &&
		note "host still busy after $QUIET_WAIT s: measuring anyway"
	return 0
}

# --- the receivers, in B: qperf, ferry (tcp), ferry (uroce) ---
QPORT=19765
ip netns exec "$NSB" timeout 3600 qperf -lp $QPORT >"$T/qperf.srv" 2>&1 &
wait_listen $QPORT "$NSB" || die "qperf did not listen"
ip netns exec "$NSB" timeout 3600 "$FERRY" recv --key "$T/key" -B "$IPB" -p 7471 \
	--transport tcp ${POLL:+--poll "$POLL"} -q >"$T/recv-tcp.out" 2>&1 &
wait_listen 7471 "$NSB" || die "ferry recv (tcp) did not listen"

AFP="framesz=16384,blocksz=16384,framecnt=1024"
DPDK_MEM="--no-huge -m 512 --file-prefix fosu$$"
UROCE=1
ip netns exec "$NSB" env FERRY_DPDK="--vdev=net_af_packet0,iface=$VETHB,$AFP ${DPDK_MEM}B" \
	timeout 3600 "$FERRY" recv --key "$T/key" -B "$IPB" -p 7472 --transport uroce \
	-q >"$T/recv-uroce.out" 2>&1 &
wait_listen 7472 "$NSB" || UROCE=0
trap 'rm -rf /var/run/dpdk/fosu$$A /var/run/dpdk/fosu$$B; bench_cleanup' EXIT

# ferry_osu TRANSPORT PORT MODE OUT [options...]: one run from A, JSON in OUT
ferry_osu() {
	local xport=$1 port=$2 mode=$3 out=$4 env=()
	shift 4
	[ "$xport" = uroce ] &&
		env=(env FERRY_DPDK="--vdev=net_af_packet0,iface=$VETHA,$AFP ${DPDK_MEM}A")
	[ "$xport" = tcp ] && [ -n "$POLL" ] && set -- --poll "$POLL" "$@"
	# in the background, so that a signal ends the run at once
	ip netns exec "$NSA" "${env[@]}" timeout 900 "$FERRY" bench --key "$T/key" \
		--transport "$xport" --osu "$mode" --json "$@" "$IPB:$port" \
		>"$out" 2>"$out.err" &
	wait $!
}

# qperf_run TEST OUT [options...]: qperf from A, one value per line in OUT
# (ns for tcp_lat, bytes/s for tcp_bw), in the order of the sizes.
qperf_run() {
	local test=$1 out=$2
	shift 2
	ip netns exec "$NSA" timeout 900 qperf -lp $QPORT -uu -t "$QTIME" "$@" \
		"$IPB" "$test" >"$out.raw" 2>&1 &
	wait $! || return 1
	awk '/latency|bw/ { print $3 }' "$out.raw" >"$out"
}

note "sweep: sizes $LO..$HI"
quiet
qperf_run tcp_lat "$RESULTS/qperf-lat.txt" -oo "msg_size:$LO:$HI:*2" ||
	die "qperf tcp_lat failed: $(tail -3 "$RESULTS/qperf-lat.txt.raw")"
quiet
ferry_osu tcp 7471 lat "$RESULTS/ferry-tcp-lat.json" --sizes "$LO-$HI" ||
	die "ferry --osu lat (tcp) failed: $(tail -3 "$RESULTS/ferry-tcp-lat.json.err")"
quiet
qperf_run tcp_bw "$RESULTS/qperf-bw.txt" -oo "msg_size:$LO:$HI:*2" ||
	die "qperf tcp_bw failed: $(tail -3 "$RESULTS/qperf-bw.txt.raw")"
quiet
ferry_osu tcp 7471 bw "$RESULTS/ferry-tcp-bw.json" --sizes "$LO-$HI" ||
	die "ferry --osu bw (tcp) failed: $(tail -3 "$RESULTS/ferry-tcp-bw.json.err")"
if [ $UROCE = 1 ]; then
	quiet
	if ! ferry_osu uroce 7472 lat "$RESULTS/ferry-uroce-lat.json" --sizes "$LO-$HI" \
		${UROCE_LAT_ITERS:+--iters "$UROCE_LAT_ITERS"} ||
	   ! ferry_osu uroce 7472 bw "$RESULTS/ferry-uroce-bw.json" --sizes "$LO-$HI" \
		${UROCE_BW_ITERS:+--iters "$UROCE_BW_ITERS"}; then
		note "uroce skipped: $(tail -2 "$RESULTS"/ferry-uroce-*.err | grep -v '^==' | tail -1)"
		UROCE=0
	fi
else
	note "uroce skipped: its receiver did not start ($(tail -1 "$T/recv-uroce.out"))"
fi

note "goals: 64 B latency and 1 MiB bandwidth, $REPS times each, alternating"
for r in $(seq "$REPS"); do
	quiet
	qperf_run tcp_lat "$RESULTS/goal-qperf-lat.$r" -m 64 || die "qperf tcp_lat -m 64"
	ferry_osu tcp 7471 lat "$RESULTS/goal-ferry-lat.$r.json" --sizes 64 ||
		die "ferry --osu lat --sizes 64"
	qperf_run tcp_bw "$RESULTS/goal-qperf-bw.$r" -m 1M || die "qperf tcp_bw -m 1M"
	ferry_osu tcp 7471 bw "$RESULTS/goal-ferry-bw.$r.json" --sizes 1M --iters 40 ||
		die "ferry --osu bw --sizes 1M"
	[ $UROCE = 1 ] || continue
	ferry_osu uroce 7472 lat "$RESULTS/goal-uroce-lat.$r.json" --sizes 64 \
		${UROCE_LAT_ITERS:+--iters "$UROCE_LAT_ITERS"} ||
		die "ferry --osu lat --sizes 64 (uroce)"
	ferry_osu uroce 7472 bw "$RESULTS/goal-uroce-bw.$r.json" --sizes 1M --iters 40 ||
		die "ferry --osu bw --sizes 1M (uroce)"
done

python3 - "$RESULTS" "$LO" "$HI" "$UROCE" "$REPS" <<'PY' || die "could not read the reports"
import json, os, statistics, sys
res, lo, hi, uroce, reps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1", int(sys.argv[5])
sizes = []
s = lo
while s <= hi:
    sizes.append(s)
    s *= 2
def lines(name):
    return [float(x) for x in open(os.path.join(res, name)).read().split()]
def rows(name):
    p = os.path.join(res, name)
    if not os.path.exists(p):
        return {}
    return {w["size"]: w for w in json.load(open(p))["rows"]}
qlat = dict(zip(sizes, [v / 1e3 for v in lines("qperf-lat.txt")]))   # us
qbw = dict(zip(sizes, [v / 1e6 for v in lines("qperf-bw.txt")]))     # MB/s
ft, fu = rows("ferry-tcp-lat.json"), rows("ferry-uroce-lat.json") if uroce else {}
bt, bu = rows("ferry-tcp-bw.json"), rows("ferry-uroce-bw.json") if uroce else {}
def col(d, s, k=None):
    v = d.get(s)
    if v is None:
        return "NaN"
    return f"{(v[k] if k else v):.3f}"
with open(os.path.join(res, "lat.dat"), "w") as f:
    f.write("# size qperf_tcp_lat_us ferry_tcp_us ferry_uroce_us (half round trip, avg)\n")
    for s in sizes:
        f.write(f"{s} {col(qlat, s)} {col(ft, s, 'avg_us')} {col(fu, s, 'avg_us')}\n")
with open(os.path.join(res, "bw.dat"), "w") as f:
    f.write("# size qperf_tcp_bw_MBps ferry_tcp_MBps ferry_uroce_MBps\n")
    for s in sizes:
        f.write(f"{s} {col(qbw, s)} {col(bt, s, 'mbps')} {col(bu, s, 'mbps')}\n")
print(f"{'size':>8} {'qperf lat':>10} {'ferry tcp':>10} {'uroce':>10}   {'qperf MB/s':>10} {'ferry tcp':>10} {'uroce':>10}")
for s in sizes:
    print(f"{s:>8} {col(qlat, s):>10} {col(ft, s, 'avg_us'):>10} {col(fu, s, 'avg_us'):>10}   "
          f"{col(qbw, s):>10} {col(bt, s, 'mbps'):>10} {col(bu, s, 'mbps'):>10}")
gq = [lines(f"goal-qperf-lat.{r}")[0] / 1e3 for r in range(1, reps + 1)]
gf = [json.load(open(os.path.join(res, f"goal-ferry-lat.{r}.json")))["rows"][0]["avg_us"] for r in range(1, reps + 1)]
bq = [lines(f"goal-qperf-bw.{r}")[0] / 1e6 for r in range(1, reps + 1)]
bf = [json.load(open(os.path.join(res, f"goal-ferry-bw.{r}.json")))["rows"][0]["mbps"] for r in range(1, reps + 1)]
lat_ratio = statistics.median(gf) / statistics.median(gq)
bw_ratio = statistics.median(bf) / statistics.median(bq)
out = [
    f"64 B latency: ferry tcp {statistics.median(gf):.2f} us, qperf tcp_lat {statistics.median(gq):.2f} us "
    f"(medians of {reps}): ratio {lat_ratio:.3f} (goal <= 1.1: {'met' if lat_ratio <= 1.1 else 'MISSED'})",
    f"1 MiB bandwidth: ferry tcp {statistics.median(bf):.1f} MB/s, qperf tcp_bw {statistics.median(bq):.1f} MB/s "
    f"(medians of {reps}): ratio {bw_ratio:.3f} (goal >= 1.0: {'met' if bw_ratio >= 1.0 else 'MISSED'})",
    "  ferry lat runs: " + " ".join(f"{v:.2f}" for v in gf) + "; qperf: " + " ".join(f"{v:.2f}" for v in gq),
    "  ferry bw runs: " + " ".join(f"{v:.0f}" for v in bf) + "; qperf: " + " ".join(f"{v:.0f}" for v in bq),
]
if uroce:
    # the goal sizes, REPS times each, alternating with tcp's: medians
    gu = [json.load(open(os.path.join(res, f"goal-uroce-lat.{r}.json")))["rows"][0] for r in range(1, reps + 1)]
    bu1 = [json.load(open(os.path.join(res, f"goal-uroce-bw.{r}.json")))["rows"][0]["mbps"] for r in range(1, reps + 1)]
    gt = [json.load(open(os.path.join(res, f"goal-ferry-lat.{r}.json")))["rows"][0] for r in range(1, reps + 1)]
    ua, ta = statistics.median(x["avg_us"] for x in gu), statistics.median(x["avg_us"] for x in gt)
    up, tp = statistics.median(x["p50_us"] for x in gu), statistics.median(x["p50_us"] for x in gt)
    ub, tb = statistics.median(bu1), statistics.median(bf)
    out += [
        f"uroce beside tcp: 64 B latency {ua:.2f} us vs {ta:.2f} us (medians of {reps} averages): ratio "
        f"{ua / ta:.2f} (goal <= 1.0: {'met' if ua <= ta else 'MISSED'}); medians of the p50s {up:.2f} vs {tp:.2f} us, "
        f"ratio {up / tp:.2f}",
        f"uroce beside tcp: 1 MiB bandwidth {ub:.1f} MB/s vs {tb:.1f} MB/s (medians of {reps}): ratio "
        f"{ub / tb:.2f} (goal >= 1.0: {'met' if ub >= tb else 'MISSED'})",
        "  uroce lat runs: " + " ".join(f"{x['avg_us']:.2f}" for x in gu) + "; tcp: " +
        " ".join(f"{x['avg_us']:.2f}" for x in gt),
        "  uroce bw runs: " + " ".join(f"{v:.0f}" for v in bu1) + "; tcp: " + " ".join(f"{v:.0f}" for v in bf),
    ]
open(os.path.join(res, "ratios.txt"), "w").write("\n".join(out) + "\n")
print("\n".join(out))
PY

# --- plots ---
plot() { # FILE.svg DATA YLABEL TITLE
	gnuplot <<EOF || note "gnuplot failed for $1"
set terminal svg size 900,560 dynamic
set output '$1'
set logscale xy 2
set logscale y 10
set xlabel 'message size (bytes)'
set ylabel '$3'
set title '$4'
set key left top
set grid
set datafile missing 'NaN'
plot '$2' using 1:2 with linespoints title 'qperf tcp', \
     '' using 1:3 with linespoints title 'ferry tcp', \
     '' using 1:4 with linespoints title 'ferry uroce'
EOF
}
plot "$RESULTS/lat.svg" "$RESULTS/lat.dat" "latency, half round trip (us)" \
	"ferry --osu lat vs qperf tcp_lat ($NSA -> $NSB veth, MTU $MTU)"
plot "$RESULTS/bw.svg" "$RESULTS/bw.dat" "bandwidth (MB/s)" \
	"ferry --osu bw vs qperf tcp_bw ($NSA -> $NSB veth, MTU $MTU)"
note "results in $RESULTS (lat.svg, bw.svg, *.dat, ratios.txt, raw reports)"
