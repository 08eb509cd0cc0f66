#!/usr/bin/env bash
# TCP across a long fat network through ferry-wanem: a 280 ms round trip
# (--delay 140) with a 300 Mb/s bottleneck, the ATLAS Lyon-Tokyo setup
# (iperf with an 8 MB window) on one host.
#
#  1. One iperf3 stream with -w 8M: its goodput is within 15% of
#     window / RTT, where window is what the receiver actually advertised
#     (snd_wnd in `ss -ti` on the sender, sampled every second) and RTT
#     the configured 280 ms. Below the cap, a window-limited stream moves
#     one window per round trip.
#  2. Four such streams (4 x window / RTT is about twice the cap): the
#     bottleneck carries its rate, within 10% (frames counted like the
#     limiter counts them, goodput x (MSS + 66) / MSS). The bottleneck
#     queue is one bandwidth-delay product (10 MB), the classic sizing,
#     and the streams use CUBIC (iperf3 -C cubic): this host's default,
#     BBR (v1), keeps about two BDPs in flight per bottleneck; four BBR
#     streams in startup together overflow the default 50 ms queue, lose
#     thousands of frames and settle 15-30% under the cap, with a dip
#     every 10 s (ProbeRTT, half a second at 280 ms): what the KEK-CERN
#     study saw as "simultaneous slow start hurts". bench/matrix shows it.
#
# What "-w 8M" means here: iperf3 sets SO_SNDBUF and SO_RCVBUF to 8 MiB on
# both ends. The kernel caps that at net.core.rmem_max / wmem_max (4 MiB
# on this host) and doubles it for its bookkeeping, so each socket gets 8
# MiB of buffer; of that it advertises as window only the share payload
# has in the memory it holds (tcp's scaling_ratio, about 62% for 1448-byte
# segments here): a 5.2 MB window, 148 Mb/s at 280 ms, not 8 MiB / RTT =
# 240 Mb/s. rmem_max and wmem_max cannot be raised inside a network
# namespace on this kernel (writing them there fails with EINVAL: they
# are global), and raising them host-wide would change every other test
# running here; so the test takes the window the kernel advertised as
# "the window" and says how it relates to the 8 MiB asked for.
#
# Needs root, a build with ferry-wanem (DPDK), ethtool, iperf3 (installed
# if missing). Exit 77 with the reason when any is missing, or when the
# host was too busy to carry the rate (the second check is then run once
# more and skipped if the forwarder itself was held off the CPU).
# About 50 s.
. "$(dirname "$0")/lib.sh"

need_wanem
command -v ss >/dev/null || skip "no ss (iproute2)"
if ! command -v iperf3 >/dev/null; then
	note "installing iperf3"
	DEBIAN_FRONTEND=noninteractive timeout 120 apt-get install -y -q iperf3 \
		>"$T/apt.log" 2>&1
	command -v iperf3 >/dev/null || skip "iperf3 is missing and could not be installed"
fi

# wan.sh's EXIT trap takes down the WAN, then runs lib.sh's cleanup.
WANEM=$WANEM . "$SRC/bench/lib/wan.sh"

DELAY=140                     # one way: RTT 280 ms
RTT_MS=$((2 * DELAY))
RATE=300                      # Mb/s of Ethernet frames
PORT=$(free_port)

note "topology: A - veth - ferry-wanem --delay $DELAY --rate ${RATE}mbit - veth - B"
QUEUE=10M                     # about rate x RTT (10.5 MB)
wan_up --delay "$DELAY" --rate "${RATE}mbit" --queue "$QUEUE" --seed 1 ||
	fail "the WAN did not come up: $(cat "$WAN_LOG" 2>/dev/null)"

# run NAME OMIT SECONDS [iperf3 client options]: iperf3 from A to B for
# SECONDS after OMIT seconds left out of the result (slow start: about 10
# round trips at 280 ms); meanwhile `ss -ti` on the sender once a second
# into $T/NAME.ss.
run() {
	local name=$1 omit=$2 secs=$3 spid i
	shift 3
	wan_b timeout $((secs + 30)) iperf3 -s -1 -p "$PORT" >"$T/$name.server" 2>&1 &
	spid=$!
	wait_listen "$PORT" "$WAN_NSB"
	(
		for ((i = 0; i < secs + omit; i++)); do
			sleep 1
			echo "sample $((i + 1))"
			wan_a ss -Htin dst "$WAN_IPB" dport = ":$PORT" 2>/dev/null
		done
	) >"$T/$name.ss" &
	local sspid=$!
	wan_a timeout $((secs + 30)) iperf3 -c "$WAN_IPB" -p "$PORT" -J -O "$omit" \
		-t "$secs" "$@" >"$T/$name.json" 2>&1
	local rc=$?
	kill "$sspid" 2>/dev/null
	wait "$sspid" 2>/dev/null
	wait "$spid" 2>/dev/null
	return $rc
}

