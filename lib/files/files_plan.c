/* The plan codec, split files' ranges and their codec, and the
 * worker-to-control file queue. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "ferry/error.h"
#include "ferry/sum.h"
#include "files/files.h"
#include "util/cursor.h"

/* Entry: u32 idx, u8 action; EXISTS: u32 crc32c, u32 adler32; RESUME:
 * u32 n_ranges, then n x (u64 first, u64 count); FAIL: u32 status, u8
 * text length, text. Little-endian. */
size_t ferry__plan_encode(const struct ferry__plan_entry *e, size_t n,
			  size_t *next, uint8_t *buf, size_t cap)
{
	struct ferry__wcur c = { .p = buf, .cap = cap };

	while (*next < n) {
		const struct ferry__plan_entry *x = &e[*next];
		size_t before = c.off;

		ferry__put_u32(&c, x->idx);
		ferry__put_u8(&c, x->action);
		if (x->action == FERRY__PLAN_EXISTS) {
			ferry__put_u32(&c, x->crc32c);
			ferry__put_u32(&c, x->adler32);
		} else if (x->action == FERRY__PLAN_RESUME) {
			ferry__put_u32(&c, x->n_ranges);
			for (uint32_t i = 0; i < x->n_ranges; i++) {
				ferry__put_u64(&c, x->ranges[i].first);
				ferry__put_u64(&c, x->ranges[i].count);
			}
		} else if (x->action == FERRY__PLAN_FAIL) {
			size_t tl = x->text ? strlen(x->text) : 0;
			if (tl > 255)
				tl = 255;
			ferry__put_u32(&c, x->status);
			ferry__put_u8(&c, (uint8_t)tl);
			ferry__put_bytes(&c, x->text, tl);
		}
		if (c.overrun) {
			/* one entry larger than a batch cannot be sent */
			return before ? before : 0;
		}
		(*next)++;
	}
	return c.off;
}

int ferry__plan_decode(const uint8_t *buf, size_t len,
		       int (*fn)(void *arg, const struct ferry__plan_entry *e),
		       void *arg)
{
	struct ferry__rcur c = { .p = buf, .len = len };

	while (ferry__get_left(&c)) {
		struct ferry__plan_entry e = { 0 };
		struct ferry__range r[64];
		char text[256];
		int err;

		e.idx = ferry__get_u32(&c);
		e.action = ferry__get_u8(&c);
		if (e.action == FERRY__PLAN_EXISTS) {
			e.crc32c = ferry__get_u32(&c);
			e.adler32 = ferry__get_u32(&c);
		} else if (e.action == FERRY__PLAN_RESUME) {
			e.n_ranges = ferry__get_u32(&c);
			if (e.n_ranges > ferry__get_left(&c) / 16)
				return -FERRY_EPROTO;
			e.ranges = e.n_ranges <= 64 ? r :
				   malloc(sizeof(*e.ranges) * e.n_ranges);
			if (!e.ranges)
				return -ENOMEM;
			for (uint32_t i = 0; i < e.n_ranges; i++) {
				e.ranges[i].first = ferry__get_u64(&c);
				e.ranges[i].count = ferry__get_u64(&c);
			}
		} else if (e.action == FERRY__PLAN_FAIL) {
			uint8_t n;
			e.status = ferry__get_u32(&c);
			n = ferry__get_u8(&c);
			ferry__get_bytes(&c, text, n);
			text[n] = '\0';
			if (memchr(text, '\0', n))
				return -FERRY_EPROTO; /* a text, not bytes */
			e.text = text;
		} else if (e.action != FERRY__PLAN_SEND) {
			return -FERRY_EPROTO;
		}
		err = c.overrun ? -FERRY_EPROTO : fn(arg, &e);
		if (e.ranges && e.ranges != r)
			free(e.ranges);
		if (err)
			return err;
	}
	return c.overrun ? -FERRY_EPROTO : 0;
}

int ferry__span_of(uint64_t size, uint64_t offset, uint64_t split,
		   uint64_t chunk, struct ferry__span *s)
{
	if (!split || !chunk || split % chunk || offset % split ||
	    offset >= size)
		return -EINVAL;
	s->off = offset;
	s->len = size - offset < split ? size - offset : split;
	s->first = offset / chunk;
	s->count = (s->len + chunk - 1) / chunk; /* s->len > 0 */
	return 0;
}

