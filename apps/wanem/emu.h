/* ferry-wanem's emulation core: one direction of the emulated WAN (a
 * "path"), independent of DPDK so it runs under a simulated clock.
 *
 * A packet that arrives on a path goes through, in this order:
 *   loss (random or Gilbert-Elliott)  -> dropped, reason "loss"
 *   bit corruption                     -> one bit flipped past the L2 header
 *   duplication                        -> a copy follows the original
 *   reordering                         -> held back until the next packet
 *                                         has gone ahead of it
 *   bottleneck queue (only with a rate) -> tail drop above queue_bytes,
 *                                          ECN CE mark above ecn_bytes,
 *                                          drained by a token bucket
 *   delay line                         -> stamped on entry, released when
 *                                         now >= stamp + delay
 *   transmit                           -> ops->xmit, in order
 * Without a rate limit the bottleneck is skipped, so the stamp is the
 * arrival time. Times are nanoseconds on any monotonic clock. */
#ifndef WANEM_EMU_H
#define WANEM_EMU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "loss.h"

/* A packet as the core sees it: the caller's handle (an mbuf, a malloc'd
 * buffer in the tests), its frame bytes from the Ethernet header on, and
 * their count. The core modifies data only to corrupt or ECN-mark it. */
struct wanem_pkt {
	void *h;
	uint8_t *data;
	uint32_t len;
};

/* What the core asks of the packet's owner. size is sizeof(struct
 * wanem_pkt_ops), checked at create. All three are called from the thread
 * that calls wanem_path_rx/poll/flush, with the ctx given at create.
 *  copy: fill *out with a new packet holding a copy of in's bytes.
 *        Returns 0, or -ENOMEM when there is no buffer (the duplicate is
 *        then skipped and counted in dup_failed).
 *  free: give back a packet the core drops.
 *  xmit: send n packets in order; returns how many were taken (a prefix),
 *        whose ownership passes to the callee. The rest stay queued and
 *        are offered again at the next poll. */
struct wanem_pkt_ops {
	size_t size;
	int (*copy)(void *ctx, const struct wanem_pkt *in, struct wanem_pkt *out);
	void (*free)(void *ctx, void *h);
	unsigned (*xmit)(void *ctx, void *const *h, unsigned n);
};

/* One direction's impairments. Probabilities are fractions in [0, 1]. */
struct wanem_path_attr {
	uint64_t delay_ns;       /* one-way delay, 0 .. 1 s */
	uint64_t rate_bps;       /* Ethernet frame bits per second; 0: none */
	uint64_t burst_bytes;    /* token bucket depth; 0: wanem_default_burst */
	uint64_t queue_bytes;    /* bottleneck limit (needs a rate); 0: default */
	uint64_t ecn_bytes;      /* mark CE above this backlog; 0: never */
	uint64_t delay_limit_bytes; /* bytes in the delay line; 0: no limit */
	uint32_t capacity;       /* packets held in the path at most (>= 1) */
	uint64_t reorder_hold_ns; /* longest a reordered packet waits; 0: 1 ms */
	struct wanem_loss_attr loss;
	double dup, reorder, corrupt;
	uint64_t seed;
};

/* Counters of one direction. Invariant, at any time:
 *   rx + duplicated == tx + drop_loss + drop_queue + drop_full
 *                      + drop_flush + held
 * (held: wanem_path_held; 0 after wanem_path_flush). */
struct wanem_counters {
	uint64_t rx, rx_bytes;
	uint64_t tx, tx_bytes;
	uint64_t drop_loss;   /* loss model */
	uint64_t drop_queue;  /* bottleneck queue full (tail drop) */
	uint64_t drop_full;   /* path capacity or delay line limit reached */
	uint64_t drop_flush;  /* still queued when the path was flushed */
	uint64_t duplicated;  /* copies made (each also counts once in tx/drops) */
	uint64_t dup_failed;  /* copies wanted but no buffer */
	uint64_t reordered;   /* packets sent after one that arrived later */
	uint64_t corrupted;   /* packets with a bit flipped */
	uint64_t marked;      /* packets ECN-marked CE */
	uint64_t queue_peak_bytes; /* highest bottleneck backlog */
	uint64_t delay_peak_bytes; /* highest delay line occupancy */
	uint64_t late_sum_ns;      /* sum and maximum, over tx, of how long */
	uint64_t late_max_ns;      /* after its release time each one left */
};

struct wanem_path;

/* Default token bucket depth for a rate: 2 ms of it, at least 16 KiB. */
uint64_t wanem_default_burst(uint64_t rate_bps);
/* Default bottleneck queue for a rate: 50 ms of it, 64 KiB .. 64 MiB. */
uint64_t wanem_default_queue(uint64_t rate_bps);

/* Make a path. Returns 0, -EINVAL (attr or ops unusable) or -ENOMEM. */
int wanem_path_create(const struct wanem_path_attr *attr,
		      const struct wanem_pkt_ops *ops, void *ctx,
		      struct wanem_path **out);
/* Flush (see below) and free the path. NULL is fine. */
void wanem_path_destroy(struct wanem_path *p);

/* A packet arrived at time now; the path owns it from here on. */
void wanem_path_rx(struct wanem_path *p, const struct wanem_pkt *pkt,
		   uint64_t now);
/* Move packets along at time now: the bottleneck drains into the delay
 * line as the token bucket allows, and every packet whose release time
 * has come is offered to ops->xmit. Returns the number transmitted. */
unsigned wanem_path_poll(struct wanem_path *p, uint64_t now);
/* The earliest time after which a poll can do something (a release, a
 * token refill for the head of the queue, a held packet's deadline);
 * UINT64_MAX when the path is empty. */
uint64_t wanem_path_next_event(const struct wanem_path *p);
/* Free every packet still in the path, counting each in drop_flush. */
void wanem_path_flush(struct wanem_path *p);

/* Packets in the path now (queue, delay line, reorder slot). */
uint64_t wanem_path_held(const struct wanem_path *p);
const struct wanem_counters *wanem_path_counters(const struct wanem_path *p);

/* ECN: set CE in an IPv4 (checksum updated) or IPv6 packet that is
 * ECN-capable (ECT(0) or ECT(1)), after an optional 802.1Q tag. Returns
 * true if it marked the packet; false if it is not IP, not ECN-capable,
 * already CE, or too short. */
bool wanem_ecn_mark(uint8_t *frame, uint32_t len);

#endif
