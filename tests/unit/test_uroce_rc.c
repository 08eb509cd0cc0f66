/* uroce RC engine: two QPs in one process, joined by an in-memory wire that
 * can drop, duplicate, reorder and corrupt packets, on a simulated clock. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu.h"
#include "ferry/error.h"
#include "xport/uroce/rc.h"

#define US 1000ull
#define MS 1000000ull
#define NFRAME 2048
#define GUARD 64
#define QPN(s) ((s) ? 0x22u : 0x11u)
#define RKEY 0xc0ffee01u
#define RW FERRY_ACCESS_REMOTE_WRITE

/* The wire ---------------------------------------------------------------*/

struct faults {
	double drop, dup, reorder, flip; /* per packet, both directions */
};

struct frame {
	struct ferry_roce_pkt p;
	uint64_t at;
	int to;
	uint8_t data[4096];
};

struct net {
	uint64_t now, rng, latency;
	struct faults f;
	/* a bottleneck on the way to side 1: gap ns per packet, qmax
	 * packets queued before it, more dropped (gap 0: none) */
	uint64_t gap, busy;
	uint64_t qmax, qdrops;
	uint64_t ecn_at, qpeak; /* mark CE from this queue on (0: never) */
	uint64_t cnps;          /* CNPs to side 0 with BECN, as built */
	bool mark_all;          /* mark every ECN-capable request CE */
	/* what was sent, by kind (requests, ACKs, CNPs): packets with the
	 * DSCP given here, and with another; and with ECN bits other than
	 * their kind's (requests ECT(0), the others not ECN-capable) */
	uint8_t dscp;
	uint64_t cls[3][2], ecn_other[3];
	struct frame pool[NFRAME], *q[NFRAME], *freel[NFRAME];
	int nq, nfree;
	uint32_t una[2], max_inflight[2]; /* window check, per requester */
	/* side 0's requests sent at one instant: the current run, its
	 * instant, and the longest run (paced bursts) */
	uint64_t run_at;
	uint32_t run, max_run;
	struct frame cap[8]; /* copies of side 0's first requests */
	int ncap;
	bool capture;
};

/* Memory with guard bytes on both sides. */
struct region {
	uint8_t *mem, *base;
	size_t len;
};

struct pair {
	struct net net;
	struct region r; /* side 1's, for RKEY, when asked for */
	struct ferry_rc_pd *pd[2];
	struct ferry_rc_qp *qp[2];
	const struct ferry_rc_counters *c[2];
};

static bool chance(struct net *n, double p)
{
	n->rng ^= n->rng >> 12;
	n->rng ^= n->rng << 25;
	n->rng ^= n->rng >> 27;
	return (double)((n->rng * 0x2545f4914f6cdd1dull) >> 11) <
	       p * 9007199254740992.0;
}

static void frame_set(struct frame *f, const struct ferry_roce_pkt *p)
{
	f->p = *p;
	if (p->len)
		memcpy(f->data, p->payload, p->len);
	f->p.payload = f->data;
}

/* The tx callback of both QPs; the sender is the side not addressed. */
static int net_tx(void *ctx, const struct ferry_roce_pkt *p)
{
	struct net *n = ctx;
	int s = p->dest_qp == QPN(0), copies = 1;

	int kind = p->opcode == FERRY_OP_ACK ? 1 :
		   p->opcode == FERRY_OP_CNP ? 2 : 0;

	n->cls[kind][p->dscp != n->dscp]++;
	if (p->ecn != (kind ? FERRY_ECN_NOT_ECT : FERRY_ECN_ECT0))
		n->ecn_other[kind]++;
	if (p->opcode == FERRY_OP_CNP && p->becn && p->dest_qp == QPN(0) &&
	    p->len == FERRY_ROCE_CNP_LEN && s == 1)
		n->cnps++;
	if (p->opcode != FERRY_OP_ACK && p->opcode != FERRY_OP_CNP) {
		uint32_t fly = (uint32_t)ferry__psn_diff(p->psn, n->una[s]) + 1;

		if (fly > n->max_inflight[s])
			n->max_inflight[s] = fly;
		if (s == 0) {
			n->run = n->run && n->run_at == n->now ? n->run + 1 : 1;
			n->run_at = n->now;
			if (n->run > n->max_run)
				n->max_run = n->run;
		}
		if (n->capture && s == 0 && n->ncap < 8)
			frame_set(&n->cap[n->ncap++], p);
	}
	if (n->nfree < 2)
		return -EAGAIN;
	/* a flipped bit fails the ICRC check in the wire code: a drop here */
	if (chance(n, n->f.drop) || chance(n, n->f.flip))
		return 0;
	if (chance(n, n->f.dup))
		copies = 2;
	uint64_t t0 = n->now, q = 0;
	if (n->gap && s == 0) {
		q = n->busy > n->now ? (n->busy - n->now) / n->gap : 0;
		if (q >= n->qmax) {
			n->qdrops++;
			return 0;
		}
		if (q > n->qpeak)
			n->qpeak = q;
		n->busy = (n->busy > n->now ? n->busy : n->now) + n->gap;
		t0 = n->busy;
	}
	bool ce = p->ecn && p->opcode != FERRY_OP_ACK && s == 0 &&
		  (n->mark_all || (n->ecn_at && q >= n->ecn_at));
	for (int c = 0; c < copies; c++) { /* into the queue, by time */
		struct frame *f = n->freel[--n->nfree];
		int i;

		frame_set(f, p);
		if (ce)
			f->p.ecn = FERRY_ECN_CE;
		f->to = !s;
		f->at = t0 + n->latency;
		if (c || chance(n, n->f.reorder))
			f->at += n->rng % (3 * n->latency);
		for (i = n->nq; i > 0 && n->q[i - 1]->at > f->at; i--)
			;
		memmove(n->q + i + 1, n->q + i,
			(size_t)(n->nq++ - i) * sizeof(*n->q));
		n->q[i] = f;
	}
	return 0;
}

/* Hand each QP the packets due by now. */
static void deliver(struct pair *pr)
{
	struct net *n = &pr->net;

	while (n->nq && n->q[0]->at <= n->now) {
		struct frame *f = n->q[0];
		uint32_t una = ferry__psn_add(f->p.psn, f->p.syndrome < 0x20);

		memmove(n->q, n->q + 1, (size_t)--n->nq * sizeof(*n->q));
		if (f->p.opcode == FERRY_OP_ACK &&
		    ferry__psn_diff(una, n->una[f->to]) > 0)
			n->una[f->to] = una; /* an ACK names the last done */
		ferry__rc_input(pr->qp[f->to], &f->p, n->now);
		n->freel[n->nfree++] = f;
	}
}

/* One simulated microsecond: timers, then every packet now due. */
static void step(struct pair *pr)
{
	struct net *n = &pr->net;

	for (int s = 0; s < 2; s++)
		ferry__rc_progress(pr->qp[s], n->now);
	deliver(pr);
	n->now += US;
}

static void run_for(struct pair *pr, uint64_t ns)
{
	uint64_t end = pr->net.now + ns;

	while (pr->net.now < end)
		step(pr);
}

/* Poll one side until it gives one completion or max_ns pass. */
static int wait_wc(struct pair *pr, int side, struct ferry_rc_wc *wc,
		   uint64_t max_ns)
{
	uint64_t end = pr->net.now + max_ns;
	int rc;

	while ((rc = ferry__rc_poll(pr->qp[side], wc, 1)) == 0 &&
	       pr->net.now < end)
		step(pr);
	return rc;
}

static struct ferry_rc_attr base_attr(uint32_t mtu)
{
	return (struct ferry_rc_attr){
		.mtu = mtu, .sq_depth = 64, .rq_depth = 64, .window_pkts = 32,
		.ackreq_every = 8, .ack_every = 16, .ack_delay_ns = 20 * US,
		.rto_ns = 400 * US, .rnr_delay_ns = 20 * US,
		.retry_limit = 7, .rnr_retry_limit = 7,
	};
}

/* Register len bytes (filled with fill) on side 1. */
static void mr_new(struct pair *pr, struct region *r, size_t len,
		   uint8_t fill, unsigned access, uint32_t rkey)
{
	r->mem = malloc(len + 2 * GUARD);
	CU_ASSERT_PTR_NOT_NULL_FATAL(r->mem);
	r->base = r->mem + GUARD;
	r->len = len;
	memset(r->mem, 0xa5, GUARD);
	memset(r->base, fill, len);
	memset(r->base + len, 0xa5, GUARD);
	CU_ASSERT_EQUAL(ferry__rc_reg_mr(pr->pd[1], r->base, len, access,
					 rkey), 0);
}

