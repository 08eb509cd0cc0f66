/* uroce RC engine over real DPDK packet I/O, in one process: two net_ring
 * ports (rte_eth_from_rings) joined back to back by two rte_rings. Every
 * packet the engine sends is built into an mbuf as a whole RoCEv2 frame
 * (ferry__roce_build, ICRC included), passes a lossy shim (drop, duplicate,
 * reorder, flip a bit), goes through rte_eth_tx_burst / rte_eth_rx_burst,
 * is parsed and ICRC-checked (ferry__roce_parse) and only then handed to
 * the peer QP. The clock is simulated (1 us per step), the shim's random
 * numbers come from a fixed seed: every run repeats exactly.
 *
 * The EAL runs without hugepages, PCI or shared files (--no-huge
 * --no-shconf; --in-memory would refuse --no-huge);
 * when it cannot start the test is skipped (exit 77) with the reason. */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "cu.h"
#include "ferry/error.h"
#include "xport/uroce/rc.h"
#include "xport/roce/wire.h"

#define US 1000ull
#define MS 1000000ull
#define QPN(s) ((s) ? 0x22u : 0x11u)
#define RKEY 0xc0ffee01u
#define RW FERRY_ACCESS_REMOTE_WRITE
#define GUARD 64
#define MAXLEN (256u << 10)   /* largest write */
#define NMBUF 8191u
#define RING_SZ 4096u
#define NHELD 2048
#define BURST 64

/* EAL-wide objects, made once in main() */
static struct rte_mempool *g_mp;
static uint16_t g_port[2]; /* QP s sends and receives on g_port[s] */

/* The shim and the receive side ----------------------------------------*/

struct faults {
	double drop, dup, reorder, flip; /* per frame sent, both directions */
};

struct held {
	struct rte_mbuf *m;
	uint64_t at;
	uint16_t port;
};

struct wire {
	uint64_t now, rng;
	struct faults f;
	struct held held[NHELD];
	int nheld;
	/* shim, by frames */
	uint64_t built, dropped, duped, reordered, flipped;
	uint64_t tx_fail, nombuf, build_err;
	/* receive side */
	uint64_t rx_frames, icrc_bad, parse_err;
};

struct side {
	struct wire *w;
	int s;
};

struct region {
	uint8_t *mem, *base;
	size_t len;
};

struct pair {
	struct wire w;
	struct side sd[2];
	struct region r; /* side 1's, registered as RKEY */
	struct ferry_rc_pd *pd[2];
	struct ferry_rc_qp *qp[2];
	const struct ferry_rc_counters *c[2];
};

static uint64_t rnd(struct wire *w)
{
	w->rng ^= w->rng >> 12;
	w->rng ^= w->rng << 25;
	w->rng ^= w->rng >> 27;
	return w->rng * 0x2545f4914f6cdd1dull;
}

static bool chance(struct wire *w, double p)
{
	return (double)(rnd(w) >> 11) < p * 9007199254740992.0;
}

static void put_on_wire(struct wire *w, uint16_t port, struct rte_mbuf *m)
{
	if (rte_eth_tx_burst(port, 0, &m, 1) != 1) {
		w->tx_fail++;
		rte_pktmbuf_free(m);
	}
}

/* Send now, or hold back 1..20 us so that later frames overtake it. */
static void emit(struct wire *w, uint16_t port, struct rte_mbuf *m)
{
	if (w->nheld < NHELD && chance(w, w->f.reorder)) {
		w->held[w->nheld++] = (struct held){
			m, w->now + (1 + rnd(w) % 20) * US, port };
		w->reordered++;
		return;
	}
	put_on_wire(w, port, m);
}

