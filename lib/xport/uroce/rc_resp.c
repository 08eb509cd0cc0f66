/* uroce RC engine: responder datapath. Takes every incoming packet, hands
 * ACKs to the completer, and checks, executes and acknowledges requests:
 * PSN order, opcode sequence, lengths, and rkey/bounds/rights on every RDMA
 * WRITE before a byte of it is written. */
#include <errno.h>
#include <string.h>

#include "xport/uroce/rc.h"

int ferry__rc_post_recv(struct ferry_rc_qp *qp, void *buf, uint32_t len,
			uint64_t wr_id)
{
	struct ferry__rc_rwqe *r;

	if (qp->state == FERRY_RC_ERROR)
		return qp->err;
	if (!buf && len)
		return -EINVAL;
	if (qp->rq_tail - qp->rq_head > qp->rq_mask)
		return -EAGAIN;
	r = &qp->rq[qp->rq_tail & qp->rq_mask];
	*r = (struct ferry__rc_rwqe){ .buf = buf, .cap = len, .wr_id = wr_id };
	qp->rq_tail++;
	return 0;
}

static void count_nak(struct ferry_rc_qp *qp, uint8_t syn)
{
	if (syn == FERRY_AETH_NAK_SEQ)
		qp->cnt.tx_nak_seq++;
	else if (syn == FERRY_AETH_NAK_ACCESS)
		qp->cnt.tx_nak_access++;
	else if ((syn >> 5) == 1)
		qp->cnt.tx_nak_rnr++;
	else
		qp->cnt.tx_nak_invalid++;
}

/* Send an ACK or NAK with this QP's MSN. Returns the tx callback's answer. */
static int send_aeth(struct ferry_rc_qp *qp, uint8_t syn, uint32_t psn)
{
	struct ferry_roce_pkt p = qp->tmpl;
	int rc;

	p.opcode = FERRY_OP_ACK;
	p.psn = psn;
	p.syndrome = syn;
	p.msn = qp->msn;
	rc = qp->attr.tx(qp->attr.tx_ctx, &p);
	if (rc) {
		qp->cnt.tx_busy++;
	} else if ((syn >> 5) == 0) {
		qp->cnt.tx_acks++;
	} else {
		count_nak(qp, syn);
		qp->ack_unsent = 0; /* a NAK at epsn acknowledges all before */
	}
	return rc;
}

/* ACK everything before epsn now; if tx is busy, retry at progress. */
static void flush_ack(struct ferry_rc_qp *qp, uint64_t now)
{
	if (send_aeth(qp, FERRY_AETH_ACK(0x1f), ferry__psn_add(qp->epsn,
							       FERRY_PSN_MASK)))
		qp->ack_at = now;
	else
		qp->ack_unsent = 0;
}

/* Coalescing: a packet (new or duplicate) joins the next ACK, which goes
 * now at AckReq or after ack_every packets, else ack_delay after the first
 * packet it covers. */
static void ack_note(struct ferry_rc_qp *qp, bool ackreq, uint64_t now)
{
	if (++qp->ack_unsent == 1)
		qp->ack_at = now + qp->attr.ack_delay_ns;
	if (ackreq || qp->ack_unsent >= qp->attr.ack_every)
		flush_ack(qp, now);
}

void ferry__rc_resp_progress(struct ferry_rc_qp *qp, uint64_t now_ns)
{
	if (qp->ack_unsent && now_ns >= qp->ack_at)
		flush_ack(qp, now_ns);
}

/* A fatal NAK: send it, remember it for retransmissions of that PSN, and
 * put the QP in error. */
static void fatal(struct ferry_rc_qp *qp, uint8_t syn, uint32_t psn)
{
	send_aeth(qp, syn, psn);
	qp->fatal_syn = syn;
	qp->fatal_psn = psn;
}

static void invalid(struct ferry_rc_qp *qp, const struct ferry_roce_pkt *p,
		    const char *what)
{
	fatal(qp, FERRY_AETH_NAK_INVALID, p->psn);
	ferry__rc_fail(qp, -FERRY_EPROTO, false,
		       "peer QP 0x%06x sent an invalid request (opcode 0x%02x, "
		       "PSN 0x%06x, %u bytes, path MTU %u): %s",
		       qp->tmpl.dest_qp, p->opcode, p->psn, p->len,
		       qp->attr.mtu, what);
}

