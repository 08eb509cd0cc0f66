/* verbs transport: the shared receive queue and each endpoint's CQs and QP
 * (control path: everything here is made once per session). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"
#include "xport/verbs/verbs.h"

static unsigned min_u(unsigned a, unsigned b)
{
	return a < b ? a : b;
}

/* A device limit as an unsigned bound (0 or negative: no usable bound). */
static unsigned dev_cap(int v)
{
	return v > 0 ? (unsigned)v : 1;
}

int ferry__verbs_srq_create(struct ferry_xport *x, char *why, size_t whylen)
{
	struct ibv_srq_init_attr sa = { 0 };
	unsigned depth = x->n_ep * FERRY__VERBS_SRQ_PER_EP;
	size_t bytes;
	int err;

	if (depth < FERRY__VERBS_SRQ_MIN)
		depth = FERRY__VERBS_SRQ_MIN;
	if (depth > FERRY__VERBS_SRQ_MAX)
		depth = FERRY__VERBS_SRQ_MAX;
	/* one less than the limits: some devices count a slot they keep */
	depth = min_u(depth, dev_cap(x->dattr.max_srq_wr - 1));
	depth = min_u(depth, dev_cap(x->dattr.max_cqe - 1));
	bytes = (size_t)depth * FERRY_XPORT_MSG_MAX;
	err = ferry__verbs_memlock_check(x->memlock_limit, x->locked, bytes,
					 x->cap_ipc_lock, why, whylen);
	if (err)
		return err;
	x->rbuf = aligned_alloc(4096, (bytes + 4095) & ~(size_t)4095);
	if (!x->rbuf)
		return -ENOMEM;
	memset(x->rbuf, 0, bytes);
	x->rmr = ibv_reg_mr(x->pd, x->rbuf, bytes, IBV_ACCESS_LOCAL_WRITE);
	if (!x->rmr) {
		err = ferry__verbs_errno();
		ferry__why(why, whylen,
			   "verbs: cannot register receive buffers: %s",
			   ferry_strerror(err));
		goto out_buf;
	}
	sa.attr.max_wr = depth;
	sa.attr.max_sge = 1;
	x->srq = ibv_create_srq(x->pd, &sa);
	if (!x->srq) {
		err = ferry__verbs_errno();
		ferry__why(why, whylen,
			   "verbs: cannot create a shared receive queue of %u: %s",
			   depth, ferry_strerror(err));
		goto out_mr;
	}
	for (unsigned i = 0; i < depth; i += FERRY__VERBS_POLL_BATCH) {
		struct ibv_recv_wr wr[FERRY__VERBS_POLL_BATCH], *bad;
		struct ibv_sge sge[FERRY__VERBS_POLL_BATCH];
		unsigned k = min_u(FERRY__VERBS_POLL_BATCH, depth - i);

		for (unsigned j = 0; j < k; j++) {
			sge[j] = (struct ibv_sge){
				.addr = (uintptr_t)(x->rbuf +
						    (size_t)(i + j) *
							    FERRY_XPORT_MSG_MAX),
				.length = FERRY_XPORT_MSG_MAX,
				.lkey = x->rmr->lkey,
			};
			wr[j] = (struct ibv_recv_wr){
				.wr_id = i + j,
				.next = j + 1 < k ? &wr[j + 1] : NULL,
				.sg_list = &sge[j],
				.num_sge = 1,
			};
		}
		err = ferry__verbs_ibv(ibv_post_srq_recv(x->srq, wr, &bad));
		if (err) {
			ferry__why(why, whylen,
				   "verbs: cannot post receive buffers: %s",
				   ferry_strerror(err));
			goto out_srq;
		}
	}
	x->srq_depth = depth;
	x->locked += bytes;
	return 0;
out_srq:
	ibv_destroy_srq(x->srq);
	x->srq = NULL;
out_mr:
	ibv_dereg_mr(x->rmr);
	x->rmr = NULL;
out_buf:
	free(x->rbuf);
	x->rbuf = NULL;
	return err;
}

