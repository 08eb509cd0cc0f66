#!/usr/bin/env bash
# uroce against tcp across an emulated WAN (ferry-wanem between two
# network namespaces, bench/lib/wan.sh, veths at MTU 9000 so that uroce
# runs at its 4 KiB path MTU), with default settings, in one run:
#
#  loss:  50 ms round trip, 0.01% of frames lost at random each way, no
#         rate limit: goodput of ferry bench over tcp and over uroce
#         (sender's report), and uroce / tcp;
#  delay: the same path without the loss (what loss costs each of them);
#  cap:   120 ms round trip, a 1 Gb/s bottleneck (ferry-wanem --rate 1gbit)
#         with a queue of QUEUE_BYTES (default 30 MB, two bandwidth-delay
#         products: room for what a start-up sends in the round trip
#         before the first sign of the queue comes back): the share of the
#         cap from 5 s after the first byte to the end of the run, from
#         ferry-wanem's egress counters (frame bytes, as the cap counts
#         them), and the frames the bottleneck dropped during the run;
#  ecn:   the cap again, ferry-wanem marking ECN CE on frames that find
#         its queue above ECN_BYTES (default 1 MB, 8 ms at 1 Gb/s): uroce's
#         share of the cap, the bottleneck's drops and marks, its queue
#         peak, and the CNPs the receiver sent, from its log and from a
#         capture (dumpcap on B's veth, decoded by ferry rocedump);
#  share: the marking cap, two uroce sessions at once: each one's rate
#         from 5 s on (its own report) against a fair share (half the cap);
#  mix:   the same with one uroce and one tcp session (tcp's packets are
#         not ECN-capable: the queue drops them instead).
#
# Each transfer is `ferry bench -t DURATION -i 1` from A to one `ferry recv`
# per transport in B. The rows alternate transports, REPS times (default
# 1), and the table shows each one. Default CASES="loss cap ecn";
# "loss cap ecn share mix" runs them all.
#
# Environment: DURATION (s, default 10), REPS (default 1), QUEUE_BYTES,
# ECN_BYTES, FRAMES (uroce's af_packet ring frames, default 4096),
# CASES, BENCH_OPTS (more options for every ferry bench, such as -v or
# -P 8), POLL (uroce's --poll, both ends: busy or event; default: the
# transport's), KEEP (set: the reports and logs are
# copied to /tmp/uroce_wan.last), FERRY / BUILD, WAN_MEM_MB (ferry-wanem's
# DPDK memory, default 1024). Needs root, a ferry built with DPDK and
# ferry-wanem. Prints a markdown table; exit 0 when every transfer ran.
# shellcheck source=bench/lib/common.sh
. "$(dirname "$0")/lib/common.sh"

DURATION=${DURATION:-10}
REPS=${REPS:-1}
ECN_BYTES=${ECN_BYTES:-1000000}
QUEUE_BYTES=${QUEUE_BYTES:-30000000}
CASES=${CASES:-"loss cap ecn"}
for v in DURATION REPS ECN_BYTES QUEUE_BYTES; do
	[[ "${!v}" =~ ^[1-9][0-9]*$ ]] || die "$v must be a positive whole number"
done
POLL=${POLL:-}
[[ "$POLL" =~ ^(|busy|event)$ ]] || die "POLL must be busy or event"
# poll_opt TRANSPORT: sets POLL_OPT to that transport's --poll option
# (uroce with POLL set; otherwise none: the transport's default)
poll_opt() {
	POLL_OPT=()
	[ "$1" = uroce ] && [ -n "$POLL" ] && POLL_OPT=(--poll "$POLL")
	return 0
}
need_root
need_cmd python3 "needed to read the reports"
case " ${CASES} " in
*" ecn "*) need_cmd dumpcap "apt-get install tshark (captures the CNPs)" ;;
esac
[ -x "$FERRY" ] || die "no ferry binary at $FERRY (build with meson first)"
env -u FERRY_DPDK "$FERRY" bench --transport uroce -n 1M 127.0.0.1:1 2>&1 |
	grep -q "not in this build" && die "this ferry has no uroce transport (built without libdpdk)"
bench_lock "${BENCH_LOCK_WAIT:-900}"
cp "$FERRY" "$T/ferry" || die "cannot copy $FERRY"
FERRY=$T/ferry
"$FERRY" keygen "$T/key" >/dev/null || die "ferry keygen"

export WAN_MTU=9000
# shellcheck source=bench/lib/wan.sh
. "$(dirname "$0")/lib/wan.sh"
# 4096-frame receive rings: both ends share two vCPUs with ferry-wanem
# here, and a ring that overflows while its process waits for a CPU costs
# a go-back-N of the whole flight
AFP="framesz=16384,blocksz=16384,framecnt=${FRAMES:-4096}"
DPDK_A="--no-huge -m 512 --file-prefix uwA$$"
DPDK_B="--no-huge -m 512 --file-prefix uwB$$"
trap 'wan_down; rm -rf "/var/run/dpdk/uwA$$"* "/var/run/dpdk/uwB$$"; [ -n "${KEEP:-}" ] && rm -rf /tmp/uroce_wan.last && cp -r "$T" /tmp/uroce_wan.last; bench_cleanup' EXIT

