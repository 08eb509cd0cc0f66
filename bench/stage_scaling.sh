#!/usr/bin/env bash
# ferry-stage scaling: one dataset staged by 1, 2 and 4 ranks (mpirun)
# to two receivers, against the same number of independent `ferry send`
# processes with the file list split by hand, in the same run.
#
# Topology: namespace A (the senders) and two receivers, B and C, each
# with one veth into a bridge in a fourth namespace (198.18.0.0/15, MTU
# 9000); every tree lives on tmpfs. The dataset: NFILES files of FILE_MB
# MiB and one file of BIG_MB MiB, which ferry-stage cuts into one range per
# rank (--split, below BIG_MB); a hand split cannot cut a file, so there
# it travels whole with one of the processes. The hand split deals the
# other files round robin by size (largest first), process i to receiver
# i mod 2, as a user splitting a list would.
#
# The ranks run unbound (mpirun --bind-to none), as docs/staging.md tells
# users to: each rank's streams use the node's CPUs, as the hand-split
# processes do.
#
# Per rank count: goodput (payload bytes / wall seconds from launch to
# the last process's exit) of ferry-stage and of the hand-split sends,
# their ratio, and ferry-stage's scaling against 1 rank (goodput /
# (ranks x goodput at 1 rank)). Every copy is checked byte for byte.
# Goals: ferry-stage >= 1.0x the hand split, and within 10% of linear
# up to the host's cores (reported, not enforced).
#
# Then the rate cap: 4 ranks with -b CAP (default: what moves the set in
# about 20 s, rounded to 100 Mb/s: well below what this host moves, so
# the cap and not the CPUs sets the pace), the job's goodput against the cap, and
# each rank's against its share, CAP / 4 (goal: within 5%).
#
# Each figure is the median of REPS runs (default 3), ferry-stage and the
# hand split taking turns, each going first in every other rep; the
# table also gives ferry-stage's own data phase (the JSON's seconds:
# launch, MPI's start and the walk excluded).
#
# Environment: NFILES (64), FILE_MB (32), BIG_MB (1024), RANKS ("1 2 4"),
# REPS (3), SPLIT (ferry-stage's --split; default BIG_MB / 2, 0: none),
# TRANSPORT (tcp), CAP (bits per second, a plain number), STAGE_ARGS (more
# ferry-stage options for the scaling runs, e.g. "--slots 16"), BUILD.
# Needs root, mpirun (openmpi-bin) and a build with ferry-stage. Exit status 0 when every copy ran and checked out.
#
# Example: bench/stage_scaling.sh
#          RANKS="1 2" BIG_MB=256 bench/stage_scaling.sh
# shellcheck source=bench/lib/common.sh
. "$(dirname "$0")/lib/common.sh"

NFILES=${NFILES:-64}
FILE_MB=${FILE_MB:-32}
BIG_MB=${BIG_MB:-1024}
RANKS=${RANKS:-1 2 4}
TRANSPORT=${TRANSPORT:-tcp}
REPS=${REPS:-3}
STAGE=$BUILD/apps/stage/ferry-stage
for v in NFILES FILE_MB BIG_MB REPS; do
	[[ "${!v}" =~ ^[1-9][0-9]*$ ]] || die "$v must be a positive integer"
done
need_root
need_cmd mpirun "apt-get install openmpi-bin"
[ -x "$STAGE" ] || die "no ferry-stage at $STAGE (meson did not find MPI: apt-get install libopenmpi-dev)"
[ -x "$FERRY" ] || die "no ferry binary at $FERRY"
bench_lock
MOUNTS=()
stage_cleanup() {
	local m
	# detached first (lazily: the receivers still hold files there), so
	# that bench_cleanup's rm does not walk into them
	for m in "${MOUNTS[@]:-}"; do
		[ -n "$m" ] && umount -l "$m" 2>/dev/null
	done
	bench_cleanup
}
trap stage_cleanup EXIT

total_mb=$((NFILES * FILE_MB + BIG_MB))
avail=$(awk '/^MemAvailable:/ { print int($2 / 1024) }' /proc/meminfo)
[ "$avail" -ge $((3 * total_mb + 1024)) ] ||
	die "needs about $((3 * total_mb + 1024)) MiB free (the set and a copy at each receiver on tmpfs), $avail available"
for d in src rb rc; do
	mkdir -p "$T/$d" && mount -t tmpfs -o size=$((total_mb + 256))m stage-$d "$T/$d" ||
		die "tmpfs on $T/$d"
	MOUNTS+=("$T/$d")
done

