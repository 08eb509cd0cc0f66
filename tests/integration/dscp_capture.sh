#!/usr/bin/env bash
# The session's traffic class on the wire (--dscp): `ferry send --dscp 10`
# from namespace A to a `ferry recv` in namespace B that has no class of
# its own, over tcp and over uroce, captured with tshark on B's veth.
# The sender's class travels in the session (TCLASS), so B marks its own
# packets with it too:
#  - tcp: every packet A sends (control connections, data streams) has
#    DSCP 10, and so has every packet of B's data streams; B's control
#    connection is unmarked only before A names its class (the SYN-ACK
#    and the authentication: a first few packets), marked after;
#  - uroce: every RoCEv2 frame both ways has DSCP 10 (A's requests and
#    ACKs, B's ACKs and credits), A's requests still ECT(0), and `ferry
#    rocedump` finds every ICRC good;
#  - both ends' reports say DSCP 10 (JSON start.dscp and iperf3's tos;
#    the receiver's summary line), and the copies are byte-identical.
# Needs root and tshark. The uroce part needs a build with DPDK and 2 MiB
# hugepages (reserved here and given back on exit) or --no-huge; without
# them the tcp part still runs and the test exits 77 saying why.
. "$(dirname "$0")/lib.sh"

need_root
command -v tshark >/dev/null || skip "no tshark (apt-get install tshark)"
command -v timeout >/dev/null || skip "no timeout(1)"

UROCE=yes
if ! out=$(env -u FERRY_DPDK "$FERRY" bench --transport uroce -n 1M \
	127.0.0.1:1 2>&1); then
	case "$out" in
	*"not in this build"*) UROCE="this build has no uroce transport (meson did not find libdpdk)" ;;
	esac
fi

make_pair
ip -n $NSA link set $VETHA mtu 9000 || fail "veth MTU 9000"
ip -n $NSB link set $VETHB mtu 9000 || fail "veth MTU 9000"
"$FERRY" keygen "$T/key" >/dev/null || fail "keygen"
mkdir -p "$T/src" "$T/dst-tcp" "$T/dst-uroce"
head -c $((6 << 20)) /dev/urandom >"$T/src/big.bin"   # 2 chunks
echo "marked" >"$T/src/small.txt"

# capture NAME FILTER: tshark on B's veth into $T/NAME.pcapng, started
# when this returns (it loads its dissectors first: seconds on a busy
# host); stop_capture stops it.
capture() {
	ip netns exec $NSB timeout 120 tshark -i $VETHB -B 64 -f "$2" \
		-w "$T/$1.pcapng" -q >"$T/$1.tshark.out" 2>"$T/$1.tshark.err" &
	TPID=$!
	PIDS+=("$TPID")
	wait_grep "Capturing on" "$T/$1.tshark.err" 30 ||
		{ cat "$T/$1.tshark.err"; fail "tshark did not start"; }
}
stop_capture() {
	sleep 0.5
	kill -INT $TPID 2>/dev/null
	wait_gone $TPID 10 || fail "tshark did not stop"
}

# recv NAME PORT [ARGS...]: a receiver in B, no --dscp of its own
recv() {
	local name=$1 port=$2
	shift 2
	ip netns exec $NSB timeout 120 "$FERRY" recv --key "$T/key" -B $IPB \
		-p $port -i 0 "$@" >"$T/$name.recv.out" 2>"$T/$name.recv.err" &
	PIDS+=($!)
	wait_listen $port $NSB
}

# check_report JSON NAME: both ends say DSCP 10 (the sender's JSON, the
# summary of receiver NAME)
check_report() {
	python3 - "$1" <<'PY' || bad "$1: the sender's report does not say DSCP 10"
import json, sys
s = json.load(open(sys.argv[1]))["start"]
assert s["dscp"] == 10, f"dscp {s['dscp']}"
assert s["test_start"]["tos"] == 40, f"tos {s['test_start']['tos']}"
assert s["role"] == "sender"
PY
	grep -q "receiver over .*; DSCP 10)" "$T/$2.recv.out" "$T/$2.recv.err" ||
		bad "the receiver's summary does not say DSCP 10: $(grep -h 'receiver over' "$T/$2".recv.*)"
}

# ---- tcp ------------------------------------------------------------------
note "tcp: send --dscp 10 from $IPA to $IPB, captured on $VETHB"
PT=7471
recv tcp $PT --transport tcp --once -d "$T/dst-tcp"
capture tcp tcp
ip netns exec $NSA timeout 60 "$FERRY" send --key "$T/key" --transport tcp \
	--dscp 10 -P 2 --json "$T/src" $IPB:$PT >"$T/tcp.json" 2>"$T/tcp.err" ||
	{ tail -5 "$T/tcp.err" "$T/tcp.recv.err"; fail "send over tcp"; }
stop_capture
diff -r "$T/src" "$T/dst-tcp/src" >/dev/null || bad "tcp: the copy differs"
check_report "$T/tcp.json" tcp

tshark -r "$T/tcp.pcapng" -T fields -e frame.number -e ip.src \
	-e tcp.srcport -e tcp.dstport -e ip.dsfield.dscp 2>/dev/null >"$T/tcp.fields"
python3 - "$T/tcp.fields" $IPA $IPB $PT <<'PY' || bad "tcp: packets without DSCP 10 (above)"
import sys
rows = [l.split() for l in open(sys.argv[1]) if len(l.split()) == 5]
a, b, ctl = sys.argv[2], sys.argv[3], sys.argv[4]
ok = True
def no(msg):
    global ok
    ok = False
    print("  " + msg)
