/* The receiving side of a file session: check the manifest against --dir,
 * plan, publish verified files. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/files.h"
#include "core/session.h"
#include "ferry/sum.h"
#include "io/fsx.h"
#include "metrics/metrics.h"
#include "util/util.h"

/* Sums of an existing target, for skip-existing. */
static int sum_target(int parentfd, const char *base, uint64_t size,
		      uint64_t chunk, uint32_t *crc, uint32_t *adler)
{
	int fd = openat(parentfd, base, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	uint8_t *buf;
	int err = 0;

	if (fd < 0)
		return -errno;
	buf = malloc(chunk);
	*crc = 0;
	*adler = 1;
	for (uint64_t off = 0; buf && off < size && !err; off += chunk) {
		uint64_t len = size - off < chunk ? size - off : chunk;
		err = ferry__fs_pread_full(fd, buf, len, off);
		*crc = ferry_crc32c(*crc, buf, len);
		*adler = ferry_adler32(*adler, buf, len);
	}
	if (!buf)
		err = -ENOMEM;
	free(buf);
	close(fd);
	return err;
}

/* Resume: load the journal, re-read every chunk it claims and keep it
 * only if all of them still match (a journal may claim data that never
 * reached the disk). Returns the chunks kept. */
static uint64_t try_resume(struct ferry__frx *r, struct frx_file *f,
			   const struct ferry_entry *e)
{
	struct ferry_journal_hdr jh = { e->size, e->mtime_ns, r->chunk };
	char jname[256], pname[256];
	uint8_t *buf;
	bool reused = false, ok = true;
	int fd;

	if (ferry__fs_journal_name(f->base, jname, sizeof(jname)) ||
	    ferry__fs_part_name(f->base, pname, sizeof(pname)))
		return 0;
	if (r->flags & FERRY_FILES_NO_RESUME) {
		unlinkat(f->parentfd, jname, 0);
		return 0;
	}
	if (faccessat(f->parentfd, jname, F_OK, AT_SYMLINK_NOFOLLOW))
		return 0;
	/* A journal without its part file is what an attempt that ended
	 * between publishing (the rename) and removing the journal leaves:
	 * nothing to resume, and no part file to create for it. */
	if (faccessat(f->parentfd, pname, F_OK, AT_SYMLINK_NOFOLLOW)) {
		unlinkat(f->parentfd, jname, 0);
		return 0;
	}
	if (ferry__journal_open(&f->j, f->parentfd, jname, &jh, &reused))
		return 0;
	f->jopen = true;
	if (!reused || !atomic_load(&f->j.n_have))
		return 0;
	fd = ferry__fs_open_part(f->parentfd, f->base, e->size);
	buf = malloc(r->chunk);
	for (uint64_t k = 0; fd >= 0 && buf && ok && k < f->n_chunks; k++) {
		uint64_t off = k * r->chunk;
		uint64_t len = e->size - off < r->chunk ? e->size - off : r->chunk;
		if (!f->j.sums[k].have)
			continue;
		ok = ferry__fs_pread_full(fd, buf, len, off) == 0 &&
		     ferry_crc32c(0, buf, len) == f->j.sums[k].crc32c &&
		     (r->cksum != FERRY_CKSUM_ADLER32 ||
		      ferry_adler32(1, buf, len) == f->j.sums[k].adler32);
	}
	free(buf);
	if (fd < 0 || !buf || !ok) {
		/* start this file over (a file not sent again, one whose
		 * target turns out identical, keeps no part file) */
		if (fd >= 0)
			close(fd);
		unlinkat(f->parentfd, pname, 0);
		ferry__journal_close(&f->j, f->parentfd, jname, true);
		f->jopen = false;
		ferry__log(FERRY_LOG_WARN,
			   "%s: the part file does not match its journal; starting it over",
			   e->path);
		return 0;
	}
	f->partfd = fd;
	return atomic_load(&f->j.n_have);
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

/* A path short enough that the message after it survives the 256-byte
 * error text: its last 120 bytes. */
static const char *short_path(const char *path)
{
	size_t n = strlen(path);

	return n > 120 ? path + n - 120 : path;
}

/* "DEST/PATH" below --dir (DEST may be empty). */
static int join(const struct ferry__frx *r, const char *path, char *buf,
		size_t len)
{
	int n = snprintf(buf, len, "%s%s%s", r->dest, r->dest[0] ? "/" : "",
			 path);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static int outside(char *why, size_t whylen, const char *path, int err)
{
	ferry__why(why, whylen, "%s: %s", path,
		   err == -ELOOP || err == -EXDEV || err == -ENOTDIR ?
			   "would land outside --dir (a symlink or a file in the way)" :
			   ferry_strerror(err));
	return err;
}

/* Check one file entry, creating nothing, and decide what the sender does
 * with it. A parent that does not exist yet is fine: the target cannot
 * exist either. */
static int check_file(struct ferry__frx *r, size_t i,
		      struct ferry__plan_entry *pe, uint64_t *need, char *why,
		      size_t whylen)
{
	const struct ferry_entry *e = &r->m.e[i];
	struct frx_file *f = &r->f[i];
	char full[FERRY_PATH_MAX + FERRY_DEST_MAX];
	struct stat st;
	uint64_t have = 0;
	int err;

	f->expect = true;
	f->n_chunks = ferry__journal_chunks(e->size, r->chunk);
	pe->idx = (uint32_t)i;
	pe->action = FERRY__PLAN_SEND;
	err = join(r, e->path, full, sizeof(full));
	if (!err)
		err = ferry__fs_open_parent(r->topfd, full, false, 0, &f->base);
	if (err == -ENOENT) {
		*need += e->size;
		return 0;
	}
	if (err < 0)
		return outside(why, whylen, full, err);
	f->parentfd = err;
	/* base pointed into full: point it at the entry's own name */
	f->base = strrchr(e->path, '/') ? strrchr(e->path, '/') + 1 : e->path;
	if (fstatat(f->parentfd, f->base, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (!S_ISREG(st.st_mode)) {
			ferry__why(why, whylen,
				   "%s exists and is not a regular file",
				   short_path(e->path));
			return -EEXIST;
		}
		/* skip-existing; and on a rerun (resume), a target an earlier
		 * attempt published: same size and mtime, to be confirmed by
		 * checksum on both sides */
		bool rerun = !(r->flags & (FERRY_FILES_NO_RESUME |
					   FERRY_FILES_FORCE)) &&
			     (int64_t)st.st_mtim.tv_sec * 1000000000 +
					     st.st_mtim.tv_nsec == e->mtime_ns;
		if (((r->flags & FERRY_FILES_SKIP_EXISTING) || rerun) &&
		    (uint64_t)st.st_size == e->size) {
			err = sum_target(f->parentfd, f->base, e->size,
					 r->chunk, &pe->crc32c, &pe->adler32);
			if (err) {
				ferry__why(why, whylen, "%s: %s", e->path,
					   ferry_strerror(err));
				return err;
			}
			pe->action = FERRY__PLAN_EXISTS;
		} else if (!(r->flags & FERRY_FILES_FORCE)) {
			ferry__why(why, whylen,
				   "%s exists%s; use --force to replace it%s",
				   short_path(e->path),
				   r->flags & FERRY_FILES_SKIP_EXISTING ?
					   " with another size" : "",
				   r->flags & FERRY_FILES_SKIP_EXISTING ? "" :
					   " or --skip-existing to keep identical files");
			return -EEXIST;
		}
	}
	have = try_resume(r, f, e);
	if (have) {
		pe->action = FERRY__PLAN_RESUME;
		pe->ranges = calloc(have, sizeof(*pe->ranges));
		if (!pe->ranges)
			return -ENOMEM;
		pe->n_ranges = ranges_of(&f->j, pe->ranges);
		atomic_store(&f->landed, have);
		r->resumed++;
	}
	/* a target to be confirmed by checksum takes no new space, unless
	 * --force may replace it */
	if (pe->action == FERRY__PLAN_EXISTS && !(r->flags & FERRY_FILES_FORCE))
		return 0;
	*need += e->size - (have >= f->n_chunks ? e->size : have * r->chunk);
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

	if (!err)
		err = ferry__fs_open_parent(r->topfd, full, false, 0, &base);
	if (err == -ENOENT)
		return 0;
	if (err < 0)
		return outside(why, whylen, full, err);
	pfd = err;
	err = 0;
	if (fstatat(pfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    !S_ISDIR(st.st_mode))
		err = outside(why, whylen, full, S_ISLNK(st.st_mode) ?
						    -ELOOP : -ENOTDIR);
	close(pfd);
	return err;
}

/* Make the destination, the directories, and every file's parent. */
static int create_all(struct ferry__frx *r, char *why, size_t whylen)
{
	int err;

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
		struct frx_file *f = &r->f[i];
		if (e->type == FERRY_ENTRY_DIR) {
			err = ferry__fs_mkdirs(r->dirfd, e->path, 0755);
			if (err)
				return outside(why, whylen, e->path, err);
		} else if (f->parentfd < 0) {
			err = ferry__fs_open_parent(r->dirfd, e->path, true,
						    0755, &f->base);
			if (err < 0)
				return outside(why, whylen, e->path, err);
			f->parentfd = err;
		}
	}
	return 0;
}

int ferry__frx_plan(struct ferry__frx *r, struct ferry__plan_entry **plan,
		    size_t *n_plan, char *why, size_t whylen)
{
	struct ferry__plan_entry *pe = calloc(r->m.n + 1, sizeof(*pe));
	uint64_t need = 0, avail;
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
			err = check_file(r, i, &pe[n++], &need, why, whylen);
	if (!err && ferry__fs_free_bytes(r->topfd, &avail) == 0 && need > avail) {
		ferry__why(why, whylen,
			   "not enough space: the files need %llu MiB, the receiver's file system has %llu MiB free",
			   (unsigned long long)((need + (1 << 20) - 1) >> 20),
			   (unsigned long long)(avail >> 20));
		err = -ENOSPC;
	}
	if (!err)
		err = create_all(r, why, whylen);
	if (err) {
		for (size_t i = 0; i < n; i++)
			free(pe[i].ranges);
		free(pe);
		return err;
	}
	/* files with every chunk already there wait only for their sums */
	for (size_t i = 0; i < r->m.n; i++) {
		struct frx_file *f = &r->f[i];
		if (f->expect && atomic_load(&f->landed) == f->n_chunks) {
			f->queued = true;
			ferry__fileq_push(&r->q, (uint32_t)i);
		}
	}
	r->pending = r->m.n_files;
	*plan = pe;
	*n_plan = n;
	return 0;
}

static void close_file(struct ferry__frx *r, struct frx_file *f, bool remove)
{
	char name[256];

	if (f->jopen && ferry__fs_journal_name(f->base, name, sizeof(name)) == 0)
		ferry__journal_close(&f->j, f->parentfd, name, remove);
	f->jopen = false;
	if (f->partfd >= 0) {
		close(f->partfd);
		f->partfd = -1;
		if (remove && ferry__fs_part_name(f->base, name, sizeof(name)) == 0)
			unlinkat(f->parentfd, name, 0);
	}
	(void)r;
}

static int send_done(int fd, uint32_t idx, int status, uint32_t crc,
		     uint32_t adler, const char *text)
{
	struct ferry_msg *m = calloc(1, sizeof(*m));
	int err;

	if (!m)
		return -ENOMEM;
	m->type = FERRY_MSG_FILE_DONE;
	m->u.file_done.idx = idx;
	m->u.file_done.status = status < 0 ? -status : status;
	m->u.file_done.crc32c = crc;
	m->u.file_done.adler32 = adler;
	snprintf(m->u.file_done.text, sizeof(m->u.file_done.text), "%s", text);
	err = ferry__ctrl_send(fd, m, 10000);
	free(m);
	return err;
}

/* Every chunk landed and the sender's sums are in: verify, publish. */
static int finalize(struct ferry__frx *r, int fd, uint32_t idx)
{
	const struct ferry_entry *e = &r->m.e[idx];
	struct frx_file *f = &r->f[idx];
	uint32_t crc = 0, adler = 1;
	char text[FERRY_ERRTEXT_MAX] = "";
	int err = 0;

	f->done = true;
	r->pending--;
	if (f->skip) {
		close_file(r, f, false);
		r->skipped++;
		return 0; /* the sender reports it */
	}
	if (f->partfd < 0) /* an empty file, or resumed to the end */
		f->partfd = ferry__fs_open_part(f->parentfd, f->base, e->size);
	if (f->partfd < 0) {
		err = f->partfd;
		snprintf(text, sizeof(text), "cannot create it: %s",
			 ferry_strerror(err));
		goto fail;
	}
	if (f->jopen)
		ferry__sums_combine(f->j.sums, f->j.n_chunks, e->size,
				    r->chunk, &crc, &adler);
	if (crc != f->s_crc ||
	    (r->cksum == FERRY_CKSUM_ADLER32 && adler != f->s_adler)) {
		err = -FERRY_ECRC;
		ferry__metrics_file_cksum_fail();
		snprintf(text, sizeof(text),
			 "whole-file checksum mismatch (sender %s:%08x, receiver %s:%08x); not published",
			 r->cksum == FERRY_CKSUM_ADLER32 ? "adler32" : "crc32c",
			 r->cksum == FERRY_CKSUM_ADLER32 ? f->s_adler : f->s_crc,
			 r->cksum == FERRY_CKSUM_ADLER32 ? "adler32" : "crc32c",
			 r->cksum == FERRY_CKSUM_ADLER32 ? adler : crc);
		goto fail;
	}
	err = ferry__fs_publish(f->parentfd, f->partfd, f->base, e->mode,
				e->mtime_ns, r->flags & FERRY_FILES_FORCE);
	if (err) {
		snprintf(text, sizeof(text), "cannot publish it: %s%s",
			 ferry_strerror(err),
			 err == -EEXIST ? " (it appeared meanwhile)" : "");
		goto fail;
	}
	close_file(r, f, true); /* the part name is gone; drop the journal */
	close(f->parentfd);
	f->parentfd = -1;
	r->published++;
	ferry__log(FERRY_LOG_INFO, "published %s:%08x  %s%s%s",
		   r->cksum == FERRY_CKSUM_ADLER32 ? "adler32" : "crc32c",
		   r->cksum == FERRY_CKSUM_ADLER32 ? adler : crc, r->dest,
		   r->dest[0] ? "/" : "", e->path);
	return send_done(fd, idx, 0, crc, adler, "");
fail:
	close_file(r, f, true);
	r->failed++;
	ferry__log(FERRY_LOG_ERR, "%s: %s", e->path, text);
	return send_done(fd, idx, err, crc, adler, text);
}

/* Workers finished files: publish those whose sums are in. */
int ferry__frx_work(void *ctx, int fd, char *why, size_t whylen)
{
	struct ferry__frx *r = ctx;
	uint32_t idx;
	int err;

	ferry__fileq_ack(&r->q);
	while (ferry__fileq_pop(&r->q, &idx)) {
		r->f[idx].queued = true;
		if (!r->f[idx].have_sum || r->f[idx].done)
			continue;
		err = finalize(r, fd, idx);
		if (err) {
			ferry__why(why, whylen, "control channel: %s",
				   ferry_strerror(err));
			return err;
		}
	}
	return 0;
}

int ferry__frx_msg(void *ctx, int fd, const struct ferry_msg *m, char *why,
		   size_t whylen)
{
	struct ferry__frx *r = ctx;
	const struct ferry_msg_file_sum *s = &m->u.file_sum;
	struct frx_file *f;

	if (m->type == FERRY_MSG_FIN)
		return r->pending ? -FERRY_EPROTO : 1;
	if (m->type != FERRY_MSG_FILE_SUM || s->idx >= r->m.n ||
	    !r->f[s->idx].expect || r->f[s->idx].have_sum) {
		ferry__why(why, whylen, "unexpected %s from the sender",
			   ferry__ctrl_type_name(m->type));
		return -FERRY_EPROTO;
	}
	f = &r->f[s->idx];
	f->have_sum = true;
	f->s_crc = s->crc32c;
	f->s_adler = s->adler32;
	f->skip = s->flags & FERRY_FILE_SUM_SKIP;
	if (f->skip || f->queued) {
		int err = finalize(r, fd, s->idx);
		if (err) {
			ferry__why(why, whylen, "control channel: %s",
				   ferry_strerror(err));
			return err;
		}
	}
	return 0;
}

/* Open --dir and check the destination below it ("" or "/": --dir
 * itself). Nothing is created here. */
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
	return 0;
}

#define FERRY__MAX_ENTRIES 10000000

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
	r->chunk = chunk;
	r->q.efd = -1;
	ferry__manifest_init(&r->m);
	if (!m)
		return -ENOMEM;
	err = ferry__ctrl_recv(fd, m, o->timeout_ms);
	if (!err && m->type != FERRY_MSG_FILES)
		err = -FERRY_EPROTO;
	if (err)
		goto io;
	r->flags = m->u.files.flags;
	r->cksum = m->u.files.cksum;
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
	if (check) {
		err = check->fn(check->arg, r->dest, r->flags, &r->m, why,
				whylen);
		if (err)
			goto refuse;
	}
	r->f = calloc(r->m.n + 1, sizeof(*r->f));
	if (!r->f) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < r->m.n; i++) {
		pthread_mutex_init(&r->f[i].lock, NULL);
		r->f[i].parentfd = r->f[i].partfd = -1;
	}
	err = ferry__fileq_init(&r->q, r->m.n);
	if (!err)
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
	for (size_t i = 0; i < n_pe; i++)
		free(pe[i].ranges);
	free(pe);
	free(m);
	return err;
}

void ferry__frx_close(struct ferry__frx *r, bool ok)
{
	for (size_t i = 0; r->f && i < r->m.n; i++) {
		struct frx_file *f = &r->f[i];
		/* unfinished files keep their part and journal for resume */
		close_file(r, f, false);
		if (f->parentfd >= 0)
			close(f->parentfd);
		pthread_mutex_destroy(&f->lock);
	}
	/* directory modes last, so a read-only directory could be filled */
	for (size_t i = 0; ok && r->dirfd >= 0 && i < r->m.n; i++)
		if (r->m.e[i].type == FERRY_ENTRY_DIR)
			fchmodat(r->dirfd, r->m.e[i].path, r->m.e[i].mode & 07777,
				 0);
	if (r->dirfd >= 0)
		close(r->dirfd);
	if (r->topfd >= 0)
		close(r->topfd);
	free(r->f);
	ferry__fileq_free(&r->q);
	ferry__manifest_free(&r->m);
}
