/* Receiver-side file system work: confined opens, the directory cache,
 * metadata, space, source files. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cu.h"
#include "ferry/error.h"
#include "io/fsx.h"

static char dest[64], outside[64];
static int destfd = -1;

static bool exists_at(int dirfd, const char *rel)
{
	struct stat st;

	return fstatat(dirfd, rel, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

static void put_at(int dirfd, const char *rel, const char *text)
{
	int fd = openat(dirfd, rel, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static void test_open_parent(void)
{
	const char *base = NULL;
	struct stat st;
	int fd;

	CU_ASSERT_EQUAL(ferry__fs_open_parent(destfd, "../x", true, 0755,
					      &base), -EXDEV);
	CU_ASSERT_EQUAL(ferry__fs_open_parent(destfd, "/x", true, 0755,
					      &base), -EXDEV);
	CU_ASSERT_EQUAL(ferry__fs_open_parent(destfd, "a/../../x", true, 0755,
					      &base), -EXDEV);
	CU_ASSERT_EQUAL(ferry__fs_open_parent(destfd, "a//x", true, 0755,
					      &base), -EINVAL);
	CU_ASSERT_EQUAL(ferry__fs_open_parent(destfd, "a/./x", true, 0755,
					      &base), -EINVAL);
	CU_ASSERT_EQUAL(ferry__fs_open_parent(destfd, "", true, 0755, &base),
			-EINVAL);
	CU_ASSERT_FALSE(exists_at(destfd, "a"));

	/* without create, missing parents are -ENOENT */
	CU_ASSERT_EQUAL(ferry__fs_open_parent(destfd, "n1/n2/f", false, 0755,
					      &base), -ENOENT);
	CU_ASSERT_FALSE(exists_at(destfd, "n1"));

	/* nested parents are made */
	fd = ferry__fs_open_parent(destfd, "p/q/r/file.bin", true, 0750,
				   &base);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_STRING_EQUAL(base, "file.bin");
	CU_ASSERT_EQUAL(fstatat(destfd, "p/q/r", &st, 0), 0);
	CU_ASSERT_TRUE(S_ISDIR(st.st_mode));
	put_at(fd, base, "here");
	close(fd);
	CU_ASSERT_TRUE(exists_at(destfd, "p/q/r/file.bin"));
	fd = ferry__fs_open_parent(destfd, "p/q/r/file.bin", false, 0, &base);
	CU_ASSERT(fd >= 0);
	close(fd);

	/* a one-component path: a new fd of dest itself */
	fd = ferry__fs_open_parent(destfd, "top", false, 0, &base);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_NOT_EQUAL(fd, destfd);
	CU_ASSERT_STRING_EQUAL(base, "top");
	CU_ASSERT_EQUAL(fstat(fd, &st), 0);
	CU_ASSERT_TRUE(S_ISDIR(st.st_mode));
	close(fd);

	/* a file where a directory should be */
	CU_ASSERT_EQUAL(ferry__fs_open_parent(destfd, "p/q/r/file.bin/x", true,
					      0755, &base), -ENOTDIR);
}

/* A symlink to a directory outside dest, as a parent: refused, and
 * nothing is made outside. */
static void test_symlinked_parent(void)
{
	const char *base = NULL;
	int ofd;

	CU_ASSERT_EQUAL_FATAL(symlinkat(outside, destfd, "esc"), 0);
	CU_ASSERT_EQUAL(ferry__fs_open_parent(destfd, "esc/sub/f", true, 0755,
					      &base), -ELOOP);
	CU_ASSERT_EQUAL(ferry__fs_open_parent(destfd, "esc/f", true, 0755,
					      &base), -ELOOP);
	CU_ASSERT_EQUAL(ferry__fs_mkdirs(destfd, "esc/sub", 0755), -ELOOP);
	CU_ASSERT_EQUAL(ferry__fs_mkdirs(destfd, "esc", 0755), -ELOOP);
	/* deeper in the tree too */
	CU_ASSERT_EQUAL(mkdirat(destfd, "in", 0755), 0);
	CU_ASSERT_EQUAL(symlinkat(outside, destfd, "in/esc"), 0);
	CU_ASSERT_EQUAL(ferry__fs_open_parent(destfd, "in/esc/deeper/f", true,
					      0755, &base), -ELOOP);
	/* a relative link up and out */
	CU_ASSERT_EQUAL(symlinkat("../..", destfd, "in/up"), 0);
	CU_ASSERT_EQUAL(ferry__fs_open_parent(destfd, "in/up/f", true, 0755,
					      &base), -ELOOP);

	ofd = open(outside, O_RDONLY | O_DIRECTORY);
	CU_ASSERT_FATAL(ofd >= 0);
	CU_ASSERT_FALSE(exists_at(ofd, "sub"));
	CU_ASSERT_FALSE(exists_at(ofd, "deeper"));
	CU_ASSERT_FALSE(exists_at(ofd, "f"));
	close(ofd);
}

