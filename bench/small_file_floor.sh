#!/usr/bin/env bash
# What the kernel alone costs per small file on the receiving side: the
# calls ferry's receiver makes for a 4 KiB file (create the part file in a
# staging directory, write 4 KiB, set the mtime, close, rename it into the
# target directory), in a C loop on a fresh tmpfs, and beside it the same
# file created unnamed in its target directory (O_TMPFILE) and linked in
# through /proc/self/fd. Third, where liburing is installed (Debian:
# liburing-dev), the first variant's calls batched through io_uring, 64
# files a submission: the creates, then the writes, then the closes each
# linked to its rename, with the mtime set by futimens between them
# (io_uring has no operation for it). No ferry, no network: a floor to
# hold ferry's per-file CPU against (docs/benchmarks.md, many small
# files), and what batching the calls would take off it.
#
# Environment: N files per run (default 20000), REPS runs (default 3).
# Needs root (the tmpfs mount) and a C compiler (cc). Exit status 0 when
# every run completed, 1 when a call failed.
# Example: bench/small_file_floor.sh
# shellcheck source=bench/lib/common.sh
. "$(dirname "$0")/lib/common.sh"

N=${N:-20000}
REPS=${REPS:-3}
for v in N REPS; do
	[[ "${!v}" =~ ^[1-9][0-9]*$ ]] || die "$v must be a positive integer"
done
[ "$(id -u)" -eq 0 ] || die "needs root (a tmpfs mount)"
need_cmd cc "apt-get install gcc"

cat >"$T/floor.c" <<'C'
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#ifdef WITH_URING
#include <liburing.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static int fail(const char *what)
{
	perror(what);
	exit(1);
}

static int subdir(int top, const char *name)
{
	if (mkdirat(top, name, 0755))
		fail(name);
	int fd = openat(top, name, O_RDONLY | O_DIRECTORY);
	return fd < 0 ? fail(name) : fd;
}

#ifdef WITH_URING
/* Reap want completions; each must be a success, and a write (size > 0)
 * must have written size bytes. Opens leave their fds in fds. */
static void reap(struct io_uring *ring, unsigned want, int *fds, int size)
{
	struct io_uring_cqe *c;

	io_uring_submit_and_wait(ring, want);
	for (unsigned k = 0; k < want; k++) {
		if (io_uring_wait_cqe(ring, &c))
			fail("io_uring_wait_cqe");
		if (c->res < 0) {
			errno = -c->res;
			fail("an io_uring operation");
		}
		if (size > 0 && c->res != size) {
			errno = EIO;
			fail("a short write");
		}
		if (fds)
			fds[c->user_data] = c->res;
		io_uring_cqe_seen(ring, c);
	}
}

/* The stage-and-rename calls, B files a batch, through io_uring. */
static double batched(int top, int n, const char *buf,
		      const struct timespec *mt)
{
	enum { B = 64 };
	int stage = subdir(top, "ustage"), c = subdir(top, "c"), fds[B];
	char part[B][64], name[B][64];
	struct io_uring ring;
	double t0 = now();

	if (io_uring_queue_init(2 * B, &ring, 0))
		fail("io_uring_queue_init");
	for (int base = 0; base < n; base += B) {
		int m = n - base < B ? n - base : B;
		struct io_uring_sqe *s;

		for (int j = 0; j < m; j++) {
			snprintf(part[j], sizeof(part[j]), "%032x.part", base + j);
			snprintf(name[j], sizeof(name[j]), "f%07d", base + j);
			s = io_uring_get_sqe(&ring);
			io_uring_prep_openat(s, stage, part[j],
					     O_WRONLY | O_CREAT | O_EXCL, 0644);
			s->user_data = (unsigned)j;
		}
		reap(&ring, (unsigned)m, fds, 0);
		for (int j = 0; j < m; j++)
			io_uring_prep_write(io_uring_get_sqe(&ring), fds[j],
					    buf, 4096, 0);
		reap(&ring, (unsigned)m, NULL, 4096);
		for (int j = 0; j < m; j++)
			if (futimens(fds[j], mt))
				fail("futimens");
		for (int j = 0; j < m; j++) {
			s = io_uring_get_sqe(&ring);
			io_uring_prep_close(s, fds[j]);
			s->flags |= IOSQE_IO_LINK;
			io_uring_prep_renameat(io_uring_get_sqe(&ring), stage,
					       part[j], c, name[j],
					       RENAME_NOREPLACE);
		}
		reap(&ring, 2 * (unsigned)m, NULL, 0);
	}
	io_uring_queue_exit(&ring);
	return (now() - t0) / n * 1e6;
}
#endif

int main(int argc, char **argv)
{
	int n = atoi(argv[2]), top = open(argv[1], O_RDONLY | O_DIRECTORY);
	int stage = subdir(top, "stage"), a = subdir(top, "a"),
	    b = subdir(top, "b");
	struct timespec mt[2] = { { 1, 0 }, { 1, 0 } };
	char buf[4096], part[64], name[64], proc[64];
	double t0, t1, t2;

	memset(buf, 7, sizeof(buf));
	t0 = now();
	for (int i = 0; i < n; i++) {
		snprintf(part, sizeof(part), "%032x.part", i);
		snprintf(name, sizeof(name), "f%07d", i);
		int fd = openat(stage, part, O_WRONLY | O_CREAT | O_EXCL, 0644);
		if (fd < 0 || pwrite(fd, buf, sizeof(buf), 0) != sizeof(buf) ||
		    futimens(fd, mt) || close(fd) ||
		    renameat2(stage, part, a, name, RENAME_NOREPLACE))
			fail("stage and rename");
	}
	t1 = now();
	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "f%07d", i);
		int fd = openat(b, ".", O_TMPFILE | O_WRONLY, 0644);
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
		if (fd < 0 || pwrite(fd, buf, sizeof(buf), 0) != sizeof(buf) ||
		    futimens(fd, mt) ||
		    linkat(AT_FDCWD, proc, b, name, AT_SYMLINK_FOLLOW) ||
		    close(fd))
			fail("O_TMPFILE and link");
	}
	t2 = now();
	printf("%.2f %.2f", (t1 - t0) / n * 1e6, (t2 - t1) / n * 1e6);
#ifdef WITH_URING
	printf(" %.2f", batched(top, n, buf, mt));
#else
	printf(" -");
#endif
	printf("\n");
	return 0;
}
C
if [ -f /usr/include/liburing.h ]; then
	cc -O2 -DWITH_URING -o "$T/floor" "$T/floor.c" -luring || die "cc failed"
else
	echo "no liburing (apt-get install liburing-dev): no io_uring column" >&2
	cc -O2 -o "$T/floor" "$T/floor.c" || die "cc failed"
fi

M=$T/mnt
mkdir "$M" || die "mkdir $M"
trap 'mountpoint -q "$M" && umount -l "$M"; bench_cleanup' EXIT
echo "per 4 KiB file on tmpfs, $N files a run (microseconds):"
printf '%-4s %22s %22s %22s\n' run "stage + rename" "O_TMPFILE + link" "io_uring, 64 a batch"
rc=0
for r in $(seq "$REPS"); do
	mount -t tmpfs -o size=$((N * 18 / 1024 + 64))m floor "$M" || die "mount tmpfs on $M"
	if out=$("$T/floor" "$M" "$N"); then
		read -r a b u <<<"$out"
		printf '%-4s %22s %22s %22s\n' "$r" "$a" "$b" "$u"
	else
		rc=1
	fi
	umount "$M" || umount -l "$M"
done
exit $rc
