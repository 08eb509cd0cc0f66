# Helpers for the file-session tests (sourced by files_*.sh, after which
# lib.sh's helpers are there too).
#
# Adds to lib.sh: a key ($KEY), receivers on loopback (start_recv), a
# bounded ferry send (fsend), checks that record a failure and go on
# (bad, so one run names every broken check), tmpfs mounts and watcher
# processes that the EXIT trap takes down, and $FSUM: a Python helper
# with independent adler32 / crc32c (hole-aware, so a sparse 3 GiB file
# costs nothing), tree comparison and snapshots.
. "$(dirname "$0")/lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
note() { echo "== [${SECONDS}s] $*"; }
MOUNTS=()
KEY=$T/key
"$FERRY" keygen "$KEY" >/dev/null || fail "keygen"

files_cleanup() {
	local m
	cleanup_procs
	for m in "${MOUNTS[@]:-}"; do
		[ -n "$m" ] && umount -l "$m" 2>/dev/null
	done
	cleanup
}
trap files_cleanup EXIT

# start_recv NAME DIR|- [ARGS...]: a receiver on 127.0.0.1 with --dir DIR
# (none for -), in the background; sets RPORT and RPID. Logs: $T/NAME.out,
# $T/NAME.err.
start_recv() {
	local name=$1 dir=$2
	shift 2
	RPORT=$(free_port)
	if [ "$dir" = - ]; then
		"$FERRY" recv --key "$KEY" -p "$RPORT" -B 127.0.0.1 -i 0 -q "$@" \
			>"$T/$name.out" 2>"$T/$name.err" &
	else
		"$FERRY" recv --key "$KEY" -p "$RPORT" -B 127.0.0.1 -i 0 -q \
			-d "$dir" "$@" >"$T/$name.out" 2>"$T/$name.err" &
	fi
	RPID=$!
	PIDS+=($RPID)
	wait_listen "$RPORT"
}

# fsend ARGS...: ferry send with the key, no progress lines, bounded.
fsend() {
	timeout -k 5 120 "$FERRY" send --key "$KEY" -i 0 "$@"
}

# sidecars ROOT: part files and journals in the staging area of the
# receiver whose root is ROOT (none: empty output).
sidecars() {
	find "$1/.ferry" -type f ! -name 'lock.*' 2>/dev/null
}

# no_sidecars ROOT WHAT: bad if any part file or journal is left in the
# staging area of ROOT.
no_sidecars() {
	local left
	left=$(sidecars "$1")
	[ -z "$left" ] || bad "$2: part files or journals left behind: $(echo $left)"
}

# Independent checksums and tree checks (python3 $FSUM CMD ...).
FSUM=$T/fsum.py
cat >"$FSUM" <<'PY'
import errno, hashlib, json, os, re, stat, sys, zlib

# ---- crc32c (Castagnoli, reflected 0x82F63B78), table-driven ----------
POLY = 0x82F63B78
TAB = []
for n in range(256):
    c = n
    for _ in range(8):
        c = (c >> 1) ^ POLY if c & 1 else c >> 1
    TAB.append(c)

def crc_update(reg, data):          # reg: the register, not inverted
    t = TAB
    for b in data:
        reg = (reg >> 8) ^ t[(reg ^ b) & 0xFF]
    return reg

# Appending n zero bytes is a linear map on the register: build it from
# 32x32 GF(2) matrices by squaring (as zlib's crc32_combine does).
def _times(mat, vec):
    s, i = 0, 0
    while vec:
        if vec & 1:
            s ^= mat[i]
        vec >>= 1
        i += 1
    return s

def _square(mat):
    return [_times(mat, mat[n]) for n in range(32)]

_ZOPS = []  # _ZOPS[k]: 2**k zero bytes

def crc_zeros(reg, n):
    k = 0
    while n:
        while len(_ZOPS) <= k:
            if not _ZOPS:
                op = [POLY] + [1 << (i - 1) for i in range(1, 32)]  # 1 bit
                for _ in range(3):
                    op = _square(op)                             # 8 bits
                _ZOPS.append(op)
            else:
                _ZOPS.append(_square(_ZOPS[-1]))
        if n & 1:
            reg = _times(_ZOPS[k], reg)
        n >>= 1
        k += 1
    return reg

def adler_zeros(a, n):
    lo, hi = a & 0xFFFF, a >> 16
    return (((hi + n * lo) % 65521) << 16) | lo

def crc32c(data):
    return crc_update(0xFFFFFFFF, data) ^ 0xFFFFFFFF

