/* uroce RC engine: RoCEv2 congestion control as NICs do it, DCQCN (Zhu et
 * al., "Congestion Control for Large-Scale RDMA Deployments", SIGCOMM
 * 2015).
 *
 * Notification point (the responder): a request that arrives with ECN CE
 * set is answered with a CNP to the requester's QP, at most one per
 * attr.cnp_interval_ns (the paper's N, 50 us). A CNP acknowledges nothing.
 *
 * Reaction point (the requester), with the paper's defaults unless the
 * attr sets them:
 * - a CNP cuts the rate: target = current; current *= 1 - alpha / 2.
 *   Before the first CNP the QP has no DCQCN rate: it runs at its
 *   window's pace (rc_win.c); the first cut starts from the rate the path
 *   delivered.
 * - alpha, the share of recent time with congestion, is updated every K
 *   (55 us, or two packets at the current rate if longer): alpha = (1 -
 *   g) alpha, plus g if a CNP came in that K, with g = 1/256 (as ConnectX
 *   NICs do it); it starts at 1, so the first cut halves the rate.
 * - the rate rises on increase events: one per T (55 us) and one per B
 *   bytes sent (10 MB), counted apart since the last cut. While both
 *   counts are below F (5), fast recovery: current = (target + current)
 *   / 2. Past F on one count, additive increase: target += R_AI (40
 *   Mb/s) first. Past F on both, hyper increase: target += R_HAI (ferry's
 *   choice: 10 x R_AI) first.
 * - from the first CNP on, this rate alone paces the QP, as on a NIC (the
 *   window's own pace, from the delivery rate, probes for a quarter more
 *   only every eighth period, and after a deep cut would take many
 *   seconds to climb back on a long path; DCQCN's increase events climb
 *   in a few round trips). The window (rc_win.c) still bounds the flight
 *   to two bandwidth-delay products of what the path delivered.
 * On a long path one round trip passes between a cut and its effect at
 * the queue, and every packet of that round trip may come back marked:
 * the requester cuts at most once per smoothed round trip (never more
 * often than per K), and T and the byte count B are at least one (of
 * time, and of packets at the current rate): a change is judged once its
 * effect could be seen. The round trip includes the queue, which the
 * window (rc_win.c) keeps under one round trip of this QP's rate. Above
 * a round trip of 1 ms there is no hyper increase, only additive steps.
 * So a 300 ms path is not cut to the floor by the marks of one episode,
 * nor sped up many times over before it could see the effect of a cut;
 * alpha keeps its K: it measures how much of the time marks come.
 * Rates are in packets of the path MTU per second (pace_pps, rc_win.c);
 * the floor is attr.dcqcn.min_pps (1 Mb/s). */
#include "xport/uroce/rc.h"

#define ALPHA_ONE 1024u /* alpha in 1/1024ths */
#define MAX_PPS (1ull << 32) /* far above any port: unpaced */
#define LONG_PATH_NS 1000000ull /* no hyper increase above this */

/* Packets of mtu bytes per second in mbit Mb/s, at least 1. */
static uint64_t pps(uint64_t mbit, uint32_t mtu)
{
	uint64_t v = mbit * 1000000ull / 8 / mtu;

	return v ? v : 1;
}

void ferry__rc_dcqcn_defaults(struct ferry_rc_dcqcn *d, uint32_t mtu)
{
	if (!d->cnp_interval_ns)
		d->cnp_interval_ns = 50000;
	if (!d->g_1024)
		d->g_1024 = 4; /* 1/256 */
	if (!d->k_ns)
		d->k_ns = 55000;
	if (!d->t_ns)
		d->t_ns = 55000;
	if (!d->b_pkts)
		d->b_pkts = 10000000ull / mtu;
	if (!d->f)
		d->f = 5;
	if (!d->ai_pps)
		d->ai_pps = pps(40, mtu);
	if (!d->hai_pps)
		d->hai_pps = 10 * d->ai_pps;
	if (!d->min_pps)
		d->min_pps = pps(1, mtu);
}

/* Notification point: a request marked CE arrived. */
void ferry__rc_dcqcn_marked(struct ferry_rc_qp *qp, uint64_t now)
{
	static const uint8_t reserved[FERRY_ROCE_CNP_LEN];
	struct ferry_roce_pkt p = qp->tmpl;

	qp->cnt.rx_ce++;
	if (qp->cnp_sent && now < qp->cnp_at + qp->attr.dcqcn.cnp_interval_ns)
		return;
	p.opcode = FERRY_OP_CNP;
	p.becn = true;
	p.psn = 0;
	p.payload = reserved;
	p.len = FERRY_ROCE_CNP_LEN;
	if (qp->attr.tx(qp->attr.tx_ctx, &p)) {
		qp->cnt.tx_busy++;
		return; /* the next marked packet asks again */
	}
	qp->cnp_sent = true;
	qp->cnp_at = now;
	qp->cnt.tx_cnp++;
}

/* ns, or the smoothed round trip (queues included: the window keeps the
 * queue this QP builds under one round trip) if longer: a change is
 * judged only once its effect could be seen. */