n=$(( ($$ + RANDOM) % 250 + 1 ))
NSS=fbenchS$$ NSA=fbenchA$$ NSB=fbenchB$$ NSC=fbenchC$$
IPB=198.18.$n.2 IPC=198.18.$n.3
ip netns add $NSS || die "ip netns add"
NETNS+=($NSS)
ip -n $NSS link add br0 type bridge && ip -n $NSS link set br0 mtu 9000 up || die "bridge"
i=1
for h in A B C; do
	ns=fbench$h$$
	ip netns add $ns || die "ip netns add"
	NETNS+=($ns)
	ip link add fs$h$$ type veth peer name f$h$$ || die "veth"
	ip link set fs$h$$ netns $NSS && ip link set f$h$$ netns $ns || die "veth into namespaces"
	ip -n $NSS link set fs$h$$ mtu 9000 master br0 up
	ip -n $ns link set f$h$$ mtu 9000 up
	ip -n $ns link set lo up
	ip -n $ns addr add 198.18.$n.$i/24 dev f$h$$
	i=$((i + 1))
done

note "making $NFILES x $FILE_MB MiB and 1 x $BIG_MB MiB in $T/src/ds"
mkdir -p "$T/src/ds"
for i in $(seq "$NFILES"); do
	head -c "${FILE_MB}M" /dev/urandom >"$T/src/ds/f$i.dat" || die "writing the set"
done
head -c "${BIG_MB}M" /dev/urandom >"$T/src/ds/big.dat" || die "writing the set"
BYTES=$(find "$T/src/ds" -type f -printf '%s\n' | awk '{ s += $1 } END { printf "%.0f", s }')
split=${SPLIT:-$(( BIG_MB / 2 ))M}

"$FERRY" keygen "$T/key" >/dev/null || die "keygen"
for h in B C; do
	ip=$IPB dir=$T/rb
	[ $h = C ] && ip=$IPC dir=$T/rc
	ip netns exec fbench$h$$ "$FERRY" recv --key "$T/key" -B $ip -d "$dir" \
		-i 0 -q --max-sessions 16 >"$T/recv$h.log" 2>&1 &
	wait_listen 7471 fbench$h$$ || die "the receiver in $h did not listen: $(cat "$T/recv$h.log")"
done

export OMPI_MCA_btl=self,vader OMPI_MCA_oob_tcp_if_include=lo

now() { date +%s.%N; }
clear_dest() { rm -rf "$T/rb/stage" "$T/rc/stage" "$T/rb/.ferry" "$T/rc/.ferry"; }

# check LABEL: both receivers together hold the set, byte for byte
check() {
	local f got
	for f in "$T"/src/ds/*; do
		got=$T/rb/stage/ds/${f##*/}
		[ -e "$got" ] || got=$T/rc/stage/ds/${f##*/}
		cmp -s "$f" "$got" || die "$1: ${f##*/} missing or different"
	done
}

# hand N: N ferry send processes, the list split by hand
hand() {
	local nproc=$1 k i pids=() rc=0
	local -a parts
	mapfile -t files < <(ls -S "$T/src/ds")
	for k in "${!files[@]}"; do
		i=$((k % nproc))
		parts[$i]+="$T/src/ds/${files[$k]} "
	done
	local t0 t1
	t0=$(now)
	for i in $(seq 0 $((nproc - 1))); do
		ip=$IPB
		[ $((i % 2)) -eq 1 ] && ip=$IPC
		# shellcheck disable=SC2086 # the part is a word list
		ip netns exec $NSA timeout -k 5 600 "$FERRY" send --key "$T/key" -i 0 -q \
			--transport "$TRANSPORT" ${parts[$i]} "$ip:/stage/ds" \
			>"$T/hand.$nproc.$i.log" 2>&1 &
		pids+=($!)
	done
	for p in "${pids[@]}"; do
		wait "$p" || rc=1
	done
	t1=$(now)
	[ $rc -eq 0 ] || die "hand split x$nproc: a ferry send failed: $(cat "$T"/hand.$nproc.*.log | head -5)"
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }'
}

# staged N: mpirun -n N ferry-stage
staged() {
	local r=$1 t0 t1
	t0=$(now)
	ip netns exec $NSA timeout -k 5 600 mpirun --allow-run-as-root --oversubscribe --bind-to none -n "$r" \
		"$STAGE" --key "$T/key" --transport "$TRANSPORT" --split "$split" --json ${STAGE_ARGS:-} \
		"$T/src/ds" ferry://$IPB/stage ferry://$IPC/stage >"$T/stage.$r.json" 2>"$T/stage.$r.err" ||
		die "ferry-stage x$r failed: $(grep -v '^ *$' "$T/stage.$r.err" | head -5)"
	t1=$(now)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }'
}

