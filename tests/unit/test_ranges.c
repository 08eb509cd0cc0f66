/* Split files, the pure parts: which bytes and chunks a range is, the
 * RANGES batch on the wire, and the sums a publisher combines range by
 * range from per-chunk sums (lib/files). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cu.h"
#include "ferry/error.h"
#include "ferry/sum.h"
#include "files/files.h"

#define MiB (UINT64_C(1) << 20)

static void test_span(void)
{
	struct ferry__span s;

	/* 40 MiB in 10 MiB ranges of 1 MiB chunks */
	CU_ASSERT_EQUAL(ferry__span_of(40 * MiB, 30 * MiB, 10 * MiB, MiB, &s), 0);
	CU_ASSERT_EQUAL(s.off, 30 * MiB);
	CU_ASSERT_EQUAL(s.len, 10 * MiB);
	CU_ASSERT_EQUAL(s.first, 30);
	CU_ASSERT_EQUAL(s.count, 10);
	CU_ASSERT_EQUAL(ferry__span_count(40 * MiB, 10 * MiB), 4);
	/* five bytes more: a fifth range of one short chunk */
	CU_ASSERT_EQUAL(ferry__span_count(40 * MiB + 5, 10 * MiB), 5);
	CU_ASSERT_EQUAL(ferry__span_of(40 * MiB + 5, 40 * MiB, 10 * MiB, MiB,
				       &s), 0);
	CU_ASSERT_EQUAL(s.len, 5);
	CU_ASSERT_EQUAL(s.first, 40);
	CU_ASSERT_EQUAL(s.count, 1);
	/* a last range whose last chunk is short */
	CU_ASSERT_EQUAL(ferry__span_of(20 * MiB + 3, 16 * MiB, 8 * MiB,
				       4 * MiB, &s), 0);
	CU_ASSERT_EQUAL(s.len, 4 * MiB + 3);
	CU_ASSERT_EQUAL(s.first, 4);
	CU_ASSERT_EQUAL(s.count, 2);
	/* one range holds the whole file */
	CU_ASSERT_EQUAL(ferry__span_of(3 * MiB, 0, 8 * MiB, MiB, &s), 0);
	CU_ASSERT_EQUAL(s.len, 3 * MiB);
	CU_ASSERT_EQUAL(s.count, 3);
	CU_ASSERT_EQUAL(ferry__span_count(3 * MiB, 8 * MiB), 1);
	CU_ASSERT_EQUAL(ferry__span_count(0, 8 * MiB), 0);
	CU_ASSERT_EQUAL(ferry__span_count(3 * MiB, 0), 0);

	/* no range: split 0 or not in whole chunks, an offset not at a
	 * range's start or not before the end */
	CU_ASSERT_EQUAL(ferry__span_of(40 * MiB, 0, 0, MiB, &s), -EINVAL);
	CU_ASSERT_EQUAL(ferry__span_of(40 * MiB, 0, 3 * MiB / 2, MiB, &s),
			-EINVAL);
	CU_ASSERT_EQUAL(ferry__span_of(40 * MiB, 5 * MiB, 10 * MiB, MiB, &s),
			-EINVAL);
	CU_ASSERT_EQUAL(ferry__span_of(40 * MiB, 40 * MiB, 10 * MiB, MiB, &s),
			-EINVAL);
	CU_ASSERT_EQUAL(ferry__span_of(0, 0, 10 * MiB, MiB, &s), -EINVAL);
	CU_ASSERT_EQUAL(ferry__span_of(40 * MiB, 0, 10 * MiB, 0, &s), -EINVAL);
}

struct got {
	struct ferry__file_range e[4];
	int n, stop_at;
};

static int take(void *arg, const struct ferry__file_range *e)
{
	struct got *g = arg;

	if (g->n == g->stop_at)
		return -ENOSPC;
	g->e[g->n++] = *e;
	return 0;
}

