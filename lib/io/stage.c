/* The receiver's staging area (io/stage.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "io/stage.h"
#include "util/util.h"

#define DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
/* A staged file's name in its fan-out directory: 32 hex digits, .part
 * or .jrnl */
#define ENTRY_LEN (32 + 5)

void ferry__stage_key(const char *relpath, struct ferry__stage_key *k)
{
	static const char tag[] = "ferry-stage-1"; /* with its NUL */
	uint8_t md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	EVP_MD_CTX *c = EVP_MD_CTX_new();

	memset(md, 0, sizeof(md));
	if (c && EVP_DigestInit_ex(c, EVP_sha256(), NULL) &&
	    EVP_DigestUpdate(c, tag, sizeof(tag)) &&
	    EVP_DigestUpdate(c, relpath, strlen(relpath)))
		EVP_DigestFinal_ex(c, md, &mdlen);
	EVP_MD_CTX_free(c);
	memcpy(k->b, md, sizeof(k->b));
}

void ferry__stage_key_solo(const uint8_t nonce[FERRY__STAGE_NONCE],
			   uint32_t idx, struct ferry__stage_key *k)
{
	/* the index first: its low byte fans the files out */
	for (int i = 0; i < 4; i++)
		k->b[i] = (uint8_t)(idx >> (8 * i));
	memcpy(k->b + 4, nonce, FERRY__STAGE_NONCE);
}

void ferry__stage_name(const struct ferry__stage_key *k,
		       enum ferry__stage_kind kind,
		       char buf[FERRY__STAGE_NAME_LEN])
{
	static const char hex[] = "0123456789abcdef";
	char *p = buf;

	*p++ = hex[k->b[0] >> 4];
	*p++ = hex[k->b[0] & 15];
	*p++ = '/';
	for (size_t i = 0; i < sizeof(k->b); i++) {
		*p++ = hex[k->b[i] >> 4];
		*p++ = hex[k->b[i] & 15];
	}
	strcpy(p, kind == FERRY__STAGE_PART ? ".part" : ".jrnl");
}

/* Is st something of this user's that no one else may change? */
static bool ours(const struct stat *st, mode_t type)
{
	return (st->st_mode & S_IFMT) == type && st->st_uid == geteuid() &&
	       !(st->st_mode & 022);
}

static int refuse(char *why, size_t whylen, const char *what, int err)
{
	ferry__why(why, whylen,
		   "%s: the receiver's staging area %s; remove it (ferry makes its own, mode 0700)",
		   FERRY__STAGE_DIR, what);
	return err;
}

/* Open ROOT/.ferry with a shared flock. 1: it was removed while we
 * waited for the lock (try again). */
static int open_dir(struct ferry__stage *s, bool create, char *why,
		    size_t whylen)
{
	struct stat st;
	int fd;

	if (!create && faccessat(s->topfd, FERRY__STAGE_DIR, F_OK,
				 AT_SYMLINK_NOFOLLOW) && errno == ENOENT)
		return -ENOENT;
	if (create && mkdirat(s->topfd, FERRY__STAGE_DIR, 0700) &&
	    errno != EEXIST) {
		int err = -errno;
		ferry__why(why, whylen, "cannot make the staging area %s: %s",
			   FERRY__STAGE_DIR, ferry_strerror(err));
		return err;
	}
	fd = openat(s->topfd, FERRY__STAGE_DIR, DIR_FLAGS);
	if (fd < 0)
		return refuse(why, whylen, "is not a directory", -ENOTDIR);
	if (fstat(fd, &st) || !ours(&st, S_IFDIR)) {
		close(fd);
		return refuse(why, whylen,
			      "belongs to another user or is writable by others",
			      -EACCES);
	}
	while (flock(fd, LOCK_SH) && errno == EINTR)
		;
	if (fstat(fd, &st) || st.st_nlink == 0) {
		close(fd); /* the last session removed it meanwhile */
		return 1;
	}
	s->dirfd = fd;
	return 0;
}

