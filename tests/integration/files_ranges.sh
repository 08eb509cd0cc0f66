#!/usr/bin/env bash
# Split files: one 40 MiB file cut in 4 ranges of 10 MiB (1 MiB chunks),
# each sent by a process of its own (range_send, over ferry_send) to one
# receiver, at the same time, over tcp on loopback:
#  (1) four ranges at once: the file lands byte for byte with its mode and
#      mtime; exactly one range says it published it, with the whole
#      file's adler32 and crc32c (checked independently), and every range
#      reports its own; nothing is left in the staging area;
#  (2) one range's sender killed -9 mid-range: the others land, the file
#      is not under its name; that range sent again resumes (moves less
#      than the range) and publishes the file;
#  (3) every range again after the file is there: nothing moves, each is
#      reported skipped;
#  (4) a whole-file send while a range of the target is in flight fails
#      that file as busy, and so does a range while a whole-file send is
#      in flight, and a second sender of a range in flight; a split that
#      is not a multiple of the chunk size is refused, naming it.
. "$(dirname "$0")/files_lib.sh"

MiB=$((1 << 20))
SPLIT=$((10 * MiB))
RS=$BUILD/tests/integration/range_send
S=$T/src
D=$T/dst
mkdir -p "$S" "$D"
[ -x "$RS" ] || fail "no $RS: build the tests first"
head -c $((40 * MiB)) /dev/urandom >"$S/big"
chmod 0640 "$S/big"
touch -d '2021-03-04 05:06:07.123456789' "$S/big"
start_recv recv "$D" --timeout 5

# rs [-OPT VALUE...] NAME OFFSET SPLIT: range_send of $S/big as NAME,
# 1 MiB chunks, bounded.
rs() {
	local opts=()
	while [[ $1 == -* ]]; do opts+=("$1" "$2"); shift 2; done
	timeout -k 5 60 "$RS" -k "$KEY" -c $MiB -t 5000 "${opts[@]}" \
		127.0.0.1 "$RPORT" "$S/big" "$@"
}

# slow OUT RATE NAME OFFSET SPLIT: range_send paced to RATE bit/s in the
# background, SLOW its own pid (kill -9 hits it, not a shell around it);
# the test's own waits bound it.
slow() {
	local out=$1 rate=$2
	shift 2
	"$RS" -k "$KEY" -c $MiB -t 5000 -r "$rate" 127.0.0.1 "$RPORT" "$S/big" \
		"$@" >"$out.out" 2>"$out.err" &
	SLOW=$!
	PIDS+=($SLOW)
}

# $T/sums: "K ADLER32 CRC32C" of each range K of the source, and "all
# ..." of the whole file, combined from the ranges' (zlib's adler32;
# crc32c table-driven and combined with the zero-append operator of
# $FSUM: nothing of ferry's)
python3 - "$S/big" $SPLIT "$FSUM" >"$T/sums" <<'PY' || fail "independent sums"
import sys, zlib
fsum = {}  # its functions, without running its commands
exec(open(sys.argv[3]).read().split("\ncmds = {")[0], fsum)
src, split = sys.argv[1], int(sys.argv[2])
data = open(src, "rb").read()
c_all = None
for k in range(0, len(data), split):
    b = data[k:k + split]
    a, c = zlib.adler32(b), fsum["crc32c"](b)
    print(f"{k // split} {a:08x} {c:08x}")
    c_all = c if c_all is None else fsum["crc_zeros"](c_all, len(b)) ^ c
print(f"all {zlib.adler32(data):08x} {c_all:08x}")
PY

# sums K|all: "adler32 crc32c" of range K, or of the whole file
sums() { sed -n "s/^$1 //p" "$T/sums"; }

# field LINE KEY: the value of KEY=... in a result line
field() { sed -n "s/.* $2=\([^ ]*\).*/\1/p" <<<"$1"; }

# jrnl NAME OFFSET: the staged journal of that range of $D/NAME
jrnl() {
	local h
	h=$(printf 'ferry-stage-1\0%s' "$1" | sha256sum | cut -c1-32)
	printf '%s/.ferry/%s/%s.%016x.%016x.jrnl' "$D" "${h:0:2}" "$h" $SPLIT "$2"
}

# ranges_ok WHAT NAME K...: result files $T/WHAT.K.out each hold one
# result line for range K with status 0 and the range's own sums.
ranges_ok() {
	local what=$1 name=$2 k line want
	shift 2
	for k in "$@"; do
		line=$(grep '^result ' "$T/$what.$k.out")
		[ "$(wc -l <<<"$line")" -eq 1 ] || { bad "$what: range $k: not one result line: $(cat "$T/$what.$k.out" "$T/$what.$k.err")"; continue; }
		[ "$(field "$line" status)" = 0 ] || bad "$what: range $k failed: $line"
		[ "$(field "$line" range)" = 1 ] || bad "$what: range $k not reported as a range: $line"
		[ "$(field "$line" offset)" = $((k * SPLIT)) ] || bad "$what: range $k at the wrong offset: $line"
		[ "$(field "$line" length)" = $SPLIT ] || bad "$what: range $k of the wrong length: $line"
		want=$(sums $k)
		[ "$(field "$line" adler32) $(field "$line" crc32c)" = "$want" ] ||
			bad "$what: range $k: sums $(field "$line" adler32) $(field "$line" crc32c), independently $want"
	done
}

