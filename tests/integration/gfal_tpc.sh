#!/usr/bin/env bash
# Third-party copy through gfal2: `gfal-copy -K ADLER32 ferry://A/f
# ferry://B/g` run in a third namespace C. Three namespaces joined by three
# veth pairs (C-A, C-B, A-B), each its own /30 in 198.18.0.0/15; A reaches
# B by the address the client uses for B, over the A-B link (a host route
# in A). The copy arrives byte for byte, and the interfaces' byte counters
# show where the payload went: across the A-B link (at least the file's
# size), not through the client (the C-A and C-B links carry less than a
# tenth of it). Again with -n 4; and an existing target without -f fails
# with EEXIST and stays as it was, while -f replaces it.
. "$(dirname "$0")/gfal_lib.sh"

need_root
gfal_setup gfal-copy

# ---- three namespaces, three links ----------------------------------------
n=$(( ($$ + RANDOM) % 250 + 1 ))
NSA=fgA$$ NSB=fgB$$ NSC=fgC$$
for ns in $NSA $NSB $NSC; do
	ip netns add $ns || fail "ip netns add $ns"
	NETNS+=($ns)
	ip -n $ns link set lo up
done
# link NSX IFX ADDRX NSY IFY ADDRY: a veth pair, each end in its namespace.
link() {
	ip link add "$2" type veth peer name "$5" || fail "veth $2"
	ip link set "$2" netns "$1"
	ip link set "$5" netns "$4"
	ip -n "$1" addr add "$3/30" dev "$2"
	ip -n "$4" addr add "$6/30" dev "$5"
	ip -n "$1" link set "$2" up
	ip -n "$4" link set "$5" up
}
C_A=198.18.$n.1  A_C=198.18.$n.2   # C-A link
C_B=198.18.$n.5  B_C=198.18.$n.6   # C-B link
A_B=198.18.$n.9  B_A=198.18.$n.10  # A-B link
link $NSC ca$$ $C_A $NSA ac$$ $A_C
link $NSC cb$$ $C_B $NSB bc$$ $B_C
link $NSA ab$$ $A_B $NSB ba$$ $B_A
# A reaches B at the address the client knows B by, over the A-B link.
ip -n $NSA route add $B_C/32 via $B_A dev ab$$ || fail "route in A"
ip netns exec $NSA ping -c 1 -W 2 $B_C >/dev/null || fail "A cannot reach B at $B_C"
ip netns exec $NSC ping -c 1 -W 2 $A_C >/dev/null || fail "C cannot reach A"
ip netns exec $NSC ping -c 1 -W 2 $B_C >/dev/null || fail "C cannot reach B"

# ---- the daemons: the same client key in both exports -------------------
mkdir -p "$T/a" "$T/b" "$T/keys"
"$FERRY" keygen "$T/keys/client.key" >/dev/null || fail "ferry keygen"
for side in a b; do
	cat >"$T/$side.conf" <<EOF
root $T/$side
key client $T/keys/client.key rights all paths /
EOF
done
PORT=$(free_port)
start_daemon() { # NS SIDE
	ip netns exec "$1" "$FERRY" recv --exports "$T/$2.conf" -p "$PORT" -q -i 0 \
		>"$T/daemon_$2.out" 2>"$T/daemon_$2.err" &
	PIDS+=($!)
	wait_listen "$PORT" "$1"
}
start_daemon $NSA a
start_daemon $NSB b
echo "KEY=$T/keys/client.key" >>"$GFAL_CONFIG_DIR/ferry_plugin.conf"

SIZE=$((64 << 20))
head -c $SIZE /dev/urandom >"$T/a/f"
UA=ferry://$A_C:$PORT UB=ferry://$B_C:$PORT

# counters NS IF: its tx and rx bytes, summed.
counters() {
	ip netns exec "$1" sh -c "echo \$((\$(cat /sys/class/net/$2/statistics/tx_bytes) + \$(cat /sys/class/net/$2/statistics/rx_bytes)))"
}
snapshot() { echo "$(counters $NSA ab$$) $(counters $NSC ca$$) $(counters $NSC cb$$)"; }

# tpc NAME TARGET ARGS...: gfal-copy in C from A's f to B's TARGET, bounded;
# RC its status; then the links' byte counts are checked.
tpc() {
	local name=$1 target=$2 before after ab ca cb size
	shift 2
	size=$(stat -c %s "$T/a/f")
	before=($(snapshot))
	ip netns exec $NSC timeout -k 5 120 gfal-copy "$@" "$UA/f" "$UB/$target" \
		>"$T/$name.out" 2>"$T/$name.err"
	RC=$?
	after=($(snapshot))
	ab=$(( after[0] - before[0] )) ca=$(( after[1] - before[1] )) cb=$(( after[2] - before[2] ))
	echo "$name: A-B link $ab bytes, C-A $ca, C-B $cb (file $size)"
	[ $RC -eq 0 ] || { bad "$name: gfal-copy exit status $RC: $(head -c 800 "$T/$name.err")"; return; }
	cmp -s "$T/a/f" "$T/b/$target" || bad "$name: $T/b/$target differs from the source"
	[ $ab -ge $size ] || bad "$name: the A-B link carried $ab bytes, less than the file's $size"
	[ $ca -lt $((size / 10)) ] || bad "$name: the client's link to A carried $ca bytes (the payload went through the client?)"
	[ $cb -lt $((size / 10)) ] || bad "$name: the client's link to B carried $cb bytes (the payload went through the client?)"
}

note "gfal-copy -K ADLER32 ferry://A/f ferry://B/g, from C"
tpc t1 g -K ADLER32
note "again with -n 4, to g4"
tpc t2 g4 -K ADLER32 -n 4

note "onto the existing g without -f: EEXIST, g unchanged; with -f: replaced"
head -c $((SIZE / 4)) /dev/urandom >"$T/a/f"
before=$(stat -c '%s %Y' "$T/b/g")
ip netns exec $NSC timeout -k 5 60 gfal-copy "$UA/f" "$UB/g" >"$T/t3.out" 2>"$T/t3.err"
RC=$?
[ $RC -ne 0 ] || bad "a copy onto the existing g without -f succeeded"
grep -q "File exists" "$T/t3.err" || bad "no EEXIST for the existing g: $(head -c 600 "$T/t3.err")"
echo "refused: $(head -n 1 "$T/t3.err")"
[ "$(stat -c '%s %Y' "$T/b/g")" = "$before" ] || bad "a refused copy changed g"
ip netns exec $NSC timeout -k 5 60 gfal-copy --just-copy "$UA/f" "$UB/g" >"$T/t3b.out" 2>"$T/t3b.err"
RC=$?
[ $RC -ne 0 ] || bad "a --just-copy onto the existing g without -f succeeded"
grep -q "File exists" "$T/t3b.err" || bad "no EEXIST from the daemons for the existing g: $(head -c 600 "$T/t3b.err")"
tpc t4 g -f -K ADLER32

for side in a b; do
	[ -s "$T/daemon_$side.err" ] && echo "daemon $side stderr: $(tail -c 600 "$T/daemon_$side.err")"
done
finish
