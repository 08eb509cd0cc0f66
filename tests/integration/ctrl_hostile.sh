#!/usr/bin/env bash
# Hostile peers on the control port (issue 8, part 5; docs/security.md).
# A real `ferry recv` on loopback, and raw TCP peers scripted in python3:
# a silent peer, truncated handshakes, a peer that stretches the handshake,
# a wrong key, a replayed handshake (recorded from a real `ferry bench`
# through a relay), another protocol version, an oversized message. Each
# must be refused with its own log line within the handshake bound, while
# good `ferry bench` sessions are served at the same time and afterwards.
# Also: a listener without a key must be on loopback, checked on the
# address the socket got (root: a hosts entry that maps a "127." name to
# 0.0.0.0). Takes about 20 s.
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || skip "python3 not found"
"$FERRY" keygen "$T/key" >/dev/null || fail "keygen"
"$FERRY" keygen "$T/wrong" >/dev/null || fail "keygen"

# R1: --timeout 3, so the handshake bound is 3 s.
port=$(free_port)
"$FERRY" recv --key "$T/key" -p "$port" -B 127.0.0.1 --timeout 3 -i 0 \
	>"$T/recv.out" 2>"$T/recv.err" &
rpid=$!
PIDS+=($rpid)
# R2: --timeout 60; the handshake is still capped at 10 s.
port2=$(free_port)
"$FERRY" recv --key "$T/key" -p "$port2" -B 127.0.0.1 --timeout 60 -i 0 \
	>"$T/recv2.out" 2>"$T/recv2.err" &
PIDS+=($!)
wait_listen "$port"
wait_listen "$port2"

cat >"$T/hostile.py" <<'PY'
import hashlib, hmac, os, socket, struct, subprocess, sys, threading, time

FERRY, KEYF, WRONGF, PORT, PORT2, LOG, LOG2, BENCH_OUT = sys.argv[1:9]
PORT, PORT2 = int(PORT), int(PORT2)
KEY = bytes.fromhex(open(KEYF).read().strip())
WRONG = bytes.fromhex(open(WRONGF).read().strip())
MAGIC = 0x59525246
HELLO, CHALLENGE, AUTH, ERROR = 1, 2, 3, 6
EAUTH, EVERSION, ETOOBIG = 4001, 4002, 4004
BOUND = 3.0      # R1's --timeout: its handshake bound
SLACK = 2.0      # scheduling on a busy 2-vCPU host
failed = []


def frame(mtype, body, version=1, length=None):
    n = len(body) if length is None else length
    return struct.pack("<IIHH", MAGIC, n, version, mtype) + body


def hello(nonce=None):
    """nonce, flags 0, and no key name (u8 length 0)."""
    return frame(HELLO, (nonce or os.urandom(32)) + struct.pack("<IB", 0, 0))


def mac(key, label, n1, n2):
    return hmac.new(key, label + n1 + n2, hashlib.sha256).digest()


def connect(port=PORT):
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    return s, s.getsockname()[1]


def read_exact(s, n):
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            return None
        b += c
    return b


def read_frame(s):
    """(type, body), or None when the server hung up."""
    h = read_exact(s, 12)
    if h is None:
        return None
    magic, n, ver, t = struct.unpack("<IIHH", h)
    assert magic == MAGIC, f"bad magic from the server: {h!r}"
    body = read_exact(s, n)
    return None if body is None else (t, body)


def error_code(f):
    if f is None or f[0] != ERROR:
        return None
    return struct.unpack("<i", f[1][:4])[0]


def until_eof(s, t0):
    """Seconds from t0 until the server closes (reading what it sends)."""
    while True:
        try:
            if not s.recv(4096):
                return time.monotonic() - t0
        except ConnectionResetError:
            return time.monotonic() - t0