size_t ferry__ranges_encode(const struct ferry__file_range *e, size_t n,
			    size_t *next, uint8_t *buf, size_t cap)
{
	struct ferry__wcur c = { .p = buf, .cap = cap };

	while (*next < n && cap - c.off >= FERRY__RANGE_ENTRY_LEN) {
		ferry__put_u32(&c, e[*next].idx);
		ferry__put_u64(&c, e[*next].offset);
		ferry__put_u64(&c, e[*next].split);
		(*next)++;
	}
	return c.off;
}

int ferry__ranges_decode(const uint8_t *buf, size_t len,
			 int (*fn)(void *arg, const struct ferry__file_range *e),
			 void *arg)
{
	struct ferry__rcur c = { .p = buf, .len = len };
	int err = 0;

	if (len % FERRY__RANGE_ENTRY_LEN)
		return -FERRY_EPROTO;
	while (!err && ferry__get_left(&c)) {
		struct ferry__file_range e;
		e.idx = ferry__get_u32(&c);
		e.offset = ferry__get_u64(&c);
		e.split = ferry__get_u64(&c);
		err = fn(arg, &e);
	}
	return err;
}

int ferry__fileq_init(struct ferry__fileq *q, size_t cap)
{
	memset(q, 0, sizeof(*q));
	q->cap = cap + 1;
	q->v = calloc(q->cap, sizeof(*q->v));
	if (!q->v)
		return -ENOMEM;
	q->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (q->efd < 0) {
		free(q->v);
		return -errno;
	}
	pthread_mutex_init(&q->lock, NULL);
	return 0;
}

/* Each file is pushed at most once, so cap = number of files never
 * overflows. Only a push into an empty queue signals: the control thread
 * pops until the queue is empty after each wake-up (and acks before it
 * pops), so a push that finds items there is seen with them. */
void ferry__fileq_push_n(struct ferry__fileq *q, const uint32_t *idx,
			 size_t n)
{
	uint64_t one = 1;
	bool was_empty;

	if (!n)
		return;
	pthread_mutex_lock(&q->lock);
	was_empty = q->head == q->tail;
	for (size_t i = 0; i < n; i++) {
		q->v[q->tail] = idx[i];
		q->tail = (q->tail + 1) % q->cap;
	}
	pthread_mutex_unlock(&q->lock);
	if (was_empty && write(q->efd, &one, sizeof(one)) < 0) {
		/* the counter cannot overflow at one per file */
	}
}

void ferry__fileq_push(struct ferry__fileq *q, uint32_t idx)
{
	ferry__fileq_push_n(q, &idx, 1);
}

bool ferry__fileq_pop(struct ferry__fileq *q, uint32_t *idx)
{
	bool got = false;

	pthread_mutex_lock(&q->lock);
	if (q->head != q->tail) {
		*idx = q->v[q->head];
		q->head = (q->head + 1) % q->cap;
		got = true;
	}
	pthread_mutex_unlock(&q->lock);
	return got;
}

void ferry__fileq_kick(struct ferry__fileq *q)
{
	uint64_t one = 1;

	if (write(q->efd, &one, sizeof(one)) < 0) {
		/* the counter cannot overflow at one per slice */
	}
}

void ferry__fileq_ack(struct ferry__fileq *q)
{
	uint64_t n;

	if (read(q->efd, &n, sizeof(n)) < 0) {
		/* nothing was signalled */
	}
}

void ferry__fileq_free(struct ferry__fileq *q)
{
	if (!q->v)
		return;
	close(q->efd);
	free(q->v);
	pthread_mutex_destroy(&q->lock);
	q->v = NULL;
}

void ferry__sums_combine(const struct ferry_chunk_sum *s, uint64_t n,
			 uint64_t size, uint64_t chunk, uint32_t *crc,
			 uint32_t *adler)
{
	/* the first chunk's sums are the file's so far: combining them with
	 * an empty file's costs a GF(2) matrix power per file for nothing */
	uint32_t c = n ? s[0].crc32c : 0, a = n ? s[0].adler32 : 1;

	for (uint64_t k = 1; k < n; k++) {
		uint64_t len = size - k * chunk < chunk ? size - k * chunk : chunk;
		c = ferry_crc32c_combine(c, s[k].crc32c, len);
		a = ferry_adler32_combine(a, s[k].adler32, len);
	}
	*crc = c;
	*adler = a;
}
