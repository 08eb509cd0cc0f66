/* uroce RC engine: completer. Reads the peer's ACKs and NAKs (AETH),
 * retires acknowledged WRs, starts go-back-N and RNR pauses, turns fatal
 * NAKs into the QP's error, and hands completions to ferry__rc_poll(). */
#include <errno.h>

#include "xport/uroce/rc.h"

/* Everything before PSN next is acknowledged. */
static void ack_through(struct ferry_rc_qp *qp, uint32_t next, uint64_t now)
{
	uint32_t old = qp->una;

	if (ferry__psn_diff(next, qp->una) <= 0)
		return;
	qp->una = next;
	ferry__rc_win_acked(qp, old, next, now);
	qp->retries = qp->rnr_retries = 0;
	qp->nak_obeyed = false;
	while (qp->sq_acked != qp->sq_tail) {
		const struct ferry__rc_swqe *w = ferry__rc_sq(qp, qp->sq_acked);

		if (ferry__psn_diff(next, ferry__psn_add(w->first_psn,
							 w->npkts)) < 0)
			break;
		qp->sq_acked++;
	}
	if (ferry__psn_diff(qp->snd_psn, next) < 0) /* acked before resent */
		ferry__rc_rewind(qp);
	if (next == qp->snd_max)
		qp->timer_on = false;
	else
		qp->rto_at = now + ferry__rc_rto(qp);
}

static void rnr_nak(struct ferry_rc_qp *qp, const struct ferry_roce_pkt *p,
		    uint64_t now)
{
	qp->cnt.rx_nak_rnr++;
	if (qp->rnr_wait && p->psn == qp->una) { /* a copy of the same NAK */
		qp->cnt.ack_stale++;
		return;
	}
	ack_through(qp, p->psn, now);
	if (++qp->rnr_retries > qp->attr.rnr_retry_limit) {
		ferry__rc_fail(qp, -FERRY_ETIMEOUT, true,
			       "peer QP 0x%06x had no receive posted (RNR NAK) "
			       "%u times in a row for PSN 0x%06x",
			       qp->tmpl.dest_qp, qp->rnr_retries, p->psn);
		return;
	}
	ferry__rc_rewind(qp);
	qp->rnr_wait = true;
	qp->rnr_until = now + ferry__rc_rnr_ns(p->syndrome & 0x1f);
	qp->timer_on = false; /* transmit() starts it again */
}

static void seq_nak(struct ferry_rc_qp *qp, const struct ferry_roce_pkt *p,
		    uint64_t now)
{
	qp->cnt.rx_nak_seq++;
	ack_through(qp, p->psn, now);
	if ((qp->nak_obeyed && qp->nak_psn == p->psn) ||
	    (qp->rnr_wait && p->psn == qp->una)) {
		qp->cnt.ack_stale++; /* already going back to this PSN */
		return;
	}
	if (++qp->retries > qp->attr.retry_limit) {
		ferry__rc_fail(qp, -FERRY_ETIMEOUT, true,
			       "peer QP 0x%06x kept missing PSN 0x%06x: %u "
			       "retries without progress (last: sequence NAK)",
			       qp->tmpl.dest_qp, p->psn, qp->attr.retry_limit);
		return;
	}
	ferry__rc_win_loss(qp);
	ferry__rc_rewind(qp);
	qp->nak_obeyed = true;
	qp->nak_psn = p->psn;
	if (qp->timer_on)
		qp->rto_at = now + ferry__rc_rto(qp);
}

/* Invalid request, remote access or remote operational error: the WR
 * holding the NAKed PSN fails and so does the QP. */
