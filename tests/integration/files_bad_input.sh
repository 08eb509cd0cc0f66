#!/usr/bin/env bash
# File sessions, bad input: each case gets one clear line on stderr (runs
# use -q, so no info lines), a non-zero exit, and writes NOTHING: the
# receiver's --dir is the same before and after (every entry, mode, size,
# mtime, inode, contents), nothing appears beside --dir, and nothing
# appears where a symlink inside --dir points. (An existing target in a
# tree is the exception: that file alone fails, the rest lands.)
. "$(dirname "$0")/files_lib.sh"

MiB=$((1 << 20))
"$FERRY" keygen "$T/other" >/dev/null || fail "keygen"
R=$T/r/dir            # the receiver's --dir
E=$T/elsewhere        # outside it; symlinks in --dir point here
S=$T/s                # sources
mkdir -p "$R" "$E" "$S"

# What --dir holds before the cases: a target that exists, a directory,
# symlinks leading out.
printf 'old contents\n' >"$R/exists"
mkdir "$R/adir"
ln -s "$E" "$R/link"
ln -s "$E/flink" "$R/flink"
printf 'new contents\n' >"$S/exists"
printf 'a file\n' >"$S/ok"
printf 'a file\n' >"$S/adir"
printf 'a file\n' >"$S/flink"
mkdir -p "$S/link/inner" "$S/tree/newsub/deeper" "$S/withfifo"
printf 'x\n' >"$S/link/inner/f"
printf 'y\n' >"$S/tree/newsub/deeper/f"
printf 'z\n' >"$S/tree/exists"
mkdir -p "$R/tree"
printf 'old\n' >"$R/tree/exists"
printf 'w\n' >"$S/withfifo/a"
mkfifo "$S/withfifo/pipe" "$S/fifo"

start_recv recv "$R"
H=127.0.0.1:$RPORT
WATCHED=$R

# unchanged WHAT: --dir as it was (snapshot $T/before), nothing beside it,
# nothing where its symlinks point.
unchanged() {
	snap "$WATCHED" >"$T/after"
	diff "$T/before" "$T/after" >"$T/diff" ||
		bad "$1: the receiver's --dir changed: $(grep '^[<>]' "$T/diff" | head -n 8 | paste -sd' ')"
	[ "$(ls -A "$T/r")" = dir ] || bad "$1: something appeared beside --dir: $(ls -A "$T/r" | paste -sd' ')"
	[ -z "$(ls -A "$E")" ] || bad "$1: something appeared outside --dir, in $E: $(ls -A "$E" | paste -sd' ')"
}

