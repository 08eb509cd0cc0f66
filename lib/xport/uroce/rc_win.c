/* uroce RC engine: how many packets the requester keeps in flight, how
 * fast it sends them, and when it gives up waiting for an ACK.
 *
 * A fixed window (attr.window_init == attr.window_pkts) stays as set. An
 * adaptive one starts at window_init, the burst the peer's port is known
 * to take, and follows the path:
 * - Round trips are sampled one packet at a time (a new PSN sent, its ACK
 *   back; a go-back-N drops the sample, after Karn). The smallest sample
 *   of the last RTT_MIN_NS is the path's round trip without queues.
 * - Time is cut in periods of two such round trips; a period's delivery
 *   rate is the packets acknowledged in it over its length. The path's
 *   rate is the largest of the last FERRY__RC_BW_ROUNDS periods. A period
 *   in which the sender ran out of posted work (a credit stream, an idle
 *   pipeline) counts only if it beat that rate: otherwise a QP that sends
 *   little would pace itself to that little.
 * - The limit is twice rate x round trip (two bandwidth-delay products:
 *   one on the wire, one for the ACKs' coalescing and the periods'
 *   jitter; so a queue the QP builds stays under one), within
 *   [window_init, window_pkts].
 * - Packets leave paced, so that a window released at once (a go-back-N,
 *   a grown limit) does not reach the bottleneck as one burst. Before the
 *   first rate is known, a path of 1 ms and more (by attr.rtt_hint_ns)
 *   spreads the first window over half its round trip; on a path
 *   under 1 ms the window alone (sized to the peer's ring) does that, and
 *   a rate sampled over periods of tens of microseconds is too noisy to
 *   pace by (it cost a fifth of the goodput on a veth pair). Until the
 *   path is full (three periods in a row without a quarter more rate, as
 *   BBR's start-up judges it) the pace is three times the rate, and the
 *   limit doubles about each period; then a cycle of periods at 5/4
 *   (probing for more, for as long as the rate keeps rising by an eighth
 *   a period), 3/4 (draining that) and six at the rate. A fixed
 *   window is not paced by its rate. Once a CNP came, DCQCN's rate
 *   (rc_dcqcn.c) paces instead; attr.rate_pps, a cap, paces every QP
 *   that has one. A paced QP whose time has come sends a burst of up
 *   to an eighth of its round trip and at most 1 ms at its pace (16
 *   packets at most), then waits as long: the same rate, with a round,
 *   a wake-up and a sendmmsg per burst instead of per packet. A path of
 *   tens of microseconds stays paced packet by packet, as a NIC paces.
 * - A loss (a sequence NAK, at most once per flight) with a queue on the
 *   path (the last round trip a quarter above the smallest, or, while
 *   filling it, a period whose rate rose less than a quarter though the
 *   window could still grow) ends the filling and caps the limit at 7/10
 *   of what was in flight; each period without one lifts the cap by 1,
 *   2, 4, ... packets, so a queue that overflows keeps the flight below
 *   its size. A loss with no queue (a bit error, a random drop on a long
 *   path) is repaired by go-back-N and cuts nothing: on a path of 50 ms
 *   and 0.01% loss a cut per loss keeps the window far below the path.
 * - A retransmit timeout forgets the rate: the limit is window_init again.
 * The retransmit timeout follows the samples: three smoothed round trips
 * plus four deviations (RFC 6298's one round trip is too short here:
 * filling a path may put two round trips of queue on it within one, and a
 * timeout resends the whole flight; a real loss is repaired by a NAK, not
 * by the timer, unless it is the last packet). Before the first sample,
 * attr.rtt_hint_ns stands for one; never below attr.rto_ns. Without a
 * hint, a path slower than rto_ns times out on every flight (a resent
 * packet gives no sample): attr.rto_ns must then be above the round trip,
 * as on a NIC. */
#include "xport/uroce/rc.h"

#define RTT_MIN_NS 10000000000ull /* 10 s */
#define WIN_FLOOR 16u
#define LOSS_NUM 7u
#define LOSS_DEN 10u
#define PACE_BURST 16u /* packets sent back to back at most, when paced */
#define PACE_BURST_NS 1000000ull /* a paced burst: at most this long at
				    the pace (Linux's TCP sends about a
				    millisecond of its pacing rate per TSO
				    burst: sk_pacing_shift 10) */
#define PACE_RTT_NS 1000000ull /* a shorter path is not paced by its rate */

