#!/usr/bin/env bash
# Nothing lost, nothing escapes: file sessions against a careless or
# hostile neighbour.
#  1. two senders, different contents, the same target at once (1 MiB
#     chunks, interleaving on loopback): exactly one exits 0, the
#     target is exactly its file, whole, at every moment a watcher looks;
#     the other is told another transfer holds the target, and its other
#     file still lands ("1 of 2 files published, ... 1 failed", exit 1);
#  2. user files named like the staging files of older versions
#     (.x.ferry-part, .x.ferry-journal) are ordinary files: sent, skipped
#     on a rerun, never overwritten, never deleted;
#  3. hard links planted where the receiver stages, pointing outside
#     --dir: nothing outside changes (content, mode, link count);
#  4. setuid, setgid and sticky bits are dropped (kept with --keep-setid);
#  5. names of 250-255 bytes and names with control bytes land beside the
#     others.
. "$(dirname "$0")/files_lib.sh"

MiB=$((1 << 20))
S=$T/src
O=$T/outside
mkdir -p "$S" "$O"

# Over loopback: two senders on one link overlap chunk by chunk there
# (through a shaped veth the first one's flow starves the second's).
PRE_S=()
PRE_R=()
ADDR=127.0.0.1
SIZE=$((64 * MiB))

# recv_ns NAME DIR [ARGS...]: a receiver on ADDR with --dir DIR; RPORT, RPID.
recv_ns() {
	local name=$1 dir=$2
	shift 2
	RPORT=$(free_port)
	"${PRE_R[@]}" "$FERRY" recv --key "$KEY" -p "$RPORT" -B "$ADDR" -i 0 -q \
		-d "$dir" "$@" >"$T/$name.out" 2>"$T/$name.err" &
	RPID=$!
	PIDS+=($RPID)
	wait_listen "$RPORT" "${PRE_R[3]:-}"
}

# ssend ARGS...: ferry send from the sender's side, bounded.
ssend() {
	timeout -k 5 120 "${PRE_S[@]}" "$FERRY" send --key "$KEY" -i 0 -q "$@"
}

note "1. two senders, one target, at once"
D=$T/d1
mkdir -p "$D"
recv_ns r1 "$D"
for who in A B; do
	mkdir -p "$S/$who/run"
	head -c $SIZE /dev/urandom >"$S/$who/run/data"
	head -c 1000 /dev/urandom >"$S/$who/run/only$who"
done
sha() { sha256sum "$1" | cut -d' ' -f1; }
HA=$(sha "$S/A/run/data")
HB=$(sha "$S/B/run/data")
trials=${HOSTILE_TRIALS:-6} wins=0
for t in $(seq $trials); do
	rm -rf "${D:?}/t$t"
	# every version of the target a reader can see, while they run
	python3 - "$D/t$t/run/data" "$T/seen$t" "$T/stop$t" <<'PY' &
import hashlib, os, sys, time
path, out, stop = sys.argv[1:]
seen = set()
end = time.monotonic() + 120
while time.monotonic() < end:
    last = os.path.exists(stop)
    try:
        with open(path, "rb") as f:
            seen.add(hashlib.sha256(f.read()).hexdigest())
    except FileNotFoundError:
        pass
    if last:
        break
    time.sleep(0.002)
