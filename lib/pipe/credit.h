/* Credits: one per free ring slot, kept per stream.
 *
 * The ring's S slots are split evenly over the N streams; stream s owns
 * slots [s*D, (s+1)*D) with D = S/N, and writes them in cyclic order. An RC
 * queue pair (and a TCP stream) delivers in order, so the receiver lands
 * and releases a stream's slots in that same order, and a credit message
 * needs only the running count of released slots: it is idempotent and a
 * lost or repeated one does no harm. No lock is shared between streams.
 */
#ifndef FERRY_PIPE_CREDIT_H
#define FERRY_PIPE_CREDIT_H

#include <stdbool.h>
#include <stdint.h>

#include "ferry/error.h"

#define FERRY__CREDIT_MSG 0x44455243u /* "CRED" */
#define FERRY__CREDIT_MSG_LEN 16

struct ferry_credit_tx {
	uint32_t first, depth;
	uint64_t sent, freed;
};

struct ferry_credit_rx {
	uint32_t first, depth, batch;
	uint64_t landed, released, announced;
};

void ferry__credit_tx_init(struct ferry_credit_tx *c, uint32_t first,
			   uint32_t depth);
void ferry__credit_rx_init(struct ferry_credit_rx *c, uint32_t first,
			   uint32_t depth);

static inline bool ferry__credit_can_post(const struct ferry_credit_tx *c)
{
	return c->sent - c->freed < c->depth;
}

/* Slot for the next write; the caller then increments c->sent. */
static inline uint32_t ferry__credit_next_slot(const struct ferry_credit_tx *c)
{
	return c->first + (uint32_t)(c->sent % c->depth);
}

/* All credits back: everything sent has been released by the receiver. */
static inline bool ferry__credit_idle(const struct ferry_credit_tx *c)
{
	return c->sent == c->freed;
}

/* Apply a credit message. -FERRY_EPROTO if it is malformed, goes back, or
 * releases slots never sent. */
int ferry__credit_tx_apply(struct ferry_credit_tx *c, const void *msg,
			   uint32_t len);

/* A write landed in slot: it must be the next one this stream owns.
 * Returns 0 or -FERRY_EPROTO. */
int ferry__credit_rx_land(struct ferry_credit_rx *c, uint32_t slot);

/* Release the oldest landed slot (its payload has been consumed). */
static inline void ferry__credit_rx_release(struct ferry_credit_rx *c)
{
	c->released++;
}

/* Should a credit message go now? When a batch is due, or when the stream
 * is idle and anything is unannounced (so the sender never starves). */
static inline bool ferry__credit_rx_due(const struct ferry_credit_rx *c,
					bool idle)
{
	uint64_t owed = c->released - c->announced;
	return owed >= c->batch || (idle && owed > 0);
}

/* Encode the credit message (FERRY__CREDIT_MSG_LEN bytes) and mark the
 * released slots announced. */
void ferry__credit_rx_encode(struct ferry_credit_rx *c, void *msg);

#endif
