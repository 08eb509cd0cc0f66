#!/usr/bin/env bash
# Many small files: ferry send against xrdcp -r into XRootD and rsync -a to
# an rsync daemon, in the same run, on one veth pair between two fresh
# namespaces (198.18.0.0/15), a tmpfs at both ends.
#
# Two trees, made once on the source tmpfs:
#   small   NSMALL files of 4 KiB (default 100,000), 1000 per directory
#   empty   NEMPTY empty files (default 1,000,000), 1000 per directory
# Each is copied from namespace A to namespace B by
#   ferry   ferry send (defaults) -> ferry recv --once --dir
#   xrdcp   xrdcp -r -> xrootd (one server per copy)
#   rsync   rsync -a -> rsync --daemon --no-detach (one per copy)
# The destination is emptied before each copy and checked afterwards
# (every file there, the right size; ferry's byte for byte). A copy that
# runs past CAP seconds (default 300) is stopped, and its rate counts the
# files that had arrived.
#
# Per copy: files per second (files / wall seconds of the client), CPU
# seconds per 1000 files of the client and of the server, and each side's
# peak RSS (/usr/bin/time; xrootd's from /proc). Then the ratios and the
# goals: ferry >= 10x xrdcp -r and >= 3x rsync in files per second, and
# ferry recv's peak RSS under 256 MiB plus its ring on the empty tree.
#
# Environment: NSMALL, NEMPTY, CAP, FERRY/BUILD. Needs root (namespaces,
# mounts; installs xrootd-server, xrootd-client, rsync and time with
# apt-get when missing). Exit status: 0 when every copy ran and checked
# out (goals are reported, not enforced), 1 otherwise.
#
# Example: bench/many_files.sh          (about 10 minutes here)
#          NSMALL=20000 NEMPTY=100000 CAP=120 bench/many_files.sh
# shellcheck source=bench/lib/common.sh
. "$(dirname "$0")/lib/common.sh"
# shellcheck source=bench/lib/files.sh
. "$(dirname "$0")/lib/files.sh"

NSMALL=${NSMALL:-100000}
NEMPTY=${NEMPTY:-1000000}
CAP=${CAP:-300}
for v in NSMALL NEMPTY CAP; do
	[[ "${!v}" =~ ^[1-9][0-9]*$ ]] || die "$v must be a positive integer"
done

