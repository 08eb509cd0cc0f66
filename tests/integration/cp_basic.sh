#!/usr/bin/env bash
# ferry cp against daemons (`ferry serve --exports`) on loopback: push,
# pull and third-party copy of files and whole directories (300 files: in
# batches), renames,
# overwrite only with -f, an interrupted copy that stops the source daemon
# too, and the refusals a user meets: a missing source,
# an existing target, a read-only key, an unknown key name, a symlink out
# of the export, bad URLs and bad daemon configurations. Every copy is
# compared byte for byte; a refusal must leave nothing behind.
. "$(dirname "$0")/lib.sh"

mkdir -p $T/local/tree/sub $T/out
exports_pair
cp $T/a.conf $T/a.conf.tmp
head -c 3000000 /dev/urandom > $T/local/f1
head -c 1234567 /dev/urandom > $T/local/f2
head -c 100000 /dev/urandom > $T/local/tree/sub/x
echo hello > $T/local/tree/y
export FERRY_KEY=$T/keys/ops.key # its name, "ops", comes from the file name
cp_() { timeout 60 $FERRY cp -q "$@"; }

# expect_fail RC PATTERN CMD...: CMD exits RC and says PATTERN on stderr
expect_fail() {
	local rc=$1 pat=$2 got
	shift 2
	"$@" >$T/err.out 2>$T/err.txt; got=$?
	[ $got -eq $rc ] || { cat $T/err.txt; fail "'$*' exited $got, wanted $rc"; }
	grep -qi -- "$pat" $T/err.txt || { cat $T/err.txt; fail "'$*' did not say '$pat'"; }
	echo "   refused as expected: $(head -1 $T/err.txt)"
}

note "push: a file under a new name, two files into a directory, a tree"
cp_ $T/local/f1 $A/one.dat || fail "push f1"
cmp $T/local/f1 $T/a/one.dat || fail "one.dat differs"
cp_ $T/local/f1 $T/local/f2 $A/in/ || fail "push two files"
cmp $T/local/f2 $T/a/in/f2 || fail "in/f2 differs"
cp_ $T/local/tree $A/ || fail "push a directory"
cmp $T/local/tree/sub/x $T/a/tree/sub/x || fail "tree/sub/x differs"

note "pull: into a directory, and under a new name"
cp_ $A/in/f1 $A/in/f2 $T/out/ || fail "pull two files"
cmp $T/local/f1 $T/out/f1 && cmp $T/local/f2 $T/out/f2 || fail "pulled files differ"
cp_ $A/one.dat $T/out/renamed || fail "pull under a new name"
cmp $T/local/f1 $T/out/renamed || fail "renamed differs"

note "directories on a daemon: pulled and copied whole"
cp_ $A/tree $T/out/ || fail "pull a directory"
diff -r $T/local/tree $T/out/tree || fail "pulled tree differs"
cp_ $A/tree $B/trees/copy || fail "third-party copy of a directory"
diff -r $T/local/tree $T/b/trees/copy || fail "copied tree differs"
mkdir -p $T/a/many
for i in $(seq 300); do echo "file $i" > $T/a/many/f$i; done
cp_ $A/many $B/ || fail "third-party copy of 300 files (two batches)"
diff -r $T/a/many $T/b/many || fail "the 300 files differ"

note "third-party copy: a to b, progress markers on the way"
timeout 60 $FERRY cp --marker 0.2 $A/in/f1 $A/in/f2 $B/copy/ >$T/tpc.out ||
	fail "third-party copy"
cat $T/tpc.out
cmp $T/local/f1 $T/b/copy/f1 && cmp $T/local/f2 $T/b/copy/f2 || fail "copied files differ"
# the lines xrdcp -C adler32:print writes: adler32: HEX TARGET SIZE
for f in f1 f2; do
	sum=$(python3 -c 'import sys, zlib; print("%x" % zlib.adler32(open(sys.argv[1], "rb").read()))' $T/local/$f)
	grep -qx "adler32: $sum $B/copy/$f $(stat -c %s $T/local/$f)" $T/tpc.out ||
		fail "no xrdcp-style checksum line for $f from the copy"
done
timeout 60 $FERRY cp -q $A/in/f2 $T/out/pulled >$T/pull.out || fail "pull f2 again"
grep -qx "adler32: $sum $(realpath $T/out)/pulled $(stat -c %s $T/local/f2)" $T/pull.out ||
	fail "pull: no checksum line naming the local target: $(cat $T/pull.out)"
grep -q "files 2/2" $T/tpc.out || fail "no final performance marker"

note "an existing target: refused without -f, replaced with it"
head -c 5000 /dev/urandom > $T/local/other
expect_fail 1 "exists" cp_ $T/local/other $A/one.dat
cmp $T/local/f1 $T/a/one.dat || fail "one.dat changed without -f"
expect_fail 1 "exists" cp_ $A/in/f2 $B/copy/f1
cmp $T/local/f1 $T/b/copy/f1 || fail "copy/f1 changed without -f"
expect_fail 1 "exists" cp_ $A/in/f2 $T/out/f1
cmp $T/local/f1 $T/out/f1 || fail "out/f1 changed without -f"
cp_ -f $T/local/other $A/one.dat || fail "push -f"
cmp $T/local/other $T/a/one.dat || fail "one.dat not replaced by -f"
cp_ -f $A/in/f2 $B/copy/f1 || fail "third-party -f"
cmp $T/local/f2 $T/b/copy/f1 || fail "copy/f1 not replaced by -f"

