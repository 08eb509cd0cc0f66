# Shared helpers for the integration tests (sourced).
# Every test cleans up after itself, even when it fails: background
# processes, network namespaces and temporary files go in the EXIT trap.
set -uo pipefail

BUILD=${BUILD:-$(cd "$(dirname "$0")/../../build" && pwd)}
# What the tests write is theirs alone, whatever umask they were started
# with (a daemon refuses an exports file that group or others may write).
umask 022
FERRY=$BUILD/apps/ferry/ferry
T=$(mktemp -d /tmp/ferry-test.XXXXXX)
PIDS=()
NETNS=()

skip() { echo "SKIP: $*" >&2; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }
note() { echo "== $*"; }

# Background processes go quietly (bash would report each one killed),
# and so does everything still running inside our namespaces (started by
# `ip netns exec`, which leaves no parent here to kill).
cleanup_procs() {
	local p ns
	{
		for p in "${PIDS[@]:-}"; do
			[ -n "$p" ] && kill -9 "$p"
		done
		for ns in "${NETNS[@]:-}"; do
			[ -n "$ns" ] || continue
			for p in $(ip netns pids "$ns"); do
				kill -9 "$p"
			done
		done
		wait
		jobs  # bash reports the killed jobs here, not after the group
	} >/dev/null 2>&1
}

