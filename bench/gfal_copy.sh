#!/usr/bin/env bash
# gfal-copy through the ferry gfal2 plugin (ferry:// URLs) against gfal-copy
# through Debian's xrootd gfal2 plugin (root:// URLs), adler32 on for both
# (issue 9). One veth pair between two fresh network namespaces (addresses
# from 198.18.0.0/15), tmpfs at both ends:
#   A  the client: gfal-copy, and the source files on a tmpfs
#      (/tmp/gc-src.PID)
#   B  the servers, both on B's address, both writing to one tmpfs
#      (/tmp/gc-dst.PID): `ferry recv --exports` (export root
#      /tmp/gc-dst.PID/ferry, one key with all rights on /) and xrootd
#      (export /tmp/gc-dst.PID/xrd, xrootd.chksum adler32)
#
# Each copy is ONE gfal-copy invocation for the whole set: gfal-copy
# --from-file LIST DIR/ copies every source URL in LIST into the
# destination directory, one file after another (gfal-copy's Python loop;
# each file is one gfal2 filecopy), so both plugins pay the same start-up
# and per-file costs:
#   ferry       gfal-copy -v -K ADLER32 [variant] --from-file LIST ferry://B:PORT/rN/
#   xrootd      gfal-copy -v -K ADLER32 [variant] --from-file LIST root://B:1094//DST/xrd/rN/
# LIST holds file:///tmp/gc-src.PID/fI.dat, I = 1..NFILES. Each copy goes
# into a fresh directory rN (xrootd keeps its checksum jobs by path), and
# the destination is emptied before each copy.
#
# GFAL_PLUGIN_DIR names one directory (gfal2 loads every libgfal_plugin_*.so
# in it): the script makes one with links to the build's ferry plugin and
# the system's file and xrootd plugins, and both tools run with it (so
# neither loads gfal2's other plugins). The ferry plugin gets its key from
# FERRY_KEY and FERRY_KEY_NAME.
#
# Checks, for every copy: gfal-copy exits 0; every file is in the
# destination, byte for byte (cmp), and nothing else; every file's adler32
# was compared end to end: for xrootd, XrdCl's "Checksum verification:
# succeeded" line (XRD_LOGLEVEL=Info), once per file; for ferry, the
# plugin's CHECKSUM:EXIT event in gfal-copy -v's output (FERRY_CKSUM_RE),
# once per file. And once per server, before the timed copies: a small file copied
# with a wrong expected value (-K ADLER32:00000001) must fail with a
# checksum error (so the comparison is real, not only logged).
#
# Timing: wall seconds of the gfal-copy process, start to exit, and the
# client's CPU (user + sys, children included), from /usr/bin/time; the
# server's CPU from /proc/PID/stat of the daemon's processes in B (their
# threads, and children they reaped) before and after each copy.
#
# Environment:
#   SIZE_MB     size of each file in MiB (default 1024)
#   NFILES      number of files (default 4)
#   REPS        repetitions of the whole set of copies (default 1); with more
#               than one, the table shows medians
#   QUIET_WAIT  before each copy, wait up to this many seconds for the host
#               to fall below 15% busy (default 60; 0 = do not wait)
#   OUT         CSV of every copy (default /tmp/gfal_copy.csv); logs of a
#               failed copy are kept in ${OUT%.csv}.fail.PID/
#   FERRY_VARIANTS   ';'-separated gfal-copy option sets for ferry, one row
#               each (default ";-n 8;-D FERRY:CHECKSUM_RECHECK=true": the
#               defaults, 8 streams, and the destination daemon reading
#               each stored file back for a second adler32, as xrootd's
#               server does for XrdCl's end-to-end check)
#   XROOTD_VARIANTS  the same for xrootd (default ";-n 4": the defaults, then
#               4 XrdCl substreams)
#   WARMUP      untimed copies of the set per tool before the timed ones
#               (default 1; 0 for none): the first copy after the servers
#               start ran up to 1.7x slower than the next ones, for both
#   COPY_TRIES  tries per copy (default 2); every failed try is reported
#   ONLY        "xrootd" or "ferry": run one half only (no ratio)
#   FERRY_PLUGIN  the plugin (default $BUILD/apps/gfal2/libgfal_plugin_ferry.so)
#   GFAL_SYS_PLUGIN_DIR  the system plugins (default
#               /usr/lib/x86_64-linux-gnu/gfal2-plugins)
#   FERRY_CKSUM_RE  extended regex for the ferry plugin's per-file
#               checksum-comparison line in gfal-copy -v output (default
#               CHECKSUM:EXIT, the event it sends once both sides' whole-file
#               checksums agreed)
#   FERRY, BUILD  the ferry binary (default build/apps/ferry/ferry)
#   REPORT      print the report of an earlier run from its CSV and measure
#               nothing (no root needed)
#
# Needs root (namespaces, mounts), gfal-copy (gfal2-util-scripts), the
# xrootd gfal2 plugin (gfal2-plugin-xrootd), the file plugin
# (gfal2-plugin-file), xrootd (xrootd-server) and /usr/bin/time (time).
# Exit status: 0 when every copy ran and verified; 77 (with the reason)
# when something it needs is missing (no root, no gfal-copy, no plugin, no
# `ferry recv --exports`); 1 when anything failed.
#
# Example: bench/gfal_copy.sh            (4 x 1 GiB, one rep)
#          SIZE_MB=64 ONLY=xrootd QUIET_WAIT=0 bench/gfal_copy.sh
# shellcheck source=bench/lib/common.sh
. "$(dirname "$0")/lib/common.sh"
# shellcheck source=bench/lib/files.sh
. "$(dirname "$0")/lib/files.sh"

