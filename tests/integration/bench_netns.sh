#!/usr/bin/env bash
# bench between two network namespaces over a veth pair, 1 and 8 streams.
. "$(dirname "$0")/lib.sh"
need_root
make_pair

"$FERRY" keygen "$T/key" >/dev/null || fail "keygen"
port=7471
ip netns exec $NSB "$FERRY" recv --key "$T/key" -p $port -q >"$T/recv.out" 2>&1 &
PIDS+=($!)
wait_listen $port $NSB

for P in 1 8; do
	note "$P stream(s) from $IPA to $IPB"
	ip netns exec $NSA "$FERRY" bench --key "$T/key" -n 512M -P $P --json \
		$IPB >"$T/p$P.json" 2>"$T/p$P.err" || {
		cat "$T/p$P.err"; fail "bench -P $P"; }
	check_json "$T/p$P.json" $((512 << 20))
	python3 -c "import json,sys; r=json.load(open(sys.argv[1])); assert r['start']['streams']==$P; assert r['start']['peer'].startswith('$IPB:')" "$T/p$P.json" ||
		fail "report does not show $P streams to $IPB"
done

note "the data streams went over the veth, not loopback"
rx=$(ip netns exec $NSB cat /sys/class/net/$VETHB/statistics/rx_bytes)
[ "$rx" -gt $((1024 << 20)) ] || fail "veth saw only $rx bytes"
echo "veth $VETHB received $rx bytes"
echo "PASS"