static bool fixed(const struct ferry_rc_qp *qp)
{
	return qp->attr.window_init >= qp->attr.window_pkts;
}

/* Pacing gains once the path is full, in quarters, one per period: probe
 * for more, drain what that queued, cruise. */
static const uint8_t cycle[8] = { 5, 3, 4, 4, 4, 4, 4, 4 };

static void pace(struct ferry_rc_qp *qp, uint64_t bw)
{
	uint64_t pps = 0, dc = ferry__rc_dc_pps(qp);

	if (dc) /* DCQCN governs a QP that marks slowed */
		pps = dc;
	else if (bw && !fixed(qp) && qp->rtt_min >= PACE_RTT_NS)
		pps = qp->filled ? bw * cycle[qp->cyc % 8] / 4 : bw * 3;
	else if (!bw && !fixed(qp) && qp->srtt >= PACE_RTT_NS)
		/* no rate yet: the first window over half the round trip
		 * hinted, not at once into the bottleneck's queue */
		pps = (uint64_t)qp->win * 2000000000ull / qp->srtt;
	if (qp->attr.rate_pps && (!pps || pps > qp->attr.rate_pps))
		pps = qp->attr.rate_pps;
	qp->pace_pps = pps;
}

static uint64_t max_bw(const struct ferry_rc_qp *qp)
{
	uint64_t bw = 0;

	for (unsigned i = 0; i < FERRY__RC_BW_ROUNDS; i++)
		if (qp->bw[i] > bw)
			bw = qp->bw[i];
	return bw;
}

void ferry__rc_win_update(struct ferry_rc_qp *qp)
{
	const uint32_t lo = qp->attr.window_init, hi = qp->attr.window_pkts;
	uint64_t bw = max_bw(qp), w;

	if (fixed(qp)) {
		qp->win = hi;
		pace(qp, bw);
		return;
	}
	/* packets/s x ns: at most 2^32 x 2^40, within 64 bits once scaled */
	w = bw * (qp->rtt_min / 1000) / 1000000 * 2;
	if (w < lo)
		w = lo;
	if (w > qp->win_cap)
		w = qp->win_cap;
	if (w > hi)
		w = hi;
	qp->win = (uint32_t)w;
	pace(qp, bw);
}

/* The path's rate unknown again: the window from window_init, filling. */
static void forget_rate(struct ferry_rc_qp *qp)
{
	qp->filled = false;
	qp->full_bw = 0;
	qp->full_n = 0;
	for (unsigned i = 0; i < FERRY__RC_BW_ROUNDS; i++)
		qp->bw[i] = 0;
	ferry__rc_win_update(qp);
}

void ferry__rc_win_start(struct ferry_rc_qp *qp)
{
	qp->win_cap = qp->attr.window_pkts;
	qp->cap_step = 1;
	qp->srtt = qp->attr.rtt_hint_ns;
	qp->rttvar = qp->attr.rtt_hint_ns / 2;
	forget_rate(qp);
}

void ferry__rc_win_sent(struct ferry_rc_qp *qp, uint32_t psn, uint64_t now)
{
	if (qp->probe_on || psn != qp->snd_max)
		return; /* one sample at a time, never a resent packet */
	qp->probe_on = true;
	qp->probe_psn = psn;
	qp->probe_at = now;
}

static void rtt_sample(struct ferry_rc_qp *qp, uint64_t s, uint64_t now)
{
	qp->rtt_last = s;
	if (!qp->rtt_min) { /* the first sample replaces the hint */
		qp->srtt = s;
		qp->rttvar = s / 2;
	} else {
		uint64_t d = s > qp->srtt ? s - qp->srtt : qp->srtt - s;

		qp->rttvar = (3 * qp->rttvar + d) / 4;
		qp->srtt = (7 * qp->srtt + s) / 8;
	}
	if (!qp->rtt_min || s <= qp->rtt_min ||
	    now - qp->rtt_min_at > RTT_MIN_NS) {
		qp->rtt_min = s ? s : 1;
		qp->rtt_min_at = now;
	}
}

