#!/usr/bin/env bash
# ferry's verbs transport against perftest's ib_write_bw: same RDMA device,
# same queue-pair count, same message size, same connection method
# (rdma_cm), run back to back.
#
# Both ends run on this host over the device's own IPv4 address (the NIC
# loops the traffic back), for each QP count P:
#   ferry recv --once --transport verbs   +  ferry bench --transport verbs
#       -t DURATION -P P -l SIZE --json
#   ib_write_bw -R -q P -s SIZE -D DURATION (server)  +  the same with the
#       device's address (client)
# and prints ferry's goodput, ib_write_bw's average bandwidth and their
# ratio. ferry writes SIZE + 4 KiB per write (the chunk header block) and
# checks every chunk's crc32c; ib_write_bw writes SIZE and checks nothing,
# so it is the ceiling.
#
# Environment:
#   DURATION            seconds per test (default 10)
#   QPS                 queue-pair counts (default "1 4")
#   SIZE                message size, K/M/G suffixes (default 4M, ferry's
#                       default chunk)
#   FERRY_VERBS_DEVICE  the RDMA device (default: the first with an ACTIVE
#                       port and an IPv4 address)
#   FERRY, BUILD        the ferry binary (default build/apps/ferry/ferry)
#
# Exit status: 0 when every test ran, or when this host has no RDMA device
# (it says so and why); 1 (with the reason) when a test failed or a tool is
# missing.
#
# Example: DURATION=20 QPS="1 2 4 8" bench/verbs_vs_perftest.sh
# shellcheck source=bench/lib/common.sh
. "$(dirname "$0")/lib/common.sh"

DURATION=${DURATION:-10}
QPS=${QPS:-"1 4"}
SIZE=${SIZE:-4M}

cannot_run() {
	echo "verbs_vs_perftest: cannot run here: $*" >&2
	exit 0
}

[[ "$DURATION" =~ ^[1-9][0-9]*$ ]] || die "DURATION must be a whole number of seconds"
for P in $QPS; do
	[[ "$P" =~ ^[1-9][0-9]*$ ]] || die "QPS must be positive integers"
done
need_cmd numfmt "coreutils"
BYTES=$(numfmt --from=iec "$SIZE" 2>/dev/null) || die "SIZE=$SIZE is not a size"
(( BYTES % 4096 == 0 && BYTES > 0 )) || die "SIZE must be a multiple of 4K (ferry's chunk rule)"

