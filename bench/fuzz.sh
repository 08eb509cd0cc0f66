#!/usr/bin/env bash
# Fuzz ferry's decoders: each libFuzzer target for SECONDS (default 600).
#
#   bench/fuzz.sh [SECONDS [TARGET...]]
#
# Targets (tests/fuzz/): ctrl (control-channel codec), manifest (manifest
# and plan batches, relative paths), roce (RoCEv2 parser and RC responder
# writing a guarded region, and rocedump's decoder), pcap (rocedump's
# capture reader, decoder and flows). They are
# built with clang (-fsanitize=fuzzer,address,undefined) into build-fuzz/
# (tests/fuzz/run.sh does the work) and started from the seed corpora in tests/fuzz/corpus/. New inputs are
# kept outside git, in FUZZ_DIR (default /var/tmp/ferry-fuzz/new/TARGET),
# and reused by the next run; logs in FUZZ_DIR/log/; a crashing input lands in
# FUZZ_DIR/crash/TARGET/ (copy it into the tree's corpus as a regression
# input once fixed).
#
# Environment: FUZZ_JOBS targets at a time (default 1; each uses one core),
# FUZZ_DIR as above, FUZZ_CC the compiler (default clang).
# Prints one line per target (execs, coverage, corpus, crashes) and exits
# non-zero if any target crashed.
set -euo pipefail

cd "$(dirname "$0")/.."
secs=${1:-600}
shift || true
dir=${FUZZ_DIR:-/var/tmp/ferry-fuzz}
rc=0
tests/fuzz/run.sh -j "${FUZZ_JOBS:-1}" --bin build-fuzz "$dir" "$secs" "$@" ||
	rc=$?
if [ "$rc" -eq 77 ]; then
	echo "bench/fuzz.sh: needs clang with libFuzzer (tools/deps.sh)" >&2
	exit 1
fi
exit "$rc"
