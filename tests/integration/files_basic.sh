#!/usr/bin/env bash
# File sessions, the good path: a tree with empty directories, an empty
# file, sizes that are not multiples of the chunk, 30 levels of
# directories, names with spaces, quotes and UTF-8, and (where there is
# room) a 3 GiB sparse file with data past 2 GiB, over loopback and (as
# root) over a veth pair between two namespaces. Every file arrives byte
# for byte with its mode and mtime; the sender's checksum lines and --json
# entries match an independent adler32 / crc32c of each source; the
# overwrite policy holds (the same command again skips identical targets,
# a changed source is refused without --force and changes nothing,
# --force replaces, --skip-existing skips identical files and refuses
# changed ones); HOST:/sub/dir lands below --dir/sub/dir; no part file or
# journal is left.
. "$(dirname "$0")/files_lib.sh"

MiB=$((1 << 20))
S=$T/src
D=$T/dst
mkdir -p "$D"

note "a source tree"
mkdir -p "$S/emptydir" "$S/empty parent/empty child" \
	"$S/dir with space/ünï ✓ – файл/子目录"
: >"$S/empty"
printf x >"$S/one byte"
head -c $((MiB + 1)) /dev/urandom >"$S/odd 1M+1"
head -c $((3 * MiB - 7)) /dev/urandom >"$S/odd3M-7"
head -c $((2 * MiB)) /dev/urandom >"$S/exact2M"
head -c 4095 /dev/urandom >"$S/dir with space/ünï ✓ – файл/子目录/naïve café.txt"
head -c 77777 /dev/urandom >"$S/q\"uote\\back slash"
deep=$S/deep
for i in $(seq -w 1 30); do deep=$deep/level$i; done
mkdir -p "$deep"
head -c 4097 /dev/urandom >"$deep/leaf"
chmod 0600 "$S/empty"
chmod 0640 "$S/odd 1M+1"
chmod 0755 "$S/odd3M-7"
chmod 0444 "$S/one byte"
chmod 0700 "$S/exact2M"
chmod 0604 "$deep/leaf"
chmod 0750 "$S/emptydir"
chmod 0700 "$S/empty parent/empty child"
touch -d '2001-02-03 04:05:06.123456789' "$S/odd 1M+1"
touch -d '1969-07-20 20:17:40.25' "$S/exact2M"      # before 1970
touch -d '2038-01-19 03:14:08.999999999' "$S/odd3M-7" # past 32-bit time_t
touch -d '2020-01-01 00:00:00' "$S/empty"
echo "$(find "$S" -type f | wc -l) files, $(find "$S" -type d | wc -l) directories, $(du -sh --apparent-size "$S" | cut -f1)"

start_recv recv "$D"

# run NAME CMD...: CMD with stdout in $T/NAME.out, stderr in $T/NAME.err;
# RC is its status.
run() {
	local name=$1
	shift
	"$@" >"$T/$name.out" 2>"$T/$name.err"
	RC=$?
}

# ok_run NAME WHAT: RC 0 and nothing on stderr, else bad.
ok_run() {
	if [ $RC -ne 0 ]; then
		bad "$2: exit status $RC: $(head -c 600 "$T/$1.err")"
		return 1
	fi
	[ ! -s "$T/$1.err" ] || bad "$2: -q run printed on stderr: $(head -c 600 "$T/$1.err")"
	return 0
}

# refused NAME WHAT PATTERN: RC not 0, exactly one line on stderr, matching.
refused() {
	local n
	n=$(wc -l <"$T/$1.err")
	[ $RC -ne 0 ] || bad "$2: exit status 0"
	[ "$n" -eq 1 ] || bad "$2: $n lines on stderr, not 1: $(head -c 600 "$T/$1.err")"
	grep -Eq -e "$3" "$T/$1.err" || bad "$2: stderr does not match /$3/: $(head -c 600 "$T/$1.err")"
	echo "refused: $(head -n 1 "$T/$1.err")"
}

