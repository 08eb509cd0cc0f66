# shellcheck shell=bash
# ferry_free_port: print a TCP port that no socket holds (in the current
# network namespace), drawn below the kernel's ephemeral range; 1 when
# fifty draws found none. Below that range, because any process's
# outgoing connections take their local ports inside it, and such a
# socket (without SO_REUSEADDR) makes a listener's bind on the same port
# fail between the check and the bind. Sourced by tools/demo.sh and the
# integration tests.
ferry_free_port() {
	local p lo
	read -r lo _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || lo=32768
	[ "$lo" -gt 12000 ] || lo=32768
	for _ in $(seq 50); do
		p=$((10000 + RANDOM % (lo - 10000)))
		ss -Hatn "sport = :$p" 2>/dev/null | grep -q . || { echo "$p"; return 0; }
	done
	return 1
}