void ferry__rc_win_acked(struct ferry_rc_qp *qp, uint32_t old_una,
			 uint32_t next, uint64_t now)
{
	uint64_t r, known;
	bool rising;

	qp->dlv += (uint32_t)ferry__psn_diff(next, old_una);
	if (qp->probe_on && ferry__psn_diff(next, qp->probe_psn) > 0) {
		qp->probe_on = false;
		if (!qp->rtt_min) { /* the first: periods start now */
			qp->round_at = now;
			qp->round_dlv = qp->dlv;
		}
		if (now >= qp->probe_at)
			rtt_sample(qp, now - qp->probe_at, now);
	}
	if (!qp->rtt_min || now < qp->round_at + 2 * qp->rtt_min)
		return;
	/* a period of two round trips ended: its delivery rate (over two,
	 * so that a window sent at once and acknowledged in pieces counts
	 * whole) */
	r = (qp->dlv - qp->round_dlv) * 1000000000ull / (now - qp->round_at);
	known = max_bw(qp);
	/* probing for more and finding it (an eighth more than known): go
	 * on probing rather than wait a whole cycle for the next probe */
	rising = cycle[qp->cyc % 8] > 4 && r > known + known / 8;
	/* a period in which the sender ran out of work says nothing about
	 * the path unless it was faster than what the path is known for */
	if (!qp->app_limited || r > known)
		qp->bw[qp->bw_i++ % FERRY__RC_BW_ROUNDS] = r;
	qp->app_limited = false;
	if (r >= qp->full_bw + qp->full_bw / 4) {
		qp->full_bw = r;
		qp->full_n = 0;
	} else if (++qp->full_n >= 3) {
		qp->filled = true;
	}
	if (!qp->loss_round && qp->win_cap < qp->attr.window_pkts) {
		qp->win_cap += qp->cap_step;
		if (qp->win_cap > qp->attr.window_pkts)
			qp->win_cap = qp->attr.window_pkts;
		qp->cap_step *= 2;
	}
	qp->loss_round = false;
	qp->round_at = now;
	qp->round_dlv = qp->dlv;
	if (qp->filled && !rising)
		qp->cyc++;
	ferry__rc_win_update(qp);
}

void ferry__rc_win_loss(struct ferry_rc_qp *qp)
{
	uint32_t fly = (uint32_t)ferry__psn_diff(qp->snd_max, qp->una);

	if (fixed(qp) || ferry__psn_diff(qp->una, qp->recover) < 0)
		return; /* the same flight lost more: one cut per flight */
	if (qp->rtt_last < qp->rtt_min + qp->rtt_min / 4 &&
	    (qp->filled || !qp->full_n || qp->win >= qp->attr.window_pkts)) {
		qp->cnt.loss_no_queue++;
		return; /* no queue on the path: not congestion */
	}
	qp->recover = qp->snd_max;
	qp->filled = true;
	qp->win_cap = (uint32_t)((uint64_t)fly * LOSS_NUM / LOSS_DEN);
	if (qp->win_cap < WIN_FLOOR)
		qp->win_cap = WIN_FLOOR;
	qp->cap_step = 1;
	qp->loss_round = true;
	qp->cnt.win_cuts++;
	ferry__rc_win_update(qp);
}

void ferry__rc_win_timeout(struct ferry_rc_qp *qp)
{
	forget_rate(qp);
}

uint64_t ferry__rc_win_bw(const struct ferry_rc_qp *qp)
{
	return max_bw(qp);
}

bool ferry__rc_pace_wait(struct ferry_rc_qp *qp, uint64_t now)
{
	return qp->pace_pps && now < qp->pace_at;
}

void ferry__rc_pace_sent(struct ferry_rc_qp *qp, uint64_t now)
{
	uint64_t gap;

	if (!qp->pace_pps)
		return;
	gap = 1000000000ull / qp->pace_pps;
	/* idle time earns at most a burst of PACE_BURST packets */
	if (qp->pace_at + PACE_BURST * gap < now)
		qp->pace_at = now - PACE_BURST * gap;
	qp->pace_at += gap;
}

uint32_t ferry__rc_pace_burst(const struct ferry_rc_qp *qp)
{
	uint64_t ns = qp->rtt_min / 8 < PACE_BURST_NS ? qp->rtt_min / 8 :
							PACE_BURST_NS;
	uint64_t b = qp->pace_pps * ns / 1000000000ull;

	return b <= 1 ? 1 : b >= PACE_BURST ? PACE_BURST : (uint32_t)b;
}

uint64_t ferry__rc_rto(const struct ferry_rc_qp *qp)
{
	uint64_t r = 3 * qp->srtt + 4 * qp->rttvar;

	return r > qp->attr.rto_ns ? r : qp->attr.rto_ns;
}

uint32_t ferry__rc_window(const struct ferry_rc_qp *qp, uint64_t *rtt_ns)
{
	if (rtt_ns)
		*rtt_ns = qp->rtt_min;
	return qp->win;
}
