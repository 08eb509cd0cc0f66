# uroce and verbs on one wire, inside one guest (in two guests, guest a
# runs it and b has no part): ferry's own RoCEv2 engine (uroce, DPDK net_af_packet) in a
# network namespace, the kernel's (rxe) on the other end of a veth pair,
# in the guest's initial namespace (rxe in Linux 6.1 listens only there).
# Each way round, a uroce sender filling a verbs receiver's ring and a
# verbs sender filling a uroce receiver's, it checks:
#  - ferry bench -n 8M -P 2 with --transport auto on both sides: each side
#    picked its own transport, named the other's and said why (the same
#    wire, RoCEv2); the receiver counted every byte; no crc error;
#  - ferry send --transport NAME of a small tree (the sender names its
#    transport, the receiver stays on auto): an identical copy;
#  - a capture of both sessions on the veth (dumpcap): ferry rocedump
#    decodes every frame with a good ICRC and finds at least the 2056 RDMA
#    WRITE frames of the bench's 8 MiB; tshark (-d udp.port==4791,
#    infiniband) reads the same frames as InfiniBand, none malformed, with
#    WRITEs, SENDs and ACKs among them; no ICMP;
#  - the verbs receiver, and the verbs sender of the tree, poll in event
#    mode (completion channels; the sender waits for the hello so too);
#  - each receiver served both of its sessions over its own transport,
#    paired with the other, and failed none.
# Exits 77 (skipped) where the build has no uroce (no DPDK), or without
# tshark.
. "$(dirname "$0")/../glib.sh"

grep -q ferry__xport_uroce "$BUILD/lib/xport/xport_list.h" ||
	skip "this build has no uroce transport (meson did not find libdpdk)"
command -v dumpcap >/dev/null && command -v tshark >/dev/null ||
	skip "no dumpcap and tshark to capture and read the frames (apt-get install tshark)"
two && ! client && finish "(guest b: interop runs in guest a alone)"

N=$(($$ % 250 + 1))
IPV=198.19.$N.1 # the verbs end: the initial namespace, rxe on $VI
IPU=198.19.$N.2 # the uroce end: namespace $NS, DPDK on $VU
NS=ferryU$$ VI=fvi$$ VU=fvu$$ RXE=rxi$$
PV=7481 PU=7482
HP=/proc/sys/vm/nr_hugepages
HP_WAS=$(cat $HP)
# the bench's 8 MiB in 1 MiB chunks, each written with its 4 KiB header
# block at a 4 KiB path MTU: 8 x 257 RDMA WRITE packets (the tree's more)
WRITES=2056

# The processes first (a device in use cannot go), then rxe, the
# namespace (and the veth pair with it), the hugepages.
interop_end() {
	gone
	rdma link del $RXE 2>/dev/null
	cleanup
	echo "$HP_WAS" >$HP 2>/dev/null
}
trap interop_end EXIT

ip netns add $NS || fail "ip netns add"
NETNS+=($NS)
ip link add $VI mtu 9000 type veth peer name $VU mtu 9000 || fail "veth"
ip link set $VU netns $NS &&
	ip addr add $IPV/24 dev $VI && ip link set $VI up &&
	ip -n $NS addr add $IPU/24 dev $VU && ip -n $NS link set $VU up &&
	ip -n $NS link set lo up || fail "setting up the veth pair"
rdma link add $RXE type rxe netdev $VI || fail "rdma link add $RXE on $VI"
for _ in $(seq 100); do
	grep -qs ACTIVE /sys/class/infiniband/$RXE/ports/1/state && break
	sleep 0.1
done
grep -qs ACTIVE /sys/class/infiniband/$RXE/ports/1/state ||
	fail "$RXE's port is not ACTIVE"

# DPDK's memory: 2 MiB hugepages, else none
echo 128 >$HP
MEM=
[ "$(awk '/^HugePages_Free/ { print $2 }' /proc/meminfo)" -ge 96 ] ||
	MEM="--no-huge -m 256"
