/* ferry-wanem's emulation core under a simulated clock: delay line, token
 * bucket, loss models, duplication / reordering / corruption, tail drop,
 * ECN marking, counters, and the option values. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cu.h"
#include "emu.h"
#include "loss.h"
#include "opts.h"
#include "report.h"
#include "tbf.h"

#define MS 1000000ull
#define US 1000ull
#define SEC 1000000000ull

/* A test packet: its id, arrival time, a copy flag, and the frame. */
struct fake {
	uint64_t id, t_rx;
	bool copy;
	uint32_t len;
	uint8_t buf[1600];
};

/* The sink: what xmit saw, in order, and what was freed. */
struct sink {
	uint64_t now;            /* the simulated clock at the xmit call */
	unsigned take_max;       /* xmit takes at most this many per call */
	uint64_t made, freed, sent;
	struct fake **out;       /* sent packets, kept for inspection */
	uint64_t *t_out;
	uint64_t cap;
	bool keep;               /* keep sent packets (else free them) */
	uint64_t bytes;
};

static struct fake *fake_new(struct sink *s, uint64_t id, uint32_t len,
			     uint64_t now)
{
	struct fake *f = calloc(1, sizeof(*f));

	CU_ASSERT_FATAL(f != NULL);
	f->id = id;
	f->t_rx = now;
	f->len = len;
	/* (a longer len is fine where nothing reads the bytes) */
	for (uint32_t i = 0; i < len && i < sizeof(f->buf); i++)
		f->buf[i] = (uint8_t)(id * 7 + i);
	s->made++;
	return f;
}

static struct wanem_pkt pkt_of(struct fake *f)
{
	return (struct wanem_pkt){ f, f->buf, f->len };
}

static int f_copy(void *ctx, const struct wanem_pkt *in, struct wanem_pkt *out)
{
	struct sink *s = ctx;
	struct fake *f = malloc(sizeof(*f));

	if (!f)
		return -ENOMEM;
	memcpy(f, in->h, sizeof(*f));
	f->copy = true;
	s->made++;
	*out = pkt_of(f);
	return 0;
}

static void f_free(void *ctx, void *h)
{
	((struct sink *)ctx)->freed++;
	free(h);
}

static unsigned f_xmit(void *ctx, void *const *h, unsigned n)
{
	struct sink *s = ctx;

	if (s->take_max && n > s->take_max)
		n = s->take_max;
	for (unsigned i = 0; i < n; i++) {
		struct fake *f = h[i];

		s->bytes += f->len;
		if (s->keep && s->sent < s->cap) {
			s->out[s->sent] = f;
			s->t_out[s->sent] = s->now;
		} else {
			free(f);
		}
		s->sent++;
	}
	return n;
}

static const struct wanem_pkt_ops fake_ops = {
	.size = sizeof(struct wanem_pkt_ops),
	.copy = f_copy,
	.free = f_free,
	.xmit = f_xmit,
};

static void sink_init(struct sink *s, uint64_t keep)
{
	memset(s, 0, sizeof(*s));
	if (keep) {
		s->keep = true;
		s->cap = keep;
		s->out = calloc(keep, sizeof(*s->out));
		s->t_out = calloc(keep, sizeof(*s->t_out));
		CU_ASSERT_FATAL(s->out && s->t_out);
	}
}

static void sink_fini(struct sink *s)
{
	for (uint64_t i = 0; s->keep && i < s->sent && i < s->cap; i++)
		free(s->out[i]);
	free(s->out);
	free(s->t_out);
}

static struct wanem_path *path_new(struct wanem_path_attr *a, struct sink *s)
{
	struct wanem_path *p = NULL;

	if (!a->capacity)
		a->capacity = 1u << 20;
	CU_ASSERT_FATAL(wanem_path_create(a, &fake_ops, s, &p) == 0);
	return p;
}

static void poll_at(struct wanem_path *p, struct sink *s, uint64_t now)
{
	s->now = now;
	wanem_path_poll(p, now);
}

/* Every packet made was sent or freed exactly once, and the counters add
 * up; for a path that is flushed and done. */
static void check_done(struct wanem_path *p, struct sink *s)
{
	const struct wanem_counters *c = wanem_path_counters(p);

	wanem_path_flush(p);
	CU_ASSERT_EQUAL(wanem_path_held(p), 0);
	CU_ASSERT(wanem_counters_add_up(c, 0));
	CU_ASSERT_EQUAL(s->made, s->sent + s->freed);
	CU_ASSERT_EQUAL(c->tx, s->sent);
	CU_ASSERT_EQUAL(c->rx + c->duplicated, s->made);
}

/* Delay line: packets arrive at random times; none leaves before arrival
 * + delay, each leaves at the first poll at or after it, in order. */
