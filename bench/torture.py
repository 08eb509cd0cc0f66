#!/usr/bin/env python3
"""Concurrency and crash torture for file sessions (driven by torture.sh).

Each trial, from its seed: 2 or 3 senders with different contents send
trees whose paths overlap (every sender has some of f0, f1, f2, sub/f3,
and a file of its own) to the same destination on one receiver, started
a few milliseconds apart; a seeded fault may kill -9 one sender, the
receiver (restarted at once), or both, at a random point. Then:

  phase 1  the attempts above, with a watcher hashing whatever stands
           under a final name every few milliseconds;
  phase 2  every sender that did not exit 0 runs again, unharmed;
  phase 3  every sender once more with --force, one after the other.

Invariants (each violation is printed with the trial's seed):
  - every version of a file a reader ever saw under its final name is
    exactly one sender's whole content for that path (never a mix, never
    a part);
  - after phases 1 and 2, every file under a final name is one sender's
    content, and that sender reported it (published, or skipped as
    identical) in some attempt;
  - a sender that exited 0 in phase 1 has every file of its own under its
    final name with its content at that point (nothing may replace it
    without --force);
  - phase 3 exits 0 for every sender, and after each one its files are
    its content;
  - nothing outside the receiver's root changes (a canary file, also hard
    linked into the destination under an old staging name);
  - after phase 3 nothing of the trial is staged (no part file, no
    journal), and the receiver is still running unless a fault killed it.

    torture.py TRIALS SECONDS SEED_BASE    (environment: see torture.sh)
A run stops after TRIALS trials or SECONDS seconds, whichever is first
(0: no limit). Exit 0 when no invariant was violated.
"""
import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time

ENV = os.environ
FERRY = ENV["FERRY"]
KEY = ENV["TORTURE_KEY"]
ROOT = ENV["TORTURE_ROOT"]           # the receiver's --dir
WORK = ENV["TORTURE_WORK"]           # sources, logs, canary
NSA, NSB = ENV["NSA"], ENV["NSB"]
IPB = ENV["IPB"]
TR = ENV.get("TORTURE_TRANSPORT", "tcp")
DPDK_A = ENV.get("DPDK_A", "")
DPDK_B = ENV.get("DPDK_B", "")
TIMEOUT = ENV.get("TORTURE_TIMEOUT", "3")
CHUNK = 256 << 10
NAMES = ["f0", "f1", "f2", "sub/f3"]
PLANT = ".f0.ferry-part"  # a user's name; here a hard link to the canary

violations = []


def violation(seed, msg):
    line = f"VIOLATION [{seed}] {msg}"
    print(line, flush=True)
    violations.append(line)


def sha(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while True:
            b = f.read(1 << 20)
            if not b:
                return h.hexdigest()
            h.update(b)


def staged(rel, kind):
    h = hashlib.sha256(b"ferry-stage-1\0" + rel.encode()).hexdigest()[:32]
    return os.path.join(ROOT, ".ferry", h[:2], f"{h}.{kind}")


# ---- the receiver ------------------------------------------------------
class Receiver:
    def __init__(self, port):
        self.port = port
        self.proc = None
        self.log = open(os.path.join(WORK, f"recv-{TR}.log"), "ab")

    def start(self):
        cmd = ["ip", "netns", "exec", NSB, "env", f"FERRY_DPDK={DPDK_B}",
               FERRY, "recv", "--key", KEY, "--transport", TR, "-B", IPB,
               "-p", str(self.port), "-d", ROOT, "-i", "0", "-q",
               "--timeout", TIMEOUT, "--max-sessions", "8"]
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=self.log)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            out = subprocess.run(["ip", "netns", "exec", NSB, "ss", "-Hltn",
                                  f"sport = :{self.port}"],
                                 capture_output=True, text=True).stdout
            if out.strip():
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        raise SystemExit(f"the receiver did not start (see {self.log.name})")

    def kill(self):
        if self.proc and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait()

    def alive(self):
        return self.proc is not None and self.proc.poll() is None