open(out, "w").write("\n".join(sorted(seen)) + "\n")
PY
	wpid=$!
	PIDS+=($wpid)
	ssend -l 1M "$S/A/run" "$ADDR:$RPORT:/t$t" >"$T/a$t.out" 2>"$T/a$t.err" &
	apid=$!
	# B a little later in some trials: its chunks then land where A's
	# already did
	sleep "0.0$(( (t * 37) % 6 ))"
	ssend -l 1M "$S/B/run" "$ADDR:$RPORT:/t$t" >"$T/b$t.out" 2>"$T/b$t.err" &
	bpid=$!
	wait $apid; ra=$?
	wait $bpid; rb=$?
	touch "$T/stop$t"
	wait $wpid
	got=$(sha "$D/t$t/run/data" 2>/dev/null)
	[ -n "${HOSTILE_DEBUG:-}" ] && tail -n 3 "$T/a$t.err" "$T/b$t.err" "$T/a$t.out" "$T/b$t.out"
	echo "trial $t: A exit $ra, B exit $rb; published $( [ "$got" = "$HA" ] && echo A || { [ "$got" = "$HB" ] && echo B || echo "neither"; })"
	if [ $ra -eq 0 ] && [ $rb -eq 0 ]; then
		bad "trial $t: both senders report success for one target"
	elif [ $ra -ne 0 ] && [ $rb -ne 0 ]; then
		bad "trial $t: both senders failed: $(tail -n 1 "$T/a$t.err") / $(tail -n 1 "$T/b$t.err")"
	else
		if [ $ra -eq 0 ]; then win=A want=$HA lose=b; else win=B want=$HB lose=a; fi
		wins=$((wins + 1))
		[ "$got" = "$want" ] || bad "trial $t: $win exited 0 but the target is not its file"
		grep -q "another transfer\|published it meanwhile\|exists" "$T/$lose$t.err" ||
			bad "trial $t: the loser's error does not say why: $(tail -n 2 "$T/$lose$t.err" | paste -sd' ')"
		loser=$(echo $lose | tr ab AB)
		# that file alone failed (busy, published by the other
		# meanwhile, or there already when the loser planned): its
		# other file landed all the same
		cmp -s "$S/$loser/run/only$loser" "$D/t$t/run/only$loser" ||
			bad "trial $t: the losing sender's other file did not land"
		grep -q "1 of 2 files published, 0 skipped, 1 failed" "$T/$lose$t.out" ||
			bad "trial $t: the loser's summary: $(grep 'files published' "$T/$lose$t.out")"
	fi
	while read -r h; do
		[ -z "$h" ] || [ "$h" = "$got" ] ||
			bad "trial $t: a reader saw other contents under the target's name ($([ "$h" = "$HA" ] && echo A || { [ "$h" = "$HB" ] && echo B || echo 'a mix'; }))"
	done <"$T/seen$t"
done
echo "$wins of $trials trials had exactly one winner"
no_sidecars "$D" "1."

note "2. user files named like staging files are ordinary files"
D=$T/d2
mkdir -p "$D/in" "$S/n"
head -c 3000 /dev/urandom >"$S/n/x"
head -c 2000 /dev/urandom >"$S/n/.x.ferry-part"
head -c 1000 /dev/urandom >"$S/n/.x.ferry-journal"
head -c 500 /dev/urandom >"$S/q"
head -c 700 /dev/urandom >"$D/in/.q.ferry-part"      # the user's own
cp "$D/in/.q.ferry-part" "$T/q-part.orig"
recv_ns r2 "$D"
for run in 1 2 3; do
	ssend --json "$S/n" "$ADDR:$RPORT:/in" >"$T/n$run.json" 2>"$T/n$run.err" ||
		bad "2. run $run failed: $(tail -n 1 "$T/n$run.err")"
done
same_tree "$S/n" "$D/in/n" || bad "2. the tree with staging-like names did not arrive intact"
python3 - "$T/n3.json" <<'PY' || bad "2. the third run did not skip every file as identical"
import json, sys
r = json.load(open(sys.argv[1]))
assert len(r["files"]) == 3 and all(f["ok"] and f["skipped"] for f in r["files"]), r["files"]
PY
ssend "$S/q" "$ADDR:$RPORT:/in" >"$T/q.out" 2>"$T/q.err" || bad "2. sending q failed: $(tail -n 1 "$T/q.err")"
cmp -s "$S/q" "$D/in/q" || bad "2. q did not arrive"
cmp -s "$T/q-part.orig" "$D/in/.q.ferry-part" || bad "2. sending q changed or removed the user's .q.ferry-part"
no_sidecars "$D" "2."