static void run_delay(uint64_t delay, uint64_t n)
{
	struct wanem_path_attr a = { .delay_ns = delay, .seed = 1 };
	struct sink s;
	struct wanem_path *p;
	struct wanem_rng rng;
	uint64_t t = 0, next = 0, id = 0;
	const uint64_t step = 1 * US;

	sink_init(&s, n);
	p = path_new(&a, &s);
	wanem_rng_seed(&rng, 42);
	/* arrivals on a 1 us grid, 0..200 us apart, polled every step */
	next = wanem_rng_below(&rng, 200) * US;
	for (t = 0; s.sent < n; t += step) {
		if (id < n && next <= t) {
			struct fake *f = fake_new(&s, id++, 100, t);
			struct wanem_pkt pk = pkt_of(f);

			wanem_path_rx(p, &pk, t);
			next = t + wanem_rng_below(&rng, 200) * US;
		}
		poll_at(p, &s, t);
		if (t > delay + 200 * US * n + SEC)
			break; /* lost some: the checks below fail */
	}
	CU_ASSERT_EQUAL_FATAL(s.sent, n);
	for (uint64_t i = 0; i < n; i++) {
		struct fake *f = s.out[i];

		CU_ASSERT_EQUAL(f->id, i);
		CU_ASSERT(s.t_out[i] >= f->t_rx + delay);     /* never early */
		CU_ASSERT(s.t_out[i] < f->t_rx + delay + step); /* on time */
	}
	CU_ASSERT(wanem_path_counters(p)->late_max_ns < step);
	sink_fini(&s);
	wanem_path_destroy(p);
}

static void test_delay_line(void)
{
	run_delay(0, 1000);
	run_delay(5 * MS, 5000);
	run_delay(150 * MS, 5000);
	run_delay(1000 * MS, 2000);
}

/* The delay line's byte limit drops what would overflow it. */
static void test_delay_limit(void)
{
	struct wanem_path_attr a = { .delay_ns = 10 * MS,
				     .delay_limit_bytes = 10000 };
	struct sink s;
	struct wanem_path *p;

	sink_init(&s, 0);
	p = path_new(&a, &s);
	for (int i = 0; i < 20; i++) {
		struct wanem_pkt pk = pkt_of(fake_new(&s, (uint64_t)i, 1000, 0));

		wanem_path_rx(p, &pk, 0);
	}
	CU_ASSERT_EQUAL(wanem_path_counters(p)->drop_full, 10);
	CU_ASSERT_EQUAL(wanem_path_counters(p)->delay_peak_bytes, 10000);
	CU_ASSERT_EQUAL(wanem_path_next_event(p), 10 * MS);
	poll_at(p, &s, 10 * MS - 1);
	CU_ASSERT_EQUAL(s.sent, 0);
	poll_at(p, &s, 10 * MS);
	CU_ASSERT_EQUAL(s.sent, 10);
	CU_ASSERT_EQUAL(wanem_path_next_event(p), UINT64_MAX);
	check_done(p, &s);
	sink_fini(&s);
	wanem_path_destroy(p);
}

/* The transmitter takes a few at a time: nothing is lost or reordered. */
static void test_backpressure(void)
{
	struct wanem_path_attr a = { .delay_ns = 1 * MS };
	struct sink s;
	struct wanem_path *p;

	sink_init(&s, 100);
	s.take_max = 3;
	p = path_new(&a, &s);
	for (int i = 0; i < 100; i++) {
		struct wanem_pkt pk = pkt_of(fake_new(&s, (uint64_t)i, 64, 0));

		wanem_path_rx(p, &pk, 0);
	}
	poll_at(p, &s, 1 * MS);
	CU_ASSERT_EQUAL(s.sent, 3);
	for (uint64_t t = 1 * MS; s.sent < 100; t += US)
		poll_at(p, &s, t);
	for (uint64_t i = 0; i < 100; i++)
		CU_ASSERT_EQUAL(s.out[i]->id, i);
	check_done(p, &s);
	sink_fini(&s);
	wanem_path_destroy(p);
}

/* Offered at 1.5x the rate for dur (simulated), polled every 10 us: the
 * bytes delivered after the first tenth are within 1% of the rate. */
static void run_rate(uint64_t rate_bps, uint64_t dur)
{
	const uint32_t len = 1514;
	struct wanem_path_attr a = { .rate_bps = rate_bps, .queue_bytes = 1 << 20 };
	struct sink s;
	struct wanem_path *p;
	double gap = (double)len * 8 / (double)rate_bps * 1e9 / 1.5; /* 1.5x */
	double next = 0;
	uint64_t id = 0, bytes_at_1s = 0, t;

	sink_init(&s, 0);
	p = path_new(&a, &s);
	for (t = 0; t <= dur; t += 10 * US) {
		for (; next <= (double)t; next += gap) {
			struct wanem_pkt pk = pkt_of(fake_new(&s, id++, len, t));

			wanem_path_rx(p, &pk, t);
		}
		poll_at(p, &s, t);
		if (t == dur / 10)
			bytes_at_1s = s.bytes;
	}
	double got = (double)(s.bytes - bytes_at_1s) * 8 / ((double)dur * 0.9 / 1e9);
	CU_ASSERT(fabs(got / (double)rate_bps - 1) < 0.01);
	CU_ASSERT(wanem_path_counters(p)->drop_queue > 0);
	CU_ASSERT(wanem_path_counters(p)->queue_peak_bytes <= 1 << 20);
	check_done(p, &s);
	sink_fini(&s);
	wanem_path_destroy(p);
}

