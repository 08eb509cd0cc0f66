/* ECN congestion marking (RFC 3168) of IPv4 and IPv6 packets, with the
 * IPv4 header checksum updated incrementally (RFC 1624, eqn. 3). */
#include "emu.h"

#define ETH_HLEN 14
#define ECN_CE 3

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* ~(~HC + ~m + m'), one's complement sums folded to 16 bits. */
static uint16_t csum_update(uint16_t hc, uint16_t m, uint16_t m1)
{
	uint32_t s = (uint16_t)~hc + (uint32_t)(uint16_t)~m + m1;

	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

static bool mark_v4(uint8_t *ip, uint32_t len)
{
	uint16_t old, now, hc;

	if (len < 20 || ip[0] >> 4 != 4 || (ip[0] & 0xf) < 5)
		return false;
	if ((ip[1] & 3) == 0 || (ip[1] & 3) == ECN_CE)
		return false;
	old = be16(ip);
	ip[1] |= ECN_CE;
	now = be16(ip);
	hc = csum_update(be16(ip + 10), old, now);
	ip[10] = (uint8_t)(hc >> 8);
	ip[11] = (uint8_t)hc;
	return true;
}

/* Traffic class = low 4 bits of byte 0, high 4 of byte 1; ECN is its
 * low two bits: bits 5-4 of byte 1. */
static bool mark_v6(uint8_t *ip, uint32_t len)
{
	unsigned ecn;

	if (len < 40 || ip[0] >> 4 != 6)
		return false;
	ecn = (ip[1] >> 4) & 3;
	if (ecn == 0 || ecn == ECN_CE)
		return false;
	ip[1] |= ECN_CE << 4;
	return true;
}

bool wanem_ecn_mark(uint8_t *frame, uint32_t len)
{
	uint32_t off = ETH_HLEN;
	uint16_t type;

	if (len < ETH_HLEN)
		return false;
	type = be16(frame + 12);
	if (type == 0x8100 || type == 0x88a8) {
		if (len < ETH_HLEN + 4)
			return false;
		type = be16(frame + 16);
		off += 4;
	}
	if (type == 0x0800)
		return mark_v4(frame + off, len - off);
	if (type == 0x86dd)
		return mark_v6(frame + off, len - off);
	return false;
}
