#!/usr/bin/env bash
# uroce against the raw packet ceiling and against tcp, in one run, on one
# veth pair (MTU 9000) between two fresh network namespaces.
#
#  1. ceiling: dpdk-testpmd txonly in A -> rxonly in B, net_af_packet with
#     the same ring geometry ferry uses, frames of FRAME bytes (default
#     4154: a full 4 KiB RDMA WRITE MIDDLE frame of uroce). Its rate is
#     the median of B's Rx-pps over the run; "payload Gb/s" counts 4096
#     bytes per frame, the goodput those frames would carry for uroce.
#  2. uroce: ferry recv --transport uroce (B) + ferry bench --transport
#     uroce -t DURATION -P STREAMS (A), FERRY_DPDK set per namespace.
#  3. tcp: the same two commands with --transport tcp.
# Goodput is payload Gb/s from the sender's JSON report. CPU is the whole
# process, user + sys, from /usr/bin/time (for uroce that includes the
# busy-polling thread and DPDK's start-up); cycles per byte = CPU seconds x
# the nominal clock (the "cpu MHz" of /proc/cpuinfo: these VMs expose no
# hardware counters to perf) / payload bytes, both processes together.
#
# The three run in turn REPS times (default 3) and the table shows the
# median of each; these hosts are shared, and every row also says how much
# CPU other processes took while it ran.
#
# Environment: DURATION (s per test, default 10), REPS (default 3),
# STREAMS (queue pairs / streams, default 1), FRAME (testpmd frame bytes,
# default 4154),
# QUIET_WAIT (s to wait for a quiet host before each test, default 20),
# BUSY_PCT (what counts as quiet, default 15), POLL (ferry's --poll for
# uroce, both ends: busy or event; default: the transport's), RATE (a cap
# for both ferry benches, their -b: then cycles per byte compare the two
# at one rate; default none), FERRY / BUILD.
# Needs root, dpdk-testpmd (Debian: dpdk-dev), a ferry built with DPDK.
# Hugepages: 1024 x 2 MiB are reserved for the run (and each touched once,
# so that a VM's first-touch cost is not counted as ferry's or testpmd's
# CPU: hugepages_warm in bench/lib/common.sh) and the old setting is
# restored on exit. Prints a table and a markdown block for
# docs/benchmarks.md. Exit 0 when every test ran, 1 with the reason if not.
# shellcheck source=bench/lib/common.sh
. "$(dirname "$0")/lib/common.sh"

DURATION=${DURATION:-10}
REPS=${REPS:-3}
STREAMS=${STREAMS:-1}
FRAME=${FRAME:-4154}
QUIET_WAIT=${QUIET_WAIT:-20}
BUSY_PCT=${BUSY_PCT:-15}
[[ "$DURATION" =~ ^[1-9][0-9]*$ ]] || die "DURATION must be a whole number of seconds"
[[ "$STREAMS" =~ ^[1-9][0-9]*$ ]] || die "STREAMS must be a positive integer"
[[ "$REPS" =~ ^[1-9][0-9]*$ ]] || die "REPS must be a positive integer"
[[ "$FRAME" =~ ^[1-9][0-9]*$ ]] || die "FRAME must be a frame size in bytes"
POLL=${POLL:-}
[[ "$POLL" =~ ^(|busy|event)$ ]] || die "POLL must be busy or event"
RATE=${RATE:-}
[[ "$RATE" =~ ^(|[1-9][0-9]*(\.[0-9]+)?[KMG]?)$ ]] || die "RATE must be a rate like 8G (bits per second)"

need_root
need_cmd dpdk-testpmd "apt-get install dpdk-dev"
need_cmd python3 "needed to read the JSON reports"
need_cmd timeout "coreutils"
[ -x /usr/bin/time ] || die "/usr/bin/time not found (apt-get install time)"
[ -x "$FERRY" ] || die "no ferry binary at $FERRY (build with meson first)"
env -u FERRY_DPDK "$FERRY" bench --transport uroce -n 1M 127.0.0.1:1 2>&1 |
	grep -q "not in this build" && die "this ferry has no uroce transport (built without libdpdk)"