static void test_rate(void)
{
	/* at least 100k frames delivered at each rate */
	run_rate(10000000ull, 200 * SEC);    /* 10 Mb/s */
	run_rate(100000000ull, 20 * SEC);    /* 100 Mb/s */
	run_rate(1000000000ull, 2 * SEC);    /* 1 Gb/s */
	run_rate(10000000000ull, SEC / 5);   /* 10 Gb/s */
}

/* A poller that runs late now and then (20 ms gaps) while frames wait
 * loses no capacity: the link sends what it would have sent meanwhile. */
static void test_rate_late_poll(void)
{
	const uint32_t len = 1514;
	const uint64_t rate = 1000000000ull;
	struct wanem_path_attr a = { .rate_bps = rate, .queue_bytes = 64 << 20 };
	struct sink s;
	struct wanem_path *p;
	uint64_t id = 0, t = 0, t0 = 0, b0 = 0;

	sink_init(&s, 0);
	p = path_new(&a, &s);
	for (unsigned turn = 0; t <= 2 * SEC; turn++) {
		/* 4 MB waiting: more than a 20 ms gap drains at 1 Gb/s */
		while (wanem_path_held(p) * len < (4u << 20)) {
			struct wanem_pkt pk = pkt_of(fake_new(&s, id++, len, t));

			wanem_path_rx(p, &pk, t);
		}
		poll_at(p, &s, t);
		if (!t0 && t >= SEC / 5) {
			t0 = t;
			b0 = s.bytes;
		}
		t += turn % 500 == 499 ? 20 * MS : 10 * US;
	}
	double got = (double)(s.bytes - b0) * 8 / ((double)(t - t0) / 1e9);
	CU_ASSERT(fabs(got / (double)rate - 1) < 0.01);
	check_done(p, &s);
	sink_fini(&s);
	wanem_path_destroy(p);
}

/* After a long idle spell a flood leaves in one burst of at most the
 * bucket depth (+ one frame), then at the rate. */
static void test_burst_bound(void)
{
	const uint64_t rate = 1000000000ull, depth = 64 * 1024;
	const uint32_t len = 1000;
	struct wanem_path_attr a = { .rate_bps = rate, .burst_bytes = depth,
				     .queue_bytes = 4 << 20 };
	struct sink s;
	struct wanem_path *p;
	struct wanem_tbf tb;

	sink_init(&s, 0);
	p = path_new(&a, &s);
	poll_at(p, &s, 0);
	for (int i = 0; i < 2000; i++) {
		struct wanem_pkt pk = pkt_of(fake_new(&s, (uint64_t)i, len, SEC));

		wanem_path_rx(p, &pk, SEC);
	}
	poll_at(p, &s, SEC);
	CU_ASSERT(s.bytes <= depth + len);
	CU_ASSERT(s.bytes >= depth - len);
	/* in every later window of T, at most depth + rate * T + a frame */
	for (uint64_t t = SEC; t <= SEC + 20 * MS; t += 50 * US) {
		poll_at(p, &s, t);
		CU_ASSERT(s.bytes <= depth + len +
				     (uint64_t)((double)(t - SEC) * (double)rate / 8e9));
	}
	check_done(p, &s);
	sink_fini(&s);
	wanem_path_destroy(p);

	/* the bucket alone: a frame bigger than the bucket still passes */
	wanem_tbf_init(&tb, 8000000, 1000, 0); /* 1 MB/s, 1000 B deep */
	CU_ASSERT(wanem_tbf_take(&tb, 1500, 0));
	CU_ASSERT_FALSE(wanem_tbf_take(&tb, 100, 0));
	CU_ASSERT_EQUAL(wanem_tbf_when(&tb, 100), 600 * US);
	CU_ASSERT_FALSE(wanem_tbf_take(&tb, 100, 599 * US));
	CU_ASSERT(wanem_tbf_take(&tb, 100, 600 * US));
}

/* Random loss: over 1e6 packets, within 20% (relative) of 0.1% and 1%. */
static void run_loss(double pct)
{
	struct wanem_path_attr a = {
		.loss = { .kind = WANEM_LOSS_RANDOM, .p_loss = pct / 100 },
		.seed = 7,
	};
	struct sink s;
	struct wanem_path *p;
	const uint64_t n = 1000000;

	sink_init(&s, 0);
	p = path_new(&a, &s);
	for (uint64_t i = 0; i < n; i++) {
		struct wanem_pkt pk = pkt_of(fake_new(&s, i, 60, i));

		wanem_path_rx(p, &pk, i);
		if (i % 64 == 0)
			poll_at(p, &s, i);
	}
	poll_at(p, &s, n);
	double got = (double)wanem_path_counters(p)->drop_loss / (double)n;
	CU_ASSERT(fabs(got / (pct / 100) - 1) < 0.2);
	CU_ASSERT_EQUAL(s.sent + wanem_path_counters(p)->drop_loss, n);
	check_done(p, &s);
	sink_fini(&s);
	wanem_path_destroy(p);
}

