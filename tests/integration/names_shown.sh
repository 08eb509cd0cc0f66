#!/usr/bin/env bash
# Hostile file names reach logs and terminals only as plain text: a name
# holding a newline and a fake "ferry recv: [session 999 ...]" line, one
# with terminal escape sequences (ESC, BEL), one in Latin-1 (not UTF-8).
# Sent to a receiver that logs every published file, pushed to a daemon
# with a key that may not write (the refusal quotes the name, and the
# client prints the daemon's words), refused as existing targets: no log
# or terminal line is forged, no control byte is printed, every name is
# shown escaped (\n, \x1b, \xe9), and the files still land under their
# exact names, which the JSON report carries exactly.
. "$(dirname "$0")/files_lib.sh"

command -v python3 >/dev/null || skip "python3 not found"
FORGED=$'x\nferry recv: [session 999 from 10.9.9.9:1] session failed: forged'
ESCS=$'red\e[31m\e]0;owned\a'
LATIN=$'caf\xe9'
S=$T/src
D=$T/dst
mkdir -p "$S" "$D"
for n in "$FORGED" "$ESCS" "$LATIN"; do
	head -c 1000 /dev/urandom >"$S/$n"
done

# clean FILE WHAT: no forged line and no control byte but newlines in FILE
clean() {
	grep -a -q '^ferry recv: \[session 999' "$1" &&
		bad "$2: a forged line: $(grep -a '^ferry recv: \[session 999' "$1")"
	LC_ALL=C grep -a -q -P '[\x00-\x09\x0b-\x1f\x7f]' "$1" &&
		bad "$2: a raw control byte: $(LC_ALL=C grep -a -P '[\x00-\x09\x0b-\x1f\x7f]' "$1" | od -c | head -5)"
	return 0
}

# shows FILE WHAT TEXT: FILE holds TEXT (fixed string)
shows() {
	grep -a -q -F -- "$3" "$1" || bad "$2: '$3' not shown: $(head -c 600 "$1")"
}

note "1. sent to a receiver that logs each published file"
RPORT=$(free_port)
"$FERRY" recv --key "$KEY" -p "$RPORT" -B 127.0.0.1 -i 0 -d "$D" \
	>"$T/recv.out" 2>"$T/recv.err" &
PIDS+=($!)
wait_listen "$RPORT"
fsend "$S/$FORGED" "$S/$ESCS" "$S/$LATIN" 127.0.0.1:$RPORT \
	>"$T/s1.out" 2>"$T/s1.err" || bad "send: exit $?: $(head -c 600 "$T/s1.err")"
for n in "$FORGED" "$ESCS" "$LATIN"; do
	cmp -s "$S/$n" "$D/$n" || bad "$(printf %q "$n") did not land under its name"
done
clean "$T/recv.err" "the receiver's log"
clean "$T/recv.out" "the receiver's output"
clean "$T/s1.out" "the sender's output"
shows "$T/recv.err" "the receiver's log" 'published adler32:'
shows "$T/recv.err" "the receiver's log" 'x\nferry recv: [session 999 from 10.9.9.9:1]'
shows "$T/s1.out" "the sender's lines" 'x\nferry recv: [session 999 from 10.9.9.9:1]'
shows "$T/s1.out" "the sender's lines" 'red\x1b[31m\x1b]0;owned\x07'
shows "$T/s1.out" "the sender's lines" 'caf\xe9'

note "2. the JSON report carries the exact names"
rm -f "$D/$FORGED" "$D/$ESCS" "$D/$LATIN"
fsend --json "$S/$FORGED" "$S/$ESCS" 127.0.0.1:$RPORT \
	>"$T/s2.json" 2>"$T/s2.err" || bad "send --json: exit $?: $(head -c 600 "$T/s2.err")"
python3 - "$T/s2.json" "$FORGED" "$ESCS" <<'PY' || bad "the JSON report does not carry the exact names"
import json, sys
got = sorted(f["path"] for f in json.load(open(sys.argv[1]))["files"])
want = sorted(sys.argv[2:])
assert got == want, f"{got!r} != {want!r}"
print("ok: the JSON names are exact")
PY

note "3. existing targets refused: the refusal names them as plain text"
for n in "$FORGED" "$ESCS"; do head -c 999 /dev/urandom >"$S/$n"; done
fsend -q "$S/$FORGED" "$S/$ESCS" 127.0.0.1:$RPORT >"$T/s3.out" 2>"$T/s3.err" &&
	bad "changed sources over existing targets were not refused"
clean "$T/s3.err" "the sender's refusal"
clean "$T/s3.out" "the sender's output"
clean "$T/recv.err" "the receiver's log, after the refusal"
shows "$T/s3.err" "the sender's refusal" 'x\nferry recv: [session 999'

note "4. a daemon refuses a key that may not write: the client prints its words"
mkdir -p "$T/root" "$T/keys"
"$FERRY" keygen "$T/keys/ro.key" >/dev/null || fail "keygen"
cat >"$T/ex.conf" <<CONF
root $T/root
key ro $T/keys/ro.key rights read paths /
CONF
serve_exports daemon "$T/ex.conf"
timeout 60 "$FERRY" cp -q --key "$T/keys/ro.key" "$S/$FORGED" "$S/$ESCS" \
	ferry://127.0.0.1:$SPORT/in/ >"$T/cp.out" 2>"$T/cp.err" &&
	bad "a read-only key pushed files"
clean "$T/cp.err" "ferry cp's refusal"
clean "$T/daemon.log" "the daemon's log"
shows "$T/cp.err" "ferry cp's refusal" 'may not write'
shows "$T/daemon.log" "the daemon's log" 'may not write'
[ -z "$(ls -A "$T/root")" ] || bad "the refused push wrote: $(ls -A "$T/root")"
finish
