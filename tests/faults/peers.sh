#!/usr/bin/env bash
# Faults between two peers, for one transport (tcp or uroce):
#   kill send  the sender killed -9 at a seeded point, FAULT_TRIALS times
#   kill recv  the receiver killed -9 (then restarted), FAULT_TRIALS times
#   kill both  both at once, then both restarted, FAULT_BOTH times
#   link       a veth taken down mid-file for 0.2 - 1.5 s, or for longer
#              than the --timeout, FAULT_LINK times
#   disk       the receiver's file system (an 8 MiB tmpfs) filled
#              mid-file by another writer, FAULT_DISK times; then the
#              command once more with everything published, on a disk
#              with less free than the files take (it must skip them)
#   stale      a journal left beside a published file (an attempt killed
#              between the rename and removing the journal), once
# After each fault the same command runs again (it resumes) and must
# complete. Checked after every trial: whatever is under a final name is
# its source byte for byte (also watched every few ms while transfers
# run, by files_watch.py); every journal names only chunks whose crc32c
# is the source's and that the part file holds; the rerun resumes exactly
# what the journals hold and skips what was published; the destination
# ends identical to the source with no part files or journals; no ferry
# process of ours is left but the receiver. At the end, after teardown:
# no processes, namespaces, veths, mounts or hugepages left.
#
# The sender and the receiver run in two namespaces joined by a veth
# pair; the sender's side is shaped (tc tbf, 160 Mbit/s) so that the
# 8 MiB tree takes about half a second and kills land mid-transfer.
#
#   bash tests/faults/peers.sh tcp|uroce     (root; BUILD, SRC)
#   FAULT_TRIALS=N     kill trials per side (default 12)
#   FAULT_BOTH, FAULT_LINK, FAULT_DISK: those trials (3, 3, 1)
#   FAULT_SEED=KIND:N  replay one trial (e.g. FAULT_SEED=recv:123456)
#   FAULT_SEED_BASE=N  this run's seeds (default random, printed)
#   FAULT_SPLIT=0|1    the two halves one after the other, or side by
#                      side, each with its own namespaces (default: 1
#                      for tcp, 0 for uroce)
#   FAULT_TIMEOUT=SEC  both peers' --timeout (default 3; uroce 5)
#
# uroce needs a build with DPDK and hugepages (reserved here, given
# back) or --no-huge; without them this exits 77 saying why.
TR=${1:-tcp}
. "$(dirname "$0")/faults_lib.sh"

case "${FAULT_SEED:-}" in
"" | send:* | recv:* | both:* | link:* | disk:* | stale:*) ;;
*) skip "FAULT_SEED=$FAULT_SEED is not a trial of peers.sh (send, recv, both, link, disk, stale)" ;;
esac
# --timeout of both peers: 3 s; 5 s for uroce, whose first session after
# a receiver (re)start spends the DPDK start-up inside it, which takes
# seconds on a busy host
[ "$TR" = uroce ] && export FAULT_TIMEOUT=${FAULT_TIMEOUT:-5}
export FAULT_TIMEOUT=${FAULT_TIMEOUT:-3}
N_KILL=${FAULT_TRIALS:-12}
N_BOTH=${FAULT_BOTH:-3}
N_LINK=${FAULT_LINK:-3}
N_DISK=${FAULT_DISK:-1}
RATE=${FAULT_RATE:-160mbit}

need_root
command -v tc >/dev/null || skip "no tc (iproute2) to shape the link"
case $TR in
tcp) ;;
uroce)
	out=$(env -u FERRY_DPDK "$FERRY" bench --transport uroce -n 1M 127.0.0.1:1 2>&1)
	case "$out" in
	*"not in this build"*) skip "this build has no uroce transport (meson did not find libdpdk)" ;;
	esac ;;
*) fail "usage: peers.sh tcp|uroce" ;;
esac

make_pair
ip -n $NSA link set $VETHA mtu 9000 && ip -n $NSB link set $VETHB mtu 9000 ||
	fail "veth MTU 9000"
# shape RATE: A's egress (faults land mid-transfer); "fast" for reruns
shape() {
	if [ "$1" = fast ]; then
		tc -n $NSA qdisc replace dev $VETHA root tbf rate 40gbit burst 4mb latency 100ms
	else
		tc -n $NSA qdisc replace dev $VETHA root tbf rate "$1" burst 64kb latency 100ms
	fi
}
shape $RATE || fail "tc tbf on $VETHA"

