/* The daemon's namespace requests (daemon/daemon.h, ferry__daemon_do): the
 * file system work of STAT, LIST, CKSUM, MKDIR, UNLINK, RMDIR and TOKEN.
 *
 * Every path is opened through ferry__daemon_open_path, so no symlink is
 * followed and nothing outside the root is reached; the last component of
 * a path is then handled with an *at call on its parent's fd (mkdirat,
 * unlinkat, fstatat), which does not follow a symlink either. The callers
 * (daemon.c) checked the rights on req.path and do the wire I/O.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "ctrl/req.h"
#include "daemon/daemon.h"
#include "daemon/tokens.h"
#include "ferry/files.h"
#include "ferry/sum.h"
#include "io/stage.h"
#include "util/util.h"

#define CKSUM_BLOCK (4u << 20)

/* The request path without its leading '/' ("" for the root). daemon.c
 * validated it (ferry__exports_allow) before any op runs. */
static const char *rel(const char *path)
{
	return path[0] == '/' ? path + 1 : path;
}

/* "/path: what" into why; returns err. The common errnos get the words a
 * user expects; EACCES also covers the resolver refusing a symlink. */
static int fail(int err, const char *path, char *why, size_t whylen)
{
	const char *what;

	switch (err) {
	case -ENOENT: what = "no such file or directory"; break;
	case -EEXIST: what = "already exists"; break;
	case -ENOTDIR: what = "not a directory"; break;
	case -EISDIR: what = "is a directory"; break;
	case -ENOTEMPTY: what = "directory not empty"; break;
	case -EACCES:
		what = "permission denied (or a symbolic link on the way: "
		       "the daemon follows none)";
		break;
	default: what = ferry_strerror(err); break;
	}
	ferry__why(why, whylen, "/%.200s: %s", rel(path), what);
	return err;
}

/* Open the parent directory of a non-root relative path; *base points at
 * the last component (inside buf, a copy of the path). */
static int open_parent(struct ferry__daemon *d, const char *relpath,
		       char buf[FERRY_PATH_MAX], const char **base)
{
	char *slash;

	snprintf(buf, FERRY_PATH_MAX, "%s", relpath);
	slash = strrchr(buf, '/');
	if (!slash) {
		*base = buf;
		return ferry__daemon_open_path(d, "", O_PATH | O_DIRECTORY, 0);
	}
	*slash = '\0';
	*base = slash + 1;
	return ferry__daemon_open_path(d, buf, O_PATH | O_DIRECTORY, 0);
}

static int64_t mtime_ns(const struct stat *st)
{
	return (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
}

/* Symlinks are refused by the resolver (EACCES), so only special files
 * (FIFOs, sockets, devices) come out as FERRY_RSTAT_OTHER. */
static int op_stat(struct ferry__daemon *d, const struct ferry_msg_req *req,
		   struct ferry_msg_reply *r, char *why, size_t whylen)
{
	struct ferry_rstat rs = { .type = FERRY_RSTAT_OTHER };
	struct stat st;
	size_t len;
	int fd, err;

	fd = ferry__daemon_open_path(d, req->path, O_PATH, 0);
	if (fd < 0)
		return fail(fd, req->path, why, whylen);
	err = fstat(fd, &st) ? -errno : 0;
	close(fd);
	if (err)
		return fail(err, req->path, why, whylen);
	if (S_ISREG(st.st_mode))
		rs.type = FERRY_ENTRY_FILE;
	else if (S_ISDIR(st.st_mode))
		rs.type = FERRY_ENTRY_DIR;
	rs.mode = st.st_mode & 07777;
	rs.size = S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0;
	rs.mtime_ns = mtime_ns(&st);
	err = ferry__rstat_encode(&rs, r->data, FERRY_REPLY_DATA_MAX, &len);
	if (err)
		return fail(err, req->path, why, whylen);
	r->len = (uint32_t)len;
	return 0;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in dir but "." and "..", sorted. */
static int read_names(DIR *dir, char ***out, size_t *n_out)
{
	char **v = NULL, **nv;
	size_t n = 0, cap = 0;
	struct dirent *de;

	for (errno = 0; (de = readdir(dir)); errno = 0) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv)
				goto nomem;
			v = nv;
		}
		v[n] = strdup(de->d_name);
		if (!v[n])
			goto nomem;
		n++;
	}
	if (errno) {
		int err = -errno;

		while (n)
			free(v[--n]);
		free(v);
		return err;
	}
	qsort(v, n, sizeof(*v), cmp_name);
	*out = v;
	*n_out = n;
	return 0;
