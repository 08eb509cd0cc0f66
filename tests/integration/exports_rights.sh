#!/usr/bin/env bash
# The exports file and the delete right, against two daemons on loopback.
# An exports file that group or others may write is refused at start, as
# a key file others may read is (whoever writes it may grant any key any
# right); one others may only read is fine. Replacing an existing file
# (-f, --force) destroys its old content, so it needs the delete right:
# a key with read,write may push and copy new files with -f, but not over
# existing ones, and is told which right it lacks; the old file stays as
# it was. A key with all rights replaces it. Setuid, setgid and sticky
# bits never survive a push, pull or third-party copy through a daemon.
. "$(dirname "$0")/lib.sh"

mkdir -p $T/a $T/b $T/keys $T/src
for k in ops rw; do "$FERRY" keygen $T/keys/$k.key >/dev/null || fail "keygen"; done
for s in a b; do
	cat >$T/$s.conf <<CONF
root $T/$s
key ops keys/ops.key rights all        paths /
key rw  keys/rw.key  rights read,write paths /
CONF
	chmod 0644 $T/$s.conf
done

# refused MODE: `ferry serve` with the exports file in MODE does not start
refused() {
	chmod $1 $T/a.conf
	timeout 10 "$FERRY" serve --exports $T/a.conf -B 127.0.0.1 -p "$(free_port)" \
		>$T/serve.out 2>$T/serve.err
	rc=$?
	[ $rc -eq 1 ] || bad "exports file mode $1: exit $rc, wanted 1: $(head -c 300 $T/serve.err)"
	[ "$(wc -l <$T/serve.err)" -eq 1 ] || bad "exports file mode $1: not one line: $(head -c 300 $T/serve.err)"
	grep -q -F "exports file $T/a.conf is writable by group or others (mode $1); run \`chmod go-w $T/a.conf\`" $T/serve.err ||
		bad "exports file mode $1: $(head -c 300 $T/serve.err)"
	echo "   mode $1 refused: $(head -n 1 $T/serve.err)"
}
note "an exports file that group or others may write is refused"
for m in 0666 0664 0646 0620; do refused $m; done
chmod 0644 $T/a.conf

serve_exports a $T/a.conf; PA=$SPORT
serve_exports b $T/b.conf; PB=$SPORT
A=ferry://127.0.0.1:$PA; B=ferry://127.0.0.1:$PB
head -c 100000 /dev/urandom >$T/src/new.dat
head -c 200000 /dev/urandom >$T/src/old.dat
cp_() { timeout 60 "$FERRY" cp -q "$@"; }

# copies KEY SRC DST WANT THERE WHAT: `ferry cp -f SRC DST` with KEY
# succeeds, and THERE then holds what WANT does
copies() {
	FERRY_KEY=$T/keys/$1.key cp_ -f "$2" "$3" 2>$T/e ||
		bad "$6: $(head -c 400 $T/e)"
	cmp -s "$4" "$5" || bad "$6: $5 does not hold $4"
}

note "read,write: -f to new names is fine"
copies rw $T/src/new.dat $A/in/ $T/src/new.dat $T/a/in/new.dat "push of a new file with -f"
copies rw $A/in/new.dat $B/in/ $T/src/new.dat $T/b/in/new.dat "third-party copy of a new file with -f"

note "read,write: -f over an existing file is refused, naming the right"
echo "old content" >$T/a/in/old.dat
echo "old content" >$T/b/in/old.dat
for how in push tpc; do
	case $how in
	push) src=$T/src/old.dat dst=$A/in/ there=$T/a/in/old.dat ;;
	tpc) src=$A/in/new.dat dst=$B/in/old.dat there=$T/b/in/old.dat ;;
	esac
	FERRY_KEY=$T/keys/rw.key cp_ -f "$src" "$dst" >$T/o 2>$T/e &&
		bad "$how: a read,write key replaced a file with -f"
	[ "$(cat $there)" = "old content" ] || bad "$how: the old file changed"
	grep -q -F "key rw may not delete /in/old.dat: its rights are read,write (replacing an existing file with --force needs the delete right)" $T/e ||
		bad "$how: the refusal does not name the delete right: $(head -c 400 $T/e)"
	echo "   $how refused: $(head -n 1 $T/e)"
done

note "the staging area is nobody's: not listed, not served, not written"
mkdir -p -m 0700 $T/a/.ferry/ab
echo "someone else's data in flight" >$T/a/.ferry/ab/0123.part
for what in "$A/.ferry/ab/0123.part $T/stolen" "$T/src/old.dat $A/.ferry/ab/x.part"; do
	# shellcheck disable=SC2086
	FERRY_KEY=$T/keys/ops.key cp_ $what >$T/o 2>$T/e &&
		bad "a client reached the staging area: ferry cp $what"
	grep -q "staging area" $T/e || bad "refusal does not say why: $(head -c 300 $T/e)"
done
[ -e $T/stolen ] && bad "a staged file was served"
[ "$(cat $T/a/.ferry/ab/0123.part)" = "someone else's data in flight" ] || bad "a staged file was changed"
rm -rf $T/a/.ferry

note "a daemon never keeps setuid, setgid or sticky bits for a client"
mkdir -p $T/src/modes/shared
printf '#!/bin/sh\n' >$T/src/modes/tool
chmod 6755 $T/src/modes/tool
chmod 1777 $T/src/modes/shared
FERRY_KEY=$T/keys/ops.key cp_ $T/src/modes $A/ >$T/o 2>$T/e || bad "pushing modes/ failed: $(head -c 300 $T/e)"
[ "$(stat -c %a $T/a/modes/tool)" = 755 ] || bad "a setuid file pushed to a daemon landed as $(stat -c %a $T/a/modes/tool)"
[ "$(stat -c %a $T/a/modes/shared)" = 777 ] || bad "a sticky directory pushed to a daemon landed as $(stat -c %a $T/a/modes/shared)"
FERRY_KEY=$T/keys/ops.key cp_ $A/modes/tool $B/m/ >$T/o 2>$T/e || bad "copying modes/tool failed: $(head -c 300 $T/e)"
[ "$(stat -c %a $T/b/m/tool)" = 755 ] || bad "a third-party copy landed as $(stat -c %a $T/b/m/tool)"
chmod 4755 $T/a/modes/tool
FERRY_KEY=$T/keys/ops.key cp_ $A/modes/tool $T/pulled_tool >$T/o 2>$T/e || bad "pulling modes/tool failed: $(head -c 300 $T/e)"
[ "$(stat -c %a $T/pulled_tool)" = 755 ] || bad "a pulled setuid file landed as $(stat -c %a $T/pulled_tool)"

note "all rights: -f replaces"
copies ops $T/src/old.dat $A/in/ $T/src/old.dat $T/a/in/old.dat "push over a file with -f, all rights"
copies ops $A/in/old.dat $B/in/ $T/src/old.dat $T/b/in/old.dat "third-party copy over a file with -f, all rights"
finish
