/* uroce RC responder: what a hostile or confused peer on the fabric can and
 * cannot do to the receive ring (issue 8, part 4; docs/security.md).
 *
 * One responder QP, hand-made request packets, and a tx callback that keeps
 * every packet the responder sends back. For each kind of bad write the
 * test checks what a user would: no byte of the region or its guard bytes
 * changed, the answer on the wire (the AETH syndrome, per IBA vol. 1
 * 9.7.5.2: 0x60 PSN sequence error, 0x61 invalid request, 0x62 remote
 * access error; an ACK for a duplicate), the counter that says so, and
 * whether the QP (and so the session) ends or carries on:
 *
 *   wrong rkey, no remote-write right,   remote access NAK, access_errors,
 *   out of bounds                        QP in error (-FERRY_EBOUNDS):
 *                                        the session ends
 *   wrong QP (unknown dest QPN)          nothing sent, bad_qpn, carries on
 *   duplicate or old PSN                 ACK again, not executed again,
 *                                        dup_pkts, carries on
 *   PSN ahead of the expected one        one sequence NAK per gap,
 *                                        oow_drops, carries on
 *   packets past the checked length      invalid-request NAK, QP in error
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cu.h"
#include "ferry/error.h"
#include "xport/uroce/rc.h"

#define US 1000ull
#define ME 0x22u        /* the responder's QPN */
#define PEER 0x11u      /* its peer's */
#define EPSN 0x7ffff0u  /* the first PSN the responder expects */
#define RING 8192u      /* the registered ring */
#define GUARD 256u
#define RKEY 0x5eed1234u
#define LKEY 0x10ca1000u /* a local-only region (the sender's pool) */
#define MTU 1024u
#define FILL 0x5a
#define GFILL 0xa5

/* The packets the responder sent. */
static struct {
	int n;
	struct ferry_roce_pkt p[16];
} out;

static int cap_tx(void *ctx, const struct ferry_roce_pkt *p)
{
	(void)ctx;
	if (out.n < 16)
		out.p[out.n] = *p;
	out.n++;
	return 0;
}

struct resp {
	struct ferry_rc_pd *pd;
	struct ferry_rc_qp *qp;
	const struct ferry_rc_counters *c;
	uint8_t *mem, *ring, *local; /* ring and local, each with guards */
	uint64_t now;
	uint8_t pay[2 * MTU];
};

static bool all_bytes(const uint8_t *p, size_t len, uint8_t v)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != v)
			return false;
	return true;
}

/* Ring, local region and every guard byte as they were set up. */
static bool untouched(const struct resp *r)
{
	return all_bytes(r->mem, GUARD, GFILL) &&
	       all_bytes(r->ring, RING, FILL) &&
	       all_bytes(r->ring + RING, GUARD, GFILL) &&
	       all_bytes(r->local, RING, FILL) &&
	       all_bytes(r->local + RING, GUARD, GFILL);
}

static struct resp *resp_new(void)
{
	struct resp *r = calloc(1, sizeof(*r));
	struct ferry_roce_addr me = { { 2, 0, 0, 0, 0, 2 }, 0x0a000002 };
	struct ferry_roce_addr peer = { { 2, 0, 0, 0, 0, 1 }, 0x0a000001 };
	struct ferry_rc_attr a = {
		.mtu = MTU, .sq_depth = 16, .rq_depth = 16, .window_pkts = 32,
		.ack_every = 16, .ack_delay_ns = 20 * US, .rto_ns = 400 * US,
		.retry_limit = 7, .rnr_retry_limit = 7, .qpn = ME,
		.tx = cap_tx,
	};

	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	r->mem = malloc(3 * GUARD + 2 * RING);
	CU_ASSERT_PTR_NOT_NULL_FATAL(r->mem);
	memset(r->mem, GFILL, 3 * GUARD + 2 * RING);
	r->ring = r->mem + GUARD;
	r->local = r->ring + RING + GUARD;
	memset(r->ring, FILL, RING);
	memset(r->local, FILL, RING);
	memset(r->pay, 0x33, sizeof(r->pay));
	r->now = 1000 * US;
	CU_ASSERT_EQUAL_FATAL(ferry__rc_pd_create(4, &r->pd), 0);
	CU_ASSERT_EQUAL_FATAL(ferry__rc_reg_mr(r->pd, r->ring, RING,
					       FERRY_ACCESS_REMOTE_WRITE, RKEY),
			      0);
	CU_ASSERT_EQUAL_FATAL(ferry__rc_reg_mr(r->pd, r->local, RING,
					       FERRY_ACCESS_LOCAL, LKEY), 0);
	a.pd = r->pd;
	CU_ASSERT_EQUAL_FATAL(ferry__rc_create(&a, &r->qp), 0);
	for (uint64_t i = 0; i < 4; i++)
		CU_ASSERT_EQUAL(ferry__rc_post_recv(r->qp, NULL, 0, i), 0);
	CU_ASSERT_EQUAL_FATAL(ferry__rc_connect(r->qp, PEER, 0x100, EPSN, &me,
						&peer, 0), 0);
	r->c = ferry__rc_counters(r->qp);
	memset(&out, 0, sizeof(out));
	return r;
}