cp "$FERRY" "$T/ferry" || die "cannot copy $FERRY"
FERRY=$T/ferry
LIMIT=$((DURATION + 60))

HP=/proc/sys/vm/nr_hugepages
HP_WAS=$(cat $HP)
restore() { echo "$HP_WAS" >$HP 2>/dev/null; [ -n "${KEEP:-}" ] && cp -r "$T" /tmp/uroce_ceiling.last; bench_cleanup; }
trap restore EXIT
[ "$HP_WAS" -lt 1024 ] && echo 1024 >$HP
FREE=$(awk '/^HugePages_Free/ { print $2 }' /proc/meminfo)
[ "$FREE" -ge 400 ] || die "only $FREE free 2 MiB hugepages (need about 400)"
hugepages_warm

make_pair
ip -n "$NSA" link set "$VETHA" mtu 9000 || die "MTU 9000 on $VETHA"
ip -n "$NSB" link set "$VETHB" mtu 9000 || die "MTU 9000 on $VETHB"
AFP="framesz=16384,blocksz=16384,framecnt=1024"
MHZ=$(awk -F': *' '/^cpu MHz/ { print $2; exit }' /proc/cpuinfo)
NCPU=$(nproc)
# testpmd: main lcore + one forwarding lcore each, on different CPUs
if [ "$NCPU" -ge 4 ]; then LA="-l 0,1"; LB="-l 2,3"; else LA="-l 0-1"; LB="-l 0-1 --main-lcore 1"; fi
note "$NCPU CPUs at $MHZ MHz; $NSA ($IPA) -> $NSB ($IPB); $DURATION s per test"
"$FERRY" keygen "$T/key" >/dev/null || die "ferry keygen"

quiet() {
	[ "$QUIET_WAIT" -gt 0 ] && ! wait_quiet "$QUIET_WAIT" "$BUSY_PCT" &&
		note "host still busy after $QUIET_WAIT s: measuring anyway"
	cpu_snap >"$T/$1.host0"
}

# run_testpmd NAME: the ceiling, files $T/NAME.*
run_testpmd() {
	local name=$1 rx
	quiet "$name"
	# shellcheck disable=SC2086 # lcore lists are option lists
	ip netns exec "$NSB" timeout -s INT -k 5 $((DURATION + 8)) dpdk-testpmd $LB \
		--in-memory --no-pci --vdev="net_af_packet0,iface=$VETHB,$AFP" -- \
		--mbuf-size=16800 --total-num-mbufs=8192 --forward-mode=rxonly \
		--stats-period 1 >"$T/$name.rx" 2>&1 &
	rx=$!
	for _ in $(seq 100); do grep -q "Rx-pps" "$T/$name.rx" && break; sleep 0.1; done
	grep -q "Rx-pps" "$T/$name.rx" || { tail "$T/$name.rx" >&2; die "testpmd rxonly did not start"; }
	# shellcheck disable=SC2086
	ip netns exec "$NSA" timeout -s INT -k 5 $((DURATION + 2)) dpdk-testpmd $LA \
		--in-memory --no-pci --vdev="net_af_packet0,iface=$VETHA,$AFP" -- \
		--mbuf-size=16800 --total-num-mbufs=8192 --txpkts="$FRAME" \
		--forward-mode=txonly --stats-period 1 >"$T/$name.tx" 2>&1
	kill -INT "$rx" 2>/dev/null
	wait "$rx"
	cpu_snap >"$T/$name.host1"
}

