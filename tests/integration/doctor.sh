#!/usr/bin/env bash
# ferry doctor on this host: what it reports matches what /sys and /proc
# say, the JSON is valid and agrees with the table, and the exit status is
# 1 exactly when a check FAILed (2 on bad usage).
. "$(dirname "$0")/lib.sh"

SRC=${SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
"$FERRY" doctor --help >/dev/null 2>&1 || skip "this ferry has no doctor subcommand"

# A fixed target, so the expected sysctl verdicts can be computed here:
# 10 Gb/s x 100 ms = 125,000,000 bytes per socket.
ARGS=(--rate 10 --rtt 100)
NEED=125000000

note "ferry doctor ${ARGS[*]}"
"$FERRY" doctor "${ARGS[@]}" >"$T/table" 2>"$T/err"
rc=$?
cat "$T/table"
[ -s "$T/err" ] && { cat "$T/err"; fail "doctor wrote to stderr"; }
nfail=$(grep -c '^FAIL ' "$T/table")
case $rc in
0) [ "$nfail" -eq 0 ] || fail "exit 0 with $nfail FAIL lines" ;;
1) [ "$nfail" -gt 0 ] || fail "exit 1 without a FAIL line" ;;
*) fail "exit status $rc (want 0 or 1)" ;;
esac
summary="$(grep -c '^PASS ' "$T/table") pass, $(grep -c '^WARN ' "$T/table") warn, $nfail fail"
grep -q "^$summary, [0-9]* info\$" "$T/table" || fail "summary is not '$summary, N info'"

# RDMA: the truth from sysfs.
if ls /sys/class/infiniband/* >/dev/null 2>&1; then
	for dev in /sys/class/infiniband/*; do
		grep -q "^PASS  rdma .*$(basename "$dev")" "$T/table" ||
			fail "$(basename "$dev") is not reported"
	done
else
	grep -Eq '^(INFO|WARN)  rdma .*no RDMA device' "$T/table" ||
		fail "no RDMA device here, but the report does not say so"
fi

# Hugepages: none reserved is a WARN that says so.
reserved=0
for f in /sys/kernel/mm/hugepages/hugepages-*/nr_hugepages; do
	[ -r "$f" ] && reserved=$((reserved + $(cat "$f")))
done
if [ "$reserved" -eq 0 ]; then
	grep -q '^WARN  hugepages .*none reserved' "$T/table" ||
		fail "no hugepages reserved here, but the report does not say so"
	grep -q 'fix: echo 1024 > /proc/sys/vm/nr_hugepages' "$T/table" ||
		fail "no fix given for hugepages"
else
	grep -q '^\(PASS\|WARN\)  hugepages .* x ' "$T/table" ||
		fail "$reserved hugepages reserved here, not reported"
fi

# Sysctls against the 125 MB target.
verdict() { [ "$1" -ge "$NEED" ] && echo PASS || echo WARN; }
expect_line() {
	grep -q "^$1  $2 " "$T/table" || fail "$2: want $1: $(grep " $2 " "$T/table")"
}
for s in rmem_max wmem_max; do
	f=/proc/sys/net/core/$s
	[ -r $f ] && expect_line "$(verdict "$(cat $f)")" "net.core.$s"
done
for s in tcp_rmem tcp_wmem; do
	f=/proc/sys/net/ipv4/$s
	[ -r $f ] && expect_line "$(verdict "$(awk '{print $3}' $f)")" "net.ipv4.$s"
done
f=/proc/sys/net/ipv4/tcp_slow_start_after_idle
if [ -r $f ]; then
	[ "$(cat $f)" = 0 ] && want=PASS || want=WARN
	expect_line $want net.ipv4.tcp_slow_start_after_idle
fi
f=/proc/sys/net/ipv4/tcp_congestion_control
if [ -r $f ]; then
	case $(cat $f) in bbr*) want=PASS ;; cubic | htcp) want=INFO ;; *) want=WARN ;; esac
	expect_line $want net.ipv4.tcp_congestion_control
fi
# No cpufreq (most VMs) is INFO, not a failure.
if ! ls /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor >/dev/null 2>&1; then
	expect_line INFO "cpu governor"
fi

note "ferry doctor --json ${ARGS[*]}"
"$FERRY" doctor --json "${ARGS[@]}" >"$T/json"
jrc=$?
[ $jrc -eq $rc ] || fail "--json exited $jrc, the table $rc"
python3 - "$T/json" "$T/table" "$jrc" <<'PY' || fail "bad JSON document"
import json, sys
doc = json.load(open(sys.argv[1]))
rc = int(sys.argv[3])
checks = doc["checks"]
assert doc["complete"] is True
for c in checks:
    assert set(c) == {"name", "status", "value", "fix"}, c
    assert c["status"] in ("pass", "warn", "fail", "info"), c
    assert c["name"] and c["value"], c
    if c["status"] in ("warn", "fail"):
        assert c["fix"], f"{c['name']}: no fix"
counts = {s: sum(c["status"] == s for c in checks)
          for s in ("pass", "warn", "fail", "info")}
assert doc["summary"] == counts, (doc["summary"], counts)
assert rc == (1 if counts["fail"] else 0), f"exit {rc} with {counts['fail']} fail"
# The same checks, in the same order, as the table.
rows = [l.split(None, 1) for l in open(sys.argv[2])
        if l[:4] in ("PASS", "WARN", "FAIL", "INFO")]
assert [r[0].lower() for r in rows] == [c["status"] for c in checks]
assert all(r[1].startswith(c["name"]) for r, c in zip(rows, checks))
print(f"ok: {len(checks)} checks, {counts}")
PY

# Strings from the host (here: a name that is not there) are escaped.
"$FERRY" doctor --json --netdev 'x"y\z' >"$T/json2"
[ $? -eq 1 ] || fail "a missing --netdev must FAIL"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["checks"][0]["name"] == "netdev x\"y\\z", d["checks"][0]' \
	"$T/json2" || fail "--json did not escape a quote and a backslash"

note "fake hosts and bad usage"
expect_rc() {
	local want=$1 got
	shift
	"$FERRY" doctor "$@" >"$T/out" 2>"$T/err"
	got=$?
	[ $got -eq "$want" ] || { cat "$T/out" "$T/err"; fail "'doctor $*' exited $got, not $want"; }
	echo "ok  doctor $* -> $got"
}
D=$SRC/tests/unit/data/doctor
expect_rc 0 --root "$D/good"
expect_rc 1 --root "$D/bad"
expect_rc 0 --root "$D/vm" --json
expect_rc 1 --root "$D/good" --netdev eth9
expect_rc 2 --root /nonexistent/ferry
expect_rc 2 --rtt 0
expect_rc 2 --rate fast
expect_rc 2 --netdev ../x
expect_rc 2 --bogus
expect_rc 2 extra
[ "$(wc -l <"$T/err")" -eq 1 ] || fail "usage error is not one line"
echo "doctor: all checks consistent"
