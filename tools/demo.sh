#!/usr/bin/env bash
# make demo: a real, authenticated local session: a receiver and a sender
# over loopback, interval lines and both sides' summaries.
set -euo pipefail
build=${1:-build}
ferry=$build/apps/ferry/ferry
tmp=$(mktemp -d /tmp/ferry-demo.XXXXXX)
rpid=
cleanup() {
	[ -n "$rpid" ] && kill "$rpid" 2>/dev/null && wait "$rpid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

port=$((20000 + RANDOM % 40000))
echo "== ferry keygen $tmp/key"
"$ferry" keygen "$tmp/key"
echo
echo "== ferry recv --key KEY -B 127.0.0.1 -p $port --once   (in the background)"
"$ferry" recv --key "$tmp/key" -B 127.0.0.1 -p "$port" --once -i 0 \
	>"$tmp/recv.out" 2>"$tmp/recv.err" &
rpid=$!
for _ in $(seq 100); do
	ss -Hltn "sport = :$port" | grep -q . && break
	sleep 0.05
done
echo
echo "== ferry bench --key KEY -t 5 -P 4 127.0.0.1:$port"
"$ferry" bench --key "$tmp/key" -t 5 -P 4 "127.0.0.1:$port"
wait "$rpid" || { cat "$tmp/recv.err"; exit 1; }
rpid=
echo
echo "== what the receiver printed"
cat "$tmp/recv.err" "$tmp/recv.out"