# (SIZE_MB, NFILES, REPS, QUIET_WAIT: bench/lib/files.sh)
OUT=${OUT:-/tmp/gfal_copy.csv}
COPY_TRIES=${COPY_TRIES:-2}
WARMUP=${WARMUP:-1}
[[ $WARMUP =~ ^[0-9]+$ ]] || die "WARMUP must be a number of copies (got '$WARMUP')"
FERRY_VARIANTS=${FERRY_VARIANTS-;-n 8;-D FERRY:CHECKSUM_RECHECK=true}
XROOTD_VARIANTS=${XROOTD_VARIANTS-;-n 4}
ONLY=${ONLY:-}
FERRY_PLUGIN=${FERRY_PLUGIN:-$BUILD/apps/gfal2/libgfal_plugin_ferry.so}
GFAL_SYS_PLUGIN_DIR=${GFAL_SYS_PLUGIN_DIR:-/usr/lib/x86_64-linux-gnu/gfal2-plugins}
FERRY_CKSUM_RE=${FERRY_CKSUM_RE:-CHECKSUM:EXIT}

skip() { echo "SKIP: $*" >&2; exit 77; }

# report CSV: the table, from the CSV of a run (this one, or an earlier
# one with REPORT=CSV).
report() {
	python3 - "$1" <<'PY' || die "could not make the report from $1"
import csv, statistics, sys

rows = list(csv.DictReader(open(sys.argv[1])))
if not rows:
    sys.exit(f"ERROR: no rows in {sys.argv[1]}")
num = ("seconds", "gbytes_s", "client_cpu_s", "server_cpu_s", "other_cpu_s", "host_cpu_s", "load1")
for r in rows:
    for c in num:
        r[c] = float(r[c])
    r["bytes"], r["rep"] = int(r["bytes"]), int(r["rep"])
    r["quiet"] = r["other_cpu_s"] <= 0.1 * r["host_cpu_s"]
reps = max(r["rep"] for r in rows)
groups = {}
for r in rows:
    groups.setdefault((r["tool"], r["variant"]), []).append(r)
M = {}
for k, rs in groups.items():
    m = {c: statistics.median(x[c] for x in rs) for c in num}
    m["cpu_per_gb"] = statistics.median((x["client_cpu_s"] + x["server_cpu_s"]) / (x["bytes"] / 1e9)
                                        for x in rs)
    m["all"] = " ".join(f"{x['seconds']:.2f}" for x in rs)
    m["nquiet"] = sum(x["quiet"] for x in rs)
    m["n"] = len(rs)
    M[k] = m
r0 = rows[0]
what = f"median of {reps} runs" if reps > 1 else "one run"
print(f"\n{r0['files']} files, {r0['bytes'] / (1 << 30):.2f} GiB per copy, tmpfs to tmpfs over veth, "
      f"one gfal-copy invocation per copy, -K ADLER32; {what}.")
print("seconds = wall time of gfal-copy, start to exit; GB/s = payload 10^9 bytes / that time;")
print("CPU = user+sys seconds (client: gfal-copy and its children, /usr/bin/time; server: the")
print("daemon's /proc counters over the copy); other CPU s = what the rest of the host used")
print("meanwhile; quiet = runs where that was <= 10% of the host's CPU time\n")
hdr = ["tool", "gfal-copy options", "seconds", "GB/s", "Gb/s", "client CPU s", "server CPU s",
       "CPU s/GB", "other CPU s", "load1", "seconds of each run", "quiet runs"]
print("| " + " | ".join(hdr) + " |")
print("|" + "|".join("---" for _ in hdr) + "|")
order = sorted(M, key=lambda k: (k[0] != "ferry", k[1] != "", k[1]))
for k in order:
    m = M[k]
    print("| " + " | ".join([k[0], k[1] or "(defaults)", f"{m['seconds']:.2f}", f"{m['gbytes_s']:.3f}",
                             f"{m['gbytes_s'] * 8:.2f}", f"{m['client_cpu_s']:.2f}",
                             f"{m['server_cpu_s']:.2f}", f"{m['cpu_per_gb']:.2f}",
                             f"{m['other_cpu_s']:.1f}", f"{m['load1']:.2f}", m["all"],
                             f"{m['nquiet']}/{m['n']}"]) + " |")
f, x = M.get(("ferry", "")), M.get(("xrootd", ""))
if f and x:
    print(f"\nratio xrootd_seconds / ferry_seconds (both with gfal-copy's defaults): "
          f"{x['seconds'] / f['seconds']:.2f}x (goal >= 2x)")
    bf = min((M[k] for k in M if k[0] == "ferry"), key=lambda m: m["seconds"])
    bx = min((M[k] for k in M if k[0] == "xrootd"), key=lambda m: m["seconds"])
    bfk = [k for k in M if M[k] is bf][0]
    bxk = [k for k in M if M[k] is bx][0]
    print(f"best against best: xrootd {bxk[1] or '(defaults)'} {bx['seconds']:.2f} s / "
          f"ferry {bfk[1] or '(defaults)'} {bf['seconds']:.2f} s = {bx['seconds'] / bf['seconds']:.2f}x")
    if reps > 1:
        print("ratio within each rep (defaults): " + " ".join(
            f"{[r for r in rows if r['rep'] == i and r['tool'] == 'xrootd' and not r['variant']][0]['seconds'] / [r for r in rows if r['rep'] == i and r['tool'] == 'ferry' and not r['variant']][0]['seconds']:.2f}"
            for i in range(1, reps + 1)))
else:
    print("\nno ratio: this run has only one of the two tools")
PY
}