void ferry__verbs_srq_destroy(struct ferry_xport *x)
{
	if (x->srq)
		ibv_destroy_srq(x->srq);
	if (x->rmr) {
		ibv_dereg_mr(x->rmr);
		x->locked -= (size_t)x->srq_depth * FERRY_XPORT_MSG_MAX;
	}
	free(x->rbuf);
	x->srq = NULL;
	x->rmr = NULL;
	x->rbuf = NULL;
	x->srq_depth = 0;
}

/* Work requests built once; the datapath patches addresses and ids. */
static void build_wrs(struct ferry_xport *x, struct verbs_ep *e)
{
	e->wwr = (struct ibv_send_wr){
		.sg_list = &e->wsge,
		.num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
	};
	e->swr = (struct ibv_send_wr){
		.sg_list = &e->ssge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND,
	};
	for (unsigned j = 0; j < FERRY__VERBS_POLL_BATCH; j++) {
		e->rsge[j] = (struct ibv_sge){ .length = FERRY_XPORT_MSG_MAX,
					       .lkey = x->rmr->lkey };
		e->rwr[j] = (struct ibv_recv_wr){
			.next = j + 1 < FERRY__VERBS_POLL_BATCH ? &e->rwr[j + 1]
								: NULL,
			.sg_list = &e->rsge[j],
			.num_sge = 1,
		};
	}
}

int ferry__verbs_ep_init(struct ferry_xport *x, struct verbs_ep *e,
			 unsigned sq_depth)
{
	uint64_t cap = 1;

	while (cap < 2ull * sq_depth)
		cap <<= 1;
	e->sig = calloc(cap, sizeof(*e->sig));
	if (!e->sig)
		return -ENOMEM;
	e->sig_mask = cap - 1;
	e->sq_depth = sq_depth;
	e->sig_every = sq_depth / FERRY__VERBS_SIG_DIV ?
			       sq_depth / FERRY__VERBS_SIG_DIV : 1;
	e->sq_posted = e->sq_done = 0;
	e->sig_tail = e->sig_done = e->sig_rep = 0;
	e->unsig = 0;
	e->err = 0;
	build_wrs(x, e);
	return 0;
}

void ferry__verbs_rate_limit(struct ferry_xport *x)
{
	/* the whole cap on each QP: the pipeline spaces the chunks at the
	 * cap, so one chunk at it ends as the next begins */
	uint64_t kbps = x->attr.rate_bps / 1000;
	int err = 0;

	if (!kbps)
		return;
	if (kbps > UINT32_MAX)
		kbps = UINT32_MAX;
	for (unsigned i = 0; i < x->n_ep && !err; i++) {
		struct ibv_qp_rate_limit_attr ra = {
			.rate_limit = (uint32_t)kbps,
			.typical_pkt_sz = (uint16_t)x->mtu,
		};
		err = ferry__verbs_ibv(ibv_modify_qp_rate_limit(x->ep[i].qp,
								&ra));
	}
	if (err)
		ferry__log(FERRY_LOG_DEBUG,
			   "verbs: %s has no queue pair rate limit (%s): the rate cap is the pipeline's pacing of chunks",
			   x->dev, ferry_strerror(err));
	else
		ferry__log(FERRY_LOG_INFO,
			   "verbs: each of %u queue pair(s) limited to %llu kb/s by the device",
			   x->n_ep, (unsigned long long)kbps);
}

/* Before the QP reaches RTS (rdma_connect / rdma_accept). Kernels before
 * 4.18 lack the option: they keep rdma_cm's default. */
static void set_ack_timeout(struct ferry_xport *x, struct verbs_ep *e)
{
	int err = ferry__verbs_cm(rdma_set_option(e->id, RDMA_OPTION_ID,
						  RDMA_OPTION_ID_ACK_TIMEOUT,
						  &x->ack_timeout,
						  sizeof(x->ack_timeout)));

	if (err && e->idx == 0)
		ferry__log(FERRY_LOG_WARN,
			   "verbs: cannot set the ACK timeout (%s); the kernel's default applies",
			   ferry_strerror(err));
}

