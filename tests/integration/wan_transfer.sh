#!/usr/bin/env bash
# ferry across an emulated WAN: 50 ms round trip (ferry-wanem --delay 25)
# losing 0.01% of frames at random in each direction, over tcp and over
# uroce (ferry's RoCEv2 on DPDK net_af_packet, on the same veths that
# ferry-wanem forwards between).
#
# For each transport, against one `ferry recv` in namespace B:
#  - ferry bench -n SIZE: the report says that transport, every byte
#    arrived, no crc32c errors (the receiver checks every chunk);
#  - ferry send of a small tree (a multi-chunk file, odd sizes, an empty
#    file): the copy in B is byte-identical (diff -r).
# The veths run at MTU 9000 (WAN_MTU) so that uroce gets its 4 KiB path
# MTU as in uroce_netns; ferry-wanem's counters must show frames lost in
# both directions (the loss was real) and add up.
#
# Needs root, a build with DPDK (ferry-wanem and the uroce transport),
# ethtool, and memory for three DPDK processes (hugepages, else --no-huge:
# 1 GiB for ferry-wanem, 512 MiB for each ferry). Exit 77 with the reason
# when any of that is missing; the uroce half alone is skipped (with the
# reason) when this build has no uroce. Then uroce alone through a
# bottleneck that marks ECN: the marks reach the receiver, it answers with
# CNPs, and every byte still arrives. About 70 s.
. "$(dirname "$0")/lib.sh"

need_wanem
[ -x "$FERRY" ] || fail "no ferry binary at $FERRY"
command -v timeout >/dev/null || skip "no timeout(1)"

UROCE=1
if out=$(env -u FERRY_DPDK "$FERRY" bench --transport uroce -n 1M 127.0.0.1:1 2>&1); then :; fi
case "$out" in
*"not in this build"*) UROCE=0 ;;
esac

# At exit: wan_down (ferry-wanem, every process left in the namespaces,
# the namespaces, its hugepage reservation), then lib.sh's cleanup (the
# trap is set below, once the DPDK file prefixes are known).
export WAN_MTU=9000
WANEM=$WANEM . "$SRC/bench/lib/wan.sh"

note "topology: A - veth (MTU 9000) - ferry-wanem --delay 25 --loss 0.01 - veth - B"
wan_up --delay 25 --loss 0.01 --seed 11 ||
	fail "the WAN did not come up: $(cat "$WAN_LOG" 2>/dev/null)"
rtt=$(wan_a ping -n -q -c 5 -i 0.2 "$WAN_IPB" | awk -F/ '/^rtt/ { print $5 }')
note "RTT through ferry-wanem: ${rtt:-?} ms"

"$FERRY" keygen "$T/key" >/dev/null || fail "keygen"
mkdir -p "$T/src/tree/sub/deeper"
head -c $((9 << 20)) /dev/urandom >"$T/src/tree/big.bin" # 3 chunks of 4 MiB
head -c 4097 /dev/urandom >"$T/src/tree/sub/odd.bin"
head -c 1 /dev/urandom >"$T/src/tree/sub/deeper/one"
: >"$T/src/tree/empty"
echo "hello across the WAN" >"$T/src/tree/hello.txt"

# DPDK for ferry's uroce: the af_packet port on this namespace's veth.
# Hugepages when wan.sh found them (it reserves and gives back its own;
# ferry's two processes need 2 x 256 pages more), else --no-huge with a
# file prefix of each side's own: ferry adds --in-memory to the EAL
# arguments unless a --file-prefix is given, and the EAL refuses
# --in-memory with --no-huge. Their runtime directories go at exit.
AFP="framesz=16384,blocksz=16384,framecnt=1024"
DPDK_MEM_A="--no-huge -m 512 --file-prefix wtA$$"
DPDK_MEM_B="--no-huge -m 512 --file-prefix wtB$$"
if [ "${WAN_MEM_ARGS:-}" = "--in-memory" ] &&
	[ "$(awk '/^HugePages_Free/ { print $2 }' /proc/meminfo)" -ge 1024 ] 2>/dev/null; then
	DPDK_MEM_A=""
	DPDK_MEM_B=""
