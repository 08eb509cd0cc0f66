/* libFuzzer target for what a hostile host on the fabric can send a uroce
 * receiver: Ethernet frames through the RoCEv2 parser (wire.c) into an RC
 * queue pair (rc_resp.c, and rc_comp.c for ACKs) whose peer may write
 * one small region.
 *
 * Input: records of [flags u8][microseconds u8][length u16 LE][frame].
 * Byte 0 of the input picks the QP's path MTU and the peer's start PSN.
 * Flags help the fuzzer past what it cannot guess cheaply (an attacker can
 * compute all of it): FIX_LEN rewrites the IPv4 and UDP lengths, the IPv4
 * checksum and the ICRC; SET_QPN and SET_PSN aim the parsed packet at this
 * QP at the PSN it expects (requests) or the oldest unacked (ACKs); RECV
 * posts a receive first; BUSY makes the tx callback refuse packets; POLL
 * reaps completions after.
 *
 * After every record: the bytes around the writable region and the
 * receive buffers (guards) and the whole read-only region are unchanged,
 * the QP's state and counters are consistent, every packet the QP sent
 * builds and parses back to itself, and every completion points inside
 * the region or its receive buffer. ASan catches the rest.
 *
 * Every frame also goes through rocedump's decoder (lib/rocedump), which
 * reads every opcode: it must decode whatever the transport's parser
 * accepts to the same fields and ICRC verdict, and say why for anything
 * it cannot decode.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "ferry/error.h"
#include "ferry/rocedump.h"
#include "xport/uroce/rc.h"
#include "xport/roce/wire.h"

/* Keep in step with gen_seeds.py. */
#define QPN 0x000123u       /* this (receiving) QP */
#define PEER_QPN 0x000456u  /* the sender's */
#define RKEY 0x5eed0001u    /* the region the peer may write */
#define RKEY_RO 0x5eed0002u /* a region registered without remote write */
#define MY_PSN 0x000200u    /* this QP's first request PSN */
#define REGION 1000u
#define RO_LEN 512u
#define GUARD 64u
#define NRECV 4u
#define RECV_CAP 64u
#define FILL_GUARD 0xa5
#define FILL_RO 0x5a

enum {
	FIX_LEN = 1 << 0,
	SET_QPN = 1 << 1,
	SET_PSN = 1 << 2,
	RECV = 1 << 3,
	BUSY = 1 << 4,
	POLL = 1 << 5,
};

static const uint32_t mtus[4] = { 256, 512, 1024, 4096 };
static const uint32_t peer_psn0[4] = { 0x000010, 0xfffffe, 0x7ffffe, 0 };

struct ctx {
	uint8_t *mem;        /* GUARD | region | GUARD */
	uint8_t *ro;         /* the read-only region */
	uint8_t *rmem;       /* NRECV x (GUARD | RECV_CAP) | GUARD */
	uint8_t src[1200];   /* what this QP's own writes send */
	unsigned nrecv;
	bool busy;
	uint32_t mtu;
	uint64_t sent;
};

static struct ctx cx;

static uint8_t *region(void)
{
	return cx.mem + GUARD;
}

static uint8_t *recv_buf(unsigned i)
{
	return cx.rmem + GUARD + i * (GUARD + RECV_CAP);
}

/* memcmp, not a loop: libFuzzer would trace every compare in one */
static bool all(const uint8_t *p, size_t n, uint8_t v)
{
	static uint8_t ref[RO_LEN];

	if (ref[0] != v)
		memset(ref, v, sizeof(ref));
	return n <= sizeof(ref) && memcmp(p, ref, n) == 0;
}

static void check_memory(void)
{
	CHECK(all(cx.mem, GUARD, FILL_GUARD));
	CHECK(all(cx.mem + GUARD + REGION, GUARD, FILL_GUARD));
	CHECK(all(cx.ro, RO_LEN, FILL_RO));
	for (unsigned i = 0; i <= NRECV; i++)
		CHECK(all(cx.rmem + i * (GUARD + RECV_CAP), GUARD, FILL_GUARD));
}

/* Every packet the QP sends must be one the wire code can build, and must
 * parse back to the same fields. */
