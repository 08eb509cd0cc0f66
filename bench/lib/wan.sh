#!/usr/bin/env bash
# shellcheck shell=bash
# An emulated WAN on one host: two network namespaces joined through
# ferry-wanem, which runs in a third.
#
#   namespace A                namespace W                 namespace B
#   $WAN_DEVA  ---- veth ----  $WAN_PORTA [ferry-wanem] $WAN_PORTB ---- veth ---- $WAN_DEVB
#   $WAN_IPA/24                (no addresses: DPDK net_af_packet)        $WAN_IPB/24
#
# A and B share one subnet of the benchmarking range 198.18.0.0/15 and see
# each other as neighbours; every frame between them crosses ferry-wanem
# (port 0 faces A, port 1 faces B: its "ab" direction is A -> B). Nothing
# leaves the namespaces. The veths have MTU 1500 (WAN_MTU) and no offloads (no
# TSO/GSO/GRO, checksums computed in software), so each frame the kernel
# sends is one real, complete Ethernet frame. ferry-wanem runs at a
# real-time priority (its releases then happen on time on a busy host),
# and A's and B's receive work is steered (RPS) to the other CPUs, off
# ferry-wanem's.
#
# Sourced (bash):
#   . bench/lib/wan.sh
#   wan_up [ferry-wanem options]   topology + ferry-wanem; returns once a
#                                  ping gets through (1 if it never does)
#   wan_a CMD... / wan_b CMD...    run CMD in namespace A / B
#   wan_restart [options]          ferry-wanem again with other options
#                                  (same namespaces and addresses)
#   wan_stop                       stop ferry-wanem (SIGINT); its --json
#                                  statistics are then in $WAN_JSON
#   wan_down                       all of it undone (also on exit)
# Sourcing installs an EXIT trap that calls wan_down and then runs the
# trap that was there before; a script that sets its own EXIT trap later
# must call wan_down from it.
#
# Run directly:
#   bench/lib/wan.sh [ferry-wanem options] [-- COMMAND...]
# runs COMMAND (with WAN_NSA, WAN_NSB, WAN_IPA, WAN_IPB in its
# environment) or, without one, waits for Ctrl-C; then prints ferry-wanem's
# statistics and tears everything down.
#
# Settings (environment): WANEM (the binary; default
# $BUILD/apps/wanem/ferry-wanem, BUILD defaulting to the repository's
# build/), WAN_MEM_MB (DPDK memory, default 1024: 2 MiB hugepages when
# that many are free or can be reserved (given back at wan_down), else
# --no-huge -m WAN_MEM_MB), WAN_LCORE (the CPU ferry-wanem polls on,
# default 1), WAN_MTU (default 1500; up to 9000, then each packet buffer
# takes 16 KiB: mind WAN_MEM_MB and --mbufs), WAN_AFP (extra
# net_af_packet device arguments, default framecnt=2048, or for jumbo
# frames framesz=16384,blocksz=16384,framecnt=1024), WAN_PRIO (how ferry-wanem is started, default
# "chrt -f 50" when that works here; empty for a normal priority), WAN_GRO
# (1: generic receive offload on A's and B's own veth ends, as a real
# host's NIC has it on: each host's TCP receive path then takes frames
# in batches; what crosses ferry-wanem is unchanged, one frame at a time;
# default off), WAN_INITCWND (segments: the initcwnd and initrwnd of A's
# and B's routes to each other, as `ferry doctor` suggests for long paths;
# default: the kernel's 10).

_wan_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
WANEM=${WANEM:-${BUILD:-$_wan_root/build}/apps/wanem/ferry-wanem}
WAN_MEM_MB=${WAN_MEM_MB:-1024}
WAN_LCORE=${WAN_LCORE:-$(( $(nproc) > 1 ? 1 : 0 ))}
WAN_MTU=${WAN_MTU:-1500}
if [ "$WAN_MTU" -gt 1500 ]; then
	WAN_AFP=${WAN_AFP:-framesz=16384,blocksz=16384,framecnt=1024}
else
	WAN_AFP=${WAN_AFP:-framecnt=2048}