assert crc32c(b"123456789") == 0xE3069283, "crc32c self-test"
assert crc_zeros(crc_update(0xFFFFFFFF, b"ab"), 1000) == \
    crc_update(0xFFFFFFFF, b"ab" + bytes(1000)), "crc32c zeros self-test"
assert adler_zeros(zlib.adler32(b"ab"), 77777) == \
    zlib.adler32(b"ab" + bytes(77777)), "adler32 zeros self-test"

def segments(fd, size):
    """(offset, length, is_data) covering [0, size), holes as holes."""
    off = 0
    while off < size:
        try:
            d = os.lseek(fd, off, os.SEEK_DATA)
        except OSError as e:
            if e.errno != errno.ENXIO:
                yield off, size - off, True
                return
            d = size
        d = min(d, size)
        if d > off:
            yield off, d - off, False
        if d >= size:
            return
        h = min(os.lseek(fd, d, os.SEEK_HOLE), size)
        yield d, h - d, True
        off = h

def sums(path, want_crc=True):
    """(adler32, crc32c or None) of a file."""
    a, reg = 1, 0xFFFFFFFF
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        for off, ln, data in segments(fd, size):
            if not data:
                a = adler_zeros(a, ln)
                if want_crc:
                    reg = crc_zeros(reg, ln)
                continue
            while ln:
                b = os.pread(fd, min(ln, 1 << 20), off)
                if not b:
                    raise IOError(f"{path} shrank")
                a = zlib.adler32(b, a)
                if want_crc:
                    reg = crc_update(reg, b)
                off += len(b)
                ln -= len(b)
    finally:
        os.close(fd)
    return a, (reg ^ 0xFFFFFFFF) if want_crc else None

def files_of(args):
    """{path as ferry names it: abs source path} for send arguments."""
    out = {}
    for arg in args:
        arg = arg.rstrip("/") or "/"
        name = os.path.basename(os.path.realpath(arg)) \
            if os.path.basename(arg) in ("", ".", "..") else os.path.basename(arg)
        if os.path.isfile(arg):
            out[name] = arg
            continue
        for d, dirs, files in os.walk(arg):
            for f in files:
                p = os.path.join(d, f)
                if os.path.islink(p):
                    continue
                out[os.path.join(name, os.path.relpath(p, arg))] = p
    return out

def err(msg):
    print("FAIL: " + msg, file=sys.stderr)

# the line `xrdcp -C adler32:print` writes: "KIND: HEX TARGET SIZE"
LINE = re.compile(r"^(adler32|crc32c): ([0-9a-f]{1,8}) (ferry://[^/]+/|/)(.+) ([0-9]+)$")

def cmd_lines(argv):
    """lines KIND OUT [--dest DIR/] ARG...: the sender's xrdcp-style
    'KIND: HEX ferry://HOST:PORT/DIR/PATH SIZE' lines name every file
    once, with our own sum and the size of its source."""
    kind, out, argv = argv[0], argv[1], argv[2:]
    dest = ""
    if argv and argv[0] == "--dest":
        dest, argv = argv[1], argv[2:]
    want = files_of(argv)
    got, ok = {}, True
    for ln in open(out, encoding="utf-8", errors="surrogateescape"):
        ln = ln.rstrip("\n")
        m = LINE.match(ln)
        if not m:
            continue
        path = m.group(4)
        if not path.startswith(dest):
            err(f"{ln}: not below {dest}"); ok = False
            continue
        path = path[len(dest):]
        if path in got:
            err(f"{path} reported twice"); ok = False
        got[path] = m
    if set(got) != set(want):
        err(f"reported files differ from the sources: missing "
            f"{sorted(set(want) - set(got))}, extra {sorted(set(got) - set(want))}")
        ok = False
    for p in sorted(set(got) & set(want)):
        m = got[p]
        a, c = sums(want[p], kind == "crc32c")
        mine = a if kind == "adler32" else c
        if m.group(1) != kind or m.group(2) != f"{mine:x}":
            err(f"{p}: ferry says {m.group(1)}: {m.group(2)}, "
                f"independently {kind}: {mine:x}"); ok = False
        if int(m.group(5)) != os.path.getsize(want[p]):
            err(f"{p}: ferry says {m.group(5)} bytes, the source has "
                f"{os.path.getsize(want[p])}"); ok = False
    n = len(got)
    print(f"ok: {n} {kind} lines match independent sums" if ok else
          f"checked {n} lines")
    return ok