static int tx(void *arg, const struct ferry_roce_pkt *p)
{
	static uint8_t frame[4096 + FERRY_ROCE_HDR_MAX + FERRY_ROCE_TRAILER_MAX];
	struct ferry_roce_pkt q;
	size_t len;
	bool icrc_ok;

	(void)arg;
	if (cx.busy)
		return -EAGAIN;
	CHECK(p->dest_qp == PEER_QPN);
	CHECK(p->psn <= FERRY_PSN_MASK);
	CHECK(p->len <= cx.mtu);
	if (p->opcode == FERRY_OP_ACK) {
		CHECK(p->len == 0 && p->msn <= FERRY_PSN_MASK);
	} else if (p->opcode == FERRY_OP_CNP) { /* a marked request came */
		CHECK(p->len == FERRY_ROCE_CNP_LEN && p->becn && p->psn == 0);
	} else {
		/* our own requests read only what was posted: the write
		 * from cx.src[0..600), the send from the QP's copy */
		if (p->opcode <= FERRY_OP_SEND_ONLY_IMM)
			CHECK(p->len <= FERRY_RC_SEND_MAX);
		else
			CHECK(p->len == 0 ||
			      (p->payload >= cx.src &&
			       p->payload + p->len <= cx.src + 600));
	}
	CHECK(ferry__roce_build(frame, sizeof(frame), p, &len) == 0);
	CHECK(ferry__roce_parse(frame, len, 0, &q, &icrc_ok, NULL) == 0);
	CHECK(icrc_ok);
	CHECK(q.opcode == p->opcode && q.psn == p->psn &&
	      q.dest_qp == p->dest_qp && q.len == p->len &&
	      q.ackreq == p->ackreq && q.syndrome == p->syndrome &&
	      q.msn == (ferry__roce_has_aeth(p->opcode) ? p->msn : 0));
	CHECK(p->len == 0 || memcmp(q.payload, p->payload, p->len) == 0);
	cx.sent++;
	return 0;
}

static void setup_memory(void)
{
	if (!cx.mem) {
		cx.mem = malloc(REGION + 2 * GUARD);
		cx.ro = malloc(RO_LEN);
		cx.rmem = malloc(NRECV * (GUARD + RECV_CAP) + GUARD);
		CHECK(cx.mem && cx.ro && cx.rmem);
		for (size_t i = 0; i < sizeof(cx.src); i++)
			cx.src[i] = (uint8_t)(i * 7);
	}
	memset(cx.mem, FILL_GUARD, REGION + 2 * GUARD);
	memset(region(), 0, REGION);
	memset(cx.ro, FILL_RO, RO_LEN);
	memset(cx.rmem, FILL_GUARD, NRECV * (GUARD + RECV_CAP) + GUARD);
	for (unsigned i = 0; i < NRECV; i++)
		memset(recv_buf(i), 0, RECV_CAP);
}

/* The lengths, IPv4 checksum and ICRC a sender would write, where the
 * frame is laid out enough to have them. */
static void fix_frame(uint8_t *f, size_t len)
{
	uint8_t *ip = f + FERRY_ROCE_ETH_LEN;
	size_t ihl, tot;
	uint32_t crc;

	if (len < FERRY_ROCE_ETH_LEN + 20 || len - FERRY_ROCE_ETH_LEN > 0xffff)
		return;
	ihl = (size_t)(ip[0] & 0x0f) * 4;
	tot = len - FERRY_ROCE_ETH_LEN;
	if (ihl < 20 || tot < ihl + FERRY_ROCE_UDP_LEN)
		return;
	ip[2] = (uint8_t)(tot >> 8);
	ip[3] = (uint8_t)tot;
	ip[ihl + 4] = (uint8_t)((tot - ihl) >> 8);
	ip[ihl + 5] = (uint8_t)(tot - ihl);
	ip[10] = ip[11] = 0;
	uint16_t cs = ferry__ip4_csum(ip, ihl);
	ip[10] = (uint8_t)(cs >> 8);
	ip[11] = (uint8_t)cs;
	if (ferry__roce_icrc(f, len, &crc) == 0) {
		uint8_t *t = f + len - FERRY_ROCE_ICRC_LEN;

		t[0] = (uint8_t)crc;
		t[1] = (uint8_t)(crc >> 8);
		t[2] = (uint8_t)(crc >> 16);
		t[3] = (uint8_t)(crc >> 24);
	}
}

