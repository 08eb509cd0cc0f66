#!/usr/bin/env bash
# bench/matrix's samples are honest: a short study through ferry-wanem
# (RTT 40 ms, a 200 Mb/s cap, the queue one BDP; ferry bench with its
# defaults and iperf3 -P 2, 6 s each), then its report:
#  - the share of the cap comes from ferry-wanem's egress counters (the
#    wire), and the wire never carries more than the cap (within 3%: one
#    second's bins are the forwarder's, not the limiter's);
#  - no plotted sample (plot/time-*.dat) is above the cap (in frames, as
#    the limiter counts them, within 5%);
#  - every tool sample above the cap is flagged in series.csv, counted in
#    results.csv and absent from the plot data;
#  - ferry's session planned itself for the path it saw: the RTT measured
#    at the handshake about the 40 ms configured, the veth's speed as the
#    target, and the plan in both ends' reports.
# Needs root, ferry-wanem (a build with DPDK), iperf3, ethtool, python3.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

need_wanem
command -v iperf3 >/dev/null || skip "no iperf3 (apt-get install iperf3)"

cat >"$T/honest.tsv" <<'TSV'
#% title=honest samples
#% plot=time
#% mtu=1500
mode	tool	rtt_ms	rate	queue	streams	seconds	omit	reps
all	ferry-tcp	40	200mbit	bdp	-	6	2	1
all	iperf3	40	200mbit	bdp	2	6	2	1
TSV
RESULTS=$T/out BUILD=$BUILD WAN_MEM_MB=512 timeout 240 \
	"$SRC/bench/matrix/run.sh" "$T/honest.tsv" >"$T/run.log" 2>&1 ||
	fail "bench/matrix/run.sh failed: $(tail -5 "$T/run.log")"
D=$(ls -d "$T"/out/honest-* | head -1)
[ -f "$D/results.csv" ] || fail "no results.csv: $(tail -5 "$T/run.log")"
python3 - "$D" <<'PY' || fail "the report is not honest (above)"
import csv, glob, os, sys
d = sys.argv[1]
cap_gbps = 0.2
mss = 1500 - 52
frames = lambda g: g * (mss + 66) / mss   # payload Gb/s -> frame Gb/s
res = list(csv.DictReader(open(os.path.join(d, "results.csv"))))
ser = list(csv.DictReader(open(os.path.join(d, "series.csv"))))
ok = True
def bad(msg):
    global ok
    print("matrix_honest:", msg, file=sys.stderr)
    ok = False
if len(res) != 2:
    bad(f"{len(res)} measurements finished, not 2")
for r in res:
    if r["share_source"] != "wire":
        bad(f"{r['id']}: share of the cap from {r['share_source']}, not the wire")
    if r["frac_of_cap"] == "" or float(r["frac_of_cap"]) > 1.03:
        bad(f"{r['id']}: share of the cap {r['frac_of_cap']!r}")
    flagged = sum(1 for s in ser if s["id"] == r["id"] and s["above_cap"] == "1")
    if flagged != int(r["samples_above_cap"]):
        bad(f"{r['id']}: {flagged} samples flagged, results say {r['samples_above_cap']}")
for s in ser:
    if s["wire_gbps"] != "" and float(s["wire_gbps"]) > cap_gbps * 1.03:
        bad(f"{s['id']} t={s['t_s']}: the wire carried {s['wire_gbps']} Gb/s through a 0.2 Gb/s cap")
    above = frames(float(s["gbps"])) > cap_gbps * 1.05
    if above != (s["above_cap"] == "1"):
        bad(f"{s['id']} t={s['t_s']}: {s['gbps']} Gb/s flagged {s['above_cap']}")
plotted = 0
for f in glob.glob(os.path.join(d, "plot", "time-*.dat")):
    for line in open(f):
        t, g = line.split()
        plotted += 1
        if frames(float(g)) > cap_gbps * 1.05:
            bad(f"{os.path.basename(f)}: plotted {g} Gb/s at t={t}, above the cap")
for f in glob.glob(os.path.join(d, "plot", "wire-*.dat")):
    for line in open(f):
        t, g = line.split()
        plotted += 1
        if float(g) > cap_gbps * 1.05:
            bad(f"{os.path.basename(f)}: the wire series shows {g} Gb/s at t={t}")
if plotted == 0:
    bad("nothing plotted")
import json
for r in res:
    if r["tool"] != "ferry-tcp":
        continue
    for side in ("send0", "flow0"):
        text = open(os.path.join(d, "raw", f"{r['id']}.{side}.json")).read()
        try:   # the sender's document, or the receiver's first line
            rep = json.loads(text)
        except ValueError:
            rep = json.loads(text.splitlines()[0])
        path = rep["start"].get("path")
        if not path:
            bad(f"{side}: no path plan in the report")
            continue
        if not 35 <= path["rtt_ms"] <= 100:
            bad(f"{side}: RTT {path['rtt_ms']} ms planned for, not about 40")
        if path["target_bps"] != 10 ** 10 or "streams" not in path["plan"]:
            bad(f"{side}: plan {path!r}")
        if rep["start"]["streams"] < 4:
            bad(f"{side}: {rep['start']['streams']} streams")
print(f"matrix_honest: {len(res)} measurements, {plotted} plotted samples, "
      f"{sum(int(r['samples_above_cap']) for r in res)} flagged", file=sys.stderr)
sys.exit(0 if ok else 1)
PY
finish "(bench/matrix: shares from the wire, nothing above the cap plotted, tool samples above it flagged)"
