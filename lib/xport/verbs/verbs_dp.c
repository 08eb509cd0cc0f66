/* verbs transport: datapath (posts and polls). No allocation and no locks
 * of ours; one log line per endpoint when it fails, never per chunk.
 *
 * Send side. Every WR takes an SQ slot until a signalled WR at or after it
 * completes. Signalled WRs go into a ring in posting order (an RC QP
 * completes them in that order): user ones become FERRY_WC_WRITE, the
 * ones signalled only to free slots (every sig_every-th WR) are dropped.
 * A post that finds the SQ full reaps the send CQ until it has room, for
 * at most the session timeout.
 *
 * Receive side. Writes-with-immediate and messages each consume one SRQ
 * buffer and complete on the receiving QP's CQ; the buffers go back to the
 * SRQ in one chained post per batch. The completion of a write carries
 * imm and byte_len but not where the write landed: wc.offset is
 * FERRY_WC_OFFSET_UNKNOWN and the pipeline derives the slot from imm.
 *
 * A sender whose receiver is uroce (attr.family) takes the receiver's
 * first message on each QP as its hello (it reaches nobody) and posts
 * nothing on that QP before it: the first post waits for it. */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "util/util.h"
#include "xport/rocev2.h"
#include "xport/verbs/verbs.h"

#define SPIN_CHECK 1023u /* look at the clock every 1024 empty polls */

static bool cancelled(struct ferry_xport *x)
{
	return atomic_load_explicit(&x->cancelled, memory_order_relaxed);
}

static bool gone(struct verbs_ep *e)
{
	return atomic_load_explicit(&e->peer_gone, memory_order_relaxed);
}

/* The endpoint's first error sticks: every later call returns it. A
 * flush after cancel or after the peer left is the normal end: no log. */
static int ep_fail(struct verbs_ep *e, int err, const char *what,
		   const struct ibv_wc *wc)
{
	if (e->err)
		return e->err;
	e->err = err;
	if (err == -ECANCELED || err == -FERRY_ECLOSED)
		return err;
	if (wc)
		ferry__log(FERRY_LOG_ERR,
			   "verbs: queue pair %u: %s completion failed: %s (vendor error 0x%x): %s",
			   e->idx, what, ibv_wc_status_str(wc->status),
			   wc->vendor_err, ferry_strerror(err));
	else
		ferry__log(FERRY_LOG_ERR, "verbs: queue pair %u: %s: %s",
			   e->idx, what, ferry_strerror(err));
	return err;
}

static int wc_fail(struct ferry_xport *x, struct verbs_ep *e,
		   const struct ibv_wc *wc, const char *what)
{
	return ep_fail(e, ferry__verbs_wc_err(wc->status, cancelled(x)), what,
		       wc);
}

/* Reap the send CQ: advance sig_done and sq_done. Count, or -error. */
static int reap_send(struct ferry_xport *x, struct verbs_ep *e)
{
	struct ibv_wc wc[FERRY__VERBS_POLL_BATCH];
	int n = ibv_poll_cq(e->scq, FERRY__VERBS_POLL_BATCH, wc);

	if (n < 0)
		return ep_fail(e, -EIO, "polling the send CQ", NULL);
	for (int i = 0; i < n; i++) {
		if (wc[i].status != IBV_WC_SUCCESS)
			return wc_fail(x, e, &wc[i], "send");
		if (e->sig_done == e->sig_tail || wc[i].wr_id != e->sig_done)
			return ep_fail(e, -EIO, "send completion out of order",
				       NULL);
		e->sq_done = e->sig[e->sig_done & e->sig_mask].sq_end;
		e->sig_done++;
	}
	return n;
}

/* Hand out completed user writes, dropping the internal ones. */
static unsigned deliver_writes(struct verbs_ep *e, struct ferry_wc *wc,
			       unsigned max)
{
	unsigned n = 0;

	while (e->sig_rep < e->sig_done && n < max) {
		const struct verbs_sig *s = &e->sig[e->sig_rep & e->sig_mask];
		if (s->user) {
			wc[n].op = FERRY_WC_WRITE;
			wc[n].wr_id = s->wr_id;
			wc[n].len = 0;
			n++;
		}
		e->sig_rep++;
	}
	return n;
}

static bool sig_full(const struct verbs_ep *e)
{
	return e->sig_tail - e->sig_rep > e->sig_mask;
}

/* Wait for an SQ slot (and, for a signalled WR, a ring entry). -EAGAIN
 * when the ring is full of completions the caller has not polled. */