static void test_mkdirs(void)
{
	struct stat st;

	CU_ASSERT_EQUAL(ferry__fs_mkdirs(destfd, "m/n/o", 0755), 0);
	CU_ASSERT_EQUAL(fstatat(destfd, "m/n/o", &st, AT_SYMLINK_NOFOLLOW), 0);
	CU_ASSERT_TRUE(S_ISDIR(st.st_mode));
	CU_ASSERT_EQUAL(ferry__fs_mkdirs(destfd, "m/n/o", 0755), 0);
	CU_ASSERT_EQUAL(ferry__fs_mkdirs(destfd, "m", 0755), 0);
	put_at(destfd, "m/plain", "x");
	CU_ASSERT_EQUAL(ferry__fs_mkdirs(destfd, "m/plain", 0755), -ENOTDIR);
	CU_ASSERT_EQUAL(ferry__fs_mkdirs(destfd, "m/plain/x", 0755), -ENOTDIR);
	CU_ASSERT_EQUAL(ferry__fs_mkdirs(destfd, "../m", 0755), -EXDEV);
}

static void test_dirs(void)
{
	struct ferry__dirs d;
	const char *base;
	int fd, fd2;

	ferry__dirs_init(&d, destfd);
	CU_ASSERT_EQUAL(ferry__fs_mkdirs(destfd, "dc/a", 0755), 0);
	fd = ferry__dirs_parent(&d, "dc/a/f1", false, 0, &base);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_STRING_EQUAL(base, "f1");
	/* the same directory again: the same fd, no new open */
	fd2 = ferry__dirs_parent(&d, "dc/a/f2", false, 0, &base);
	CU_ASSERT_EQUAL(fd2, fd);
	CU_ASSERT_STRING_EQUAL(base, "f2");
	/* a top-level name: the root itself */
	CU_ASSERT(ferry__dirs_parent(&d, "top", false, 0, &base) >= 0);
	CU_ASSERT_STRING_EQUAL(base, "top");
	/* "dc/ab" must not match the cached "dc/a" */
	CU_ASSERT_EQUAL(ferry__dirs_parent(&d, "dc/ab/f", false, 0, &base),
			-ENOENT);
	CU_ASSERT(ferry__dirs_parent(&d, "dc/ab/f", true, 0755, &base) >= 0);
	CU_ASSERT_TRUE(exists_at(destfd, "dc/ab"));
	/* the rules of open_parent hold on a hit too */
	CU_ASSERT_EQUAL(ferry__dirs_parent(&d, "dc/a/../x", false, 0, &base),
			-EXDEV);
	CU_ASSERT_EQUAL(ferry__dirs_parent(&d, "/dc/a/x", false, 0, &base),
			-EXDEV);
	/* more directories than entries: the oldest go, lookups still work */
	for (int i = 0; i < 3 * FERRY__DIRS_N; i++) {
		char rel[64];
		snprintf(rel, sizeof(rel), "dc/many%d/f", i);
		CU_ASSERT(ferry__dirs_parent(&d, rel, true, 0755, &base) >= 0);
	}
	fd = ferry__dirs_parent(&d, "dc/a/f3", false, 0, &base);
	CU_ASSERT(fd >= 0);
	ferry__dirs_free(&d);
}

static void test_set_meta(void)
{
	int64_t t1 = 1700000000123456789LL, t2 = -1500000000LL;
	struct stat st;
	int fd = openat(destfd, "meta.txt", O_RDWR | O_CREAT, 0600);

	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(ferry__fs_set_meta(fd, 0640, t1, true), 0);
	CU_ASSERT_EQUAL(fstat(fd, &st), 0);
	CU_ASSERT_EQUAL(st.st_mode & 07777, 0640);
	CU_ASSERT_EQUAL((int64_t)st.st_mtim.tv_sec * 1000000000 +
				st.st_mtim.tv_nsec, t1);
	/* before 1970, and mode bits above 07777 dropped */
	CU_ASSERT_EQUAL(ferry__fs_set_meta(fd, 0100755, t2, true), 0);
	CU_ASSERT_EQUAL(fstat(fd, &st), 0);
	CU_ASSERT_EQUAL(st.st_mode & 07777, 0755);
	CU_ASSERT_EQUAL((int64_t)st.st_mtim.tv_sec * 1000000000 +
				st.st_mtim.tv_nsec, t2);
	/* without set_mode only the mtime changes */
	CU_ASSERT_EQUAL(ferry__fs_set_meta(fd, 0600, t1, false), 0);
	CU_ASSERT_EQUAL(fstat(fd, &st), 0);
	CU_ASSERT_EQUAL(st.st_mode & 07777, 0755);
	CU_ASSERT_EQUAL((int64_t)st.st_mtim.tv_sec * 1000000000 +
				st.st_mtim.tv_nsec, t1);
	close(fd);
	/* the umask, read without changing it */
	mode_t was = umask(027);
	CU_ASSERT_EQUAL(ferry__umask(), 027);
	umask(was);
	CU_ASSERT_EQUAL(ferry__umask(), was);
}