nomem:
	while (n)
		free(v[--n]);
	free(v);
	return -ENOMEM;
}

/* The children of a directory, by name, as FILE and DIR entries. Symlinks
 * and special files are left out: the daemon serves neither (a symlink is
 * refused by every other request), so listing them would only name
 * entries a client cannot use. A child removed while we look is skipped. */
static int op_list(struct ferry__daemon *d, const struct ferry_msg_req *req,
		   struct ferry_manifest *list, char *why, size_t whylen)
{
	char **names = NULL;
	size_t n = 0;
	struct stat st;
	DIR *dir;
	int fd, err;

	fd = ferry__daemon_open_path(d, req->path, O_RDONLY | O_DIRECTORY, 0);
	if (fd < 0)
		return fail(fd, req->path, why, whylen);
	dir = fdopendir(fd);
	if (!dir) {
		err = -errno;
		close(fd);
		return fail(err, req->path, why, whylen);
	}
	err = read_names(dir, &names, &n);
	for (size_t i = 0; !err && i < n; i++) {
		uint8_t type;

		/* the staging area is not the clients' to see */
		if (!rel(req->path)[0] && !strcmp(names[i], FERRY__STAGE_DIR))
			continue;
		if (fstatat(dirfd(dir), names[i], &st, AT_SYMLINK_NOFOLLOW))
			continue;
		if (S_ISREG(st.st_mode))
			type = FERRY_ENTRY_FILE;
		else if (S_ISDIR(st.st_mode))
			type = FERRY_ENTRY_DIR;
		else
			continue;
		err = ferry__manifest_add(list, names[i], NULL, type,
					  st.st_mode & 07777,
					  (uint64_t)st.st_size, mtime_ns(&st));
		if (err == -EINVAL)
			err = 0; /* a name no manifest can carry */
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	closedir(dir);
	return err ? fail(err, req->path, why, whylen) : 0;
}

static int sum_fd(int fd, uint64_t kind, uint32_t *value)
{
	uint8_t *buf = malloc(CKSUM_BLOCK);
	uint32_t v = kind == FERRY_CKSUM_ADLER32 ? 1 : 0;
	uint64_t off = 0;
	int err = 0;

	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t got = pread(fd, buf, CKSUM_BLOCK, (off_t)off);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			err = -errno;
			break;
		}
		if (got == 0)
			break;
		v = kind == FERRY_CKSUM_ADLER32 ?
			    ferry_adler32(v, buf, (size_t)got) :
			    ferry_crc32c(v, buf, (size_t)got);
		off += (uint64_t)got;
	}
	free(buf);
	*value = v;
	return err;
}

static int op_cksum(struct ferry__daemon *d, const struct ferry_msg_req *req,
		    struct ferry_msg_reply *r, char *why, size_t whylen)
{
	struct stat st;
	uint32_t value;
	int fd, err;

	if (req->arg != FERRY_CKSUM_ADLER32 && req->arg != FERRY_CKSUM_CRC32C) {
		ferry__why(why, whylen, "unknown checksum type %llu (adler32 "
			   "is %d, crc32c %d)", (unsigned long long)req->arg,
			   FERRY_CKSUM_ADLER32, FERRY_CKSUM_CRC32C);
		return -EINVAL;
	}
	/* O_NONBLOCK: opening a FIFO must not wait for a writer */
	fd = ferry__daemon_open_path(d, req->path,
				     O_RDONLY | O_NONBLOCK | O_NOCTTY, 0);
	if (fd < 0)
		return fail(fd, req->path, why, whylen);
	err = fstat(fd, &st) ? -errno : 0;
	if (!err && S_ISDIR(st.st_mode))
		err = -EISDIR;
	else if (!err && !S_ISREG(st.st_mode)) {
		close(fd);
		ferry__why(why, whylen, "/%.200s: not a regular file",
			   rel(req->path));
		return -EINVAL;
	}
	if (!err)
		err = sum_fd(fd, req->arg, &value);
	close(fd);
	if (err)
		return fail(err, req->path, why, whylen);
	r->arg = value;
	return 0;
}