/* rocedump's decoder on the frame the transport parsed (ret, *p). */
static void decode(const uint8_t *f, size_t len, int ret,
		   const struct ferry_roce_pkt *p, bool icrc_ok)
{
	struct ferry_roce_frame o;

	CHECK(ferry_rocedump_decode(f, len, len, 0, &o) == 0);
	CHECK((o.verdict == FERRY_ROCE_UNDECODABLE) == (o.why && o.why[0]));
	if (o.verdict == FERRY_ROCE_DECODED)
		CHECK(o.transport && o.op &&
		      (uint64_t)o.payload_off + o.payload_len + o.padcnt + 4 <=
		      len && o.icrc != FERRY_ROCE_ICRC_UNCHECKED);
	if (ret == -ENOMSG && len >= 14 && f[12] == 0x08 && f[13] == 0x00)
		CHECK(o.verdict == FERRY_ROCE_OTHER);
	if (ret)
		return;
	CHECK(o.verdict == FERRY_ROCE_DECODED);
	CHECK(o.opcode == p->opcode && o.dest_qp == p->dest_qp &&
	      o.psn == p->psn && o.ackreq == p->ackreq);
	/* a CNP's 16 reserved bytes: a header to rocedump, the payload to
	 * the transport */
	CHECK(p->opcode == FERRY_OP_CNP ||
	      (o.payload_len == p->len && f + o.payload_off == p->payload));
	CHECK(!(o.hdrs & FERRY_ROCE_H_RETH) ||
	      (o.va == p->va && o.rkey == p->rkey && o.dma_len == p->dma_len));
	CHECK(!(o.hdrs & FERRY_ROCE_H_AETH) ||
	      (o.syndrome == p->syndrome && o.msn == p->msn));
	CHECK(!(o.hdrs & FERRY_ROCE_H_IMMDT) || o.imm == p->imm);
	CHECK((o.icrc == FERRY_ROCE_ICRC_OK) == icrc_ok);
}

/* The parser's contract on one frame. */
static int parse(const uint8_t *f, size_t len, struct ferry_roce_pkt *p)
{
	const char *why = "unset";
	bool icrc_ok = false;
	uint32_t crc;
	int ret = ferry__roce_parse(f, len, 0, p, &icrc_ok, &why);

	decode(f, len, ret, p, icrc_ok);
	if (ret) {
		CHECK(ret == -ENOMSG || ret == -FERRY_EPROTO);
		CHECK(why && why[0]);
		return ret;
	}
	CHECK(why == NULL);
	CHECK(ferry__roce_to_port(f, len, 0));
	CHECK(ferry__roce_op_valid(p->opcode));
	CHECK(p->dest_qp <= FERRY_PSN_MASK && p->psn <= FERRY_PSN_MASK);
	CHECK(p->pad <= 3 && p->pad == ferry__roce_pad(p->len));
	CHECK(p->payload >= f && p->payload + p->len + p->pad +
					 FERRY_ROCE_ICRC_LEN <= f + len);
	CHECK(!ferry__roce_has_aeth(p->opcode) || p->len == 0);
	CHECK(ferry__roce_icrc(f, len, &crc) == 0);
	const uint8_t *t = p->payload + p->len + p->pad;
	CHECK(icrc_ok == (crc == ((uint32_t)t[0] | (uint32_t)t[1] << 8 |
				  (uint32_t)t[2] << 16 |
				  (uint32_t)t[3] << 24)));
	return 0;
}

static void poll_all(struct ferry_rc_qp *qp)
{
	struct ferry_rc_wc wc[8];
	int n;

	while ((n = ferry__rc_poll(qp, wc, 8)) > 0) {
		for (int i = 0; i < n; i++) {
			const struct ferry_rc_wc *w = &wc[i];

			if (w->status)
				continue;
			if (w->op == FERRY_RC_WC_RECV_WRITE_IMM)
				CHECK(w->offset <= REGION &&
				      w->byte_len <= REGION - w->offset);
			else if (w->op == FERRY_RC_WC_RECV)
				CHECK(w->byte_len <= RECV_CAP);
		}
	}
	CHECK(n == 0 || ferry__rc_state(qp) == FERRY_RC_ERROR);
}

