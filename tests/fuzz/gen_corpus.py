#!/usr/bin/env python3
"""Write the seed corpus for fuzz_ctrl: one valid frame per message type
and a few near misses. An encoder written apart from lib/ctrl/codec.c, so
the replay test also checks that the two agree on the wire format.

Run from anywhere: python3 tests/fuzz/gen_corpus.py
"""
import os
import struct

MAGIC = 0x59525246  # b"FRRY" little-endian
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "ctrl")


def frame(mtype, body, version=1, length=None):
    n = len(body) if length is None else length
    return struct.pack("<IIHH", MAGIC, n, version, mtype) + body


def params():
    # mode, transports, streams, slots, depth, chunk_size, cksum,
    # total_bytes, xfer_id
    return struct.pack("<IIIIIQIQQ", 2, 1 | 4, 4, 64, 16, 1 << 20, 1, 10 << 30,
                       0x0123456789ABCDEF)


def main():
    nonce = bytes(range(32))
    mac = bytes(range(100, 132))
    ep = b"tcp 198.18.0.2:7471 qpn=0x1234"
    text = "no space left on /data".encode()
    seeds = {
        "hello": frame(1, nonce + struct.pack("<I", 0)),
        "hello_noauth": frame(1, nonce + struct.pack("<I", 1)),
        "challenge": frame(2, nonce + mac + struct.pack("<I", 0)),
        "auth": frame(3, mac),
        "propose": frame(4, params()),
        "accept": frame(5, params() + struct.pack("<H", len(ep)) + ep),
        "error": frame(6, struct.pack("<iH", 28, len(text)) + text),
        "ready": frame(7, b"\x00\x00"),
        "fin": frame(8, struct.pack("<QQ", 10 << 30, 10240)),
        "result": frame(9, struct.pack("<QQQQQi", 10 << 30, 10240, 0,
                                       812345, 23456, 0)),
        # Near misses the fuzzer can mutate from.
        "two_frames": frame(7, b"\x00\x00") + frame(3, mac),
        "version2": frame(1, nonce + struct.pack("<I", 0), version=2),
        "too_big": frame(1, b"", length=65537),
        "truncated": frame(2, nonce + mac + struct.pack("<I", 0))[:40],
    }
    os.makedirs(OUT, exist_ok=True)
    for name, data in seeds.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