/* mkdir of one non-root relative path whose parent exists. */
static int mkdir_one(struct ferry__daemon *d, const char *relpath,
		     mode_t mode)
{
	char buf[FERRY_PATH_MAX];
	const char *base;
	int pfd = open_parent(d, relpath, buf, &base), err;

	if (pfd < 0)
		return pfd;
	err = mkdirat(pfd, base, mode) ? -errno : 0;
	close(pfd);
	return err;
}

/* mkdir -p: each missing component in turn, with the write right checked
 * on each one created (a key with paths /a/b may not create /a). */
static int mkdir_parents(struct ferry__daemon *d, const struct ferry__who *who,
			 const char *relpath, mode_t mode, char *why,
			 size_t whylen)
{
	char buf[FERRY_PATH_MAX];
	size_t n = strlen(relpath);
	int err;

	snprintf(buf, sizeof(buf), "%s", relpath);
	for (size_t i = 1; i <= n; i++) {
		bool last = i == n;
		int fd;

		if (!last && buf[i] != '/')
			continue;
		buf[i] = '\0';
		fd = ferry__daemon_open_path(d, buf, O_PATH | O_DIRECTORY, 0);
		if (fd >= 0) {
			close(fd);
		} else if (fd == -ENOENT) {
			err = ferry__exports_allow(d->ex, who->name,
						   FERRY__RIGHT_WRITE, buf,
						   why, whylen);
			if (err)
				return err;
			/* parents stay usable by the daemon: u+wx */
			err = mkdir_one(d, buf, last ? mode : mode | 0300);
			if (err && err != -EEXIST)
				return fail(err, buf, why, whylen);
		} else {
			/* the last one is a file: "exists", as mkdir -p */
			return fail(last && fd == -ENOTDIR ? -EEXIST : fd, buf,
				    why, whylen);
		}
		if (!last)
			buf[i] = '/';
	}
	return 0;
}

static int op_mkdir(struct ferry__daemon *d, const struct ferry__who *who,
		    const struct ferry_msg_req *req, char *why, size_t whylen)
{
	const char *p = rel(req->path);
	mode_t mode = req->arg ? (mode_t)req->arg : 0755;
	int err;

	if (req->arg > 07777) {
		ferry__why(why, whylen, "mode %llo is not a permission mode "
			   "(07777 at most)", (unsigned long long)req->arg);
		return -EINVAL;
	}
	if (req->flags & FERRY_REQ_PARENTS)
		return p[0] ? mkdir_parents(d, who, p, mode, why, whylen) : 0;
	err = p[0] ? mkdir_one(d, p, mode) : -EEXIST;
	if (err == -ENOENT) {
		ferry__why(why, whylen, "/%.200s: its parent directory does "
			   "not exist (create parents with -p)", p);
		return err;
	}
	return err ? fail(err, req->path, why, whylen) : 0;
}

/* UNLINK (dir false) or RMDIR (dir true). */
static int op_remove(struct ferry__daemon *d, const struct ferry_msg_req *req,
		     bool dir, char *why, size_t whylen)
{
	char buf[FERRY_PATH_MAX];
	const char *base;
	int pfd, err;

	if (!rel(req->path)[0]) {
		ferry__why(why, whylen, "the export root cannot be removed");
		return -EBUSY;
	}
	pfd = open_parent(d, rel(req->path), buf, &base);
	if (pfd < 0)
		return fail(pfd, req->path, why, whylen);
	err = unlinkat(pfd, base, dir ? AT_REMOVEDIR : 0) ? -errno : 0;
	close(pfd);
	if (dir && err == -EEXIST)
		err = -ENOTEMPTY; /* some file systems say EEXIST */
	return err ? fail(err, req->path, why, whylen) : 0;
}