def log_line(sport, pattern, log=LOG, wait=15.0):
    """The receiver's line for the session from our port, if it has one
    matching pattern."""
    tag = f"from 127.0.0.1:{sport}] session failed: "
    end = time.monotonic() + wait
    while time.monotonic() < end:
        for ln in open(log, errors="replace"):
            if tag in ln:
                return ln.strip() if pattern in ln else "MISMATCH: " + ln.strip()
        time.sleep(0.05)
    return None


def check(name, ok, detail=""):
    print(("ok   " if ok else "FAIL ") + name + (": " + detail if detail else ""))
    sys.stdout.flush()
    if not ok:
        failed.append(name)


def expect_log(name, sport, pattern, log=LOG):
    ln = log_line(sport, pattern, log)
    check(name + " (log)", ln is not None and not ln.startswith("MISMATCH"),
          ln or "no log line")


def last(err):
    """The last line of a command's stderr (its error, if it failed)."""
    lines = err.strip().splitlines()
    return lines[-1] if lines else ""


def bench(port, nbytes, out=None, key=KEYF, extra=()):
    cmd = [FERRY, "bench", "--key", key, "-l", "1M", "--slots", "8",
           "-P", "2", "-n", nbytes, "-i", "0", *extra, f"127.0.0.1:{port}"]
    return subprocess.run(cmd, stdout=open(out, "w") if out else
                          subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True, timeout=60)


# --- R2 (--timeout 60): a peer that sent half a HELLO is dropped at the
# --- 10 s cap; one that sent nothing at the first-byte deadline (3 s) ---
r2 = {}
def stalled_r2():
    s, sp = connect(PORT2)
    s.sendall(hello()[:20])
    r2["sport"], r2["t"] = sp, until_eof(s, time.monotonic())
    s.close()
def silent_r2():
    s, sp = connect(PORT2)
    r2["silent_sport"], r2["silent_t"] = sp, until_eof(s, time.monotonic())
    s.close()
t_r2 = threading.Thread(target=stalled_r2)
t_r2.start()
t_r2s = threading.Thread(target=silent_r2)
t_r2s.start()

# --- a silent peer, and one that sent half a HELLO, hang; good benches
# --- are served meanwhile (R2's stalled peer hangs for 10 s: its bench
# --- must be done before that) ---
t0 = time.monotonic()
silent, sp_silent = connect()
half, sp_half = connect()
half.sendall(hello()[:20])
# each drop timed as it happens, not after the benches (slow on a loaded
# host, they would add their own time to it)
drops = {}
def watch(name, sock):
    drops[name] = until_eof(sock, t0)
w_silent = threading.Thread(target=watch, args=("silent", silent))
w_half = threading.Thread(target=watch, args=("half", half))
w_silent.start()
w_half.start()
r = bench(PORT2, "64M")
check("bench served while a silent peer hangs (R2)",
      r.returncode == 0 and t_r2.is_alive(),
      f"exit {r.returncode} after {time.monotonic() - t0:.1f} s "
      f"{last(r.stderr) if r.returncode else ''}")
r = bench(PORT, "16M")
check("bench served while two peers hang in the handshake (R1)",
      r.returncode == 0, f"exit {r.returncode} after "
      f"{time.monotonic() - t0:.1f} s {last(r.stderr) if r.returncode else ''}")
w_silent.join()
dt = drops["silent"]
check(f"silent peer dropped within {BOUND:.0f} s", BOUND - 0.5 <= dt <= BOUND + SLACK,
      f"{dt:.2f} s")
expect_log("silent peer", sp_silent,
           "waiting for the client's HELLO: the peer did not answer in time (3.0 s)")
w_half.join()
dt = drops["half"]
check("truncated HELLO, then silence: dropped in time",
      BOUND - 0.5 <= dt <= BOUND + SLACK, f"{dt:.2f} s")
expect_log("truncated HELLO, then silence", sp_half, "did not answer in time")
silent.close(); half.close()

# --- truncated handshake: half a HELLO, then hang up ---
s, sp = connect()
s.sendall(hello()[:20])
s.close()
expect_log("truncated HELLO, then close", sp,
           "waiting for the client's HELLO: the peer closed the connection")