RPIDS=()
# receivers TAG: one ferry recv per transport in B (tcp 7491, uroce 7492)
receivers() {
	local tr port
	for tr in tcp uroce; do
		port=$([ $tr = tcp ] && echo 7491 || echo 7492)
		poll_opt "$tr"
		# qdisc_bypass=0: B's frames pass the point a capture sees
		ip netns exec "$WAN_NSB" env \
			FERRY_DPDK="--vdev=net_af_packet0,iface=$WAN_DEVB,$AFP,qdisc_bypass=0 $DPDK_B" \
			timeout 900 "$FERRY" recv --key "$T/key" --transport "$tr" \
			"${POLL_OPT[@]}" -B "$WAN_IPB" -p "$port" -i 0 -v \
			>"$T/recv.$1.$tr.out" 2>"$T/recv.$1.$tr.err" &
		RPIDS+=($!)
		wait_listen "$port" "$WAN_NSB" || die "ferry recv ($tr) did not listen: $(tail -3 "$T/recv.$1.$tr.err")"
	done
}
stop_receivers() {
	local p
	for p in "${RPIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
	for p in "${RPIDS[@]}"; do wait "$p" 2>/dev/null; done
	RPIDS=()
}
# bench CASE NAME TRANSPORT REP: one bench from A, JSON in
# $T/CASE.NAME.REP.json (NAME: the transport, or tcp/uroce with a digit
# when two run at once)
bench() {
	local port
	port=$([ "$3" = tcp ] && echo 7491 || echo 7492)
	poll_opt "$3"
	ip netns exec "$WAN_NSA" env \
		FERRY_DPDK="--vdev=net_af_packet0,iface=$WAN_DEVA,$AFP ${DPDK_A}$2" \
		timeout $((DURATION + 120)) "$FERRY" bench --key "$T/key" \
		--transport "$3" "${POLL_OPT[@]}" -t "$DURATION" -i 1 --json ${BENCH_OPTS:-} "$WAN_IPB:$port" \
		>"$T/$1.$2.$4.json" 2>"$T/$1.$2.$4.err" ||
		die "$1: ferry bench over $3 failed: $(tail -3 "$T/$1.$2.$4.err")"
	rm -rf "/var/run/dpdk/uwA$$$2"
}
# run CASE REP NAME:TRANSPORT...: the benches at once; wall times in
# $T/CASE.NAME.REP.t for each
run() {
	local c=$1 r=$2 p pids=() t0
	shift 2
	t0=$(date +%s.%N)
	for p in "$@"; do
		bench "$c" "${p%%:*}" "${p#*:}" "$r" &
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p" || exit 1; done
	# the queue drains for a while after the senders' last second
	sleep 2
	for p in "$@"; do echo "$t0 $(date +%s.%N)" >"$T/$c.${p%%:*}.$r.t"; done
}

for c in $CASES; do
	case $c in
	loss) opts=(--delay 25 --loss 0.01 --seed 7) ;;
	delay) opts=(--delay 25) ;;
	cap) opts=(--delay 60 --rate 1gbit --queue "$QUEUE_BYTES" --mbufs 50000) ;;
	ecn | share | mix) opts=(--delay 60 --rate 1gbit --queue "$QUEUE_BYTES" --ecn "$ECN_BYTES" --mbufs 50000) ;;
	*) die "unknown case $c (loss, delay, cap, ecn, share, mix)" ;;
	esac
	note "$c: ferry-wanem ${opts[*]}"
	if [ "$c" = "${CASES%% *}" ]; then
		wan_up "${opts[@]}" --stats-interval "${STATS_S:-1}" || die "the WAN did not come up: $(cat "$WAN_LOG" 2>/dev/null)"
	else
		wan_restart "${opts[@]}" --stats-interval "${STATS_S:-1}" || die "ferry-wanem did not restart: $(cat "$WAN_LOG" 2>/dev/null)"
	fi
	receivers "$c"
	CAP_PID=
	if [ "$c" = ecn ]; then
		# what B sends back (ACKs, CNPs), headers only: the CNPs as a
		# capture shows them
		ip netns exec "$WAN_NSB" timeout $((REPS * (DURATION + 60) + 30)) \
			dumpcap -q -i "$WAN_DEVB" -s 96 -f "udp dst port 4791 and src host $WAN_IPB" \
			-w "$T/ecn.pcapng" >"$T/dumpcap.out" 2>&1 &
		CAP_PID=$!
		sleep 1
	fi
	for r in $(seq "$REPS"); do
		case $c in
		ecn) run "$c" "$r" uroce:uroce ;;
		share) run "$c" "$r" uroce1:uroce uroce2:uroce ;;
		mix) run "$c" "$r" uroce:uroce tcp:tcp ;;
		*) run "$c" "$r" tcp:tcp; run "$c" "$r" uroce:uroce ;;
		esac
	done
	stop_receivers
	if [ -n "$CAP_PID" ]; then
		kill -INT "$CAP_PID" 2>/dev/null
		wait "$CAP_PID" 2>/dev/null
		"$FERRY" rocedump --quiet "$T/ecn.pcapng" >"$T/ecn.rocedump" 2>&1
	fi
	wan_stop || note "ferry-wanem did not exit 0"
	cp "$WAN_JSON" "$T/$c.wanem.json"
