/* The receiving side of a file session, second half: finalize files
 * whose chunks and sums are in, publish them in batches, close.
 *
 * A verified file is published by renaming its part file from the
 * staging area to its final name. How often the receiver syncs first is
 * --fsync's choice (enum ferry_fsync): with "batch", the default, files
 * wait in a batch (up to FRX_BATCH_FILES files, FRX_BATCH_BYTES bytes or
 * FRX_BATCH_NS) and one syncfs covers them all, so a small file costs no
 * fsync of its own and still never shows under its name before its data
 * is on disk.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ferry/sum.h"
#include "files/files.h"
#include "io/fsx.h"
#include "metrics/metrics.h"
#include "pipe/session.h"
#include "util/util.h"

#define BUSY_TEXT "another transfer is writing it now; send it again when that one has finished"

/* Tell the sender how a file ended (batched: ferry__batch_send goes out
 * when the control thread is done for now). */
static int send_done(struct ferry__frx *r, uint32_t idx, int status,
		     uint32_t crc, uint32_t adler, const char *text)
{
	return ferry__batch_done(&r->dones, r->ctrl_fd, 10000, idx, status,
				 crc, adler, text);
}

static void rel_of(const struct ferry__frx *r, uint32_t idx, char *buf,
		   size_t len)
{
	snprintf(buf, len, "%s%s%s", r->dest, r->dest[0] ? "/" : "",
		 r->m.e[idx].path);
}

/* A file that will not be published: its staged files go (staged: if
 * this session wrote them; claimed: and holds the target), the sender is
 * told why. */
static int fail_file(struct ferry__frx *r, uint32_t idx, int err,
		     struct ferry__stage *st,
		     const struct ferry__stage_key *staged, bool claimed,
		     uint32_t crc, uint32_t adler, const char *text)
{
	if (staged)
		ferry__stage_drop(st, staged, true, true);
	if (staged && claimed)
		ferry__frx_release(r, st, staged);
	r->failed++;
	ferry__log(FERRY_LOG_ERR, "%s: %s", r->m.e[idx].path, text);
	return send_done(r, idx, err, crc, adler, text);
}

static const char *publish_error(int err, char *buf, size_t len)
{
	if (err == -EXDEV)
		return "cannot publish it: its directory is on another file system than the receiver's staging area (" FERRY__STAGE_DIR " at the top of --dir)";
	snprintf(buf, len, "cannot publish it: %s%s", ferry_strerror(err),
		 err == -EEXIST ? " (another transfer published it meanwhile)" :
		 err == -ENAMETOOLONG || err == -EINVAL || err == -EILSEQ ?
				  " (a name the receiver's file system cannot hold)" : "");
	return buf;
}

/* A name taken by another session meanwhile (the publish found EEXIST):
 * if what stands there is this very file (size, mtime and checksums: an
 * earlier attempt of the same transfer, still finishing when the rerun
 * came), it is published all the same. */
