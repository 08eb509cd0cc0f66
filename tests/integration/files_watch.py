#!/usr/bin/env python3
"""Watch a receiver's destination while transfers run (and fail).

    files_watch.py SRC WATCH STOPFILE REPORT

Every few milliseconds, list WATCH recursively. A file under a final name
(anything but the staging area WATCH/.ferry) at WATCH/A/B/.../NAME stands
for the source SRC/B/.../NAME (A: one directory per test case, the next
component the name the sender's argument arrives under; it is dropped and
SRC's own name is not used, so SRC/x maps from WATCH/case/src/x). Each one
must have its source's size, and each new (inode, size, mtime, ctime) seen
under a final name is hashed and must hash like its source (the source's
hash is cached by its inode, size and mtime, so a source replaced
between attempts is hashed again). A part file ferry renamed too early, or one that
was still being written through its old descriptor, fails here.

When STOPFILE exists: one last scan, then REPORT gets a JSON object
{"scans": N, "hashed": M, "violations": [...]} and the watcher exits.
A watcher that is never told to stop gives up after 300 s.
"""
import hashlib
import json
import os
import stat
import sys
import time

STAGE = ".ferry"  # the receiver's staging area, at the top of its root


def sha(fd):
    h = hashlib.sha256()
    while True:
        b = os.read(fd, 1 << 20)
        if not b:
            return h.hexdigest()
        h.update(b)


def main():
    src, watch, stopfile, report = sys.argv[1:5]
    src_cache = {}   # path -> ((size, mtime_ns), sha)
    checked = set()  # (dev, ino, size, mtime_ns, ctime_ns) found good or bad
    violations = []
    scans = hashed = 0
    deadline = time.monotonic() + 300

    def violation(msg):
        if msg not in violations:
            violations.append(msg)

    def src_sha(path):
        # keyed by what was read (fstat), so a source replaced by rename
        # while we look is hashed whole, old or new
        fd = os.open(path, os.O_RDONLY)
        try:
            st = os.fstat(fd)
            key = (st.st_ino, st.st_size, st.st_mtime_ns)
            c = src_cache.get(path)
            if c and c[0] == key:
                return st, c[1]
            h = sha(fd)
        finally:
            os.close(fd)
        src_cache[path] = (key, h)
        return st, h

    def check(path, rel):
        nonlocal hashed
        parts = rel.split(os.sep)
        if len(parts) < 3:
            return  # not below WATCH/case/argname/
        spath = os.path.join(src, *parts[2:])
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            return  # renamed or removed meanwhile
        if not stat.S_ISREG(st.st_mode):
            return
        try:
            sst, shash = src_sha(spath)
        except FileNotFoundError:
            violation(f"{rel}: under a final name, with no source {spath}")
            return
        if st.st_size != sst.st_size:
            violation(f"{rel}: {st.st_size} bytes under its final name, "
                      f"the source has {sst.st_size}")
            return
        key = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns,
               st.st_ctime_ns)
        if key in checked:
            return
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        except FileNotFoundError:
            return
        try:
            h = sha(fd)
            fst = os.fstat(fd)
        finally:
            os.close(fd)
        fkey = (fst.st_dev, fst.st_ino, fst.st_size, fst.st_mtime_ns,
                fst.st_ctime_ns)
        hashed += 1
        checked.add(fkey)
        if fkey != key:
            return  # replaced while we read; the next scan sees the new one
        if h != shash:
            violation(f"{rel}: contents under its final name differ from "
                      f"the source (inode {st.st_ino}, {st.st_size} bytes)")

    def scan():
        nonlocal scans
        scans += 1
        for d, dirs, files in os.walk(watch):
            if d == watch and STAGE in dirs:
                dirs.remove(STAGE)
            for n in files:
                p = os.path.join(d, n)
                check(p, os.path.relpath(p, watch))

    while not os.path.exists(stopfile) and time.monotonic() < deadline:
        scan()
        time.sleep(0.003)
    scan()
    with open(report + ".tmp", "w") as f:
        json.dump({"scans": scans, "hashed": hashed,
                   "violations": violations}, f, indent=1)
    os.rename(report + ".tmp", report)


if __name__ == "__main__":
    main()
