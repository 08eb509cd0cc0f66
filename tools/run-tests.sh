#!/usr/bin/env bash
# Run every meson test and end with one line:
#   tests: N passed, N failed, N skipped
# Exit non-zero when anything failed.
set -uo pipefail
build=${1:-build}
shift || true

meson test -C "$build" --print-errorlogs --num-processes 2 "$@"
rc=$?
# meson names the log after the wrapper (testlog-valgrind.json): the
# newest one is this run's
log=$(ls -t "$build"/meson-logs/testlog*.json 2>/dev/null | head -n 1)
log=${log:-$build/meson-logs/testlog.json}
if [ ! -s "$log" ]; then
	echo "tests: 0 passed, 1 failed (no test log: meson test exited $rc)"
	exit 1
fi
python3 - "$log" "$rc" <<'PY'
import json, sys
counts = {"passed": 0, "failed": 0, "skipped": 0}
for line in open(sys.argv[1]):
    r = json.loads(line).get("result", "")
    if r in ("OK", "EXPECTEDFAIL"):
        counts["passed"] += 1
    elif r == "SKIP":
        counts["skipped"] += 1
    else:
        counts["failed"] += 1
if int(sys.argv[2]) != 0 and counts["failed"] == 0:
    counts["failed"] = 1  # meson itself failed
print("tests: {passed} passed, {failed} failed, {skipped} skipped".format(**counts))
sys.exit(1 if counts["failed"] else 0)
PY
