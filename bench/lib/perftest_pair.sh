# shellcheck shell=bash
# The measurements of bench/verbs_vs_perftest.sh (run by it, with bash):
# one side of them, or both. Both sides step through the same list of tests
# (REPS rounds; in each, for every QP count P: ferry in every poll mode M
# of POLLS, then ib_write_bw) and meet through files in RUN.
#
#   server  a `ferry recv --transport verbs --poll M` per mode for the
#           whole run, and one `ib_write_bw` server (rdma_cm) per perftest
#           test
#   client  `ferry bench --transport verbs -n BYTES -P P -l SIZE --poll M`
#           and `ib_write_bw -R -q P -s SIZE -n BYTES/SIZE/P` (it polls
#           busy: it has no event mode for writes), against SIP; prints a
#           line per test ("TEST ...") and the summary ("TABLE ...":
#           medians over the rounds, ratios, each round's ratio)
#   both    the server in the background, the client here (one host)
#
# ib_write_bw under TCG now and then reports 0 Gb/s for a run that moved
# its bytes (its clock reading, not the transfer): such a run is shown,
# counted as invalid and left out of the median.
#
# Environment: ROLE, RUN (a directory both sides see), DEV (the RDMA
# device), SIP (the server's address on it), QPS, SIZE, BYTES, REPS,
# POLLS, FERRY, KEY (a key file both sides have). Run inside the guests of
# tests/vm (VM_NAME set), ROLE, RUN, DEV, SIP and KEY come from there:
# guest a is the client, b the server.
set -uo pipefail

if [ -n "${VM_NAME:-}" ]; then
	RUN=$VM_RUN DEV=rxe0 KEY=$VM_RUN/key
	FERRY=$BUILD/apps/ferry/ferry
	if [ "$VM_NAME" = a ]; then ROLE=client SIP=$VM_PEER_IP; else ROLE=server SIP=$VM_IP; fi
fi
FPORT=7471   # busy; event: FPORT + 1
PTPORT=18515 # + the test's number: a fresh rdma_cm port for each server

pair_die() { echo "ERROR: $*" >&2; exit 1; }
trap 'touch "$RUN/pair.gone"' EXIT
numfmt --from=iec "$SIZE" >/dev/null 2>&1 || pair_die "SIZE=$SIZE is not a size"
SZ=$(numfmt --from=iec "$SIZE")
NB=$(numfmt --from=iec "$BYTES")

fport() { if [ "$1" = event ]; then echo $((FPORT + 1)); else echo $FPORT; fi; }

# ib_write_bw's arguments for test N with P QPs
pt_args() {
	echo -d "$DEV" -R -q "$2" -s "$SZ" -n $((NB / SZ / $2)) -F \
		--report_gbits -p $((PTPORT + $1))
}

# tests: one line each, "N TOOL P M" (TOOL: ferry or perftest, M: the poll
# mode; ib_write_bw's is busy)
tests() {
	local r P m n=0
	for r in $(seq "$REPS"); do
		for P in $QPS; do
			for m in $POLLS; do
				echo "$n ferry $P $m"
				n=$((n + 1))
			done
			echo "$n perftest $P busy"
			n=$((n + 1))
		done
	done
}

mark() { touch "$RUN/pair.$1"; }
await() {
	local i
	for i in $(seq $((${2:-120} * 10))); do
		[ -e "$RUN/pair.$1" ] && return 0
		[ -e "$RUN/pair.gone" ] && pair_die "the other side ended"
		sleep 0.1
	done
	pair_die "waited ${2:-120} s for '$1'"
}

# the server side of ib_write_bw test N is up once rdma_cm lists its port
pt_listening() {
	rdma resource show cm_id 2>/dev/null | grep "state LISTEN" |
		grep -q "src-addr [^ ]*:$1 "
}