# median of the words given
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

printf '%-6s %12s %12s %8s %10s %14s\n' ranks stage_gbps hand_gbps ratio scaling stage_data_s
results=()
base=
# one copy first, not measured: the first into fresh receivers took
# 3.5 s longer than any after it here, whichever tool made it
clear_dest
note "warm-up (not measured): the hand split x1 in $(hand 1) s"
check "hand split x1 (warm-up)"
for r in $RANKS; do
	tss=() ths=() tds=()
	# alternating, REPS times, and which goes first alternating too: a
	# busy moment hits both alike
	for rep in $(seq "$REPS"); do
		order="stage hand"
		[ $((rep % 2)) -eq 0 ] && order="hand stage"
		for who in $order; do
			clear_dest
			wait_quiet 30 >/dev/null || note "the host is busy; measuring anyway"
			if [ $who = stage ]; then
				tss+=("$(staged "$r")")
				check "ferry-stage x$r"
				tds+=("$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["seconds"])' "$T/stage.$r.json")")
			else
				ths+=("$(hand "$r")")
				check "hand split x$r"
			fi
		done
	done
	ts=$(median "${tss[@]}") th=$(median "${ths[@]}") td=$(median "${tds[@]}")
	gs=$(awk -v b="$BYTES" -v t="$ts" 'BEGIN { printf "%.3f", b * 8 / t / 1e9 }')
	gh=$(awk -v b="$BYTES" -v t="$th" 'BEGIN { printf "%.3f", b * 8 / t / 1e9 }')
	[ -z "$base" ] && base=$gs
	ratio=$(awk -v a="$gs" -v b="$gh" 'BEGIN { printf "%.2f", a / b }')
	scal=$(awk -v a="$gs" -v b="$base" -v r="$r" 'BEGIN { printf "%.2f", a / (r * b) }')
	printf '%-6s %12s %12s %8s %10s %14s\n' "$r" "$gs" "$gh" "$ratio" "$scal" "$td"
	results+=("{\"ranks\": $r, \"stage_gbps\": $gs, \"hand_gbps\": $gh, \"ratio\": $ratio, \"scaling\": $scal, \"stage_s\": [$(IFS=,; echo "${tss[*]}")], \"stage_data_s\": [$(IFS=,; echo "${tds[*]}")], \"hand_s\": [$(IFS=,; echo "${ths[*]}")]}")
done
cores=$(nproc)

# the rate cap, over about 20 s
[ -z "${CAP:-}" ] || [[ "$CAP" =~ ^[1-9][0-9]*$ ]] || die "CAP must be bits per second, a plain number"
cap=${CAP:-$(awk -v b="$BYTES" 'BEGIN { printf "%.0f", int(b * 8 / 20 / 1e8) * 1e8 }')}
clear_dest
wait_quiet 30 >/dev/null || true
ip netns exec $NSA timeout -k 5 600 mpirun --allow-run-as-root --oversubscribe --bind-to none -n 4 \
	"$STAGE" --key "$T/key" --transport "$TRANSPORT" --split "$split" --json -b "$cap" \
	"$T/src/ds" ferry://$IPB/stage ferry://$IPC/stage >"$T/cap.json" 2>"$T/cap.err" ||
	die "ferry-stage -b $cap failed: $(grep -v '^ *$' "$T/cap.err" | head -5)"
check "ferry-stage -b $cap"
capline=$(python3 - "$T/cap.json" "$cap" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
cap = float(sys.argv[2])
got = r["bytes_moved"] * 8 / r["seconds"]
share = cap / r["ranks"]
per = [x["bytes_moved"] * 8 / x["seconds"] / share for x in r["per_rank"] if x["seconds"] > 0]
print('{"cap_bps": %d, "goodput_bps": %.0f, "seconds": %.2f, "of_cap": %.3f, '
      '"rank_of_share_min": %.3f, "rank_of_share_max": %.3f, "rank_seconds": [%s]}' %
      (cap, got, r["seconds"], got / cap, min(per), max(per),
       ", ".join("%.2f" % x["seconds"] for x in r["per_rank"])))
PY
)
note "rate cap: $capline"
printf '{"bytes": %s, "transport": "%s", "cores": %s, "rows": [%s], "cap": %s}\n' "$BYTES" \
	"$TRANSPORT" "$cores" "$(IFS=,; echo "${results[*]}")" "$capline" >"$T/result.json"
cat "$T/result.json"
note "goals: ratio >= 1.0 at every rank count; scaling >= 0.90 up to $cores ranks (this host's cores)"