# --- the handshake stretched: each message alone is in time, together
# --- they are not (one deadline for HELLO..AUTH) ---
s, sp = connect()
t0 = time.monotonic()
time.sleep(BOUND * 0.6)
nc = os.urandom(32)
s.sendall(hello(nc))
ch = read_frame(s)
if ch is not None and ch[0] == CHALLENGE:
    time.sleep(BOUND * 0.6)
    try:
        s.sendall(frame(AUTH, mac(KEY, b"ferry-v1 client", ch[1][:32], nc)))
    except OSError:
        pass
dt = until_eof(s, t0)
check("stretched handshake cut at the bound", dt <= BOUND + SLACK, f"{dt:.2f} s")
expect_log("stretched handshake", sp,
           "waiting for the client's AUTH: the peer did not answer in time")
s.close()

# --- wrong key: the client's MAC is made with another key ---
s, sp = connect()
t0 = time.monotonic()
nc = os.urandom(32)
s.sendall(hello(nc))
ch = read_frame(s)
s.sendall(frame(AUTH, mac(WRONG, b"ferry-v1 client", ch[1][:32], nc)))
f = read_frame(s)
dt = until_eof(s, t0)
check("wrong key: ERROR(EAUTH), hung up at once",
      error_code(f) == EAUTH and dt < 1.5, f"code {error_code(f)}, {dt:.2f} s")
expect_log("wrong key", sp, "authentication failed: the client's key differs from ours")
s.close()
r = bench(PORT, "8M", key=WRONGF)
check("ferry bench with a wrong key fails", r.returncode != 0 and
      "authentication failed" in r.stderr, last(r.stderr))

# --- replay: record a real client's handshake through a relay ---
rec = {"c2s": b"", "s2c": b""}
relay = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
relay.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
relay.bind(("127.0.0.1", 0))
relay.listen(1)
rport = relay.getsockname()[1]

def pump(a, b, k):
    try:
        while True:
            d = a.recv(65536)
            if not d:
                break
            rec[k] += d
            b.sendall(d)
    except OSError:
        pass
    for x in (a, b):
        try:
            x.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

def relay_main():
    c, _ = relay.accept()
    u = socket.create_connection(("127.0.0.1", PORT))
    t = threading.Thread(target=pump, args=(u, c, "s2c"))
    t.start()
    pump(c, u, "c2s")
    t.join()
t_relay = threading.Thread(target=relay_main)
t_relay.start()
r = bench(rport, "16M")
t_relay.join(10)
check("recording a good session through a relay", r.returncode == 0,
      last(r.stderr) if r.returncode else "")
c2s = rec["c2s"]
hlen = 12 + struct.unpack("<I", c2s[4:8])[0]  # HELLO's length varies with its name
rec_hello, rec_auth = c2s[:hlen], c2s[hlen:hlen + 12 + 32]
rec_nonce_s = rec["s2c"][12:44]
ok = (struct.unpack("<IIHH", rec_hello[:12])[3] == HELLO and
      struct.unpack("<IIHH", rec_auth[:12])[3] == AUTH)
check("recorded HELLO and AUTH", ok)
s, sp = connect()
t0 = time.monotonic()
s.sendall(rec_hello)
ch = read_frame(s)
check("replay: the server's nonce is fresh", ch is not None and
      ch[0] == CHALLENGE and ch[1][:32] != rec_nonce_s)
s.sendall(rec_auth)
f = read_frame(s)
dt = until_eof(s, t0)
check("replayed handshake: ERROR(EAUTH), hung up at once",
      error_code(f) == EAUTH and dt < 1.5, f"code {error_code(f)}, {dt:.2f} s")
expect_log("replayed handshake", sp, "(or it replayed an old handshake)")
s.close()
# the whole recorded client stream at once: refused the same way
s, sp = connect()
s.sendall(c2s[:hlen + 44])
f1, f2 = read_frame(s), read_frame(s)
check("replayed stream refused", f1 is not None and f1[0] == CHALLENGE and
      error_code(f2) == EAUTH, f"{f1 and f1[0]} {error_code(f2)}")