static int sq_room(struct ferry_xport *x, struct verbs_ep *e, bool sig)
{
	uint64_t deadline = 0;
	unsigned spins = 0;

	while (e->sq_posted - e->sq_done >= e->sq_depth || (sig && sig_full(e))) {
		int n = reap_send(x, e);

		if (n < 0)
			return n;
		if (sig && sig_full(e)) {
			while (e->sig_rep < e->sig_done &&
			       !e->sig[e->sig_rep & e->sig_mask].user)
				e->sig_rep++;
			if (sig_full(e) && e->sig_rep < e->sig_done)
				return -EAGAIN; /* poll first */
		}
		if (n > 0)
			continue;
		if (cancelled(x))
			return -ECANCELED;
		if (gone(e))
			return -FERRY_ECLOSED;
		if (e->cch || (++spins & SPIN_CHECK) == 0) {
			uint64_t now = ferry__now_ns();
			if (!deadline)
				deadline = now + (uint64_t)x->attr.timeout_ms *
							 1000000ull;
			else if (now > deadline)
				return -FERRY_ETIMEOUT;
		}
		if (e->cch) {
			/* event mode: arm, look once more, then sleep */
			int err = e->armed ? ferry__verbs_event_wait(e, -1) :
					     ferry__verbs_event_arm(e);
			if (err)
				return ep_fail(e, err, "waiting for the send queue",
					       NULL);
		}
	}
	return 0;
}

static void account(struct verbs_ep *e, bool sig, uint64_t wr_id, bool user)
{
	e->sq_posted++;
	if (!sig) {
		e->unsig++;
		return;
	}
	e->sig[e->sig_tail & e->sig_mask] = (struct verbs_sig){
		.wr_id = wr_id, .sq_end = e->sq_posted, .user = user };
	e->sig_tail++;
	e->unsig = 0;
}

static int check_ep(struct ferry_xport *x, struct verbs_ep *e)
{
	if (e->err)
		return e->err;
	if (cancelled(x))
		return -ECANCELED;
	if (gone(e))
		return -FERRY_ECLOSED;
	return e->qp ? 0 : -ENOTCONN;
}

int ferry__verbs_post_write_imm(struct ferry_xport *x, unsigned ep,
				struct ferry_mr *lmr, const void *laddr,
				size_t len, uint64_t roff, uint32_t imm,
				uint64_t wr_id, unsigned flags)
{
	struct verbs_ep *e = &x->ep[ep];
	const uint8_t *l = laddr;
	struct ibv_send_wr *bad;
	bool user = flags & FERRY_POST_SIGNALED, sig;
	int err = check_ep(x, e);

	if (!err && e->await_hello)
		err = ferry__verbs_hello_wait(x, e);
	if (err)
		return err;
	if (!lmr || l < lmr->base || len > lmr->len ||
	    (size_t)(l - lmr->base) > lmr->len - len)
		return -EINVAL;
	if (len > x->max_msg)
		return -EMSGSIZE;
	/* the NIC checks it too; this says so before the QP breaks */
	if (roff > x->rlen || len > x->rlen - roff)
		return -FERRY_EBOUNDS;
	sig = user || e->unsig + 1 >= e->sig_every;
	err = sq_room(x, e, sig);
	if (err)
		return err;
	/* an SGE names its bytes in the MR's address space, which for a
	 * zero-based registration (a duplex sender's pool) is not the
	 * virtual address: rxe answers a VA with a local protection error */
	e->wsge.addr = lmr->iova + (uint64_t)(l - lmr->base);
	e->wsge.length = (uint32_t)len;
	e->wsge.lkey = lmr->mr->lkey;
	e->wwr.num_sge = len ? 1 : 0;
	e->wwr.wr.rdma.remote_addr = x->rbase + roff;
	e->wwr.imm_data = htobe32(imm);
	e->wwr.wr_id = e->sig_tail;
	e->wwr.send_flags = sig ? IBV_SEND_SIGNALED : 0;
	err = ferry__verbs_ibv(ibv_post_send(e->qp, &e->wwr, &bad));
	if (err)
		return ep_fail(e, err, "posting a write", NULL);
	account(e, sig, wr_id, user);
	return 0;
}

