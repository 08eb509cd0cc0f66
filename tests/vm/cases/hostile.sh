# A hostile verbs sender (a guest script, tests/vm/run.sh): verbs_hostile
# opens a real session with a `ferry recv` and then writes
#  - past: a whole chunk just past the end of the advertised ring;
#  - stale: into slot 0 with the rkey of an earlier session's ring.
# Each write must be refused by the RDMA stack (the sender's completion: a
# remote access error), nothing may land (the receiver verified 0 chunks of
# that session), and the session must end with a clear reason, in the
# receiver's log and sent to the sender. The receiver keeps serving: a
# normal bench afterwards passes.
. "$(dirname "$0")/../glib.sh"

HOSTILE=$BUILD/tests/vm/verbs_hostile
REASON="stream 0: remote access outside the registered region after 0 chunks verified"

server() {
	recv hostile 7491 --timeout 5
	mark servers
	await done 300
	local log=$L.hostile.log n
	n=$(grep -c "session failed: $REASON" "$log")
	[ "$n" -eq 2 ] || bad "the receiver ended $n sessions with '$REASON', wanted 2"
	grep -q "queue pair 0: the NIC refused a write of the sender .* and stopped the queue pair" "$log" ||
		bad "the receiver did not say that the NIC stopped the queue pair (past)"
	grep -q "queue pair 0: receive completion failed: remote access error" "$log" ||
		bad "the receiver did not report the refused write's completion (stale)"
	n=$(grep -c "session failed" "$log")
	[ "$n" -eq 2 ] || bad "the receiver logged $n failed sessions, wanted the 2 hostile ones"
	n=$(grep -c "chunks verified, 0 crc errors" "$log")
	[ "$n" -eq 2 ] || bad "the receiver summed up $n good sessions, wanted 2 (stale's first, the bench after)"
	echo "ok: the receiver refused both and named why: $(grep -m1 "session failed" "$log" | sed 's/.*session failed: //')"
}

# hostile MODE: run verbs_hostile; the write refused, the reason back
hostile() {
	local out=$W/$1.out rc i
	for i in 1 2; do
		FERRY_KEY=$KEY timeout 120 "$HOSTILE" "$1" "$PEER" 7491 >"$out" 2>&1
		rc=$?
		[ $rc -eq 3 ] || break # 3: the ring got the old rkey back (1 in 256)
	done
	sed 's/^/   /' "$out"
	[ $rc -eq 0 ] || { bad "($1) the write was not refused as a remote access error (status $rc)"; return; }
	grep -q "^receiver: $REASON" "$out" ||
		bad "($1) the sender was not told why its session ended"
}

client_() {
	await servers
	note "a write just past the end of the ring"
	hostile past
	note "a write with a stale rkey"
	hostile stale
	note "the receiver still serves"
	timeout 120 "$FERRY" bench --key "$KEY" --transport verbs -n 4M -l 1M --slots 4 \
		-P 1 --json "$PEER:7491" >"$W/after.json" 2>"$W/after.err" ||
		bad "a bench after the hostile sessions failed: $(tail -n 3 "$W/after.err")"
	python3 "$CHECK" bench "$W/after.json" $((4 << 20)) 1 busy ||
		bad "the bench after the hostile sessions reported wrong"
	mark done
}

roles server client_
