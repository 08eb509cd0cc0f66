/* rocedump: every InfiniBand base transport opcode, the extended headers
 * each carries, and what an AETH syndrome says.
 *
 * An opcode is transport (bits 7-5) | operation (bits 4-0). Facts, from
 * the IBA (vol. 1 table 38; annex A14 XRC, A17 RoCEv2, A19 FLUSH and
 * ATOMIC WRITE) as these carry them:
 *  - opcodes: Linux include/rdma/ib_pack.h (RC, UC, RD, UD, FLUSH 0x1c,
 *    ATOMIC_WRITE 0x1d, RD FLUSH); XRC 0xa0 + the RC operation: Wireshark's
 *    InfiniBand dissector and rxe's XRC patches (linux-rdma, 2021);
 *  - extended headers per opcode, in wire order: Linux
 *    drivers/infiniband/sw/rxe/rxe_opcode.c (RC, UC, RD, UD: RDETH on every
 *    RD packet, DETH on RD requests and UD, AETH then AtomicAckETH on an
 *    atomic ACK, ImmDt after RETH and DETH); rxe's XRC patches (XRCETH
 *    right after the BTH of every XRC request, none on responses); rxe's
 *    FLUSH patch ("FETH | RETH" after the BTH in RC, the RDETH in RD, the
 *    XRCETH in XRC);
 *  - CNP: 0x81 in RoCEv2 (annex A17: a BTH and 16 reserved bytes; scapy's
 *    contrib/roce.py builds it so), 0x80 in InfiniBand's annex A10, which
 *    Wireshark names CNP; its body is not interpreted;
 *  - AETH syndromes: rxe_hdr.h (enum aeth_syndrome: 000 ACK, 001 RNR NAK,
 *    011 NAK; NAK codes 0-4), the credit count and RNR timer encodings
 *    (rdmavt's credit_table, ib_verbs.h enum ib_rnr_timeout).
 */
#include "rocedump_int.h"

#define H(x) FERRY_ROCE_H_##x
enum { REQ = FERRY__IBOP_REQ, RESP = FERRY__IBOP_RESP,
       NOPAY = FERRY__IBOP_NOPAY, READ = FERRY__IBOP_READ };

/* Operations, with the headers they carry in RC. */
static const struct {
	const char *name;
	unsigned hdrs, flags;
} ops[32] = {
	[0x00] = { "SEND_FIRST", 0, REQ },
	[0x01] = { "SEND_MIDDLE", 0, REQ },
	[0x02] = { "SEND_LAST", 0, REQ },
	[0x03] = { "SEND_LAST_IMM", H(IMMDT), REQ },
	[0x04] = { "SEND_ONLY", 0, REQ },
	[0x05] = { "SEND_ONLY_IMM", H(IMMDT), REQ },
	[0x06] = { "RDMA_WRITE_FIRST", H(RETH), REQ },
	[0x07] = { "RDMA_WRITE_MIDDLE", 0, REQ },
	[0x08] = { "RDMA_WRITE_LAST", 0, REQ },
	[0x09] = { "RDMA_WRITE_LAST_IMM", H(IMMDT), REQ },
	[0x0a] = { "RDMA_WRITE_ONLY", H(RETH), REQ },
	[0x0b] = { "RDMA_WRITE_ONLY_IMM", H(RETH) | H(IMMDT), REQ },
	[0x0c] = { "RDMA_READ_REQUEST", H(RETH), REQ | NOPAY | READ },
	[0x0d] = { "RDMA_READ_RESPONSE_FIRST", H(AETH), RESP },
	[0x0e] = { "RDMA_READ_RESPONSE_MIDDLE", 0, RESP },
	[0x0f] = { "RDMA_READ_RESPONSE_LAST", H(AETH), RESP },
	[0x10] = { "RDMA_READ_RESPONSE_ONLY", H(AETH), RESP },
	[0x11] = { "ACKNOWLEDGE", H(AETH), RESP | NOPAY },
	[0x12] = { "ATOMIC_ACKNOWLEDGE", H(AETH) | H(ATOMICACKETH),
		   RESP | NOPAY },
	[0x13] = { "COMPARE_SWAP", H(ATOMICETH), REQ | NOPAY },
	[0x14] = { "FETCH_ADD", H(ATOMICETH), REQ | NOPAY },
	[0x15] = { "RESYNC", 0, REQ | NOPAY },
	[0x16] = { "SEND_LAST_INV", H(IETH), REQ },
	[0x17] = { "SEND_ONLY_INV", H(IETH), REQ },
	[0x1c] = { "FLUSH", H(FETH) | H(RETH), REQ | NOPAY },
	[0x1d] = { "ATOMIC_WRITE", H(RETH), REQ },
};

