/* Sender datapath for files: claim the next chunk, read it into the send
 * buffer, checksum it. Opening a file takes its lock once; no allocation
 * or logging per chunk. */
#include <errno.h>
#include <unistd.h>

#include "ferry/sum.h"
#include "files/files.h"
#include "io/fsx.h"
#include "util/util.h"

int ferry__ftx_open(const struct ferry__ftx *t, const char *src,
		    bool *direct)
{
	const struct ferry_send_spec *sp = t->spec;

	return sp->open_source ?
		       ferry__fs_open_source_with(sp->open_source,
						  sp->open_arg, src, direct) :
		       ferry__fs_open_source(src, direct);
}

static int open_once(const struct ferry__ftx *t, struct ftx_file *f,
		     const struct ferry_entry *e)
{
	pthread_mutex_t *lock = &t->open_lock[(size_t)(f - t->f) %
					      FTX_OPEN_LOCKS];
	int err = 0;

	pthread_mutex_lock(lock);
	if (f->fd < 0) {
		f->direct = true;
		int fd = ferry__ftx_open(t, e->src, &f->direct);
		if (fd < 0)
			err = fd;
		else
			f->fd = fd;
	}
	pthread_mutex_unlock(lock);
	return err;
}

/* Read len bytes at off into buf and sum them: in pieces, each summed
 * while it is still in the cache. With O_DIRECT every read is 4 KiB
 * aligned (the buffer has room: a slot's payload area is a multiple of
 * 4 KiB). */
#define PIECE (256u << 10)

static int read_chunk(struct ftx_file *f, uint8_t *buf, uint64_t len,
		      uint64_t off, bool adler, uint32_t *crc, uint32_t *ad)
{
	uint64_t got = 0, summed = 0;

	*crc = 0;
	*ad = 1;
	while (got < len) {
		uint64_t want = len - got < PIECE ? len - got : PIECE;
		if (f->direct)
			want = (want + 4095) & ~4095ull;
		ssize_t n = pread(f->fd, buf + got, want, (off_t)(off + got));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -ESTALE; /* the file shrank while we read it */
		got += (uint64_t)n;
		uint64_t upto = got < len ? got : len;
		*crc = ferry_crc32c(*crc, buf + summed, upto - summed);
		if (adler)
			*ad = ferry_adler32(*ad, buf + summed, upto - summed);
		summed = upto;
	}
	return 0;
}

/* One more chunk of f read: true when it was the last, the file is
 * closed, and the control thread is to be told (it sends the sums). */
static bool read_all(struct ftx_file *f)
{
	if (atomic_fetch_add(&f->read_done, 1) + 1 != f->to_read)
		return false;
	close(f->fd);
	f->fd = -1;
	return true;
}

static int pack_files(struct ferry__ftx *t, const struct ftx_unit *u,
		      uint8_t *payload, struct ferry_chunk_hdr *h,
		      uint32_t *done, size_t *n_done)
{
	bool adler = t->spec->cksum == FERRY_CKSUM_ADLER32;
	uint32_t at = 0, crc = 0;

	for (uint32_t j = 0; j < u->n_pack; j++) {
		uint32_t idx = t->packed[u->file + j];
		const struct ferry_entry *e = &t->m.e[idx];
		struct ftx_file *f = &t->f[idx];
		uint8_t *data = payload + at + FERRY_PACK_REC_LEN;
		int fd, err;

		f->direct = false;
		fd = ferry__ftx_open(t, e->src, &f->direct);
		if (fd < 0)
			return fd;
		f->fd = fd;
		err = read_chunk(f, data, e->size, 0, adler,
				 &f->sums[0].crc32c, &f->sums[0].adler32);
		if (err)
			return err;
		f->sums[0].have = true;
		ferry__pack_put(payload + at, idx, (uint32_t)e->size,
				f->sums[0].crc32c);
		crc = ferry_crc32c(crc, payload + at, FERRY_PACK_REC_LEN);
		at += FERRY_PACK_REC_LEN + (uint32_t)e->size;
		if (read_all(f))
			done[(*n_done)++] = idx;
	}
	h->file_idx = t->packed[u->file];
	h->offset = u->n_pack;
	h->len = at;
	h->flags = FERRY_CHUNK_PACK;
	h->crc = crc; /* the files' bytes: each under its record's crc32c */
	return 1;
}

/* A pack: each file read whole (without O_DIRECT: the records are not
 * aligned, and a small file gains nothing from it) behind its record.
 * The files read are handed to the control thread together, at the end. */
static int fill_pack(struct ferry__ftx *t, const struct ftx_unit *u,
		     uint8_t *payload, struct ferry_chunk_hdr *h)
{
	uint32_t done[FTX_PACK_FILES];
	size_t n_done = 0;
	int err = pack_files(t, u, payload, h, done, &n_done);

	ferry__fileq_push_n(&t->q, done, n_done);
	return err;
}

static int tx_fill(struct ferry__stream *s, uint8_t *payload,
		   struct ferry_chunk_hdr *h)
{
	struct ferry__pipe *p = s->p;
	struct ferry__ftx *t = p->dp_ctx;
	uint64_t k = atomic_fetch_add_explicit(&t->next_unit, 1,
					       memory_order_relaxed);
	const struct ftx_unit *u;
	const struct ferry_entry *e;
	struct ftx_file *f;
	uint64_t off, len;
	int err;

	if (k >= t->n_units)
		return -ENODATA;
	u = &t->u[k];
	if (u->n_pack)
		return fill_pack(t, u, payload, h);
	f = &t->f[u->file];
	e = &t->m.e[u->file];
	off = u->chunk * t->chunk;
	len = e->size - off < t->chunk ? e->size - off : t->chunk;
	err = open_once(t, f, e);
	if (err)
		return err;
	/* a range's adler32 always: the receiver reports the whole file's,
	 * combined from every range */
	err = read_chunk(f, payload, len, off,
			 t->spec->cksum == FERRY_CKSUM_ADLER32 || f->split,
			 &h->crc, &f->sums[u->chunk].adler32);
	if (err)
		return err;
	h->file_idx = u->file;
	h->offset = off;
	h->len = (uint32_t)len;
	h->flags = u->chunk + 1 == f->n_chunks ? FERRY_CHUNK_LAST : 0;
	f->sums[u->chunk].crc32c = h->crc;
	f->sums[u->chunk].have = true;
	if (read_all(f))
		ferry__fileq_push(&t->q, u->file);
	return (int)u->send;
}

const struct ferry__dp_ops ferry__files_tx_dp = {
	.fill = tx_fill,
};
