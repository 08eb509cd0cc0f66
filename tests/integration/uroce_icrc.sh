#!/usr/bin/env bash
# RoCEv2 ICRC cross-check with scapy (Debian's python3-scapy,
# scapy/contrib/roce.py), both ways:
#  - frames scapy built (several opcodes and payload sizes, masked fields
#    changed, IPv4 options; pcap in both byte orders, pcapng) must all read
#    "icrc ok" in ferry, and one frame with a broken ICRC "ICRC BAD";
#  - frames ferry built (every opcode, pad 0-3) must carry the ICRC scapy
#    computes for them.
. "$(dirname "$0")/lib.sh"
SRC=${SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
PY=/usr/bin/python3
HELPER=$BUILD/tests/unit/test_uroce_wire

[ -x "$PY" ] || skip "no /usr/bin/python3 (Debian's Python, which has python3-scapy)"
"$PY" -c 'import scapy.contrib.roce' 2>/dev/null ||
	skip "scapy is not importable by $PY (apt-get install python3-scapy)"
[ -x "$HELPER" ] || skip "$HELPER not built (CUnit missing?)"
DUMP=("$FERRY" rocedump --quiet)

note "scapy builds, ferry checks"
"$PY" "$SRC/tests/integration/scapy_icrc.py" gen "$T" || fail "scapy gen"
want=$(cat "$T/expect")
for f in scapy.pcap scapy_be_ns.pcap scapy.pcapng; do
	"${DUMP[@]}" "$T/$f" >"$T/out" 2>&1
	rc=$?
	got=$(tail -1 "$T/out")
	if [ $rc -ne 0 ] || [ "$got" != "$want" ]; then
		"$FERRY" rocedump "$T/$f" | grep -v 'icrc ok$' | head -20
		fail "$f: exit $rc, '$got' (wanted '$want')"
	fi
	echo "ok  $f: $got"
done
"${DUMP[@]}" "$T/scapy_bad.pcap" >"$T/out" 2>&1
rc=$?
got=$(tail -1 "$T/out")
[ $rc -eq 1 ] && [ "$got" = "2 frames, 2 RoCEv2, 2 decoded, 0 undecodable, 1 ICRC ok, 1 ICRC bad, 0 ICRC unchecked" ] ||
	{ cat "$T/out"; fail "scapy_bad.pcap: exit $rc, '$got'"; }
echo "ok  scapy_bad.pcap: the broken ICRC is reported (exit 1)"

note "ferry builds, scapy checks"
"$HELPER" --write-pcap "$T/ferry.pcap" || fail "test_uroce_wire --write-pcap"
"$PY" "$SRC/tests/integration/scapy_icrc.py" check "$T/ferry.pcap" ||
	fail "scapy disagrees with ICRCs ferry computed"
"${DUMP[@]}" "$T/ferry.pcap" >"$T/out" 2>&1 ||
	{ tail -3 "$T/out"; fail "ferry disagrees with itself"; }
echo "ok  $(tail -1 "$T/out")"
