/* Frames for the rocedump tests (test_rocedump.c,
 * test_rocedump_flows.c), laid out here from the IBA's header formats:
 * Ethernet, VLAN tags, IPv4 or IPv6, UDP, BTH, the given extended header
 * bytes, payload and pad; the ICRC from the uroce wire code, which the
 * frames scapy built (test_rocedump.c) check. */
#ifndef FERRY_TEST_ROCE_FRAMES_H
#define FERRY_TEST_ROCE_FRAMES_H

#include <stdbool.h>
#include <string.h>

#include "cu.h"
#include "xport/roce/wire.h"

struct spec {
	uint8_t opcode, pad, ipver, vlans;
	uint32_t qp, psn;
	const uint8_t *ext; /* NULL: zeros */
	size_t ext_len, pay;
	uint16_t port;      /* 0: 4791 */
};

static inline void put16(uint8_t *b, uint32_t v)
{
	b[0] = (uint8_t)(v >> 8);
	b[1] = (uint8_t)v;
}

/* IP, UDP and BTH for s; returns where the UDP payload starts. */
static inline size_t put_headers(uint8_t *f, const struct spec *s, size_t udp_pay)
{
	size_t off = 12, ipl = s->ipver == 6 ? 40 : 20;

	memset(f, 0, 12);
	f[0] = 2;
	for (unsigned v = 0; v < s->vlans; v++, off += 4)
		put16(f + off, 0x8100), put16(f + off + 2, 100 + v);
	put16(f + off, s->ipver == 6 ? 0x86dd : 0x0800);
	uint8_t *ip = f + off + 2, *u = ip + ipl;
	memset(ip, 0, ipl);
	if (s->ipver == 6) {
		ip[0] = 0x60;
		put16(ip + 4, (uint32_t)(8 + udp_pay));
		ip[6] = 17;
		ip[7] = 64;
		ip[23] = 1;
		ip[39] = 2;
	} else {
		ip[0] = 0x45;
		put16(ip + 2, (uint32_t)(20 + 8 + udp_pay));
		ip[8] = 64;
		ip[9] = 17;
		ip[12] = ip[16] = 10;
		ip[15] = 1;
		ip[19] = 2;
		put16(ip + 10, ferry__ip4_csum(ip, 20));
	}
	put16(u, 0xc000);
	put16(u + 2, s->port ? s->port : 4791);
	put16(u + 4, (uint32_t)(8 + udp_pay));
	put16(u + 6, 0);
	uint8_t *b = u + 8;
	b[0] = s->opcode;
	b[1] = (uint8_t)(s->pad << 4);
	put16(b + 2, 0xffff);
	b[4] = 0;
	b[5] = (uint8_t)(s->qp >> 16), put16(b + 6, s->qp);
	b[8] = 0, b[9] = (uint8_t)(s->psn >> 16), put16(b + 10, s->psn);
	return (size_t)(b - f);
}

/* The whole frame for s (ICRC by the uroce wire code); returns its length. */
static inline size_t build(uint8_t *f, const struct spec *s)
{
	size_t udp_pay = 12 + s->ext_len + s->pay + s->pad + 4;
	size_t b = put_headers(f, s, udp_pay), e = b + 12;
	size_t ip = 14 + 4u * s->vlans;

	if (s->ext)
		memcpy(f + e, s->ext, s->ext_len);
	else
		memset(f + e, 0, s->ext_len);
	e += s->ext_len;
	for (size_t i = 0; i < s->pay; i++)
		f[e + i] = (uint8_t)(i + 1);
	memset(f + e + s->pay, 0, s->pad);
	size_t end = e + s->pay + s->pad;
	uint32_t crc;
	CU_ASSERT_EQUAL_FATAL(ferry__roce_icrc_ip(f + ip, end + 4 - ip, &crc), 0);
	for (int i = 0; i < 4; i++)
		f[end + i] = (uint8_t)(crc >> (8 * i));
	return end + 4;
}

/* The opcodes of the IBA (vol. 1 table 38; A14 XRC; A17 CNP; A19 FLUSH
 * 0x1c, ATOMIC WRITE 0x1d), and the extended header bytes each carries
 * (RDETH 4, DETH 8, XRCETH 4, FETH 4, RETH 16, AtomicETH 28, AETH 4,
 * AtomicAckETH 8, ImmDt 4, IETH 4; CNP 16 reserved bytes). -1: none. */
static inline int ext_bytes(uint8_t opcode, bool *nopay)
{
	static const int8_t rc[32] = {
		0, 0, 0, 4, 0, 4, 16, 0, 0, 4, 16, 20, 16, 4, 0, 4, 4, 4, 12,
		28, 28, -1, 4, 4, -1, -1, -1, -1, 20, 16, -1, -1,
	};
	static const uint32_t nopays = 1u << 0x0c | 1u << 0x11 |
				       1u << 0x12 | 1u << 0x13 |
				       1u << 0x14 | 1u << 0x15 | 1u << 0x1c;
	unsigned t = opcode >> 5, o = opcode & 0x1f;
	bool resp = o >= 0x0d && o <= 0x12;

	*nopay = nopays >> o & 1;
	switch (t) {
	case 0: /* RC */
		return o == 0x15 ? -1 : rc[o];
	case 1: /* UC */
		return o <= 0x0b ? rc[o] : -1;
	case 2: /* RD: + RDETH; + DETH on requests but FLUSH */
		if (o > 0x15 && o != 0x1c)
			return -1;
		return (o == 0x15 ? 0 : rc[o]) + 4 +
		       (!resp && o != 0x1c ? 8 : 0);
	case 3: /* UD: + DETH */
		return o == 4 || o == 5 ? rc[o] + 8 : -1;
	case 4: /* CNP */
		*nopay = o == 1;
		return o == 0 ? 0 : o == 1 ? 16 : -1;
	case 5: /* XRC: + XRCETH on requests */
		if (o == 0x15 || o == 0x1d || rc[o] < 0)
			return -1;
		return rc[o] + (resp ? 0 : 4);
	default:
		return -1;
	}
}

#endif
