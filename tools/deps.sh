#!/usr/bin/env bash
# Install the Debian packages ferry builds and tests with, when missing.
# As root it runs apt-get; otherwise it prints the command to run. Only
# what the list names and what it depends on: packages merely recommended
# are left out (on a bookworm root: 257 MB to fetch and 1.2 GB unpacked,
# against 715 MB and 3.1 GB with them), so whatever a test or benchmark
# runs is named here.
set -euo pipefail

pkgs=(
	meson ninja-build pkg-config gcc make
	libssl-dev libisal-dev libcunit1-dev libnuma-dev
	libibverbs-dev librdmacm-dev ibverbs-utils libdpdk-dev
	iproute2 procps psmisc iputils-ping ethtool iperf3 python3 python3-scapy valgrind
	clang libclang-rt-dev # the fuzz suite: clang and its libFuzzer runtime
	dpdk-dev tshark # uroce: dpdk-testpmd (bench/uroce_ceiling.sh), captures
	qperf gnuplot-nox # bench/osu_compare.sh: the reference, the plots
	man-db groff-base systemd # man page checks, systemd-analyze verify of the unit
	libmicrohttpd-dev python3-prometheus-client curl # --metrics, its test
	libgfal2-dev gfal2-util-scripts python3-gfal2-util python3-gfal2 gfal2-plugin-file # the gfal2 plugin, its tests
	qemu-system-x86 busybox-static cpio kmod # tests/vm: rxe guests (and the kernel, below)
	perftest # bench/verbs_vs_perftest.sh
	liburing-dev # bench/small_file_floor.sh: its io_uring column
	xrootd-server xrootd-client # the reference for ferry's checksum lines
	dpkg-dev build-essential debhelper lintian mmdebstrap git # make deb, the package install test
	libopenmpi-dev openmpi-bin slurm-wlm # ferry-stage, its mpirun and srun tests
)

# The guests of tests/vm boot Debian's packaged kernel, fetched with
# apt-get download and unpacked into a cache, never installed
# (tests/vm/kernel.sh). Without it the guest tests skip and say why.
guest_kernel() {
	[ "$(id -u)" -eq 0 ] || return 0
	"$(dirname "$0")/../tests/vm/kernel.sh" >/dev/null ||
		echo "ferry: the guest kernel for tests/vm is not ready (above); its tests will skip" >&2
	return 0
}

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
	guest_kernel
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "ferry: missing packages; run as root:" >&2
	echo "  apt-get update && apt-get install -y --no-install-recommends ${missing[*]}" >&2
	exit 1
fi
echo "ferry: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y -q --no-install-recommends "${missing[@]}" >/tmp/ferry-apt.log 2>&1; then
	apt-get update -q >/dev/null
	apt-get install -y -q --no-install-recommends "${missing[@]}" >/tmp/ferry-apt.log 2>&1 || {
		echo "ferry: apt-get failed; see /tmp/ferry-apt.log" >&2
		tail -5 /tmp/ferry-apt.log >&2
		exit 1
	}
fi
guest_kernel
