/* The receiving side of a file session: check the manifest against the root,
 * plan (finalizing and publishing: files_pub.c). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ferry/sum.h"
#include "files/files.h"
#include "io/fsx.h"
#include "metrics/metrics.h"
#include "pipe/session.h"
#include "util/util.h"

int ferry__frx_sum_target(int parentfd, const char *base, uint64_t from,
			  uint64_t len, uint64_t chunk, uint32_t *crc,
			  uint32_t *adler)
{
	uint64_t size = from + len;
	int fd = openat(parentfd, base, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	uint8_t *buf;
	int err = 0;

	if (fd < 0)
		return -errno;
	buf = malloc(chunk);
	*crc = 0;
	*adler = 1;
	for (uint64_t off = from; buf && off < size && !err; off += chunk) {
		uint64_t n = size - off < chunk ? size - off : chunk;
		err = ferry__fs_pread_full(fd, buf, n, off);
		*crc = ferry_crc32c(*crc, buf, n);
		*adler = ferry_adler32(*adler, buf, n);
	}
	if (!buf)
		err = -ENOMEM;
	free(buf);
	close(fd);
	return err;
}

/* "DEST/PATH" below the root (DEST may be empty). ROOT/.ferry is the
 * staging area: nothing lands there. */
static int join(const struct ferry__frx *r, const char *path, char *buf,
		size_t len)
{
	int n = snprintf(buf, len, "%s%s%s", r->dest, r->dest[0] ? "/" : "",
			 path);
	size_t k = strlen(FERRY__STAGE_DIR);

	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	if (!strncmp(buf, FERRY__STAGE_DIR, k) && (!buf[k] || buf[k] == '/'))
		return -EPERM;
	return 0;
}

static int outside(char *why, size_t whylen, const char *path, int err)
{
	if (err == -EPERM)
		ferry__why(why, whylen,
			   "%s: %s at the top of the receiver's directory is ferry's staging area; send it under another name",
			   path, FERRY__STAGE_DIR);
	else
		ferry__why(why, whylen, "%s: %s", path,
			   err == -ELOOP || err == -EXDEV || err == -ENOTDIR ?
				   "would land outside --dir (a symlink or a file in the way)" :
				   ferry_strerror(err));
	return err;
}

/* The file system a target lands on: the root's (stage 0), or that of a
 * mount point below the root (its staging area opened on first use).
 * Returns the stage's index, or -errno with why. */
