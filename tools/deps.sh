#!/usr/bin/env bash
# Install the Debian packages ferry builds and tests with, when missing.
# As root it runs apt-get; otherwise it prints the command to run.
set -euo pipefail

pkgs=(
	meson ninja-build pkg-config gcc make
	libssl-dev libisal-dev libcunit1-dev libnuma-dev
	libibverbs-dev librdmacm-dev ibverbs-utils libdpdk-dev
	iproute2 procps psmisc iputils-ping iperf3 python3 python3-scapy clang valgrind
	dpdk-dev tshark # uroce: dpdk-testpmd (bench/uroce_ceiling.sh), captures
	qperf gnuplot-nox # bench/osu_compare.sh: the reference, the plots
	man-db groff-base systemd # man page checks, systemd-analyze verify of the unit
	libmicrohttpd-dev python3-prometheus-client curl # --metrics, its test
	libgfal2-dev gfal2-util-scripts python3-gfal2-util python3-gfal2 gfal2-plugin-file # the gfal2 plugin, its tests
)

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "ferry: missing packages; run as root:" >&2
	echo "  apt-get update && apt-get install -y ${missing[*]}" >&2
	exit 1
fi
echo "ferry: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y -q "${missing[@]}" >/tmp/ferry-apt.log 2>&1; then
	apt-get update -q >/dev/null
	apt-get install -y -q "${missing[@]}" >/tmp/ferry-apt.log 2>&1 || {
		echo "ferry: apt-get failed; see /tmp/ferry-apt.log" >&2
		tail -5 /tmp/ferry-apt.log >&2
		exit 1
	}
fi
