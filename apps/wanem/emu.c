/* One direction of the emulated WAN: impairments, bottleneck queue with
 * token bucket, delay line. See emu.h for the order of the stages. */
#include <errno.h>
#include <stdlib.h>

#include "emu.h"
#include "fifo.h"
#include "rng.h"
#include "tbf.h"

#define ETH_HLEN 14
#define XMIT_BATCH 32
#define DEFAULT_HOLD_NS 1000000ull

struct wanem_path {
	struct wanem_path_attr a;
	const struct wanem_pkt_ops *ops;
	void *ctx;
	struct wanem_rng rng;
	struct wanem_loss loss;
	struct wanem_tbf tbf;
	bool tbf_started;
	struct wanem_fifo queue; /* bottleneck, only with a rate */
	struct wanem_fifo line;  /* delay line */
	bool holding;            /* reorder slot in use */
	struct wanem_pkt held;
	uint64_t held_until;
	struct wanem_counters c;
};

uint64_t wanem_default_burst(uint64_t rate_bps)
{
	uint64_t b = rate_bps / 8 / 500; /* 2 ms */

	return b < 16384 ? 16384 : b;
}

uint64_t wanem_default_queue(uint64_t rate_bps)
{
	uint64_t q = rate_bps / 8 / 20; /* 50 ms */

	if (q < (64u << 10))
		return 64u << 10;
	return q > (64u << 20) ? 64u << 20 : q;
}

static bool is_prob(double x)
{
	return x >= 0 && x <= 1;
}

int wanem_path_create(const struct wanem_path_attr *attr,
		      const struct wanem_pkt_ops *ops, void *ctx,
		      struct wanem_path **out)
{
	struct wanem_path *p;

	if (!ops || ops->size != sizeof(*ops) || !ops->copy || !ops->free ||
	    !ops->xmit || attr->capacity == 0 ||
	    wanem_loss_check(&attr->loss) || !is_prob(attr->dup) ||
	    !is_prob(attr->reorder) || !is_prob(attr->corrupt))
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->a = *attr;
	p->ops = ops;
	p->ctx = ctx;
	if (p->a.rate_bps) {
		if (!p->a.burst_bytes)
			p->a.burst_bytes = wanem_default_burst(p->a.rate_bps);
		if (!p->a.queue_bytes)
			p->a.queue_bytes = wanem_default_queue(p->a.rate_bps);
	}
	if (!p->a.reorder_hold_ns)
		p->a.reorder_hold_ns = DEFAULT_HOLD_NS;
	wanem_rng_seed(&p->rng, attr->seed);
	wanem_loss_init(&p->loss, &attr->loss);
	if (wanem_fifo_init(&p->line, attr->capacity) ||
	    (p->a.rate_bps && wanem_fifo_init(&p->queue, attr->capacity))) {
		wanem_fifo_fini(&p->line);
		free(p);
		return -ENOMEM;
	}
	*out = p;
	return 0;
}

void wanem_path_destroy(struct wanem_path *p)
{
	if (!p)
		return;
	wanem_path_flush(p);
	wanem_fifo_fini(&p->queue);
	wanem_fifo_fini(&p->line);
	free(p);
}

uint64_t wanem_path_held(const struct wanem_path *p)
{
	return wanem_fifo_count(&p->queue) + wanem_fifo_count(&p->line) +
	       p->holding;
}

const struct wanem_counters *wanem_path_counters(const struct wanem_path *p)
{
	return &p->c;
}

static void drop(struct wanem_path *p, const struct wanem_pkt *pkt,
		 uint64_t *reason)
{
	(*reason)++;
	p->ops->free(p->ctx, pkt->h);
}

/* Into the delay line, stamped now. */
static void to_line(struct wanem_path *p, const struct wanem_pkt *pkt,
		    uint64_t now)
{
	if (wanem_fifo_full(&p->line) ||
	    (p->a.delay_limit_bytes &&
	     p->line.bytes + pkt->len > p->a.delay_limit_bytes)) {
		drop(p, pkt, &p->c.drop_full);
		return;
	}
	wanem_fifo_push(&p->line, pkt, now + p->a.delay_ns);
	if (p->line.bytes > p->c.delay_peak_bytes)
		p->c.delay_peak_bytes = p->line.bytes;
}

/* Into the bottleneck queue (or straight on without a rate). */
static void to_queue(struct wanem_path *p, const struct wanem_pkt *pkt,
		     uint64_t now)
{
	uint64_t backlog;

	if (!p->a.rate_bps) {
		to_line(p, pkt, now);
		return;
	}
	backlog = p->queue.bytes + pkt->len;
	if (backlog > p->a.queue_bytes || wanem_fifo_full(&p->queue)) {
		drop(p, pkt, &p->c.drop_queue);
		return;
	}
	if (p->a.ecn_bytes && backlog > p->a.ecn_bytes &&
	    wanem_ecn_mark(pkt->data, pkt->len))
		p->c.marked++;
	wanem_fifo_push(&p->queue, pkt, now);
	if (backlog > p->c.queue_peak_bytes)
		p->c.queue_peak_bytes = backlog;
}

/* Reordering: an original packet picked for it waits in the slot until
 * the next packet has been queued, then follows it. */