DPDK="--vdev=net_af_packet0,iface=$VU,framesz=16384,blocksz=16384,framecnt=1024 $MEM"
note "verbs on $RXE ($VI, $IPV); uroce in $NS ($VU, $IPU), DPDK ${MEM:-on hugepages}"
# in the namespace, with DPDK's arguments (the sessions there use uroce)
in_ns() { ip netns exec $NS env FERRY_DPDK="$DPDK" "$@"; }

# listening PID PORT LOG [NS]: until PID listens on PORT, or fail with
# its LOG when it ends first
listening() {
	local ss=(ss)
	[ -n "${4:-}" ] && ss=(ip netns exec "$4" ss)
	for _ in $(seq 200); do
		"${ss[@]}" -Hltn "sport = :$2" | grep -q . && return 0
		kill -0 "$1" 2>/dev/null ||
			fail "ferry recv did not start: $(tail -n 3 "$3")"
		sleep 0.1
	done
	fail "ferry recv did not listen on port $2: $(tail -n 3 "$3")"
}

# Both receivers on --transport auto; --timeout 60: under TCG a uroce
# sender's first session starts its DPDK EAL for seconds.
mkdir -p "$W/dst.verbs" "$W/dst.uroce"
"$FERRY" recv --key "$KEY" -B $IPV -p $PV -d "$W/dst.verbs" -i 0 \
	--timeout 60 --poll event >"$L.recv-verbs.log" 2>&1 &
PIDS+=($!)
listening $! $PV "$L.recv-verbs.log"
in_ns "$FERRY" recv --key "$KEY" -B $IPU -p $PU -d "$W/dst.uroce" -i 0 \
	--timeout 60 -v >"$L.recv-uroce.log" 2>&1 &
PIDS+=($!)
listening $! $PU "$L.recv-uroce.log" $NS

# capture NAME: dumpcap on $VI (both directions of the veth) into
# $W/NAME.pcapng, until capture_end
capture() {
	dumpcap -i $VI -f "udp port 4791 or icmp" -B 64 -w "$W/$1.pcapng" \
		>/dev/null 2>"$W/$1.dumpcap" &
	CAP=$!
	PIDS+=($CAP)
	for _ in $(seq 100); do
		grep -q "Capturing on" "$W/$1.dumpcap" && return 0
		sleep 0.1
	done
	bad "$1: dumpcap did not start: $(cat "$W/$1.dumpcap")"
}
capture_end() {
	sleep 0.5
	kill -INT $CAP
	wait_gone $CAP 10 || bad "$1: dumpcap did not stop"
	sed -n "s/^/dumpcap: /; /dropped/p" "$W/$1.dumpcap"
}

# check_capture NAME: rocedump and tshark on $W/NAME.pcapng
check_capture() {
	local cap=$W/$1.pcapng n
	"$FERRY" rocedump "$cap" >"$W/$1.dump" 2>&1 ||
		bad "$1: ferry rocedump exited $?: $(tail -n 1 "$W/$1.dump")"
	python3 "$CHECK" dump "$W/$1.dump" $WRITES || bad "$1: ferry rocedump's counts"
	n=$(tail -n 1 "$W/$1.dump" | awk -F', ' '{ print $2 + 0 }')
	"$SRC/tests/tshark-ib.sh" -r "$cap" -T fields \
		-e infiniband.bth.opcode -e _ws.malformed >"$W/$1.tshark" 2>/dev/null ||
		bad "$1: tshark cannot read the capture"
	python3 "$CHECK" tshark "$W/$1.tshark" "$n" $WRITES || {
		bad "$1: tshark's reading"
		# what tshark found wrong, for whoever reads the log
		"$SRC/tests/tshark-ib.sh" -r "$cap" -Y _ws.malformed \
			-O infiniband 2>&1 | head -n 60 | sed 's/^/  tshark: /' >&2
	}
}

