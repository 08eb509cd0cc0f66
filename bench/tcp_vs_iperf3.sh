#!/usr/bin/env bash
# ferry's tcp transport against iperf3, in the same run, on one veth pair
# between two fresh network namespaces (198.18.0.0/15 addresses).
#
# For each stream count P it runs, from namespace A to namespace B:
#   ferry recv --once -q --json (B)   +  ferry bench --json -t DURATION -P P (A)
#   iperf3 -s -1 (B)                   +  iperf3 -c IPB -t DURATION -P P -J (A)
# Every one of those four processes is wrapped in /usr/bin/time, so CPU
# (user + sys) and peak RSS are measured from outside and the same way for
# both tools. CPU per GB = CPU seconds / (payload bytes received / 1e9).
#
# Environment:
#   DURATION        seconds per test (default 10)
#   REPS            repetitions of the whole set (default 1); with more
#                   than one the table shows the median of each column
#                   over the undisturbed runs (see BUSY_PCT)
#   STREAMS         stream counts (default "1 8")
#   OUT             CSV of every row (default /tmp/tcp_vs_iperf3.csv)
#   FERRY_VARIANTS  extra ferry bench option sets, ';'-separated, each run
#                   as an extra row (e.g. "-l 1M;--sockbuf 4M"); the main
#                   rows always use ferry's defaults
#   BUSY_PCT        how much of the host's CPU (percent, default 10) other
#                   processes may use before a test counts as disturbed
#   QUIET_WAIT      before each test, wait up to this many seconds for the
#                   host to fall below BUSY_PCT busy (default 30; 0 = do not
#                   wait). The CPU other processes used during each test is
#                   reported either way (column "other CPU s")
#   RETRY_BUSY      run a disturbed test again, up to this many times
#                   (default 2; the least disturbed try is kept)
#   BENCH_LOCK_WAIT seconds to wait for other benchmarks that hold the host
#                   lock (bench_lock in bench/lib/common.sh; default 900)
#   FERRY, BUILD    the ferry binary (default build/apps/ferry/ferry)
#
# Exit status: 0 when every test ran, 1 (with the reason) when one failed.
#
# Example: DURATION=10 REPS=3 bench/tcp_vs_iperf3.sh
# run_ferry and run_iperf3 are called as "run_$tool" (SC2317 cannot see it)
# shellcheck source=bench/lib/common.sh disable=SC2317
. "$(dirname "$0")/lib/common.sh"

DURATION=${DURATION:-10}
REPS=${REPS:-1}
STREAMS=${STREAMS:-"1 8"}
OUT=${OUT:-/tmp/tcp_vs_iperf3.csv}
FERRY_VARIANTS=${FERRY_VARIANTS:-}
QUIET_WAIT=${QUIET_WAIT:-30}
RETRY_BUSY=${RETRY_BUSY:-2}
BUSY_PCT=${BUSY_PCT:-10}

[[ "$DURATION" =~ ^[1-9][0-9]*$ ]] || die "DURATION must be a whole number of seconds"
[[ "$REPS" =~ ^[1-9][0-9]*$ ]] || die "REPS must be a positive integer"
[[ "$QUIET_WAIT" =~ ^[0-9]+$ ]] || die "QUIET_WAIT must be a whole number of seconds"
[[ "$RETRY_BUSY" =~ ^[0-9]+$ ]] || die "RETRY_BUSY must be a whole number"
[[ "$BUSY_PCT" =~ ^[1-9][0-9]?$ ]] || die "BUSY_PCT must be a percentage (1-99)"
for P in $STREAMS; do
	[[ "$P" =~ ^[1-9][0-9]*$ ]] || die "STREAMS must be positive integers"
done

need_root
need_cmd iperf3 "apt-get install iperf3"
need_cmd python3 "needed to read the JSON reports"
need_cmd timeout "coreutils"
[ -x /usr/bin/time ] || die "/usr/bin/time not found (apt-get install time)"
[ -x "$FERRY" ] || die "no ferry binary at $FERRY (build with meson first)"

