/* The stream ramp: the rule of ramp.h on goodput samples. */
#include <math.h>
#include <stdio.h>

#include "pipe/ramp.h"
#include "xport/tcp/tcp_plan.h"

void ferry__ramp_init(struct ferry__ramp *r, unsigned start, unsigned max,
		      double rtt_s, uint64_t now_ns)
{
	uint64_t iv = (uint64_t)(2.0 * rtt_s * 1e9);

	*r = (struct ferry__ramp){
		.max = max,
		.active = start < max ? start : max,
		.last_rate = -1,
		.rtt_ns = (uint64_t)(rtt_s * 1e9),
		.interval_ns = iv > FERRY__RAMP_MIN_IV_NS ? iv :
							    FERRY__RAMP_MIN_IV_NS,
		.last_ns = now_ns,
	};
	r->peak = r->active;
	r->done = r->active >= max;
	snprintf(r->why, sizeof(r->why),
		 "%u of %u streams to start; more while goodput rises without loss",
		 r->active, max);
}

/* How long a new stream's slow start takes to reach per_stream B/s: one
 * round trip per doubling from FERRY__TCP_IW to its window, and one
 * more for its acknowledgements to come back. */
static uint64_t settle(const struct ferry__ramp *r, double per_stream)
{
	double win = per_stream * (double)r->rtt_ns / 1e9;
	double trips = win > FERRY__TCP_IW ? log2(win / FERRY__TCP_IW) : 0;

	if (trips > 30)
		trips = 30;
	return (uint64_t)((ceil(trips) + 1) * (double)r->rtt_ns);
}

/* Judge the step from r->from streams at the plateau it reached (rate):
 * true when it paid in full, every added stream carrying nearly what an
 * old one does. Otherwise the bottleneck is near: keep the old streams
 * and as many new ones as the gain is worth, and stop. */
static bool step_paid(struct ferry__ramp *r, double rate)
{
	unsigned added = r->active - r->from, keep;
	double per_old = r->rate_from / r->from;
	double worth = per_old > 0 ? (rate - r->rate_from) / per_old : added;

	if (worth >= FERRY__RAMP_FULL * added)
		return true;
	keep = r->from + (worth > 0 ? (unsigned)(worth + 0.5) : 0);
	if (keep > r->active)
		keep = r->active;
	snprintf(r->why, sizeof(r->why),
		 "%u streams (%u more added %+.0f%% goodput, %.2f Gb/s: kept what it was worth)",
		 keep, added,
		 r->rate_from > 0 ? 100.0 * (rate / r->rate_from - 1.0) : 0.0,
		 rate * 8 / 1e9);
	r->active = keep;
	r->done = true;
	return false;
}

bool ferry__ramp_sample(struct ferry__ramp *r, uint64_t now_ns,
			uint64_t acked_bytes, uint64_t retx)
{
	uint64_t dt = now_ns - r->last_ns, moved, lost;
	unsigned factor;
	double rate;
	bool rising;

	if (r->done || now_ns < r->last_ns + r->interval_ns)
		return false;
	moved = acked_bytes - r->bytes;
	lost = retx - r->retx;
	if (r->last_rate < 0 &&
	    moved < (uint64_t)r->active * FERRY__TCP_IW) {
		/* the data has not started (less than one first window per
		 * stream): no baseline yet, and no plateau before one */
		r->bytes = acked_bytes;
		r->retx = retx;
		r->last_ns = now_ns;
		return false;
	}
	rate = (double)moved * 1e9 / (double)dt;
	rising = r->last_rate < 0 ||
		 rate > r->last_rate * (1.0 + FERRY__RAMP_RISE);
	r->bytes = acked_bytes;
	r->retx = retx;
	r->last_ns = now_ns;
	r->last_rate = rate;
	r->since_step++;
	/* nothing moving yet (the session's start) is no plateau */
	if (rising || moved == 0 || r->since_step < FERRY__RAMP_SETTLE ||
	    now_ns < r->step_ns + r->settle_ns)
		return false;
	/* a plateau */
	if (r->from && !step_paid(r, rate))
		return true;
	if ((double)lost * FERRY__RAMP_MSS > FERRY__RAMP_LOSS * (double)moved) {
		snprintf(r->why, sizeof(r->why),
			 "%u streams (loss: %llu segments sent again at %.2f Gb/s)",
			 r->active, (unsigned long long)lost, rate * 8 / 1e9);
		r->done = true;
		return true;
	}
	if (r->active >= r->max) {
		snprintf(r->why, sizeof(r->why),
			 "all %u streams (goodput rose with each step, %.2f Gb/s)",
			 r->active, rate * 8 / 1e9);
		r->done = true;
		return true;
	}
	/* the first step doubles; one after a step that paid quadruples */
	factor = r->from ? 4 : 2;
	r->from = r->active;
	r->rate_from = rate;
	r->active *= factor;
	if (r->active > r->max)
		r->active = r->max;
	r->peak = r->active;
	r->since_step = 0;
	r->step_ns = now_ns;
	r->settle_ns = settle(r, rate / r->from);
	snprintf(r->why, sizeof(r->why),
		 "%u -> %u streams (goodput level at %.2f Gb/s, no loss)",
		 r->from, r->active, rate * 8 / 1e9);
	return true;
}
