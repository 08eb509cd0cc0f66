#include <stdlib.h>
#include <string.h>

#include "cu.h"
#include "ferry/sum.h"

static void test_known_values(void)
{
	const char *s = "123456789";

	CU_ASSERT_EQUAL(ferry_crc32c(0, s, 9), 0xe3069283u);
	CU_ASSERT_EQUAL(ferry_adler32(1, s, 9), 0x091e01deu);
	CU_ASSERT_EQUAL(ferry_crc32c(0, s, 0), 0);
	CU_ASSERT_EQUAL(ferry_adler32(1, s, 0), 1);
	/* streaming equals one shot */
	CU_ASSERT_EQUAL(ferry_crc32c(ferry_crc32c(0, s, 4), s + 4, 5),
			0xe3069283u);
	CU_ASSERT_EQUAL(ferry_adler32(ferry_adler32(1, s, 4), s + 4, 5),
			0x091e01deu);
}

static void test_combine(void)
{
	size_t n = 1 << 20;
	unsigned char *buf = malloc(n);
	size_t cuts[] = { 0, 1, 7, 4096, 65521, 65522, 300000, n - 1, n };

	CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
	srand(7);
	for (size_t i = 0; i < n; i++)
		buf[i] = (unsigned char)rand();
	uint32_t crc = ferry_crc32c(0, buf, n), ad = ferry_adler32(1, buf, n);
	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		size_t k = cuts[i];
		uint32_t ca = ferry_crc32c(0, buf, k);
		uint32_t cb = ferry_crc32c(0, buf + k, n - k);
		uint32_t aa = ferry_adler32(1, buf, k);
		uint32_t ab = ferry_adler32(1, buf + k, n - k);
		CU_ASSERT_EQUAL(ferry_crc32c_combine(ca, cb, n - k), crc);
		CU_ASSERT_EQUAL(ferry_adler32_combine(aa, ab, n - k), ad);
	}
	/* a single flipped bit changes both */
	buf[12345] ^= 4;
	CU_ASSERT_NOT_EQUAL(ferry_crc32c(0, buf, n), crc);
	CU_ASSERT_NOT_EQUAL(ferry_adler32(1, buf, n), ad);
	free(buf);
}

int main(void)
{
	CU_TestInfo tests[] = {
		{ "known values", test_known_values },
		{ "combine", test_combine },
		CU_TEST_INFO_NULL,
	};
	return ferry_cu_run("sum", tests);
}