note "3. hard links planted in the staging area do not carry writes outside"
D=$T/d3
mkdir -p "$D/h" "$S/h"
printf 'outside: keep me\n' >"$O/victim"
printf 'outside: keep me too\n' >"$O/victim2"
chmod 0640 "$O/victim" "$O/victim2"
head -c $((3 * MiB)) /dev/urandom >"$S/h/a"     # several chunks: a journal
head -c 100 /dev/urandom >"$S/h/b"
ln "$O/victim" "$D/h/.a.ferry-part"          # the old layout's name
part=$(staged "$D" h/a part)
jrnl=$(staged "$D" h/a jrnl)
mkdir -p -m 0700 "$D/.ferry"
mkdir -p -m 0700 "$(dirname "$part")" "$(dirname "$(staged "$D" h/b part)")"
ln "$O/victim" "$part"
ln "$O/victim2" "$jrnl"
ln "$O/victim2" "$(staged "$D" h/b part)"
outside() { stat -c '%s %a %Y' "$O/victim" "$O/victim2"; sha256sum "$O"/victim*; }
before=$(outside)
recv_ns r3 "$D"
ssend -l 1M --force "$S/h/a" "$S/h/b" "$ADDR:$RPORT:/h" >"$T/h.out" 2>"$T/h.err" ||
	bad "3. the send failed: $(tail -n 1 "$T/h.err")"
cmp -s "$S/h/a" "$D/h/a" && cmp -s "$S/h/b" "$D/h/b" || bad "3. the files did not arrive intact"
after=$(outside)
[ "$before" = "$after" ] || bad "3. a file outside --dir changed: before: $before; after: $after"
# the planted links are gone from the staging area (the old layout's
# name is a user file like any other: it stays)
[ "$(stat -c %h "$O/victim")" = 2 ] && [ "$(stat -c %h "$O/victim2")" = 1 ] ||
	bad "3. links to the outside are left in the staging area: $(stat -c '%n %h' "$O"/victim*)"
no_sidecars "$D" "3."

note "4. setuid, setgid and sticky bits"
D=$T/d4
mkdir -p "$D" "$S/m/shared"
printf '#!/bin/sh\n' >"$S/m/tool"
chmod 6755 "$S/m/tool"
chmod 1777 "$S/m/shared"
recv_ns r4 "$D"
ssend "$S/m" "$ADDR:$RPORT:/" >"$T/m.out" 2>"$T/m.err" || bad "4. the send failed: $(tail -n 1 "$T/m.err")"
[ "$(stat -c %a "$D/m/tool")" = 755 ] || bad "4. a setuid/setgid file landed as $(stat -c %a "$D/m/tool"), not 755"
[ "$(stat -c %a "$D/m/shared")" = 777 ] || bad "4. a sticky directory landed as $(stat -c %a "$D/m/shared"), not 777"
D=$T/d4k
mkdir -p "$D"
recv_ns r4k "$D" --keep-setid
ssend "$S/m" "$ADDR:$RPORT:/" >"$T/mk.out" 2>"$T/mk.err" || bad "4. the send with --keep-setid failed"
[ "$(stat -c %a "$D/m/tool")" = 6755 ] || bad "4. --keep-setid: the file landed as $(stat -c %a "$D/m/tool")"
[ "$(stat -c %a "$D/m/shared")" = 1777 ] || bad "4. --keep-setid: the directory landed as $(stat -c %a "$D/m/shared")"

note "5. long names and control bytes"
D=$T/d5
mkdir -p "$D" "$S/long"
n255=$(printf 'L%.0s' $(seq 255))
n250=$(printf 'M%.0s' $(seq 250))
printf 'a' >"$S/long/$n255"
printf 'b' >"$S/long/$n250"
printf 'c' >"$S/long/plain"
printf 'd' >"$S/long/$(printf 'ctl\001\033[31m\tname\r')"
printf 'e' >"$S/long/$(printf 'new\nline')"
recv_ns r5 "$D"
ssend "$S/long" "$ADDR:$RPORT:/" >"$T/l.out" 2>"$T/l.err" ||
	bad "5. long or odd names failed: $(tail -n 2 "$T/l.err" | paste -sd' ')"
same_tree "$S/long" "$D/long" || bad "5. the files with long or odd names did not all land"
no_sidecars "$D" "5."
grep -q $'\033' "$T/l.out" "$T/l.err" "$T/r5.err" && bad "5. an ESC byte from a file name reached the output raw"

finish