def cmd_json(argv):
    """json KIND FILE [--skipped ...] ARG...: a valid report, one entry
    per file, ok, sizes, and crc32c/adler32/checksum fields that match our
    own sums."""
    kind, path, argv = argv[0], argv[1], argv[2:]
    skipped = None
    if argv and argv[0] == "--skipped":
        skipped, argv = argv[1], argv[2:]
    want = files_of(argv)
    try:
        r = json.load(open(path, encoding="utf-8"))
        entries = r["files"]
        tot = r["end"]["files"]
    except Exception as e:
        err(f"{path}: not a valid report: {e!r}")
        return False
    ok = True
    got = {}
    for e in entries:
        for k in ("path", "bytes", "sent", "checksum", "crc32c", "skipped",
                  "resumed", "ok"):
            if k not in e:
                err(f"entry without {k}: {e}"); ok = False
        if e.get("path") in got:
            err(f"{e.get('path')} listed twice"); ok = False
        got[e.get("path")] = e
    if set(got) != set(want):
        err(f"JSON files differ from the sources: missing "
            f"{sorted(set(want) - set(got))}, extra {sorted(set(got) - set(want))}")
        ok = False
    if tot.get("total") != len(want):
        err(f"end.files.total {tot.get('total')}, {len(want)} files sent"); ok = False
    for p in sorted(set(got) & set(want)):
        e = got[p]
        size = os.path.getsize(want[p])
        a, c = sums(want[p])
        mine = a if kind == "adler32" else c
        if e.get("ok") is not True:
            err(f"{p}: not ok: {e}"); ok = False
        if e.get("bytes") != size:
            err(f"{p}: bytes {e.get('bytes')}, the source has {size}"); ok = False
        if e.get("checksum") != f"{kind}:{mine:08x}":
            err(f"{p}: checksum {e.get('checksum')}, independently {kind}:{mine:08x}")
            ok = False
        if e.get("crc32c") != f"{c:08x}":
            err(f"{p}: crc32c {e.get('crc32c')}, independently {c:08x}"); ok = False
        # an adler32 field, where there is one, is the file's adler32
        if e.get("adler32") is not None and e.get("adler32") != f"{a:08x}":
            err(f"{p}: --cksum {kind} report says adler32 {e.get('adler32')}, "
                f"the file's adler32 is {a:08x}"); ok = False
        if skipped is not None:
            should = skipped == "all" or (skipped != "none" and
                                          p in skipped.split(","))
            if e.get("skipped") is not should:
                err(f"{p}: skipped is {e.get('skipped')}, wanted {should}"); ok = False
        if not e.get("skipped") and not e.get("resumed") and e.get("sent") != size:
            err(f"{p}: sent {e.get('sent')} of {size} bytes, not resumed"); ok = False
    print(f"ok: JSON report with {len(got)} valid file entries" if ok else
          f"checked {len(got)} JSON entries")
    return ok

ZEROS = bytes(4 << 20)

def same_content(a, b):
    """Byte for byte; the source's holes are not read, only checked to
    read as zeros at the destination."""
    fa, fb = os.open(a, os.O_RDONLY), os.open(b, os.O_RDONLY)
    try:
        size = os.fstat(fa).st_size
        if os.fstat(fb).st_size != size:
            return False
        for off, ln, data in segments(fa, size):
            end = off + ln
            while off < end:
                n = min(end - off, len(ZEROS))
                q = os.pread(fb, n, off)
                p = os.pread(fa, n, off) if data else ZEROS[:n]
                if p != q:
                    return False
                off += n
        return True
    finally:
        os.close(fa)
        os.close(fb)

