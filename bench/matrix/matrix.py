#!/usr/bin/env python3
"""The WAN matrix's tables, results and plots (driven by bench/matrix/run.sh).

  matrix.py plan STUDY.tsv full|quick   the study's settings ("set KEY VALUE"
                                        lines), then one line per measurement
                                        (tab-separated, fields PLAN_FIELDS)
  matrix.py report DIR                  DIR/results.csv, DIR/series.csv and
                                        the PNG plots, from the raw outputs
                                        run.sh left in DIR/raw/

A study table (bench/matrix/studies/NAME.tsv) is tab-separated text:
'#%' lines set study settings (title, plot, mtu, ...), '#' lines are
comments, the first other line names the columns, every further line is a
block of measurements. A cell holds one value or several separated by
spaces; a block stands for every combination of its cells' values. The
column "mode" says which runs a block belongs to: full, quick or all.
"""
import csv
import itertools
import json
import math
import os
import re
import statistics
import subprocess
import sys

PLAN_FIELDS = ["id", "tool", "rtt_ms", "rate", "queue", "streams", "window",
               "chunk", "start", "seconds", "omit", "rep", "loss"]
# a table's columns: all but the id and the repetition
CELL_FIELDS = [f for f in PLAN_FIELDS if f not in ("id", "rep")]
DEFAULTS = {"rate": "-", "queue": "-", "window": "-", "chunk": "-",
            "start": "together", "seconds": "10", "omit": "2", "reps": "1",
            "loss": "-"}
TOOLS = ("ferry-tcp", "ferry-uroce", "ferry-send", "iperf3", "xrdcp")
WANEM_QUEUE_MAX = 64000000  # ferry-wanem's largest --queue, bytes
# A tool's 1 s sample counts as above the cap beyond this share of it
# (the bins' edges are the tools' own, not the limiter's)
ABOVE_CAP = 1.05


def die(msg):
    print(f"matrix.py: {msg}", file=sys.stderr)
    sys.exit(1)


def read_table(path):
    settings, cols, rows = {}, None, []
    for n, line in enumerate(open(path), 1):
        line = line.rstrip("\n")
        if line.startswith("#%"):
            k, _, v = line[2:].strip().partition("=")
            settings[k.strip()] = v.strip()
            continue
        if not line.strip() or line.startswith("#"):
            continue
        cells = [c.strip() for c in line.split("\t")]
        if cols is None:
            cols = cells
            for c in ("mode", "tool", "rtt_ms", "streams"):
                if c not in cols:
                    die(f"{path}: the header has no column {c}")
            continue
        if len(cells) != len(cols):
            die(f"{path}:{n}: {len(cells)} cells, the header has {len(cols)}")
        rows.append((n, dict(zip(cols, cells))))
    if cols is None:
        die(f"{path}: no header line")
    return settings, rows


def rate_mbps(rate):
    """'1gbit' -> 1000.0, '300mbit' -> 300.0, '-' -> None."""
    if rate in ("-", ""):
        return None
    m = re.fullmatch(r"([0-9.]+)\s*([kmgt]?)(bit|bps)?", rate.lower())
    if not m:
        die(f"rate {rate!r}: want e.g. 300mbit or 1gbit")
    return float(m.group(1)) * {"": 1e-6, "k": 1e-3, "m": 1, "g": 1e3, "t": 1e6}[m.group(2)]