# No process may outlive this: each gets the test time plus some slack.
# The whole run takes at most BENCH_LOCK_WAIT + tests x (1 + RETRY_BUSY) x
# (QUIET_WAIT + 5 + 2 x LIMIT), and about tests x (DURATION + 3) s when quiet.
LIMIT=$((DURATION + 30))

bench_lock "${BENCH_LOCK_WAIT:-900}"

# A private copy of the binary: a rebuild during the run cannot change it.
cp "$FERRY" "$T/ferry" || die "cannot copy $FERRY"
FERRY=$T/ferry
note "ferry: $("$FERRY" version 2>&1 | head -n 1), sha256 $(sha256sum "$FERRY" | cut -c1-12); $(iperf3 --version | head -n 1)"

make_pair
"$FERRY" keygen "$T/key" >/dev/null || die "ferry keygen failed"

ROWS=$T/rows.txt   # one line per test: the files the reader below parses
: >"$ROWS"
RUN=0

# tail_err FILE: the last lines of a log, indented, for error messages.
tail_err() { [ -s "$1" ] && tail -n 8 "$1" | sed 's/^/    /' >&2; }

# pre_test ID: wait for a quiet host, then note the host's CPU counters.
pre_test() {
	local q=1
	if [ "$QUIET_WAIT" -gt 0 ] && ! wait_quiet "$QUIET_WAIT" "$BUSY_PCT"; then
		note "host still busy after $QUIET_WAIT s: measuring anyway (see other CPU s)"
		q=0
	fi
	echo "$q $(cpu_snap)" >"$T/$1.host"
}
# post_test ID: the host's CPU counters after the test.
post_test() { echo " $(cpu_snap)" >>"$T/$1.host"; }

# run_ferry ID PORT P [bench options...]: one ferry test, files $T/ID.*
run_ferry() {
	local id=$1 port=$2 P=$3 rpid spid src rrc
	shift 3
	pre_test "$id"
	ip netns exec "$NSB" timeout -k 5 "$LIMIT" \
		/usr/bin/time -f "$TIME_FMT" -o "$T/$id.rtime" \
		"$FERRY" recv --key "$T/key" --once -q --json -B "$IPB" -p "$port" \
		>"$T/$id.recv.json" 2>"$T/$id.recv.err" &
	rpid=$!
	wait_listen "$port" "$NSB" || { tail_err "$T/$id.recv.err"; die "ferry recv did not listen on $IPB:$port"; }
	ip netns exec "$NSA" timeout -k 5 "$LIMIT" \
		/usr/bin/time -f "$TIME_FMT" -o "$T/$id.stime" \
		"$FERRY" bench --key "$T/key" --json -t "$DURATION" -P "$P" "$@" "$IPB:$port" \
		>"$T/$id.send.json" 2>"$T/$id.send.err" &
	spid=$!
	wait "$spid"   # (not in the foreground, so a signal ends the run at once)
	src=$?
	# A sender that failed leaves the receiver waiting: stop it (timeout
	# passes the signal on to what it runs).
	[ "$src" -ne 0 ] && kill -TERM "$rpid" 2>/dev/null
	wait "$rpid"
	rrc=$?
	post_test "$id"
	if [ "$src" -ne 0 ]; then
		tail_err "$T/$id.send.err"
		die "ferry bench -P $P $* failed (exit $src)"
	fi
	if [ "$rrc" -ne 0 ]; then
		tail_err "$T/$id.recv.err"
		die "ferry recv --once failed (exit $rrc) for -P $P $*"
	fi
}