# --- a device, its netdev and address ---
DEVS=$(ls /sys/class/infiniband 2>/dev/null | tr '\n' ' ')
[ -n "${DEVS// /}" ] || cannot_run "no RDMA device (/sys/class/infiniband is empty or missing); on a host with a ConnectX, or with soft-RoCE (rdma link add rxe0 type rxe netdev eth0), see docs/verbs.md"

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
for d in ${FERRY_VERBS_DEVICE:-$DEVS}; do
	grep -qs ACTIVE /sys/class/infiniband/"$d"/ports/*/state || continue
	nd=$(netdev_of "$d")
	[ -n "$nd" ] || continue
	ip=$(ip -4 -o addr show dev "$nd" 2>/dev/null | awk '{ sub("/.*", "", $4); print $4; exit }')
	[ -n "$ip" ] || continue
	DEV=$d IP=$ip
	break
done
[ -n "$DEV" ] || cannot_run "no RDMA device with an ACTIVE port and an IPv4 address on its netdev (devices: $DEVS)"

need_cmd ib_write_bw "apt-get install perftest"
need_cmd python3 "needed to read ferry's JSON report"
need_cmd timeout "coreutils"
[ -x "$FERRY" ] || die "no ferry binary at $FERRY (build with meson first)"
grep -q ferry__xport_verbs "$BUILD/lib/xport/xport_list.h" 2>/dev/null ||
	die "this ferry build has no verbs transport (meson did not find libibverbs + librdmacm)"
ulimit -l unlimited 2>/dev/null || [ "$(id -u)" -eq 0 ] ||
	note "RLIMIT_MEMLOCK is $(ulimit -l) KiB; registrations beyond it fail (ulimit -l unlimited)"

export FERRY_VERBS_DEVICE=$DEV
LIMIT=$((DURATION + 60))
"$FERRY" keygen "$T/key" >/dev/null || die "ferry keygen failed"
tail_err() { [ -s "$1" ] && tail -n 8 "$1" | sed 's/^/    /' >&2; }

free_tcp_port() {
	local p
	for _ in $(seq 50); do
		p=$((20000 + RANDOM % 40000))
		ss -Hltn "sport = :$p" 2>/dev/null | grep -q . || { echo "$p"; return; }
	done
	die "no free port"
}

wait_tcp_listen() {
	for _ in $(seq 100); do
		ss -Hltn "sport = :$1" | grep -q . && return 0
		sleep 0.05
	done
	return 1
}

# run_ferry P: ferry's goodput in Gb/s, into GF
run_ferry() {
	local P=$1 port rpid src
	port=$(free_tcp_port)
	timeout -k 5 $LIMIT "$FERRY" recv --key "$T/key" --transport verbs --once -q \
		-B "$IP" -p "$port" >"$T/recv.$P.out" 2>&1 &
	rpid=$!
	wait_tcp_listen "$port" || { tail_err "$T/recv.$P.out"; die "ferry recv did not listen on $IP:$port"; }
	timeout -k 5 $LIMIT "$FERRY" bench --key "$T/key" --transport verbs --json \
		-t "$DURATION" -P "$P" -l "$SIZE" "$IP:$port" \
		>"$T/ferry.$P.json" 2>"$T/ferry.$P.err" &
	wait $!
	src=$?
	[ $src -ne 0 ] && kill -TERM "$rpid" 2>/dev/null
	wait "$rpid"
	[ $src -eq 0 ] || { tail_err "$T/ferry.$P.err"; tail_err "$T/recv.$P.out"; die "ferry bench -P $P failed (exit $src)"; }
	GF=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["end"]["gbps"])' \
		"$T/ferry.$P.json") || die "cannot read $T/ferry.$P.json"
}

# run_perftest P: ib_write_bw's average bandwidth in Gb/s, into GP
run_perftest() {
	local P=$1 port spid src
	port=$(free_tcp_port)
	local args=(-d "$DEV" -R -q "$P" -s "$BYTES" -D "$DURATION" -F --report_gbits -p "$port")
	timeout -k 5 $LIMIT ib_write_bw "${args[@]}" >"$T/pt.s.$P.out" 2>&1 &
	spid=$!
	wait_tcp_listen "$port" || { tail_err "$T/pt.s.$P.out"; die "ib_write_bw server did not listen"; }
	timeout -k 5 $LIMIT ib_write_bw "${args[@]}" "$IP" >"$T/pt.c.$P.out" 2>&1 &
	wait $!
	src=$?
	[ $src -ne 0 ] && kill -TERM "$spid" 2>/dev/null
	wait "$spid"
	[ $src -eq 0 ] || { tail_err "$T/pt.c.$P.out"; die "ib_write_bw -q $P failed (exit $src)"; }
	GP=$(awk '/BW average/ { f = 1; next } f && NF >= 4 && $1 ~ /^[0-9]+$/ { bw = $4 } END { print bw }' "$T/pt.c.$P.out")
	[ -n "$GP" ] || { tail_err "$T/pt.c.$P.out"; die "cannot read ib_write_bw's result"; }
}

note "device $DEV at $IP; $SIZE messages; $DURATION s per test; QPs: $QPS"
printf '%5s %10s %14s %18s %8s\n' QPs size "ferry Gb/s" "ib_write_bw Gb/s" ratio
for P in $QPS; do
	note "$P QP(s): ferry"
	run_ferry "$P"
	note "$P QP(s): ib_write_bw"
	run_perftest "$P"
	python3 - "$P" "$SIZE" "$GF" "$GP" <<'PY'
import sys
P, size, f, p = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
print(f"{P:>5} {size:>10} {f:14.2f} {p:18.2f} {f / p if p else float('nan'):8.2f}")
PY
done
