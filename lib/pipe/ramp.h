/* The stream ramp (internal): how many of a tcp session's streams carry
 * data.
 *
 * The path plan opens enough streams for their windows to hold the
 * bandwidth-delay product of its target. Where that target is a guess
 * (the speed of the NIC, not a --rate the user gave), the bottleneck may
 * be far slower, shared, or lossy, and every stream opened at once would
 * take from whatever else crosses it. So the sender starts with the
 * floor's count (what needs no ramp where windows are large) and adds
 * more while goodput keeps rising and there is no loss: once the streams
 * carrying data reach a plateau (goodput up less than FERRY__RAMP_RISE
 * over an interval of two round trips), it doubles them; at the next
 * plateau it judges that step, once the new streams have had time to
 * reach an old stream's window in slow start (from ten segments, doubling
 * each round trip). A step whose new streams each added nearly what an
 * old one carries (FERRY__RAMP_FULL) paid, and the ramp goes on,
 * quadrupling; otherwise the bottleneck is near, and it keeps only as
 * many of the new streams as the gain is worth, and stops. Loss (segments
 * sent again over FERRY__RAMP_LOSS of those sent) or every planned stream
 * in use stops it too. Intervals count from the first in which every
 * stream carrying data had at least a first window acknowledged: before
 * the session's data flows, a flat, near-zero goodput is no plateau.
 *
 * Pure arithmetic on samples: the caller (pipe.c) reads the counters and
 * gates the workers (pipe_dp.c). */
#ifndef FERRY_PIPE_RAMP_H
#define FERRY_PIPE_RAMP_H

#include <stdbool.h>
#include <stdint.h>

#define FERRY__RAMP_RISE 0.10   /* a rise under 10% per interval: a plateau */
#define FERRY__RAMP_LOSS 0.001  /* retransmitted over sent: loss */
#define FERRY__RAMP_SETTLE 2    /* intervals a step gets at least before a
				   plateau may end it */
#define FERRY__RAMP_MIN_IV_NS 200000000ull /* the shortest interval */
#define FERRY__RAMP_MSS 1448    /* bytes per segment, for the loss ratio */
#define FERRY__RAMP_FULL 0.9    /* a step whose new streams each carry this
				   much of an old one's goodput paid */

struct ferry__ramp {
	unsigned max;        /* streams opened */
	unsigned active;     /* streams that may carry data */
	unsigned peak;       /* the most that ever could */
	unsigned from;       /* active before the step under test; 0: none */
	double rate_from;    /* goodput at the plateau before it, B/s */
	double last_rate;    /* the last interval's goodput, B/s; < 0: none */
	unsigned since_step; /* intervals since the last step */
	uint64_t step_ns;    /* when it was taken */
	uint64_t settle_ns;  /* how long its streams' slow start takes */
	uint64_t rtt_ns, interval_ns, last_ns;
	uint64_t bytes, retx; /* totals at the last sample */
	bool done;           /* the count is final */
	char why[192];       /* the last change and its reason */
};

/* Start with start of max streams; rtt_s sets the interval (two round
 * trips, at least FERRY__RAMP_MIN_IV_NS). */
void ferry__ramp_init(struct ferry__ramp *r, unsigned start, unsigned max,
		      double rtt_s, uint64_t now_ns);

/* A sample at now_ns: the bytes the receiver has acknowledged and the
 * segments retransmitted so far, over every stream. Before the next
 * interval is due, or once done, it changes nothing. Returns true when
 * r->active or r->done changed (r->why says how and why). */
bool ferry__ramp_sample(struct ferry__ramp *r, uint64_t now_ns,
			uint64_t acked_bytes, uint64_t retx);

#endif