int ferry__verbs_post_send(struct ferry_xport *x, unsigned ep, const void *msg,
			   size_t len)
{
	struct verbs_ep *e = &x->ep[ep];
	struct ibv_send_wr *bad;
	bool sig;
	int err = check_ep(x, e);

	if (!err && e->await_hello)
		err = ferry__verbs_hello_wait(x, e);
	if (err)
		return err;
	if (len > FERRY_XPORT_MSG_MAX)
		return -EMSGSIZE;
	sig = e->unsig + 1 >= e->sig_every;
	err = sq_room(x, e, sig);
	if (err)
		return err;
	/* inline: the bytes are copied into the WQE, no key needed */
	e->ssge.addr = (uintptr_t)msg;
	e->ssge.length = (uint32_t)len;
	e->swr.num_sge = len ? 1 : 0;
	e->swr.wr_id = e->sig_tail;
	e->swr.send_flags = IBV_SEND_INLINE | (sig ? IBV_SEND_SIGNALED : 0);
	err = ferry__verbs_ibv(ibv_post_send(e->qp, &e->swr, &bad));
	if (err)
		return ep_fail(e, err, "posting a message", NULL);
	account(e, sig, 0, false);
	return 0;
}

/* A sender's first message from a receiver of the RoCEv2 family: its
 * hello (rocev2.h), which only says that the QP is ready. */
static void take_hello(struct verbs_ep *e, const struct ibv_wc *c,
		       const uint8_t *buf)
{
	if (c->opcode == IBV_WC_RECV && !(c->wc_flags & IBV_WC_WITH_IMM) &&
	    c->byte_len == FERRY__ROCEV2_HELLO_LEN &&
	    memcmp(buf, FERRY__ROCEV2_HELLO, FERRY__ROCEV2_HELLO_LEN) == 0)
		e->await_hello = false;
	else
		ep_fail(e, -FERRY_EPROTO,
			"the receiver's first message is not its hello", NULL);
}

/* Reap the receive CQ into wc; give the buffers back to the SRQ in one
 * chain. Returns the count (an error is left in e->err). */
static unsigned reap_recv(struct ferry_xport *x, struct verbs_ep *e,
			  struct ferry_wc *wc, unsigned max)
{
	struct ibv_wc c[FERRY__VERBS_POLL_BATCH];
	struct ibv_recv_wr *bad;
	unsigned n = 0;
	int k = ibv_poll_cq(e->rcq, max < FERRY__VERBS_POLL_BATCH ?
					    (int)max : FERRY__VERBS_POLL_BATCH, c);

	if (k < 0) {
		ep_fail(e, -EIO, "polling the receive CQ", NULL);
		return 0;
	}
	for (int i = 0; i < k; i++) {
		uint8_t *buf = x->rbuf + c[i].wr_id * FERRY_XPORT_MSG_MAX;

		/* every consumed buffer goes back, whatever happened */
		e->rsge[i].addr = (uintptr_t)buf;
		e->rwr[i].wr_id = c[i].wr_id;
		if (e->err)
			continue;
		if (c[i].status != IBV_WC_SUCCESS) {
			wc_fail(x, e, &c[i], "receive");
			continue;
		}
		if (e->await_hello) {
			take_hello(e, &c[i], buf);
		} else if (c[i].opcode == IBV_WC_RECV_RDMA_WITH_IMM) {
			wc[n].op = FERRY_WC_WRITE_IMM;
			wc[n].imm = be32toh(c[i].imm_data);
			wc[n].len = c[i].byte_len;
			wc[n].offset = FERRY_WC_OFFSET_UNKNOWN;
			n++;
		} else if (c[i].opcode == IBV_WC_RECV &&
			   !(c[i].wc_flags & IBV_WC_WITH_IMM) &&
			   c[i].byte_len <= FERRY_XPORT_MSG_MAX) {
			wc[n].op = FERRY_WC_RECV;
			wc[n].len = c[i].byte_len;
			memcpy(wc[n].msg, buf, c[i].byte_len);
			n++;
		} else {
			ep_fail(e, -FERRY_EPROTO, "an unexpected completion",
				NULL);
		}
	}
	if (k > 0) {
		int err;

		e->rwr[k - 1].next = NULL;
		err = ferry__verbs_ibv(ibv_post_srq_recv(x->srq, e->rwr, &bad));
		if (k < FERRY__VERBS_POLL_BATCH)
			e->rwr[k - 1].next = &e->rwr[k];
		if (err)
			ep_fail(e, err, "reposting receive buffers", NULL);
	}
	return n;
}