cleanup() {
	local ns
	cleanup_procs
	for ns in "${NETNS[@]:-}"; do
		[ -n "$ns" ] && ip netns del "$ns" 2>/dev/null
	done
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 143' TERM INT HUP

# bad MESSAGE: a check failed; keep going, fail at the end (finish).
FAILS=()
bad() {
	echo "FAIL: $*" >&2
	FAILS+=("$*")
}

# finish [WHAT]: PASS, or FAIL naming every failed check (WHAT: which
# part of a test this is, when it has several).
finish() {
	if [ ${#FAILS[@]} -gt 0 ]; then
		echo "${#FAILS[@]} check(s) failed${1:+ $1}:" >&2
		printf '  - %s\n' "${FAILS[@]}" >&2
		exit 1
	fi
	echo "PASS${1:+ $1}"
	exit 0
}

# staged ROOT REL part|jrnl: where a receiver whose root (--dir, export
# root) is ROOT stages the target REL below it (lib/io/stage.h).
staged() {
	local h
	h=$(printf 'ferry-stage-1\0%s' "$2" | sha256sum | cut -c1-32)
	echo "$1/.ferry/${h:0:2}/$h.$3"
}

# A TCP port no socket holds (loopback or in the current namespace), below
# the kernel's ephemeral range (tools/free_port.sh says why).
# shellcheck source=tools/free_port.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../tools/free_port.sh"
free_port() {
	ferry_free_port || fail "no free port"
}

# wait_listen PORT [NETNS]: until something listens on PORT
# (WAIT_LISTEN_S, default 30 s, at most: a daemon under a sanitizer on a
# loaded 2-CPU host can take seconds to start; the wait costs time only
# when something is wrong). If the last background job ($!) has ended
# meanwhile, fail at once with what it printed.
WAIT_LISTEN_S=${WAIT_LISTEN_S:-30}
wait_listen() {
	local port=$1 ns=${2:-} job=${!:-} i
	for i in $(seq $((WAIT_LISTEN_S * 20))); do
		if [ -n "$ns" ]; then
			ip netns exec "$ns" ss -Hltn "sport = :$port" | grep . >/dev/null && return 0
		else
			ss -Hltn "sport = :$port" | grep . >/dev/null && return 0
		fi
		if [ -n "$job" ] && ! kill -0 "$job" 2>/dev/null; then
			fail "the daemon (pid $job) ended before it listened on port $port$(tail -n 3 "$T"/*.err 2>/dev/null | sed 's/^/ | /')"
		fi
		sleep 0.05
	done
	fail "nothing listened on port $port within $WAIT_LISTEN_S s"
}

# wait_gone PID SEC: until PID exits (SEC seconds at most); 1 if not.
wait_gone() {
	local pid=$1 i
	for i in $(seq $(($2 * 20))); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.05
	done
	return 1
}

# serve_exports NAME CONF [ARGS...]: a daemon (`ferry serve --exports
# CONF`) on 127.0.0.1, in the background, listening when this returns (or
# the test fails with the daemon's own words); sets SPORT and SPID. Its
# output: $T/NAME.out, $T/NAME.log.
serve_exports() {
	local name=$1 conf=$2 try
	shift 2
	# a free port may be taken before the daemon binds it (others test
	# on this host too): then another one
	for try in 1 2 3; do
		SPORT=$(free_port)
		"$FERRY" serve --exports "$conf" -B 127.0.0.1 -p "$SPORT" -q "$@" \
			>"$T/$name.out" 2>"$T/$name.log" &
		SPID=$!
		PIDS+=($SPID)
		for _ in $(seq $((WAIT_LISTEN_S * 20))); do
			ss -Hltn "sport = :$SPORT" | grep -q . && return 0
			kill -0 $SPID 2>/dev/null || break
			sleep 0.05
		done
		kill -0 $SPID 2>/dev/null &&
			fail "ferry serve ($name) did not listen on port $SPORT within $WAIT_LISTEN_S s"
		grep -q "already in use" "$T/$name.log" ||
			fail "ferry serve ($name) did not start: $(head -c 800 "$T/$name.log")"
	done
	fail "ferry serve ($name): three free ports were taken meanwhile: $(head -c 800 "$T/$name.log")"
}

# exports_pair: keys $T/keys/ops.key (rights all) and $T/keys/ro.key
# (read only), and two daemons on loopback exporting $T/a and $T/b
# ($T/a.conf, $T/b.conf, naming the key files relative to themselves) to
# both; sets PA and PB (their ports) and A and B (their ferry:// URLs).
exports_pair() {
	local s
	mkdir -p $T/a $T/b $T/keys
	for s in ops ro; do
		"$FERRY" keygen $T/keys/$s.key >/dev/null || fail "keygen"
	done
	for s in a b; do
		cat >$T/$s.conf <<CONF
root $T/$s
key ops keys/ops.key rights all paths /
key ro  keys/ro.key  rights read paths /
CONF
	done
	serve_exports a $T/a.conf; PA=$SPORT
	serve_exports b $T/b.conf; PB=$SPORT
	A=ferry://127.0.0.1:$PA; B=ferry://127.0.0.1:$PB
}

need_root() {
	[ "$(id -u)" -eq 0 ] || skip "needs root (network namespaces)"
	ip netns list >/dev/null 2>&1 || skip "ip netns does not work here"
}

# need_wanem: what an emulated WAN (bench/lib/wan.sh) needs: root and
# namespaces, ferry-wanem in this build, ethtool; skips with the reason
# when one is missing. Sets SRC (the source tree) and WANEM.
need_wanem() {
	need_root
	SRC=${SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
	WANEM=$BUILD/apps/wanem/ferry-wanem
	[ -x "$WANEM" ] || skip "no ferry-wanem in this build (meson did not find libdpdk)"
	command -v ethtool >/dev/null || skip "no ethtool (the veths' offloads must be turned off)"
}

# make_pair: namespaces $NSA and $NSB joined by a veth pair, with
# $IPA and $IPB from the benchmarking range 198.18.0.0/15.
make_pair() {
	local n=$(( ($$ + RANDOM) % 250 + 1 ))
	NSA=ferryA$$; NSB=ferryB$$
	IPA=198.18.$n.1; IPB=198.18.$n.2
	ip netns add $NSA || fail "ip netns add"
	NETNS+=($NSA)
	ip netns add $NSB || fail "ip netns add"
	NETNS+=($NSB)
	ip link add vfa$$ type veth peer name vfb$$ || fail "veth"
	ip link set vfa$$ netns $NSA
	ip link set vfb$$ netns $NSB
	ip -n $NSA addr add $IPA/24 dev vfa$$
	ip -n $NSB addr add $IPB/24 dev vfb$$
	ip -n $NSA link set vfa$$ up
	ip -n $NSB link set vfb$$ up
	ip -n $NSA link set lo up
	ip -n $NSB link set lo up
	VETHA=vfa$$; VETHB=vfb$$
}

# check_json FILE BYTES: a valid bench report that moved BYTES (or, with
# BYTES=any, more than 0), every chunk verified on both sides.
check_json() {
	python3 - "$1" "$2" <<'PY' || fail "bad JSON report $1"
import json, sys
r = json.load(open(sys.argv[1]))
e = r["end"]
want = sys.argv[2]
assert e["bytes"] > 0, "nothing moved"
if want != "any":
    assert e["bytes"] == int(want), f"moved {e['bytes']} bytes, wanted {want}"
assert e["peer"]["bytes"] == e["bytes"], "receiver counted different bytes"
assert e["crc_errors"] == 0
assert e["seconds"] > 0 and e["gbps"] > 0
assert e["cpu"]["user_s"] + e["cpu"]["sys_s"] > 0
assert e["peer"]["cpu_user_s"] is not None
assert sum(i["bytes"] for i in r["intervals"]) == e["bytes"], "intervals do not add up"
assert r["start"]["transport"] == "tcp"
print(f"ok: {e['bytes']} bytes in {e['seconds']:.2f} s, {e['gbps']:.2f} Gb/s")
PY
}

# wait_grep PATTERN FILE SEC: until FILE has a line matching PATTERN (SEC
# seconds at most); 1 if not.
wait_grep() {
	for _ in $(seq $(($3 * 10))); do
		grep -q "$1" "$2" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# ---- uroce over DPDK net_af_packet, between make_pair's namespaces ----
# (the caller sets the veths' MTU: 9000 for a 4 KiB path MTU)

HP_FILE=/proc/sys/vm/nr_hugepages
free_huge() { awk '/^HugePages_Free/ { print $2 }' /proc/meminfo; }
AFP="framesz=16384,blocksz=16384,framecnt=1024"

# What runs in our namespaces dies with them, and the hugepages that
# uroce_dpdk reserved go back.
uroce_cleanup() {
	cleanup_procs
	[ -n "${HP_WAS:-}" ] && echo "$HP_WAS" >$HP_FILE 2>/dev/null
	cleanup
}

# uroce_dpdk_args: each end's EAL arguments, DPDK_A and DPDK_B, with MEM.
uroce_dpdk_args() {
	# B's own frames (ACKs, credits) skip the kernel's queueing layer by
	# default and would be invisible to a capture there: qdisc_bypass=0.
	DPDK_B="--vdev=net_af_packet0,iface=$VETHB,$AFP,qdisc_bypass=0 $MEM"
	DPDK_A="--vdev=net_af_packet0,iface=$VETHA,$AFP $MEM"
}

# uroce_dpdk: DPDK's memory, 2 MiB hugepages when they can be had
# (reserved here and given back on exit: it traps uroce_cleanup), else
# --no-huge (MEM); then uroce_dpdk_args.
uroce_dpdk() {
	HP_WAS=$(cat $HP_FILE 2>/dev/null || echo)
	trap uroce_cleanup EXIT
	[ "${HP_WAS:-0}" -lt 1024 ] 2>/dev/null && echo 1024 >$HP_FILE 2>/dev/null
	if [ "$(free_huge)" -ge 400 ] 2>/dev/null; then
		MEM=""
		note "DPDK on hugepages ($(free_huge) free 2 MiB pages)"
	else
		MEM="--no-huge -m 512"
		note "not enough hugepages ($(free_huge) free): DPDK with --no-huge"
	fi
	uroce_dpdk_args
}

# uroce_first START STOP FIRST LOG...: can DPDK start here? Run START (a
# receiver) and FIRST (a small first session), the caller's functions,
# which write the LOGs. When DPDK did not start on hugepages: STOP, and
# again with --no-huge; when it cannot start at all: skip, saying why
# (after $UROCE_SKIP, where the caller sets one). Another failure fails.
dpdk_failed() { grep -q "DPDK EAL did not start\|cannot make mbuf pools" "$@"; }
uroce_first() {
	local start=$1 stop=$2 first=$3
	shift 3
	$start
	while ! $first; do
		dpdk_failed "$@" ||
			{ tail -20 "$@"; fail "the first uroce session failed"; }
		[ -z "$MEM" ] ||
			skip "${UROCE_SKIP:-}DPDK cannot start here: $(grep -ho 'uroce: DPDK.*' "$@" | head -1)"
		note "DPDK did not start on hugepages: trying --no-huge"
		$stop
		MEM="--no-huge -m 512"
		uroce_dpdk_args
		$start
	done
}

# uroce_recv NAME PORT ARGS...: `ferry recv --transport uroce ARGS` in B
# on $IPB:PORT with B's EAL arguments, bounded (10 min), its output in
# $T/NAME.out and $T/NAME.err; listening when this returns. URPID: its
# pid (uroce_stop kills it).
uroce_recv() {
	local name=$1 port=$2
	shift 2
	ip netns exec $NSB env FERRY_DPDK="$DPDK_B" timeout 600 "$FERRY" recv \
		--transport uroce -B $IPB -p $port "$@" \
		>"$T/$name.out" 2>"$T/$name.err" &
	URPID=$!
	PIDS+=("$URPID")
	wait_listen $port $NSB
}
uroce_stop() {
	kill -9 $URPID 2>/dev/null
	wait $URPID 2>/dev/null
}

# uroce_send ARGS...: ferry ARGS in A with A's EAL arguments, bounded
# (2 min).
uroce_send() {
	ip netns exec $NSA env FERRY_DPDK="$DPDK_A" timeout 120 "$FERRY" "$@"
}