/* The tx callback of both QPs: a real frame in an mbuf, then the shim. */
static int frame_tx(void *ctx, const struct ferry_roce_pkt *p)
{
	struct side *sd = ctx;
	struct wire *w = sd->w;
	uint16_t port = g_port[sd->s];
	size_t flen = ferry__roce_frame_len(p), len = 0;
	struct rte_mbuf *m = rte_pktmbuf_alloc(g_mp), *m2;
	uint8_t *d;

	if (!m) {
		w->nombuf++;
		return -EAGAIN;
	}
	d = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)flen);
	if (!d || ferry__roce_build(d, flen, p, &len) != 0 || len != flen) {
		w->build_err++;
		rte_pktmbuf_free(m);
		return 0;
	}
	w->built++;
	if (chance(w, w->f.drop)) {
		w->dropped++;
		rte_pktmbuf_free(m);
		return 0;
	}
	if (chance(w, w->f.flip)) {
		/* a bit the ICRC alone covers: payload, pad or the ICRC */
		size_t hdr = ferry__roce_hdr_len(p->opcode);
		size_t off = hdr + rnd(w) % (flen - hdr);

		d[off] ^= (uint8_t)(1u << (rnd(w) % 8));
		w->flipped++;
	} else if (chance(w, w->f.dup)) {
		m2 = rte_pktmbuf_copy(m, g_mp, 0, UINT32_MAX);
		if (m2) {
			w->duped++;
			emit(w, port, m2);
		} else {
			w->nombuf++;
		}
	}
	emit(w, port, m);
	return 0;
}

/* Everything waiting on side s's port: parse, check, deliver. */
static void rx_side(struct pair *pr, int s)
{
	struct wire *w = &pr->w;
	struct rte_mbuf *pk[BURST];
	uint16_t n;

	while ((n = rte_eth_rx_burst(g_port[s], 0, pk, BURST)) > 0) {
		for (uint16_t i = 0; i < n; i++) {
			const uint8_t *fr =
				rte_pktmbuf_mtod(pk[i], const uint8_t *);
			struct ferry_roce_pkt p;
			const char *why = NULL;
			bool ok = false;
			int rc;

			w->rx_frames++;
			rc = ferry__roce_parse(fr, rte_pktmbuf_data_len(pk[i]),
					       0, &p, &ok, &why);
			if (rc != 0)
				w->parse_err++;
			else if (!ok)
				w->icrc_bad++; /* dropped, never seen */
			else
				ferry__rc_input(pr->qp[s], &p, w->now);
			rte_pktmbuf_free(pk[i]);
		}
	}
}

/* One simulated microsecond: timers, held frames now due, reception. */
static void step(struct pair *pr)
{
	struct wire *w = &pr->w;

	for (int s = 0; s < 2; s++)
		ferry__rc_progress(pr->qp[s], w->now);
	for (int i = 0; i < w->nheld;) {
		if (w->held[i].at <= w->now) {
			put_on_wire(w, w->held[i].port, w->held[i].m);
			w->held[i] = w->held[--w->nheld];
		} else {
			i++;
		}
	}
	rx_side(pr, 1);
	rx_side(pr, 0);
	w->now += US;
}

static void run_for(struct pair *pr, uint64_t ns)
{
	uint64_t end = pr->w.now + ns;

	while (pr->w.now < end)
		step(pr);
}

static int wait_wc(struct pair *pr, int side, struct ferry_rc_wc *wc,
		   uint64_t max_ns)
{
	uint64_t end = pr->w.now + max_ns;
	int rc;

	while ((rc = ferry__rc_poll(pr->qp[side], wc, 1)) == 0 &&
	       pr->w.now < end)
		step(pr);
	return rc;
}

/* Setup ----------------------------------------------------------------*/

static struct ferry_rc_attr base_attr(uint32_t mtu)
{
	return (struct ferry_rc_attr){
		.mtu = mtu, .sq_depth = 64, .rq_depth = 64, .window_pkts = 32,
		.ackreq_every = 8, .ack_every = 16, .ack_delay_ns = 20 * US,
		.rto_ns = 400 * US, .rnr_delay_ns = 20 * US,
		.retry_limit = 7, .rnr_retry_limit = 7,
	};
}

static struct pair *pair_new(const struct ferry_rc_attr *a, size_t rlen)
{
	struct pair *pr = calloc(1, sizeof(*pr));
	struct ferry_roce_addr ad[2] = { { { 2, 0, 0, 0, 0, 1 }, 0x0a000001 },
					 { { 2, 0, 0, 0, 0, 2 }, 0x0a000002 } };
	uint32_t psn[2] = { 0xfffff0, 77 }; /* side 0 wraps its PSN */

