/* uroce: one session's endpoints. Sizes the rings, creates and connects
 * the RC queue pairs with receives posted, tears them down and sums their
 * counters, and hands the session to the polling thread. Control path only:
 * the polling thread does not see a session before ferry__uroce_eps_create
 * is done, nor after detach. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/metrics.h"
#include "util/util.h"
#include "xport/uroce/uroce.h"
#include "xport/uroce/uroce_id.h"

#define STRIDE_MIN 8192u   /* smallest slot: chunk header + a 4 KiB chunk */
#define RING_MIN 256u
#define RING_MAX 65536u
#define WINDOW_MIN 16u
#define WINDOW_MAX 1024u
#define RTO_NS 100000000ull /* 100 ms: far above a LAN round trip, and
			       above the scheduling stalls of a busy host */

uint32_t ferry__uroce_psn(uint64_t seed, unsigned i)
{
	uint64_t z = seed + (i + 1) * 0x9e3779b97f4a7c15ull; /* splitmix64 */

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return (uint32_t)(z ^ (z >> 31)) & FERRY_PSN_MASK;
}

/* Work/completion ring entries per endpoint: at least the most writes the
 * pipeline can keep posted on one endpoint (its share of the ring's
 * slots; a slot is at least STRIDE_MIN bytes). */
static uint32_t ring_entries(uint64_t ring_len, unsigned n_ep)
{
	uint64_t want = ring_len / STRIDE_MIN / n_ep + 16;
	uint32_t r = RING_MIN;

	while (r < want && r < RING_MAX)
		r <<= 1;
	return r;
}

/* Packets in flight per QP at the start: together the QPs should not
 * overrun the peer's receive ring (af_packet drops what does not fit, and
 * go-back-N then resends a whole window). A peer that names no limit (a
 * NIC, rxe) gets the engine's default per QP. From there the window
 * follows the path (rc_win.c) up to what the receive ring of ring_len
 * bytes holds: the pipeline never has more in flight. The settings'
 * window (FERRY_UROCE_WINDOW) fixes it instead. */
static void window(const struct ferry_uroce_conf *c, unsigned peer_rx_frames,
		   unsigned n_ep, uint64_t ring_len, uint32_t mtu,
		   struct ferry_rc_attr *a)
{
	uint32_t w = peer_rx_frames ? peer_rx_frames * 3 / 4 / n_ep :
				      FERRY_RC_DEF_WINDOW;
	uint64_t most = ring_len / mtu / n_ep + 1;

	if (c->window)
		w = c->window;
	w = w < WINDOW_MIN ? WINDOW_MIN : w > WINDOW_MAX ? WINDOW_MAX : w;
	a->window_init = w;
	a->window_pkts = c->window || most < w ? w :
			 most > FERRY_RC_WINDOW_MAX ? FERRY_RC_WINDOW_MAX :
						      (uint32_t)most;
}

static uint32_t peer_qpn(const struct ferry_xport *x, unsigned i)
{
	return x->peer_qp ? x->peer_qp[i].qpn :
			    x->peer_tag << FERRY__UROCE_QPN_SHIFT | i;
}

static int ep_create(struct ferry_xport *x, unsigned i,
		     const struct ferry_rc_attr *base)
{
	struct ferry__uep *e = &x->ep[i];
	struct ferry_rc_attr a = *base;
	int rc;

	e->wr = calloc(x->R, sizeof(*e->wr));
	e->cq = calloc(x->R, sizeof(*e->cq));
	e->rbuf = calloc(x->R, sizeof(*e->rbuf));
	if (!e->wr || !e->cq || !e->rbuf)
		return -ENOMEM;
	e->qpn = x->tag << FERRY__UROCE_QPN_SHIFT | i;
	e->my_psn = ferry__uroce_psn(x->seed, i);
	e->peer_psn = x->peer_qp ? x->peer_qp[i].psn :
				   ferry__uroce_psn(x->peer_seed, i);
	a.qpn = e->qpn;
	rc = ferry__rc_create(&a, &e->qp);
	for (uint32_t j = 0; !rc && j < x->R; j++)
		rc = ferry__rc_post_recv(e->qp, e->rbuf[j], FERRY__UROCE_MSG, j);
	if (!rc)
		rc = ferry__rc_connect(e->qp, peer_qpn(x, i), e->my_psn,
				       e->peer_psn, &x->port->addr, &x->peer, 0);
	return rc;
}

