# ferry send of a tree over verbs (a guest script, tests/vm/run.sh):
#  - the tree (an 8 MiB file, a small one, an odd-sized one, an empty
#    one, a subdirectory) arrives byte for byte, every file verified;
#  - (a) the sender killed -9 mid-file: nothing published under the big
#    file's name, its staged part file and journal kept; the same command again
#    resumes it (fewer bytes sent than it has) and the tree is identical,
#    no part file or journal left;
#  - (b) the receiver killed -9 mid-file: the sender fails; the receiver
#    restarted and the command again: the same.
# The interrupted transfers are paced to 8 Mbit/s (-b), so big takes 8 s
# and the kill lands mid-file however fast or slow the host is; the
# reruns go at full speed.
. "$(dirname "$0")/../glib.sh"

D=$W/dst
SEND=(--key "$KEY" --transport verbs -l 256K -P 2 --files 1 -i 0 --timeout 5)
# the interrupted ones: paced (a 256 KiB chunk every 0.26 s), and a stall
# limit (the later --timeout wins) short enough to end well inside
# wait_gone's 30 s if the receiver's death goes unseen
PACED=(-b 8M --timeout 15)

# midfile CASE: until the big file of CASE has a verified chunk in its
# journal in the receiver's staging area (a 36-byte header, then 20 bytes
# a chunk; 32 chunks make the file).
midfile() {
	local j i
	j=$(staged "$D" "$1/src/big" jrnl)
	for i in $(seq 600); do
		[ -f "$j" ] && [ "$(stat -c %s "$j")" -ge 56 ] && return 0
		sleep 0.1
	done
	return 1
}

# interrupted CASE WHO: what a kill mid-file must leave: no big under its
# final name, its part file and journal.
interrupted() {
	local d=$D/$1/src part jrnl
	part=$(staged "$D" "$1/src/big" part)
	jrnl=$(staged "$D" "$1/src/big" jrnl)
	[ -e "$d/big" ] && bad "($1) big was published although its $2 was killed mid-file"
	[ -e "$part" ] && [ -e "$jrnl" ] ||
		bad "($1) no staged part file and journal of big after the $2 was killed: $(ls -AR "$D/.ferry" 2>&1 | paste -sd' ')"
	echo "ok: ($1) the $2 killed mid-file: $((($(stat -c %s "$jrnl") - 36) / 20)) chunks journaled, big not published"
}

# complete CASE: the tree below CASE is the source's; nothing left over.
complete() {
	if tree "$D/$1/src" | diff "$L.tree" - >&2; then
		echo "ok: ($1) the tree arrived identical: $(grep -c '^f ' "$L.tree") files"
	else
		bad "($1) the tree differs from the source (above: < source, > arrived)"
	fi
	find "$D/.ferry" -type f ! -name 'lock.*' 2>/dev/null | grep . &&
		bad "($1) part files or journals left in the staging area"
}

# failed_sessions LOG N: until LOG holds N failed sessions (20 s): the
# receiver has let go of the part files of the session it lost.
failed_sessions() {
	local i
	for i in $(seq 200); do
		[ "$(grep -c 'session failed' "$L.$1.log")" -ge "$2" ] && return 0
		sleep 0.1
	done
	bad "the receiver ($1) logged no end of the session it lost"
}

server() {
	mkdir -p "$D"
	recv plain 7473 -d "$D" --timeout 5
	recv paced-a 7474 -d "$D" --timeout 5
	recv paced-b 7475 -d "$D" --timeout 5
	mark servers

	await sent 300
	complete plain
	mark plain-checked

	midfile a || bad "(a) big never had a verified chunk"
	mark a-mid
	await a-killed
	failed_sessions paced-a 1
	interrupted a sender
	mark a-checked
	await a-done 300
	complete a
	mark a-complete

	midfile b || bad "(b) big never had a verified chunk"
	{ kill -9 "$RPID"; wait "$RPID"; } 2>/dev/null
	interrupted b receiver
	recv again-b 7475 -d "$D" --timeout 5
	mark b-restarted
	await b-done 300
	complete b
	await done 300
}

client_() {
	local spid rc
	mkdir -p "$W/src/sub"
	head -c $((8 << 20)) /dev/urandom >"$W/src/big"
	head -c $(((1 << 20) + 7)) /dev/urandom >"$W/src/odd"
	head -c 12345 /dev/urandom >"$W/src/sub/small"
	: >"$W/src/sub/empty"
	tree "$W/src" >"$L.tree" || fail "cannot list the source"
	await servers

	note "a tree, every byte compared (by the receiver's side)"
	timeout 120 "$FERRY" send "${SEND[@]}" --json "$W/src" "$PEER:7473:/plain" \
		>"$W/plain.json" 2>"$W/plain.err" || bad "ferry send failed: $(tail -n 3 "$W/plain.err")"
	python3 "$CHECK" sent "$W/plain.json" 4 || bad "the report of the plain send is wrong"
	mark sent
	await plain-checked 120

	note "(a) the sender killed -9 mid-file, then the same command again"
	"$FERRY" send "${SEND[@]}" "${PACED[@]}" "$W/src" "$PEER:7474:/a" >"$W/a1.out" 2>&1 &
	spid=$!
	PIDS+=($spid)
	await a-mid 120
	{ kill -9 $spid; wait $spid; } 2>/dev/null
	mark a-killed
	await a-checked
	timeout 120 "$FERRY" send "${SEND[@]}" --json "$W/src" "$PEER:7473:/a" \
		>"$W/a2.json" 2>"$W/a2.err" || bad "(a) the rerun failed: $(tail -n 3 "$W/a2.err")"
	python3 "$CHECK" sent "$W/a2.json" 4 src/big || bad "(a) the rerun did not resume big"
	mark a-done
	await a-complete 120

	note "(b) the receiver killed -9 mid-file and restarted, then the command again"
	"$FERRY" send "${SEND[@]}" "${PACED[@]}" "$W/src" "$PEER:7475:/b" >"$W/b1.out" 2>&1 &
	spid=$!
	PIDS+=($spid)
	await b-restarted 120
	if wait_gone $spid 30; then
		wait $spid
		rc=$?
		[ $rc -ne 0 ] || bad "(b) the sender exited 0 although its receiver died mid-file"
		echo "ok: (b) the sender failed ($rc): $(tail -n 1 "$W/b1.out")"
	else
		bad "(b) the sender still ran 30 s after its receiver died"
	fi
	timeout 120 "$FERRY" send "${SEND[@]}" --json "$W/src" "$PEER:7475:/b" \
		>"$W/b2.json" 2>"$W/b2.err" || bad "(b) the rerun failed: $(tail -n 3 "$W/b2.err")"
	python3 "$CHECK" sent "$W/b2.json" 4 src/big || bad "(b) the rerun did not resume big"
	mark b-done
	mark done
}

roles server client_
