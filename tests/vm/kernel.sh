#!/usr/bin/env bash
# Fetch Debian's packaged kernel for the guest harness, and the modules
# its initramfs needs, once, into a cache directory:
#
#   tests/vm/kernel.sh [CACHE]     prints the prepared directory
#
# The kernel is the one Debian's linux-image-amd64 depends on
# (linux-image-6.1.0-NN-amd64 on Debian 12), fetched with
# `apt-get download` and unpacked with `dpkg-deb -x`: it is never
# installed, the host keeps its own kernel. The `-cloud-amd64` flavour
# would not do: it lacks rdma_rxe and 9p.
#
# CACHE defaults to $FERRY_VM_CACHE, else /var/cache/ferry-vm. The result
# is CACHE/VERSION/ with vmlinuz, root/lib/modules/VERSION (depmod'ed),
# initrd-mods/ (the virtio and 9p modules the initramfs loads) and a
# `ready` file; a second call finds it and only prints it. Concurrent
# callers wait on a lock. Root is not needed where CACHE is writable.
# FERRY_VM_KERNEL names another version. Exit status: 0, or 77 with the
# reason on stderr when it cannot be done here (not Debian, no apt, a
# cache this user cannot write), 1 when a step failed.
set -euo pipefail

CACHE=${1:-${FERRY_VM_CACHE:-/var/cache/ferry-vm}}

skip() { echo "SKIP: $*" >&2; exit 77; }
die() { echo "tests/vm/kernel.sh: $*" >&2; exit 1; }

# The modules the initramfs loads, in this order, before it can mount the
# host's root over virtio 9p (each needs those before it).
INITRD_MODS=(virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev
	virtio_pci netfs fscache 9pnet 9pnet_virtio 9p)

# The version linux-image-amd64 depends on (6.1.0-NN-amd64 on Debian 12);
# FERRY_VM_KERNEL overrides.
kernel_version() {
	local v
	if [ -n "${FERRY_VM_KERNEL:-}" ]; then
		echo "$FERRY_VM_KERNEL"
		return
	fi
	command -v apt-cache >/dev/null || skip "no apt-cache: the guest kernel comes from Debian's linux-image-amd64 package"
	v=$(apt-cache depends linux-image-amd64 2>/dev/null |
		sed -n 's/^ *Depends: linux-image-\([0-9.]*-[0-9]*-amd64\)$/\1/p' | head -n 1)
	[ -n "$v" ] || skip "apt-cache knows no linux-image-amd64 (not Debian, or apt-get update never ran)"
	echo "$v"
}

# A cached kernel of any version, for hosts where apt cannot answer.
cached() {
	local d
	for d in "$CACHE"/*/ready; do
		[ -e "$d" ] && { dirname "$d"; return 0; }
	done
	return 1
}

if [ -z "${FERRY_VM_KERNEL:-}" ] && ! command -v apt-cache >/dev/null; then
	cached && exit 0
fi
VER=$(kernel_version)
DIR=$CACHE/$VER
if [ -e "$DIR/ready" ]; then
	echo "$DIR"
	exit 0
fi

mkdir -p "$CACHE" 2>/dev/null && [ -w "$CACHE" ] ||
	skip "the guest kernel $VER is not in $CACHE, which this user cannot write (run tools/deps.sh as root, or set FERRY_VM_CACHE to a writable directory)"
for t in apt-get dpkg-deb depmod modinfo; do
	command -v $t >/dev/null || skip "no $t (tools/deps.sh installs it)"
done

exec 9>"$CACHE/.lock"
flock -w 600 9 || die "waited 10 min for $CACHE/.lock"
if [ -e "$DIR/ready" ]; then  # another caller made it meanwhile
	echo "$DIR"
	exit 0
fi

W=$(mktemp -d "$CACHE/.new.XXXXXX")
trap 'rm -rf "$W"' EXIT
echo "ferry vm: fetching linux-image-$VER (apt-get download, not installed)" >&2
# _apt downloads into a directory it can write; ours is root's
chmod 755 "$W"
fetch() { (cd "$W" && apt-get download -q "linux-image-$VER" >"$W/apt.log" 2>&1); }
if ! fetch; then
	# stale package lists (the archive moved on to a newer ABI), or no
	# network: refresh, take the version the lists now name, and as a
	# last resort a kernel fetched earlier
	apt-get update -q >/dev/null 2>&1
	VER=$(kernel_version)
	DIR=$CACHE/$VER
	if [ -e "$DIR/ready" ]; then
		echo "$DIR"
		exit 0
	fi
	if ! fetch; then
		if old=$(cached); then
			echo "ferry vm: cannot fetch linux-image-$VER ($(tail -n 1 "$W/apt.log")); using $old" >&2
			echo "$old"
			exit 0
		fi
		die "apt-get download linux-image-$VER failed: $(tail -n 3 "$W/apt.log")"
	fi
fi
dpkg-deb -x "$W"/linux-image-"$VER"_*.deb "$W/root"
rm -f "$W"/linux-image-"$VER"_*.deb "$W/apt.log"
[ -f "$W/root/boot/vmlinuz-$VER" ] || die "no boot/vmlinuz-$VER in the package"
grep -q '^CONFIG_RDMA_RXE=m' "$W/root/boot/config-$VER" ||
	die "linux-image-$VER has no rdma_rxe (CONFIG_RDMA_RXE)"
depmod -b "$W/root" "$VER"

# The modules the initramfs needs, uncompressed, with their load order;
# tests/vm/vm.sh packs them with busybox and tests/vm/init at each run
# (a second, so that a change to init needs no new cache).
mkdir -p "$W/initrd-mods"
for m in "${INITRD_MODS[@]}"; do
	f=$(modinfo -b "$W/root" -k "$VER" -n "$m" 2>/dev/null) ||
		die "module $m is not in linux-image-$VER"
	[ "$f" = "(builtin)" ] && continue
	case $f in
	*.ko) cp "$f" "$W/initrd-mods/$m.ko" ;;
	*.ko.xz) xz -dc "$f" >"$W/initrd-mods/$m.ko" ;;
	*.ko.zst) zstd -qdc "$f" >"$W/initrd-mods/$m.ko" ;;
	*) die "module $m: unexpected file $f" ;;
	esac
	echo "$m" >>"$W/initrd-mods/order"
done
cp "$W/root/boot/vmlinuz-$VER" "$W/vmlinuz"
echo "$VER" >"$W/version"
touch "$W/ready"
rm -rf "$DIR"
mv "$W" "$DIR"
trap - EXIT
echo "ferry vm: kernel $VER ready in $DIR" >&2
echo "$DIR"