fi
trap 'wan_down; rm -rf "/var/run/dpdk/wtA$$" "/var/run/dpdk/wtB$$"; cleanup' EXIT

RPID=
RTR=
# start_recv TRANSPORT PORT: one ferry recv in B serving every session.
start_recv() {
	local tr=$1 port=$2
	RTR=$tr
	mkdir -p "$T/dst.$tr"
	ip netns exec "$WAN_NSB" env \
		FERRY_DPDK="--vdev=net_af_packet0,iface=$WAN_DEVB,$AFP $DPDK_MEM_B" \
		timeout --foreground 300 "$FERRY" recv --key "$T/key" --transport "$tr" \
		-B "$WAN_IPB" -p "$port" -d "$T/dst.$tr" -i 0 -v \
		>"$T/recv.$tr.out" 2>"$T/recv.$tr.err" &
	RPID=$!
	PIDS+=("$RPID")
	wait_listen "$port" "$WAN_NSB"
}
# stop_recv: SIGTERM, and the daemon must be gone within 20 s. timeout(1)
# passes the signal on; --foreground above keeps it from sending SIGCONT
# to the whole group after it, which in a sanitized build can land
# between LeakSanitizer's PTRACE_ATTACH of the exiting daemon and its
# stop, discard that SIGSTOP, and leave the leak check waiting forever.
stop_recv() {
	kill -TERM "$RPID" 2>/dev/null
	if ! wait_gone "$RPID" 20; then
		tail -20 "$T/recv.$RTR.err"
		fail "$RTR: ferry recv did not exit within 20 s of SIGTERM"
	fi
	wait "$RPID" 2>/dev/null
	RPID=
}

# sender ARGS...: ferry in A, bounded, with A's DPDK arguments.
sender() {
	ip netns exec "$WAN_NSA" env \
		FERRY_DPDK="--vdev=net_af_packet0,iface=$WAN_DEVA,$AFP $DPDK_MEM_A" \
		timeout 120 "$FERRY" "$@"
}

# check_bench FILE TRANSPORT BYTES
check_bench() {
	python3 - "$@" <<'PY' || fail "bad bench report $1"
import json, sys
r = json.load(open(sys.argv[1]))
s, e = r["start"], r["end"]
want = int(sys.argv[3])
assert s["transport"] == sys.argv[2], f"transport {s['transport']}, wanted {sys.argv[2]}"
assert e["bytes"] == want, f"moved {e['bytes']} bytes, wanted {want}"
assert e["peer"]["bytes"] == e["bytes"], "the receiver counted different bytes"
assert e["crc_errors"] == 0, f"{e['crc_errors']} crc errors"
assert sum(i["bytes"] for i in r["intervals"]) == e["bytes"], "intervals do not add up"
print(f"ok: {sys.argv[2]}: {e['bytes']} bytes in {e['seconds']:.2f} s, {e['gbps']:.3f} Gb/s, "
      f"every chunk's crc32c verified")
PY
}

# transfer TRANSPORT PORT SIZE: bench and send over TRANSPORT.
transfer() {
	local tr=$1 port=$2 size=$3 bytes
	bytes=$(numfmt --from=iec "$size")
	start_recv "$tr" "$port"
	note "$tr: ferry bench -n $size across the WAN"
	sender bench --key "$T/key" --transport "$tr" -n "$size" -P 2 --json \
		"$WAN_IPB:$port" >"$T/bench.$tr.json" 2>"$T/bench.$tr.err" ||
		{ tail -20 "$T/bench.$tr.err"; tail -20 "$T/recv.$tr.err"; fail "$tr: bench -n $size"; }
	check_bench "$T/bench.$tr.json" "$tr" "$bytes"
	note "$tr: ferry send of a small tree across the WAN"
	sender send --key "$T/key" --transport "$tr" -P 2 --json "$T/src/tree" \
		"$WAN_IPB:$port:/copy" >"$T/send.$tr.json" 2>"$T/send.$tr.err" ||
		{ tail -20 "$T/send.$tr.err"; tail -20 "$T/recv.$tr.err"; fail "$tr: send"; }
	python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["start"]["transport"]==sys.argv[2], r["start"]["transport"]; assert r["end"]["files"]["failed"]==0' \
		"$T/send.$tr.json" "$tr" || fail "$tr: send report: wrong transport or files failed"
	diff -r "$T/src/tree" "$T/dst.$tr/copy/tree" >"$T/diff.$tr" 2>&1 ||
		{ head -20 "$T/diff.$tr"; fail "$tr: the copy differs from the source"; }
	echo "ok: $tr: $(find "$T/src/tree" -type f | wc -l) files, byte-identical"
	kill -0 "$RPID" 2>/dev/null || { tail "$T/recv.$tr.err"; fail "$tr: ferry recv died"; }
	stop_recv
}

