#!/usr/bin/env python3
"""Checks of what ferry prints, for the guest tests (tests/vm/).

  check.py bench FILE BYTES STREAMS POLL   a `ferry bench --json` report:
      verbs, STREAMS queue pairs, POLL (busy or event) reported, BYTES moved
      and counted by the receiver, no crc error, intervals adding up
  check.py osu FILE MODE SIZES POLL        a `ferry bench --osu MODE --csv`
      table: verbs, POLL, the sizes asked (a LO-HI range of powers of two),
      every message of every size accounted for
  check.py sent FILE N [RESUMED]           a `ferry send --json` report:
      verbs, N files, every one ok; with RESUMED (a path in the report),
      that file was resumed: fewer bytes sent than it has
Prints one "ok: ..." line; exits 1 with the reason otherwise.
"""
import csv
import json
import sys


def die(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def bench(path, nbytes, streams, poll):
    try:
        r = json.load(open(path))
    except (OSError, ValueError) as e:
        die(f"{path}: not a JSON report: {e}")
    s, e = r["start"], r["end"]
    if s["transport"] != "verbs":
        die(f"{path}: transport {s['transport']}, wanted verbs")
    if s["streams"] != int(streams):
        die(f"{path}: {s['streams']} streams, wanted {streams}")
    if s["poll"] != poll:
        die(f"{path}: poll {s['poll']}, wanted {poll}")
    if e["bytes"] != int(nbytes):
        die(f"{path}: moved {e['bytes']} bytes, wanted {nbytes}")
    if e["peer"]["bytes"] != e["bytes"]:
        die(f"{path}: the receiver counted {e['peer']['bytes']} bytes")
    if e["crc_errors"] != 0:
        die(f"{path}: {e['crc_errors']} crc errors")
    if sum(i["bytes"] for i in r["intervals"]) != e["bytes"]:
        die(f"{path}: the intervals do not add up")
    print(f"ok: {e['bytes']} bytes over {s['streams']} QP(s), {poll} polling, "
          f"{e['chunks']} chunks verified, in {e['seconds']:.2f} s")


def osu(path, mode, sizes, poll):
    lo, hi = (int(x) for x in sizes.split("-"))
    want = []
    while lo <= hi:
        want.append(lo)
        lo *= 2
    try:
        rows = list(csv.DictReader(open(path)))
    except OSError as e:
        die(f"{path}: {e}")
    got = [int(r["size"]) for r in rows]
    if got != want:
        die(f"{path}: sizes {got}, wanted {want}")
    for r in rows:
        if r["mode"] != mode or r["transport"] != "verbs" or r["poll"] != poll:
            die(f"{path}: a row of {r['mode']} over {r['transport']}, {r['poll']} polling")
        if int(r["bytes"]) != int(r["size"]) * int(r["count"]) or int(r["count"]) <= 0:
            die(f"{path}: size {r['size']}: {r['bytes']} bytes in {r['count']} messages")
        if not float(r["avg_us"]) > 0:
            die(f"{path}: size {r['size']}: no latency")
    print(f"ok: --osu {mode} over verbs, {poll} polling, {len(rows)} sizes {want[0]}-{want[-1]}, "
          f"{sum(int(r['count']) for r in rows)} messages")


def sent(path, nfiles, resumed=None):
    try:
        r = json.load(open(path))
    except (OSError, ValueError) as e:
        die(f"{path}: not a JSON report: {e}")
    if r["start"]["transport"] != "verbs":
        die(f"{path}: transport {r['start']['transport']}, wanted verbs")
    files = r["files"]
    if len(files) != int(nfiles) or not all(f["ok"] for f in files):
        die(f"{path}: files {files}, wanted {nfiles}, every one ok")
    note = ""
    if resumed:
        f = [f for f in files if f["path"] == resumed]
        if not f:
            die(f"{path}: no {resumed} in the report")
        f = f[0]
        if not f["resumed"] or f["sent"] >= f["bytes"]:
            die(f"{path}: {resumed} was not resumed: {f}")
        note = f", {resumed} resumed: {f['sent']} of {f['bytes']} bytes sent"
    print(f"ok: {nfiles} files sent over verbs in {r['end']['seconds']:.1f} s, every one verified{note}")


def main(argv):
    if len(argv) >= 2 and argv[1] == "bench" and len(argv) == 6:
        bench(*argv[2:])
    elif len(argv) >= 2 and argv[1] == "osu" and len(argv) == 6:
        osu(*argv[2:])
    elif len(argv) in (4, 5) and argv[1] == "sent":
        sent(*argv[2:])
    else:
        die(f"usage: {__doc__}")


if __name__ == "__main__":
    main(sys.argv)
