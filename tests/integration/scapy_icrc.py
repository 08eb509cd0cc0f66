#!/usr/bin/python3
"""Cross-check ferry's RoCEv2 ICRC with scapy's (contrib/roce.py).

  scapy_icrc.py gen DIR     write DIR/scapy.pcap (little endian, us),
                            DIR/scapy_be_ns.pcap (big endian, ns),
                            DIR/scapy.pcapng: RoCEv2 frames whose ICRC
                            scapy computed, plus two frames that are not
                            RoCEv2; DIR/expect: the summary line ferry
                            should print for them; and DIR/scapy_bad.pcap:
                            one good frame and one with a wrong ICRC
  scapy_icrc.py check FILE  recompute with scapy the ICRC of every RoCEv2
                            frame in FILE (frames built by ferry) and
                            compare it with the one in the frame

Exit 0 on success, 1 on a mismatch, 77 when scapy is missing.
"""
import struct
import sys
import zlib

try:
    from scapy.all import ARP, DNS, DNSQR, IP, UDP, Ether, Raw, IPOption
    from scapy.utils import PcapWriter, PcapNgWriter, rdpcap
    from scapy.contrib.roce import BTH, AETH
except ImportError as e:  # the shell script turns this into a skip
    print(f"scapy not usable: {e}", file=sys.stderr)
    sys.exit(77)

ROCE_PORT = 4791
# RC opcodes ferry speaks, and the extended headers each carries
# (IBTA vol. 1 ch. 9; the same table as lib/xport/roce/wire.c).
RETH, IMM = 1, 2
OPS = {0x00: 0, 0x01: 0, 0x02: 0, 0x03: IMM, 0x04: 0, 0x05: IMM,
       0x06: RETH, 0x07: 0, 0x08: 0, 0x09: IMM, 0x0a: RETH,
       0x0b: RETH | IMM}
ACK = 0x11


def roce(op, n, i, **kw):
    """One RoCEv2 frame, ICRC left for scapy to compute."""
    ip_kw = {k: kw[k] for k in ("ttl", "tos", "options") if k in kw}
    ext = b""
    if OPS.get(op, 0) & RETH:
        ext += struct.pack("!QII", 0x1000_0000_0000 + i * 4096, 0x1234 + i,
                           n)
    if OPS.get(op, 0) & IMM:
        ext += struct.pack("!I", 0xC0FFEE00 + i)
    pad = -n % 4
    payload = bytes((i + k) & 0xFF for k in range(n))
    bth = BTH(opcode=op, padcount=pad, dqpn=0x000100 + i, psn=(0xFFFFF0 + i)
              & 0xFFFFFF, ackreq=i & 1, solicited=(i >> 1) & 1,
              fecn=kw.get("fecn", 0), becn=kw.get("becn", 0))
    udp = UDP(sport=0xC000 | (i & 0x3FFF), dport=ROCE_PORT,
              chksum=kw.get("udp_chksum", 0))
    eth = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
    ip = IP(src="198.18.0.1", dst="198.18.0.2", flags="DF", **ip_kw)
    if op == ACK:
        return eth / ip / udp / bth / AETH(syndrome=0x1F, msn=i)
    return eth / ip / udp / bth / Raw(ext + payload + b"\0" * pad)


def frames():
    out, i = [], 0
    for op in list(OPS) + [ACK]:
        for n in ([0] if op == ACK else [0, 1, 2, 3, 4, 7, 256, 1021, 4096]):
            out.append(roce(op, n, i))
            i += 1
    # fields the ICRC masks, set to what a network may change them to
    out.append(roce(0x0A, 100, i, ttl=3, tos=0x63)); i += 1
    out.append(roce(0x06, 64, i, fecn=1, becn=1)); i += 1
    out.append(roce(0x04, 33, i, udp_chksum=None)); i += 1   # scapy sums it
    # IPv4 options: scapy covers the whole header, and so does ferry
    out.append(roce(0x04, 20, i, options=[IPOption(b"\x01\x01\x01\x00")]))
    return out