sent = [r for r in rows if r[1] == a]
data = [r for r in sent if r[3] != ctl]
wrong = [r for r in sent if r[4] != "10"]
if wrong:
    no(f"{len(wrong)} of {len(sent)} packets from the sender, e.g. {wrong[:3]}")
if len(data) < 100:
    no(f"only {len(data)} data-stream packets from the sender: did the data go over the veth?")
rdata = [r for r in rows if r[1] == b and r[2] != ctl]
wrong = [r for r in rdata if r[4] != "10"]
if wrong or not rdata:
    no(f"{len(wrong)} of {len(rdata)} data-stream packets from the receiver, e.g. {wrong[:3]}")
rctl = [r[4] for r in rows if r[1] == b and r[2] == ctl]
first = rctl.index("10") if "10" in rctl else len(rctl)
# before the sender's TCLASS: SYN-ACK, CHALLENGE and the ACKs around them
if first > 6 or first == len(rctl) or any(d != "10" for d in rctl[first:]):
    no(f"the receiver's control packets: {rctl}")
print(f"ok: {len(sent)} packets from the sender ({len(data)} on data streams) "
      f"and {len(rdata)} of the receiver's data streams all DSCP 10; its "
      f"control connection {first} unmarked before TCLASS, then "
      f"{len(rctl) - first} marked" if ok else "tcp:")
sys.exit(0 if ok else 1)
PY

# ---- uroce ----------------------------------------------------------------
[ ${#FAILS[@]} -eq 0 ] || finish "(tcp)"
[ "$UROCE" = yes ] || skip "tcp part passed; uroce: $UROCE"

# DPDK memory (hugepages, given back on exit, else --no-huge), each end's
# EAL arguments (lib.sh, as uroce_netns.sh)
uroce_dpdk
PU=7472
urecv() {
	uroce_recv uroce.recv $PU --key "$T/key" -i 0 -d "$T/dst-uroce"
}
ufirst() {
	uroce_send bench --key "$T/key" --transport uroce -n 1M $IPB:$PU \
		>"$T/first.out" 2>&1
}
# Can DPDK start here? A first small session says (lib.sh).
UROCE_SKIP="tcp part passed; uroce: "
uroce_first urecv uroce_stop ufirst "$T/first.out" "$T/uroce.recv.err"

note "uroce: send --dscp 10 from $IPA to $IPB, captured on $VETHB"
capture uroce "udp port 4791"
uroce_send send --key "$T/key" --transport uroce --dscp 10 -P 2 --json \
	"$T/src" $IPB:$PU >"$T/uroce.json" 2>"$T/uroce.err" ||
	{ tail -5 "$T/uroce.err" "$T/uroce.recv.err"; fail "send over uroce"; }
stop_capture
diff -r "$T/src" "$T/dst-uroce/src" >/dev/null || bad "uroce: the copy differs"
check_report "$T/uroce.json" uroce

"$SRC/tests/tshark-ib.sh" -r "$T/uroce.pcapng" -T fields -e ip.src \
	-e infiniband.bth.opcode -e ip.dsfield.dscp -e ip.dsfield.ecn \
	2>/dev/null >"$T/uroce.fields"
python3 - "$T/uroce.fields" $IPA $IPB <<'PY' || bad "uroce: frames without DSCP 10 (above)"
import collections, sys
rows = [l.split() for l in open(sys.argv[1]) if len(l.split()) == 4]
a, b = sys.argv[2], sys.argv[3]
ok = True
def no(msg):
    global ok
    ok = False
    print("  " + msg)
for who, ip in (("sender", a), ("receiver", b)):
    mine = [r for r in rows if r[0] == ip]
    wrong = [r for r in mine if r[2] != "10"]
    if wrong or not mine:
        no(f"{len(wrong)} of {len(mine)} frames from the {who}, e.g. {wrong[:3]}")
# the sender's requests (RDMA WRITEs, SENDs: opcodes below 17) ECT(0);
# ACKs (17) not ECN-capable
reqs = [r for r in rows if r[0] == a and int(r[1]) < 17]
if len(reqs) < 1000 or any(r[3] != "2" for r in reqs):
    no(f"{len(reqs)} requests from the sender, ECN {collections.Counter(r[3] for r in reqs)}")
acks = [r for r in rows if r[0] == b and r[1] == "17"]
if not acks or any(r[3] != "0" for r in acks):
    no(f"{len(acks)} ACKs from the receiver, ECN {collections.Counter(r[3] for r in acks)}")
print(f"ok: {len(rows)} RoCEv2 frames, all DSCP 10: {len(reqs)} requests ECT(0), "
      f"{len(acks)} of the receiver's ACKs" if ok else "uroce:")
sys.exit(0 if ok else 1)
PY
"$FERRY" rocedump -q "$T/uroce.pcapng" >"$T/dump.out" 2>&1 ||
	bad "ferry rocedump: exit $? ($(tail -1 "$T/dump.out"))"
last=$(tail -1 "$T/dump.out")
[[ "$last" == *" 0 undecodable, "*"ICRC ok, 0 ICRC bad, 0 ICRC unchecked" ]] ||
	bad "rocedump: $last"
echo "ok: rocedump: $last"
finish "(tcp and uroce)"
