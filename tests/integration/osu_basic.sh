#!/usr/bin/env bash
# ferry bench --osu: every mode (lat, bw, bibw, mr) on every transport
# this host has: tcp on loopback (both poll modes), uroce between two
# network namespaces (skipped, saying why, when DPDK cannot run here).
# Each report must list every requested size, in order, with consistent
# figures: bytes = size x count, positive times and rates, p50 <= p99 <=
# max; the table and CSV forms carry the same rows. verbs (no device
# here) must say why it cannot run; verbs_e2e runs --osu where it can.
# Small sizes and iteration counts: the whole test takes well under 60 s.
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || skip "python3 is needed to check the reports"
SIZES=1,64,4K,64K
NSIZES=4

# check_osu FILE MODE TRANSPORT: a JSON report of SIZES.
check_osu() {
	python3 - "$@" "$SIZES" <<'PY' || fail "bad --osu report $1 ($2 over $3)"
import json, sys
path, mode, xport, sizes = sys.argv[1:5]
want = [int(s[:-1]) << 10 if s.endswith("K") else int(s) for s in sizes.split(",")]
r = json.load(open(path))
assert r["osu"] == mode, f"mode {r['osu']}, wanted {mode}"
assert r["transport"] == xport, f"transport {r['transport']}, wanted {xport}"
assert r["poll"] in ("busy", "event") and r["peer_poll"] in ("busy", "event"), "poll mode not reported"
rows = r["rows"]
assert [w["size"] for w in rows] == want, f"sizes {[w['size'] for w in rows]}, wanted {want}"
for w in rows:
    s = w["size"]
    assert w["iters"] > 0 and w["count"] > 0, f"{s}: nothing counted"
    assert w["bytes"] == s * w["count"], f"{s}: bytes {w['bytes']} != size x count {w['count']}"
    assert w["seconds"] > 0 and w["avg_us"] > 0 and w["p50_us"] > 0, f"{s}: times not positive"
    assert w["p50_us"] <= w["p99_us"] <= w["max_us"], f"{s}: p50 {w['p50_us']} p99 {w['p99_us']} max {w['max_us']}"
    assert w["mbps"] > 0 and w["gbps"] > 0 and w["msg_rate"] > 0, f"{s}: rates not positive"
    assert abs(w["msg_rate"] * w["seconds"] - w["count"]) <= 0.01 * w["count"] + 1, f"{s}: rate x time != count"
    assert w["cpu_pct"] >= 0 and w["peer_cpu_pct"] >= 0, f"{s}: negative CPU"
    per = 2 if mode in ("lat", "bibw") else 1
    win = 1 if mode == "lat" else r["window"]
    assert w["count"] == per * win * w["iters"], f"{s}: count {w['count']} for {w['iters']} iterations"
print(f"ok: {mode} over {xport}: {len(rows)} sizes, " +
      ", ".join(f"{w['size']} B {w['avg_us']:.1f} us {w['mbps']:.1f} MB/s" for w in rows[::2]))
PY
}

# run_modes TRANSPORT ADDR:PORT RUNNER...: each mode once, JSON checked.
run_modes() {
	local xport=$1 dst=$2 mode iters
	shift 2
	for mode in lat bw bibw mr; do
		iters=5
		[ $mode = lat ] && iters=200
		"$@" bench --key "$T/key" --transport "$xport" --osu $mode \
			--sizes $SIZES --iters $iters --window 8 --json "$dst" \
			>"$T/$xport-$mode.json" 2>"$T/$xport-$mode.err" ||
			{ tail -5 "$T/$xport-$mode.err"; fail "--osu $mode over $xport"; }
		check_osu "$T/$xport-$mode.json" $mode "$xport"
	done
}

"$FERRY" keygen "$T/key" >/dev/null || fail "keygen"

note "tcp on loopback"
port=$(free_port)
"$FERRY" recv --key "$T/key" -p "$port" -B 127.0.0.1 -q >"$T/recv.out" 2>&1 &
PIDS+=($!)
wait_listen "$port"
run_modes tcp 127.0.0.1:"$port" timeout 60 "$FERRY"

note "tcp, busy polling; the table and the CSV"
timeout 60 "$FERRY" bench --key "$T/key" --transport tcp --osu lat --poll busy \
	--sizes $SIZES --iters 100 --json 127.0.0.1:"$port" >"$T/busy.json" ||
	fail "--osu lat --poll busy"
check_osu "$T/busy.json" lat tcp
python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["poll"] == "busy"' \
	"$T/busy.json" || fail "--poll busy is not reported as busy"
timeout 60 "$FERRY" bench --key "$T/key" --transport tcp --osu bw \
	--sizes $SIZES --iters 3 -q 127.0.0.1:"$port" >"$T/table.txt" ||
	fail "--osu bw (table)"