static void resp_free(struct resp *r)
{
	ferry__rc_destroy(r->qp);
	ferry__rc_pd_destroy(r->pd);
	free(r->mem);
	free(r);
}

/* A request from the peer: RETH fields for FIRST/ONLY, AckReq set. */
static void req(struct resp *r, uint8_t op, uint32_t qpn, uint32_t psn,
		uint32_t rkey, uint64_t va, uint32_t dma_len, uint32_t len)
{
	struct ferry_roce_pkt p = {
		.opcode = op, .dest_qp = qpn, .psn = psn & FERRY_PSN_MASK,
		.ackreq = true, .pkey = 0xffff, .rkey = rkey, .va = va,
		.dma_len = dma_len, .imm = 0xfeed, .payload = r->pay,
		.len = len,
	};

	CU_ASSERT_FATAL(len <= sizeof(r->pay));
	ferry__rc_input(r->qp, &p, r->now);
	r->now += US;
	ferry__rc_progress(r->qp, r->now);
}

/* The i-th packet sent back is an AETH with this syndrome and PSN. */
static bool aeth(int i, uint8_t syn, uint32_t psn)
{
	return out.n > i && i < 16 && out.p[i].opcode == FERRY_OP_ACK &&
	       out.p[i].dest_qp == PEER && out.p[i].syndrome == syn &&
	       out.p[i].psn == (psn & FERRY_PSN_MASK);
}

/* A refused write ended the QP: -FERRY_EBOUNDS with a reason, receives
 * flushed, later requests (even good ones) dropped, the NAK said again
 * when the peer retries the refused PSN. */
static void check_torn_down(struct resp *r, uint32_t psn, int err)
{
	struct ferry_rc_wc wc;
	int n = out.n, rc;

	CU_ASSERT_EQUAL(ferry__rc_state(r->qp), FERRY_RC_ERROR);
	CU_ASSERT_PTR_NOT_NULL(ferry__rc_error(r->qp));
	while ((rc = ferry__rc_poll(r->qp, &wc, 1)) == 1)
		CU_ASSERT_EQUAL(wc.status, -ECANCELED);
	CU_ASSERT_EQUAL(rc, err);
	req(r, FERRY_OP_WRITE_ONLY, ME, EPSN + 1, RKEY, 0, 64, 64);
	CU_ASSERT(out.n == n && r->c->state_drops == 1);
	req(r, FERRY_OP_WRITE_ONLY, ME, psn, RKEY, 0, 64, 64);
	CU_ASSERT(out.n == n + 1 && aeth(n, out.p[0].syndrome, psn));
	CU_ASSERT(untouched(r));
}

/* Wrong rkey, a local-only region's key, the right key with no rights:
 * remote access error NAK, nothing written, session torn down. */
static void rkey_case(uint32_t rkey)
{
	struct resp *r = resp_new();

	req(r, FERRY_OP_WRITE_ONLY_IMM, ME, EPSN, rkey, 0, 512, 512);
	CU_ASSERT(untouched(r));
	CU_ASSERT_EQUAL(out.n, 1);
	CU_ASSERT(aeth(0, FERRY_AETH_NAK_ACCESS, EPSN));
	CU_ASSERT(r->c->access_errors == 1 && r->c->tx_nak_access == 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(ferry__rc_error(r->qp),
				      "nothing was written"));
	check_torn_down(r, EPSN, -FERRY_EBOUNDS);
	resp_free(r);
}