# run_iperf3 ID PORT P: one iperf3 test, files $T/ID.*
run_iperf3() {
	local id=$1 port=$2 P=$3 rpid spid src rrc
	pre_test "$id"
	ip netns exec "$NSB" timeout -k 5 "$LIMIT" \
		/usr/bin/time -f "$TIME_FMT" -o "$T/$id.rtime" \
		iperf3 -s -1 -B "$IPB" -p "$port" \
		>"$T/$id.recv.out" 2>"$T/$id.recv.err" &
	rpid=$!
	wait_listen "$port" "$NSB" || { tail_err "$T/$id.recv.err"; die "iperf3 -s did not listen on $IPB:$port"; }
	ip netns exec "$NSA" timeout -k 5 "$LIMIT" \
		/usr/bin/time -f "$TIME_FMT" -o "$T/$id.stime" \
		iperf3 -c "$IPB" -p "$port" -t "$DURATION" -P "$P" -J \
		>"$T/$id.send.json" 2>"$T/$id.send.err" &
	spid=$!
	wait "$spid"   # (not in the foreground, so a signal ends the run at once)
	src=$?
	[ "$src" -ne 0 ] && kill -TERM "$rpid" 2>/dev/null
	wait "$rpid"
	rrc=$?
	post_test "$id"
	if [ "$src" -ne 0 ]; then
		tail_err "$T/$id.send.json"
		tail_err "$T/$id.send.err"
		die "iperf3 -c -P $P failed (exit $src)"
	fi
	if [ "$rrc" -ne 0 ]; then
		tail_err "$T/$id.recv.out"
		tail_err "$T/$id.recv.err"
		die "iperf3 -s -1 failed (exit $rrc) for -P $P"
	fi
}

# disturbed ID: prints the CPU seconds other processes used during test ID
# and the host's capacity; true when that is over BUSY_PCT percent of it.
disturbed() {
	awk -v pct="$BUSY_PCT" '
		FILENAME ~ /host$/ { if (FNR == 1) { b0 = $2; t0 = $4 } else { b1 = $1; t1 = $3 } }
		FILENAME ~ /time$/ && NF == 4 { own[FILENAME] = $2 + $3 }
		END {
			for (f in own) mine += own[f]
			other = b1 - b0 - mine; if (other < 0) other = 0
			printf "%.1f %.1f\n", other, t1 - t0
			exit !(other > pct / 100 * (t1 - t0))
		}' "$T/$1.host" "$T/$1.stime" "$T/$1.rtime"
}

# measure TOOL REP P LABEL [ferry bench options...]: one row of the table.
# A test that other processes disturbed is run again (RETRY_BUSY times).
measure() {
	local tool=$1 rep=$2 P=$3 label=$4 try id port d best='' least=''
	shift 4
	for try in $(seq 0 "$RETRY_BUSY"); do
		id=$tool.$RUN
		if [ "$tool" = ferry ]; then port=$((7471 + RUN)); else port=$((5201 + RUN)); fi
		RUN=$((RUN + 1))
		"run_$tool" "$id" "$port" "$P" "$@"
		if ! d=$(disturbed "$id"); then
			best=$id
			break
		fi
		# keep the least disturbed try
		if [ -z "$best" ] || awk -v a="${d% *}" -v b="$least" 'BEGIN { exit !(a < b) }'; then
			best=$id least=${d% *}
		fi
		[ "$try" -lt "$RETRY_BUSY" ] &&
			note "  disturbed: other processes used ${d% *} of ${d#* } CPU s; again"
	done
	echo "$tool|$label|$P|$rep|$T/$best|$try" >>"$ROWS"
}

