#!/usr/bin/env bash
# The suite under load: RUNS consecutive `make test` runs in a clean clone
# of this checkout's HEAD while a parallel ninja build of another clone
# keeps the host busy. A suite that passes here does not flake on a busy
# CI host. Prints each run's time and summary line; exits 1 if any run
# failed.
#   tools/loaded-test.sh            (RUNS=3, WORK=/tmp/ferry-loaded)
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
runs=${RUNS:-3}
work=${WORK:-/tmp/ferry-loaded}

rm -rf "$work"
mkdir -p "$work"
git clone -q "$src" "$work/test" || exit 1
git clone -q "$src" "$work/load" || exit 1
(cd "$work/load" && meson setup build >/dev/null) || exit 1

# the load: rebuild the other clone from scratch, over and over
(
	while :; do
		ninja -C "$work/load/build" clean >/dev/null 2>&1
		ninja -C "$work/load/build" >/dev/null 2>&1
	done
) &
load=$!
trap 'kill $load 2>/dev/null; pkill -f "ninja -C $work/load" 2>/dev/null' EXIT

fail=0
for i in $(seq 1 "$runs"); do
	t0=$(date +%s)
	(cd "$work/test" && make test) >"$work/run$i.log" 2>&1
	rc=$?
	t1=$(date +%s)
	line=$(grep '^tests: ' "$work/run$i.log" | tail -n 1)
	printf 'run %d: %d min %02d s, load average %s, %s (exit %d)\n' "$i" \
		$(((t1 - t0) / 60)) $(((t1 - t0) % 60)) \
		"$(cut -d' ' -f1-3 /proc/loadavg)" "${line:-no summary}" "$rc"
	[ "$rc" -eq 0 ] || { fail=1; grep -E '^ *[0-9]+/[0-9]+ .*(FAIL|TIMEOUT)' "$work/run$i.log"; }
done
exit $fail
