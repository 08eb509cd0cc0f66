/* Receiver datapath for files: check where a chunk belongs, write it into
 * the target's part file in the staging area, journal it.
 *
 * A file gets its live entry (claim, part file, journal) from its first
 * chunk, under one of FRX_STRIPES locks picked by file index: per file,
 * not per chunk. The entry is reference-counted by the chunks using it,
 * so the control thread can free it when the file is finished even if a
 * hostile sender repeats a chunk.
 *
 * Writes to one file are serialised under the entry's lock. The kernel
 * serialises them anyway (a buffered write holds the inode's rwsem), but
 * its waiters spin while the owner copies: with 4 streams writing one
 * file, 13% of the receiver's CPU went to rwsem_spin_on_owner. Waiting
 * here sleeps instead: a fifth less system time for the same 1 GiB
 * (bench/recv_cpu.sh, docs/benchmarks.md). This is the one lock the
 * datapath takes per chunk, and only streams writing the same file ever
 * meet on it.
 *
 * Open files are bounded (frx.max_open, from RLIMIT_NOFILE): opening one
 * more closes the least recently used idle one, which its next chunk
 * reopens. A complete file is sealed (mode, mtime, closed) by the chunk
 * that completes it, so files waiting to be published hold no fd.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "ctrl/msg.h"
#include "ferry/error.h"
#include "ferry/sum.h"
#include "files/files.h"
#include "io/fsx.h"
#include "util/util.h"

#define PIECE (256u << 10)

/* The ranges of one split file land in one part file, often from several
 * sessions of this process at once (ferry-stage's ranks). Each session
 * serialises its own writes under its entry's lock, but those locks are
 * the sessions' own: across sessions the writers met on the inode's
 * rwsem and spun. Writes to a part file of ranges also take one of
 * these, chosen by the target's key, and sleep on it instead: a 1 GiB
 * file as four ranges at once on loopback, receiver system time 1.67 ->
 * 1.11 s (RANGES=4 bench/recv_cpu.sh, docs/benchmarks.md). */
#define RANGE_STRIPES 16
static pthread_mutex_t range_write[RANGE_STRIPES] = {
	PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
	PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
	PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
	PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
	PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
	PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
	PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
	PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
};

static pthread_mutex_t *range_lock(const struct frx_live *l)
{
	return l->ranged ? &range_write[l->key.b[0] % RANGE_STRIPES] : NULL;
}

static struct ferry_chunk_sum *sums_of(struct frx_live *l)
{
	return l->jopen ? l->j.sums : &l->one;
}

struct frx_live *ferry__frx_live_new(struct ferry__stage *st,
				     const struct ferry__stage_key *k)
{
	struct frx_live *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	pthread_mutex_init(&l->lock, NULL);
	l->key = *k;
	l->st = st;
	l->partfd = -1;
	l->j.fd = -1;
	return l;
}

/* Close l's files and take it off the open list. Under l->lock (or with
 * the datapath stopped) and open_lock. */
static void shut(struct ferry__frx *r, struct frx_live *l)
{
	if (l->partfd >= 0)
		close(l->partfd);
	l->partfd = -1;
	if (l->jopen)
		ferry__journal_detach(&l->j);
	if (!l->listed)
		return;
	if (l->prev)
		l->prev->next = l->next;
	else
		r->open_head = l->next;
	if (l->next)
		l->next->prev = l->prev;
	l->prev = l->next = NULL;
	l->listed = false;
	r->n_open--;
}

static void close_files(struct ferry__frx *r, struct frx_live *l)
{
	if (l->solo) {
		shut(r, l); /* never listed: touches nothing shared */
		return;
	}
	pthread_mutex_lock(&r->open_lock);
	shut(r, l);
	pthread_mutex_unlock(&r->open_lock);
}

/* Close the least recently used idle entry other than self. Called with
 * open_lock held; only tries other entries' locks, so it cannot
 * deadlock with their holders. */
static bool evict_one(struct ferry__frx *r, struct frx_live *self)
{
	for (unsigned tries = 0; tries < r->n_open; tries++) {
		struct frx_live *v = NULL;
		for (struct frx_live *l = r->open_head; l; l = l->next)
			if (l != self &&
			    (!v || atomic_load(&l->used) < atomic_load(&v->used)))
				v = l;
		if (!v)
			return false;
		if (pthread_mutex_trylock(&v->lock) == 0) {
			shut(r, v);
			pthread_mutex_unlock(&v->lock);
			return true;
		}
		atomic_store(&v->used, ferry__now_ns()); /* busy: next one */
	}
	return false;
}