# ---- senders -----------------------------------------------------------
class Sender:
    def __init__(self, trial, i, rng):
        self.i = i
        self.src = os.path.join(WORK, f"t{trial}", f"s{i}", "src")
        self.files = {}  # relative path -> sha256
        self.mtimes = {}  # relative path -> mtime_ns
        names = [n for n in NAMES if rng.random() < 0.75] or [NAMES[0]]
        names.append(f"u{i}")
        for n in names:
            p = os.path.join(self.src, n)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            size = rng.choice([0, 1, 4096, CHUNK - 1, CHUNK * 3 + 17,
                               CHUNK * 8, CHUNK * 12 + 5])
            with open(p, "wb") as f:
                f.write(rng.randbytes(size))
            os.utime(p, ns=(1600000000 * 10**9 + rng.randrange(10**15),) * 2)
            self.files[n] = sha(p)
            self.mtimes[n] = os.stat(p).st_mtime_ns
        self.reported = set()  # paths it reported published or identical

    def start(self, dest, tag, force=False):
        self.out = os.path.join(WORK, f"{os.path.basename(dest)}.s{self.i}.{tag}")
        cmd = ["ip", "netns", "exec", NSA, "env", f"FERRY_DPDK={DPDK_A}",
               FERRY, "send", "--key", KEY, "--transport", TR, "-i", "0", "-q",
               "-l", str(CHUNK), "-P", "2", "--files", "2", "--timeout",
               TIMEOUT, "--json"] + (["--force"] if force else []) + \
              [self.src, f"{IPB}:{PORT}:/{dest}"]
        self.proc = subprocess.Popen(cmd, stdout=open(self.out + ".json", "wb"),
                                     stderr=open(self.out + ".err", "wb"))
        return self

    def wait(self, limit=90):
        try:
            rc = self.proc.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
            rc = "hung"
        self.failed = {}  # path -> error, this attempt
        try:
            rep = json.load(open(self.out + ".json"))
            for f in rep.get("files", []):
                rel = f["path"].split("/", 1)[1]
                if f.get("ok"):
                    self.reported.add(rel)
                else:
                    self.failed[rel] = f.get("error", "?")
        except (ValueError, OSError, IndexError):
            pass
        return rc

    def lost_fairly(self):
        """Failed only because other senders hold or published targets."""
        return self.failed and all(
            "exists" in e.lower() or "busy" in e.lower()
            for e in self.failed.values())

    def err(self):
        try:
            return open(self.out + ".err", errors="replace").read().strip()
        except OSError:
            return ""


# ---- the watcher -------------------------------------------------------
class Watcher(threading.Thread):
    def __init__(self, seed, top, allowed):
        super().__init__(daemon=True)
        self.seed, self.top, self.allowed = seed, top, allowed
        self.stop = threading.Event()
        self.seen = {}  # (ino, size, mtime, ctime) already hashed
        self.looks = 0

    def run(self):
        while not self.stop.is_set():
            self.scan()
            time.sleep(0.003)
        self.scan()

    def scan(self):
        self.looks += 1
        for d, _, files in os.walk(self.top):
            for n in files:
                p = os.path.join(d, n)
                rel = os.path.relpath(p, os.path.join(self.top, "src"))
                try:
                    st = os.lstat(p)
                    key = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
                    if key in self.seen:
                        continue
                    h = sha(p)
                    if os.lstat(p).st_ctime_ns != st.st_ctime_ns:
                        continue  # changed while read: look again
                except FileNotFoundError:
                    continue
                self.seen[key] = h
                if h not in self.allowed.get(rel, ()):
                    violation(self.seed, f"a reader saw {rel} with contents no "
                              f"sender has ({st.st_size} bytes)")


# ---- one trial -------------------------------------------------------------
def owner(senders, rel, h, mtime=None):
    """The sender whose file this is: same contents (and, when given, the
    same mtime: several senders may have an empty file of one name)."""
    for s in senders:
        if s.files.get(rel) == h and mtime in (None, s.mtimes.get(rel)):
            return s
    return None


def check_finals(seed, top, senders, when):
    for d, _, files in os.walk(top):
        for n in files:
            p = os.path.join(d, n)
            rel = os.path.relpath(p, os.path.join(top, "src"))
            if rel == PLANT:
                continue
            s = owner(senders, rel, sha(p))
            if not s:
                violation(seed, f"{when}: {rel} under its final name is no "
                          "sender's whole file")


