/* Chunk header codec and payload seal/verify. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cu.h"
#include "ferry/chunk.h"
#include "ferry/error.h"
#include "ferry/sum.h"
#include "files/files.h"

static int hdr_equal(const struct ferry_chunk_hdr *a,
		     const struct ferry_chunk_hdr *b)
{
	return a->flags == b->flags && a->xfer_id == b->xfer_id &&
	       a->file_idx == b->file_idx && a->len == b->len &&
	       a->offset == b->offset && a->crc == b->crc;
}

static void roundtrip(const struct ferry_chunk_hdr *h)
{
	uint8_t buf[FERRY_CHUNK_HDR_LEN + 8];
	struct ferry_chunk_hdr d;

	/* bytes past the header are never touched */
	memset(buf, 0xa5, sizeof(buf));
	ferry_chunk_encode(h, buf);
	for (size_t i = FERRY_CHUNK_HDR_LEN; i < sizeof(buf); i++)
		CU_ASSERT_EQUAL(buf[i], 0xa5);
	memset(&d, 0x5a, sizeof(d));
	CU_ASSERT_EQUAL(ferry_chunk_decode(buf, &d), 0);
	CU_ASSERT(hdr_equal(h, &d));
}

static void test_roundtrip_extremes(void)
{
	struct ferry_chunk_hdr cases[] = {
		{ 0, 0, 0, 0, 0, 0 },
		{ UINT16_MAX, UINT64_MAX, UINT32_MAX, UINT32_MAX, UINT64_MAX,
		  UINT32_MAX },
		{ FERRY_CHUNK_LAST, 0x0102030405060708ull, 0x11223344u,
		  0x00a0b0c0u, 0x8000000000000000ull, 0xdeadbeefu },
		{ 0x8000, 1, 1, 1, 1, 1 },
		{ 0x00ff, 0xff00000000000000ull, 0x80000000u, 0x7fffffffu,
		  0x00000000ffffffffull, 0x80000001u },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		roundtrip(&cases[i]);
}

static void test_wire_layout(void)
{
	struct ferry_chunk_hdr h = { .flags = 0x0201,
				     .xfer_id = 0x1112131415161718ull,
				     .file_idx = 0x21222324u,
				     .len = 0x31323334u,
				     .offset = 0x4142434445464748ull,
				     .crc = 0x51525354u };
	const uint8_t want[36] = {
		'F', 'C', 'H', 'K', 1, 0, 0x01, 0x02,
		0x18, 0x17, 0x16, 0x15, 0x14, 0x13, 0x12, 0x11,
		0x24, 0x23, 0x22, 0x21, 0x34, 0x33, 0x32, 0x31,
		0x48, 0x47, 0x46, 0x45, 0x44, 0x43, 0x42, 0x41,
		0x54, 0x53, 0x52, 0x51,
	};
	uint8_t buf[FERRY_CHUNK_HDR_LEN];
	uint32_t crc = ferry_crc32c(0, want, 36);

	ferry_chunk_encode(&h, buf);
	CU_ASSERT_EQUAL(memcmp(buf, want, 36), 0);
	CU_ASSERT_EQUAL(buf[36], (uint8_t)crc);
	CU_ASSERT_EQUAL(buf[37], (uint8_t)(crc >> 8));
	CU_ASSERT_EQUAL(buf[38], (uint8_t)(crc >> 16));
	CU_ASSERT_EQUAL(buf[39], (uint8_t)(crc >> 24));
}

/* Every single-bit flip anywhere in the 40 header bytes is caught: bytes
 * 0..35 change the crc input, bytes 36..39 change the stored crc. */
static void test_every_flip_detected(void)
{
	struct ferry_chunk_hdr h = { FERRY_CHUNK_LAST, 42, 7, 1 << 20,
				     3ull << 30, 0x12345678u };
	uint8_t buf[FERRY_CHUNK_HDR_LEN], bad[FERRY_CHUNK_HDR_LEN];
	struct ferry_chunk_hdr d;

	ferry_chunk_encode(&h, buf);
	for (unsigned i = 0; i < FERRY_CHUNK_HDR_LEN; i++) {
		for (unsigned bit = 0; bit < 8; bit++) {
			memcpy(bad, buf, sizeof(bad));
			bad[i] ^= (uint8_t)(1u << bit);
			CU_ASSERT_EQUAL(ferry_chunk_decode(bad, &d),
					-FERRY_EPROTO);
		}
		/* and a whole-byte change */
		memcpy(bad, buf, sizeof(bad));
		bad[i] ^= 0xff;
		CU_ASSERT_EQUAL(ferry_chunk_decode(bad, &d), -FERRY_EPROTO);
	}
	CU_ASSERT_EQUAL(ferry_chunk_decode(buf, &d), 0);
}

/* Re-seal the header crc so only the magic/version check can reject. */
static void reseal(uint8_t *b)
{
	uint32_t crc = ferry_crc32c(0, b, 36);

	b[36] = (uint8_t)crc;
	b[37] = (uint8_t)(crc >> 8);
	b[38] = (uint8_t)(crc >> 16);
	b[39] = (uint8_t)(crc >> 24);
}

static void test_magic_version(void)
{
	struct ferry_chunk_hdr h = { 0, 1, 2, 3, 4, 5 }, d;
	uint8_t buf[FERRY_CHUNK_HDR_LEN];
	const uint16_t versions[] = { 0, 2, 0x100, 0xffff };

	ferry_chunk_encode(&h, buf);
	buf[0] = 'X';
	reseal(buf);
	CU_ASSERT_EQUAL(ferry_chunk_decode(buf, &d), -FERRY_EPROTO);

	ferry_chunk_encode(&h, buf);
	memcpy(buf, "KHCF", 4); /* big-endian magic */
	reseal(buf);
	CU_ASSERT_EQUAL(ferry_chunk_decode(buf, &d), -FERRY_EPROTO);

	for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++) {
		ferry_chunk_encode(&h, buf);
		buf[4] = (uint8_t)versions[i];
		buf[5] = (uint8_t)(versions[i] >> 8);
		reseal(buf);
		CU_ASSERT_EQUAL(ferry_chunk_decode(buf, &d), -FERRY_EPROTO);
	}

	/* an all-zero block (an unwritten slot) is not a chunk */
	memset(buf, 0, sizeof(buf));
	CU_ASSERT_EQUAL(ferry_chunk_decode(buf, &d), -FERRY_EPROTO);
	reseal(buf);
	CU_ASSERT_EQUAL(ferry_chunk_decode(buf, &d), -FERRY_EPROTO);

	/* the control: a resealed but unchanged header still decodes */
	ferry_chunk_encode(&h, buf);
	reseal(buf);
	CU_ASSERT_EQUAL(ferry_chunk_decode(buf, &d), 0);
	CU_ASSERT(hdr_equal(&h, &d));
}

