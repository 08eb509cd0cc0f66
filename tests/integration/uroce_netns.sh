#!/usr/bin/env bash
# uroce end to end: ferry's own RoCEv2 over DPDK net_af_packet on a veth
# pair between two network namespaces (MTU 9000, 4 KiB path MTU).
#
# One `ferry recv --transport uroce` in namespace B serves every session
# (so one process's DPDK port carries several sessions in turn):
#  - ferry bench --transport uroce -n 256M, with 1 queue pair and the
#    default waits (event) and with 2 busy-polling:
#    the JSON report says uroce, 256 MiB, no crc errors, and the receiver
#    counted the same bytes; then 4 queue pairs in --poll event, asleep
#    on the af_packet socket's ring;
#  - ferry send --transport uroce of a small tree: byte-identical copy;
#  - a short bench captured with tshark in B: Wireshark decodes every
#    frame as InfiniBand with nothing malformed, no ICMP (the kernel's copy
#    of our frames is absorbed), and `ferry rocedump` finds every ICRC good;
#  - the receiver's port, whose device has qdisc_bypass=0 (its frames
#    pass the device's taps), was handed none of its own frames back and
#    took none for an unknown QP.
# Needs root, a build with DPDK, tshark (installed if missing) and either
# 2 MiB hugepages (reserved here and restored on exit) or --no-huge.
# Exit 77 (skip) with the reason when any of that is missing.
. "$(dirname "$0")/lib.sh"

need_root
if ! out=$(env -u FERRY_DPDK "$FERRY" bench --transport uroce -n 1M \
	127.0.0.1:1 2>&1); then
	case "$out" in
	*"not in this build"*) skip "this build has no uroce transport (meson did not find libdpdk)" ;;
	esac
fi
command -v timeout >/dev/null || skip "no timeout(1)"

if ! command -v tshark >/dev/null; then
	note "installing tshark"
	echo "wireshark-common wireshark-common/install-setuid boolean false" |
		debconf-set-selections 2>/dev/null
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q tshark \
		>"$T/apt.log" 2>&1 ||
		{ apt-get update -q >/dev/null 2>&1 &&
		  DEBIAN_FRONTEND=noninteractive apt-get install -y -q tshark \
			>"$T/apt.log" 2>&1; }
	command -v tshark >/dev/null || skip "tshark is missing and could not be installed (see apt-get install tshark)"
fi

make_pair
ip -n $NSA link set $VETHA mtu 9000 || fail "veth MTU 9000"
ip -n $NSB link set $VETHB mtu 9000 || fail "veth MTU 9000"
# DPDK memory (hugepages, given back on exit, else --no-huge), each end's
# EAL arguments (lib.sh)
uroce_dpdk

"$FERRY" keygen "$T/key" >/dev/null || fail "keygen"
mkdir -p "$T/dst"
port=7471
# the receiver in B (one for every session), the sender in A (lib.sh)
start_recv() {
	uroce_recv recv $port --key "$T/key" -d "$T/dst" -i 0 -v
}

# check_uroce FILE BYTES STREAMS: the bench report of a uroce run.
check_uroce() {
	python3 - "$@" <<'PY' || fail "bad JSON report $1"
import json, sys
r = json.load(open(sys.argv[1]))
s, e = r["start"], r["end"]
want, streams = int(sys.argv[2]), int(sys.argv[3])
assert s["transport"] == "uroce", f"transport {s['transport']}, wanted uroce"
assert s["streams"] == streams, f"{s['streams']} streams, wanted {streams}"
assert e["bytes"] == want, f"moved {e['bytes']} bytes, wanted {want}"
assert e["peer"]["bytes"] == e["bytes"], "the receiver counted different bytes"
assert e["crc_errors"] == 0, f"{e['crc_errors']} crc errors"
assert sum(i["bytes"] for i in r["intervals"]) == e["bytes"], "intervals do not add up"
print(f"ok: {e['bytes']} bytes over {streams} QP(s) in {e['seconds']:.2f} s, {e['gbps']:.2f} Gb/s")
PY
}

