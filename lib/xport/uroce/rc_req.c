/* uroce RC engine: requester datapath. Posts writes and sends, cuts them
 * into path-MTU packets inside the window (rc_win.c), and runs the
 * retransmit and RNR timers. No allocation: WRs live in the send ring
 * made at create. */
#include <errno.h>
#include <string.h>

#include "xport/uroce/rc.h"

static int sq_check(const struct ferry_rc_qp *qp)
{
	if (qp->state == FERRY_RC_ERROR)
		return qp->err;
	if (qp->state != FERRY_RC_RTS)
		return -ENOTCONN;
	if (qp->sq_tail - qp->sq_head > qp->sq_mask)
		return -EAGAIN;
	return 0;
}

/* Give the WR at sq_tail its PSNs and make it visible to transmit(). */
static void sq_commit(struct ferry_rc_qp *qp, struct ferry__rc_swqe *w,
		      uint32_t npkts)
{
	w->first_psn = qp->sq_psn;
	w->npkts = npkts;
	qp->sq_psn = ferry__psn_add(qp->sq_psn, npkts);
	qp->sq_tail++;
}

int ferry__rc_post_write(struct ferry_rc_qp *qp, const void *laddr,
			 uint32_t len, uint64_t remote_off, uint32_t rkey,
			 bool with_imm, uint32_t imm, uint64_t wr_id,
			 bool signaled)
{
	struct ferry__rc_swqe *w;
	uint32_t npkts;
	int rc;

	if (len > FERRY_RC_MSG_MAX || (!laddr && len))
		return -EINVAL;
	npkts = len ? (len - 1) / qp->attr.mtu + 1 : 1;
	if (npkts > FERRY_RC_WR_PKTS_MAX)
		return -EINVAL;
	rc = sq_check(qp);
	if (rc)
		return rc;
	w = ferry__rc_sq(qp, qp->sq_tail);
	w->laddr = laddr;
	w->wr_id = wr_id;
	w->roff = remote_off;
	w->len = len;
	w->rkey = rkey;
	w->imm = imm;
	w->op = FERRY_RC_WC_WRITE;
	w->with_imm = with_imm;
	w->signaled = signaled;
	sq_commit(qp, w, npkts);
	return 0;
}

int ferry__rc_post_send(struct ferry_rc_qp *qp, const void *msg, uint32_t len,
			uint64_t wr_id, bool signaled)
{
	struct ferry__rc_swqe *w;
	int rc;

	if (len > FERRY_RC_SEND_MAX || (!msg && len))
		return -EINVAL;
	rc = sq_check(qp);
	if (rc)
		return rc;
	w = ferry__rc_sq(qp, qp->sq_tail);
	if (len)
		memcpy(w->msg, msg, len);
	w->laddr = w->msg;
	w->wr_id = wr_id;
	w->len = len;
	w->op = FERRY_RC_WC_SEND;
	w->with_imm = false;
	w->signaled = signaled;
	sq_commit(qp, w, 1);
	return 0;
}

static uint8_t opcode(const struct ferry__rc_swqe *w, bool first, bool last)
{
	const bool imm = w->with_imm;

	if (w->op == FERRY_RC_WC_SEND)
		return FERRY_OP_SEND_ONLY; /* sends fit one packet */
	if (first && last)
		return imm ? FERRY_OP_WRITE_ONLY_IMM : FERRY_OP_WRITE_ONLY;
	if (first)
		return FERRY_OP_WRITE_FIRST;
	if (last)
		return imm ? FERRY_OP_WRITE_LAST_IMM : FERRY_OP_WRITE_LAST;
	return FERRY_OP_WRITE_MIDDLE;
}

