#!/usr/bin/env bash
# Concurrency and crash torture for file sessions: seeded trials of 2-3
# senders with different contents sending overlapping trees to one
# receiver at once, with kill -9 of a sender, the receiver or both at a
# seeded point, then reruns; the invariants are checked after every
# trial (bench/torture.py says which). Over tcp and uroce, between two
# namespaces joined by a veth pair (198.18.0.0/15), shaped so that kills
# land mid-transfer.
#
#   bench/torture.sh                       200 trials: 150 tcp, 50 uroce
#   TORTURE_TRIALS=N TORTURE_SECONDS=S     per transport: stop after N
#                                          trials or S seconds (0: no limit)
#   TORTURE_TRANSPORTS="tcp uroce"         which transports, in turn
#   TORTURE_SEED_BASE=N                    the first seed (default random;
#                                          printed); trial k has seed N+k
#   TORTURE_SEED=N                         replay that one trial (per
#                                          transport listed)
#
# Prints each trial's seed and fault, every violation with its seed, and
# per transport: trials, seconds, seeds, violations. Exit 0 when there
# were none; 77 (with the reason) when it cannot run here.
. "$(dirname "$0")/lib/common.sh"

skip() { echo "SKIP: $*" >&2; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "needs root (network namespaces)"
ip netns list >/dev/null 2>&1 || skip "ip netns does not work here"
command -v tc >/dev/null || skip "no tc (iproute2) to shape the link"
[ -x "$FERRY" ] || die "$FERRY not built"

TRANSPORTS=${TORTURE_TRANSPORTS:-tcp uroce}
BASE=${TORTURE_SEED_BASE:-$(( (RANDOM << 15 | RANDOM) % 900000 + 100000 ))}
if [ -n "${TORTURE_SEED:-}" ]; then
	BASE=$TORTURE_SEED
	export TORTURE_TRIALS=1 TORTURE_SECONDS=0
fi

make_pair
ip -n "$NSA" link set "$VETHA" mtu 9000 && ip -n "$NSB" link set "$VETHB" mtu 9000 ||
	die "veth MTU 9000"
tc -n "$NSA" qdisc add dev "$VETHA" root tbf rate 400mbit burst 256kb latency 100ms ||
	die "tc tbf on $VETHA"

export FERRY NSA NSB IPB TORTURE_KEY=$T/key
"$FERRY" keygen "$TORTURE_KEY" >/dev/null || die "keygen"

HP_FILE=/proc/sys/vm/nr_hugepages
HP_WAS=$(cat $HP_FILE)
restore_hp() { echo "$HP_WAS" >$HP_FILE 2>/dev/null; }

rc=0 ran=0
for tr in $TRANSPORTS; do
	export TORTURE_TRANSPORT=$tr DPDK_A= DPDK_B= TORTURE_TIMEOUT=3
	case $tr in
	tcp) n=${TORTURE_TRIALS:-150} ;;
	uroce)
		n=${TORTURE_TRIALS:-50}
		out=$(env -u FERRY_DPDK "$FERRY" bench --transport uroce -n 1M 127.0.0.1:1 2>&1)
		if [[ $out == *"not in this build"* ]]; then
			echo "uroce: not in this build (meson did not find libdpdk): skipped"
			continue
		fi
		free_hp() { awk '/^HugePages_Free/ { print $2 }' /proc/meminfo; }
		[ "$(free_hp)" -lt 512 ] && echo $((HP_WAS + 512 - $(free_hp))) >$HP_FILE 2>/dev/null
		trap 'restore_hp; bench_cleanup' EXIT
		MEM=
		[ "$(free_hp)" -ge 400 ] || MEM="--no-huge -m 512"
		AFP="framesz=16384,blocksz=16384,framecnt=1024"
		DPDK_A="--vdev=net_af_packet0,iface=$VETHA,$AFP,qdisc_bypass=0 $MEM"
		DPDK_B="--vdev=net_af_packet0,iface=$VETHB,$AFP $MEM"
		# the first session after a start spends the DPDK start-up
		TORTURE_TIMEOUT=5 ;;
	*) die "unknown transport $tr (tcp, uroce)" ;;
	esac
	export TORTURE_ROOT=$T/$tr/root TORTURE_WORK=$T/$tr/work TORTURE_PORT=$((7471 + ran))
	mkdir -p "$TORTURE_ROOT" "$TORTURE_WORK"
	echo "== $tr: up to $n trials${TORTURE_SECONDS:+ or ${TORTURE_SECONDS} s}, seeds from $BASE"
	python3 "$BENCH_ROOT/bench/torture.py" "$n" "${TORTURE_SECONDS:-0}" "$BASE" || rc=1
	# nothing of the run is left running in either namespace
	for ns in "$NSA" "$NSB"; do
		left=$(ip netns pids "$ns" | xargs -r ps -o comm= -p | grep -c ferry)
		[ "$left" -eq 0 ] || { echo "VIOLATION: $left ferry process(es) left in $ns"; rc=1; }
	done
	ran=$((ran + 1))
done
[ $ran -gt 0 ] || skip "no transport could run"
echo "replay a trial: TORTURE_SEED=N TORTURE_TRANSPORTS=tcp|uroce bench/torture.sh"
[ $rc -eq 0 ] && echo PASS || echo FAIL
exit $rc