static void test_loss_random(void)
{
	run_loss(0.1);
	run_loss(1);
}

/* Gilbert-Elliott: the simple model with 1% loss in bursts of 5 loses 1%
 * of 1e6 packets in runs of mean length 5 (each within 10%); a general
 * one loses what wanem_loss_mean() says. */
static void test_loss_gilbert(void)
{
	struct wanem_loss_attr la;
	struct wanem_loss l;
	struct wanem_rng r;
	uint64_t lost = 0, runs = 0, n = 1000000;
	bool prev = false;

	CU_ASSERT_EQUAL(wanem_loss_gilbert(0.01, 5, &la), 0);
	CU_ASSERT(fabs(wanem_loss_mean(&la) - 0.01) < 1e-12);
	CU_ASSERT(fabs(la.r - 0.2) < 1e-12);
	wanem_loss_init(&l, &la);
	wanem_rng_seed(&r, 3);
	for (uint64_t i = 0; i < n; i++) {
		bool d = wanem_loss_drop(&l, &r);

		lost += d;
		runs += d && !prev;
		prev = d;
	}
	CU_ASSERT(fabs((double)lost / (double)n / 0.01 - 1) < 0.1);
	CU_ASSERT_FATAL(runs > 0);
	CU_ASSERT(fabs((double)lost / (double)runs / 5 - 1) < 0.1);

	la = (struct wanem_loss_attr){ .kind = WANEM_LOSS_GE, .p = 0.01,
		.r = 0.1, .loss_bad = 0.5, .loss_good = 0.001 };
	wanem_loss_init(&l, &la);
	for (uint64_t i = lost = 0; i < n; i++)
		lost += wanem_loss_drop(&l, &r);
	CU_ASSERT(fabs((double)lost / (double)n / wanem_loss_mean(&la) - 1) < 0.1);

	CU_ASSERT_EQUAL(wanem_loss_gilbert(1, 5, &la), -EINVAL);
	CU_ASSERT_EQUAL(wanem_loss_gilbert(0.01, 0.5, &la), -EINVAL);
	la.loss_bad = 1.5;
	CU_ASSERT_EQUAL(wanem_loss_check(&la), -EINVAL);
}

/* Duplication: about the configured share, each copy right after its
 * original and identical to it. */
static void test_dup(void)
{
	struct wanem_path_attr a = { .dup = 0.1, .seed = 11 };
	struct sink s;
	struct wanem_path *p;
	const uint64_t n = 100000;
	uint64_t copies = 0;

	sink_init(&s, 2 * n);
	p = path_new(&a, &s);
	for (uint64_t i = 0; i < n; i++) {
		struct wanem_pkt pk = pkt_of(fake_new(&s, i, 100, i));

		wanem_path_rx(p, &pk, i);
		poll_at(p, &s, i);
	}
	const struct wanem_counters *c = wanem_path_counters(p);
	CU_ASSERT(fabs((double)c->duplicated / (double)n / 0.1 - 1) < 0.05);
	CU_ASSERT_EQUAL(s.sent, n + c->duplicated);
	for (uint64_t i = 0; i < s.sent; i++) {
		if (!s.out[i]->copy)
			continue;
		copies++;
		CU_ASSERT_FATAL(i > 0);
		CU_ASSERT_EQUAL(s.out[i]->id, s.out[i - 1]->id);
		CU_ASSERT_FALSE(s.out[i - 1]->copy);
		CU_ASSERT(!memcmp(s.out[i]->buf, s.out[i - 1]->buf, 100));
	}
	CU_ASSERT_EQUAL(copies, c->duplicated);
	check_done(p, &s);
	sink_fini(&s);
	wanem_path_destroy(p);
}

/* Reordering: each reordered packet is sent right after the one that
 * arrived after it; the counter matches the inversions seen; a held
 * packet with no successor goes after the hold time, in order. */
static void test_reorder(void)
{
	struct wanem_path_attr a = { .reorder = 0.1, .seed = 5 };
	struct sink s;
	struct wanem_path *p;
	const uint64_t n = 100000;
	uint64_t inversions = 0;

	sink_init(&s, n);
	p = path_new(&a, &s);
	for (uint64_t i = 0; i < n; i++) {
		struct wanem_pkt pk = pkt_of(fake_new(&s, i, 100, i * US));

		wanem_path_rx(p, &pk, i * US);
		poll_at(p, &s, i * US);
	}
	poll_at(p, &s, n * US + 2 * MS); /* the hold time of the last one */
	CU_ASSERT_EQUAL(s.sent, n);
	for (uint64_t i = 1; i < n; i++)
		if (s.out[i]->id < s.out[i - 1]->id) {
			inversions++;
			CU_ASSERT_EQUAL(s.out[i]->id + 1, s.out[i - 1]->id);
		}
	const struct wanem_counters *c = wanem_path_counters(p);
	CU_ASSERT_EQUAL(c->reordered, inversions);
	/* held with chance 0.1 when the slot is free: 0.1 / 1.1 of packets */
	CU_ASSERT(fabs((double)c->reordered / (double)n / (0.1 / 1.1) - 1) < 0.05);
	check_done(p, &s);
	sink_fini(&s);
	wanem_path_destroy(p);

	/* alone: held 1 ms (the default), then sent */
	a.reorder = 1;
	sink_init(&s, 4);
	p = path_new(&a, &s);
	struct wanem_pkt pk = pkt_of(fake_new(&s, 0, 100, 0));
	wanem_path_rx(p, &pk, 0);
	poll_at(p, &s, 0);
	CU_ASSERT_EQUAL(s.sent, 0);
	CU_ASSERT_EQUAL(wanem_path_next_event(p), 1 * MS);
	poll_at(p, &s, 1 * MS);
	CU_ASSERT_EQUAL(s.sent, 1);
	CU_ASSERT_EQUAL(wanem_path_counters(p)->reordered, 0);
	check_done(p, &s);
	sink_fini(&s);
	wanem_path_destroy(p);
}