	CU_ASSERT_PTR_NOT_NULL_FATAL(pr);
	pr->w.rng = 0x9e3779b97f4a7c15ull; /* fixed seed */
	pr->w.now = 1000 * US;
	for (int s = 0; s < 2; s++) {
		struct ferry_rc_attr at = *a;

		pr->sd[s] = (struct side){ &pr->w, s };
		CU_ASSERT_EQUAL_FATAL(ferry__rc_pd_create(4, &pr->pd[s]), 0);
		at.pd = pr->pd[s], at.qpn = QPN(s), at.tx = frame_tx;
		at.tx_ctx = &pr->sd[s];
		CU_ASSERT_EQUAL_FATAL(ferry__rc_create(&at, &pr->qp[s]), 0);
		CU_ASSERT_EQUAL_FATAL(ferry__rc_connect(pr->qp[s], QPN(!s),
							psn[s], psn[!s], &ad[s],
							&ad[!s], 0), 0);
		pr->c[s] = ferry__rc_counters(pr->qp[s]);
	}
	if (rlen) {
		struct region *r = &pr->r;

		r->mem = malloc(rlen + 2 * GUARD);
		CU_ASSERT_PTR_NOT_NULL_FATAL(r->mem);
		r->base = r->mem + GUARD;
		r->len = rlen;
		memset(r->mem, 0xa5, GUARD);
		memset(r->base, 0, rlen);
		memset(r->base + rlen, 0xa5, GUARD);
		CU_ASSERT_EQUAL(ferry__rc_reg_mr(pr->pd[1], r->base, rlen, RW,
						 RKEY), 0);
	}
	return pr;
}

/* Free the pair, drain the rings; every mbuf must be back in the pool. */
static void pair_free(struct pair *pr)
{
	struct rte_mbuf *pk[BURST];
	uint16_t n;

	for (int i = 0; i < pr->w.nheld; i++)
		rte_pktmbuf_free(pr->w.held[i].m);
	for (int s = 0; s < 2; s++) {
		while ((n = rte_eth_rx_burst(g_port[s], 0, pk, BURST)) > 0)
			rte_pktmbuf_free_bulk(pk, n);
		ferry__rc_destroy(pr->qp[s]);
		ferry__rc_pd_destroy(pr->pd[s]);
	}
	CU_ASSERT_EQUAL(rte_mempool_avail_count(g_mp), NMBUF);
	free(pr->r.mem);
	free(pr);
}

static bool all_bytes(const uint8_t *p, size_t len, uint8_t v)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != v)
			return false;
	return true;
}

static bool guards_ok(const struct region *r)
{
	return all_bytes(r->mem, GUARD, 0xa5) &&
	       all_bytes(r->base + r->len, GUARD, 0xa5);
}

