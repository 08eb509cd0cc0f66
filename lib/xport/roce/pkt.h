/* One RoCEv2 packet, as the RC engine sees it (internal).
 *
 * The wire code (wire.c) turns Ethernet frames into this view and back;
 * uroce's RC engine (uroce/rc.h) works only with this view, so it can be
 * tested without DPDK or a network.
 *
 * Field layouts are the InfiniBand Architecture Specification's (vol. 1,
 * ch. 9, "Base Transport Header" and the extended headers), as described
 * publicly by the Linux rxe headers (rxe_hdr.h) and Wireshark's InfiniBand
 * dissector. RoCEv2 (IBTA annex A17) carries them in UDP to port 4791.
 */
#ifndef FERRY_ROCE_PKT_H
#define FERRY_ROCE_PKT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FERRY_ROCE_UDP_PORT 4791
#define FERRY_PSN_MASK 0xffffffu /* PSNs are 24 bits */

/* RC opcodes (transport 000, operation in the low 5 bits). */
enum ferry_roce_op {
	FERRY_OP_SEND_FIRST = 0x00,
	FERRY_OP_SEND_MIDDLE = 0x01,
	FERRY_OP_SEND_LAST = 0x02,
	FERRY_OP_SEND_LAST_IMM = 0x03,
	FERRY_OP_SEND_ONLY = 0x04,
	FERRY_OP_SEND_ONLY_IMM = 0x05,
	FERRY_OP_WRITE_FIRST = 0x06,
	FERRY_OP_WRITE_MIDDLE = 0x07,
	FERRY_OP_WRITE_LAST = 0x08,
	FERRY_OP_WRITE_LAST_IMM = 0x09,
	FERRY_OP_WRITE_ONLY = 0x0a,
	FERRY_OP_WRITE_ONLY_IMM = 0x0b,
	FERRY_OP_ACK = 0x11,
	/* RoCEv2's congestion notification (IBA annex A17): a BTH and 16
	 * reserved bytes, sent back to the QP whose packets arrived marked
	 * ECN CE; it acknowledges nothing. */
	FERRY_OP_CNP = 0x81,
};
#define FERRY_ROCE_CNP_LEN 16 /* its reserved bytes, as the payload */

/* The IP header's ECN field (RFC 3168). */
#define FERRY_ECN_NOT_ECT 0u
#define FERRY_ECN_ECT0 2u
#define FERRY_ECN_CE 3u

/* AETH syndrome (top 3 bits: 000 ACK, 001 RNR NAK, 011 NAK). */
#define FERRY_AETH_ACK(credits) (0x00u | ((credits) & 0x1fu))
#define FERRY_AETH_RNR_NAK(timer) (0x20u | ((timer) & 0x1fu))
#define FERRY_AETH_NAK_SEQ 0x60u      /* PSN sequence error */
#define FERRY_AETH_NAK_INVALID 0x61u  /* invalid request */
#define FERRY_AETH_NAK_ACCESS 0x62u   /* remote access error */
#define FERRY_AETH_NAK_OP 0x63u       /* remote operational error */

/* Addresses of one endpoint of a RoCEv2 path. */
struct ferry_roce_addr {
	uint8_t mac[6];
	uint32_t ip; /* IPv4, host byte order */
};

struct ferry_roce_pkt {
	/* path */
	struct ferry_roce_addr src, dst;
	uint16_t udp_sport; /* derived from the QP: 0xC000 | (qpn & 0x3fff) */
	uint8_t dscp;       /* the IPv4 DS field's top six bits (RFC 2474):
			       the traffic class, 0 .. 63 */
	uint8_t ecn;        /* its low two, the ECN bits (FERRY_ECN_*) */
	/* BTH */
	uint8_t opcode;
	bool se, mig, ackreq;
	bool becn;          /* set in a CNP */
	uint8_t pad;        /* 0..3 bytes of pad before the ICRC */
	uint16_t pkey;      /* 0xffff: the default partition */
	uint32_t dest_qp;   /* 24 bits */
	uint32_t psn;       /* 24 bits */
	/* RETH: FIRST and ONLY writes */
	uint64_t va;        /* ferry sends ring offsets here, not addresses */
	uint32_t rkey;
	uint32_t dma_len;
	/* ImmDt: *_IMM opcodes */
	uint32_t imm;
	/* AETH: ACK */
	uint8_t syndrome;
	uint32_t msn;       /* 24 bits */
	/* payload */
	const uint8_t *payload;
	uint32_t len;
};

/* Which extended headers an opcode carries. */
bool ferry__roce_has_reth(uint8_t opcode);
bool ferry__roce_has_imm(uint8_t opcode);
bool ferry__roce_has_aeth(uint8_t opcode);
const char *ferry__roce_op_name(uint8_t opcode); /* "RDMA_WRITE_FIRST"... */

/* 24-bit PSN arithmetic: a - b as a signed distance in [-2^23, 2^23). */
static inline int32_t ferry__psn_diff(uint32_t a, uint32_t b)
{
	return (int32_t)((a - b) << 8) >> 8;
}

static inline uint32_t ferry__psn_add(uint32_t a, uint32_t n)
{
	return (a + n) & FERRY_PSN_MASK;
}

#endif