# Can DPDK start here (memory, the af_packet PMD)? A first small session
# says; without hugepages it is tried again with --no-huge (lib.sh).
first_session() {
	uroce_send bench --key "$T/key" --transport uroce -n 4M $IPB:$port \
		>"$T/first.out" 2>&1
}
uroce_first start_recv uroce_stop first_session "$T/first.out" "$T/recv.err"

# one queue pair with the default waits (event), two busy-polling
for P in 1 2; do
	poll=event opt=()
	[ $P = 2 ] && poll=busy opt=(--poll busy)
	note "bench 256 MiB over uroce, $P queue pair(s), $poll waits, $IPA -> $IPB"
	uroce_send bench --key "$T/key" --transport uroce -n 256M -P $P "${opt[@]}" --json -v \
		$IPB:$port >"$T/p$P.json" 2>"$T/p$P.err" ||
		{ tail -20 "$T/p$P.err"; tail -20 "$T/recv.err"; fail "bench -P $P"; }
	check_uroce "$T/p$P.json" $((256 << 20)) $P
	grep -q "\"poll\": \"$poll\"" "$T/p$P.json" || fail "bench -P $P did not wait in $poll mode"
done
note "bench 128 MiB over uroce, 4 queue pairs, --poll event"
uroce_send bench --key "$T/key" --transport uroce -n 128M -P 4 --poll event \
	--json -v $IPB:$port >"$T/ev.json" 2>"$T/ev.err" ||
	{ tail -20 "$T/ev.err"; tail -20 "$T/recv.err"; fail "bench --poll event"; }
check_uroce "$T/ev.json" $((128 << 20)) 4
grep -q '"poll": "event"' "$T/ev.json" || fail "the report does not say event polling"
grep -q "sleeps on the af_packet socket's ring" "$T/ev.err" ||
	{ grep "poll event" "$T/ev.err"; fail "event waits did not find the af_packet ring to sleep on"; }
# without --poll, event waits whatever the streams
uroce_send bench --key "$T/key" --transport uroce -n 16M -P 4 --json \
	$IPB:$port >"$T/p4.json" 2>"$T/p4.err" || { tail -5 "$T/p4.err"; fail "bench -P 4"; }
check_uroce "$T/p4.json" $((16 << 20)) 4
grep -q '"poll": "event"' "$T/p4.json" || fail "uroce's default is not event with 4 streams"
grep -q "uroce: .*QP(s) .*path MTU 4096" "$T/recv.err" ||
	{ grep uroce "$T/recv.err"; fail "the session did not use a 4096-byte path MTU"; }

note "send a small tree over uroce"
mkdir -p "$T/src/tree/sub/deeper"
head -c $((9 << 20)) /dev/urandom >"$T/src/tree/big.bin"      # 3 chunks
head -c 4097 /dev/urandom >"$T/src/tree/sub/odd.bin"
head -c 1 /dev/urandom >"$T/src/tree/sub/deeper/one"
: >"$T/src/tree/empty"
echo "hello over RoCEv2" >"$T/src/tree/hello.txt"
uroce_send send --key "$T/key" --transport uroce -P 2 --json -v "$T/src/tree" \
	$IPB:$port:/copy >"$T/send.json" 2>"$T/send.err" ||
	{ tail -20 "$T/send.err"; tail -20 "$T/recv.err"; fail "send"; }
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["start"]["transport"]=="uroce"; assert r["end"]["files"]["failed"]==0' \
	"$T/send.json" || fail "send report: not uroce, or files failed"
diff -r "$T/src/tree" "$T/dst/copy/tree" >"$T/diff.out" 2>&1 ||
	{ cat "$T/diff.out"; ls -lR "$T/dst"; fail "the copy differs from the source"; }
