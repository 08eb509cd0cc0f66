#!/usr/bin/env bash
# File sessions under faults, three files (100 KiB, a big one, 3 MiB),
# 1 MiB chunks, one file at a time:
#  (a) the sender killed -9 mid-file: a part file and a journal are left;
#      the same command again (as --help says) resumes: 'resumed', sent <
#      bytes, identical files;
#  (b) the receiver killed -9 mid-file: the sender fails within its
#      timeout; the receiver restarted, the command again resumes;
#  (c) one bit flipped on the wire (FERRY_FAULT_TCP_FLIP_AT in the
#      sender's environment; builds with test hooks only) in the first chunk, and mid-way through the
#      big file: the session fails naming the checksum (or succeeds
#      intact), nothing corrupted is published, a rerun without the hook
#      completes (resuming the verified chunks);
#  (d) the source replaced between attempts: its journal is not used;
#  (e) a journaled chunk of the part file damaged between attempts: not
#      published, the rerun still ends identical.
# (b)-(e) run with --force throughout, so that the small file published
# before the fault does not stop the rerun ((a) checks the plain command).
# Throughout, a watcher (files_watch.py) lists the destination every few
# milliseconds and checks that whatever it sees under a final name has
# its source's size and contents.
#
# As root the transfers cross a veth pair between two namespaces, shaped
# to 320 Mbit/s so that a kill lands mid-file; otherwise loopback with a
# larger file (and a subcase whose kill came too late is skipped).
. "$(dirname "$0")/files_lib.sh"

MiB=$((1 << 20))
S=$T/src
W=$T/dst              # --dir; case X sends to HOST:/X, so files land in $W/X/src
mkdir -p "$S" "$W"

if [ "$(id -u)" -eq 0 ] && ip netns list >/dev/null 2>&1 && command -v tc >/dev/null; then
	make_pair
	tc -n $NSA qdisc add dev $VETHA root tbf rate 320mbit burst 128kb latency 200ms ||
		fail "tc tbf on $VETHA"
	PRE_S=(ip netns exec $NSA)
	PRE_R=(ip netns exec $NSB)
	ADDR=$IPB
	RNS=$NSB
	BIG_MIB=64
	KILL_DELAY=0.4
	note "over a veth pair shaped to 320 Mbit/s ($IPA -> $IPB)"
else
	PRE_S=()
	PRE_R=()
	ADDR=127.0.0.1
	RNS=
	BIG_MIB=768
	KILL_DELAY=0.15
	note "over loopback, unshaped (not root): kills may come too late"
fi

head -c $((100 * 1024)) /dev/urandom >"$S/a_small"
head -c $((BIG_MIB * MiB)) /dev/urandom >"$S/b_big"
head -c $((3 * MiB + 5)) /dev/urandom >"$S/c_small"

# recv_start PORT LOG: a receiver with --dir $W on ADDR:PORT; sets RPID.
recv_start() {
	"${PRE_R[@]}" "$FERRY" recv --key "$KEY" -p "$1" -B "$ADDR" -i 0 -q \
		--timeout 5 -d "$W" >>"$T/$2.out" 2>>"$T/$2.err" &
	RPID=$!
	PIDS+=($RPID)
	wait_listen "$1" $RNS
}

# send [VAR=VALUE...] -- ARGS...: ferry send (in the sender's namespace),
# 1 MiB chunks, 2 streams, one file at a time; bounded.
SEND_OPTS=(--key "$KEY" -i 0 -q -l 1M -P 2 --files 1 --timeout 5)
send() {
	local envs=()
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	"${PRE_S[@]}" env "${envs[@]}" timeout -k 5 120 "$FERRY" send \
		"${SEND_OPTS[@]}" "$@"
}

# send_bg OUT ERR ARGS...: the same in the background, SPID its ferry's
# own pid (ip netns exec execs it), so that kill -9 hits ferry itself;
# the test's own waits bound it.
send_bg() {
	local out=$1 err=$2
	shift 2
	"${PRE_S[@]}" "$FERRY" send "${SEND_OPTS[@]}" "$@" >"$out" 2>"$err" &
	SPID=$!
	PIDS+=($SPID)
}

