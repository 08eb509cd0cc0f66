#!/usr/bin/env bash
# ferry send (files, tcp) against xrdcp into an XRootD server, in the same
# run, on one veth pair between two fresh network namespaces (addresses
# from 198.18.0.0/15), tmpfs at both ends.
#
# One file set (NFILES files of SIZE_MB MiB of random data, made once on a
# tmpfs mounted at /tmp/fx-src.PID) is copied from namespace A to namespace
# B, onto a second tmpfs (/tmp/fx-dst.PID), by:
#   ferry      ferry send (defaults: tcp, 4 streams, adler32) -> ferry recv --dir
#   ferry -P 8 the same with 8 streams
#   xrdcp      xrdcp --cksum adler32 of all files in one invocation (one
#              file after another) -> xrootd (xrootd.chksum adler32); -d 1
#              makes it log each file's "Checksum verification: succeeded",
#              which is counted
#   xrdcp -p4  the same with --parallel 4
# and, for reference, ferry bench -t BENCH_T (memory to memory, the same
# default streams as ferry send) on the same pair, and a local cp of the set
# from tmpfs to tmpfs (no network, no checksum: what writing the
# destination alone costs on this host).
# Each copy is timed from process start to exit (wall seconds, from
# /usr/bin/time, which also gives the client's CPU; the server's CPU is
# taken from its getrusage (ferry recv, via /usr/bin/time) or from
# /proc/PID/stat (xrootd, before and after each copy)). The destination is
# emptied before each copy and every copied file is compared (cmp) with its
# source afterwards; a mismatch is an error.
#
# Environment:
#   SIZE_MB     size of each file in MiB (default 1024)
#   NFILES      number of files (default 4)
#   REPS        repetitions of the whole set (default 1); with more than one
#               the table shows the median of each column
#   BENCH_T     seconds of ferry bench (default 10)
#   QUIET_WAIT  before each test, wait up to this many seconds for the host
#               to fall below 15% busy (default 60; 0 = do not wait)
#   OUT         CSV of every row (default /tmp/files_vs_xrdcp.csv); the logs
#               of a failed test are kept in ${OUT%.csv}.fail.PID/
#   FERRY_VARIANTS  extra ferry send option sets, ';'-separated, each run as
#               an extra row (e.g. "--cksum crc32c;--cksum none")
#   XRDCP_TRIES tries per xrdcp test (default 2): the server's checksum
#               query fails now and then ("[3012] Program failed"); each
#               failure is reported and counted in the summary
#   FERRY, BUILD  the ferry binary (default build/apps/ferry/ferry)
#
# Needs root (namespaces, mounts, apt-get). Installs xrootd-server and
# xrootd-client with apt-get when xrootd or xrdcp is missing.
#   REPORT      print the report of an earlier run from its CSV (OUT of
#               that run) and measure nothing (no root needed)
#
# Exit status: 0 when every copy ran and verified, 1 (with the reason) when
# anything failed.
#
# Example: SIZE_MB=1024 REPS=3 bench/files_vs_xrdcp.sh
# shellcheck source=bench/lib/common.sh
. "$(dirname "$0")/lib/common.sh"
# shellcheck source=bench/lib/files.sh
. "$(dirname "$0")/lib/files.sh"

# (SIZE_MB, NFILES, REPS, QUIET_WAIT: bench/lib/files.sh)
BENCH_T=${BENCH_T:-10}
OUT=${OUT:-/tmp/files_vs_xrdcp.csv}
XRDCP_TRIES=${XRDCP_TRIES:-2}
FERRY_VARIANTS=${FERRY_VARIANTS:-}

check_file_set_settings
[[ "$BENCH_T" =~ ^[1-9][0-9]*$ ]] || die "BENCH_T must be a whole number of seconds"
[[ "$XRDCP_TRIES" =~ ^[1-9][0-9]*$ ]] || die "XRDCP_TRIES must be a positive integer"

XRD_PID=