static double wall_ms(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) * 1e3 +
	       (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

static void report(const char *what, const struct pair *pr, uint64_t t0,
		   const struct timespec *w0)
{
	const struct wire *w = &pr->w;

	printf("\n    %s: %llu frames built, %llu dropped, %llu duplicated, "
	       "%llu reordered, %llu flipped; received %llu, ICRC-rejected "
	       "%llu; retransmitted %llu, timeouts %llu; %.1f ms simulated, "
	       "%.0f ms wall",
	       what, (unsigned long long)w->built,
	       (unsigned long long)w->dropped, (unsigned long long)w->duped,
	       (unsigned long long)w->reordered,
	       (unsigned long long)w->flipped,
	       (unsigned long long)w->rx_frames,
	       (unsigned long long)w->icrc_bad,
	       (unsigned long long)pr->c[0]->retx_pkts,
	       (unsigned long long)pr->c[0]->timeouts,
	       (double)(w->now - t0) / 1e6, wall_ms(w0));
}

static uint8_t pat(uint32_t k, uint32_t j)
{
	return (uint8_t)(k * 131u + j * 7u + (j >> 8) + 1);
}

/* (1) no faults: every size up to 256 KiB, with and without immediate,
 * lands once with the right bytes and nothing around it, at MTU 1024 and
 * 4096; every frame passed its ICRC check */
static void size_case(struct pair *pr, const uint8_t *src, uint32_t len,
		      bool imm, uint32_t k)
{
	struct region *r = &pr->r;
	uint32_t iv = 0xabc00000u | k, off = (len * 7 + 13u * imm) % 251;
	struct ferry_rc_wc wc;

	memset(r->base, 0, r->len);
	if (imm)
		CU_ASSERT_EQUAL(ferry__rc_post_recv(pr->qp[1], NULL, 0, k), 0);
	CU_ASSERT_EQUAL(ferry__rc_post_write(pr->qp[0], src, len, off, RKEY,
					     imm, iv, k, true), 0);
	CU_ASSERT_EQUAL_FATAL(wait_wc(pr, 0, &wc, 50 * MS), 1);
	CU_ASSERT(wc.wr_id == k && wc.status == 0 &&
		  wc.op == FERRY_RC_WC_WRITE && wc.byte_len == len);
	if (imm) {
		CU_ASSERT_EQUAL_FATAL(ferry__rc_poll(pr->qp[1], &wc, 1), 1);
		CU_ASSERT(wc.op == FERRY_RC_WC_RECV_WRITE_IMM && wc.has_imm &&
			  wc.status == 0 && wc.wr_id == k && wc.imm == iv &&
			  wc.offset == off && wc.byte_len == len);
	}
	CU_ASSERT_EQUAL(ferry__rc_poll(pr->qp[1], &wc, 1), 0);
	CU_ASSERT(memcmp(r->base + off, src, len) == 0);
	CU_ASSERT(all_bytes(r->base, off, 0) && guards_ok(r) &&
		  all_bytes(r->base + off + len, r->len - off - len, 0));
}

static void test_sizes(void)
{
	static const uint32_t sizes[] = { 0, 1, 3, 4, 5, 63, 1023, 1024, 1025,
		4095, 4096, 4097, 65537, MAXLEN - 1, MAXLEN };
	static const uint32_t mtus[] = { 1024, 4096 };
	uint8_t *src = malloc(MAXLEN);

	CU_ASSERT_PTR_NOT_NULL_FATAL(src);
	for (uint32_t i = 0; i < MAXLEN; i++)
		src[i] = (uint8_t)((i * 2654435761u) >> 13);
	for (size_t m = 0; m < FERRY__ARRAY_SIZE(mtus); m++) {
		struct ferry_rc_attr a = base_attr(mtus[m]);
		struct pair *pr = pair_new(&a, MAXLEN + 256);
		struct timespec w0;
		uint64_t t0 = pr->w.now;
		uint32_t k = 0;
		char what[64];

		clock_gettime(CLOCK_MONOTONIC, &w0);
		for (size_t i = 0; i < FERRY__ARRAY_SIZE(sizes); i++) {
			size_case(pr, src, sizes[i], false, k++);
			size_case(pr, src, sizes[i], true, k++);
		}
		snprintf(what, sizeof(what), "MTU %u, no faults", mtus[m]);
		report(what, pr, t0, &w0);
		CU_ASSERT(pr->w.built > 0 && pr->w.rx_frames == pr->w.built);
		CU_ASSERT(pr->w.icrc_bad == 0 && pr->w.parse_err == 0 &&
			  pr->w.tx_fail == 0 && pr->w.nombuf == 0 &&
			  pr->w.build_err == 0);
		CU_ASSERT(pr->c[0]->retx_pkts == 0 && pr->c[0]->timeouts == 0 &&
			  pr->c[1]->dup_pkts == 0 && pr->c[1]->oow_drops == 0);
		pair_free(pr);
	}
	free(src);
}

/* (2) a lossy wire: up to 4 writes in flight, sizes up to 256 KiB, every
 * other one with immediate; each lands exactly once with its bytes,
 * completions come in order on both sides, flipped frames die at the
 * ICRC check and nothing else is refused */
struct wl {
	uint32_t mtu, n;
	struct faults f;
};

#define DEPTH 4u
#define SLOT (MAXLEN + 64u)
#define WL_LEN(k) ((k) % 5 == 0 ? MAXLEN : \
		   1 + (((k) * 2654435761u) >> 5) % MAXLEN)
#define WL_OFF(k) ((uint64_t)(k) * SLOT + ((k) % 7) * 9)

static bool wl_check(struct region *r, uint32_t k)
{
	uint32_t len = WL_LEN(k);
	uint8_t *d = r->base + WL_OFF(k);
	bool ok = true;

	for (uint32_t j = 0; ok && j < len; j++)
		ok = d[j] == pat(k, j);
	memset(d, 0xee, len); /* consumed: a re-executed copy would show */
	return ok;
}

