#!/usr/bin/env bash
# The WAN matrix: one table-driven sweep over transport x RTT x streams x
# window / chunk size x repetitions, across ferry-wanem (bench/lib/wan.sh),
# with CSV results and gnuplot plots.
#
#   bench/matrix/run.sh STUDY...      (QUICK=1 for the short variant)
#
# STUDY is a table in bench/matrix/studies/ (its name without .tsv) or a
# path to one; bench/matrix/matrix.py explains the format, the tables say
# what each study measures. For every row of the table's plan
# (`matrix.py plan`), in order: ferry-wanem restarted with the row's
# delay (RTT / 2 each way), rate and queue; the receiver(s) started in
# namespace B; the sender(s) in A, for SECONDS, all at once or (start
# stagger:S) one single-stream flow every S seconds; every flow's
# throughput each second kept (ferry's sender and receiver JSON reports,
# iperf3's with the receiver's intervals, for xrdcp the size of the file
# growing on B's tmpfs; matrix.py says which count it plots and why);
# ferry-wanem's statistics kept. Then `matrix.py report` writes:
#
#   DIR/results.csv  one row per measurement: its configuration, Gb/s
#                    over the whole run and after the first OMIT seconds,
#                    the share of the rate cap (frames, as the limiter
#                    counts them), t90_s (end of the first 2 s at >= 90% of
#                    the cap), retransmits (iperf3), credit stalls and crc
#                    errors (ferry), ferry-wanem's drops and stalls, the
#                    host's load average
#   DIR/series.csv   one row per measurement and second
#   DIR/*.png        throughput vs streams (one plot per RTT), vs window,
#                    or over time, as the table's "plot" setting says
# and prints a summary table.
#
# Transports ("tool" column): ferry-tcp (ferry bench, tcp; window =
# --sockbuf on both ends, chunk = -l), ferry-send (ferry send of
# SEND_FILES x SEND_SIZE, default 4 x 1G, sparse on A's tmpfs, into
# ferry recv --dir on B's tmpfs; seconds = its time limit), ferry-uroce (ferry bench over uroce
# on DPDK net_af_packet on the same veths; needs mtu=9000 in the table for
# its 4 KiB path MTU; not staggered), iperf3 (-P streams, window = -w),
# xrdcp (B downloads a sparse tmpfs file from an XRootD server in A:
# XRootD's parallel streams carry only what the server sends; streams =
# --streams, at most 15; window and chunk do not apply).
#
# A "loss" column (percent) adds ferry-wanem --loss to the row.
#
# Environment:
#   QUICK=1        the table's "quick" rows (a smoke run of a few minutes)
#   RESULTS        where result directories go (default /tmp/ferry-matrix;
#                  each run makes RESULTS/STUDY-YYYYmmddTHHMMSSZ[-quick])
#   QUIET_WAIT     before each measurement wait up to this many seconds
#                  for the host to fall below 15% busy (default 0)
#   BUILD, FERRY   the ferry build (default build/)
#   WAN_*          bench/lib/wan.sh's settings (WAN_MEM_MB, WAN_LCORE, ...)
#
# Needs root (namespaces), a build with ferry-wanem, iperf3, ethtool,
# python3, gnuplot (plots are skipped without it), xrootd + xrdcp for
# xrdcp rows (apt-get install xrootd-server xrootd-client).
# Everything it starts is stopped and the namespaces deleted on any exit.
set -uo pipefail

