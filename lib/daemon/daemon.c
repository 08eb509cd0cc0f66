/* The data-transfer-node daemon (daemon/daemon.h): its export root, the
 * handshake's key lookup and path resolution below the root. Requests are
 * served by daemon_serve.c (policy, answers) over daemon_ops.c (the file
 * system work), both over this file.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ctrl/req.h"
#include "daemon/daemon.h"
#include "daemon/tokens.h"
#include "ferry/error.h"
#include "util/util.h"

/* openat2 may say EAGAIN when a rename or mount raced the lookup. */
#define OPENAT2_TRIES 8

void ferry__daemon_close(struct ferry__daemon *d)
{
	if (!d)
		return;
	if (d->rootfd >= 0)
		close(d->rootfd);
	ferry__tokens_free(d->tokens);
	ferry__exports_free(d->ex);
	free(d->exports_path);
	free(d);
}

static int open_root(struct ferry__daemon *d, char *why, size_t whylen)
{
	const char *root = ferry__exports_root(d->ex);
	int fd, err;

	d->rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (d->rootfd < 0) {
		err = -errno;
		ferry__why(why, whylen, "%s: export root %s: %s",
			   d->exports_path, root,
			   err == -ENOENT ? "no such directory" :
			   err == -ENOTDIR ? "not a directory" :
			   ferry_strerror(err));
		return err;
	}
	fd = ferry__daemon_open_path(d, "", O_PATH | O_DIRECTORY, 0);
	if (fd == -ENOSYS) {
		d->no_openat2 = true;
		ferry__log(FERRY_LOG_INFO, "no openat2 here (Linux before "
			   "5.6?): paths below the export root are walked one "
			   "component at a time instead");
		fd = ferry__daemon_open_path(d, "", O_PATH | O_DIRECTORY, 0);
	}
	if (fd < 0) {
		ferry__why(why, whylen, "export root %s: %s", root,
			   ferry_strerror(fd));
		return fd;
	}
	close(fd);
	return 0;
}

int ferry__daemon_open(const char *exports_path, struct ferry__daemon **out,
		       char *why, size_t whylen)
{
	struct ferry__daemon *d = calloc(1, sizeof(*d));
	int err;

	*out = NULL;
	if (!d) {
		ferry__why(why, whylen, "out of memory");
		return -ENOMEM;
	}
	d->rootfd = -1;
	d->exports_path = strdup(exports_path);
	d->tokens = ferry__tokens_new();
	if (!d->exports_path || !d->tokens) {
		ferry__why(why, whylen, "out of memory");
		err = -ENOMEM;
		goto fail;
	}
	err = ferry__exports_load(exports_path, &d->ex, why, whylen);
	if (err)
		goto fail;
	err = open_root(d, why, whylen);
	if (err)
		goto fail;
	*out = d;
	return 0;
fail:
	ferry__daemon_close(d);
	return err;
}

int ferry__daemon_lookup(void *arg, const char *name, struct ferry_key *key,
			 char *why, size_t whylen)
{
	struct ferry__daemon *d = arg;
	const struct ferry_key *k;

	if (!name || !name[0]) {
		ferry__why(why, whylen, "this daemon has several keys: give "
			   "the client your key's name (--key-name)");
		return -FERRY_EAUTH;
	}
	if (!strncmp(name, FERRY__TOKEN_PREFIX, strlen(FERRY__TOKEN_PREFIX)))
		return ferry__tokens_key(d->tokens, name, key, why, whylen);
	k = ferry__exports_key_by_name(d->ex, name);
	if (!k) {
		ferry__why(why, whylen, "unknown key name %.64s", name);
		return -FERRY_EAUTH;
	}
	*key = *k;
	return 0;
}

/* A request path's form relative to the root ("" for the root), or NULL
 * when it breaks the exports rules. */
static const char *rel_path(const char *path)
{
	if (!path)
		return NULL;
	if (path[0] == '/')
		path++;
	return !path[0] || ferry__path_valid(path) ? path : NULL;
}

/* Why a component could not be opened: a symlink (ELOOP from O_NOFOLLOW,
 * or ENOTDIR where O_DIRECTORY met one) is -EACCES, as openat2 would. */
static int walk_error(int dirfd, const char *comp, int err)
{
	struct stat st;

	if (err == ELOOP)
		return -EACCES;
	if (err == ENOTDIR && !fstatat(dirfd, comp, &st, AT_SYMLINK_NOFOLLOW) &&
	    S_ISLNK(st.st_mode))
		return -EACCES;
	return -err;
}

