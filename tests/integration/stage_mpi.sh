#!/usr/bin/env bash
# ferry-stage under mpirun: 4 ranks in namespace A stage one tree (many
# small files, an empty directory, and one file large enough to be split
# across every rank) to two receivers, in namespaces B and C, all joined
# by a bridge in a fourth namespace. Over tcp, then over uroce:
#  - the merged trees of both receivers equal the source byte for byte,
#    the JSON summary's counts are right, the split file's four ranges ran
#    on four ranks and its whole-file adler32 matches an independent one;
#  - a rank killed with SIGKILL mid-way (the job paced, so it is still
#    sending) leaves nothing partial under a final name; the rerun makes
#    the trees equal again, skips what was published, and moves less than
#    what was missing (the split file's verified ranges and chunks stay);
#  - no part file or journal is left behind;
#  - the first run marks its traffic --dscp 10: a capture on B's veth
#    (dumpcap, when installed) finds every IP packet from A carrying it.
# Exit 77 (skip) with the reason when MPI, the namespaces or (for uroce)
# DPDK are missing.
#
# STAGE_LAUNCH=srun (stage_slurm.sh) runs the same under a one-host Slurm
# started here (slurmctld and slurmd in namespace A, on its loopback);
# it skips with the reason when Slurm cannot start.
. "$(dirname "$0")/lib.sh"
LAUNCH=${STAGE_LAUNCH:-mpirun}
XPORTS=${STAGE_XPORTS:-tcp uroce}

need_root
STAGE=$BUILD/apps/stage/ferry-stage
[ -x "$STAGE" ] || skip "this build has no ferry-stage (meson did not find MPI: apt-get install libopenmpi-dev openmpi-bin)"
command -v mpirun >/dev/null || skip "no mpirun (apt-get install openmpi-bin)"
command -v timeout >/dev/null || skip "no timeout(1)"
note() { echo "== [${SECONDS}s] $*"; }

