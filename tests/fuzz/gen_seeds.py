#!/usr/bin/env python3
"""Write the seed corpora of fuzz_manifest, fuzz_roce and fuzz_pcap:
valid inputs of each kind and near misses. The encoders here are written
apart from the C code (RoCEv2 framing and ICRC as IBTA annex A17 and
scapy's contrib/roce.py describe them, pcap/pcapng as the IETF drafts do),
so replaying the seeds also checks that both agree.

Files named crash-* in the corpora are regression inputs found by the
fuzzers; this script leaves them alone.

Run from anywhere: python3 tests/fuzz/gen_seeds.py
"""
import os
import struct
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))

# ---- manifest and plan batches (lib/io/manifest.h, lib/files/files.h) ----
FILE, DIR = 1, 2


def entry(path, typ=FILE, mode=0o644, size=0, mtime=1700000000123456789):
    p = path.encode() if isinstance(path, str) else path
    return struct.pack("<H", len(p)) + p + struct.pack("<BIQq", typ, mode,
                                                       size, mtime)


def plan_send(idx):
    return struct.pack("<IB", idx, 1)


def plan_resume(idx, ranges):
    b = struct.pack("<IBI", idx, 2, len(ranges))
    for first, count in ranges:
        b += struct.pack("<QQ", first, count)
    return b


def plan_exists(idx, crc, adler):
    return struct.pack("<IBII", idx, 3, crc, adler)


def manifest_seeds():
    # byte 0: max_entries; byte 1: where the two batches split
    def inp(a, b=b"", max_entries=64):
        return bytes([max_entries, len(a)]) + a + b

    tree = (entry("data", DIR, 0o755) + entry("data/a.bin", size=1 << 30) +
            entry("data/sub", DIR, 0o700) +
            entry("data/sub/b.txt", mode=0o600, size=12))
    big = entry("x" * 4095, size=1)
    return {
        "one_file": inp(entry("f.bin", size=4096)),
        "tree": inp(tree),
        "two_batches": inp(entry("d", DIR, 0o755),
                           entry("d/f", size=5) + entry("d/g", size=0)),
        "longest_path": bytes([8, 0]) + big,
        "too_many": inp(entry("a") + entry("b"), entry("c"), max_entries=2),
        "dotdot": inp(entry("../etc/passwd")),
        "dotdot_mid": inp(entry("a/../../b")),
        "absolute": inp(entry("/etc/shadow")),
        "dot": inp(entry("a/./b")),
        "empty_comp": inp(entry("a//b")),
        "trailing_slash": inp(entry("a/")),
        "nul": inp(entry(b"a\x00b")),
        "path_too_long": bytes([8, 0]) + entry("y" * 4096),
        "dir_with_size": inp(entry("d", DIR, 0o755, size=1)),
        "bad_type": inp(entry("t", 3)),
        "bad_mode": inp(entry("m", FILE, 0o10000)),
        "size_too_big": inp(entry("s", size=1 << 63)),
        "truncated": inp(entry("trunc", size=9)[:-3]),
        "plan_mix": bytes([0, 0]) + plan_send(0) +
        plan_resume(1, [(0, 4), (9, 1)]) + plan_exists(2, 0xdeadbeef, 1),
        "plan_many_ranges": bytes([0, 0]) +
        plan_resume(7, [(i, 1) for i in range(70)]),
        "plan_bad_count": bytes([0, 0]) + struct.pack("<IBI", 1, 2, 1 << 30),
        "path_dotdotdot": bytes([0, 0]) + b"a/.../..b/b..",
    }


# ---- RoCEv2 frames (lib/xport/uroce/wire.h) -----------------------------
# Keep in step with fuzz_roce.c.
QPN, PEER_QPN = 0x000123, 0x000456
RKEY, RKEY_RO = 0x5EED0001, 0x5EED0002
MY_PSN = 0x000200
PEER_PSN = [0x000010, 0xFFFFFE, 0x7FFFFE, 0]
MTU = [256, 512, 1024, 4096]
MAC_A, MAC_B = bytes([2, 0, 0, 0, 0, 1]), bytes([2, 0, 0, 0, 0, 2])
IP_A, IP_B = 0xC6120001, 0xC6120002

