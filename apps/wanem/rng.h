/* A small, fast, seedable PRNG (xoshiro256**, seeded through splitmix64)
 * for the impairments: the same seed gives the same run. */
#ifndef WANEM_RNG_H
#define WANEM_RNG_H

#include <stdbool.h>
#include <stdint.h>

struct wanem_rng {
	uint64_t s[4];
};

static inline uint64_t wanem__splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static inline void wanem_rng_seed(struct wanem_rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = wanem__splitmix64(&seed);
}

static inline uint64_t wanem__rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static inline uint64_t wanem_rng_u64(struct wanem_rng *r)
{
	uint64_t *s = r->s;
	uint64_t res = wanem__rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = wanem__rotl(s[3], 45);
	return res;
}

/* Uniform in [0, 1). */
static inline double wanem_rng_unit(struct wanem_rng *r)
{
	return (double)(wanem_rng_u64(r) >> 11) * 0x1.0p-53;
}

/* true with probability p (p <= 0: never, p >= 1: always). */
static inline bool wanem_rng_chance(struct wanem_rng *r, double p)
{
	return p > 0 && (p >= 1 || wanem_rng_unit(r) < p);
}

/* Uniform in [0, n), n > 0. */
static inline uint64_t wanem_rng_below(struct wanem_rng *r, uint64_t n)
{
	return (uint64_t)(wanem_rng_unit(r) * (double)n) % n;
}

#endif
