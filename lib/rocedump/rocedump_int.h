/* Internal to lib/rocedump: the opcode table, the MAD reader, the flow
 * table, and big-endian readers. */
#ifndef FERRY_ROCEDUMP_INT_H
#define FERRY_ROCEDUMP_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ferry/rocedump.h"

static inline uint32_t ferry__be16(const uint8_t *b)
{
	return (uint32_t)b[0] << 8 | b[1];
}

static inline uint32_t ferry__be24(const uint8_t *b)
{
	return (uint32_t)b[0] << 16 | ferry__be16(b + 1);
}

static inline uint32_t ferry__be32(const uint8_t *b)
{
	return (uint32_t)b[0] << 24 | ferry__be24(b + 1);
}

static inline uint64_t ferry__be64(const uint8_t *b)
{
	return (uint64_t)ferry__be32(b) << 32 | ferry__be32(b + 4);
}

/* ---- opcodes (ibop.c) ---- */

enum {
	FERRY__IBOP_REQ = 1 << 0,    /* a request: in its flow's PSN sequence */
	FERRY__IBOP_RESP = 1 << 1,   /* ACK, atomic ACK, READ response */
	FERRY__IBOP_NOPAY = 1 << 2,  /* carries no payload */
	FERRY__IBOP_READ = 1 << 3,   /* RDMA READ request: takes len/MTU PSNs */
	FERRY__IBOP_CNP = 1 << 4,
};

struct ferry__ibop {
	const char *transport, *name;
	unsigned hdrs;   /* FERRY_ROCE_H_*, in wire order by bit */
	unsigned flags;  /* FERRY__IBOP_* */
};

/* What opcode is. Returns false for a reserved or vendor opcode, *why
 * saying which. */
bool ferry__ibop(uint8_t opcode, struct ferry__ibop *op, const char **why);

/* Bytes of the extended header FERRY_ROCE_H_x (one bit). */
size_t ferry__ibop_hdr_len(unsigned hdr);

/* The AETH syndrome's meaning into f: ack, credits, rnr_us, nak. */
void ferry__aeth(uint8_t syndrome, struct ferry_roce_frame *f);

/* ---- MADs (mad.c) ---- */

/* Decode the MAD of len bytes at p (a UD SEND's payload on QP 1) into
 * *m, naming CM attributes. Returns false, *why saying what, when it is
 * shorter than its header or than the CM fields read. */
bool ferry__mad_decode(const uint8_t *p, size_t len, struct ferry_roce_mad *m,
		       const char **why);

/* ---- flows (flows.c) ---- */

struct ferry__flow;

struct ferry__flows {
	struct ferry__flow *v;  /* in the order they were first seen */
	size_t n, cap;
	uint32_t *slot;         /* hash: 0 empty, else index into v + 1 */
	size_t nslot;           /* a power of 2, at least 2 n */
};

/* Count the decoded frame f in its flow. Returns 0; -ENOSPC when the
 * flow is new and FERRY_ROCEDUMP_MAX_FLOWS are tracked; -ENOMEM. */
int ferry__flows_add(struct ferry__flows *t, const struct ferry_roce_frame *f);

/* The i-th flow; NULL past the last. */
const struct ferry_roce_flow *ferry__flows_get(const struct ferry__flows *t,
					       size_t i);

void ferry__flows_free(struct ferry__flows *t);

#endif
