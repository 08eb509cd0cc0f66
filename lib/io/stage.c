/* The receiver's staging area (io/stage.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "io/stage.h"
#include "util/util.h"

#define DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
/* A staged file's name in its fan-out directory: 32 hex digits, then
 * ".part" or ".jrnl"; a split file's: ".<16 hex>.part" or
 * ".<16 hex>.<16 hex>.jrnl" in between */
#define ENTRY_LEN (32 + 5)
#define SPLIT_BASE_LEN (32 + 1 + 16)
#define SPLIT_PART_LEN (SPLIT_BASE_LEN + 5)
#define RANGE_JRNL_LEN (SPLIT_BASE_LEN + 1 + 16 + 5)

/* The first 16 bytes of SHA-256(tag with its NUL, then data). */
static void key_of(const char *tag, const void *data, size_t len,
		   struct ferry__stage_key *k)
{
	uint8_t md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	EVP_MD_CTX *c = EVP_MD_CTX_new();

	memset(md, 0, sizeof(md));
	if (c && EVP_DigestInit_ex(c, EVP_sha256(), NULL) &&
	    EVP_DigestUpdate(c, tag, strlen(tag) + 1) &&
	    EVP_DigestUpdate(c, data, len))
		EVP_DigestFinal_ex(c, md, &mdlen);
	EVP_MD_CTX_free(c);
	memcpy(k->b, md, sizeof(k->b));
}

void ferry__stage_key(const char *relpath, struct ferry__stage_key *k)
{
	key_of("ferry-stage-1", relpath, strlen(relpath), k);
}

void ferry__stage_key_range(const struct ferry__stage_key *k, uint64_t split,
			    uint64_t offset, struct ferry__stage_key *out)
{
	uint8_t in[sizeof(k->b) + 16];

	memcpy(in, k->b, sizeof(k->b));
	for (int i = 0; i < 8; i++) {
		in[sizeof(k->b) + i] = (uint8_t)(split >> (8 * i));
		in[sizeof(k->b) + 8 + i] = (uint8_t)(offset >> (8 * i));
	}
	key_of("ferry-stage-range-1", in, sizeof(in), out);
}

void ferry__stage_key_solo(const uint8_t nonce[FERRY__STAGE_NONCE],
			   uint32_t idx, struct ferry__stage_key *k)
{
	/* the index first: its low byte fans the files out */
	for (int i = 0; i < 4; i++)
		k->b[i] = (uint8_t)(idx >> (8 * i));
	memcpy(k->b + 4, nonce, FERRY__STAGE_NONCE);
}

static const char hex[] = "0123456789abcdef";

/* "ab/<32 hex>" at p; returns the end. */
static char *put_key(char *p, const struct ferry__stage_key *k)
{
	*p++ = hex[k->b[0] >> 4];
	*p++ = hex[k->b[0] & 15];
	*p++ = '/';
	for (size_t i = 0; i < sizeof(k->b); i++) {
		*p++ = hex[k->b[i] >> 4];
		*p++ = hex[k->b[i] & 15];
	}
	return p;
}

/* "." and 16 hex digits of v, most significant first. */
static char *put_u64(char *p, uint64_t v)
{
	*p++ = '.';
	for (int i = 15; i >= 0; i--)
		*p++ = hex[(v >> (4 * i)) & 15];
	return p;
}

void ferry__stage_name(const struct ferry__stage_key *k,
		       enum ferry__stage_kind kind,
		       char buf[FERRY__STAGE_NAME_LEN])
{
	strcpy(put_key(buf, k), kind == FERRY__STAGE_PART ? ".part" : ".jrnl");
}

void ferry__stage_split_name(const struct ferry__stage_key *k, uint64_t split,
			     enum ferry__stage_kind kind, uint64_t offset,
			     char buf[FERRY__STAGE_NAME_LEN])
{
	char *p = put_u64(put_key(buf, k), split);

	if (kind == FERRY__STAGE_PART)
		strcpy(p, ".part");
	else
		strcpy(put_u64(p, offset), ".jrnl");
}

static bool is_hex(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f')))
			return false;
	return true;
}

static uint64_t hex_u64(const char *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 16; i++)
		v = v << 4 | (uint64_t)(p[i] <= '9' ? p[i] - '0' : p[i] - 'a' + 10);
	return v;
}

