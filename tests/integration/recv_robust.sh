#!/usr/bin/env bash
# The receiver survives clients that send garbage, say nothing, or vanish
# mid-session, logs a line for each, and keeps serving the next session.
. "$(dirname "$0")/lib.sh"

"$FERRY" keygen "$T/key" >/dev/null || fail "keygen"
port=$(free_port)
"$FERRY" recv --key "$T/key" -p "$port" -B 127.0.0.1 --timeout 3 -i 0 \
	>"$T/recv.out" 2>"$T/recv.err" &
rpid=$!
PIDS+=($rpid)
wait_listen "$port"
B="$FERRY bench --key $T/key -l 1M --slots 8"

# wait_log PATTERN: until the receiver logs PATTERN (10 s at most)
wait_log() {
	for _ in $(seq 200); do
		grep -q "$1" "$T/recv.err" && return 0
		sleep 0.05
	done
	cat "$T/recv.err"
	fail "the receiver did not log /$1/"
}

alive() { kill -0 $rpid 2>/dev/null || { cat "$T/recv.err"; fail "receiver died: $1"; }; }

note "garbage: an HTTP request, random bytes, a huge declared length"
# the receiver hangs up at the first bad byte: our writes may meet EPIPE
send_raw() { ( trap '' PIPE; cat >/dev/tcp/127.0.0.1/$port ) 2>/dev/null || true; }
printf 'GET / HTTP/1.1\r\nHost: x\r\n\r\n' | send_raw
head -c 4096 /dev/urandom | send_raw
# a well-formed header declaring a 1 GiB body
printf 'FRRY\x00\x00\x00\x40\x01\x00\x01\x00' | send_raw
sleep 0.5; alive "garbage"

note "a client that connects and says nothing (receiver --timeout 3)"
exec 7<>/dev/tcp/127.0.0.1/$port
wait_log "did not answer"
exec 7>&-
alive "silent client"

note "a sender killed mid-session"
$B -t 30 -q 127.0.0.1:$port >/dev/null 2>&1 &
bpid=$!
wait_log "socket buffers"   # the data phase has begun
sleep 0.5
kill -9 $bpid; wait $bpid 2>/dev/null
wait_log "went away mid-session"
alive "killed sender"

note "a sender that stalls after the handshake (stopped with SIGSTOP)"
$B -t 30 -q 127.0.0.1:$port >/dev/null 2>&1 &
bpid=$!
PIDS+=($bpid)
sleep 1
kill -STOP $bpid
sleep 4
kill -9 $bpid; wait $bpid 2>/dev/null
alive "stalled sender"

note "the next session works"
$B -n 256M --json 127.0.0.1:$port >"$T/ok.json" || { cat "$T/recv.err"; fail "receiver stopped serving"; }
check_json "$T/ok.json" $((256 << 20))
echo "receiver log:"; cat "$T/recv.err"
echo "PASS"