DPDK_A= DPDK_B= MEM=
if [ $TR = uroce ]; then
	# 2 MiB hugepages for the ferry processes (about 60 MiB each), or
	# --no-huge; A's frames go through its qdisc (qdisc_bypass=0), so
	# that the tbf shapes them.
	free_hp() { awk '/^HugePages_Free/ { print $2 }' /proc/meminfo; }
	HP_WAS=$(cat $HP_FILE)
	[ "$(free_hp)" -lt 256 ] && echo $((HP_WAS + 256 - $(free_hp))) >$HP_FILE 2>/dev/null
	[ "$(free_hp)" -ge 200 ] || MEM="--no-huge -m 512"
	AFP="framesz=16384,blocksz=16384,framecnt=1024"
	set_dpdk() {
		DPDK_A="--vdev=net_af_packet0,iface=$VETHA,$AFP,qdisc_bypass=0 $MEM"
		DPDK_B="--vdev=net_af_packet0,iface=$VETHB,$AFP $MEM"
	}
	set_dpdk
fi

S=$T/src
W=$T/dst
mkdir -p "$W"
make_src "$S"
PORT=7471
# the command every attempt runs, first and again
SEND=(send --key "$KEY" --transport $TR -i 0 -q -l 1M -P 2 --slots 8
      --files 1 --timeout $FAULT_TIMEOUT --json)

# recv_start [PORT DIR LOG]: a receiver in B (default: the main one, on
# $PORT with --dir $W); sets RPID.
recv_start() {
	local port=${1:-$PORT} dir=${2:-$W} log=${3:-$T/recv}
	ip netns exec $NSB env FERRY_DPDK="$DPDK_B" "$FERRY" recv --key "$KEY" \
		--transport $TR -B $IPB -p $port -d "$dir" -i 0 -q --timeout $FAULT_TIMEOUT \
		>>"$log.out" 2>>"$log.err" &
	RPID=$!
	PIDS+=($RPID)
	FPY_QUIET=1 fpy listen $RPID $port 30 || fail "the receiver: $FPY_OUT $(tail -n 3 "$log.err")"
}
# main_recv: (re)start the main receiver; RPIDS: the receivers we keep.
main_recv() {
	recv_start
	MAIN=$RPID
	RPIDS=$MAIN
}

# send_bg SRC CASE TAG [PORT]: the transfer of SRC to B:/CASE, in the
# background, as ferry itself (ip netns exec and env exec it): SPID.
send_bg() {
	ip netns exec $NSA env FERRY_DPDK="$DPDK_A" "$FERRY" "${SEND[@]}" "$1" \
		"$IPB:${4:-$PORT}:/$2" >"$T/$2.$3.json" 2>"$T/$2.$3.err" &
	SPID=$!
	PIDS+=($SPID)
}

# send_fg SRC CASE TAG [PORT]: the same in the foreground, bounded (a
# hang is a failure: 124).
send_fg() {
	ip netns exec $NSA env FERRY_DPDK="$DPDK_A" timeout -k 2 60 "$FERRY" \
		"${SEND[@]}" "$1" "$IPB:${4:-$PORT}:/$2" >"$T/$2.$3.json" 2>"$T/$2.$3.err"
}

# reap PID: wait for a child we killed, without the shell's "Killed" line
reap() {
	{ wait "$1"; } 2>/dev/null
	local rc=$?
	forget "$1"
	return $rc
}

# wait_exit PID SEC: wait for a child; its status, or 255 after SEC
# seconds (then it is killed: a hang).
wait_exit() {
	local i
	for i in $(seq $(($2 * 50))); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.02
	done
	if kill -0 "$1" 2>/dev/null; then
		kill -9 "$1" 2>/dev/null
		reap "$1"
		return 255
	fi
	reap "$1"
}

# recv_idle PID DIR: the receiver PID has let go of DIR (the lost session
# ended): it holds no connection it has not closed, no descriptor below
# DIR; 10 s at most.
recv_idle() { FPY_QUIET=1 fpy idle "$1" "$2" 10; }