mode_t ferry__frx_mode(const struct ferry__frx *r, const struct ferry_entry *e)
{
	return e->mode & (r->keep_setid ? 07777 : 0777);
}

bool ferry__frx_chmod_needed(const struct ferry__frx *r, mode_t mode)
{
	return (mode & 07000) || (mode & r->umask);
}

/* A split file's part file is shared by its ranges: made by the first,
 * never replaced (io/stage.h). */
static int open_part_once(const struct frx_live *l, mode_t mode)
{
	return l->ranged ? ferry__stage_open_split(l->st, &l->key, l->split,
						   true) :
			   ferry__stage_open_part(l->st, &l->key, !l->created,
						  mode);
}

static int open_part(struct ferry__frx *r, struct frx_live *l, mode_t mode)
{
	int fd = open_part_once(l, mode);

	if (fd == -EMFILE || fd == -ENFILE) {
		pthread_mutex_lock(&r->open_lock);
		bool room = evict_one(r, l);
		pthread_mutex_unlock(&r->open_lock);
		if (room)
			fd = open_part_once(l, mode);
	}
	return fd;
}

static void journal_name(const struct frx_live *l,
			 char name[FERRY__STAGE_NAME_LEN])
{
	if (l->ranged)
		ferry__stage_split_name(&l->key, l->split, FERRY__STAGE_JOURNAL,
					l->roff, name);
	else
		ferry__stage_name(&l->key, FERRY__STAGE_JOURNAL, name);
}

/* Make sure l's part file (and journal, for a file of several chunks)
 * are open. Under l->lock. */
static int open_files(struct ferry__frx *r, struct frx_live *l,
		      const struct ferry_entry *e, uint64_t n_chunks)
{
	char jname[FERRY__STAGE_NAME_LEN];
	bool journal = l->ranged || n_chunks > 1;
	int fd, err = 0;

	if (l->partfd >= 0)
		return 0;
	/* A file of one chunk is opened, written, sealed and closed in one
	 * call by one worker: at most one per stream is open at a time, and
	 * it stays off the open list and its lock, which every worker would
	 * otherwise take three times per small file. */
	l->solo = !journal;
	if (!l->solo) {
		pthread_mutex_lock(&r->open_lock);
		while (r->n_open >= r->max_open && evict_one(r, l))
			;
		pthread_mutex_unlock(&r->open_lock);
	}
	journal_name(l, jname);
	if (!l->created && journal)
		ferry__stage_drop(l->st, &l->key, false, true);
	fd = open_part(r, l, ferry__frx_mode(r, e) & 0777);
	if (fd < 0)
		return fd;
	if (!l->created)
		l->made_here = true;
	l->created = true;
	if (journal && !l->jopen) {
		struct ferry_journal_hdr jh = { e->size, e->mtime_ns, r->chunk };
		bool reused;
		err = ferry__journal_open(&l->j, l->st->dirfd, jname, &jh,
					  &reused);
		l->jopen = !err;
	} else if (journal) {
		err = ferry__journal_reopen(&l->j, l->st->dirfd, jname);
	}
	if (err) {
		close(fd);
		return err;
	}
	l->partfd = fd;
	if (l->solo)
		return 0;
	pthread_mutex_lock(&r->open_lock);
	l->next = r->open_head;
	if (l->next)
		l->next->prev = l;
	l->prev = NULL;
	r->open_head = l;
	l->listed = true;
	r->n_open++;
	pthread_mutex_unlock(&r->open_lock);
	return 0;
}

int ferry__frx_live_seal(struct ferry__frx *r, struct frx_live *l,
			 const struct ferry_entry *e)
{
	mode_t mode = ferry__frx_mode(r, e);
	int err;

	if (l->ranged) {
		/* a range is in: the file is sealed by whoever publishes it */
		close_files(r, l);
		l->sealed = true;
		return 0;
	}
	err = open_files(r, l, e, ferry__journal_chunks(e->size, r->chunk));

	if (!err)
		err = ferry__fs_set_meta(l->partfd, mode, e->mtime_ns,
					 !l->made_here ||
					 ferry__frx_chmod_needed(r, mode));
	if (!err && r->fsync_mode == FERRY_FSYNC_FILE && fsync(l->partfd))
		err = -errno;
	close_files(r, l);
	l->sealed = !err;
	return err;
}

