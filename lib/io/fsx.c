/* Receiver-side file system work (io/fsx.h).
 *
 * Every name below the destination is opened one component at a time
 * with O_NOFOLLOW relative to the directory fd before it, so neither a
 * ".." nor a symlink planted in the tree can lead outside it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "io/fsx.h"
#include "io/manifest.h"

#define DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)

/* -EXDEV for paths that try to leave the destination, -EINVAL for other
 * paths that are not manifest paths, 0 otherwise. */
static int rel_check(const char *relpath)
{
	const char *p = relpath;

	if (p[0] == '/')
		return -EXDEV;
	for (;;) {
		const char *slash = strchr(p, '/');
		size_t n = slash ? (size_t)(slash - p) : strlen(p);

		if (n == 2 && p[0] == '.' && p[1] == '.')
			return -EXDEV;
		if (!slash)
			break;
		p = slash + 1;
	}
	return ferry__path_valid(relpath) ? 0 : -EINVAL;
}

/* Why opening comp as a directory failed: a symlink is -ELOOP whichever
 * of ELOOP or ENOTDIR the kernel said. */
static int open_dir_error(int dirfd, const char *comp, int err)
{
	struct stat st;

	if (err == ENOTDIR &&
	    fstatat(dirfd, comp, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISLNK(st.st_mode))
		return -ELOOP;
	return -err;
}

/* Open directory comp below dirfd, making it first with create. */
static int open_dir(int dirfd, const char *comp, bool create, mode_t mode)
{
	int fd = openat(dirfd, comp, DIR_FLAGS);

	if (fd >= 0)
		return fd;
	if (errno != ENOENT || !create)
		return open_dir_error(dirfd, comp, errno);
	if (mkdirat(dirfd, comp, mode) && errno != EEXIST)
		return -errno;
	fd = openat(dirfd, comp, DIR_FLAGS);
	return fd >= 0 ? fd : open_dir_error(dirfd, comp, errno);
}

int ferry__fs_open_parent(int dirfd, const char *relpath, bool create,
			  mode_t create_mode, const char **base)
{
	char comp[NAME_MAX + 1];
	const char *p = relpath;
	int fd, ret;

	ret = rel_check(relpath);
	if (ret)
		return ret;
	/* A fresh fd for dirfd itself, so the caller always owns what it
	 * gets. */
	fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (;;) {
		const char *slash = strchr(p, '/');
		size_t n = slash ? (size_t)(slash - p) : 0;
		int next;

		if (!slash)
			break;
		if (n > NAME_MAX) {
			close(fd);
			return -ENAMETOOLONG;
		}
		memcpy(comp, p, n);
		comp[n] = '\0';
		next = open_dir(fd, comp, create, create_mode);
		close(fd);
		if (next < 0)
			return next;
		fd = next;
		p = slash + 1;
	}
	*base = p;
	return fd;
}

int ferry__fs_mkdirs(int dirfd, const char *relpath, mode_t mode)
{
	const char *base;
	struct stat st;
	int pfd, ret = 0;

	pfd = ferry__fs_open_parent(dirfd, relpath, true, mode, &base);
	if (pfd < 0)
		return pfd;
	if (mkdirat(pfd, base, mode) && errno != EEXIST)
		ret = -errno;
	else if (fstatat(pfd, base, &st, AT_SYMLINK_NOFOLLOW))
		ret = -errno;
	else if (S_ISLNK(st.st_mode))
		ret = -ELOOP;
	else if (!S_ISDIR(st.st_mode))
		ret = -ENOTDIR;
	close(pfd);
	return ret;
}

static int side_name(const char *base, const char *suffix, char *buf,
		     size_t len)
{
	int n;

	if (!base[0] || strchr(base, '/'))
		return -EINVAL;
	n = snprintf(buf, len, ".%s.%s", base, suffix);
	if (n < 0)
		return -EINVAL;
	if ((size_t)n >= len || n > NAME_MAX)
		return -ENAMETOOLONG;
	return 0;
}

int ferry__fs_part_name(const char *base, char *buf, size_t len)
{
	return side_name(base, "ferry-part", buf, len);
}

int ferry__fs_journal_name(const char *base, char *buf, size_t len)
{
	return side_name(base, "ferry-journal", buf, len);
}

int ferry__fs_open_part(int parentfd, const char *base, uint64_t size)
{
	char part[NAME_MAX + 1];
	struct stat st;
	int fd, ret;

	if (size > INT64_MAX)
		return -EFBIG;
	ret = ferry__fs_part_name(base, part, sizeof(part));
	if (ret)
		return ret;
	fd = openat(parentfd, part,
		    O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
		    0600);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		ret = -errno;
		goto err_fd;
	}
	if (!S_ISREG(st.st_mode)) {
		ret = -EINVAL;
		goto err_fd;
	}
	if ((uint64_t)st.st_size != size && ftruncate(fd, (off_t)size)) {
		ret = -errno;
		goto err_fd;
	}
	return fd;

err_fd:
	close(fd);
	return ret;
}

