/* crc32c and adler32 on ISA-L, and their combine operations. */
#include <isa-l/crc.h>
#include <isa-l/igzip_lib.h>
#include <limits.h>

#include "ferry/sum.h"

uint32_t ferry_crc32c(uint32_t crc, const void *buf, size_t len)
{
	const unsigned char *p = buf;

	/* ISA-L works on an int length and leaves out the final inversion */
	crc = ~crc;
	while (len) {
		int n = len > (size_t)INT_MAX ? INT_MAX : (int)len;
		crc = crc32_iscsi((unsigned char *)p, n, crc);
		p += n;
		len -= (size_t)n;
	}
	return ~crc;
}

uint32_t ferry_adler32(uint32_t adler, const void *buf, size_t len)
{
	return isal_adler32(adler, buf, len);
}

/* crc combine: appending len_b zero bytes to A is a linear map on the CRC
 * register; build it by repeated squaring of the one-zero-bit operator in
 * GF(2) (the method of zlib's crc32_combine, written here for crc32c's
 * reflected polynomial 0x82f63b78). */
static uint32_t gf2_times(const uint32_t *mat, uint32_t vec)
{
	uint32_t sum = 0;

	for (int i = 0; vec; i++, vec >>= 1)
		if (vec & 1)
			sum ^= mat[i];
	return sum;
}

static void gf2_square(uint32_t *sq, const uint32_t *mat)
{
	for (int i = 0; i < 32; i++)
		sq[i] = gf2_times(mat, mat[i]);
}

uint32_t ferry_crc32c_combine(uint32_t crc_a, uint32_t crc_b, uint64_t len_b)
{
	uint32_t odd[32], even[32];

	if (len_b == 0)
		return crc_a;
	odd[0] = 0x82f63b78u; /* one zero bit */
	for (int i = 1; i < 32; i++)
		odd[i] = 1u << (i - 1);
	gf2_square(even, odd); /* two zero bits */
	gf2_square(odd, even); /* four */
	do {
		gf2_square(even, odd);
		if (len_b & 1)
			crc_a = gf2_times(even, crc_a);
		len_b >>= 1;
		if (!len_b)
			break;
		gf2_square(odd, even);
		if (len_b & 1)
			crc_a = gf2_times(odd, crc_a);
		len_b >>= 1;
	} while (len_b);
	return crc_a ^ crc_b;
}

/* adler32 = B << 16 | A with A = 1 + sum(bytes), B = sum of the A's, both
 * mod 65521 (RFC 1950). Appending B's bytes shifts A by the sum of B's bytes
 * and B by len_b * A. */
#define ADLER_MOD 65521u

uint32_t ferry_adler32_combine(uint32_t adler_a, uint32_t adler_b,
			       uint64_t len_b)
{
	uint64_t rem = len_b % ADLER_MOD;
	uint64_t a1 = adler_a & 0xffff, b1 = adler_a >> 16;
	uint64_t a2 = adler_b & 0xffff, b2 = adler_b >> 16;
	uint64_t a, b;

	a = (a1 + a2 + ADLER_MOD - 1) % ADLER_MOD;
	b = (b1 + b2 + rem * a1 + ADLER_MOD - rem) % ADLER_MOD;
	return (uint32_t)(b << 16 | a);
}