cat "$T/table.txt"
[ "$(grep -c '^[0-9]' "$T/table.txt")" -eq $NSIZES ] || fail "the table does not have $NSIZES rows"
grep -q '^# Size .*Avg(us) .*P99(us) .*MB/s .*Gb/s .*Msg/s .*CPU%' "$T/table.txt" ||
	fail "the table has no column header"
timeout 60 "$FERRY" bench --key "$T/key" --transport tcp --osu mr \
	--sizes 1-8 --iters 3 --csv -q 127.0.0.1:"$port" >"$T/mr.csv" ||
	fail "--osu mr (csv)"
python3 - "$T/mr.csv" <<'PY' || fail "bad CSV"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert [int(r["size"]) for r in rows] == [1, 2, 4, 8], [r["size"] for r in rows]
assert all(int(r["bytes"]) == int(r["size"]) * int(r["count"]) for r in rows)
print(f"ok: CSV with {len(rows)} rows")
PY

note "mistakes are refused with a reason"
out=$("$FERRY" bench --key "$T/key" --osu lat --sizes 0-8 127.0.0.1:"$port" 2>&1) &&
	fail "--sizes 0-8 was accepted"
[[ "$out" == *"--sizes"* ]] || fail "no reason for --sizes 0-8: $out"
out=$("$FERRY" bench --key "$T/key" --osu lat -n 1M 127.0.0.1:"$port" 2>&1) &&
	fail "--osu with -n was accepted"
if out=$("$FERRY" bench --key "$T/key" --transport verbs --osu lat 127.0.0.1:"$port" 2>&1); then
	fail "--osu over verbs claimed to work"
fi
case "$out" in
*"verbs is not usable"* | *"not in this build"* | *"RDMA device"*) echo "ok: verbs: $out" ;;
*) fail "verbs: no clear message: $out" ;;
esac
kill -0 "${PIDS[0]}" 2>/dev/null || { cat "$T/recv.out"; fail "ferry recv died"; }
grep -q "session failed" "$T/recv.out" && { cat "$T/recv.out"; fail "a receiver session failed"; }

# ---- uroce, between two namespaces ----
uroce_skip() { echo "SKIP (uroce half): $*" >&2; echo "PASS (tcp; uroce skipped)"; exit 0; }
if ! out=$(env -u FERRY_DPDK "$FERRY" bench --transport uroce -n 1M 127.0.0.1:1 2>&1); then
	case "$out" in
	*"not in this build"*) uroce_skip "this build has no uroce transport" ;;
	esac
fi
[ "$(id -u)" -eq 0 ] || uroce_skip "needs root (network namespaces)"
ip netns list >/dev/null 2>&1 || uroce_skip "ip netns does not work here"
uroce_cleanup() {
	cleanup_procs
	rm -rf /var/run/dpdk/ferryosu$$A /var/run/dpdk/ferryosu$$B
	cleanup
}
trap uroce_cleanup EXIT
make_pair
ip -n $NSA link set $VETHA mtu 9000 || fail "veth MTU 9000"
ip -n $NSB link set $VETHB mtu 9000 || fail "veth MTU 9000"
# no hugepages: other tests may hold them; DPDK runs on ordinary memory
# (--no-huge does not go with the --in-memory ferry adds by default: a
# file prefix per side instead, removed on exit)
AFP="framesz=16384,blocksz=16384,framecnt=1024"
MEM="--no-huge -m 512 --file-prefix ferryosu$$"
uport=7471
ip netns exec $NSB env FERRY_DPDK="--vdev=net_af_packet0,iface=$VETHB,$AFP ${MEM}B" \
	timeout 120 "$FERRY" recv --key "$T/key" --transport uroce -B $IPB -p $uport \
	-q >"$T/urecv.out" 2>&1 &
PIDS+=($!)
wait_listen $uport $NSB
usend() {
	ip netns exec $NSA env FERRY_DPDK="--vdev=net_af_packet0,iface=$VETHA,$AFP ${MEM}A" \
		timeout 60 "$FERRY" "$@"
}
note "uroce: $IPA -> $IPB"
if ! usend bench --key "$T/key" --transport uroce --osu lat --sizes 64 --iters 10 \
	$IPB:$uport >"$T/ufirst.out" 2>&1; then
	grep -q "DPDK EAL did not start\|cannot make mbuf pools" "$T/ufirst.out" "$T/urecv.out" &&
		uroce_skip "DPDK cannot start here: $(grep -ho 'uroce: DPDK.*' "$T/ufirst.out" "$T/urecv.out" | head -1)"
	tail -5 "$T/ufirst.out" "$T/urecv.out"
	fail "the first uroce --osu session failed"
fi
run_modes uroce $IPB:$uport usend
grep -q "session failed" "$T/urecv.out" && { cat "$T/urecv.out"; fail "a uroce receiver session failed"; }
echo "PASS"