H=127.0.0.1:$RPORT
note "1. the tree over loopback (-l 1M)"
run t1 fsend -q -l 1M "$S" "$H"
if ok_run t1 "first send"; then
	check_lines adler32 "$T/t1.out" "$S" || bad "first send: checksum lines"
	same_tree "$S" "$D/src" || bad "first send: the tree did not arrive intact"
	no_sidecars "$D" "first send"
fi

note "2. a 3 GiB sparse file with data past 2 GiB, to HOST:/big"
# It arrives as 3 GiB of written data: on a 4 GiB tmpfs mounted at
# --dir/big where root and memory allow (no disk writeback to wait for),
# else on the disk below $T.
need=$((8 << 30))
avail=$(( $(df -k --output=avail "$T" | tail -n 1) * 1024 ))
memavail=$(( $(awk '/MemAvailable/ {print $2}' /proc/meminfo) * 1024 ))
fstype=$(stat -f -c %T "$T")
mkdir "$D/big"
where=
if [ "$(id -u)" -eq 0 ] && [ "$memavail" -ge $need ] &&
   mount -t tmpfs -o size=4g,mode=0755 tmpfs "$D/big" 2>/dev/null; then
	MOUNTS+=("$D/big")
	where="a tmpfs at --dir/big"
elif [ "$avail" -ge $need ] && { [ "$fstype" != tmpfs ] || [ "$memavail" -ge $need ]; }; then
	where="$fstype below $T"
fi
if [ -z "$where" ]; then
	note "SKIPPED the sparse file: $((avail >> 30)) GiB free on $T ($fstype), $((memavail >> 30)) GiB memory available; it needs 8 GiB"
else
	echo "it lands on $where"
	mkdir "$T/big"
	truncate -s 3G "$T/big/sparse"
	# data across the chunk boundary at 2 GiB + 1 MiB, and the last bytes
	head -c 200 /dev/urandom | dd of="$T/big/sparse" bs=1 conv=notrunc \
		seek=$(( (2 << 30) + MiB - 100 )) status=none
	head -c 100 /dev/urandom | dd of="$T/big/sparse" bs=1 conv=notrunc \
		seek=$(( (3 << 30) - 100 )) status=none
	touch -d '2011-11-11 11:11:11.111111111' "$T/big/sparse"
	chmod 0640 "$T/big/sparse"
	t0=$(date +%s%N)
	run t2 fsend -q -l 1M "$T/big/sparse" "$H:/big"
	echo "sent in $(( ($(date +%s%N) - t0) / 1000000 )) ms"
	if ok_run t2 "sparse file"; then
		check_lines adler32 "$T/t2.out" --dest big/ "$T/big/sparse" || bad "sparse file: checksum line"
		same_tree "$T/big/sparse" "$D/big/sparse" || bad "sparse file did not arrive intact"
		no_sidecars "$D" "sparse file"
	fi
	rm -f "$D/big/sparse" # 3 GiB back
	mountpoint -q "$D/big" && umount "$D/big"
fi

note "3a. the same command again: every target identical (size, mtime, checksum), all skipped, nothing changes"
snap "$D" >"$T/before"
run t3a fsend -q -l 1M "$S" "$H"
if ok_run t3a "the same command again"; then
	check_lines adler32 "$T/t3a.out" "$S" || bad "the same command again: checksum lines"
	grep -q "0 of $(find "$S" -type f | wc -l) files published, $(find "$S" -type f | wc -l) skipped, 0 failed" "$T/t3a.out" ||
		bad "the same command again: not every file skipped: $(tail -n 1 "$T/t3a.out")"
fi
run t3j fsend -q -l 1M --json "$S" "$H"
if ok_run t3j "the same command again, --json"; then
	check_report adler32 "$T/t3j.out" --skipped all "$S" || bad "the same command again: not every file reported skipped"
fi
snap "$D" >"$T/after"
diff "$T/before" "$T/after" >"$T/diff" || bad "the same command again changed the destination: $(head -c 800 "$T/diff")"

note "3b. a source's mtime changed (the deepest file), the command again without --force: refused, nothing changes"
touch -d '2002-02-02 02:02:02.202020202' "$deep/leaf"
run t3b fsend -q -l 1M "$S" "$H"
refused t3b "a changed source without --force" "leaf: it exists.*--force"
snap "$D" >"$T/after"
diff "$T/before" "$T/after" >"$T/diff" || bad "refused send changed the destination: $(head -c 800 "$T/diff")"