/* Without openat2 (Linux before 5.6, or valgrind): the same rules by a
 * walk from the root's fd, one component at a time, each opened with
 * O_NOFOLLOW, so a symlink is refused where it is met; a valid path has
 * no "..", so the walk cannot climb out. */
static int walk_open(const struct ferry__daemon *d, const char *rel,
		     int flags, mode_t mode)
{
	char buf[FERRY_PATH_MAX], *comp = buf, *slash;
	int dirfd = d->rootfd, fd, err = 0;
	struct stat st;

	if (!rel[0]) {
		fd = openat(d->rootfd, ".", flags | O_CLOEXEC, mode);
		return fd < 0 ? -errno : fd;
	}
	snprintf(buf, sizeof(buf), "%s", rel);
	while (!err && (slash = strchr(comp, '/'))) {
		*slash = '\0';
		fd = openat(dirfd, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			err = walk_error(dirfd, comp, errno);
		else if (fstat(fd, &st))
			err = -errno;
		else if (!S_ISDIR(st.st_mode))
			err = S_ISLNK(st.st_mode) ? -EACCES : -ENOTDIR;
		if (dirfd != d->rootfd)
			close(dirfd);
		dirfd = fd;
		comp = slash + 1;
	}
	if (!err) {
		fd = openat(dirfd, comp, flags | O_NOFOLLOW | O_CLOEXEC, mode);
		if (fd < 0)
			err = walk_error(dirfd, comp, errno);
		/* O_PATH | O_NOFOLLOW opens a symlink itself */
		else if ((flags & O_PATH) && !fstat(fd, &st) &&
			 S_ISLNK(st.st_mode))
			err = -EACCES;
		if (err && fd >= 0)
			close(fd);
	}
	if (dirfd >= 0 && dirfd != d->rootfd)
		close(dirfd);
	return err ? err : fd;
}

bool ferry__daemon_path_valid(const char *path)
{
	return rel_path(path) != NULL;
}

int ferry__daemon_open_path(const struct ferry__daemon *d, const char *path,
			    int flags, mode_t mode)
{
	struct open_how how = {
		.flags = (uint64_t)(unsigned)(flags | O_CLOEXEC),
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
			   RESOLVE_NO_MAGICLINKS,
	};
	const char *rel = rel_path(path);
	long fd = -1;

	if (!rel)
		return -EINVAL;
	if (d->no_openat2)
		return walk_open(d, rel, flags, mode);
	/* openat2 refuses a mode without O_CREAT or O_TMPFILE */
	if ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE)
		how.mode = mode;
	for (int i = 0; i < OPENAT2_TRIES; i++) {
		fd = syscall(SYS_openat2, d->rootfd, rel[0] ? rel : ".", &how,
			     sizeof(how));
		if (fd >= 0 || (errno != EINTR && errno != EAGAIN))
			break;
	}
	if (fd >= 0)
		return (int)fd;
	return errno == ELOOP || errno == EXDEV ? -EACCES : -errno;
}

int ferry__daemon_may_replace(const struct ferry__daemon *d,
			      const char *key_name, const char *path,
			      char *why, size_t whylen)
{
	int fd = ferry__daemon_open_path(d, path, O_PATH, 0), err;
	char msg[FERRY_ERRTEXT_MAX];
	struct stat st;

	if (fd < 0)
		return 0; /* nothing to replace (or refused when opened) */
	err = fstat(fd, &st) ? -errno : 0;
	close(fd);
	if (err || !S_ISREG(st.st_mode))
		return 0;
	err = ferry__exports_allow(d->ex, key_name, FERRY__RIGHT_DELETE, path,
				   msg, sizeof(msg));
	if (err)
		ferry__why(why, whylen, "%s (replacing an existing file with "
			   "--force needs the delete right)", msg);
	return err;
}

int ferry__daemon_abs(const struct ferry__daemon *d, const char *path,
		      char *buf, size_t len)
{
	const char *root = ferry__exports_root(d->ex);
	const char *rel = rel_path(path);
	size_t n = strlen(root);
	int w;

	if (!rel)
		return -EINVAL;
	w = snprintf(buf, len, "%s%s%s", root,
		     rel[0] && root[n - 1] != '/' ? "/" : "", rel);
	return w < 0 || (size_t)w >= len ? -ENAMETOOLONG : 0;
}
