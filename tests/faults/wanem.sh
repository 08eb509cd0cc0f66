#!/usr/bin/env bash
# File transfers through ferry-wanem's impairments, over tcp and uroce:
#   loss 2%, duplication 2%, reordering 5%, corruption 1% (one bit
#   flipped past the Ethernet header), and all four at once (1, 1, 2,
#   0.5%);
# each in both directions, seeded (ferry-wanem --seed). A transfer must
# complete with identical files, or fail with a message, publish nothing
# corrupt or partial, and leave journals a rerun resumes from: it is run
# again (up to FAULT_WAN_TRIES times in all, default 3) under the same
# impairment, then once more on a clean path, where it must complete.
# The destination is watched throughout (files_watch.py); after each
# attempt every file under a final name is checked against its source and
# every journal against the source and the part file (faults.py state).
#
# Topology: bench/lib/wan.sh (A - veth - ferry-wanem - veth - B, MTU
# 9000 so that uroce gets a 4 KiB path MTU); one receiver per transport
# in B. Root, a build with DPDK (ferry-wanem), ethtool; exit 77 saying
# why when one is missing. The uroce half is skipped (said in the
# summary) when the build has no uroce or its DPDK cannot start.
#
#   FAULT_SEED=KIND:N   one impairment (loss, dup, reorder, corrupt, all)
#                       with ferry-wanem --seed N
#   FAULT_SEED_BASE=N   this run's seeds (default random, printed)
. "$(dirname "$0")/faults_lib.sh"

case "${FAULT_SEED:-}" in
"" | loss:* | dup:* | reorder:* | corrupt:* | all:*) ;;
*) skip "FAULT_SEED=$FAULT_SEED is not a trial of wanem.sh (loss, dup, reorder, corrupt, all)" ;;
esac
TRIES=${FAULT_WAN_TRIES:-3}
need_root
WANEM=$BUILD/apps/wanem/ferry-wanem
[ -x "$WANEM" ] || skip "no ferry-wanem in this build (meson did not find libdpdk)"
command -v ethtool >/dev/null || skip "no ethtool (the veths' offloads must be turned off)"
TRS=(tcp)
UROCE_SKIP=
out=$(env -u FERRY_DPDK "$FERRY" bench --transport uroce -n 1M 127.0.0.1:1 2>&1)
case "$out" in
*"not in this build"*) UROCE_SKIP="this build has no uroce transport" ;;
*) TRS+=(uroce) ;;
esac

# ferry-wanem at a normal priority (the impairments need no timing; a
# real-time poller would starve the rest on a small host), 256 MiB
export WAN_MTU=9000 WAN_PRIO= WAN_MEM_MB=${WAN_MEM_MB:-256}
WANEM=$WANEM . "$SRC/bench/lib/wan.sh"
wan_up --seed 1 || fail "the WAN did not come up: $(cat "$WAN_LOG" 2>/dev/null)"

# ferry's uroce processes: hugepages (reserved here, given back), else
# --no-huge
free_hp() { awk '/^HugePages_Free/ { print $2 }' /proc/meminfo; }
HP_WAS=$(cat $HP_FILE)
[ "$(free_hp)" -lt 256 ] && echo $((HP_WAS + 256 - $(free_hp))) >$HP_FILE 2>/dev/null
# when wan.sh reserved pages too, its wan_down gives back ours with its own
[ -n "$WAN_HP_WAS" ] && HP_WAS=
MEM=
[ "$(free_hp)" -ge 200 ] || MEM="--no-huge -m 512"
AFP="framesz=16384,blocksz=16384,framecnt=1024"
dpdk() { echo "--vdev=net_af_packet0,iface=$1,$AFP $MEM"; }

S=$T/src
W=$T/dst
mkdir -p "$W"
make_src "$S"
declare -A PORT=([tcp]=7471 [uroce]=7472)
declare -A RP=()
RPIDS=
# recv_start TR: the receiver of TR in B.
recv_start() {
	local tr=$1
	# (ip netns exec and env exec ferry: $! is ferry's own pid)
	ip netns exec "$WAN_NSB" env FERRY_DPDK="$(dpdk "$WAN_DEVB")" "$FERRY" recv --key "$KEY" \
		--transport $tr -B "$WAN_IPB" -p ${PORT[$tr]} -d "$W" -i 0 -q \
		--timeout 3 >>"$T/recv.$tr.out" 2>>"$T/recv.$tr.err" &
	RP[$tr]=$!
	PIDS+=($!)
	RPIDS="${RP[*]}"
	FPY_QUIET=1 fpy listen ${RP[$tr]} ${PORT[$tr]} 30 || fail "the $tr receiver: $FPY_OUT $(tail -n 3 "$T/recv.$tr.err")"
}
# send TR CASE TAG: the transfer, bounded (a hang: 124).
send() {
	local tr=$1
	wan_a env FERRY_DPDK="$(dpdk "$WAN_DEVA")" timeout -k 2 90 "$FERRY" send \
		--key "$KEY" --transport $tr -i 0 -q -l 1M -P 2 --slots 8 --files 1 \
		--timeout 3 --json "$S" "$WAN_IPB:${PORT[$tr]}:/$2" \
		>"$T/$2.$3.json" 2>"$T/$2.$3.err"
}
# recv_idle TR CASE: the receiver has let go of CASE (10 s at most).
recv_idle() { FPY_QUIET=1 fpy idle "${RP[$1]}" "$W/$2" 10; }

