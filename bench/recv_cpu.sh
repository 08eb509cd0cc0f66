#!/usr/bin/env bash
# The receiver's CPU for the same files, build against build: an A/B of a
# change on the file datapath (docs/benchmarks.md, "After: writes into one
# file wait on its lock").
#
# For each ferry build named in BUILDS, REPS times, interleaved: `ferry
# recv --no-auth --once --dir DST` on 127.0.0.1 and `ferry send --no-auth
# -q -i 0 FILES... 127.0.0.1:PORT`, each under /usr/bin/time, the NFILES
# files of SIZE_MB MiB of random data on one tmpfs, the copies on another
# (emptied before each run, compared with cmp after it). Loopback only: no
# namespaces, nothing leaves the host. Prints, per build, the median and
# the range of wall seconds and of the receiver's user and system CPU.
#
# Environment:
#   BUILDS      build directories, space-separated (default: $BUILD)
#   SIZE_MB     size of each file in MiB (default 1024)
#   NFILES      files per send (default 1: all streams write one file)
#   REPS        runs per build (default 4)
#   RANGES      0 (default), or with NFILES=1: the file sent as RANGES byte
#               ranges at once, each by a range_send process of that build
#               (tests/integration/range_send, one session each, as
#               ferry-stage's ranks send a split file) to a receiver that
#               serves them all and is stopped with SIGTERM after them
#
# Example, before and after a commit:
#   git worktree add /tmp/before HEAD~1 && meson setup /tmp/before/b /tmp/before && ninja -C /tmp/before/b
#   BUILDS="/tmp/before/b build" bench/recv_cpu.sh
. "$(dirname "$0")/lib/common.sh"
REPS=${REPS:-4} NFILES=${NFILES:-1}
. "$(dirname "$0")/lib/files.sh"
BUILDS=${BUILDS:-$BUILD}
RANGES=${RANGES:-0}

need_root
check_file_set_settings
[[ "$RANGES" =~ ^[0-9]+$ ]] || die "RANGES must be a number"
[ "$RANGES" -eq 0 ] || [ "$NFILES" -eq 1 ] || die "RANGES needs NFILES=1"
for b in $BUILDS; do
	[ -x "$b/apps/ferry/ferry" ] || die "$b/apps/ferry/ferry not built"
	[ "$RANGES" -eq 0 ] || [ -x "$b/tests/integration/range_send" ] ||
		die "$b/tests/integration/range_send not built"
done
TOTAL_MB=$((SIZE_MB * NFILES))
need_tmpfs_mem "$TOTAL_MB"
mount_pair_tmpfs rc "$TOTAL_MB"
make_file_set "$NFILES" "$SIZE_MB" "$SRC"

# ranges BUILD PORT: the file as RANGES ranges at once; its wall seconds
# in $T/send.time.
ranges() {
	local size part i t0 rc=0 pids=()
	size=$(stat -c %s "${FILES[0]}")
	part=$(( (size / RANGES + 4194303) / 4194304 * 4194304 ))
	t0=$(date +%s.%N)
	for ((i = 0; i * part < size; i++)); do
		timeout 300 "$1/tests/integration/range_send" -c 4194304 127.0.0.1 "$2" \
			"${FILES[0]}" "${FILES[0]##*/}" $((i * part)) $part \
			>"$T/range.$i.out" 2>&1 &
		pids+=($!)
	done
	for i in "${pids[@]}"; do
		wait "$i" || rc=1
	done
	[ $rc -eq 0 ] || { cat "$T"/range.*.out >&2; die "$1: a range_send failed"; }
	echo "$(date +%s.%N) $t0" | awk '{ printf "%.2f\n", $1 - $2 }' >"$T/send.time"
}

# run BUILD: one send; appends "wall recv_user recv_sys" to $T/BUILD-id.
run() {
	local f=$1/apps/ferry/ferry port rpid once=--once
	find "$DST" -mindepth 1 -delete
	port=$((20000 + RANDOM % 12000))  # below the ephemeral range
	[ "$RANGES" -eq 0 ] || once=
	/usr/bin/time -f "%e %U %S" -o "$T/recv.time" \
		"$f" recv --no-auth -B 127.0.0.1 -p $port --dir "$DST" $once -q \
		--max-sessions 64 >"$T/recv.out" 2>&1 &
	rpid=$!
	for _ in $(seq 100); do
		ss -Hltn "sport = :$port" | grep -q . && break
		sleep 0.05
	done
	if [ "$RANGES" -gt 0 ]; then
		ranges "$1" $port
		pkill -TERM -P "$rpid" # ferry, not time(1)
	else
		/usr/bin/time -f "%e %U %S" -o "$T/send.time" \
			timeout 300 "$f" send --no-auth -q -i 0 "${FILES[@]}" 127.0.0.1:$port \
			>"$T/send.out" 2>&1 || { tail_err "$T/send.out"; die "$1: ferry send failed"; }
	fi
	wait "$rpid" || { tail_err "$T/recv.out"; die "$1: ferry recv failed"; }
	# a daemon that served ranges keeps its staging area's empty
	# directories: not part of the set
	[ "$RANGES" -eq 0 ] || [ ! -d "$DST/.ferry" ] ||
		find "$DST/.ferry" -depth -type d -empty -delete
	verify_set "$DST" "$1"
	echo "$(cut -d' ' -f1 "$T/send.time") $(cut -d' ' -f2,3 "$T/recv.time")" \
		>>"$T/$(echo "$1" | tr / _)"
}

for rep in $(seq "$REPS"); do
	for b in $BUILDS; do
		note "rep $rep/$REPS: $b"
		run "$b"
	done
done

how="$NFILES x $SIZE_MB MiB"
[ "$RANGES" -eq 0 ] || how="$SIZE_MB MiB in $RANGES ranges at once"
echo "$how, loopback, tmpfs to tmpfs; median [min-max] of $REPS runs"
printf '%-32s %-22s %-22s %-22s\n' build "wall s" "receiver user s" "receiver sys s"
for b in $BUILDS; do
	python3 - "$b" "$T/$(echo "$b" | tr / _)" <<'PY'
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[2])]
cols = []
for i in range(3):
    v = [r[i] for r in rows]
    cols.append("%.2f [%.2f-%.2f]" % (statistics.median(v), min(v), max(v)))
print("%-32s %-22s %-22s %-22s" % (sys.argv[1], *cols))
PY
done
