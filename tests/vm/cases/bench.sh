# ferry bench over verbs on rxe (a guest script, tests/vm/run.sh): 16 MiB
# over 1 and 4 queue pairs, with both sides busy polling and with both
# sides in event mode (completion channels), each report checked (verbs,
# the QPs and poll mode asked, every byte counted by the receiver, no crc
# error); then --osu lat and --osu bw (the receiver writes back: duplex),
# every message of every size accounted for. The receivers' own logs must
# say verbs and the poll mode, and show no failed session. (The message
# tests poll one mode each: --osu lat busy, --osu bw in event mode.)
# Last, a session capped at -b 40M: never more than one chunk ahead of
# the cap, and
# the sender says how the cap is held (the device's QP rate limit, or,
# where rxe has none, the pipeline's pacing of chunks).
. "$(dirname "$0")/../glib.sh"

server() {
	recv busy 7471 --poll busy
	recv event 7472 --poll event
	mark servers
	await done 600
	note "the receivers' side"
	n=$(grep -c "receiver over verbs (verbs as asked; busy polling)" "$L.busy.log")
	[ "$n" -eq 5 ] || bad "the busy receiver reported $n verbs sessions with busy polling, wanted 5 (3 bench, 2 osu)"
	n=$(grep -c "receiver over verbs (verbs as asked; event polling)" "$L.event.log")
	[ "$n" -eq 2 ] || bad "the event receiver reported $n verbs sessions with event polling, wanted 2"
	n=$(cat "$L.busy.log" "$L.event.log" | grep -c "chunks verified, 0 crc errors")
	[ "$n" -eq 7 ] || bad "the receivers summed up $n sessions without crc errors, wanted 7"
	grep -h "session failed" "$L.busy.log" "$L.event.log" && bad "a receiver logged a failed session"
	echo "ok: the receivers served every session over verbs in the poll mode asked"
}

client_() {
	await servers
	for poll in busy event; do
		port=7471
		[ $poll = event ] && port=7472
		for P in 1 4; do
			note "16 MiB over $P QP(s), $poll polling, to $PEER"
			j=$W/bench.$poll.$P.json
			if timeout 120 "$FERRY" bench --key "$KEY" --transport verbs \
				-n 16M -l 1M --slots 16 -P $P --poll $poll --json \
				"$PEER:$port" >"$j" 2>"$j.err"; then
				python3 "$CHECK" bench "$j" $((16 << 20)) $P $poll ||
					bad "bench -P $P --poll $poll: the report is wrong"
			else
				bad "bench -P $P --poll $poll failed: $(tail -n 3 "$j.err")"
			fi
		done
	done
	# The message path in both modes, one each. Few messages: a round
	# trip between two guests under TCG costs tens of ms.
	for mode in lat bw; do
		opoll=busy
		[ $mode = bw ] && opoll=event
		note "--osu $mode, 1 B to 16 KiB, $opoll polling"
		c=$W/osu.$mode.csv
		if timeout 120 "$FERRY" bench --key "$KEY" --transport verbs \
			--osu $mode --sizes 1-16K --iters 5 --window 16 --poll $opoll \
			--csv "$PEER:7471" >"$c" 2>"$c.err"; then
			python3 "$CHECK" osu "$c" $mode 1-16384 $opoll ||
				bad "--osu $mode: the table is wrong"
		else
			bad "--osu $mode failed: $(tail -n 3 "$c.err")"
		fi
	done
	note "-b 40M for 4 s over 2 QPs: never above the cap"
	j=$W/bench.capped.json
	if timeout 120 "$FERRY" bench --key "$KEY" --transport verbs -t 4 \
		-b 40M -l 1M --slots 16 -P 2 --poll busy -v --json \
		"$PEER:7471" >"$j" 2>"$j.err"; then
		python3 - "$j" <<'PY' || bad "the capped session went above its cap"
import json, sys
# the pipeline spaces chunks at the cap: the first goes at once, so
# the session may be one chunk (1 MiB) ahead of the cap, never more
e = json.load(open(sys.argv[1]))["end"]
bps = e["bytes"] * 8 / e["seconds"]
most = 40e6 / 8 * e["seconds"] * 1.02 + (1 << 20)
print(f"capped: {e['bytes']} bytes in {e['seconds']:.2f} s, {bps / 1e6:.1f} Mb/s "
      f"of 40 (at most {most:.0f} bytes: the cap and one chunk)")
sys.exit(0 if 0 < e["bytes"] <= most else 1)
PY
		grep -q "limited to 40000 kb/s by the device\|has no queue pair rate limit" "$j.err" ||
			bad "the sender did not say how its cap is held"
	else
		bad "bench -b 40M failed: $(tail -n 3 "$j.err")"
	fi
	mark done
}

roles server client_