# sessions_ended LOG N: wait (5 s at most) until LOG holds N failed-session
# lines: the receiver has let go of the part files of the session it lost.
sessions_ended() {
	local i
	for i in $(seq 100); do
		[ "$(grep -c 'session failed' "$T/$1.err" 2>/dev/null)" -ge "$2" ] && return 0
		sleep 0.05
	done
	note "the receiver logged no end of the lost session within 5 s; going on"
}

# kill_mid CASE PID: once CASE's part file of b_big exists, wait
# KILL_DELAY and kill -9 PID. Returns 0 when the kill caught b_big
# mid-file (its part file there, its final name not).
kill_mid() {
	local c=$W/$1/src i part jrnl
	part=$(staged "$W" "$1/src/b_big" part)
	jrnl=$(staged "$W" "$1/src/b_big" jrnl)
	for i in $(seq 400); do
		[ -e "$part" ] && break
		kill -0 "$2" 2>/dev/null || break
		sleep 0.025
	done
	sleep $KILL_DELAY
	kill -9 "$2" 2>/dev/null
	wait "$2" 2>/dev/null
	if [ -e "$c/b_big" ]; then
		note "SKIPPED ($1): the transfer finished before the kill"
		return 1
	fi
	[ -e "$part" ] || { bad "($1) no staged part file of b_big after the kill: $(ls -AR "$W/.ferry" 2>&1 | paste -sd' ')"; return 1; }
	[ -e "$jrnl" ] || bad "($1) no staged journal of b_big beside its part file"
	echo "killed mid-file: $(( ($(stat -c %s "$jrnl") - 36) / 20 )) chunk records in the journal; published: $(ls "$c" | paste -sd' ')"
	return 0
}

# finals_ok CASE WHAT: every file under a final name below $W/CASE/src is
# its source's contents (whatever else failed).
finals_ok() {
	python3 - "$S" "$W/$1/src" "$2" <<'PY' || bad "$2: a final name holds other data than its source"
import filecmp, os, sys
src, dst, what = sys.argv[1:]
bad = []
for d, _, files in os.walk(dst):
    for n in files:
        p = os.path.join(d, n)
        s = os.path.join(src, os.path.relpath(p, dst))
        if not os.path.exists(s) or not filecmp.cmp(s, p, shallow=False):
            bad.append(os.path.relpath(p, dst))
if bad:
    print(f"FAIL: {what}: differ from their sources: {bad}", file=sys.stderr)
    sys.exit(1)
PY
}

# resumed JSON WHAT: the report's b_big entry is resumed and sent < bytes.
resumed() {
	python3 - "$1" "$2" <<'PY' || bad "$2: b_big was not resumed"
import json, sys
r = json.load(open(sys.argv[1]))
e = [f for f in r["files"] if f["path"] == "src/b_big"][0]
print(f"{sys.argv[2]}: b_big sent {e['sent']} of {e['bytes']} bytes, resumed {e['resumed']}")
assert e["ok"] and e["resumed"] and e["sent"] < e["bytes"], e
PY
}

# json_ok JSON WHAT: a valid report, every file ok
json_ok() {
	python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert all(f["ok"] for f in r["files"]) and len(r["files"]) == 3, r["files"]
' "$1" || bad "$2: the report is not valid or not every file is ok"
}

PORT=$(free_port)
recv_start "$PORT" recv
H=$ADDR:$PORT

note "the watcher catches a short file and a wrong one under final names"
mkdir -p "$T/wself/x/src"
head -c 1000 "$S/a_small" >"$T/wself/x/src/a_small"  # too short
head -c $((3 * MiB + 5)) /dev/zero >"$T/wself/x/src/c_small" # right size, wrong data
mkdir -p "$T/wself/.ferry/ab"
cp "$S/a_small" "$T/wself/.ferry/ab/0123.part" # staged: not a final name
cp "$S/a_small" "$T/wself/x/src/.a_small.ferry-part" # a user's file: a final name
touch "$T/wself.stop"
timeout 60 python3 "$HERE/files_watch.py" "$S" "$T/wself" "$T/wself.stop" "$T/wself.json" ||
	fail "the watcher does not run"
python3 - "$T/wself.json" <<'PY' || fail "the watcher misses planted violations"
import json, sys
v = json.load(open(sys.argv[1]))["violations"]
assert len(v) == 3 and "a_small" in v[0] + v[1] + v[2] and "c_small" in v[0] + v[1] + v[2] \
    and "no source" in " ".join(v), v
