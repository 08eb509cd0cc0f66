/* A token bucket: the rate limiter in front of the delay line. Tokens are
 * bytes; they accrue at rate_bps / 8 per second up to depth. A packet may
 * leave when the bucket holds min(len, depth) tokens, and takes len of
 * them (the balance may go below zero for a packet larger than the
 * bucket), so over any long run exactly rate_bps leave, and in any
 * interval T at most depth + rate * T + one packet.
 *
 * While packets wait for tokens (the link is busy), tokens accrue without
 * the depth cap, so a poller that runs late (descheduled for a few ms)
 * sends what the link would have sent meanwhile instead of losing it;
 * the cap returns once the queue has drained (wanem_tbf_idle). */
#ifndef WANEM_TBF_H
#define WANEM_TBF_H

#include <stdbool.h>
#include <stdint.h>

struct wanem_tbf {
	double bytes_per_ns;
	double depth;
	double tokens;
	uint64_t last;  /* time of the last refill */
	bool backlogged; /* a packet waited for tokens since the last idle */
};

/* Start full at time now. rate_bps > 0, depth_bytes > 0. */
void wanem_tbf_init(struct wanem_tbf *t, uint64_t rate_bps,
		    uint64_t depth_bytes, uint64_t now);

/* Take len bytes' worth at time now if the bucket allows it. */
bool wanem_tbf_take(struct wanem_tbf *t, uint32_t len, uint64_t now);

/* The queue in front of the bucket is empty: cap the tokens again. */
void wanem_tbf_idle(struct wanem_tbf *t);

/* The earliest time at which a packet of len bytes may leave (at or after
 * the last refill). */
uint64_t wanem_tbf_when(const struct wanem_tbf *t, uint32_t len);

#endif
