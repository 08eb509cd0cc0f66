#!/usr/bin/env python3
"""Helpers for the fault suite (tests/faults/*.sh).

    faults.py plan KIND SEED [timeout=SEC] NAME:CHUNKS...
        Where a trial of KIND (send, recv, both) with SEED kills: prints
        one line "WHEN DESCRIPTION". WHEN is t:SEC (SEC seconds after the
        killer starts: start-up, handshake, DPDK), j:NAME:K (once NAME's
        journal holds K verified chunks, then up to 20 ms more) or p:NAME
        (once NAME is published).
    faults.py kill WHEN CASEDIR LIMIT PID,... [PID,...]
        Wait for WHEN (below CASEDIR/src), then SIGKILL the PIDs of the
        first list at once. Exit 0 and print the state at the kill, or exit
        3 when a PID of either list ended first (the transfer finished, or
        failed, before the kill), or 4 when LIMIT seconds passed without the
        trigger (killed anyway).
    faults.py wait WHEN CASEDIR LIMIT PID,... [PID,... [FILL]]
        The same without killing: only waits for WHEN (and then, with
        FILL, writes that file until its file system is full).
    faults.py state SRC CASEDIR CHUNK OUT
        The destination after a fault: every file under a final name is
        its source byte for byte (else: corrupt), every journal's header
        names its source and every record names a chunk whose crc32c is
        the source's and the part file's (else: inconsistent). Writes the
        per-file state to OUT (JSON) for `rerun`; prints one line; exit 1
        on a violation.
    faults.py rerun SRC STATE REPORT
        The rerun's --json report against that state: every file ok; a
        file published before is skipped; a file with journaled chunks is
        resumed and sends exactly the chunks it did not have. Exit 1 if not.
    faults.py compare SRC DST
        DST holds exactly SRC: contents, modes, mtimes; no part files or
        journals, nothing extra.
    faults.py plant SRC CASEDIR REL CHUNK
        A complete journal for REL beside its published copy, no part file
        (an attempt killed between the rename and removing the journal).
    faults.py idle PID DIR SEC / listen PID PORT SEC / procs KEY KEEP NETNS...
        A receiver's session ended; a receiver listens; processes of ours
        left over (all read from /proc, no process started).
    faults.py wanstats JSON
        What ferry-wanem --json did, one line.
    faults.py serve
        The commands above from stdin, one a line (tab-separated), each
        answered by its output and a line "\x01RC N".
    faults.py summary RESULTS TITLE
        The table of a script's trials (RESULTS: one TSV line per trial:
        fault, seed, outcome, corrupt, partial, leaks, note).
"""
import ctypes
import hashlib
import json
import os
import random
import signal
import stat
import struct
import sys
import time
import zlib

JHDR, JREC = 36, 20
STAGE = ".ferry"  # the receiver's staging area, at the top of its root


def staged(case, rel, kind):
    """Where the receiver whose root holds the directory CASE stages the
    target CASE/REL ("part" or "jrnl"): ROOT/.ferry/ab/<hash>.KIND, the
    hash of the target's path below the root (lib/io/stage.h)."""
    root, c = os.path.split(os.path.normpath(case))
    h = hashlib.sha256(b"ferry-stage-1\0" +
                       os.path.join(c, rel).encode()).hexdigest()[:32]
    return os.path.join(root, STAGE, h[:2], f"{h}.{kind}")


# ---- crc32c: ISA-L (ferry's own dependency) when it loads, else a table --
def _crc32c_impl():
    for name in ("libisal.so.2", "libisal.so"):
        try:
            f = ctypes.CDLL(name).crc32_iscsi
        except (OSError, AttributeError):
            continue
        f.restype = ctypes.c_uint32
        f.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_uint32]
        return lambda b: f(b, len(b), 0xFFFFFFFF) ^ 0xFFFFFFFF
    tab = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        tab.append(c)

    def slow(b):
        r = 0xFFFFFFFF
        for x in b:
            r = (r >> 8) ^ tab[(r ^ x) & 0xFF]
        return r ^ 0xFFFFFFFF
    return slow


crc32c = _crc32c_impl()
assert crc32c(b"123456789") == 0xE3069283, "crc32c self-test"


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)