def plan(path, mode):
    settings, rows = read_table(path)
    out = []
    for n, row in rows:
        if row["mode"] not in ("all", mode):
            continue
        cell = {f: row.get(f, DEFAULTS.get(f, "-")).split() or ["-"]
                for f in CELL_FIELDS}
        reps = int(row.get("reps", DEFAULTS["reps"]))
        for t in cell["tool"]:
            if t not in TOOLS:
                die(f"{path}:{n}: unknown tool {t} (known: {', '.join(TOOLS)})")
        for st in cell["start"]:
            if not re.fullmatch(r"together|stagger:[1-9][0-9]*", st):
                die(f"{path}:{n}: start {st}: together or stagger:SECONDS")
        keys = CELL_FIELDS
        # topology first, then repetitions, then the rest: ferry-wanem
        # restarts per measurement anyway, and the tools interleave
        for rtt, rate, queue in itertools.product(cell["rtt_ms"], cell["rate"], cell["queue"]):
            if queue == "bdp":  # one bandwidth-delay product
                if rate_mbps(rate) is None:
                    die(f"{path}:{n}: queue bdp needs a rate")
                queue = str(min(int(float(rtt) / 1e3 * rate_mbps(rate) * 1e6 / 8),
                                WANEM_QUEUE_MAX))
            for rep in range(1, reps + 1):
                for combo in itertools.product(*(cell[k] for k in keys[4:]), cell["tool"]):
                    m = dict(zip(keys[4:], combo[:-1]), tool=combo[-1], rtt_ms=rtt,
                             rate=rate, queue=queue, rep=str(rep))
                    out.append(m)
    for k, v in settings.items():
        print(f"set\t{k}\t{v}")
    for i, m in enumerate(out, 1):
        m["id"] = f"m{i:03d}"
        print("\t".join(m[f] for f in PLAN_FIELDS))


# ---------------------------------------------------------------- report

def mss_of(mtu):
    return mtu - 52  # IPv4 20 + TCP 20 + timestamps 12


def series_of(raw, m):
    """[(t_end_s, bytes)] per 1 s bin for measurement m, all flows summed,
    and a dict of extra facts (retransmits, stalls, crc errors)."""
    bins, facts = {}, {"retransmits": "", "stalls": "", "crc_errors": "",
                       "streams_used": ""}
    offsets = {}
    off_file = os.path.join(raw, m["id"] + ".offsets")
    if os.path.exists(off_file):
        for line in open(off_file):
            k, v = line.split()
            offsets[k] = float(v)
    offsets.pop("t0", None)
    files = sorted(f for f in os.listdir(raw) if f.startswith(m["id"] + ".flow"))

    def add(t_end, nbytes):
        # an interval belongs to the second it ends in: 1.003 -> 1; a last,
        # partial one (the drain after the sender stopped at 8 s, ending at
        # 8.37) -> 9, outside the steady part
        b = max(1, math.ceil(t_end - 0.1))
        bins[b] = bins.get(b, 0) + nbytes

    for f in files:
        flow = f.split(".")[1]
        off = offsets.get(flow, 0.0)
        path = os.path.join(raw, f)
        if f.endswith(".json") and m["tool"].startswith("ferry"):
            # ferry's receiver counts a chunk once it has checked it and
            # checks them in batches (up to a stream's share of the ring,
            # 16 x 4 MiB by default): its 1 s intervals swing between 0
            # and twice the rate. The sender's count (chunks handed to the
            # transport) runs ahead of the wire by at most its socket
            # buffers (32 MiB a session: 0.27 s at 1 Gb/s), so the series
            # is the sender's; the receiver's report is checked for errors.
            r = json.load(open(path))
            e = r["end"]
            facts["crc_errors"] = (facts["crc_errors"] or 0) + e.get("crc_errors", 0)
            if e.get("crc_errors"):
                die(f"{path}: crc errors")
            try:
                s = json.load(open(path.replace(".flow", ".send")))
            except (OSError, ValueError):
                die(f"{path}: no sender report beside it")
            if s["end"]["bytes"] != e["bytes"]:
                die(f"{path}: the receiver counted {e['bytes']} bytes, the sender {s['end']['bytes']}")
            for iv in s["intervals"]:
                add(off + iv["end"], iv["bytes"])
            facts["stalls"] = (facts["stalls"] or 0) + s["end"].get("stalls", 0)
            # the streams the session used: the path plan's, unless -P
            facts["streams_used"] = (facts["streams_used"] or 0) + \
                s["start"].get("streams", 0)
        elif f.endswith(".json") and m["tool"] == "iperf3":
            r = json.load(open(path))
            if "error" in r:   # e.g. -w above 2 x rmem_max: iperf3 refuses
                print(f"matrix.py: {m['id']} left out: iperf3: {r['error']}", file=sys.stderr)
                return [], facts
            # the server's (receiver's) intervals when iperf3 passed them on
            ivs = r.get("server_output_json", {}).get("intervals") or r["intervals"]
            for iv in ivs:
                s = iv["sum"]
                add(off + s["end"], s["bytes"])
            facts["retransmits"] = (facts["retransmits"] or 0) + \
                r["end"]["sum_sent"].get("retransmits", 0)
            facts["streams_used"] = (facts["streams_used"] or 0) + \
                r["start"].get("test_start", {}).get("num_streams", 0)
        elif f.endswith(".size"):  # xrdcp: "seconds-since-start bytes" samples
            prev = 0
            for line in open(path):
                t, n = line.split()
                n = int(n)
                add(off + float(t), n - prev)
                prev = n
    return [(t, bins[t]) for t in sorted(bins)], facts