def cmd_compare(argv):
    """compare SRC DST: DST holds exactly what SRC does: files byte for
    byte with their modes and mtimes (ns), directories with their modes,
    nothing else (no part files, no journals)."""
    src, dst = argv
    ok, nf, nd = True, 0, 0
    seen = set()
    if os.path.isfile(src):  # a single file
        if not os.path.isfile(dst):
            err(f"{dst}: missing at the destination")
            return False
        s, t = os.stat(src), os.stat(dst)
        if stat.S_IMODE(s.st_mode) != stat.S_IMODE(t.st_mode):
            err(f"{dst}: mode {stat.S_IMODE(t.st_mode):04o}, source {stat.S_IMODE(s.st_mode):04o}")
            ok = False
        if s.st_mtime_ns != t.st_mtime_ns:
            err(f"{dst}: mtime {t.st_mtime_ns} ns, source {s.st_mtime_ns} ns"); ok = False
        if not same_content(src, dst):
            err(f"{dst}: contents differ from the source"); ok = False
        if ok:
            print(f"ok: {dst} identical (contents, mode, mtime)")
        return ok
    if not os.path.isdir(dst):
        err(f"{dst}: no such directory")
        return False
    if stat.S_IMODE(os.stat(src).st_mode) != stat.S_IMODE(os.stat(dst).st_mode):
        err(f"{dst}: mode {stat.S_IMODE(os.stat(dst).st_mode):04o}, "
            f"source {stat.S_IMODE(os.stat(src).st_mode):04o}"); ok = False
    for d, dirs, files in os.walk(src):
        rel = os.path.relpath(d, src)
        for n in dirs + files:
            sp = os.path.join(d, n)
            dp = os.path.join(dst, rel, n)
            r = os.path.normpath(os.path.join(rel, n))
            seen.add(r)
            s = os.lstat(sp)
            if stat.S_ISLNK(s.st_mode):
                continue
            try:
                t = os.lstat(dp)
            except FileNotFoundError:
                err(f"{r}: missing at the destination"); ok = False
                continue
            if stat.S_IFMT(s.st_mode) != stat.S_IFMT(t.st_mode):
                err(f"{r}: type {stat.S_IFMT(t.st_mode):o}, source {stat.S_IFMT(s.st_mode):o}")
                ok = False
                continue
            if stat.S_IMODE(s.st_mode) != stat.S_IMODE(t.st_mode):
                err(f"{r}: mode {stat.S_IMODE(t.st_mode):04o}, source {stat.S_IMODE(s.st_mode):04o}")
                ok = False
            if stat.S_ISDIR(s.st_mode):
                nd += 1
                continue
            nf += 1
            if s.st_mtime_ns != t.st_mtime_ns:
                err(f"{r}: mtime {t.st_mtime_ns} ns, source {s.st_mtime_ns} ns"); ok = False
            if not same_content(sp, dp):
                err(f"{r}: contents differ from the source"); ok = False
    for d, dirs, files in os.walk(dst):
        rel = os.path.relpath(d, dst)
        for n in dirs + files:
            r = os.path.normpath(os.path.join(rel, n))
            if r not in seen:
                err(f"{r}: at the destination, not in the source"); ok = False
    if ok:
        print(f"ok: {nf} files and {nd} directories identical (contents, modes, mtimes)")
    return ok

def cmd_snap(argv):
    """snap DIR: one line per entry (type, mode, size, mtime, inode, and a
    hash of files up to 64 MiB), to compare before and after."""
    root = argv[0]
    lines = []
    for d, dirs, files in os.walk(root):
        for n in sorted(dirs + files) + ([] if d != root else ["."]):
            p = os.path.join(d, n)
            s = os.lstat(p)
            h = ""
            if stat.S_ISREG(s.st_mode) and s.st_size <= (64 << 20):
                h = hashlib.sha256(open(p, "rb").read()).hexdigest()[:16]
            elif stat.S_ISLNK(s.st_mode):
                h = os.readlink(p)
            lines.append(f"{os.path.relpath(p, root)!r} {s.st_mode:o} "
                         f"{s.st_size if not stat.S_ISDIR(s.st_mode) else '-'} "
                         f"{s.st_mtime_ns if not stat.S_ISDIR(s.st_mode) else '-'} "
                         f"{s.st_ino} {h}")
    print("\n".join(sorted(lines)))
    return True

def cmd_sums(argv):
    for p in argv:
        a, c = sums(p)
        print(f"{a:08x} {c:08x} {p}")
    return True

cmds = {"lines": cmd_lines, "json": cmd_json, "compare": cmd_compare,
        "snap": cmd_snap, "sums": cmd_sums}
sys.exit(0 if cmds[sys.argv[1]](sys.argv[2:]) else 1)
PY
python3 "$FSUM" sums /dev/null >/dev/null || fail "the checksum helper does not work"

# check_lines KIND OUT [--skipped ...] ARG...: the sender's checksum lines
check_lines() { python3 "$FSUM" lines "$@"; }
# check_report KIND JSON [--skipped ...] ARG...: the sender's --json report
check_report() { python3 "$FSUM" json "$@"; }
# same_tree SRC DST: contents, modes, mtimes, nothing extra
same_tree() { python3 "$FSUM" compare "$@"; }
# snap DIR: a listing to compare before and after
snap() { python3 "$FSUM" snap "$1"; }