static void test_wrong_rkey(void)
{
	rkey_case(RKEY ^ 1);      /* one bit off */
	rkey_case(0);             /* ferry never hands out 0 */
	rkey_case(LKEY);          /* the local-only region */
	rkey_case(~RKEY);
}

/* [va, va + dma_len) not inside the ring: refused on the first packet,
 * before a byte lands, however the numbers are put. */
static void bounds_case(uint8_t op, uint64_t va, uint32_t dma_len,
			uint32_t len, bool raw)
{
	struct resp *r = resp_new();

	if (raw) /* va is relative to the ring's virtual address */
		va += (uint64_t)(uintptr_t)r->ring;
	req(r, op, ME, EPSN, RKEY, va, dma_len, len);
	CU_ASSERT(untouched(r));
	CU_ASSERT(out.n == 1 && aeth(0, FERRY_AETH_NAK_ACCESS, EPSN));
	CU_ASSERT(r->c->access_errors == 1 && r->c->tx_nak_access == 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(ferry__rc_error(r->qp),
				      "outside the registered region"));
	check_torn_down(r, EPSN, -FERRY_EBOUNDS);
	resp_free(r);
}

static void test_out_of_bounds(void)
{
	const uint8_t o = FERRY_OP_WRITE_ONLY, f = FERRY_OP_WRITE_FIRST;

	bounds_case(o, RING, 1, 1, false);            /* starts at the end */
	bounds_case(o, RING - 100, 101, 101, false);  /* one byte past it */
	bounds_case(o, RING + GUARD, 16, 16, false);  /* beyond the guard */
	bounds_case(o, UINT64_MAX - 15, 64, 64, false); /* va + len wraps */
	bounds_case(o, 1ull << 63, 64, 64, false);
	/* a multi-packet write whose first packet fits but the whole does
	 * not: refused at FIRST, so not even the first MTU lands */
	bounds_case(f, RING - MTU, 2 * MTU, MTU, false);
	bounds_case(f, 0, UINT32_MAX, MTU, false);
	/* the ring's virtual address, as a verbs peer without zero-based
	 * registration would send it: the va is an offset into the ring,
	 * so an address is far out of bounds, never a way in */
	bounds_case(o, 0, 64, 64, true);
	bounds_case(o, 100, 64, 64, true);
}

/* A packet for a QP number that is not this QP's: dropped without an
 * answer (IBA: silently), counted, and the QP carries on. */
static void test_wrong_qp(void)
{
	struct resp *r = resp_new();
	struct ferry_rc_wc wc;

	req(r, FERRY_OP_WRITE_ONLY_IMM, ME ^ 1, EPSN, RKEY, 0, 512, 512);
	req(r, FERRY_OP_WRITE_ONLY, 0xffffff, EPSN, RKEY, 0, 512, 512);
	req(r, FERRY_OP_WRITE_ONLY, PEER, EPSN, RKEY, 0, 512, 512);
	CU_ASSERT(untouched(r));
	CU_ASSERT_EQUAL(out.n, 0);
	CU_ASSERT(r->c->bad_qpn == 3 && r->c->rx_req == 0 &&
		  r->c->access_errors == 0);
	CU_ASSERT_EQUAL(ferry__rc_state(r->qp), FERRY_RC_RTS);
	CU_ASSERT_EQUAL(ferry__rc_poll(r->qp, &wc, 1), 0);
	/* the real peer's write at the same PSN still lands */
	req(r, FERRY_OP_WRITE_ONLY_IMM, ME, EPSN, RKEY, 100, 512, 512);
	CU_ASSERT(all_bytes(r->ring + 100, 512, 0x33) &&
		  all_bytes(r->ring, 100, FILL) &&
		  all_bytes(r->ring + 612, RING - 612, FILL));
	CU_ASSERT(out.n == 1 && aeth(0, FERRY_AETH_ACK(0x1f), EPSN));
	CU_ASSERT_EQUAL_FATAL(ferry__rc_poll(r->qp, &wc, 1), 1);
	CU_ASSERT(wc.status == 0 && wc.op == FERRY_RC_WC_RECV_WRITE_IMM &&
		  wc.offset == 100 && wc.byte_len == 512 && wc.imm == 0xfeed);
	resp_free(r);
}