/* Send the packets the window allows, from the cursor on. */
static void transmit(struct ferry_rc_qp *qp, uint64_t now)
{
	const uint32_t mtu = qp->attr.mtu, win = qp->win;
	const uint32_t burst = ferry__rc_pace_burst(qp);
	uint32_t sent = 0; /* a paced burst goes out whole once due */

	while (qp->cur != qp->sq_tail) {
		const struct ferry__rc_swqe *w = ferry__rc_sq(qp, qp->cur);
		uint32_t fly = (uint32_t)ferry__psn_diff(qp->snd_psn, qp->una);
		bool first = qp->cur_pkt == 0;
		bool last = qp->cur_pkt + 1 == w->npkts;
		uint32_t off = qp->cur_pkt * mtu; /* < len <= 2^31 */
		struct ferry_roce_pkt p = qp->tmpl;

		if (fly >= win ||
		    ((!sent || sent >= burst) && ferry__rc_pace_wait(qp, now)))
			break;
		p.opcode = opcode(w, first, last);
		p.ecn = FERRY_ECN_ECT0; /* a bottleneck may mark, not drop */
		p.psn = qp->snd_psn;
		p.len = last ? w->len - off : mtu;
		p.payload = p.len ? w->laddr + off : NULL;
		p.pad = (uint8_t)(-p.len & 3u);
		if (first && w->op == FERRY_RC_WC_WRITE) {
			p.va = w->roff;
			p.rkey = w->rkey;
			p.dma_len = w->len;
		}
		if (last && w->with_imm)
			p.imm = w->imm;
		p.ackreq = last || fly + 1 >= win ||
			   qp->since_ackreq + 1 >= qp->attr.ackreq_every;
		if (qp->attr.tx(qp->attr.tx_ctx, &p)) {
			qp->cnt.tx_busy++;
			break;
		}
		qp->cnt.tx_req++;
		qp->cnt.tx_bytes += p.len;
		ferry__rc_win_sent(qp, p.psn, now);
		ferry__rc_pace_sent(qp, now);
		sent++;
		ferry__rc_dcqcn_sent(qp);
		qp->since_ackreq = p.ackreq ? 0 : qp->since_ackreq + 1;
		if (ferry__psn_diff(p.psn, qp->snd_max) < 0)
			qp->cnt.retx_pkts++;
		else
			qp->snd_max = ferry__psn_add(p.psn, 1);
		qp->snd_psn = ferry__psn_add(p.psn, 1);
		if (last) {
			qp->cur++;
			qp->cur_pkt = 0;
		} else {
			qp->cur_pkt++;
		}
		if (!qp->timer_on) {
			qp->timer_on = true;
			qp->rto_at = now + ferry__rc_rto(qp);
		}
	}
	if (qp->cur == qp->sq_tail)
		qp->app_limited = true; /* all posted work is out */
}

static void timeout(struct ferry_rc_qp *qp, uint64_t now)
{
	qp->cnt.timeouts++;
	if (++qp->retries > qp->attr.retry_limit) {
		ferry__rc_fail(qp, -FERRY_ETIMEOUT, true,
			       "no ACK from peer QP 0x%06x for PSN 0x%06x "
			       "after %u retransmissions %llu us apart: the "
			       "peer is unreachable or not answering",
			       qp->tmpl.dest_qp, qp->una, qp->attr.retry_limit,
			       (unsigned long long)(ferry__rc_rto(qp) / 1000));
		return;
	}
	ferry__rc_rewind(qp);
	ferry__rc_win_timeout(qp);
	qp->nak_obeyed = false;
	qp->rto_at = now + ferry__rc_rto(qp);
}

uint64_t ferry__rc_due(const struct ferry_rc_qp *qp)
{
	uint64_t due = UINT64_MAX;

	if (qp->state != FERRY_RC_RTS)
		return due;
	if (qp->ack_unsent)
		due = qp->ack_at;
	if (qp->rnr_wait)
		return qp->rnr_until < due ? qp->rnr_until : due;
	if (qp->timer_on && qp->rto_at < due)
		due = qp->rto_at;
	if (qp->cur != qp->sq_tail &&
	    (uint32_t)ferry__psn_diff(qp->snd_psn, qp->una) < qp->win) {
		uint64_t go = qp->pace_pps ? qp->pace_at : 0;

		if (go < due)
			due = go;
	}
	return due;
}

void ferry__rc_progress(struct ferry_rc_qp *qp, uint64_t now_ns)
{
	if (qp->state != FERRY_RC_RTS)
		return;
	ferry__rc_resp_progress(qp, now_ns);
	if (qp->rnr_wait) {
		if (now_ns < qp->rnr_until)
			return;
		qp->rnr_wait = false;
	}
	ferry__rc_dcqcn_progress(qp, now_ns);
	if (qp->timer_on && now_ns >= qp->rto_at) {
		timeout(qp, now_ns);
		if (qp->state != FERRY_RC_RTS)
			return;
	}
	transmit(qp, now_ns);
}