def others():
    return [Ether() / IP(src="10.0.0.1", dst="10.0.0.2") / UDP(dport=53) /
            DNS(qd=DNSQR(qname="example.org")),
            Ether(dst="ff:ff:ff:ff:ff:ff") / ARP(pdst="10.0.0.2")]


def gen(d):
    good = frames()
    for p in good:
        p.time = 1700000000.25
    allf = good + others()
    w = PcapWriter(f"{d}/scapy.pcap", linktype=1)
    w.write(allf)
    w.close()
    w = PcapWriter(f"{d}/scapy_be_ns.pcap", linktype=1, endianness=">",
                   nano=True)
    w.write(allf)
    w.close()
    w = PcapNgWriter(f"{d}/scapy.pcapng")
    w.write(allf)
    w.close()
    bad = roce(0x0A, 40, 1)
    raw = bytearray(bytes(bad))
    raw[-1] ^= 0x01
    w = PcapWriter(f"{d}/scapy_bad.pcap", linktype=1)
    w.write([roce(0x04, 8, 2), Ether(bytes(raw))])
    w.close()
    n = len(good)
    with open(f"{d}/expect", "w") as f:
        f.write(f"{n + len(others())} frames, {n} RoCEv2, {n} decoded, "
                f"0 undecodable, {n} ICRC ok, 0 ICRC bad, 0 ICRC unchecked\n")
    print(f"wrote {n} RoCEv2 frames and {len(others())} others to {d}")


def own_icrc_ip(ip):
    """The ICRC per IBA annex A17 as Linux rxe (rxe_icrc.c) computes it,
    written independently of scapy and of ferry, over the IP packet ip
    (bytes, ICRC included): zlib crc32 over 8 bytes of 0xff, the IP
    header (IPv4: TOS, TTL, checksum all ones; IPv6: traffic class, flow
    label, hop limit all ones), the UDP header (checksum all ones), the
    BTH (byte 4 all ones), the rest but the ICRC; least significant byte
    first. scapy computes no IPv6 ICRC."""
    m = bytearray(ip[:-4])
    if m[0] >> 4 == 4:
        ihl = (m[0] & 15) * 4
        m[1] = m[8] = m[10] = m[11] = 0xFF
    else:
        ihl = 40
        m[0] |= 0x0F
        m[1] = m[2] = m[3] = m[7] = 0xFF
    m[ihl + 6] = m[ihl + 7] = 0xFF
    m[ihl + 8 + 4] = 0xFF
    return struct.pack("<I", zlib.crc32(b"\xff" * 8 + bytes(m)))


def own_icrc(frame):
    """own_icrc_ip() of an untagged Ethernet frame's IPv4 packet."""
    tot = struct.unpack("!H", frame[16:18])[0]
    return own_icrc_ip(frame[14:14 + tot])


def check(path):
    n = bad = 0
    for p in rdpcap(path):
        if UDP not in p or p[UDP].dport != ROCE_PORT or BTH not in p:
            continue
        raw = bytes(p)
        tot = struct.unpack("!H", raw[16:18])[0]
        stored = raw[14 + tot - 4:14 + tot]
        q = Ether(raw)
        q[BTH].icrc = None
        scapy_icrc = bytes(q)[14 + tot - 4:14 + tot]
        n += 1
        if stored != scapy_icrc or stored != own_icrc(raw):
            bad += 1
            print(f"frame {n} (opcode {p[BTH].opcode:#x}): ICRC "
                  f"{stored.hex()}, scapy {scapy_icrc.hex()}, "
                  f"own {own_icrc(raw).hex()}")
    print(f"scapy checked {n} RoCEv2 frames: {n - bad} agree, {bad} differ")
    return 0 if n and not bad else 1


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "gen":
        gen(sys.argv[2])
        sys.exit(0)
    if len(sys.argv) == 3 and sys.argv[1] == "check":
        sys.exit(check(sys.argv[2]))
    print(__doc__, file=sys.stderr)
    sys.exit(2)