static void workload(const struct wl *wl)
{
	struct ferry_rc_attr a = base_attr(wl->mtu);
	struct pair *pr;
	uint8_t *src = malloc((size_t)DEPTH * MAXLEN);
	uint32_t posted = 0, s_done = 0, r_next = 0, rposted = 0;
	uint32_t n_imm = wl->n / 2, imm_next = 1;
	struct ferry_rc_wc wc[16];
	struct timespec w0;
	uint64_t t0, end;
	bool clean = true;
	char what[96];

	CU_ASSERT_PTR_NOT_NULL_FATAL(src);
	a.retry_limit = 15;
	pr = pair_new(&a, (size_t)wl->n * SLOT);
	pr->w.f = wl->f;
	clock_gettime(CLOCK_MONOTONIC, &w0);
	t0 = pr->w.now;
	for (; rposted < 16; rposted++)
		CU_ASSERT_EQUAL(ferry__rc_post_recv(pr->qp[1], NULL, 0,
						    rposted), 0);
	end = t0 + 3000 * MS;
	while ((s_done < wl->n || r_next < n_imm) && pr->w.now < end) {
		for (; posted < wl->n && posted - s_done < DEPTH; posted++) {
			uint32_t k = posted, len = WL_LEN(k);
			uint8_t *b = src + (size_t)(k % DEPTH) * MAXLEN;

			for (uint32_t j = 0; j < len; j++)
				b[j] = pat(k, j);
			CU_ASSERT_EQUAL_FATAL(ferry__rc_post_write(pr->qp[0],
				b, len, WL_OFF(k), RKEY, k & 1, k, k, true), 0);
		}
		step(pr);
		/* responder: the writes with immediate, in post order */
		int nr = ferry__rc_poll(pr->qp[1], wc, 16);
		CU_ASSERT_FATAL(nr >= 0);
		for (int i = 0; i < nr; i++, r_next++, imm_next += 2) {
			CU_ASSERT(wc[i].status == 0 && wc[i].wr_id == r_next &&
				  wc[i].op == FERRY_RC_WC_RECV_WRITE_IMM &&
				  wc[i].has_imm && wc[i].imm == imm_next &&
				  wc[i].offset == WL_OFF(imm_next) &&
				  wc[i].byte_len == WL_LEN(imm_next));
			CU_ASSERT(wl_check(&pr->r, imm_next));
			CU_ASSERT_EQUAL(ferry__rc_post_recv(pr->qp[1], NULL, 0,
							    rposted++), 0);
		}
		/* requester: every write, in post order */
		int ns = ferry__rc_poll(pr->qp[0], wc, 16);
		CU_ASSERT_FATAL(ns >= 0);
		for (int i = 0; i < ns; i++, s_done++) {
			CU_ASSERT(wc[i].status == 0 && wc[i].wr_id == s_done &&
				  wc[i].op == FERRY_RC_WC_WRITE &&
				  wc[i].byte_len == WL_LEN(s_done));
			/* acked: all of it is written */
			CU_ASSERT((s_done & 1) || wl_check(&pr->r, s_done));
		}
	}
	CU_ASSERT(s_done == wl->n && r_next == n_imm);
	run_for(pr, 2 * MS); /* stray copies arrive; none may be executed */
	snprintf(what, sizeof(what), "MTU %u, %u writes, faults %g/%g/%g/%g",
		 wl->mtu, wl->n, wl->f.drop, wl->f.dup, wl->f.reorder,
		 wl->f.flip);
	report(what, pr, t0, &w0);
	CU_ASSERT(ferry__rc_poll(pr->qp[0], wc, 16) == 0 &&
		  ferry__rc_poll(pr->qp[1], wc, 16) == 0);
	for (size_t i = 0; i < pr->r.len; i++)
		clean = clean && (pr->r.base[i] == 0 || pr->r.base[i] == 0xee);
	CU_ASSERT(clean && guards_ok(&pr->r));
	/* the shim's damage, and only it, is what the receive side refused */
	CU_ASSERT(pr->w.nheld == 0 && pr->w.icrc_bad == pr->w.flipped);
	CU_ASSERT(wl->f.flip == 0 || pr->w.icrc_bad > 0);
	CU_ASSERT(pr->w.rx_frames == pr->w.built - pr->w.dropped +
				     pr->w.duped);
	CU_ASSERT(pr->w.parse_err == 0 && pr->w.tx_fail == 0 &&
		  pr->w.nombuf == 0 && pr->w.build_err == 0);
	CU_ASSERT(wl->f.drop + wl->f.flip == 0 || pr->c[0]->retx_pkts > 0);
	CU_ASSERT(wl->f.dup == 0 || pr->c[1]->dup_pkts > 0);
	CU_ASSERT(wl->f.drop + wl->f.dup + wl->f.reorder + wl->f.flip > 0 ||
		  (pr->c[0]->retx_pkts == 0 && pr->w.built == pr->w.rx_frames));
	CU_ASSERT(ferry__rc_state(pr->qp[0]) == FERRY_RC_RTS &&
		  ferry__rc_state(pr->qp[1]) == FERRY_RC_RTS);
	free(src);
	pair_free(pr);
}