if [ -n "${REPORT:-}" ]; then
	report "$REPORT"
	exit 0
fi

check_file_set_settings
[[ "$COPY_TRIES" =~ ^[1-9][0-9]*$ ]] || die "COPY_TRIES must be a positive integer"
case $ONLY in ""|ferry|xrootd) ;; *) die "ONLY must be ferry or xrootd" ;; esac
RUN_FERRY=1; RUN_XRD=1
[ "$ONLY" = xrootd ] && RUN_FERRY=0
[ "$ONLY" = ferry ] && RUN_XRD=0

# --- what it needs: a missing tool is a skip, not a failure ----------------
[ "$(id -u)" -eq 0 ] || skip "needs root (network namespaces, tmpfs mounts)"
ip netns list >/dev/null 2>&1 || skip "ip netns does not work here"
for c in timeout cmp runuser python3 flock; do
	command -v $c >/dev/null 2>&1 || skip "$c not found"
done
[ -x /usr/bin/time ] || skip "/usr/bin/time not found (apt-get install time)"
command -v gfal-copy >/dev/null 2>&1 || skip "gfal-copy not found (apt-get install gfal2-util-scripts python3-gfal2-util)"
# The gfal2 scripts start `python` from PATH, which need not be Debian's.
export GFAL_PYTHONBIN=${GFAL_PYTHONBIN:-/usr/bin/python3}
"$GFAL_PYTHONBIN" -c 'import gfal2, gfal2_util' 2>/dev/null ||
	skip "$GFAL_PYTHONBIN cannot import gfal2 and gfal2_util (apt-get install python3-gfal2 python3-gfal2-util)"