HP_FILE=/proc/sys/vm/nr_hugepages
HP_WAS=$(cat $HP_FILE 2>/dev/null || echo)
stage_cleanup() {
	local f
	for f in "$T"/slurm/*.pid; do
		[ -s "$f" ] && kill -9 "$(cat "$f")" 2>/dev/null
	done
	cleanup_procs
	[ -n "$HP_WAS" ] && echo "$HP_WAS" >$HP_FILE 2>/dev/null
	cleanup
}
trap stage_cleanup EXIT

# A star: namespace $NSS holds a bridge; A (the ranks), B and C (the
# receivers) each have one veth into it, MTU 9000 (uroce's 4 KiB path MTU).
n=$(( ($$ + RANDOM) % 250 + 1 ))
NSS=ferryS$$ NSA=ferryA$$ NSB=ferryB$$ NSC=ferryC$$
IPA=198.18.$n.1 IPB=198.18.$n.2 IPC=198.18.$n.3
ip netns add $NSS || fail "ip netns add"
NETNS+=($NSS)
ip -n $NSS link add br0 type bridge || fail "bridge"
ip -n $NSS link set br0 mtu 9000 up
for h in A B C; do
	ns=ferry$h$$
	ip netns add $ns || fail "ip netns add"
	NETNS+=($ns)
	ip link add vs$h$$ type veth peer name v$h$$ || fail "veth"
	ip link set vs$h$$ netns $NSS
	ip link set v$h$$ netns $ns
	ip -n $NSS link set vs$h$$ mtu 9000 master br0 up
	ip -n $ns link set v$h$$ mtu 9000 up
	ip -n $ns link set lo up
done
ip -n $NSA addr add $IPA/24 dev vA$$
ip -n $NSB addr add $IPB/24 dev vB$$
ip -n $NSC addr add $IPC/24 dev vC$$
ip netns exec $NSA ping -c 1 -W 2 $IPC >/dev/null || fail "the bridge does not forward"

"$FERRY" keygen "$T/key" >/dev/null || fail "keygen"

# The tree: 240 files of 0-64 KiB in 12 directories, three with hostile
# names (control bytes, 255 bytes, not UTF-8), an empty directory, and
# big.bin (40 MiB), which --split 16M cuts in 4 ranges of
# 10 MiB (chunks of 1 MiB).
python3 - "$T/src/ds" <<'PY' || fail "making the tree"
import os, random, sys
root = sys.argv[1]
rnd = random.Random(7)
for d in range(12):
    p = os.path.join(root, "d%02d" % d, "sub")
    os.makedirs(p)
    for f in range(20):
        with open(os.path.join(p, "f%03d.dat" % f), "wb") as fh:
            fh.write(rnd.randbytes(rnd.choice([0, 1, 4096, rnd.randrange(65536)])))
os.makedirs(os.path.join(root, "empty", "deeper"))
# hostile names: control bytes, a 255-byte name, bytes that are not UTF-8
for name in (b"tab\there\nnewline\x01", b"n" * 255, b"latin1-\xe9t\xe9"):
    with open(os.path.join(root.encode(), b"d00", name), "wb") as fh:
        fh.write(rnd.randbytes(1000))
with open(os.path.join(root, "big.bin"), "wb") as fh:
    for _ in range(40):
        fh.write(rnd.randbytes(1 << 20))
PY
NFILES=244
TOTAL=$(find "$T/src/ds" -type f -printf '%s\n' | awk '{ s += $1 } END { print s }')
BIG_ADLER=$(python3 -c 'import sys,zlib;print("%08x"%zlib.adler32(open(sys.argv[1],"rb").read()))' "$T/src/ds/big.bin")

# Open MPI between the ranks: shared memory, and its own setup on A's
# loopback (nothing of MPI's crosses the bridge).
export OMPI_MCA_btl=self,vader OMPI_MCA_oob_tcp_if_include=lo
if [ "$LAUNCH" = srun ]; then
	for c in srun slurmctld slurmd; do
		command -v $c >/dev/null || skip "no $c (apt-get install slurm-wlm)"
	done
	[ -e /usr/lib/x86_64-linux-gnu/slurm-wlm/mpi_pmix.so ] ||
		ls /usr/lib/*/slurm*/mpi_pmix*.so >/dev/null 2>&1 ||
		skip "this Slurm has no PMIx plugin (srun --mpi=pmix), which Open MPI needs"
	mkdir -p "$T/slurm/state" "$T/slurm/spool"
	export SLURM_CONF=$T/slurm/slurm.conf
	cat >"$SLURM_CONF" <<CONF
ClusterName=ferrytest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
AuthType=auth/none
CredType=cred/none
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$T/slurm/state
SlurmdSpoolDir=$T/slurm/spool
SlurmctldPidFile=$T/slurm/ctld.pid
SlurmdPidFile=$T/slurm/d.pid
SlurmctldLogFile=$T/slurm/ctld.log
SlurmdLogFile=$T/slurm/d.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=pmix
ReturnToService=2
SchedulerType=sched/builtin
NodeName=stagenode NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=stage Nodes=stagenode Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE
CONF
	# both in namespace A, on its loopback (PMIx reaches the tasks over
	# it). slurmd wants a cgroup file system even with proctrack/pgid and
	# task/none; `ip netns exec` hides the host's behind a sysfs of the
	# namespace's own, so it gets an empty one (a tmpfs, in that
	# command's mount namespace only) and the v1 plugin, which uses none
	printf 'CgroupPlugin=cgroup/v1\nCgroupMountpoint=/sys/fs/cgroup\n' \
		>"$T/slurm/cgroup.conf"
	ip netns exec $NSA slurmctld -i -f "$SLURM_CONF" >"$T/slurm/ctld.out" 2>&1 ||
		skip "slurmctld does not start here: $(tail -2 "$T/slurm/ctld.log" "$T/slurm/ctld.out" 2>/dev/null | tr '\n' ' ')"
	ip netns exec $NSA sh -c 'mount -t tmpfs none /sys/fs/cgroup && exec slurmd -N stagenode -f "$1"' \
		sh "$SLURM_CONF" >"$T/slurm/d.out" 2>&1 ||
		skip "slurmd does not start here: $(tail -2 "$T/slurm/d.log" "$T/slurm/d.out" 2>/dev/null | tr '\n' ' ')"
	for i in $(seq 100); do
		ip netns exec $NSA sinfo -h -o %t 2>/dev/null | grep -qx idle && break
		sleep 0.1
	done
	ip netns exec $NSA sinfo -h -o %t 2>/dev/null | grep -qx idle ||
		skip "the one-host Slurm did not come up within 10 s: $(tail -3 "$T/slurm/d.log" | tr '\n' ' ')"
	MPI=(srun -n 4 --overcommit --kill-on-bad-exit=1)
else
	MPI=(mpirun --allow-run-as-root --oversubscribe -n 4)
fi
# stage OUT [ARGS...]: ferry-stage in A to both receivers, bounded; its
# JSON in OUT, its stderr in OUT.err; returns its status.
stage() {
	local out=$1
	shift
	local x=()
	[ -n "${FERRY_DPDK:-}" ] && [ "$LAUNCH" = mpirun ] && x=(-x FERRY_DPDK)
	ip netns exec $NSA timeout -k 5 180 "${MPI[@]}" "${x[@]}" \
		"$STAGE" --key "$T/key" \
		--transport "$XP" --split 16M -l 1M --timeout 20 --json "$@" \
		"$T/src/ds" ferry://$IPB/stage ferry://$IPC/stage \
		>"$out" 2>"$out.err"
}

# same TAG: the receivers' trees, merged, equal the source
same() {
	python3 - "$T/src/ds" "$RB/stage/ds" "$RC/stage/ds" <<'PY' || bad "$1: the staged trees differ from the source"
import hashlib, os, sys
def walk(root):
    out = {}
    if not os.path.isdir(root):
        return out
    for d, dirs, files in os.walk(root.encode()):
        rel = os.path.relpath(d, root.encode())
        out[rel] = "dir"
        for f in files:
            with open(os.path.join(d, f), "rb") as fh:
                out[os.path.normpath(os.path.join(rel, f))] = hashlib.sha256(fh.read()).hexdigest()
    return out
src = walk(sys.argv[1])
got = {}
for r in sys.argv[2:]:
    for k, v in walk(r).items():
        if k in got and v != "dir":
            sys.exit("%s landed on both receivers" % k)
        got[k] = v
missing = [k for k in src if k not in got]
extra = [k for k in got if k not in src]
diff = [k for k in src if k in got and got[k] != src[k]]
if missing or extra or diff:
    sys.exit("missing %s, extra %s, different %s" % (missing[:5], extra[:5], diff[:5]))
PY
}

# check JSON TAG PUBLISHED_MIN MOVED_MAX: the summary's counts
check() {
	python3 - "$@" "$NFILES" "$TOTAL" "$BIG_ADLER" "$XP" <<'PY' || bad "$2: the summary is wrong (above; $1)"
import json, sys
path, tag, pmin, mmax, nfiles, total, adler, xp = sys.argv[1:]
r = json.load(open(path))
ok = True
def want(c, what):
    global ok
    if not c:
        print("%s: %s" % (tag, what), file=sys.stderr)
        ok = False
want(r["ranks"] == 4, "ranks %s" % r["ranks"])
want(r["files"] == int(nfiles), "files %s, want %s" % (r["files"], nfiles))
want(r["failed"] == 0 and not r["failures"], "failures %s" % r["failures"])
want(r["published"] + r["skipped"] == int(nfiles), "published %d + skipped %d" % (r["published"], r["skipped"]))
want(r["published"] >= int(pmin), "published %d, want at least %s" % (r["published"], pmin))
want(r["bytes_total"] == int(total), "bytes_total %d, want %s" % (r["bytes_total"], total))
want(r["bytes_moved"] <= int(mmax), "moved %d bytes, want at most %s" % (r["bytes_moved"], mmax))
want(sum(x["bytes_moved"] for x in r["per_rank"]) == r["bytes_moved"], "per-rank bytes do not add up")
want(all(x["ranges"] == 1 for x in r["per_rank"]), "the split file's ranges per rank: %s" % [x["ranges"] for x in r["per_rank"]])
want(all(x["transport"] == xp for x in r["per_rank"]), "transports %s" % [x["transport"] for x in r["per_rank"]])
want(r["split_files"] == 1 and len(r["split"]) == 1, "split %s" % r["split"])
if r["split"]:
    s = r["split"][0]
    want(s["path"] == "ds/big.bin" and s["ranges"] == 4, "split file %s" % s)
    want(s["status"] in ("published", "skipped"), "split file status %s" % s["status"])
    want(s["status"] == "skipped" or s["adler32"] == adler, "big.bin adler32 %s, want %s" % (s["adler32"], adler))
sys.exit(0 if ok else 1)
PY
}

# rank_pid N: the pid of rank N of the running job
rank_pid() {
	local p
	for p in $(ip netns pids $NSA); do
		tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null |
			grep -Eqx "(OMPI_COMM_WORLD_RANK|SLURM_PROCID)=$1" || continue
		grep -q ferry-stage "/proc/$p/cmdline" 2>/dev/null && { echo $p; return; }
	done
}

start_recvs() {
	local h ns ip dir
	for h in B C; do
		ns=ferry$h$$
		ip=$IPB dir=$RB
		[ $h = C ] && ip=$IPC dir=$RC
		mkdir -p "$dir"
		ip netns exec $ns env FERRY_DPDK="${DPDK_RECV/@IF@/v$h$$}" \
			timeout 600 "$FERRY" recv --key "$T/key" --transport "$XP" \
			-B $ip -d "$dir" -i 0 -q --max-sessions 8 \
			>"$T/recv$h.$XP.log" 2>&1 &
		PIDS+=($!)
		RPIDS+=($!)
		wait_listen 7471 $ns
	done
}

RPIDS=()
stop_recvs() {
	local p
	{
		for p in $(ip netns pids $NSB) $(ip netns pids $NSC); do
			kill -9 $p
		done
		wait "${RPIDS[@]}"
	} 2>/dev/null
	RPIDS=()
	# until they and their listening sockets are gone (a process that
	# unmaps DPDK's memory closes its files a moment after it has left
	# the namespace's list)
	for _ in $(seq 100); do
		[ -z "$(ip netns pids $NSB)$(ip netns pids $NSC)" ] &&
			! ip netns exec $NSB ss -Hltn "sport = :7471" | grep -q . &&
			! ip netns exec $NSC ss -Hltn "sport = :7471" | grep -q . &&
			return
		sleep 0.1
	done
	bad "the receivers did not exit within 10 s of SIGKILL"
}

run_case() {
	XP=$1 RB=$T/rb.$1 RC=$T/rc.$1
	note "$XP, $LAUNCH: staging $NFILES files ($TOTAL bytes) from 4 ranks to 2 receivers"
	start_recvs
	local cap=
	if command -v dumpcap >/dev/null && command -v tshark >/dev/null; then
		cap=$T/dscp.$XP.pcapng
		ip netns exec $NSB dumpcap -q -i vB$$ -f "src host $IPA" -w "$cap" \
			>"$cap.log" 2>&1 &
		PIDS+=($!)
		local capid=$!
		wait_grep "Capturing on" "$cap.log" 20 || bad "$XP: dumpcap did not start: $(cat "$cap.log")"
	fi
	stage "$T/s1.$XP.json" --dscp 10 || bad "$XP: ferry-stage failed: $(grep -v '^ *$' "$T/s1.$XP.json.err" | head -5)"
	check "$T/s1.$XP.json" "$XP first run" "$NFILES" "$TOTAL"
	grep -q '"dscp": 10,' "$T/s1.$XP.json" || bad "$XP: the summary does not say DSCP 10"
	if [ -n "$cap" ]; then
		sleep 0.3
		kill -INT $capid 2>/dev/null
		wait $capid 2>/dev/null
		tshark -r "$cap" -Y ip -T fields -e ip.dsfield.dscp 2>/dev/null |
			sort | uniq -c >"$cap.dscp"
		awk '$2 == 10 { n += $1 } END { exit !(n > 100) }' "$cap.dscp" ||
			bad "$XP: fewer than 100 packets from A with DSCP 10 in the capture: $(cat "$cap.dscp")"
		awk '$2 != 10 { exit 1 }' "$cap.dscp" ||
			bad "$XP: packets from A without DSCP 10: $(cat "$cap.dscp")"
		note "$XP: DSCP of A's packets on B's veth (count, value): $(tr -s ' \n' ' ' <"$cap.dscp")"
	fi
	same "$XP first run"
	for r in "$RB" "$RC"; do
		[ -z "$(find "$r/.ferry" -type f ! -name 'lock.*' 2>/dev/null)" ] ||
			bad "$XP: staging leftovers after the first run: $(find "$r/.ferry" -type f ! -name 'lock.*' | head -3)"
	done

	note "$XP: a rank killed mid-way, then a rerun"
	rm -rf "$RB/stage" "$RC/stage"
	# paced (40 Mb/s a rank): each 10 MiB range takes about 2 s
	stage "$T/s2.$XP.json" -b 160M &
	local job=$! victim= i
	# once a range of big.bin has verified chunks in its journal
	# (60 s at most: mpirun's start under a sanitizer on a loaded host)
	for i in $(seq 1200); do
		[ -n "$(find "$RB/.ferry" -name '*.jrnl' -size +0 2>/dev/null)" ] && break
		kill -0 $job 2>/dev/null || break
		sleep 0.05
	done
	sleep 0.5
	for i in $(seq 200); do
		victim=$(rank_pid 2)
		[ -n "$victim" ] && break
		kill -0 $job 2>/dev/null || break
		sleep 0.05
	done
	[ -n "$victim" ] || bad "$XP: rank 2 was not found running"
	[ -n "$victim" ] && kill -9 "$victim"
	wait $job && bad "$XP: the job with a killed rank exited 0"
	# what is under a final name is whole; big.bin is not there yet
	python3 - "$T/src/ds" "$RB/stage/ds" "$RC/stage/ds" <<'PY' >"$T/pub.$XP" || bad "$XP: a partial file under a final name after the kill"
import os, sys
src, have = sys.argv[1], 0
for r in sys.argv[2:]:
    for d, _, files in os.walk(r):
        for f in files:
            p = os.path.join(d, f)
            q = os.path.join(src, os.path.relpath(p, r))
            if open(p, "rb").read() != open(q, "rb").read():
                sys.exit("%s differs from its source" % p)
            have += os.path.getsize(p)
print(have)
PY
	local had=$(cat "$T/pub.$XP" 2>/dev/null || echo 0)
	[ -e "$RB/stage/ds/big.bin" ] && bad "$XP: big.bin was published before the kill (pace the job slower)"
	stage "$T/s3.$XP.json" || bad "$XP: the rerun failed: $(grep -v '^ *$' "$T/s3.$XP.json.err" | head -5)"
	# less than what was missing: the journals kept the verified chunks
	check "$T/s3.$XP.json" "$XP rerun" 1 $((TOTAL - had - 1))
	same "$XP rerun"
	for r in "$RB" "$RC"; do
		[ -z "$(find "$r/.ferry" -type f ! -name 'lock.*' 2>/dev/null)" ] ||
			bad "$XP: staging leftovers after the rerun"
	done
	note "$XP: $had bytes were published before the kill; the rerun moved $(python3 -c 'import json,sys;print(json.load(open(sys.argv[1]))["bytes_moved"])' "$T/s3.$XP.json" 2>/dev/null) of the $((TOTAL - had)) missing"
	stop_recvs
}

DPDK_RECV=
case " $XPORTS " in *" tcp "*) run_case tcp ;; esac

