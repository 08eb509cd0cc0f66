/* Values on ferry-wanem's command line, and the sizes that follow. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "opts.h"

/* A non-negative number at the start of s; *end past it. */
static bool number(const char *s, double *v, const char **end)
{
	char *e;

	if (!s || (!isdigit((unsigned char)*s) && *s != '.'))
		return false;
	errno = 0;
	*v = strtod(s, &e);
	if (e == s || errno || !isfinite(*v) || *v < 0)
		return false;
	*end = e;
	return true;
}

int wanem_parse_rate(const char *s, uint64_t *bps, char *why, size_t len)
{
	static const struct {
		const char *unit;
		double mul;
	} units[] = {
		{ "", 1 }, { "bit", 1 }, { "kbit", 1e3 }, { "mbit", 1e6 },
		{ "gbit", 1e9 }, { "tbit", 1e12 },
	};
	const char *end;
	double v;

	if (number(s, &v, &end))
		for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (!strcasecmp(end, units[i].unit)) {
				v *= units[i].mul;
				if (v < 1e3 || v > 1e13) {
					snprintf(why, len, "rate '%s' is outside 1kbit .. 10tbit", s);
					return -EINVAL;
				}
				*bps = (uint64_t)llround(v);
				return 0;
			}
	snprintf(why, len, "bad rate '%s': want e.g. 100mbit, 1gbit, 10gbit "
		 "(units bit, kbit, mbit, gbit, tbit: bits per second)", s);
	return -EINVAL;
}

int wanem_parse_bytes(const char *s, uint64_t *out, char *why, size_t len)
{
	const char *end;
	double v, mul = 1;

	if (!number(s, &v, &end))
		goto bad;
	switch (toupper((unsigned char)*end)) {
	case 0:
		break;
	case 'K':
		mul = 1024.0;
		break;
	case 'M':
		mul = 1024.0 * 1024;
		break;
	case 'G':
		mul = 1024.0 * 1024 * 1024;
		break;
	default:
		goto bad;
	}
	if (*end && end[1] && strcasecmp(end + 1, "b") && strcasecmp(end + 1, "ib"))
		goto bad;
	if (v * mul > 1e15)
		goto bad;
	*out = (uint64_t)(v * mul);
	return 0;
bad:
	snprintf(why, len, "bad size '%s': want bytes, e.g. 1500, 256K, 4M, 1G", s);
	return -EINVAL;
}

int wanem_parse_pct(const char *s, double *frac, char *why, size_t len)
{
	const char *end;
	double v;

	if (!number(s, &v, &end) || (*end && strcmp(end, "%")) || v > 100) {
		snprintf(why, len, "bad percentage '%s': want 0 to 100, e.g. 0.1 or 1%%", s);
		return -EINVAL;
	}
	*frac = v / 100;
	return 0;
}

int wanem_parse_ms(const char *s, uint64_t *ns, char *why, size_t len)
{
	const char *end;
	double v;

	if (!number(s, &v, &end) || (*end && strcasecmp(end, "ms")) ||
	    v > WANEM_DELAY_MAX_MS) {
		snprintf(why, len, "bad delay '%s': want milliseconds from 0 to %d, "
			 "e.g. 25 or 2.5", s, WANEM_DELAY_MAX_MS);
		return -EINVAL;
	}
	*ns = (uint64_t)llround(v * 1e6);
	return 0;
}

uint64_t wanem_mbufs_needed(const struct wanem_attr *a)
{
	uint64_t n = 4096; /* rx bursts, tx retries, per-lcore caches */

	for (int d = 0; d < 2; d++) {
		const struct wanem_path_attr *p = &a->dir[d];
		double pps = p->rate_bps ? (double)p->rate_bps / 8 / WANEM_POOL_FRAME
					 : (double)WANEM_PPS_NO_RATE;

		n += (uint64_t)(pps * (double)p->delay_ns / 1e9);
		n += (p->queue_bytes + p->burst_bytes) / WANEM_POOL_FRAME;
	}
	return n;
}

int wanem_attr_finish(struct wanem_attr *a, char *why, size_t len)
{
	uint64_t need;

	for (int d = 0; d < 2; d++) {
		struct wanem_path_attr *p = &a->dir[d];

		if (!p->rate_bps && (p->queue_bytes || p->ecn_bytes || p->burst_bytes)) {
			snprintf(why, len, "--queue, --ecn and --burst need --rate "
				 "(the queue builds in front of the rate limiter)");
			return -EINVAL;
		}
		if (p->rate_bps && !p->burst_bytes)
			p->burst_bytes = wanem_default_burst(p->rate_bps);
		if (p->rate_bps && !p->queue_bytes)
			p->queue_bytes = wanem_default_queue(p->rate_bps);
		if (p->ecn_bytes && p->ecn_bytes >= p->queue_bytes) {
			snprintf(why, len, "--ecn %llu must be below the queue limit "
				 "(%llu bytes)", (unsigned long long)p->ecn_bytes,
				 (unsigned long long)p->queue_bytes);
			return -EINVAL;
		}
		p->seed = a->seed ^ (d ? 0x6a09e667f3bcc909ull : 0);
	}
	need = wanem_mbufs_needed(a);
	if (need < WANEM_MBUFS_MIN)
		need = WANEM_MBUFS_MIN;
	if (!a->mbufs && need > WANEM_MBUFS_MAX) {
		snprintf(why, len, "the delay and rate need about %llu packet "
			 "buffers (%llu MiB), more than the cap of %u: lower "
			 "--rate or --delay, or set --mbufs",
			 (unsigned long long)need,
			 (unsigned long long)(need * 2432 >> 20), WANEM_MBUFS_MAX);
		return -E2BIG;
	}
	if (!a->mbufs)
		a->mbufs = (uint32_t)need;
	for (int d = 0; d < 2; d++)
		a->dir[d].capacity = a->mbufs;
	return 0;
}