def trial(rx, seed, n):
    rng = random.Random(seed)
    dest = f"t{n}"
    top = os.path.join(ROOT, dest)
    senders = [Sender(n, i, rng) for i in range(rng.choice([2, 2, 3]))]
    allowed = {}
    for s in senders:
        for rel, h in s.files.items():
            allowed.setdefault(rel, set()).add(h)
    # an old-style staging name hard-linked to a file outside the root
    os.makedirs(os.path.join(top, "src"), exist_ok=True)
    os.link(CANARY, os.path.join(top, "src", PLANT))
    allowed[PLANT] = {CANARY_SHA}
    fault = rng.choice(["none", "send", "send", "recv", "both"])
    at = rng.uniform(0.0, 0.6)
    desc = f"{len(senders)} senders, fault {fault}" + \
        (f" at {at:.2f} s" if fault != "none" else "")
    print(f"[{seed}] trial {n}: {desc}", flush=True)

    w = Watcher(seed, top, allowed)
    w.start()
    t0 = time.monotonic()
    for s in senders:
        s.start(dest, "1")
        time.sleep(rng.uniform(0, 0.03))
    victim = rng.choice(senders)
    if fault != "none":
        while time.monotonic() - t0 < at and victim.proc.poll() is None:
            time.sleep(0.002)
        if fault in ("send", "both") and victim.proc.poll() is None:
            os.kill(victim.proc.pid, signal.SIGKILL)
        if fault in ("recv", "both"):
            rx.kill()
            rx.start()
    rcs = {s.i: s.wait() for s in senders}
    w.stop.set()
    w.join()
    print(f"   phase 1: exits {rcs}", flush=True)
    for s in senders:
        if rcs[s.i] == "hung":
            violation(seed, f"sender {s.i} hung (killed after 90 s)")
    check_finals(seed, top, senders, "after phase 1")
    for s in senders:
        if rcs[s.i] != 0:
            continue
        for rel, h in s.files.items():
            p = os.path.join(top, "src", rel)
            if not os.path.exists(p) or sha(p) != h:
                violation(seed, f"sender {s.i} exited 0 but {rel} is not its file")

    # phase 2: the ones that did not finish, again
    for s in senders:
        if rcs[s.i] == 0:
            continue
        rc = s.start(dest, "2").wait()
        if rc != 0 and not s.lost_fairly():
            violation(seed, f"phase 2: sender {s.i} failed ({rc}): "
                      f"{s.failed or s.err()[-300:]}")
    check_finals(seed, top, senders, "after phase 2")
    for d, _, files in os.walk(os.path.join(top, "src")):
        for nm in files:
            p = os.path.join(d, nm)
            rel = os.path.relpath(p, os.path.join(top, "src"))
            s = None if rel == PLANT else \
                owner(senders, rel, sha(p), os.stat(p).st_mtime_ns)
            if s and rel not in s.reported:
                violation(seed, f"{rel} is sender {s.i}'s file, which it "
                          f"never reported published (its last attempt: "
                          f"{s.failed or 'no per-file results'}; "
                          f"{s.err()[-200:]})")

    # phase 3: each with --force, in turn
    for s in rng.sample(senders, len(senders)):
        rc = s.start(dest, "3", force=True).wait()
        if rc != 0:
            violation(seed, f"phase 3: sender {s.i} --force failed ({rc}): "
                      f"{s.err()[-300:]}")
            continue
        for rel, h in s.files.items():
            p = os.path.join(top, "src", rel)
            if not os.path.exists(p) or sha(p) != h:
                violation(seed, f"phase 3: after sender {s.i}, {rel} is not its file")
    for rel in set(allowed) - {PLANT}:
        for kind in ("part", "jrnl"):
            if os.path.exists(staged(f"{dest}/src/{rel}", kind)):
                violation(seed, f"{rel}: its {kind} file is still staged")
    if sha(CANARY) != CANARY_SHA or os.stat(CANARY).st_mode & 0o7777 != 0o640:
        violation(seed, "the file outside the root changed")
    if not rx.alive():
        violation(seed, "the receiver died")
        rx.start()
    return time.monotonic() - t0


def main():
    global PORT, CANARY, CANARY_SHA
    trials, seconds, base = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
    PORT = int(ENV.get("TORTURE_PORT", "7471"))
    CANARY = os.path.join(WORK, "canary")
    with open(CANARY, "wb") as f:
        f.write(b"outside the root: never to change\n")
    os.chmod(CANARY, 0o640)
    CANARY_SHA = sha(CANARY)
    rx = Receiver(PORT)
    rx.start()
    t0 = time.monotonic()
    n = 0
    while (not trials or n < trials) and (not seconds or time.monotonic() - t0 < seconds):
        trial(rx, base + n, n)
        n += 1
    rx.kill()
    # nothing staged at all once every trial ended clean: the area is gone
    left = [os.path.join(d, f) for d, _, fs in os.walk(os.path.join(ROOT, ".ferry"))
            for f in fs if not f.startswith("lock.")]
    if left:
        violation(base, f"staged files left after the run: {left[:5]}")
    print(f"{TR}: {n} trials in {time.monotonic() - t0:.0f} s, seeds {base}..{base + n - 1}, "
          f"{len(violations)} invariant violations", flush=True)
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