static void test_seal_verify(void)
{
	size_t n = 1 << 16;
	uint8_t *p = malloc(n);
	struct ferry_chunk_hdr h = { .len = (uint32_t)n };

	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	srand(11);
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)rand();
	ferry_chunk_seal(&h, p);
	CU_ASSERT_EQUAL(h.crc, ferry_crc32c(0, p, n));
	CU_ASSERT_EQUAL(ferry_chunk_verify(&h, p), 0);

	/* any single bit flip is caught */
	const size_t where[] = { 0, 1, 4095, 4096, n / 2, n - 1 };
	for (size_t i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
		for (unsigned bit = 0; bit < 8; bit += 7) {
			p[where[i]] ^= (uint8_t)(1u << bit);
			CU_ASSERT_EQUAL(ferry_chunk_verify(&h, p),
					-FERRY_ECRC);
			p[where[i]] ^= (uint8_t)(1u << bit);
		}
	}
	CU_ASSERT_EQUAL(ferry_chunk_verify(&h, p), 0);

	/* a wrong stored crc is caught, and the crc survives the codec */
	uint8_t buf[FERRY_CHUNK_HDR_LEN];
	struct ferry_chunk_hdr d;
	ferry_chunk_encode(&h, buf);
	CU_ASSERT_EQUAL_FATAL(ferry_chunk_decode(buf, &d), 0);
	CU_ASSERT_EQUAL(ferry_chunk_verify(&d, p), 0);
	d.crc ^= 0x80000000u;
	CU_ASSERT_EQUAL(ferry_chunk_verify(&d, p), -FERRY_ECRC);

	/* len covers exactly the payload: a byte past it does not matter */
	h.len = (uint32_t)(n - 1);
	ferry_chunk_seal(&h, p);
	p[n - 1] ^= 0xff;
	CU_ASSERT_EQUAL(ferry_chunk_verify(&h, p), 0);
	free(p);
}