# ---- plan ----------------------------------------------------------------
def cmd_plan(argv):
    kind, seed = argv[0], argv[1]
    opts = dict(a.split("=", 1) for a in argv[2:] if "=" in a)
    files = [a for a in argv[2:] if "=" not in a]
    chunks = {f.split(":")[0]: int(f.split(":")[1]) for f in files}
    big = [n for n, c in chunks.items() if c > 1]
    r = random.Random(f"{kind}:{seed}")
    x = r.random()
    if kind == "link":
        n = big[0]
        k = r.randrange(1, chunks[n])
        # even seeds: shorter than --timeout 3; odd: longer
        # even seeds: shorter than the --timeout (0.2 - 1.5 s); odd: longer
        # (the timeout and 0.5 - 2 s)
        timeout = float(opts.get("timeout", "3"))
        down = r.uniform(0.2, 1.5) if int(seed) % 2 == 0 else \
            timeout + r.uniform(0.5, 2.0)
        side = r.choice("AB")
        print(f"j:{n}:{k} {down:.2f} {side} link down on {side}'s veth for "
              f"{down:.2f} s once {n} has {k} of {chunks[n]} chunks")
        return True
    if kind == "disk":
        n = big[0]
        k = r.randrange(1, min(3, chunks[n]))
        print(f"j:{n}:{k} disk filled once {n} has {k} of {chunks[n]} chunks")
        return True
    if x < 0.15:
        t = r.uniform(0.0, 0.35)
        print(f"t:{t:.3f} {t * 1000:.0f} ms after the start (start-up, handshake)")
    elif x < 0.75:
        n = r.choice(big + big[:1])  # the biggest file twice as often
        k = r.randrange(chunks[n])
        print(f"j:{n}:{k} mid-file: {n} with {k} of {chunks[n]} chunks journaled")
    elif x < 0.9:
        n = r.choice(sorted(chunks))
        print(f"p:{n} just after {n} is published")
    else:
        t = r.uniform(0.35, 1.2)
        print(f"t:{t:.3f} {t * 1000:.0f} ms after the start (anywhere)")
    return True


# ---- kill ----------------------------------------------------------------
def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False