static void test_lossy(void)
{
	static const double rates[] = { 0, 0.01, 0.05, 0.20 };
	static const uint32_t mtus[] = { 1024, 4096 };

	/* every kind of fault at once, at each rate */
	for (size_t m = 0; m < FERRY__ARRAY_SIZE(mtus); m++)
		for (size_t i = 0; i < FERRY__ARRAY_SIZE(rates); i++) {
			double r = rates[i];
			struct wl w = { mtus[m], r >= 0.2 ? 10 : 20,
					{ r, r, r, r } };

			workload(&w);
		}
	/* and each kind alone */
	for (int kind = 0; kind < 4; kind++) {
		struct wl w = { 1024, 12, { 0, 0, 0, 0 } };

		if (kind == 0)
			w.f.drop = 0.05;
		else if (kind == 1)
			w.f.dup = 0.05;
		else if (kind == 2)
			w.f.reorder = 0.05;
		else
			w.f.flip = 0.05;
		workload(&w);
	}
}

/* (3) nothing gets through, dropped or ICRC-rejected: error after the
 * retry limit, with a clear reason; the WR fails, the next is flushed */
static void total_loss(bool flip)
{
	struct ferry_rc_attr a = base_attr(1024);
	struct pair *pr;
	static uint8_t buf[3000];
	struct ferry_rc_wc wc[4];
	const char *why;
	uint64_t t0;

	a.retry_limit = 5;
	pr = pair_new(&a, 4096);
	if (flip)
		pr->w.f.flip = 1.0;
	else
		pr->w.f.drop = 1.0;
	CU_ASSERT_EQUAL(ferry__rc_post_write(pr->qp[0], buf, 3000, 0, RKEY,
					     false, 0, 1, true), 0);
	CU_ASSERT_EQUAL(ferry__rc_post_write(pr->qp[0], buf, 10, 0, RKEY,
					     false, 0, 2, true), 0);
	for (t0 = pr->w.now; ferry__rc_state(pr->qp[0]) == FERRY_RC_RTS &&
	     pr->w.now < t0 + 100 * MS;)
		step(pr);
	CU_ASSERT_EQUAL_FATAL(ferry__rc_state(pr->qp[0]), FERRY_RC_ERROR);
	CU_ASSERT(pr->w.now - t0 >= 6 * a.rto_ns &&
		  pr->w.now - t0 < 6 * a.rto_ns + 5 * US);
	CU_ASSERT(pr->c[0]->timeouts == 6 && pr->c[0]->tx_req == 6 * 4 &&
		  pr->c[0]->retx_pkts == 5 * 4);
	CU_ASSERT(pr->w.built == 6 * 4);
	CU_ASSERT(flip ? pr->w.icrc_bad == 6 * 4 && pr->w.rx_frames == 6 * 4
		       : pr->w.dropped == 6 * 4 && pr->w.rx_frames == 0);
	why = ferry__rc_error(pr->qp[0]);
	CU_ASSERT_PTR_NOT_NULL_FATAL(why);
	printf("\n    100%% %s: QP error after %.1f ms: %s",
	       flip ? "bit flips" : "drop", (double)(pr->w.now - t0) / 1e6,
	       why);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "no ACK from peer QP 0x000022"));
	CU_ASSERT_EQUAL(ferry__rc_poll(pr->qp[0], wc, 4), 2);
	CU_ASSERT(wc[0].wr_id == 1 && wc[0].status == -FERRY_ETIMEOUT);
	CU_ASSERT(wc[1].wr_id == 2 && wc[1].status == -ECANCELED);
	CU_ASSERT_EQUAL(ferry__rc_poll(pr->qp[0], wc, 4), -FERRY_ETIMEOUT);
	CU_ASSERT(ferry__rc_state(pr->qp[1]) == FERRY_RC_RTS &&
		  pr->c[1]->rx_req == 0 && all_bytes(pr->r.base, 4096, 0));
	pair_free(pr);
}

static void test_total_loss(void)
{
	total_loss(false);
	total_loss(true);
}

