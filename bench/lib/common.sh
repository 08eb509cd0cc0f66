# shellcheck shell=bash
# Shared helpers for the benchmark scripts in bench/ (sourced, bash).
#
# Conventions: every script cleans up after itself on any exit (EXIT trap):
# processes it started, the network namespaces and veth pair it made, its
# temporary directory. Traffic stays on a veth pair between two fresh
# namespaces, addressed from the benchmarking range 198.18.0.0/15; the
# namespaces have no other interfaces and no routes, so nothing leaves them.
set -uo pipefail

BENCH_ROOT=${BENCH_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
BUILD=${BUILD:-$BENCH_ROOT/build}
FERRY=${FERRY:-$BUILD/apps/ferry/ferry}
T=$(mktemp -d /tmp/ferry-bench.XXXXXX)
NETNS=()
VETH_HOST=

die() { echo "ERROR: $*" >&2; exit 1; }
note() { echo "== $*" >&2; }

bench_cleanup() {
	local p ns sig
	# Background jobs of this shell still running (the timeout wrappers,
	# which pass SIGTERM on), then anything left inside our namespaces:
	# all of it was started by this script. SIGTERM first, SIGKILL after.
	for sig in TERM KILL; do
		for p in $(jobs -p); do
			kill -$sig "$p" 2>/dev/null
		done
		for ns in "${NETNS[@]:-}"; do
			[ -n "$ns" ] || continue
			for p in $(ip netns pids "$ns" 2>/dev/null); do
				kill -$sig "$p" 2>/dev/null
			done
		done
		[ $sig = TERM ] && [ -n "$(jobs -p)" ] && sleep 0.5
	done
	wait 2>/dev/null
	for ns in "${NETNS[@]:-}"; do
		[ -n "$ns" ] && ip netns del "$ns" 2>/dev/null
	done
	# Only left in the root namespace if setup failed half way.
	[ -n "$VETH_HOST" ] && ip link del "$VETH_HOST" 2>/dev/null
	rm -rf "$T"
	return 0
}
trap bench_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

need_root() {
	[ "$(id -u)" -eq 0 ] || die "needs root (network namespaces)"
	ip netns list >/dev/null 2>&1 || die "ip netns does not work here"
}

# need_cmd CMD HINT
need_cmd() { command -v "$1" >/dev/null 2>&1 || die "$1 not found ($2)"; }

# make_pair: fresh namespaces $NSA and $NSB joined by one veth pair
# ($VETHA in A, $VETHB in B), addresses $IPA and $IPB from 198.18.0.0/15.
make_pair() {
	local n=$(( ($$ + RANDOM) % 250 + 1 ))
	NSA=fbenchA$$; NSB=fbenchB$$
	VETHA=fba$$; VETHB=fbb$$
	IPA=198.18.$n.1; IPB=198.18.$n.2
	ip netns add "$NSA" || die "ip netns add $NSA"
	NETNS+=("$NSA")
	ip netns add "$NSB" || die "ip netns add $NSB"
	NETNS+=("$NSB")
	VETH_HOST=$VETHA
	ip link add "$VETHA" type veth peer name "$VETHB" || die "ip link add veth"
	ip link set "$VETHA" netns "$NSA" || die "veth into $NSA"
	ip link set "$VETHB" netns "$NSB" || die "veth into $NSB"
	VETH_HOST=
	ip -n "$NSA" addr add "$IPA/24" dev "$VETHA" || die "address $IPA"
	ip -n "$NSB" addr add "$IPB/24" dev "$VETHB" || die "address $IPB"
	ip -n "$NSA" link set lo up
	ip -n "$NSB" link set lo up
	ip -n "$NSA" link set "$VETHA" up || die "link up $VETHA"
	ip -n "$NSB" link set "$VETHB" up || die "link up $VETHB"
}

# wait_listen PORT NETNS: until something listens on TCP PORT there (5 s).
wait_listen() {
	local port=$1 ns=$2 _
	for _ in $(seq 100); do
		ip netns exec "$ns" ss -Hltn "sport = :$port" | grep -q . && return 0
		sleep 0.05
	done
	return 1
}

# The format /usr/bin/time writes for every measured process:
# wall seconds, user CPU seconds, system CPU seconds, peak RSS in KiB.
# shellcheck disable=SC2034 # used by the scripts that source this
TIME_FMT="%e %U %S %M"

# bench_lock [WAIT_S]: one benchmark at a time on this host. Takes an
# exclusive lock on $BENCH_LOCK (held until the script exits); waits at most
# WAIT_S seconds (default 900) for another benchmark to finish, then goes on
# without it (returns 1). Only benchmarks that call it are kept apart.
BENCH_LOCK=${BENCH_LOCK:-/run/lock/ferry-bench.lock}
bench_lock() {
	local wait=${1:-900}
	exec {BENCH_LOCK_FD}>>"$BENCH_LOCK" || return 1
	flock -n "$BENCH_LOCK_FD" && return 0
	note "waiting (at most $wait s) for another benchmark that holds $BENCH_LOCK"
	flock -w "$wait" "$BENCH_LOCK_FD" && return 0
	note "still held after $wait s: going on without it"
	return 1
}

# cpu_snap: host-wide CPU counters from /proc/stat as "BUSY STEAL TOTAL", in
# seconds (busy = user + nice + system + irq + softirq, on all CPUs).
cpu_snap() {
	awk -v hz="$(getconf CLK_TCK)" '/^cpu / {
		printf "%.2f %.2f %.2f\n", ($2 + $3 + $4 + $7 + $8) / hz, $9 / hz,
			($2 + $3 + $4 + $5 + $6 + $7 + $8 + $9) / hz }' /proc/stat
}

# wait_quiet MAXSEC [BUSY_PCT]: wait (at most MAXSEC seconds) until the host
# is quiet, i.e. below BUSY_PCT (default 15) percent busy over one second.
# These machines are shared: a build next door halves any figure.
# Returns 1 if it never got quiet (the caller decides what to do).
wait_quiet() {
	local max=$1 pct=${2:-15} waited=0 a b
	while :; do
		a=$(cpu_snap); sleep 1; b=$(cpu_snap)
		awk -v a="$a" -v b="$b" -v pct="$pct" 'BEGIN {
			split(a, x, " "); split(b, y, " ");
			exit !((y[1] - x[1]) < pct / 100 * (y[3] - x[3])) }' && return 0
		waited=$((waited + 1))
		[ $waited -ge "$max" ] && return 1
	done
}

# hugepages_warm: touch every free 2 MiB hugepage once, then give them back
# to the pool. In a virtual machine a hugepage the guest has just reserved
# is backed by the hypervisor only when first written: ~3 s of system time
# per 256 MiB on the 2-vCPU VM these figures come from (a mapping of 256
# MiB populated: 2.98 s the first time, 0.03 s after), charged to whichever
# process touches it first. A DTN reserves its hugepages at boot and never
# pays this; warming the pool once keeps it out of the processes' CPU.
hugepages_warm() {
	python3 - <<'PY' || note "could not warm the hugepage pool (measuring anyway)"
import mmap, os
free = 0
for line in open("/proc/meminfo"):
    if line.startswith("HugePages_Free:"):
        free = int(line.split()[1])
size, page = free * (2 << 20), 2 << 20
if size:
    fd = os.memfd_create("ferry-bench-warm", os.MFD_HUGETLB)
    os.ftruncate(fd, size)
    m = mmap.mmap(fd, size)
    for off in range(0, size, page):
        m[off] = 1
    m.close()
    os.close(fd)
PY
}