fi
if [ -z "${WAN_PRIO+set}" ]; then
	WAN_PRIO=
	chrt -f 50 true 2>/dev/null && WAN_PRIO="chrt -f 50"
fi
WAN_PID=
WAN_NETS=()
WAN_HP_WAS=
WAN_DIR=

_wan_say() { echo "wan: $*" >&2; }

# _wan_link NS DEV: up, MTU $WAN_MTU, no offloads.
_wan_link() {
	ip -n "$1" link set "$2" mtu "$WAN_MTU" up || return 1
	ip netns exec "$1" ethtool -K "$2" tx off tso off gso off gro off \
		>/dev/null 2>&1 || { _wan_say "ethtool -K $2 failed"; return 1; }
}

# _wan_rps NS DEV: the frames ferry-wanem sends into A and B are processed
# (their TCP/IP receive path) on the other CPUs, not on ferry-wanem's:
# else that work runs inside its transmit call, on its CPU.
_wan_rps() {
	local ncpu mask
	ncpu=$(nproc)
	[ "$ncpu" -gt 1 ] && [ "$ncpu" -le 62 ] || return 0
	mask=$(( ((1 << ncpu) - 1) & ~(1 << WAN_LCORE) ))
	[ "$mask" -gt 0 ] || return 0
	ip netns exec "$1" sh -c "printf %x $mask >/sys/class/net/$2/queues/rx-0/rps_cpus" \
		2>/dev/null || _wan_say "no RPS on $2 (receive work stays on ferry-wanem's CPU)"
}

# _wan_net: the three namespaces and two veth pairs.
_wan_net() {
	local n=$(( ($$ + RANDOM) % 250 + 1 )) ns
	WAN_NSA=wanA$$; WAN_NSB=wanB$$; WAN_NSW=wanW$$
	WAN_DEVA=wna$$; WAN_PORTA=wwa$$; WAN_PORTB=wwb$$; WAN_DEVB=wnb$$
	WAN_IPA=198.18.$n.1; WAN_IPB=198.18.$n.2
	WAN_DIR=$(mktemp -d /tmp/ferry-wan.XXXXXX) || return 1
	WAN_JSON=$WAN_DIR/wanem.json
	WAN_LOG=$WAN_DIR/wanem.log
	for ns in "$WAN_NSA" "$WAN_NSB" "$WAN_NSW"; do
		ip netns add "$ns" || { _wan_say "ip netns add $ns failed"; return 1; }
		WAN_NETS+=("$ns")
		# no IPv6: no router solicitations or MLD reports on the wire
		ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
			net.ipv6.conf.default.disable_ipv6=1 >/dev/null 2>&1
		ip -n "$ns" link set lo up
	done
	ip -n "$WAN_NSA" link add "$WAN_DEVA" type veth peer name "$WAN_PORTA" \
		netns "$WAN_NSW" || { _wan_say "veth A failed"; return 1; }
	ip -n "$WAN_NSB" link add "$WAN_DEVB" type veth peer name "$WAN_PORTB" \
		netns "$WAN_NSW" || { _wan_say "veth B failed"; return 1; }
	_wan_link "$WAN_NSA" "$WAN_DEVA" && _wan_link "$WAN_NSB" "$WAN_DEVB" &&
		_wan_link "$WAN_NSW" "$WAN_PORTA" && _wan_link "$WAN_NSW" "$WAN_PORTB" ||
		return 1
	_wan_rps "$WAN_NSA" "$WAN_DEVA"
	_wan_rps "$WAN_NSB" "$WAN_DEVB"
	if [ "${WAN_GRO:-0}" = 1 ]; then
		ip netns exec "$WAN_NSA" ethtool -K "$WAN_DEVA" gro on >/dev/null 2>&1 &&
			ip netns exec "$WAN_NSB" ethtool -K "$WAN_DEVB" gro on >/dev/null 2>&1 ||
			{ _wan_say "ethtool -K gro on failed"; return 1; }
	fi
	ip -n "$WAN_NSA" addr add "$WAN_IPA/24" dev "$WAN_DEVA" || return 1
	ip -n "$WAN_NSB" addr add "$WAN_IPB/24" dev "$WAN_DEVB" || return 1
	if [ -n "${WAN_INITCWND:-}" ]; then
		_wan_initcwnd "$WAN_NSA" "$WAN_DEVA" "$WAN_IPA" &&
			_wan_initcwnd "$WAN_NSB" "$WAN_DEVB" "$WAN_IPB" || return 1
	fi
}

