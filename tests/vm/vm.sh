# The guest harness (sourced by the tests in tests/vm/): Debian's packaged
# kernel in qemu, with the kernel's soft-RoCE (rdma_rxe) on a virtio NIC,
# the host's root as the guest's root (so the build runs unchanged), and
# a script run inside; its status and output come back.
#
#   vm_init                     check what it needs; exit 77 with the
#                               reason where it cannot run
#   vm_one SCRIPT...            one guest: client and server meet on rxe0
#                               (rxe's loopback path)
#   vm_two SCRIPT...            two guests, a and b, joined by a qemu
#                               socket link: a real RoCEv2 Ethernet link
#
# A boot costs seconds under TCG, so a guest runs several scripts in turn
# (guest.sh). They run as root in the guest (bash, cwd a run directory
# shared with the host and with the other guest), each bounded by
# VM_TIMEOUT seconds, with BUILD, SRC, VM_NAME (a or b), VM_CASE (the
# script's name), VM_IP, VM_PEER_IP (two guests) and VM_RUN (the shared
# directory) set; tests/vm/glib.sh has helpers for them. vm_one and
# vm_two print each script's output from each guest and one line per
# script, add the failed ones to VM_FAILED (and those that exited 77, not
# able to run there, to VM_SKIPPED), and return 0 when none failed (in
# either guest); a guest that did not come up shows its console's end.
# Every qemu is killed by the EXIT trap.
#
# Environment: FERRY_VM_CACHE (the kernel cache, see kernel.sh),
# FERRY_VM_ACCEL (kvm or tcg; default kvm where /dev/kvm opens and the CPU
# offers virtualisation), FERRY_VM_MEM (MiB per guest, 1024), VM_TIMEOUT
# (seconds per guest script, 240), VM_PASS (names of variables to pass on
# to the guests' scripts).
. "$(dirname "${BASH_SOURCE[0]}")/../integration/lib.sh"

VM_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SRC=${SRC:-$(cd "$VM_HERE/../.." && pwd)}
VM_TIMEOUT=${VM_TIMEOUT:-240}
VM_MEM=${FERRY_VM_MEM:-1024}
VM_QEMU=()        # pids of the guests of this test (lib.sh's EXIT trap
		  # kills them: they are in PIDS too)
VM_BOOTS=0        # guests booted, to name run directories

vm_init() {
	local q rc
	# 9p passthrough: what the guest's root writes into the shared run
	# directory is made with its owner, which only root may set
	[ "$(id -u)" -eq 0 ] ||
		skip "needs root (qemu shares the host's root with the guest, and the guest's root user owns what it writes)"
	q=$(command -v qemu-system-x86_64) ||
		skip "no qemu-system-x86_64 (tools/deps.sh installs qemu-system-x86)"
	VM_QEMU_BIN=$q
	[ -x /bin/busybox ] && ! ldd /bin/busybox >/dev/null 2>&1 ||
		skip "no static /bin/busybox for the guest's initramfs (apt-get install busybox-static)"
	command -v cpio >/dev/null || skip "no cpio (apt-get install cpio)"
	command -v rdma >/dev/null || skip "no rdma tool (iproute2) for adding rxe0 in the guest"
	grep -q ferry__xport_verbs "$BUILD/lib/xport/xport_list.h" 2>/dev/null ||
		skip "this build has no verbs transport (meson did not find libibverbs and librdmacm)"
	VM_KDIR=$("$VM_HERE/kernel.sh" 2>"$T/kernel.err")
	rc=$?
	if [ $rc -eq 77 ]; then
		skip "$(sed -n 's/^SKIP: //p' "$T/kernel.err")"
	elif [ $rc -ne 0 ]; then
		fail "preparing the guest kernel: $(cat "$T/kernel.err")"
	fi
	VM_KVER=$(cat "$VM_KDIR/version")
	case ${FERRY_VM_ACCEL:-} in
	kvm|tcg) VM_ACCEL=$FERRY_VM_ACCEL ;;
	# /dev/kvm alone is not enough: inside a VM without nested
	# virtualisation it opens, yet a guest hangs in its first steps.
	'') if [ -r /dev/kvm ] && [ -w /dev/kvm ] && grep -Eqw 'vmx|svm' /proc/cpuinfo; then
		VM_ACCEL=kvm
	    else
		VM_ACCEL=tcg
	    fi ;;
	*) fail "FERRY_VM_ACCEL=$FERRY_VM_ACCEL: kvm or tcg" ;;
	esac
	# TCG's default CPU lacks instructions the host's build uses;
	# under KVM, "max" asks for MSRs a nested host may refuse.
	VM_CPU=max
	[ $VM_ACCEL = kvm ] && VM_CPU=host
	vm_initrd
	note "guest: Debian kernel $VM_KVER, qemu $VM_ACCEL"
}

