# shellcheck shell=bash
# Shared helpers for the benchmarks that copy a set of files from one tmpfs
# to another, between the namespaces of make_pair, against an XRootD server
# (bench/files_vs_xrdcp.sh, bench/gfal_copy.sh). Sourced after common.sh
# (bash):
#   check_file_set_settings         SIZE_MB, NFILES, REPS, QUIET_WAIT valid?
#   need_tmpfs_mem TOTAL_MB         enough free memory for two sets on tmpfs?
#   mount_pair_tmpfs PREFIX TOTAL_MB  $SRC and $DST, two fresh tmpfs mounts
#   make_file_set NFILES SIZE_MB DIR  the random files, listed in $FILES
#   verify_set DIR LABEL            DIR holds exactly the set, byte for byte
#   xrootd_config EXPORT / xrootd_start LIMIT   an xrootd in $NSB
#   another_try N                   after a failed try: one more (of N)?
#   tail_err FILE, why_rc RC LIMIT  for error messages
#   files_cleanup                   bench_cleanup, then the mounts
# Sourcing sets the EXIT trap to files_cleanup; a script that sets its own
# must call files_cleanup from it.

# The settings both share (environment; see the scripts' headers): NFILES
# files of SIZE_MB MiB, the whole set REPS times, and before each copy a
# wait of up to QUIET_WAIT seconds for a quiet host.
SIZE_MB=${SIZE_MB:-1024}
NFILES=${NFILES:-4}
REPS=${REPS:-1}
QUIET_WAIT=${QUIET_WAIT:-60}
MOUNTS=()
MOUNT_DIRS=()
# xrootd's port, and its directory: config, log, admin and pid paths.
XRD_PORT=1094
XRD_HOME=$T/xrd

# files_cleanup: as bench_cleanup (the processes first: they hold the
# mounts, then the namespaces), then unmount the tmpfs mounts and remove
# their mount points.
# shellcheck disable=SC2317 # called by the EXIT trap
files_cleanup() {
	local m
	bench_cleanup
	for m in "${MOUNTS[@]:-}"; do
		[ -n "$m" ] || continue
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null ||
			echo "WARNING: could not unmount $m" >&2
	done
	for m in "${MOUNT_DIRS[@]:-}"; do
		[ -n "$m" ] && [ -d "$m" ] && ! mountpoint -q "$m" && rmdir "$m" 2>/dev/null
	done
	return 0
}
trap files_cleanup EXIT

# check_file_set_settings: dies unless those settings are whole numbers
# (all but QUIET_WAIT above 0).
check_file_set_settings() {
	[[ "$SIZE_MB" =~ ^[1-9][0-9]*$ ]] || die "SIZE_MB must be a positive whole number of MiB"
	[[ "$NFILES" =~ ^[1-9][0-9]*$ ]] || die "NFILES must be a positive integer"
	[[ "$REPS" =~ ^[1-9][0-9]*$ ]] || die "REPS must be a positive integer"
	[[ "$QUIET_WAIT" =~ ^[0-9]+$ ]] || die "QUIET_WAIT must be a whole number of seconds"
}

# tail_err FILE: the last lines of a log, indented, for error messages.
tail_err() { [ -s "$1" ] && tail -n 8 "$1" | sed 's/^/    /' >&2; }
# why_rc RC LIMIT: an exit status (of a command run under timeout LIMIT) in
# words.
why_rc() {
	case $1 in
	124|137) echo "timed out after $2 s" ;;
	*) echo "exit $1" ;;
	esac
}

# need_tmpfs_mem TOTAL_MB: the source set and one copy of it live in RAM
# (tmpfs); dies unless that and 1 GiB more is available.
need_tmpfs_mem() {
	local total=$1 avail need
	avail=$(awk '/^MemAvailable:/ { print int($2 / 1024) }' /proc/meminfo)
	need=$((2 * total + 1024))
	[ "$avail" -ge "$need" ] ||
		die "needs about $need MiB of free memory (2 x $total MiB on tmpfs + 1 GiB), $avail MiB available: lower SIZE_MB"
}