static bool already_there(struct ferry__frx *r, const struct frx_pub *b,
			  int pfd, const char *base)
{
	const struct ferry_entry *e = &r->m.e[b->idx];
	uint32_t crc, adler;
	struct stat st;

	if (fstatat(pfd, base, &st, AT_SYMLINK_NOFOLLOW) ||
	    !S_ISREG(st.st_mode) || (uint64_t)st.st_size != e->size ||
	    (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec !=
		    e->mtime_ns)
		return false;
	return ferry__frx_sum_target(pfd, base, 0, e->size, r->chunk, &crc,
				     &adler) == 0 &&
	       crc == b->crc &&
	       (r->cksum != FERRY_CKSUM_ADLER32 || adler == b->adler);
}

/* Rename every file of the batch to its final name (after one syncfs
 * with --fsync batch) and tell the sender. */
static int flush(struct ferry__frx *r)
{
	int sync_err = 0, err = 0;

	if (!r->n_batch)
		return 0;
	for (unsigned i = 0; r->fsync_mode == FERRY_FSYNC_BATCH && !sync_err &&
			     i < r->n_stage; i++)
		if (ferry__stage_is_open(&r->stage[i].st) &&
		    syncfs(r->stage[i].st.dirfd))
			sync_err = -errno;
	for (size_t i = 0; i < r->n_batch; i++) {
		const struct frx_pub *b = &r->batch[i];
		char rel[FERRY_PATH_MAX + FERRY_DEST_MAX], text[FERRY_ERRTEXT_MAX];
		const char *base;
		int pfd, e2 = sync_err;

		rel_of(r, b->idx, rel, sizeof(rel));
		if (!e2) {
			pfd = ferry__dirs_parent(&r->dirs, rel, true, 0755, &base);
			e2 = pfd < 0 ? pfd :
			     ferry__stage_publish(b->st, &b->key, pfd, base,
						  r->flags & FERRY_FILES_FORCE);
			if (e2 == -EEXIST && already_there(r, b, pfd, base)) {
				ferry__stage_drop(b->st, &b->key, true, false);
				e2 = 0;
			}
			if (!e2 && r->fsync_mode == FERRY_FSYNC_FILE && fsync(pfd))
				e2 = -errno;
		}
		if (e2) {
			err = fail_file(r, b->idx, e2, b->st, &b->key,
					b->claimed, b->crc, b->adler,
					publish_error(e2, text, sizeof(text)));
			continue;
		}
		if (ferry__journal_chunks(r->m.e[b->idx].size, r->chunk) > 1)
			ferry__stage_drop(b->st, &b->key, false, true);
		if (b->claimed)
			ferry__frx_release(r, b->st, &b->key);
		r->published++;
		ferry__log(FERRY_LOG_INFO, "published %s:%08x  %s",
			   r->cksum == FERRY_CKSUM_ADLER32 ? "adler32" : "crc32c",
			   r->cksum == FERRY_CKSUM_ADLER32 ? b->adler : b->crc,
			   rel);
		if (!err)
			err = send_done(r, b->idx, 0, b->crc, b->adler, "");
	}
	r->n_batch = 0;
	r->batch_bytes = 0;
	if (!err)
		err = ferry__batch_send(&r->dones, r->ctrl_fd, 10000);
	return err;
}

static int batch_add(struct ferry__frx *r, uint32_t idx,
		     struct ferry__stage *st, const struct ferry__stage_key *k,
		     bool claimed, uint32_t crc, uint32_t adler)
{
	if (!r->n_batch)
		r->batch_t0 = ferry__now_ns();
	r->batch[r->n_batch++] =
		(struct frx_pub){ idx, *k, crc, adler, st, claimed };
	r->batch_bytes += r->m.e[idx].size;
	if (r->fsync_mode != FERRY_FSYNC_BATCH || !r->pending ||
	    r->n_batch == FRX_BATCH_FILES || r->batch_bytes >= FRX_BATCH_BYTES)
		return flush(r);
	return 0;
}

/* The whole-file sums of a complete file, from its chunks' sums. */
static void file_sums(const struct ferry__frx *r, const struct frx_live *l,
		      const struct ferry_entry *e, uint32_t *crc,
		      uint32_t *adler)
{
	*crc = 0;
	*adler = 1;
	if (l->jopen)
		ferry__sums_combine(l->j.sums, l->j.n_chunks, e->size, r->chunk,
				    crc, adler);
	else if (e->size)
		ferry__sums_combine(&l->one, 1, e->size, r->chunk, crc, adler);
}

/* An empty file is whole the moment it exists: it is made under its
 * name at once (O_EXCL: whoever makes it first has it; no staging, no
 * claim, no rename), with its mode, then given its mtime. A reader may
 * see it for that moment with the current time; never with other
 * contents. Replacing a file (--force) goes through the staging area. */
static int publish_empty(struct ferry__frx *r, uint32_t idx)
{
	const struct ferry_entry *e = &r->m.e[idx];
	char rel[FERRY_PATH_MAX + FERRY_DEST_MAX], text[FERRY_ERRTEXT_MAX];
	const char *base;
	struct stat st;
	mode_t mode;
	int pfd, fd, err;

	rel_of(r, idx, rel, sizeof(rel));
	pfd = ferry__dirs_parent(&r->dirs, rel, true, 0755, &base);
	if (pfd < 0)
		return fail_file(r, idx, pfd, NULL, NULL, false, 0, 1,
				 publish_error(pfd, text, sizeof(text)));
	mode = ferry__frx_mode(r, e);
	fd = openat(pfd, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
				       O_CLOEXEC, mode & 0777);
	if (fd < 0) {
		err = -errno;
		/* made meanwhile: by an earlier attempt of this very transfer? */
		if (err == -EEXIST &&
		    !fstatat(pfd, base, &st, AT_SYMLINK_NOFOLLOW) &&
		    S_ISREG(st.st_mode) && st.st_size == 0 &&
		    (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec ==
			    e->mtime_ns)
			goto done;
		return fail_file(r, idx, err, NULL, NULL, false, 0, 1,
				 publish_error(err, text, sizeof(text)));
	}
	err = ferry__fs_set_meta(fd, mode, e->mtime_ns,
				 ferry__frx_chmod_needed(r, mode));
	if (!err && r->fsync_mode == FERRY_FSYNC_FILE && fsync(pfd))
		err = -errno;
	close(fd);
	if (err) {
		unlinkat(pfd, base, 0); /* ours: made above with O_EXCL */
		return fail_file(r, idx, err, NULL, NULL, false, 0, 1,
				 publish_error(err, text, sizeof(text)));
	}
done:
	r->published++;
	ferry__log(FERRY_LOG_INFO, "published %s:%08x  %s",
		   r->cksum == FERRY_CKSUM_ADLER32 ? "adler32" : "crc32c",
		   r->cksum == FERRY_CKSUM_ADLER32 ? 1u : 0u, rel);
	return send_done(r, idx, 0, 0, 1, "");
}

/* Seal l (mode, mtime; a range: closed) unless its last chunk did. */
static int seal_once(struct ferry__frx *r, struct frx_live *l,
		     const struct ferry_entry *e)
{
	int err = 0;

	if (!l->sealed) {
		pthread_mutex_lock(&l->lock);
		err = ferry__frx_live_seal(r, l, e);
		pthread_mutex_unlock(&l->lock);
	}
	return err;
}

/* What a file's (what: "whole-file") or a range's landing says: err, a
 * write that failed, or its sums against the sender's. 0, or the error
 * with text ("...; not " fate). */
static int check_landed(const struct ferry__frx *r, const struct frx_file *f,
			int err, uint32_t crc, uint32_t adler,
			const char *what, const char *fate, char *text,
			size_t len)
{
	bool ad = r->cksum == FERRY_CKSUM_ADLER32;

	if (err) {
		snprintf(text, len, "cannot write it: %s", ferry_strerror(err));
		return err;
	}
	if (crc == f->s_crc && (!ad || adler == f->s_adler))
		return 0;
	ferry__metrics_file_cksum_fail();
	snprintf(text, len,
		 "%s checksum mismatch (sender %s:%08x, receiver %s:%08x); not %s",
		 what, ad ? "adler32" : "crc32c", ad ? f->s_adler : f->s_crc,
		 ad ? "adler32" : "crc32c", ad ? adler : crc, fate);
	return -FERRY_ECRC;
}

/* Tell the sender that its range completed the file, published now. */
static int send_published(struct ferry__frx *r, uint32_t idx,
			  const struct frx_range_pub *p)
{
	struct ferry_msg m = { .type = FERRY_MSG_PUBLISHED };

	m.u.published = (struct ferry_msg_published){ idx, p->crc, p->adler };
	return ferry__ctrl_send(r->ctrl_fd, &m, 10000);
}

/* Rename a split file's sealed part file to its final name (held by
 * ferry__frx_range_ready) and let go. 1: published; 0: this very file
 * stood there already (another transfer published it meanwhile), and
 * the staged one went; or -errno with text. */
static int publish_range(struct ferry__frx *r, uint32_t idx,
			 const struct frx_range_pub *p, char *text,
			 size_t len)
{
	const struct frx_pub b = { idx, p->key, p->crc, p->adler, p->st, false };
	char rel[FERRY_PATH_MAX + FERRY_DEST_MAX];
	const char *base;
	bool there = false;
	int pfd, err;

	rel_of(r, idx, rel, sizeof(rel));
	pfd = ferry__dirs_parent(&r->dirs, rel, true, 0755, &base);
	err = pfd < 0 ? pfd :
	      ferry__stage_publish_split(p->st, &p->key, p->split, pfd, base,
					 r->flags & FERRY_FILES_FORCE);
	if (err == -EEXIST && already_there(r, &b, pfd, base)) {
		ferry__stage_drop_split(p->st, &p->key, p->split, true);
		there = true;
		err = 0;
	}
	if (!err && !there && r->fsync_mode == FERRY_FSYNC_FILE && fsync(pfd))
		err = -errno;
	ferry__frx_range_end(p, !err);
	if (err) {
		const char *t = publish_error(err, text, len);
		if (t != text)
			snprintf(text, len, "%s", t);
		return err;
	}
	if (!there)
		ferry__log(FERRY_LOG_INFO, "published %s:%08x  %s (its ranges)",
			   r->cksum == FERRY_CKSUM_ADLER32 ? "adler32" : "crc32c",
			   r->cksum == FERRY_CKSUM_ADLER32 ? p->adler : p->crc,
			   rel);
	return !there;
}

/* A range of a split file is in: check it against the sender's sums,
 * then publish the file if this range completes it (files_range.c). A
 * range the sender found in the target already (skipped) claims
 * nothing, unless --force. */
static int finalize_range(struct ferry__frx *r, uint32_t idx)
{
	const struct ferry_entry *e = &r->m.e[idx];
	struct frx_file *f = &r->f[idx];
	struct frx_live *l = atomic_load(&f->live);
	char text[FERRY_ERRTEXT_MAX] = "";
	struct frx_range_pub p;
	uint32_t crc = 0, adler = 1;
	int err = 0, pub;

	if (l)
		p = (struct frx_range_pub){ l->st, l->key, l->split, l->roff,
					    e->size, 0, 1 };
	if (f->skip || !l) {
		ferry__frx_live_retire(r, f);
		if (l)
			ferry__frx_range_release(&p, true, true);
		r->skipped++;
		return r->pending ? 0 : flush(r);
	}
	err = seal_once(r, l, e);
	if (l->jopen)
		ferry__sums_combine(l->j.sums + f->first, f->n_chunks,
				    e->size - l->roff, r->chunk, &crc, &adler);
	ferry__frx_live_retire(r, f);
	err = check_landed(r, f, err, crc, adler, "range", "kept", text,
			   sizeof(text));
	if (err == -FERRY_ECRC)
		ferry__frx_range_drop(&p); /* sent again, in whole */
	if (err) {
		ferry__frx_range_release(&p, true, true);
		pub = err;
	} else {
		pub = ferry__frx_range_ready(r, idx, &p);
		if (pub == 1)
			pub = publish_range(r, idx, &p, text, sizeof(text));
		else if (pub < 0)
			snprintf(text, sizeof(text), "cannot publish it: %s",
				 ferry_strerror(pub));
		ferry__frx_range_release(&p, false, true);
	}
	if (pub < 0) {
		r->failed++;
		ferry__log(FERRY_LOG_ERR, "%s: %s", e->path, text);
		err = send_done(r, idx, pub, crc, adler, text);
	} else {
		/* landed either way; published once, by this one */
		r->published += pub;
		r->ranges_landed += !pub;
		err = pub ? send_published(r, idx, &p) : 0;
		if (!err)
			err = send_done(r, idx, 0, crc, adler, "");
	}
	return err ? err : r->pending ? 0 : flush(r);
}

/* Every chunk landed and the sender's sums are in: verify, publish. */
static int finalize(struct ferry__frx *r, uint32_t idx)
{
	const struct ferry_entry *e = &r->m.e[idx];
	struct frx_file *f = &r->f[idx];
	struct frx_live *l = atomic_load(&f->live);
	struct ferry__stage *st = &r->stage[f->stage].st;
	char rel[FERRY_PATH_MAX + FERRY_DEST_MAX], text[FERRY_ERRTEXT_MAX];
	struct ferry__stage_key k;
	uint32_t crc = 0, adler = 1;
	bool claimed = l && l->claimed;
	int err = 0;

	f->done = true;
	r->pending--;
	if (f->split)
		return finalize_range(r, idx);
	if (f->skip) {
		/* identical already: what an earlier attempt staged goes */
		if (l)
			ferry__stage_drop(l->st, &l->key, true, true);
		if (claimed)
			ferry__frx_release(r, l->st, &l->key);
		ferry__frx_live_retire(r, f);
		r->skipped++;
		return r->pending ? 0 : flush(r); /* the sender reports it */
	}
	if (atomic_load(&f->fail)) {
		/* staged: won the claim after all, too late */
		if (l)
			k = l->key;
		ferry__frx_live_retire(r, f);
		err = fail_file(r, idx, atomic_load(&f->fail), st,
				l ? &k : NULL, claimed, 0, 1, BUSY_TEXT);
		return err ? err : r->pending ? 0 : flush(r);
	}
	if (!l && !(r->flags & FERRY_FILES_FORCE)) {
		err = publish_empty(r, idx);
		return err ? err : r->pending ? 0 : flush(r);
	}
	if (!l) { /* an empty file replacing another: staged like the rest */
		rel_of(r, idx, rel, sizeof(rel));
		ferry__stage_key(rel, &k);
		err = ferry__frx_claim(r, st, &k);
		if (err) {
			err = fail_file(r, idx, err, st, NULL, false, 0, 1,
					BUSY_TEXT);
			return err ? err : r->pending ? 0 : flush(r);
		}
		l = ferry__frx_live_new(st, &k);
		if (!l) {
			ferry__frx_release(r, st, &k);
			return -ENOMEM;
		}
		l->claimed = claimed = true;
		atomic_store(&f->live, l);
	}
	k = l->key;
	err = seal_once(r, l, e);
	file_sums(r, l, e, &crc, &adler);
	ferry__frx_live_retire(r, f);
	err = check_landed(r, f, err, crc, adler, "whole-file", "published",
			   text, sizeof(text));
	if (err) {
		err = fail_file(r, idx, err, st, &k, claimed, crc, adler, text);
		return err ? err : r->pending ? 0 : flush(r);
	}
	return batch_add(r, idx, st, &k, claimed, crc, adler);
}

static int control_error(int err, char *why, size_t whylen)
{
	ferry__why(why, whylen, "control channel: %s", ferry_strerror(err));
	return err;
}

/* Workers finished files: publish those whose sums are in. */
int ferry__frx_work(void *ctx, int fd, char *why, size_t whylen)
{
	struct ferry__frx *r = ctx;
	uint32_t idx;
	int err;

	(void)fd;
	ferry__fileq_ack(&r->q);
	while (ferry__fileq_pop(&r->q, &idx)) {
		r->f[idx].queued = true;
		if (!r->f[idx].have_sum || r->f[idx].done)
			continue;
		err = finalize(r, idx);
		if (err)
			return control_error(err, why, whylen);
	}
	err = ferry__batch_send(&r->dones, r->ctrl_fd, 10000);
	return err ? control_error(err, why, whylen) : 0;
}

int ferry__frx_tick(void *ctx, int fd, char *why, size_t whylen)
{
	struct ferry__frx *r = ctx;
	int err = 0;

	(void)fd;
	if (r->n_batch && ferry__now_ns() - r->batch_t0 >= FRX_BATCH_NS)
		err = flush(r);
	if (!err)
		err = ferry__batch_send(&r->dones, r->ctrl_fd, 10000);
	return err ? control_error(err, why, whylen) : 0;
}

/* One file's sums from the sender (a FILE_SUM, or an entry of a
 * FILE_SUMS batch). */
static int one_sum(void *arg, const struct ferry_msg *m)
{
	struct ferry__frx *r = arg;
	const struct ferry_msg_file_sum *s = &m->u.file_sum;
	struct frx_file *f;

	if (s->idx >= r->m.n || !r->f[s->idx].expect || r->f[s->idx].have_sum)
		return -FERRY_EPROTO;
	f = &r->f[s->idx];
	f->have_sum = true;
	f->s_crc = s->crc32c;
	f->s_adler = s->adler32;
	f->skip = s->flags & FERRY_FILE_SUM_SKIP;
	return f->skip || f->queued ? finalize(r, s->idx) : 0;
}

int ferry__frx_msg(void *ctx, int fd, const struct ferry_msg *m, char *why,
		   size_t whylen)
{
	struct ferry__frx *r = ctx;
	int err;

	(void)fd;
	if (m->type == FERRY_MSG_FIN) {
		if (r->pending || r->n_batch)
			return -FERRY_EPROTO;
		/* the sender exits 0 only once what it sent is on disk */
		for (unsigned i = 0; (r->ranges_landed ||
				      (r->fsync_mode != FERRY_FSYNC_FILE &&
				       r->published)) && i < r->n_stage; i++) {
			if (ferry__stage_is_open(&r->stage[i].st) &&
			    syncfs(r->stage[i].st.dirfd)) {
				err = -errno;
				ferry__why(why, whylen,
					   "syncing the published files: %s",
					   ferry_strerror(err));
				return err;
			}
		}
		return 1;
	}
	if (m->type == FERRY_MSG_FILE_SUM)
		err = one_sum(r, m);
	else if (m->type == FERRY_MSG_FILE_SUMS)
		err = ferry__batch_decode(m, one_sum, r);
	else
		err = -FERRY_EPROTO;
	if (err == -FERRY_EPROTO) {
		ferry__why(why, whylen, "unexpected %s from the sender",
			   ferry__ctrl_type_name(m->type));
		return err;
	}
	if (!err)
		err = ferry__batch_send(&r->dones, r->ctrl_fd, 10000);
	return err ? control_error(err, why, whylen) : 0;
}

/* Directory modes last, so a read-only directory could be filled; each
 * opened without following a symlink, so no mode lands outside. */
static void dir_modes(struct ferry__frx *r)
{
	mode_t keep = r->keep_setid ? 07777 : 0777;

	for (size_t i = 0; r->dirfd >= 0 && i < r->m.n; i++) {
		const struct ferry_entry *e = &r->m.e[i];
		const char *base;
		int pfd, fd;

		if (e->type != FERRY_ENTRY_DIR)
			continue;
		pfd = ferry__fs_open_parent(r->dirfd, e->path, false, 0, &base);
		if (pfd < 0)
			continue;
		fd = openat(pfd, base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
					       O_CLOEXEC);
		if (fd >= 0) {
			fchmod(fd, e->mode & keep);
			close(fd);
		}
		close(pfd);
	}
}

void ferry__frx_close(struct ferry__frx *r, bool ok)
{
	/* A session that ends well has published its batch (FIN waits for
	 * it). One that fails leaves what it had verified staged, unclaimed:
	 * its sender never hears of a publish, so none happens; the rerun
	 * resumes those files and reports them. A one-chunk file is never
	 * resumed: its part file goes. */
	for (size_t i = 0; i < r->n_batch; i++)
		if (!r->batch[i].claimed)
			ferry__stage_drop(r->batch[i].st, &r->batch[i].key,
					  true, false);
	for (size_t i = 0; r->f && i < r->m.n; i++) {
		struct frx_live *l = atomic_load(&r->f[i].live);
		bool solo = l && !l->claimed && l->created;
		struct ferry__stage_key k;
		struct ferry__stage *st = NULL;

		if (solo) {
			k = l->key;
			st = l->st;
		}
		ferry__frx_live_retire(r, &r->f[i]); /* keeps what is staged */
		if (solo)
			ferry__stage_drop(st, &k, true, false);
	}
	if (ok)
		dir_modes(r);
	for (unsigned i = 0; i < r->n_stage; i++) {
		ferry__stage_close(&r->stage[i].st);
		if (i)
			close(r->stage[i].fd);
		free(r->stage[i].rel);
	}
	for (int i = 0; i < r->n_mounts; i++)
		free(r->mounts[i]);
	free(r->mounts);
	free(r->mstage);
	ferry__dirs_free(&r->dirs);
	if (r->dirfd >= 0)
		close(r->dirfd);
	if (r->topfd >= 0)
		close(r->topfd);
	if (r->locks) {
		for (int i = 0; i < FRX_STRIPES; i++)
			pthread_mutex_destroy(&r->stripe[i]);
		pthread_mutex_destroy(&r->open_lock);
	}
	free(r->f);
	ferry__fileq_free(&r->q);
	ferry__manifest_free(&r->m);
	ferry__batch_free(&r->dones);
}