/* rename without replacing: renameat2, or where the file system does not
 * have RENAME_NOREPLACE, a hard link (which fails when the name exists)
 * and an unlink. */
static int rename_noreplace(int dirfd, const char *from, const char *to)
{
	if (renameat2(dirfd, from, dirfd, to, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -errno;
	if (linkat(dirfd, from, dirfd, to, 0))
		return -errno;
	if (unlinkat(dirfd, from, 0))
		return -errno;
	return 0;
}

int ferry__fs_publish(int parentfd, int partfd, const char *base,
		      mode_t mode, int64_t mtime_ns, bool replace)
{
	int64_t sec = mtime_ns / 1000000000, nsec = mtime_ns % 1000000000;
	char part[NAME_MAX + 1];
	struct timespec ts[2];
	int ret;

	ret = ferry__fs_part_name(base, part, sizeof(part));
	if (ret)
		return ret;
	if (nsec < 0) { /* before 1970: keep tv_nsec in [0, 1e9) */
		sec--;
		nsec += 1000000000;
	}
	ts[0].tv_sec = 0;
	ts[0].tv_nsec = UTIME_OMIT;
	ts[1].tv_sec = (time_t)sec;
	ts[1].tv_nsec = (long)nsec;
	if (fchmod(partfd, mode & 07777) || futimens(partfd, ts) ||
	    fsync(partfd))
		return -errno;
	if (replace)
		ret = renameat(parentfd, part, parentfd, base) ? -errno : 0;
	else
		ret = rename_noreplace(parentfd, part, base);
	if (ret)
		return ret;
	return fsync(parentfd) ? -errno : 0;
}

int ferry__fs_free_bytes(int dirfd, uint64_t *out)
{
	struct statvfs sv;

	if (fstatvfs(dirfd, &sv))
		return -errno;
	if (sv.f_frsize && sv.f_bavail > UINT64_MAX / sv.f_frsize)
		*out = UINT64_MAX;
	else
		*out = (uint64_t)sv.f_bavail * sv.f_frsize;
	return 0;
}

int ferry__fs_open_source(const char *path, bool *direct)
{
	int flags = O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC;
	struct stat st;
	int fd, fl, ret;

	*direct = true;
	fd = open(path, flags | O_DIRECT);
	if (fd < 0 && errno == EINVAL) {
		*direct = false;
		fd = open(path, flags);
	}
	if (fd < 0)
		return -errno;
	/* O_NONBLOCK only kept a FIFO put in the file's place from
	 * blocking the open. */
	if (fstat(fd, &st)) {
		ret = -errno;
		goto err_fd;
	}
	if (!S_ISREG(st.st_mode)) {
		ret = -EINVAL;
		goto err_fd;
	}
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK)) {
		ret = -errno;
		goto err_fd;
	}
	return fd;

err_fd:
	close(fd);
	return ret;
}

int ferry__fs_pread_full(int fd, void *buf, size_t len, uint64_t off)
{
	char *p = buf;

	if (len > SSIZE_MAX || off > (uint64_t)INT64_MAX - len)
		return -EINVAL;
	while (len) {
		ssize_t n = pread(fd, p, len, (off_t)off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO; /* the file shrank */
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

int ferry__fs_pwrite_full(int fd, const void *buf, size_t len, uint64_t off)
{
	const char *p = buf;

	if (len > SSIZE_MAX || off > (uint64_t)INT64_MAX - len)
		return -EINVAL;
	while (len) {
		ssize_t n = pwrite(fd, p, len, (off_t)off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}