# run_ferry NAME TRANSPORT: one ferry bench, files $T/NAME.*
run_ferry() {
	local name=$1 tr=$2 port=$((7400 + RANDOM % 500)) dA="" dB="" rpid src
	local poll=() rate=()
	[ -n "$RATE" ] && rate=(-b "$RATE")
	if [ "$tr" = uroce ]; then
		dA="--vdev=net_af_packet0,iface=$VETHA,$AFP"
		dB="--vdev=net_af_packet0,iface=$VETHB,$AFP"
		[ -n "$POLL" ] && poll=(--poll "$POLL")
	fi
	quiet "$name"
	ip netns exec "$NSB" env FERRY_DPDK="$dB" timeout -k 5 "$LIMIT" \
		/usr/bin/time -f "$TIME_FMT" -o "$T/$name.rtime" \
		"$FERRY" recv --key "$T/key" --transport "$tr" "${poll[@]}" --once -q --json \
		-B "$IPB" -p $port >"$T/$name.recv.json" 2>"$T/$name.recv.err" &
	rpid=$!
	wait_listen $port "$NSB" || die "ferry recv did not listen"
	ip netns exec "$NSA" env FERRY_DPDK="$dA" timeout -k 5 "$LIMIT" \
		/usr/bin/time -f "$TIME_FMT" -o "$T/$name.stime" \
		"$FERRY" bench --key "$T/key" --transport "$tr" "${poll[@]}" "${rate[@]}" --json \
		-t "$DURATION" -P "$STREAMS" "$IPB:$port" \
		>"$T/$name.send.json" 2>"$T/$name.send.err"
	src=$?
	[ $src -ne 0 ] && kill -TERM $rpid 2>/dev/null
	wait $rpid || { tail "$T/$name.recv.err" >&2; die "ferry recv ($tr) failed"; }
	[ $src -eq 0 ] || { tail "$T/$name.send.err" >&2; die "ferry bench ($tr) failed"; }
	cpu_snap >"$T/$name.host1"
}

for rep in $(seq "$REPS"); do
	note "rep $rep/$REPS: ceiling (dpdk-testpmd txonly -> rxonly, $FRAME-byte frames)"
	run_testpmd "testpmd.$rep"
	note "rep $rep/$REPS: ferry bench --transport uroce -P $STREAMS"
	run_ferry "uroce.$rep" uroce
	note "rep $rep/$REPS: ferry bench --transport tcp -P $STREAMS"
	run_ferry "tcp.$rep" tcp
done

python3 - "$T" "$FRAME" "$MHZ" "$DURATION" "$STREAMS" "$NCPU" "$REPS" <<'PY' || die "could not read the results"
import json, re, statistics, sys
T, frame, mhz, dur, streams, ncpu, reps = sys.argv[1], int(sys.argv[2]), \
    float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7])
med = statistics.median

def ptime(path):
    last = [l for l in open(path).read().splitlines() if l.strip()][-1]
    wall, user, sys_, rss = last.split()
    return float(user) + float(sys_)

def other(name, own):
    b0, _, t0 = map(float, open(f"{T}/{name}.host0").read().split())
    b1, _, t1 = map(float, open(f"{T}/{name}.host1").read().split())
    return max(0.0, b1 - b0 - own), t1 - t0

def ceiling(name):
    pps = [float(m) for m in re.findall(r"Rx-pps:\s+(\d+)", open(f"{T}/{name}.rx").read())]
    pps = [p for p in pps if p > 0]
    pps = pps[1:] or pps  # the first second is a partial one
    if not pps:
        sys.exit(f"{name}: testpmd rxonly counted no packets")
    # testpmd's own CPU is not measured: other = all host CPU in the window
    oth, cap = other(name, 0.0)
    return dict(pps=med(pps), other=oth, cap=cap)

def ferry(name, tr):
    r = json.load(open(f"{T}/{name}.send.json"))
    e = r["end"]
    assert r["start"]["transport"] == tr, f"{name}: ran over {r['start']['transport']}"
    assert e["crc_errors"] == 0 and e["peer"]["bytes"] == e["bytes"] > 0, f"{name}: bad report"
    cs, cr = ptime(f"{T}/{name}.stime"), ptime(f"{T}/{name}.rtime")
    oth, cap = other(name, cs + cr)
    return dict(gbps=e["gbps"], bytes=e["bytes"], cpu_s=cs, cpu_r=cr,
                cpb_s=cs * mhz * 1e6 / e["bytes"], cpb_r=cr * mhz * 1e6 / e["bytes"],
                other=oth, cap=cap)

