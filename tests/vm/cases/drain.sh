# A ring that takes longer than --timeout to drain (a guest script for two
# guests, tests/vm/run.sh). Guest a's link is held to 40 Mbit/s (netem on
# its eth0), and a sender with a 16 MiB ring (16 slots of 1 MiB, one QP)
# and --timeout 2 sends 24 MiB: it posts the whole ring at once, and the
# last 16 MiB take at least 3.3 s to cross while each credit comes back
# within a fraction of a second (a chunk a 0.2 s: a stall of the guest's
# CPU under TCG has ten times that before the timeout). The sender's
# waits must count from its last progress, so the session completes,
# every chunk verified. (When the drain deadline was set once, it failed
# with "the peer did not answer in time".)
. "$(dirname "$0")/../glib.sh"

two || fail "drain needs two guests (run.sh two drain)"

server() {
	recv drain 7495
	mark servers
	await done 300
	grep "session failed" "$L.drain.log" && bad "the receiver logged a failed session"
	grep -q "24.00 MiB .* 24 chunks verified, 0 crc errors" "$L.drain.log" ||
		bad "the receiver did not verify the 24 chunks"
}

client_() {
	tc qdisc add dev eth0 root netem rate 40mbit limit 100000 ||
		fail "cannot shape eth0 (tc netem)"
	await servers
	note "24 MiB through a 16 MiB ring at 40 Mbit/s, --timeout 2"
	timeout 120 "$FERRY" bench --key "$KEY" --transport verbs -n 24M -l 1M \
		--slots 16 -P 1 --timeout 2 -i 0 --json "$PEER:7495" \
		>"$W/drain.json" 2>"$W/drain.err" ||
		bad "the session failed: $(tail -n 3 "$W/drain.err")"
	python3 "$CHECK" bench "$W/drain.json" $((24 << 20)) 1 busy ||
		bad "the report is wrong"
	# what makes the case: the drain alone outlasts the timeout (16 MiB
	# at 40 Mbit/s is 3.4 s), so the session must have taken longer
	python3 -c 'import json, sys; s = json.load(open(sys.argv[1]))["end"]["seconds"]; sys.exit(s < 3.3)' \
		"$W/drain.json" || bad "the session took under 3.3 s: the link was not held to 40 Mbit/s"
	tc qdisc del dev eth0 root # for the scripts after this one
	mark done
}

roles server client_
