/* Wire bytes that must not change: every control message type, and a
 * manifest batch, against the bytes the previous encoder wrote
 * (codec_vectors.h). A peer of an earlier version sends and expects
 * exactly these. */
#include <errno.h>
#include <string.h>

#include "codec_samples.h"
#include "codec_vectors.h"
#include "cu.h"
#include "ferry/error.h"
#include "io/manifest.h"

static uint8_t buf[FERRY_CTRL_MAX_FRAME + 1];

static void set_body_len(uint8_t *p, uint32_t n)
{
	for (int i = 0; i < 4; i++)
		p[4 + i] = (uint8_t)(n >> (8 * i));
}

/* Every type the codec knows has a vector. */
static void test_every_type(void)
{
	size_t known = 0;

	for (unsigned t = 0; t < 256; t++)
		if (strcmp(ferry__ctrl_type_name((uint16_t)t), "unknown"))
			known++;
	CU_ASSERT_EQUAL(known, FERRY__ARRAY_SIZE(codec_vectors));
	CU_ASSERT_EQUAL(known, FERRY__ARRAY_SIZE(codec_types));
}

static void test_encode_bytes(void)
{
	for (size_t i = 0; i < FERRY__ARRAY_SIZE(codec_vectors); i++) {
		const struct codec_vector *v = &codec_vectors[i];
		struct ferry_msg m;
		size_t len = 0;

		codec_sample(v->type, &m);
		CU_ASSERT_EQUAL_FATAL(ferry__ctrl_encode(&m, buf, sizeof(buf),
							 &len), 0);
		CU_ASSERT_EQUAL(len, v->len);
		if (len == v->len && memcmp(buf, v->bytes, len))
			fprintf(stderr, "%s: bytes differ\n",
				ferry__ctrl_type_name(v->type));
		CU_ASSERT(len == v->len && !memcmp(buf, v->bytes, len));
	}
}

/* The old bytes decode to the sample, and the sample round-trips. */
static void test_decode_roundtrip(void)
{
	for (size_t i = 0; i < FERRY__ARRAY_SIZE(codec_vectors); i++) {
		const struct codec_vector *v = &codec_vectors[i];
		struct ferry_msg want, got;
		size_t used = 0, len = 0;

		codec_sample(v->type, &want);
		CU_ASSERT_EQUAL(ferry__ctrl_decode(v->bytes, v->len, &got,
						   &used), 0);
		CU_ASSERT_EQUAL(used, v->len);
		CU_ASSERT_EQUAL(memcmp(&want, &got, sizeof(want)), 0);

		CU_ASSERT_EQUAL_FATAL(ferry__ctrl_encode(&want, buf,
							 sizeof(buf), &len),
				      0);
		CU_ASSERT_EQUAL(ferry__ctrl_decode(buf, len, &got, &used), 0);
		CU_ASSERT_EQUAL(memcmp(&want, &got, sizeof(want)), 0);
	}
}

/* A cut frame is a prefix (read more); a body one byte short or long for
 * its type is a protocol error; an encoder given too little room says
 * so. */
static void test_lengths(void)
{
	for (size_t i = 0; i < FERRY__ARRAY_SIZE(codec_vectors); i++) {
		const struct codec_vector *v = &codec_vectors[i];
		uint32_t body = (uint32_t)(v->len - FERRY_CTRL_HDR_LEN);
		struct ferry_msg m;
		size_t used, len;

		for (size_t n = 0; n < v->len; n++)
			CU_ASSERT_EQUAL(ferry__ctrl_decode(v->bytes, n, &m,
							   &used), -EAGAIN);
		for (uint32_t b = 0; b < body; b++) {
			memcpy(buf, v->bytes, FERRY_CTRL_HDR_LEN + b);
			set_body_len(buf, b);
			CU_ASSERT_EQUAL(ferry__ctrl_decode(buf,
							   FERRY_CTRL_HDR_LEN + b,
							   &m, &used),
					-FERRY_EPROTO);
		}
		memcpy(buf, v->bytes, v->len);
		buf[v->len] = 0;
		set_body_len(buf, body + 1);
		CU_ASSERT_EQUAL(ferry__ctrl_decode(buf, v->len + 1, &m, &used),
				-FERRY_EPROTO);

		codec_sample(v->type, &m);
		CU_ASSERT_EQUAL(ferry__ctrl_encode(&m, buf, v->len - 1, &len),
				-FERRY_ETOOBIG);
	}
}