int ferry__stage_open(struct ferry__stage *s, int topfd, bool create,
		      char *why, size_t whylen)
{
	struct stat st;
	int err = 1;

	s->topfd = topfd;
	s->dirfd = -1;
	for (int i = 0; i < FERRY__STAGE_LOCKS; i++)
		s->lockfd[i] = -1;
	for (int tries = 0; err == 1 && tries < 100; tries++)
		err = open_dir(s, create, why, whylen);
	if (err)
		return err < 0 ? err : -EAGAIN;
	for (int i = 0; i < FERRY__STAGE_LOCKS; i++) {
		char name[16];
		snprintf(name, sizeof(name), "lock.%x", i);
		s->lockfd[i] = openat(s->dirfd, name, O_RDWR | O_CREAT |
						     O_NOFOLLOW | O_CLOEXEC,
				      0600);
		if (s->lockfd[i] < 0 || fstat(s->lockfd[i], &st) ||
		    !ours(&st, S_IFREG)) {
			err = s->lockfd[i] < 0 ? -errno : -EACCES;
			ferry__stage_close(s);
			if (err == -EMFILE || err == -ENFILE) {
				ferry__why(why, whylen,
					   "%s: opening its lock files: %s",
					   FERRY__STAGE_DIR, ferry_strerror(err));
				return err;
			}
			return refuse(why, whylen,
				      "has a lock file that is not ferry's",
				      -EACCES);
		}
	}
	return 0;
}

/* In fan-out directory name of an idle area, remove every part file
 * without a journal: no session is inside, and such a file is never
 * resumed (a one-chunk file's, or one whose session died before its
 * first chunk was journaled). */
static void sweep_orphans(const struct ferry__stage *s, const char *name)
{
	char jrnl[FERRY__STAGE_NAME_LEN];
	struct dirent *d;
	int fd = openat(s->dirfd, name, DIR_FLAGS);
	DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;

	if (!dir) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((d = readdir(dir))) {
		size_t len = strlen(d->d_name);
		if (len != ENTRY_LEN || strcmp(d->d_name + len - 5, ".part"))
			continue;
		memcpy(jrnl, d->d_name, len - 5);
		strcpy(jrnl + len - 5, ".jrnl");
		if (faccessat(fd, jrnl, F_OK, AT_SYMLINK_NOFOLLOW) &&
		    errno == ENOENT)
			unlinkat(fd, d->d_name, 0);
	}
	closedir(dir);
}

/* Remove the area when this is the last session and nothing is staged:
 * an exclusive flock says no one else is inside; rmdir of each fan-out
 * directory fails while it holds a file. */
static void remove_if_idle(struct ferry__stage *s)
{
	struct dirent *d;
	bool empty = true;
	DIR *dir;
	int fd;

	if (flock(s->dirfd, LOCK_EX | LOCK_NB))
		return;
	fd = dup(s->dirfd);
	dir = fd >= 0 ? fdopendir(fd) : NULL;
	if (!dir) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((d = readdir(dir))) {
		if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, "..") ||
		    !strncmp(d->d_name, "lock.", 5))
			continue;
		if (unlinkat(s->dirfd, d->d_name, AT_REMOVEDIR) == 0)
			continue;
		if (errno == ENOTEMPTY) {
			sweep_orphans(s, d->d_name);
			if (unlinkat(s->dirfd, d->d_name, AT_REMOVEDIR) == 0)
				continue;
		}
		empty = false;
	}
	closedir(dir);
	for (int i = 0; empty && i < FERRY__STAGE_LOCKS; i++) {
		char name[16];
		snprintf(name, sizeof(name), "lock.%x", i);
		unlinkat(s->dirfd, name, 0);
	}
	if (empty)
		unlinkat(s->topfd, FERRY__STAGE_DIR, AT_REMOVEDIR);
}

void ferry__stage_close(struct ferry__stage *s)
{
	for (int i = 0; i < FERRY__STAGE_LOCKS; i++) {
		if (s->lockfd[i] >= 0)
			close(s->lockfd[i]); /* every claim goes with it */
		s->lockfd[i] = -1;
	}
	if (s->dirfd >= 0) {
		remove_if_idle(s);
		close(s->dirfd);
	}
	s->dirfd = -1;
}