static struct pair *pair_new(const struct ferry_rc_attr *a, uint32_t psn0,
			     uint32_t psn1, size_t rlen)
{
	struct pair *pr = calloc(1, sizeof(*pr));
	struct net *n = &pr->net;
	struct ferry_roce_addr ad[2] = { { { 2, 0, 0, 0, 0, 1 }, 0x0a000001 },
					 { { 2, 0, 0, 0, 0, 2 }, 0x0a000002 } };
	uint32_t psn[2] = { psn0, psn1 };

	CU_ASSERT_PTR_NOT_NULL_FATAL(pr);
	for (int i = 0; i < NFRAME; i++)
		n->freel[n->nfree++] = &n->pool[i];
	n->rng = 0x9e3779b97f4a7c15ull; /* fixed seed: runs repeat exactly */
	n->latency = 5 * US;
	n->now = 1000 * US;
	for (int s = 0; s < 2; s++) {
		struct ferry_rc_attr at = *a;

		CU_ASSERT_EQUAL_FATAL(ferry__rc_pd_create(8, &pr->pd[s]), 0);
		at.pd = pr->pd[s], at.qpn = QPN(s), at.tx = net_tx;
		at.tx_ctx = n;
		CU_ASSERT_EQUAL_FATAL(ferry__rc_create(&at, &pr->qp[s]), 0);
		CU_ASSERT_EQUAL_FATAL(ferry__rc_connect(pr->qp[s], QPN(!s),
							psn[s], psn[!s], &ad[s],
							&ad[!s], 0), 0);
		pr->c[s] = ferry__rc_counters(pr->qp[s]);
		n->una[s] = psn[s];
	}
	if (rlen)
		mr_new(pr, &pr->r, rlen, 0, RW, RKEY);
	return pr;
}

