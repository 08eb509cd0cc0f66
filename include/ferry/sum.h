/* Checksums: crc32c (chunks, and whole files) and adler32 (whole files, what
 * FTS, Rucio and XRootD record), both with ISA-L. Values are the standard
 * ones: ferry_crc32c(0, "123456789", 9) == 0xe3069283 and
 * ferry_adler32(1, "123456789", 9) == 0x091e01de.
 */
#ifndef FERRY_SUM_H
#define FERRY_SUM_H

#include <stddef.h>
#include <stdint.h>

/* Continue a crc32c over buf (start with crc = 0). */
uint32_t ferry_crc32c(uint32_t crc, const void *buf, size_t len);

/* Continue an adler32 over buf (start with adler = 1). */
uint32_t ferry_adler32(uint32_t adler, const void *buf, size_t len);

/* The checksum of A followed by B, given crc(A), crc(B) and len(B): lets
 * chunks that arrive out of order be summed without a second pass. */
uint32_t ferry_crc32c_combine(uint32_t crc_a, uint32_t crc_b, uint64_t len_b);
uint32_t ferry_adler32_combine(uint32_t adler_a, uint32_t adler_b,
			       uint64_t len_b);

#endif
