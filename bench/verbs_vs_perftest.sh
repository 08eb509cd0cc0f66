#!/usr/bin/env bash
# ferry's verbs transport against perftest's ib_write_bw: the same RDMA
# devices, the same queue-pair count, the same message size, the same
# connection method (rdma_cm), tests interleaved.
#
# Where:
#   - on this host's RDMA device, both ends over the device's own IPv4
#     address (the NIC loops the traffic back);
#   - where this host has none: in two qemu guests of tests/vm joined by a
#     socket link, soft-RoCE (rxe) on each: the receivers in one, the
#     senders in the other (VM=one: one guest, rxe's loopback path).
#     Under TCG (no KVM) the guests run at a small fraction of the host's
#     speed: only the ratio means anything.
# For each of REPS rounds and each QP count P, in turn:
#   ferry bench --transport verbs -n BYTES -P P -l SIZE --poll M, for each
#       poll mode M of POLLS (against a ferry recv --poll M)
#   ib_write_bw -R -q P -s SIZE -n BYTES/SIZE/P (against its server)
# then per P the median Gb/s of each over the rounds, the ratios ferry /
# ib_write_bw and each round's ratio. ib_write_bw polls busy (it has no
# event mode for writes): `--poll busy` is the like-for-like comparison.
# Where the "NIC" is rxe, it is kernel work on the same CPUs, and a side
# that busy-polls takes CPU from it: hence ferry's event mode beside it.
# ferry's figure is goodput: it also writes a 4 KiB header block per chunk
# and checks every chunk's crc32c on both sides, which ib_write_bw does
# not.
#
# Environment:
#   BYTES               bytes per test (default 256M)
#   REPS                rounds (default 3)
#   QPS                 queue-pair counts (default "1 4")
#   SIZE                message size, K/M/G suffixes (default 4M, ferry's
#                       default chunk)
#   POLLS               ferry's poll modes (default "busy event")
#   VM                  auto (default: this host's device if it has one,
#                       else two guests), local, one or two
#   FERRY_VERBS_DEVICE  the RDMA device here (default: the first with an
#                       ACTIVE port and an IPv4 address)
#   FERRY, BUILD        the ferry binary (default build/apps/ferry/ferry)
#
# Exit status: 0 when every test ran, or when it cannot run here (no RDMA
# device and no guests: it says why); 1 (with the reason) when a test
# failed or a tool is missing.
#
# Example: REPS=5 QPS="1 2 4" bench/verbs_vs_perftest.sh
# shellcheck source=bench/lib/common.sh
. "$(dirname "$0")/lib/common.sh"

BYTES=${BYTES:-256M}
REPS=${REPS:-3}
QPS=${QPS:-"1 4"}
SIZE=${SIZE:-4M}
POLLS=${POLLS:-"busy event"}
VM=${VM:-auto}
export BYTES REPS QPS SIZE POLLS

cannot_run() {
	echo "verbs_vs_perftest: cannot run here: $*" >&2
	exit 0
}

[[ "$REPS" =~ ^[1-9][0-9]*$ ]] || die "REPS must be a positive whole number"
for P in $QPS; do
	[[ "$P" =~ ^[1-9][0-9]*$ ]] || die "QPS must be positive integers"
done
for m in $POLLS; do
	[[ "$m" =~ ^(busy|event)$ ]] || die "POLLS: busy and/or event"
done
need_cmd numfmt "coreutils"
SZ=$(numfmt --from=iec "$SIZE" 2>/dev/null) || die "SIZE=$SIZE is not a size"
NB=$(numfmt --from=iec "$BYTES" 2>/dev/null) || die "BYTES=$BYTES is not a size"
(( SZ % 4096 == 0 && SZ > 0 )) || die "SIZE must be a multiple of 4K (ferry's chunk rule)"
for P in $QPS; do
	(( NB / SZ / P >= 5 )) || die "BYTES/SIZE/P is under 5 for P=$P: ib_write_bw wants 5 iterations or more"
