/* RoCEv2 frames on the wire (internal).
 *
 * Turns a struct ferry_roce_pkt (pkt.h) into an Ethernet frame and back:
 *   Ethernet II (type 0x0800) | IPv4 | UDP (dport 4791) | BTH | RETH? |
 *   ImmDt? | AETH? | payload | pad (0..3 zero bytes) | ICRC (4 bytes)
 * and computes the invariant CRC (ICRC) that ends every RoCEv2 packet.
 *
 * ICRC (IBTA vol. 1 ch. 7.8 and annex A17; checked against Linux rxe,
 * drivers/infiniband/sw/rxe/rxe_icrc.c, and scapy's contrib/roce.py): the
 * standard reflected CRC-32 (zlib's crc32, ISA-L's crc32_gzip_refl) over
 *   8 bytes of 0xff (a masked LRH) |
 *   the IPv4 header with TOS (DSCP+ECN), TTL and header checksum all ones |
 *   the UDP header with its checksum all ones |
 *   the BTH with byte 4 (FECN, BECN, resv6) all ones |
 *   the extended headers, payload and pad as sent,
 * stored after the pad least significant byte first.
 *
 * Frames built here: IPv4 without options, DSCP and ECN as the packet
 * says (pkt.h; the header checksum covers them), DF set, id 0,
 * TTL 64, UDP checksum 0 (RoCEv2 allows it). They are not padded to the
 * 60-byte Ethernet minimum: the NIC does that. Parsing accepts IPv4
 * options and ignores bytes after the IPv4 total length (Ethernet padding,
 * FCS).
 */
#ifndef FERRY_ROCE_WIRE_H
#define FERRY_ROCE_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pkt.h"

#define FERRY_ROCE_ETH_LEN 14
#define FERRY_ROCE_IP_LEN 20   /* as built; parsed ones may carry options */
#define FERRY_ROCE_IP6_LEN 40  /* IPv6: read by rocedump, never built */
#define FERRY_ROCE_UDP_LEN 8
#define FERRY_ROCE_BTH_LEN 12
#define FERRY_ROCE_RETH_LEN 16
#define FERRY_ROCE_IMM_LEN 4
#define FERRY_ROCE_AETH_LEN 4
#define FERRY_ROCE_ICRC_LEN 4
/* Most bytes a frame built here carries before the payload (a WRITE ONLY
 * with immediate: Ethernet, IPv4, UDP, BTH, RETH, ImmDt). */
#define FERRY_ROCE_HDR_MAX 74
/* Most bytes after the payload: 3 of pad and the ICRC. */
#define FERRY_ROCE_TRAILER_MAX 7

/* True for the opcodes pkt.h lists (the RC subset ferry speaks). */
bool ferry__roce_op_valid(uint8_t opcode);

/* Bytes from the start of the Ethernet header to the payload of a frame
 * built here (14 + 20 + 8 + 12 + extended headers); 0 for an opcode that
 * ferry__roce_op_valid() refuses. */
size_t ferry__roce_hdr_len(uint8_t opcode);

/* Pad bytes after a payload of len bytes: (4 - len % 4) % 4. */
static inline uint8_t ferry__roce_pad(uint32_t len)
{
	return (uint8_t)(-len & 3u);
}

/* Whole frame length for p's opcode and p->len (no Ethernet minimum). */
size_t ferry__roce_frame_len(const struct ferry_roce_pkt *p);

/* Write the whole frame for p into frame[0..cap): headers, a copy of
 * p->payload (p->len bytes), pad and ICRC. The pad is always
 * ferry__roce_pad(p->len); p->pad is not read. Returns 0 and the length in
 * *len; -EINVAL for an opcode outside pkt.h, a QPN, PSN or MSN wider than
 * 24 bits, a DSCP over 63 or ECN over 3, a NULL payload with len > 0,
 * or a payload on an ACK; -ENOSPC when cap is too small; -FERRY_ETOOBIG
 * when the IPv4 packet would exceed 65535 bytes. */
int ferry__roce_build(uint8_t *frame, size_t cap,
		      const struct ferry_roce_pkt *p, size_t *len);

