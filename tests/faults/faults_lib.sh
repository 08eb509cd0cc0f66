# Shared by the fault-suite scripts (sourced after BUILD and SRC are set).
#
# Adds to tests/integration/lib.sh: a key, a source tree, a receiver and
# sender in two namespaces, trials recorded one TSV line each
# ($T/results.tsv: fault, seed, outcome, corrupt, partial, leaks, note),
# the destination watcher (tests/integration/files_watch.py), leak checks
# and the summary. Everything started here is killed, unmounted and
# deleted by the EXIT trap, even when the script fails half-way.
#
# Seeds: FAULT_SEED=KIND:N runs only that trial (the line each trial
# prints starts with its seed); FAULT_SEED_BASE=N picks the run's seeds
# (default: a random base, printed).
SRC=${SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/tests/integration/lib.sh"

HERE=$SRC/tests/faults
FPY=$HERE/faults.py
WATCH=$SRC/tests/integration/files_watch.py
MiB=$((1 << 20))
CHUNK=$MiB
MOUNTS=()
RESULTS=$T/results.tsv
: >"$RESULTS"
FAILED=0
note() { echo "== [${SECONDS}s] $*"; }

HP_FILE=/proc/sys/vm/nr_hugepages
HP_WAS=
# hugepages in use (total - free)
hp_used() { awk '/^HugePages_Total:/ { t = $2 } /^HugePages_Free:/ { f = $2 } END { print t - f }' /proc/meminfo; }
HP_START=$(hp_used)

# teardown: kill everything in our namespaces (ip netns exec gives no
# parent we could wait for once a pid is gone) and delete them, unmount,
# give hugepages back. The EXIT trap does it too, then removes $T.
teardown() {
	local ns m
	cleanup_procs
	for m in "${MOUNTS[@]:-}"; do
		[ -n "$m" ] && umount -l "$m" 2>/dev/null
	done
	MOUNTS=()
	for ns in "${NETNS[@]:-}"; do
		[ -n "$ns" ] && ip netns del "$ns" 2>/dev/null
	done
	NETNS=()
	PIDS=()
	[ -n "$HP_WAS" ] && echo "$HP_WAS" >$HP_FILE 2>/dev/null
	HP_WAS=
	return 0
}
faults_cleanup() {
	teardown
	cleanup
}
trap faults_cleanup EXIT
trap 'exit 143' TERM INT HUP

"$FERRY" keygen "$T/key" >/dev/null || fail "keygen"
KEY=$T/key

# The interpreter itself (python3 may be a pyenv shim, slow to start),
# and faults.py as one server process for the whole script (a kill must
# follow its transfer's start closely, and Python starts slowly on a busy
# host).
PY=$(python3 -c 'import sys; print(sys.executable)') || fail "no python3"
coproc FPYC { exec "$PY" "$FPY" serve 2>&1; }
PIDS+=($FPYC_PID)
# fpy CMD ARGS...: a faults.py command; its output in FPY_OUT (also
# printed, indented, unless FPY_QUIET), its status returned.
fpy() {
	local line IFS=$'\t'
	printf '%s\n' "$*" >&"${FPYC[1]}" || fail "faults.py serve is gone"
	IFS=$' \t\n'
	FPY_OUT=
	while IFS= read -r line <&"${FPYC[0]}"; do
		if [[ $line == $'\x01'RC* ]]; then
			[ -n "${FPY_QUIET:-}" ] || [ -z "$FPY_OUT" ] || printf '%s' "$FPY_OUT" | sed 's/^/   /'
			return "${line#*RC }"
		fi
		FPY_OUT+=$line$'\n'
	done
	fail "faults.py serve ended"
}
FPY_QUIET=1 fpy plan send 1 a:1 || fail "faults.py does not run: $FPY_OUT"

# make_src DIR: the tree every trial sends: a (100 KB), b (5 MiB + 12345:
# 6 chunks), c (3 MiB + 5: 4 chunks), sub/d (4097 bytes), sub/empty.
# FILES_CHUNKS: name:chunks for faults.py plan.
make_src() {
	mkdir -p "$1/sub"
	head -c 100000 /dev/urandom >"$1/a"
	head -c $((5 * MiB + 12345)) /dev/urandom >"$1/b"
	head -c $((3 * MiB + 5)) /dev/urandom >"$1/c"
	head -c 4097 /dev/urandom >"$1/sub/d"
	: >"$1/sub/empty"
	chmod 640 "$1/c"
	FILES_CHUNKS=(a:1 b:6 c:4)
}

# forget PID: a child reaped; off the list the EXIT trap kills (so that a
# number the system has given to another process since is left alone)
forget() {
	local p keep=()
	for p in "${PIDS[@]:-}"; do
		[ -n "$p" ] && [ "$p" != "$1" ] && keep+=("$p")
	done
	PIDS=("${keep[@]}")
}

# FAULT_SEED_BASE: the first seed of each kind (default: random)
SEED_BASE=${FAULT_SEED_BASE:-$(( (RANDOM << 15 | RANDOM) % 900000 + 100000 ))}

# record FAULT SEED OUTCOME CORRUPT PARTIAL LEAKS NOTE: one trial's line.
# An outcome starting with FAIL fails the script.
record() {
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" \
		"$(printf %s "$3" | tr '\t\n' '  ' | head -c 200)" "$4" "$5" "$6" \
		"$(printf %s "$7" | tr '\t\n' '  ' | head -c 300)" >>"$RESULTS"
	case "$3" in FAIL*) FAILED=$((FAILED + 1)) ;; esac
	echo "   -> $3${7:+ ($7)} [$((SECONDS - ${TRIAL_T0:-$SECONDS})) s]"
}