/* EAL, mbuf pool, two ports joined by two rings --------------------------*/

static int port_up(const char *name, struct rte_ring *rx, struct rte_ring *tx,
		   uint16_t *pid)
{
	struct rte_eth_conf conf;
	int rc = rte_eth_from_rings(name, &rx, 1, &tx, 1,
				    (unsigned)rte_socket_id());

	if (rc < 0)
		return -rte_errno;
	*pid = (uint16_t)rc;
	memset(&conf, 0, sizeof(conf));
	rc = rte_eth_dev_configure(*pid, 1, 1, &conf);
	if (!rc)
		rc = rte_eth_rx_queue_setup(*pid, 0, RING_SZ, rte_socket_id(),
					    NULL, g_mp);
	if (!rc)
		rc = rte_eth_tx_queue_setup(*pid, 0, RING_SZ, rte_socket_id(),
					    NULL);
	if (!rc)
		rc = rte_eth_dev_start(*pid);
	return rc;
}

int main(int argc, char **argv)
{
	static CU_TestInfo tests[] = {
		{ "sizes, MTU 1024 and 4096, real frames", test_sizes },
		{ "drop, duplicate, reorder, bit flips", test_lossy },
		{ "100% loss: error after the retry limit", test_total_loss },
		CU_TEST_INFO_NULL,
	};
	char lcore[16], prefix[48], rundir[256], *eal[16];
	struct rte_ring *ab, *ba;
	cpu_set_t cs;
	int cpu = 0, n = 0, rc;

	(void)argc;
	/* one lcore, on a CPU this process may use */
	if (sched_getaffinity(0, sizeof(cs), &cs) == 0)
		while (cpu < CPU_SETSIZE - 1 && !CPU_ISSET(cpu, &cs))
			cpu++;
	snprintf(lcore, sizeof(lcore), "%d", cpu);
	snprintf(prefix, sizeof(prefix), "--file-prefix=uroce_ring_%d",
		 (int)getpid());
	eal[n++] = argv[0];
	eal[n++] = "--no-huge";
	eal[n++] = "-m";
	eal[n++] = "256";
	eal[n++] = "--no-pci";
	eal[n++] = "--no-shconf"; /* --in-memory refuses --no-huge */
	eal[n++] = prefix;
	eal[n++] = "--log-level=error";
	eal[n++] = "--no-telemetry";
	eal[n++] = "-l";
	eal[n++] = lcore;
	eal[n] = NULL;
	if (rte_eal_init(n, eal) < 0) {
		printf("SKIP: the DPDK EAL did not start (%s) with: --no-huge "
		       "-m 256 --no-pci --no-shconf %s -l %s\n",
		       rte_strerror(rte_errno), prefix, lcore);
		return 77;
	}
	g_mp = rte_pktmbuf_pool_create("ring_test", NMBUF, 0, 0,
				       RTE_PKTMBUF_HEADROOM + 8192,
				       (int)rte_socket_id());
	ab = rte_ring_create("ring_ab", RING_SZ, SOCKET_ID_ANY,
			     RING_F_SP_ENQ | RING_F_SC_DEQ);
	ba = rte_ring_create("ring_ba", RING_SZ, SOCKET_ID_ANY,
			     RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (!g_mp || !ab || !ba) {
		fprintf(stderr, "mbuf pool or rings: %s\n",
			rte_strerror(rte_errno));
		rte_eal_cleanup();
		return 1;
	}
	/* port A (QP 0) sends into ab and receives from ba; port B the
	 * other way round */
	rc = port_up("net_ring_a", ba, ab, &g_port[0]);
	if (!rc)
		rc = port_up("net_ring_b", ab, ba, &g_port[1]);
	if (rc) {
		fprintf(stderr, "net_ring ports: %s\n", rte_strerror(-rc));
		rte_eal_cleanup();
		return 1;
	}
	/* the EAL leaves its (empty) runtime directory behind: remove it */
	snprintf(rundir, sizeof(rundir), "%s", rte_eal_get_runtime_dir());
	rc = ferry_cu_run("uroce_ring", tests);
	for (int s = 0; s < 2; s++) {
		rte_eth_dev_stop(g_port[s]);
		rte_eth_dev_close(g_port[s]);
	}
	rte_ring_free(ab);
	rte_ring_free(ba);
	rte_mempool_free(g_mp);
	rte_eal_cleanup();
	rmdir(rundir);
	return rc;
}