# the tree `ferry send` copies
mkdir -p "$W/src/tree/sub/deeper"
head -c $((3 << 20)) /dev/urandom >"$W/src/tree/big.bin"
head -c 4097 /dev/urandom >"$W/src/tree/sub/odd.bin"
head -c 1 /dev/urandom >"$W/src/tree/sub/deeper/one"
: >"$W/src/tree/empty"
echo "one wire, two RoCEv2 stacks" >"$W/src/tree/hello.txt"
tree "$W/src/tree" >"$W/src.tree"

# way SENDER RECEIVER DEST RUN: both sessions from SENDER's side, with RUN
# (in_ns or nothing) in front, captured
way() {
	local tx=$1 rx=$2 dest=$3 name=$1-$2 poll=busy
	shift 3
	[ $tx = verbs ] && poll=event # completion channels, the hello too
	capture $name
	note "$tx -> $rx: ferry bench -n 8M -P 2, both on --transport auto"
	if "$@" timeout 120 "$FERRY" bench --key "$KEY" -n 8M -l 1M \
		--slots 16 -P 2 --timeout 60 --json "$dest" \
		>"$W/$name.json" 2>"$W/$name.err"; then
		python3 "$CHECK" pair bench "$W/$name.json" $((8 << 20)) $tx $rx ||
			bad "$name: the bench report"
	else
		bad "$name: bench failed: $(tail -n 3 "$W/$name.err")"
	fi
	note "$tx -> $rx: ferry send --transport $tx --poll $poll of a small tree"
	if "$@" timeout 120 "$FERRY" send --key "$KEY" --transport $tx -P 2 \
		--poll $poll --timeout 60 --json "$W/src/tree" "$dest:/$name" \
		>"$W/$name.send.json" 2>"$W/$name.send.err"; then
		python3 "$CHECK" pair sent "$W/$name.send.json" 5 $tx $rx ||
			bad "$name: the send report"
		grep -q "\"poll\": \"$poll\"" "$W/$name.send.json" ||
			bad "$name: the sender did not poll in $poll mode"
	else
		bad "$name: send failed: $(tail -n 3 "$W/$name.send.err")"
	fi
	if tree "$W/dst.$rx/$name/tree" | diff - "$W/src.tree"; then
		echo "ok: the tree arrived identical over $tx -> $rx"
	else
		bad "$name: the copy differs from the source"
	fi
	capture_end $name
	note "$tx -> $rx: the capture of both sessions"
	check_capture $name
}

way uroce verbs $IPV:$PV in_ns
way verbs uroce $IPU:$PU

note "the receivers' side"
for rx in verbs uroce; do
	tx=uroce
	[ $rx = uroce ] && tx=verbs
	log=$L.recv-$rx.log
	n=$(grep -c "receiver over $rx (auto picked $rx: the sender offered $tx, the same wire (RoCEv2)" "$log")
	[ "$n" -eq 2 ] || bad "the $rx receiver reported $n sessions paired with $tx, wanted 2"
	n=$(grep -c "chunks verified, 0 crc errors" "$log")
	[ "$n" -eq 2 ] || bad "the $rx receiver summed up $n sessions without crc errors, wanted 2"
	grep "session failed" "$log" && bad "the $rx receiver logged a failed session"
done
n=$(grep -c "receiver over verbs (.*; event polling)" "$L.recv-verbs.log")
[ "$n" -eq 2 ] || bad "the verbs receiver polled in event mode in $n sessions, wanted 2"
echo "ok: each receiver served its two sessions over its own transport, paired with the other"
# uroce on a veth takes an Ethernet address of its own (docs/uroce.md); rxe
# reaches it through ARP at the interface's, so both addresses were in use
grep -q "uroce: .*(uroce's own;" "$L.recv-uroce.log" &&
	echo "ok: the uroce receiver ran on an address of its own, rxe still reached it" ||
	bad "the uroce receiver on a veth did not take an address of its own"
# for the record: what each RoCEv2 stack saw (uroce: per session)
grep -h "uroce: session done" "$L.recv-uroce.log"
rdma statistic show link $RXE/1
finish
