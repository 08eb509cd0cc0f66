/* The receiving side of split files: a range per session, one file
 * published by the session whose range completes it (io/stage.h says how
 * the ranges share the staging area).
 *
 * At plan time a range session claims the target shared and its range
 * exclusive, clears what earlier split files of the target left where it
 * is alone, and resumes its range from its journal. When its range is in
 * and checked against the sender's sums, it tries to publish: with the
 * split file's publish key and every other range's claim, and every
 * range journal complete, it combines the journals' sums into the whole
 * file's, seals the part file and hands it back for the rename
 * (files_pub.c), then removes the journals and lets go.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ferry/sum.h"
#include "files/files.h"
#include "io/fsx.h"
#include "util/util.h"

bool ferry__frx_verify(const struct ferry__frx *r, int fd,
		       const struct ferry_entry *e,
		       const struct ferry_journal *j, uint64_t first,
		       uint64_t count, bool adler)
{
	uint8_t *buf = malloc(r->chunk);
	bool ok = buf != NULL;

	for (uint64_t c = first; ok && c < first + count; c++) {
		uint64_t off = c * r->chunk;
		uint64_t len = e->size - off < r->chunk ? e->size - off : r->chunk;
		if (!j->sums[c].have)
			continue;
		ok = ferry__fs_pread_full(fd, buf, len, off) == 0 &&
		     ferry_crc32c(0, buf, len) == j->sums[c].crc32c &&
		     (!adler || ferry_adler32(1, buf, len) == j->sums[c].adler32);
	}
	free(buf);
	return ok;
}

static struct ferry_journal_hdr hdr_of(const struct ferry__frx *r,
				       const struct ferry_entry *e)
{
	return (struct ferry_journal_hdr){ e->size, e->mtime_ns, r->chunk };
}

/* The journals of a split file, as this session's entry sees them. */
struct scan {
	const struct ferry__stage *st;
	struct ferry_journal_hdr h;
	bool any, stale, drop_stale;
};

static int scan_one(void *arg, uint64_t offset, const char *name)
{
	struct scan *sc = arg;
	struct ferry_journal j;
	int rc = ferry__journal_peek(&j, sc->st->dirfd, name, &sc->h);

	(void)offset;
	ferry__journal_close(&j, -1, NULL, false);
	sc->any = true;
	if (rc == 0) {
		sc->stale = true;
		if (sc->drop_stale)
			unlinkat(sc->st->dirfd, name, 0);
	}
	return 0;
}

/* What earlier split files of this target left, with the same split:
 * range journals whose part file is gone (their data went with it:
 * trusted, they would publish holes), or for another source (size,
 * mtime, chunk). Only a session alone with the target (its claim turned
 * exclusive) clears them: with other ranges at work, journals without a
 * part file refuse this one (-EBUSY); stale ones stay, read as
 * incomplete until their own range starts them over. The journals are
 * looked at before the part file: a part file is made before any journal
 * of it and not removed while a range is claimed, so journals found
 * before the part file is found missing are an earlier split file's. */
static int tidy(struct ferry__stage *st, const struct ferry__stage_key *k,
		uint64_t split, struct ferry_journal_hdr h)
{
	struct scan sc = { .st = st, .h = h };
	int fd;
	bool part, bad;

	ferry__stage_split_journals(st, k, split, scan_one, &sc);
	fd = ferry__stage_open_split(st, k, split, false);
	part = fd >= 0;
	bad = fd < 0 && fd != -ENOENT; /* not ours alone: never written */
	if (fd >= 0)
		close(fd);
	if (!bad && (!sc.any || (part && !sc.stale)))
		return 0;
	if (ferry__stage_claim(st, k))
		return part ? 0 : -EBUSY;
	if (part) {
		sc.drop_stale = true;
		ferry__stage_split_journals(st, k, split, scan_one, &sc);
	} else {
		ferry__stage_drop_split(st, k, split, bad);
	}
	ferry__stage_claim_shared(st, k);
	return 0;
}

/* Resume l's range from its journal, if the part file still holds what
 * it claims; otherwise start the range over. The chunks of the range
 * that are there. */