need_root
need_cmd runuser "util-linux"
[ -x "$FERRY" ] || die "no ferry binary at $FERRY (build with meson first)"
pkgs=()
command -v xrootd >/dev/null 2>&1 || pkgs+=(xrootd-server)
command -v xrdcp >/dev/null 2>&1 || pkgs+=(xrootd-client)
command -v rsync >/dev/null 2>&1 || pkgs+=(rsync)
[ -x /usr/bin/time ] || pkgs+=(time)
if [ ${#pkgs[@]} -gt 0 ]; then
	note "installing ${pkgs[*]}"
	DEBIAN_FRONTEND=noninteractive timeout -k 10 600 apt-get install -y "${pkgs[@]}" \
		>"$T/apt.log" 2>&1 || { tail -n 8 "$T/apt.log" >&2; die "apt-get install ${pkgs[*]} failed"; }
fi
id xrootd >/dev/null 2>&1 || die "no user xrootd (xrootd refuses to run as root; the Debian package makes it)"
bench_lock

# Memory: a tmpfs inode and dentry cost about 1 KiB; 4 KiB files their page.
need_mb=$(( (NSMALL * 9 + NEMPTY * 2) / 1024 + 1024 ))
avail=$(awk '/^MemAvailable:/ { print int($2 / 1024) }' /proc/meminfo)
[ "$avail" -ge "$need_mb" ] || die "needs about $need_mb MiB of free memory, $avail MiB available: lower NSMALL or NEMPTY"
mount_pair_tmpfs mf $((need_mb / 2))
chmod 777 "$DST"
make_pair
"$FERRY" keygen "$T/key" >/dev/null || die "keygen"

note "making the trees: $NSMALL files of 4 KiB, $NEMPTY empty files"
python3 - "$SRC" "$NSMALL" "$NEMPTY" <<'PY' || die "making the trees"
import os, sys
top, nsmall, nempty = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
block = os.urandom(4096)
for name, n, data in (("small", nsmall, True), ("empty", nempty, False)):
    for i in range(n):
        d = os.path.join(top, name, f"d{i // 1000:04d}")
        if i % 1000 == 0:
            os.makedirs(d)
        with open(os.path.join(d, f"f{i:07d}"), "wb") as f:
            if data:
                f.write(block[i % 64:] + block[:i % 64])
PY

RESULTS=$T/results.tsv
: >"$RESULTS"
FAILED=0

# record TREE TOOL FILES WALL CCPU SCPU CRSS SRSS NOTE
record() { printf '%s\t' "$@" >>"$RESULTS"; echo >>"$RESULTS"; }

# tstat FILE: "wall user sys maxrss_kib" from a /usr/bin/time -f file
tstat() { tail -n 1 "$1"; }

# arrived DIR N: files under DIR (the copy's count when it was stopped)
arrived() { find "$1" -type f | wc -l; }

empty_dst() { find "$DST" -mindepth 1 -delete; }

# check TREE DIR WHAT: DIR holds every file of the tree with its size
check() {
	python3 - "$SRC/$1" "$2" <<'PY' || { FAILED=$((FAILED + 1)); echo "FAIL: $3: the copy is not the tree" >&2; }
import os, sys
src, dst = sys.argv[1:]
n = bad = 0
for d, _, fs in os.walk(src):
    for f in fs:
        s = os.path.join(d, f)
        t = os.path.join(dst, os.path.relpath(s, src))
        n += 1
        try:
            if os.stat(t).st_size != os.stat(s).st_size:
                bad += 1
        except FileNotFoundError:
            bad += 1
if bad:
    print(f"{bad} of {n} files missing or of the wrong size", file=sys.stderr)
    sys.exit(1)
PY
}

run_ferry() {
	local tree=$1 n=$2 port=7471
	empty_dst
	ip netns exec "$NSB" /usr/bin/time -f "%e %U %S %M" -o "$T/recv.time" \
		"$FERRY" recv --key "$T/key" -B "$IPB" -p $port -d "$DST" --once -q -i 0 \
		>"$T/recv.out" 2>"$T/recv.err" &
	local rpid=$!
	wait_listen $port "$NSB" || die "ferry recv did not listen"
	ip netns exec "$NSA" /usr/bin/time -f "%e %U %S %M" -o "$T/send.time" \
		timeout -k 5 "$CAP" "$FERRY" send --key "$T/key" -q -i 0 "$SRC/$tree" "$IPB:$port" \
		>"$T/send.out" 2>"$T/send.err"
	local rc=$?
	wait $rpid
	if [ $rc -ne 0 ]; then
		tail_err "$T/send.err"; FAILED=$((FAILED + 1))
		echo "FAIL: ferry send ($tree): $(why_rc $rc "$CAP")" >&2
	fi
	grep "files published" "$T/send.out" | tail -n 1 >&2
	read -r w cu cs cr <<<"$(tstat "$T/send.time")"
	read -r _ su ss sr <<<"$(tstat "$T/recv.time")"
	check "$tree" "$DST/$tree" "ferry ($tree)"
	[ "$tree" = small ] && { diff -rq "$SRC/$tree" "$DST/$tree" >/dev/null ||
		{ FAILED=$((FAILED + 1)); echo "FAIL: ferry ($tree): contents differ" >&2; }; }
	record "$tree" ferry "$n" "$w" "$(echo "$cu + $cs" | bc)" "$(echo "$su + $ss" | bc)" "$cr" "$sr" ""
}

# /proc CPU seconds (utime + stime) and peak RSS (KiB) of PID
proc_cpu() { awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / hz }' "/proc/$1/stat"; }
proc_hwm() { awk '/^VmHWM:/ { print $2 }' "/proc/$1/status"; }

run_xrdcp() {
	local tree=$1 n=$2 note= rc w cu cs cr got c0 c1 hwm xpid
	empty_dst
	xrootd_config "$DST"
	xrootd_start $((CAP + 120)) || { FAILED=$((FAILED + 1)); echo "FAIL: xrootd did not start" >&2; return; }
	xpid=$(pgrep -n -u xrootd -x xrootd)
	c0=$(proc_cpu "$xpid")
	ip netns exec "$NSA" /usr/bin/time -f "%e %U %S %M" -o "$T/xrdcp.time" \
		timeout -k 5 "$CAP" xrdcp -r -s "$SRC/$tree" "root://$IPB:$XRD_PORT/$DST/" \
		>"$T/xrdcp.out" 2>"$T/xrdcp.err"
	rc=$?
	c1=$(proc_cpu "$xpid")
	hwm=$(proc_hwm "$xpid")
	kill -TERM "$xpid" 2>/dev/null
	wait 2>/dev/null
	got=$(arrived "$DST/$tree")
	if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
		note="stopped at ${CAP} s"
	elif [ $rc -ne 0 ]; then
		tail_err "$T/xrdcp.err"; FAILED=$((FAILED + 1))
		echo "FAIL: xrdcp -r ($tree): $(why_rc $rc "$CAP")" >&2
	else
		check "$tree" "$DST/$tree" "xrdcp ($tree)"
	fi
	read -r w cu cs cr <<<"$(tstat "$T/xrdcp.time" | sed 's/^Command.*//')"
	[ -n "$w" ] || read -r w cu cs cr <<<"$(grep -E '^[0-9.]+ ' "$T/xrdcp.time" | tail -n 1)"
	record "$tree" "xrdcp -r" "$got" "$w" "$(echo "$cu + $cs" | bc)" "$(echo "$c1 - $c0" | bc)" "$cr" "$hwm" "$note"
}

run_rsync() {
	local tree=$1 n=$2 note= rc w cu cs cr got dpid
	empty_dst
	cat >"$T/rsyncd.conf" <<-EOF
	use chroot = no
	pid file = $T/rsyncd.pid
	port = 8730
	[dst]
	path = $DST
	read only = no
	uid = root
	gid = root
	EOF
	ip netns exec "$NSB" /usr/bin/time -f "%e %U %S %M" -o "$T/rsyncd.time" \
		rsync --daemon --no-detach --config="$T/rsyncd.conf" >"$T/rsyncd.out" 2>&1 &
	dpid=$!
	wait_listen 8730 "$NSB" || die "rsync --daemon did not listen"
	ip netns exec "$NSA" /usr/bin/time -f "%e %U %S %M" -o "$T/rsync.time" \
		timeout -k 5 "$CAP" rsync -a "$SRC/$tree" "rsync://$IPB:8730/dst/" \
		>"$T/rsync.out" 2>"$T/rsync.err"
	rc=$?
	kill -TERM "$(cat "$T/rsyncd.pid" 2>/dev/null)" 2>/dev/null
	wait $dpid 2>/dev/null
	got=$(arrived "$DST/$tree")
	if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
		note="stopped at ${CAP} s"
	elif [ $rc -ne 0 ]; then
		tail_err "$T/rsync.err"; FAILED=$((FAILED + 1))
		echo "FAIL: rsync -a ($tree): exit $rc" >&2
	else
		check "$tree" "$DST/$tree" "rsync ($tree)"
	fi
	read -r w cu cs cr <<<"$(grep -E '^[0-9.]+ ' "$T/rsync.time" | tail -n 1)"
	read -r _ su ss sr <<<"$(grep -E '^[0-9.]+ ' "$T/rsyncd.time" | tail -n 1)"
	record "$tree" "rsync -a" "$got" "$w" "$(echo "$cu + $cs" | bc)" "$(echo "${su:-0} + ${ss:-0}" | bc)" "$cr" "${sr:-0}" "$note"
}

for tree in small empty; do
	n=$NSMALL
	[ $tree = empty ] && n=$NEMPTY
	for tool in ferry xrdcp rsync; do
		wait_quiet 30 || note "the host is busy; measuring anyway"
		note "$tree: $tool"
		"run_$tool" "$tree" "$n"
	done
done

python3 - "$RESULTS" "$NSMALL" "$NEMPTY" <<'PY'
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
print(f"{'tree':<7}{'tool':<10}{'files':>9}{'wall s':>9}{'files/s':>10}"
      f"{'client cpu s/1k':>17}{'server cpu s/1k':>17}{'client MiB':>12}{'server MiB':>12}  note")
rate = {}
for tree, tool, files, wall, ccpu, scpu, crss, srss, note, *_ in rows:
    files, wall = int(files), float(wall)
    r = files / wall if wall > 0 else 0
    rate[(tree, tool)] = r
    k = max(files, 1) / 1000
    print(f"{tree:<7}{tool:<10}{files:>9}{wall:>9.2f}{r:>10.0f}"
          f"{float(ccpu) / k:>17.3f}{float(scpu) / k:>17.3f}"
          f"{int(crss) / 1024:>12.0f}{int(srss) / 1024:>12.0f}  {note}")
print()
for tree in ("small", "empty"):
    f = rate.get((tree, "ferry"), 0)
    for tool, goal in (("xrdcp -r", 10), ("rsync -a", 3)):
        o = rate.get((tree, tool), 0)
        if o:
            print(f"{tree}: ferry / {tool} = {f / o:.1f}x in files per second "
                  f"(goal {goal}x: {'met' if f / o >= goal else 'NOT met'})")
for tree, tool, files, wall, ccpu, scpu, crss, srss, *_ in rows:
    if tree == "empty" and tool == "ferry":
        print(f"empty: ferry recv peak RSS {int(srss) / 1024:.0f} MiB "
              f"(goal: under 256 MiB plus its ring)")
PY
[ $FAILED -eq 0 ] || { echo "FAIL: $FAILED copy check(s) failed" >&2; exit 1; }