# _wan_initcwnd NS DEV IP: the route NS reaches the other host by, with a
# first window of WAN_INITCWND segments (what `ferry doctor` suggests for
# long paths).
_wan_initcwnd() {
	ip -n "$1" route change "${3%.*}.0/24" dev "$2" proto kernel scope link \
		src "$3" initcwnd "$WAN_INITCWND" initrwnd "$WAN_INITCWND" ||
		{ _wan_say "WAN_INITCWND: ip route change in $1 failed"; return 1; }
}

# _wan_mem: DPDK memory arguments in WAN_MEM_ARGS.
_wan_mem() {
	local want=$(( (WAN_MEM_MB + 1) / 2 )) free nr
	local hp=/proc/sys/vm/nr_hugepages
	free_hp() { awk '/^HugePages_Free/ { print $2 }' /proc/meminfo; }
	# (--in-memory does not go with --no-huge: a file prefix of our own)
	WAN_MEM_ARGS="--no-huge -m $WAN_MEM_MB --file-prefix wanem$$"
	grep -q hugetlbfs /proc/mounts || return 0
	free=$(free_hp)
	if [ "${free:-0}" -lt "$want" ] && [ -z "$WAN_HP_WAS" ] && [ -w $hp ]; then
		nr=$(cat $hp)
		WAN_HP_WAS=$nr
		echo $(( nr + want - free )) >$hp 2>/dev/null
		free=$(free_hp)
	fi
	[ "${free:-0}" -ge "$want" ] && WAN_MEM_ARGS="--in-memory"
	return 0
}

# _wan_forwarding: ferry-wanem said its ports are up.
_wan_forwarding() { grep -q "^ferry-wanem: forwarding" "$WAN_LOG" 2>/dev/null; }

# wan_start [options]: ferry-wanem in namespace W; waits for a ping.
wan_start() {
	local eal end wait_s=20
	[ -x "$WANEM" ] || { _wan_say "no ferry-wanem at $WANEM (a build with DPDK?)"; return 1; }
	_wan_mem
	eal="--vdev=net_af_packet0,iface=$WAN_PORTA,$WAN_AFP"
	eal+=" --vdev=net_af_packet1,iface=$WAN_PORTB,$WAN_AFP"
	eal+=" -l $WAN_LCORE --no-pci --no-telemetry --log-level=*:warning $WAN_MEM_ARGS"
	: >"$WAN_JSON"
	# shellcheck disable=SC2086 # WAN_PRIO: a command and its arguments
	ip netns exec "$WAN_NSW" $WAN_PRIO "$WANEM" --dpdk "$eal" --json "$@" \
		>"$WAN_JSON" 2>"$WAN_LOG" &
	WAN_PID=$!
	end=$((SECONDS + wait_s))
	while [ "$SECONDS" -lt "$end" ]; do
		if ! kill -0 "$WAN_PID" 2>/dev/null; then
			wait "$WAN_PID" 2>/dev/null
			WAN_PID=
			_wan_say "ferry-wanem exited: $(tail -3 "$WAN_LOG")"
			return 1
		fi
		# a ping sent before the ports are up is lost, and waited
		# for: none until ferry-wanem says it forwards
		if ! _wan_forwarding; then
			sleep 0.05
			continue
		fi
		# up to 2 x 1 s of delay each way: wait up to 3 s per ping
		ip netns exec "$WAN_NSA" ping -n -q -c 1 -W 3 "$WAN_IPB" \
			>/dev/null 2>&1 && return 0
		sleep 0.5
	done
	if _wan_forwarding; then
		_wan_say "no ping got through ferry-wanem in ${wait_s} s"
	else
		_wan_say "ferry-wanem did not start forwarding in ${wait_s} s: $(tail -3 "$WAN_LOG")"
	fi
	return 1
}