/* A copy of a request already done (a duplicate, or one from long ago):
 * acknowledged again, never executed again; the QP carries on. */
static void test_stale_psn(void)
{
	struct resp *r = resp_new();
	struct ferry_rc_wc wc;

	req(r, FERRY_OP_WRITE_ONLY_IMM, ME, EPSN, RKEY, 0, 256, 256);
	CU_ASSERT(out.n == 1 && aeth(0, FERRY_AETH_ACK(0x1f), EPSN));
	CU_ASSERT_EQUAL_FATAL(ferry__rc_poll(r->qp, &wc, 1), 1);
	memset(r->ring, FILL, RING); /* the application consumed it */
	/* the same packet again, then ones from further back (the PSNs
	 * wrap at 2^24: EPSN is near the top on purpose) */
	req(r, FERRY_OP_WRITE_ONLY_IMM, ME, EPSN, RKEY, 0, 256, 256);
	req(r, FERRY_OP_WRITE_ONLY, ME, EPSN - 1, RKEY, 0, 256, 256);
	req(r, FERRY_OP_WRITE_ONLY, ME, EPSN - 0x7fffff, RKEY, 0, 256, 256);
	CU_ASSERT(untouched(r));
	CU_ASSERT(r->c->dup_pkts == 3 && r->c->access_errors == 0);
	CU_ASSERT(out.n == 4 && aeth(1, FERRY_AETH_ACK(0x1f), EPSN) &&
		  aeth(2, FERRY_AETH_ACK(0x1f), EPSN) &&
		  aeth(3, FERRY_AETH_ACK(0x1f), EPSN));
	/* no receive was consumed for the copies */
	CU_ASSERT_EQUAL(ferry__rc_poll(r->qp, &wc, 1), 0);
	/* a duplicate with a bad rkey or range is not checked again either:
	 * it was executed (or refused) the first time */
	req(r, FERRY_OP_WRITE_ONLY, ME, EPSN, RKEY ^ 1, RING, 64, 64);
	CU_ASSERT(untouched(r) && r->c->dup_pkts == 4 &&
		  ferry__rc_state(r->qp) == FERRY_RC_RTS);
	/* and the next new request lands */
	req(r, FERRY_OP_WRITE_ONLY, ME, EPSN + 1, RKEY, RING - 64, 64, 64);
	CU_ASSERT(all_bytes(r->ring + RING - 64, 64, 0x33) &&
		  all_bytes(r->ring + RING, GUARD, GFILL));
	CU_ASSERT(aeth(5, FERRY_AETH_ACK(0x1f), EPSN + 1));
	resp_free(r);
}

/* A request ahead of the expected PSN (a gap: lost packets, or an
 * injected guess): dropped, one sequence NAK naming the expected PSN until
 * it arrives; the QP carries on. */
static void test_future_psn(void)
{
	struct resp *r = resp_new();

	req(r, FERRY_OP_WRITE_ONLY, ME, EPSN + 5, RKEY, 0, 64, 64);
	CU_ASSERT(untouched(r));
	CU_ASSERT(out.n == 1 && aeth(0, FERRY_AETH_NAK_SEQ, EPSN));
	CU_ASSERT(r->c->oow_drops == 1 && r->c->tx_nak_seq == 1);
	/* more of the gap: dropped, no second NAK; rkey and range are not
	 * even looked at */
	req(r, FERRY_OP_WRITE_ONLY, ME, EPSN + 6, RKEY ^ 1, RING, 64, 64);
	req(r, FERRY_OP_WRITE_ONLY, ME, EPSN + 0x7fffff, RKEY, 0, 64, 64);
	CU_ASSERT(untouched(r));
	CU_ASSERT(out.n == 1 && r->c->oow_drops == 3 &&
		  r->c->tx_nak_seq == 1 && r->c->access_errors == 0);
	CU_ASSERT_EQUAL(ferry__rc_state(r->qp), FERRY_RC_RTS);
	/* the expected PSN arrives: executed, ACKed; a new gap NAKs anew */
	req(r, FERRY_OP_WRITE_ONLY, ME, EPSN, RKEY, 0, 64, 64);
	CU_ASSERT(all_bytes(r->ring, 64, 0x33) && out.n == 2 &&
		  aeth(1, FERRY_AETH_ACK(0x1f), EPSN));
	req(r, FERRY_OP_WRITE_ONLY, ME, EPSN + 9, RKEY, 64, 64, 64);
	CU_ASSERT(out.n == 3 && aeth(2, FERRY_AETH_NAK_SEQ, EPSN + 1));
	CU_ASSERT(all_bytes(r->ring + 64, RING - 64, FILL));
	resp_free(r);
}