int ferry__uroce_eps_create(struct ferry_xport *x, bool receiver,
			    uint64_t ring_len, unsigned peer_rx_frames, char *why,
			    size_t whylen)
{
	uint64_t timeout_ns = (uint64_t)(x->attr.timeout_ms > 0 ?
					 x->attr.timeout_ms : 10000) * 1000000ull;
	struct ferry_rc_attr base = {
		.pd = x->pd,
		.mtu = x->mtu,
		.rto_ns = RTO_NS,
		.rtt_hint_ns = x->attr.rtt_ns,
		/* the session's cap on each QP, paced per packet: the
		 * pipeline spaces the chunks at the cap, so a chunk sent at
		 * it ends as the next begins (at the cap over the QPs, each
		 * chunk took QPs x its slot, and a session that much more) */
		.rate_pps = x->attr.rate_bps ?
			x->attr.rate_bps / 8 / x->mtu + 1 : 0,
		/* the session's class; no kernel here, so "the system's
		 * default" is DSCP 0 */
		.dscp = (uint8_t)(x->attr.dscp > 0 ? x->attr.dscp : 0),
		.tx = ferry__uport_tx,
		.tx_ctx = x->port,
	};
	int rc = 0;

	window(&x->attr.conf->uroce, peer_rx_frames, x->n_ep, ring_len, x->mtu,
	       &base);
	x->R = ring_entries(ring_len, x->n_ep);
	base.sq_depth = base.rq_depth = x->R;
	/* give up on a silent peer after about the session timeout */
	base.retry_limit = (unsigned)(timeout_ns / RTO_NS);
	base.rnr_retry_limit = (unsigned)(timeout_ns / FERRY_RC_DEF_RNR_DELAY_NS);
	if (base.retry_limit < 7)
		base.retry_limit = 7;
	if (base.rnr_retry_limit < 7)
		base.rnr_retry_limit = 7;
	x->ep = aligned_alloc(64, sizeof(*x->ep) * x->n_ep);
	if (!x->ep)
		return -ENOMEM;
	memset(x->ep, 0, sizeof(*x->ep) * x->n_ep);
	for (unsigned i = 0; i < x->n_ep && !rc; i++) {
		rc = ep_create(x, i, &base);
		/* the receiver says hello; the sender waits for it */
		x->ep[i].ready = receiver;
		if (!rc && receiver)
			rc = ferry__rc_post_send(x->ep[i].qp,
						 FERRY__ROCEV2_HELLO,
						 FERRY__ROCEV2_HELLO_LEN,
						 FERRY__UROCE_HELLO, false);
	}
	if (rc)
		ferry__why(why, whylen, "uroce: cannot set up %u queue pairs: %s",
			   x->n_ep, ferry_strerror(rc));
	else
		ferry__log(FERRY_LOG_INFO,
			   "uroce: %u QP(s) 0x%06x.. -> 0x%06x.., path MTU %u, "
			   "window %u packets (%s %u), %u-entry rings",
			   x->n_ep, x->ep[0].qpn, peer_qpn(x, 0), x->mtu,
			   base.window_init,
			   base.window_pkts > base.window_init ?
				   "following the path up to" : "fixed at",
			   base.window_pkts, x->R);
	return rc;
}

int ferry__uroce_start(struct ferry_xport *x, bool receiver,
		       uint64_t ring_len, unsigned peer_rx_frames, char *why,
		       size_t whylen)
{
	int err;

	err = ferry__uroce_eps_create(x, receiver, ring_len, peer_rx_frames,
				      why, whylen);
	if (!err) {
		err = ferry__uport_attach(x->port, x);
		if (err)
			ferry__why(why, whylen,
				   "uroce: cannot start the polling thread: %s",
				   ferry_strerror(err));
	}
	x->attached = !err;
	return err;
}

/* The counters of every QP of the session, summed: all of them, field by
 * field (the struct holds nothing but uint64_t counters). */
