#!/usr/bin/env bash
# make demo: real, authenticated local sessions over loopback: a
# memory-to-memory bench, a generated dataset sent as files and verified,
# then two daemons with exports files and a third-party copy between
# them with ferry cp.
set -euo pipefail
build=${1:-build}
ferry=$build/apps/ferry/ferry
tmp=$(mktemp -d /tmp/ferry-demo.XXXXXX)
rpid=
dpids=()
cleanup() {
	[ -n "$rpid" ] && kill "$rpid" 2>/dev/null && wait "$rpid" 2>/dev/null
	for p in "${dpids[@]:-}"; do
		[ -n "$p" ] && kill "$p" 2>/dev/null && wait "$p" 2>/dev/null
	done
	rm -rf "$tmp"
}
trap cleanup EXIT

# shellcheck source=tools/free_port.sh
. "$(dirname "$0")/free_port.sh"
free_port() { ferry_free_port || echo 17471; }
port=$(free_port)
wait_port() {
	local port=${1:-$port}
	for _ in $(seq 200); do
		ss -Hltn "sport = :$port" | grep -q . && return 0
		sleep 0.05
	done
	echo "demo: the receiver did not start on port $port within 10 s: $(tail -n 2 "$tmp"/*.err 2>/dev/null)" >&2
	exit 1
}

echo "== ferry keygen $tmp/key"
"$ferry" keygen "$tmp/key"
mkdir -p "$tmp/in"
echo
echo "== ferry recv --key KEY -B 127.0.0.1 -p $port --dir $tmp/in   (in the background)"
"$ferry" recv --key "$tmp/key" -B 127.0.0.1 -p "$port" --dir "$tmp/in" -q \
	>"$tmp/recv.out" 2>"$tmp/recv.err" &
rpid=$!
wait_port

echo
echo "== 1. memory to memory: ferry bench --key KEY -t 5 -P 4 127.0.0.1:$port"
"$ferry" bench --key "$tmp/key" -t 5 -P 4 -q "127.0.0.1:$port"

echo
echo "== 2. files: a generated dataset of ~300 MiB"
src=$tmp/dataset
mkdir -p "$src/run1/raw" "$src/run1/empty-dir"
head -c $((120 << 20)) /dev/urandom >"$src/run1/raw/events-000.root"
head -c $((90 << 20)) /dev/urandom >"$src/run1/raw/events-001.root"
head -c $((60 << 20)) /dev/urandom >"$src/run1/raw/events-002.root"
head -c $((30 << 20)) /dev/urandom >"$src/run1/calib.db"
head -c 123457 /dev/urandom >"$src/run1/README with spaces.txt"
: >"$src/run1/empty.log"
du -sh "$src/run1"
echo "== ferry send --key KEY $src/run1 127.0.0.1:$port:/store"
"$ferry" send --key "$tmp/key" -i 0 "$src/run1" "127.0.0.1:$port:/store"
echo
echo "== independent check: python3 zlib.adler32 of the received files"
(cd "$tmp/in/store" && find run1 -type f | sort | while read -r f; do
	python3 -c 'import os, sys, zlib; print("adler32: %x %s %d" % (zlib.adler32(open(sys.argv[1], "rb").read()), sys.argv[1], os.path.getsize(sys.argv[1])))' "$f"
done)
diff -r "$src/run1" "$tmp/in/store/run1" && echo "== received tree is byte-identical to the source"
kill "$rpid" && wait "$rpid" 2>/dev/null || true
rpid=
echo
echo "== what the receiver printed"
cat "$tmp/recv.err" "$tmp/recv.out"

echo
echo "== 3. two daemons (ferry serve --exports) and a third-party copy between them"
mkdir -p "$tmp/dtn1" "$tmp/dtn2"
cp "$tmp/key" "$tmp/demo.key"
for d in dtn1 dtn2; do
	printf 'root %s\nkey demo %s rights all paths /\n' "$tmp/$d" "$tmp/demo.key" >"$tmp/$d.conf"
done
p1=$(free_port)
p2=$(free_port)
while [ "$p2" = "$p1" ]; do p2=$(free_port); done
"$ferry" serve --exports "$tmp/dtn1.conf" -B 127.0.0.1 -p $p1 -q >/dev/null 2>"$tmp/dtn1.err" &
dpids+=($!)
"$ferry" serve --exports "$tmp/dtn2.conf" -B 127.0.0.1 -p $p2 -q >/dev/null 2>"$tmp/dtn2.err" &
dpids+=($!)
wait_port $p1; wait_port $p2
echo "== ferry cp --key demo.key events-000.root ferry://127.0.0.1:$p1/run1/   (push)"
"$ferry" cp --key "$tmp/demo.key" -i 0 "$src/run1/raw/events-000.root" "ferry://127.0.0.1:$p1/run1/"
echo "== ferry cp --key demo.key ferry://127.0.0.1:$p1/run1/events-000.root ferry://127.0.0.1:$p2/copy/   (third-party)"
"$ferry" cp --key "$tmp/demo.key" "ferry://127.0.0.1:$p1/run1/events-000.root" "ferry://127.0.0.1:$p2/copy/"
cmp "$src/run1/raw/events-000.root" "$tmp/dtn2/copy/events-000.root" &&
	echo "== the copy on dtn2 is byte-identical; it went daemon to daemon with a one-time token"
