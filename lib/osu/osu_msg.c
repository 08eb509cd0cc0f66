/* OSU-style benchmarks: the small messages between sizes (osu.h), packed
 * little-endian. */
#include <stddef.h>
#include <stdint.h>

#include "ferry/error.h"
#include "osu/osu.h"

static void put_le(uint8_t *b, uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++, v >>= 8)
		b[i] = (uint8_t)v;
}

static uint64_t get_le(const uint8_t *b, unsigned n)
{
	uint64_t v = 0;

	while (n--)
		v = v << 8 | b[n];
	return v;
}

void ferry__osu_msg_encode(const struct ferry__osu_msg *m, uint8_t *b)
{
	put_le(b, m->type, 4);
	put_le(b + 4, m->arg, 4);
	put_le(b + 8, m->a, 8);
	put_le(b + 16, m->b, 8);
	put_le(b + 24, m->c, 8);
	put_le(b + 32, m->d, 8);
}

int ferry__osu_msg_decode(const uint8_t *b, size_t len,
			  struct ferry__osu_msg *m)
{
	if (len != FERRY__OSU_MSG_LEN)
		return -FERRY_EPROTO;
	m->type = (uint32_t)get_le(b, 4);
	m->arg = (uint32_t)get_le(b + 4, 4);
	m->a = get_le(b + 8, 8);
	m->b = get_le(b + 16, 8);
	m->c = get_le(b + 24, 8);
	m->d = get_le(b + 32, 8);
	return 0;
}
