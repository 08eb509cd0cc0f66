/* Receiver-side file system work (io/fsx.h).
 *
 * Every name below the destination is opened one component at a time
 * with O_NOFOLLOW relative to the directory fd before it, so neither a
 * ".." nor a symlink planted in the tree can lead outside it.
 */
#include <errno.h>
#include <stdlib.h>
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

void ferry__dirs_init(struct ferry__dirs *d, int rootfd)
{
	memset(d, 0, sizeof(*d));
	d->rootfd = rootfd;
	for (int i = 0; i < FERRY__DIRS_N; i++)
		d->e[i].fd = -1;
}

int ferry__dirs_parent(struct ferry__dirs *d, const char *relpath,
		       bool create, mode_t create_mode, const char **base)
{
	const char *slash = strrchr(relpath, '/');
	size_t len = slash ? (size_t)(slash - relpath) : 0;
	int victim = 0, fd = rel_check(relpath);

	if (fd)
		return fd;
	for (int i = 0; i < FERRY__DIRS_N; i++) {
		if (d->e[i].path && d->e[i].len == len &&
		    !memcmp(d->e[i].path, relpath, len)) {
			d->e[i].used = ++d->clock;
			*base = slash ? slash + 1 : relpath;
			return d->e[i].fd;
		}
		if (d->e[i].used < d->e[victim].used)
			victim = i;
	}
	if (!create && d->miss && d->miss_len == len &&
	    !memcmp(d->miss, relpath, len))
		return -ENOENT;
	fd = ferry__fs_open_parent(d->rootfd, relpath, create, create_mode,
				   base);
	if (fd == -ENOENT) {
		free(d->miss);
		d->miss = strndup(relpath, len);
		d->miss_len = len;
	}
	if (fd < 0)
		return fd;
	if (d->miss && d->miss_len == len && !memcmp(d->miss, relpath, len)) {
		free(d->miss); /* made since */
		d->miss = NULL;
	}
	char *copy = strndup(relpath, len);
	if (!copy) {
		close(fd);
		return -ENOMEM;
	}
	if (d->e[victim].path) {
		free(d->e[victim].path);
		close(d->e[victim].fd);
	}
	d->e[victim].path = copy;
	d->e[victim].len = len;
	d->e[victim].fd = fd;
	d->e[victim].used = ++d->clock;
	return fd;
}

void ferry__dirs_free(struct ferry__dirs *d)
{
	free(d->miss);
	d->miss = NULL;
	for (int i = 0; i < FERRY__DIRS_N; i++) {
		if (d->e[i].path) {
			free(d->e[i].path);
			close(d->e[i].fd);
		}
		d->e[i].path = NULL;
		d->e[i].fd = -1;
	}
}

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape(char *s)
{
	char *w = s;

	for (char *r = s; *r; r++) {
		if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' &&
		    r[2] <= '7' && r[3] >= '0' && r[3] <= '7') {
			*w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 +
				      (r[3] - '0'));
			r += 3;
		} else {
			*w++ = *r;
		}
	}
	*w = '\0';
}

static int longest_first(const void *a, const void *b)
{
	size_t x = strlen(*(char *const *)a), y = strlen(*(char *const *)b);

	return x < y ? 1 : x > y ? -1 : 0;
}

int ferry__fs_mounts_below(int rootfd, char ***out)
{
	char link[64], root[PATH_MAX + 1], *line = NULL, **v = NULL;
	size_t cap = 0, n = 0, rlen;
	ssize_t len;
	FILE *mi;

	*out = NULL;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", rootfd);
	len = readlink(link, root, sizeof(root) - 1);
	mi = len > 0 ? fopen("/proc/self/mountinfo", "re") : NULL;
	if (!mi)
		return 0;
	root[len] = '\0';
	rlen = strcmp(root, "/") ? (size_t)len : 0;
	while (getline(&line, &cap, mi) > 0) {
		/* id parent major:minor root MOUNTPOINT options ... */
		char *f = line, *mp = NULL;
		for (int i = 0; i < 5 && f; i++) {
			mp = strsep(&f, " ");
		}
		if (!mp || !f)
			continue;
		unescape(mp);
		if (strncmp(mp, root, rlen) || mp[rlen] != '/' || !mp[rlen + 1])
			continue;
		char **nv = realloc(v, (n + 1) * sizeof(*v));
		char *rel = strdup(mp + rlen + 1);
		if (!nv || !rel) {
			free(rel);
			v = nv ? nv : v;
			while (n)
				free(v[--n]);
			free(v);
			free(line);
			fclose(mi);
			return -ENOMEM;
		}
		v = nv;
		v[n++] = rel;
	}
	free(line);
	fclose(mi);
	if (n)
		qsort(v, n, sizeof(*v), longest_first);
	*out = v;
	return (int)n;
}

mode_t ferry__umask(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	unsigned m = 022;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "Umask: %o", &m) == 1)
			break;
	if (f)
		fclose(f);
	return (mode_t)(m & 0777);
}

int ferry__fs_set_meta(int fd, mode_t mode, int64_t mtime_ns, bool set_mode)
{
	int64_t sec = mtime_ns / 1000000000, nsec = mtime_ns % 1000000000;
	struct timespec ts[2];

	if (nsec < 0) { /* before 1970: keep tv_nsec in [0, 1e9) */
		sec--;
		nsec += 1000000000;
	}
	ts[0].tv_sec = 0;
	ts[0].tv_nsec = UTIME_OMIT;
	ts[1].tv_sec = (time_t)sec;
	ts[1].tv_nsec = (long)nsec;
	return (set_mode && fchmod(fd, mode & 07777)) || futimens(fd, ts) ? -errno : 0;
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

static int open_plain(void *arg, const char *path, int flags)
{
	int fd = open(path, flags);

	(void)arg;
	return fd >= 0 ? fd : -errno;
}

int ferry__fs_open_source(const char *path, bool *direct)
{
	return ferry__fs_open_source_with(open_plain, NULL, path, direct);
}

int ferry__fs_open_source_with(int (*open_fn)(void *arg, const char *path,
					      int flags),
			       void *arg, const char *path, bool *direct)
{
	int flags = O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC;
	struct stat st;
	int fd, ret;

	fd = *direct ? open_fn(arg, path, flags | O_DIRECT) : -EINVAL;
	if (fd == -EINVAL) {
		*direct = false;
		fd = open_fn(arg, path, flags);
	}
	if (fd < 0)
		return fd;
	if (fstat(fd, &st)) {
		ret = -errno;
		goto err_fd;
	}
	/* O_NONBLOCK only kept a FIFO put in the file's place from
	 * blocking the open; it changes nothing for a regular file */
	if (!S_ISREG(st.st_mode)) {
		ret = -EINVAL;
		goto err_fd;
	}
	return fd;

err_fd:
	close(fd);
	return ret;
}

/* pread (wr false) or pwrite exactly len bytes at off. */
static int prw_full(int fd, char *p, size_t len, uint64_t off, bool wr)
{
	if (len > SSIZE_MAX || off > (uint64_t)INT64_MAX - len)
		return -EINVAL;
	while (len) {
		ssize_t n = wr ? pwrite(fd, p, len, (off_t)off) :
				 pread(fd, p, len, (off_t)off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO; /* reading: the file shrank */
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

int ferry__fs_pread_full(int fd, void *buf, size_t len, uint64_t off)
{
	return prw_full(fd, buf, len, off, false);
}

int ferry__fs_pwrite_full(int fd, const void *buf, size_t len, uint64_t off)
{
	/* not written through: pwrite only reads buf */
	return prw_full(fd, (char *)buf, len, off, true);
}