print(f"ok: {len(v)} planted violations seen")
PY

python3 "$HERE/files_watch.py" "$S" "$W" "$T/stop" "$T/watch.json" &
WPID=$!
PIDS+=($WPID)
lost=0  # sessions the receiver has lost so far

note "(a) the sender killed mid-file, then the same command again"
send_bg "$T/a1.out" "$T/a1.err" "$S" "$H:/a"
if kill_mid a $SPID; then
	lost=$((lost + 1))
	sessions_ended recv $lost
	finals_ok a "(a) after the kill"
	send -- --json "$S" "$H:/a" >"$T/a2.json" 2>"$T/a2.err"
	rc=$?
	if [ $rc -ne 0 ]; then
		bad "(a) the same command after the interruption failed ($rc), though --help says to run it again to resume: $(head -c 400 "$T/a2.err")"
		note "going on with --force (resume still applies to part files)"
		send -- --json --force "$S" "$H:/a" >"$T/a2.json" 2>"$T/a2.err" ||
			bad "(a) rerun with --force failed: $(head -c 400 "$T/a2.err")"
	fi
	resumed "$T/a2.json" "(a) rerun"
	same_tree "$S" "$W/a/src" || bad "(a) the rerun's files differ"
	no_sidecars "$W" "(a)"
fi

note "(b) the receiver killed mid-file and restarted, then the command again"
PB=$(free_port)
recv_start "$PB" recvb
rbpid=$RPID
send_bg "$T/b1.out" "$T/b1.err" --force "$S" "$ADDR:$PB:/b"
spid=$SPID
if kill_mid b $rbpid; then
	if ! wait_gone $spid 15; then
		bad "(b) the sender still runs 15 s after its receiver died"
		kill -9 $spid 2>/dev/null
	fi
	wait $spid
	rc=$?
	[ $rc -ne 0 ] || bad "(b) the sender exited 0 though its receiver died mid-file"
	echo "sender: rc=$rc: $(tail -n 1 "$T/b1.err")"
	finals_ok b "(b) after the kill"
	recv_start "$PB" recvb
	send -- --force --json "$S" "$ADDR:$PB:/b" >"$T/b2.json" 2>"$T/b2.err" ||
		bad "(b) rerun after the receiver's restart failed: $(head -c 400 "$T/b2.err")"
	resumed "$T/b2.json" "(b) rerun"
	same_tree "$S" "$W/b/src" || bad "(b) the rerun's files differ"
	no_sidecars "$W" "(b)"
else
	kill -9 $spid 2>/dev/null
	wait $spid 2>/dev/null
fi

# corrupt CASE OFFSET WHAT: a bit flipped at stream byte OFFSET of stream
# 0; the transfer fails naming the checksum or succeeds intact; nothing
# corrupted is published; the command without the hook completes.
corrupt() {
	local c=$1 at=$2 what=$3 rc
	send FERRY_FAULT_TCP_FLIP_AT=$at -- --force "$S" "$H:/$c" \
		>"$T/$c.out" 2>"$T/$c.err"
	rc=$?
	if [ $rc -eq 0 ]; then
		note "$what: the transfer succeeded (the flip missed the payload?)"
		grep -q "fault hook on" "$T/$c.err" || bad "$what: the fault hook did not announce itself"
	else
		[ $rc -lt 124 ] || bad "$what: exit status $rc (timed out or killed)"
		grep -qi "checksum\|crc" "$T/$c.err" ||
			bad "$what: failed ($rc) without naming the checksum: $(grep -v 'fault hook' "$T/$c.err" | head -c 400)"
		lost=$((lost + 1))
		sessions_ended recv $lost
		echo "failed loudly: $(grep -v 'fault hook' "$T/$c.err" | paste -sd' ' | head -c 300)"
	fi
	finals_ok $c "$what"
	send -- --force --json "$S" "$H:/$c" >"$T/$c.2.json" 2>"$T/$c.2.err" ||
		bad "$what: the rerun without the hook failed: $(head -c 400 "$T/$c.2.err")"
	json_ok "$T/$c.2.json" "$what: rerun"
	same_tree "$S" "$W/$c/src" || bad "$what: the rerun's files differ"
	no_sidecars "$W" "$what"
}