transfer tcp 7481 512M

if [ "$UROCE" -eq 0 ]; then
	note "SKIP uroce: this build has no uroce transport (meson did not find libdpdk)"
else
	transfer uroce 7482 128M
	grep -q "uroce: .*QP(s) .*path MTU 4096" "$T/recv.uroce.err" ||
		{ grep uroce "$T/recv.uroce.err" | tail -5; fail "uroce did not run at path MTU 4096"; }
fi

# The loss happened, and ferry-wanem's counters add up.
wan_stop || fail "ferry-wanem did not exit 0 on SIGINT"
python3 - "$WAN_JSON" <<'PY' || fail "ferry-wanem statistics ($WAN_JSON)"
import json, sys
end = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")][-1]
assert end["type"] == "end"
for d in ("ab", "ba"):
    c = end[d]
    drops = sum(c["dropped"].values())
    assert c["rx"] + c["duplicated"] == c["tx"] + drops + c["held"], (d, c)
lost = (end["ab"]["dropped"]["loss"], end["ba"]["dropped"]["loss"])
print(f"ok: ferry-wanem lost {lost[0]} of {end['ab']['rx']} frames A->B and "
      f"{lost[1]} of {end['ba']['rx']} B->A; counters add up")
assert lost[0] > 0, "no frame was lost A->B: the loss was not exercised"
PY
[ "$UROCE" -eq 1 ] || skip "tcp passed; uroce not in this build"

# ECN: a 100 Mb/s bottleneck marking CE above 100 KB (a sender on a busy
# host still outruns it). uroce's requests
# are ECN-capable, the receiver answers marks with CNPs, the sender's
# DCQCN slows down, and every byte still arrives checked.
note "ECN: ferry-wanem --delay 5 --rate 100mbit --ecn 100000, uroce bench -n 32M"
wan_restart --delay 5 --rate 100mbit --queue 4000000 --ecn 100000 ||
	fail "ferry-wanem did not restart with ECN: $(cat "$WAN_LOG" 2>/dev/null)"
start_recv uroce 7483
sender bench --key "$T/key" --transport uroce -n 32M -P 2 --json \
	"$WAN_IPB:7483" >"$T/bench.ecn.json" 2>"$T/bench.ecn.err" ||
	{ tail -20 "$T/bench.ecn.err"; tail -20 "$T/recv.uroce.err"; fail "uroce: bench -n 32M through the marking bottleneck"; }
check_bench "$T/bench.ecn.json" uroce $((32 << 20))
stop_recv
wan_stop || fail "ferry-wanem did not exit 0 on SIGINT"
python3 - "$WAN_JSON" "$T/recv.uroce.err" <<'PY' || fail "ECN: no marks, or no CNPs for them"
import json, re, sys
end = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")][-1]
marked = end["ab"]["marked"]
m = re.findall(r"ECN: (\d+) requests arrived marked, (\d+) CNPs sent",
               open(sys.argv[2]).read())
assert m, "the receiver's log has no ECN line"
ce, cnps = (int(x) for x in m[-1])
print(f"ok: ferry-wanem marked {marked} frames A->B; the receiver saw {ce} "
      f"marked requests and sent {cnps} CNPs")
assert marked > 0, "the bottleneck marked nothing: uroce's frames are not ECN-capable?"
assert 0 < ce <= marked, "the receiver counted no marked request"
assert 0 < cnps <= ce, "no CNP for the marked requests"
PY
echo "PASS"