rows = []
for i in range(1, reps + 1):
    c, u, t = ceiling(f"testpmd.{i}"), ferry(f"uroce.{i}", "uroce"), ferry(f"tcp.{i}", "tcp")
    c["pay"] = c["pps"] * 4096 * 8 / 1e9
    rows.append((c, u, t))
    print(f"rep {i}: ceiling {c['pps']/1e3:.0f} kpps = {c['pay']:.2f} Gb/s payload (host CPU in use {c['other']:.1f}/{c['cap']:.1f} s, testpmd included), "
          f"uroce {u['gbps']:.2f} Gb/s ({u['other']:.1f}/{u['cap']:.1f} by others), "
          f"tcp {t['gbps']:.2f} Gb/s ({t['other']:.1f}/{t['cap']:.1f}); uroce/ceiling {u['gbps']/c['pay']:.2f}")

cpps = med(r[0]["pps"] for r in rows)
cfr, cpay = cpps * frame * 8 / 1e9, cpps * 4096 * 8 / 1e9
U = {k: med(r[1][k] for r in rows) for k in ("gbps", "cpb_s", "cpb_r", "other", "cap")}
Tt = {k: med(r[2][k] for r in rows) for k in ("gbps", "cpb_s", "cpb_r", "other", "cap")}
ratio_rep = med(r[1]["gbps"] / r[0]["pay"] for r in rows)
print()
print(f"medians of {reps} reps, {dur} s each, {streams} QP(s)/stream(s), {ncpu} CPUs at {mhz:.0f} MHz")
print(f"  ceiling (testpmd)  {cfr:6.2f} Gb/s of {frame}-byte frames, {cpay:.2f} Gb/s of their payload ({cpps/1e3:.0f} kpps)")
print(f"  ferry uroce        {U['gbps']:6.2f} Gb/s goodput, {U['cpb_s'] + U['cpb_r']:.2f} cycles/B "
      f"({U['cpb_s']:.2f} sender + {U['cpb_r']:.2f} receiver)")
print(f"  ferry tcp          {Tt['gbps']:6.2f} Gb/s goodput, {Tt['cpb_s'] + Tt['cpb_r']:.2f} cycles/B "
      f"({Tt['cpb_s']:.2f} + {Tt['cpb_r']:.2f})")
print(f"  uroce / ceiling    {U['gbps']/cpay:6.2f}   (goal >= 0.85; median of the per-rep ratios {ratio_rep:.2f})")
print(f"  uroce / tcp        {U['gbps']/Tt['gbps']:6.2f}")
print("cycles/B = process CPU (user + sys, /usr/bin/time) x cpu MHz of /proc/cpuinfo / payload bytes")
print()
print("markdown:")
print(f"| {reps} x {dur} s, {streams} QP(s), {ncpu} CPUs @ {mhz:.0f} MHz (medians) | Gb/s | cycles/B (sender + receiver) |")
print("|---|---|---|")
print(f"| ceiling: testpmd txonly -> rxonly, {frame} B frames | {cfr:.2f} ({cpay:.2f} payload) | - |")
print(f"| ferry uroce | {U['gbps']:.2f} | {U['cpb_s'] + U['cpb_r']:.2f} ({U['cpb_s']:.2f} + {U['cpb_r']:.2f}) |")
print(f"| ferry tcp | {Tt['gbps']:.2f} | {Tt['cpb_s'] + Tt['cpb_r']:.2f} ({Tt['cpb_s']:.2f} + {Tt['cpb_r']:.2f}) |")
print(f"| uroce / ceiling (payload) | {U['gbps']/cpay:.2f} | |")
print(f"| uroce / tcp | {U['gbps']/Tt['gbps']:.2f} | |")
PY