static void pair_free(struct pair *pr)
{
	for (int s = 0; s < 2; s++) {
		ferry__rc_destroy(pr->qp[s]);
		ferry__rc_pd_destroy(pr->pd[s]);
	}
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

/* A signaled write from side 0 into side 1's RKEY region. */
static int wr(struct pair *pr, const void *src, uint32_t len, uint64_t off,
	      bool imm, uint32_t iv, uint64_t id)
{
	return ferry__rc_post_write(pr->qp[0], src, len, off, RKEY, imm, iv,
				    id, true);
}

/* (1) every size lands once with the right bytes, at MTU 1024/2048/4096;
 * small sends land in posted receives, both ways */
static void size_case(struct pair *pr, const uint8_t *src, uint32_t len,
		      bool imm, uint32_t k)
{
	struct region *r = &pr->r;
	uint32_t iv = 0xabc00000u | k, off = (len * 7 + 13u * imm) % 251;
	struct ferry_rc_wc wc;

	memset(r->base, 0, r->len);
	if (imm)
		CU_ASSERT_EQUAL(ferry__rc_post_recv(pr->qp[1], NULL, 0, k), 0);
	CU_ASSERT_EQUAL(wr(pr, src, len, off, imm, iv, k), 0);
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

static void send_case(struct pair *pr, int s, uint32_t len, uint32_t id)
{
	uint8_t msg[FERRY_RC_SEND_MAX], rb[FERRY_RC_SEND_MAX] = { 0 };
	uint8_t v = (uint8_t)(0x30 + id);
	struct ferry_rc_wc wc;

	memset(msg, v, sizeof(msg));
	CU_ASSERT_EQUAL(ferry__rc_post_recv(pr->qp[!s], rb, sizeof(rb), id), 0);
	CU_ASSERT_EQUAL(ferry__rc_post_send(pr->qp[s], msg, len, id, true), 0);
	memset(msg, 0, sizeof(msg)); /* copied at post */
	CU_ASSERT_EQUAL_FATAL(wait_wc(pr, !s, &wc, MS), 1);
	CU_ASSERT(wc.op == FERRY_RC_WC_RECV && !wc.has_imm && !wc.status &&
		  wc.wr_id == id && wc.byte_len == len);
	CU_ASSERT(all_bytes(rb, len, v));
	CU_ASSERT(all_bytes(rb + len, sizeof(rb) - len, 0)); /* no more */
	CU_ASSERT_EQUAL_FATAL(wait_wc(pr, s, &wc, MS), 1);
	CU_ASSERT(wc.op == FERRY_RC_WC_SEND && wc.wr_id == id && !wc.status);
}

static void test_sizes(void)
{
	static const uint32_t sizes[] = { 0, 1, 3, 4, 5, 63, 1023, 1024, 1025,
		2047, 2048, 2049, 4095, 4096, 4097, 65537, 1048575, 1048576 };
	static const uint32_t mtus[] = { 1024, 2048, 4096 };
	static const uint32_t slen[] = { 0, 1, 17, FERRY_RC_SEND_MAX };
	uint8_t *src = malloc(1 << 20);

	CU_ASSERT_PTR_NOT_NULL_FATAL(src);
	for (uint32_t i = 0; i < (1u << 20); i++)
		src[i] = (uint8_t)((i * 2654435761u) >> 13);
	for (size_t m = 0; m < FERRY__ARRAY_SIZE(mtus); m++) {
		struct ferry_rc_attr a = base_attr(mtus[m]);
		struct pair *pr = pair_new(&a, 100, 7000, (1u << 20) + 256);
		uint32_t k = 0;

		for (size_t i = 0; i < FERRY__ARRAY_SIZE(sizes); i++) {
			size_case(pr, src, sizes[i], false, k++);
			size_case(pr, src, sizes[i], true, k++);
		}
		for (uint32_t j = 0; j < 8; j++)
			send_case(pr, j & 1, slen[j / 2], j);
		CU_ASSERT_EQUAL(ferry__rc_post_send(pr->qp[0], src,
			FERRY_RC_SEND_MAX + 1, 1, true), -EINVAL);
		/* the window held and filled, ACKs were coalesced, no loss */
		CU_ASSERT(pr->net.max_inflight[0] <= a.window_pkts &&
			  pr->net.max_inflight[0] >= a.window_pkts / 2);
		CU_ASSERT(pr->c[1]->tx_acks * 4 < pr->c[0]->tx_req);
		CU_ASSERT(pr->c[0]->retx_pkts == 0 && pr->c[0]->timeouts == 0 &&
			  pr->c[1]->dup_pkts == 0);
		pair_free(pr);
	}
	free(src);
}

/* (2) a lossy wire: 16 WRs in flight, every write with imm (every 4th WR a
 * send) lands exactly once, completions come in order on both sides, and
 * a credit goes back for each, as ferry's pipeline does */
struct wl {
	uint32_t mtu, psn0, psn1, n;
	struct faults f;
};

#define SLOT 32768u
#define NSLOT 64u
#define WL_LEN(k) (1 + (((k) * 2654435761u) >> 7) % 20000u)
#define WL_OFF(k) (((k) % NSLOT) * SLOT + ((k) % 5) * 4)
#define WL_PAT(k, j) ((uint8_t)((k) * 131u + (j) * 7u + ((j) >> 8) + 1))

static bool wl_check_recv(struct region *r, const uint8_t *rb,
			  const struct ferry_rc_wc *wc, uint32_t k)
{
	uint32_t m[2], len = WL_LEN(k);
	uint8_t *d = r->base + WL_OFF(k);
	bool ok = wc->status == 0 && wc->wr_id == k;

	if (k % 4 == 3) { /* a send */
		memcpy(m, rb, sizeof(m));
		return ok && wc->op == FERRY_RC_WC_RECV && wc->byte_len == 8 &&
		       m[0] == k && m[1] == ~k;
	}
	ok = ok && wc->op == FERRY_RC_WC_RECV_WRITE_IMM && wc->imm == k &&
	     wc->offset == WL_OFF(k) && wc->byte_len == len;
	for (uint32_t j = 0; ok && j < len; j++)
		ok = d[j] == WL_PAT(k, j);
	memset(d, 0xee, len); /* consumed: a re-executed copy would show */
	return ok;
}

static void wl_post(struct pair *pr, uint8_t *src, uint32_t k, uint32_t n)
{
	uint32_t len = WL_LEN(k), m[2] = { k, ~k };
	uint8_t *b = src + (k % 16) * SLOT;
	bool sig = k % 3 != 1 || k + 1 == n; /* some complete silently */

	if (k % 4 == 3) {
		CU_ASSERT_EQUAL_FATAL(ferry__rc_post_send(pr->qp[0], m, 8, k,
							  sig), 0);
		return;
	}
	for (uint32_t j = 0; j < len; j++)
		b[j] = WL_PAT(k, j);
	CU_ASSERT_EQUAL_FATAL(ferry__rc_post_write(pr->qp[0], b, len, WL_OFF(k),
						   RKEY, true, k, k, sig), 0);
}

static void workload(const struct wl *w)
{
	struct ferry_rc_attr a = base_attr(w->mtu);
	struct pair *pr;
	uint8_t *src = malloc(16 * SLOT), rb[32][FERRY_RC_SEND_MAX];
	uint32_t posted = 0, s_done = 0, r_next = 0, rposted = 0, cr[32];
	uint32_t c_next = 0;
	struct ferry_rc_wc wc[16];
	uint64_t end;
	bool clean = true;

	CU_ASSERT_PTR_NOT_NULL_FATAL(src);
	a.retry_limit = 15;
	pr = pair_new(&a, w->psn0, w->psn1, NSLOT * SLOT);
	pr->net.f = w->f;
	for (; rposted < 32; rposted++) {
		CU_ASSERT_EQUAL(ferry__rc_post_recv(pr->qp[1], rb[rposted],
			FERRY_RC_SEND_MAX, rposted), 0);
		CU_ASSERT_EQUAL(ferry__rc_post_recv(pr->qp[0], &cr[rposted], 4,
						    rposted), 0);
	}
	end = pr->net.now + 1500 * MS;
	while ((s_done < w->n || c_next < w->n) && pr->net.now < end) {
		for (; posted < w->n && posted - s_done < 16 &&
		       posted - c_next < 16; posted++) {
			CU_ASSERT_FATAL(posted < r_next + NSLOT); /* free */
			wl_post(pr, src, posted, w->n);
		}
		step(pr);
		int nr = ferry__rc_poll(pr->qp[1], wc, 16);
		CU_ASSERT_FATAL(nr >= 0);
		for (int i = 0; i < nr; i++, r_next++, rposted++) {
			CU_ASSERT(wl_check_recv(&pr->r, rb[r_next % 32], &wc[i],
						r_next));
			CU_ASSERT(!ferry__rc_post_recv(pr->qp[1],
				rb[rposted % 32], FERRY_RC_SEND_MAX, rposted));
			CU_ASSERT(!ferry__rc_post_send(pr->qp[1], &r_next, 4, 0,
						       false));
		}
		int ns = ferry__rc_poll(pr->qp[0], wc, 16);
		CU_ASSERT_FATAL(ns >= 0);
		for (int i = 0; i < ns; i++) {
			if (wc[i].op == FERRY_RC_WC_RECV) { /* a credit */
				CU_ASSERT(wc[i].status == 0 &&
					  cr[c_next % 32] == c_next);
				CU_ASSERT_EQUAL(ferry__rc_post_recv(pr->qp[0],
					&cr[c_next % 32], 4, c_next + 32), 0);
				c_next++;
				continue;
			}
			CU_ASSERT(wc[i].status == 0 && wc[i].wr_id >= s_done);
			CU_ASSERT(wc[i].wr_id % 3 != 1 ||
				  wc[i].wr_id + 1 == w->n);
			s_done = (uint32_t)wc[i].wr_id + 1;
		}
	}
	CU_ASSERT(s_done == w->n && r_next == w->n && c_next == w->n);
	run_for(pr, 5 * MS); /* stray copies arrive; none may be executed */
	CU_ASSERT(ferry__rc_poll(pr->qp[0], wc, 16) == 0 &&
		  ferry__rc_poll(pr->qp[1], wc, 16) == 0);
	for (size_t i = 0; i < pr->r.len; i++)
		clean = clean && (pr->r.base[i] == 0 || pr->r.base[i] == 0xee);
	CU_ASSERT(clean && guards_ok(&pr->r));
	CU_ASSERT(pr->net.max_inflight[0] <= a.window_pkts);
	CU_ASSERT(w->f.drop == 0 || pr->c[0]->retx_pkts > 0);
	CU_ASSERT(w->f.dup == 0 || pr->c[1]->dup_pkts > 0);
	/* reordering alone is repaired by NAKs, never by the timer */
	CU_ASSERT(w->f.drop + w->f.flip > 0 || pr->c[0]->timeouts == 0);
	CU_ASSERT(ferry__rc_state(pr->qp[0]) == FERRY_RC_RTS &&
		  ferry__rc_state(pr->qp[1]) == FERRY_RC_RTS);
	free(src);
	pair_free(pr);
}

static void test_lossy(void)
{
	static const struct wl w[] = {
		{ 1024, 10, 20, 200, { 0.01, 0, 0, 0 } },
		{ 1024, 10, 20, 200, { 0.05, 0.02, 0.05, 0.005 } },
		{ 1024, 10, 20, 200, { 0.20, 0.05, 0.10, 0.01 } },
		{ 4096, 10, 20, 200, { 0.05, 0.05, 0.20, 0.01 } },
		{ 2048, 10, 20, 200, { 0, 0.10, 0.30, 0 } },
	};

	for (size_t i = 0; i < FERRY__ARRAY_SIZE(w); i++)
		workload(&w[i]);
}

/* (3) nothing gets through: error after the retry limit, with a reason */
static void test_total_loss(void)
{
	struct ferry_rc_attr a = base_attr(1024);
	struct pair *pr;
	static uint8_t buf[3000];
	struct ferry_rc_wc wc[4];
	uint64_t t0;

	a.retry_limit = 5;
	pr = pair_new(&a, 1, 2, 0);
	pr->net.f.drop = 1.0;
	CU_ASSERT_EQUAL(wr(pr, buf, 3000, 0, false, 0, 1), 0);
	CU_ASSERT_EQUAL(ferry__rc_post_write(pr->qp[0], buf, 10, 0, RKEY,
					     false, 0, 2, false), 0);
	for (t0 = pr->net.now; ferry__rc_state(pr->qp[0]) == FERRY_RC_RTS &&
	     pr->net.now < t0 + 100 * MS;)
		step(pr);
	CU_ASSERT_EQUAL_FATAL(ferry__rc_state(pr->qp[0]), FERRY_RC_ERROR);
	CU_ASSERT(pr->net.now - t0 >= 6 * a.rto_ns &&
		  pr->net.now - t0 < 6 * a.rto_ns + 5 * US);
	CU_ASSERT(pr->c[0]->timeouts == 6 && pr->c[0]->tx_req == 6 * 4 &&
		  pr->c[0]->retx_pkts == 5 * 4);
	CU_ASSERT_PTR_NOT_NULL(strstr(ferry__rc_error(pr->qp[0]),
				      "no ACK from peer QP 0x000022"));
	CU_ASSERT_EQUAL(ferry__rc_poll(pr->qp[0], wc, 4), 2);
	CU_ASSERT(wc[0].wr_id == 1 && wc[0].status == -FERRY_ETIMEOUT);
	CU_ASSERT(wc[1].wr_id == 2 && wc[1].status == -ECANCELED); /* flush */
	CU_ASSERT_EQUAL(ferry__rc_poll(pr->qp[0], wc, 4), -FERRY_ETIMEOUT);
	CU_ASSERT(wr(pr, buf, 1, 0, false, 0, 3) == -FERRY_ETIMEOUT &&
		  ferry__rc_post_recv(pr->qp[0], buf, 1, 3) == -FERRY_ETIMEOUT);
	CU_ASSERT(ferry__rc_state(pr->qp[1]) == FERRY_RC_RTS &&
		  pr->c[1]->rx_req == 0);
	pair_free(pr);
}

/* (4) the responder refuses writes outside what was registered: nothing
 * written, both ends in error, the requester's WR failed */
static void access_case(uint32_t rkey, uint64_t off, uint32_t len)
{
	struct ferry_rc_attr a = base_attr(1024);
	struct pair *pr = pair_new(&a, 5, 6, 4096);
	struct region l;
	static uint8_t src[8192];
	struct ferry_rc_wc wc;

	memset(src, 0x33, sizeof(src));
	memset(pr->r.base, 0x5a, pr->r.len);
	mr_new(pr, &l, 4096, 0x5a, FERRY_ACCESS_LOCAL, RKEY + 0x100);
	CU_ASSERT_EQUAL(ferry__rc_post_recv(pr->qp[1], NULL, 0, 77), 0);
	CU_ASSERT_EQUAL(ferry__rc_post_write(pr->qp[0], src, len, off, rkey,
					     true, 9, 1, true), 0);
	CU_ASSERT_EQUAL_FATAL(wait_wc(pr, 0, &wc, 10 * MS), 1);
	CU_ASSERT(wc.wr_id == 1 && wc.status == -FERRY_EBOUNDS);
	CU_ASSERT_EQUAL(ferry__rc_poll(pr->qp[0], &wc, 1), -FERRY_EBOUNDS);
	CU_ASSERT_PTR_NOT_NULL(strstr(ferry__rc_error(pr->qp[0]),
				      "remote access error"));
	run_for(pr, MS); /* the rest of a multi-packet write arrives */
	CU_ASSERT(all_bytes(pr->r.base, 4096, 0x5a) && guards_ok(&pr->r));
	CU_ASSERT(all_bytes(l.base, 4096, 0x5a) && guards_ok(&l));
	CU_ASSERT(pr->c[1]->access_errors == 1 &&
		  pr->c[1]->tx_nak_access == 1 && pr->c[0]->rx_nak_access == 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(ferry__rc_error(pr->qp[1]),
				      "nothing was written"));
	CU_ASSERT_EQUAL(ferry__rc_poll(pr->qp[1], &wc, 1), 1);
	CU_ASSERT(wc.wr_id == 77 && wc.status == -ECANCELED);
	CU_ASSERT_EQUAL(ferry__rc_poll(pr->qp[1], &wc, 1), -FERRY_EBOUNDS);
	free(l.mem);
	pair_free(pr);
}

static void test_access(void)
{
	struct ferry_rc_attr a = base_attr(1024);
	struct pair *pr = pair_new(&a, 5, 6, 4096);
	static uint8_t src[100];
	struct ferry_rc_wc wc;

	access_case(RKEY + 1, 0, 100);             /* wrong rkey */
	access_case(RKEY, 4096, 1);                /* starts at the end */
	access_case(RKEY, 4000, 200);              /* runs past the end */
	access_case(RKEY, 0, 4097);                /* too long, 5 packets */
	access_case(RKEY, UINT64_MAX - 100, 2048); /* offset + len wraps */
	access_case(RKEY + 0x100, 0, 16);          /* no remote-write right */
	/* up to the last byte of the region is fine */
	memset(src, 0x44, sizeof(src));
	CU_ASSERT_EQUAL(wr(pr, src, 100, 3996, false, 0, 1), 0);
	CU_ASSERT_EQUAL_FATAL(wait_wc(pr, 0, &wc, MS), 1);
	CU_ASSERT(wc.status == 0 && guards_ok(&pr->r) &&
		  all_bytes(pr->r.base + 3996, 100, 0x44));
	pair_free(pr);
}

/* (5) a copy of an old request is acknowledged, not executed; a packet for
 * another QP is dropped */
static void test_stale_and_wrong_qp(void)
{
	struct ferry_rc_attr a = base_attr(1024);
	struct pair *pr = pair_new(&a, 50, 60, 8192);
	uint8_t *mem = pr->r.base;
	struct ferry_roce_pkt p;
	static uint8_t src[3000];
	struct ferry_rc_wc wc;
	uint64_t acks;

	memset(src, 0x11, sizeof(src));
	pr->net.capture = true;
	CU_ASSERT_EQUAL(wr(pr, src, 3000, 0, false, 0, 1), 0);
	CU_ASSERT_EQUAL_FATAL(wait_wc(pr, 0, &wc, MS), 1);
	CU_ASSERT_EQUAL_FATAL(pr->net.ncap, 3);
	memset(mem, 0x22, 3000); /* the application moved on */
	acks = pr->c[1]->tx_acks;
	for (int i = 0; i < 3; i++)
		ferry__rc_input(pr->qp[1], &pr->net.cap[i].p, pr->net.now);
	run_for(pr, 100 * US);
	CU_ASSERT(all_bytes(mem, 3000, 0x22));
	CU_ASSERT(pr->c[1]->dup_pkts == 3 && pr->c[1]->tx_acks > acks);
	CU_ASSERT_EQUAL(ferry__rc_poll(pr->qp[0], &wc, 1), 0);
	/* the same FIRST packet at the expected PSN, but for QP 0x23 */
	p = pr->net.cap[0].p;
	p.psn = 53;
	p.dest_qp = 0x23;
	ferry__rc_input(pr->qp[1], &p, pr->net.now);
	CU_ASSERT(pr->c[1]->bad_qpn == 1 && pr->net.nq == 0);
	CU_ASSERT(all_bytes(mem, 3000, 0x22));
	/* and the connection carries on */
	CU_ASSERT_EQUAL(wr(pr, src, 10, 0, false, 0, 2), 0);
	CU_ASSERT_EQUAL_FATAL(wait_wc(pr, 0, &wc, MS), 1);
	CU_ASSERT(!wc.status && all_bytes(mem, 10, 0x11) && mem[10] == 0x22);
	pair_free(pr);
}

/* (6) receiver not ready: RNR NAKs and pauses, success once receives are
 * posted; an error when none ever is */
static void test_rnr(void)
{
	struct ferry_rc_attr a = base_attr(1024);
	struct pair *pr;
	static uint8_t src[2500];
	uint8_t rb[FERRY_RC_SEND_MAX];
	struct ferry_rc_wc wc;

	a.rnr_retry_limit = 1000;
	pr = pair_new(&a, 0, 0, 8192);
	const struct ferry_rc_counters *ca = pr->c[0], *cb = pr->c[1];
	memset(src, 0x44, sizeof(src));
	/* three 3-packet writes with imm and a send in flight, nothing posted
	 * for 1 ms */
	for (uint32_t i = 0; i < 3; i++)
		CU_ASSERT_EQUAL(wr(pr, src, 2500, 100 + 2600 * i, true,
				   0x5150 + i, i), 0);
	CU_ASSERT_EQUAL(ferry__rc_post_send(pr->qp[0], "hi", 2, 3, true), 0);
	run_for(pr, MS);
	CU_ASSERT(cb->rnr >= 20 && cb->tx_nak_rnr == cb->rnr &&
		  ca->rx_nak_rnr + 1 >= cb->rnr);
	/* the gap behind the refused packet sent one sequence NAK, which
	 * the requester, already going back there, ignored */
	CU_ASSERT(ca->timeouts == 0 && ca->rx_nak_seq == 1 &&
		  ca->ack_stale == 1);
	CU_ASSERT(ferry__rc_poll(pr->qp[0], &wc, 1) == 0 &&
		  ferry__rc_poll(pr->qp[1], &wc, 1) == 0);
	for (uint32_t i = 0; i < 3; i++)
		CU_ASSERT_EQUAL(ferry__rc_post_recv(pr->qp[1], NULL, 0, 9 + i),
				0);
	CU_ASSERT_EQUAL(ferry__rc_post_recv(pr->qp[1], rb, sizeof(rb), 12), 0);
	for (uint32_t i = 0; i < 3; i++) {
		CU_ASSERT_EQUAL_FATAL(wait_wc(pr, 1, &wc, 10 * MS), 1);
		CU_ASSERT(wc.op == FERRY_RC_WC_RECV_WRITE_IMM &&
			  wc.imm == 0x5150 + i && wc.wr_id == 9 + i &&
			  wc.offset == 100 + 2600 * i && wc.byte_len == 2500);
		CU_ASSERT_EQUAL_FATAL(wait_wc(pr, 0, &wc, MS), 1);
		CU_ASSERT(wc.status == 0 && wc.wr_id == i);
		CU_ASSERT(all_bytes(pr->r.base + 100 + 2600 * i, 2500, 0x44));
	}
	CU_ASSERT_EQUAL_FATAL(wait_wc(pr, 1, &wc, 10 * MS), 1);
	CU_ASSERT(wc.op == FERRY_RC_WC_RECV && wc.wr_id == 12 &&
		  wc.byte_len == 2 && memcmp(rb, "hi", 2) == 0);
	pair_free(pr);

	a.rnr_retry_limit = 3;
	pr = pair_new(&a, 0, 0, 0);
	CU_ASSERT_EQUAL(ferry__rc_post_send(pr->qp[0], "x", 1, 3, true), 0);
	CU_ASSERT_EQUAL_FATAL(wait_wc(pr, 0, &wc, 50 * MS), 1);
	CU_ASSERT(wc.wr_id == 3 && wc.status == -FERRY_ETIMEOUT);
	CU_ASSERT_EQUAL(pr->c[0]->rx_nak_rnr, 4);
	CU_ASSERT_PTR_NOT_NULL(strstr(ferry__rc_error(pr->qp[0]), "RNR"));
	pair_free(pr);
}

/* (7) PSNs wrap from 0xffffff to 0 on both sides (writes one way, credits
 * the other), with losses */
static void test_psn_wrap(void)
{
	workload(&(struct wl){ 1024, 0xfffff0, 0xfffff8, 100,
			       { 0.05, 0.02, 0.05, 0 } });
}

/* A tx callback that keeps the packets in c. */
static struct {
	int n;
	struct ferry_roce_pkt p[8];
} c;

static int cap_tx(void *ctx, const struct ferry_roce_pkt *p)
{
	(void)ctx;
	if (c.n < 8)
		c.p[c.n] = *p;
	c.n++;
	return 0;
}

static bool aeth_is(int i, uint8_t syn, uint32_t psn, uint32_t msn)
{
	return c.n == i + 1 && c.p[i].opcode == FERRY_OP_ACK &&
	       c.p[i].syndrome == syn && c.p[i].psn == psn &&
	       c.p[i].msn == msn;
}

/* API contracts, then (5) the responder's rules on hand-made packets: one
 * NAK per gap, delayed and coalesced ACKs, a duplicate acknowledged and not
 * executed, a packet before connect dropped, a bad sequence fatal. */
static void test_api_and_rules(void)
{
	struct ferry_rc_attr a = base_attr(1024);
	struct ferry_rc_pd *pd;
	struct ferry_rc_qp *qp;
	const struct ferry_rc_counters *cn;
	struct ferry_roce_addr ad = { { 2 }, 1 };
	static uint8_t mem[8192], pay[1024];
	struct ferry_roce_pkt p = { .dest_qp = 0x22, .rkey = RKEY,
				    .payload = pay };
	const uint8_t ack = FERRY_AETH_ACK(0x1f), last = FERRY_OP_WRITE_LAST;
	const uint32_t e = 1002 + a.ack_every; /* epsn after the ONLYs */
	uint64_t t = 1000 * US;

#define IN(op, psn_, len_, ackreq_)                                          \
	(p.opcode = (op), p.psn = (psn_), p.len = (len_),                    \
	 p.ackreq = (ackreq_), ferry__rc_input(qp, &p, t))
	memset(pay, 0x77, sizeof(pay));
	CU_ASSERT_EQUAL_FATAL(ferry__rc_pd_create(1, &pd), 0);
	CU_ASSERT_EQUAL(ferry__rc_reg_mr(pd, mem, sizeof(mem), RW, RKEY), 0);
	CU_ASSERT_EQUAL(ferry__rc_reg_mr(pd, mem, 1, RW, RKEY), -EEXIST);
	CU_ASSERT_EQUAL(ferry__rc_reg_mr(pd, mem, 1, RW, 7), -ENOSPC);
	CU_ASSERT_EQUAL(ferry__rc_dereg_mr(pd, 7), -ENOENT);
	a.pd = pd, a.qpn = 1, a.tx = cap_tx;
	CU_ASSERT_EQUAL(ferry__rc_create(&a, &qp), -EINVAL); /* QP1 is IB's */
	a.qpn = 0x22, a.mtu = 1500;
	CU_ASSERT_EQUAL(ferry__rc_create(&a, &qp), -EINVAL);
	a.mtu = 1024, a.sq_depth = 3;
	CU_ASSERT_EQUAL_FATAL(ferry__rc_create(&a, &qp), 0);
	cn = ferry__rc_counters(qp);
	CU_ASSERT_EQUAL(ferry__rc_post_send(qp, pay, 1, 0, true), -ENOTCONN);
	IN(FERRY_OP_WRITE_ONLY, 1000, 16, true); /* before connect */
	CU_ASSERT(cn->state_drops == 1 && c.n == 0);
	CU_ASSERT_EQUAL(ferry__rc_connect(qp, 1u << 24, 0, 0, &ad, &ad, 0),
			-EINVAL);
	CU_ASSERT_EQUAL(ferry__rc_connect(qp, 0x11, 500, 1000, &ad, &ad, 0), 0);
	CU_ASSERT_EQUAL(ferry__rc_connect(qp, 0x11, 500, 1000, &ad, &ad, 0),
			-EISCONN);
	for (int i = 0; i < 4; i++) /* depth 3 is rounded up to 4 */
		CU_ASSERT_EQUAL(ferry__rc_post_send(qp, pay, 1, 0, true), 0);
	CU_ASSERT_EQUAL(ferry__rc_post_send(qp, pay, 1, 0, true), -EAGAIN);
	CU_ASSERT_EQUAL(ferry__rc_post_write(qp, NULL, 1, 0, 0, false, 0, 0,
					     true), -EINVAL);
	ferry__rc_progress(qp, t);
	CU_ASSERT(c.n == 4 && c.p[0].udp_sport == (0xc000 | 0x22) &&
		  c.p[0].dest_qp == 0x11 && c.p[0].pkey == 0xffff &&
		  c.p[3].psn == 503 && c.p[0].opcode == FERRY_OP_SEND_ONLY);
	CU_ASSERT(ferry__rc_rnr_ns(ferry__rc_rnr_code(20 * US)) == 20 * US);
	CU_ASSERT(ferry__rc_rnr_code(700 * MS) == 0 &&
		  ferry__rc_rnr_ns(0) == 655360 * US);
	memset(&c, 0, sizeof(c));
	/* a gap of three packets: one NAK, nothing written */
	p.dma_len = 16;
	for (uint32_t psn = 1001; psn <= 1003; psn++)
		IN(FERRY_OP_WRITE_ONLY, psn, 16, true);
	CU_ASSERT(aeth_is(0, FERRY_AETH_NAK_SEQ, 1000, 0));
	CU_ASSERT(cn->oow_drops == 3 && cn->tx_nak_seq == 1);
	CU_ASSERT(all_bytes(mem, sizeof(mem), 0));
	/* FIRST without AckReq: written at once, ACKed after ack_delay */
	p.dma_len = 2048;
	IN(FERRY_OP_WRITE_FIRST, 1000, 1024, false);
	CU_ASSERT(c.n == 1 && all_bytes(mem, 1024, 0x77));
	ferry__rc_progress(qp, t + a.ack_delay_ns - 1);
	CU_ASSERT_EQUAL(c.n, 1);
	ferry__rc_progress(qp, t + a.ack_delay_ns);
	CU_ASSERT(aeth_is(1, ack, 1000, 0));
	IN(last, 1003, 1024, true); /* a new gap: a new NAK */
	CU_ASSERT(aeth_is(2, FERRY_AETH_NAK_SEQ, 1001, 0));
	IN(last, 1001, 1024, true); /* AckReq: ACK at once */
	CU_ASSERT(aeth_is(3, ack, 1001, 1));
	CU_ASSERT(all_bytes(mem, 2048, 0x77) && mem[2048] == 0);
	memset(pay, 0x55, sizeof(pay)); /* a late copy of the FIRST */
	IN(FERRY_OP_WRITE_FIRST, 1000, 1024, false);
	CU_ASSERT(cn->dup_pkts == 1 && all_bytes(mem, 2048, 0x77) && c.n == 4);
	ferry__rc_progress(qp, t + a.ack_delay_ns);
	CU_ASSERT(aeth_is(4, ack, 1001, 1));
	/* without AckReq, one ACK per ack_every packets */
	p.dma_len = 16;
	for (uint32_t psn = 1002; psn < e; psn++)
		IN(FERRY_OP_WRITE_ONLY, psn, 16, false);
	CU_ASSERT(aeth_is(5, ack, e - 1, 1 + a.ack_every));
	CU_ASSERT(all_bytes(mem, 16, 0x55));
	/* MIDDLE without FIRST: invalid request, fatal, NAK said again when
	 * the requester retries that PSN */
	IN(FERRY_OP_WRITE_MIDDLE, e, 1024, false);
	CU_ASSERT(aeth_is(6, FERRY_AETH_NAK_INVALID, e, 1 + a.ack_every));
	CU_ASSERT_EQUAL(ferry__rc_state(qp), FERRY_RC_ERROR);
	CU_ASSERT_PTR_NOT_NULL(strstr(ferry__rc_error(qp), "without FIRST"));
	IN(FERRY_OP_WRITE_MIDDLE, e, 1024, false);
	CU_ASSERT(aeth_is(7, FERRY_AETH_NAK_INVALID, e, 1 + a.ack_every));
	CU_ASSERT_EQUAL(ferry__rc_poll(qp, NULL, 0), -FERRY_EPROTO);
#undef IN
	ferry__rc_destroy(qp);
	ferry__rc_pd_destroy(pd);
}

/* (9) the adaptive window: side 0 keeps PUMP_WRS writes of PUMP_LEN
 * bytes posted into side 1's region for a while */
#define PUMP_LEN (64u << 10)
#define PUMP_WRS 48u

struct pump {
	struct pair *pr;
	uint8_t *src;
	uint64_t posted, done;
};

static void pump_run(struct pump *pu, uint64_t ns)
{
	struct pair *pr = pu->pr;
	uint64_t end = pr->net.now + ns;
	struct ferry_rc_wc wc[16];

	while (pr->net.now < end) {
		for (; pu->posted - pu->done < PUMP_WRS; pu->posted++)
			CU_ASSERT_EQUAL_FATAL(wr(pr, pu->src, PUMP_LEN,
						 pu->posted % 8 * PUMP_LEN,
						 false, 0, pu->posted), 0);
		step(pr);
		int n = ferry__rc_poll(pr->qp[0], wc, 16);
		CU_ASSERT_FATAL(n >= 0);
		for (int i = 0; i < n; i++, pu->done++)
			CU_ASSERT(wc[i].status == 0 &&
				  wc[i].wr_id == pu->done);
	}
}

/* A pair at MTU 1024 whose window starts at init and may reach most,
 * latency ns each way, a bottleneck of gap ns per packet (0: none);
 * retransmit timeout rto ns, the round trip hinted as hint ns. */
static struct pump pump_new_t(uint32_t init, uint32_t most, uint64_t latency,
			      uint64_t gap, uint64_t qmax, uint64_t rto,
			      uint64_t hint)
{
	struct ferry_rc_attr a = base_attr(1024);
	struct pump pu = { 0 };

	a.window_init = init;
	a.window_pkts = most;
	a.rto_ns = rto;
	a.rtt_hint_ns = hint;
	a.retry_limit = 15;
	a.ack_delay_ns = 20 * US;
	pu.pr = pair_new(&a, 0xfffff0, 7, 8 * PUMP_LEN);
	pu.pr->net.latency = latency;
	pu.pr->net.gap = gap;
	pu.pr->net.qmax = qmax;
	pu.src = malloc(PUMP_LEN);
	CU_ASSERT_PTR_NOT_NULL_FATAL(pu.src);
	for (uint32_t i = 0; i < PUMP_LEN; i++)
		pu.src[i] = (uint8_t)(i * 7 + 1);
	return pu;
}

static struct pump pump_new(uint32_t init, uint32_t most, uint64_t latency,
			    uint64_t gap, uint64_t qmax)
{
	return pump_new_t(init, most, latency, gap, qmax, 20 * MS, 0);
}

static void pump_free(struct pump *pu)
{
	/* every slot written holds the pattern */
	for (uint32_t k = 0; k < 8 && k < pu->done; k++)
		CU_ASSERT(memcmp(pu->pr->r.base + k * PUMP_LEN, pu->src,
				 PUMP_LEN) == 0);
	CU_ASSERT(guards_ok(&pu->pr->r));
	free(pu->src);
	pair_free(pu->pr);
}

/* Packets acknowledged in ns of pumping. */
static uint64_t pump_pkts(struct pump *pu, uint64_t ns)
{
	uint64_t d0 = pu->done;

	pump_run(pu, ns);
	return (pu->done - d0) * (PUMP_LEN / 1024);
}

static void test_window(void)
{
	struct pump pu;
	uint64_t rtt, pkts, cuts;
	uint32_t w;

	/* no bottleneck, 4 ms round trip: the first round stays within
	 * the start, then the window doubles each round up to the most */
	pu = pump_new(32, 2048, 2 * MS, 0, 0);
	pump_run(&pu, 3 * MS);
	CU_ASSERT(pu.pr->net.max_inflight[0] == 32);
	CU_ASSERT_EQUAL(ferry__rc_window(pu.pr->qp[0], &rtt), 32);
	pump_run(&pu, 80 * MS);
	CU_ASSERT_EQUAL(ferry__rc_window(pu.pr->qp[0], &rtt), 2048);
	CU_ASSERT(rtt >= 4 * MS && rtt < 4 * MS + 50 * US);
	CU_ASSERT(pu.pr->net.max_inflight[0] <= 2048);
	CU_ASSERT(pu.pr->c[0]->timeouts == 0 && pu.pr->c[0]->retx_pkts == 0);
	pump_free(&pu);

	/* a 50,000 packets/s bottleneck with room to queue: the window
	 * settles at two bandwidth-delay products (2 x 50,000 x 4 ms = 400),
	 * not at the most it may take, and the bottleneck stays busy */
	pu = pump_new(32, 4096, 2 * MS, 20 * US, 100000);
	pump_run(&pu, 300 * MS);
	pu.pr->net.max_inflight[0] = 0;
	pkts = pump_pkts(&pu, 500 * MS);
	w = ferry__rc_window(pu.pr->qp[0], &rtt);
	CU_ASSERT(w >= 380 && w <= 440);
	CU_ASSERT(pu.pr->net.max_inflight[0] <= w + 64);
	CU_ASSERT(rtt >= 4 * MS && rtt < 4 * MS + 100 * US);
	CU_ASSERT(pkts >= 24000 && pkts <= 25064);
	CU_ASSERT(pu.pr->net.qdrops == 0 && pu.pr->c[0]->win_cuts == 0 &&
		  pu.pr->c[0]->timeouts == 0);
	pump_free(&pu);

	/* the same with room for 150 packets (3 ms): filling the path
	 * overflows the queue, and losses with the queue full cap the flight
	 * at 7/10 of what it was; the NAKs repair without the timer; then
	 * pacing at the path's rate keeps the queue from overflowing and the
	 * bottleneck busy */
	pu = pump_new(32, 4096, 2 * MS, 20 * US, 150);
	pump_run(&pu, 300 * MS);
	cuts = pu.pr->c[0]->win_cuts;
	pu.pr->net.max_inflight[0] = 0;
	pkts = pump_pkts(&pu, 500 * MS);
	CU_ASSERT(cuts >= 1);
	CU_ASSERT(pu.pr->net.max_inflight[0] <= 200 + 150 + 64);
	CU_ASSERT(pu.pr->c[0]->win_cuts <= pu.pr->c[0]->rx_nak_seq);
	CU_ASSERT(pu.pr->c[0]->timeouts == 0);
	CU_ASSERT(pkts >= 24000);
	CU_ASSERT(ferry__rc_window(pu.pr->qp[0], NULL) <= 4096);

	/* a retransmit timeout (the peer silent for a while) forgets the
	 * rate: the window starts again from where it began */
	pu.pr->net.f.drop = 1.0;
	while (pu.pr->c[0]->timeouts == 0)
		step(pu.pr);
	CU_ASSERT_EQUAL(ferry__rc_window(pu.pr->qp[0], NULL), 32);
	pu.pr->net.f.drop = 0;
	pump_run(&pu, 200 * MS);
	CU_ASSERT(ferry__rc_window(pu.pr->qp[0], NULL) > 200);
	pump_free(&pu);

	/* random loss on a path with no queue is not congestion: go-back-N
	 * repairs it, nothing is cut, and the window still grows to the most */
	pu = pump_new(32, 1024, 2 * MS, 0, 0);
	pu.pr->net.f.drop = 0.0005;
	pump_run(&pu, 300 * MS);
	CU_ASSERT(pu.pr->c[0]->rx_nak_seq > 0 && pu.pr->c[0]->win_cuts == 0);
	CU_ASSERT(pu.pr->c[0]->loss_no_queue > 0);
	CU_ASSERT_EQUAL(ferry__rc_window(pu.pr->qp[0], NULL), 1024);
	pump_free(&pu);

	/* a fixed window (start = most) stays as set through losses */
	pu = pump_new(100, 100, 2 * MS, 20 * US, 20);
	pump_run(&pu, 200 * MS);
	CU_ASSERT(pu.pr->net.qdrops > 0 && pu.pr->c[0]->win_cuts == 0);
	CU_ASSERT_EQUAL(ferry__rc_window(pu.pr->qp[0], NULL), 100);
	pump_free(&pu);
}

/* (10) the retransmit timeout follows the round trip: from the hint
 * before the first sample, then from the samples */
static void test_rto(void)
{
	/* a floor of 1 ms below the 4 ms round trip, which is hinted */
	struct pump pu = pump_new_t(64, 64, 2 * MS, 0, 0, MS, 4 * MS);
	uint64_t t;

	CU_ASSERT_EQUAL(ferry__rc_rto(pu.pr->qp[0]), 20 * MS); /* 3x4 + 4x2 */
	pump_run(&pu, 200 * MS);
	CU_ASSERT_EQUAL(pu.pr->c[0]->timeouts, 0);
	t = ferry__rc_rto(pu.pr->qp[0]);
	CU_ASSERT(t >= 12 * MS && t < 13 * MS); /* 3 srtt + 4 var, var ~0 */
	CU_ASSERT(ferry__rc_state(pu.pr->qp[0]) == FERRY_RC_RTS);
	pump_free(&pu);
}

/* (11) a rate cap paces every packet: over 1 s the packets sent are
 * within 5% of the cap, with a fixed window and with an adaptive one
 * that alone would go far faster; the packets leave in bursts of
 * ferry__rc_pace_burst */
static void pace_case_at(uint32_t init, uint32_t most, uint64_t pps,
			 uint64_t latency, uint32_t burst)
{
	struct pump pu = pump_new_t(init, most, latency, 0, 0, 20 * MS,
				    2 * latency);
	uint64_t tx0, sent;

	pu.pr->qp[0]->attr.rate_pps = pps;
	/* past the window's growth to the path (a period is two round
	 * trips) */
	pump_run(&pu, 50 * MS + 40 * latency);
	tx0 = pu.pr->c[0]->tx_req;
	pu.pr->net.max_run = 0;
	pump_run(&pu, 1000 * MS);
	sent = pu.pr->c[0]->tx_req - tx0;
	CU_ASSERT(sent >= pps * 95 / 100 && sent <= pps * 105 / 100);
	CU_ASSERT(pu.pr->c[0]->retx_pkts == 0);
	CU_ASSERT_EQUAL(ferry__rc_pace_burst(pu.pr->qp[0]), burst);
	/* and they leave in runs of that many at one instant */
	CU_ASSERT_EQUAL(pu.pr->net.max_run, burst);
	pump_free(&pu);
}

static void pace_case(uint32_t init, uint32_t most, uint64_t pps)
{
	/* 200 us round trip: bursts of an eighth of it, 25 us at the pace */
	uint64_t b = pps * 25 / 1000000;

	pace_case_at(init, most, pps, 100 * US, b > 1 ? (uint32_t)b : 1);
}

static void test_pacing(void)
{
	/* fixed: set before the first packet by the attr */
	struct ferry_rc_attr a = base_attr(1024);
	struct pair *pr;

	a.rate_pps = 1000;
	a.window_pkts = 64;
	pr = pair_new(&a, 1, 2, 0);
	CU_ASSERT_EQUAL(pr->qp[0]->pace_pps, 1000);
	pair_free(pr);
	pace_case(256, 256, 30000);
	pace_case(32, 4096, 100000);
	pace_case(32, 4096, 3000);
	/* a 20 ms round trip: bursts of 1 ms at the pace, 16 at most; the
	 * rate over 1 s holds all the same */
	pace_case_at(32, 4096, 10000, 10 * MS, 10);
	pace_case_at(32, 4096, 100000, 10 * MS, 16);
}

/* (12) ECN marks and CNPs: the responder answers marked requests with
 * CNPs to the requester's QP, one per 50 us at most, and the requester's
 * transfer (marked all the way) slows but completes */
static void test_cnp(void)
{
	struct pump pu = pump_new(32, 32, 5 * US, 0, 0);
	struct ferry_roce_pkt p = { .opcode = FERRY_OP_SEND_ONLY,
				    .pkey = 0xffff, .dest_qp = QPN(1),
				    .psn = 1, .ecn = FERRY_ECN_CE };
	uint64_t cnps, t0;

	/* 100 marked requests 10 us apart (copies of an old PSN: only
	 * acknowledged), straight into side 1: 20 intervals of 50 us */
	p.psn = ferry__psn_add(pu.pr->qp[1]->epsn, FERRY_PSN_MASK);
	for (int i = 0; i < 100; i++) {
		ferry__rc_input(pu.pr->qp[1], &p, pu.pr->net.now);
		run_for(pu.pr, 10 * US);
	}
	CU_ASSERT_EQUAL(pu.pr->c[1]->rx_ce, 100);
	CU_ASSERT_EQUAL(pu.pr->c[1]->tx_cnp, 20);
	CU_ASSERT_EQUAL(pu.pr->net.cnps, 20); /* BTH: BECN, side 0's QP */
	CU_ASSERT_EQUAL(pu.pr->c[0]->rx_cnp, 20);
	/* a CNP acknowledges nothing and is not a request */
	CU_ASSERT(pu.pr->c[0]->rx_req == 0);
	CU_ASSERT(pu.pr->c[0]->dcqcn_cuts >= 1);
	/* unmarked requests: no CNP */
	p.ecn = FERRY_ECN_ECT0;
	cnps = pu.pr->c[1]->tx_cnp;
	for (int i = 0; i < 10; i++) {
		ferry__rc_input(pu.pr->qp[1], &p, pu.pr->net.now);
		run_for(pu.pr, 100 * US);
	}
	CU_ASSERT_EQUAL(pu.pr->c[1]->tx_cnp, cnps);
	/* a transfer marked all the way: CNPs at most one per interval, and
	 * every write completes */
	pu.pr->net.mark_all = true;
	t0 = pu.pr->net.now;
	cnps = pu.pr->c[1]->tx_cnp;
	pump_run(&pu, 20 * MS);
	CU_ASSERT(pu.done > 0);
	CU_ASSERT(pu.pr->c[1]->tx_cnp - cnps <=
		  (pu.pr->net.now - t0) / (50 * US) + 1);
	CU_ASSERT(pu.pr->c[1]->rx_req > 110 &&
		  pu.pr->c[1]->rx_ce - 100 == pu.pr->c[1]->rx_req - 110);
	pu.pr->net.mark_all = false;
	pump_free(&pu);
}

/* The QPs' DSCP is on every packet they send, each kind with its own
 * ECN bits: requests ECT(0), ACKs and CNPs (the bottleneck marks every
 * request here, so side 1 sends CNPs) not ECN-capable. Without one,
 * DSCP 0; over 63, refused. */
static void test_dscp(void)
{
	static uint8_t src[16384];
	struct ferry_rc_attr a = base_attr(1024);
	struct ferry_rc_qp *qp;
	struct ferry_rc_wc wc;
	struct pair *pr;

	for (int dscp = 0; dscp <= 46; dscp += 46) {
		a.dscp = (uint8_t)dscp;
		pr = pair_new(&a, 1, 2, sizeof(src));
		pr->net.dscp = (uint8_t)dscp;
		pr->net.mark_all = true;
		for (uint64_t k = 0; k < 4; k++) {
			CU_ASSERT_EQUAL(wr(pr, src, sizeof(src), 0, false, 0, k),
					0);
			CU_ASSERT_EQUAL(wait_wc(pr, 0, &wc, 50 * MS), 1);
			CU_ASSERT(wc.wr_id == k && wc.status == 0);
		}
		run_for(pr, MS);
		for (int kind = 0; kind < 3; kind++) {
			CU_ASSERT(pr->net.cls[kind][0] > 0);
			CU_ASSERT_EQUAL(pr->net.cls[kind][1], 0);
			CU_ASSERT_EQUAL(pr->net.ecn_other[kind], 0);
		}
		pair_free(pr);
	}
	a = base_attr(1024);
	a.dscp = 64;
	a.pd = NULL;
	CU_ASSERT_EQUAL_FATAL(ferry__rc_pd_create(1, &a.pd), 0);
	a.qpn = 2;
	a.tx = net_tx;
	CU_ASSERT_EQUAL(ferry__rc_create(&a, &qp), -EINVAL);
	a.dscp = 63;
	CU_ASSERT_EQUAL(ferry__rc_create(&a, &qp), 0);
	ferry__rc_destroy(qp);
	ferry__rc_pd_destroy(a.pd);
}

/* A CNP as a peer's NIC sends it, to side 0's QP. */
static void cnp_in(struct pair *pr)
{
	static const uint8_t z[FERRY_ROCE_CNP_LEN];
	struct ferry_roce_pkt p = { .opcode = FERRY_OP_CNP, .becn = true,
				    .pkey = 0xffff, .dest_qp = QPN(0),
				    .payload = z, .len = sizeof(z) };

	ferry__rc_input(pr->qp[0], &p, pr->net.now);
}

/* (13) DCQCN's reaction point on a simulated clock, with its published
 * defaults: cut, alpha, fast recovery, additive and hyper increase */
static void test_dcqcn(void)
{
	struct ferry_rc_attr a = base_attr(1024);
	struct pair *pr;
	uint32_t alpha;
	uint64_t r, ai = 40000000ull / 8 / 1024; /* 40 Mb/s in packets/s */

	a.rate_pps = 100000; /* so the first cut starts from a known rate */
	pr = pair_new(&a, 1, 2, 0);
	CU_ASSERT_EQUAL(ferry__rc_dcqcn_rate(pr->qp[0], NULL), 0);
	cnp_in(pr);
	/* alpha starts at 1: the first cut halves */
	CU_ASSERT_EQUAL(ferry__rc_dcqcn_rate(pr->qp[0], &alpha), 50000);
	CU_ASSERT_EQUAL(alpha, 1024);
	CU_ASSERT_EQUAL(pr->qp[0]->pace_pps, 50000);
	/* another CNP within K (55 us) of the cut does nothing */
	run_for(pr, 20 * US);
	cnp_in(pr);
	CU_ASSERT_EQUAL(ferry__rc_dcqcn_rate(pr->qp[0], NULL), 50000);
	CU_ASSERT_EQUAL(pr->c[0]->rx_cnp, 2);
	CU_ASSERT_EQUAL(pr->c[0]->dcqcn_cuts, 1);
	/* one T (55 us) later: fast recovery halfway back to the target;
	 * alpha's first K had a CNP: (1 - g) + g, still 1 */
	run_for(pr, 40 * US);
	CU_ASSERT_EQUAL(ferry__rc_dcqcn_rate(pr->qp[0], &alpha), 75000);
	CU_ASSERT_EQUAL(alpha, 1024);
	/* four K without a CNP: alpha x (1 - 1/256) each time; five T: the
	 * fifth fast recovery step (50000 -> 98437) */
	run_for(pr, 4 * 55 * US);
	CU_ASSERT_EQUAL(ferry__rc_dcqcn_rate(pr->qp[0], &alpha), 98437);
	CU_ASSERT_EQUAL(alpha, 1008);
	/* the sixth T adds R_AI to the target first */
	run_for(pr, 55 * US);
	r = ferry__rc_dcqcn_rate(pr->qp[0], NULL);
	CU_ASSERT_EQUAL(r, (100000 + ai + 98437) / 2);
	/* a CNP now cuts by alpha / 2 (alpha 1004 / 1024) */
	cnp_in(pr);
	ferry__rc_dcqcn_rate(pr->qp[0], &alpha);
	CU_ASSERT_EQUAL(alpha, 1004);
	CU_ASSERT(ferry__rc_dcqcn_rate(pr->qp[0], NULL) < r * 52 / 100);
	CU_ASSERT_EQUAL(pr->c[0]->dcqcn_cuts, 2);
	pair_free(pr);
}

/* (14) a bottleneck that marks ECN from a queue of 30 packets, with room
 * for 2000: DCQCN keeps it mostly busy with no drop, and the queue far
 * below both what the window alone would build (two bandwidth-delay
 * products: 400 packets here) and the room */
/* (15) a thread that sleeps until ferry__rc_due misses nothing: woken
 * only then and when a packet arrives, a paced write ends whole, at its
 * rate, with nothing resent and far fewer wakes than a spinning driver
 * makes; idle QPs have nothing due */
static void due_wake(struct pair *pr, uint64_t *next)
{
	struct net *n = &pr->net;

	*next = n->nq ? n->q[0]->at : UINT64_MAX;
	for (int s = 0; s < 2; s++) {
		uint64_t d;

		ferry__rc_progress(pr->qp[s], n->now);
		d = ferry__rc_due(pr->qp[s]);
		CU_ASSERT(d > n->now); /* progress did what was due */
		if (d < *next)
			*next = d;
	}
	if (n->nq && n->q[0]->at < *next)
		*next = n->q[0]->at;
}

static void test_due(void)
{
	const uint32_t len = 256u << 10, pkts = len / 1024;
	const uint64_t pps = 20000; /* a packet per 50 us */
	struct ferry_rc_attr a = base_attr(1024);
	struct ferry_rc_wc wc = { 0 };
	uint8_t *src = malloc(len);
	uint64_t t0, t, next, wakes = 0;
	struct pair *pr;
	int got = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(src);
	for (uint32_t i = 0; i < len; i++)
		src[i] = (uint8_t)(i * 13 + 5);
	a.window_pkts = 64;
	a.rate_pps = pps;
	pr = pair_new(&a, 1, 2, len);
	for (int s = 0; s < 2; s++)
		CU_ASSERT_EQUAL(ferry__rc_due(pr->qp[s]), UINT64_MAX);
	CU_ASSERT_EQUAL_FATAL(wr(pr, src, len, 0, false, 0, 7), 0);
	t0 = pr->net.now;
	while (!got && pr->net.now < t0 + 100 * MS) {
		due_wake(pr, &next);
		wakes++;
		if (next == UINT64_MAX)
			break;
		pr->net.now = next;
		deliver(pr);
		got = ferry__rc_poll(pr->qp[0], &wc, 1);
	}
	t = pr->net.now - t0;
	CU_ASSERT_EQUAL(got, 1);
	CU_ASSERT(wc.status == 0 && wc.wr_id == 7);
	CU_ASSERT(memcmp(pr->r.base, src, len) == 0);
	/* the rate: a burst of 16 first, then one per gap, within 5% */
	CU_ASSERT(t >= (pkts - 17) * (1000000000ull / pps) * 95 / 100);
	CU_ASSERT(t <= pkts * (1000000000ull / pps) * 105 / 100);
	CU_ASSERT_EQUAL(pr->c[0]->retx_pkts, 0);
	CU_ASSERT_EQUAL(pr->c[0]->timeouts, 0);
	CU_ASSERT(wakes < t / US / 4);
	/* the last delayed ACK and the timer settle: then nothing is due */
	for (int i = 0; i < 16 && next != UINT64_MAX; i++) {
		due_wake(pr, &next);
		if (next != UINT64_MAX) {
			pr->net.now = next;
			deliver(pr);
		}
	}
	for (int s = 0; s < 2; s++)
		CU_ASSERT_EQUAL(ferry__rc_due(pr->qp[s]), UINT64_MAX);
	free(src);
	pair_free(pr);
}

/* (16) with a round trip hinted (1 ms or more), the first window leaves
 * spread over half of it: a bottleneck whose queue is smaller than that
 * window drops nothing, where the same window sent at once (no hint)
 * overflows it */
static void test_first_window(void)
{
	/* 256 packets first; 100,000 packets/s through a queue of 64;
	 * 10 ms round trip */
	struct pump pu = pump_new_t(256, 4096, 5 * MS, 10 * US, 64, 20 * MS,
				    10 * MS);

	CU_ASSERT_EQUAL(pu.pr->qp[0]->pace_pps, 256 * 2000000000ull / (10 * MS));
	pump_run(&pu, 12 * MS);
	CU_ASSERT_EQUAL(pu.pr->net.qdrops, 0);
	CU_ASSERT(pu.pr->net.qpeak < 32);
	CU_ASSERT_EQUAL(pu.pr->c[0]->timeouts, 0);
	pump_free(&pu);

	pu = pump_new_t(256, 4096, 5 * MS, 10 * US, 64, 20 * MS, 0);
	CU_ASSERT_EQUAL(pu.pr->qp[0]->pace_pps, 0);
	pump_run(&pu, 12 * MS);
	CU_ASSERT(pu.pr->net.qdrops > 0);
	pump_free(&pu);
}

static void test_ecn_path(void)
{
	struct pump pu = pump_new(32, 4096, 2 * MS, 20 * US, 2000);
	uint64_t pkts;

	pu.pr->net.ecn_at = 30;
	pump_run(&pu, 500 * MS);
	pu.pr->net.qpeak = 0;
	pkts = pump_pkts(&pu, 1000 * MS);
	CU_ASSERT(pu.pr->net.qdrops == 0);
	CU_ASSERT(pu.pr->c[1]->tx_cnp > 0 && pu.pr->c[0]->dcqcn_cuts > 0);
	CU_ASSERT(pu.pr->net.qpeak <= 250);
	CU_ASSERT(pkts >= 40000);
	pump_free(&pu);
}

int main(void)
{
	CU_TestInfo tests[] = {
		{ "api and responder rules", test_api_and_rules },
		{ "sizes and sends", test_sizes },
		{ "lossy wire", test_lossy },
		{ "total loss", test_total_loss },
		{ "access checks", test_access },
		{ "stale PSN and wrong QP", test_stale_and_wrong_qp },
		{ "RNR", test_rnr },
		{ "PSN wrap", test_psn_wrap },
		{ "adaptive window", test_window },
		{ "retransmit timeout follows the round trip", test_rto },
		{ "pacing to a rate cap", test_pacing },
		{ "ECN marks answered with CNPs", test_cnp },
		{ "DCQCN reaction point", test_dcqcn },
		{ "ECN-marking bottleneck", test_ecn_path },
		{ "the DSCP on requests, ACKs and CNPs", test_dscp },
		{ "woken only when due, nothing missed", test_due },
		{ "the first window paced over the hinted round trip",
		  test_first_window },
		CU_TEST_INFO_NULL,
	};
	return ferry_cu_run("uroce_rc", tests);
}