if [ $# -gt 1 ]; then   # one study per process: the MTU is per study
	rc=0
	for s in "$@"; do "$0" "$s" || rc=1; done
	exit $rc
fi
if [ $# -ne 1 ] || [ "$1" = -h ] || [ "$1" = --help ]; then
	sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'
	echo "studies: $(cd "$(dirname "$0")/studies" && for f in *.tsv; do printf '%s ' "${f%.tsv}"; done)"
	exit 2
fi

# shellcheck source=bench/lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
MATRIX=$(cd "$(dirname "$0")" && pwd)
QUICK=${QUICK:-0}
RESULTS=${RESULTS:-/tmp/ferry-matrix}
QUIET_WAIT=${QUIET_WAIT:-0}

TABLE=$1
[ -f "$TABLE" ] || TABLE=$MATRIX/studies/$1.tsv
[ -f "$TABLE" ] || die "no study $1 (no $TABLE)"
STUDY=$(basename "$TABLE" .tsv)
MODE=full
[ "$QUICK" = 1 ] && MODE=quick

need_root
need_cmd python3 "apt-get install python3"
need_cmd ethtool "apt-get install ethtool"
command -v gnuplot >/dev/null || note "no gnuplot: CSV only (apt-get install gnuplot-nox)"

D=$RESULTS/$STUDY-$(date -u +%Y%m%dT%H%M%SZ)
[ "$MODE" = quick ] && D+=-quick
mkdir -p "$D/raw" || die "cannot make $D"
python3 "$MATRIX/matrix.py" plan "$TABLE" "$MODE" >"$D/plan.tsv" || die "bad table $TABLE"
setting() { awk -F'\t' -v k="$1" '$1 == "set" && $2 == k { print $3 }' "$D/plan.tsv"; }
NMEAS=$(grep -vc '^set' "$D/plan.tsv")
[ "$NMEAS" -gt 0 ] || die "$TABLE has no $MODE rows"
grep -v '^set' "$D/plan.tsv" | cut -f2 | sort -u >"$T/tools"
grep -qx iperf3 "$T/tools" && need_cmd iperf3 "apt-get install iperf3"
[ -x "$FERRY" ] || die "no ferry binary at $FERRY (build with meson first)"

export WAN_MTU=${WAN_MTU:-$(setting mtu)}
WAN_MTU=${WAN_MTU:-1500}
WANEM=${WANEM:-$BUILD/apps/wanem/ferry-wanem}
# shellcheck source=bench/lib/wan.sh
. "$BENCH_ROOT/bench/lib/wan.sh"   # its EXIT trap: wan_down, then bench_cleanup

bench_lock "${BENCH_LOCK_WAIT:-900}"
# A private copy of the binary: a rebuild during the run cannot change it.
cp "$FERRY" "$T/ferry" || die "cannot copy $FERRY"
FERRY=$T/ferry
"$FERRY" keygen "$T/key" >/dev/null || die "ferry keygen failed"
{
	echo "study $STUDY ($MODE), table $TABLE"
	echo "date $(date -u +%FT%TZ), host $(hostname), $(nproc) CPUs, kernel $(uname -r)"
	echo "ferry $("$FERRY" version 2>&1 | head -n 1), sha256 $(sha256sum "$FERRY" | cut -c1-12)"
	command -v iperf3 >/dev/null && iperf3 --version | head -n 1
	echo "tcp_congestion_control $(sysctl -n net.ipv4.tcp_congestion_control)," \
		"tcp_rmem $(sysctl -n net.ipv4.tcp_rmem | tr '\t' ' ')," \
		"tcp_wmem $(sysctl -n net.ipv4.tcp_wmem | tr '\t' ' ')," \
		"rmem_max $(sysctl -n net.core.rmem_max), wmem_max $(sysctl -n net.core.wmem_max)"
	echo "end hosts' GRO (WAN_GRO): ${WAN_GRO:-0}"
} >"$D/info.txt"
note "$STUDY ($MODE): $NMEAS measurements; results in $D"

# --- uroce: DPDK arguments per side (no hugetlbfs here: --no-huge, and
# then a file prefix of our own, since ferry's default --in-memory does
# not go with --no-huge); their runtime directories go at exit.
AFP=framesz=16384,blocksz=16384,framecnt=1024
dpdk_args() { # SIDE DEV
	local mem="--no-huge -m 512 --file-prefix mx$1$$"
	[ "${WAN_MEM_ARGS:-}" = --in-memory ] && mem=""
	echo "--vdev=net_af_packet0,iface=$2,$AFP $mem"
}

# --- xrootd in A, started at the first xrdcp row --------------------------
# XRootD spreads only what the server sends over its parallel streams
# (xrdcp --streams): an upload goes over the main connection alone (seen
# with xrdcp -d 2: the extra streams connect and carry nothing). So for
# xrdcp the server (the data's source) runs in A and xrdcp in B downloads,
# which keeps the data flowing A -> B like every other tool's.
XRD_PORT=1094
XRD_UP=0
XDIR=/dev/shm/fmx.$$
matrix_exit() {
	wan_down
	rm -rf "$XDIR" "/var/run/dpdk/mxA$$" "/var/run/dpdk/mxB$$"
	bench_cleanup
}
trap matrix_exit EXIT
xrootd_up() {
	[ "$XRD_UP" = 1 ] && return 0
	need_cmd xrootd "apt-get install xrootd-server"
	need_cmd xrdcp "apt-get install xrootd-client"
	need_cmd runuser "util-linux"
	id xrootd >/dev/null 2>&1 || die "no user xrootd (xrootd refuses to run as root)"
	mkdir -p "$XDIR/data" "$XDIR/adm" "$XDIR/run" "$XDIR/log" "$XDIR/dst" || die "cannot make $XDIR"
	truncate -s 16G "$XDIR/data/src" || die "cannot make $XDIR/data/src" # sparse: zeros
	chown -R xrootd:xrootd "$XDIR/data" "$XDIR/adm" "$XDIR/run" "$XDIR/log" || die "chown $XDIR"
	cat >"$XDIR/xrootd.cfg" <<-EOF
		all.export $XDIR/data
		xrd.port $XRD_PORT
		all.adminpath $XDIR/adm
		all.pidpath $XDIR/run
	EOF
	chmod 644 "$XDIR/xrootd.cfg"
	XRD_UP=1
}
# xrootd_start: in A (wan_restart keeps the namespaces: it runs on).
xrootd_start() {
	ip netns exec "$WAN_NSA" runuser -u xrootd -- xrootd -c "$XDIR/xrootd.cfg" \
		-l "$XDIR/log/xrootd.log" >>"$XDIR/xrootd.out" 2>&1 &
	wait_listen "$XRD_PORT" "$WAN_NSA" || die "xrootd did not listen in A: $(tail -3 "$XDIR/xrootd.out")"
}

# --- one flow per tool: CLIENT FLOW STREAMS (background; pid in CPID) ----
# Settings of the current row: R_* (set by measure).
LIMIT_EXTRA=40
# ferry-send: `ferry send` of SEND_FILES files of SEND_SIZE (default 4 x
# 1G; sparse, on A's tmpfs) into a `ferry recv --dir` on B's tmpfs; the
# row's seconds are its time limit. The files' bytes are real on B: mind
# the memory.
SEND_FILES=${SEND_FILES:-4}
SEND_SIZE=${SEND_SIZE:-1G}
ferry_server() { # one `ferry recv --once --json` per flow, on PORT + flow
	# (its report: crc errors and the bytes that arrived)
	local extra=() k env=() dir=()
	[ "$R_WINDOW" != - ] && extra+=(--sockbuf "$R_WINDOW")
	if [ "$R_TOOL" = ferry-uroce ]; then
		extra+=(--transport uroce)
		env=(FERRY_DPDK="$(dpdk_args B "$WAN_DEVB")")
	fi
	for ((k = 0; k < R_NFLOWS; k++)); do
		if [ "$R_TOOL" = ferry-send ]; then
			rm -rf "$XDIR/in$k"
			mkdir -p "$XDIR/in$k" || die "cannot make $XDIR/in$k"
			dir=(--dir "$XDIR/in$k")
		fi
		ip netns exec "$WAN_NSB" env "${env[@]}" timeout -k 5 $((R_LAST + LIMIT_EXTRA)) \
			"$FERRY" recv --key "$T/key" -B "$WAN_IPB" -p $((PORT + k)) \
			--once --json -i 1 "${dir[@]}" "${extra[@]}" \
			>"$R_RAW.flow$k.json" 2>"$R_RAW.recv$k.err" &
		SPIDS+=($!)
	done
	for ((k = 0; k < R_NFLOWS; k++)); do
		wait_listen $((PORT + k)) "$WAN_NSB" ||
			die "ferry recv did not listen: $(tail -3 "$R_RAW.recv$k.err")"
	done
}
ferry_client() { # FLOW STREAMS
	local args=(--key "$T/key" -i 1 --json) env=() what=() i
	local limit=$((R_SECS + LIMIT_EXTRA))
	if [ "$R_TOOL" = ferry-send ]; then
		if [ ! -d "$XDIR/out" ]; then
			mkdir -p "$XDIR/out" || die "cannot make $XDIR/out"
			for ((i = 0; i < SEND_FILES; i++)); do
				truncate -s "$SEND_SIZE" "$XDIR/out/f$i" ||
					die "cannot make $XDIR/out/f$i"
			done
		fi
		args=(send "${args[@]}")
		what=("$XDIR/out")
		limit=$R_SECS
	else
		args=(bench "${args[@]}" -t "$R_SECS")
	fi
	[ "$2" != - ] && args+=(-P "$2")
	[ "$R_WINDOW" != - ] && args+=(--sockbuf "$R_WINDOW")
	[ "$R_CHUNK" != - ] && args+=(-l "$R_CHUNK")
	if [ "$R_TOOL" = ferry-uroce ]; then
		args+=(--transport uroce)
		env=(FERRY_DPDK="$(dpdk_args A "$WAN_DEVA")")
	else
		args+=(--transport tcp)
	fi
	ip netns exec "$WAN_NSA" env "${env[@]}" timeout -k 5 "$limit" \
		"$FERRY" "${args[@]}" "${what[@]}" "$WAN_IPB:$((PORT + $1))" \
		>"$R_RAW.send$1.json" 2>"$R_RAW.flow$1.err" &
	CPIDS+=($!)
}
iperf3_server() { # -J: --get-server-output then hands the client the
	# receiver's intervals as JSON
	local k
	for ((k = 0; k < R_NFLOWS; k++)); do
		ip netns exec "$WAN_NSB" timeout -k 5 $((R_LAST + LIMIT_EXTRA)) \
			iperf3 -s -1 -J -p $((PORT + k)) >"$R_RAW.srv$k.out" 2>&1 &
		SPIDS+=($!)
	done
	for ((k = 0; k < R_NFLOWS; k++)); do
		wait_listen $((PORT + k)) "$WAN_NSB" || die "iperf3 -s did not listen on $((PORT + k))"
	done
}
iperf3_client() { # FLOW STREAMS
	# --get-server-output: the receiver's intervals, in the client's JSON
	local args=(-c "$WAN_IPB" -p $((PORT + $1)) -t "$R_SECS" -i 1 -J --get-server-output)
	[ "$2" != - ] && args+=(-P "$2")
	[ "$R_WINDOW" != - ] && args+=(-w "$R_WINDOW")
	ip netns exec "$WAN_NSA" timeout -k 5 $((R_SECS + LIMIT_EXTRA)) iperf3 "${args[@]}" \
		>"$R_RAW.flow$1.json" 2>"$R_RAW.flow$1.err" &
	CPIDS+=($!)
}
xrdcp_server() {
	xrootd_up
	ip netns pids "$WAN_NSA" 2>/dev/null | while read -r p; do
		[ "$(cat /proc/"$p"/comm 2>/dev/null)" = xrootd ] && echo up
	done | grep -q up || xrootd_start
	rm -f "$XDIR"/dst/f*
}
xrdcp_client() { # FLOW STREAMS: B downloads for R_SECS s; the size of the
	# file it writes sampled every second
	local f=$XDIR/dst/f$1 s=() t0
	[ "$2" != - ] && [ "$2" -gt 1 ] && s=(--streams "$(( $2 > 15 ? 15 : $2 ))")
	(
		ip netns exec "$WAN_NSB" timeout -s INT -k 5 "$R_SECS" \
			xrdcp -f -s "${s[@]}" "root://$WAN_IPA:$XRD_PORT/$XDIR/data/src" "$f" \
			>"$R_RAW.flow$1.out" 2>&1 &
		t0=$(date +%s.%N)
		for ((i = 1; i <= R_SECS; i++)); do
			sleep "$(awk -v t0="$t0" -v i="$i" -v now="$(date +%s.%N)" \
				'BEGIN { d = t0 + i - now; print (d > 0 ? d : 0) }')"
			echo "$i $(( $(stat -c '%b * %B' "$f" 2>/dev/null || echo 0) ))"
		done >"$R_RAW.flow$1.size"
		wait
	) &
	CPIDS+=($!)
}

# measure PLAN-LINE: one row.
FIRST=1
measure() {
	local delay args k t0 now start_at
	IFS=$'\t' read -r R_ID R_TOOL R_RTT R_RATE R_QUEUE R_STREAMS R_WINDOW R_CHUNK \
		R_START R_SECS _ R_REP R_LOSS <<<"$1"   # (omit: for the report)
	R_LOSS=${R_LOSS:--}
	R_RAW=$D/raw/$R_ID
	R_NFLOWS=1 R_GAP=0
	local per=$R_STREAMS
	if [[ $R_START == stagger:* ]]; then
		R_NFLOWS=$R_STREAMS R_GAP=${R_START#stagger:} per=1
	fi
	R_LAST=$((R_SECS + (R_NFLOWS - 1) * R_GAP))
	delay=$(awk -v r="$R_RTT" 'BEGIN { print r / 2 }')
	args=(--delay "$delay" --seed "$((10#${R_ID#m}))" --stats-interval 1)
	[ "$R_RATE" != - ] && args+=(--rate "$R_RATE")
	[ "$R_QUEUE" != - ] && args+=(--queue "$R_QUEUE")
	[ "$R_LOSS" != - ] && args+=(--loss "$R_LOSS")
	note "$R_ID/$NMEAS: $R_TOOL, RTT $R_RTT ms, rate $R_RATE, queue $R_QUEUE, loss $R_LOSS%, $R_STREAMS stream(s), window $R_WINDOW, chunk $R_CHUNK, $R_START, ${R_SECS} s, rep $R_REP"
	if [ $FIRST = 1 ]; then
		wan_up "${args[@]}" || die "the WAN did not come up: $(tail -3 "$WAN_LOG" 2>/dev/null)"
		FIRST=0
	else
		wan_restart "${args[@]}" || die "ferry-wanem did not restart: $(tail -3 "$WAN_LOG")"
	fi
	[ "$QUIET_WAIT" -gt 0 ] && ! wait_quiet "$QUIET_WAIT" &&
		note "  host still busy after $QUIET_WAIT s: measuring anyway"
	PORT=$((7700 + 70 * (10#${R_ID#m} % 20)))
	SPIDS=() CPIDS=()
	local tool=${R_TOOL%-tcp}
	tool=${tool%-uroce}
	tool=${tool%-send}
	rm -rf "$XDIR"/in*   # the last ferry-send row's files
	"${tool}_server"
	echo "load_before $(cut -d' ' -f1 /proc/loadavg)" >"$R_RAW.host"
	t0=$(date +%s.%N)
	echo "t0 $t0" >"$R_RAW.offsets"   # the wire counters' time line
	for ((k = 0; k < R_NFLOWS; k++)); do
		start_at=$(awk -v t0="$t0" -v k="$k" -v g="$R_GAP" -v now="$(date +%s.%N)" \
			'BEGIN { d = t0 + k * g - now; print (d > 0 ? d : 0) }')
		sleep "$start_at"
		now=$(date +%s.%N)
		echo "flow$k $(awk -v a="$now" -v b="$t0" 'BEGIN { printf "%.3f", a - b }')" >>"$R_RAW.offsets"
		"${tool}_client" "$k" "$per"
	done
	local rc=0 p
	for p in "${CPIDS[@]}"; do wait "$p" || rc=1; done
	echo "load_after $(cut -d' ' -f1 /proc/loadavg)" >>"$R_RAW.host"
	# receivers end with their session (ferry --once, iperf3 -1): give
	# them a moment, then stop what is left
	for p in "${SPIDS[@]}"; do
		for ((k = 0; k < 50; k++)); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -TERM "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	wan_stop
	cp "$WAN_JSON" "$R_RAW.wanem.json" 2>/dev/null
	if [ $rc -ne 0 ] && [ "$tool" != xrdcp ]; then   # xrdcp is stopped by SIGINT
		note "  $R_ID failed: $(tail -n 2 "$R_RAW".*.err 2>/dev/null | tr '\n' ' ')"
		return 0
	fi
	echo "$R_ID" >>"$D/done.txt"
}

while IFS= read -r line; do
	[[ $line == set$'\t'* ]] && continue
	measure "$line"
done <"$D/plan.tsv"
[ -s "$D/done.txt" ] || die "no measurement finished (logs in $D/raw)"
python3 "$MATRIX/matrix.py" report "$D" | tee "$D/summary.md"
echo "== results: $D/results.csv, $D/series.csv, $D/*.png"