# wan_stop: SIGINT to ferry-wanem, wait for its statistics (10 s), SIGKILL
# if it does not stop. Returns its exit status.
wan_stop() {
	local rc=0 i
	[ -n "$WAN_PID" ] || return 0
	kill -INT "$WAN_PID" 2>/dev/null
	for ((i = 0; i < 100; i++)); do
		kill -0 "$WAN_PID" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$WAN_PID" 2>/dev/null; then
		_wan_say "ferry-wanem did not stop on SIGINT: killed"
		kill -KILL "$WAN_PID" 2>/dev/null
	fi
	wait "$WAN_PID" 2>/dev/null
	rc=$?
	WAN_PID=
	return "$rc"
}

wan_up() {
	[ "$(id -u)" -eq 0 ] || { _wan_say "needs root (network namespaces)"; return 1; }
	[ ${#WAN_NETS[@]} -gt 0 ] || _wan_net || { wan_down; return 1; }
	wan_start "$@"
}

wan_restart() {
	wan_stop
	wan_start "$@"
}

wan_a() { ip netns exec "$WAN_NSA" "$@"; }
wan_b() { ip netns exec "$WAN_NSB" "$@"; }

# wan_down: ferry-wanem, whatever else runs in the namespaces, the
# namespaces (and with them the veths), the hugepage reservation.
wan_down() {
	local ns p
	wan_stop
	for ns in "${WAN_NETS[@]:-}"; do
		[ -n "$ns" ] || continue
		for p in $(ip netns pids "$ns" 2>/dev/null); do
			kill -KILL "$p" 2>/dev/null
		done
		ip netns del "$ns" 2>/dev/null
	done
	WAN_NETS=()
	if [ -n "$WAN_HP_WAS" ]; then
		echo "$WAN_HP_WAS" >/proc/sys/vm/nr_hugepages 2>/dev/null
		WAN_HP_WAS=
	fi
	rm -rf "/var/run/dpdk/wanem$$"  # the --no-huge runtime files
	[ -n "$WAN_DIR" ] && [ -z "${WAN_KEEP:-}" ] && rm -rf "$WAN_DIR"
	WAN_DIR=
	return 0
}

# The EXIT trap: wan_down, then what was there before.
_wan_prev_exit=
_wan_on_exit() {
	local rc=$?
	wan_down
	[ -n "$_wan_prev_exit" ] && eval "$_wan_prev_exit"
	return $rc
}
_wan_trap() {
	local prev
	prev=$(trap -p EXIT)
	local -a words
	if [ -n "$prev" ] && [ "${prev#*_wan_on_exit}" = "$prev" ]; then
		eval "words=(${prev#trap -- })"  # 'COMMAND' EXIT
		_wan_prev_exit=${words[0]}
	fi
	trap _wan_on_exit EXIT
	[ -n "$(trap -p INT)" ] || trap 'exit 130' INT
	[ -n "$(trap -p TERM)" ] || trap 'exit 143' TERM
}
_wan_trap

# Run directly: options up to "--" for ferry-wanem, then a command.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	set -uo pipefail
	args=()
	while [ $# -gt 0 ] && [ "$1" != "--" ]; do
		args+=("$1")
		shift
	done
	[ "${1:-}" = "--" ] && shift
	if [ "${args[0]:-}" = "-h" ] || [ "${args[0]:-}" = "--help" ]; then
		sed -n '3,/^$/p' "$0" | sed 's/^# \{0,1\}//'
		exit 0
	fi
	wan_up "${args[@]}" || { _wan_say "could not bring the WAN up"; exit 1; }
	_wan_say "A $WAN_IPA (netns $WAN_NSA) <-> ferry-wanem ${args[*]} <-> B $WAN_IPB (netns $WAN_NSB)"
	export WAN_NSA WAN_NSB WAN_IPA WAN_IPB WAN_DEVA WAN_DEVB
	rc=0
	if [ $# -gt 0 ]; then
		"$@" || rc=$?
	else
		_wan_say "Ctrl-C to stop"
		trap 'true' INT TERM
		sleep infinity &
		wait $! || true
		kill $! 2>/dev/null
	fi
	wan_stop
	cat "$WAN_JSON"
	exit "$rc"
fi