note "--skip-existing: push, pull and third-party copy of identical files skip them; -J says so"
n=$(find $T/local/tree -type f | wc -l)
cp_ --skip-existing $T/local/tree $A/ >$T/skip1.out || fail "push --skip-existing"
grep -q "0 of $n files published, $n skipped, 0 failed" $T/skip1.out ||
	fail "push --skip-existing: $(tail -n 1 $T/skip1.out)"
cp_ --skip-existing -J $A/in/f1 $A/in/f2 $T/out/ >$T/skip2.json || fail "pull --skip-existing -J"
cp_ --skip-existing -J $A/in/f2 $B/copy/ >$T/skip3.json || fail "third-party --skip-existing -J"
python3 - $T/skip2.json $T/skip3.json <<'PY' || fail "cp -J: not a report of skipped files"
import json, sys
for path, n in zip(sys.argv[1:], (2, 1)):
    d = json.load(open(path))
    files = d["files"]
    assert len(files) == n and all(f["ok"] and f["skipped"] for f in files), files
    assert d["end"]["files"]["skipped"] == n, d["end"]["files"]
print("ok: cp -J reports every identical file skipped")
PY

note "-L: a pushed symlink is skipped with a warning, or followed"
ln -s ../f2 $T/local/tree/link
timeout 60 $FERRY cp $T/local/tree $A/nolink/ >$T/l1.out 2>$T/l1.err || fail "push with a symlink"
grep -q "symbolic link" $T/l1.err || fail "the skipped symlink was not named: $(cat $T/l1.err)"
[ ! -e $T/a/nolink/tree/link ] || fail "a symlink was pushed without -L"
cp_ -L $T/local/tree $A/withlink/ || fail "push -L"
cmp $T/local/f2 $T/a/withlink/tree/link || fail "push -L did not send what the link points to"
rm $T/local/tree/link

note "refusals"
n=$(find $T/local/tree -type f | wc -l)
cp_ $T/local/tree ferry://127.0.0.1:$(free_port)/x/ >$T/closed.out 2>&1 && fail "a push to a closed port succeeded"
grep -q "0 of $n files published, 0 skipped, $n failed" $T/closed.out ||
	fail "a refused push does not count its files failed: $(cat $T/closed.out)"
expect_fail 1 "No such file" cp_ $A/nope $T/out/
expect_fail 1 "No such file" cp_ $A/nope $B/
FERRY_KEY=$T/keys/ro.key expect_fail 1 "may not write" cp_ $T/local/f2 $A/ro.dat
[ ! -e $T/a/ro.dat ] || fail "a read-only key wrote ro.dat"
FERRY_KEY=$T/keys/ro.key expect_fail 1 "may not write" cp_ $A/in/f2 $B/ro.dat
[ ! -e $T/b/ro.dat ] || fail "a read-only key copied ro.dat"
expect_fail 1 "unknown key name" cp_ --key-name nobody $T/local/f2 $A/x.dat
expect_fail 1 "differs" cp_ --key-name ro $T/local/f2 $A/x.dat
ln -s /etc $T/a/etc
expect_fail 1 "refused\|Permission denied" cp_ $A/etc/hostname $T/out/
[ ! -e $T/out/hostname ] || fail "a file outside the export was pulled"
expect_fail 2 "not a ferry URL" cp_ "ferry://127.0.0.1:x/f" $T/out/
expect_fail 2 "both sides are local" cp_ $T/local/f1 $T/out/
expect_fail 2 "drop --dir" $FERRY serve --exports $T/a.conf --dir $T -p $(free_port)
echo "key bad" >> $T/a.conf.tmp
expect_fail 1 "a.conf.tmp:4" $FERRY serve --exports $T/a.conf.tmp -B 127.0.0.1 -p $(free_port)
find $T/a $T/b $T/out -name .ferry | grep -q . && fail "a staging area was left behind: $(find $T/a $T/b $T/out -path '*.ferry*')"

note "interrupted: ferry cp stops the source daemon's push too"
# a slow source (8 KiB socket buffers) so the copy is still running
serve_exports s $T/a.conf --sockbuf 8K; PS=$SPORT
truncate -s 2G $T/a/slow.dat
timeout 60 $FERRY cp --marker 0.2 ferry://127.0.0.1:$PS/slow.dat $B/slow.dat >$T/int.out 2>&1 &
cpid=$!
for _ in $(seq 100); do grep -q " of " $T/int.out && break; sleep 0.1; done
grep -q " of " $T/int.out || fail "no progress marker from the slow copy"
kill -INT $cpid
wait $cpid; rc=$?
cat $T/int.out
[ $rc -eq 1 ] || fail "interrupted ferry cp exited $rc, wanted 1"
grep -q "cancelled" $T/int.out || fail "interrupted ferry cp did not say so"
[ ! -e $T/b/slow.dat ] || fail "an interrupted copy was published"
for _ in $(seq 50); do grep -q "cancelled" $T/s.log && break; sleep 0.1; done
grep -q "failed: cancelled" $T/s.log || { cat $T/s.log; fail "the source daemon did not stop"; }
echo PASS