static const struct ferry__rc_mr *find_mr(const struct ferry_rc_pd *pd,
					  uint32_t rkey)
{
	for (unsigned i = 0; i < pd->n; i++)
		if (pd->mr[i].used && pd->mr[i].rkey == rkey)
			return &pd->mr[i];
	return NULL;
}

/* The RETH check: the whole [va, va + dma_len) inside a region the peer
 * may write. On failure: remote-access NAK, error, false. */
static bool write_allowed(struct ferry_rc_qp *qp,
			  const struct ferry_roce_pkt *p,
			  const struct ferry__rc_mr *mr)
{
	const char *what;

	if (!mr)
		what = "unknown rkey";
	else if (!(mr->access & FERRY_ACCESS_REMOTE_WRITE))
		what = "the region is not open to remote writes";
	else if (p->va > mr->len || p->dma_len > mr->len - p->va)
		what = "outside the registered region";
	else
		return true;
	qp->cnt.access_errors++;
	fatal(qp, FERRY_AETH_NAK_ACCESS, p->psn);
	ferry__rc_fail(qp, -FERRY_EBOUNDS, false,
		       "peer QP 0x%06x: RDMA WRITE refused, %s (rkey 0x%08x, "
		       "offset %llu, %u bytes, region %zu bytes); nothing "
		       "was written",
		       qp->tmpl.dest_qp, what, p->rkey,
		       (unsigned long long)p->va, p->dma_len,
		       mr ? mr->len : (size_t)0);
	return false;
}

static void rnr(struct ferry_rc_qp *qp, const struct ferry_roce_pkt *p)
{
	qp->cnt.rnr++;
	send_aeth(qp, FERRY_AETH_RNR_NAK(qp->rnr_code), p->psn);
}

/* The request at epsn is done: expect the next. */
static void advance(struct ferry_rc_qp *qp, const struct ferry_roce_pkt *p,
		    uint64_t now)
{
	qp->epsn = ferry__psn_add(qp->epsn, 1);
	qp->nak_sent = false;
	ack_note(qp, p->ackreq, now);
}

static void do_write(struct ferry_rc_qp *qp, const struct ferry_roce_pkt *p,
		     uint64_t now)
{
	const uint8_t op = p->opcode;
	const uint32_t mtu = qp->attr.mtu;
	bool first = op == FERRY_OP_WRITE_FIRST || op == FERRY_OP_WRITE_ONLY ||
		     op == FERRY_OP_WRITE_ONLY_IMM;
	bool last = op != FERRY_OP_WRITE_FIRST && op != FERRY_OP_WRITE_MIDDLE;
	bool imm = op == FERRY_OP_WRITE_LAST_IMM ||
		   op == FERRY_OP_WRITE_ONLY_IMM;

	if (first == qp->in_write) {
		invalid(qp, p, first ? "a new request inside an RDMA WRITE"
				     : "RDMA WRITE MIDDLE/LAST without FIRST");
		return;
	}
	if (first) {
		const struct ferry__rc_mr *mr = find_mr(qp->attr.pd, p->rkey);

		if (!write_allowed(qp, p, mr))
			return;
		if (last ? p->len != p->dma_len
			 : p->len != mtu || p->dma_len <= mtu) {
			invalid(qp, p, "payload length does not match the "
				       "RETH length and the path MTU");
			return;
		}
		qp->w_dst = mr->base + p->va;
		qp->w_va = p->va;
		qp->w_len = qp->w_left = p->dma_len;
	} else if (last ? p->len != qp->w_left
			: p->len != mtu || p->len >= qp->w_left) {
		invalid(qp, p, "payload length does not match the rest of "
			       "the RDMA WRITE and the path MTU");
		return;
	}
	if (imm && qp->rq_done == qp->rq_tail) {
		rnr(qp, p); /* this packet is not executed; the peer retries */
		return;
	}
	if (p->len)
		memcpy(qp->w_dst, p->payload, p->len);
	qp->w_dst += p->len;
	qp->w_left -= p->len;
	qp->in_write = !last;
	if (last) {
		qp->msn = ferry__psn_add(qp->msn, 1);
		if (imm) {
			struct ferry__rc_rwqe *r =
				&qp->rq[qp->rq_done++ & qp->rq_mask];
			r->op = FERRY_RC_WC_RECV_WRITE_IMM;
			r->offset = qp->w_va;
			r->byte_len = qp->w_len;
			r->imm = p->imm;
			r->has_imm = true;
		}
	}
	advance(qp, p, now);
}