server() {
	local n tool P m pids=() i
	for m in $POLLS; do
		"$FERRY" recv --key "$KEY" --transport verbs --poll "$m" -B "$SIP" \
			-p "$(fport "$m")" -q -i 0 >"$RUN/pair.recv.$m.log" 2>&1 &
		pids+=($!)
		for i in $(seq 200); do
			ss -Hltn "sport = :$(fport "$m")" | grep -q . && break
			sleep 0.1
		done
	done
	mark ferry
	while read -r n tool P m; do
		[ "$tool" = perftest ] || continue
		# shellcheck disable=SC2046 # the arguments, split
		timeout 300 ib_write_bw $(pt_args "$n" "$P") \
			>"$RUN/pair.pt.$n.server" 2>&1 &
		for i in $(seq 100); do
			pt_listening $((PTPORT + n)) && break
			sleep 0.1
		done
		mark "pt.$n"
		wait $!
	done < <(tests)
	await done 600
	kill "${pids[@]}" 2>/dev/null
	wait "${pids[@]}" 2>/dev/null
}

client() {
	local n tool P m g
	await ferry
	while read -r n tool P m; do
		if [ "$tool" = ferry ]; then
			timeout 300 "$FERRY" bench --key "$KEY" --transport verbs -n "$NB" \
				-P "$P" -l "$SIZE" --poll "$m" -i 0 --json "$SIP:$(fport "$m")" \
				>"$RUN/pair.$n.json" 2>"$RUN/pair.$n.err" ||
				pair_die "ferry bench -P $P --poll $m failed: $(tail -n 3 "$RUN/pair.$n.err")"
			g=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["end"]["gbps"])' \
				"$RUN/pair.$n.json") || pair_die "cannot read ferry's report"
		else
			await "pt.$n"
			# shellcheck disable=SC2046 # the arguments, split
			timeout 300 ib_write_bw $(pt_args "$n" "$P") "$SIP" \
				>"$RUN/pair.pt.$n.client" 2>&1 ||
				pair_die "ib_write_bw -q $P failed: $(tail -n 3 "$RUN/pair.pt.$n.client")"
			g=$(awk '/BW average/ { f = 1; next }
				f && NF >= 4 && $1 ~ /^[0-9]+$/ { print $4; exit }' "$RUN/pair.pt.$n.client")
			[ -n "$g" ] || pair_die "cannot read ib_write_bw's result: $(tail -n 3 "$RUN/pair.pt.$n.client")"
		fi
		echo "TEST $n $tool $P $m $g"
		echo "$tool $P $m $g" >>"$RUN/pair.results"
	done < <(tests)
	mark done
	python3 - "$RUN/pair.results" "$SIZE" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    tool, p, m, g = line.split()
    runs.setdefault((int(p), tool if tool == "perftest" else m), []).append(float(g))
print("TABLE   QPs       size   ib_write_bw Gb/s   ferry --poll   Gb/s   ratio   round by round")
for p in sorted({p for p, _ in runs}):
    t = runs[(p, "perftest")]
    valid = [b for b in t if b > 0]
    if not valid:
        print(f"TABLE {p:5d} {sys.argv[2]:>10}   no valid ib_write_bw run")
        continue
    mt = statistics.median(valid)
    note = f"   ({len(t) - len(valid)} ib_write_bw run(s) reported 0 Gb/s: left out)" if len(valid) < len(t) else ""
    first = True
    for m in sorted({m for q, m in runs if q == p and m != "perftest"}):
        f = runs[(p, m)]
        mf = statistics.median(f)
        per = " ".join(f"{a / b:.2f}" if b > 0 else "-" for a, b in zip(f, t))
        lead = f"{p:5d} {sys.argv[2]:>10} {mt:18.3f}" if first else " " * 35
        print(f"TABLE {lead}   {m:>12} {mf:6.3f} {mf / mt:7.2f}   {per}{note if first else ''}")
        first = False
PY
}

case $ROLE in
server) server ;;
client) client ;;
both)
	server &
	spid=$!
	client
	rc=$?
	wait $spid || rc=1
	exit $rc
	;;
*) pair_die "ROLE=$ROLE: server, client or both" ;;
esac