static uint64_t after(const struct ferry_rc_qp *qp, uint64_t ns)
{
	return qp->srtt > ns ? qp->srtt : ns;
}

/* alpha's updates due by now, one per K (at most 1024: alpha is ~0 by
 * then). cnp_seen counts for the first. */
static void alpha_due(struct ferry_rc_qp *qp, uint64_t now)
{
	struct ferry__rc_dcqcn_st *s = &qp->dc;
	const struct ferry_rc_dcqcn *d = &qp->attr.dcqcn;

	/* a K holds two packets at least: a QP that sends slowly could not
	 * find a CNP in most K even with every packet marked */
	uint64_t k = s->rc && 2000000000ull / s->rc > d->k_ns ?
			     2000000000ull / s->rc : d->k_ns;

	if (now > s->alpha_at + 1024 * k)
		s->alpha_at = now - 1024 * k;
	while (now >= s->alpha_at + k) {
		s->alpha = (s->alpha * (ALPHA_ONE - d->g_1024) +
			    (s->cnp_seen ? ALPHA_ONE * d->g_1024 : 0)) /
			   ALPHA_ONE;
		s->cnp_seen = false;
		s->alpha_at += k;
	}
}

/* Reaction point: a CNP for this QP arrived. */
void ferry__rc_dcqcn_cnp(struct ferry_rc_qp *qp, uint64_t now)
{
	struct ferry__rc_dcqcn_st *s = &qp->dc;
	const struct ferry_rc_dcqcn *d = &qp->attr.dcqcn;

	qp->cnt.rx_cnp++;
	if (!s->active) { /* the QP's first CNP */
		s->active = true;
		s->alpha = ALPHA_ONE;
		s->alpha_at = now;
		/* from what the path delivered, else the window's pace, else
		 * its window per round trip, else 1 Gb/s */
		s->rc = ferry__rc_win_bw(qp) ? ferry__rc_win_bw(qp) :
			qp->pace_pps ? qp->pace_pps :
			qp->rtt_min ? (uint64_t)qp->win * 1000000000ull /
					      qp->rtt_min :
				      d->min_pps * 1000;
	} else {
		alpha_due(qp, now);
		if (now < s->cut_at + after(qp, d->k_ns)) {
			s->cnp_seen = true;
			return; /* the marks of the flight before the cut */
		}
	}
	s->cnp_seen = true;
	s->rt = s->rc;
	s->rc = s->rc - s->rc * s->alpha / (2 * ALPHA_ONE);
	if (s->rc < d->min_pps)
		s->rc = d->min_pps;
	s->cut_at = s->t_at = now;
	s->t_n = s->b_n = 0;
	s->b_sent = 0;
	qp->cnt.dcqcn_cuts++;
	ferry__rc_win_update(qp);
}

static void increase(struct ferry_rc_qp *qp)
{
	struct ferry__rc_dcqcn_st *s = &qp->dc;
	const struct ferry_rc_dcqcn *d = &qp->attr.dcqcn;
	uint32_t lo = s->t_n < s->b_n ? s->t_n : s->b_n;
	uint32_t hi = s->t_n < s->b_n ? s->b_n : s->t_n;

	if (lo > d->f && qp->rtt_min < LONG_PATH_NS)
		s->rt += (uint64_t)(lo - d->f) * d->hai_pps;
	else if (hi > d->f)
		s->rt += d->ai_pps;
	if (s->rt > MAX_PPS)
		s->rt = MAX_PPS;
	s->rc = (s->rt + s->rc) / 2;
	ferry__rc_win_update(qp);
}

/* Timers: alpha's decay and the timed increase events. */
void ferry__rc_dcqcn_progress(struct ferry_rc_qp *qp, uint64_t now)
{
	struct ferry__rc_dcqcn_st *s = &qp->dc;
	const struct ferry_rc_dcqcn *d = &qp->attr.dcqcn;
	uint64_t t = after(qp, d->t_ns);

	if (!s->active)
		return;
	alpha_due(qp, now);
	if (now > s->t_at + 64 * t)
		s->t_at = now - 64 * t; /* idle: the rate is long back */
	while (now >= s->t_at + t) {
		s->t_at += t;
		s->t_n++;
		increase(qp);
	}
}

/* A request packet went out: the byte counter's increase events. */
void ferry__rc_dcqcn_sent(struct ferry_rc_qp *qp)
{
	struct ferry__rc_dcqcn_st *s = &qp->dc;
	uint64_t b = qp->attr.dcqcn.b_pkts, rtt_pkts;

	if (!s->active)
		return;
	/* at least a round trip's packets at the current rate, as T */
	rtt_pkts = s->rc * (qp->srtt / 1000) / 1000000;
	if (rtt_pkts > b)
		b = rtt_pkts;
	if (++s->b_sent < b)
		return;
	s->b_sent = 0;
	s->b_n++;
	increase(qp);
}

uint64_t ferry__rc_dcqcn_rate(const struct ferry_rc_qp *qp, uint32_t *alpha)
{
	if (alpha)
		*alpha = qp->dc.alpha;
	return ferry__rc_dc_pps(qp);
}
