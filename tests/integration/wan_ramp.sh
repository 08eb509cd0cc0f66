#!/usr/bin/env bash
# The stream ramp across an emulated WAN: RTT 50 ms (ferry-wanem --delay
# 25) with a 600 Mb/s bottleneck. Each stream's window is held to 256 KiB
# (--sockbuf), so the path plan, aiming at the veth's 10 Gb/s, opens 64
# streams; the ramp starts 4 of them and adds more only while they pay.
# What must hold:
#
#  1. ferry bench with the defaults: the report carries the ramp
#     (start.path.ramp); it stopped short of the 64 (a step to 64 cannot
#     pay: 32 streams of 256 KiB windows would carry more than 600 Mb/s),
#     the streams past the most it opened (streams_peak) carried not one
#     byte, every stream it kept carried data, and the receiver verified
#     every byte the sender counted.
#  2. -P 64 fixes the count: no ramp, every stream carries data.
#  3. ferry send of a tree with the ramp on: the copy is byte-identical,
#     and the session ends although some streams never carried data.
#
# Behaviour, not speed: no figure here depends on how fast this host is
# (the ramp stops short of 64 on a slow host too). Needs root, a build
# with ferry-wanem (DPDK), ethtool, python3. About 45 s.
. "$(dirname "$0")/lib.sh"

need_wanem
[ -x "$FERRY" ] || fail "no ferry binary at $FERRY"
command -v python3 >/dev/null || skip "no python3 (the JSON reports are read with it)"

# wan.sh's EXIT trap takes down the WAN, then runs lib.sh's cleanup.
WANEM=$WANEM . "$SRC/bench/lib/wan.sh"

note "topology: A - veth - ferry-wanem --delay 25 --rate 600mbit - veth - B"
wan_up --delay 25 --rate 600mbit --queue 4M --seed 3 ||
	fail "the WAN did not come up: $(cat "$WAN_LOG" 2>/dev/null)"
"$FERRY" keygen "$T/key" >/dev/null || fail "keygen"

# session NAME [ferry bench options]: one bench from A to a fresh
# `ferry recv --once` in B; the sender's JSON in $T/NAME.json.
session() {
	local name=$1 port rpid
	shift
	port=$(free_port)
	wan_b timeout 60 "$FERRY" recv --key "$T/key" -B "$WAN_IPB" -p "$port" \
		-i 0 -q --once >"$T/$name.recv" 2>&1 &
	rpid=$!
	wait_listen "$port" "$WAN_NSB"
	wan_a timeout 60 "$FERRY" bench --key "$T/key" --sockbuf 256K "$@" \
		--json "$WAN_IPB:$port" >"$T/$name.json" 2>"$T/$name.err" ||
		fail "$name: ferry bench failed: $(tail -3 "$T/$name.err")"
	wait "$rpid" || fail "$name: ferry recv failed: $(tail -3 "$T/$name.recv")"
}

# check NAME MODE: read $T/NAME.json; MODE ramp or fixed.
check() {
	python3 - "$T/$1.json" "$2" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
mode = sys.argv[2]
path = doc["start"].get("path", {})
streams = [s["sender"]["bytes"] for s in doc["end"]["streams"]]
sent = doc["end"]["sum_sent"]["bytes"]
got = doc["end"]["sum_received"]["bytes"]
def bad(why):
    print(why); sys.exit(1)
if sent == 0 or sent != got:
    bad(f"the receiver verified {got} bytes of the {sent} sent")
if len(streams) != 64:
    bad(f"{len(streams)} streams reported, the plan makes 64 ({path.get('plan')})")
ramp = path.get("ramp")
if mode == "fixed":
    if ramp:
        bad(f"-P 64 was given, yet the ramp ran: {ramp}")
    idle = [i for i, b in enumerate(streams) if b == 0]
    if idle:
        bad(f"with -P 64 streams {idle} carried nothing")
    print(f"-P 64: every stream carried data, no ramp; {sent} bytes verified")
    sys.exit(0)
if not ramp:
    bad(f"no ramp in the report: {path}")
used, opened = ramp["streams_used"], ramp["streams_peak"]
if not 4 <= used < 64 or opened == 64:
    bad(f"the ramp ended at {used} streams, {opened} at most; at 600 Mb/s it cannot pay up to 64: {ramp['why']}")
if opened not in (4, 8, 32) or used > opened:
    bad(f"the ramp says it opened {opened} streams and kept {used}: it starts 4, doubles, then quadruples")
held = [i for i, b in enumerate(streams) if i >= opened and b]
kept_idle = [i for i, b in enumerate(streams) if i < used and b == 0]
if held or kept_idle:
    bad(f"streams held back carried data ({held}) or kept ones none ({kept_idle})")
print(f"ramp: {used} of 64 streams kept, {opened} opened at most: {ramp['why']}; {sent} bytes verified")
EOF
}

note "1. ferry bench, defaults: the ramp"
session ramp -t 10
out=$(check ramp ramp) || fail "$out"
note "$out"

note "2. ferry bench -P 64: no ramp"
session fixed -t 4 -P 64
out=$(check fixed fixed) || fail "$out"
note "$out"

note "3. ferry send of a tree with the ramp on"
mkdir -p "$T/src/tree/sub" "$T/dst"
head -c $((40 << 20)) /dev/urandom >"$T/src/tree/big"
for i in $(seq 1 40); do
	head -c $((i * 12345)) /dev/urandom >"$T/src/tree/sub/f$i"
done
: >"$T/src/tree/empty"
port=$(free_port)
wan_b timeout 90 "$FERRY" recv --key "$T/key" -B "$WAN_IPB" -p "$port" -i 0 -q \
	--once --dir "$T/dst" >"$T/send.recv" 2>&1 &
rpid=$!
wait_listen "$port" "$WAN_NSB"
wan_a timeout 90 "$FERRY" send --key "$T/key" -v --sockbuf 64K "$T/src/tree" \
	"$WAN_IPB:$port" >"$T/send.out" 2>&1 ||
	fail "ferry send failed: $(tail -3 "$T/send.out")"
wait "$rpid" || fail "ferry recv (send) failed: $(tail -3 "$T/send.recv")"
grep -q "stream ramp: [0-9]* of [0-9]* streams to start" "$T/send.out" ||
	fail "ferry send -v did not log a ramp: $(grep -E 'plan|ramp' "$T/send.out")"
diff -r "$T/src/tree" "$T/dst/tree" >/dev/null ||
	fail "the copy in B differs from the source"
note "send: $(grep -E 'stream ramp' "$T/send.out" | tail -1 | sed 's/.*stream ramp: //')"
note "send: $(tail -1 "$T/send.out"); the copy is byte-identical"
echo "PASS"