#define OPS(lo, hi) ((uint32_t)((2ull << (hi)) - (1ull << (lo))))
#define OP(o) (1u << (o))

/* Transports (opcode bits 7-5) and the operations each has. */
static const struct {
	const char *name;
	uint32_t ops;
} transports[8] = {
	[0] = { "RC", OPS(0x00, 0x14) | OP(0x16) | OP(0x17) | OP(0x1c) |
		      OP(0x1d) },
	[1] = { "UC", OPS(0x00, 0x0b) },
	[2] = { "RD", OPS(0x00, 0x15) | OP(0x1c) },
	[3] = { "UD", OP(0x04) | OP(0x05) },
	[4] = { "CNP", OP(0x00) | OP(0x01) },
	[5] = { "XRC", OPS(0x00, 0x14) | OP(0x16) | OP(0x17) | OP(0x1c) },
};

bool ferry__ibop(uint8_t opcode, struct ferry__ibop *op, const char **why)
{
	unsigned t = opcode >> 5, o = opcode & 0x1f;

	if (t >= 6) {
		*why = "manufacturer-specific opcode";
		return false;
	}
	if (!(transports[t].ops & OP(o))) {
		*why = "reserved opcode";
		return false;
	}
	op->transport = transports[t].name;
	if (t == 4) { /* 0x81: annex A17's 16 reserved bytes; 0x80: opaque */
		op->name = "CNP";
		op->hdrs = o == 1 ? H(CNP) : 0;
		op->flags = FERRY__IBOP_CNP | (o == 1 ? NOPAY : 0);
		return true;
	}
	op->name = ops[o].name;
	op->hdrs = ops[o].hdrs;
	op->flags = ops[o].flags;
	if (t == 2) /* RD: RDETH always, DETH on requests but FLUSH */
		op->hdrs |= H(RDETH) |
			    (op->flags & REQ && o != 0x1c ? H(DETH) : 0);
	else if (t == 3)
		op->hdrs |= H(DETH);
	else if (t == 5 && op->flags & REQ)
		op->hdrs |= H(XRCETH);
	return true;
}

size_t ferry__ibop_hdr_len(unsigned hdr)
{
	switch (hdr) {
	case H(DETH):
	case H(ATOMICACKETH):
		return 8;
	case H(RETH):
	case H(CNP):
		return 16;
	case H(ATOMICETH):
		return 28;
	default: /* RDETH, XRCETH, FETH, AETH, ImmDt, IETH */
		return 4;
	}
}

/* The IBA's 5-bit logarithmic scale: 0 1 2 3 4 6 8 12 16 24 ... 49152
 * (code 2k: 2^k; code 2k+1: 3 * 2^(k-1)). Credit counts use codes 0-30
 * (rdmavt's credit_table), RNR timers codes 1-31 in units of 10 us with
 * code 0 for 655.36 ms (ib_verbs.h: IB_RNR_TIMER_000_01 = 1 ...
 * IB_RNR_TIMER_491_52 = 31, IB_RNR_TIMER_655_36 = 0). */
static uint32_t log_scale(unsigned code)
{
	if (code < 2)
		return code;
	return code & 1 ? 3u << ((code - 3) / 2) : 1u << (code / 2);
}

void ferry__aeth(uint8_t syndrome, struct ferry_roce_frame *f)
{
	static const char *const naks[] = {
		"PSN sequence error", "invalid request", "remote access error",
		"remote operational error", "invalid RD request",
	};
	unsigned code = syndrome & 0x1f;

	f->syndrome = syndrome;
	switch (syndrome >> 5) {
	case 0:
		f->ack = FERRY_ROCE_ACK;
		f->credits = code == 31 ? -1 : (int)log_scale(code);
		break;
	case 1:
		f->ack = FERRY_ROCE_RNR_NAK;
		f->rnr_us = code ? log_scale(code) * 10 : 655360;
		break;
	case 3:
		f->ack = FERRY_ROCE_NAK;
		f->nak = code < 5 ? naks[code] : "reserved NAK code";
		break;
	default: /* 010, and bit 7 (reserved) set */
		f->ack = FERRY_ROCE_ACK_RESERVED;
		break;
	}
}
