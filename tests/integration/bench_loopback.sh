#!/usr/bin/env bash
# bench over loopback: authenticated sessions of several shapes; every byte
# counted and verified on both sides.
. "$(dirname "$0")/lib.sh"

"$FERRY" keygen "$T/key" >/dev/null || fail "keygen"
port=$(free_port)
"$FERRY" recv --key "$T/key" -p "$port" -B 127.0.0.1 -q >"$T/recv.out" 2>&1 &
PIDS+=($!)
wait_listen "$port"

note "1 GiB over 4 streams, JSON report"
"$FERRY" bench --key "$T/key" -n 1G -P 4 --json 127.0.0.1:"$port" >"$T/a.json" ||
	fail "bench -n 1G"
check_json "$T/a.json" $((1 << 30))

note "odd size, small chunks, 1 stream: the last chunk is partial"
"$FERRY" bench --key "$T/key" -n 10000001 -l 64K -P 1 --slots 8 --json \
	127.0.0.1:"$port" >"$T/b.json" || fail "bench odd size"
check_json "$T/b.json" 10000001

note "time-bound run with text output"
"$FERRY" bench --key "$T/key" -t 2 -i 0.5 -P 2 127.0.0.1:"$port" >"$T/c.txt" ||
	fail "bench -t 2"
cat "$T/c.txt"
[ "$(grep -c '^\[send\] .* Gb/s' "$T/c.txt")" -ge 3 ] || fail "too few interval lines"
grep -q "0 crc errors" "$T/c.txt" || fail "no summary"
grep -q "cpu: this side .* peer" "$T/c.txt" || fail "no CPU figures"

note "--poll busy: the sender spins on its sockets, and says so"
"$FERRY" bench --key "$T/key" -n 64M -P 1 --poll busy --json 127.0.0.1:"$port" \
	>"$T/d.json" || fail "bench --poll busy"
check_json "$T/d.json" $((64 << 20))
grep -q '"poll": "busy"' "$T/d.json" || fail "the report does not say busy polling"
grep -q '"poll": "event"' "$T/a.json" || fail "tcp's default is not reported as event polling"

note "a poll mode that does not exist is refused with the choices"
"$FERRY" bench --key "$T/key" -n 1M --poll sometimes 127.0.0.1:"$port" \
	>"$T/f.out" 2>&1 && fail "--poll sometimes was accepted"
grep -q "busy or event" "$T/f.out" || { cat "$T/f.out"; fail "no usage hint for --poll"; }

note "the receiver served every session"
# its summary follows the session's teardown, which can lag the client's
# exit on a loaded host
for _ in $(seq 300); do
	[ "$(grep -c 'receiver over tcp' "$T/recv.out")" -ge 4 ] && break
	sleep 0.1
done
[ "$(grep -c 'receiver over tcp' "$T/recv.out")" -eq 4 ] || {
	cat "$T/recv.out"; fail "receiver summaries missing"; }
note "recv -J: JSON Lines, one document per session, a failed one with its error"
jport=$(free_port)
"$FERRY" recv --key "$T/key" -p "$jport" -B 127.0.0.1 -J >"$T/recv.jsonl" 2>"$T/recv.jerr" &
PIDS+=($!)
wait_listen "$jport"
"$FERRY" bench --key "$T/key" -n 8M -J 127.0.0.1:"$jport" >"$T/j1.json" || fail "bench -J"
check_json "$T/j1.json" $((8 << 20))
"$FERRY" bench --key "$T/key" -n 4M -q 127.0.0.1:"$jport" >/dev/null || fail "second bench"
"$FERRY" keygen "$T/other" >/dev/null
"$FERRY" bench --key "$T/other" -n 1M -q 127.0.0.1:"$jport" >/dev/null 2>&1 &&
	fail "a wrong key was accepted"
for _ in $(seq 300); do [ "$(wc -l <"$T/recv.jsonl")" -ge 3 ] && break; sleep 0.1; done
python3 - "$T/recv.jsonl" <<'PY' || fail "recv -J is not JSON Lines of the sessions"
import json, sys
docs = [json.loads(ln) for ln in open(sys.argv[1])]
assert len(docs) == 3, f"{len(docs)} lines, want 3"
assert [d["end"]["bytes"] for d in docs[:2]] == [8 << 20, 4 << 20], docs[:2]
assert all("error" not in d for d in docs[:2]), docs[:2]
assert docs[2].get("error"), docs[2]
print(f"ok: 3 JSON lines; the failed session says: {docs[2]['error']}")
PY

note "-b caps the rate: paced chunks never exceed it on average, in any interval"
"$FERRY" bench --key "$T/key" -b 300M -t 2 -J 127.0.0.1:"$jport" >"$T/rate.json" ||
	fail "bench -b 300M"
python3 - "$T/rate.json" <<'PY' || fail "-b 300M was exceeded"
import json, sys
d = json.load(open(sys.argv[1]))
e, cap = d["end"], 300e6
assert e["bytes"] > 0, "nothing moved"
avg = e["bytes"] * 8 / e["seconds"]
assert avg <= cap * 1.02, f"{avg / 1e6:.1f} Mb/s on average over {e['seconds']} s"
# an interval counts a chunk when it is posted: at most one chunk early
for i in d["intervals"]:
    s = i["end"] - i["start"]
    assert i["bytes"] * 8 <= cap * s + 8 * d["start"]["chunk_bytes"], i
print(f"ok: {avg / 1e6:.1f} Mb/s on average under a 300 Mb/s cap")
PY
"$FERRY" bench --key "$T/key" -b 1G --osu lat 127.0.0.1:"$jport" >"$T/rate-osu.out" 2>&1 &&
	fail "-b with --osu was accepted"
"$FERRY" bench --key "$T/key" -b 12 -t 1 127.0.0.1:"$jport" >"$T/rate-bad.out" 2>&1 &&
	fail "-b 12 was accepted"
grep -q "at least 1K" "$T/rate-bad.out" || fail "-b 12: $(cat "$T/rate-bad.out")"

echo "PASS"
