/* Receiver datapath for files: check where a chunk belongs, write it into
 * the part file, journal it. The part file is opened by the first chunk
 * that needs it (under the file's lock, once).
 *
 * Writes to one file are serialised under the file's lock. The kernel
 * serialises them anyway (a buffered write holds the inode's rwsem), but
 * its waiters spin while the owner copies: with 4 streams writing one
 * file, 13% of the receiver's CPU went to rwsem_spin_on_owner. Waiting
 * here sleeps instead: a fifth less system time for the same 1 GiB
 * (bench/recv_cpu.sh, docs/benchmarks.md). This is the one lock the
 * datapath takes per chunk, and only streams writing the same file ever
 * meet on it. */
#include <errno.h>

#include "core/files.h"
#include "ferry/error.h"
#include "ferry/sum.h"
#include "io/fsx.h"

#define PIECE (256u << 10)

static int open_once(struct ferry__frx *r, struct frx_file *f,
		     const struct ferry_entry *e)
{
	int err = 0;

	pthread_mutex_lock(&f->lock);
	if (f->partfd < 0) {
		int fd = ferry__fs_open_part(f->parentfd, f->base, e->size);
		if (fd < 0)
			err = fd;
		else
			f->partfd = fd;
	}
	if (!err && !f->jopen) {
		char jname[256];
		struct ferry_journal_hdr jh = { e->size, e->mtime_ns, r->chunk };
		bool reused;
		err = ferry__fs_journal_name(f->base, jname, sizeof(jname));
		if (!err)
			err = ferry__journal_open(&f->j, f->parentfd, jname,
						  &jh, &reused);
		f->jopen = !err;
	}
	pthread_mutex_unlock(&f->lock);
	return err;
}

/* A write that failed (disk full, I/O error): the stream's reason names
 * the file, so the one line the operator sees says where. */
static int write_failed(struct ferry__stream *s, int err, const char *what,
			const struct ferry_entry *e, uint64_t off)
{
	if (!s->err) {
		s->err = err;
		snprintf(s->why, sizeof(s->why), "stream %u: %s %s at offset %llu: %s",
			 s->idx, what, e->path, (unsigned long long)off,
			 ferry_strerror(err));
	}
	return err;
}

static int rx_consume(struct ferry__stream *s, const struct ferry_chunk_hdr *h,
		      const uint8_t *payload)
{
	struct ferry__frx *r = s->p->dp_ctx;
	const struct ferry_entry *e;
	struct frx_file *f;
	uint64_t k, want;
	int err;

	if (h->file_idx >= r->m.n)
		return -FERRY_EPROTO;
	e = &r->m.e[h->file_idx];
	f = &r->f[h->file_idx];
	if (!f->expect || h->offset % r->chunk || h->offset >= e->size)
		return -FERRY_EPROTO;
	k = h->offset / r->chunk;
	want = e->size - h->offset < r->chunk ? e->size - h->offset : r->chunk;
	if (h->len != want)
		return -FERRY_EPROTO;
	err = open_once(r, f, e);
	if (err)
		return err;
	if (f->j.sums[k].have)
		return -FERRY_EPROTO; /* sent twice */
	/* The pipeline left the crc32c check to us: each piece is summed
	 * and written while it is in the cache, so the payload is read from
	 * memory once. The part file is not published, and the chunk not
	 * journaled, unless the crc32c matches. */
	uint32_t crc = 0, adler = 1;
	for (uint32_t at = 0; at < h->len; at += PIECE) {
		uint32_t n = h->len - at < PIECE ? h->len - at : PIECE;
		crc = ferry_crc32c(crc, payload + at, n);
		if (r->cksum == FERRY_CKSUM_ADLER32)
			adler = ferry_adler32(adler, payload + at, n);
		pthread_mutex_lock(&f->lock);
		err = ferry__fs_pwrite_full(f->partfd, payload + at, n,
					    h->offset + at);
		pthread_mutex_unlock(&f->lock);
		if (err)
			return write_failed(s, err, "writing", e, h->offset + at);
	}
	if (crc != h->crc)
		return -FERRY_ECRC;
	err = ferry__journal_add(&f->j, k, h->crc, adler);
	if (err)
		return write_failed(s, err, "journaling", e, h->offset);
	if (atomic_fetch_add(&f->landed, 1) + 1 == f->n_chunks)
		ferry__fileq_push(&r->q, h->file_idx);
	return 0;
}

const struct ferry__dp_ops ferry__files_rx_dp = {
	.consume = rx_consume,
	.checks_crc = true,
};