OPS = {  # opcode: (reth, imm, aeth)
    0x04: (0, 0, 0), 0x05: (0, 1, 0),
    0x06: (1, 0, 0), 0x07: (0, 0, 0), 0x08: (0, 0, 0), 0x09: (0, 1, 0),
    0x0A: (1, 0, 0), 0x0B: (1, 1, 0), 0x11: (0, 0, 1),
    0x00: (0, 0, 0), 0x01: (0, 0, 0), 0x02: (0, 0, 0), 0x03: (0, 1, 0),
}


def ip_csum(h):
    s = sum(struct.unpack("!%dH" % (len(h) // 2), h))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def roce(op, psn, payload=b"", dest=QPN, va=0, rkey=RKEY, dma_len=None,
         imm=0x1234, syndrome=0, msn=0, ackreq=True, options=b"",
         trailer=b"", bad_icrc=False, sport=0xC000 | (PEER_QPN & 0x3FFF)):
    reth, has_imm, aeth = OPS.get(op, (0, 0, 0))
    pad = (-len(payload)) & 3
    bth = struct.pack("!BBHII", op, pad << 4, 0xFFFF, dest,
                      psn | (0x80000000 if ackreq else 0))
    ext = b""
    if reth:
        ext += struct.pack("!QII", va, rkey,
                           len(payload) if dma_len is None else dma_len)
    if has_imm:
        ext += struct.pack("!I", imm)
    if aeth:
        ext += struct.pack("!I", syndrome << 24 | msn)
    body = bth + ext + payload + b"\0" * pad
    ihl = 20 + len(options)
    tot = ihl + 8 + len(body) + 4
    ip = bytearray(struct.pack("!BBHHHBBHII", 0x40 | ihl // 4, 0, tot, 0,
                               0x4000, 64, 17, 0, IP_A, IP_B) + options)
    ip[10:12] = struct.pack("!H", ip_csum(bytes(ip)))
    udp = struct.pack("!HHHH", sport, 4791, tot - ihl, 0)
    # ICRC: masked pseudo-LRH, IP (tos, ttl, csum), UDP csum, BTH byte 4
    m_ip = bytearray(ip)
    m_ip[1] = 0xFF
    m_ip[8] = 0xFF
    m_ip[10:12] = b"\xff\xff"
    m_udp = udp[:6] + b"\xff\xff"
    m_body = bytearray(body)
    m_body[4] = 0xFF
    crc = zlib.crc32(b"\xff" * 8 + bytes(m_ip) + m_udp + bytes(m_body))
    if bad_icrc:
        crc ^= 1
    eth = MAC_A + MAC_B + b"\x08\x00"
    return eth + bytes(ip) + udp + body + struct.pack("<I", crc) + trailer


def ib_frame(opcode, qp, psn, ext=b"", payload=b"", vlans=(), v6=False):
    """Any opcode: BTH, the extended header bytes given, payload and pad,
    over IPv4 or IPv6 (no extension headers) and VLAN tags; ICRC masks
    as IBTA annex A17 and Linux rxe_icrc.c (IPv6: traffic class, flow
    label and hop limit all ones)."""
    pad = (-len(payload)) & 3
    body = struct.pack("!BBHII", opcode, pad << 4, 0xFFFF, qp, psn) + \
        ext + payload + b"\0" * pad
    udp_len = 8 + len(body) + 4
    udp = struct.pack("!HHHH", 0xC001, 4791, udp_len, 0)
    if v6:
        ip = struct.pack("!IHBB", 0x60000000, udp_len, 17, 64) + \
            b"\xfd" + b"\0" * 14 + b"\x01" + b"\xfd" + b"\0" * 14 + b"\x02"
        m_ip = b"\x6f\xff\xff\xff" + ip[4:7] + b"\xff" + ip[8:]
        etype = b"\x86\xdd"
    else:
        ip = bytearray(struct.pack("!BBHHHBBHII", 0x45, 0, 20 + udp_len, 0,
                                   0x4000, 64, 17, 0, IP_A, IP_B))
        ip[10:12] = struct.pack("!H", ip_csum(bytes(ip)))
        m_ip = bytearray(ip)
        m_ip[1] = m_ip[8] = m_ip[10] = m_ip[11] = 0xFF
        etype = b"\x08\x00"
    m_body = bytearray(body)
    m_body[4] = 0xFF
    crc = zlib.crc32(b"\xff" * 8 + bytes(m_ip) + udp[:6] + b"\xff\xff" +
                     bytes(m_body))
    tags = b"".join(struct.pack("!HH", 0x8100, v) for v in vlans)
    return MAC_A + MAC_B + tags + etype + bytes(ip) + udp + body + \
        struct.pack("<I", crc)


def cm_req_mad():
    """A CM REQ (management class 7, attribute 0x0010): local comm ID,
    local QPN and starting PSN at ibta_vol1_c12.h's offsets."""
    hdr = struct.pack("!BBBBHHQHHI", 1, 7, 2, 3, 0, 0, 42, 0x0010, 0, 0)
    req = bytearray(232)
    req[0:4] = struct.pack("!I", 0xA1A2A3A4)
    req[32:36] = struct.pack("!I", 0x000123 << 8)
    req[44:48] = struct.pack("!I", 0x000200 << 8)
    return hdr + bytes(req)


# What only rocedump decodes: every transport and class (not RC SEND,
# WRITE or ACK), VLAN tags, IPv6. Keep in step with check_gen_seeds.c.
def rocedump_frames():
    reth = struct.pack("!QII", 0x1000, RKEY, 8192)
    atomic = struct.pack("!QIQQ", 0x1000, RKEY, 5, 6)
    deth = struct.pack("!II", 0x80010000, 1)
    return {
        "read_request": ib_frame(0x0C, QPN, 0x10, reth),
        "read_response": ib_frame(0x0D, QPN, 0x10, b"\0\0\0\x01",
                                  pay(256)),
        "cmp_swap": ib_frame(0x13, QPN, 0x11, atomic),
        "atomic_ack": ib_frame(0x12, QPN, 0x11, b"\0\0\0\x02" +
                               struct.pack("!Q", 5)),
        "cnp": ib_frame(0x81, QPN, 0, b"\0" * 16),
        "cm_req": ib_frame(0x64, 1, 7, deth, cm_req_mad()),
        "ud_send_imm": ib_frame(0x65, QPN, 8, deth + b"\0\0\0\x09", pay(5)),
        "xrc_write": ib_frame(0xAA, QPN, 9, b"\0\0\x07\x77" + reth, pay(8)),
        "rd_send": ib_frame(0x44, QPN, 10, b"\0\0\0\x05" + deth, pay(4)),
        "vlan_write": ib_frame(0x0A, QPN, 11, reth, pay(8), vlans=(7, 100)),
        "ipv6_ack": ib_frame(0x11, QPN, 12, b"\x60\0\0\x03", v6=True),
        "flush": ib_frame(0x1C, QPN, 13, b"\0\0\0\x11" + reth),
    }


# fuzz_roce record flags
FIX_LEN, SET_QPN, SET_PSN, RECV, BUSY, POLL = 1, 2, 4, 8, 16, 32


def rec(frame, flags=0, us=1):
    return struct.pack("<BBH", flags, us, len(frame)) + frame


def pay(n, seed=1):
    return bytes((seed + 13 * i) & 0xFF for i in range(n))


def roce_seeds():
    def inp(cfg, *recs):
        return bytes([cfg]) + b"".join(recs)

    p = PEER_PSN[0]
    wo, wf, wm, wl, wli, woi = 0x0A, 0x06, 0x07, 0x08, 0x09, 0x0B
    so, soi, ack = 0x04, 0x05, 0x11
    s = {
        "write_only": inp(0, rec(roce(wo, p, pay(100), va=0))),
        "write_3pkts": inp(0, rec(roce(wf, p, pay(256), va=200, dma_len=612,
                                       ackreq=False)),
                           rec(roce(wm, p + 1, pay(256, 2), ackreq=False)),
                           rec(roce(wl, p + 2, pay(100, 3)), POLL)),
        "write_imm": inp(0, rec(roce(woi, p, pay(64), va=936), RECV | POLL)),
        "write_last_imm": inp(0, rec(roce(wf, p, pay(256), va=0,
                                          dma_len=300)),
                              rec(roce(wli, p + 1, pay(44)), RECV | POLL)),
        "write_imm_rnr": inp(0, rec(roce(woi, p, pay(8), va=8)),
                             rec(roce(woi, p, pay(8), va=8), RECV | POLL)),
        "write_end": inp(0, rec(roce(wo, p, pay(100), va=900))),
        "write_empty_at_end": inp(0, rec(roce(wo, p, b"", va=1000))),
        "write_oob": inp(0, rec(roce(wo, p, pay(200), va=900), POLL)),
        "write_oob_len": inp(0, rec(roce(wo, p, pay(4), va=0,
                                         dma_len=0xFFFFFFFF))),
        "write_huge_va": inp(0, rec(roce(wo, p, pay(4),
                                         va=0xFFFFFFFFFFFFFFFC))),
        "write_bad_rkey": inp(0, rec(roce(wo, p, pay(4), rkey=0x1234))),
        "write_ro": inp(0, rec(roce(wo, p, pay(4), rkey=RKEY_RO))),
        "write_middle_alone": inp(0, rec(roce(wm, p, pay(256)))),
        "write_first_short": inp(0, rec(roce(wf, p, pay(100), dma_len=612))),
        "send_only": inp(0, rec(roce(so, p, pay(40)), RECV | POLL)),
        "send_only_imm": inp(0, rec(roce(soi, p, pay(3)), RECV | POLL)),
        "send_too_big": inp(0, rec(roce(so, p, pay(200)), RECV | POLL)),
        "send_first": inp(0, rec(roce(0x00, p, pay(256)), RECV)),
        "send_in_write": inp(0, rec(roce(wf, p, pay(256), dma_len=600)),
                             rec(roce(so, p + 1, pay(8)), RECV | POLL)),
        "dup_and_gap": inp(0, rec(roce(wo, p, pay(8))),
                           rec(roce(wo, p, pay(8))),
                           rec(roce(wo, p + 5, pay(8))),
                           rec(roce(wo, p + 6, pay(8))),
                           rec(roce(wo, p + 1, pay(8)), POLL)),
        "psn_wrap": inp(4, rec(roce(wo, PEER_PSN[1], pay(8))),
                        rec(roce(wo, PEER_PSN[1] + 1, pay(8))),
                        rec(roce(wo, 0, pay(8)), POLL)),
        "mtu512": inp(1, rec(roce(wf, p, pay(512), dma_len=900)),
                      rec(roce(wl, p + 1, pay(388)), POLL)),
        "ack": inp(0, rec(roce(ack, MY_PSN + 2, syndrome=0x1F, msn=1)),
                   rec(roce(ack, MY_PSN + 3, syndrome=0x1F, msn=2), POLL)),
        "nak_seq": inp(0, rec(roce(ack, MY_PSN + 1, syndrome=0x60)),
                       rec(roce(ack, MY_PSN + 3, syndrome=0x1F), POLL)),
        "nak_rnr": inp(0, rec(roce(ack, MY_PSN + 3, syndrome=0x2E)),
                       rec(b"", 0, 255), rec(b"", 0, 255)),
        "nak_access": inp(0, rec(roce(ack, MY_PSN, syndrome=0x62), POLL)),
        "nak_invalid": inp(0, rec(roce(ack, MY_PSN + 1, syndrome=0x61),
                                  POLL)),
        "ack_stale": inp(0, rec(roce(ack, MY_PSN + 100, syndrome=0))),
        "wrong_qp": inp(0, rec(roce(wo, p, pay(8), dest=0x999))),
        "fixups": inp(0, rec(roce(wo, 0x777, pay(8), dest=0x999),
                             SET_QPN | SET_PSN)),
        "busy": inp(0, rec(roce(wo, p, pay(8)), BUSY),
                    rec(roce(wo, p + 1, pay(8)), POLL)),
        "ip_options": inp(0, rec(roce(wo, p, pay(16),
                                      options=b"\x01\x01\x01\x00"))),
        "eth_padding": inp(0, rec(roce(ack, MY_PSN, syndrome=0x1F,
                                       trailer=b"\0" * 6 + b"FCS!"))),
        "bad_icrc": inp(0, rec(roce(wo, p, pay(8), bad_icrc=True))),
        "icrc_fixed": inp(0, rec(bytearray(roce(wo, p, pay(8)))[:-4] +
                                     b"\0\0\0\0", FIX_LEN)),
        "truncated": inp(0, rec(roce(wo, p, pay(100))[:60])),
        "not_udp": inp(0, rec(MAC_A + MAC_B + b"\x08\x06" + b"\0" * 28)),
    }
    bad = bytearray(roce(wo, p, pay(8)))
    bad[14 + 6] = 0x20  # more fragments
    s["fragment"] = inp(0, rec(bytes(bad), FIX_LEN))
    for name, f in rocedump_frames().items():
        s["dump_" + name] = inp(0, rec(f, POLL))
    return s


# ---- captures (lib/xport/uroce/pcap.h) ----------------------------------
def pcap(frames, be=False, nano=False, linktype=1, snap=65535):
    e = ">" if be else "<"
    magic = 0xA1B23C4D if nano else 0xA1B2C3D4
    out = struct.pack(e + "IHHiIII", magic, 2, 4, 0, 0, snap, linktype)
    for i, f in enumerate(frames):
        out += struct.pack(e + "IIII", 1700000000 + i, 123 * i, len(f),
                           len(f)) + f
    return out


def block(e, typ, body):
    body += b"\0" * ((-len(body)) & 3)
    n = 12 + len(body)
    return struct.pack(e + "II", typ, n) + body + struct.pack(e + "I", n)


def shb(e):
    return block(e, 0x0A0D0D0A,
                 struct.pack(e + "IHHq", 0x1A2B3C4D, 1, 0, -1))


def opt(e, code, val):
    return struct.pack(e + "HH", code, len(val)) + val + \
        b"\0" * ((-len(val)) & 3)


def idb(e, tsresol=None, tsoffset=None, linktype=1):
    o = b""
    if tsresol is not None:
        o += opt(e, 9, bytes([tsresol]))
    if tsoffset is not None:
        o += opt(e, 14, struct.pack(e + "q", tsoffset))
    if o:
        o += opt(e, 0, b"")
    return block(e, 1, struct.pack(e + "HHI", linktype, 0, 0) + o)


def epb(e, f, ifid=0, ts=1700000000123456, caplen=None):
    return block(e, 6, struct.pack(e + "IIIII", ifid, ts >> 32,
                                   ts & 0xFFFFFFFF,
                                   len(f) if caplen is None else caplen,
                                   len(f)) + f)


def spb(e, f):
    return block(e, 3, struct.pack(e + "I", len(f)) + f)


def pcap_seeds():
    p = PEER_PSN[0]
    fr = [roce(0x0A, p, pay(64), va=0),
          roce(0x11, MY_PSN, syndrome=0x1F, msn=1),
          roce(0x0A, p, pay(8), bad_icrc=True),
          MAC_A + MAC_B + b"\x08\x06" + b"\0" * 28]
    le, be = "<", ">"
    return {
        "pcap_le_us": pcap(fr),
        "pcap_be_ns": pcap(fr, be=True, nano=True),
        "pcap_truncated": pcap(fr)[:-10],
        "pcap_linktype": pcap(fr[:1], linktype=101),
        "pcap_header_only": pcap([]),
        "pcapng_le": shb(le) + idb(le) + epb(le, fr[0]) + spb(le, fr[1]) +
        block(le, 5, b"stats") + epb(le, fr[2]),
        "pcapng_be_opts": shb(be) + idb(be, tsresol=9, tsoffset=-5) +
        epb(be, fr[0]) + idb(be, tsresol=0x94) + epb(be, fr[1], ifid=1),
        "pcapng_two_sections": shb(le) + idb(le) + epb(le, fr[0]) +
        shb(be) + idb(be) + epb(be, fr[1]),
        "pcapng_no_idb": shb(le) + epb(le, fr[0]),
        "pcapng_snaplen_cut": shb(le) + idb(le) + epb(le, fr[0][:40],
                                                     caplen=40),
        "pcapng_bad_caplen": shb(le) + idb(le) +
        epb(le, fr[0], caplen=100000),
        "pcapng_bad_tsresol": shb(le) + idb(le, tsresol=20) + epb(le, fr[0]),
        "not_a_capture": b"GIF89a" + b"\0" * 30,
        # every class rocedump decodes, a reserved opcode, a cut frame
        "pcap_rocedump": pcap(list(rocedump_frames().values()) + fr +
                              [ib_frame(0x15, QPN, 1, b"\0" * 4)]) +
        struct.pack("<IIII", 1700000100, 0, 80, len(fr[0])) + fr[0][:80],
    }


def write(name, seeds):
    out = os.path.join(HERE, "corpus", name)
    os.makedirs(out, exist_ok=True)
    for f in os.listdir(out):  # keep regression inputs, redo the seeds
        if not f.startswith("crash-"):
            os.unlink(os.path.join(out, f))
    for n, data in seeds.items():
        with open(os.path.join(out, n), "wb") as f:
            f.write(data)


def main():
    write("manifest", manifest_seeds())
    write("roce", roce_seeds())
    write("pcap", pcap_seeds())


if __name__ == "__main__":
    main()