# A first clean transfer over each transport (uroce: can DPDK start?)
for tr in "${TRS[@]}"; do
	recv_start $tr
	if ! send $tr probe-$tr 1; then
		if [ $tr = uroce ] && grep -q "DPDK EAL did not start\|cannot make mbuf pools" \
			"$T/probe-uroce.1.err" "$T/recv.uroce.err"; then
			UROCE_SKIP="DPDK cannot start: $(grep -ho 'uroce: DPDK.*' "$T/probe-uroce.1.err" | head -1)"
			TRS=(tcp)
			kill -9 ${RP[uroce]}; { wait ${RP[uroce]}; } 2>/dev/null; forget ${RP[uroce]}
			unset 'RP[uroce]'
			RPIDS="${RP[*]}"
			continue
		fi
		tail -5 "$T/probe-$tr.1.err" "$T/recv.$tr.err"
		fail "a clean transfer over $tr through ferry-wanem failed"
	fi
	FPY_QUIET=1 fpy compare "$S" "$W/probe-$tr/src" || fail "$tr: the clean copy differs: $FPY_OUT"
	rm -rf "${W:?}/probe-$tr"
done
note "through ferry-wanem ($WAN_IPA -> $WAN_IPB), over ${TRS[*]}${UROCE_SKIP:+; uroce skipped: $UROCE_SKIP}"
watch_start "$W"

declare -A IMPAIR=(
	[loss]="--loss 2"
	[dup]="--dup 2"
	[reorder]="--reorder 5"
	[corrupt]="--corrupt 1"
	[all]="--loss 1 --dup 1 --reorder 2 --corrupt 0.5"
)

# impair_trial KIND SEED: every transport through that impairment.
impair_trial() {
	local kind=$1 seed=$2 tr c n rc outcome corrupt partial leaks note x st
	TRIAL_T0=$SECONDS
	echo "[$kind:$seed] ferry-wanem ${IMPAIR[$kind]} --seed $seed"
	wan_restart ${IMPAIR[$kind]} --seed "$seed" ||
		{ record "$kind" "$seed" "FAIL: ferry-wanem did not start: $(tail -n 2 "$WAN_LOG")" 0 0 0 ""; return; }
	for tr in "${TRS[@]}"; do
		c=$kind-$tr-$seed corrupt=0 partial=0 leaks=0 note= outcome=
		for ((n = 1; n <= TRIES; n++)); do
			send $tr $c $n
			rc=$?
			[ $rc = 0 ] && break
			echo "   $tr attempt $n: exit $rc: $(grep -v '^$' "$T/$c.$n.err" | tail -n 1 | head -c 200)"
			[ $rc -ge 124 ] && outcome="FAIL: $tr attempt $n hung (exit $rc)"
			grep -q . "$T/$c.$n.err" || outcome=${outcome:-"FAIL: $tr attempt $n failed ($rc) without a word"}
			recv_idle $tr $c || outcome=${outcome:-"FAIL: the $tr receiver still held the lost session after 10 s"}
			if ! FPY_QUIET=1 fpy state "$S" "$W/$c" $CHUNK "$T/$c.state"; then
				echo "$FPY_OUT" | sed 's/^/   /'
				[[ $FPY_OUT == *"final name with other"* ]] && corrupt=1 || partial=1
				outcome=${outcome:-"FAIL: corrupt or inconsistent after a failed attempt"}
			fi
		done
		if [ $rc = 0 ]; then
			outcome=${outcome:-$([ $n = 1 ] && echo "completed" || echo "completed on attempt $n")}
		else
			# the path cleaned up: the rerun must complete
			wan_stop
			fpy wanstats "$WAN_JSON"
			wan_start --seed "$seed" >/dev/null 2>&1
			if send $tr $c clean; then
				outcome=${outcome:-"failed cleanly $TRIES times, completed on a clean path"}
			else
				outcome=${outcome:-"FAIL: the rerun on a clean path failed: $(tail -n 1 "$T/$c.clean.err")"}
			fi
			wan_restart ${IMPAIR[$kind]} --seed "$seed" >/dev/null 2>&1
		fi
		FPY_QUIET=1 fpy compare "$S" "$W/$c/src" ||
			{ outcome=${outcome#completed*}; outcome="FAIL: the copy differs"; note=$(echo "$FPY_OUT" | head -c 300); }
		left_over "$WAN_NSA" >/dev/null || { leaks=1; outcome="FAIL: processes left: $FPY_OUT"; }
		kill -0 ${RP[$tr]} 2>/dev/null || outcome="FAIL: the $tr receiver died"
		echo "   $tr: $outcome"
		record "$kind $tr" "$seed" "$outcome" $corrupt $partial $leaks "$note"
		rm -rf "${W:?}/$c"
	done
	wan_stop
	fpy wanstats "$WAN_JSON"
}

if [ -n "${FAULT_SEED:-}" ]; then
	impair_trial "${FAULT_SEED%%:*}" "${FAULT_SEED#*:}"
else
	i=0
	for kind in loss dup reorder corrupt all; do
		impair_trial $kind $((SEED_BASE + i))
		i=$((i + 1))
	done
fi

note "watcher"
watch_stop
wv=$?
[ $wv -eq 0 ] || record watcher - "FAIL: $wv violation(s) under final names" 0 $wv 0 ""
[ -n "$UROCE_SKIP" ] && record "uroce (all)" - "skipped: $UROCE_SKIP" 0 0 0 ""

note "teardown"
{ wan_down; } 2>/dev/null
teardown >/dev/null 2>&1
leaks=$(final_leaks "wanA$$" "wanB$$" "wanW$$" "wna$$" "wwa$$" "wwb$$" "wnb$$")
nleaks=$?
[ -d "/var/run/dpdk/wanem$$" ] && { leaks="$leaks leak: /var/run/dpdk/wanem$$"; nleaks=$((nleaks + 1)); }
[ -n "$leaks" ] && echo "$leaks"
echo "leaks after teardown: $nleaks"
finish_summary "ferry-wanem impairments ($SECONDS s)" $nleaks
