/* Windows that follow the rate: the rule of fit.h on byte counts. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pipe/fit.h"

int ferry__fit_init(struct ferry__fit *f, unsigned n, double rtt_s,
		    uint64_t max, uint64_t now_ns)
{
	uint64_t iv = (uint64_t)(2.0 * rtt_s * 1e9);

	memset(f, 0, sizeof(*f));
	if (!n || rtt_s < FERRY__FIT_MIN_RTT_S)
		return 0;
	f->s = calloc(n, sizeof(*f->s));
	if (!f->s)
		return -ENOMEM;
	f->n = n;
	f->rtt_s = rtt_s;
	f->max = max;
	f->interval_ns = iv > FERRY__FIT_MIN_IV_NS ? iv : FERRY__FIT_MIN_IV_NS;
	f->last_ns = now_ns;
	/* checks of slow start: a few per round trip, or none */
	iv = (uint64_t)(rtt_s * 1e9) / FERRY__FIT_SS_DIV;
	if (iv < FERRY__FIT_SS_MIN_NS)
		iv = FERRY__FIT_SS_MIN_NS;
	f->ss_interval_ns = 2 * iv <= (uint64_t)(rtt_s * 1e9) ? iv : 0;
	f->ss_last_ns = now_ns;
	return 0;
}

void ferry__fit_free(struct ferry__fit *f)
{
	free(f->s);
	memset(f, 0, sizeof(*f));
}

static uint64_t window(const struct ferry__fit *f, double gain, double rate)
{
	double w = gain * rate * f->rtt_s + FERRY__FIT_EXTRA;

	if (f->max && w > (double)f->max)
		return f->max;
	return (uint64_t)w;
}

/* The bound on slow start (fit.h): each check raises a stream's window to
 * FERRY__FIT_SS_GAIN x its rate since the last check x the base RTT. The
 * checks come a few per round trip, so the window grows by a root of two
 * between them, well within the bound, though that rate trails the
 * stream's by half a check. */
static bool slow_start_bound(struct ferry__fit *f, uint64_t now_ns,
			     const struct ferry__fit_in *in)
{
	double dt = (double)(now_ns - f->ss_last_ns) / 1e9;
	bool changed = false;

	f->ss_last_ns = now_ns;
	for (unsigned i = 0; i < f->n; i++) {
		struct ferry__fit_stream *s = &f->s[i];
		double rate = (double)(in[i].bytes - s->ss_bytes) / dt;
		uint64_t w;

		s->ss_bytes = in[i].bytes;
		if (s->engaged || rate <= 0)
			continue;
		w = window(f, FERRY__FIT_SS_GAIN, rate);
		if (w > s->clamp) {
			s->clamp = w;
			changed = true;
		}
	}
	return changed;
}

static bool slow_start_due(const struct ferry__fit *f, uint64_t now_ns)
{
	return f->ss_interval_ns && f->engaged < f->n &&
	       now_ns >= f->ss_last_ns + f->ss_interval_ns;
}

bool ferry__fit_due(const struct ferry__fit *f, uint64_t now_ns)
{
	return f->n && (now_ns >= f->last_ns + f->interval_ns ||
			slow_start_due(f, now_ns));
}

bool ferry__fit_sample(struct ferry__fit *f, uint64_t now_ns,
		       const struct ferry__fit_in *in)
{
	bool changed = false;
	double dt;

	if (!f->n)
		return false;
	if (slow_start_due(f, now_ns))
		changed = slow_start_bound(f, now_ns, in);
	if (now_ns < f->last_ns + f->interval_ns)
		return changed;
	dt = (double)(now_ns - f->last_ns) / 1e9;
	f->last_ns = now_ns;
	for (unsigned i = 0; i < f->n; i++) {
		struct ferry__fit_stream *s = &f->s[i];
		double rate = (double)(in[i].bytes - s->bytes) / dt;
		/* loss with no queue behind it (fit.h) */
		bool lossy = in[i].ooo != s->ooo &&
			     in[i].rtt_s < FERRY__FIT_QUEUED * f->rtt_s;

		s->bytes = in[i].bytes;
		s->ooo = in[i].ooo;
		if (rate <= 0)
			continue; /* idle: held back, or done */
		if (!s->engaged) {
			/* slow start multiplies the rate each interval */
			if (s->rate > 0 &&
			    rate < s->rate * (1.0 + FERRY__FIT_RISE)) {
				s->engaged = true;
				f->engaged++;
			}
			if (!s->engaged) {
				s->rate = rate;
				continue;
			}
		} else if (lossy) {
			/* never lower; room for the holes (fit.h) */
			uint64_t w = window(f, FERRY__FIT_LOSS_GAIN, rate);

			s->dips = 0;
			if (rate > s->rate)
				s->rate = rate;
			if (w > s->clamp)
				s->clamp = w;
			continue;
		} else if (rate < s->rate / 2 && ++s->dips < FERRY__FIT_DIPS) {
			continue; /* a dip, not yet a new rate */
		}
		s->dips = 0;
		s->rate = rate;
		s->clamp = window(f, FERRY__FIT_GAIN, rate);
	}
	return true;
}
