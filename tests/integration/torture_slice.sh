#!/usr/bin/env bash
# A 20-second slice of bench/torture.sh (tcp): concurrent senders on
# overlapping targets, kill -9 of either side, reruns, and the
# invariants after every trial. The whole run (200+ trials, tcp and
# uroce) is bench/torture.sh; a failing seed printed here replays with
#   TORTURE_SEED=N TORTURE_TRANSPORTS=tcp bench/torture.sh
SRC=${SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
export BUILD=${BUILD:-$SRC/build}
export TORTURE_TRANSPORTS=${TORTURE_TRANSPORTS:-tcp}
export TORTURE_SECONDS=${TORTURE_SECONDS:-20}
export TORTURE_TRIALS=${TORTURE_TRIALS:-0}
exec timeout -k 10 240 bash "$SRC/bench/torture.sh"