# The initramfs: busybox, the cached virtio and 9p modules, tests/vm/init.
vm_initrd() {
	local d=$T/initrd a
	mkdir -p "$d"/{bin,dev,proc,sys,newroot,mods}
	cp /bin/busybox "$d/bin/"
	for a in sh mount insmod chroot poweroff cat echo chmod printf; do
		ln -s busybox "$d/bin/$a"
	done
	cp "$VM_KDIR"/initrd-mods/* "$d/mods/"
	cp "$VM_HERE/init" "$d/init"
	chmod 755 "$d/init"
	(cd "$d" && find . | cpio -o -H newc --quiet) >"$T/initrd.cpio" ||
		fail "packing the initramfs"
	rm -rf "$d"
}

# vm_start NAME IP PEER_IP NETDEV SCRIPT...: boot a guest in the
# background (its pid in VM_QEMU); results go to $VM_RUN (guest.sh).
vm_start() {
	local name=$1 ip=$2 peer=$3 netdev=$4 mac v
	shift 4
	mac=52:54:00:fe:00:0$([ "$name" = b ] && echo 2 || echo 1)
	{
		printf 'VM_NAME=%q\nVM_IP=%q\nVM_PEER_IP=%q\n' "$name" "$ip" "$peer"
		printf 'VM_RUN=%q\nVM_KROOT=%q\nVM_TIMEOUT=%q\n' "$VM_RUN" "$VM_KDIR/root" "$VM_TIMEOUT"
		printf 'VM_SCRIPTS=('; printf '%q ' "$@"; printf ')\n'
		printf 'export VM_NAME VM_IP VM_PEER_IP VM_RUN\n'
		printf 'export BUILD=%q SRC=%q\n' "$BUILD" "$SRC"
		for v in ${VM_PASS:-}; do
			printf 'export %s=%q\n' "$v" "${!v}"
		done
	} >"$VM_RUN/$name.env"
	"$VM_QEMU_BIN" -accel "$VM_ACCEL" -cpu "$VM_CPU" -smp 2 -m "$VM_MEM" \
		-nodefaults -display none -no-reboot \
		-kernel "$VM_KDIR/vmlinuz" -initrd "$T/initrd.cpio" \
		-append "console=ttyS0 quiet panic=-1 ferry.stage2=$VM_HERE/guest.sh ferry.env=$VM_RUN/$name.env ferry.run=$VM_RUN" \
		-fsdev local,id=r,path=/,security_model=passthrough,multidevs=remap \
		-device virtio-9p-pci,fsdev=r,mount_tag=host \
		-fsdev local,id=run,path="$VM_RUN",security_model=passthrough \
		-device virtio-9p-pci,fsdev=run,mount_tag=run \
		-netdev "$netdev" -device virtio-net-pci,netdev=n0,mac=$mac \
		-serial "file:$VM_RUN/$name.console" \
		>"$VM_RUN/$name.qemu" 2>&1 &
	VM_QEMU+=($!)
	PIDS+=($!)
}

# vm_wait NAME PID NSCRIPTS: wait for a guest to power off (NSCRIPTS x
# VM_TIMEOUT + 60 s at most, then kill it). 0 when it ran its scripts, 1
# (with qemu's words and the console's end) when it did not.
vm_wait() {
	local name=$1 pid=$2 limit=$(($3 * VM_TIMEOUT + 60)) i
	for i in $(seq $((limit * 5))); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.2
	done
	if kill -0 "$pid" 2>/dev/null; then
		echo "guest $name: still running $limit s after it started; killed" >&2
		kill -9 "$pid" 2>/dev/null
	fi
	wait "$pid" 2>/dev/null
	[ -s "$VM_RUN/$name.log" ] && sed "s/^/[$name] /" "$VM_RUN/$name.log"
	if [ ! -s "$VM_RUN/$name.rc" ] || [ "$(cat "$VM_RUN/$name.rc")" = 99 ]; then
		echo "guest $name: did not run its scripts; qemu said:" >&2
		sed "s/^/  /" "$VM_RUN/$name.qemu" >&2
		echo "guest $name: console:" >&2
		tail -n 40 "$VM_RUN/$name.console" 2>/dev/null | sed "s/^/  /" >&2
		return 1
	fi
	return 0
}

# vm_report SHAPE "GUESTS" SCRIPT...: each script's output from each
# guest, and one line per script; the failed ones go to VM_FAILED, the
# skipped ones (exit 77 in every guest, with the reason) to VM_SKIPPED.
vm_report() {
	local shape=$1 guests=$2 g c rc ok skips
	shift 2
	for c in "$@"; do
		c=$(basename "$c" .sh)
		c=${c//[^A-Za-z0-9_-]/_}
		ok=1
		skips=0
		for g in $guests; do
			[ -s "$VM_RUN/$g.$c.log" ] && sed "s/^/[$g:$c] /" "$VM_RUN/$g.$c.log"
			rc=$(cat "$VM_RUN/$g.$c.rc" 2>/dev/null || echo none)
			if [ "$rc" = 77 ]; then
				skips=$((skips + 1))
			elif [ "$rc" != 0 ]; then
				ok=0
				echo "guest $g: $c exited $rc" >&2
			fi
		done
		if [ $ok = 1 ] && [ $skips -eq $(echo $guests | wc -w) ]; then
			note "$c in $shape: skipped"
			VM_SKIPPED+=("$c in $shape")
		elif [ $ok = 1 ] && [ $skips -eq 0 ]; then
			note "$c in $shape: passed"
		else
			note "$c in $shape: FAILED"
			VM_FAILED+=("$c in $shape")
		fi
	done
}
VM_FAILED=()
VM_SKIPPED=()

vm_newrun() {
	VM_BOOTS=$((VM_BOOTS + 1))
	VM_RUN=$T/run$VM_BOOTS
	mkdir -p "$VM_RUN"
	"$FERRY" keygen "$VM_RUN/key" >/dev/null || fail "ferry keygen"
	VM_NET=198.18.$(( ($$ + VM_BOOTS) % 200 + 20 ))
}

# vm_one SCRIPT...: one guest runs the scripts; 0 when all passed.
vm_one() {
	local t0=$SECONDS n=${#VM_FAILED[@]}
	vm_newrun
	note "one guest ($VM_NET.1 on rxe0, the loopback path): $(basename -a "$@" | paste -sd' ')"
	vm_start a "$VM_NET.1" "" "hubport,id=n0,hubid=0" "$@"
	vm_wait a "${VM_QEMU[-1]}" $# || VM_FAILED+=("guest a of one")
	vm_report "one guest" a "$@"
	note "one guest: done after $((SECONDS - t0)) s"
	[ ${#VM_FAILED[@]} -eq "$n" ]
}

# vm_two SCRIPT...: guests a and b on a socket link both run the scripts
# (each script plays a's part or b's: glib.sh); 0 when all passed.
vm_two() {
	local t0=$SECONDS n=${#VM_FAILED[@]} port pa= pb i
	vm_newrun
	note "two guests on a socket link ($VM_NET.1, $VM_NET.2): $(basename -a "$@" | paste -sd' ')"
	for i in 1 2 3; do  # a port someone else takes meanwhile: again
		port=$(free_port)
		vm_start a "$VM_NET.1" "$VM_NET.2" "socket,id=n0,listen=127.0.0.1:$port" "$@"
		pa=${VM_QEMU[-1]}
		for _ in $(seq 100); do
			ss -Hltn "sport = :$port" | grep -q . && break
			kill -0 "$pa" 2>/dev/null || break
			sleep 0.05
		done
		ss -Hltn "sport = :$port" | grep -q . && break
		kill -9 "$pa" 2>/dev/null
		wait "$pa" 2>/dev/null
		pa=
	done
	[ -n "$pa" ] || { cat "$VM_RUN/a.qemu" >&2; fail "guest a did not listen on a socket link port"; }
	vm_start b "$VM_NET.2" "$VM_NET.1" "socket,id=n0,connect=127.0.0.1:$port" "$@"
	pb=${VM_QEMU[-1]}
	vm_wait a "$pa" $# || VM_FAILED+=("guest a of two")
	vm_wait b "$pb" $# || VM_FAILED+=("guest b of two")
	vm_report "two guests" "a b" "$@"
	note "two guests: done after $((SECONDS - t0)) s"
	[ ${#VM_FAILED[@]} -eq "$n" ]
}