static void test_free_bytes(void)
{
	uint64_t n = 0;

	CU_ASSERT_EQUAL(ferry__fs_free_bytes(destfd, &n), 0);
	CU_ASSERT(n > 0);
	CU_ASSERT_EQUAL(ferry__fs_free_bytes(-1, &n), -EBADF);
}

static void test_pread_pwrite(void)
{
	size_t len = (1 << 20) + 123;
	unsigned char *a = malloc(len), *b = malloc(len);
	char path[128];
	bool direct;
	void *al;
	int fd;

	CU_ASSERT_FATAL(a && b);
	for (size_t i = 0; i < len; i++)
		a[i] = (unsigned char)(i * 7 + (i >> 9));
	fd = openat(destfd, "rw.bin", O_RDWR | O_CREAT | O_TRUNC, 0644);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(ferry__fs_pwrite_full(fd, a, len, 4097), 0);
	CU_ASSERT_EQUAL(ferry__fs_pread_full(fd, b, len, 4097), 0);
	CU_ASSERT_EQUAL(memcmp(a, b, len), 0);
	/* past the end: the file "shrank" */
	CU_ASSERT_EQUAL(ferry__fs_pread_full(fd, b, 100, 4097 + len - 50),
			-EIO);
	CU_ASSERT_EQUAL(ferry__fs_pread_full(fd, b, 0, 0), 0);
	close(fd);

	/* the same bytes through ferry__fs_open_source, direct or not */
	snprintf(path, sizeof(path), "%s/rw.bin", dest);
	direct = true;
	fd = ferry__fs_open_source(path, &direct);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL_FATAL(posix_memalign(&al, 4096, 1 << 20), 0);
	CU_ASSERT_EQUAL(ferry__fs_pread_full(fd, al, 255 * 4096, 8192), 0);
	CU_ASSERT_EQUAL(memcmp(al, a + 8192 - 4097, 255 * 4096), 0);
	CU_ASSERT_EQUAL(!!(fcntl(fd, F_GETFL) & O_DIRECT), direct);
	close(fd);
	free(al);
	/* not asked for: never on */
	direct = false;
	fd = ferry__fs_open_source(path, &direct);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_FALSE(direct);
	CU_ASSERT_EQUAL(fcntl(fd, F_GETFL) & O_DIRECT, 0);
	close(fd);

	snprintf(path, sizeof(path), "%s/nope", dest);
	CU_ASSERT_EQUAL(ferry__fs_open_source(path, &direct), -ENOENT);
	/* a FIFO neither blocks nor is read */
	CU_ASSERT_EQUAL(mkfifoat(destfd, "fifo", 0644), 0);
	snprintf(path, sizeof(path), "%s/fifo", dest);
	CU_ASSERT_EQUAL(ferry__fs_open_source(path, &direct), -EINVAL);
	free(a);
	free(b);
}

/* tmpfs refuses O_DIRECT on older kernels: the fallback still reads. */
static void test_open_source_tmpfs(void)
{
	char path[] = "/dev/shm/ferry-test-XXXXXX", buf[4] = "";
	bool direct = true;
	int fd = mkstemp(path);

	if (fd < 0) {
		fprintf(stderr, "(no /dev/shm: skipped) ");
		return;
	}
	CU_ASSERT_EQUAL(write(fd, "shm", 3), 3);
	close(fd);
	fd = ferry__fs_open_source(path, &direct);
	CU_ASSERT_FATAL(fd >= 0);
	if (direct) { /* newer kernels: tmpfs takes O_DIRECT */
		CU_ASSERT_EQUAL(fcntl(fd, F_GETFL) & O_DIRECT, O_DIRECT);
	} else {
		CU_ASSERT_EQUAL(ferry__fs_pread_full(fd, buf, 3, 0), 0);
		CU_ASSERT_STRING_EQUAL(buf, "shm");
	}
	close(fd);
	unlink(path);
}

static int rm_entry(const char *p, const struct stat *st, int flag,
		    struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return flag == FTW_DP ? rmdir(p) : unlink(p);
}

int main(void)
{
	CU_TestInfo tests[] = {
		{ "open_parent", test_open_parent },
		{ "a symlinked parent is refused", test_symlinked_parent },
		{ "mkdirs", test_mkdirs },
		{ "directory cache", test_dirs },
		{ "set_meta", test_set_meta },
		{ "free bytes", test_free_bytes },
		{ "pread/pwrite and open_source", test_pread_pwrite },
		{ "open_source on tmpfs", test_open_source_tmpfs },
		CU_TEST_INFO_NULL,
	};
	int ret;

	snprintf(dest, sizeof(dest), "/tmp/ferry-files-XXXXXX");
	snprintf(outside, sizeof(outside), "/tmp/ferry-outside-XXXXXX");
	if (!mkdtemp(dest) || !mkdtemp(outside)) {
		perror("mkdtemp");
		return 2;
	}
	destfd = open(dest, O_RDONLY | O_DIRECTORY);
	if (destfd < 0) {
		perror(dest);
		return 2;
	}
	ret = ferry_cu_run("files", tests);
	close(destfd);
	nftw(dest, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	nftw(outside, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	return ret;
}