# refuse WHAT PATTERN CMD...: non-zero exit, exactly one line on stderr,
# matching PATTERN, and nothing written.
refuse() {
	local what=$1 pat=$2 rc n nfails=${#FAILS[@]}
	shift 2
	snap "$WATCHED" >"$T/before"
	"$@" >"$T/out" 2>"$T/err"
	rc=$?
	n=$(wc -l <"$T/err")
	if [ $rc -eq 0 ]; then
		bad "$what: exit status 0"
	elif [ $rc -ge 124 ]; then
		bad "$what: exit status $rc (timed out or killed)"
	fi
	[ "$n" -eq 1 ] || bad "$what: $n lines on stderr, not 1: $(head -c 600 "$T/err")"
	grep -Eq -e "$pat" "$T/err" || bad "$what: stderr does not match /$pat/: $(head -c 600 "$T/err")"
	unchanged "$what"
	printf '%-4s %-46s rc=%d  %s\n' "$([ ${#FAILS[@]} -eq $nfails ] && echo ok || echo BAD)" \
		"$what" $rc "$(head -n 1 "$T/err")"
}

note "sources that cannot be sent"
refuse "missing source" "nope: no such file or directory" \
	fsend -q "$T/nope" "$H"
refuse "a missing source among good ones" "nope: no such file or directory" \
	fsend -q "$S/ok" "$T/nope" "$H"
refuse "a FIFO as source" "fifo.*(special|regular)|special.*fifo" \
	fsend -q "$S/fifo" "$H"
refuse "a FIFO inside a directory" "pipe.*(special|fifo)" \
	fsend -q "$S/withfifo" "$H"
refuse "a character device as source" "null.*(special|character device)" \
	fsend -q /dev/null "$H"
refuse "two arguments that arrive as one name" "both arrive as 'ok'" \
	fsend -q "$S/ok" "$S/link/../ok" "$H"

note "unreadable sources (the sender as nobody)"
nob=$T/nob
if [ "$(id -u)" -ne 0 ]; then
	mkdir "$nob"
	cp "$KEY" "$nob/key"
	printf 'secret\n' >"$nob/secret"
	chmod 000 "$nob/secret"
	if [ -r "$nob/secret" ]; then
		note "SKIPPED unreadable files: this user reads mode 000 files"
	else
		refuse "an unreadable file" "secret: permission denied" \
			timeout -k 5 120 "$FERRY" send --key "$nob/key" -q -i 0 "$nob/secret" "$H"
	fi
elif ! command -v setpriv >/dev/null; then
	note "SKIPPED unreadable files: no setpriv to drop root"
else
	chmod 0711 "$T"   # nobody may pass through to $nob, not read $T
	mkdir -m 0755 "$nob" "$nob/tree" "$nob/closed"
	cp "$KEY" "$nob/key"
	chown 65534:65534 "$nob/key"
	chmod 0600 "$nob/key"
	printf 'secret\n' >"$nob/secret"
	chmod 0600 "$nob/secret"  # root's
	printf 'fine\n' >"$nob/tree/fine"
	printf 'secret\n' >"$nob/tree/secret"
	chmod 0600 "$nob/tree/secret"
	printf 'inside\n' >"$nob/closed/f"
	chmod 0700 "$nob/closed"
	AS=(setpriv --reuid=65534 --regid=65534 --clear-groups)
	if ! "${AS[@]}" timeout 10 "$FERRY" send --help >/dev/null 2>&1 ||
	   ! "${AS[@]}" test -r "$nob/key" ||
	   "${AS[@]}" test -r "$nob/secret"; then
		note "SKIPPED unreadable files: cannot run ferry as nobody with a readable key here"
	else
		NS=("${AS[@]}" timeout -k 5 120 "$FERRY" send --key "$nob/key" -q -i 0)
		refuse "an unreadable file" "secret: permission denied" \
			"${NS[@]}" "$nob/secret" "$H"
		refuse "an unreadable file in a tree" "tree/secret: permission denied" \
			"${NS[@]}" "$nob/tree" "$H"
		refuse "an unreadable directory" "closed: permission denied" \
			"${NS[@]}" "$nob/closed" "$H"
	fi
	chmod 0700 "$T"
fi

note "destinations outside --dir"
refuse "HOST:/../x" "outside|not a plain path" \
	fsend -q "$S/ok" "$H:/../x"
refuse "HOST:/a/../../x" "outside|not a plain path" \
	fsend -q "$S/ok" "$H:/a/../../x"
refuse "HOST:/link/x, link -> outside" "link.*(outside|symlink)" \
	fsend -q "$S/ok" "$H:/link/x"
refuse "HOST:/link, link -> outside" "link.*(outside|symlink)" \
	fsend -q "$S/ok" "$H:/link"
refuse "a directory arriving onto a symlink" "link.*(outside|symlink)" \
	fsend -q "$S/link" "$H"
refuse "a file arriving onto a symlink, --force" "flink.*(symlink|not a regular file|outside)" \
	fsend -q --force "$S/flink" "$H"

# counted OUT N: the summary counts N files, all failed (the session was
# refused before any was published)
counted() {
	grep -q "^0 of $2 files published, 0 skipped, $2 failed" "$T/out" ||
		bad "the summary does not count $2 failed file(s): $(head -c 300 "$T/out")"
}

note "existing targets"
refuse "an existing target without --force" "exists.*--force" \
	fsend -q "$S/exists" "$H"
counted "$T/out" 1
# an existing target in a tree fails alone: the rest of the tree lands,
# the target keeps its old contents
fsend -q "$S/tree" "$H" >"$T/tree.out" 2>"$T/tree.err"
rc=$?
[ $rc -ne 0 ] || bad "an existing target in a tree: exit status 0"
[ "$(wc -l <"$T/tree.err")" -eq 1 ] && grep -q "tree/exists: it exists.*--force" "$T/tree.err" ||
	bad "an existing target in a tree: want one line naming it and --force: $(head -c 400 "$T/tree.err")"
[ "$(cat "$R/tree/exists")" = old ] || bad "an existing target in a tree: it was changed"
cmp -s "$S/tree/newsub/deeper/f" "$R/tree/newsub/deeper/f" ||
	bad "an existing target in a tree: the other files did not land"
grep -q "1 of 2 files published, 0 skipped, 1 failed" "$T/tree.out" ||
	bad "an existing target in a tree: the summary: $(tail -n 1 "$T/tree.out")"
rm -rf "$R/tree/newsub"
refuse "a directory where a file would land" "adir.*(not a regular file|directory)" \
	fsend -q --force "$S/adir" "$H"

note "keys"
refuse "a wrong key" "authentication failed" \
	timeout -k 5 120 "$FERRY" send --key "$T/other" -q -i 0 "$S/ok" "$H"

note "a receiver without --dir"
mkdir "$T/cwd"
nport=$(free_port)
env -C "$T/cwd" "$FERRY" recv --key "$KEY" -p "$nport" -B 127.0.0.1 -i 0 -q \
	>"$T/nodir.out" 2>"$T/nodir.err" &
PIDS+=($!)
wait_listen "$nport"
WATCHED=$T/cwd
refuse "a receiver without --dir" "without --dir" \
	fsend -q "$S/ok" "127.0.0.1:$nport"
WATCHED=$R

note "a receiver file system too small (tmpfs, 8 MiB)"
if [ "$(id -u)" -ne 0 ]; then
	note "SKIPPED the small file system: mounting tmpfs needs root"
elif ! mkdir "$T/small" || ! mount -t tmpfs -o size=8m,mode=0755 tmpfs "$T/small"; then
	note "SKIPPED the small file system: cannot mount a tmpfs here"
else
	MOUNTS+=("$T/small")
	mkdir -p "$S/big20/sub"
	head -c $((20 * MiB)) /dev/urandom >"$S/big20/sub/twenty"
	cp "$S/big20/sub/twenty" "$S/twenty"
	start_recv small "$T/small"
	WATCHED=$T/small
	refuse "20 MB onto 8 MiB free" "space.*(MiB|MB)|(MiB|MB).*space" \
		fsend -q "$S/twenty" "127.0.0.1:$RPORT"
	refuse "a 20 MB tree onto 8 MiB free (no directories made)" "space.*(MiB|MB)|(MiB|MB).*space" \
		fsend -q "$S/big20" "127.0.0.1:$RPORT"
	refuse "20 MB to HOST:/new/sub onto 8 MiB (no directories made)" "space.*(MiB|MB)|(MiB|MB).*space" \
		fsend -q "$S/twenty" "127.0.0.1:$RPORT:/new/sub"
	WATCHED=$R
fi

note "the receiver is still serving"
fsend -q "$S/ok" "$H:/after" >"$T/out" 2>"$T/err" ||
	bad "a good send after the bad ones failed: $(head -c 600 "$T/err")"
cmp -s "$S/ok" "$R/after/ok" || bad "a good send after the bad ones: $R/after/ok differs or is missing"
finish