static void admit(struct wanem_path *p, const struct wanem_pkt *pkt,
		  bool original, uint64_t now)
{
	if (original && !p->holding && wanem_rng_chance(&p->rng, p->a.reorder)) {
		p->holding = true;
		p->held = *pkt;
		p->held_until = now + p->a.reorder_hold_ns;
		return;
	}
	to_queue(p, pkt, now);
	if (p->holding) {
		p->holding = false;
		p->c.reordered++;
		to_queue(p, &p->held, now);
	}
}

static void corrupt(struct wanem_path *p, const struct wanem_pkt *pkt)
{
	uint32_t from = pkt->len > ETH_HLEN ? ETH_HLEN : 0;
	uint64_t bit;

	if (!pkt->len)
		return;
	bit = wanem_rng_below(&p->rng, (uint64_t)(pkt->len - from) * 8);
	pkt->data[from + bit / 8] ^= (uint8_t)(1u << (bit % 8));
	p->c.corrupted++;
}

void wanem_path_rx(struct wanem_path *p, const struct wanem_pkt *pkt,
		   uint64_t now)
{
	struct wanem_pkt copy;
	bool dup;

	p->c.rx++;
	p->c.rx_bytes += pkt->len;
	if (wanem_path_held(p) >= p->a.capacity) {
		drop(p, pkt, &p->c.drop_full);
		return;
	}
	if (wanem_loss_drop(&p->loss, &p->rng)) {
		drop(p, pkt, &p->c.drop_loss);
		return;
	}
	if (wanem_rng_chance(&p->rng, p->a.corrupt))
		corrupt(p, pkt);
	/* copy first: the original may be dropped as it is queued */
	dup = wanem_rng_chance(&p->rng, p->a.dup);
	if (dup && (wanem_path_held(p) + 1 >= p->a.capacity ||
		    p->ops->copy(p->ctx, pkt, &copy))) {
		p->c.dup_failed++;
		dup = false;
	}
	admit(p, pkt, true, now);
	if (dup) {
		p->c.duplicated++;
		admit(p, &copy, false, now);
	}
}

/* Offer the due head of the delay line to xmit, in batches. */
static unsigned release(struct wanem_path *p, uint64_t now)
{
	void *h[XMIT_BATCH];
	unsigned sent = 0;

	for (;;) {
		uint32_t n = 0, count = wanem_fifo_count(&p->line);
		unsigned took;

		while (n < count && n < XMIT_BATCH) {
			struct wanem_fifo_ent *e = wanem_fifo_at(&p->line, n);

			if (e->t > now)
				break;
			h[n++] = e->pkt.h;
		}
		if (!n)
			break;
		took = p->ops->xmit(p->ctx, h, n);
		for (unsigned i = 0; i < took; i++) {
			struct wanem_fifo_ent *e = wanem_fifo_front(&p->line);
			uint64_t late = now - e->t;

			p->c.tx++;
			p->c.tx_bytes += e->pkt.len;
			p->c.late_sum_ns += late;
			if (late > p->c.late_max_ns)
				p->c.late_max_ns = late;
			wanem_fifo_pop(&p->line);
		}
		sent += took;
		if (took < n)
			break;
	}
	return sent;
}

unsigned wanem_path_poll(struct wanem_path *p, uint64_t now)
{
	struct wanem_fifo_ent *e;

	if (p->holding && now >= p->held_until) {
		p->holding = false;
		to_queue(p, &p->held, now);
	}
	if (p->a.rate_bps && !p->tbf_started) {
		wanem_tbf_init(&p->tbf, p->a.rate_bps, p->a.burst_bytes, now);
		p->tbf_started = true;
	}
	while (p->a.rate_bps && (e = wanem_fifo_front(&p->queue)) &&
	       wanem_tbf_take(&p->tbf, e->pkt.len, now)) {
		struct wanem_pkt pkt = e->pkt;

		wanem_fifo_pop(&p->queue);
		to_line(p, &pkt, now);
	}
	if (p->a.rate_bps && !wanem_fifo_count(&p->queue))
		wanem_tbf_idle(&p->tbf);
	return release(p, now);
}

uint64_t wanem_path_next_event(const struct wanem_path *p)
{
	const struct wanem_fifo_ent *e;
	uint64_t t = UINT64_MAX;

	if (p->holding)
		t = p->held_until;
	if ((e = wanem_fifo_front(&p->line)) && e->t < t)
		t = e->t;
	if (p->a.rate_bps && (e = wanem_fifo_front(&p->queue))) {
		uint64_t w = p->tbf_started ? wanem_tbf_when(&p->tbf, e->pkt.len)
					    : 0;
		if (w < t)
			t = w;
	}
	return t;
}

void wanem_path_flush(struct wanem_path *p)
{
	struct wanem_fifo_ent *e;

	if (p->holding) {
		p->holding = false;
		drop(p, &p->held, &p->c.drop_flush);
	}
	while (p->a.rate_bps && (e = wanem_fifo_front(&p->queue))) {
		struct wanem_pkt pkt = e->pkt;

		wanem_fifo_pop(&p->queue);
		drop(p, &pkt, &p->c.drop_flush);
	}
	while ((e = wanem_fifo_front(&p->line))) {
		struct wanem_pkt pkt = e->pkt;

		wanem_fifo_pop(&p->line);
		drop(p, &pkt, &p->c.drop_flush);
	}
}
