#!/usr/bin/env python3
"""Write the seed corpora for fuzz_ctrl (corpus/ctrl: one valid frame per
message type and a few near misses) and fuzz_req (corpus/req: the data of
daemon requests and replies, lib/ctrl/req.h). Encoders written apart from
lib/ctrl/codec.c and req.c, so the replay tests also check that they agree
on the wire format.

Run from anywhere: python3 tests/fuzz/gen_corpus.py
"""
import os
import struct

MAGIC = 0x59525246  # b"FRRY" little-endian
HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "corpus", "ctrl")
OUT_REQ = os.path.join(HERE, "corpus", "req")


def frame(mtype, body, version=1, length=None):
    n = len(body) if length is None else length
    return struct.pack("<IIHH", MAGIC, n, version, mtype) + body


def hello(nonce, flags, name=b""):
    # nonce, flags, then the key name: u8 length and its bytes
    return nonce + struct.pack("<IB", flags, len(name)) + name


def req(op, flags, arg, path, data=b""):
    # op, flags, arg, path (u16 length, bytes), data (u32 length, bytes)
    return (struct.pack("<IIQH", op, flags, arg, len(path)) + path +
            struct.pack("<I", len(data)) + data)


def reply(op, flags, arg, data=b""):
    return struct.pack("<IIQI", op, flags, arg, len(data)) + data


def marker(moved, total, rate, elapsed_ms, files_done, files_total):
    return struct.pack("<QQQQII", moved, total, rate, elapsed_ms, files_done,
                       files_total)


def rocev2(role, n, rkey=0, ring=0):
    # the RoCEv2 family's endpoint description (lib/xport/rocev2.h)
    b = b"RCv2" + struct.pack("<BBHHH", 1, role, n, 4096, 0)
    b += bytes([0x52, 0x54, 0, 0xfe, 0, role]) + b"\0\0"
    b += bytes([198, 19, 1, role]) + struct.pack("<IIQQ", rkey, 1024, 0, ring)
    for i in range(n):
        b += struct.pack("<II", 0x11 + i, (0xfffffe + i) & 0xffffff)
    return b


def params():
    # mode, transports, streams, slots, depth, chunk_size, cksum,
    # total_bytes, xfer_id
    return struct.pack("<IIIIIQIQQ", 2, 1 | 4, 4, 64, 16, 1 << 20, 1, 10 << 30,
                       0x0123456789ABCDEF)


def s16(b):
    return struct.pack("<H", len(b)) + b


PUSH_ITEMS = [(b"data/a.bin", b"a.bin"), (b"/data/sub/b.txt", b"sub/b.txt")]


def push_spec(items=PUSH_ITEMS, n=None, token=b"token:" + b"a5" * 16):
    # the PUSH request's data (lib/ctrl/req.h): host, port, transport,
    # token, wrapped secret, dest, cksum, streams, flags, marker_ms, n,
    # then n times (src, name)
    out = (s16(b"dest.example.org") + s16(b"7471") + s16(b"tcp") +
           s16(token) + bytes(range(32)) + s16(b"in") +
           struct.pack("<IIIII", 2, 4, 1, 1000,
                       len(items) if n is None else n))
    for src, name in items:
        out += s16(src) + s16(name)
    return out


def rstat(typ, mode, size, mtime_ns):
    return struct.pack("<BIQq", typ, mode, size, mtime_ns)


def result(name, status=0, adler=1, crc=2, size=0, sent=0, skipped=0,
           why=b""):
    return (s16(name) + struct.pack("<iIIQQB", status, adler, crc, size,
                                    sent, skipped) + s16(why))


def req_seeds():
    # byte 0 picks fuzz_req's decoder: 0 STAT, 1 TOKEN, 2 PUSH, 3 results
    token = b"token:" + b"0123456789abcdef" * 2
    results = (result(b"a.bin", size=4096, sent=4096) +
               result(b"sub/b.txt", status=13, why=b"permission denied") +
               result(b"c", skipped=1, adler=0xFFFFFFFF, crc=0))
    return {
        "stat_file": b"\0" + rstat(1, 0o644, 12345, 1700000000123456789),
        "stat_other": b"\0" + rstat(3, 0, 0, -1),
        "stat_bad_type": b"\0" + rstat(4, 0o644, 1, 1),
        "stat_bad_mode": b"\0" + rstat(1, 0o10000, 1, 1),
        "token": b"\1" + s16(token) + bytes(range(200, 232)),
        "token_bad_name": b"\1" + s16(b"token x") + bytes(32),
        "token_short": b"\1" + s16(token) + bytes(31),
        "push": b"\2" + push_spec(),
        "push_no_items": b"\2" + push_spec(items=[]),
        "push_dotdot": b"\2" + push_spec(items=[(b"../etc/passwd", b"p")]),
        "push_abs_name": b"\2" + push_spec(items=[(b"a", b"/etc/passwd")]),
        "push_too_many": b"\2" + push_spec(items=[], n=1025),
        "push_bad_token": b"\2" + push_spec(token=b"token;x"),
        "results": b"\3" + results,
        "results_skipped2": b"\3" + result(b"x", skipped=2),
        "results_escape": b"\3" + result(b"x", why=b"\x1b[2J"),
        "results_odd_name": b"\3" + result(b"a\nb\x1b\xe9", why=b"a\\nb"),
    }


