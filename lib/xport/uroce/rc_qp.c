/* uroce RC engine: control path. Creates and connects QPs, keeps the
 * memory-region table, and owns the QP state (RESET -> RTS -> ERROR). The
 * only file of the engine that allocates. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xport/uroce/rc.h"

_Static_assert(FERRY_RC_SEND_MAX <= 256, "a send fits the smallest MTU");
_Static_assert(FERRY_RC_WINDOW_MAX + FERRY_RC_WR_PKTS_MAX < (1u << 23),
	       "unacked PSNs and one WR's PSNs stay within half the space");

int ferry__rc_pd_create(unsigned max_mr, struct ferry_rc_pd **out)
{
	struct ferry_rc_pd *pd;

	if (!out || max_mr == 0 || max_mr > 4096)
		return -EINVAL;
	pd = calloc(1, sizeof(*pd) + max_mr * sizeof(pd->mr[0]));
	if (!pd)
		return -ENOMEM;
	pd->n = max_mr;
	*out = pd;
	return 0;
}

void ferry__rc_pd_destroy(struct ferry_rc_pd *pd)
{
	free(pd);
}

int ferry__rc_reg_mr(struct ferry_rc_pd *pd, void *base, size_t len,
		     unsigned access, uint32_t rkey)
{
	struct ferry__rc_mr *slot = NULL;

	if (!pd || !base ||
	    (access & ~(unsigned)FERRY_ACCESS_REMOTE_WRITE))
		return -EINVAL;
	for (unsigned i = 0; i < pd->n; i++) {
		if (pd->mr[i].used && pd->mr[i].rkey == rkey)
			return -EEXIST;
		if (!pd->mr[i].used && !slot)
			slot = &pd->mr[i];
	}
	if (!slot)
		return -ENOSPC;
	*slot = (struct ferry__rc_mr){ .base = base, .len = len, .rkey = rkey,
				       .access = access, .used = true };
	return 0;
}

int ferry__rc_dereg_mr(struct ferry_rc_pd *pd, uint32_t rkey)
{
	for (unsigned i = 0; pd && i < pd->n; i++) {
		if (pd->mr[i].used && pd->mr[i].rkey == rkey) {
			pd->mr[i].used = false;
			return 0;
		}
	}
	return -ENOENT;
}

/* IB RNR NAK timer codes (vol. 1, table 45) in units of 10 us; code 0 is
 * the longest, 655.36 ms. */
static const uint32_t rnr_10us[32] = {
	65536, 1,    2,    3,    4,     6,     8,     12,    16,    24,   32,
	48,    64,   96,   128,  192,   256,   384,   512,   768,   1024, 1536,
	2048,  3072, 4096, 6144, 8192,  12288, 16384, 24576, 32768, 49152,
};

uint64_t ferry__rc_rnr_ns(uint8_t code)
{
	return (uint64_t)rnr_10us[code & 31] * 10000ull;
}

uint8_t ferry__rc_rnr_code(uint64_t ns)
{
	for (uint8_t c = 1; c < 32; c++)
		if (ferry__rc_rnr_ns(c) >= ns)
			return c;
	return 0;
}