void ferry__frx_live_retire(struct ferry__frx *r, struct frx_file *f)
{
	size_t s = (size_t)(f - r->f) % FRX_STRIPES;
	struct frx_live *l;

	pthread_mutex_lock(&r->stripe[s]);
	l = atomic_load(&f->live);
	atomic_store(&f->live, NULL);
	pthread_mutex_unlock(&r->stripe[s]);
	if (!l)
		return;
	while (atomic_load(&l->refs))
		sched_yield(); /* a repeated chunk, about to be refused */
	close_files(r, l);
	if (l->jopen)
		ferry__journal_close(&l->j, -1, NULL, false);
	pthread_mutex_destroy(&l->lock);
	free(l);
}

int ferry__frx_claim(struct ferry__frx *r, struct ferry__stage *st,
		     const struct ferry__stage_key *k)
{
	int err = ferry__stage_claim(st, k);

	if (!err)
		atomic_fetch_add(&r->n_claimed, 1);
	return err;
}

void ferry__frx_release(struct ferry__frx *r, struct ferry__stage *st,
			const struct ferry__stage_key *k)
{
	ferry__stage_release(st, k);
	atomic_fetch_sub(&r->n_claimed, 1);
}

/* Wait (a worker, before it claims a target) while the session holds
 * FRX_MAX_CLAIMED targets; -ECANCELED when the pipeline stops. */
static int claim_room(struct ferry__frx *r, const struct ferry__pipe *p)
{
	while (atomic_load(&r->n_claimed) >= FRX_MAX_CLAIMED) {
		if (atomic_load(&p->abort) || atomic_load(&p->stop))
			return -ECANCELED;
		usleep(500);
	}
	return 0;
}

/* f's live entry with a reference taken, made (and the target claimed)
 * by the file's first chunk. -EBUSY: another session holds the target.
 * A file of one chunk is not claimed: its part file has a name of this
 * session's own (io/stage.h). */
static int get_live(struct ferry__frx *r, uint32_t idx, struct frx_live **out)
{
	struct frx_file *f = &r->f[idx];
	size_t s = idx % FRX_STRIPES;
	struct frx_live *l;
	int err = 0;

	pthread_mutex_lock(&r->stripe[s]);
	l = atomic_load(&f->live);
	if (!l && (atomic_load(&f->landed) >= f->n_chunks || f->split))
		err = -FERRY_EPROTO; /* finished: a chunk sent twice; or a
					range planned to be skipped */
	if (!l && !err) {
		char rel[FERRY_PATH_MAX + FERRY_DEST_MAX];
		struct ferry__stage *st = &r->stage[f->stage].st;
		struct ferry__stage_key k;
		bool claim = f->n_chunks > 1;
		if (claim) {
			snprintf(rel, sizeof(rel), "%s%s%s", r->dest,
				 r->dest[0] ? "/" : "", r->m.e[idx].path);
			ferry__stage_key(rel, &k);
			err = ferry__frx_claim(r, st, &k);
		} else {
			ferry__stage_key_solo(r->nonce, idx, &k);
		}
		if (!err && !(l = ferry__frx_live_new(st, &k))) {
			if (claim)
				ferry__frx_release(r, st, &k);
			err = -ENOMEM;
		}
		if (!err) {
			l->claimed = claim;
			atomic_store(&f->live, l);
		}
	}
	if (l)
		atomic_fetch_add(&l->refs, 1);
	pthread_mutex_unlock(&r->stripe[s]);
	*out = l;
	return err;
}

/* A write that failed (disk full, I/O error): the stream's reason names
 * the file, so the one line the operator sees says where. */
static int write_failed(struct ferry__stream *s, int err, const char *what,
			const struct ferry_entry *e, uint64_t off)
{
	if (!s->err) {
		s->err = err;
		ferry__why(s->why, sizeof(s->why),
			   "stream %u: %s %s at offset %llu: %s", s->idx, what,
			   e->path, (unsigned long long)off, ferry_strerror(err));
	}
	return err;
}