# uroce: every rank its own DPDK port on A's veth (af_packet; --in-memory
# is libferry's default, so the processes do not collide)
if [[ " $XPORTS " != *" uroce "* ]]; then
	:
elif env -u FERRY_DPDK "$FERRY" bench --transport uroce -n 1M 127.0.0.1:1 2>&1 |
	grep -q "not in this build"; then
	echo "uroce: this build has no uroce transport; its half is skipped" >&2
else
	[ "${HP_WAS:-0}" -lt 1024 ] 2>/dev/null && echo 1024 >$HP_FILE 2>/dev/null
	free=$(awk '/^HugePages_Free/ { print $2 }' /proc/meminfo)
	MEM=
	[ "${free:-0}" -ge 600 ] 2>/dev/null || MEM="--no-huge -m 256"
	AFP="framesz=16384,blocksz=16384,framecnt=512"
	export FERRY_DPDK="--vdev=net_af_packet0,iface=vA$$,$AFP $MEM"
	DPDK_RECV="--vdev=net_af_packet0,iface=@IF@,$AFP $MEM"
	run_case uroce
fi

# The library example (docs/examples/mpi_stage.c): 3 ranks each write
# their part and send it themselves; every part lands whole.
if [ "$LAUNCH" = mpirun ] && [[ " $XPORTS " == *" tcp "* ]]; then
	EX=$BUILD/apps/stage/mpi_stage
	XP=tcp RB=$T/rb.ex RC=$T/rc.ex DPDK_RECV=
	unset FERRY_DPDK
	note "docs/examples/mpi_stage.c under mpirun, 3 ranks"
	start_recvs
	mkdir -p "$T/out"
	ip netns exec $NSA env FERRY_KEY="$T/key" FERRY_TRANSPORT=tcp \
		timeout -k 5 120 mpirun --allow-run-as-root --oversubscribe -n 3 "$EX" "$T/out" \
		ferry://$IPB/job >"$T/ex.out" 2>&1 ||
		bad "mpi_stage failed: $(grep -v '^ *$' "$T/ex.out" | head -3); the receiver said: $(cat "$T/recvB.tcp.log")"
	grep -q "3 of 3 parts staged" "$T/ex.out" ||
		bad "mpi_stage's summary: $(cat "$T/ex.out")"
	for r in 0 1 2; do
		cmp -s "$T/out/part-$r.dat" "$RB/job/part-$r.dat" ||
			bad "mpi_stage: part $r did not land whole"
	done
	stop_recvs
fi
finish
