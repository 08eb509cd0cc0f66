#!/usr/bin/python3
"""Captures for `ferry rocedump`, built with scapy, and what it must print.

  rocedump_scapy.py gen DIR
      DIR/all.pcap: every base transport opcode of RC, UC, RD, UD and XRC,
      CNPs, every AETH kind (ACK credits, RNR NAK timers, every NAK code),
      CM MADs on QP 1 and other MADs, VLAN tags, IPv6, a bad ICRC, frames
      cut by the snapshot length, undecodable frames of every kind, frames
      that are not RoCEv2, and flows with PSN gaps (across the 24-bit
      wrap), retransmissions, NAKs and CNPs;
      DIR/all.expect: the output rocedump must print for it, line by line;
      DIR/all.tshark: per frame, the field values tshark must decode;
      DIR/good.pcap, DIR/good.expect: the decoded, ICRC-good frames only.
  (rocedump_tshark.py checks them against tshark)

The frames' fields are chosen here, laid out from the IBA's header
formats (vol. 1 ch. 9, 12, 13; annexes A14, A17, A19), as Linux's rxe,
ibta_vol1_c12.h and Wireshark read them; the BTH is scapy's
(contrib/roce.py) and so is the ICRC of IPv4 frames. scapy does not
compute an IPv6 ICRC: scapy_icrc.py's own_icrc_ip() does (rxe_icrc.c's
masks), and is checked against scapy on every IPv4 frame. The expected lines are written
from the chosen values, not from the bytes, so a decoder that misreads a
field does not agree by construction.

Exit 0 on success, 77 when scapy is missing.
"""
import json
import os
import struct
import sys

try:
    from scapy.all import ARP, DNS, DNSQR, IP, IPv6, UDP, Dot1Q, Ether, Raw
    from scapy.all import conf
    from scapy.contrib.roce import BTH, cnp
except ImportError as e:  # the shell script turns this into a skip
    print(f"scapy not usable: {e}", file=sys.stderr)
    sys.exit(77)

conf.logLevel = 40  # scapy warns that it cannot do the IPv6 ICRC
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from scapy_icrc import own_icrc_ip  # noqa: E402
PORT = 4791
A4, B4 = "198.18.0.1", "198.18.0.2"
A6, B6 = "fd00::1", "fd00::2"
T0 = 1_700_000_000 * 10**9

# Operations (low 5 bits) and the headers each carries in RC (rxe_opcode.c).
RETH, IMM, AETH, ATOM, ATOMACK, IETH, FETH = (
    "reth", "immdt", "aeth", "atomiceth", "atomicacketh", "ieth", "feth")
OPS = {
    0x00: ("SEND_FIRST", [], "req"), 0x01: ("SEND_MIDDLE", [], "req"),
    0x02: ("SEND_LAST", [], "req"), 0x03: ("SEND_LAST_IMM", [IMM], "req"),
    0x04: ("SEND_ONLY", [], "req"), 0x05: ("SEND_ONLY_IMM", [IMM], "req"),
    0x06: ("RDMA_WRITE_FIRST", [RETH], "req"),
    0x07: ("RDMA_WRITE_MIDDLE", [], "req"),
    0x08: ("RDMA_WRITE_LAST", [], "req"),
    0x09: ("RDMA_WRITE_LAST_IMM", [IMM], "req"),
    0x0a: ("RDMA_WRITE_ONLY", [RETH], "req"),
    0x0b: ("RDMA_WRITE_ONLY_IMM", [RETH, IMM], "req"),
    0x0c: ("RDMA_READ_REQUEST", [RETH], "nopay"),
    0x0d: ("RDMA_READ_RESPONSE_FIRST", [AETH], "resp"),
    0x0e: ("RDMA_READ_RESPONSE_MIDDLE", [], "resp"),
    0x0f: ("RDMA_READ_RESPONSE_LAST", [AETH], "resp"),
    0x10: ("RDMA_READ_RESPONSE_ONLY", [AETH], "resp"),
    0x11: ("ACKNOWLEDGE", [AETH], "nopay"),
    0x12: ("ATOMIC_ACKNOWLEDGE", [AETH, ATOMACK], "nopay"),
    0x13: ("COMPARE_SWAP", [ATOM], "nopay"),
    0x14: ("FETCH_ADD", [ATOM], "nopay"),
    0x15: ("RESYNC", [], "nopay"),
    0x16: ("SEND_LAST_INV", [IETH], "req"),
    0x17: ("SEND_ONLY_INV", [IETH], "req"),
    0x1c: ("FLUSH", [FETH, RETH], "nopay"),
    0x1d: ("ATOMIC_WRITE", [RETH], "req"),
}
RESPONSES = {0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12}
TRANSPORTS = {  # ib_pack.h; XRC: Wireshark and rxe's XRC patches
    0: ("RC", set(range(0x15)) | {0x16, 0x17, 0x1c, 0x1d}),
    1: ("UC", set(range(0x0c))),
    2: ("RD", set(range(0x16)) | {0x1c}),
    3: ("UD", {0x04, 0x05}),
    5: ("XRC", set(range(0x15)) | {0x16, 0x17, 0x1c}),
}
ORDER = ["rdeth", "deth", "xrceth", FETH, RETH, ATOM, AETH, ATOMACK, IMM,
         IETH]