# check_window NAME: goodput within 15% of the advertised window / RTT.
check_window() {
	python3 - "$T/$1.json" "$T/$1.ss" "$RTT_MS" <<'PY'
import json, re, statistics, sys
j = json.load(open(sys.argv[1]))
rtt = float(sys.argv[3]) / 1000
gp = j["end"]["sum_received"]["bits_per_second"]
# per sample: the data connection is the one with the largest window
# (iperf3's control connection stays near 64 KiB)
wins, rtts, sample = [], [], []
def flush():
    if sample:
        w, r = max(sample)
        wins.append(w); rtts.append(r)
for line in open(sys.argv[2]):
    if line.startswith("sample"):
        flush(); sample = []
        continue
    w = re.search(r"snd_wnd:(\d+)", line)
    r = re.search(r"\brtt:([0-9.]+)/", line)
    if w and r:
        sample.append((int(w.group(1)), float(r.group(1))))
flush()
steady = wins[5:] or wins          # after the left-out slow start
if not steady:
    sys.exit("no ss samples of the data connection")
win = statistics.median(steady)
srtt = statistics.median(rtts[5:] or rtts)
want = win * 8 / rtt
print(f"== 1 stream, -w 8M: window advertised {win / 1e6:.2f} MB "
      f"({win / (8 << 20) * 100:.0f}% of the 8 MiB buffer; samples "
      f"{min(steady) / 1e6:.2f}-{max(steady) / 1e6:.2f} MB), smoothed RTT {srtt:.1f} ms; "
      f"window / RTT = {want / 1e6:.1f} Mb/s; goodput {gp / 1e6:.1f} Mb/s = "
      f"{gp / want:.3f} of it (allowed 0.85-1.15)")
assert 1e6 < win <= 16 << 20, f"window {win} bytes: -w 8M did not apply"
if abs(gp / want - 1) > 0.15:
    sys.exit(f"goodput {gp / 1e6:.1f} Mb/s is not within 15% of window / RTT {want / 1e6:.1f} Mb/s")
PY
}

# check_cap NAME: the bottleneck carried its rate (frames) within 10%.
check_cap() {
	python3 - "$T/$1.json" "$RATE" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
rate = float(sys.argv[2])
mss = j["start"]["tcp_mss_default"]
gp = j["end"]["sum_received"]["bits_per_second"] / 1e6
wire = gp * (mss + 66) / mss
print(f"== 4 streams, -w 8M: goodput {gp:.1f} Mb/s = {wire:.1f} Mb/s of frames "
      f"(cap {rate:g}; allowed {0.9 * rate:.0f}-{1.05 * rate:.0f})")
if not 0.9 * rate <= wire <= 1.05 * rate:
    sys.exit(f"{wire:.1f} Mb/s of frames, not within 10% of the {rate:g} Mb/s cap")
PY
}

# stalled: ferry-wanem's statistics say the host held it off the CPU for
# long (over 20 ms at once), which makes a shortfall the host's.
stalled() {
	python3 - "$WAN_JSON" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
loop = lines[-1]["loop"] if lines else {}
sys.exit(0 if loop.get("stall_max_us", 0) > 20000 else 1)
PY
}

FAILS=0
note "one stream, -w 8M, 8 s after 4 s of slow start"
if ! { run one 4 8 -w 8M && check_window one; }; then
	note "not within 15%: measuring once more"
	if ! { run one2 4 8 -w 8M && check_window one2; }; then
		stalled && skip "the host held ferry-wanem off the CPU for over 20 ms at a time: the shortfall says nothing about TCP or the emulator"
		FAILS=$((FAILS + 1))
	fi
fi

note "four streams, -w 8M, CUBIC, 6 s after 6 s of slow start"
if ! { run four 6 6 -P 4 -w 8M -C cubic && check_cap four; }; then
	note "not at the cap: measuring once more"
	wan_restart --delay "$DELAY" --rate "${RATE}mbit" --queue "$QUEUE" --seed 2 ||
		fail "ferry-wanem did not restart"
	if ! { run four2 6 6 -P 4 -w 8M -C cubic && check_cap four2; }; then
		wan_stop
		stalled && skip "the host held ferry-wanem off the CPU for over 20 ms at a time: the shortfall says nothing about TCP or the emulator"
		FAILS=$((FAILS + 1))
	fi
fi

[ "$FAILS" -eq 0 ] || fail "$FAILS check(s) failed"
echo "ok: window / RTT below the cap, the cap with enough streams"
