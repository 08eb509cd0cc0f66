#!/usr/bin/env bash
# gfal2's own command-line tools (gfal-copy, gfal-ls, gfal-stat, gfal-sum,
# gfal-mkdir, gfal-rm) through libgfal_plugin_ferry.so against one ferry
# daemon (ferry recv --exports) on loopback, as a site's user would run
# them: copies both ways with -K ADLER32 (with and without an expected
# value), -n 4, -p and -f, byte for byte; an existing target without -f
# fails with EEXIST and stays as it was; gfal-sum ADLER32 and CRC32C equal
# independent sums; gfal-ls lists what is there; gfal-stat shows the size;
# mkdir (-p), rm and rm -r do what they say on the export; a name with a
# newline, ESC and a tab moves both ways, and an error naming it
# shows it escaped. Errors reach
# gfal's messages with the right errno: a missing path is ENOENT, and a
# read-only key (chosen with FERRY_KEY / FERRY_KEY_NAME, which win over
# the [FERRY] configuration) gets EACCES for a copy to the daemon and for
# gfal-rm, with nothing written or deleted.
. "$(dirname "$0")/gfal_lib.sh"

gfal_setup gfal-copy gfal-ls gfal-stat gfal-sum gfal-mkdir gfal-rm

# g NAME CMD...: a gfal command, bounded; stdout and stderr in $T/NAME.*,
# its status in RC.
g() {
	local name=$1
	shift
	timeout -k 5 60 "$@" >"$T/$name.out" 2>"$T/$name.err"
	RC=$?
}
# ok NAME WHAT: the last command succeeded.
ok() {
	[ $RC -eq 0 ] && return 0
	bad "$2: exit status $RC: $(head -c 600 "$T/$1.err")"
	return 1
}
# refused NAME WHAT TEXT: the last command failed, saying TEXT, from ferry.
refused() {
	if [ $RC -eq 0 ]; then
		bad "$2: succeeded"
		return
	fi
	[ $RC -eq 124 ] && bad "$2: timed out"
	grep -q -- "$3" "$T/$1.err" || bad "$2: stderr does not say '$3': $(head -c 600 "$T/$1.err")"
	echo "refused: $(head -n 1 "$T/$1.err")"
}
snap() { (cd "$1" && find . -printf '%p %s %T@\n' | sort); }
adler() { python3 -c 'import sys, zlib; print("%08x" % zlib.adler32(open(sys.argv[1], "rb").read()))' "$1"; }
crc32c() {
	python3 - "$1" <<'PY'
import sys
t = []
for i in range(256):
    c = i
    for _ in range(8):
        c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
    t.append(c)
crc = 0xFFFFFFFF
for b in open(sys.argv[1], "rb").read():
    crc = t[(crc ^ b) & 0xFF] ^ (crc >> 8)
print("%08x" % (crc ^ 0xFFFFFFFF))
PY
}

# ---- the daemon: a read-write key (from the [FERRY] configuration) and a
# read-only one (from the environment) ---------------------------------
EXP=$T/export
mkdir -p "$EXP" "$T/keys" "$T/src" "$T/out"
"$FERRY" keygen "$T/keys/rw.key" >/dev/null || fail "ferry keygen"
"$FERRY" keygen "$T/keys/ro.key" >/dev/null || fail "ferry keygen"
cat >"$T/exports.conf" <<EOF
root $EXP
key rw $T/keys/rw.key rights all  paths /
key ro $T/keys/ro.key rights read paths /
EOF
# The client's key, by file; its name (rw) comes from the file's name.
echo "KEY=$T/keys/rw.key" >>"$GFAL_CONFIG_DIR/ferry_plugin.conf"

serve_exports daemon "$T/exports.conf" -i 0
PORT=$SPORT DPID=$SPID
U=ferry://127.0.0.1:$PORT

MiB=$((1 << 20))
head -c $((5 * MiB + 123)) /dev/urandom >"$T/src/f1"
head -c $((3 * MiB + 7)) /dev/urandom >"$T/src/f2"
head -c $((2 * MiB)) /dev/urandom >"$T/src/f1b"
head -c 65537 /dev/urandom >"$T/src/small"

note "push: gfal-copy file:// -> ferry://"
g c1 gfal-copy "file://$T/src/f1" "$U/f1"
ok c1 "push" && { cmp -s "$T/src/f1" "$EXP/f1" || bad "push: $EXP/f1 differs from the source"; }