LEN = {"rdeth": 4, "deth": 8, "xrceth": 4, FETH: 4, RETH: 16, ATOM: 28,
       AETH: 4, ATOMACK: 8, IMM: 4, IETH: 4}
# rdmavt's credit_table; ib_verbs.h enum ib_rnr_timeout (in 10 us units)
CREDITS = [0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256,
           384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288,
           16384, 24576, 32768]
RNR = [65536, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256,
       384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288,
       16384, 24576, 32768, 49152]
NAKS = ["PSN sequence error", "invalid request", "remote access error",
        "remote operational error", "invalid RD request"]


def headers(opcode):
    """Extended headers of opcode, in wire order."""
    t, o = opcode >> 5, opcode & 0x1f
    name, hdrs, kind = OPS[o]
    hdrs = list(hdrs)
    req = o not in RESPONSES
    if t == 2:
        hdrs += ["rdeth"] + (["deth"] if req and o != 0x1c else [])
    elif t == 3:
        hdrs += ["deth"]
    elif t == 5 and req:
        hdrs += ["xrceth"]
    return [h for h in ORDER if h in hdrs]


class Frame:
    """A frame, the line rocedump must print for it, its flow, and the
    fields tshark must decode."""

    def __init__(self, raw, line=None, caplen=None, tshark=None, flow=None,
                 kind="other"):
        self.raw, self.line, self.kind = raw, line, kind
        self.caplen = len(raw) if caplen is None else caplen
        self.tshark, self.flow = tshark or {}, flow


def l3(v6=False, vlans=(), src=None, dst=None, ecn=0, sport=0xC123):
    e = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
    for v in vlans:
        e = e / Dot1Q(vlan=v)
    if v6:
        ip = IPv6(src=src or A6, dst=dst or B6, tc=ecn)
    else:
        ip = IP(src=src or A4, dst=dst or B4, flags="DF", tos=ecn)
    return e / ip / UDP(sport=sport, dport=PORT, chksum=0)


def finish(pkt, bad_icrc=False):
    """Bytes of pkt with its ICRC: scapy's (IPv4, checked against
    own_icrc_ip) or own_icrc_ip (IPv6)."""
    raw = bytearray(bytes(pkt))
    ipo = 14
    while raw[ipo - 2:ipo] in (b"\x81\x00", b"\x88\xa8"):
        ipo += 4
    ip = raw[ipo:]
    mine = own_icrc_ip(bytes(ip))
    if ip[0] >> 4 == 4:
        if bytes(ip[-4:]) != mine:
            sys.exit("own_icrc disagrees with scapy: %s vs %s" %
                     (mine.hex(), bytes(ip[-4:]).hex()))
    else:
        raw[-4:] = mine
    if bad_icrc:
        raw[-1] ^= 0x40
    return bytes(raw)