/* Files whose last chunk is in, for the control thread: a pack's are
 * handed over together when the pack is done (ferry__fileq_push_n). */
struct frx_done {
	uint32_t idx[FTX_PACK_FILES];
	size_t n;
};

static void done_add(struct ferry__frx *r, struct frx_done *d, uint32_t idx)
{
	if (d->n == FTX_PACK_FILES) { /* a pack holds no more: never */
		ferry__fileq_push_n(&r->q, d->idx, d->n);
		d->n = 0;
	}
	d->idx[d->n++] = idx;
}

/* One more chunk of f is in (or given up): the last one queues the file
 * for the control thread. */
static void landed(struct ferry__frx *r, struct frx_file *f, uint32_t idx,
		   struct frx_done *d)
{
	if (atomic_fetch_add(&f->landed, 1) + 1 == f->n_chunks)
		done_add(r, d, idx);
}

/* Journal chunk k of a range: the last one only once the part file's
 * data is synced, and synced itself, so that a complete range journal
 * means its data is on disk: the session that publishes the file trusts
 * the journals of ranges other sessions landed, and only a range sent
 * again is read back (io/stage.h). One fdatasync per range, not per
 * chunk. Under l->lock, files open. */
static int journal_range(struct frx_live *l, struct frx_file *f, uint64_t k,
			 uint32_t crc, uint32_t adler)
{
	bool last = atomic_load(&f->landed) + 1 == f->n_chunks;
	int err = 0;

	if (last && fdatasync(l->partfd))
		err = -errno;
	if (!err)
		err = ferry__journal_add(&l->j, k, crc, adler);
	if (!err && last)
		err = ferry__journal_sync(&l->j);
	return err;
}

/* Write, check and journal one chunk: 1 when it completed the file. */
static int write_chunk(struct ferry__stream *s, struct frx_live *l,
		       const struct ferry_chunk_hdr *h, const uint8_t *payload)
{
	struct ferry__frx *r = s->p->dp_ctx;
	const struct ferry_entry *e = &r->m.e[h->file_idx];
	struct frx_file *f = &r->f[h->file_idx];
	uint64_t k = h->offset / r->chunk;
	uint32_t crc = 0, adler = 1;
	int err;

	pthread_mutex_lock(&l->lock);
	err = open_files(r, l, e, f->n_chunks);
	if (!err && sums_of(l)[k].have)
		err = -FERRY_EPROTO; /* sent twice */
	pthread_mutex_unlock(&l->lock);
	if (err)
		return err == -FERRY_EPROTO ? err :
		       write_failed(s, err, "opening the part file of", e, 0);
	/* The pipeline left the crc32c check to us: each piece is summed
	 * and written while it is in the cache, so the payload is read from
	 * memory once. The part file is not published, and the chunk not
	 * journaled, unless the crc32c matches. */
	for (uint32_t at = 0; at < h->len; at += PIECE) {
		uint32_t n = h->len - at < PIECE ? h->len - at : PIECE;
		crc = ferry_crc32c(crc, payload + at, n);
		if (r->cksum == FERRY_CKSUM_ADLER32 || l->ranged)
			adler = ferry_adler32(adler, payload + at, n);
		pthread_mutex_lock(&l->lock);
		err = open_files(r, l, e, f->n_chunks);
		if (!err) {
			pthread_mutex_t *rl = range_lock(l);

			if (rl)
				pthread_mutex_lock(rl);
			err = ferry__fs_pwrite_full(l->partfd, payload + at, n,
						    h->offset + at);
			if (rl)
				pthread_mutex_unlock(rl);
		}
		atomic_store_explicit(&l->used, ferry__now_ns(),
				      memory_order_relaxed);
		pthread_mutex_unlock(&l->lock);
		if (err)
			return write_failed(s, err, "writing", e, h->offset + at);
	}
	if (crc != h->crc)
		return -FERRY_ECRC;
	pthread_mutex_lock(&l->lock);
	if (l->ranged || l->jopen) {
		err = open_files(r, l, e, f->n_chunks);
		if (!err)
			err = l->ranged ? journal_range(l, f, k, h->crc, adler) :
					  ferry__journal_add(&l->j, k, h->crc,
							     adler);
	} else {
		l->one = (struct ferry_chunk_sum){ h->crc, adler, true };
	}
	if (err) {
		pthread_mutex_unlock(&l->lock);
		return write_failed(s, err, "journaling", e, h->offset);
	}
	/* counted under the lock, so exactly one chunk sees itself last */
	bool last = atomic_fetch_add(&f->landed, 1) + 1 == f->n_chunks;
	if (last)
		err = ferry__frx_live_seal(r, l, e);
	pthread_mutex_unlock(&l->lock);
	if (err)
		return write_failed(s, err, "closing", e, h->offset);
	return last ? 1 : 0;
}