# mount_pair_tmpfs PREFIX TOTAL_MB: a tmpfs for the source set at
# SRC=/tmp/PREFIX-src.PID and one for the copies at DST=/tmp/PREFIX-dst.PID,
# room for TOTAL_MB MiB each (and some); both go away on exit.
mount_pair_tmpfs() {
	local prefix=$1 total=$2
	SRC=/tmp/$prefix-src.$$
	DST=/tmp/$prefix-dst.$$
	MOUNT_DIRS+=("$SRC" "$DST")
	mkdir "$SRC" "$DST" || die "mkdir $SRC $DST (left over from another run?)"
	mount -t tmpfs -o size=$((total + 64))m,mode=755 "$prefix-src" "$SRC" || die "mount tmpfs on $SRC"
	MOUNTS+=("$SRC")
	mount -t tmpfs -o size=$((total + 256))m,mode=755 "$prefix-dst" "$DST" || die "mount tmpfs on $DST"
	MOUNTS+=("$DST")
}

# make_file_set NFILES SIZE_MB DIR: DIR/f1.dat .. DIR/fNFILES.dat, SIZE_MB
# MiB of random data each; their paths in FILES.
make_file_set() {
	local n=$1 size=$2 dir=$3 i f
	note "making $n x $size MiB of random data in $dir"
	FILES=()
	for i in $(seq "$n"); do
		f=$dir/f$i.dat
		timeout -k 5 $((60 + size / 10)) head -c "${size}M" /dev/urandom >"$f" ||
			die "could not write $f"
		[ "$(stat -c %s "$f")" -eq $((size * 1048576)) ] || die "$f has the wrong size"
		FILES+=("$f")
	done
}

# verify_set DIR LABEL: every file of FILES is in DIR, byte for byte, and
# nothing else is.
verify_set() {
	local f n=0
	for f in "${FILES[@]}"; do
		cmp -s "$f" "$1/${f##*/}" || die "$2: ${f##*/} differs from its source (or is missing) in $1"
		n=$((n + 1))
	done
	[ "$(find "$1" -mindepth 1 | wc -l)" -eq $n ] || {
		find "$1" -mindepth 1 -printf '    %P %s\n' >&2
		die "$2: unexpected extra files in $1"
	}
}

# xrootd_config EXPORT: $XRD_HOME with xrootd's config (export EXPORT,
# port $XRD_PORT, adler32 for end-to-end checks), owned by user xrootd.
xrootd_config() {
	mkdir -p "$XRD_HOME/adm" "$XRD_HOME/run" || die "mkdir $XRD_HOME"
	chmod 711 "$T"
	chown -R xrootd:xrootd "$XRD_HOME" || die "chown $XRD_HOME"
	cat >"$XRD_HOME/xrootd.cfg" <<-EOF
	all.export $1
	xrd.port $XRD_PORT
	all.adminpath $XRD_HOME/adm
	all.pidpath $XRD_HOME/run
	xrootd.chksum adler32
	EOF
	chmod 644 "$XRD_HOME/xrootd.cfg"
}

# xrootd_start LIMIT: xrootd in $NSB as user xrootd (a job of this shell,
# stopped after LIMIT seconds); 1 when it does not listen on $XRD_PORT
# (it has been seen to crash while starting, once in many starts).
xrootd_start() {
	ip netns exec "$NSB" timeout -k 5 "$1" \
		runuser -u xrootd -- xrootd -c "$XRD_HOME/xrootd.cfg" -l "$XRD_HOME/xrootd.log" \
		>>"$XRD_HOME/xrootd.out" 2>&1 &
	wait_listen $XRD_PORT "$NSB" && return 0
	tail_err "$XRD_HOME/xrootd.out"; tail_err "$XRD_HOME/xrootd.log"
	kill -TERM $! 2>/dev/null
	wait $!
	return 1
}

# another_try N: after a failed try: 0 (saying so) while fewer than N
# tries were made, else 1. TRY counts them: set it to 0 before the first.
#   TRY=0; until CMD; do another_try N || die "CMD failed N times"; done
another_try() {
	TRY=$((TRY + 1))
	[ "$TRY" -lt "$1" ] || return 1
	note "trying again ($((TRY + 1))/$1)"
}