# Can the transport run here? A first transfer says (uroce: on hugepages
# that fail, once more with --no-huge).
dpdk_failed() { grep -q "DPDK EAL did not start\|cannot make mbuf pools" "$@"; }
probe() {
	main_recv
	send_fg "$S" probe 1 && return 0
	if [ $TR = uroce ] && dpdk_failed "$T/probe.1.err" "$T/recv.err"; then
		kill -9 $MAIN; reap $MAIN
		[ -z "$MEM" ] || skip "DPDK cannot start here: $(grep -ho 'uroce: DPDK.*' "$T/probe.1.err" "$T/recv.err" | head -1)"
		note "DPDK did not start on hugepages: --no-huge"
		MEM="--no-huge -m 512"
		set_dpdk
		main_recv
		send_fg "$S" probe 2 && return 0
		dpdk_failed "$T/probe.2.err" "$T/recv.err" &&
			skip "DPDK cannot start here: $(grep -ho 'uroce: DPDK.*' "$T/probe.2.err" "$T/recv.err" | head -1)"
	fi
	tail -5 "$T"/probe.*.err "$T/recv.err"
	fail "a first transfer over $TR does not work"
}
t0=$SECONDS
probe
FPY_QUIET=1 fpy compare "$S" "$W/probe/src" || fail "the first transfer's copy differs: $FPY_OUT"
note "$TR from $IPA ($NSA) to $IPB ($NSB), shaped to $RATE; a clean transfer of $(du -sh "$S" | cut -f1) took $((SECONDS - t0)) s"
[ $TR = uroce ] && note "DPDK memory: ${MEM:-hugepages}"
rm -rf "${W:?}/probe"
watch_start "$W"

# after_fault SRC CASEDIR PORT FAULT SEED PRE: the checks after a fault,
# the rerun, the checks after it; records the trial. PRE: the outcome
# when the fault itself decides it ("survived", "finished before the
# kill", FAIL...), else the phase the fault caught becomes the outcome.
after_fault() {
	local src=$1 cdir=$2 port=$3 fault=$4 seed=$5 pre=$6 c
	local corrupt=0 partial=0 leaks=0 fails= note= phase rc x rr=
	c=$(basename "$cdir")
	fpy state "$src" "$cdir" $CHUNK "$T/$c.state"
	rc=$?
	phase=${FPY_OUT%% *}
	if [ $rc -ne 0 ]; then
		[[ $FPY_OUT == *"final name with other"* ]] && corrupt=1
		[[ $FPY_OUT == *journal* || $FPY_OUT == *chunk* || $FPY_OUT == *"not in the source"* ]] && partial=1
		fails="FAIL: corrupt or inconsistent after the fault"
		note=$(echo "$FPY_OUT" | grep FAIL | head -c 300)
	fi
	case "$pre" in FAIL*) fails=${fails:-$pre} ;; esac
	shape fast
	send_fg "$src" "$c" rerun $port
	rc=$?
	shape $RATE
	if [ $rc -ne 0 ]; then
		fails=${fails:-"FAIL: the rerun exited $rc"}
		note="$note $(head -c 300 "$T/$c.rerun.err")"
	elif ! fpy rerun "$src" "$T/$c.state" "$T/$c.rerun.json" || ! rr=$FPY_OUT; then
		fails=${fails:-"FAIL: the rerun did not resume as the journals said"}
		note="$note $(echo "$FPY_OUT" | grep FAIL | head -c 300)"
	elif ! fpy compare "$src" "$cdir/$(basename "$src")"; then
		fails=${fails:-"FAIL: the copy differs after the rerun"}
		note="$note $(echo "$FPY_OUT" | grep FAIL | head -c 300)"
	fi
	# nothing of ours left in A, nothing but the receivers in B
	if ! left_over $NSA >/dev/null; then
		x=$FPY_OUT
		leaks=1
		fails=${fails:-"FAIL: processes left"}
		note="$note left running: $x"
	fi
	kill -0 $MAIN 2>/dev/null ||
		{ fails=${fails:-"FAIL: the receiver died"}; note="$note $(tail -n 2 "$T/recv.err")"; }
	if [ -z "$pre" ]; then
		case $phase in
		before-data) pre="killed before any data" ;;
		after-all-published) pre="killed after the last publish" ;;
		*) pre="killed $phase" ;;
		esac
		[[ $rr == "rerun: 0 resumed"* ]] || pre="$pre, resumed"
	fi
	record "$fault" "$seed" "${fails:-$pre}" $corrupt $partial $leaks "$note"
	[ -n "$fails" ] && [ -n "${FAULT_KEEP:-}" ] && cp -a "$cdir" "$FAULT_KEEP/"
	rm -rf "${cdir:?}"
}

