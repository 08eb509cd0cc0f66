#!/usr/bin/env bash
# Peers that connect and never speak get a bounded share of a receiver
# and cannot keep a real client out. 120 such connections to a `ferry recv`
# on loopback, held open: 60 from 127.0.0.1 (over the share one address
# may hold) and 60 from 127.0.0.2-13 (over the share all may hold). Then
# a real `ferry bench` from 127.0.0.1 must succeed, in about the time a
# bench took without them (measured first, in the same run; generous
# slack for a loaded host), and every silent connection must be closed
# by the receiver within the first-byte deadline (3 s) plus slack, each
# with one log line saying why. The receiver serves on afterwards.
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || skip "python3 not found"
"$FERRY" keygen "$T/key" >/dev/null || fail "keygen"
port=$(free_port)
"$FERRY" recv --key "$T/key" -p "$port" -B 127.0.0.1 -i 0 -q \
	>"$T/recv.out" 2>"$T/recv.err" &
PIDS+=($!)
rpid=$!
wait_listen "$port"

SLACK=7 # seconds, for a loaded 2-CPU host
bench() { timeout 60 "$FERRY" bench --key "$T/key" -n 64M -P 2 -i 0 -q "127.0.0.1:$port"; }
secs() { python3 -c "import time; print(time.monotonic())"; }

note "a bench with no silent peers: the baseline"
t0=$(secs)
bench >"$T/base.out" 2>&1 || fail "the baseline bench failed: $(cat "$T/base.out")"
base=$(python3 -c "print($(secs) - $t0)")
echo "baseline: $base s"

note "120 silent connections, held open"
python3 - "$port" "$T/ready" "$T/silent.json" <<'PY' &
import json, selectors, socket, sys, time
port, ready, out = int(sys.argv[1]), sys.argv[2], sys.argv[3]
sources = ["127.0.0.1"] * 60 + [f"127.0.0.{2 + i % 12}" for i in range(60)]
sel = selectors.DefaultSelector()
t_conn, failed = {}, 0
for src in sources:
    s = socket.socket()
    s.settimeout(10)
    try:
        s.bind((src, 0))
        s.connect(("127.0.0.1", port))
    except OSError:
        failed += 1
        s.close()
        continue
    s.setblocking(False)
    t_conn[s] = time.monotonic()
    sel.register(s, selectors.EVENT_READ)
open(ready, "w").write(f"{len(t_conn)}\n")
held = {}
end = time.monotonic() + 40
while t_conn.keys() - held.keys() and time.monotonic() < end:
    for key, _ in sel.select(timeout=0.5):
        s = key.fileobj
        try:
            data = s.recv(4096)
        except OSError:
            data = b""
        if not data:
            held[s] = time.monotonic() - t_conn[s]
            sel.unregister(s)
            s.close()
json.dump({"connected": len(t_conn), "failed": failed,
           "closed": len(held), "longest": max(held.values(), default=0)},
          open(out, "w"))
PY
spid=$!
PIDS+=($spid)
for _ in $(seq 300); do [ -s "$T/ready" ] && break; sleep 0.1; done
[ -s "$T/ready" ] || fail "the silent peers did not connect within 30 s"
echo "$(cat "$T/ready") silent connections open"

note "a real bench from 127.0.0.1 meanwhile"
t0=$(secs)
bench >"$T/bench.out" 2>&1
rc=$?
took=$(python3 -c "print($(secs) - $t0)")
echo "bench: exit $rc after $took s: $(tail -n 1 "$T/bench.out")"
[ $rc -eq 0 ] || bad "the bench failed behind silent peers: $(tail -n 2 "$T/bench.out")"
python3 -c "import sys; sys.exit(not $took <= $base + $SLACK)" ||
	bad "the bench took $took s behind silent peers, $base s without them"

note "every silent connection closed by the receiver, in time"
wait $spid
python3 - "$T/silent.json" "$SLACK" <<'PY' || bad "silent connections were not closed in time"
import json, sys
r, slack = json.load(open(sys.argv[1])), float(sys.argv[2])
print(f"{r['connected']} connected ({r['failed']} could not), "
      f"{r['closed']} closed by the receiver, the last after {r['longest']:.1f} s")
assert r["connected"] == 120, "not every silent peer got connected"
assert r["closed"] == r["connected"], "some were never closed"
assert r["longest"] <= 3 + slack, "closed later than the first-byte deadline"
PY
# one line each: closed for room (per address, or over all), or at the
# first-byte deadline
for _ in $(seq 50); do
	[ "$(grep -c 'session failed' "$T/recv.err")" -ge 120 ] && break
	sleep 0.1
done
n=$(grep -c 'session failed' "$T/recv.err")
[ "$n" -eq 120 ] || bad "$n 'session failed' lines in the receiver's log, not 120 (one per silent peer)"
for why in "connections from its address were in theirs" \
	"connections in all were in theirs (the most the receiver holds)" \
	"waiting for the client's HELLO: the peer did not answer in time (3.0 s)"; do
	echo "$(grep -c -F "$why" "$T/recv.err") x ... $why"
	grep -q -F "$why" "$T/recv.err" || bad "no silent peer was closed with: $why"
done
grep 'session failed' "$T/recv.err" | grep -v -F -e "to make room" -e "did not answer in time (3.0 s)" |
	head -3 | grep . && bad "other reasons in the receiver's log"

note "the receiver serves on"
kill -0 $rpid 2>/dev/null || bad "the receiver died"
bench >"$T/after.out" 2>&1 || bad "a bench afterwards failed: $(tail -n 2 "$T/after.out")"
finish
