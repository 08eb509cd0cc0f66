#!/usr/bin/env bash
# Windows that follow the rate across an emulated WAN: RTT 100 ms
# (ferry-wanem --delay 50), a 400 Mb/s bottleneck, its queue one
# bandwidth-delay product (5 MB, 100 ms of queueing when full). The path
# plan, aiming at the veth's 10 Gb/s, gives each of its 4 streams a window
# far larger than the path needs; the receiver holds each one to the rate
# it carries (lib/pipe/fit.h). What must hold:
#
#  1. ferry bench with the defaults: the receiver's report says it held
#     every stream (start.path.fit), to windows that add up to about what
#     the path carries per round trip (at most 2 x 1.25 x the BDP plus
#     256 KiB a stream), not the plan's; every byte sent was verified.
#  2. The bottleneck's queue stays short: pings across the path while the
#     session runs (from 5 s on, after slow start) take at most 60 ms more
#     than the same pings before it, on a path whose queue adds up to
#     100 ms when full. The fit keeps about a quarter of the BDP and 1 MiB
#     queued, some 45 ms.
#  3. FERRY_TCP_FIT=0 at the receiver, a 6 s session: no stream held,
#     the report says none; every byte verified. (Its queueing, from 3 s
#     on, is printed for comparison; how full bbr keeps the queue is not
#     ferry's to check.)
#
# The delays compared are the emulator's queue, against a baseline taken
# in the same run; no figure depends on this host's speed beyond moving
# 400 Mb/s. Needs root, a build with ferry-wanem (DPDK), ethtool, ping,
# python3. About 35 s.
. "$(dirname "$0")/lib.sh"

need_wanem
[ -x "$FERRY" ] || fail "no ferry binary at $FERRY"
command -v python3 >/dev/null || skip "no python3 (the JSON reports are read with it)"
command -v ping >/dev/null || skip "no ping (apt-get install iputils-ping)"

WANEM=$WANEM . "$SRC/bench/lib/wan.sh"

note "topology: A - veth - ferry-wanem --delay 50 --rate 400mbit --queue 5M - veth - B"
wan_up --delay 50 --rate 400mbit --queue 5000000 --seed 5 ||
	fail "the WAN did not come up: $(cat "$WAN_LOG" 2>/dev/null)"
"$FERRY" keygen "$T/key" >/dev/null || fail "keygen"

# pings OUT COUNT: COUNT pings from A to B, 0.25 s apart; the RTTs in ms,
# one per line, in OUT.
pings() {
	wan_a ping -n -c "$2" -i 0.25 -W 2 "$WAN_IPB" 2>/dev/null |
		sed -n 's/.*time=\([0-9.]*\) ms.*/\1/p' >"$1"
}

median() {
	sort -n "$1" | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "" }'
}

pings "$T/base.ms" 12
base=$(median "$T/base.ms")
[ -n "$base" ] || fail "no ping crossed the idle WAN"
note "idle path: median ping $base ms"

# session NAME FIT SECS FROM: ferry bench -t SECS from A to a fresh
# `ferry recv` in B (FERRY_TCP_FIT=FIT in its environment), pinging from
# FROM s to a second before its end.
session() {
	local name=$1 secs=$3 from=$4 port rpid spid
	port=$(free_port)
	wan_b env FERRY_TCP_FIT="$2" timeout 60 "$FERRY" recv --key "$T/key" \
		-B "$WAN_IPB" -p "$port" -i 0 --json --once \
		>"$T/$name.recv.json" 2>"$T/$name.recv.err" &
	rpid=$!
	wait_listen "$port" "$WAN_NSB"
	wan_a timeout 60 "$FERRY" bench --key "$T/key" -t "$secs" --json \
		"$WAN_IPB:$port" >"$T/$name.json" 2>"$T/$name.err" &
	spid=$!
	sleep "$from"
	pings "$T/$name.ms" $(((secs - from - 1) * 4))
	wait "$spid" || fail "$name: ferry bench failed: $(tail -3 "$T/$name.err")"
	wait "$rpid" || fail "$name: ferry recv failed: $(tail -3 "$T/$name.recv.err")"
	[ -s "$T/$name.ms" ] || fail "$name: no ping crossed the WAN during the session"
}

# check NAME MODE QUEUED_MS: MODE fit or kernel.
check() {
	python3 - "$T/$1.json" "$T/$1.recv.json" "$2" "$3" <<'EOF'
import json, sys
snd = json.load(open(sys.argv[1]))
rcv = json.loads(open(sys.argv[2]).read().splitlines()[0])
mode, queued = sys.argv[3], float(sys.argv[4])
def bad(why):
    print(why); sys.exit(1)
sent = snd["end"]["sum_sent"]["bytes"]
got = snd["end"]["sum_received"]["bytes"]
if sent == 0 or sent != got:
    bad(f"the receiver verified {got} bytes of the {sent} sent")
path = rcv["start"].get("path", {})
streams = rcv["start"]["streams"]
fit = path.get("fit")
gbps = sent * 8 / snd["end"]["sum_sent"]["seconds"] / 1e9
if mode == "kernel":
    if fit:
        bad(f"FERRY_TCP_FIT=0, yet the receiver held windows: {fit}")
    print(f"kernel windows: {gbps:.2f} Gb/s, pings {queued:.0f} ms over the idle path")
    sys.exit(0)
if not fit:
    bad(f"the receiver held no window: {path}")
bdp = 400e6 / 8 * 0.1
limit = 2 * 1.25 * bdp + streams * (256 << 10)
if fit["streams_held"] != streams:
    bad(f"{fit['streams_held']} of {streams} streams held after 12 s")
if fit["window_bytes"] > limit:
    bad(f"windows held to {fit['window_bytes']} bytes in all, over {limit:.0f} "
        f"for a {bdp:.0f}-byte BDP ({path.get('plan')})")
if queued > 60:
    bad(f"pings took {queued:.0f} ms more than on the idle path while the session ran: "
        f"the bottleneck's queue stayed {queued / 100:.0%} full (windows {fit['window_bytes']} bytes)")
print(f"fit: {streams} streams held to {fit['window_bytes'] / 2**20:.1f} MiB in all "
      f"(the plan: {path.get('plan')}); {gbps:.2f} Gb/s, pings {queued:.0f} ms over the idle path")
EOF
}

note "1, 2. ferry bench, defaults: windows follow the rate"
session fit 1 12 5
out=$(check fit fit "$(awk -v m="$(median "$T/fit.ms")" -v b="$base" 'BEGIN { print m - b }')") ||
	fail "$out"
note "$out"

note "3. FERRY_TCP_FIT=0: the kernel's windows"
session kernel 0 6 3
out=$(check kernel kernel "$(awk -v m="$(median "$T/kernel.ms")" -v b="$base" 'BEGIN { print m - b }')") ||
	fail "$out"
note "$out"
echo "PASS"
