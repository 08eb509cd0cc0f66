/* The RoCEv2 invariant CRC (ICRC).
 *
 * What is covered and masked follows the IBTA spec (vol. 1 7.8.1, and
 * annex A17 for RoCEv2) as two public implementations read it; both agree:
 *  - Linux rxe, drivers/infiniband/sw/rxe/rxe_icrc.c: starts from the raw
 *    CRC state 0xdebb20e3 ("a seed of 0xffffffff and 8 bytes of 0xff
 *    representing a masked LRH"); sets IPv4 tos, ttl and check to all
 *    ones, the UDP check to all ones, and ORs ~BTH_QPN_MASK into the BTH's
 *    second word (byte 4: FECN, BECN, resv6); crc32_le over IP, UDP, BTH,
 *    the rest of the headers, payload and pad; stores ~crc in CPU order
 *    (little endian on the hosts that interoperate with NICs).
 *  - scapy contrib/roce.py (BTH.compute_icrc): zlib crc32 over
 *    b'\xff' * 8 | IP (chksum, ttl, tos = 0xff..) | UDP (chksum 0xffff) |
 *    BTH (fecn = becn = 1, resv6 all ones) | payload, packed with
 *    struct.pack("!I")[::-1], i.e. least significant byte first.
 * zlib's crc32 (ISA-L crc32_gzip_refl) inverts its state on entry and
 * exit, so the value after the 8 0xff bytes is ~0xdebb20e3 = 0x2144df1c
 * and it chains: crc(a | b) = crc32_gzip_refl(crc(a), b).
 * IPv4 options: scapy covers them (it copies the whole header), rxe
 * handles 20-byte headers only. ferry covers the whole header, as scapy
 * does; for IHL 5, all ferry builds, the two readings agree.
 * IPv6 (rxe_icrc.c; scapy does not compute it): the traffic class, flow
 * label and hop limit all ones, the 40-byte header otherwise as sent.
 * The ICRC covers everything after the BTH whatever the opcode, so one
 * function (ferry__roce_icrc_ip) checks any RoCEv2 packet.
 */
#include <string.h>

#include <isa-l/crc.h>

#include "ferry/error.h"
#include "wire.h"

/* crc32 of 8 bytes of 0xff from 0 (the masked LRH; see the note above). */
#define ICRC_LRH_SEED 0x2144df1cu

uint32_t ferry__roce_icrc_more(uint32_t crc, const void *buf, size_t len)
{
	if (len == 0)
		return crc;
	return crc32_gzip_refl(crc, (const unsigned char *)buf, (uint64_t)len);
}

uint32_t ferry__roce_icrc_hdr(const uint8_t *ip, size_t ihl)
{
	uint8_t m[60 + FERRY_ROCE_UDP_LEN + FERRY_ROCE_BTH_LEN];
	size_t n = ihl + FERRY_ROCE_UDP_LEN + FERRY_ROCE_BTH_LEN;

	memcpy(m, ip, n);
	m[1] = 0xff;                         /* TOS: DSCP and ECN */
	m[8] = 0xff;                         /* TTL */
	m[10] = m[11] = 0xff;                /* header checksum */
	m[ihl + 6] = m[ihl + 7] = 0xff;      /* UDP checksum */
	m[ihl + FERRY_ROCE_UDP_LEN + 4] = 0xff; /* BTH FECN, BECN, resv6 */
	return ferry__roce_icrc_more(ICRC_LRH_SEED, m, n);
}

size_t ferry__roce_trailer(uint8_t out[FERRY_ROCE_TRAILER_MAX], uint32_t crc,
			   uint8_t pad)
{
	pad &= 3;
	memset(out, 0, pad);
	crc = ferry__roce_icrc_more(crc, out, pad);
	out[pad + 0] = (uint8_t)crc;
	out[pad + 1] = (uint8_t)(crc >> 8);
	out[pad + 2] = (uint8_t)(crc >> 16);
	out[pad + 3] = (uint8_t)(crc >> 24);
	return (size_t)pad + FERRY_ROCE_ICRC_LEN;
}

/* The masked IPv6, UDP and BTH headers at ip6 (see the note above). */
static uint32_t icrc_hdr6(const uint8_t *ip6)
{
	uint8_t m[FERRY_ROCE_IP6_LEN + FERRY_ROCE_UDP_LEN + FERRY_ROCE_BTH_LEN];
	const size_t udp = FERRY_ROCE_IP6_LEN;

	memcpy(m, ip6, sizeof(m));
	m[0] |= 0x0f;                        /* traffic class, */
	m[1] = m[2] = m[3] = 0xff;           /* flow label */
	m[7] = 0xff;                         /* hop limit */
	m[udp + 6] = m[udp + 7] = 0xff;      /* UDP checksum */
	m[udp + FERRY_ROCE_UDP_LEN + 4] = 0xff; /* BTH FECN, BECN, resv6 */
	return ferry__roce_icrc_more(ICRC_LRH_SEED, m, sizeof(m));
}

int ferry__roce_icrc_ip(const uint8_t *ip, size_t len, uint32_t *icrc)
{
	size_t hdrs;
	uint32_t crc;

	if (len < 1)
		return -FERRY_EPROTO;
	if (ip[0] >> 4 == 4) {
		size_t ihl = (size_t)(ip[0] & 0x0f) * 4;

		hdrs = ihl + FERRY_ROCE_UDP_LEN + FERRY_ROCE_BTH_LEN;
		if (ihl < 20 || len < hdrs + FERRY_ROCE_ICRC_LEN)
			return -FERRY_EPROTO;
		crc = ferry__roce_icrc_hdr(ip, ihl);
	} else if (ip[0] >> 4 == 6) {
		hdrs = FERRY_ROCE_IP6_LEN + FERRY_ROCE_UDP_LEN +
		       FERRY_ROCE_BTH_LEN;
		if (len < hdrs + FERRY_ROCE_ICRC_LEN)
			return -FERRY_EPROTO;
		crc = icrc_hdr6(ip);
	} else {
		return -FERRY_EPROTO;
	}
	*icrc = ferry__roce_icrc_more(crc, ip + hdrs,
				      len - hdrs - FERRY_ROCE_ICRC_LEN);
	return 0;
}

int ferry__roce_icrc(const uint8_t *frame, size_t len, uint32_t *icrc)
{
	const uint8_t *ip = frame + FERRY_ROCE_ETH_LEN;
	size_t ihl, tot, udp_len;

	if (len < FERRY_ROCE_ETH_LEN + 20 ||
	    frame[12] != 0x08 || frame[13] != 0x00 || (ip[0] >> 4) != 4)
		return -FERRY_EPROTO;
	ihl = (size_t)(ip[0] & 0x0f) * 4;
	tot = (size_t)ip[2] << 8 | ip[3];
	if (ihl < 20 || tot < ihl + FERRY_ROCE_UDP_LEN ||
	    tot > len - FERRY_ROCE_ETH_LEN)
		return -FERRY_EPROTO;
	udp_len = (size_t)ip[ihl + 4] << 8 | ip[ihl + 5];
	if (udp_len != tot - ihl)
		return -FERRY_EPROTO;
	return ferry__roce_icrc_ip(ip, tot, icrc);
}