/* A receiver's QP can stop with nothing on its CQs: when the first packet
 * of a write names an address outside the ring or a key that is not the
 * ring's, the NIC NAKs it (the sender sees a remote access error) and
 * moves the QP to the error state before any receive buffer is taken
 * (rxe, Linux 6.1, for a write of more than one packet). The peer stays
 * connected and may say nothing, so a receiver that has waited a whole
 * poll timeout for nothing looks at its QP. An error state that a
 * disconnect does not explain within QP_ERR_GRACE_NS (the cm thread marks
 * those) is the peer's doing: the endpoint fails with -FERRY_EBOUNDS. */
#define QP_ERR_GRACE_NS (500ull * 1000000ull)

static int idle_check(struct ferry_xport *x, struct verbs_ep *e)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;
	uint64_t now;

	if (!x->receiver || ibv_query_qp(e->qp, &a, IBV_QP_STATE, &ia) ||
	    a.qp_state != IBV_QPS_ERR)
		return 0;
	now = ferry__now_ns();
	if (!e->qp_err_ns)
		e->qp_err_ns = now;
	if (gone(e) || now - e->qp_err_ns < QP_ERR_GRACE_NS)
		return 0;
	return ep_fail(e, -FERRY_EBOUNDS,
		       "the NIC refused a write of the sender (outside the ring, with a key that is not the ring's, or malformed) and stopped the queue pair",
		       NULL);
}

int ferry__verbs_poll(struct ferry_xport *x, unsigned ep, struct ferry_wc *wc,
		      unsigned max, int timeout_ms)
{
	struct verbs_ep *e = &x->ep[ep];
	uint64_t deadline = 0;
	unsigned spins = 0;

	if (e->err)
		return e->err;
	if (cancelled(x))
		return -ECANCELED;
	if (!e->qp)
		return -ENOTCONN;
	for (;;) {
		unsigned n;

		if (reap_send(x, e) < 0 && e->sig_rep == e->sig_done)
			return e->err;
		n = deliver_writes(e, wc, max);
		if (n < max)
			n += reap_recv(x, e, wc + n, max - n);
		if (n)
			return (int)n;
		if (e->err)
			return e->err;
		/* nothing: finish on cancel or a gone peer (completions that
		 * arrived before the disconnect were reaped above) */
		if (cancelled(x))
			return -ECANCELED;
		if (gone(e))
			return -FERRY_ECLOSED;
		if (timeout_ms == 0)
			return 0;
		if (e->cch) {
			/* event mode: arm, look once more, then sleep */
			int err, left = timeout_ms;

			if (!e->armed) {
				err = ferry__verbs_event_arm(e);
				if (err)
					return ep_fail(e, err, "arming the CQs", NULL);
				continue;
			}
			if (timeout_ms > 0) {
				uint64_t now = ferry__now_ns();
				if (!deadline)
					deadline = now + (uint64_t)timeout_ms * 1000000ull;
				else if (now >= deadline)
					return idle_check(x, e);
				left = (int)((deadline - now) / 1000000u) + 1;
			}
			err = ferry__verbs_event_wait(e, left);
			if (err)
				return ep_fail(e, err, "waiting for completions", NULL);
			continue;
		}
		if (timeout_ms > 0 && (++spins & SPIN_CHECK) == 0) {
			uint64_t now = ferry__now_ns();
			if (!deadline)
				deadline = now + (uint64_t)timeout_ms * 1000000ull;
			else if (now >= deadline)
				return idle_check(x, e);
		}
	}
}

int ferry__verbs_hello_wait(struct ferry_xport *x, struct verbs_ep *e)
{
	uint64_t deadline = ferry__now_ns() +
			    (uint64_t)x->attr.timeout_ms * 1000000ull;
	unsigned spins = 0;
	struct ferry_wc wc;

	while (e->await_hello) {
		int err = 0;

		if (reap_recv(x, e, &wc, 1) && !e->err)
			err = -FERRY_EPROTO; /* only the hello comes first */
		if (e->err || err)
			return ep_fail(e, err, "a completion before the receiver's hello",
				       NULL);
		if (!e->await_hello)
			break;
		if (cancelled(x))
			return -ECANCELED;
		if ((e->cch || (++spins & SPIN_CHECK) == 0) &&
		    ferry__now_ns() > deadline)
			return ep_fail(e, -FERRY_ETIMEOUT,
				       "no hello from the receiver's queue pair within the timeout",
				       NULL);
		if (e->cch) {
			err = e->armed ? ferry__verbs_event_wait(e, -1) :
					 ferry__verbs_event_arm(e);
			if (err)
				return ep_fail(e, err, "waiting for the hello",
					       NULL);
		}
	}
	return 0;
}