# kill_trial KIND SEED: KIND send, recv or both.
kill_trial() {
	local kind=$1 seed=$2 c=$1-$2 when desc krc pids rc pre= who
	FPY_QUIET=1 fpy plan "$kind" "$seed" "${FILES_CHUNKS[@]}"
	read -r when desc <<<"$FPY_OUT"
	case $kind in
	send) who="the sender" ;;
	recv) who="the receiver" ;;
	both) who="the sender and the receiver" ;;
	esac
	echo "[$kind:$seed] kill -9 $who $desc"
	send_bg "$S" "$c" 1
	case $kind in
	send) pids=$SPID ;;
	recv) pids=$MAIN ;;
	both) pids="$SPID,$MAIN" ;;
	esac
	# (stderr: not the shell's "Killed" lines for the jobs killed here)
	{
		fpy kill "$when" "$W/$c" 30 "$pids" "$SPID,$MAIN"
		krc=$?
		[ $kind != send ] && [ $krc -ne 3 ] && reap $MAIN
		wait_exit $SPID 20
		rc=$?
	} 2>/dev/null
	if [ $rc = 255 ]; then
		pre="FAIL: the sender still ran 20 s after the fault"
	elif [ $kind = recv ] && [ $krc -ne 3 ]; then
		# the sender noticed (within its --timeout) and said so
		if [ $rc = 0 ]; then
			pre="receiver killed after the sender's last file"
		else
			echo "   sender: exit $rc: $(grep -v '^$' "$T/$c.1.err" | tail -n 1 | head -c 200)"
			grep -q . "$T/$c.1.err" || pre="FAIL: the sender failed ($rc) without a word"
		fi
	elif [ $krc = 3 ]; then
		[ $rc = 0 ] && pre="finished before the kill" ||
			pre="FAIL: the sender failed ($rc) before the kill: $(tail -n 1 "$T/$c.1.err")"
	fi
	if ! kill -0 $MAIN 2>/dev/null; then
		[ $kind = send ] && pre=${pre:-"FAIL: the receiver died when its sender was killed"}
		main_recv
	elif ! recv_idle $MAIN "$W/$c"; then
		pre=${pre:-"FAIL: the receiver still held the lost session after 10 s"}
	fi
	after_fault "$S" "$W/$c" $PORT "kill $kind" "$seed" "$pre"
}

# link_trial SEED: a veth down for a moment once b is under way.
link_trial() {
	local seed=$1 c=link-$1 when down side dev ns desc rc pre
	FPY_QUIET=1 fpy plan link "$seed" timeout=$FAULT_TIMEOUT "${FILES_CHUNKS[@]}"
	read -r when down side desc <<<"$FPY_OUT"
	echo "[link:$seed] $desc"
	if [ $side = A ]; then ns=$NSA dev=$VETHA; else ns=$NSB dev=$VETHB; fi
	send_bg "$S" "$c" 1
	fpy wait "$when" "$W/$c" 30 $SPID
	ip -n $ns link set $dev down
	sleep "$down"
	ip -n $ns link set $dev up
	wait_exit $SPID 30
	rc=$?
	if [ $rc = 255 ]; then
		pre="FAIL: the sender hung after the link came back"
	elif [ $rc = 0 ]; then
		pre="survived"
	elif grep -q . "$T/$c.1.err"; then
		pre="failed cleanly, rerun completed"
		echo "   sender: exit $rc: $(grep -v '^$' "$T/$c.1.err" | tail -n 1 | head -c 200)"
	else
		pre="FAIL: the sender failed ($rc) without a word"
	fi
	recv_idle $MAIN "$W/$c" ||
		pre="FAIL: the receiver still held the lost session after 10 s"
	case "$pre" in
	FAIL*) ;;
	*) [ "${down%.*}" -ge "$FAULT_TIMEOUT" ] && pre="$pre (down > --timeout)" || pre="$pre (down < --timeout)" ;;
	esac
	after_fault "$S" "$W/$c" $PORT "link down/up" "$seed" "$pre"
}