[ -f "$GFAL_SYS_PLUGIN_DIR/libgfal_plugin_file.so" ] ||
	skip "no gfal2 file plugin in $GFAL_SYS_PLUGIN_DIR (apt-get install gfal2-plugin-file)"
if [ $RUN_XRD -eq 1 ]; then
	[ -f "$GFAL_SYS_PLUGIN_DIR/libgfal_plugin_xrootd.so" ] ||
		skip "no gfal2 xrootd plugin in $GFAL_SYS_PLUGIN_DIR (apt-get install gfal2-plugin-xrootd)"
	command -v xrootd >/dev/null 2>&1 || skip "xrootd not found (apt-get install xrootd-server)"
	id xrootd >/dev/null 2>&1 || skip "no user xrootd (xrootd refuses to run as root; the Debian package makes it)"
fi
if [ $RUN_FERRY -eq 1 ]; then
	[ -f "$FERRY_PLUGIN" ] || skip "no ferry gfal2 plugin at $FERRY_PLUGIN (build apps/gfal2; needs libgfal2-dev)"
	[ -x "$FERRY" ] || skip "no ferry binary at $FERRY (build with meson first)"
	recv_help=$("$FERRY" recv --help 2>&1)
	grep -q -- '--exports' <<<"$recv_help" || skip "$FERRY recv has no --exports (the daemon of issue 9)"
	# The daemon's listening address: --listen where it has it, else --bind.
	LISTEN_OPT=--bind
	grep -q -- '--listen' <<<"$recv_help" && LISTEN_OPT=--listen
fi

bench_lock || note "measuring beside another benchmark"