/* Corruption: about the configured share, each corrupted packet differs
 * from what was sent in exactly one bit, never in the Ethernet header. */
static void test_corrupt(void)
{
	struct wanem_path_attr a = { .corrupt = 0.05, .seed = 9 };
	struct sink s;
	struct wanem_path *p;
	const uint64_t n = 100000;
	uint64_t bad = 0;

	sink_init(&s, n);
	p = path_new(&a, &s);
	for (uint64_t i = 0; i < n; i++) {
		struct wanem_pkt pk = pkt_of(fake_new(&s, i, 200, i));

		wanem_path_rx(p, &pk, i);
		poll_at(p, &s, i);
	}
	CU_ASSERT_EQUAL(s.sent, n);
	for (uint64_t i = 0; i < n; i++) {
		struct fake *f = s.out[i];
		unsigned bits = 0, in_l2 = 0;

		for (uint32_t k = 0; k < f->len; k++) {
			uint8_t d = f->buf[k] ^ (uint8_t)(f->id * 7 + k);

			in_l2 += k < 14 && d;
			bits += (unsigned)__builtin_popcount(d);
		}
		CU_ASSERT(in_l2 == 0);
		CU_ASSERT(bits <= 1);
		bad += bits;
	}
	const struct wanem_counters *c = wanem_path_counters(p);
	CU_ASSERT_EQUAL(c->corrupted, bad);
	CU_ASSERT(fabs((double)bad / (double)n / 0.05 - 1) < 0.05);
	check_done(p, &s);
	sink_fini(&s);
	wanem_path_destroy(p);
}

/* Tail drop: with nothing drained, the queue takes frames up to its byte
 * limit and drops the rest. */
static void test_tail_drop(void)
{
	struct wanem_path_attr a = { .rate_bps = 10000000, .queue_bytes = 15000,
				     .burst_bytes = 16384 };
	struct sink s;
	struct wanem_path *p;

	sink_init(&s, 0);
	p = path_new(&a, &s);
	for (int i = 0; i < 100; i++) {
		struct wanem_pkt pk = pkt_of(fake_new(&s, (uint64_t)i, 1000, 0));

		wanem_path_rx(p, &pk, 0);
	}
	const struct wanem_counters *c = wanem_path_counters(p);
	CU_ASSERT_EQUAL(c->drop_queue, 85);
	CU_ASSERT_EQUAL(c->queue_peak_bytes, 15000);
	CU_ASSERT_EQUAL(wanem_path_held(p), 15);
	CU_ASSERT(wanem_counters_add_up(c, wanem_path_held(p)));
	poll_at(p, &s, 0);  /* the full bucket (16 KiB) takes all 15 */
	CU_ASSERT_EQUAL(s.sent, 15);
	/* now empty: exactly queue_bytes fits, one byte more does not */
	struct wanem_pkt pk = pkt_of(fake_new(&s, 100, 15000, 0));
	wanem_path_rx(p, &pk, 0);
	pk = pkt_of(fake_new(&s, 101, 1, 0));
	wanem_path_rx(p, &pk, 0);
	CU_ASSERT_EQUAL(c->drop_queue, 86);
	for (uint64_t t = 0; t < SEC; t += 100 * US)
		poll_at(p, &s, t);
	check_done(p, &s);
	sink_fini(&s);
	wanem_path_destroy(p);
}

