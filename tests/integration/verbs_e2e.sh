#!/usr/bin/env bash
# verbs end to end: `ferry recv` and `ferry bench --transport verbs` on this
# host's RDMA device (a ConnectX, or soft-RoCE: docs/verbs.md), over the
# device's own IPv4 address: 1 GiB over 1 queue pair, then over 4, every
# byte counted and its crc32c checked on both sides; 256 MiB with both
# sides in --poll event (completion channels); then a sender that asks
# for verbs against a receiver that only offers tcp (refused with a reason).
#
# Skips (exit 77, reason on stderr) where there is no RDMA device, no
# usable port with an address, or too little locked memory.
#
# Environment: FERRY_VERBS_DEVICE picks the device (default: the first with
# an ACTIVE port and an IPv4 address on its netdev).
. "$(dirname "$0")/lib.sh"

# check_verbs_json FILE BYTES STREAMS: lib.sh's check_json, for verbs.
check_verbs_json() {
	python3 - "$1" "$2" "$3" <<'PY' || fail "bad JSON report $1"
import json, sys
r = json.load(open(sys.argv[1]))
s, e = r["start"], r["end"]
assert s["transport"] == "verbs", f"transport {s['transport']}, wanted verbs"
assert s["streams"] == int(sys.argv[3]), f"{s['streams']} streams"
assert e["bytes"] == int(sys.argv[2]), f"moved {e['bytes']} bytes, wanted {sys.argv[2]}"
assert e["peer"]["bytes"] == e["bytes"], "receiver counted different bytes"
assert e["crc_errors"] == 0, f"{e['crc_errors']} crc errors"
assert e["seconds"] > 0 and e["gbps"] > 0
assert sum(i["bytes"] for i in r["intervals"]) == e["bytes"], "intervals do not add up"
print(f"ok: {e['bytes']} bytes over {s['streams']} QP(s) in {e['seconds']:.2f} s, "
      f"{e['gbps']:.2f} Gb/s, sender CPU {e['cpu']['per_gb_s']:.2f} s/GB")
PY
}