static int64_t resume(struct ferry__frx *r, struct frx_file *f,
		      const struct ferry_entry *e, struct frx_live *l)
{
	struct ferry_journal_hdr jh = hdr_of(r, e);
	char jname[FERRY__STAGE_NAME_LEN];
	bool reused = false, ok = false;
	uint64_t have = 0;
	int fd = -1;

	ferry__stage_split_name(&l->key, l->split, FERRY__STAGE_JOURNAL,
				l->roff, jname);
	if (!(r->flags & FERRY_FILES_NO_RESUME) &&
	    faccessat(l->st->dirfd, jname, F_OK, AT_SYMLINK_NOFOLLOW) == 0 &&
	    ferry__journal_open(&l->j, l->st->dirfd, jname, &jh, &reused) == 0) {
		for (uint64_t c = f->first; c < f->first + f->n_chunks; c++)
			have += l->j.sums[c].have;
		/* nothing of another range, or it is not this range's */
		if (reused && have && have == atomic_load(&l->j.n_have))
			fd = ferry__stage_open_split(l->st, &l->key, l->split,
						     false);
		ok = fd >= 0 && ferry__frx_verify(r, fd, e, &l->j, f->first,
						  f->n_chunks, true);
		if (fd >= 0 && !ok)
			ferry__log(FERRY_LOG_WARN,
				   "%s: the part file does not match the journal of the range at %llu; starting the range over",
				   e->path, (unsigned long long)l->roff);
		if (fd >= 0)
			close(fd);
		if (!ok)
			ferry__journal_close(&l->j, -1, NULL, false);
	}
	if (!ok) {
		unlinkat(l->st->dirfd, jname, 0);
		return 0;
	}
	ferry__journal_detach(&l->j);
	l->jopen = true;
	return (int64_t)have;
}

int64_t ferry__frx_range_open(struct ferry__frx *r, uint32_t idx,
			      const char *rel, char *why, size_t whylen)
{
	const struct ferry_entry *e = &r->m.e[idx];
	struct frx_file *f = &r->f[idx];
	struct frx_fs *fs = &r->stage[f->stage];
	struct ferry__stage_key tk, rk;
	struct frx_live *l = NULL;
	int err = 0;

	/* claims need the area now, not when the first chunk comes */
	if (!ferry__stage_is_open(&fs->st))
		err = ferry__stage_open(&fs->st, fs->fd, true, why, whylen);
	if (err)
		return err;
	ferry__stage_key(rel, &tk);
	ferry__stage_key_range(&tk, f->split, f->roff, &rk);
	err = ferry__stage_claim_shared(&fs->st, &tk);
	if (err)
		return err;
	err = ferry__stage_claim(&fs->st, &rk);
	if (!err)
		err = tidy(&fs->st, &tk, f->split, hdr_of(r, e));
	if (!err && !(l = ferry__frx_live_new(&fs->st, &tk)))
		err = -ENOMEM;
	if (err) {
		ferry__stage_release(&fs->st, &rk);
		ferry__stage_release(&fs->st, &tk);
		return err;
	}
	l->ranged = l->claimed = l->created = true;
	l->split = f->split;
	l->roff = f->roff;
	atomic_store(&f->live, l);
	return resume(r, f, e, l);
}

static int found(void *arg, uint64_t offset, const char *name)
{
	(void)offset;
	(void)name;
	*(bool *)arg = true;
	return 1; /* one is enough */
}

void ferry__frx_range_there(struct ferry__frx *r, uint32_t idx,
			    const char *rel)
{
	const struct frx_file *f = &r->f[idx];
	struct ferry__stage *st = &r->stage[f->stage].st;
	struct ferry__stage_key tk;
	bool any = false;
	int fd;

	if (!ferry__stage_is_open(st))
		return;
	ferry__stage_key(rel, &tk);
	ferry__stage_split_journals(st, &tk, f->split, found, &any);
	fd = ferry__stage_open_split(st, &tk, f->split, false);
	if (fd >= 0)
		close(fd);
	if ((!any && fd == -ENOENT) || ferry__stage_claim(st, &tk))
		return; /* nothing staged, or a session of it is at work */
	ferry__stage_drop_split(st, &tk, f->split, true);
	ferry__stage_release(st, &tk);
}

void ferry__frx_range_release(const struct frx_range_pub *p, bool range,
			      bool target)
{
	struct ferry__stage_key rk;

	ferry__stage_key_range(&p->key, p->split, p->roff, &rk);
	if (range)
		ferry__stage_release(p->st, &rk);
	if (target)
		ferry__stage_release(p->st, &p->key);
}

void ferry__frx_range_drop(const struct frx_range_pub *p)
{
	char name[FERRY__STAGE_NAME_LEN];

	ferry__stage_split_name(&p->key, p->split, FERRY__STAGE_JOURNAL,
				p->roff, name);
	unlinkat(p->st->dirfd, name, 0);
}