static void do_send(struct ferry_rc_qp *qp, const struct ferry_roce_pkt *p,
		    uint64_t now)
{
	struct ferry__rc_rwqe *r;

	if (p->opcode != FERRY_OP_SEND_ONLY &&
	    p->opcode != FERRY_OP_SEND_ONLY_IMM) {
		invalid(qp, p, "multi-packet SENDs are not supported");
		return;
	}
	if (qp->in_write) {
		invalid(qp, p, "a new request inside an RDMA WRITE");
		return;
	}
	if (qp->rq_done == qp->rq_tail) {
		rnr(qp, p);
		return;
	}
	r = &qp->rq[qp->rq_done & qp->rq_mask];
	if (p->len > r->cap) {
		invalid(qp, p, "SEND larger than the posted receive buffer");
		return;
	}
	if (p->len)
		memcpy(r->buf, p->payload, p->len);
	r->op = FERRY_RC_WC_RECV;
	r->byte_len = p->len;
	r->has_imm = p->opcode == FERRY_OP_SEND_ONLY_IMM;
	r->imm = r->has_imm ? p->imm : 0;
	qp->rq_done++;
	qp->msn = ferry__psn_add(qp->msn, 1);
	advance(qp, p, now);
}

static void request(struct ferry_rc_qp *qp, const struct ferry_roce_pkt *p,
		    uint64_t now)
{
	int32_t d = ferry__psn_diff(p->psn, qp->epsn);

	qp->cnt.rx_req++;
	if (p->ecn == FERRY_ECN_CE)
		ferry__rc_dcqcn_marked(qp, now);
	if (d < 0) { /* done before: acknowledge again, never re-execute */
		qp->cnt.dup_pkts++;
		ack_note(qp, p->ackreq, now);
		return;
	}
	if (d > 0) { /* a gap: one NAK until epsn arrives */
		qp->cnt.oow_drops++;
		if (!qp->nak_sent &&
		    send_aeth(qp, FERRY_AETH_NAK_SEQ, qp->epsn) == 0)
			qp->nak_sent = true;
		return;
	}
	if (p->len > qp->attr.mtu) {
		invalid(qp, p, "payload larger than the path MTU");
		return;
	}
	if (p->opcode <= FERRY_OP_SEND_ONLY_IMM)
		do_send(qp, p, now);
	else if (p->opcode <= FERRY_OP_WRITE_ONLY_IMM)
		do_write(qp, p, now);
	else
		invalid(qp, p, "opcode not supported");
}

void ferry__rc_input(struct ferry_rc_qp *qp, const struct ferry_roce_pkt *p,
		     uint64_t now_ns)
{
	if (p->dest_qp != qp->attr.qpn) {
		qp->cnt.bad_qpn++;
		return;
	}
	if (qp->state != FERRY_RC_RTS) {
		qp->cnt.state_drops++;
		/* the requester may have lost our fatal NAK: say it again */
		if (qp->fatal_syn && p->opcode != FERRY_OP_ACK &&
		    p->psn == qp->fatal_psn)
			send_aeth(qp, qp->fatal_syn, qp->fatal_psn);
		return;
	}
	if (p->opcode == FERRY_OP_ACK)
		ferry__rc_comp_input(qp, p, now_ns);
	else if (p->opcode == FERRY_OP_CNP)
		ferry__rc_dcqcn_cnp(qp, now_ns);
	else
		request(qp, p, now_ns);
}