/* Zero copy: the same frame in three pieces, hdr | payload | trailer.
 * ferry__roce_build_hdr() writes the ferry__roce_hdr_len() header bytes
 * (lengths and pad sized for p->len; p->payload is not read) and returns
 * in *crc the ICRC state over them. The caller continues it over the
 * payload wherever it lies with ferry__roce_icrc_more() (in any number of
 * pieces, p->len bytes in all), then ferry__roce_trailer() writes the pad
 * and the ICRC. Errors as ferry__roce_build(). */
int ferry__roce_build_hdr(uint8_t *hdr, size_t cap,
			  const struct ferry_roce_pkt *p, size_t *hdr_len,
			  uint32_t *crc);
uint32_t ferry__roce_icrc_more(uint32_t crc, const void *buf, size_t len);
/* Writes pad zero bytes and the ICRC to out; returns pad + 4. */
size_t ferry__roce_trailer(uint8_t out[FERRY_ROCE_TRAILER_MAX], uint32_t crc,
			   uint8_t pad);

/* Parse an Ethernet frame of len bytes. Checks: Ethernet type IPv4,
 * IPv4 version 4, IHL >= 5, total length within the frame, header checksum,
 * not a fragment, protocol UDP, UDP destination port (0 means 4791), UDP
 * length equal to the IPv4 payload, BTH transport version 0, an opcode of
 * pkt.h, its extended headers, pad and ICRC inside the UDP payload,
 * payload + pad a multiple of 4, no payload on an ACK.
 * On success fills *out (out->payload points into frame, out->len excludes
 * the pad), sets *icrc_ok (unless icrc_ok is NULL: then the ICRC is not
 * computed), and returns 0. Returns -ENOMSG when the frame
 * is not RoCEv2 at all (another ethertype or IP protocol, another UDP port,
 * an IP fragment) and -FERRY_EPROTO when it is malformed (truncated,
 * inconsistent lengths, bad IPv4 checksum, unknown opcode...). In both
 * cases *why, if why is not NULL, says what was wrong (a static string).
 * *out and *icrc_ok are unspecified on failure. */
int ferry__roce_parse(const uint8_t *frame, size_t len, uint16_t port,
		      struct ferry_roce_pkt *out, bool *icrc_ok,
		      const char **why);

/* True when frame[0..len) shows an IPv4 header (not a fragment) and a
 * UDP header to port (0 means 4791), however malformed the rest: the
 * frames a capture tool should count as RoCEv2. */
bool ferry__roce_to_port(const uint8_t *frame, size_t len, uint16_t port);

/* The ICRC of the Ethernet frame[0..len) as the sender should have
 * computed it: over the IPv4 header (its IHL), the UDP header and the UDP
 * payload except its last 4 bytes, masked as above. Needs only a
 * consistent IPv4/UDP frame with room for a BTH and the ICRC; the opcode
 * is not interpreted, so it also checks opcodes ferry does not speak.
 * Returns 0 and the value in *icrc (compare it with the 4 bytes at the end
 * read least significant byte first), or -FERRY_EPROTO. */
int ferry__roce_icrc(const uint8_t *frame, size_t len, uint32_t *icrc);

/* The ICRC of the RoCEv2 packet ip[0..len): an IPv4 header (any IHL)
 * or an IPv6 one (without extension headers), UDP, BTH, then everything
 * up to the last 4 bytes (the ICRC itself), whatever the opcode. len is
 * the IP packet's length (IPv4: its total length; IPv6: 40 + its payload
 * length). Returns 0 and the value in *icrc (compare it with the last 4
 * bytes read least significant byte first), or -FERRY_EPROTO when the
 * version is neither 4 nor 6 or the headers and ICRC do not fit in len. */
int ferry__roce_icrc_ip(const uint8_t *ip, size_t len, uint32_t *icrc);

/* The ICRC state after the pseudo-LRH and the masked IPv4 (ihl bytes),
 * UDP and BTH headers that start at ip; what the other ICRC functions
 * continue from. ip must hold ihl + 20 bytes. */
uint32_t ferry__roce_icrc_hdr(const uint8_t *ip, size_t ihl);

/* The Internet checksum (RFC 1071) over len bytes (even) of an IPv4
 * header: the value to store when the checksum field holds 0, and 0 when
 * the header with its stored checksum is intact. */
uint16_t ferry__ip4_csum(const uint8_t *hdr, size_t len);

#endif