# watch_start DIR: the watcher over DIR (every few ms: whatever is under a
# final name below DIR/CASE/src must be its source in $S).
watch_start() {
	# (niced: it lists the tree every 3 ms, and must not slow the
	# transfers it watches on a small host)
	nice -n 10 "$PY" "$WATCH" "$S" "$1" "$T/watch.stop" "$T/watch.json" &
	WPID=$!
	PIDS+=($WPID)
}

# watch_stop: stop it; its scans, hashes and violations. Returns the
# number of violations (1 when it wrote no report).
watch_stop() {
	touch "$T/watch.stop"
	local i
	for i in $(seq 600); do
		kill -0 "$WPID" 2>/dev/null || break
		sleep 0.05
	done
	wait "$WPID" 2>/dev/null
	forget "$WPID"
	[ -s "$T/watch.json" ] || { echo "watcher: no report" >&2; return 1; }
	"$PY" - "$T/watch.json" <<'PY'
import json, sys
w = json.load(open(sys.argv[1]))
print(f"watcher: {w['scans']} scans, {w['hashed']} files hashed under final "
      f"names, {len(w['violations'])} violations")
for v in w["violations"]:
    print("  FAIL: " + v)
sys.exit(min(len(w["violations"]), 100))
PY
}

# left_over NETNS: processes of ours left (their command line names
# $KEY, or they run in namespace NETNS) other than the receivers in
# $RPIDS; prints them, 1 if any.
left_over() {
	FPY_QUIET=1 fpy procs "$KEY" "${RPIDS// /,}" "$@" && return 0
	echo "$FPY_OUT"
	return 1
}

# final_leaks NAMES...: after teardown, nothing of ours is left: no
# processes, no namespaces or links with our names, the hugepage pool as
# it was before the script (total and free), no mounts. Prints the leaks
# and returns their count.
final_leaks() {
	local n=0 x hp i
	for i in $(seq 40); do
		[ -z "$(pgrep -f -- "$KEY")" ] && break
		sleep 0.05
	done
	x=$(pgrep -af -- "$KEY")
	[ -z "$x" ] || { echo "leak: processes: $x"; n=$((n + 1)); }
	for x in "$@"; do
		ip netns list 2>/dev/null | grep -w "$x" >/dev/null &&
			{ echo "leak: namespace $x"; n=$((n + 1)); }
		ip -o link show 2>/dev/null | grep -w "$x" >/dev/null &&
			{ echo "leak: link $x"; n=$((n + 1)); }
	done
	# more hugepages in use than before, with every process of ours
	# gone: leaked, unless a live process (another test's) maps some
	for i in $(seq 40); do
		hp=$(hp_used)
		[ "$hp" -le "$HP_START" ] && break
		sleep 0.05
	done
	if [ "$hp" -gt "$HP_START" ]; then
		x=$(grep -l 'KernelPageSize: *2048 kB' /proc/[0-9]*/smaps 2>/dev/null | cut -d/ -f3 | paste -sd' ')
		if [ -n "$x" ]; then
			echo "note: $hp hugepages in use ($HP_START before), mapped by processes not ours: $x"
		else
			echo "leak: $hp hugepages in use after teardown, $HP_START before, and no process maps any"
			n=$((n + 1))
		fi
	fi
	grep -q " $T" /proc/mounts && { echo "leak: mounts below $T"; n=$((n + 1)); }
	return $n
}

# finish_summary TITLE LEAKS: the table; exit 1 on a failed trial, a
# corrupt or partial file, a watcher violation or a leak.
finish_summary() {
	[ "$2" -gt 0 ] && record teardown - "FAIL: $2 leak(s) after teardown" 0 0 "$2" ""
	[ -n "${FAULT_RESULTS_OUT:-}" ] && cp "$RESULTS" "$FAULT_RESULTS_OUT"
	"$PY" "$FPY" summary "$RESULTS" "$1"
	local bad
	bad=$(awk -F'\t' '{ c += $4; p += $5; l += $6 } END { print c + p + l + 0 }' "$RESULTS")
	echo "seeds: FAULT_SEED_BASE=$SEED_BASE; replay one trial with FAULT_SEED=KIND:SEED (the [...] before each trial)"
	if [ "$FAILED" -gt 0 ] || [ "$bad" -gt 0 ] || [ "$2" -gt 0 ]; then
		echo "FAIL: $FAILED failed trial(s), $bad corrupt/partial/leak count(s), $2 leak(s) after teardown" >&2
		exit 1
	fi
	echo "PASS"
	exit 0
}
