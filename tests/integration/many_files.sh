#!/usr/bin/env bash
# Datasets of any size in bounded descriptors: 20,000 files of 0-4 KiB in
# 40 directories, every process involved running under `ulimit -n 256`
# (soft and hard: nothing can raise it), moved
#   1. by ferry send to ferry recv over tcp,
#   2. the same over uroce (DPDK net_af_packet on a veth pair; skipped
#      with the reason where DPDK cannot run),
#   3. by ferry cp to a ferry serve daemon (push),
#   4. by ferry cp from it (pull),
#   5. by ferry cp from that daemon to a second one (third-party copy).
# Each copy must be byte-identical to the source, exit 0, and its summary
# must count 20,000 files published. Source and copies live on a tmpfs
# where root can mount one.
. "$(dirname "$0")/files_lib.sh"

N=${MANY_FILES:-20000}
LIMIT=256
W=$T/w
mkdir -p "$W"
if [ "$(id -u)" -eq 0 ] && mount -t tmpfs -o size=1g,mode=0755 tmpfs "$W" 2>/dev/null; then
	MOUNTS+=("$W")
fi
S=$W/src
mkdir -p "$S"
python3 - "$S" "$N" <<'PY' || fail "making the tree"
import os, random, sys
top, n = sys.argv[1], int(sys.argv[2])
r = random.Random(22)
for i in range(n):
    d = os.path.join(top, f"d{i * 40 // n:02d}")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, f"f{i:06d}"), "wb") as f:
        f.write(r.randbytes(r.randrange(0, 4097)))
PY
note "$N files, $(du -sh "$S" | cut -f1), every process under ulimit -n $LIMIT"

# limited CMD...: CMD with at most LIMIT open files, soft and hard;
# limited_bg CMD... &: the same in the background, as one process ($! is
# CMD itself, so the EXIT trap's kill reaches it)
limited() { (ulimit -n $LIMIT && exec "$@"); }
limited_bg() { ulimit -n $LIMIT && exec "$@"; }

# same DIR WHAT: DIR holds exactly the source tree
same() {
	diff -r -q "$S" "$1" >"$T/diff" 2>&1 ||
		bad "$2: the copy differs from the source: $(head -n 3 "$T/diff" | paste -sd' ')"
}

# counted OUT WHAT: the summary line says every file was published
counted() {
	grep -q "^$N of $N files published, 0 skipped, 0 failed" "$1" ||
		bad "$2: the summary: $(grep 'files published' "$1" | tail -n 1)"
}

# recv_limited NAME DIR [ARGS...]: ferry recv under the limit on loopback
recv_limited() {
	local name=$1 dir=$2
	shift 2
	RPORT=$(free_port)
	limited_bg "$FERRY" recv --key "$KEY" -p "$RPORT" -B 127.0.0.1 -i 0 -q \
		-d "$dir" "$@" >"$T/$name.out" 2>"$T/$name.err" &
	RPID=$!
	PIDS+=($RPID)
	wait_listen "$RPORT"
}

note "1. ferry send to ferry recv over tcp"
mkdir -p "$W/d1"
recv_limited r1 "$W/d1" --once
t0=$SECONDS
limited timeout -k 5 300 "$FERRY" send --key "$KEY" -i 0 -q --transport tcp \
	"$S" "127.0.0.1:$RPORT" >"$T/s1.out" 2>"$T/s1.err" ||
	bad "1. the send failed: $(tail -n 2 "$T/s1.err" | paste -sd' ')"
wait $RPID || bad "1. the receiver's session failed: $(tail -n 2 "$T/r1.err" | paste -sd' ')"
echo "1. $(tail -n 1 "$T/s1.out") ($((SECONDS - t0)) s)"
counted "$T/s1.out" "1."
same "$W/d1/src" "1."
no_sidecars "$W/d1" "1."

note "2. the same over uroce"
out=$(env -u FERRY_DPDK "$FERRY" bench --transport uroce -n 1M 127.0.0.1:1 2>&1)
if [[ $out == *"not in this build"* ]]; then
	note "SKIPPED 2.: this build has no uroce transport (meson did not find libdpdk)"
elif [ "$(id -u)" -ne 0 ] || ! ip netns list >/dev/null 2>&1; then
	note "SKIPPED 2.: uroce between namespaces needs root"
