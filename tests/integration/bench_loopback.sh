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

note "the receiver served every session"
sleep 0.3
[ "$(grep -c 'receiver over tcp' "$T/recv.out")" -eq 3 ] || {
	cat "$T/recv.out"; fail "receiver summaries missing"; }
echo "PASS"
