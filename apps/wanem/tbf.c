/* Token bucket rate limiter. */
#include <math.h>

#include "tbf.h"

void wanem_tbf_init(struct wanem_tbf *t, uint64_t rate_bps,
		    uint64_t depth_bytes, uint64_t now)
{
	t->bytes_per_ns = (double)rate_bps / 8e9;
	t->depth = (double)depth_bytes;
	t->tokens = t->depth;
	t->last = now;
	t->backlogged = false;
}

static double need(const struct wanem_tbf *t, uint32_t len)
{
	return (double)len < t->depth ? (double)len : t->depth;
}

bool wanem_tbf_take(struct wanem_tbf *t, uint32_t len, uint64_t now)
{
	if (now > t->last) {
		t->tokens += (double)(now - t->last) * t->bytes_per_ns;
		if (!t->backlogged && t->tokens > t->depth)
			t->tokens = t->depth;
		t->last = now;
	}
	if (t->tokens < need(t, len)) {
		t->backlogged = true;
		return false;
	}
	t->tokens -= (double)len;
	return true;
}

void wanem_tbf_idle(struct wanem_tbf *t)
{
	t->backlogged = false;
	if (t->tokens > t->depth)
		t->tokens = t->depth;
}

uint64_t wanem_tbf_when(const struct wanem_tbf *t, uint32_t len)
{
	double missing = need(t, len) - t->tokens;

	if (missing <= 0)
		return t->last;
	return t->last + (uint64_t)ceil(missing / t->bytes_per_ns);
}