note "4. again with --force --json: replaced, a valid report"
run t4 fsend -q -l 1M --force --json "$S" "$H"
if ok_run t4 "--force --json"; then
	check_report adler32 "$T/t4.out" --skipped none "$S" || bad "--force --json: report"
	same_tree "$S" "$D/src" || bad "--force: tree"
	no_sidecars "$D" "--force"
fi

note "5. --skip-existing with everything identical: all skipped, nothing touched"
snap "$D" >"$T/before"
run t5 fsend -q -l 1M --skip-existing --json "$S" "$H"
if ok_run t5 "--skip-existing, identical"; then
	check_report adler32 "$T/t5.out" --skipped all "$S" || bad "--skip-existing: not every file reported skipped"
fi
snap "$D" >"$T/after"
diff "$T/before" "$T/after" >"$T/diff" || bad "--skip-existing of identical files changed the destination: $(head -c 800 "$T/diff")"

note "6. --skip-existing, one source changed (same size): that file refused, target kept"
python3 - "$S/odd 1M+1" <<'PY'
import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(123456); b = f.read(1); f.seek(123456); f.write(bytes([b[0] ^ 0x5A]))
PY
snap "$D" >"$T/before"
run t6 fsend -q -l 1M --skip-existing "$S" "$H"
[ $RC -ne 0 ] || bad "--skip-existing with a changed file exited 0"
grep -q "odd 1M+1.*--force" "$T/t6.err" ||
	bad "--skip-existing with a changed file: no line naming it and --force: $(head -c 600 "$T/t6.err")"
echo "stderr: $(cat "$T/t6.err")"
run t6j fsend -q -l 1M --skip-existing --json "$S" "$H"
python3 - "$T/t6j.out" <<'PY' || bad "--skip-existing with a changed file: the identical ones were not reported skipped, or the changed one was"
import json, sys
files = json.load(open(sys.argv[1]))["files"]
bad = [f for f in files if f["skipped"] != (not f["path"].endswith("odd 1M+1"))]
assert not bad, bad
print(f"ok: {len(files) - 1} identical files skipped, the changed one not")
PY
snap "$D" >"$T/after"
diff "$T/before" "$T/after" >"$T/diff" || bad "--skip-existing with a changed file changed the destination: $(head -c 800 "$T/diff")"

note "7. --skip-existing, another source grown: refused, nothing changes"
printf 'more' >>"$S/exact2M"
touch -d '1969-07-20 20:17:40.25' "$S/exact2M"
run t7 fsend -q -l 1M --skip-existing "$S" "$H"
# one line per file that cannot land: the grown one, and the one of 6.
[ $RC -ne 0 ] || bad "--skip-existing with a grown file exited 0"
[ "$(wc -l <"$T/t7.err")" -eq 2 ] &&
	grep -q "exact2M: it exists with another size.*--force" "$T/t7.err" &&
	grep -q "odd 1M+1: .*--force" "$T/t7.err" ||
	bad "--skip-existing with a grown file: want a line for exact2M and one for odd 1M+1: $(head -c 600 "$T/t7.err")"
grep -q "files published, .* skipped, 2 failed" "$T/t7.out" ||
	bad "--skip-existing with a grown file: the summary: $(tail -n 1 "$T/t7.out")"
snap "$D" >"$T/after"
diff "$T/before" "$T/after" >"$T/diff" || bad "--skip-existing with a grown file changed the destination: $(head -c 800 "$T/diff")"

note "8. --skip-existing --force: the two changed files replaced, the rest skipped"
run t8 fsend -q -l 1M --skip-existing --force --json "$S" "$H"
if ok_run t8 "--skip-existing --force"; then
	skipped=$(cd "$T" && find src -type f ! -name 'odd 1M+1' ! -name exact2M | paste -sd,)
	check_report adler32 "$T/t8.out" --skipped "$skipped" "$S" || bad "--skip-existing --force: report"
	same_tree "$S" "$D/src" || bad "--skip-existing --force: tree"
	no_sidecars "$D" "--skip-existing --force"