def wire_series(raw, m):
    """{second: frame bytes} that ferry-wanem sent on towards B (the "ab"
    egress: what the wire carried, retransmissions included) in each
    second of the measurement's time line, from its interval counters and
    the client's start (t0 in the offsets file); {} without them."""
    t0 = None
    try:
        for line in open(os.path.join(raw, m["id"] + ".offsets")):
            k, v = line.split()
            if k == "t0":
                t0 = float(v)
    except OSError:
        return {}
    bins, prev = {}, None
    try:
        lines = [json.loads(l) for l in open(os.path.join(raw, m["id"] + ".wanem.json"))
                 if l.startswith("{")]
    except (OSError, ValueError):
        return {}
    for d in lines:
        if d.get("type") != "interval" or "time" not in d or t0 is None:
            continue
        tx = d["ab"]["tx_bytes"]
        if prev is not None:
            b = max(1, math.ceil(d["time"] - t0 - 0.1))
            if d["time"] > t0:
                bins[b] = bins.get(b, 0) + tx - prev
        prev = tx
    return bins


def wanem_facts(raw, m):
    p = os.path.join(raw, m["id"] + ".wanem.json")
    try:
        end = [json.loads(l) for l in open(p) if l.startswith("{")][-1]
        return {"wan_drop_queue": end["ab"]["dropped"]["queue"],
                "wan_drop_loss": end["ab"]["dropped"]["loss"],
                "wan_queue_peak": end["ab"]["queue_peak_bytes"],
                "wan_stall_max_ms": round(end["loop"]["stall_max_us"] / 1000, 1)}
    except (OSError, IndexError, KeyError, ValueError):
        return {"wan_drop_queue": "", "wan_drop_loss": "", "wan_queue_peak": "",
                "wan_stall_max_ms": ""}


def host_facts(raw, m):
    f = {}
    try:
        for line in open(os.path.join(raw, m["id"] + ".host")):
            k, v = line.split()
            f[k] = v
    except OSError:
        pass
    return {"load_before": f.get("load_before", ""), "load_after": f.get("load_after", "")}


def t_reach(series, frac_of, target):
    """End of the first 2 s window whose mean is >= target (Gb/s of
    frames), or '' if none."""
    g = [frac_of(b) for _, b in series]
    for i in range(1, len(g)):
        if (g[i - 1] + g[i]) / 2 >= target:
            return series[i][0]
    return ""