expect_log("replayed stream", sp, "authentication failed")
s.close()

# --- another protocol version ---
s, sp = connect()
t0 = time.monotonic()
s.sendall(frame(HELLO, os.urandom(32) + struct.pack("<IB", 0, 0), version=2))
f = read_frame(s)
dt = until_eof(s, t0)
check("version 2 HELLO: ERROR(EVERSION), hung up at once",
      error_code(f) == EVERSION and dt < 1.5, f"code {error_code(f)}, {dt:.2f} s")
expect_log("version mismatch", sp, "the client speaks protocol version 2, we speak 1")
s.close()

# --- oversized: a header declaring 64 KiB + 1, and one declaring 1 GiB;
# --- refused before any body byte is read ---
for n in (65537, 1 << 30):
    s, sp = connect()
    t0 = time.monotonic()
    s.sendall(frame(HELLO, b"", length=n))
    f = read_frame(s)
    dt = until_eof(s, t0)
    check(f"declared body of {n} bytes: ERROR(ETOOBIG), hung up at once",
          error_code(f) == ETOOBIG and dt < 1.5,
          f"code {error_code(f)}, {dt:.2f} s")
    expect_log(f"oversized ({n})", sp,
               "waiting for the client's HELLO: message larger than the protocol allows")
    s.close()
# an oversized AUTH after a proper HELLO
s, sp = connect()
s.sendall(hello())
read_frame(s)
s.sendall(frame(AUTH, b"", length=70000))
f = read_frame(s)
check("oversized AUTH: ERROR(ETOOBIG)", error_code(f) == ETOOBIG,
      f"code {error_code(f)}")
expect_log("oversized AUTH", sp, "waiting for the client's AUTH: message larger")
s.close()

# --- and afterwards a good session still works ---
r = bench(PORT, "256M", out=BENCH_OUT, extra=("--json",))
check("a good session afterwards", r.returncode == 0,
      last(r.stderr) if r.returncode else "")

t_r2.join(20)
t_r2s.join(20)
dt = r2.get("t", 99)
check("R2 (--timeout 60): half a HELLO, then silence: dropped at the 10 s cap",
      9.5 <= dt <= 10 + SLACK, f"{dt:.2f} s")
expect_log("R2 stalled peer", r2.get("sport", 0),
           "the peer did not answer in time (10.0 s)", log=LOG2)
dt = r2.get("silent_t", 99)
check("R2 (--timeout 60): silent peer dropped at the first-byte deadline",
      2.5 <= dt <= 3 + SLACK, f"{dt:.2f} s")
expect_log("R2 silent peer", r2.get("silent_sport", 0),
           "waiting for the client's HELLO: the peer did not answer in time (3.0 s)",
           log=LOG2)
sys.exit(1 if failed else 0)
PY

note "hostile peers against ferry recv on 127.0.0.1:$port (handshake bound 3 s)"
start=$(date +%s)
python3 "$T/hostile.py" "$FERRY" "$T/key" "$T/wrong" "$port" "$port2" \
	"$T/recv.err" "$T/recv2.err" "$T/ok.json" ||
	{ echo "receiver log:"; cat "$T/recv.err"; fail "hostile peers"; }
kill -0 $rpid 2>/dev/null || fail "the receiver died"
check_json "$T/ok.json" $((256 << 20))