# disk_trial SEED: the receiver's --dir an 8 MiB tmpfs, filled by another
# writer once b (5 MiB) is under way: the transfer fails naming the full
# disk, publishes nothing partial; with the space freed again the rerun
# completes. Its own receiver, source (a and b) and watcher.
disk_trial() {
	local seed=$1 c=disk-$1 when desc rc pre= mnt=$T/disk$1 ds=$T/dsrc/src
	local p2=$((PORT + 1)) dpid wpid out
	FPY_QUIET=1 fpy plan disk "$seed" b:6
	read -r when desc <<<"$FPY_OUT"
	echo "[disk:$seed] $desc"
	mkdir -p "$mnt" "$ds"
	[ -e "$ds/b" ] || cp -p "$S/a" "$S/b" "$ds/"
	mount -t tmpfs -o size=8m ferry-fault "$mnt" ||
		{ record "disk full" "$seed" "FAIL: mount -t tmpfs" 0 0 0 ""; return; }
	MOUNTS+=("$mnt")
	recv_start $p2 "$mnt" "$T/$c.recv"
	dpid=$RPID
	RPIDS="$MAIN $dpid"
	nice -n 10 "$PY" "$WATCH" "$ds" "$mnt" "$T/$c.wstop" "$T/$c.watch.json" &
	wpid=$!
	PIDS+=($wpid)
	# 5 MiB at 40 Mbit/s: a second, so the fill lands mid-file even on a
	# busy host
	shape 40mbit
	send_bg "$ds" "$c" 1 $p2
	fpy wait "$when" "$mnt/$c" 30 $SPID "" "$mnt/filler"
	wait_exit $SPID 30
	rc=$?
	shape $RATE
	out=$(grep -v '^$' "$T/$c.1.err" | tail -n 2 | paste -sd' ' | head -c 300)
	echo "   sender: exit $rc: $out"
	echo "   receiver: $(grep -i 'session failed' "$T/$c.recv.err" | tail -n 1 | head -c 300)"
	if [ $rc = 255 ]; then
		pre="FAIL: the sender hung on a full disk"
	elif [ $rc = 0 ] && [ -e "$mnt/$c/src/b" ] && ! [[ $FPY_OUT == *"reached at"*"published ['a', 'b']"* ]]; then
		pre="FAIL: the transfer succeeded on a full disk"
	elif [ $rc = 0 ]; then
		pre="finished before the disk filled"
	elif ! grep -qi "no space\|disk full\|ENOSPC" "$T/$c.1.err"; then
		pre="FAIL: the sender's error does not name the full disk"
	else
		pre="failed naming the full disk, rerun completed"
	fi
	rm -f "$mnt/filler"
	recv_idle $dpid "$mnt" || pre="FAIL: the receiver still held the lost session after 10 s"
	after_fault "$ds" "$mnt/$c" $p2 "disk full" "$seed" "$pre"
	# published a and b leave less free than they take: the same command
	# again must skip them, not refuse for space (it once did)
	echo "[disk:$seed] the command again once all is published, on a disk with less free than the files take"
	pre="rerun skipped all"
	send_fg "$ds" "$c" 1 $p2 || pre="FAIL: the transfer failed: $(tail -n 1 "$T/$c.1.err")"
	send_fg "$ds" "$c" 2 $p2
	rc=$?
	echo "   with $(df -h --output=avail "$mnt" | tail -n 1 | tr -d ' ') free: exit $rc $(tail -n 1 "$T/$c.2.err")"
	if [ "${pre#FAIL}" = "$pre" ] && { [ $rc != 0 ] || ! "$PY" -c 'import json, sys
r = json.load(open(sys.argv[1]))
sys.exit(not all(f["ok"] and f["skipped"] for f in r["files"]))' "$T/$c.2.json"; }; then
		pre="FAIL: the command again failed ($rc): $(tail -n 1 "$T/$c.2.err")"
	fi
	FPY_QUIET=1 fpy compare "$ds" "$mnt/$c/src" || pre=${pre/#rerun*/FAIL: the copy differs}
	record "disk nearly full" "$seed" "$pre" 0 0 0 ""
	rm -rf "${mnt:?}/$c"
	touch "$T/$c.wstop"
	wait_exit $wpid 30
	if ! "$PY" -c 'import json, sys
v = json.load(open(sys.argv[1]))["violations"]
for x in v: print("   FAIL: " + x)
sys.exit(len(v) > 0)' "$T/$c.watch.json"; then
		record "disk full" "$seed" "FAIL: the watcher saw a partial file" 0 1 0 ""
	fi
	kill -9 $dpid 2>/dev/null
	reap $dpid
	RPIDS=$MAIN
	umount "$mnt" && MOUNTS=("${MOUNTS[@]/$mnt/}")
}

# stale_trial SEED: an attempt that ended between publishing c (the
# rename) and removing its journal leaves the journal and no part file;
# the rerun skips the identical files and leaves no part file or journal
# (it once created an empty part file for the stale journal, and kept it).
stale_trial() {
	local seed=$1 c=stale-$1 pre=
	echo "[stale:$seed] a journal left beside a published file"
	send_fg "$S" "$c" 1 || pre="FAIL: the first transfer failed: $(tail -n 1 "$T/$c.1.err")"
	fpy plant "$S" "$W/$c" c $CHUNK
	after_fault "$S" "$W/$c" $PORT "stale journal" "$seed" "${pre:-rerun skipped all, no sidecars left}"
}

# one trial of KIND with SEED
trial() {
	TRIAL_T0=$SECONDS
	case $1 in
	send | recv | both) kill_trial "$1" "$2" ;;
	link) link_trial "$2" ;;
	disk) disk_trial "$2" ;;
	stale) stale_trial "$2" ;;
	*) fail "FAULT_SEED=$1:$2: no such trial here (send, recv, both, link, disk, stale)" ;;
	esac
}