static void check_qp(const struct ferry_rc_qp *qp)
{
	const struct ferry_rc_counters *c = ferry__rc_counters(qp);

	CHECK(qp->epsn <= FERRY_PSN_MASK && qp->msn <= FERRY_PSN_MASK);
	/* (a QP in error reaps its receives past rq_done) */
	CHECK(qp->rq_tail - qp->rq_done <= qp->rq_mask + 1);
	CHECK(qp->rq_tail - qp->rq_head <= qp->rq_mask + 1);
	CHECK(c->access_errors <= c->rx_req);
	if (qp->in_write) {
		CHECK(qp->w_dst >= region() && qp->w_dst <= region() + REGION);
		CHECK(qp->w_left <= (size_t)(region() + REGION - qp->w_dst));
	}
	CHECK((ferry__rc_state(qp) == FERRY_RC_ERROR) ==
	      (ferry__rc_error(qp) != NULL));
}

static struct ferry_rc_qp *qp_new(struct ferry_rc_pd **pdp, uint8_t cfg)
{
	static const struct ferry_roce_addr a = { { 2, 0, 0, 0, 0, 1 },
						  0xc6120001 };
	static const struct ferry_roce_addr b = { { 2, 0, 0, 0, 0, 2 },
						  0xc6120002 };
	struct ferry_rc_attr at = {
		.qpn = QPN, .mtu = mtus[cfg & 3], .sq_depth = 8,
		.rq_depth = NRECV, .window_pkts = 16, .ack_every = 4,
		.ack_delay_ns = 20000, .rto_ns = 400000,
		.rnr_delay_ns = 20000, .retry_limit = 3, .rnr_retry_limit = 3,
		.tx = tx,
	};
	struct ferry_rc_qp *qp;

	CHECK(ferry__rc_pd_create(4, pdp) == 0);
	CHECK(ferry__rc_reg_mr(*pdp, region(), REGION,
			       FERRY_ACCESS_REMOTE_WRITE, RKEY) == 0);
	CHECK(ferry__rc_reg_mr(*pdp, cx.ro, RO_LEN, FERRY_ACCESS_LOCAL,
			       RKEY_RO) == 0);
	at.pd = *pdp;
	cx.mtu = at.mtu;
	CHECK(ferry__rc_create(&at, &qp) == 0);
	CHECK(ferry__rc_connect(qp, PEER_QPN, MY_PSN, peer_psn0[cfg >> 2 & 3],
				&b, &a, 0) == 0);
	/* Something of our own in flight, so that ACKs and NAKs matter. */
	CHECK(ferry__rc_post_write(qp, cx.src, 600, 0, 0xabcd, true, 7, 1,
				   true) == 0);
	CHECK(ferry__rc_post_send(qp, cx.src + 1000, 40, 2, true) == 0);
	return qp;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ferry_rc_pd *pd;
	struct ferry_rc_qp *qp;
	uint64_t now = 1000000;

	if (size < 1)
		return 0;
	setup_memory();
	cx.nrecv = 0;
	cx.busy = false;
	qp = qp_new(&pd, data[0]);
	ferry__rc_progress(qp, now);
	data++;
	size--;

	while (size >= 4) {
		uint8_t flags = data[0];
		size_t len = (size_t)data[2] | (size_t)data[3] << 8;
		struct ferry_roce_pkt p;

		now += (uint64_t)data[1] * 1000;
		data += 4;
		size -= 4;
		if (len > size)
			len = size;
		/* an exact-size copy: reads past the frame are caught */
		uint8_t *f = malloc(len ? len : 1);
		CHECK(f);
		memcpy(f, data, len);
		data += len;
		size -= len;

		if (flags & FIX_LEN)
			fix_frame(f, len);
		if ((flags & RECV) && cx.nrecv < NRECV &&
		    ferry__rc_post_recv(qp, recv_buf(cx.nrecv), RECV_CAP,
					100 + cx.nrecv) == 0)
			cx.nrecv++;
		cx.busy = flags & BUSY;
		if (parse(f, len, &p) == 0) {
			if (flags & SET_QPN)
				p.dest_qp = QPN;
			if (flags & SET_PSN)
				p.psn = p.opcode == FERRY_OP_ACK ? qp->una
								 : qp->epsn;
			ferry__rc_input(qp, &p, now);
		}
		free(f);
		ferry__rc_progress(qp, now);
		if (flags & POLL)
			poll_all(qp);
		check_qp(qp);
		check_memory();
	}
	cx.busy = false;
	ferry__rc_progress(qp, now + 1000000000ull);
	poll_all(qp);
	check_qp(qp);
	check_memory();
	ferry__rc_destroy(qp);
	ferry__rc_pd_destroy(pd);
	return 0;
}
