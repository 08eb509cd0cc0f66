/* ferry-wanem's settings (the attr struct main() fills from the command
 * line), the parsers for its values, and what follows from them: default
 * queue and burst, and how many packet buffers the delay needs. */
#ifndef WANEM_OPTS_H
#define WANEM_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "emu.h"

#define WANEM_DELAY_MAX_MS 1000
/* The packet rate assumed without --rate when sizing the pool: about what
 * one net_af_packet port carries (see docs/wan.md). */
#define WANEM_PPS_NO_RATE 250000ull
/* The mean frame size assumed when sizing the pool from a rate. */
#define WANEM_POOL_FRAME 512ull
#define WANEM_MBUFS_MIN 8191u
#define WANEM_MBUFS_MAX (1u << 20)

enum { WANEM_AB, WANEM_BA }; /* port 0 -> port 1, port 1 -> port 0 */

struct wanem_attr {
	const char *dpdk;                 /* EAL arguments, one string */
	struct wanem_path_attr dir[2];    /* WANEM_AB, WANEM_BA */
	uint64_t seed;
	bool json;
	double stats_interval;            /* seconds; 0: at exit only */
	uint32_t mbufs;                   /* 0: from rate and delay */
	bool busy_poll;
};

/* Parsers: 0, or -EINVAL with a reason in why. */
/* RATE: a number with an optional unit: bit, kbit, mbit, gbit, tbit
 * (powers of 10, bits per second); e.g. 100mbit, 1gbit, 2.5gbit. */
int wanem_parse_rate(const char *s, uint64_t *bps, char *why, size_t len);
/* BYTES: a number with an optional K, M or G (powers of 2), e.g. 256K. */
int wanem_parse_bytes(const char *s, uint64_t *out, char *why, size_t len);
/* PCT: a percentage 0..100, optionally ending in %; *frac = PCT / 100. */
int wanem_parse_pct(const char *s, double *frac, char *why, size_t len);
/* MS: milliseconds 0..1000, fractions allowed, optional "ms". */
int wanem_parse_ms(const char *s, uint64_t *ns, char *why, size_t len);

/* Fill in what the user left to defaults (queue, burst) and derive the
 * pool size; 0, or -EINVAL / -E2BIG with the reason in why. */
int wanem_attr_finish(struct wanem_attr *a, char *why, size_t len);

/* Packet buffers the paths may hold at once for these settings:
 * per direction, the packets in flight over its delay at its rate (at
 * WANEM_POOL_FRAME bytes each; WANEM_PPS_NO_RATE without a rate) plus its
 * queue and burst, and room for the port rings. Not capped. */
uint64_t wanem_mbufs_needed(const struct wanem_attr *a);

#endif