# report CSV [FAILURES]: the tables, from the CSV of a run (this one, or an
# earlier one with REPORT=CSV). A test counts as quiet when the rest of the
# host used at most 10% of its CPU meanwhile; the quiet column and ratios
# use only those.
report() {
	python3 - "$1" "${2:-}" <<'PY' || die "could not make the report from $1"
import csv, os, statistics, sys

path, failures_file = sys.argv[1], sys.argv[2]
rows = list(csv.DictReader(open(path)))
if not rows:
    sys.exit(f"ERROR: no rows in {path}")
for r in rows:
    r["rep"] = int(r["rep"])
    for c in ("seconds", "gbps", "client_cpu_s", "server_cpu_s", "other_cpu_s", "host_cpu_s"):
        r[c] = float(r[c])
    r["self_gbps"] = float(r["self_gbps"]) if r["self_gbps"] else ""
    r["bytes"] = int(r["bytes"])
    r["quiet"] = r["other_cpu_s"] <= 0.1 * r["host_cpu_s"]
reps = max(r["rep"] for r in rows)

def med(rs, c):
    vals = [x[c] for x in rs if x[c] != ""]
    return statistics.median(vals) if vals else ""

groups = {}
for r in rows:
    groups.setdefault((r["tool"], r["variant"]), []).append(r)
S, Q = {}, {}   # medians of all runs / of the quiet runs only
for k, rs in groups.items():
    m = dict(rs[0])
    for c in ("seconds", "gbps", "self_gbps", "client_cpu_s", "server_cpu_s", "other_cpu_s"):
        m[c] = med(rs, c)
    m["cpu_per_gb"] = med([dict(cpg=(x["client_cpu_s"] + x["server_cpu_s"]) / (x["bytes"] / 1e9))
                           for x in rs], "cpg")
    m["all"] = " ".join(f"{x['gbps']:.2f}" for x in rs)
    qs = [x for x in rs if x["quiet"]]
    m["nquiet"] = len(qs)
    S[k] = m
    if qs:
        Q[k] = dict(gbps=med(qs, "gbps"), self_gbps=med(qs, "self_gbps"))

need = [("ferry send", "default"), ("ferry send", "-P 8"), ("xrdcp", "sequential"),
        ("xrdcp", "--parallel 4"), ("ferry bench", "default"), ("cp", "local")]
for k in need:
    if k not in S:
        sys.exit(f"ERROR: {path} has no rows for {k[0]} {k[1]}")

def f2(v, n=2):
    return "-" if v == "" else f"{v:.{n}f}"

copy = S[("ferry send", "default")]
what = f"median of {reps} runs" if reps > 1 else "one run"
nf = copy.get("files") or "?"
print(f"\n{nf} files, {copy['bytes'] / (1 << 30):.2f} GiB per copy, tmpfs to tmpfs over veth, {what}.")
print("seconds = wall time of the client process, start to exit; Gb/s = payload bits / that time;")
print("CPU = user+sys seconds (client: /usr/bin/time; server: ferry recv's rusage or xrootd's")
print("/proc counters over the copy); CPU s/GB = (client + server) / payload GB; other CPU s =")
print("what the rest of the host used meanwhile; quiet = runs where that was <= 10% of the host\n")
hdr = ["what", "seconds", "Gb/s", "client CPU s", "server CPU s", "CPU s/GB", "other CPU s",
       "Gb/s of each run", "Gb/s, quiet runs (n)"]
print("| " + " | ".join(hdr) + " |")
print("|" + "|".join("---" for _ in hdr) + "|")
extra = [k for k in S if k[0] == "ferry send" and k[1] not in ("default", "-P 8")]
order = [("ferry send", "default"), ("ferry send", "-P 8"), *extra, ("xrdcp", "sequential"),
         ("xrdcp", "--parallel 4"), ("ferry bench", "default"), ("cp", "local")]
names = {("ferry send", "default"): "ferry send (defaults: 4 streams, adler32)",
         ("ferry send", "-P 8"): "ferry send -P 8",
         ("xrdcp", "sequential"): "xrdcp --cksum adler32 (one file after another)",
         ("xrdcp", "--parallel 4"): "xrdcp --cksum adler32 --parallel 4",
         ("cp", "local"): "cp, local tmpfs to tmpfs (no network, no checksum)"}
for k in order:
    m = S[k]
    if k[0] == "ferry bench":
        name = f"ferry bench -t {m['seconds']:.0f} ({m['streams']} streams, memory to memory)"
        secs = f"({m['seconds']:.2f})"
    else:
        name, secs = names.get(k) or f"ferry send {k[1]}", f2(m["seconds"])
    q = f"{Q[k]['gbps']:.2f} ({m['nquiet']})" if k in Q else "- (0)"
    cpu = "-" if k[0] == "cp" else f2(m["cpu_per_gb"])
    print("| " + " | ".join([name, secs, f2(m["gbps"]), f2(m["client_cpu_s"]),
                             f2(m["server_cpu_s"]) if k[0] != "cp" else "-", cpu,
                             f2(m["other_cpu_s"], 1), m["all"], q]) + " |")

def ratios(D, label):
    if not all(k in D for k in need):
        print(f"\n{label}: not every test has such a run; no ratios")
        return
    bx = ("xrdcp", "sequential") if D[("xrdcp", "sequential")]["gbps"] >= \
        D[("xrdcp", "--parallel 4")]["gbps"] else ("xrdcp", "--parallel 4")
    best, bench = D[bx]["gbps"], D[("ferry bench", "default")]["gbps"]
    print(f"\n{label}: best xrdcp variant {names[bx]}, {best:.2f} Gb/s; ferry bench {bench:.2f} Gb/s")
    for v in ["default", "-P 8"] + [k[1] for k in extra]:
        m = D.get(("ferry send", v))
        if not m:
            continue
        own = "" if m["self_gbps"] == "" else \
            f"; by ferry's own clock (data phase only) {m['self_gbps']:.2f} Gb/s = {m['self_gbps'] / bench:.2f}x bench"
        print(f"  ferry send {v}: {m['gbps']:.2f} Gb/s = {m['gbps'] / best:.2f}x the best xrdcp (goal >= 2x); "
              f"{m['gbps'] / bench:.2f}x ferry bench (goal >= 0.85x){own}")
    cp = D[("cp", "local")]["gbps"]
    print(f"  local cp (an upper bound for any copy onto this tmpfs): {cp:.2f} Gb/s; "
          f"ferry send = {D[('ferry send', 'default')]['gbps'] / cp:.2f}x of it")

ratios(S, "all runs (medians)")
ratios(Q, "quiet runs only (medians)")
if reps > 1:
    # Within one rep the tests ran minutes apart: less exposed to a busy
    # host than the ratio of medians.
    print("\nratios within each rep (ferry send defaults / best xrdcp of that rep; / ferry bench of that rep):")
    for rep in range(1, reps + 1):
        g = {(r["tool"], r["variant"]): r for r in rows if r["rep"] == rep}
        if not all(k in g for k in need):
            continue
        bx = max(g[("xrdcp", "sequential")]["gbps"], g[("xrdcp", "--parallel 4")]["gbps"])
        fs = g[("ferry send", "default")]
        print(f"  rep {rep}: {fs['gbps'] / bx:.2f}x xrdcp; {fs['gbps'] / g[('ferry bench', 'default')]['gbps']:.2f}x bench"
              f" (ferry send {'quiet' if fs['quiet'] else 'busy'}, bench "
              f"{'quiet' if g[('ferry bench', 'default')]['quiet'] else 'busy'})")
if failures_file and os.path.exists(failures_file):
    fl = open(failures_file).read().splitlines()
    print(f"\n{len(fl)} failed tries (retried; not in the table):")
    for l in fl:
        print("  " + l)
busy = [r for r in rows if not r["quiet"]]
if busy:
    print(f"\nWARNING: in {len(busy)} of {len(rows)} tests other processes used more than 10% "
          "of the host's CPU: the all-runs figures are low; see the quiet column")
print(f"\nrows: {path}")
PY
}

