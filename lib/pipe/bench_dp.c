/* Bench chunks: pseudo-random payload made once per buffer, stamped with
 * its offset so every chunk differs (and its crc32c must be computed);
 * the receiver checks and discards. */
#include <errno.h>
#include <string.h>

#include "pipe/pipe.h"
#include "util/util.h"

/* Fill the stream's send buffers once. */
static void bench_start(struct ferry__stream *s)
{
	struct ferry__pipe *p = s->p;

	if (p->role != FERRY__SENDER)
		return;
	for (unsigned j = 0; j < p->depth; j++) {
		uint64_t slot = (uint64_t)s->idx * p->depth + j;
		uint8_t *buf = p->base + slot * p->stride + FERRY_CHUNK_HDR_SPACE;
		uint64_t x = (slot + 1) * 0x9e3779b97f4a7c15ull;

		for (uint64_t i = 0; i + 8 <= p->chunk; i += 8) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			memcpy(buf + i, &x, 8);
		}
	}
}

/* Claim the next chunk of the run: a byte budget, or until the deadline. */
static int bench_fill(struct ferry__stream *s, uint8_t *payload,
		      struct ferry_chunk_hdr *h)
{
	struct ferry__pipe *p = s->p;
	uint64_t at, len = p->chunk;

	if (p->budget) {
		at = atomic_fetch_add(&p->claimed, p->chunk);
		if (at >= p->budget)
			return -ENODATA;
		if (p->budget - at < len)
			len = p->budget - at;
	} else {
		if (ferry__now_ns() >= p->deadline_ns)
			return -ENODATA;
		at = atomic_fetch_add(&p->claimed, p->chunk);
	}
	h->len = (uint32_t)len;
	h->offset = at;
	memcpy(payload, &at, len < sizeof(at) ? len : sizeof(at));
	ferry_chunk_seal(h, payload);
	return 1;
}

static int bench_consume(struct ferry__stream *s,
			 const struct ferry_chunk_hdr *h,
			 const uint8_t *payload)
{
	(void)s;
	(void)h;
	(void)payload;
	return 0; /* checked, counted, discarded */
}

const struct ferry__dp_ops ferry__bench_dp = {
	.start = bench_start,
	.fill = bench_fill,
	.consume = bench_consume,
};