int ferry__verbs_ep_create(struct ferry_xport *x, struct verbs_ep *e,
			   struct rdma_cm_id *id, char *why, size_t whylen)
{
	struct ibv_qp_init_attr qa = { 0 };
	struct ibv_port_attr pa;
	unsigned sq = min_u(FERRY__VERBS_SQ_DEPTH,
			    dev_cap(x->dattr.max_qp_wr - 1));
	int err;

	sq = min_u(sq, dev_cap(x->dattr.max_cqe - 1));
	err = ferry__verbs_ep_init(x, e, sq);
	if (err)
		return err;
	err = ferry__verbs_event_open(x, e);
	if (err) {
		ferry__why(why, whylen,
			   "verbs: %s: cannot create a completion channel (--poll event): %s",
			   x->dev, ferry_strerror(err));
		goto out_cq;
	}
	e->scq = ibv_create_cq(x->ctx, (int)sq, e, e->cch, 0);
	if (!e->scq)
		goto fail_cq;
	e->rcq = ibv_create_cq(x->ctx, (int)x->srq_depth, e, e->cch, 0);
	if (!e->rcq)
		goto fail_cq;
	qa.send_cq = e->scq;
	qa.recv_cq = e->rcq;
	qa.srq = x->srq;
	qa.cap.max_send_wr = sq;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	qa.cap.max_inline_data = FERRY_XPORT_MSG_MAX; /* credits go inline */
	qa.qp_type = IBV_QPT_RC;
	if (id) {
		err = ferry__verbs_cm(rdma_create_qp(id, x->pd, &qa));
	} else { /* a family peer: brought up by hand (verbs_rc.c) */
		e->qp = ibv_create_qp(x->pd, &qa);
		err = e->qp ? 0 : ferry__verbs_errno();
	}
	if (err) {
		ferry__why(why, whylen,
			   "verbs: %s: cannot create queue pair %u (%u send WRs, %d bytes inline): %s",
			   x->dev, e->idx, sq, FERRY_XPORT_MSG_MAX,
			   ferry_strerror(err));
		goto out_cq;
	}
	if (id) {
		e->qp = id->qp;
		e->id = id;
		set_ack_timeout(x, e);
	} /* else the ACK timeout goes with the move to RTS (verbs_rc.c) */
	if (ibv_query_port(x->ctx, id ? id->port_num : (uint8_t)x->port,
			   &pa) == 0 &&
	    pa.max_msg_sz < x->max_msg)
		x->max_msg = pa.max_msg_sz;
	return 0;
fail_cq:
	err = ferry__verbs_errno();
	ferry__why(why, whylen, "verbs: %s: cannot create completion queues: %s",
		   x->dev, ferry_strerror(err));
out_cq:
	if (e->rcq)
		ibv_destroy_cq(e->rcq);
	if (e->scq)
		ibv_destroy_cq(e->scq);
	e->rcq = e->scq = NULL;
	ferry__verbs_event_close(e);
	free(e->sig);
	e->sig = NULL;
	return err;
}

void ferry__verbs_ep_destroy(struct ferry_xport *x, struct verbs_ep *e)
{
	(void)x;
	if (e->qp && e->id)
		rdma_destroy_qp(e->id); /* our CQs stay: rdma_cm did not make them */
	else if (e->qp)
		ibv_destroy_qp(e->qp);
	e->qp = NULL;
	if (e->scq)
		ibv_destroy_cq(e->scq);
	if (e->rcq)
		ibv_destroy_cq(e->rcq);
	e->scq = e->rcq = NULL;
	ferry__verbs_event_close(e);
	free(e->sig);
	e->sig = NULL;
}