note "push with -K ADLER32 -n 4 -p (the parent made on the daemon)"
g c2 gfal-copy -K ADLER32 -n 4 -p "file://$T/src/f2" "$U/deep/er/f2"
ok c2 "push -K ADLER32 -n 4 -p" &&
	{ cmp -s "$T/src/f2" "$EXP/deep/er/f2" || bad "push -K -n -p: the copy differs"; }

note "push with -K ADLER32:<the right value>, CRC32C:<the right value>, then a wrong one"
g c3 gfal-copy -K "ADLER32:$(adler "$T/src/small")" "file://$T/src/small" "$U/small"
ok c3 "push -K ADLER32:value" && { cmp -s "$T/src/small" "$EXP/small" || bad "push -K value: the copy differs"; }
g c3c gfal-copy -K "CRC32C:$(crc32c "$T/src/small")" "file://$T/src/small" "$U/small.crc"
ok c3c "push -K CRC32C:value" && { cmp -s "$T/src/small" "$EXP/small.crc" || bad "push -K CRC32C: the copy differs"; }
g c3b gfal-copy -K ADLER32:00000001 "file://$T/src/small" "$U/small.bad"
refused c3b "push with a wrong expected adler32" "ferry: checksum mismatch"
[ -e "$EXP/small.bad" ] && bad "a copy whose checksum the user rejected was left at $EXP/small.bad"

note "an existing target without -f: EEXIST, the target unchanged; with -f: replaced"
snap "$EXP" >"$T/before"
g c4 gfal-copy "file://$T/src/f1b" "$U/f1"
refused c4 "push onto an existing file without -f" "File exists"
snap "$EXP" >"$T/after"
cmp -s "$T/before" "$T/after" || bad "a refused copy changed the export"
# gfal-copy refuses by itself above; --just-copy asks the plugin straight
# away, and then ferry's own overwrite policy refuses.
g c4b gfal-copy --just-copy "file://$T/src/f1b" "$U/f1"
refused c4b "push --just-copy onto an existing file" "File exists"
snap "$EXP" >"$T/after"
cmp -s "$T/before" "$T/after" || bad "a refused --just-copy changed the export"
g c5 gfal-copy -f -K ADLER32 "file://$T/src/f1b" "$U/f1"
ok c5 "push -f" && { cmp -s "$T/src/f1b" "$EXP/f1" || bad "push -f: the target was not replaced"; }

note "pull: gfal-copy ferry:// -> file://, with -K ADLER32 -n 4"
g p1 gfal-copy -K ADLER32 -n 4 "$U/deep/er/f2" "file://$T/out/f2"
ok p1 "pull" && { cmp -s "$EXP/deep/er/f2" "$T/out/f2" || bad "pull: the copy differs"; }
g p2 gfal-copy "$U/f1" "file://$T/out/f2"
refused p2 "pull onto an existing local file without -f" "File exists"
cmp -s "$EXP/deep/er/f2" "$T/out/f2" || bad "a refused pull changed the local file"
g p3 gfal-copy -f "$U/f1" "file://$T/out/f2"
ok p3 "pull -f" && { cmp -s "$EXP/f1" "$T/out/f2" || bad "pull -f: the local file was not replaced"; }

note "progress and stages: gfal-copy -v shows the plugin's events and monitor calls"
for dir in push pull; do
	if [ $dir = push ]; then
		g v$dir gfal-copy -v -K ADLER32 "file://$T/src/f1" "$U/v1"
	else
		g v$dir gfal-copy -v -K ADLER32 "$U/v1" "file://$T/out/v1"
	fi
	ok v$dir "gfal-copy -v ($dir)" || continue
	for stage in PREPARE:ENTER PREPARE:EXIT TRANSFER:ENTER TRANSFER:EXIT CHECKSUM:ENTER \
		"CHECKSUM:EXIT.*adler32 $(adler "$T/src/f1")"; do
		grep -q "FERRY.*$stage" "$T/v$dir.out" || bad "gfal-copy -v ($dir): no $stage event: $(grep event "$T/v$dir.out" | head -c 800)"
	done
	# monitor: SRC DST AVERAGE INSTANT BYTES ELAPSED; the last has every byte
	awk '/^monitor:/ {last = $6} END {exit last != '"$(stat -c %s "$T/src/f1")"'}' "$T/v$dir.out" ||
		bad "gfal-copy -v ($dir): no monitor call with all $(stat -c %s "$T/src/f1") bytes: $(grep monitor "$T/v$dir.out" | head -c 600)"
