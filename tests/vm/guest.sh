#!/bin/bash
# Second stage of a ferry test guest, run by tests/vm/init in a chroot of
# the host's root (so the host's build runs unchanged), with one argument:
# the environment file tests/vm/vm.sh wrote for this guest (VM_NAME,
# VM_RUN, VM_IP, VM_PEER_IP, VM_KROOT, VM_SCRIPTS, VM_TIMEOUT).
#
# It loads the kernel's RDMA stack from the unpacked kernel (VM_KROOT:
# never installed on the host, so modprobe is pointed at it by
# /run/ferry-modprobe, which the kernel's own module loader runs too),
# brings up eth0 with VM_IP and MTU 9000, adds the soft-RoCE device rxe0
# on it, waits for its port to be ACTIVE, and runs each of VM_SCRIPTS in
# turn, each bounded by VM_TIMEOUT seconds, with VM_CASE set to its name.
# Set-up output goes to VM_RUN/VM_NAME.log; a script's output to
# VM_RUN/VM_NAME.CASE.log and its exit status to VM_RUN/VM_NAME.CASE.rc,
# where the host reads them; VM_RUN/VM_NAME.rc says the guest is done.
set -u
. "$1" || { echo "ferry-vm: cannot read $1"; exit 1; }
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
LOG=$VM_RUN/$VM_NAME.log
: >"$LOG"

setup() {
	local i mp=/run/ferry-modprobe
	mkdir -p /dev/pts /dev/shm
	# devtmpfs has no /dev/fd (bash's <(...) needs it) nor std* links
	ln -sf /proc/self/fd /dev/fd
	ln -sf /proc/self/fd/0 /dev/stdin
	ln -sf /proc/self/fd/1 /dev/stdout
	ln -sf /proc/self/fd/2 /dev/stderr
	mount -t devpts devpts /dev/pts
	mount -t tmpfs shm /dev/shm
	mkdir -p /dev/hugepages
	mount -t hugetlbfs hugetlbfs /dev/hugepages
	hostname "ferry-$VM_NAME"
	printf '#!/bin/sh\nexec /sbin/modprobe -d %s "$@"\n' "$VM_KROOT" >$mp
	chmod 755 $mp
	$mp -a virtio_net rdma_rxe ib_uverbs rdma_ucm || return 1
	ip link set lo up
	for i in $(seq 50); do
		[ -e /sys/class/net/eth0 ] && break
		sleep 0.1
	done
	ip link set eth0 mtu 9000 up || return 1
	ip addr add "$VM_IP/24" dev eth0 || return 1
	rdma link add rxe0 type rxe netdev eth0 || return 1
	for i in $(seq 100); do
		grep -qs ACTIVE /sys/class/infiniband/rxe0/ports/1/state && break
		sleep 0.1
	done
	grep -qs ACTIVE /sys/class/infiniband/rxe0/ports/1/state || {
		echo "rxe0's port is not ACTIVE: $(cat /sys/class/infiniband/rxe0/ports/1/state)"
		return 1
	}
	ulimit -l unlimited
}

status=0
if setup >>"$LOG" 2>&1; then
	cd "$VM_RUN"
	for s in "${VM_SCRIPTS[@]}"; do
		export VM_CASE
		VM_CASE=$(basename "$s" .sh)
		VM_CASE=${VM_CASE//[^A-Za-z0-9_-]/_}
		timeout -k 5 "$VM_TIMEOUT" bash "$s" >"$VM_RUN/$VM_NAME.$VM_CASE.log" 2>&1 </dev/null
		rc=$?
		[ $rc -eq 124 ] && echo "ferry-vm: $s ran past $VM_TIMEOUT s" >>"$VM_RUN/$VM_NAME.$VM_CASE.log"
		echo $rc >"$VM_RUN/$VM_NAME.$VM_CASE.rc"
		[ $rc -eq 0 ] || [ $rc -eq 77 ] || status=1
	done
else
	echo "ferry-vm: the guest's RDMA setup failed" >>"$LOG"
	status=99
fi
echo $status >"$VM_RUN/$VM_NAME.rc"
sync
exit $status