/* One byte of a lock file per target (62 bits of the key; the file by
 * its last byte). */
static int lock_byte(const struct ferry__stage *s,
		     const struct ferry__stage_key *k, short type)
{
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET, .l_len = 1 };
	uint64_t off = 0;

	for (int i = 0; i < 8; i++)
		off |= (uint64_t)k->b[i] << (8 * i);
	fl.l_start = (off_t)(off & ((UINT64_C(1) << 62) - 1));
	if (fcntl(s->lockfd[k->b[15] % FERRY__STAGE_LOCKS], F_OFD_SETLK,
		  &fl) == 0)
		return 0;
	return errno == EAGAIN || errno == EACCES ? -EBUSY : -errno;
}

int ferry__stage_claim(struct ferry__stage *s,
		       const struct ferry__stage_key *k)
{
	return lock_byte(s, k, F_WRLCK);
}

void ferry__stage_release(struct ferry__stage *s,
			  const struct ferry__stage_key *k)
{
	lock_byte(s, k, F_UNLCK);
}

bool ferry__stage_has(const struct ferry__stage *s,
		      const struct ferry__stage_key *k,
		      enum ferry__stage_kind kind)
{
	char name[FERRY__STAGE_NAME_LEN];

	if (s->dirfd < 0)
		return false;
	ferry__stage_name(k, kind, name);
	return faccessat(s->dirfd, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

void ferry__stage_drop(const struct ferry__stage *s,
		       const struct ferry__stage_key *k, bool part,
		       bool journal)
{
	char name[FERRY__STAGE_NAME_LEN];

	if (part) {
		ferry__stage_name(k, FERRY__STAGE_PART, name);
		unlinkat(s->dirfd, name, 0);
	}
	if (journal) {
		ferry__stage_name(k, FERRY__STAGE_JOURNAL, name);
		unlinkat(s->dirfd, name, 0);
	}
}

static int create_part(const struct ferry__stage *s, const char *name,
		       mode_t mode)
{
	const int flags = O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
	char sub[3] = { name[0], name[1], 0 };
	int fd = openat(s->dirfd, name, flags, mode);

	if (fd < 0 && errno == ENOENT) {
		if (mkdirat(s->dirfd, sub, 0700) && errno != EEXIST)
			return -errno;
		fd = openat(s->dirfd, name, flags, mode);
	}
	if (fd < 0 && errno == EEXIST) {
		/* stale: an attempt that never journaled a chunk */
		unlinkat(s->dirfd, name, 0);
		fd = openat(s->dirfd, name, flags, mode);
	}
	return fd >= 0 ? fd : -errno;
}

int ferry__stage_open_part(const struct ferry__stage *s,
			   const struct ferry__stage_key *k, bool create,
			   mode_t mode)
{
	char name[FERRY__STAGE_NAME_LEN];
	struct stat st;
	int fd;

	ferry__stage_name(k, FERRY__STAGE_PART, name);
	if (create)
		return create_part(s, name, mode);
	fd = openat(s->dirfd, name, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* a part file is reused only if it is ours alone: a second link
	 * would carry our writes to wherever it points */
	if (fstat(fd, &st) || !ours(&st, S_IFREG) || st.st_nlink != 1) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

/* rename without replacing: renameat2, or where the file system does not
 * have RENAME_NOREPLACE, a hard link (which fails when the name exists)
 * and an unlink. */
int ferry__stage_publish(const struct ferry__stage *s,
			 const struct ferry__stage_key *k, int parentfd,
			 const char *base, bool replace)
{
	char name[FERRY__STAGE_NAME_LEN];

	ferry__stage_name(k, FERRY__STAGE_PART, name);
	if (replace)
		return renameat(s->dirfd, name, parentfd, base) ? -errno : 0;
	if (renameat2(s->dirfd, name, parentfd, base, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -errno;
	if (linkat(s->dirfd, name, parentfd, base, 0))
		return -errno;
	return unlinkat(s->dirfd, name, 0) ? -errno : 0;
}