done
cmp -s "$T/src/f1" "$T/out/v1" || bad "gfal-copy -v: the round trip differs"

note "gfal2's API as FTS calls it (no gfal-copy checks first): the plugin's own EEXIST"
"$GFAL_PYTHONBIN" - "file://$T/src/f1b" "$U/f2exists" >"$T/api.out" 2>&1 <<'PY'
import sys
import gfal2
ctx = gfal2.creat_context()
p = ctx.transfer_parameters()
ctx.filecopy(p, sys.argv[1], sys.argv[2])        # creates it
p.overwrite = False
try:
    ctx.filecopy(p, sys.argv[1], sys.argv[2])    # must refuse
except gfal2.GError as e:
    print("refused: %d %s" % (e.code, e.message))
    sys.exit(0 if e.code == 17 and e.message.startswith("ferry: destination") else 1)
print("copied over an existing file without overwrite")
sys.exit(1)
PY
[ $? -eq 0 ] || bad "gfal2 API, overwrite off: $(head -c 600 "$T/api.out")"
cat "$T/api.out"

note "gfal-sum ADLER32 and CRC32C against independent sums"
g s1 gfal-sum "$U/deep/er/f2" ADLER32
want=$(adler "$T/src/f2")
ok s1 "gfal-sum ADLER32" && { grep -qx "$U/deep/er/f2 $want" "$T/s1.out" ||
	bad "gfal-sum ADLER32 says '$(cat "$T/s1.out")', zlib says $want"; }
g s2 gfal-sum "$U/small" CRC32C
want=$(crc32c "$T/src/small")
ok s2 "gfal-sum CRC32C" && { grep -qx "$U/small $want" "$T/s2.out" ||
	bad "gfal-sum CRC32C says '$(cat "$T/s2.out")', python says $want"; }
g s3 gfal-sum "$U/small" MD5
refused s3 "gfal-sum MD5" "not supported"

note "gfal-ls and gfal-stat"
mkdir -p "$EXP/list/sub"
for n in a b.dat c_3 "d-4"; do head -c $RANDOM /dev/urandom >"$EXP/list/$n"; done
g l1 gfal-ls "$U/list"
ok l1 "gfal-ls" && {
	sort "$T/l1.out" >"$T/l1.got"
	ls -A "$EXP/list" | sort >"$T/l1.want"
	cmp -s "$T/l1.got" "$T/l1.want" || bad "gfal-ls lists $(tr '\n' ' ' <"$T/l1.got"), the export has $(tr '\n' ' ' <"$T/l1.want")"
}
g l2 gfal-ls -l "$U/list/"
ok l2 "gfal-ls -l" && { grep -q "$(stat -c %s "$EXP/list/b.dat").* b.dat" "$T/l2.out" ||
	bad "gfal-ls -l does not show b.dat's size: $(head -c 600 "$T/l2.out")"; }
# the daemon's staging area at the root is not listed (nor served)
mkdir -p -m 0700 "$EXP/.ferry/ab"
echo "in flight" >"$EXP/.ferry/ab/0123.part"
g l3 gfal-ls "$U/"
ok l3 "gfal-ls of the root" && { grep -qx ".ferry" "$T/l3.out" &&
	bad "gfal-ls of the root shows the staging area: $(tr '\n' ' ' <"$T/l3.out")"; }
grep -qx "list" "$T/l3.out" || bad "gfal-ls of the root does not list list/: $(tr '\n' ' ' <"$T/l3.out")"
g l4 gfal-stat "$U/.ferry/ab/0123.part"
refused l4 "gfal-stat in the staging area" "staging area"
rm -rf "$EXP/.ferry"
g st1 gfal-stat "$U/f1"
ok st1 "gfal-stat" && { grep -Eq "Size: $(stat -c %s "$EXP/f1")[[:space:]]+regular file" "$T/st1.out" ||
	bad "gfal-stat does not show the size: $(head -c 600 "$T/st1.out")"; }
g st2 gfal-stat "$U/list/sub"
ok st2 "gfal-stat of a directory" && { grep -q "directory" "$T/st2.out" || bad "gfal-stat of a directory: $(head -c 300 "$T/st2.out")"; }
g st3 gfal-stat "$U/no/such/file"
refused st3 "gfal-stat of a missing path" "No such file or directory"

