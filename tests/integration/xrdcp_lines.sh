#!/usr/bin/env bash
# ferry's checksum lines are the lines `xrdcp -C adler32:print` writes:
# the same tree (an empty file, one byte, 7,000,001 bytes, a name with a
# space, a file two directories down) is copied by xrdcp -r into an
# xrootd this test starts on loopback, and by ferry send to a ferry recv;
# each side's lines are split into their fields (KIND: VALUE TARGET
# SIZE), and every field must be equal, the target compared below the
# copy's destination (root://HOST:PORT/EXPORT/... and ferry://HOST:PORT/...).
# xrdcp writes its lines on stderr, ferry on stdout.
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || skip "python3 not found"
command -v xrootd >/dev/null || skip "xrootd not found (apt-get install xrootd-server; make test installs it)"
command -v xrdcp >/dev/null || skip "xrdcp not found (apt-get install xrootd-client)"
id xrootd >/dev/null 2>&1 || skip "no user xrootd (xrootd refuses to run as root; the Debian package makes the user)"
[ "$(id -u)" -eq 0 ] || skip "runs xrootd as user xrootd: needs root"

KEY=$T/key
"$FERRY" keygen "$KEY" >/dev/null || fail "keygen"
S=$T/src
mkdir -p "$S/run/raw" "$T/ferry" "$T/xrd/exp" "$T/xrd/adm" "$T/xrd/run"
: >"$S/empty.dat"
printf x >"$S/one"
head -c 7000001 /dev/urandom >"$S/run/raw/f2.root"
head -c 4097 /dev/urandom >"$S/with space.txt"
head -c 65536 /dev/urandom >"$S/run/notes"

note "xrdcp -r -C adler32:print into an xrootd on loopback"
chmod 711 "$T"
chown -R xrootd:xrootd "$T/xrd"
chmod -R a+rX "$S"
XPORT=$(free_port)
cat >"$T/xrd/x.cfg" <<EOF
all.export $T/xrd/exp
xrd.port $XPORT
all.adminpath $T/xrd/adm
all.pidpath $T/xrd/run
xrootd.chksum adler32
EOF
chmod 644 "$T/xrd/x.cfg"
timeout -k 5 120 runuser -u xrootd -- xrootd -c "$T/xrd/x.cfg" -l "$T/xrd/x.log" \
	>"$T/xrd/out" 2>&1 &
PIDS+=($!)
wait_listen "$XPORT" || fail "xrootd did not listen on $XPORT: $(tail -n 5 "$T/xrd/out" "$T/xrd/x.log" 2>/dev/null)"
# the EXIT trap's kill -9 of timeout would leave runuser and xrootd
# running: they are killed too
PIDS+=($(pgrep -f -- "-c $T/xrd/x.cfg"))
timeout -k 5 120 xrdcp -r -C adler32:print "$S" "root://127.0.0.1:$XPORT/$T/xrd/exp/" \
	>"$T/xrdcp.out" 2>"$T/xrdcp.err" ||
	fail "xrdcp -r failed: $(tail -n 5 "$T/xrdcp.err")"
cat "$T/xrdcp.err"

note "ferry send of the same tree"
RPORT=$(free_port)
"$FERRY" recv --key "$KEY" -B 127.0.0.1 -p "$RPORT" -d "$T/ferry" --once -q -i 0 \
	>"$T/recv.out" 2>"$T/recv.err" &
PIDS+=($!)
wait_listen "$RPORT" || fail "ferry recv did not listen"
timeout -k 5 120 "$FERRY" send --key "$KEY" -q -i 0 "$S" "127.0.0.1:$RPORT" \
	>"$T/ferry.out" 2>"$T/ferry.err" ||
	fail "ferry send failed: $(tail -n 5 "$T/ferry.err")"
cat "$T/ferry.out"

note "field by field"
python3 - "$T/xrdcp.err" "root://127.0.0.1:$XPORT$T/xrd/exp/" "$T/ferry.out" \
	"ferry://127.0.0.1:$RPORT/" <<'PY' || bad "ferry's checksum lines differ from xrdcp's"
import re, sys

def lines(path, prefix):
    """{relative target: (kind, value, size)} of the checksum lines, and
    their count; the target must start with prefix (xrdcp writes "//"
    after a destination that ends in '/')."""
    out, n = {}, 0
    for ln in open(path, encoding="utf-8", errors="surrogateescape"):
        ln = ln.rstrip("\n")
        if not ln.startswith(("adler32:", "crc32c:")):
            continue
        n += 1
        m = re.fullmatch(r"(\w+): ([0-9a-f]+) (.+) ([0-9]+)", ln)
        assert m, f"{path}: not KIND: VALUE TARGET SIZE: {ln!r}"
        kind, value, target, size = m.groups()
        assert target.startswith(prefix), f"{ln!r}: target not below {prefix}"
        rel = target[len(prefix):].lstrip("/")
        assert rel not in out, f"{path}: {rel} twice"
        out[rel] = (kind + ":", value, size)
    return out, n

xrd, nx = lines(sys.argv[1], sys.argv[2])
fer, nf = lines(sys.argv[3], sys.argv[4])
assert nx == 5 and nf == 5, f"xrdcp wrote {nx} checksum lines, ferry {nf}; want 5 each"
assert set(xrd) == set(fer), f"targets differ: xrdcp {sorted(xrd)}, ferry {sorted(fer)}"
for rel in sorted(xrd):
    for name, a, b in zip(("kind", "value", "size"), xrd[rel], fer[rel]):
        assert a == b, f"{rel}: {name}: xrdcp {a!r}, ferry {b!r}"
    print(f"same: {rel}: {' '.join(xrd[rel])}")
print("ok: every field of ferry's 5 lines equals xrdcp's")
PY
finish