def jrecs(path):
    try:
        return max(0, (os.stat(path).st_size - JHDR) // JREC)
    except FileNotFoundError:
        return -1


def listing(d):
    try:
        return sorted(n for n in os.listdir(d))
    except FileNotFoundError:
        return []


def cmd_wait(argv):
    return cmd_kill(argv, kill=False)


def cmd_kill(argv, kill=True):
    when, case, limit = argv[0], argv[1], float(argv[2])
    pids = [int(p) for p in argv[3].split(",") if p]
    watch = pids + [int(p) for p in (argv[4] if len(argv) > 4 else "").split(",") if p]
    fill = argv[5] if len(argv) > 5 else None
    d = os.path.join(case, "src")
    r = random.Random(when)
    t0 = time.monotonic()
    kind, _, arg = when.partition(":")
    extra = 0.0
    rc = 0
    while True:
        now = time.monotonic() - t0
        if kind == "t" and now >= float(arg):
            break
        if kind == "j":
            name, k = arg.rsplit(":", 1)
            if jrecs(staged(case, f"src/{name}", "jrnl")) >= int(k) or \
                    os.path.exists(os.path.join(d, name)):
                extra = r.uniform(0, 0.02)
                break
        if kind == "p" and os.path.exists(os.path.join(d, arg)):
            break
        if not all(alive(p) for p in watch):
            print(f"{'not killed' if kill else 'not reached'}: a process "
                  f"ended first ({now:.2f} s); "
                  f"destination: {' '.join(listing(d)) or '-'}")
            return 3
        if now > limit:
            rc = 4
            break
        time.sleep(0.001)
    if extra:
        time.sleep(extra)
    if fill:
        filled = fill_up(fill)
    for p in pids if kill else []:
        try:
            os.kill(p, signal.SIGKILL)
        except ProcessLookupError:
            pass
    now = time.monotonic() - t0
    js = {n: jrecs(staged(case, f"src/{n}", "jrnl"))
          for n in "abcdef" if jrecs(staged(case, f"src/{n}", "jrnl")) >= 0}
    pub = listing(d)
    if fill:
        print(f"filled the file system with {filled >> 10} KiB ({fill})")
    print(f"{'killed' if kill else 'reached'} at {now:.2f} s"
          f"{' (trigger never came)' if rc else ''}; "
          f"journals {js or '-'}; published {pub or '-'}")
    return rc


def fill_up(path):
    """Write zeros to path until the file system is full; bytes written."""
    n = 0
    z = bytes(1 << 20)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        for size in (1 << 20, 4096, 1):
            while True:
                try:
                    w = os.write(fd, z[:size])
                except OSError:
                    break
                if w <= 0:
                    break
                n += w
    finally:
        os.close(fd)
    return n


# ---- state ---------------------------------------------------------------
def walk_files(src):
    out = {}
    for d, _, files in os.walk(src):
        for n in files:
            p = os.path.join(d, n)
            out[os.path.relpath(p, src)] = p
    return out


def same_bytes(a, b):
    with open(a, "rb") as fa, open(b, "rb") as fb:
        while True:
            x, y = fa.read(1 << 20), fb.read(1 << 20)
            if x != y:
                return False
            if not x:
                return True


def cmd_state(argv):
    src, case, chunk, out = argv[0], argv[1], int(argv[2]), argv[3]
    dst = os.path.join(case, os.path.basename(os.path.normpath(src)))
    ok = True
    st = {}
    srcs = walk_files(src)
    for rel, sp in sorted(srcs.items()):
        final = os.path.join(dst, rel)
        srel = os.path.join(os.path.basename(dst), rel)
        part, jnl = staged(case, srel, "part"), staged(case, srel, "jrnl")
        size = os.path.getsize(sp)
        s = {"size": size, "published": False, "journal": 0, "have": 0}
        if os.path.exists(final):
            if not same_bytes(sp, final):
                fail(f"{rel}: under its final name with other contents "
                     f"({os.path.getsize(final)} bytes, the source {size})")
                ok = False
                s["corrupt"] = True
            s["published"] = True
        if os.path.exists(jnl):
            s["journal"], s["have"], good = check_journal(
                rel, sp, part, jnl, chunk, s["published"])
            ok = ok and good
            if not good:
                s["inconsistent"] = True
        st[rel] = s
    extra = [os.path.relpath(os.path.join(d, n), dst)
             for d, _, fs in os.walk(dst) for n in fs
             if os.path.relpath(os.path.join(d, n), dst) not in srcs]
    if extra:
        fail(f"files that are not in the source: {extra}")
        ok = False
    with open(out, "w") as f:
        json.dump(st, f)
    if all(v["published"] for v in st.values()):
        phase = "after-all-published"
    elif any(v["published"] or v["have"] for v in st.values()):
        phase = "mid-transfer"
    else:
        phase = "before-data"
    print(phase + " state: " + ", ".join(
        f"{k} {'published' if v['published'] else ''}"
        f"{'journal %d/%d' % (v['journal'], -(-v['size'] // chunk)) if v['journal'] else ''}"
        .strip() or f"{k} -" for k, v in st.items()))
    return ok


def check_journal(rel, sp, part, jnl, chunk, published):
    """(records, bytes the journal covers, consistent?) A journal beside a
    published file and no part file is stale (the attempt ended between
    the rename and removing the journal): the rerun must drop it."""
    data = open(jnl, "rb").read()
    size = os.path.getsize(sp)
    if len(data) < JHDR:
        return 0, 0, True  # torn header: ferry writes a fresh one
    magic, ver, jsize, jmtime, jchunk, hcrc = struct.unpack("<4sIQqQI",
                                                             data[:JHDR])
    if magic != b"FJNL" or hcrc != crc32c(data[:32]):
        fail(f"{rel}: journal header damaged")
        return 0, 0, False
    if jsize != size or jchunk != chunk or \
            jmtime != os.stat(sp).st_mtime_ns:
        fail(f"{rel}: journal header names another source "
             f"({jsize} bytes, chunk {jchunk})")
        return 0, 0, False
    have, ok = {}, True
    with open(sp, "rb") as fs:
        pf = open(part, "rb") if os.path.exists(part) else None
        for off in range(JHDR, len(data) - JREC + 1, JREC):
            rec = data[off:off + JREC]
            idx, c, a, rcrc = struct.unpack("<QIII", rec)
            if rcrc != crc32c(rec[:16]):
                break  # torn: ferry drops it and what follows
            n = -(-size // chunk)
            if idx >= n:
                fail(f"{rel}: journal record for chunk {idx} of {n}")
                ok = False
                break
            fs.seek(idx * chunk)
            want = fs.read(chunk)
            if c != crc32c(want):
                fail(f"{rel}: journal says chunk {idx} has crc32c {c:08x}, "
                     f"the source's is {crc32c(want):08x}")
                ok = False
            if pf is None:
                if not published:
                    fail(f"{rel}: a journal with records and no part file")
                    ok = False
                break
            pf.seek(idx * chunk)
            if pf.read(len(want)) != want:
                fail(f"{rel}: chunk {idx} is journaled, but the part file "
                     f"does not hold it (written after its record?)")
                ok = False
            have[idx] = len(want)
        if pf:
            pf.close()
    return len(have), sum(have.values()), ok


def cmd_plant(argv):
    """plant SRC CASEDIR REL CHUNK: a complete, valid journal for REL
    beside its published copy, and no part file: what an attempt killed
    between the rename and removing the journal leaves."""
    src, case, rel, chunk = argv[0], argv[1], argv[2], int(argv[3])
    sp = os.path.join(src, rel)
    jnl = staged(case, os.path.join(os.path.basename(
        os.path.normpath(src)), rel), "jrnl")
    area = os.path.dirname(os.path.dirname(jnl))
    os.makedirs(area, mode=0o700, exist_ok=True)
    os.makedirs(os.path.dirname(jnl), mode=0o700, exist_ok=True)
    st = os.stat(sp)
    hdr = struct.pack("<4sIQqQ", b"FJNL", 1, st.st_size, st.st_mtime_ns, chunk)
    out = hdr + struct.pack("<I", crc32c(hdr))
    with open(sp, "rb") as f:
        for k in range(-(-st.st_size // chunk)):
            b = f.read(chunk)
            rec = struct.pack("<QII", k, crc32c(b), zlib.adler32(b))
            out += rec + struct.pack("<I", crc32c(rec))
    with open(jnl, "wb") as f:
        f.write(out)
    print(f"planted the journal of {rel} ({len(out)} bytes), no part file")
    return True


# ---- rerun ---------------------------------------------------------------
def cmd_rerun(argv):
    src, state, report = argv
    name = os.path.basename(os.path.normpath(src))
    st = json.load(open(state))
    try:
        r = json.load(open(report))
        got = {e["path"]: e for e in r["files"]}
    except Exception as e:
        fail(f"the rerun's report {report}: {e!r}")
        return False
    ok = True
    print(f"rerun: {sum(1 for e in got.values() if e.get('resumed'))} resumed, "
          f"{sum(1 for e in got.values() if e.get('skipped'))} skipped, "
          f"{sum(e.get('sent', 0) for e in got.values())} bytes sent")
    for rel, s in st.items():
        e = got.get(os.path.join(name, rel))
        if e is None:
            fail(f"{rel}: not in the rerun's report")
            ok = False
            continue
        if e["ok"] is not True:
            fail(f"{rel}: not ok in the rerun: {e}")
            ok = False
        if s["published"]:
            if not e["skipped"]:
                fail(f"{rel}: published before the rerun, sent again: {e}")
                ok = False
            continue
        if s["have"] and not s.get("inconsistent") and \
                not s.get("stale"):
            want = s["size"] - s["have"]
            if not e["resumed"] or e["sent"] != want:
                fail(f"{rel}: {s['journal']} chunks journaled, the rerun "
                     f"should resume and send {want} bytes: {e}")
                ok = False
        elif e["sent"] != s["size"] or e["skipped"]:
            fail(f"{rel}: nothing to resume, yet sent {e['sent']} of "
                 f"{s['size']} bytes: {e}")
            ok = False
    return ok


# ---- compare -------------------------------------------------------------
def cmd_compare(argv):
    src, dst = argv
    ok = True
    seen = set()
    for d, dirs, files in os.walk(src):
        for n in dirs + files:
            sp = os.path.join(d, n)
            rel = os.path.relpath(sp, src)
            seen.add(rel)
            dp = os.path.join(dst, rel)
            try:
                s, t = os.lstat(sp), os.lstat(dp)
            except FileNotFoundError:
                fail(f"{rel}: missing at the destination")
                ok = False
                continue
            if stat.S_IMODE(s.st_mode) != stat.S_IMODE(t.st_mode):
                fail(f"{rel}: mode {t.st_mode:o}, the source {s.st_mode:o}")
                ok = False
            if stat.S_ISREG(s.st_mode):
                if s.st_mtime_ns != t.st_mtime_ns:
                    fail(f"{rel}: mtime differs from the source")
                    ok = False
                if not same_bytes(sp, dp):
                    fail(f"{rel}: contents differ from the source")
                    ok = False
    for d, dirs, files in os.walk(dst):
        for n in dirs + files:
            rel = os.path.relpath(os.path.join(d, n), dst)
            if rel not in seen:
                fail(f"{rel}: at the destination, not in the source")
                ok = False
    case = os.path.dirname(os.path.normpath(dst))
    for rel in seen:
        srel = os.path.join(os.path.basename(os.path.normpath(dst)), rel)
        for kind in ("part", "jrnl"):
            if os.path.exists(staged(case, srel, kind)):
                fail(f"{rel}: its {kind} file is still staged")
                ok = False
    return ok


# ---- summary -------------------------------------------------------------
def cmd_summary(argv):
    results, title = argv
    rows = [ln.rstrip("\n").split("\t") for ln in open(results)
            if ln.strip()] if os.path.exists(results) else []
    by = {}
    for fault, seed, outcome, corrupt, partial, leaks, note in rows:
        b = by.setdefault(fault, {"n": 0, "out": {}, "c": 0, "p": 0, "l": 0,
                                  "bad": []})
        b["n"] += 1
        b["out"][outcome] = b["out"].get(outcome, 0) + 1
        b["c"] += int(corrupt)
        b["p"] += int(partial)
        b["l"] += int(leaks)
        if outcome.startswith("FAIL"):
            b["bad"].append(f"{seed}: {note}")
    print(f"==== summary: {title}")
    print(f"{'fault':<22} {'trials':>6} {'corrupt':>7} {'partial':>7} "
          f"{'leaks':>5}  outcomes")
    tot = {"n": 0, "c": 0, "p": 0, "l": 0, "f": 0}
    for fault, b in by.items():
        outs = ", ".join(f"{v} {k}" for k, v in sorted(
            b["out"].items(), key=lambda kv: -kv[1]))
        print(f"{fault:<22} {b['n']:>6} {b['c']:>7} {b['p']:>7} "
              f"{b['l']:>5}  {outs}")
        for x in b["bad"]:
            print(f"{'':<22}   {x}")
        tot["n"] += b["n"]
        tot["c"] += b["c"]
        tot["p"] += b["p"]
        tot["l"] += b["l"]
        tot["f"] += len(b["bad"])
    print(f"{'total':<22} {tot['n']:>6} {tot['c']:>7} {tot['p']:>7} "
          f"{tot['l']:>5}  {tot['f']} failed trial(s)")
    return True


def cmd_wanstats(argv):
    """What ferry-wanem did (its --json "end" line), one line."""
    end = None
    try:
        for ln in open(argv[0]):
            try:
                r = json.loads(ln)
            except ValueError:
                continue
            if r.get("type") == "end":
                end = r
    except FileNotFoundError:
        pass
    if not end:
        print("ferry-wanem: no statistics")
        return True
    parts = []
    for d in ("ab", "ba"):
        x = end.get(d, {})
        dr = x.get("dropped", {})
        parts.append(f"{d}: {x.get('rx', 0)} frames, {dr.get('loss', 0)} lost, "
                     f"{x.get('duplicated', 0)} duplicated, "
                     f"{x.get('reordered', 0)} reordered, "
                     f"{x.get('corrupted', 0)} corrupted")
    print("ferry-wanem: " + "; ".join(parts))
    return True


# ---- processes and sockets, read from /proc (no process started) -----
TCP_STATES = {"01": "ESTAB", "03": "SYN-RECV", "08": "CLOSE-WAIT",
              "0A": "LISTEN"}


def socks(pid):
    """(state, local port) of pid's TCP sockets, from its namespace's
    /proc/PID/net/tcp{,6} matched to its descriptors by inode."""
    try:
        inodes = set()
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if link.startswith("socket:["):
                inodes.add(link[8:-1])
        out = []
        for tab in ("tcp", "tcp6"):
            with open(f"/proc/{pid}/net/{tab}") as f:
                next(f)
                for ln in f:
                    w = ln.split()
                    if w[9] in inodes:
                        out.append((TCP_STATES.get(w[3], w[3]),
                                    int(w[1].rsplit(":", 1)[1], 16)))
        return out
    except (FileNotFoundError, ProcessLookupError):
        return None


def cmd_idle(argv):
    """idle PID DIR SEC: until PID holds no descriptor below DIR and no
    connection it has not closed (its session ended); 1 after SEC."""
    pid, d, limit = argv[0], argv[1].rstrip("/") + "/", float(argv[2])
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit:
        s = socks(pid)
        if s is None:
            return True
        busy = [x for x in s if x[0] in ("ESTAB", "SYN-RECV", "CLOSE-WAIT")]
        files = []
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                try:
                    if os.readlink(f"/proc/{pid}/fd/{fd}").startswith(d):
                        files.append(fd)
                except OSError:
                    pass
        except FileNotFoundError:
            return True
        if not busy and not files:
            return True
        time.sleep(0.01)
    print(f"process {pid} still holds {len(busy)} connection(s) and "
          f"{len(files)} file(s) below {d} after {limit:.0f} s")
    return False


def cmd_listen(argv):
    """listen PID PORT SEC: until PID listens on PORT; 1 if it dies or
    SEC pass."""
    pid, port, limit = argv[0], int(argv[1]), float(argv[2])
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit:
        s = socks(pid)
        if s is None:
            print(f"process {pid} ended before it listened on {port}")
            return False
        if ("LISTEN", port) in s:
            return True
        time.sleep(0.01)
    print(f"nothing listened on port {port} within {limit:.0f} s")
    return False


def cmd_procs(argv):
    """procs KEY KEEP,... [NETNS...]: processes of ours left: those whose
    command line names KEY, but the KEEP pids, and any process in the
    named network namespaces. Prints them; 1 if any."""
    key, keep, nets = argv[0].encode(), set(argv[1].split(",")), argv[2:]
    nsino = set()
    for n in nets:
        try:
            nsino.add(os.stat(f"/run/netns/{n}").st_ino)
        except FileNotFoundError:
            pass
    me = str(os.getpid())
    left = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or pid in keep or pid == me:
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read()
            ours = key in cmd
            if not ours and nsino:
                ours = os.stat(f"/proc/{pid}/ns/net").st_ino in nsino
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue
        if ours and alive(pid):
            text = cmd.replace(b"\0", b" ")[:80].decode(errors="replace")
            left.append(f"{pid}:{text}")
    if left:
        print("left running: " + "; ".join(left))
    return not left


def cmd_serve(argv):
    """Commands from stdin, one a line, arguments separated by tabs; each
    answered with its output (stdout and stderr together) and a last line
    "\x01RC N". One process for a whole script: the shell pays Python's
    start-up once, not in each trial's critical path."""
    global fail
    out = sys.stdout

    def fail_out(msg):
        print("FAIL: " + msg, file=out)
    fail = fail_out
    for line in sys.stdin:
        args = line.rstrip("\n").split("\t")
        try:
            r = cmds[args[0]](args[1:])
            rc = r if isinstance(r, int) and not isinstance(r, bool) \
                else (0 if r else 1)
        except Exception as e:  # a bug here, not a fault found
            print(f"faults.py {args[0]}: {e!r}", file=out)
            rc = 2
        print(f"\x01RC {rc}", file=out, flush=True)
    return 0


cmds = {"plan": cmd_plan, "serve": cmd_serve, "kill": cmd_kill, "wait": cmd_wait, "state": cmd_state,
        "rerun": cmd_rerun, "wanstats": cmd_wanstats, "plant": cmd_plant,
        "idle": cmd_idle, "listen": cmd_listen, "procs": cmd_procs, "compare": cmd_compare, "summary": cmd_summary}
if __name__ == "__main__":
    r = cmds[sys.argv[1]](sys.argv[2:])
    sys.exit(r if isinstance(r, int) and not isinstance(r, bool)
             else (0 if r else 1))