note "gfal-mkdir, gfal-mkdir -p, gfal-rm, gfal-rm -r"
g m1 gfal-mkdir "$U/newdir"
ok m1 "gfal-mkdir" && { [ -d "$EXP/newdir" ] || bad "gfal-mkdir made no directory"; }
g m2 gfal-mkdir -p "$U/a/b/c"
ok m2 "gfal-mkdir -p" && { [ -d "$EXP/a/b/c" ] || bad "gfal-mkdir -p made no a/b/c"; }
g m3 gfal-mkdir "$U/x/y/z"
refused m3 "gfal-mkdir without -p under a missing parent" "No such file or directory"
g r1 gfal-rm "$U/small"
ok r1 "gfal-rm" && { [ -e "$EXP/small" ] && bad "gfal-rm left $EXP/small"; }
g r2 gfal-rm -r "$U/list"
ok r2 "gfal-rm -r" && { [ -e "$EXP/list" ] && bad "gfal-rm -r left $EXP/list: $(ls -R "$EXP/list" | head -c 300)"; }

# (gfal2's python tools pass only UTF-8 names)
note "odd names: a newline, ESC and a tab, copied both ways and stat'ed; errors shown escaped"
odd=$'odd\nname \e[31m\tcaf\xc3\xa9'
head -c 70000 /dev/urandom >"$T/src/$odd"
g o1 gfal-copy "file://$T/src/$odd" "$U/$odd"
ok o1 "gfal-copy of an odd name to the daemon" &&
	{ cmp -s "$T/src/$odd" "$EXP/$odd" || bad "the odd name did not land as itself"; }
g o2 gfal-stat "$U/$odd"
ok o2 "gfal-stat of an odd name" && { grep -q "Size: 70000" "$T/o2.out" || bad "gfal-stat of the odd name: $(head -c 300 "$T/o2.out")"; }
g o3 gfal-copy "$U/$odd" "file://$T/out/$odd"
ok o3 "gfal-copy of an odd name from the daemon" &&
	{ cmp -s "$T/src/$odd" "$T/out/$odd" || bad "the odd name did not come back as itself"; }
g o4 gfal-copy --just-copy "file://$T/src/f1" "$U/$odd"
refused o4 "gfal-copy over an odd name without -f" 'odd\\nname \\x1b\[31m\\tcafé'
LC_ALL=C grep -a -q -P '[\x00-\x09\x0b-\x1f\x7f]' "$T/o4.err" &&
	bad "gfal-copy's error holds a raw control byte: $(od -c "$T/o4.err" | head -5)"

note "the read-only key (FERRY_KEY and FERRY_KEY_NAME win over [FERRY] KEY)"
export FERRY_KEY=$T/keys/ro.key FERRY_KEY_NAME=ro
g ro1 gfal-ls "$U/"
ok ro1 "gfal-ls with the read-only key"
snap "$EXP" >"$T/before"
g ro2 gfal-copy "file://$T/src/f2" "$U/ro_f2"
refused ro2 "a copy to the daemon with the read-only key" "Permission denied"
g ro3 gfal-rm "$U/f1"
refused ro3 "gfal-rm with the read-only key" "Permission denied"
g ro4 gfal-mkdir "$U/ro_dir"
refused ro4 "gfal-mkdir with the read-only key" "Permission denied"
snap "$EXP" >"$T/after"
diff "$T/before" "$T/after" >"$T/diff" || bad "the read-only key changed the export: $(head -c 600 "$T/diff")"
g ro5 gfal-copy "$U/f1" "file://$T/out/ro_f1"
ok ro5 "a pull with the read-only key" && { cmp -s "$EXP/f1" "$T/out/ro_f1" || bad "read-only pull: the copy differs"; }
export FERRY_KEY_NAME=nobody
g ro6 gfal-stat "$U/f1"
refused ro6 "a key name the daemon does not know" "Permission denied"
unset FERRY_KEY FERRY_KEY_NAME

kill -0 $DPID 2>/dev/null || bad "the daemon died: $(tail -c 800 "$T/daemon.log")"
[ ${#FAILS[@]} -gt 0 ] && echo "daemon stderr: $(tail -c 1500 "$T/daemon.log")" >&2
finish