/* Let go of every range claim of p's file (this session's too), then of
 * the publish key: the next publisher in line finds the ranges free. */
static void let_go(const struct frx_range_pub *p, bool publish_key)
{
	uint64_t n = ferry__span_count(p->size, p->split);
	struct ferry__stage_key k;

	for (uint64_t i = 0; i < n; i++) {
		if (i * p->split == p->roff)
			continue;
		ferry__stage_key_range(&p->key, p->split, i * p->split, &k);
		ferry__stage_release(p->st, &k);
	}
	ferry__frx_range_release(p, true, false);
	ferry__stage_key_range(&p->key, p->split, FERRY__STAGE_PUBLISH, &k);
	if (publish_key)
		ferry__stage_release(p->st, &k);
}

/* Every range's journal complete: the whole file's sums, range by range
 * in order, into p. 1, 0 (a range is not in), or -errno. */
static int gather(const struct ferry__frx *r, const struct ferry_entry *e,
		  struct frx_range_pub *p)
{
	struct ferry_journal_hdr h = hdr_of(r, e);
	uint64_t n = ferry__span_count(e->size, p->split);
	char name[FERRY__STAGE_NAME_LEN];
	struct ferry_journal j;
	struct ferry__span sp;
	uint32_t crc, adler;
	int rc = 1;

	p->crc = 0;
	p->adler = 1;
	for (uint64_t i = 0; rc == 1 && i < n; i++) {
		ferry__span_of(e->size, i * p->split, p->split, r->chunk, &sp);
		ferry__stage_split_name(&p->key, p->split,
					FERRY__STAGE_JOURNAL, sp.off, name);
		rc = ferry__journal_peek(&j, p->st->dirfd, name, &h);
		for (uint64_t c = sp.first; rc == 1 && c < sp.first + sp.count;
		     c++)
			rc = j.sums[c].have ? 1 : 0;
		if (rc == 1) {
			ferry__sums_combine(j.sums + sp.first, sp.count,
					    e->size - sp.off, r->chunk, &crc,
					    &adler);
			p->crc = i ? ferry_crc32c_combine(p->crc, crc, sp.len) :
				     crc;
			p->adler = i ? ferry_adler32_combine(p->adler, adler,
							     sp.len) :
				       adler;
		}
		ferry__journal_close(&j, -1, NULL, false);
	}
	return rc;
}

/* The part file of a whole, checked file: its size, mode and mtime, and
 * synced unless --fsync end (then the session's last syncfs does). */
static int seal(const struct ferry__frx *r, const struct ferry_entry *e,
		const struct frx_range_pub *p)
{
	int fd = ferry__stage_open_split(p->st, &p->key, p->split, false);
	int err = fd < 0 ? fd : 0;

	/* what an earlier, longer source left past the end goes; before
	 * the mtime, which a truncate would move */
	if (!err && ftruncate(fd, (off_t)e->size))
		err = -errno;
	if (!err)
		err = ferry__fs_set_meta(fd, ferry__frx_mode(r, e), e->mtime_ns,
					 true);
	if (!err && r->fsync_mode != FERRY_FSYNC_END && fsync(fd))
		err = -errno;
	if (fd >= 0)
		close(fd);
	return err;
}

int ferry__frx_range_ready(struct ferry__frx *r, uint32_t idx,
			   struct frx_range_pub *p)
{
	const struct ferry_entry *e = &r->m.e[idx];
	uint64_t n = ferry__span_count(e->size, p->split), i;
	struct ferry__stage_key k;
	int rc;

	/* a publisher that keeps the key this long is publishing it */
	ferry__stage_key_range(&p->key, p->split, FERRY__STAGE_PUBLISH, &k);
	if (ferry__stage_claim_wait(p->st, &k, r->timeout_ms)) {
		let_go(p, false);
		return 0;
	}
	/* a range still claimed is being written, or its session publishes
	 * the file once it has let go of the publish key */
	for (i = 0; i < n; i++) {
		if (i * p->split == p->roff)
			continue;
		ferry__stage_key_range(&p->key, p->split, i * p->split, &k);
		if (ferry__stage_claim(p->st, &k))
			break;
	}
	rc = i < n ? 0 : gather(r, e, p);
	if (rc == 1) {
		rc = seal(r, e, p);
		if (!rc)
			return 1; /* held until ferry__frx_range_end */
	}
	let_go(p, true);
	return rc;
}

void ferry__frx_range_end(const struct frx_range_pub *p, bool gone)
{
	if (gone)
		ferry__stage_drop_split(p->st, &p->key, p->split, false);
	let_go(p, true);
}