static void test_empty_payload(void)
{
	struct ferry_chunk_hdr h = { .flags = FERRY_CHUNK_LAST, .len = 0,
				     .crc = 0xffffffffu }, d;
	uint8_t one = 0x55, buf[FERRY_CHUNK_HDR_LEN];

	ferry_chunk_seal(&h, &one);
	CU_ASSERT_EQUAL(h.crc, ferry_crc32c(0, &one, 0));
	CU_ASSERT_EQUAL(ferry_chunk_verify(&h, &one), 0);
	/* with len 0 the payload is never read */
	ferry_chunk_seal(&h, NULL);
	CU_ASSERT_EQUAL(ferry_chunk_verify(&h, NULL), 0);
	h.crc ^= 1;
	CU_ASSERT_EQUAL(ferry_chunk_verify(&h, &one), -FERRY_ECRC);
	h.crc ^= 1;

	ferry_chunk_encode(&h, buf);
	CU_ASSERT_EQUAL_FATAL(ferry_chunk_decode(buf, &d), 0);
	CU_ASSERT_EQUAL(d.len, 0);
	CU_ASSERT_EQUAL(d.flags, FERRY_CHUNK_LAST);
	CU_ASSERT_EQUAL(ferry_chunk_verify(&d, &one), 0);
}

/* Pack records: written and read back; a record that claims more bytes
 * than the payload holds, or a header cut short, is refused; data bytes
 * leave the record headers out. */
static void test_pack_records(void)
{
	uint8_t p[64] = { 0 };
	const uint8_t *data;
	uint32_t at = 0, idx, len, crc, n;

	ferry__pack_put(p, 7, 5, 0xdeadbeef);
	memcpy(p + FERRY_PACK_REC_LEN, "hello", 5);
	ferry__pack_put(p + 17, 9, 0, 1);
	n = 17 + FERRY_PACK_REC_LEN;
	CU_ASSERT_EQUAL(ferry__pack_next(p, n, &at, &idx, &len, &crc, &data), 1);
	CU_ASSERT_EQUAL(idx, 7);
	CU_ASSERT_EQUAL(len, 5);
	CU_ASSERT_EQUAL(crc, 0xdeadbeef);
	CU_ASSERT_EQUAL(memcmp(data, "hello", 5), 0);
	CU_ASSERT_EQUAL(at, 17);
	CU_ASSERT_EQUAL(ferry__pack_next(p, n, &at, &idx, &len, &crc, &data), 1);
	CU_ASSERT_EQUAL(idx, 9);
	CU_ASSERT_EQUAL(len, 0);
	CU_ASSERT_EQUAL(ferry__pack_next(p, n, &at, &idx, &len, &crc, &data), 0);
	/* the headers' count and crc32c, what a pack's chunk header carries */
	uint64_t recs = 0;
	uint32_t hcrc = 0;
	CU_ASSERT_EQUAL(ferry__pack_headers(p, n, &recs, &hcrc), 0);
	CU_ASSERT_EQUAL(recs, 2);
	CU_ASSERT_EQUAL(hcrc, ferry_crc32c(ferry_crc32c(0, p, FERRY_PACK_REC_LEN),
					   p + 17, FERRY_PACK_REC_LEN));
	CU_ASSERT_EQUAL(ferry__pack_headers(p, n - 1, &recs, &hcrc),
			-FERRY_EPROTO);
	/* the first record's data runs one byte past the end */
	at = 0;
	CU_ASSERT_EQUAL(ferry__pack_next(p, 16, &at, &idx, &len, &crc, &data),
			-FERRY_EPROTO);
	/* a header cut short */
	at = 17;
	CU_ASSERT_EQUAL(ferry__pack_next(p, 17 + 11, &at, &idx, &len, &crc,
					 &data), -FERRY_EPROTO);
	/* a length near 2^32 cannot wrap the bound */
	ferry__pack_put(p, 1, UINT32_MAX - 4, 0);
	at = 0;
	CU_ASSERT_EQUAL(ferry__pack_next(p, n, &at, &idx, &len, &crc, &data),
			-FERRY_EPROTO);

	struct ferry_chunk_hdr h = { .flags = FERRY_CHUNK_PACK, .len = 29,
				     .offset = 2 };
	CU_ASSERT_EQUAL(ferry_chunk_data_bytes(&h), 5);
	h.offset = 3; /* more records than fit: no data */
	CU_ASSERT_EQUAL(ferry_chunk_data_bytes(&h), 0);
	h.flags = FERRY_CHUNK_LAST;
	CU_ASSERT_EQUAL(ferry_chunk_data_bytes(&h), 29);
}

int main(void)
{
	CU_TestInfo tests[] = {
		{ "round trip, extreme values", test_roundtrip_extremes },
		{ "wire layout", test_wire_layout },
		{ "every header bit flip detected", test_every_flip_detected },
		{ "wrong magic or version", test_magic_version },
		{ "seal and verify", test_seal_verify },
		{ "empty payload", test_empty_payload },
		{ "pack records", test_pack_records },
		CU_TEST_INFO_NULL,
	};
	return ferry_cu_run("chunk", tests);
}