static int stage_for(struct ferry__frx *r, const char *full, char *why,
		     size_t whylen)
{
	size_t k = strlen(FERRY__STAGE_DIR), ml = 0;
	const char *base;
	int i, pfd, fd, err;

	for (i = 0; i < r->n_mounts; i++) {
		ml = strlen(r->mounts[i]);
		if (!strncmp(full, r->mounts[i], ml) && full[ml] == '/')
			break;
	}
	if (i == r->n_mounts)
		return 0;
	if (!strncmp(full + ml + 1, FERRY__STAGE_DIR, k) &&
	    (!full[ml + 1 + k] || full[ml + 1 + k] == '/'))
		return outside(why, whylen, full, -EPERM);
	if (r->mstage[i] >= 0)
		return r->mstage[i];
	if (r->n_stage == FRX_STAGES) {
		ferry__why(why, whylen,
			   "the files land on more than %d file systems below --dir; send them in parts",
			   FRX_STAGES);
		return -EMLINK;
	}
	pfd = ferry__fs_open_parent(r->topfd, r->mounts[i], false, 0, &base);
	if (pfd < 0)
		return outside(why, whylen, r->mounts[i], pfd);
	fd = openat(pfd, base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	err = fd < 0 ? -errno : 0;
	close(pfd);
	if (err)
		return outside(why, whylen, r->mounts[i], err);
	struct frx_fs *fs = &r->stage[r->n_stage];
	err = ferry__stage_open(&fs->st, fd, false, why, whylen);
	if (err && err != -ENOENT) {
		close(fd);
		return err;
	}
	fs->fd = fd;
	fs->rel = r->mounts[i];
	r->mounts[i] = NULL; /* the stage owns it now */
	r->mstage[i] = (int)r->n_stage;
	return (int)r->n_stage++;
}

/* This file alone cannot land: the sender is told in the plan, the
 * others go on. */
static int file_fail(struct ferry__frx *r, size_t i,
		     struct ferry__plan_entry *pe, int err, const char *text)
{
	struct frx_file *f = &r->f[i];

	pe->action = FERRY__PLAN_FAIL;
	pe->status = (uint32_t)(err < 0 ? -err : err);
	pe->text = strdup(text);
	f->expect = false;
	f->done = true;
	r->failed++;
	ferry__log(FERRY_LOG_ERR, "%s: %s", r->m.e[i].path, text);
	return pe->text ? 0 : -ENOMEM;
}

#define BUSY_TEXT "another transfer is writing it now; send it again when that one has finished"

/* Resume: with the target claimed, load its journal, re-read every chunk
 * it claims and keep it only if all of them still match (a journal may
 * claim data that never reached the disk). Returns the chunks kept, or
 * -EBUSY when another session holds the target. */
static int64_t try_resume(struct ferry__frx *r, struct frx_file *f,
			  const struct ferry_entry *e, const char *rel)
{
	struct ferry_journal_hdr jh = { e->size, e->mtime_ns, r->chunk };
	struct ferry__stage *st = &r->stage[f->stage].st;
	char jname[FERRY__STAGE_NAME_LEN];
	struct ferry__stage_key k;
	struct frx_live *l;
	bool reused = false, ok;
	int fd = -1, err;

	ferry__stage_key(rel, &k);
	if (!ferry__stage_has(st, &k, FERRY__STAGE_JOURNAL))
		return 0; /* a stale part alone is replaced when written */
	err = ferry__frx_claim(r, st, &k);
	if (err)
		return err;
	/* a journal without its part file is what an attempt that ended
	 * between publishing (the rename) and removing the journal leaves */
	if ((r->flags & FERRY_FILES_NO_RESUME) ||
	    !ferry__stage_has(st, &k, FERRY__STAGE_PART))
		goto drop;
	l = ferry__frx_live_new(st, &k);
	if (!l)
		goto drop;
	ferry__stage_name(&k, FERRY__STAGE_JOURNAL, jname);
	err = ferry__journal_open(&l->j, st->dirfd, jname, &jh, &reused);
	if (!err && reused && atomic_load(&l->j.n_have))
		fd = ferry__stage_open_part(st, &k, false, 0);
	ok = fd >= 0 && ferry__frx_verify(r, fd, e, &l->j, 0, f->n_chunks,
					  r->cksum == FERRY_CKSUM_ADLER32);
	if (fd >= 0)
		close(fd);
	if (!ok) {
		if (fd >= 0 || err == -ESTALE)
			ferry__log(FERRY_LOG_WARN,
				   "%s: the part file does not match its journal; starting it over",
				   e->path);
		if (!err)
			ferry__journal_close(&l->j, -1, NULL, false);
		pthread_mutex_destroy(&l->lock);
		free(l);
		goto drop;
	}
	ferry__journal_detach(&l->j);
	l->jopen = l->created = l->claimed = true;
	atomic_store(&f->live, l);
	return (int64_t)atomic_load(&l->j.n_have);
drop:
	/* start this file over (a file not sent again, one whose target
	 * turns out identical, keeps no part file) */
	ferry__stage_drop(st, &k, true, true);
	ferry__frx_release(r, st, &k);
	return 0;
}

/* Ranges of chunks a journal has. */
static uint32_t ranges_of(const struct ferry_journal *j,
			  struct ferry__range *out)
{
	uint32_t n = 0;

	for (uint64_t k = 0; k < j->n_chunks; k++) {
		if (!j->sums[k].have)
			continue;
		if (n && out[n - 1].first + out[n - 1].count == k)
			out[n - 1].count++;
		else
			out[n++] = (struct ferry__range){ k, 1 };
	}
	return n;
}

/* An existing target: skip-existing or a rerun (EXISTS, with the sums
 * of what the sender sends of it: sp, the whole file or a range),
 * replace with --force, or (1, with why) that file cannot land. */
static int check_existing(struct ferry__frx *r, const struct ferry_entry *e,
			  const struct ferry__span *sp, int pfd,
			  const char *base, const struct stat *st,
			  struct ferry__plan_entry *pe, char *why,
			  size_t whylen)
{
	int err;

	if (!S_ISREG(st->st_mode)) {
		ferry__why(why, whylen,
			   "it exists and is not a regular file; move it away");
		return 1;
	}
	/* skip-existing; and on a rerun (resume), a target an earlier
	 * attempt published: same size and mtime, to be confirmed by
	 * checksum on both sides */
	bool rerun = !(r->flags & (FERRY_FILES_NO_RESUME | FERRY_FILES_FORCE)) &&
		     (int64_t)st->st_mtim.tv_sec * 1000000000 +
				     st->st_mtim.tv_nsec == e->mtime_ns;
	if (((r->flags & FERRY_FILES_SKIP_EXISTING) || rerun) &&
	    (uint64_t)st->st_size == e->size) {
		err = ferry__frx_sum_target(pfd, base, sp->off, sp->len,
					    r->chunk, &pe->crc32c,
					    &pe->adler32);
		if (err) {
			ferry__why(why, whylen, "%s: %s", e->path,
				   ferry_strerror(err));
			return err;
		}
		pe->action = FERRY__PLAN_EXISTS;
	} else if (!(r->flags & FERRY_FILES_FORCE)) {
		ferry__why(why, whylen, "it exists%s; use --force to replace it%s",
			   r->flags & FERRY_FILES_SKIP_EXISTING ?
				   " with another size" : "",
			   r->flags & FERRY_FILES_SKIP_EXISTING ? "" :
				   " or --skip-existing to keep identical files");
		return 1;
	}
	return 0;
}

/* Check one file entry, creating nothing, and decide what the sender does
 * with it. A parent that does not exist yet is fine: the target cannot
 * exist either. */
static int check_file(struct ferry__frx *r, size_t i,
		      struct ferry__plan_entry *pe, char *why, size_t whylen)
{
	const struct ferry_entry *e = &r->m.e[i];
	struct frx_file *f = &r->f[i];
	char full[FERRY_PATH_MAX + FERRY_DEST_MAX];
	struct ferry__span sp = { 0, e->size, 0, 0 };
	const char *base;
	struct stat st;
	int64_t have;
	int err, pfd;

	f->expect = true;
	if (f->split)
		ferry__span_of(e->size, f->roff, f->split, r->chunk, &sp);
	else
		sp.count = ferry__journal_chunks(e->size, r->chunk);
	f->first = sp.first;
	f->n_chunks = sp.count;
	pe->idx = (uint32_t)i;
	pe->action = FERRY__PLAN_SEND;
	err = join(r, e->path, full, sizeof(full));
	if (err)
		return outside(why, whylen, full, err);
	err = stage_for(r, full, why, whylen);
	if (err < 0)
		return err;
	f->stage = (uint8_t)err;
	pfd = ferry__dirs_parent(&r->dirs, full, false, 0, &base);
	if (pfd == -ENAMETOOLONG)
		return file_fail(r, i, pe, pfd,
				 "a name in its path is too long for the receiver's file system");
	if (pfd < 0 && pfd != -ENOENT)
		return outside(why, whylen, full, pfd);
	if (pfd >= 0 && fstatat(pfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		char text[200];
		err = check_existing(r, e, &sp, pfd, base, &st, pe, text,
				     sizeof(text));
		if (!err && f->split && pe->action == FERRY__PLAN_EXISTS &&
		    !(r->flags & FERRY_FILES_FORCE) &&
		    (int64_t)st.st_mtim.tv_sec * 1000000000 +
				    st.st_mtim.tv_nsec == e->mtime_ns)
			ferry__frx_range_there(r, (uint32_t)i, full);
		if (err == 1)
			return file_fail(r, i, pe, -EEXIST, text);
		if (err) {
			ferry__why(why, whylen, "%s", text);
			return err;
		}
	} else if (pfd >= 0 && errno != ENOENT) {
		err = -errno;
		if (err == -ENAMETOOLONG)
			return file_fail(r, i, pe, err,
					 "its name is too long for the receiver's file system");
		return outside(why, whylen, full, err);
	}
	/* a file of one chunk has no journal to resume from; a range that
	 * the target already holds (a rerun) claims nothing */
	if (f->split && (pe->action != FERRY__PLAN_EXISTS ||
			 (r->flags & FERRY_FILES_FORCE)))
		have = ferry__frx_range_open(r, (uint32_t)i, full, why, whylen);
	else if (f->split)
		have = 0;
	else
		have = f->n_chunks > 1 ? try_resume(r, f, e, full) : 0;
	if (have == -EBUSY) {
		pe->action = FERRY__PLAN_SEND; /* no EXISTS sums for it */
		return file_fail(r, i, pe, -EBUSY, BUSY_TEXT);
	}
	if (have < 0 && f->split) {
		if (!why[0])
			ferry__why(why, whylen, "%s: staging it: %s", e->path,
				   ferry_strerror((int)have));
		return (int)have;
	}
	if (have < 0)
		have = 0; /* not resumed: sent whole */
	if (have > 0) {
		struct frx_live *l = atomic_load(&f->live);
		pe->action = FERRY__PLAN_RESUME;
		pe->ranges = calloc((size_t)have, sizeof(*pe->ranges));
		if (!pe->ranges)
			return -ENOMEM;
		pe->n_ranges = ranges_of(&l->j, pe->ranges);
		atomic_store(&f->landed, (uint64_t)have);
		r->resumed++;
	}
	/* a target to be confirmed by checksum takes no new space, unless
	 * --force may replace it */
	if (pe->action == FERRY__PLAN_EXISTS && !(r->flags & FERRY_FILES_FORCE)) {
		r->stage[f->stage].used |= have > 0; /* its journal goes */
		return 0;
	}
	r->stage[f->stage].used = true;
	r->stage[f->stage].need += sp.len - ((uint64_t)have * r->chunk < sp.len ?
						     (uint64_t)have * r->chunk :
						     sp.len);
	return 0;
}

/* A directory entry must not pass through, or be, a symlink. */
static int check_dir(struct ferry__frx *r, const struct ferry_entry *e,
		     char *why, size_t whylen)
{
	char full[FERRY_PATH_MAX + FERRY_DEST_MAX];
	const char *base;
	struct stat st;
	int err = join(r, e->path, full, sizeof(full)), pfd;

	if (err)
		return outside(why, whylen, full, err);
	err = stage_for(r, full, why, whylen);
	if (err < 0)
		return err;
	pfd = ferry__dirs_parent(&r->dirs, full, false, 0, &base);
	if (pfd == -ENOENT)
		return 0;
	if (pfd < 0)
		return outside(why, whylen, full, pfd);
	if (fstatat(pfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    !S_ISDIR(st.st_mode))
		return outside(why, whylen, full, S_ISLNK(st.st_mode) ?
						       -ELOOP : -ENOTDIR);
	return 0;
}

/* Make the staging areas files land in, the destination, the
 * directories, and every file's parent. */
static int create_all(struct ferry__frx *r, char *why, size_t whylen)
{
	char full[FERRY_PATH_MAX + FERRY_DEST_MAX];
	const char *base;
	int err;

	for (unsigned i = 0; i < r->n_stage; i++) {
		struct frx_fs *fs = &r->stage[i];
		if (!fs->used || ferry__stage_is_open(&fs->st))
			continue;
		err = ferry__stage_open(&fs->st, fs->fd, true, why, whylen);
		if (err)
			return err;
	}

	if (r->dest[0]) {
		err = ferry__fs_mkdirs(r->topfd, r->dest, 0755);
		if (err)
			return outside(why, whylen, r->dest, err);
		r->dirfd = openat(r->topfd, r->dest,
				  O_DIRECTORY | O_NOFOLLOW | O_RDONLY | O_CLOEXEC);
	} else {
		r->dirfd = dup(r->topfd);
	}
	if (r->dirfd < 0)
		return outside(why, whylen, r->dest[0] ? r->dest : ".", -errno);
	for (size_t i = 0; i < r->m.n; i++) {
		const struct ferry_entry *e = &r->m.e[i];
		if (e->type == FERRY_ENTRY_DIR) {
			err = ferry__fs_mkdirs(r->dirfd, e->path, 0755);
			if (err)
				return outside(why, whylen, e->path, err);
		} else if (r->f[i].expect) {
			err = join(r, e->path, full, sizeof(full));
			if (!err)
				err = ferry__dirs_parent(&r->dirs, full, true,
							 0755, &base);
			if (err < 0)
				return outside(why, whylen, e->path, err);
		}
	}
	return 0;
}

int ferry__frx_plan(struct ferry__frx *r, struct ferry__plan_entry **plan,
		    size_t *n_plan, char *why, size_t whylen)
{
	struct ferry__plan_entry *pe = calloc(r->m.n + 1, sizeof(*pe));
	uint64_t avail;
	size_t n = 0;
	int err = 0;

	if (!pe)
		return -ENOMEM;
	/* check everything first: a refusal leaves nothing behind */
	for (size_t i = 0; i < r->m.n && !err; i++)
		if (r->m.e[i].type == FERRY_ENTRY_DIR)
			err = check_dir(r, &r->m.e[i], why, whylen);
	for (size_t i = 0; i < r->m.n && !err; i++)
		if (r->m.e[i].type == FERRY_ENTRY_FILE)
			err = check_file(r, i, &pe[n++], why, whylen);
	for (unsigned i = 0; !err && i < r->n_stage; i++) {
		const struct frx_fs *fs = &r->stage[i];
		if (ferry__fs_free_bytes(fs->fd, &avail) || fs->need <= avail)
			continue;
		ferry__why(why, whylen,
			   "not enough space: the files need %llu MiB, the receiver's file system%s%s has %llu MiB free",
			   (unsigned long long)((fs->need + (1 << 20) - 1) >> 20),
			   i ? " at " : "", fs->rel,
			   (unsigned long long)(avail >> 20));
		err = -ENOSPC;
	}
	if (!err)
		err = create_all(r, why, whylen);
	if (err) {
		ferry__frx_plan_free(pe, n);
		return err;
	}
	/* files with every chunk already there wait only for their sums */
	r->pending = r->m.n_files - r->failed;
	for (size_t i = 0; i < r->m.n; i++) {
		struct frx_file *f = &r->f[i];
		if (f->expect && atomic_load(&f->landed) == f->n_chunks) {
			f->queued = true;
			ferry__fileq_push(&r->q, (uint32_t)i);
		}
	}
	*plan = pe;
	*n_plan = n;
	return 0;
}

void ferry__frx_plan_free(struct ferry__plan_entry *pe, size_t n)
{
	for (size_t i = 0; pe && i < n; i++) {
		free(pe[i].ranges);
		free(pe[i].text);
	}
	free(pe);
}

/* Open --dir and its staging area, and check the destination below it
 * ("" or "/": --dir itself). Nothing is created here but the area. */
static int open_dest(struct ferry__frx *r, const char *dir, const char *dest,
		     char *why, size_t whylen)
{
	int err;

	r->topfd = open(dir, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
	if (r->topfd < 0) {
		err = -errno;
		ferry__why(why, whylen, "the receiver's --dir %s: %s", dir,
			   ferry_strerror(err));
		return err;
	}
	while (*dest == '/')
		dest++;
	snprintf(r->dest, sizeof(r->dest), "%s", dest);
	while (r->dest[0] && r->dest[strlen(r->dest) - 1] == '/')
		r->dest[strlen(r->dest) - 1] = '\0';
	if (r->dest[0] && !ferry__path_valid(r->dest)) {
		ferry__why(why, whylen,
			   "destination '%s' is not a plain path below the receiver's --dir",
			   dest);
		return -EXDEV;
	}
	ferry__dirs_init(&r->dirs, r->topfd);
	r->stage[0].fd = r->topfd;
	r->stage[0].rel = strdup("");
	r->stage[0].st.dirfd = -1;
	for (int i = 0; i < FERRY__STAGE_LOCKS; i++)
		r->stage[0].st.lockfd[i] = -1;
	r->n_stage = 1;
	err = r->stage[0].rel ? ferry__stage_open(&r->stage[0].st, r->topfd,
						  false, why, whylen) : -ENOMEM;
	if (err && err != -ENOENT)
		return err;
	r->n_mounts = ferry__fs_mounts_below(r->topfd, &r->mounts);
	if (r->n_mounts < 0)
		return r->n_mounts;
	r->mstage = malloc(((size_t)r->n_mounts + 1) * sizeof(*r->mstage));
	if (!r->mstage)
		return -ENOMEM;
	for (int i = 0; i < r->n_mounts; i++)
		r->mstage[i] = -1;
	return 0;
}

/* How many targets may be open at once: what the open-files limit
 * leaves, less headroom for the sockets, rings and other sessions to
 * come (a target of several chunks takes two descriptors: its part file
 * and its journal). */
static unsigned max_open(void)
{
	struct rlimit rl;
	long used = ferry__fds_in_use();
	uint64_t left;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur == RLIM_INFINITY)
		return FRX_MAX_OPEN;
	left = rl.rlim_cur > (rlim_t)used + 64 ? rl.rlim_cur - (rlim_t)used - 64 : 0;
	left /= 4;
	return left < 2 ? 2 : left > FRX_MAX_OPEN ? FRX_MAX_OPEN : (unsigned)left;
}

static int frx_init(struct ferry__frx *r, const struct ferry_opts *o)
{
	r->f = calloc(r->m.n + 1, sizeof(*r->f));
	if (!r->f)
		return -ENOMEM;
	for (int i = 0; i < FRX_STRIPES; i++)
		pthread_mutex_init(&r->stripe[i], NULL);
	pthread_mutex_init(&r->open_lock, NULL);
	r->locks = true;
	r->max_open = max_open();
	r->umask = ferry__umask();
	if (ferry__batch_init(&r->dones, FERRY_MSG_FILE_DONES))
		return -ENOMEM;
	r->fsync_mode = o->fsync_mode;
	r->timeout_ms = o->timeout_ms;
	r->keep_setid = o->keep_setid && !o->exports;
	if (ferry__random(r->nonce, sizeof(r->nonce)))
		return -EIO;
	return ferry__fileq_init(&r->q, r->m.n);
}

#define FERRY__MAX_ENTRIES 10000000

/* A RANGES entry: a file of the manifest, once, cut in the session's
 * chunks, a range that exists. */
static int one_range(void *arg, const struct ferry__file_range *e)
{
	struct ferry__frx *r = arg;
	struct ferry__span sp;

	if (e->idx >= r->m.n || r->m.e[e->idx].type != FERRY_ENTRY_FILE ||
	    r->f[e->idx].split ||
	    ferry__span_of(r->m.e[e->idx].size, e->offset, e->split, r->chunk,
			   &sp))
		return -FERRY_EPROTO;
	r->f[e->idx].split = e->split;
	r->f[e->idx].roff = e->offset;
	return 0;
}

static int recv_ranges(struct ferry__frx *r, int fd, struct ferry_msg *m,
		       int timeout_ms)
{
	int err;

	do {
		err = ferry__ctrl_recv(fd, m, timeout_ms);
		if (!err && m->type != FERRY_MSG_RANGES)
			err = -FERRY_EPROTO;
		if (!err)
			err = ferry__ranges_decode(m->u.blob.data, m->u.blob.len,
						   one_range, r);
	} while (!err && !m->u.blob.last);
	return err;
}

int ferry__frx_open(struct ferry__frx *r, int fd, const struct ferry_opts *o,
		    uint64_t chunk, const struct ferry__frx_check *check,
		    char *why, size_t whylen)
{
	struct ferry_msg *m = malloc(sizeof(*m));
	struct ferry__plan_entry *pe = NULL;
	size_t n_pe = 0, next = 0;
	int err;

	memset(r, 0, sizeof(*r));
	r->dirfd = r->topfd = -1;
	r->ctrl_fd = fd;
	r->chunk = chunk;
	r->q.efd = -1;
	ferry__manifest_init(&r->m);
	ferry__dirs_init(&r->dirs, -1);
	if (!m)
		return -ENOMEM;
	err = ferry__ctrl_recv(fd, m, o->timeout_ms);
	if (!err && m->type != FERRY_MSG_FILES)
		err = -FERRY_EPROTO;
	if (err)
		goto io;
	r->flags = m->u.files.flags;
	r->cksum = m->u.files.cksum;
	if (r->flags & ~FERRY_FILES_KNOWN) {
		ferry__why(why, whylen,
			   "the sender asks for file-session features this receiver does not know (flags 0x%x): use the same ferry version at both ends",
			   r->flags & ~FERRY_FILES_KNOWN);
		err = -FERRY_EVERSION;
		goto refuse;
	}
	if (r->cksum > FERRY_CKSUM_CRC32C ||
	    m->u.files.n_entries > FERRY__MAX_ENTRIES) {
		err = -FERRY_EPROTO;
		goto io;
	}
	err = open_dest(r, o->dir, m->u.files.dest, why, whylen);
	if (err)
		goto refuse;
	do {
		err = ferry__ctrl_recv(fd, m, o->timeout_ms);
		if (!err && m->type != FERRY_MSG_MANIFEST)
			err = -FERRY_EPROTO;
		if (!err)
			err = ferry__manifest_decode(&r->m, m->u.blob.data,
						     m->u.blob.len,
						     FERRY__MAX_ENTRIES);
		if (err)
			goto io;
	} while (!m->u.blob.last);
	err = frx_init(r, o);
	if (err)
		goto refuse;
	if (r->flags & FERRY_FILES_RANGES) {
		err = recv_ranges(r, fd, m, o->timeout_ms);
		if (err)
			goto io;
	}
	if (check) {
		err = check->fn(check->arg, r->dest, r->flags, &r->m, why,
				whylen);
		if (err)
			goto refuse;
	}
	err = ferry__frx_plan(r, &pe, &n_pe, why, whylen);
	if (err)
		goto refuse;
	do {
		m->type = FERRY_MSG_PLAN;
		m->u.blob.len = (uint32_t)ferry__plan_encode(
			pe, n_pe, &next, m->u.blob.data, FERRY_BLOB_MAX);
		m->u.blob.last = next == n_pe;
		err = ferry__ctrl_send(fd, m, o->timeout_ms);
	} while (!err && !m->u.blob.last && m->u.blob.len);
	if (err)
		goto io;
	goto out;
io:
	ferry__why(why, whylen, "receiving the file list: %s",
		   ferry_strerror(err));
	goto out;
refuse:
	ferry__ctrl_send_error(fd, err, "%s", why);
out:
	ferry__frx_plan_free(pe, n_pe);
	free(m);
	return err;
}
