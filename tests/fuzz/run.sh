#!/usr/bin/env bash
# Build ferry's libFuzzer targets with clang and run each for a while.
#
#   tests/fuzz/run.sh [-j JOBS] [--fresh] [--bin DIR] OUTDIR SECONDS [TARGET...]
#
# TARGETs: ctrl req manifest roce pcap (default: all). Each target is compiled
# straight from its sources with -fsanitize=fuzzer,address,undefined into
# OUTDIR/bin or --bin DIR (again only when a source under lib/, include/
# or tests/fuzz/ is newer than it) and run SECONDS seconds, JOBS at a time (default 1),
# on the seed corpus tests/fuzz/corpus/TARGET (read only). New inputs go
# to OUTDIR/new/TARGET (--fresh empties it first), crashing inputs to
# OUTDIR/crash/TARGET, the log to OUTDIR/log/TARGET.log. Prints one line
# per target and exits 1 if any target crashed or failed, 77 (skip) when
# clang or its libFuzzer runtime is missing.
set -uo pipefail

src=$(cd "$(dirname "$0")/../.." && pwd)
jobs=1
fresh=0
bin=
while [ $# -gt 0 ]; do
	case $1 in
	-j) jobs=$2; shift 2 ;;
	--fresh) fresh=1; shift ;;
	--bin) bin=$2; shift 2 ;;
	*) break ;;
	esac
done
if [ $# -lt 2 ]; then
	echo "usage: $0 [-j JOBS] [--fresh] [--bin DIR] OUTDIR SECONDS [TARGET...]" >&2
	exit 2
fi
out=$1
secs=$2
shift 2
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(ctrl req manifest roce pcap)

CC=${FUZZ_CC:-clang}
if ! command -v "$CC" >/dev/null; then
	echo "SKIP: $CC not found (tools/deps.sh installs clang)"
	exit 77
fi

u=lib/xport/uroce
w=lib/xport/roce
r=lib/rocedump
sources() {
	case $1 in
	ctrl) echo tests/fuzz/fuzz_ctrl.c lib/ctrl/codec.c lib/xport/rocev2.c \
		lib/util/log.c lib/util/escape.c ;;
	req) echo tests/fuzz/fuzz_req.c lib/ctrl/req.c lib/ctrl/codec.c \
		lib/io/manifest.c lib/util/escape.c lib/util/path.c ;;
	manifest) echo tests/fuzz/fuzz_manifest.c lib/io/manifest.c \
		lib/files/files_plan.c lib/sum/sum.c lib/util/path.c ;;
	roce) echo tests/fuzz/fuzz_roce.c $w/wire.c $w/icrc.c $u/rc_qp.c \
		$u/rc_req.c $u/rc_win.c $u/rc_dcqcn.c $u/rc_resp.c $u/rc_comp.c \
		$r/decode.c $r/ibop.c $r/mad.c ;;
	pcap) echo tests/fuzz/fuzz_pcap.c $w/pcap.c $w/wire.c $w/icrc.c \
		$r/decode.c $r/ibop.c $r/mad.c $r/flows.c $r/rocedump.c ;;
	*) return 1 ;;
	esac
}

cflags=(-std=c11 -D_GNU_SOURCE -O1 -g -fno-omit-frame-pointer
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
	-Wall -Wextra -Wno-missing-field-initializers
	-I"$src/include" -I"$src/lib")
libs=(-lisal -lpthread)

bin=${bin:-$out/bin}
mkdir -p "$bin" "$out/log" || exit 1
out=$(cd "$out" && pwd)
bin=$(cd "$bin" && pwd)

build() {
	local t=$1 exe=$bin/fuzz_$1 srcs
	srcs=$(sources "$t") || { echo "unknown target '$t'" >&2; return 1; }
	if [ -x "$exe" ] && [ -z "$(cd "$src" && find lib include tests/fuzz \
		-name '*.[ch]' -newer "$exe" -print -quit)" ]; then
		return 0
	fi
	# shellcheck disable=SC2086
	(cd "$src" && "$CC" "${cflags[@]}" $srcs "${libs[@]}" -o "$exe.tmp") \
		>"$out/log/build-$t.log" 2>&1 || {
		if grep -q "libclang_rt.fuzzer\|cannot find.*fuzzer" \
			"$out/log/build-$t.log"; then
			echo "SKIP: $CC has no libFuzzer runtime" \
				"(apt-get install clang)"
			exit 77
		fi
		cat "$out/log/build-$t.log" >&2
		echo "fuzz_$t: build failed" >&2
		return 1
	}
	mv "$exe.tmp" "$exe"
}

# One line from a libFuzzer log and the crash directory.
summary() {
	local t=$1 rc=$2 log=$out/log/$1.log crashes execs last cov ft corp
	crashes=$(find "$out/crash/$t" -type f | wc -l)
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	last=$(grep -E '^#[0-9]+[[:space:]]+(INITED|NEW|REDUCE|pulse|DONE)' "$log" | tail -n 1)
	cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
	ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
	corp=$(sed -n 's/.* corp: \([0-9]*\/[0-9]*[a-zA-Z]*\).*/\1/p' <<<"$last")
	printf 'fuzz_%s: %s s, %s execs, cov %s ft %s, corpus %s, crashes %s, exit %s\n' \
		"$t" "$secs" "${execs:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}" \
		"$crashes" "$rc"
	[ "$crashes" -eq 0 ] && [ "$rc" -eq 0 ]
}

run() {
	local t=$1 rc
	[ $fresh -eq 0 ] || rm -rf "$out/new/$t"
	mkdir -p "$out/new/$t" "$out/crash/$t"
	# the seed corpus is read, never written: new inputs go to new/$t
	timeout -k 10 $((secs + 120)) "$bin/fuzz_$t" \
		-max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix="$out/crash/$t/" \
		"$out/new/$t" "$src/tests/fuzz/corpus/$t" >"$out/log/$t.log" 2>&1
	rc=$?
	summary "$t" "$rc" >"$out/log/$t.summary"
}

for t in "${targets[@]}"; do
	build "$t" || exit 1
done
running=0
for t in "${targets[@]}"; do
	if [ $running -ge "$jobs" ]; then
		wait -n
		running=$((running - 1))
	fi
	run "$t" &
	running=$((running + 1))
done
wait

fail=0
for t in "${targets[@]}"; do
	cat "$out/log/$t.summary"
	if ! grep -q 'crashes 0, exit 0$' "$out/log/$t.summary"; then
		fail=1
		echo "  log: $out/log/$t.log; inputs: $out/crash/$t/" >&2
		grep -m 3 -E 'ERROR|check failed|runtime error' "$out/log/$t.log" >&2
	fi
done
exit $fail