IFS=';' read -r -a FVARS <<<"$FERRY_VARIANTS"
IFS=';' read -r -a XVARS <<<"$XROOTD_VARIANTS"
[ ${#FVARS[@]} -gt 0 ] || FVARS=("")
[ ${#XVARS[@]} -gt 0 ] || XVARS=("")
TOTAL_MB=$((SIZE_MB * NFILES))
TOTAL_BYTES=$((TOTAL_MB * 1048576))
need_tmpfs_mem $TOTAL_MB
# Every copy gets 60 s plus 50 ms per MiB (20 MB/s, far below anything
# seen here).
COPY_LIMIT=$((60 + TOTAL_MB / 20))
ncopies=$(((REPS * ${#FVARS[@]} + WARMUP) * RUN_FERRY + (REPS * ${#XVARS[@]} + WARMUP) * RUN_XRD))
# The daemons outlive every copy: give them all of them, at their limits.
DAEMON_LIMIT=$((ncopies * COPY_TRIES * (COPY_LIMIT + QUIET_WAIT + 30) + 300))

# --- tmpfs at both ends, the file set, the plugin directory -------------
mount_pair_tmpfs gc $TOTAL_MB
make_file_set "$NFILES" "$SIZE_MB" "$SRC"
printf 'file://%s\n' "${FILES[@]}" >"$T/sources"
# The probe: a small file, copied with a wrong expected checksum.
head -c 1M /dev/urandom >"$SRC/probe.dat" || die "could not write $SRC/probe.dat"

mkdir "$DST/ferry" "$DST/xrd" || die "mkdir below $DST"
chown xrootd:xrootd "$DST/xrd" 2>/dev/null || [ $RUN_XRD -eq 0 ] || die "chown xrootd $DST/xrd"

PLUGDIR=$T/gfal2-plugins
mkdir "$PLUGDIR" || die "mkdir $PLUGDIR"
ln -s "$GFAL_SYS_PLUGIN_DIR/libgfal_plugin_file.so" "$PLUGDIR/" || die "link the file plugin"
[ $RUN_XRD -eq 0 ] || ln -s "$GFAL_SYS_PLUGIN_DIR/libgfal_plugin_xrootd.so" "$PLUGDIR/" ||
	die "link the xrootd plugin"
[ $RUN_FERRY -eq 0 ] || ln -s "$(readlink -f "$FERRY_PLUGIN")" "$PLUGDIR/libgfal_plugin_ferry.so" ||
	die "link the ferry plugin"

make_pair

# save_logs WHY: keep the logs of a failed copy beside $OUT.
FAILURES=0
save_logs() {
	local d=${OUT%.csv}.fail.$$
	mkdir -p "$d" && cp "$T"/*.err "$T"/*.out "$T"/*.log "$XRD_HOME"/xrootd.log* "$d"/ 2>/dev/null
	FAILURES=$((FAILURES + 1))
	note "$1; logs kept in $d"
}

# srv_cpu COMM: CPU seconds (user + sys, with reaped children) of the
# processes named COMM in namespace B.
srv_cpu() {
	local p s=0
	for p in $(ip netns pids "$NSB"); do
		[ "$(cat "/proc/$p/comm" 2>/dev/null)" = "$1" ] || continue
		s="$s $(cat "/proc/$p/stat" 2>/dev/null)"
	done
	awk -v hz="$(getconf CLK_TCK)" -v s="$s" 'BEGIN {
		n = split(s, w, " "); t = 0
		# Each stat line after its "pid (comm)": field 12..15 of the rest
		# are utime, stime, cutime, cstime (comm has no blanks here).
		for (i = 1; i <= n; i++) if (w[i] ~ /\)$/) t += w[i + 12] + w[i + 13] + w[i + 14] + w[i + 15]
		printf "%.2f\n", t / hz }'
}

# --- the XRootD server in B ---------------------------------------------
# (XRD_PORT and XRD_HOME: bench/lib/files.sh)
if [ $RUN_XRD -eq 1 ]; then
	xrootd_config "$DST/xrd"
	for try in 1 2 3; do
		note "starting xrootd in $NSB on $IPB:$XRD_PORT (export $DST/xrd), try $try"
		xrootd_start $DAEMON_LIMIT && break
		[ $try -eq 3 ] && die "xrootd did not listen on $IPB:$XRD_PORT (3 tries)"
	done
fi

# --- the ferry daemon in B ---------------------------------------------
FERRY_PORT=7471
if [ $RUN_FERRY -eq 1 ]; then
	mkdir -m 700 "$T/ferryd" || die "mkdir $T/ferryd"
	"$FERRY" keygen "$T/ferryd/bench.key" >/dev/null || die "ferry keygen failed"
	chmod 600 "$T/ferryd/bench.key"
	cat >"$T/ferryd/exports" <<-EOF
	root $DST/ferry
	key bench $T/ferryd/bench.key rights all paths /
	EOF
	note "starting ferry recv --exports in $NSB on $IPB:$FERRY_PORT (root $DST/ferry)"
	ip netns exec "$NSB" timeout -k 5 $DAEMON_LIMIT \
		"$FERRY" recv --exports "$T/ferryd/exports" "$LISTEN_OPT" "$IPB" --port $FERRY_PORT \
		>"$T/ferryd.out" 2>"$T/ferryd.log" &
	FERRYD_JOB=$!
	wait_listen $FERRY_PORT "$NSB" || {
		tail_err "$T/ferryd.log"; die "ferry recv --exports did not listen on $IPB:$FERRY_PORT"
	}
fi

# gfal_env: the environment of every gfal-copy (the same for both tools;
# FERRY_* is only read by the ferry plugin, XRD_LOGLEVEL only by XrdCl).
GFAL_ENV=(GFAL_PLUGIN_DIR="$PLUGDIR" GFAL_PYTHONBIN="$GFAL_PYTHONBIN" XRD_LOGLEVEL=Info)
[ $RUN_FERRY -eq 1 ] && GFAL_ENV+=(FERRY_KEY="$T/ferryd/bench.key" FERRY_KEY_NAME=bench)

dst_url() { # TOOL DIR: the URL of directory DIR (below the tool's export)
	case $1 in
	ferry) echo "ferry://$IPB:$FERRY_PORT/$2/" ;;
	xrootd) echo "root://$IPB:$XRD_PORT/$DST/xrd/$2/" ;;
	esac
}
dst_dir() { # TOOL DIR: that directory on B's tmpfs
	case $1 in
	ferry) echo "$DST/ferry/$2" ;;
	xrootd) echo "$DST/xrd/$2" ;;
	esac
}
server_comm() { case $1 in ferry) echo ferry ;; xrootd) echo xrootd ;; esac; }
# cksum_lines TOOL FILE: how many per-file checksum comparisons FILE shows.
cksum_lines() {
	case $1 in
	ferry) grep -c -E "$FERRY_CKSUM_RE" "$2" ;;
	xrootd) grep -c 'Checksum verification: succeeded' "$2" ;;
	esac
}
server_alive() {
	case $1 in
	ferry) kill -0 "$FERRYD_JOB" 2>/dev/null || { tail_err "$T/ferryd.log"; die "ferry recv is gone"; } ;;
	xrootd) wait_listen $XRD_PORT "$NSB" || { tail_err "$XRD_HOME/xrootd.log"; die "xrootd is gone"; } ;;
	esac
}

RUN=0
# new_dir TOOL: empty the destination, and make a fresh directory there
# for TOOL's next copy; its name is left in $NEWDIR.
new_dir() {
	NEWDIR=r$RUN
	RUN=$((RUN + 1))
	find "$DST/ferry" "$DST/xrd" -mindepth 1 -delete || die "could not empty $DST"
	mkdir "$(dst_dir "$1" "$NEWDIR")" || die "mkdir $(dst_dir "$1" "$NEWDIR")"
	if [ "$1" = xrootd ]; then
		chown xrootd:xrootd "$(dst_dir "$1" "$NEWDIR")" || die "chown $(dst_dir "$1" "$NEWDIR")"
	fi
}

# probe TOOL: a 1 MiB copy with a wrong expected adler32 must fail, and
# say why (a checksum mismatch); a right one must succeed.
probe() {
	local tool=$1 d rc
	new_dir "$tool"; d=$NEWDIR
	ip netns exec "$NSA" timeout -k 5 60 env "${GFAL_ENV[@]}" \
		gfal-copy -v -K ADLER32:00000001 "file://$SRC/probe.dat" "$(dst_url "$tool" "$d")probe.dat" \
		>"$T/probe-$tool-bad.out" 2>&1
	rc=$?
	[ $rc -ne 0 ] || { save_logs "$tool probe"; die "$tool: gfal-copy with a wrong expected adler32 succeeded"; }
	grep -q -i -E 'checksum|adler' "$T/probe-$tool-bad.out" || {
		tail_err "$T/probe-$tool-bad.out"
		die "$tool: gfal-copy with a wrong expected adler32 failed (exit $rc), but not for a checksum mismatch"
	}
	note "$tool probe: a wrong expected adler32 is refused: $({ grep -m1 'gfal-copy error' "$T/probe-$tool-bad.out" ||
		grep -i -m1 checksum "$T/probe-$tool-bad.out"; } | cut -c1-200)"
	new_dir "$tool"; d=$NEWDIR
	ip netns exec "$NSA" timeout -k 5 60 env "${GFAL_ENV[@]}" \
		gfal-copy -v -K ADLER32 "file://$SRC/probe.dat" "$(dst_url "$tool" "$d")probe.dat" \
		>"$T/probe-$tool-ok.out" 2>&1 ||
		{ tail_err "$T/probe-$tool-ok.out"; die "$tool: gfal-copy of the 1 MiB probe file failed"; }
	cmp -s "$SRC/probe.dat" "$(dst_dir "$tool" "$d")/probe.dat" || die "$tool: the probe file differs"
	[ "$(cksum_lines "$tool" "$T/probe-$tool-ok.out")" -ge 1 ] || {
		tail_err "$T/probe-$tool-ok.out"
		die "$tool: gfal-copy -v shows no checksum comparison for the probe file"
	}
}

ROWS=$T/rows.txt
: >"$ROWS"

# copy_once REP TOOL VARIANT: one timed copy of the set; 1 when it failed.
copy_once() {
	local rep=$1 tool=$2 variant=$3 d id src c0 c1 h0 h1 q=1 n load
	new_dir "$tool"; d=$NEWDIR
	id="$tool.$d"
	server_alive "$tool"
	if [ "$QUIET_WAIT" -gt 0 ] && ! wait_quiet "$QUIET_WAIT"; then
		note "host still busy after $QUIET_WAIT s: measuring anyway (see other CPU s)"
		q=0
	fi
	load=$(cut -d' ' -f1 /proc/loadavg)
	h0=$(cpu_snap)
	c0=$(srv_cpu "$(server_comm "$tool")")
	# shellcheck disable=SC2086 # the variant is a list of options
	ip netns exec "$NSA" /usr/bin/time -f "$TIME_FMT" -o "$T/$id.time" \
		timeout -k 5 $COPY_LIMIT env "${GFAL_ENV[@]}" \
		gfal-copy -v -K ADLER32 $variant --from-file "$T/sources" "$(dst_url "$tool" "$d")" \
		>"$T/$id.out" 2>"$T/$id.err"
	src=$?
	c1=$(srv_cpu "$(server_comm "$tool")")
	h1=$(cpu_snap)
	if [ $src -ne 0 ]; then
		tail_err "$T/$id.out"; tail_err "$T/$id.err"
		save_logs "rep $rep: $tool gfal-copy $variant failed ($(why_rc $src $COPY_LIMIT))"
		return 1
	fi
	cat "$T/$id.out" "$T/$id.err" >"$T/$id.log"
	n=$(cksum_lines "$tool" "$T/$id.log")
	[ "$n" -eq "$NFILES" ] || {
		tail_err "$T/$id.log"
		save_logs "rep $rep: $tool $variant: $n checksum comparisons in gfal-copy -v's output, not $NFILES"
		die "$tool $variant: not every file's checksum was shown compared"
	}
	verify_set "$(dst_dir "$tool" "$d")" "$tool $variant"
	echo "$tool|$variant|$rep|$q|$load|$c0|$c1|$h0|$h1|$T/$id.time" >>"$ROWS"
}

run_copy() { # REP TOOL VARIANT: up to COPY_TRIES tries
	TRY=0
	until copy_once "$@"; do
		another_try "$COPY_TRIES" || die "$2 gfal-copy $3 failed $COPY_TRIES times"
	done
}

[ $RUN_FERRY -eq 1 ] && probe ferry
[ $RUN_XRD -eq 1 ] && probe xrootd

for ((w = 1; w <= WARMUP; w++)); do
	for tool in ferry xrootd; do
		{ [ $tool = ferry ] && [ $RUN_FERRY -eq 1 ]; } ||
			{ [ $tool = xrootd ] && [ $RUN_XRD -eq 1 ]; } || continue
		note "warm-up $w/$WARMUP: $tool gfal-copy -K ADLER32 (not counted)"
		run_copy warmup $tool ""
	done
done
[ -f "$ROWS" ] && sed -i '/^[^|]*|[^|]*|warmup|/d' "$ROWS"

note "$ncopies copies of $NFILES x $SIZE_MB MiB, $NSA ($IPA) -> $NSB ($IPB)"
for rep in $(seq "$REPS"); do
	# Interleaved: ferry defaults, xrootd defaults, then the variants.
	nv=$(( ${#FVARS[@]} > ${#XVARS[@]} ? ${#FVARS[@]} : ${#XVARS[@]} ))
	for ((i = 0; i < nv; i++)); do
		for tool in ferry xrootd; do
			if [ $tool = ferry ]; then
				[ $RUN_FERRY -eq 1 ] && [ $i -lt ${#FVARS[@]} ] || continue
				v=${FVARS[$i]}
			else
				[ $RUN_XRD -eq 1 ] && [ $i -lt ${#XVARS[@]} ] || continue
				v=${XVARS[$i]}
			fi
			read -r v <<<"$v"   # trim blanks
			note "rep $rep/$REPS: $tool gfal-copy -K ADLER32 ${v:-(defaults)}"
			run_copy "$rep" $tool "$v"
		done
	done
done
find "$DST/ferry" "$DST/xrd" -mindepth 1 -delete

python3 - "$ROWS" "$OUT" "$TOTAL_BYTES" "$NFILES" <<'PY' || die "could not write $OUT"
import csv, sys

rows_file, out, total, nfiles = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
FIELDS = ["tool", "variant", "rep", "files", "bytes", "seconds", "gbytes_s", "client_cpu_s",
          "server_cpu_s", "client_rss_mib", "host_quiet", "load1", "other_cpu_s", "steal_s",
          "host_cpu_s"]
with open(out, "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=FIELDS)
    w.writeheader()
    for line in open(rows_file):
        tool, variant, rep, quiet, load, c0, c1, h0, h1, tfile = line.rstrip("\n").split("|")
        # /usr/bin/time may put a "Command exited ..." line first: take the last.
        wall, user, sys_, rss = [l for l in open(tfile).read().splitlines() if l.strip()][-1].split()
        wall, ccpu = float(wall), float(user) + float(sys_)
        scpu = float(c1) - float(c0)
        b0, st0, t0 = map(float, h0.split())
        b1, st1, t1 = map(float, h1.split())
        w.writerow(dict(tool=tool, variant=variant, rep=rep, files=nfiles, bytes=total,
                        seconds=f"{wall:.2f}", gbytes_s=f"{total / wall / 1e9:.4f}",
                        client_cpu_s=f"{ccpu:.2f}", server_cpu_s=f"{scpu:.2f}",
                        client_rss_mib=f"{int(rss) / 1024:.1f}", host_quiet=quiet, load1=load,
                        other_cpu_s=f"{max(0.0, (b1 - b0) - ccpu - scpu):.2f}",
                        steal_s=f"{st1 - st0:.2f}", host_cpu_s=f"{t1 - t0:.2f}"))
PY
report "$OUT"
[ $FAILURES -eq 0 ] || note "$FAILURES failed tries (retried; not in the table)"
exit 0