_Static_assert(sizeof(struct ferry_rc_counters) % sizeof(uint64_t) == 0,
	       "only uint64_t counters");

static void sum_counters(const struct ferry_xport *x,
			 struct ferry_rc_counters *t)
{
	const size_t n = sizeof(*t) / sizeof(uint64_t);
	uint64_t *sum = (uint64_t *)t;

	*t = (struct ferry_rc_counters){ 0 };
	for (unsigned i = 0; i < x->n_ep; i++) {
		const uint64_t *c;

		if (!x->ep[i].qp)
			continue;
		c = (const uint64_t *)ferry__rc_counters(x->ep[i].qp);
		for (size_t k = 0; k < n; k++)
			sum[k] += c[k];
	}
}

/* The session's counters, and the port's, in one line. */
static void log_counters(const struct ferry_xport *x,
			 const struct ferry_rc_counters *t)
{
	const struct ferry__uport_stats *ps = &x->port->st;
	uint64_t rtt = 0;
	uint32_t win = x->ep[0].qp ? ferry__rc_window(x->ep[0].qp, &rtt) : 0;

	ferry__log(FERRY_LOG_INFO,
		   "uroce: session done: window %u packets per QP at the end "
		   "(round trip %.3f ms, %llu cuts after losses, %llu losses "
		   "with no queue); ECN: %llu requests arrived marked, %llu "
		   "CNPs sent, %llu CNPs received, %llu DCQCN rate cuts",
		   win, (double)rtt / 1e6, (unsigned long long)t->win_cuts,
		   (unsigned long long)t->loss_no_queue,
		   (unsigned long long)t->rx_ce, (unsigned long long)t->tx_cnp,
		   (unsigned long long)t->rx_cnp,
		   (unsigned long long)t->dcqcn_cuts);
	ferry__log(FERRY_LOG_INFO,
		   "uroce: session done: sent %llu requests (%llu again, %llu "
		   "timeouts, %llu sequence and %llu RNR NAKs back), got %llu "
		   "(%llu out of order, %llu duplicates, %llu refused for "
		   "rkey or bounds, %llu invalid, %llu after an error), %llu "
		   "ACKs sent, tx busy %llu; port: %llu frames in (%llu not "
		   "RoCE, %llu our own, %llu malformed, %llu bad ICRC, %llu "
		   "unknown QP), %llu out (%llu dropped unsent, %llu refused "
		   "by the kernel)",
		   (unsigned long long)t->tx_req, (unsigned long long)t->retx_pkts,
		   (unsigned long long)t->timeouts,
		   (unsigned long long)t->rx_nak_seq,
		   (unsigned long long)t->rx_nak_rnr, (unsigned long long)t->rx_req,
		   (unsigned long long)t->oow_drops, (unsigned long long)t->dup_pkts,
		   (unsigned long long)t->access_errors,
		   (unsigned long long)t->tx_nak_invalid,
		   (unsigned long long)t->state_drops,
		   (unsigned long long)t->tx_acks, (unsigned long long)t->tx_busy,
		   (unsigned long long)ps->rx_frames,
		   (unsigned long long)ps->rx_other,
		   (unsigned long long)ps->rx_own,
		   (unsigned long long)ps->rx_malformed,
		   (unsigned long long)ps->rx_icrc_bad,
		   (unsigned long long)ps->rx_unknown_qp,
		   (unsigned long long)ps->tx_frames,
		   (unsigned long long)ps->tx_flushed,
		   (unsigned long long)ps->tx_refused);
}

void ferry__uroce_eps_free(struct ferry_xport *x)
{
	struct ferry_rc_counters t;

	if (!x->ep)
		return;
	sum_counters(x, &t);
	log_counters(x, &t);
	/* into the process's metrics (rc_metrics.c): none lost but on a
	   full registry, which the metrics do without */
	(void)ferry__metrics_add_set(&ferry__uroce_metrics, &t);
	for (unsigned i = 0; i < x->n_ep; i++) {
		ferry__rc_destroy(x->ep[i].qp);
		free(x->ep[i].wr);
		free(x->ep[i].cq);
		free(x->ep[i].rbuf);
	}
	free(x->ep);
	x->ep = NULL;
}