done
need_cmd ib_write_bw "apt-get install perftest"
need_cmd python3 "needed to read ferry's JSON report"
[ -x "$FERRY" ] || die "no ferry binary at $FERRY (build with meson first)"
grep -q ferry__xport_verbs "$BUILD/lib/xport/xport_list.h" 2>/dev/null ||
	die "this ferry build has no verbs transport (meson did not find libibverbs + librdmacm)"

# --- a local device, its address ---
netdev_of() {
	local d=/sys/class/infiniband/$1 f n
	for f in "$d"/device/net/*; do
		[ -e "$f" ] && { basename "$f"; return; }
	done
	for f in "$d"/ports/*/gid_attrs/ndevs/*; do
		n=$(cat "$f" 2>/dev/null) && [ -n "$n" ] && { echo "$n"; return; }
	done
}

DEV='' IP=''
DEVS=$(ls /sys/class/infiniband 2>/dev/null | tr '\n' ' ')
for d in ${FERRY_VERBS_DEVICE:-$DEVS}; do
	grep -qs ACTIVE /sys/class/infiniband/"$d"/ports/*/state || continue
	nd=$(netdev_of "$d")
	[ -n "$nd" ] || continue
	ip=$(ip -4 -o addr show dev "$nd" 2>/dev/null | awk '{ sub("/.*", "", $4); print $4; exit }')
	[ -n "$ip" ] || continue
	DEV=$d IP=$ip
	break
done
if [ "$VM" = auto ]; then
	VM=two
	[ -n "$DEV" ] && VM=local
fi

# lines: the client's lines of a kind, without the guest harness's prefix
lines() { sed -n "s/^\(\[a:[^]]*\] \)\{0,1\}$1 //p" "$T/out"; }

case $VM in
local)
	[ -n "$DEV" ] || cannot_run "no RDMA device with an ACTIVE port and an IPv4 address on its netdev (devices: ${DEVS:-none}); without one, VM=two runs it in two guests with soft-RoCE"
	ulimit -l unlimited 2>/dev/null || [ "$(id -u)" -eq 0 ] ||
		note "RLIMIT_MEMLOCK is $(ulimit -l) KiB; registrations beyond it fail (ulimit -l unlimited)"
	"$FERRY" keygen "$T/key" >/dev/null || die "ferry keygen failed"
	note "device $DEV at $IP; $SIZE messages, $BYTES per test, $REPS round(s); QPs: $QPS; ferry: $POLLS"
	ROLE=both RUN=$T DEV=$DEV SIP=$IP KEY=$T/key FERRY=$FERRY \
		bash "$BENCH_ROOT/bench/lib/perftest_pair.sh" >"$T/out" 2>&1
	rc=$?
	;;
one|two)
	note "in $VM qemu guest(s) with soft-RoCE (tests/vm); $SIZE messages, $BYTES per test, $REPS round(s); QPs: $QPS; ferry: $POLLS"
	# (1 + |POLLS|) x REPS x |QPS| tests of a minute at most under TCG
	VM_TIMEOUT=$(( 120 + (1 + $(echo $POLLS | wc -w)) * REPS * $(echo $QPS | wc -w) * 60 )) FERRY_VM_MEM=2048 \
		VM_PASS="BYTES REPS QPS SIZE POLLS" \
		bash "$BENCH_ROOT/tests/vm/run.sh" "$VM" "$BENCH_ROOT/bench/lib/perftest_pair.sh" >"$T/out" 2>&1
	rc=$?
	[ $rc -eq 77 ] && cannot_run "$(grep -m1 '^SKIP' "$T/out")"
	;;
*) die "VM=$VM: auto, local, one or two" ;;
esac
if [ $rc -ne 0 ]; then
	tail -n 40 "$T/out" >&2
	die "the measurements failed"
fi
echo "tests, in the order run (n, tool, QPs, poll, Gb/s):"
lines TEST | sed 's/^/  /'
lines TABLE