done

python3 - "$T" "$DURATION" "$REPS" "$CASES" <<'PY'
import json, re, sys
T, dur, reps, cases = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4].split()
CAP = 1e9

def wanem(c):
    return [json.loads(l) for l in open(f"{T}/{c}.wanem.json") if l.startswith("{")]

def at(lines, t):
    """the last interval line at or before wall time t (counters are totals)"""
    best = None
    for l in lines:
        if l.get("type") == "interval" and l["time"] <= t:
            best = l
    return best

def run(c, tr, r):
    d = json.load(open(f"{T}/{c}.{tr}.{r}.json"))
    t0, t1 = (float(x) for x in open(f"{T}/{c}.{tr}.{r}.t").read().split())
    w = [l for l in wanem(c) if l.get("type") == "interval"]
    # the transfer's start: the first second with traffic (DPDK's start-up
    # and the handshake come before it)
    start = t0
    for p, l in zip(w, w[1:]):
        if l["time"] > t0 and l["ab"]["tx_bytes"] - p["ab"]["tx_bytes"] > CAP / 8 / 100:
            start = p["time"]
            break
    a, b = at(w, start + 5), at(w, start + dur)
    share = (b["ab"]["tx_bytes"] - a["ab"]["tx_bytes"]) * 8 / (b["time"] - a["time"]) / CAP
    s, e = at(w, t0) or w[0], at(w, t1 + 1) or w[-1]
    drops = e["ab"]["dropped"]["queue"] - s["ab"]["dropped"]["queue"]
    marked = e["ab"]["marked"] - s["ab"]["marked"]
    return d["end"]["gbps"], share, drops, marked

def cnps(c):
    m = re.findall(r"(\d+) CNPs sent", open(f"{T}/recv.{c}.uroce.err").read())
    return sum(int(x) for x in m)

def captured_cnps():
    try:
        text = open(f"{T}/ecn.rocedump").read()
    except OSError:
        return "no capture"
    return sum(int(x) for x in re.findall(r"(\d+) cnps", text))

def late(c, name, r):
    """the session's own mean rate from 5 s to its last full second"""
    iv = [i["sum"] for i in json.load(open(f"{T}/{c}.{name}.{r}.json"))["intervals"]]
    iv = [i for i in iv if i["start"] >= 5 - 1e-6 and i["end"] <= dur + 1e-6]
    s = sum(i["seconds"] for i in iv)
    return sum(i["bytes"] * 8 for i in iv) / s if s else 0

NAMES = {"ecn": ["uroce"], "share": ["uroce1", "uroce2"], "mix": ["uroce", "tcp"]}
print("\n| case | session | rep | goodput Gb/s (whole run) | share of the cap, 5 s to the end | bottleneck drops | ECN marks |")
print("|---|---|---|---|---|---|---|")
ratios, fair = [], []
for c in cases:
    for r in range(1, reps + 1):
        g = {}
        for tr in NAMES.get(c, ["tcp", "uroce"]):
            gb, share, drops, marked = run(c, tr, r)
            g[tr] = gb
            sh = f"{share:.2f}" if c not in ("loss", "delay") else "-"
            print(f"| {c} | {tr} | {r} | {gb:.3f} | {sh} | {drops} | {marked} |")
        if c in ("share", "mix"):
            a, b = NAMES[c]
            la, lb = late(c, a, r), late(c, b, r)
            fs = CAP / 2
            fair.append(f"{c} rep {r}: from 5 s, {a} {la / 1e9:.3f} Gb/s ({la / fs:.2f} of a fair share), "
                        f"{b} {lb / 1e9:.3f} Gb/s ({lb / fs:.2f})")
        elif "tcp" in g and g["tcp"] > 0:
            ratios.append(f"{c} rep {r}: uroce / tcp = {g['uroce'] / g['tcp']:.2f}")
for c in cases:
    end = [l for l in wanem(c) if l.get("type") == "end"][-1]["ab"]
    extra = (f", CNPs the uroce receiver sent: {cnps(c)} (its log), "
             f"{captured_cnps()} (ferry rocedump of a capture on B's veth)") if c == "ecn" else \
            f", CNPs the uroce receiver sent: {cnps(c)}" if c in ("share", "mix") else ""
    print(f"\n{c}: ferry-wanem A->B over the case: {end['tx']} frames out, dropped "
          f"{end['dropped']}, ECN marked {end['marked']}, queue peak "
          f"{end['queue_peak_bytes'] / 1e6:.2f} MB{extra}")
print()
for x in ratios + fair:
    print(x)
PY