/* Once a write is checked, the packets after its FIRST cannot write more
 * than its RETH said: a MIDDLE or LAST that would run past it, or one
 * without a FIRST, is an invalid request and ends the QP. */
static void test_continuation_bounds(void)
{
	struct resp *r = resp_new();

	/* MIDDLE with no FIRST before it */
	req(r, FERRY_OP_WRITE_MIDDLE, ME, EPSN, RKEY, 0, 0, MTU);
	CU_ASSERT(untouched(r) && out.n == 1 &&
		  aeth(0, FERRY_AETH_NAK_INVALID, EPSN));
	CU_ASSERT(r->c->tx_nak_invalid == 1);
	check_torn_down(r, EPSN, -FERRY_EPROTO);
	resp_free(r);

	/* FIRST of 2 MTU at the ring's last 2 MTU, then a LAST longer than
	 * what is left: only the checked FIRST landed */
	r = resp_new();
	req(r, FERRY_OP_WRITE_FIRST, ME, EPSN, RKEY, RING - 2 * MTU, 2 * MTU,
	    MTU);
	CU_ASSERT(all_bytes(r->ring + RING - 2 * MTU, MTU, 0x33));
	memset(r->ring + RING - 2 * MTU, FILL, MTU);
	req(r, FERRY_OP_WRITE_LAST, ME, EPSN + 1, 0, 0, 0, MTU + 4);
	CU_ASSERT(untouched(r));
	CU_ASSERT(aeth(out.n - 1, FERRY_AETH_NAK_INVALID, EPSN + 1));
	CU_ASSERT_EQUAL(ferry__rc_state(r->qp), FERRY_RC_ERROR);
	resp_free(r);

	/* a second MIDDLE where only a LAST fits */
	r = resp_new();
	req(r, FERRY_OP_WRITE_FIRST, ME, EPSN, RKEY, RING - 2 * MTU, 2 * MTU,
	    MTU);
	memset(r->ring + RING - 2 * MTU, FILL, MTU);
	req(r, FERRY_OP_WRITE_MIDDLE, ME, EPSN + 1, 0, 0, 0, MTU);
	CU_ASSERT(untouched(r));
	CU_ASSERT(aeth(out.n - 1, FERRY_AETH_NAK_INVALID, EPSN + 1));
	resp_free(r);
}

/* A region that is deregistered (the session ended) is no longer
 * writable with its old key. */
static void test_dereg(void)
{
	struct resp *r = resp_new();

	CU_ASSERT_EQUAL(ferry__rc_dereg_mr(r->pd, RKEY), 0);
	req(r, FERRY_OP_WRITE_ONLY, ME, EPSN, RKEY, 0, 64, 64);
	CU_ASSERT(untouched(r) && aeth(0, FERRY_AETH_NAK_ACCESS, EPSN));
	CU_ASSERT_PTR_NOT_NULL(strstr(ferry__rc_error(r->qp), "unknown rkey"));
	resp_free(r);
}

int main(void)
{
	CU_TestInfo tests[] = {
		{ "wrong rkey", test_wrong_rkey },
		{ "out of bounds", test_out_of_bounds },
		{ "wrong QP", test_wrong_qp },
		{ "stale PSN", test_stale_psn },
		{ "future PSN", test_future_psn },
		{ "continuation bounds", test_continuation_bounds },
		{ "deregistered ring", test_dereg },
		CU_TEST_INFO_NULL,
	};
	return ferry_cu_run("uroce_safety", tests);
}