if [ -n "${REPORT:-}" ]; then
	[ -r "$REPORT" ] || die "REPORT=$REPORT: no such file"
	report "$REPORT"
	exit 0
fi

# shellcheck disable=SC2317 # called by the EXIT trap
fx_cleanup() {
	[ -n "$XRD_PID" ] && kill -TERM "$XRD_PID" 2>/dev/null
	# Every other process (ferry, xrdcp, xrootd and their timeout
	# wrappers) is a job of this shell or lives in our namespaces.
	files_cleanup
}
trap fx_cleanup EXIT

need_root
need_cmd timeout "coreutils"
need_cmd python3 "needed to read the reports"
need_cmd cmp "diffutils"
need_cmd runuser "util-linux"
[ -x "$FERRY" ] || die "no ferry binary at $FERRY (build with meson first)"

# Install what is missing (bounded: apt-get may wait on a lock).
pkgs=()
command -v xrootd >/dev/null 2>&1 || pkgs+=(xrootd-server)
command -v xrdcp >/dev/null 2>&1 || pkgs+=(xrootd-client)
[ -x /usr/bin/time ] || pkgs+=(time)
if [ ${#pkgs[@]} -gt 0 ]; then
	note "installing ${pkgs[*]}"
	DEBIAN_FRONTEND=noninteractive timeout -k 10 600 apt-get install -y "${pkgs[@]}" \
		>"$T/apt.log" 2>&1 || { tail -n 8 "$T/apt.log" >&2; die "apt-get install ${pkgs[*]} failed"; }
fi
need_cmd xrootd "apt-get install xrootd-server"
need_cmd xrdcp "apt-get install xrootd-client"
[ -x /usr/bin/time ] || die "/usr/bin/time not found (apt-get install time)"
id xrootd >/dev/null 2>&1 || die "no user xrootd (xrootd refuses to run as root; the Debian package makes it)"

IFS=';' read -r -a VARIANTS <<<"$FERRY_VARIANTS"
TOTAL_MB=$((SIZE_MB * NFILES))
TOTAL_BYTES=$((TOTAL_MB * 1048576))
need_tmpfs_mem $TOTAL_MB

# Limits: every copy gets 60 s plus 50 ms per MiB (20 MB/s, far below
# anything seen here); the bench its time plus 30 s.
COPY_LIMIT=$((60 + TOTAL_MB / 20))
BENCH_LIMIT=$((BENCH_T + 30))

# --- tmpfs at both ends, and the file set --------------------------------
mount_pair_tmpfs fx $TOTAL_MB
make_file_set "$NFILES" "$SIZE_MB" "$SRC"

mkdir "$DST/ferry" "$DST/xrd" || die "mkdir below $DST"
chown xrootd:xrootd "$DST/xrd" || die "chown xrootd $DST/xrd"

make_pair
"$FERRY" keygen "$T/key" >/dev/null || die "ferry keygen failed"

# save_logs WHY: keep the logs of a failed test (the temporary directory
# goes away on exit) beside $OUT.
save_logs() {
	local d=${OUT%.csv}.fail.$$
	mkdir -p "$d" && cp "$T"/*.err "$T"/*.out "$XRD_HOME"/xrootd.log* "$d"/ 2>/dev/null
	echo "$1 (logs in $d)" >>"$T/failures"
	note "$1; logs kept in $d"
}

# --- the XRootD server in B ----------------------------------------------
# (XRD_PORT and XRD_HOME: bench/lib/files.sh)
xrootd_config "$DST/xrd"
# The server outlives every test: give it all of them, at their limits.
XRD_LIMIT=$((REPS * (6 + ${#VARIANTS[@]}) * (COPY_LIMIT + QUIET_WAIT + 30) + 300))
# start_xrootd: 1 when it did not come up (it has been seen to crash
# while starting, once in many starts).
start_xrootd() {
	local p
	xrootd_start $XRD_LIMIT || return 1
	for p in $(ip netns pids "$NSB"); do
		[ "$(cat /proc/"$p"/comm 2>/dev/null)" = xrootd ] && XRD_PID=$p
	done
	[ -n "$XRD_PID" ] || die "xrootd listens but its process was not found"
}
for try in 1 2 3; do
	note "starting xrootd in $NSB on $IPB:$XRD_PORT (export $DST/xrd), try $try"
	start_xrootd && break
	[ $try -eq 3 ] && die "xrootd did not listen on $IPB:$XRD_PORT (3 tries)"
	save_logs "xrootd did not start (try $try)"
done

# proc_cpu PID: user+sys CPU seconds of a running process.
proc_cpu() {
	awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); printf "%.2f\n", ($12 + $13) / hz }' \
		"/proc/$1/stat" 2>/dev/null || echo 0
}

ROWS=$T/rows.txt
: >"$ROWS"
RUN=0

# pre_test ID / post_test ID: a quiet host, and the host's CPU counters.
pre_test() {
	local q=1
	if [ "$QUIET_WAIT" -gt 0 ] && ! wait_quiet "$QUIET_WAIT"; then
		note "host still busy after $QUIET_WAIT s: measuring anyway (see other CPU s)"
		q=0
	fi
	echo "$q $(cpu_snap)" >"$T/$1.host"
}
post_test() { echo " $(cpu_snap)" >>"$T/$1.host"; }

clear_dst() {
	find "$DST/ferry" "$DST/xrd" -mindepth 1 -delete || die "could not empty $DST"
}

# run_ferry_send REP LABEL [send options...]
run_ferry_send() {
	local rep=$1 label=$2; shift 2
	local port=$((7471 + RUN)) id="fsend.$RUN" rpid spid src rrc
	RUN=$((RUN + 1))
	clear_dst
	pre_test "$id"
	ip netns exec "$NSB" timeout -k 5 $((COPY_LIMIT + 10)) \
		/usr/bin/time -f "$TIME_FMT" -o "$T/$id.rtime" \
		"$FERRY" recv --key "$T/key" --once -q --json -B "$IPB" -p $port --dir "$DST/ferry" \
		>"$T/$id.recv.json" 2>"$T/$id.recv.err" &
	rpid=$!
	wait_listen $port "$NSB" || { tail_err "$T/$id.recv.err"; die "ferry recv did not listen on $IPB:$port"; }
	ip netns exec "$NSA" timeout -k 5 $COPY_LIMIT \
		/usr/bin/time -f "$TIME_FMT" -o "$T/$id.stime" \
		"$FERRY" send --key "$T/key" --json "$@" "${FILES[@]}" "$IPB:$port" \
		>"$T/$id.send.json" 2>"$T/$id.send.err" &
	spid=$!
	wait "$spid"
	src=$?
	[ $src -ne 0 ] && kill -TERM "$rpid" 2>/dev/null
	wait "$rpid"
	rrc=$?
	post_test "$id"
	if [ $src -ne 0 ]; then
		tail_err "$T/$id.send.err"; tail_err "$T/$id.send.json"
		die "ferry send $* failed ($(why_rc $src $COPY_LIMIT))"
	fi
	if [ $rrc -ne 0 ]; then
		tail_err "$T/$id.recv.err"
		die "ferry recv --once --dir failed (exit $rrc) for send $*"
	fi
	verify_set "$DST/ferry" "ferry send $label"
	echo "ferry send|$label|$rep|$T/$id" >>"$ROWS"
}

# run_ferry_bench REP: memory to memory, ferry's default streams.
run_ferry_bench() {
	local rep=$1
	local port=$((7471 + RUN)) id="fbench.$RUN" rpid spid src rrc
	RUN=$((RUN + 1))
	pre_test "$id"
	ip netns exec "$NSB" timeout -k 5 $BENCH_LIMIT \
		/usr/bin/time -f "$TIME_FMT" -o "$T/$id.rtime" \
		"$FERRY" recv --key "$T/key" --once -q --json -B "$IPB" -p $port \
		>"$T/$id.recv.json" 2>"$T/$id.recv.err" &
	rpid=$!
	wait_listen $port "$NSB" || { tail_err "$T/$id.recv.err"; die "ferry recv did not listen on $IPB:$port"; }
	ip netns exec "$NSA" timeout -k 5 $BENCH_LIMIT \
		/usr/bin/time -f "$TIME_FMT" -o "$T/$id.stime" \
		"$FERRY" bench --key "$T/key" --json -t "$BENCH_T" "$IPB:$port" \
		>"$T/$id.send.json" 2>"$T/$id.send.err" &
	spid=$!
	wait "$spid"
	src=$?
	[ $src -ne 0 ] && kill -TERM "$rpid" 2>/dev/null
	wait "$rpid"
	rrc=$?
	post_test "$id"
	if [ $src -ne 0 ]; then
		tail_err "$T/$id.send.err"
		die "ferry bench -t $BENCH_T failed ($(why_rc $src $BENCH_LIMIT))"
	fi
	[ $rrc -ne 0 ] && { tail_err "$T/$id.recv.err"; die "ferry recv --once failed (exit $rrc) for ferry bench"; }
	echo "ferry bench|default|$rep|$T/$id" >>"$ROWS"
}

# xrdcp_once REP LABEL [xrdcp options...]: one try; 1 when it failed.
# Each try copies into a directory of its own (the server keeps its
# checksum jobs by path).
xrdcp_once() {
	local rep=$1 label=$2; shift 2
	local id="xrdcp.$RUN" spid src c0 c1 dir
	RUN=$((RUN + 1))
	clear_dst
	dir=$DST/xrd/$id
	{ mkdir "$dir" && chown xrootd:xrootd "$dir"; } || die "mkdir $dir"
	kill -0 "$XRD_PID" 2>/dev/null || { tail_err "$XRD_HOME/xrootd.log"; die "xrootd is gone"; }
	pre_test "$id"
	c0=$(proc_cpu "$XRD_PID")
	ip netns exec "$NSA" timeout -k 5 $COPY_LIMIT \
		/usr/bin/time -f "$TIME_FMT" -o "$T/$id.stime" \
		xrdcp --nopbar -d 1 --cksum adler32 "$@" "${FILES[@]}" "root://$IPB:$XRD_PORT/$dir/" \
		>"$T/$id.out" 2>"$T/$id.err" &
	spid=$!
	wait "$spid"
	src=$?
	c1=$(proc_cpu "$XRD_PID")
	post_test "$id"
	if [ $src -ne 0 ]; then
		tail_err "$T/$id.out"; tail_err "$T/$id.err"; tail_err "$XRD_HOME/xrootd.log"
		save_logs "rep $rep: xrdcp --cksum adler32 $* failed ($(why_rc $src $COPY_LIMIT))"
		return 1
	fi
	# -d 1 logs one line per file whose end-to-end checksum was compared.
	[ "$(grep -c 'Checksum verification: succeeded' "$T/$id.err")" -eq "$NFILES" ] || {
		tail_err "$T/$id.err"; die "xrdcp $label: not every file's checksum was verified"
	}
	verify_set "$dir" "xrdcp $label"
	# The server's CPU for this copy, in /usr/bin/time's format.
	awk -v a="$c0" -v b="$c1" 'BEGIN { printf "0 %.2f 0 0\n", b - a }' >"$T/$id.rtime"
	echo "xrdcp|$label|$rep|$T/$id" >>"$ROWS"
}

# run_xrdcp REP LABEL [xrdcp options...]: up to XRDCP_TRIES tries (the
# server's checksum query fails now and then; every failure is reported).
run_xrdcp() {
	TRY=0
	until xrdcp_once "$@"; do
		another_try "$XRDCP_TRIES" || die "xrdcp ${*:3} failed $XRDCP_TRIES times"
	done
}

# run_cp REP: the local floor: cp of the set from tmpfs to tmpfs, no
# network, no checksum (what writing the destination costs on this host).
run_cp() {
	local rep=$1 id="cp.$RUN" src
	RUN=$((RUN + 1))
	clear_dst
	pre_test "$id"
	timeout -k 5 $COPY_LIMIT /usr/bin/time -f "$TIME_FMT" -o "$T/$id.stime" \
		cp "${FILES[@]}" "$DST/ferry/" 2>"$T/$id.err" &
	wait $!
	src=$?
	post_test "$id"
	[ $src -eq 0 ] || { tail_err "$T/$id.err"; die "cp failed ($(why_rc $src $COPY_LIMIT))"; }
	verify_set "$DST/ferry" "cp"
	echo "0 0 0 0" >"$T/$id.rtime"
	echo "cp|local|$rep|$T/$id" >>"$ROWS"
}

ntests=$(((6 + ${#VARIANTS[@]}) * REPS))
note "$ntests tests ($NFILES x $SIZE_MB MiB per copy), $NSA ($IPA) -> $NSB ($IPB)"
for rep in $(seq "$REPS"); do
	note "rep $rep/$REPS: ferry bench -t $BENCH_T"
	run_ferry_bench "$rep"
	note "rep $rep/$REPS: ferry send (defaults)"
	run_ferry_send "$rep" "default"
	note "rep $rep/$REPS: ferry send -P 8"
	run_ferry_send "$rep" "-P 8" -P 8
	for v in "${VARIANTS[@]}"; do
		read -r v <<<"$v"   # trim blanks
		[ -n "$v" ] || continue
		note "rep $rep/$REPS: ferry send $v"
		# shellcheck disable=SC2086 # the variant is a list of options
		run_ferry_send "$rep" "$v" $v
	done
	note "rep $rep/$REPS: xrdcp --cksum adler32 (one file after another)"
	run_xrdcp "$rep" "sequential"
	note "rep $rep/$REPS: xrdcp --cksum adler32 --parallel 4"
	run_xrdcp "$rep" "--parallel 4" --parallel 4
	note "rep $rep/$REPS: cp (local, tmpfs to tmpfs)"
	run_cp "$rep"
done
clear_dst

python3 - "$ROWS" "$OUT" "$TOTAL_BYTES" "$NFILES" <<'PY' || die "could not read the reports"
import csv, json, sys

rows_file, out = sys.argv[1], sys.argv[2]
total, nfiles = int(sys.argv[3]), int(sys.argv[4])

def fail(msg):
    print("ERROR: " + msg, file=sys.stderr)
    sys.exit(1)

def ptime(path):
    # /usr/bin/time may put a "Command exited ..." line first: take the last.
    last = [l for l in open(path).read().splitlines() if l.strip()][-1]
    wall, user, sys_, rss = last.split()
    return float(wall), float(user) + float(sys_), int(rss)

rows = []
for line in open(rows_file):
    tool, variant, rep, base = line.rstrip("\n").split("|")
    s_wall, s_cpu, s_rss = ptime(base + ".stime")
    _, r_cpu, _ = ptime(base + ".rtime")
    row = dict(tool=tool, variant=variant, rep=int(rep), self_gbps="", streams="",
               files="" if tool == "ferry bench" else nfiles)
    if tool == "ferry bench":
        r = json.load(open(base + ".send.json"))
        e = r["end"]
        if e["crc_errors"] or e["peer"]["bytes"] != e["bytes"] or e["bytes"] <= 0:
            fail(f"ferry bench report {base}.send.json: crc errors or byte counts differ")
        if r["start"]["transport"] != "tcp":
            fail(f"ferry bench picked {r['start']['transport']}, not tcp")
        row.update(bytes=e["bytes"], seconds=e["seconds"], gbps=e["gbps"],
                   streams=r["start"]["streams"])
    else:
        if tool == "ferry send":
            r = json.load(open(base + ".send.json"))
            e = r["end"]
            fs = e["files"]
            if fs["done"] != nfiles or fs["failed"] or e["bytes"] != total:
                fail(f"ferry send report {base}.send.json: {fs}, {e['bytes']} bytes")
            if r["start"]["transport"] != "tcp":
                fail(f"ferry send picked {r['start']['transport']}, not tcp")
            if not all(f["ok"] for f in r["files"]):
                fail(f"ferry send report {base}.send.json: a file is not ok")
            if variant in ("default", "-P 8") and not all(
                    f["checksum"].startswith("adler32:") for f in r["files"]):
                fail(f"ferry send report {base}.send.json: checksum is not adler32")
            row["self_gbps"] = e["gbps"]
            row["streams"] = r["start"]["streams"]
        row.update(bytes=total, seconds=s_wall, gbps=total * 8 / s_wall / 1e9)
    h = open(base + ".host").read().split()
    quiet, b0, st0, t0, b1, st1, t1 = int(h[0]), *map(float, h[1:])
    row.update(client_cpu_s=s_cpu, server_cpu_s=r_cpu, client_rss_mib=s_rss / 1024,
               host_quiet=quiet, other_cpu_s=max(0.0, (b1 - b0) - s_cpu - r_cpu),
               host_cpu_s=t1 - t0, steal_s=st1 - st0)
    rows.append(row)

FIELDS = ["tool", "variant", "rep", "streams", "files", "bytes", "seconds", "gbps", "self_gbps",
          "client_cpu_s", "server_cpu_s", "client_rss_mib", "host_quiet", "other_cpu_s",
          "steal_s", "host_cpu_s"]
with open(out, "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=FIELDS, extrasaction="ignore")
    w.writeheader()
    for r in rows:
        w.writerow({k: (f"{r[k]:.4f}" if isinstance(r[k], float) else r[k]) for k in FIELDS})
PY
report "$OUT" "$T/failures"
exit 0