/* The one's complement sum of an IPv4 header: 0xffff when valid. */
static uint16_t ip_sum(const uint8_t *h, unsigned len)
{
	uint32_t s = 0;

	for (unsigned i = 0; i < len; i += 2)
		s += (uint32_t)(h[i] << 8 | h[i + 1]);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

/* An Ethernet + IPv4 frame with the given ECN bits and a valid checksum. */
static void make_v4(uint8_t *f, uint32_t len, unsigned ecn, uint64_t salt)
{
	uint16_t c;

	memset(f, 0, len);
	f[12] = 0x08;
	f[13] = 0x00;
	uint8_t *ip = f + 14;
	ip[0] = 0x45;
	ip[1] = (uint8_t)(0xb8 | ecn); /* DSCP EF + ECN */
	ip[2] = (uint8_t)((len - 14) >> 8);
	ip[3] = (uint8_t)(len - 14);
	ip[4] = (uint8_t)salt;
	ip[5] = (uint8_t)(salt >> 8);
	ip[8] = 64;
	ip[9] = 17;
	ip[12] = 198; ip[13] = 18; ip[14] = (uint8_t)salt; ip[15] = 1;
	ip[16] = 198; ip[17] = 18; ip[18] = 0; ip[19] = 2;
	c = (uint16_t)~ip_sum(ip, 20);
	ip[10] = (uint8_t)(c >> 8);
	ip[11] = (uint8_t)c;
}

static void test_ecn_mark(void)
{
	uint8_t f[1000];

	/* every ECT header, many checksums: CE set, checksum still valid */
	for (uint64_t salt = 0; salt < 70000; salt += 7) {
		for (unsigned ecn = 1; ecn <= 2; ecn++) {
			make_v4(f, sizeof(f), ecn, salt);
			CU_ASSERT_FATAL(ip_sum(f + 14, 20) == 0xffff);
			CU_ASSERT(wanem_ecn_mark(f, sizeof(f)));
			CU_ASSERT_EQUAL(f[15] & 3, 3);
			CU_ASSERT_EQUAL(f[15] >> 2, 0xb8 >> 2); /* DSCP kept */
			CU_ASSERT(ip_sum(f + 14, 20) == 0xffff);
		}
	}
	make_v4(f, sizeof(f), 0, 1);           /* Not-ECT: left alone */
	CU_ASSERT_FALSE(wanem_ecn_mark(f, sizeof(f)));
	CU_ASSERT_EQUAL(f[15] & 3, 0);
	make_v4(f, sizeof(f), 3, 1);           /* already CE */
	CU_ASSERT_FALSE(wanem_ecn_mark(f, sizeof(f)));
	CU_ASSERT_FALSE(wanem_ecn_mark(f, 20)); /* truncated */

	/* behind an 802.1Q tag */
	uint8_t v[1004];
	make_v4(v + 4, 1000, 2, 5);
	memmove(v, v + 4, 12);
	v[12] = 0x81; v[13] = 0x00; v[14] = 0; v[15] = 7;
	v[16] = 0x08; v[17] = 0x00;
	CU_ASSERT(wanem_ecn_mark(v, sizeof(v)));
	CU_ASSERT_EQUAL(v[19] & 3, 3);
	CU_ASSERT(ip_sum(v + 18, 20) == 0xffff);

	/* IPv6: traffic class ECN bits */
	memset(f, 0, 100);
	f[12] = 0x86; f[13] = 0xdd;
	f[14] = 0x6b; f[15] = 0x90; /* TC 0xb9: ECT(1) */
	CU_ASSERT(wanem_ecn_mark(f, 100));
	CU_ASSERT_EQUAL(f[14], 0x6b);
	CU_ASSERT_EQUAL(f[15], 0xb0);
	CU_ASSERT_FALSE(wanem_ecn_mark(f, 100));
}

/* ECN in the path: frames that find the queue (with them) above the
 * threshold are marked, the others not; all checksums valid. */
static void test_ecn_queue(void)
{
	struct wanem_path_attr a = { .rate_bps = 10000000, .queue_bytes = 20000,
				     .ecn_bytes = 5000, .burst_bytes = 16384 };
	struct sink s;
	struct wanem_path *p;

	sink_init(&s, 10);
	p = path_new(&a, &s);
	for (int i = 0; i < 10; i++) {
		struct fake *fk = fake_new(&s, (uint64_t)i, 1000, 0);
		struct wanem_pkt pk;

		make_v4(fk->buf, 1000, 2, (uint64_t)i);
		pk = pkt_of(fk);
		wanem_path_rx(p, &pk, 0);
	}
	CU_ASSERT_EQUAL(wanem_path_counters(p)->marked, 5);
	for (uint64_t t = 0; s.sent < 10; t += 100 * US)
		poll_at(p, &s, t);
	for (int i = 0; i < 10; i++) {
		CU_ASSERT_EQUAL(s.out[i]->buf[15] & 3, i >= 5 ? 3 : 2);
		CU_ASSERT(ip_sum(s.out[i]->buf + 14, 20) == 0xffff);
	}
	check_done(p, &s);
	sink_fini(&s);
	wanem_path_destroy(p);
}

/* Everything at once, with random arrivals and a small queue: the
 * counters add up at every step, and every packet is accounted for. */
static void test_counters(void)
{
	struct wanem_path_attr a = {
		.delay_ns = 20 * MS, .rate_bps = 50000000, .queue_bytes = 30000,
		.ecn_bytes = 10000, .dup = 0.02, .reorder = 0.03, .corrupt = 0.01,
		.loss = { .kind = WANEM_LOSS_RANDOM, .p_loss = 0.01 },
		.capacity = 3000, .seed = 99,
	};
	struct sink s;
	struct wanem_path *p;
	struct wanem_rng rng;
	uint64_t t = 0, id = 0;

	sink_init(&s, 0);
	p = path_new(&a, &s);
	wanem_rng_seed(&rng, 1);
	for (int step = 0; step < 200000; step++) {
		t += wanem_rng_below(&rng, 50) * US;
		if (wanem_rng_chance(&rng, 0.7)) {
			struct fake *fk = fake_new(&s, id++, 64 +
				(uint32_t)wanem_rng_below(&rng, 1450), t);
			struct wanem_pkt pk;

			make_v4(fk->buf, fk->len, 1, id);
			pk = pkt_of(fk);
			wanem_path_rx(p, &pk, t);
		}
		poll_at(p, &s, t);
		if (step % 1000 == 0)
			CU_ASSERT(wanem_counters_add_up(wanem_path_counters(p),
							wanem_path_held(p)));
	}
	const struct wanem_counters *c = wanem_path_counters(p);
	CU_ASSERT(c->drop_loss > 0 && c->drop_queue > 0 && c->duplicated > 0 &&
		  c->reordered > 0 && c->corrupted > 0 && c->marked > 0);
	CU_ASSERT(c->queue_peak_bytes <= 30000);
	CU_ASSERT(wanem_path_held(p) > 0);
	check_done(p, &s);
	CU_ASSERT(c->drop_flush > 0);
	sink_fini(&s);
	wanem_path_destroy(p);

	/* the capacity in packets bounds what the path holds */
	struct wanem_path_attr b = { .delay_ns = SEC, .capacity = 10 };
	sink_init(&s, 0);
	p = path_new(&b, &s);
	for (int i = 0; i < 15; i++) {
		struct wanem_pkt pk = pkt_of(fake_new(&s, (uint64_t)i, 60, 0));

		wanem_path_rx(p, &pk, 0);
	}
	CU_ASSERT_EQUAL(wanem_path_held(p), 10);
	CU_ASSERT_EQUAL(wanem_path_counters(p)->drop_full, 5);
	check_done(p, &s);
	sink_fini(&s);
	wanem_path_destroy(p);
}

static void test_bad_attr(void)
{
	struct wanem_path_attr a = { .capacity = 10, .dup = 1.5 };
	struct wanem_pkt_ops ops = fake_ops;
	struct wanem_path *p = NULL;

	CU_ASSERT_EQUAL(wanem_path_create(&a, &fake_ops, NULL, &p), -EINVAL);
	a.dup = 0;
	ops.size = 8;
	CU_ASSERT_EQUAL(wanem_path_create(&a, &ops, NULL, &p), -EINVAL);
	a.capacity = 0;
	CU_ASSERT_EQUAL(wanem_path_create(&a, &fake_ops, NULL, &p), -EINVAL);
	CU_ASSERT_PTR_NULL(p);
}

static void test_parse(void)
{
	char why[256];
	uint64_t v;
	double f;

	CU_ASSERT(!wanem_parse_rate("100mbit", &v, why, sizeof(why)) && v == 100000000ull);
	CU_ASSERT(!wanem_parse_rate("1gbit", &v, why, sizeof(why)) && v == 1000000000ull);
	CU_ASSERT(!wanem_parse_rate("10gbit", &v, why, sizeof(why)) && v == 10000000000ull);
	CU_ASSERT(!wanem_parse_rate("2.5Gbit", &v, why, sizeof(why)) && v == 2500000000ull);
	CU_ASSERT(!wanem_parse_rate("500kbit", &v, why, sizeof(why)) && v == 500000ull);
	CU_ASSERT(!wanem_parse_rate("1000000", &v, why, sizeof(why)) && v == 1000000ull);
	CU_ASSERT(wanem_parse_rate("10mbps", &v, why, sizeof(why)) == -EINVAL);
	CU_ASSERT(wanem_parse_rate("fast", &v, why, sizeof(why)) == -EINVAL);
	CU_ASSERT(wanem_parse_rate("-1gbit", &v, why, sizeof(why)) == -EINVAL);
	CU_ASSERT(wanem_parse_rate("0", &v, why, sizeof(why)) == -EINVAL);
	CU_ASSERT(!wanem_parse_bytes("256K", &v, why, sizeof(why)) && v == 262144);
	CU_ASSERT(!wanem_parse_bytes("4MiB", &v, why, sizeof(why)) && v == 4u << 20);
	CU_ASSERT(!wanem_parse_bytes("1500", &v, why, sizeof(why)) && v == 1500);
	CU_ASSERT(wanem_parse_bytes("4X", &v, why, sizeof(why)) == -EINVAL);
	CU_ASSERT(!wanem_parse_pct("1%", &f, why, sizeof(why)) && fabs(f - 0.01) < 1e-15);
	CU_ASSERT(!wanem_parse_pct("0.1", &f, why, sizeof(why)) && fabs(f - 0.001) < 1e-15);
	CU_ASSERT(wanem_parse_pct("101", &f, why, sizeof(why)) == -EINVAL);
	CU_ASSERT(!wanem_parse_ms("2.5", &v, why, sizeof(why)) && v == 2500000);
	CU_ASSERT(!wanem_parse_ms("1000ms", &v, why, sizeof(why)) && v == SEC);
	CU_ASSERT(wanem_parse_ms("1001", &v, why, sizeof(why)) == -EINVAL);
	CU_ASSERT(wanem_parse_ms("", &v, why, sizeof(why)) == -EINVAL);
}

/* The pool covers rate x delay; too much is refused with the reason. */
static void test_sizing(void)
{
	struct wanem_attr a = { 0 };
	char why[256];

	a.dir[0].rate_bps = a.dir[1].rate_bps = 1000000000ull;
	a.dir[0].delay_ns = a.dir[1].delay_ns = 150 * MS;
	CU_ASSERT_EQUAL(wanem_attr_finish(&a, why, sizeof(why)), 0);
	/* 1 Gb/s x 150 ms = 18.75 MB per direction, at 512 B per frame */
	CU_ASSERT(a.mbufs >= 2 * 18750000 / 512);
	CU_ASSERT(a.mbufs <= WANEM_MBUFS_MAX);
	CU_ASSERT_EQUAL(a.dir[0].capacity, a.mbufs);
	CU_ASSERT_EQUAL(a.dir[0].queue_bytes, wanem_default_queue(1000000000ull));
	CU_ASSERT_EQUAL(a.dir[0].burst_bytes, 250000);
	CU_ASSERT(a.dir[0].seed != a.dir[1].seed);

	memset(&a, 0, sizeof(a));  /* no rate: 250k frames/s assumed */
	a.dir[0].delay_ns = a.dir[1].delay_ns = SEC;
	CU_ASSERT_EQUAL(wanem_attr_finish(&a, why, sizeof(why)), 0);
	CU_ASSERT(a.mbufs >= 500000);

	memset(&a, 0, sizeof(a));
	a.dir[0].rate_bps = a.dir[1].rate_bps = 10000000000ull;
	a.dir[0].delay_ns = a.dir[1].delay_ns = SEC;
	CU_ASSERT_EQUAL(wanem_attr_finish(&a, why, sizeof(why)), -E2BIG);
	CU_ASSERT(strstr(why, "--mbufs") != NULL);

	memset(&a, 0, sizeof(a));
	a.dir[0].queue_bytes = 1000;
	CU_ASSERT_EQUAL(wanem_attr_finish(&a, why, sizeof(why)), -EINVAL);
	memset(&a, 0, sizeof(a));
	a.dir[0].rate_bps = 1000000;
	a.dir[0].queue_bytes = 1000;
	a.dir[0].ecn_bytes = 2000;
	CU_ASSERT_EQUAL(wanem_attr_finish(&a, why, sizeof(why)), -EINVAL);
}

/* The JSON report parses back into the same counters (spot check). */
static void test_report(void)
{
	struct wanem_attr a = { .seed = 123, .mbufs = 9000 };
	struct wanem_report r = { .type = "end", .seconds = 1.5, .attr = &a };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	CU_ASSERT_FATAL(f != NULL);
	a.dir[0].loss = (struct wanem_loss_attr){ .kind = WANEM_LOSS_RANDOM,
						  .p_loss = 0.001 };
	r.dir[0].rx = 1000;
	r.dir[0].tx = 990;
	r.dir[0].drop_loss = 10;
	wanem_report_json(f, &r);
	fclose(f);
	CU_ASSERT(strstr(buf, "\"type\":\"end\"") != NULL);
	CU_ASSERT(strstr(buf, "\"seed\":123") != NULL);
	CU_ASSERT(strstr(buf, "\"ab\":{\"rx\":1000,") != NULL);
	CU_ASSERT(strstr(buf, "\"dropped\":{\"loss\":10,") != NULL);
	CU_ASSERT(strstr(buf, "\"model\":\"random\",\"pct\":0.1}") != NULL);
	CU_ASSERT(wanem_counters_add_up(&r.dir[0], 0));
	free(buf);
}

int main(void)
{
	CU_TestInfo tests[] = {
		{ "delay line: never early, on time, in order", test_delay_line },
		{ "delay line byte limit", test_delay_limit },
		{ "transmit backpressure", test_backpressure },
		{ "token bucket rate within 1%", test_rate },
		{ "token bucket bursts bounded", test_burst_bound },
		{ "token bucket with a late poller", test_rate_late_poll },
		{ "random loss 0.1% and 1%", test_loss_random },
		{ "Gilbert-Elliott loss and burst length", test_loss_gilbert },
		{ "duplication", test_dup },
		{ "reordering", test_reorder },
		{ "corruption", test_corrupt },
		{ "queue tail drop", test_tail_drop },
		{ "ECN marking and checksum", test_ecn_mark },
		{ "ECN above the queue threshold", test_ecn_queue },
		{ "counters add up", test_counters },
		{ "bad attributes", test_bad_attr },
		{ "option values", test_parse },
		{ "pool sizing", test_sizing },
		{ "JSON report", test_report },
		CU_TEST_INFO_NULL,
	};

	return ferry_cu_run("wanem", tests);
}