else
	make_pair
	ip -n $NSA link set $VETHA mtu 9000 && ip -n $NSB link set $VETHB mtu 9000 || fail "veth MTU"
	HP_FILE=/proc/sys/vm/nr_hugepages HP_WAS=$(cat /proc/sys/vm/nr_hugepages)
	free_hp() { awk '/^HugePages_Free/ { print $2 }' /proc/meminfo; }
	[ "$(free_hp)" -lt 256 ] && echo $((HP_WAS + 256 - $(free_hp))) >$HP_FILE 2>/dev/null
	MEM=
	[ "$(free_hp)" -ge 200 ] || MEM="--no-huge -m 512"
	AFP="framesz=16384,blocksz=16384,framecnt=1024"
	mkdir -p "$W/d2"
	ip netns exec $NSB bash -c "ulimit -n $LIMIT && exec env FERRY_DPDK='--vdev=net_af_packet0,iface=$VETHB,$AFP $MEM' \
		'$FERRY' recv --key '$KEY' --transport uroce -B $IPB -p 7471 -d '$W/d2' -i 0 -q --once --timeout 10" \
		>"$T/r2.out" 2>"$T/r2.err" &
	RPID=$!
	PIDS+=($RPID)
	wait_listen 7471 $NSB
	t0=$SECONDS
	ip netns exec $NSA bash -c "ulimit -n $LIMIT && exec env FERRY_DPDK='--vdev=net_af_packet0,iface=$VETHA,$AFP $MEM' \
		timeout -k 5 300 '$FERRY' send --key '$KEY' --transport uroce -i 0 -q --timeout 10 '$S' $IPB:7471" \
		>"$T/s2.out" 2>"$T/s2.err" ||
		bad "2. the send failed: $(tail -n 2 "$T/s2.err" | paste -sd' ')"
	wait $RPID || bad "2. the receiver's session failed: $(tail -n 2 "$T/r2.err" | paste -sd' ')"
	echo "2. $(tail -n 1 "$T/s2.out") ($((SECONDS - t0)) s)"
	echo "$HP_WAS" >$HP_FILE 2>/dev/null
	counted "$T/s2.out" "2."
	same "$W/d2/src" "2."
	no_sidecars "$W/d2" "2."
fi

# two daemons under the limit
mkdir -p "$W/a" "$W/b" "$T/keys" "$W/pulled"
"$FERRY" keygen "$T/keys/ops.key" >/dev/null || fail keygen
for s in a b; do
	printf 'root %s\nkey ops keys/ops.key rights all paths /\n' "$W/$s" >"$T/$s.conf"
	SPORT=$(free_port)
	limited_bg "$FERRY" serve --exports "$T/$s.conf" -B 127.0.0.1 -p "$SPORT" -q \
		>"$T/$s.out" 2>"$T/$s.log" &
	PIDS+=($!)
	wait_listen "$SPORT"
	eval "P_$s=$SPORT"
done
A=ferry://127.0.0.1:$P_a B=ferry://127.0.0.1:$P_b
export FERRY_KEY=$T/keys/ops.key
cp_() { limited timeout -k 5 300 "$FERRY" cp "$@"; }

# cp_case N WHAT SRC DST LANDED: one cp, its summary counted, LANDED
# compared with the source tree
cp_case() {
	local n=$1 what=$2 landed=$5 t0=$SECONDS
	note "$n. ferry cp $what"
	cp_ "$3" "$4" >"$T/c$n.out" 2>"$T/c$n.err" ||
		bad "$n. $what failed: $(tail -n 2 "$T/c$n.err" | paste -sd' ')"
	echo "$n. $(tail -n 1 "$T/c$n.out") ($((SECONDS - t0)) s)"
	counted "$T/c$n.out" "$n."
	same "$landed" "$n."
}
cp_case 3 "to a daemon (push)" "$S" "$A/" "$W/a/src"
cp_case 4 "from the daemon (pull)" "$A/src" "$W/pulled/" "$W/pulled/src"
cp_case 5 "from one daemon to another (third-party copy)" "$A/src" "$B/" "$W/b/src"
for d in "$W/a" "$W/b" "$W/pulled"; do no_sidecars "$d" "cp"; done

finish
