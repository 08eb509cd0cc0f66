/* A bounded FIFO of packets with a byte count: the bottleneck queue and
 * the delay line are each one. Each entry carries a time (the delay
 * line's release time; unused in the queue). */
#ifndef WANEM_FIFO_H
#define WANEM_FIFO_H

#include <stdbool.h>
#include <stdint.h>

#include "emu.h"

struct wanem_fifo_ent {
	struct wanem_pkt pkt;
	uint64_t t;
};

struct wanem_fifo {
	struct wanem_fifo_ent *ent;
	uint32_t mask;      /* slots - 1; slots is a power of two */
	uint32_t head, tail; /* free-running: count = tail - head */
	uint64_t bytes;
};

/* Room for at least cap entries. Returns 0 or -ENOMEM / -EINVAL. */
int wanem_fifo_init(struct wanem_fifo *f, uint32_t cap);
void wanem_fifo_fini(struct wanem_fifo *f);

static inline uint32_t wanem_fifo_count(const struct wanem_fifo *f)
{
	return f->tail - f->head;
}

static inline bool wanem_fifo_full(const struct wanem_fifo *f)
{
	return wanem_fifo_count(f) > f->mask;
}

/* The oldest entry, or NULL. */
static inline struct wanem_fifo_ent *wanem_fifo_front(const struct wanem_fifo *f)
{
	return f->head == f->tail ? 0 : &f->ent[f->head & f->mask];
}

/* The entry i places behind the front (i < count). */
static inline struct wanem_fifo_ent *wanem_fifo_at(const struct wanem_fifo *f,
						   uint32_t i)
{
	return &f->ent[(f->head + i) & f->mask];
}

/* Append (the caller checked wanem_fifo_full). */
static inline void wanem_fifo_push(struct wanem_fifo *f,
				   const struct wanem_pkt *p, uint64_t t)
{
	struct wanem_fifo_ent *e = &f->ent[f->tail++ & f->mask];

	e->pkt = *p;
	e->t = t;
	f->bytes += p->len;
}

/* Remove the front entry (the caller checked it exists). */
static inline void wanem_fifo_pop(struct wanem_fifo *f)
{
	f->bytes -= f->ent[f->head++ & f->mask].pkt.len;
}

#endif