/* The RANGES batch: u32 idx, u64 offset, u64 split, little-endian. */
static void test_ranges_codec(void)
{
	static const struct ferry__file_range in[2] = {
		{ 0x01020304, 0x0a00000, 0xa00000 },
		{ 7, 0, UINT64_C(0x1122334455667788) },
	};
	static const uint8_t want[40] = {
		0x04, 0x03, 0x02, 0x01, 0x00, 0x00, 0xa0, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00, 0xa0, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x07, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11,
	};
	struct got g = { .stop_at = -1 };
	uint8_t buf[64];
	size_t next = 0;

	CU_ASSERT_EQUAL(ferry__ranges_encode(in, 2, &next, buf, sizeof(buf)),
			40);
	CU_ASSERT_EQUAL(next, 2);
	CU_ASSERT_EQUAL(memcmp(buf, want, sizeof(want)), 0);
	CU_ASSERT_EQUAL(ferry__ranges_decode(want, sizeof(want), take, &g), 0);
	CU_ASSERT_EQUAL_FATAL(g.n, 2);
	CU_ASSERT_EQUAL(memcmp(g.e, in, sizeof(in)), 0);
	/* a batch takes what fits, whole entries only */
	next = 0;
	CU_ASSERT_EQUAL(ferry__ranges_encode(in, 2, &next, buf, 39), 20);
	CU_ASSERT_EQUAL(next, 1);
	CU_ASSERT_EQUAL(ferry__ranges_encode(in, 2, &next, buf, 39), 20);
	CU_ASSERT_EQUAL(next, 2);
	CU_ASSERT_EQUAL(ferry__ranges_encode(in, 2, &next, buf, 39), 0);
	/* a cut entry is refused before any is taken; the taker's error
	 * stops the batch */
	g.n = 0;
	CU_ASSERT_EQUAL(ferry__ranges_decode(want, 39, take, &g), -FERRY_EPROTO);
	CU_ASSERT_EQUAL(g.n, 0);
	g.stop_at = 1;
	CU_ASSERT_EQUAL(ferry__ranges_decode(want, 40, take, &g), -ENOSPC);
	CU_ASSERT_EQUAL(g.n, 1);
	CU_ASSERT_EQUAL(ferry__ranges_decode(want, 0, take, &g), 0);
}

/* The publisher's sums: each range's from its chunks' (as its journal
 * holds them), then the ranges' in order, are the whole file's. */
static void test_sums_by_range(void)
{
	const uint64_t chunk = 4096, split = 3 * 4096, size = 10 * 4096 + 77;
	uint64_t n = ferry__journal_chunks(size, chunk);
	struct ferry_chunk_sum *s = calloc(n, sizeof(*s));
	uint8_t *data = malloc(size);
	uint32_t crc = 0, adler = 1, wc, wa;
	struct ferry__span sp;

	CU_ASSERT_FATAL(s && data);
	for (uint64_t i = 0; i < size; i++)
		data[i] = (uint8_t)(i * 2654435761u >> 13);
	for (uint64_t k = 0; k < n; k++) {
		uint64_t len = size - k * chunk < chunk ? size - k * chunk : chunk;
		s[k].crc32c = ferry_crc32c(0, data + k * chunk, len);
		s[k].adler32 = ferry_adler32(1, data + k * chunk, len);
	}
	for (uint64_t r = 0; r < ferry__span_count(size, split); r++) {
		uint32_t c, a;
		CU_ASSERT_EQUAL_FATAL(ferry__span_of(size, r * split, split,
						     chunk, &sp), 0);
		ferry__sums_combine(s + sp.first, sp.count, size - sp.off, chunk,
				    &c, &a);
		CU_ASSERT_EQUAL(c, ferry_crc32c(0, data + sp.off, sp.len));
		CU_ASSERT_EQUAL(a, ferry_adler32(1, data + sp.off, sp.len));
		crc = r ? ferry_crc32c_combine(crc, c, sp.len) : c;
		adler = r ? ferry_adler32_combine(adler, a, sp.len) : a;
	}
	ferry__sums_combine(s, n, size, chunk, &wc, &wa);
	CU_ASSERT_EQUAL(crc, ferry_crc32c(0, data, size));
	CU_ASSERT_EQUAL(adler, ferry_adler32(1, data, size));
	CU_ASSERT_EQUAL(crc, wc);
	CU_ASSERT_EQUAL(adler, wa);
	free(s);
	free(data);
}

int main(void)
{
	CU_TestInfo tests[] = {
		{ "a range's bytes and chunks", test_span },
		{ "RANGES batch bytes", test_ranges_codec },
		{ "whole-file sums from the ranges'", test_sums_by_range },
		CU_TEST_INFO_NULL,
	};

	return ferry_cu_run("ranges", tests);
}
