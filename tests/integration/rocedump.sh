#!/usr/bin/env bash
# ferry rocedump on captures scapy built (rocedump_scapy.py; tshark's
# reading: rocedump_tshark.py): every base
# transport opcode of RC, UC, RD, UD and XRC, CNPs, every AETH kind, CM
# MADs, VLAN tags, IPv6, a bad ICRC, frames cut by the snapshot length,
# undecodable frames and flows with PSN gaps, retransmissions, NAKs and
# CNPs. Checks:
#  - the output, frame lines, flow lines and the counts, is what the
#    generator wrote down from the values it put in the frames, line for
#    line (pcap, and the same frames as pcapng), and the exit status is 1
#    (a bad ICRC, undecodable frames); on the good frames alone, 0;
#  - --quiet prints the flows and the counts only; '-' reads stdin;
#    --port elsewhere finds no RoCEv2;
#  - tshark decodes the same field values (opcode, QPN, PSN, RETH, AETH,
#    DETH, AtomicETH, AtomicAckETH, MAD and CM fields) from the frames;
#  - data/rxe-session.pcapng, frames of a real session between two rxe
#    devices (Linux 6.1's soft-RoCE, in two qemu guests on a socket link:
#    `ferry bench --transport verbs -n 8M -P 2`, captured with dumpcap on
#    one guest's eth0; editcap kept 23 of its 2096 frames: the CM's REQ,
#    REP and RTU for both QPs, the first and last writes, ACKs, the
#    credit SENDs, DREQ and DREP): every frame decoded, every ICRC good,
#    the CM messages named in order, and every field rocedump prints as
#    tshark reads it.
. "$(dirname "$0")/lib.sh"
SRC=${SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
PY=/usr/bin/python3
GEN=$SRC/tests/integration/rocedump_scapy.py
TS=$SRC/tests/integration/rocedump_tshark.py

[ -x "$PY" ] || skip "no /usr/bin/python3 (Debian's Python, which has python3-scapy)"
"$PY" -c 'import scapy.contrib.roce' 2>/dev/null ||
	skip "scapy is not importable by $PY (apt-get install python3-scapy)"
command -v tshark >/dev/null ||
	skip "no tshark to cross-check the decoding (apt-get install tshark)"

"$PY" "$GEN" gen "$T" || fail "rocedump_scapy.py gen"

# dump FILE EXPECT WANT_RC [ARGS...]: the output must be EXPECT exactly
dump() {
	local f=$1 want=$2 want_rc=$3 rc
	shift 3
	"$FERRY" rocedump "$@" "$f" >"$T/out" 2>"$T/err"
	rc=$?
	if ! diff -u "$want" "$T/out" >"$T/diff"; then
		head -40 "$T/diff"
		bad "$(basename "$f") $*: the output differs from $(basename "$want")"
	elif [ $rc -ne "$want_rc" ]; then
		cat "$T/err"
		bad "$(basename "$f") $*: exit $rc, wanted $want_rc"
	else
		echo "ok  $(basename "$f") $*: $(tail -1 "$T/out") (exit $rc)"
	fi
}

note "every opcode, CM MADs, CNP, NAKs, flows, undecodable frames"
dump "$T/all.pcap" "$T/all.expect" 1
dump "$T/good.pcap" "$T/good.expect" 0
if command -v editcap >/dev/null; then
	editcap -F pcapng "$T/all.pcap" "$T/all.pcapng" || fail "editcap"
	dump "$T/all.pcapng" "$T/all.expect" 1
fi

note "options"
grep -E '^(flow |[0-9]+ frames, )' "$T/good.expect" >"$T/quiet.expect"
dump "$T/good.pcap" "$T/quiet.expect" 0 --quiet
"$FERRY" rocedump - <"$T/good.pcap" >"$T/stdin.out" 2>&1
cmp -s "$T/stdin.out" "$T/good.expect" && echo "ok  stdin reads the same" ||
	bad "rocedump - (stdin) differs from the file"
total=$(tail -1 "$T/all.expect" | cut -d' ' -f1)
echo "$total frames, 0 RoCEv2, 0 decoded, 0 undecodable, 0 ICRC ok, 0 ICRC bad, 0 ICRC unchecked" >"$T/port.expect"
dump "$T/all.pcap" "$T/port.expect" 0 --port 4792

note "tshark decodes the same fields"
"$PY" "$TS" tshark "$T" || bad "tshark disagrees with the frames' fields"

note "a session rxe sent"
RXE=$SRC/tests/integration/data/rxe-session.pcapng
"$FERRY" rocedump "$RXE" >"$T/rxe.out" 2>&1
rc=$?
last=$(tail -1 "$T/rxe.out")
want="23 frames, 23 RoCEv2, 23 decoded, 0 undecodable, 23 ICRC ok, 0 ICRC bad, 0 ICRC unchecked"
[ $rc -eq 0 ] && [ "$last" = "$want" ] && echo "ok  rxe-session: $last" ||
	bad "rxe-session.pcapng: exit $rc, '$last'"
cm=$(grep -o ' cm [A-Z]*' "$T/rxe.out" | awk '{printf "%s ", $2}')
[ "$cm" = "REQ REQ REP RTU REP RTU DREQ DREQ DREP DREP " ] &&
	echo "ok  rxe-session: CM $cm" || bad "rxe-session: CM messages '$cm'"
"$PY" "$TS" compare "$RXE" "$T/rxe.out" ||
	bad "tshark reads rxe-session.pcapng otherwise than rocedump"
finish