def write(out, seeds):
    os.makedirs(out, exist_ok=True)
    for name, data in seeds.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


def main():
    nonce = bytes(range(32))
    mac = bytes(range(100, 132))
    ep = b"tcp 198.18.0.2:7471 qpn=0x1234"
    text = "no space left on /data".encode()
    seeds = {
        "hello": frame(1, hello(nonce, 0)),
        "hello_noauth": frame(1, hello(nonce, 1)),
        "hello_named": frame(1, hello(nonce, 0, b"token:" + b"0f" * 16)),
        "challenge": frame(2, nonce + mac + struct.pack("<I", 0)),
        "auth": frame(3, mac),
        "propose": frame(4, params()),
        "accept": frame(5, params() + struct.pack("<H", len(ep)) + ep),
        "error": frame(6, struct.pack("<iH", 28, len(text)) + text),
        "ready": frame(7, b"\x00\x00"),
        # a verbs end and a uroce end: the RoCEv2 family's description
        "accept_rocev2": frame(5, params() + struct.pack("<H", 48 + 16) +
                               rocev2(1, 2, 0x1234abcd, 64 << 20)),
        "ready_rocev2": frame(7, struct.pack("<H", 48 + 24) + rocev2(2, 3)),
        "fin": frame(8, struct.pack("<QQ", 10 << 30, 10240)),
        "result": frame(9, struct.pack("<QQQQQi", 10 << 30, 10240, 0,
                                       812345, 23456, 0)),
        # daemon requests: STAT, a PUSH with its spec, replies, a marker
        "req_stat": frame(15, req(1, 0, 0, b"data/run 7/out.bin")),
        "req_mkdir": frame(15, req(4, 1, 0o755, b"a/b/c")),
        "req_push": frame(15, req(8, 0, 0, b"", push_spec())),
        "reply_stat": frame(16, reply(1, 1, 0, struct.pack(
            "<BIQq", 1, 0o644, 12345, 1700000000123456789))),
        "reply_cksum": frame(16, reply(3, 1, 0xDEADBEEF)),
        "marker": frame(17, marker(5 << 30, 10 << 30, 1 << 30, 5000, 3, 7)),
        # PATH: fixed, rtt_us, rate, ring limit, tcp and core buffer
        # limits, flags (1: CAP_NET_ADMIN), sockbuf
        "path": frame(20, struct.pack("<IIQQQQIQ", 0, 300000, 10 ** 10,
                                      4 << 30, 6 << 20, 212992, 1, 0)),
        "path_bad_flags": frame(20, struct.pack("<IIQQQQIQ", 4, 0, 0, 0, 0,
                                                0, 2, 0)),
        # TCLASS: the session's DSCP (46, EF); 64 does not fit six bits
        "tclass": frame(21, b"\x2e"),
        "tclass_bad_dscp": frame(21, b"\x40"),
        # Near misses the fuzzer can mutate from.
        "two_frames": frame(7, b"\x00\x00") + frame(3, mac),
        "version2": frame(1, hello(nonce, 0), version=2),
        "hello_old_layout": frame(1, nonce + struct.pack("<I", 0)),
        "hello_bad_name": frame(1, hello(nonce, 0, b"no/slashes")),
        "hello_long_name": frame(1, hello(nonce, 0, b"n" * 65)),
        # a path holds any byte but NUL, as a file name does
        "req_path_escape": frame(15, req(1, 0, 0, b"a\x1b[2Jb")),
        "req_path_nul": frame(15, req(1, 0, 0, b"a\0b")),
        "req_data_too_long": frame(15, req(2, 0, 0, b"d")[:-4] +
                                   struct.pack("<I", 32769) + b"\0" * 32769),
        "reply_len_past_body": frame(16, reply(2, 1, 0, b"abc")[:-3]),
        "too_big": frame(1, b"", length=65537),
        "truncated": frame(2, nonce + mac + struct.pack("<I", 0))[:40],
    }
    write(OUT, seeds)
    write(OUT_REQ, req_seeds())


if __name__ == "__main__":
    main()