IFS=';' read -r -a VARIANTS <<<"$FERRY_VARIANTS"
ntests=$(( $(wc -w <<<"$STREAMS") * (2 + ${#VARIANTS[@]}) * REPS ))
note "$ntests tests of $DURATION s, $NSA ($IPA) -> $NSB ($IPB), at least $((ntests * (DURATION + 3))) s"
for rep in $(seq "$REPS"); do
	for P in $STREAMS; do
		note "rep $rep/$REPS, $P stream(s): ferry"
		measure ferry "$rep" "$P" default
		note "rep $rep/$REPS, $P stream(s): iperf3"
		measure iperf3 "$rep" "$P" default
		for v in "${VARIANTS[@]}"; do
			read -r v <<<"$v"   # trim blanks
			[ -n "$v" ] || continue
			note "rep $rep/$REPS, $P stream(s): ferry $v"
			# shellcheck disable=SC2086 # the variant is a list of options
			measure ferry "$rep" "$P" "$v" $v
		done
	done
done

python3 - "$ROWS" "$OUT" "$DURATION" "$REPS" "$BUSY_PCT" <<'PY' || die "could not read the reports"
import csv, json, statistics, sys

rows_file, out, duration, reps = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
busy_pct = int(sys.argv[5])
MiB = 1 << 20
HUGETLB = ("2MiB", "1GiB")  # hugetlbfs pages: not counted in RSS

def ptime(path):
    # /usr/bin/time may put a "Command exited ..." line first: take the last.
    last = [l for l in open(path).read().splitlines() if l.strip()][-1]
    wall, user, sys_, rss = last.split()
    return float(wall), float(user) + float(sys_), int(rss)

def fail(msg):
    print("ERROR: " + msg, file=sys.stderr)
    sys.exit(1)

rows = []
for line in open(rows_file):
    tool, variant, streams, rep, base, retries = line.rstrip("\n").split("|")
    s_wall, s_cpu, s_rss = ptime(base + ".stime")
    r_wall, r_cpu, r_rss = ptime(base + ".rtime")
    row = dict(tool=tool, variant=variant, streams=int(streams), rep=rep,
               duration_s=duration, retries=int(retries))
    if tool == "ferry":
        r = json.load(open(base + ".send.json"))
        rv = json.load(open(base + ".recv.json"))
        e = r["end"]
        if e["crc_errors"] != 0 or e["peer"]["bytes"] != e["bytes"] or e["bytes"] <= 0:
            fail(f"ferry report {base}.send.json: crc errors or byte counts differ")
        if r["start"]["transport"] != "tcp" or r["start"]["streams"] != int(streams):
            fail(f"ferry report {base}.send.json: not tcp with {streams} streams")
        nbytes, gbps, secs = e["bytes"], e["gbps"], e["seconds"]
        row["sender_pool_mib"] = r["start"]["memory"]["pool_bytes"] / MiB
        row["receiver_pool_mib"] = rv["start"]["memory"]["pool_bytes"] / MiB
        row["sender_pages"] = r["start"]["memory"]["pages"]
        row["receiver_pages"] = rv["start"]["memory"]["pages"]
        row["chunk_kib"] = r["start"]["chunk_bytes"] // 1024
        # memory beyond the pool: a pool on hugetlbfs pages is not in RSS
        for side, rss in (("sender", s_rss), ("receiver", r_rss)):
            pool = row[side + "_pool_mib"] if row[side + "_pages"] not in HUGETLB else 0
            row[side + "_over_pool_mib"] = rss / 1024 - pool
        # ferry's own getrusage figures, for comparison with the external ones
        gb = nbytes / 1e9
        row["self_sender_cpu_s_per_gb"] = (e["cpu"]["user_s"] + e["cpu"]["sys_s"]) / gb
        pu, ps = e["peer"]["cpu_user_s"], e["peer"]["cpu_sys_s"]
        row["self_receiver_cpu_s_per_gb"] = (pu + ps) / gb if pu is not None else ""
        row["retransmits"] = ""
        row["stalls"] = e["stalls"]
    else:
        r = json.load(open(base + ".send.json"))
        if "error" in r:
            fail(f"iperf3: {r['error']}")
        e = r["end"]
        nbytes = e["sum_received"]["bytes"]
        gbps = e["sum_received"]["bits_per_second"] / 1e9
        secs = e["sum_received"]["seconds"]
        for k in ("sender_pool_mib", "receiver_pool_mib", "sender_pages", "receiver_pages",
                  "sender_over_pool_mib", "receiver_over_pool_mib",
                  "chunk_kib", "self_sender_cpu_s_per_gb", "self_receiver_cpu_s_per_gb", "stalls"):
            row[k] = ""
        row["retransmits"] = e["sum_sent"].get("retransmits", "")
    h = open(base + ".host").read().split()
    quiet, b0, st0, t0, b1, st1, t1 = int(h[0]), *map(float, h[1:])
    gb = nbytes / 1e9
    other = max(0.0, (b1 - b0) - s_cpu - r_cpu)
    row.update(host_quiet=quiet, other_cpu_s=other, steal_s=st1 - st0, host_cpu_s=t1 - t0,
               disturbed=int(other > busy_pct / 100 * (t1 - t0)))
    row.update(seconds=round(secs, 3), bytes=nbytes, gbps=gbps,
               sender_cpu_s=s_cpu, receiver_cpu_s=r_cpu,
               sender_cpu_s_per_gb=s_cpu / gb, receiver_cpu_s_per_gb=r_cpu / gb,
               sender_rss_mib=s_rss / 1024, receiver_rss_mib=r_rss / 1024,
               sender_wall_s=s_wall, receiver_wall_s=r_wall)
    rows.append(row)

NUM = ["gbps", "sender_cpu_s_per_gb", "receiver_cpu_s_per_gb", "sender_rss_mib",
       "receiver_rss_mib", "sender_pool_mib", "receiver_pool_mib",
       "sender_over_pool_mib", "receiver_over_pool_mib", "self_sender_cpu_s_per_gb", "self_receiver_cpu_s_per_gb", "bytes", "seconds",
       "sender_cpu_s", "receiver_cpu_s", "retransmits", "stalls", "other_cpu_s", "steal_s",
       "host_cpu_s", "sender_wall_s", "receiver_wall_s"]

# One row per (tool, variant, streams): the median of each column over the
# undisturbed runs (over all runs when every one was disturbed).
groups = {}
for r in rows:
    groups.setdefault((r["tool"], r["variant"], r["streams"]), []).append(r)
summary = []
for (tool, variant, streams), rs in groups.items():
    clean = [x for x in rs if not x["disturbed"]]
    use = clean or rs
    m = dict(use[0])
    m["rep"] = "median" if len(rs) > 1 else rs[0]["rep"]
    for k in NUM:
        vals = [x[k] for x in use if x[k] != ""]
        m[k] = statistics.median(vals) if vals else ""
    m["disturbed"] = int(not clean)
    for k in ("sender_pages", "receiver_pages"):
        kinds = sorted({x[k] for x in use})
        m[k] = kinds[0] if len(kinds) == 1 else "/".join(kinds)
    m["runs_used"] = len(use)
    m["gbps_all"] = " ".join(f"{x['gbps']:.2f}" + ("*" if x["disturbed"] else "") for x in rs)
    summary.append(m)

FIELDS = ["tool", "variant", "streams", "rep", "runs_used", "duration_s", "seconds", "bytes",
          "gbps", "sender_cpu_s", "receiver_cpu_s", "sender_cpu_s_per_gb",
          "receiver_cpu_s_per_gb", "sender_rss_mib", "receiver_rss_mib", "sender_pool_mib",
          "receiver_pool_mib", "sender_pages", "receiver_pages", "sender_over_pool_mib",
          "receiver_over_pool_mib", "chunk_kib",
          "self_sender_cpu_s_per_gb", "self_receiver_cpu_s_per_gb", "retransmits", "stalls",
          "sender_wall_s", "receiver_wall_s", "retries", "host_quiet", "other_cpu_s",
          "steal_s", "host_cpu_s", "disturbed"]
def fmt(v):
    return f"{v:.4f}" if isinstance(v, float) else v
with open(out, "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=FIELDS, extrasaction="ignore")
    w.writeheader()
    for r in rows:
        w.writerow({k: fmt(r.get(k, 1)) for k in FIELDS})
    if reps > 1:
        for r in summary:
            w.writerow({k: fmt(r[k]) for k in FIELDS})

def name(r):
    return r["tool"] if r["variant"] == "default" else f"{r['tool']} {r['variant']}"
def f2(v, n=2):
    return "-" if v == "" else f"{v:.{n}f}"

what = (f"median of the undisturbed runs out of {reps}" if reps > 1 else "one run")
print(f"\ntcp transport vs iperf3, {duration} s per test, {what}; CPU = user+sys of the "
      "process from /usr/bin/time, GB = 1e9 payload bytes; pool = ferry's configured "
      "buffer pool (sender/receiver); other CPU s = CPU seconds the rest of the host "
      "used during the test (approximate; noise indicator)\n")
hdr = ["tool", "streams", "Gb/s", "snd CPU s/GB", "rcv CPU s/GB",
       "snd RSS MiB", "rcv RSS MiB", "pool MiB snd/rcv (pages)", "over pool MiB snd/rcv",
       "other CPU s"]
if reps > 1:
    hdr.append("Gb/s of each run (* disturbed)")
order = sorted(summary, key=lambda r: (r["streams"], r["tool"] != "ferry" or r["variant"] != "default",
                                        r["tool"] != "iperf3", r["variant"]))
print("| " + " | ".join(hdr) + " |")
print("|" + "|".join("---" for _ in hdr) + "|")
for r in order:
    pool = over = "-"
    if r["sender_pool_mib"] != "":
        pages = r["sender_pages"] if r["sender_pages"] == r["receiver_pages"] else \
            f"{r['sender_pages']}, {r['receiver_pages']}"
        pool = f"{r['sender_pool_mib']:.0f}/{r['receiver_pool_mib']:.0f} ({pages})"
        over = f"{r['sender_over_pool_mib']:.1f}/{r['receiver_over_pool_mib']:.1f}"
    cells = [name(r), str(r["streams"]), f2(r["gbps"]), f2(r["sender_cpu_s_per_gb"], 3),
             f2(r["receiver_cpu_s_per_gb"], 3), f2(r["sender_rss_mib"], 1),
             f2(r["receiver_rss_mib"], 1), pool, over, f2(r["other_cpu_s"], 1)]
    if reps > 1:
        cells.append(r["gbps_all"])
    print("| " + " | ".join(cells) + " |")
if any(r["sender_pages"] in HUGETLB or r["receiver_pages"] in HUGETLB for r in rows):
    print("\nNote: a pool on hugetlbfs pages (2MiB/1GiB) is not counted in RSS; "
          "that process's footprint is RSS + pool. \"over pool\" is the memory beyond the "
          "pool either way (median over runs).")

print("\nferry / iperf3 (goodput: higher is better; CPU per GB: lower is better)\n")
print("| ferry | streams | goodput | snd CPU/GB | rcv CPU/GB | total CPU/GB |")
print("|---|---|---|---|---|---|")
for r in order:
    if r["tool"] != "ferry":
        continue
    i = next((x for x in summary if x["tool"] == "iperf3" and x["streams"] == r["streams"]), None)
    if i is None:
        continue
    tot_f = r["sender_cpu_s_per_gb"] + r["receiver_cpu_s_per_gb"]
    tot_i = i["sender_cpu_s_per_gb"] + i["receiver_cpu_s_per_gb"]
    print(f"| {name(r)} | {r['streams']} | {r['gbps'] / i['gbps']:.2f}x | "
          f"{r['sender_cpu_s_per_gb'] / i['sender_cpu_s_per_gb']:.2f}x | "
          f"{r['receiver_cpu_s_per_gb'] / i['receiver_cpu_s_per_gb']:.2f}x | {tot_f / tot_i:.2f}x |")

print("\nferry's own CPU figures (getrusage inside ferry, s/GB), for comparison with the external ones:")
for r in order:
    if r["tool"] == "ferry":
        print(f"  {name(r)}, {r['streams']} stream(s): sender {f2(r['self_sender_cpu_s_per_gb'], 3)}, "
              f"receiver {f2(r['self_receiver_cpu_s_per_gb'], 3)}")
busy = [r for r in rows if r["disturbed"]]
if busy:
    dirty = [name(r) + f" P={r['streams']}" for r in summary if r["disturbed"]]
    print(f"\nWARNING: in {len(busy)} of {len(rows)} tests other processes used more than "
          f"{busy_pct}% of the host's CPU even after retries; left out of the medians"
          + (f", except for {', '.join(dirty)} (no undisturbed run)" if dirty else "")
          + ". Rerun on a quieter host or with more REPS for firmer figures.")
print(f"\nrows written to {out}")
PY
exit 0
