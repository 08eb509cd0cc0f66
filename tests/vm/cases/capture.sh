# A whole verbs session as rxe puts it on the wire, read by ferry rocedump
# (a guest script, tests/vm/run.sh; two guests): guest a captures its
# eth0 (dumpcap, UDP 4791) while it runs one `ferry bench --transport
# verbs` to b, from the connection manager's REQ to the DREP that ends
# it. Then:
#  - ferry rocedump decodes every frame, with a good ICRC, none
#    undecodable: the CM MADs on QP 1, RDMA WRITEs with immediate, the
#    credits' SENDs, ACKs;
#  - the CM handshake and teardown are there by name: REQ, REP, RTU and
#    DREQ, DREP;
#  - tshark (-d udp.port==4791,infiniband) reads the same number of
#    frames, none malformed;
#  - the session ran with --dscp 10: every frame of its QPs, both ways
#    (writes and sends from a, rxe's ACKs from b), carries DSCP 10 in
#    its IPv4 DS field (the CM's MADs on QP 1 are the kernel's own).
. "$(dirname "$0")/../glib.sh"

two || skip "the capture case needs two guests (the wire between them)"
command -v dumpcap >/dev/null || skip "no dumpcap (Debian's tshark package)"

server() {
	recv cap 7471
	mark servers
	await done 300
	grep -q "session failed" "$L.cap.log" && bad "the receiver logged a failed session"
}

client_() {
	local cap=$W/session.pcapng dump=$W/session.dump
	await servers
	dumpcap -i eth0 -f "udp port 4791" -B 64 -w "$cap" >/dev/null 2>"$W/dumpcap.err" &
	local dpid=$!
	PIDS+=($dpid)
	for _ in $(seq 100); do
		grep -q "Capturing on" "$W/dumpcap.err" && break
		sleep 0.1
	done
	note "one verbs session to $PEER, captured"
	timeout 120 "$FERRY" bench --key "$KEY" --transport verbs -n 4M -l 1M \
		--slots 4 -P 2 --dscp 10 --json "$PEER:7471" >"$W/bench.json" 2>"$W/bench.err" ||
		bad "the bench failed: $(tail -n 3 "$W/bench.err")"
	# the CM's DREQ/DREP come after the session's end: until the capture
	# holds the DREP (10 s at most; a read of the file while dumpcap
	# writes it may fail, and is tried again)
	for _ in $(seq 20); do
		"$FERRY" rocedump "$cap" 2>/dev/null | grep -qw "cm DREP" && break
		sleep 0.5
	done
	sleep 0.2
	kill -INT $dpid
	wait_gone $dpid 10 || bad "dumpcap did not stop"
	mark done
	"$FERRY" rocedump "$cap" >"$dump" 2>&1 ||
		bad "ferry rocedump exited $?: $(tail -n 1 "$dump")"
	python3 "$CHECK" dump "$dump" 8 || bad "ferry rocedump's counts"
	for m in REQ REP RTU DREQ DREP; do
		grep -qw "cm $m" "$dump" || bad "no CM $m in the capture: $(grep -c " cm " "$dump") CM MADs"
	done
	n=$(tail -n 1 "$dump" | awk -F', ' '{ print $2 + 0 }')
	"$SRC/tests/tshark-ib.sh" -r "$cap" -T fields \
		-e infiniband.bth.opcode -e _ws.malformed >"$W/session.tshark" 2>/dev/null ||
		bad "tshark cannot read the capture"
	python3 "$CHECK" tshark "$W/session.tshark" "$n" 8 || bad "tshark's reading"
	grep -q '"dscp": 10' "$W/bench.json" || bad "the report does not say DSCP 10"
	"$SRC/tests/tshark-ib.sh" -r "$cap" -T fields -e ip.src \
		-e infiniband.bth.destqp -e ip.dsfield.dscp >"$W/dscp.tshark" 2>/dev/null ||
		bad "tshark cannot read the DS fields"
	# per direction: frames of the session's QPs, and how many of them
	# carry DSCP 10
	awk -v me="$(ip -4 -o addr show eth0 | awk '{ split($4, a, "/"); print a[1] }')" '
		$2 != "0x000001" && $2 != "1" && $2 != "" {
			d = $1 == me ? "out" : "in"; n[d]++; if ($3 == 10) k[d]++
		}
		END { printf "%d %d %d %d\n", n["out"], k["out"], n["in"], k["in"] }' \
		"$W/dscp.tshark" >"$W/dscp.counts"
	read -r no ko ni ki <"$W/dscp.counts"
	[ "$no" -gt 0 ] && [ "$no" = "$ko" ] ||
		bad "DSCP 10 on $ko of the $no frames a sent on the session's QPs"
	[ "$ni" -gt 0 ] && [ "$ni" = "$ki" ] ||
		bad "DSCP 10 on $ki of the $ni frames b sent back on the session's QPs"
	echo "ok: DSCP 10 on all $no frames out and all $ni frames back"
	echo "ok: the whole session: $(tail -n 1 "$dump")"
}

roles server client_