echo "ok: $(find "$T/src/tree" -type f | wc -l) files, byte-identical"

note "capture a short uroce run with tshark in $NSB"
cap=$T/uroce.pcapng
ip netns exec $NSB timeout 60 tshark -i $VETHB -B 64 -c 20000 -w "$cap" -q \
	>"$T/tshark.out" 2>"$T/tshark.err" &
tpid=$!
PIDS+=("$tpid")
# tshark loads its dissectors first: seconds, more on a busy host
for _ in $(seq 300); do
	grep -q "Capturing on" "$T/tshark.err" && break
	sleep 0.1
done
grep -q "Capturing on" "$T/tshark.err" || { cat "$T/tshark.err"; fail "tshark did not start"; }
uroce_send bench --key "$T/key" --transport uroce -n 8M -P 2 --json \
	$IPB:$port >"$T/cap.json" 2>"$T/cap.err" ||
	{ tail -20 "$T/cap.err"; fail "bench during the capture"; }
check_uroce "$T/cap.json" $((8 << 20)) 2
sleep 0.5
kill -INT $tpid 2>/dev/null
for _ in $(seq 100); do
	kill -0 $tpid 2>/dev/null || break
	sleep 0.1
done
kill -0 $tpid 2>/dev/null && fail "tshark did not stop"
TS=("$SRC/tests/tshark-ib.sh" -r "$cap")
ib=$("${TS[@]}" -Y infiniband 2>/dev/null | wc -l)
# 8 MiB is 2048 WRITE frames and their ACKs; a capture on a busy host may
# miss some (tshark's own drops), what it has must all be good
[ "$ib" -ge 1000 ] || fail "tshark decoded only $ib frames as InfiniBand (wanted >= 1000 of about 2300)"
bad=$("${TS[@]}" -Y _ws.malformed 2>/dev/null | head -5)
[ -z "$bad" ] || { echo "$bad"; fail "tshark finds malformed frames"; }
ops=$("${TS[@]}" -Y infiniband -T fields -e infiniband.bth.opcode 2>/dev/null | sort -u | tr '\n' ' ')
for op in 6 7 17; do # RDMA WRITE First, Middle; ACKNOWLEDGE
	[[ " $ops" == *" $op "* ]] || fail "no frames with opcode $op in the capture (saw: $ops)"
done
icmp=$("${TS[@]}" -Y icmp 2>/dev/null | wc -l)
[ "$icmp" -eq 0 ] || fail "the capture has $icmp ICMP frames (the kernel answered our frames)"
echo "ok: tshark decodes $ib frames as InfiniBand (opcodes $ops), none malformed, no ICMP"
"$FERRY" rocedump "$cap" >"$T/dump.out" 2>&1 ||
	{ grep -v 'icrc ok$' "$T/dump.out" | tail -5; fail "ferry rocedump: exit $?"; }
last=$(tail -1 "$T/dump.out")
[[ "$last" == *" 0 undecodable, "*"ICRC ok, 0 ICRC bad, 0 ICRC unchecked" ]] ||
	fail "rocedump: $last"
echo "ok: rocedump: $last"

note "the receiver is still serving"
kill -0 $URPID 2>/dev/null || { tail "$T/recv.err"; fail "ferry recv died"; }
grep "uroce: endpoint .* failed" "$T/recv.err" && fail "a receiver QP failed"
# B's port (qdisc_bypass=0) is not handed its own frames back (its
# socket's filter drops them in the kernel), and takes none for another
# QP's (the port's counters add up over every session it served)
last=$(grep -o "port: [^)]*)" "$T/recv.err" | tail -1)
[[ "$last" == *", 0 unknown QP)" ]] || fail "the receiver's port took frames for unknown QPs: $last"
[[ "$last" == *" 0 our own,"* ]] || fail "the kernel handed the receiver's port its own frames: $last"
echo "ok: the receiver's $last"
echo "PASS"
