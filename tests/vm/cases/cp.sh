# ferry cp over verbs between daemons (`ferry serve --exports`; a guest
# script, tests/vm/run.sh). Daemon A runs on guest a, daemon B on the
# server side (guest b; in one guest, both on the same one). A user on
# guest a, with --transport verbs:
#  - push: a file and a directory to B;
#  - pull: both back from B (B connects back to the user's one-shot
#    receiver);
#  - third-party copy: both from A to B, the data going straight from A
#    to B.
# Every copy is compared with its source, byte for byte; each daemon's log
# must show its transfers over verbs (B: received two, sent one; A: sent
# one).
. "$(dirname "$0")/../glib.sh"

CP=(timeout 120 "$FERRY" cp --key "$KEY" --key-name ops --transport verbs -q)

# daemon NAME PORT: an exports daemon on this guest's address, its root
# $W/NAME, the test's key with every right; its output in $L.NAME.log.
daemon() {
	mkdir -p "$W/$1"
	printf 'root %s\nkey ops %s rights all paths /\n' "$W/$1" "$KEY" >"$W/$1.conf"
	"$FERRY" serve --exports "$W/$1.conf" -p "$2" -B "$VM_IP" -i 0 \
		>"$L.$1.log" 2>&1 &
	PIDS+=($!)
	wait_listen "$2"
}

# same DIR WHAT: DIR holds what the source tree does
same() {
	if tree "$1" | diff "$L.tree" - >&2; then
		echo "ok: $2: identical to the source ($(grep -c '^f ' "$L.tree") files)"
	else
		bad "$2: differs from the source (above: < source, > copy)"
	fi
}

# over_verbs LOG PATTERN N WHAT: LOG holds PATTERN N times
over_verbs() {
	local n
	n=$(grep -c "$2" "$L.$1.log")
	[ "$n" -eq "$3" ] || bad "daemon $1 logged '$2' $n times, wanted $3 ($4)"
}

server() {
	daemon B 7482
	mark servers
	await done 300
	same "$W/B/in" "push to B"
	same "$W/B/tpc" "third-party copy A -> B"
	over_verbs B "receiver over verbs" 2 "the push and the third-party copy"
	over_verbs B "verbs: .* queue pair(s) connected on rxe0 in " 1 "sending the pull"
	grep "session failed" "$L.B.log" && bad "daemon B logged a failed session"
}

client_() {
	mkdir -p "$W/src/tree/sub" "$W/pulled"
	head -c $((3 * 1024 * 1024 + 5)) /dev/urandom >"$W/src/f1"
	head -c 100000 /dev/urandom >"$W/src/tree/sub/x"
	echo hello >"$W/src/tree/y"
	tree "$W/src" >"$L.tree" || fail "cannot list the source"
	daemon A 7481
	cp -a "$W/src" "$W/A/data"
	await servers

	note "push: a file and a directory to B"
	"${CP[@]}" "$W/src/f1" "$W/src/tree" "ferry://$PEER:7482/in/" ||
		bad "push to B failed"
	note "pull: both back from B"
	"${CP[@]}" "ferry://$PEER:7482/in/f1" "ferry://$PEER:7482/in/tree" "$W/pulled/" ||
		bad "pull from B failed"
	same "$W/pulled" "pull from B"
	note "third-party copy: both from A to B"
	"${CP[@]}" "ferry://$VM_IP:7481/data/f1" "ferry://$VM_IP:7481/data/tree" \
		"ferry://$PEER:7482/tpc/" || bad "third-party copy A -> B failed"
	over_verbs A "verbs: .* queue pair(s) connected on rxe0 in " 1 "sending the third-party copy"
	grep "session failed" "$L.A.log" && bad "daemon A logged a failed session"
	mark done
}

roles server client_