# published_by WHAT K...: exactly one of the ranges says it published
# the file, with the whole file's sums; prints which.
published_by() {
	local what=$1 k n=0 who=
	shift
	for k in "$@"; do
		grep -q ' published=1 ' "$T/$what.$k.out" && { n=$((n + 1)); who=$k; }
	done
	[ $n -eq 1 ] || { bad "$what: $n ranges say they published the file, not 1"; return; }
	local line want
	line=$(grep '^result ' "$T/$what.$who.out")
	want=$(sums all)
	[ "$(field "$line" file_adler32) $(field "$line" file_crc32c)" = "$want" ] ||
		bad "$what: published with adler32/crc32c $(field "$line" file_adler32) $(field "$line" file_crc32c), the file's are $want"
	[ "$(field "$line" file_adler32)" = "$(python3 -c 'import sys, zlib; print("%08x" % zlib.adler32(open(sys.argv[1], "rb").read()))' "$S/big")" ] ||
		bad "$what: the published adler32 is not zlib's"
	echo "range $who published the file: adler32 $(field "$line" file_adler32)"
}

# landed WHAT NAME: $D/NAME is the source, contents, mode and mtime
landed() {
	cmp -s "$S/big" "$D/$2" || bad "$1: $D/$2 differs from the source"
	[ "$(stat -c '%a %Y' "$S/big")" = "$(stat -c '%a %Y' "$D/$2" 2>/dev/null)" ] ||
		bad "$1: mode and mtime $(stat -c '%a %Y' "$D/$2" 2>&1), the source's $(stat -c '%a %Y' "$S/big")"
	[ "$(stat -c %y "$S/big")" = "$(stat -c %y "$D/$2" 2>/dev/null)" ] ||
		bad "$1: mtime $(stat -c %y "$D/$2" 2>&1), the source's $(stat -c %y "$S/big")"
}

# wait_exists PATH SEC: until PATH exists (SEC seconds at most)
wait_exists() {
	local i
	for i in $(seq $(($2 * 20))); do
		[ -e "$1" ] && return 0
		sleep 0.05
	done
	return 1
}

# at_once WHAT NAME: the four ranges of NAME at the same time, each
# process's output in $T/WHAT.K.out and .err; bad for each that fails.
at_once() {
	local k pids=()
	for k in 0 1 2 3; do
		rs "$2" $((k * SPLIT)) $SPLIT >"$T/$1.$k.out" 2>"$T/$1.$k.err" &
		pids+=($!)
		PIDS+=($!)
	done
	for k in 0 1 2 3; do
		wait "${pids[$k]}" || bad "$1: range $k: exit status $?: $(cat "$T/$1.$k.err")"
	done
}

note "(1) four ranges at once"
at_once one one/big
ranges_ok one one/big 0 1 2 3
published_by one 0 1 2 3
landed "(1)" one/big
no_sidecars "$D" "(1)"

note "(2) a range's sender killed mid-range, then sent again"
# range 2 paced to 24 Mbit/s (10 MiB: about 3.5 s), killed once its
# journal holds two chunks
slow "$T/two.2" 24000000 two/big $((2 * SPLIT)) $SPLIT
P2=()
for k in 0 1 3; do
	rs two/big $((k * SPLIT)) $SPLIT >"$T/two.$k.out" 2>"$T/two.$k.err" &
	P2+=($!)
	PIDS+=($!)
done
J=$(jrnl two/big $((2 * SPLIT)))
for i in $(seq 400); do
	[ "$(stat -c %s "$J" 2>/dev/null || echo 0)" -ge $((36 + 2 * 20)) ] && break
	kill -0 $SLOW 2>/dev/null || break
	sleep 0.025
done
killed=0
{ kill -9 $SLOW && killed=1; wait $SLOW; } 2>/dev/null
[ $killed = 1 ] || bad "(2) range 2 ended before the kill: $(cat "$T/two.2.out")"
echo "killed range 2 with $(( ($(stat -c %s "$J" 2>/dev/null || echo 36) - 36) / 20 )) of 10 chunks journaled"
for i in 0 1 2; do
	wait "${P2[$i]}" || bad "(2) a range failed: $(cat "$T"/two.*.err)"
done
ranges_ok two two/big 0 1 3
grep -q ' published=1 ' "$T"/two.[013].out && bad "(2) a range published the file without range 2"
[ -e "$D/two/big" ] && bad "(2) two/big is under its name without range 2: $(grep -a 'published\|failed' "$T/recv.err")"
# the receiver lets go of the killed session's range when it sees it
# gone: until then the range is busy
for i in $(seq 120); do
	rs two/big $((2 * SPLIT)) $SPLIT >"$T/two.2.out" 2>"$T/two.2.err" && break
	grep -q 'writing it now' "$T/two.2.err" || break
	sleep 0.25
