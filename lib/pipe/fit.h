/* Windows that follow the rate (internal): a tcp receiver's clamp on each
 * stream's advertised window, so that a session on a long path keeps no
 * more of a shared bottleneck's queue than it needs.
 *
 * The path plan sizes windows for its target, often the speed of the NIC,
 * not the slower bottleneck it cannot see; with windows that never bind,
 * the congestion control keeps the bottleneck's queue full, and a flow
 * beside ferry whose own window is small (one stream of a stock host)
 * crosses that queue at a fraction of what it carries alone. So once a
 * stream has left slow start (its rate rose less than FERRY__FIT_RISE over
 * an interval of two round trips), its window is held to
 *
 *     FERRY__FIT_GAIN x its rate x the path's base RTT + FERRY__FIT_EXTRA
 *
 * each interval. On a path with room the window grows by the gain each
 * interval; at a bottleneck it settles where the RTT is a little over
 * gain x base RTT: the session keeps about (gain - 1) x its own
 * bandwidth-delay product plus FERRY__FIT_EXTRA per stream queued. The
 * fixed part is what makes streams converge: at the fixed point every
 * stream crossing the same queue carries extra / (RTT - gain x base RTT),
 * the same rate (the argument of TCP Vegas), from however uneven a start.
 * A rate under half the last one (a sender pausing between files, a
 * stall) lowers the window only once it has lasted FERRY__FIT_DIPS
 * intervals.
 *
 * Loss changes the arithmetic: a hole holds the window's right edge
 * until its retransmission arrives, so a lossy stream delivers in order
 * well under a window per round trip, and a window of 1.25 x that rate
 * would shrink at every loss until the stream starves (1% random loss at
 * 150 ms took four streams from 0.8 Gb/s to under 0.1). So in an
 * interval in which packets arrived out of order while the round trip
 * (the receiver's own estimate) stayed under FERRY__FIT_QUEUED x the base
 * RTT (loss with no queue behind it: the path's, not a full
 * bottleneck's), the window is never lowered and may grow to
 * FERRY__FIT_LOSS_GAIN x the rate (as the kernel's own receive-buffer
 * tuning allows twice what was read per round trip). Loss with a long
 * round trip is a full queue's: the window follows the rate as without
 * loss, which empties it.
 *
 * Slow start is the kernel's, with one bound. It doubles what a stream
 * has in flight each round trip and learns of the bottleneck only from
 * the loss it causes: the round trip it reaches the bottleneck's rate, it
 * has about twice the BDP out, and more each round trip after (bbr's
 * startup runs three more; with a queue of one BDP, that is a BDP or
 * more of drops, and seconds of recovery for every flow through it). So
 * FERRY__FIT_SS_DIV times a round trip the receiver raises a
 * slow-starting stream's window to FERRY__FIT_SS_GAIN x the rate it
 * delivered since the last check x the base RTT + FERRY__FIT_EXTRA
 * (never lowering it): room to double each round trip while the rate
 * doubles, and once the rate stops at the bottleneck's, no more than two
 * BDPs in flight, one of them queued.
 * Paths whose round trip is under two checks (FERRY__FIT_SS_MIN_NS
 * apart) leave slow start alone: the checks would lag it.
 *
 * The base RTT is the plan's, measured on the control connection before
 * the session's data made any queue. Paths under FERRY__FIT_MIN_RTT_S are
 * left to the kernel: their windows are small already.
 *
 * Pure arithmetic on byte counts: the caller (pipe.c) reads each stream's
 * received bytes and sets the clamps (ops.clamp). */
#ifndef FERRY_PIPE_FIT_H
#define FERRY_PIPE_FIT_H

#include <stdbool.h>
#include <stdint.h>

#define FERRY__FIT_GAIN 1.25
#define FERRY__FIT_LOSS_GAIN 2.0      /* in an interval with loss */
#define FERRY__FIT_QUEUED 1.5         /* x base RTT: a queue behind a loss */
#define FERRY__FIT_EXTRA (256u << 10) /* bytes per stream */
#define FERRY__FIT_RISE 0.5           /* a rise under 50%: out of slow start */
#define FERRY__FIT_DIPS 3             /* intervals a dip must last */
#define FERRY__FIT_MIN_RTT_S 0.005
#define FERRY__FIT_MIN_IV_NS 200000000ull /* the shortest interval */
#define FERRY__FIT_SS_GAIN 2.0        /* slow start: x the rate x base RTT */
#define FERRY__FIT_SS_DIV 4           /* its checks: base RTT / this */
#define FERRY__FIT_SS_MIN_NS 20000000ull /* ... and at least 20 ms apart */

struct ferry__fit_stream {
	uint64_t bytes;    /* received at the last sample */
	uint64_t ooo;      /* packets out of order, at the last sample */
	double rate;       /* the rate the window follows, B/s; 0: none */
	unsigned dips;     /* intervals in a row under half of rate */
	bool engaged;      /* out of slow start: clamped */
	uint64_t clamp;    /* the window, bytes; 0: none */
	uint64_t ss_bytes; /* received at the last slow-start check */
};

struct ferry__fit {
	unsigned n;
	double rtt_s;
	uint64_t interval_ns, last_ns;
	uint64_t ss_interval_ns, ss_last_ns; /* the slow-start checks; 0:
						 none (a short path) */
	uint64_t max;      /* the largest window to set (0: no bound) */
	unsigned engaged;  /* streams clamped */
	struct ferry__fit_stream *s;
};

/* For n streams on a path of base RTT rtt_s; max: the window the socket
 * buffers allow (0: unknown). -ENOMEM, or 0; f->n is 0 (nothing to do)
 * where the path is too short. */
int ferry__fit_init(struct ferry__fit *f, unsigned n, double rtt_s,
		    uint64_t max, uint64_t now_ns);
void ferry__fit_free(struct ferry__fit *f);

/* What a stream has received so far (xport ops.rx_counts). */
struct ferry__fit_in {
	uint64_t bytes, ooo;
	double rtt_s; /* 0: no estimate */
};

/* Is a sample due at now_ns (an interval, or a check of slow start)? */
bool ferry__fit_due(const struct ferry__fit *f, uint64_t now_ns);

/* A sample at now_ns: in[i], what stream i has received so far. Before
 * the next interval or slow-start check is due it changes nothing and
 * returns false; else true when clamps may have moved: the caller sets
 * f->s[i].clamp on every stream where it is not 0 (again: the kernel's
 * own buffer tuning may have moved it). */
bool ferry__fit_sample(struct ferry__fit *f, uint64_t now_ns,
		       const struct ferry__fit_in *in);

#endif
