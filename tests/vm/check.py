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
  check.py pair bench|sent FILE BYTES|N TRANSPORT PEER   as bench (2
      streams, TRANSPORT's default waits: event on uroce, busy on verbs)
      or sent, over TRANSPORT on this side and PEER, another
      transport of its wire family, on the other, both chosen by
      `--transport auto` or named (the report's reason says which)
  check.py dump FILE WRITES               `ferry rocedump` output: every
      frame RoCEv2 (no ICMP), every one decoded and its ICRC good, at
      least WRITES RDMA WRITE frames
  check.py tshark FILE N WRITES           `tshark -T fields -e
      infiniband.bth.opcode -e _ws.malformed` of the same capture: N
      frames, all InfiniBand, none malformed, WRITES RDMA WRITE frames
      (first, middle, last with immediate) or more, SENDs and ACKs
Prints one "ok: ..." line; exits 1 with the reason otherwise.
"""
import collections
import csv
import json
import sys


def die(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def bench(path, nbytes, streams, poll, transport="verbs"):
    try:
        r = json.load(open(path))
    except (OSError, ValueError) as e:
        die(f"{path}: not a JSON report: {e}")
    s, e = r["start"], r["end"]
    if s["transport"] != transport:
        die(f"{path}: transport {s['transport']}, wanted {transport}")
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
    print(f"ok: {e['bytes']} bytes over {s['streams']} QP(s) of {transport}, {poll} polling, "
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


def sent(path, nfiles, resumed=None, transport="verbs"):
    try:
        r = json.load(open(path))
    except (OSError, ValueError) as e:
        die(f"{path}: not a JSON report: {e}")
    if r["start"]["transport"] != transport:
        die(f"{path}: transport {r['start']['transport']}, wanted {transport}")
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
    print(f"ok: {nfiles} files sent over {transport} in {r['end']['seconds']:.1f} s, every one verified{note}")


def pair(kind, path, amount, transport, peer):
    try:
        s = json.load(open(path))["start"]
    except (OSError, ValueError, KeyError) as e:
        die(f"{path}: not a JSON report: {e}")
    if s.get("peer_transport") != peer:
        die(f"{path}: the peer ran {s.get('peer_transport')!r}, wanted {peer}")
    why = s["transport_reason"]
    if not (why.startswith(f"auto picked {transport}: the receiver chose {peer}, the same wire (RoCEv2)")
            or why == f"{transport} as asked; the receiver chose {peer}, the same wire (RoCEv2)"):
        die(f"{path}: the reason given for {transport} is {why!r}")
    if kind == "bench":
        # the transport's default waits: event on uroce, busy on verbs
        bench(path, amount, 2, "event" if transport == "uroce" else "busy",
              transport)
    else:
        sent(path, amount, None, transport)
    print(f"ok: {transport} here, {peer} on the receiver: {why}")


def counts(line):
    """'N frames, N RoCEv2, N ICRC ok, ...' as {'frames': N, ...}."""
    out = {}
    for part in line.strip().split(", "):
        n, _, what = part.partition(" ")
        if not n.isdigit() or not what:
            die(f"not a rocedump count line: {line.strip()!r}")
        out[what] = int(n)
    return out


def dump(path, writes):
    lines = open(path).read().splitlines()
    if not lines:
        die(f"{path}: empty")
    c = counts(lines[-1])
    roce = c.get("RoCEv2", -1)
    if c.get("frames") != roce:
        die(f"{path}: {c.get('frames')} frames, {roce} of them RoCEv2: {lines[-1]}")
    if c.get("ICRC ok") != roce or c.get("decoded", roce) != roce:
        die(f"{path}: not every frame decoded with a good ICRC: {lines[-1]}")
    for k in ("ICRC bad", "ICRC unchecked", "undecodable", "malformed", "truncated"):
        if c.get(k, 0):
            die(f"{path}: {lines[-1]}")
    w = sum(1 for l in lines if "RDMA_WRITE" in l or "RDMA WRITE" in l)
    if w < int(writes):
        die(f"{path}: {w} RDMA WRITE frames, wanted at least {writes}")
    print(f"ok: rocedump: {lines[-1]} ({w} RDMA WRITE frames)")


def tshark(path, frames, writes):
    n, ops, bad = 0, collections.Counter(), []
    for line in open(path):
        f = line.rstrip("\n").split("\t")
        n += 1
        if f[0]:
            ops[int(f[0])] += 1
        if len(f) > 1 and f[1]:
            bad.append(f"frame {n} opcode {f[0] or '?'}")
    if n != int(frames) or sum(ops.values()) != n:
        die(f"{path}: tshark read {n} frames, {sum(ops.values())} as InfiniBand; rocedump {frames}")
    if bad:
        die(f"{path}: tshark calls {len(bad)} frames malformed: "
            + ", ".join(bad[:8]))
    w = ops[6] + ops[7] + ops[9]  # RDMA WRITE First, Middle, Last with Immediate
    if w < int(writes) or not ops[4] or not ops[17]:
        die(f"{path}: opcodes {dict(ops)}: wanted {writes}+ writes, SENDs (4) and ACKs (17)")
    print(f"ok: tshark decodes all {n} frames as InfiniBand, none malformed, opcodes {dict(sorted(ops.items()))}")


def main(argv):
    if len(argv) >= 2 and argv[1] == "bench" and len(argv) == 6:
        bench(*argv[2:])
    elif len(argv) >= 2 and argv[1] == "osu" and len(argv) == 6:
        osu(*argv[2:])
    elif len(argv) in (4, 5) and argv[1] == "sent":
        sent(*argv[2:])
    elif len(argv) == 7 and argv[1] == "pair" and argv[2] in ("bench", "sent"):
        pair(*argv[2:])
    elif len(argv) == 4 and argv[1] == "dump":
        dump(*argv[2:])
    elif len(argv) == 5 and argv[1] == "tshark":
        tshark(*argv[2:])
    else:
        die(f"usage: {__doc__}")


if __name__ == "__main__":
    main(sys.argv)