note "a listener without a key must be on loopback"
out=$(env -u FERRY_KEY "$FERRY" recv -p "$(free_port)" 2>&1)
[ $? -eq 2 ] && grep -q "no key" <<<"$out" || fail "recv without a key: $out"
echo "ok   no key, no --no-auth: refused ($out)"
# a name that looks like loopback but resolves to every address
if [ "$(id -u)" -eq 0 ] && command -v unshare >/dev/null &&
	unshare -m true 2>/dev/null; then
	printf '0.0.0.0 127.ferry-test.invalid\n' >"$T/hosts"
	out=$(unshare -m sh -c "mount --bind '$T/hosts' /etc/hosts &&
		timeout 5 '$FERRY' recv --no-auth -B 127.ferry-test.invalid -p $(free_port)" 2>&1)
	rc=$?
	[ $rc -eq 1 ] && grep -q "refusing to listen on 0.0.0.0" <<<"$out" ||
		fail "--no-auth on a name for 0.0.0.0: exit $rc: $out"
	echo "ok   --no-auth -B <name for 0.0.0.0>: refused ($out)"
else
	echo "(skipped the hosts-file case: needs root and unshare -m)"
fi
out=$(timeout 1 "$FERRY" recv --no-auth -B 127.0.0.1 -p "$(free_port)" 2>&1)
[ $? -eq 124 ] || fail "--no-auth on 127.0.0.1 did not listen: $out"
echo "ok   --no-auth -B 127.0.0.1 listens"

note "silent peers cannot fill --max-sessions; a full receiver says busy"
port3=$(free_port)
"$FERRY" recv --key "$T/key" -p "$port3" -B 127.0.0.1 --max-sessions 1 \
	--timeout 5 -i 0 -q >"$T/recv3.out" 2>"$T/recv3.err" &
PIDS+=($!)
wait_listen "$port3"
# three peers that connect and say nothing; meanwhile a bench. Served at
# once, it ends before the receiver drops them (at the 5 s first-byte
# deadline): had they held the only slot, it could not start before.
python3 - "$FERRY" "$T/key" "$port3" "$T/slot.json" >"$T/silent3.out" 2>&1 <<'PY' ||
import socket, subprocess, sys, time
ferry, key, port, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
s = [socket.create_connection(("127.0.0.1", port)) for _ in range(3)]
time.sleep(0.3)
r = subprocess.run([ferry, "bench", "--key", key, "-n", "4M", "--json",
                    f"127.0.0.1:{port}"], stdout=open(out, "w"),
                   stderr=subprocess.PIPE, text=True, timeout=20)
done = time.monotonic()
if r.returncode:
    sys.exit(f"the bench failed: {r.stderr.strip()}")
dropped = []
for c in s:
    c.settimeout(10)
    try:
        c.recv(1)
    except OSError:
        pass
    dropped.append(time.monotonic())
print(f"bench done {min(dropped) - done:.2f} s before the first silent peer was dropped")
if done >= min(dropped):
    sys.exit("the bench ended only after the silent peers were dropped")
PY
	{ cat "$T/silent3.out" "$T/recv3.err"; fail "a bench behind 3 silent peers (--max-sessions 1)"; }
cat "$T/silent3.out"
check_json "$T/slot.json" $((4 << 20))
echo "ok   bench served at once behind 3 silent peers with --max-sessions 1"
# one long session holds the only slot: the next authenticated sender
# waits --timeout (5 s) and is told the receiver is busy
"$FERRY" bench --key "$T/key" -t 9 -i 0 -q 127.0.0.1:"$port3" >"$T/long.out" 2>&1 &
lpid=$!
PIDS+=($lpid)
# until it holds the slot: past its control connection, it has data
# streams up (they connect once the receiver accepted the session)
for _ in $(seq 400); do
	[ "$(ss -Htnp state established | grep -c "pid=$lpid,")" -ge 2 ] && break
	kill -0 $lpid 2>/dev/null || break
	sleep 0.05
done
if timeout 20 "$FERRY" bench --key "$T/key" -n 8M 127.0.0.1:"$port3" >"$T/busy.out" 2>&1; then
	fail "a second session ran beside the only slot's"
fi
grep -q "receiver busy" "$T/busy.out" || { cat "$T/busy.out"; fail "the refusal does not say busy"; }
echo "ok   second sender: $(grep -o 'receiver busy[^;]*' "$T/busy.out" | head -1)"
wait $lpid || { cat "$T/long.out"; fail "the session holding the slot failed"; }

echo "receiver log:"; cat "$T/recv.err"
echo "PASS in $(( $(date +%s) - start )) s"