fi

note "9. --cksum crc32c to HOST:/sub/dir: lands below --dir/sub/dir"
run t9 fsend -q -l 1M --cksum crc32c "$S" "$H:/sub/dir"
if ok_run t9 "--cksum crc32c"; then
	check_lines crc32c "$T/t9.out" --dest sub/dir/ "$S" || bad "--cksum crc32c: lines"
	same_tree "$S" "$D/sub/dir/src" || bad "HOST:/sub/dir: tree"
	no_sidecars "$D" "--cksum crc32c"
fi
find "$D/sub" -mindepth 1 -maxdepth 1 ! -name dir 2>/dev/null | grep . >/dev/null &&
	bad "HOST:/sub/dir left something else in --dir/sub"

note "10. --cksum crc32c --json --force"
run t10 fsend -q -l 1M --cksum crc32c --json --force "$S" "$H:/sub/dir"
if ok_run t10 "--cksum crc32c --json"; then
	check_report crc32c "$T/t10.out" --skipped none "$S" || bad "--cksum crc32c --json: report"
	same_tree "$S" "$D/sub/dir/src" || bad "--cksum crc32c --force: tree"
fi
ls -A "$D" | LC_ALL=C sort | paste -sd' ' | grep -Eqx "(big )?src sub" ||
	bad "--dir holds more than src, sub (and big): $(ls -A "$D" | paste -sd' ')"
note "a tree of empty files only: the receiver's summary gives no rate per GB"
mkdir -p "$T/zero/a"
: >"$T/zero/a/x"
: >"$T/zero/y"
n0=$(grep -c 'cpu: this side' "$T/recv.out")
run tz fsend -q "$T/zero" "$H:/zero"
if ok_run tz "a send of empty files"; then
	same_tree "$T/zero" "$D/zero/zero" || bad "empty files: the tree did not arrive intact"
	# the receiver prints its summary as the session ends
	for _ in $(seq 300); do
		[ "$(grep -c 'cpu: this side' "$T/recv.out")" -gt "$n0" ] && break
		sleep 0.1
	done
	line=$(grep 'cpu: this side' "$T/recv.out" | tail -n 1)
	case $line in
	*"cpu: this side "*s/GB*) bad "a session of 0 bytes printed a rate per GB: $line" ;;
	*"cpu: this side "*) echo "ok: $line" ;;
	*) bad "no cpu line in the receiver's summary: $(tail -n 3 "$T/recv.out")" ;;
	esac
fi
kill "$RPID" 2>/dev/null
wait_gone "$RPID" 5 || bad "the receiver did not stop on SIGTERM"

note "11. the tree between two namespaces over a veth pair, 8 streams"
if [ "$(id -u)" -ne 0 ] || ! ip netns list >/dev/null 2>&1; then
	note "SKIPPED the veth part: needs root and ip netns"
else
	make_pair
	V=$T/vdst
	mkdir "$V"
	vport=7471
	ip netns exec $NSB "$FERRY" recv --key "$KEY" -p $vport -B $IPB -i 0 -q \
		-d "$V" >"$T/vrecv.out" 2>"$T/vrecv.err" &
	PIDS+=($!)
	wait_listen $vport $NSB
	run t11 timeout -k 5 120 ip netns exec $NSA "$FERRY" send --key "$KEY" \
		-i 0 -q -P 8 -l 1M "$S" "$IPB:$vport:/over/veth"
	if ok_run t11 "veth send"; then
		check_lines adler32 "$T/t11.out" --dest over/veth/ "$S" || bad "veth: checksum lines"
		same_tree "$S" "$V/over/veth/src" || bad "veth: tree"
		no_sidecars "$V" "veth"
		rx=$(ip netns exec $NSB cat /sys/class/net/$VETHB/statistics/rx_bytes)
		total=$(find "$S" -type f -printf '%s\n' | awk '{ n += $1 } END { print n }')
		[ "$rx" -gt "$total" ] || bad "veth: $VETHB saw $rx bytes, less than the $total sent"
	fi
fi
finish