/* What a name in a fan-out directory is (nothing ferry makes: OTHER). */
enum entry_kind { E_OTHER, E_PART, E_JRNL, E_SPLIT_PART, E_RANGE_JRNL };

static enum entry_kind entry_kind(const char *n)
{
	size_t len = strlen(n);

	if (len < ENTRY_LEN || !is_hex(n, 32))
		return E_OTHER;
	if (len == ENTRY_LEN)
		return !strcmp(n + 32, ".part") ? E_PART :
		       !strcmp(n + 32, ".jrnl") ? E_JRNL : E_OTHER;
	if (n[32] != '.' || !is_hex(n + 33, 16))
		return E_OTHER;
	if (len == SPLIT_PART_LEN && !strcmp(n + SPLIT_BASE_LEN, ".part"))
		return E_SPLIT_PART;
	if (len == RANGE_JRNL_LEN && n[SPLIT_BASE_LEN] == '.' &&
	    is_hex(n + SPLIT_BASE_LEN + 1, 16) &&
	    !strcmp(n + SPLIT_BASE_LEN + 17, ".jrnl"))
		return E_RANGE_JRNL;
	return E_OTHER;
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

static bool exists_in(int dirfd, const char *name)
{
	return faccessat(dirfd, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0 ||
	       errno != ENOENT;
}

/* Is there a range journal of the split part file named part in dir? */
static bool has_range_journal(DIR *dir, const char *part)
{
	struct dirent *d;

	rewinddir(dir);
	while ((d = readdir(dir)))
		if (entry_kind(d->d_name) == E_RANGE_JRNL &&
		    !strncmp(d->d_name, part, SPLIT_BASE_LEN))
			return true;
	return false;
}

/* In fan-out directory name of an idle area, remove every part file
 * without a journal (no session is inside, and such a file is never
 * resumed: a one-chunk file's, or one whose session died before its
 * first chunk was journaled), then every range journal without its
 * split part file (its data is gone). */
static void sweep_orphans(const struct ferry__stage *s, const char *name)
{
	int fd = openat(s->dirfd, name, DIR_FLAGS);
	DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *d;

	if (!dir) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((d = readdir(dir))) {
		char self[RANGE_JRNL_LEN + 1], other[RANGE_JRNL_LEN + 1];
		enum entry_kind kind = entry_kind(d->d_name);
		long at;
		bool gone;

		if (kind == E_OTHER || kind == E_JRNL)
			continue;
		strcpy(self, d->d_name); /* the kinds above fit */
		strcpy(other, self);
		if (kind == E_PART) {
			strcpy(other + 32, ".jrnl");
			gone = !exists_in(fd, other);
		} else if (kind == E_SPLIT_PART) {
			at = telldir(dir);
			gone = !has_range_journal(dir, self);
			seekdir(dir, at);
		} else {
			strcpy(other + SPLIT_BASE_LEN, ".part");
			gone = !exists_in(fd, other);
		}
		if (gone)
			unlinkat(fd, self, 0);
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

int ferry__stage_claim_shared(struct ferry__stage *s,
			      const struct ferry__stage_key *k)
{
	return lock_byte(s, k, F_RDLCK);
}

/* A publisher holds its key for one publish (a rename, a sync): poll
 * from 1 ms, doubling up to 16 ms. */
int ferry__stage_claim_wait(struct ferry__stage *s,
			    const struct ferry__stage_key *k, int timeout_ms)
{
	uint64_t end = ferry__now_ns() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0) * 1000000;
	struct timespec nap = { 0, 1000000 };
	int err;

	while ((err = lock_byte(s, k, F_WRLCK)) == -EBUSY &&
	       ferry__now_ns() < end) {
		nanosleep(&nap, NULL);
		if (nap.tv_nsec < 16000000)
			nap.tv_nsec *= 2;
	}
	return err;
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

/* An existing part file, opened for writing only if it is ours alone: a
 * second link would carry our writes to wherever it points. */
static int open_ours(const struct ferry__stage *s, const char *name,
		     int flags)
{
	char sub[3] = { name[0], name[1], 0 };
	struct stat st;
	int fd = openat(s->dirfd, name, O_RDWR | O_NOFOLLOW | O_CLOEXEC | flags,
			0600);

	if (fd < 0 && errno == ENOENT && (flags & O_CREAT)) {
		if (mkdirat(s->dirfd, sub, 0700) && errno != EEXIST)
			return -errno;
		fd = openat(s->dirfd, name, O_RDWR | O_NOFOLLOW | O_CLOEXEC |
						     flags, 0600);
	}
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !ours(&st, S_IFREG) || st.st_nlink != 1) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

int ferry__stage_open_part(const struct ferry__stage *s,
			   const struct ferry__stage_key *k, bool create,
			   mode_t mode)
{
	char name[FERRY__STAGE_NAME_LEN];

	ferry__stage_name(k, FERRY__STAGE_PART, name);
	if (create)
		return create_part(s, name, mode);
	return open_ours(s, name, 0);
}

int ferry__stage_open_split(const struct ferry__stage *s,
			    const struct ferry__stage_key *k, uint64_t split,
			    bool create)
{
	char name[FERRY__STAGE_NAME_LEN];

	ferry__stage_split_name(k, split, FERRY__STAGE_PART, 0, name);
	return open_ours(s, name, create ? O_CREAT : 0);
}

int ferry__stage_split_journals(const struct ferry__stage *s,
				const struct ferry__stage_key *k,
				uint64_t split,
				int (*fn)(void *arg, uint64_t offset,
					  const char *name),
				void *arg)
{
	char want[FERRY__STAGE_NAME_LEN], name[FERRY__STAGE_NAME_LEN];
	char sub[3];
	struct dirent *d;
	DIR *dir;
	int fd, ret = 0;

	ferry__stage_split_name(k, split, FERRY__STAGE_PART, 0, want);
	memcpy(sub, want, 2);
	sub[2] = 0;
	fd = openat(s->dirfd, sub, DIR_FLAGS);
	dir = fd >= 0 ? fdopendir(fd) : NULL;
	if (!dir) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	while (!ret && (d = readdir(dir))) {
		if (entry_kind(d->d_name) != E_RANGE_JRNL ||
		    strncmp(d->d_name, want + 3, SPLIT_BASE_LEN))
			continue;
		memcpy(name, want, 3); /* "ab/" */
		memcpy(name + 3, d->d_name, RANGE_JRNL_LEN + 1);
		ret = fn(arg, hex_u64(d->d_name + SPLIT_BASE_LEN + 1), name);
	}
	closedir(dir);
	return ret;
}

static int drop_one(void *arg, uint64_t offset, const char *name)
{
	const struct ferry__stage *s = arg;

	(void)offset;
	unlinkat(s->dirfd, name, 0);
	return 0;
}

void ferry__stage_drop_split(const struct ferry__stage *s,
			     const struct ferry__stage_key *k, uint64_t split,
			     bool part)
{
	char name[FERRY__STAGE_NAME_LEN];

	ferry__stage_split_journals(s, k, split, drop_one, (void *)s);
	if (part) {
		ferry__stage_split_name(k, split, FERRY__STAGE_PART, 0, name);
		unlinkat(s->dirfd, name, 0);
	}
}

/* rename without replacing: renameat2, or where the file system does not
 * have RENAME_NOREPLACE, a hard link (which fails when the name exists)
 * and an unlink. */
static int publish_name(const struct ferry__stage *s, const char *name,
			int parentfd, const char *base, bool replace)
{
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

int ferry__stage_publish(const struct ferry__stage *s,
			 const struct ferry__stage_key *k, int parentfd,
			 const char *base, bool replace)
{
	char name[FERRY__STAGE_NAME_LEN];

	ferry__stage_name(k, FERRY__STAGE_PART, name);
	return publish_name(s, name, parentfd, base, replace);
}

int ferry__stage_publish_split(const struct ferry__stage *s,
			       const struct ferry__stage_key *k,
			       uint64_t split, int parentfd, const char *base,
			       bool replace)
{
	char name[FERRY__STAGE_NAME_LEN];

	ferry__stage_split_name(k, split, FERRY__STAGE_PART, 0, name);
	return publish_name(s, name, parentfd, base, replace);
}