FRAME=$((24 + 4096))  # a data frame: its header, the chunk header block
if [ "${FERRY_TEST_HOOKS:-1}" != 1 ]; then
	# meson passes FERRY_TEST_HOOKS=0 for a build without test hooks
	note "(c) skipped: this build has no fault hook (meson -Dtest_hooks)"
else
note "(c1) a bit flipped in the first chunk's payload on the wire"
corrupt c1 $((FRAME + 100)) "(c1)"
note "(c2) a bit flipped mid-way through b_big (about 10 MiB into stream 0)"
corrupt c2 $((10 * (FRAME + MiB) + FRAME + MiB / 2)) "(c2)"
python3 - "$T/c2.2.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
e = [f for f in r["files"] if f["path"] == "src/b_big"][0]
print(f"(c2) rerun: b_big sent {e['sent']} of {e['bytes']}, resumed {e['resumed']}")
PY
fi

note "(d) the source changes between attempts: the journal is dropped"
send_bg "$T/d1.out" "$T/d1.err" --force "$S" "$H:/d"
if kill_mid d $SPID; then
	lost=$((lost + 1))
	sessions_ended recv $lost
	[ "$(stat -c %s "$(staged "$W" d/src/b_big jrnl)")" -gt 36 ] ||
		note "(d) the journal holds no chunk yet: this run shows little"
	# same size, other contents, a new mtime; replaced by rename
	cp "$S/b_big" "$T/b_big.new"
	head -c $MiB /dev/urandom | dd of="$T/b_big.new" conv=notrunc status=none
	head -c $MiB /dev/urandom | dd of="$T/b_big.new" bs=1M seek=$((BIG_MIB / 2)) conv=notrunc status=none
	touch -d '2022-02-22 22:22:22.222222222' "$T/b_big.new"
	mv "$T/b_big.new" "$S/b_big"
	send -- --force --json "$S" "$H:/d" >"$T/d2.json" 2>"$T/d2.err" ||
		bad "(d) rerun after the source changed failed: $(head -c 400 "$T/d2.err")"
	python3 - "$T/d2.json" <<'PY' || bad "(d) b_big was resumed from a journal of the old contents"
import json, sys
r = json.load(open(sys.argv[1]))
e = [f for f in r["files"] if f["path"] == "src/b_big"][0]
print(f"(d) rerun: b_big sent {e['sent']} of {e['bytes']}, resumed {e['resumed']}")
assert e["ok"] and not e["resumed"] and e["sent"] == e["bytes"], e
PY
	same_tree "$S" "$W/d/src" || bad "(d) the rerun's files differ from the changed source"
	no_sidecars "$W" "(d)"
fi

note "(e) the part file damaged between attempts (a journaled chunk)"
send_bg "$T/e1.out" "$T/e1.err" --force "$S" "$H:/e"
if kill_mid e $SPID; then
	lost=$((lost + 1))
	sessions_ended recv $lost
	python3 - "$(staged "$W" e/src/b_big part)" <<'PY'
import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(1000); b = f.read(1); f.seek(1000); f.write(bytes([b[0] ^ 0xFF]))
PY
	send -- --force --json "$S" "$H:/e" >"$T/e2.json" 2>"$T/e2.err" ||
		bad "(e) rerun after the part file was damaged failed: $(head -c 400 "$T/e2.err")"
	same_tree "$S" "$W/e/src" || bad "(e) the damaged part file was published"
	no_sidecars "$W" "(e)"
	grep -q "does not match its journal" "$T/recv.err" &&
		echo "the receiver noticed: $(grep "does not match its journal" "$T/recv.err" | tail -n 1)"
fi

note "the watcher"
touch "$T/stop"
wait_gone $WPID 60 || bad "the watcher did not stop within 60 s"
if [ -s "$T/watch.json" ]; then
	python3 - "$T/watch.json" <<'PY' || bad "the watcher saw partial or wrong data under a final name"
import json, sys
w = json.load(open(sys.argv[1]))
print(f"watcher: {w['scans']} scans, {w['hashed']} files hashed, {len(w['violations'])} violations")
for v in w["violations"]:
    print("  " + v)
assert w["scans"] >= 50, "the watcher hardly ran"
assert not w["violations"]
PY
else
	bad "the watcher wrote no report"
fi
finish