/* TCLASS carries a DSCP, six bits: 64 is neither written nor read. */
static void test_tclass_range(void)
{
	struct ferry_msg m;
	size_t len, used;

	codec_sample(FERRY_MSG_TCLASS, &m);
	m.u.tclass.dscp = FERRY_DSCP_MAX + 1;
	CU_ASSERT_EQUAL(ferry__ctrl_encode(&m, buf, sizeof(buf), &len),
			-EINVAL);
	memcpy(buf, vec_TCLASS, sizeof(vec_TCLASS));
	buf[FERRY_CTRL_HDR_LEN] = FERRY_DSCP_MAX + 1;
	CU_ASSERT_EQUAL(ferry__ctrl_decode(buf, sizeof(vec_TCLASS), &m, &used),
			-FERRY_EPROTO);
	buf[FERRY_CTRL_HDR_LEN] = FERRY_DSCP_MAX;
	CU_ASSERT_EQUAL(ferry__ctrl_decode(buf, sizeof(vec_TCLASS), &m, &used),
			0);
	CU_ASSERT_EQUAL(m.u.tclass.dscp, FERRY_DSCP_MAX);
}

static void test_manifest_bytes(void)
{
	struct ferry_manifest man, back;
	size_t next = 0, len;

	ferry__manifest_init(&man);
	ferry__manifest_init(&back);
	CU_ASSERT_EQUAL_FATAL(ferry__manifest_add(&man, "dir", NULL,
						  FERRY_ENTRY_DIR, 0755, 0,
						  1700000000123456789ll), 0);
	CU_ASSERT_EQUAL_FATAL(ferry__manifest_add(&man, "dir/f \x01.bin", NULL,
						  FERRY_ENTRY_FILE, 0640,
						  0x0102030405ull, -2), 0);
	len = ferry__manifest_encode(&man, &next, buf, sizeof(buf));
	CU_ASSERT_EQUAL(next, 2);
	CU_ASSERT_EQUAL(len, sizeof(vec_manifest));
	CU_ASSERT_EQUAL(memcmp(buf, vec_manifest, sizeof(vec_manifest)), 0);
	CU_ASSERT_EQUAL(ferry__manifest_decode(&back, vec_manifest,
					       sizeof(vec_manifest), 10), 0);
	CU_ASSERT_EQUAL_FATAL(back.n, 2);
	for (size_t i = 0; i < 2; i++) {
		CU_ASSERT_STRING_EQUAL(back.e[i].path, man.e[i].path);
		CU_ASSERT_EQUAL(back.e[i].type, man.e[i].type);
		CU_ASSERT_EQUAL(back.e[i].mode, man.e[i].mode);
		CU_ASSERT_EQUAL(back.e[i].size, man.e[i].size);
		CU_ASSERT_EQUAL(back.e[i].mtime_ns, man.e[i].mtime_ns);
	}
	ferry__manifest_free(&man);
	ferry__manifest_free(&back);
}

int main(void)
{
	CU_TestInfo tests[] = {
		{ "every type has a vector", test_every_type },
		{ "encode: the previous bytes", test_encode_bytes },
		{ "decode and round trip", test_decode_roundtrip },
		{ "cut, short and long frames", test_lengths },
		{ "TCLASS: a DSCP of six bits", test_tclass_range },
		{ "manifest batch bytes", test_manifest_bytes },
		CU_TEST_INFO_NULL,
	};

	return ferry_cu_run("codec_vectors", tests);
}
