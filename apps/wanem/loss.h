/* Loss models: independent random loss, and the Gilbert-Elliott model of
 * bursty loss.
 *
 * Gilbert-Elliott: a two-state Markov chain stepped once per packet. From
 * Good the chain moves to Bad with probability p, from Bad back to Good
 * with probability r; then the packet is lost with probability loss_good
 * in Good and loss_bad in Bad. (netem's "gemodel p r 1-h 1-k" is p, r,
 * loss_bad, loss_good.) In the long run the chain is in Bad a fraction
 * p / (p + r) of packets; a stay in Bad lasts 1 / r packets on average.
 * The simple Gilbert model (loss_bad = 1, loss_good = 0) thus loses
 * p / (p + r) of packets in bursts of mean length 1 / r:
 * wanem_loss_gilbert() picks p and r from those two figures. */
#ifndef WANEM_LOSS_H
#define WANEM_LOSS_H

#include <stdbool.h>

#include "rng.h"

enum wanem_loss_kind {
	WANEM_LOSS_NONE,
	WANEM_LOSS_RANDOM,
	WANEM_LOSS_GE,
};

struct wanem_loss_attr {
	enum wanem_loss_kind kind;
	double p_loss;               /* RANDOM: per packet */
	double p, r;                 /* GE: Good->Bad, Bad->Good per packet */
	double loss_good, loss_bad;  /* GE: loss probability in each state */
};

struct wanem_loss {
	struct wanem_loss_attr a;
	bool bad;
};

/* Fill a for the simple Gilbert model losing the fraction loss of packets
 * in bursts of mean length burst (packets). Returns 0, or -EINVAL unless
 * 0 <= loss < 1 and burst >= 1 (and the implied p is at most 1). */
int wanem_loss_gilbert(double loss, double burst, struct wanem_loss_attr *a);

/* The long-run fraction of packets the model loses. */
double wanem_loss_mean(const struct wanem_loss_attr *a);

/* 0, or -EINVAL if a probability is outside [0, 1]. */
int wanem_loss_check(const struct wanem_loss_attr *a);

void wanem_loss_init(struct wanem_loss *l, const struct wanem_loss_attr *a);

/* Step the model for one packet: true if it is lost. */
static inline bool wanem_loss_drop(struct wanem_loss *l, struct wanem_rng *r)
{
	switch (l->a.kind) {
	case WANEM_LOSS_RANDOM:
		return wanem_rng_chance(r, l->a.p_loss);
	case WANEM_LOSS_GE:
		if (l->bad ? wanem_rng_chance(r, l->a.r)
			   : wanem_rng_chance(r, l->a.p))
			l->bad = !l->bad;
		return wanem_rng_chance(r, l->bad ? l->a.loss_bad
						   : l->a.loss_good);
	default:
		return false;
	}
}

#endif
