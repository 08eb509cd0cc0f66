#!/usr/bin/env bash
# The WAN benchmark: at RTT 120 ms and a 1 Gb/s cap (ferry-wanem, bench/lib/
# wan.sh), does `ferry bench` with its default settings (tcp; default
# streams, chunk size, ring slots and socket buffers) reach 90% of the cap
# within 10 s, and how many streams do iperf3 (-P N) and xrdcp (--streams
# N) need to do the same?
#
# It runs the matrix study bench/matrix/studies/wan_ramp.tsv (one
# measurement per row, every flow's throughput at the receiver each
# second) and then prints, per tool and stream count: the Gb/s after the
# first 5 s, the share of the cap (frames, as ferry-wanem counts them:
# goodput x 1514 / 1448), t90 (the end of the first 2 s whose mean is at
# least 90% of the cap) and whether it came within 10 s and held (the mean
# from there to the end of the run at least 90% of the cap); for iperf3 and
# xrdcp the fewest streams that reach it; ratios of ferry's defaults to
# iperf3 -P 1 and to the fewest-stream iperf3 / xrdcp that reach the cap.
#
# Environment:
#   QUICK=1     fewer stream counts, 12 s runs (a few minutes)
#   QUEUE       the bottleneck queue (default 15M, one bandwidth-delay
#               product; "-" for ferry-wanem's default, 50 ms of the rate)
#   REPS        repetitions (default 1)
#   RESULTS     where the matrix writes (default /tmp/ferry-matrix)
#   BUILD, FERRY, QUIET_WAIT, WAN_*: as for bench/matrix/run.sh
#   REPORT=DIR  measure nothing: the summary of an earlier run's directory
#
# Exit status: 0 when every measurement ran (whether or not ferry reached
# 90%: the summary says), 1 when the run failed.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
QUEUE=${QUEUE:-15M}
REPS=${REPS:-1}
RESULTS=${RESULTS:-/tmp/ferry-matrix}
export RESULTS
[[ "$REPS" =~ ^[1-9][0-9]*$ ]] || { echo "REPS must be a positive integer" >&2; exit 1; }
[[ "$QUEUE" =~ ^(-|[0-9]+[KMG]?)$ ]] || { echo "QUEUE: a size like 15M, or -" >&2; exit 1; }

TMPD=$(mktemp -d /tmp/wan_ramp.XXXXXX) || exit 1
trap 'rm -rf "$TMPD"' EXIT
# the study table with this run's queue and repetitions
awk -F'\t' -v OFS='\t' -v q="$QUEUE" -v r="$REPS" '
	/^#/ || NF < 2 { print; next }
	$1 == "mode" { for (i = 1; i <= NF; i++) col[$i] = i; print; next }
	{ $col["queue"] = q; $col["reps"] = r; print }' \
	"$HERE/matrix/studies/wan_ramp.tsv" >"$TMPD/wan_ramp.tsv"

if [ -n "${REPORT:-}" ]; then
	DIR=$REPORT
	python3 "$HERE/matrix/matrix.py" report "$DIR" >/dev/null || exit 1
else
	"$HERE/matrix/run.sh" "$TMPD/wan_ramp.tsv" | tee "$TMPD/out.txt"
	rc=${PIPESTATUS[0]}
	[ "$rc" -eq 0 ] || { echo "wan_ramp: the matrix run failed" >&2; exit 1; }
	DIR=$(sed -n 's/^== results: \(.*\)\/results.csv.*/\1/p' "$TMPD/out.txt" | tail -n 1)
fi
if [ -z "$DIR" ] || [ ! -f "$DIR/results.csv" ]; then
	echo "wan_ramp: no results" >&2
	exit 1
fi

python3 - "$DIR/results.csv" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
def f(v):
    return float(v) if v not in ("", None) else None
groups = {}
for r in rows:
    groups.setdefault((r["tool"], r["streams"]), []).append(r)
def summ(rs):
    fr = [f(r["frac_of_cap"]) for r in rs if f(r["frac_of_cap"]) is not None]
    gb = [f(r["gbps_steady"]) for r in rs if f(r["gbps_steady"]) is not None]
    t90 = [f(r["t90_s"]) for r in rs]
    held = [f(r["frac_after_t90"]) for r in rs]
    # reached: within 10 s, and the rest of the run (to SECONDS) held 90%
    ok = [t is not None and t <= 10 and h is not None and h >= 0.9 for t, h in zip(t90, held)]
    return dict(gbps=statistics.median(gb) if gb else 0, frac=statistics.median(fr) if fr else 0,
                t90=" ".join("-" if t is None else f"{t:g}" for t in t90),
                ok=sum(ok) * 2 > len(ok), drops=" ".join(r["wan_drop_queue"] for r in rs),
                retr=" ".join(r["retransmits"] or "-" for r in rs))
print("\nRTT 120 ms, 1 Gb/s cap (frames). Gb/s = payload goodput after the first 5 s (median")
print("of reps; per second as bench/matrix counts it); cap share in frames; t90 = end of the first 2 s at >= 90% of")
print("the cap (each rep); 'within 10 s' = t90 <= 10 and the mean from there to the end of the")
print("run >= 90% of the cap, in most reps\n")
print("| tool | streams | Gb/s | share of cap | t90 s | within 10 s | queue drops | retransmits |")
print("|---|---|---|---|---|---|---|---|")
order = sorted(groups, key=lambda k: ({"ferry-tcp": 0, "iperf3": 1, "xrdcp": 2}.get(k[0], 3),
                                      int(k[1]) if k[1].isdigit() else 0))
S = {}
for k in order:
    s = summ(groups[k])
    S[k] = s
    name = "ferry bench (defaults: 4 streams)" if k[0] == "ferry-tcp" and k[1] == "-" else k[0]
    print(f"| {name} | {k[1]} | {s['gbps']:.3f} | {s['frac']:.2f} | {s['t90']} | "
          f"{'yes' if s['ok'] else 'no'} | {s['drops']} | {s['retr']} |")
print()
fer = S.get(("ferry-tcp", "-"))
if fer:
    print(f"ferry bench, defaults: {'REACHES' if fer['ok'] else 'does NOT reach'} 90% of the cap "
          f"within 10 s (t90 {fer['t90']} s; {fer['frac']:.2f} of the cap after 5 s)")
for tool in ("iperf3", "xrdcp"):
    ks = [k for k in order if k[0] == tool]
    if not ks:
        continue
    need = [k for k in ks if S[k]["ok"]]
    if need:
        n = need[0]
        msg = f"{tool} needs {n[1]} stream(s) (t90 {S[n]['t90']} s)"
        if fer:
            msg += f"; ferry defaults / {tool} -P {n[1]}: {fer['gbps'] / S[n]['gbps']:.2f}"
    else:
        msg = f"{tool} does not reach 90% within 10 s with up to {ks[-1][1]} streams"
    if fer and S[ks[0]]["gbps"]:
        msg += f"; ferry defaults / {tool} with {ks[0][1]} stream: {fer['gbps'] / S[ks[0]]['gbps']:.2f}"
    print(msg)
PY
echo "results: $DIR (results.csv, series.csv, time.png)"