# netdev_of DEV: the netdev behind an RDMA device (hardware: device/net;
# soft-RoCE: the GID table).
netdev_of() {
	local d=/sys/class/infiniband/$1 f n
	for f in "$d"/device/net/*; do
		[ -e "$f" ] && { basename "$f"; return; }
	done
	for f in "$d"/ports/*/gid_attrs/ndevs/*; do
		n=$(cat "$f" 2>/dev/null) && [ -n "$n" ] && { echo "$n"; return; }
	done
}

# --- can it run here? ---
DEVS=$(ls /sys/class/infiniband 2>/dev/null | tr '\n' ' ')
[ -n "${DEVS// /}" ] || skip "no RDMA device: /sys/class/infiniband is empty or missing (no RDMA NIC or driver here; soft-RoCE would do: rdma link add rxe0 type rxe netdev eth0)"
if command -v ibv_devices >/dev/null 2>&1; then
	[ "$(ibv_devices 2>/dev/null | awk 'NR > 2 && NF' | wc -l)" -gt 0 ] ||
		skip "ibv_devices shows no device (the kernel has $DEVS but libibverbs has no provider for it)"
fi
grep -q ferry__xport_verbs "$BUILD/lib/xport/xport_list.h" 2>/dev/null ||
	skip "this build has no verbs transport (meson did not find libibverbs and librdmacm)"
{ [ -r /dev/infiniband/rdma_cm ] && [ -w /dev/infiniband/rdma_cm ]; } ||
	skip "/dev/infiniband/rdma_cm is not usable (modprobe rdma_ucm, or permissions)"

DEV='' ND='' IP=''
for d in ${FERRY_VERBS_DEVICE:-$DEVS}; do
	grep -qs ACTIVE /sys/class/infiniband/"$d"/ports/*/state || continue
	nd=$(netdev_of "$d")
	[ -n "$nd" ] || continue
	ip=$(ip -4 -o addr show dev "$nd" 2>/dev/null | awk '{ sub("/.*", "", $4); print $4; exit }')
	[ -n "$ip" ] || continue
	DEV=$d ND=$nd IP=$ip
	break
done
[ -n "$DEV" ] || skip "no RDMA device with an ACTIVE port and an IPv4 address on its netdev (devices: $DEVS)"

# Each side registers a ring of 64 x (4 MiB + 4 KiB). CAP_IPC_LOCK lifts
# the limit (root outside a container has it).
need_kib=$((300 * 1024))
lim=$(ulimit -l)
capeff=$(awk '/^CapEff/ { print $2 }' /proc/self/status 2>/dev/null)
if [ "$lim" != unlimited ] && [ "$lim" -lt $need_kib ] &&
   ! (( (0x${capeff:-0} >> 14) & 1 )); then
	ulimit -l unlimited 2>/dev/null || ulimit -l $need_kib 2>/dev/null ||
		skip "RLIMIT_MEMLOCK is $lim KiB, each side needs about $need_kib KiB: raise it (ulimit -l unlimited; LimitMEMLOCK=infinity under systemd) or run with CAP_IPC_LOCK"
fi

export FERRY_VERBS_DEVICE=$DEV
note "device $DEV (netdev $ND, $IP)"
"$FERRY" keygen "$T/key" >/dev/null || fail "keygen"
port=$(free_port)
"$FERRY" recv --key "$T/key" --transport verbs -p "$port" -B "$IP" -v \
	>"$T/recv.out" 2>&1 &
PIDS+=($!)
wait_listen "$port"

for P in 1 4; do
	note "1 GiB over $P queue pair(s)"
	if ! timeout 120 "$FERRY" bench --key "$T/key" --transport verbs -n 1G \
		-P "$P" --json "$IP:$port" >"$T/p$P.json" 2>"$T/p$P.err"; then
		cat "$T/p$P.err" >&2
		tail -n 20 "$T/recv.out" >&2
		fail "ferry bench --transport verbs -P $P failed"
	fi
	check_verbs_json "$T/p$P.json" $((1 << 30)) "$P"
done
grep -q "verbs: device $DEV" "$T/recv.out" || {
	cat "$T/recv.out"; fail "the receiver did not say which device it used"; }

note "256 MiB over 2 queue pairs, both sides in event mode (completion channels)"
port3=$(free_port)
"$FERRY" recv --key "$T/key" --transport verbs --poll event -p "$port3" -B "$IP" \
	--once -q >"$T/recv3.out" 2>&1 &
PIDS+=($!)
wait_listen "$port3"
if ! timeout 120 "$FERRY" bench --key "$T/key" --transport verbs --poll event \
	-n 256M -P 2 --json "$IP:$port3" >"$T/ev.json" 2>"$T/ev.err"; then
	cat "$T/ev.err" "$T/recv3.out" >&2
	fail "ferry bench --transport verbs --poll event failed"
fi
check_verbs_json "$T/ev.json" $((256 << 20)) 2
python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["start"]["poll"]; sys.exit(p != "event")' \
	"$T/ev.json" || fail "the report does not say event polling"
grep -q "event polling" "$T/recv3.out" || {
	cat "$T/recv3.out"; fail "the receiver did not report event polling"; }

note "--osu lat and bw over verbs (the receiver writes back: duplex)"
for mode in lat bw; do
	timeout 120 "$FERRY" bench --key "$T/key" --transport verbs --osu $mode \
		--sizes 1-64K --iters 200 --csv "$IP:$port" >"$T/osu_$mode.csv" 2>"$T/osu_$mode.err" || {
		cat "$T/osu_$mode.err" >&2; tail -n 20 "$T/recv.out" >&2
		fail "ferry bench --transport verbs --osu $mode failed"; }
	python3 - "$T/osu_$mode.csv" <<'PY' || fail "bad --osu $mode CSV"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert [int(r["size"]) for r in rows] == [1 << i for i in range(17)], "sizes"
for r in rows:
    assert float(r["avg_us"]) > 0 and int(r["bytes"]) == int(r["size"]) * int(r["count"])
print(f"ok: {len(rows)} sizes; {rows[6]['size']} B: {rows[6]['avg_us']} us")
PY
done

note "files over verbs: a small tree, every byte compared"
mkdir -p "$T/src/sub" "$T/dst"
head -c $((64 << 20)) /dev/urandom >"$T/src/big"
head -c 12345 /dev/urandom >"$T/src/sub/small"
: >"$T/src/sub/empty"
port4=$(free_port)
"$FERRY" recv --key "$T/key" --transport verbs -p "$port4" -B "$IP" -d "$T/dst" \
	--once -q >"$T/recv4.out" 2>&1 &
PIDS+=($!)
wait_listen "$port4"
if ! timeout 120 "$FERRY" send --key "$T/key" --transport verbs -l 1M -i 0 \
	"$T/src" "$IP:$port4" >"$T/send.out" 2>&1; then
	cat "$T/send.out" "$T/recv4.out" >&2
	fail "ferry send --transport verbs failed"
fi
diff -r "$T/src" "$T/dst/src" >/dev/null || { ls -lR "$T/dst" >&2; fail "the tree did not arrive intact"; }
echo "ok: files identical over verbs"

# A second device (another port of the NIC, or a second rxe) with an
# address: a receiver bound there, the sender on the first device.
DEV2='' IP2=''
for d in $DEVS; do
	[ "$d" = "$DEV" ] && continue
	grep -qs ACTIVE /sys/class/infiniband/"$d"/ports/*/state || continue
	nd=$(netdev_of "$d")
	[ -n "$nd" ] || continue
	ip=$(ip -4 -o addr show dev "$nd" 2>/dev/null | awk '{ sub("/.*", "", $4); print $4; exit }')
	[ -n "$ip" ] && { DEV2=$d IP2=$ip; break; }
done
if [ -n "$DEV2" ]; then
	note "between two devices: $DEV -> $DEV2 ($IP2)"
	port5=$(free_port)
	FERRY_VERBS_DEVICE=$DEV2 "$FERRY" recv --key "$T/key" --transport verbs \
		-p "$port5" -B "$IP2" --once -q >"$T/recv5.out" 2>&1 &
	PIDS+=($!)
	wait_listen "$port5"
	timeout 120 "$FERRY" bench --key "$T/key" --transport verbs -n 1G -P 2 \
		--json "$IP2:$port5" >"$T/two.json" 2>"$T/two.err" || {
		cat "$T/two.err" "$T/recv5.out" >&2; fail "bench between two devices"; }
	check_verbs_json "$T/two.json" $((1 << 30)) 2
else
	note "one device only: the two-device case needs a second port with an address (skipped)"
fi

note "a sender that insists on verbs, against a tcp-only receiver"
port2=$(free_port)
"$FERRY" recv --key "$T/key" --transport tcp -p "$port2" -B "$IP" --once -q \
	>"$T/recv2.out" 2>&1 &
PIDS+=($!)
wait_listen "$port2"
if timeout 60 "$FERRY" bench --key "$T/key" --transport verbs -n 10M \
	"$IP:$port2" >"$T/n.out" 2>&1; then
	fail "bench --transport verbs succeeded against a tcp-only receiver"
fi
grep -qi "verbs\|transport" "$T/n.out" || {
	cat "$T/n.out"; fail "the refusal does not say why"; }
echo "PASS"