if [ -n "${FAULT_SEED:-}" ]; then
	note "replaying $FAULT_SEED"
	trial "${FAULT_SEED%%:*}" "${FAULT_SEED#*:}"
else
	# Two halves at once (FAULT_SPLIT=0: one after the other): this
	# script runs part 1 (sender kills, both, link); a second copy of it,
	# with its own namespaces, receiver, watcher and checks, part 2
	# (receiver kills, disk, stale). Most of a trial is waiting (DPDK
	# start-up, the shaped link), so two halves take little more than one.
	part=${FAULT_PART:-}
	# (uroce too: its workers and pollers sleep between frames by
	# default, so four DPDK processes at once leave the host its CPUs)
	if [ -z "$part" ] && [ "${FAULT_SPLIT:-1}" = 1 ]; then
		FAULT_PART=2 FAULT_RESULTS_OUT=$T/part2.tsv FAULT_SEED_BASE=$SEED_BASE \
			bash "$0" "$TR" >"$T/part2.log" 2>&1 &
		CHILD=$!
		PIDS+=($CHILD)
		part=1
		note "part 2 (receiver kills, disk, stale journal) runs beside this one: its log follows at the end"
	fi
	note "$N_KILL kill trials per side, $N_BOTH of both, $N_LINK link, $N_DISK disk; seeds from $SEED_BASE${part:+ (part $part)}"
	for ((i = 0; i < N_KILL; i++)); do
		[ "$part" = 2 ] || trial send $((SEED_BASE + i))
		[ "$part" = 1 ] || trial recv $((SEED_BASE + i))
	done
	if [ "$part" != 2 ]; then
		for ((i = 0; i < N_BOTH; i++)); do trial both $((SEED_BASE + i)); done
		for ((i = 0; i < N_LINK; i++)); do trial link $((SEED_BASE + i)); done
	fi
	if [ "$part" != 1 ]; then
		for ((i = 0; i < N_DISK; i++)); do trial disk $((SEED_BASE + i)); done
		trial stale $SEED_BASE
	fi
	if [ -n "${CHILD:-}" ]; then
		note "waiting for part 2"
		wait $CHILD
		rc=$?
		forget $CHILD
		echo "==== part 2 (exit $rc) ===="
		sed 's/^/| /' "$T/part2.log"
		echo "==== end of part 2 ===="
		if [ -s "$T/part2.tsv" ]; then
			cat "$T/part2.tsv" >>"$RESULTS"
			FAILED=$((FAILED + $(awk -F'\t' '$3 ~ /^FAIL/' "$T/part2.tsv" | wc -l)))
		fi
		if [ ! -s "$T/part2.tsv" ] || { [ $rc != 0 ] && [ $rc != 1 ]; }; then
			record "part 2" - "FAIL: part 2 exited $rc" 0 0 0 "$(tail -n 3 "$T/part2.log")"
		fi
	fi
fi

note "watcher"
watch_stop
wv=$?
[ $wv -eq 0 ] || record watcher - "FAIL: $wv violation(s) under final names" 0 $wv 0 ""

note "teardown"
teardown >/dev/null 2>&1
leaks=$(final_leaks ferryA$$ ferryB$$ vfa$$ vfb$$)
nleaks=$?
[ -n "$leaks" ] && echo "$leaks"
echo "leaks after teardown: $nleaks"
finish_summary "$TR: kills, link, disk${FAULT_PART:+ (part $FAULT_PART)} ($SECONDS s)" $nleaks