def report(d):
    raw = os.path.join(d, "raw")
    settings, plan_rows = {}, []
    for line in open(os.path.join(d, "plan.tsv")):
        p = line.rstrip("\n").split("\t")
        if p[0] == "set":
            settings[p[1]] = p[2]
        else:
            row = dict(zip(PLAN_FIELDS, p))
            row.setdefault("loss", "-")  # a plan from before the column
            plan_rows.append(row)
    done = set(open(os.path.join(d, "done.txt")).read().split()) \
        if os.path.exists(os.path.join(d, "done.txt")) else set()
    mtu = int(settings.get("mtu", "1500"))
    mss = mss_of(mtu)
    results, series_rows = [], []
    for m in plan_rows:
        if m["id"] not in done:
            continue
        series, facts = series_of(raw, m)
        if not series:
            continue
        secs = int(m["seconds"])
        omit = int(m["omit"])
        # the first flow's duration: later (staggered) flows end later
        steady = [b for t, b in series if omit < t <= secs]
        total = sum(b for t, b in series)
        span = max(t for t, _ in series)
        gbps = total * 8 / span / 1e9
        gbps_steady = (sum(steady) * 8 / len(steady) / 1e9) if steady else ""
        cap = rate_mbps(m["rate"])
        wire = (lambda b: b * 8 / 1e6 * (mss + 66) / mss)  # Mb/s of frames in 1 s
        # Honest samples: a tool's own count in one second can run ahead
        # of the wire (bytes handed to socket buffers, chunks checked in
        # batches); where ferry-wanem's egress counters are there, the
        # share of the cap and t90 come from them, and a tool's sample
        # above the cap is flagged and left out of the plots.
        wbins = wire_series(raw, m)
        above = [t for t, b in series if cap and wire(b) > ABOVE_CAP * cap]
        if above:
            print(f"matrix.py: {m['id']} {m['tool']}: samples above the {m['rate']} cap "
                  f"at {above} s (the tool's own count): flagged, not plotted",
                  file=sys.stderr)
        frames = (lambda b: b * 8 / 1e6)
        if wbins:
            wser = [(t, wbins.get(t, 0)) for t in range(1, max(wbins) + 1)]
            wsteady = [frames(b) for t, b in wser if omit < t <= secs]
            t90 = t_reach(wser, frames, 0.9 * cap) if cap else ""
            after = [frames(b) for t, b in wser if t90 != "" and t90 - 1 <= t <= secs]
            frac = statistics.mean(wsteady) / cap if cap and wsteady else None
        else:
            t90 = t_reach(series, wire, 0.9 * cap) if cap else ""
            after = [wire(b) for t, b in series if t90 != "" and t90 - 1 <= t <= secs]
            frac = statistics.mean(wire(b) for b in steady) / cap if cap and steady else None
        row = dict(m, mtu=mtu, gbps=round(gbps, 4),
                   gbps_steady=round(gbps_steady, 4) if steady else "",
                   frac_of_cap=round(frac, 4) if frac is not None else "",
                   share_source="wire" if wbins else "tool",
                   samples_above_cap=len(above),
                   t90_s=t90,
                   frac_after_t90=round(statistics.mean(after) / cap, 4) if after else "",
                   bytes=total, **facts, **wanem_facts(raw, m), **host_facts(raw, m))
        results.append(row)
        for t, b in series:
            series_rows.append(dict(id=m["id"], tool=m["tool"], rtt_ms=m["rtt_ms"],
                                    streams=m["streams"], window=m["window"],
                                    chunk=m["chunk"], start=m["start"], rep=m["rep"],
                                    t_s=t, gbps=round(b * 8 / 1e9, 4),
                                    wire_gbps=round(wbins[t] * 8 / 1e9, 4)
                                    if t in wbins else "",
                                    above_cap=int(t in above)))
    if not results:
        die(f"{d}: no finished measurements")
    fields = list(results[0].keys())
    with open(os.path.join(d, "results.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(results)
    with open(os.path.join(d, "series.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(series_rows[0].keys()))
        w.writeheader()
        w.writerows(series_rows)
    summary(results, settings)
    plots(d, results, series_rows, settings)


def label(r, vary):
    parts = [r["tool"]]
    for k in vary:
        if r[k] not in ("-", ""):
            parts.append(f"{k}={r[k]}")
    return " ".join(parts)


def group_med(results, keys, val="gbps_steady"):
    g = {}
    for r in results:
        v = r[val] if r[val] != "" else r["gbps"]
        g.setdefault(tuple(str(r[k]) for k in keys), []).append(v)
    return {k: statistics.median(v) for k, v in g.items()}


def summary(results, settings):
    print(f"\n{settings.get('title', 'study')}: median over repetitions, Gb/s of payload "
          "after the first OMIT seconds; share of the cap after them and t90 (end of the "
          "first 2 s at >= 90% of the cap) from ferry-wanem's egress counters where "
          "they are there; flagged: the tool's 1 s samples above the cap")
    keys = ["tool", "rtt_ms", "rate", "queue", "loss", "streams", "streams_used", "window",
            "chunk", "start"]
    med = group_med(results, keys)
    extra = {}
    for r in results:
        e = extra.setdefault(tuple(str(r[k]) for k in keys), {"t90": [], "frac": [], "flag": 0})
        e["t90"].append(r["t90_s"])
        if r["frac_of_cap"] != "":
            e["frac"].append(r["frac_of_cap"])
        e["flag"] += r["samples_above_cap"]
    print("| " + " | ".join(keys) + " | Gb/s | share of cap | t90 s (each rep) | flagged |")
    print("|" + "---|" * (len(keys) + 4))
    def num(v):
        if re.fullmatch(r"[0-9.]+", v):
            return (0, float(v))
        return (0, size_mib(v)) if size_mib(v) is not None else (1, v)
    for k in sorted(med, key=lambda k: tuple(num(v) for v in k)):
        e = extra[k]
        ts = " ".join(str(x) if x != "" else "-" for x in e["t90"])
        frac = f"{statistics.median(e['frac']):.2f}" if e["frac"] else "-"
        print("| " + " | ".join(k) + f" | {med[k]:.3f} | {frac} | {ts} | {e['flag']} |")


def size_mib(s):
    m = re.fullmatch(r"([0-9.]+)([KMG]?)", s.upper())
    if not m:
        return None
    return float(m.group(1)) * {"": 2 ** -20, "K": 2 ** -10, "M": 1, "G": 1024}[m.group(2)]


def gnuplot(script):
    try:
        subprocess.run(["gnuplot"], input=script, text=True, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        return True
    except FileNotFoundError:
        print("gnuplot not found: no plots (apt-get install gnuplot-nox)", file=sys.stderr)
    except subprocess.CalledProcessError as e:
        print(f"gnuplot failed: {e.stderr.strip()[-500:]}", file=sys.stderr)
    return False


def plots(d, results, series_rows, settings):
    kind = settings.get("plot", "streams")
    # a single-quoted gnuplot string: a quote inside it is doubled
    title = settings.get("title", "").replace("'", "''")
    dat = os.path.join(d, "plot")
    os.makedirs(dat, exist_ok=True)
    made = []
    head = ("set terminal pngcairo size 900,560 font 'sans,10' noenhanced\nset grid\n"
            "set key outside right top\nset ylabel 'Gb/s (payload)'\nset yrange [0:*]\n")
    if kind in ("streams", "window"):
        x = "streams" if kind == "streams" else "window"
        panel = "rtt_ms"
        other = [k for k in ("window", "chunk", "start", "rate", "queue") if k != x]
        med = group_med(results, ["tool", panel, x] + other)
        for pv in sorted({k[1] for k in med}, key=float):
            lines = {}
            for k, v in med.items():
                if k[1] != pv:
                    continue
                xv = (float(k[2]) if k[2] != "-" else None) if x == "streams" \
                    else size_mib(k[2])
                if xv is None:
                    continue
                name = label(dict(zip(["tool"] + other, [k[0]] + list(k[3:]))), other)
                lines.setdefault(name, []).append((xv, v))
            if not lines:
                continue
            plots_ = []
            for i, (name, pts) in enumerate(sorted(lines.items())):
                f = os.path.join(dat, f"{kind}-rtt{pv}-{i}.dat")
                with open(f, "w") as fh:
                    for xv, v in sorted(pts):
                        fh.write(f"{xv} {v}\n")
                plots_.append(f"'{f}' using 1:2 with linespoints lw 2 title '{name}'")
            png = os.path.join(d, f"{kind}-rtt{pv}.png")
            xl = "parallel streams" if x == "streams" else "socket buffer / window (MiB)"
            script = head + (f"set output '{png}'\nset title '{title if f'RTT {pv} ms' in title else f'{title} (RTT {pv} ms)'}'\n"
                             f"set xlabel '{xl}'\nset logscale x 2\n"
                             "plot " + ", ".join(plots_) + "\n")
            if gnuplot(script):
                made.append(png)
    if kind == "time" or settings.get("plot_time") == "yes":
        # one plot per path (RTT, rate, queue, loss): each measurement's
        # wire series (ferry-wanem's egress) where it has one, else the
        # tool's own samples without the flagged ones
        by = {}
        for s in series_rows:
            by.setdefault(s["id"], []).append(s)
        res = {r["id"]: r for r in results}
        paths = {}
        for mid in sorted(by):
            r = res[mid]
            paths.setdefault((r["rtt_ms"], r["rate"], r["queue"], r.get("loss", "-")),
                             []).append(mid)
        for key, mids in sorted(paths.items(), key=lambda kv: tuple(
                (0, float(v)) if re.fullmatch(r"[0-9.]+", v) else (1, v) for v in kv[0])):
            plots_, wired = [], True
            for mid in mids:
                pts, r = by[mid], res[mid]
                f = os.path.join(dat, f"time-{mid}.dat")
                with open(f, "w") as fh:
                    for s in pts:
                        if not s["above_cap"]:  # flagged: not throughput
                            fh.write(f"{s['t_s']} {s['gbps']}\n")
                w = os.path.join(dat, f"wire-{mid}.dat")
                wpts = [s for s in pts if s["wire_gbps"] != ""]
                if wpts:
                    with open(w, "w") as fh:
                        for s in wpts:
                            fh.write(f"{s['t_s']} {s['wire_gbps']}\n")
                else:
                    wired = False
                name = label(r, ["streams", "window", "start"]) + f" rep {r['rep']}"
                plots_.append((f, w if wpts else None, name))
            rtt, rate, queue, loss = key
            suffix = "" if len(paths) == 1 else \
                f"-rtt{rtt}-{rate}" + (f"-loss{loss}" if loss != "-" else "")
            png = os.path.join(d, f"time{suffix}.png")
            what = f"RTT {rtt} ms, {rate}" + (f", {loss}% loss" if loss != "-" else "")
            ylab = ("Gb/s through the bottleneck (frames, ferry-wanem egress)" if wired
                    else "Gb/s (payload; samples above the cap left out)")
            lines = [f"'{w if wired else f}' using 1:2 with linespoints lw 2 title '{n}'"
                     for f, w, n in plots_]
            script = head + (f"set output '{png}'\nset title '{title} ({what})'\n"
                             f"set ylabel '{ylab}'\n"
                             "set xlabel 'seconds since the client started (1 s samples)'\n"
                             "set key below\nplot " + ", ".join(lines) + "\n")
            if gnuplot(script):
                made.append(png)
    for p in made:
        print(f"plot: {p}")


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "plan":
        plan(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 3 and sys.argv[1] == "report":
        report(sys.argv[2])
    else:
        die("usage: matrix.py plan STUDY.tsv full|quick | matrix.py report DIR")


if __name__ == "__main__":
    main()