done
ranges_ok two two/big 2
line=$(grep '^result ' "$T/two.2.out")
[ "$(field "$line" resumed)" = 1 ] || bad "(2) the range sent again did not resume: $line"
[ "${line:+$(field "$line" sent)}" -lt $SPLIT ] 2>/dev/null ||
	bad "(2) the range sent again moved $(field "$line" sent) bytes, not less than the range ($SPLIT)"
echo "range 2 sent again: $(field "$line" sent) of $SPLIT bytes moved"
published_by two 0 1 2 3
landed "(2)" two/big
no_sidecars "$D" "(2)"

note "(3) every range again, once the file is there"
at_once three one/big
ranges_ok three one/big 0 1 2 3
for k in 0 1 2 3; do
	line=$(grep '^result ' "$T/three.$k.out")
	[ "$(field "$line" skipped) $(field "$line" sent) $(field "$line" published)" = "1 0 0" ] ||
		bad "(3) range $k: not skipped with nothing moved: $line"
done
landed "(3)" one/big

note "(4) busy targets, and a split that is not a multiple of the chunk"
slow "$T/four.slow" 4000000 four/big 0 $SPLIT
wait_exists "$(jrnl four/big 0)" 10 || bad "(4) the slow range never journaled a chunk: $(cat "$T/four.slow.err")"
rs four/big 0 0 >"$T/four.whole.out" 2>"$T/four.whole.err"
rc=$?
[ $rc -ne 0 ] && grep -q 'status=-16 .*another transfer is writing it now' "$T/four.whole.out" ||
	bad "(4) a whole-file send during a range: exit $rc: $(cat "$T/four.whole.out" "$T/four.whole.err")"
rs four/big 0 $SPLIT >"$T/four.again.out" 2>"$T/four.again.err"
rc=$?
[ $rc -ne 0 ] && grep -q 'status=-16 .*another transfer is writing it now' "$T/four.again.out" ||
	bad "(4) the same range twice at once: exit $rc: $(cat "$T/four.again.out" "$T/four.again.err")"
{ kill -9 $SLOW; wait $SLOW; } 2>/dev/null
echo "refused during a range: $(head -n 1 "$T/four.whole.err")"
# the killed range's split file stays staged; a whole-file send lands
# over it (once the receiver has let go of the killed one), and the next
# range sent finds the file there and clears what the split file left
for i in $(seq 120); do
	rs four/big 0 0 >"$T/four.whole.out" 2>"$T/four.whole.err" && break
	grep -q 'writing it now' "$T/four.whole.err" || break
	sleep 0.25
done
grep -q ' status=0 ' "$T/four.whole.out" || bad "(4) the whole-file send after the range: $(cat "$T/four.whole.err")"
h=$(printf 'ferry-stage-1\0%s' four/big | sha256sum | cut -c1-32)
[ -n "$(find "$D/.ferry" -name "$h.*" 2>/dev/null)" ] || bad "(4) the killed range left nothing staged"
rs four/big $SPLIT $SPLIT >"$T/four.rerun.out" 2>"$T/four.rerun.err" ||
	bad "(4) a range after the whole file: $(cat "$T/four.rerun.err")"
line=$(grep '^result ' "$T/four.rerun.out")
[ "$(field "$line" skipped) $(field "$line" sent)" = "1 0" ] ||
	bad "(4) a range after the whole file moved data: $line"
left=$(find "$D/.ferry" -name "$h.*" 2>/dev/null)
[ -z "$left" ] || bad "(4) the split file's leftovers stayed: $left"

slow "$T/five.slow" 4000000 five/big 0 0
wait_exists "$(staged "$D" five/big part)" 10 || bad "(4) the slow whole-file send never staged: $(cat "$T/five.slow.err")"
rs five/big $SPLIT $SPLIT >"$T/five.range.out" 2>"$T/five.range.err"
rc=$?
[ $rc -ne 0 ] && grep -q 'status=-16 .*another transfer is writing it now' "$T/five.range.out" ||
	bad "(4) a range during a whole-file send: exit $rc: $(cat "$T/five.range.out" "$T/five.range.err")"
{ kill -9 $SLOW; wait $SLOW; } 2>/dev/null

rs six/big 0 $((3 * MiB / 2)) >"$T/six.out" 2>"$T/six.err"
rc=$?
[ $rc -ne 0 ] && grep -q 'must be a multiple of the chunk size (1048576 bytes)' "$T/six.err" ||
	bad "(4) a split of 1.5 MiB with 1 MiB chunks: exit $rc: $(cat "$T/six.out" "$T/six.err")"
echo "refused: $(cat "$T/six.err")"
[ -e "$D/six" ] && bad "(4) the refused split left $D/six"

finish
