#!/usr/bin/python3
"""What tshark reads in a capture, against what `ferry rocedump` says.

  rocedump_tshark.py tshark DIR
      decode DIR/all.pcap (rocedump_scapy.py gen) with tshark and compare
      with the field values the generator put in (DIR/all.tshark)
  rocedump_tshark.py compare PCAP OUT
      every decoded frame's opcode, QPN, PSN, RETH, AETH, DETH and CM
      fields in OUT (what `ferry rocedump PCAP` printed) as tshark reads
      them from PCAP (a capture made elsewhere, e.g. by rxe)

tshark decodes RoCEv2 with `-d udp.port==4791,infiniband`. Exit 0 on
success, 1 on a mismatch, 77 when tshark or scapy is missing.
"""
import json
import os
import re
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rocedump_scapy import OPS, PORT, TRANSPORTS  # noqa: E402

def check_tshark(d, pcap=None, wanted="all.tshark"):
    if not shutil.which("tshark"):
        print("tshark not installed", file=sys.stderr)
        return 77
    want = json.load(open(os.path.join(d, wanted)))
    names = sorted({k for w in want for k in w})
    cmd = ["tshark", "-r", pcap or f"{d}/all.pcap", "-d",
           "udp.port==%d,infiniband" % PORT, "-T", "fields",
           "-E", "separator=\t", "-E", "occurrence=f", "-e", "frame.number"]
    for n in names:
        cmd += ["-e", n]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    got = {}
    for line in out.stdout.splitlines():
        cols = line.split("\t")
        got[int(cols[0])] = dict(zip(names, cols[1:]))
    bad = checked = 0
    for i, w in enumerate(want, 1):
        for k, v in w.items():
            s = got.get(i, {}).get(k, "")
            try:
                g = int(s, 0)
            except ValueError:
                g = None
            checked += 1
            if g != v:
                bad += 1
                print("frame %d: tshark %s = %r, wanted %#x" % (i, k, s, v))
    print("tshark agreed on %d of %d field values" % (checked - bad, checked))
    return 1 if bad or not checked else 0


# What rocedump prints, in tshark's terms (fields, then the groups of the
# regular expression that hold them; hex unless decimal).
LINE_FIELDS = [
    (r" (\S+) (\S+) qp 0x(\w+) psn (\d+)",
     ["transport", "op", "infiniband.bth.destqp", "infiniband.bth.psn"]),
    (r" reth va 0x(\w+) rkey 0x(\w+) len (\d+)",
     ["infiniband.reth.va", "infiniband.reth.r_key",
      "infiniband.reth.dmalen"]),
    (r" aeth 0x(\w+) .* msn (\d+)",
     ["infiniband.aeth.syndrome", "infiniband.aeth.msn"]),
    (r" deth qkey 0x(\w+) srcqp 0x(\w+)",
     ["infiniband.deth.q_key", "infiniband.deth.srcqp"]),
]
CM_FIELDS = {  # cm NAME: tshark's fields for lcid, rcid, qpn, psn
    "REQ": ["infiniband.cm.req", None, "infiniband.cm.req.localqpn",
            "infiniband.cm.req.startpsn"],
    "REP": ["infiniband.cm.rep", "infiniband.cm.rep.remotecommid",
            "infiniband.cm.rep.localqpn", "infiniband.cm.rep.startpsn"],
    "RTU": ["infiniband.cm.rtu.localcommid",
            "infiniband.cm.rtu.remotecommid", None, None],
    "DREQ": ["infiniband.cm.dreq.localcommid",
             "infiniband.cm.dreq.remotecommid",
             "infiniband.cm.req.remoteqpneecn", None],
    "DREP": ["infiniband.cm.drsp.localcommid",
             "infiniband.cm.drsp.remotecommid", None, None],
}


def read_dump(path):
    """{frame number: {tshark field: value}} from rocedump's frame lines."""
    names = {}
    for t, (tname, ops) in TRANSPORTS.items():
        for o in ops:
            names[(tname, OPS[o][0])] = t << 5 | o
    names[("CNP", "CNP")] = 0x81
    out = {}
    for line in open(path):
        m = re.match(r"(\d+) \S+ \S+ -> \S+", line)
        if not m or " undecodable: " in line:
            continue
        f = {}
        for rx, keys in LINE_FIELDS:
            g = re.search(rx, line)
            if g:
                f.update(zip(keys, g.groups()))
        f["infiniband.bth.opcode"] = str(names[(f.pop("transport"),
                                                f.pop("op"))])
        g = re.search(r" cm (\S+)(?: lcid 0x(\w+))?(?: rcid 0x(\w+))?"
                      r"(?: qpn 0x(\w+))?(?: psn (\d+))?", line)
        if g and g.group(1) in CM_FIELDS:
            for k, v in zip(CM_FIELDS[g.group(1)], g.groups()[1:]):
                if k and v is not None:
                    f[k] = v
        dec = {"infiniband.bth.psn", "infiniband.bth.opcode",
               "infiniband.reth.dmalen", "infiniband.aeth.msn",
               "infiniband.cm.req.startpsn", "infiniband.cm.rep.startpsn"}
        out[int(m.group(1))] = {k: int(v, 10 if k in dec else 16)
                                for k, v in f.items()}
    return out


def compare(pcap, dump):
    """Every decoded frame's fields in rocedump's output (dump) as tshark
    reads them from pcap."""
    if not shutil.which("tshark"):
        print("tshark not installed", file=sys.stderr)
        return 77
    want = read_dump(dump)
    d = os.path.dirname(os.path.abspath(dump))
    with open(os.path.join(d, "compare.tshark"), "w") as f:
        json.dump([want.get(i, {}) for i in range(1, max(want) + 1)], f)
    return check_tshark(d, pcap, "compare.tshark")


def main(argv):
    if len(argv) == 3 and argv[1] == "tshark":
        return check_tshark(argv[2])
    if len(argv) == 4 and argv[1] == "compare":
        return compare(argv[2], argv[3])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