/* One chunk of one file (or one record of a pack); a file it completes
 * is added to d. */
static int rx_one(struct ferry__stream *s, const struct ferry_chunk_hdr *h,
		  const uint8_t *payload, struct frx_done *d)
{
	struct ferry__frx *r = s->p->dp_ctx;
	const struct ferry_entry *e;
	struct frx_live *l;
	struct frx_file *f;
	uint64_t want;
	int err;

	if (h->file_idx >= r->m.n)
		return -FERRY_EPROTO;
	e = &r->m.e[h->file_idx];
	f = &r->f[h->file_idx];
	if (!f->expect || h->offset % r->chunk || h->offset >= e->size ||
	    h->offset / r->chunk < f->first ||
	    h->offset / r->chunk - f->first >= f->n_chunks)
		return -FERRY_EPROTO; /* a range's chunks only */
	want = e->size - h->offset < r->chunk ? e->size - h->offset : r->chunk;
	if (h->len != want)
		return -FERRY_EPROTO;
	if (atomic_load(&f->fail)) {
		landed(r, f, h->file_idx, d); /* given up: the chunk is dropped */
		return 0;
	}
	if (f->n_chunks > 1 && !atomic_load(&f->live)) {
		err = claim_room(r, s->p);
		if (err)
			return err;
	}
	err = get_live(r, h->file_idx, &l);
	if (err == -EBUSY) {
		atomic_store(&f->fail, err);
		landed(r, f, h->file_idx, d);
		return 0;
	}
	if (err)
		return err;
	err = write_chunk(s, l, h, payload);
	/* let go before the control thread hears of the file, so it does
	 * not wait for us to free the entry */
	atomic_fetch_sub(&l->refs, 1);
	if (err == 1)
		done_add(r, d, h->file_idx);
	return err < 0 ? err : 0;
}

/* A pack: its record headers checked first (their count and crc32c: a
 * record is trusted only then), then each record as the one-chunk file
 * it is, whose own crc32c covers its bytes. */
static int rx_pack(struct ferry__stream *s, const struct ferry_chunk_hdr *h,
		   const uint8_t *payload, struct frx_done *d)
{
	struct ferry__frx *r = s->p->dp_ctx;
	struct ferry_chunk_hdr one = { .xfer_id = h->xfer_id,
				       .flags = FERRY_CHUNK_LAST };
	const uint8_t *data;
	uint64_t n;
	uint32_t at = 0, crc;
	int err = 0;

	if (!(r->flags & FERRY_FILES_PACKS) || !h->offset ||
	    h->offset > FTX_PACK_FILES ||
	    ferry__pack_headers(payload, h->len, &n, &crc) || n != h->offset)
		return -FERRY_EPROTO;
	if (crc != h->crc)
		return -FERRY_ECRC;
	while (!err && ferry__pack_next(payload, h->len, &at, &one.file_idx,
					&one.len, &one.crc, &data) > 0)
		err = rx_one(s, &one, data, d);
	return err;
}

static int rx_consume(struct ferry__stream *s, const struct ferry_chunk_hdr *h,
		      const uint8_t *payload)
{
	struct ferry__frx *r = s->p->dp_ctx;
	struct frx_done d;
	int err;

	d.n = 0;
	if (h->flags & FERRY_CHUNK_PACK)
		err = rx_pack(s, h, payload, &d);
	else
		err = rx_one(s, h, payload, &d);
	ferry__fileq_push_n(&r->q, d.idx, d.n);
	return err;
}

const struct ferry__dp_ops ferry__files_rx_dp = {
	.consume = rx_consume,
	.checks_crc = true,
};