static uint32_t pow2_at_least(uint32_t n)
{
	uint32_t p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

static int fill_attr(struct ferry_rc_attr *a)
{
	if (!a->tx || !a->pd || a->qpn < 2 || a->qpn > FERRY_PSN_MASK)
		return -EINVAL;
	if (a->mtu < 256 || a->mtu > 4096 || (a->mtu & (a->mtu - 1)))
		return -EINVAL;
	if (a->sq_depth == 0 || a->sq_depth > FERRY_RC_DEPTH_MAX ||
	    a->rq_depth == 0 || a->rq_depth > FERRY_RC_DEPTH_MAX ||
	    a->window_pkts > FERRY_RC_WINDOW_MAX || a->dscp > FERRY_DSCP_MAX)
		return -EINVAL;
	a->sq_depth = pow2_at_least(a->sq_depth);
	a->rq_depth = pow2_at_least(a->rq_depth);
	if (!a->window_pkts)
		a->window_pkts = FERRY_RC_DEF_WINDOW;
	if (!a->window_init || a->window_init > a->window_pkts)
		a->window_init = a->window_pkts;
	if (!a->ackreq_every)
		a->ackreq_every = a->window_init / 4 ? a->window_init / 4 : 1;
	if (!a->ack_every)
		a->ack_every = FERRY_RC_DEF_ACK_EVERY;
	if (!a->ack_delay_ns)
		a->ack_delay_ns = FERRY_RC_DEF_ACK_DELAY_NS;
	if (!a->rto_ns)
		a->rto_ns = FERRY_RC_DEF_RTO_NS;
	if (!a->rnr_delay_ns)
		a->rnr_delay_ns = FERRY_RC_DEF_RNR_DELAY_NS;
	ferry__rc_dcqcn_defaults(&a->dcqcn, a->mtu);
	return 0;
}

int ferry__rc_create(const struct ferry_rc_attr *attr,
		     struct ferry_rc_qp **out)
{
	struct ferry_rc_qp *qp;
	int rc;

	if (!attr || !out)
		return -EINVAL;
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return -ENOMEM;
	qp->attr = *attr;
	rc = fill_attr(&qp->attr);
	if (rc)
		goto err_qp;
	rc = -ENOMEM;
	qp->sq = calloc(qp->attr.sq_depth, sizeof(*qp->sq));
	if (!qp->sq)
		goto err_qp;
	qp->rq = calloc(qp->attr.rq_depth, sizeof(*qp->rq));
	if (!qp->rq)
		goto err_sq;
	qp->sq_mask = qp->attr.sq_depth - 1;
	qp->rq_mask = qp->attr.rq_depth - 1;
	qp->rnr_code = ferry__rc_rnr_code(qp->attr.rnr_delay_ns);
	qp->state = FERRY_RC_RESET;
	*out = qp;
	return 0;

err_sq:
	free(qp->sq);
err_qp:
	free(qp);
	return rc;
}

void ferry__rc_destroy(struct ferry_rc_qp *qp)
{
	if (!qp)
		return;
	free(qp->rq);
	free(qp->sq);
	free(qp);
}

int ferry__rc_connect(struct ferry_rc_qp *qp, uint32_t dest_qpn,
		      uint32_t my_start_psn, uint32_t peer_start_psn,
		      const struct ferry_roce_addr *src,
		      const struct ferry_roce_addr *dst, uint16_t udp_sport)
{
	if (!qp || !src || !dst || dest_qpn > FERRY_PSN_MASK ||
	    my_start_psn > FERRY_PSN_MASK || peer_start_psn > FERRY_PSN_MASK)
		return -EINVAL;
	if (qp->state != FERRY_RC_RESET)
		return -EISCONN;
	qp->tmpl = (struct ferry_roce_pkt){
		.src = *src,
		.dst = *dst,
		.udp_sport = udp_sport ? udp_sport
				       : (uint16_t)(0xc000u |
						    (qp->attr.qpn & 0x3fffu)),
		.pkey = 0xffff,
		.dest_qp = dest_qpn,
		.dscp = qp->attr.dscp, /* every packet's, whatever its ECN */
	};
	qp->sq_psn = qp->snd_psn = qp->snd_max = qp->una = my_start_psn;
	qp->recover = my_start_psn;
	ferry__rc_win_start(qp);
	qp->epsn = peer_start_psn;
	qp->state = FERRY_RC_RTS;
	return 0;
}

void ferry__rc_fail(struct ferry_rc_qp *qp, int err, bool blame,
		    const char *fmt, ...)
{
	va_list ap;

	if (qp->state == FERRY_RC_ERROR)
		return; /* the first error is the one that explains */
	qp->state = FERRY_RC_ERROR;
	qp->err = err;
	qp->sq_blame = blame && qp->sq_acked != qp->sq_tail;
	qp->sq_fail = qp->sq_acked;
	qp->timer_on = qp->rnr_wait = false;
	qp->in_write = false;
	qp->ack_unsent = 0;
	va_start(ap, fmt);
	vsnprintf(qp->why, sizeof(qp->why), fmt, ap);
	va_end(ap);
}

enum ferry_rc_state ferry__rc_state(const struct ferry_rc_qp *qp)
{
	return qp->state;
}

const char *ferry__rc_error(const struct ferry_rc_qp *qp)
{
	return qp->state == FERRY_RC_ERROR ? qp->why : NULL;
}

const struct ferry_rc_counters *
ferry__rc_counters(const struct ferry_rc_qp *qp)
{
	return &qp->cnt;
}