def ext_bytes(h, f):
    if h == "rdeth":
        return struct.pack("!I", f["eec"])
    if h == "deth":
        return struct.pack("!II", f["qkey"], f["srcqp"])
    if h == "xrceth":
        return struct.pack("!I", f["srq"])
    if h == FETH:
        return struct.pack("!I", f["sel"] << 4 | f["plt"])
    if h == RETH:
        return struct.pack("!QII", f["va"], f["rkey"], f["len"])
    if h == ATOM:
        return struct.pack("!QIQQ", f["va"], f["rkey"], f["swap"], f["cmp"])
    if h == AETH:
        return struct.pack("!I", f["syn"] << 24 | f["msn"])
    if h == ATOMACK:
        return struct.pack("!Q", f["orig"])
    if h == IMM:
        return struct.pack("!I", f["imm"])
    return struct.pack("!I", f["ieth"])  # IETH


def aeth_text(syn, msn):
    code = syn & 0x1F
    kind = syn >> 5
    if kind == 0:
        what = "ACK credits " + ("none" if code == 31 else str(CREDITS[code]))
    elif kind == 1:
        us = RNR[code] * 10
        what = "RNR_NAK timer %d.%02d ms" % (us // 1000, us % 1000 // 10)
    elif kind == 3:
        what = "NAK code %d (%s)" % (
            code, NAKS[code] if code < 5 else "reserved NAK code")
    else:
        what = "reserved"
    return " aeth 0x%02x %s msn %d" % (syn, what, msn)


def hdr_text(h, f, opcode):
    if h == "rdeth":
        return " rdeth eec 0x%06x" % f["eec"]
    if h == "deth":
        return " deth qkey 0x%08x srcqp 0x%06x" % (f["qkey"], f["srcqp"])
    if h == "xrceth":
        return " xrceth srq 0x%06x" % f["srq"]
    if h == FETH:
        return " feth sel %d plt %d" % (f["sel"], f["plt"])
    if h == RETH:
        return " reth va 0x%x rkey 0x%08x len %d" % (f["va"], f["rkey"],
                                                      f["len"])
    if h == ATOM:
        cas = opcode & 0x1F == 0x13
        s = " atomic va 0x%x rkey 0x%08x %s 0x%x" % (
            f["va"], f["rkey"], "swap" if cas else "add", f["swap"])
        return s + (" cmp 0x%x" % f["cmp"] if cas else "")
    if h == AETH:
        return aeth_text(f["syn"], f["msn"])
    if h == ATOMACK:
        return " atomicack orig 0x%x" % f["orig"]
    if h == IMM:
        return " imm 0x%08x" % f["imm"]
    return " ieth rkey 0x%08x" % f["ieth"]


def tshark_fields(h, f):
    """tshark's names for what the headers hold."""
    if h == "rdeth":
        return {"infiniband.rdeth.eecnxt": f["eec"]}
    if h == "deth":
        return {"infiniband.deth.q_key": f["qkey"],
                "infiniband.deth.srcqp": f["srcqp"]}
    if h == RETH:
        return {"infiniband.reth.va": f["va"],
                "infiniband.reth.r_key": f["rkey"],
                "infiniband.reth.dmalen": f["len"]}
    if h == ATOM:
        return {"infiniband.atomiceth.swapdt": f["swap"],
                "infiniband.atomiceth.cmpdt": f["cmp"]}
    if h == AETH:
        return {"infiniband.aeth.syndrome": f["syn"],
                "infiniband.aeth.msn": f["msn"]}
    if h == ATOMACK:
        return {"infiniband.atomicacketh.origremdt": f["orig"]}
    return {}


class Gen:
    def __init__(self):
        self.frames = []
        self.n = 0

    def add(self, fr):
        self.frames.append(fr)

    def ib(self, opcode, qp, psn, fields=None, paylen=0, v6=False, vlans=(),
           src=None, dst=None, ecn=0, bth=None, bad_icrc=False, caplen=None,
           flow=None, tshark=True):
        """A decoded frame of opcode with the given header fields."""
        f = dict(fields or {})
        self.n += 1
        k = self.n
        hs = headers(opcode)
        defaults = {"eec": 0x00E000 + k, "qkey": 0x11110000 + k,
                    "srcqp": 0x000500 + k, "srq": 0x000700 + k,
                    "sel": k % 4, "plt": k % 16,
                    "va": 0x00007F0000000000 + k * 0x1000,
                    "rkey": 0x5EED0000 + k, "len": paylen or 8192,
                    "swap": 0x1111222233330000 + k,
                    "cmp": 0x4444555566660000 + k, "syn": 0x1F,
                    "msn": 0x000100 + k, "orig": 0x7777888899990000 + k,
                    "imm": 0xC0DE0000 + k, "ieth": 0x1EE70000 + k}
        for key, v in defaults.items():
            f.setdefault(key, v)
        b = dict(se=k & 1, migreq=(k >> 1) & 1, ackreq=(k >> 2) & 1,
                 fecn=0, becn=0, pkey=0xFFFF)
        b.update(bth or {})
        pad = -paylen % 4
        ext = b"".join(ext_bytes(h, f) for h in hs)
        payload = bytes((k + i) & 0xFF for i in range(paylen))
        pkt = l3(v6, vlans, src, dst, ecn) / BTH(
            opcode=opcode, solicited=b["se"], migreq=b["migreq"],
            padcount=pad, pkey=b["pkey"], fecn=b["fecn"], becn=b["becn"],
            dqpn=qp, ackreq=b["ackreq"], psn=psn) / Raw(
                ext + payload + b"\0" * pad)
        raw = finish(pkt, bad_icrc)
        t, o = opcode >> 5, opcode & 0x1F
        flags = "".join(" " + n for n in ("se", "migreq", "ackreq", "fecn",
                                          "becn") if b[n])
        flags += " ce" if ecn & 3 == 3 else ""
        flags += " pkey 0x%04x" % b["pkey"] if b["pkey"] != 0xFFFF else ""
        flags += " vlan %d" % vlans[-1] if vlans else ""
        icrc = "ICRC BAD" if bad_icrc else "icrc ok"
        if caplen is not None and caplen < len(raw):
            icrc = "icrc unchecked"
        line = " %s %s qp 0x%06x psn %d%s%s payload %d %s" % (
            TRANSPORTS[t][0], OPS[o][0], qp, psn, flags,
            "".join(hdr_text(h, f, opcode) for h in hs), paylen, icrc)
        ts = {"infiniband.bth.opcode": opcode,
              "infiniband.bth.destqp": qp, "infiniband.bth.psn": psn}
        # tshark 4.0 does not decode XRCETH, FETH or ATOMIC WRITE, and
        # reads an RD packet's extended headers 8 bytes further on than
        # rxe (rxe_opcode.c: the RDETH right after the BTH) lays them out
        if t not in (2, 5) and o not in (0x1c, 0x1d):
            for h in hs:
                ts.update(tshark_fields(h, f))
        self.add(Frame(raw, self.head(v6, src, dst) + line, caplen,
                       ts if tshark else {}, flow or (
                           v6, src or (A6 if v6 else A4),
                           dst or (B6 if v6 else B4), qp,
                           f["srcqp"] if "deth" in hs else None),
                       "decoded"))
        return self.frames[-1]

    def head(self, v6, src, dst):
        return " %s -> %s" % (src or (A6 if v6 else A4),
                              dst or (B6 if v6 else B4))

    def cnp(self, qp, v6=False):
        """scapy's RoCEv2 CNP (opcode 0x81, BECN, 16 reserved bytes)."""
        raw = finish(l3(v6) / cnp(qp))
        self.add(Frame(raw, self.head(v6, None, None) +
                       " CNP CNP qp 0x%06x psn 0 becn payload 0 icrc ok" % qp,
                       tshark={"infiniband.bth.destqp": qp},
                       flow=(v6, A6 if v6 else A4, B6 if v6 else B4, qp,
                             None), kind="decoded"))

    def undecodable(self, raw, why, bth=None, caplen=None, v6=False):
        line = self.head(v6, None, None) + " undecodable: " + why
        if bth:
            line += " (opcode 0x%02x qp 0x%06x psn %d)" % bth
        self.add(Frame(raw, line, caplen, kind="undecodable"))

    def other(self, pkt):
        self.add(Frame(bytes(pkt)))


# ---- the capture ----

def every_opcode(g):
    for t, (tname, ops) in sorted(TRANSPORTS.items()):
        for o in sorted(ops):
            opcode = t << 5 | o
            kind = OPS[o][2]
            n = 0 if kind == "nopay" else 8 if o == 0x1d else \
                [1, 2, 3, 5, 64, 255][opcode % 6]
            g.ib(opcode, 0x000100 + opcode, (0xFFFF00 + opcode) & 0xFFFFFF,
                 paylen=n)


def every_aeth(g):
    syns = [0x00, 0x05, 0x1E, 0x1F, 0x20, 0x21, 0x2E, 0x3F,
            0x60, 0x61, 0x62, 0x63, 0x64, 0x65, 0x40, 0x9F]
    for i, s in enumerate(syns):
        g.ib(0x11, 0x000300 + i, 0x000400 + i, {"syn": s, "msn": 0x800 + i})


MAD_CM, MAD_PERF = 0x07, 0x04


def mad(attr, data, cls=MAD_CM, method=0x03):
    hdr = struct.pack("!BBBBHHQHHI", 1, cls, 2, method, 0, 0,
                      0x0102030405060708, attr, 0, 0)
    body = bytearray(232)
    body[:len(data)] = data
    return hdr + bytes(body)


def cm_frames(g):
    """CM MADs: fields at ibta_vol1_c12.h's offsets (after the header)."""
    lid, rid, qpn, psn = 0xA1A2A3A4, 0xB1B2B3B4, 0x00C1C2, 0x00D1D2
    w = struct.pack
    req = bytearray(48)
    req[0:4] = w("!I", lid)
    req[32:36] = w("!I", qpn << 8 | 0x10)     # QPN, responder resources
    req[44:48] = w("!I", psn << 8 | 0x37)     # PSN, timeout, retries
    rep = bytearray(24)
    rep[0:8] = w("!II", lid, rid)
    rep[12:16] = w("!I", qpn << 8)
    rep[20:24] = w("!I", psn << 8)
    rej = w("!IIHH", lid, rid, 0x0000, 28)
    ids = w("!II", lid, rid)
    dreq = w("!III", lid, rid, qpn << 8)
    sidr_rep = w("!IBBHI", lid, 2, 0, 0, qpn << 8)
    lap = w("!IIII", lid, rid, 0, qpn << 8)
    cases = [
        (0x0010, bytes(req), " cm REQ lcid 0x%08x qpn 0x%06x psn %d"
         % (lid, qpn, psn), {"infiniband.cm.req": lid,
                             "infiniband.cm.req.localqpn": qpn,
                             "infiniband.cm.req.startpsn": psn}),
        (0x0011, ids, " cm MRA lcid 0x%08x rcid 0x%08x" % (lid, rid), {}),
        (0x0012, rej, " cm REJ lcid 0x%08x rcid 0x%08x reason 28"
         % (lid, rid), {"infiniband.cm.rej.localcommid": lid,
                        "infiniband.cm.rej.remotecommid": rid,
                        "infiniband.cm.rej.reason": 28}),
        (0x0013, bytes(rep), " cm REP lcid 0x%08x rcid 0x%08x qpn 0x%06x "
         "psn %d" % (lid, rid, qpn, psn),
         {"infiniband.cm.rep": lid, "infiniband.cm.rep.remotecommid": rid,
          "infiniband.cm.rep.localqpn": qpn,
          "infiniband.cm.rep.startpsn": psn}),
        (0x0014, ids, " cm RTU lcid 0x%08x rcid 0x%08x" % (lid, rid),
         {"infiniband.cm.rtu.localcommid": lid,
          "infiniband.cm.rtu.remotecommid": rid}),
        (0x0015, dreq, " cm DREQ lcid 0x%08x rcid 0x%08x qpn 0x%06x"
         % (lid, rid, qpn), {"infiniband.cm.dreq.localcommid": lid,
                             "infiniband.cm.dreq.remotecommid": rid,
                             "infiniband.cm.req.remoteqpneecn": qpn}),
        (0x0016, ids, " cm DREP lcid 0x%08x rcid 0x%08x" % (lid, rid),
         {"infiniband.cm.drsp.localcommid": lid,
          "infiniband.cm.drsp.remotecommid": rid}),
        (0x0017, ids, " cm SIDR_REQ lcid 0x%08x" % lid, {}),
        (0x0018, sidr_rep, " cm SIDR_REP lcid 0x%08x qpn 0x%06x reason 2"
         % (lid, qpn), {}),
        (0x0019, lap, " cm LAP lcid 0x%08x rcid 0x%08x qpn 0x%06x"
         % (lid, rid, qpn), {}),
        (0x001a, ids, " cm APR lcid 0x%08x rcid 0x%08x" % (lid, rid), {}),
        (0x0001, b"", " cm ClassPortInfo", {}),
        (0x0020, b"", " cm attr 0x0020", {}),
    ]
    for i, (attr, data, text, ts) in enumerate(cases):
        g.mad_frame(mad(attr, data), i, text, ts)
    g.mad_frame(mad(0x0012, b"", cls=MAD_PERF, method=0x01), len(cases),
                " mad class 0x04 method 0x01 attr 0x0012", {})


def mad_frame(self, m, psn, text, ts):
    self.n += 1
    pkt = l3() / BTH(opcode=0x64, dqpn=1, psn=psn) / Raw(
        struct.pack("!II", 0x80010000, 1) + m)
    line = (" UD SEND_ONLY qp 0x000001 psn %d deth qkey 0x80010000 "
            "srcqp 0x000001%s payload %d icrc ok" % (psn, text, len(m)))
    t = {"infiniband.bth.opcode": 0x64, "infiniband.mad.attributeid":
         struct.unpack("!H", m[16:18])[0]}
    t.update(ts)
    self.add(Frame(finish(pkt), self.head(False, None, None) + line,
                   tshark=t, flow=(False, A4, B4, 1, 1), kind="decoded"))


Gen.mad_frame = mad_frame


def paths(g):
    """VLAN tags, IPv6, ECN CE, a P_Key, FECN/BECN."""
    g.ib(0x0a, 0x000A01, 5, paylen=100, vlans=(100,))
    g.ib(0x0a, 0x000A02, 6, paylen=100, vlans=(7, 200))
    g.ib(0x0b, 0x000A03, 7, paylen=33, v6=True)
    g.ib(0x11, 0x000A04, 8, v6=True, vlans=(300,))
    g.ib(0x64, 0x000A05, 9, paylen=20, v6=True)
    g.ib(0x04, 0x000A06, 10, paylen=16, ecn=3,
         bth={"pkey": 0x8001, "fecn": 1, "becn": 1})
    g.cnp(0x000A07, v6=True)


def raw_roce(bth, tail, v6=False, bad_csum=False):
    """RoCEv2 bytes laid out by hand (for frames no builder would make)."""
    pkt = l3(v6) / Raw(bth + tail)
    raw = bytearray(bytes(pkt))
    if bad_csum:
        raw[24] ^= 0xFF
    return bytes(raw)


def bth_bytes(opcode, qp, psn, pad=0, tver=0):
    return struct.pack("!BBHII", opcode, pad << 4 | tver, 0xFFFF, qp, psn)


def broken(g):
    """Undecodable frames: reserved and vendor opcodes, lengths, cuts."""
    ok4 = b"\0\0\0\0"
    g.undecodable(raw_roce(bth_bytes(0x15, 0xB01, 1), ok4), "reserved opcode",
                  (0x15, 0xB01, 1))
    g.undecodable(raw_roce(bth_bytes(0x2c, 0xB02, 2), ok4), "reserved opcode",
                  (0x2c, 0xB02, 2))
    g.undecodable(raw_roce(bth_bytes(0x82, 0xB03, 3), ok4), "reserved opcode",
                  (0x82, 0xB03, 3))
    g.undecodable(raw_roce(bth_bytes(0xC0, 0xB04, 4), ok4),
                  "manufacturer-specific opcode", (0xC0, 0xB04, 4))
    g.undecodable(raw_roce(bth_bytes(0x04, 0xB05, 5, tver=1), ok4),
                  "BTH transport header version is not 0", (0x04, 0xB05, 5))
    g.undecodable(raw_roce(bth_bytes(0x11, 0xB06, 6), b"\0" * 12),
                  "payload on an opcode that carries none", (0x11, 0xB06, 6))
    g.undecodable(raw_roce(bth_bytes(0x04, 0xB07, 7), b"\0" * 13),
                  "payload and pad not a multiple of 4 bytes",
                  (0x04, 0xB07, 7))
    g.undecodable(raw_roce(bth_bytes(0x06, 0xB08, 8), b"\0" * 12),
                  "UDP payload too short for the opcode's headers",
                  (0x06, 0xB08, 8))
    g.undecodable(raw_roce(bth_bytes(0x04, 0xB09, 9), b""),
                  "UDP payload too short for a BTH and an ICRC")
    g.undecodable(raw_roce(bth_bytes(0x04, 0xB0A, 10), ok4,
                           bad_csum=True), "bad IPv4 header checksum")
    deth = struct.pack("!II", 0x80010000, 1)
    short_req = mad(0x0010, b"")[:24 + 40]
    g.undecodable(raw_roce(bth_bytes(0x64, 1, 11), deth + short_req + ok4),
                  "CM MAD too short for its message's fields", (0x64, 1, 11))
    g.undecodable(raw_roce(bth_bytes(0x64, 1, 12), deth + b"\0" * 8 + ok4),
                  "MAD on QP 1 shorter than its 24-byte header",
                  (0x64, 1, 12))
    full = raw_roce(bth_bytes(0x0a, 0xB0D, 13), b"\0" * 40)
    g.undecodable(full, "BTH cut off by the capture", caplen=14 + 20 + 8 + 6)
    # cut after the headers: decoded, ICRC unchecked
    g.ib(0x0a, 0x000B0E, 14, paylen=1000, caplen=14 + 20 + 8 + 12 + 16 + 10)
    g.ib(0x0a, 0x000B0F, 15, paylen=100, bad_icrc=True)


def others(g):
    g.other(Ether() / IP(src="10.0.0.1", dst="10.0.0.2") / UDP(dport=53) /
            DNS(qd=DNSQR(qname="example.org")))
    g.other(Ether(dst="ff:ff:ff:ff:ff:ff") / ARP(pdst="10.0.0.2"))
    g.other(Ether() / IP(src=A4, dst=B4, flags="MF") / UDP(dport=PORT) /
            Raw(b"\0" * 40))  # a fragment is not decoded as RoCEv2


def flows(g):
    """One RC connection A <-> B, PSNs across the wrap, and a UD flow."""
    qa, qb = 0x00DCBA, 0x00ABCD  # A's QP, B's QP
    ab = dict(dst=B4, src=A4)
    ba = dict(dst=A4, src=B4)
    seq = [(0x06, 0xFFFFFD, 64), (0x07, 0xFFFFFE, 64), (0x08, 0xFFFFFF, 8),
           (0x04, 0x000001, 16),          # 0 missing: a gap
           (0x04, 0x000002, 16),
           (0x04, 0x000000, 16), (0x04, 0x000001, 16),  # go back: 3 resent
           (0x04, 0x000002, 16),
           (0x0c, 0x000003, 0),            # READ 8192: 2 to 32 PSNs
           (0x04, 0x000013, 4),            # +16: in order
           (0x13, 0x000014, 0), (0x14, 0x000015, 0),
           (0x04, 0x000030, 4)]            # a gap
    for op, psn, n in seq:
        g.ib(op, qb, psn, paylen=n, **ab)
    back = [(0x11, 0xFFFFFF, 0x1F), (0x11, 0x000000, 0x60),  # NAK seq
            (0x11, 0x000002, 0x2E),                           # RNR NAK
            (0x0d, 0x000003, 0x00), (0x0e, 0x000004, None),
            (0x0f, 0x000005, 0x00), (0x12, 0x000014, 0x00),
            (0x11, 0x000015, 0x62)]                           # NAK access
    for op, psn, syn in back:
        n = 0 if op in (0x11, 0x12) else 4096 if op != 0x0f else 100
        g.ib(op, qa, psn, {"syn": syn} if syn is not None else None,
             paylen=n, **ba)
    g.cnp_to(qa, B4, A4)
    g.cnp_to(qa, B4, A4)
    for psn in (1, 2, 3, 5, 5, 6):   # UD: a gap, then 5 again
        g.ib(0x64, 0x000020, psn, {"srcqp": 0x000010, "qkey": 0x2222},
             paylen=32)
    return {
        (False, A4, B4, qb, None): "2 psn gaps, 3 retransmitted",
        (False, B4, A4, qa, None): "0 psn gaps, 0 retransmitted",
        (False, A4, B4, 0x20, 0x10): "1 psn gaps, 1 retransmitted",
    }


def cnp_to(self, qp, src, dst):
    raw = finish(Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") /
                 IP(src=src, dst=dst, flags="DF") /
                 UDP(sport=0xC123, dport=PORT, chksum=0) / cnp(qp))
    self.add(Frame(raw, " %s -> %s CNP CNP qp 0x%06x psn 0 becn payload 0 "
                   "icrc ok" % (src, dst, qp), tshark={},
                   flow=(False, src, dst, qp, None), kind="decoded"))


Gen.cnp_to = cnp_to


# ---- expected output ----

def flow_lines(frames, gaps):
    """The flow table from the frames' intents: for the frames of
    every_opcode() and friends one frame per QP and nothing to count but
    NAKs and CNPs; the flows() scenario's PSN counts come from gaps."""
    order, acc = [], {}
    for fr in frames:
        if fr.kind != "decoded":
            continue
        k = fr.flow
        if k not in acc:
            order.append(k)
            acc[k] = [0, 0, 0, 0, 0]
        a = acc[k]
        a[0] += 1
        tok = fr.line.split()
        is_cnp = tok[3] == "CNP"
        if not is_cnp:
            a[1] += int(tok[tok.index("payload") + 1])
        if " NAK code " in fr.line:
            a[2] += 1
        if " RNR_NAK " in fr.line:
            a[3] += 1
        if is_cnp:
            a[4] += 1
    out = []
    for k in order:
        v6, src, dst, qp, sqp = k
        a = acc[k]
        head = "flow %s qp 0x%06x from %s" % (dst, qp, src)
        if sqp is not None:
            head += " qp 0x%06x" % sqp
        out.append("%s: %d frames, %d payload bytes, %s, %d naks, "
                   "%d rnr naks, %d cnps" % (
                       head, a[0], a[1],
                       gaps.get(k, "0 psn gaps, 0 retransmitted"),
                       a[2], a[3], a[4]))
    return out


def expected(frames, gaps):
    lines = []
    for i, fr in enumerate(frames, 1):
        if fr.line:
            t = (i - 1) * 1000
            lines.append("%d %d.%06d%s" % (i, t // 10**6, t % 10**6,
                                           fr.line))
    lines += flow_lines(frames, gaps)
    k = [fr.kind for fr in frames]
    dec = [fr for fr in frames if fr.kind == "decoded"]
    ok = sum(1 for fr in dec if fr.line.endswith("icrc ok"))
    bad = sum(1 for fr in dec if fr.line.endswith("ICRC BAD"))
    unch = sum(1 for fr in dec if fr.line.endswith("icrc unchecked"))
    roce = k.count("decoded") + k.count("undecodable")
    lines.append("%d frames, %d RoCEv2, %d decoded, %d undecodable, "
                 "%d ICRC ok, %d ICRC bad, %d ICRC unchecked" % (
                     len(frames), roce, k.count("decoded"),
                     k.count("undecodable"), ok, bad, unch))
    return "\n".join(lines) + "\n"


def write_pcap(path, frames):
    """Classic pcap, microseconds, little endian; record i at T0 + i ms;
    a frame's caplen may be below its length (a snapshot length)."""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i, fr in enumerate(frames):
            t = T0 // 1000 + i * 1000
            f.write(struct.pack("<IIII", t // 10**6, t % 10**6, fr.caplen,
                                len(fr.raw)))
            f.write(fr.raw[:fr.caplen])


def gen(d):
    g = Gen()
    every_opcode(g)
    every_aeth(g)
    cm_frames(g)
    paths(g)
    broken(g)
    others(g)
    gaps = flows(g)
    write_pcap(f"{d}/all.pcap", g.frames)
    with open(f"{d}/all.expect", "w") as f:
        f.write(expected(g.frames, gaps))
    with open(f"{d}/all.tshark", "w") as f:
        json.dump([fr.tshark for fr in g.frames], f)
    good = [fr for fr in g.frames
            if fr.kind == "decoded" and fr.line.endswith("icrc ok")]
    write_pcap(f"{d}/good.pcap", good)
    with open(f"{d}/good.expect", "w") as f:
        f.write(expected(good, gaps))
    print("wrote %d frames (%d decoded) to %s" % (
        len(g.frames), sum(fr.kind == "decoded" for fr in g.frames), d))


def main(argv):
    if len(argv) != 3 or argv[1] != "gen":
        print(__doc__, file=sys.stderr)
        return 2
    gen(argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