/* TOKEN: the key must be able to write every file the token names (and,
 * with FERRY_FILES_FORCE, to delete those it would replace); the reply
 * carries the token's secret wrapped under the connection's key. */
static int op_token(struct ferry__daemon *d, const struct ferry__who *who,
		    const struct ferry_msg_req *req,
		    struct ferry_msg_reply *r, char *why, size_t whylen)
{
	const char *dest = rel(req->path);
	struct ferry_token_reply tr = { .name = "" };
	struct ferry_manifest files;
	char path[FERRY_PATH_MAX];
	struct ferry_key secret;
	uint64_t expiry;
	size_t len;
	int err;

	ferry__manifest_init(&files);
	if (req->arg > FERRY__TOKEN_TTL_MAX) {
		ferry__why(why, whylen, "a token lives at most %d s, not "
			   "%llu s", FERRY__TOKEN_TTL_MAX,
			   (unsigned long long)req->arg);
		return -EINVAL;
	}
	err = ferry__manifest_decode(&files, req->data, req->len,
				     FERRY_PUSH_MAX_ITEMS);
	if (err) {
		if (err == -FERRY_ETOOBIG)
			ferry__why(why, whylen, "a token names at most %d "
				   "files", FERRY_PUSH_MAX_ITEMS);
		else
			ferry__why(why, whylen, "the token request's file "
				   "list is malformed");
		err = err == -ENOMEM ? -ENOMEM : -EINVAL;
		goto out;
	}
	for (size_t i = 0; i < files.n; i++) {
		int w = snprintf(path, sizeof(path), "%s%s%s", dest,
				 dest[0] ? "/" : "", files.e[i].path);

		if (w < 0 || (size_t)w >= sizeof(path)) {
			ferry__why(why, whylen, "/%.100s/%.100s...: path too "
				   "long", dest, files.e[i].path);
			err = -EINVAL;
			goto out;
		}
		err = ferry__exports_allow(d->ex, who->name, FERRY__RIGHT_WRITE,
					   path, why, whylen);
		if (!err && (req->flags & FERRY_FILES_FORCE))
			err = ferry__daemon_may_replace(d, who->name, path, why,
							whylen);
		if (err)
			goto out;
	}
	err = ferry__tokens_issue(d->tokens, who->name, req->path, &files,
				  req->flags, (unsigned)req->arg, tr.name,
				  &secret, &expiry, why, whylen);
	if (err)
		goto out;
	err = ferry__ctrl_wrap(who->wrap, tr.name, secret.bytes, tr.secret);
	if (!err)
		err = ferry__token_encode(&tr, r->data, FERRY_REPLY_DATA_MAX,
					  &len);
	if (err) {
		ferry__tokens_drop(d->tokens, tr.name);
		ferry__why(why, whylen, "token: %s", ferry_strerror(err));
		err = -EIO;
		goto out;
	}
	r->len = (uint32_t)len;
	r->arg = expiry;
out:
	OPENSSL_cleanse(&secret, sizeof(secret));
	OPENSSL_cleanse(&tr, sizeof(tr));
	ferry__manifest_free(&files);
	return err;
}

int ferry__daemon_do(struct ferry__daemon *d, const struct ferry__who *who,
		     const struct ferry_msg_req *req,
		     struct ferry_msg_reply *r, struct ferry_manifest *list,
		     char *why, size_t whylen)
{
	switch (req->op) {
	case FERRY_REQ_STAT:
		return op_stat(d, req, r, why, whylen);
	case FERRY_REQ_LIST:
		return op_list(d, req, list, why, whylen);
	case FERRY_REQ_CKSUM:
		return op_cksum(d, req, r, why, whylen);
	case FERRY_REQ_MKDIR:
		return op_mkdir(d, who, req, why, whylen);
	case FERRY_REQ_UNLINK:
		return op_remove(d, req, false, why, whylen);
	case FERRY_REQ_RMDIR:
		return op_remove(d, req, true, why, whylen);
	case FERRY_REQ_TOKEN:
		return op_token(d, who, req, r, why, whylen);
	default:
		ferry__why(why, whylen, "unknown request op %u", req->op);
		return -EOPNOTSUPP;
	}
}
