#!/usr/bin/env bash
# Third-party copy's one-time tokens, by hand (tpc_probe drives the two
# steps: a TOKEN from the destination daemon, a PUSH to the source): a
# token works once for exactly what it names; reused, expired or
# re-targeted (other name, size or directory) it is refused and nothing is
# written; a key without write rights gets no token. Two daemons on
# loopback, each with its own export root.
. "$(dirname "$0")/lib.sh"

PROBE=$BUILD/tests/integration/tpc_probe
[ -x "$PROBE" ] || skip "tpc_probe not built"

exports_pair
head -c 5000000 /dev/urandom > $T/a/src.dat

export FERRY_KEY=$T/keys/ops.key FERRY_KEY_NAME=ops
probe() { timeout 30 $PROBE "$1" 127.0.0.1 $PA 127.0.0.1 $PB /src.dat /in "$2"; }

note "a token works once, for what it names"
out=$(probe once once.dat) || fail "first use refused: $out"
cmp $T/a/src.dat $T/b/in/once.dat || fail "once.dat differs from its source"

# mode, the target name, what the refusal must say
while read -r mode name says; do
	note "token $mode: refused"
	out=$(probe $mode $name) || fail "$mode: not refused as expected: $out"
	echo "$out"
	echo "$out" | grep -q "$says" || fail "$mode: the refusal does not say '$says': $out"
	[ $mode = reuse ] || [ ! -e $T/b/in/$name ] || fail "$mode: $name was written"
	[ ! -e $T/b/in/$name.other ] || fail "$mode: $name.other was written"
	[ ! -e $T/b/in.other ] || fail "$mode: in.other was created"
done <<'CASES'
reuse reuse.dat already used
expire expire.dat expired
name name.dat the token is for
size size.dat bytes, not
dest dest.dat the token is for files in
CASES
find $T/b -name .ferry | grep -q . && fail "a staging area was left behind: $(find $T/b -path '*.ferry*')"
# the reuse case's first use went through; nothing else arrived
[ "$(ls $T/b/in | sort | tr '\n' ' ')" = "once.dat reuse.dat " ] ||
	fail "unexpected files at the destination: $(ls $T/b/in)"

note "a read-only key gets no token"
out=$(FERRY_KEY=$T/keys/ro.key FERRY_KEY_NAME=ro probe once ro.dat 2>&1) &&
	fail "a read-only key got a token: $out"
echo "$out" | grep -q "may not write" || fail "no rights message: $out"
[ ! -e $T/b/in/ro.dat ] || fail "ro.dat was written"

note "the daemons logged the refusals"
grep -q "already used" $T/b.log $T/a.log || { cat $T/a.log $T/b.log; fail "no log of the reused token"; }
echo "PASS"