static void fatal_nak(struct ferry_rc_qp *qp, const struct ferry_roce_pkt *p,
		      uint64_t now)
{
	const struct ferry__rc_swqe *w;
	uint8_t code = p->syndrome & 0x1f;

	ack_through(qp, p->psn, now);
	w = ferry__rc_sq(qp, qp->sq_acked);
	if (code == (FERRY_AETH_NAK_ACCESS & 0x1f)) {
		qp->cnt.rx_nak_access++;
		ferry__rc_fail(qp, -FERRY_EBOUNDS, true,
			       "peer QP 0x%06x refused RDMA WRITE wr_id %llu "
			       "(rkey 0x%08x, offset %llu, %u bytes): remote "
			       "access error (unknown rkey, no remote-write "
			       "right, or outside the region)",
			       qp->tmpl.dest_qp, (unsigned long long)w->wr_id,
			       w->rkey, (unsigned long long)w->roff, w->len);
		return;
	}
	qp->cnt.rx_nak_other++;
	if (code == (FERRY_AETH_NAK_INVALID & 0x1f))
		ferry__rc_fail(qp, -FERRY_EPROTO, true,
			       "peer QP 0x%06x refused PSN 0x%06x as an "
			       "invalid request (do both ends use path MTU "
			       "%u?)",
			       qp->tmpl.dest_qp, p->psn, qp->attr.mtu);
	else
		ferry__rc_fail(qp, -FERRY_EPEER, true,
			       "peer QP 0x%06x reported NAK code %u for PSN "
			       "0x%06x (remote operational error)",
			       qp->tmpl.dest_qp, code, p->psn);
}

void ferry__rc_comp_input(struct ferry_rc_qp *qp,
			  const struct ferry_roce_pkt *p, uint64_t now_ns)
{
	uint8_t kind = p->syndrome >> 5;
	int32_t behind = ferry__psn_diff(p->psn, qp->una);

	/* An ACK names the last PSN done (una - 1 repeats news), a NAK the
	 * first not done; both only for PSNs this QP has sent. */
	if (ferry__psn_diff(p->psn, qp->snd_max) >= 0 ||
	    behind < (kind == 0 ? -1 : 0)) {
		qp->cnt.ack_stale++;
		return;
	}
	if (kind == 0) {
		qp->cnt.rx_acks++;
		ack_through(qp, ferry__psn_add(p->psn, 1), now_ns);
	} else if (kind == 1) {
		rnr_nak(qp, p, now_ns);
	} else if (p->syndrome == FERRY_AETH_NAK_SEQ) {
		seq_nak(qp, p, now_ns);
	} else if (kind == 3 && (p->syndrome & 0x1f) <= 3) {
		fatal_nak(qp, p, now_ns);
	} else {
		qp->cnt.ack_stale++; /* reserved syndrome */
	}
}

static void wc_send(struct ferry_rc_wc *wc, const struct ferry__rc_swqe *w,
		    int status)
{
	*wc = (struct ferry_rc_wc){ .wr_id = w->wr_id, .byte_len = w->len,
				    .status = status, .op = w->op };
}

static void wc_recv(struct ferry_rc_wc *wc, const struct ferry__rc_rwqe *r,
		    int status)
{
	if (status) {
		*wc = (struct ferry_rc_wc){ .wr_id = r->wr_id, .status = status,
					    .op = FERRY_RC_WC_RECV };
		return;
	}
	*wc = (struct ferry_rc_wc){ .wr_id = r->wr_id, .offset = r->offset,
				    .byte_len = r->byte_len, .imm = r->imm,
				    .op = r->op, .has_imm = r->has_imm };
}

int ferry__rc_poll(struct ferry_rc_qp *qp, struct ferry_rc_wc *wc, int max)
{
	const bool dead = qp->state == FERRY_RC_ERROR;
	const uint32_t sq_end = dead ? qp->sq_tail : qp->sq_acked;
	const uint32_t rq_end = dead ? qp->rq_tail : qp->rq_done;
	int n = 0;

	if (max < 0 || (max && !wc))
		return -EINVAL;
	while (n < max && qp->sq_head != sq_end) {
		uint32_t i = qp->sq_head++;
		const struct ferry__rc_swqe *w = ferry__rc_sq(qp, i);

		if ((int32_t)(i - qp->sq_acked) < 0) {
			if (w->signaled)
				wc_send(&wc[n++], w, 0);
		} else {
			wc_send(&wc[n++], w,
				qp->sq_blame && i == qp->sq_fail ? qp->err
								 : -ECANCELED);
		}
	}
	while (n < max && qp->rq_head != rq_end) {
		uint32_t i = qp->rq_head++;

		wc_recv(&wc[n++], &qp->rq[i & qp->rq_mask],
			(int32_t)(i - qp->rq_done) < 0 ? 0 : -ECANCELED);
	}
	if (n == 0 && dead)
		return qp->err;
	return n;
}
