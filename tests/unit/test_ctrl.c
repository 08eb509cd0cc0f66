/* Control channel: codec and socket I/O (authentication: test_auth.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codec_samples.h"
#include "cu.h"
#include "ctrl/msg.h"
#include "ctrl_helpers.h"
#include "ferry/error.h"

#define PARAMS_LEN 48 /* struct ferry_params on the wire */
#define REQ_PATH "data/run 7/out.bin"
#define REQ_DATA_LEN 100
#define REPLY_DATA_LEN 200
/* holds any sample frame: the largest is an ACCEPT with a full endpoint */
#define SAMPLE_BUF (FERRY_CTRL_HDR_LEN + PARAMS_LEN + 2 + FERRY_EP_MAX + 512)

/* The types sample() fills, in order. */
static const uint16_t sampled[] = {
	FERRY_MSG_HELLO, FERRY_MSG_CHALLENGE, FERRY_MSG_AUTH,
	FERRY_MSG_PROPOSE, FERRY_MSG_ACCEPT, FERRY_MSG_ERROR,
	FERRY_MSG_READY, FERRY_MSG_FIN, FERRY_MSG_RESULT,
	FERRY_MSG_REQ, FERRY_MSG_REPLY, FERRY_MSG_MARKER,
};

/* Room for any frame, for the tests that need the largest. */
static uint8_t big[FERRY_CTRL_MAX_FRAME + 16];

/* A message of each type with every field distinct and non-zero: the
 * vector test's samples, with the largest endpoint, a longer ERROR text,
 * an empty READY and more REQ and REPLY data. */
static void sample(uint16_t type, struct ferry_msg *m)
{
	codec_sample(type, m);
	switch (type) {
	case FERRY_MSG_HELLO:
		sample_hello(m);
		break;
	case FERRY_MSG_ACCEPT:
		m->u.accept.ep.len = FERRY_EP_MAX;
		for (int i = 0; i < FERRY_EP_MAX; i++)
			m->u.accept.ep.data[i] = (uint8_t)(i * 7);
		break;
	case FERRY_MSG_ERROR:
		snprintf(m->u.error.text, sizeof(m->u.error.text),
			 "disk full on /data\tretry later\n");
		break;
	case FERRY_MSG_READY:
		memset(&m->u.ready, 0, sizeof(m->u.ready));
		break;
	case FERRY_MSG_REQ:
		strcpy(m->u.req.path, REQ_PATH);
		m->u.req.len = REQ_DATA_LEN;
		for (int i = 0; i < REQ_DATA_LEN; i++)
			m->u.req.data[i] = (uint8_t)(i * 3 + 1);
		break;
	case FERRY_MSG_REPLY:
		m->u.reply.len = REPLY_DATA_LEN;
		for (int i = 0; i < REPLY_DATA_LEN; i++)
			m->u.reply.data[i] = (uint8_t)(255 - i);
		break;
	}
}

/* Body lengths the protocol fixes (ACCEPT and ERROR as sampled). */
static size_t body_len_of(uint16_t type)
{
	switch (type) {
	case FERRY_MSG_HELLO: return 36 + 1 + strlen(HELLO_NAME);
	case FERRY_MSG_CHALLENGE: return 68;
	case FERRY_MSG_AUTH: return 32;
	case FERRY_MSG_PROPOSE: return PARAMS_LEN;
	case FERRY_MSG_ACCEPT: return PARAMS_LEN + 2 + FERRY_EP_MAX;
	case FERRY_MSG_ERROR: return 4 + 2 + 31;
	case FERRY_MSG_READY: return 2; /* an empty endpoint blob */
	case FERRY_MSG_FIN: return 16;
	case FERRY_MSG_RESULT: return 44;
	case FERRY_MSG_REQ:
		return 4 + 4 + 8 + 2 + strlen(REQ_PATH) + 4 + REQ_DATA_LEN;
	case FERRY_MSG_REPLY: return 4 + 4 + 8 + 4 + REPLY_DATA_LEN;
	case FERRY_MSG_MARKER: return 40;
	}
	return 0;
}

static size_t encode_sample(uint16_t type, uint8_t *buf, size_t cap)
{
	struct ferry_msg m;
	size_t len = 0;

	sample(type, &m);
	CU_ASSERT_EQUAL_FATAL(ferry__ctrl_encode(&m, buf, cap, &len), 0);
	return len;
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static void set_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static int decode(const uint8_t *buf, size_t len, struct ferry_msg *m)
{
	size_t used = 0;

	return ferry__ctrl_decode(buf, len, m, &used);
}

/* ---- codec ---- */

static void test_roundtrip(void)
{
	for (size_t i = 0; i < FERRY__ARRAY_SIZE(sampled); i++) {
		uint16_t t = sampled[i];
		uint8_t buf[SAMPLE_BUF];
		struct ferry_msg in, out;
		size_t len, used = 0;

		sample(t, &in);
		len = encode_sample(t, buf, sizeof(buf));
		CU_ASSERT_EQUAL(len, FERRY_CTRL_HDR_LEN + body_len_of(t));
		CU_ASSERT_EQUAL(memcmp(buf, "FRRY", 4), 0);
		CU_ASSERT_EQUAL(le32(buf + 4), body_len_of(t));
		CU_ASSERT_EQUAL(buf[8] | buf[9] << 8, FERRY_PROTO_VERSION);
		CU_ASSERT_EQUAL(buf[10] | buf[11] << 8, t);
		CU_ASSERT_EQUAL(ferry__ctrl_decode(buf, len, &out, &used), 0);
		CU_ASSERT_EQUAL(used, len);
		CU_ASSERT_EQUAL(memcmp(&in, &out, sizeof(in)), 0);
		CU_ASSERT_STRING_NOT_EQUAL(ferry__ctrl_type_name(t),
					   "unknown");
	}
	CU_ASSERT_STRING_EQUAL(ferry__ctrl_type_name(FERRY_MSG_ACCEPT),
			       "ACCEPT");
	CU_ASSERT_STRING_EQUAL(ferry__ctrl_type_name(FERRY_MSG_MARKER),
			       "MARKER");
	CU_ASSERT_STRING_EQUAL(ferry__ctrl_type_name(0), "unknown");
	CU_ASSERT_STRING_EQUAL(ferry__ctrl_type_name(999), "unknown");
}

/* The exact bytes of one frame: pins down byte order and field order. */
static void test_golden_fin(void)
{
	static const uint8_t want[] = {
		'F', 'R', 'R', 'Y', 16, 0, 0, 0, 1, 0, 8, 0,
		0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01,
		0x2a, 0, 0, 0, 0, 0, 0, 0,
	};
	struct ferry_msg m = { .type = FERRY_MSG_FIN };
	uint8_t buf[64];
	size_t len = 0;

	m.u.fin.bytes = 0x0102030405060708ull;
	m.u.fin.chunks = 42;
	CU_ASSERT_EQUAL(ferry__ctrl_encode(&m, buf, sizeof(buf), &len), 0);
	CU_ASSERT_EQUAL(len, sizeof(want));
	CU_ASSERT_EQUAL(memcmp(buf, want, sizeof(want)), 0);
	CU_ASSERT_EQUAL(le32(buf), FERRY_CTRL_MAGIC);
}

static void test_truncated(void)
{
	for (size_t i = 0; i < FERRY__ARRAY_SIZE(sampled); i++) {
		uint16_t t = sampled[i];
		uint8_t buf[SAMPLE_BUF];
		size_t len = encode_sample(t, buf, sizeof(buf));
		struct ferry_msg m;
		size_t used;

		for (size_t n = 0; n < len; n++) {
			used = 99;
			CU_ASSERT_EQUAL(ferry__ctrl_decode(buf, n, &m, &used),
					-EAGAIN);
			CU_ASSERT_EQUAL(used, 0);
		}
	}
}

static void test_too_big(void)
{
	uint8_t buf[SAMPLE_BUF];
	size_t len = encode_sample(FERRY_MSG_HELLO, buf, sizeof(buf));
	struct ferry_msg m;

	/* Refused on the header alone: the body never needs to arrive. */
	set_le32(buf + 4, FERRY_CTRL_MAX_BODY + 1);
	CU_ASSERT_EQUAL(decode(buf, FERRY_CTRL_HDR_LEN, &m), -FERRY_ETOOBIG);
	set_le32(buf + 4, UINT32_MAX);
	CU_ASSERT_EQUAL(decode(buf, len, &m), -FERRY_ETOOBIG);
	/* The limit itself is allowed (then the body is awaited). */
	set_le32(buf + 4, FERRY_CTRL_MAX_BODY);
	CU_ASSERT_EQUAL(decode(buf, len, &m), -EAGAIN);

	/* Encoding into a buffer that is too small. */
	size_t out_len;
	sample(FERRY_MSG_HELLO, &m);
	CU_ASSERT_EQUAL(ferry__ctrl_encode(&m, buf, len - 1, &out_len),
			-FERRY_ETOOBIG);
	CU_ASSERT_EQUAL(ferry__ctrl_encode(&m, buf, 4, &out_len),
			-FERRY_ETOOBIG);
}

static void test_bad_frames(void)
{
	uint8_t buf[SAMPLE_BUF], bad[SAMPLE_BUF];
	size_t len = encode_sample(FERRY_MSG_HELLO, buf, sizeof(buf));
	struct ferry_msg m;

	/* Bad magic, even when only its first byte has arrived. */
	memcpy(bad, buf, len);
	bad[0] = 'G';
	CU_ASSERT_EQUAL(decode(bad, len, &m), -FERRY_EPROTO);
	CU_ASSERT_EQUAL(decode(bad, 1, &m), -FERRY_EPROTO);
	memcpy(bad, buf, len);
	bad[3] = 'X';
	CU_ASSERT_EQUAL(decode(bad, 4, &m), -FERRY_EPROTO);

	/* Unknown types. */
	const uint16_t unknown[] = { 0, FERRY_MSG_MARKER + 1, 0xffff };
	for (size_t i = 0; i < FERRY__ARRAY_SIZE(unknown); i++) {
		memcpy(bad, buf, len);
		bad[10] = (uint8_t)unknown[i];
		bad[11] = (uint8_t)(unknown[i] >> 8);
		CU_ASSERT_EQUAL(decode(bad, len, &m), -FERRY_EPROTO);
	}

	/* A body one byte short of the type's layout. */
	memcpy(bad, buf, len);
	set_le32(bad + 4, (uint32_t)(len - FERRY_CTRL_HDR_LEN - 1));
	CU_ASSERT_EQUAL(decode(bad, len - 1, &m), -FERRY_EPROTO);
	/* One byte too many inside the frame: trailing bytes. */
	memcpy(bad, buf, len);
	bad[len] = 0;
	set_le32(bad + 4, (uint32_t)(len - FERRY_CTRL_HDR_LEN + 1));
	CU_ASSERT_EQUAL(decode(bad, len + 1, &m), -FERRY_EPROTO);
	/* READY must be empty. */
	len = encode_sample(FERRY_MSG_READY, bad, sizeof(bad));
	bad[len] = 0;
	set_le32(bad + 4, 1);
	CU_ASSERT_EQUAL(decode(bad, len + 1, &m), -FERRY_EPROTO);

	/* Bytes after a complete frame belong to the next one. */
	len = encode_sample(FERRY_MSG_FIN, bad, sizeof(bad));
	size_t used = 0;
	CU_ASSERT_EQUAL(ferry__ctrl_decode(bad, len + 5, &m, &used), 0);
	CU_ASSERT_EQUAL(used, len);
}

static void test_bad_accept(void)
{
	uint8_t buf[SAMPLE_BUF];
	size_t len = encode_sample(FERRY_MSG_ACCEPT, buf, sizeof(buf));
	const size_t ep_off = FERRY_CTRL_HDR_LEN + PARAMS_LEN;
	struct ferry_msg m;

	/* Endpoint longer than FERRY_EP_MAX (and the body agrees). */
	buf[len] = 0;
	buf[ep_off] = (FERRY_EP_MAX + 1) & 0xff;
	buf[ep_off + 1] = (FERRY_EP_MAX + 1) >> 8;
	set_le32(buf + 4, (uint32_t)(len - FERRY_CTRL_HDR_LEN + 1));
	CU_ASSERT_EQUAL(decode(buf, len + 1, &m), -FERRY_EPROTO);
	/* Endpoint length disagreeing with the body. */
	len = encode_sample(FERRY_MSG_ACCEPT, buf, sizeof(buf));
	buf[ep_off] = 10;
	buf[ep_off + 1] = 0;
	CU_ASSERT_EQUAL(decode(buf, len, &m), -FERRY_EPROTO);

	/* The encoder refuses what the decoder would. */
	sample(FERRY_MSG_ACCEPT, &m);
	m.u.accept.ep.len = FERRY_EP_MAX + 1;
	CU_ASSERT_EQUAL(ferry__ctrl_encode(&m, buf, sizeof(buf), &len),
			-EINVAL);
	m.type = 0;
	CU_ASSERT_EQUAL(ferry__ctrl_encode(&m, buf, sizeof(buf), &len),
			-EINVAL);
}

/* An ERROR frame with code 1 and text bytes declared as tlen. */
static size_t error_frame(uint8_t *buf, uint16_t tlen, const char *text,
			  size_t n)
{
	static const uint8_t hdr[] = { 'F', 'R', 'R', 'Y', 0, 0, 0, 0,
				       1, 0, FERRY_MSG_ERROR, 0 };
	size_t body = 4 + 2 + n;

	memcpy(buf, hdr, sizeof(hdr));
	set_le32(buf + 4, (uint32_t)body);
	set_le32(buf + 12, 1);
	buf[16] = (uint8_t)tlen;
	buf[17] = (uint8_t)(tlen >> 8);
	memcpy(buf + 18, text, n);
	return FERRY_CTRL_HDR_LEN + body;
}

static void test_error_text(void)
{
	char text[300];
	uint8_t buf[400];
	struct ferry_msg m;
	size_t len;

	memset(text, 'a', sizeof(text));
	/* The longest text that fits with its NUL. */
	len = error_frame(buf, 255, text, 255);
	CU_ASSERT_EQUAL(decode(buf, len, &m), 0);
	CU_ASSERT_EQUAL(strlen(m.u.error.text), 255);
	CU_ASSERT_EQUAL(m.u.error.code, 1);
	/* Overlong. */
	len = error_frame(buf, 256, text, 256);
	CU_ASSERT_EQUAL(decode(buf, len, &m), -FERRY_EPROTO);
	/* Unterminated: the declared text runs past the body. */
	len = error_frame(buf, 20, text, 10);
	CU_ASSERT_EQUAL(decode(buf, len, &m), -FERRY_EPROTO);
	/* Declared shorter than the body: trailing bytes. */
	len = error_frame(buf, 5, text, 10);
	CU_ASSERT_EQUAL(decode(buf, len, &m), -FERRY_EPROTO);
	/* A NUL or a terminal escape inside the text. */
	len = error_frame(buf, 5, "ab\0cd", 5);
	CU_ASSERT_EQUAL(decode(buf, len, &m), -FERRY_EPROTO);
	len = error_frame(buf, 5, "\x1b[2J!", 5);
	CU_ASSERT_EQUAL(decode(buf, len, &m), -FERRY_EPROTO);
	/* UTF-8 is fine. */
	len = error_frame(buf, 6, "h\xc3\xa9llo", 6);
	CU_ASSERT_EQUAL(decode(buf, len, &m), 0);
	CU_ASSERT_STRING_EQUAL(m.u.error.text, "h\xc3\xa9llo");

	/* The encoder refuses an unterminated or unprintable text. */
	memset(&m, 0, sizeof(m));
	m.type = FERRY_MSG_ERROR;
	memset(m.u.error.text, 'x', sizeof(m.u.error.text));
	CU_ASSERT_EQUAL(ferry__ctrl_encode(&m, buf, sizeof(buf), &len),
			-EINVAL);
	strcpy(m.u.error.text, "bell\a");
	CU_ASSERT_EQUAL(ferry__ctrl_encode(&m, buf, sizeof(buf), &len),
			-EINVAL);
}

static void test_version(void)
{
	uint8_t buf[SAMPLE_BUF];
	size_t len = encode_sample(FERRY_MSG_HELLO, buf, sizeof(buf));
	struct ferry_msg m;
	size_t used = 0;

	buf[8] = 2;
	CU_ASSERT_EQUAL(ferry__ctrl_decode(buf, len, &m, &used),
			-FERRY_EVERSION);
	CU_ASSERT_EQUAL(m.type, FERRY_MSG_HELLO);
	CU_ASSERT_EQUAL(m.version, 2);
	CU_ASSERT_EQUAL(used, len);
	/* Another version may have types we do not know. */
	buf[10] = 200;
	CU_ASSERT_EQUAL(decode(buf, len, &m), -FERRY_EVERSION);
	CU_ASSERT_EQUAL(m.type, 200);
}

/* A HELLO frame with the name bytes given, declared as nlen. */
static size_t hello_frame(uint8_t *buf, uint8_t nlen, const char *name,
			  size_t n)
{
	static const uint8_t hdr[] = { 'F', 'R', 'R', 'Y', 0, 0, 0, 0,
				       1, 0, FERRY_MSG_HELLO, 0 };
	size_t body = FERRY_NONCE_LEN + 4 + 1 + n;

	memcpy(buf, hdr, sizeof(hdr));
	set_le32(buf + 4, (uint32_t)body);
	memset(buf + 12, 0x11, FERRY_NONCE_LEN + 4);
	buf[12 + FERRY_NONCE_LEN + 4] = nlen;
	memcpy(buf + 12 + FERRY_NONCE_LEN + 5, name, n);
	return FERRY_CTRL_HDR_LEN + body;
}

static void test_hello_name(void)
{
	static const char *const good[] = {
		"", "a", "atlas2", "A-Z.a_z:0-9",
		"token:0123456789abcdef0123456789abcdef",
		"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
	};
	static const char *const bad[] = {
		"has space", "a/b", "tab\t", "new\nline", "h\xc3\xa9",
		"semi;colon", "..\x1b[2J",
		"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
	};
	char name[80];
	uint8_t buf[256];
	struct ferry_msg m, out;
	size_t len;

	CU_ASSERT_EQUAL(strlen(good[5]), FERRY_KEYNAME_MAX);
	CU_ASSERT_EQUAL(strlen(bad[7]), FERRY_KEYNAME_MAX + 1);
	for (size_t i = 0; i < FERRY__ARRAY_SIZE(good); i++) {
		CU_ASSERT(ferry__ctrl_keyname_valid(good[i]));
		sample(FERRY_MSG_HELLO, &m);
		memset(m.u.hello.name, 0, sizeof(m.u.hello.name));
		strcpy(m.u.hello.name, good[i]);
		CU_ASSERT_EQUAL_FATAL(
			ferry__ctrl_encode(&m, buf, sizeof(buf), &len), 0);
		CU_ASSERT_EQUAL(len, FERRY_CTRL_HDR_LEN + 37 + strlen(good[i]));
		CU_ASSERT_EQUAL(buf[FERRY_CTRL_HDR_LEN + 36], strlen(good[i]));
		CU_ASSERT_EQUAL(decode(buf, len, &out), 0);
		CU_ASSERT_STRING_EQUAL(out.u.hello.name, good[i]);
		CU_ASSERT_EQUAL(memcmp(&m, &out, sizeof(m)), 0);
	}
	for (size_t i = 0; i < FERRY__ARRAY_SIZE(bad); i++) {
		CU_ASSERT(!ferry__ctrl_keyname_valid(bad[i]));
		/* the encoder refuses it ... */
		sample(FERRY_MSG_HELLO, &m);
		snprintf(m.u.hello.name, sizeof(m.u.hello.name), "%s", bad[i]);
		if (strlen(bad[i]) <= FERRY_KEYNAME_MAX)
			CU_ASSERT_EQUAL(ferry__ctrl_encode(&m, buf,
							   sizeof(buf), &len),
					-EINVAL);
		/* ... and so does the decoder, made by hand */
		len = hello_frame(buf, (uint8_t)strlen(bad[i]), bad[i],
				  strlen(bad[i]));
		CU_ASSERT_EQUAL(decode(buf, len, &out), -FERRY_EPROTO);
	}
	/* Unterminated in the struct. */
	sample(FERRY_MSG_HELLO, &m);
	memset(m.u.hello.name, 'x', sizeof(m.u.hello.name));
	CU_ASSERT_EQUAL(ferry__ctrl_encode(&m, buf, sizeof(buf), &len),
			-EINVAL);

	/* A NUL inside: the name would read shorter than sent. */
	len = hello_frame(buf, 5, "ab\0cd", 5);
	CU_ASSERT_EQUAL(decode(buf, len, &out), -FERRY_EPROTO);
	/* Declared longer than the body, or shorter (trailing bytes). */
	len = hello_frame(buf, 10, "abcde", 5);
	CU_ASSERT_EQUAL(decode(buf, len, &out), -FERRY_EPROTO);
	len = hello_frame(buf, 3, "abcde", 5);
	CU_ASSERT_EQUAL(decode(buf, len, &out), -FERRY_EPROTO);
	/* A length over the maximum, with the bytes there. */
	memset(name, 'n', sizeof(name));
	len = hello_frame(buf, FERRY_KEYNAME_MAX + 1, name,
			  FERRY_KEYNAME_MAX + 1);
	CU_ASSERT_EQUAL(decode(buf, len, &out), -FERRY_EPROTO);
	len = hello_frame(buf, 255, name, 0);
	CU_ASSERT_EQUAL(decode(buf, len, &out), -FERRY_EPROTO);
	/* The old layout (no name length) is too short now. */
	len = hello_frame(buf, 0, "", 0);
	set_le32(buf + 4, FERRY_NONCE_LEN + 4);
	CU_ASSERT_EQUAL(decode(buf, len - 1, &out), -FERRY_EPROTO);
	/* The longest name, by hand. */
	len = hello_frame(buf, FERRY_KEYNAME_MAX, name, FERRY_KEYNAME_MAX);
	CU_ASSERT_EQUAL(decode(buf, len, &out), 0);
	CU_ASSERT_EQUAL(strlen(out.u.hello.name), FERRY_KEYNAME_MAX);
}

/* The exact bytes of a MARKER: its six fields in order. */
static void test_golden_marker(void)
{
	static const uint8_t want[] = {
		'F', 'R', 'R', 'Y', 40, 0, 0, 0, 1, 0, 17, 0,
		1, 0, 0, 0, 0, 0, 0, 0,
		2, 0, 0, 0, 0, 0, 0, 0,
		3, 0, 0, 0, 0, 0, 0, 0,
		4, 0, 0, 0, 0, 0, 0, 0,
		5, 0, 0, 0,
		6, 0, 0, 0,
	};
	struct ferry_msg m = { .type = FERRY_MSG_MARKER };
	uint8_t buf[64];
	size_t len = 0;

	m.u.marker = (struct ferry_msg_marker){ .bytes = 1, .total = 2,
						.rate = 3, .elapsed_ms = 4,
						.files_done = 5,
						.files_total = 6 };
	CU_ASSERT_EQUAL(ferry__ctrl_encode(&m, buf, sizeof(buf), &len), 0);
	CU_ASSERT_EQUAL(len, sizeof(want));
	CU_ASSERT_EQUAL(memcmp(buf, want, sizeof(want)), 0);
	/* One byte short, one too many. */
	set_le32(buf + 4, 39);
	CU_ASSERT_EQUAL(decode(buf, len - 1, &m), -FERRY_EPROTO);
	buf[len] = 0;
	set_le32(buf + 4, 41);
	CU_ASSERT_EQUAL(decode(buf, len + 1, &m), -FERRY_EPROTO);
}

/* The exact bytes of a REQ and a REPLY. */
static void test_golden_req_reply(void)
{
	static const uint8_t want_req[] = {
		'F', 'R', 'R', 'Y', 28, 0, 0, 0, 1, 0, 15, 0,
		4, 0, 0, 0,             /* op MKDIR */
		1, 0, 0, 0,             /* flags PARENTS */
		0xed, 1, 0, 0, 0, 0, 0, 0, /* arg 0755 */
		3, 0, 'a', '/', 'b',    /* path */
		3, 0, 0, 0, 7, 8, 9,    /* data */
	};
	static const uint8_t want_reply[] = {
		'F', 'R', 'R', 'Y', 22, 0, 0, 0, 1, 0, 16, 0,
		3, 0, 0, 0,             /* op CKSUM */
		1, 0, 0, 0,             /* flags LAST */
		0x78, 0x56, 0x34, 0x12, 0, 0, 0, 0, /* arg */
		2, 0, 0, 0, 0xaa, 0xbb, /* data */
	};
	struct ferry_msg m = { .type = FERRY_MSG_REQ };
	uint8_t buf[128];
	size_t len = 0;

	m.u.req.op = FERRY_REQ_MKDIR;
	m.u.req.flags = FERRY_REQ_PARENTS;
	m.u.req.arg = 0755;
	strcpy(m.u.req.path, "a/b");
	m.u.req.len = 3;
	memcpy(m.u.req.data, "\x07\x08\x09", 3);
	CU_ASSERT_EQUAL(ferry__ctrl_encode(&m, buf, sizeof(buf), &len), 0);
	CU_ASSERT_EQUAL(len, sizeof(want_req));
	CU_ASSERT_EQUAL(memcmp(buf, want_req, sizeof(want_req)), 0);

	memset(&m, 0, sizeof(m));
	m.type = FERRY_MSG_REPLY;
	m.u.reply.op = FERRY_REQ_CKSUM;
	m.u.reply.flags = FERRY_REPLY_LAST;
	m.u.reply.arg = 0x12345678;
	m.u.reply.len = 2;
	memcpy(m.u.reply.data, "\xaa\xbb", 2);
	CU_ASSERT_EQUAL(ferry__ctrl_encode(&m, buf, sizeof(buf), &len), 0);
	CU_ASSERT_EQUAL(len, sizeof(want_reply));
	CU_ASSERT_EQUAL(memcmp(buf, want_reply, sizeof(want_reply)), 0);
}

/* Offsets in a REQ frame with a path of plen bytes. */
#define REQ_PATH_OFF (FERRY_CTRL_HDR_LEN + 16)
#define REQ_LEN_OFF(plen) (REQ_PATH_OFF + 2 + (plen))

static void test_req(void)
{
	struct ferry_msg *in = malloc(sizeof(*in));
	struct ferry_msg *out = malloc(sizeof(*out));
	size_t len, plen = strlen(REQ_PATH);

	CU_ASSERT_PTR_NOT_NULL_FATAL(in);
	CU_ASSERT_PTR_NOT_NULL_FATAL(out);

	/* The longest path and data fit one frame and come back. */
	sample(FERRY_MSG_REQ, in);
	memset(in->u.req.path, 'p', FERRY_DEST_MAX - 1);
	in->u.req.path[FERRY_DEST_MAX - 1] = '\0';
	in->u.req.len = FERRY_REQ_DATA_MAX;
	memset(in->u.req.data, 0xd7, FERRY_REQ_DATA_MAX);
	CU_ASSERT_EQUAL(ferry__ctrl_encode(in, big, sizeof(big), &len), 0);
	CU_ASSERT_EQUAL(decode(big, len, out), 0);
	CU_ASSERT_EQUAL(memcmp(in, out, sizeof(*in)), 0);
	/* An empty path and no data are fine too (the codec checks the
	 * framing; the daemon the meaning). */
	in->u.req.path[0] = '\0';
	in->u.req.len = 0;
	in->u.req.op = 999;
	CU_ASSERT_EQUAL(ferry__ctrl_encode(in, big, sizeof(big), &len), 0);
	memset(in->u.req.path + 1, 0, FERRY_DEST_MAX - 1);
	memset(in->u.req.data, 0, FERRY_REQ_DATA_MAX);
	CU_ASSERT_EQUAL(decode(big, len, out), 0);
	CU_ASSERT_EQUAL(memcmp(in, out, sizeof(*in)), 0);

	/* The encoder refuses what the decoder would. */
	sample(FERRY_MSG_REQ, in);
	in->u.req.len = FERRY_REQ_DATA_MAX + 1;
	CU_ASSERT_EQUAL(ferry__ctrl_encode(in, big, sizeof(big), &len),
			-EINVAL);
	sample(FERRY_MSG_REQ, in);
	memset(in->u.req.path, 'p', FERRY_DEST_MAX);
	CU_ASSERT_EQUAL(ferry__ctrl_encode(in, big, sizeof(big), &len),
			-EINVAL);
	/* A path holds what a file name may: any byte but NUL. */
	static const char *const odd_paths[] = { "a\tb", "a\nb", "\x1b[2J",
						 "del\x7f", "latin\xe9" };
	for (size_t i = 0; i < FERRY__ARRAY_SIZE(odd_paths); i++) {
		sample(FERRY_MSG_REQ, in);
		strcpy(in->u.req.path, odd_paths[i]);
		CU_ASSERT_EQUAL(ferry__ctrl_encode(in, big, sizeof(big), &len),
				0);
		CU_ASSERT_EQUAL(decode(big, len, out), 0);
		CU_ASSERT_STRING_EQUAL(out->u.req.path, odd_paths[i]);
	}

	/* The decoder, on hand-made damage to a good frame. */
	len = encode_sample(FERRY_MSG_REQ, big, sizeof(big));
	big[REQ_PATH_OFF + 3] = 0; /* a NUL */
	CU_ASSERT_EQUAL(decode(big, len, out), -FERRY_EPROTO);
	len = encode_sample(FERRY_MSG_REQ, big, sizeof(big));
	big[REQ_PATH_OFF] = (uint8_t)(plen + 1); /* path runs on */
	CU_ASSERT_EQUAL(decode(big, len, out), -FERRY_EPROTO);
	len = encode_sample(FERRY_MSG_REQ, big, sizeof(big));
	big[REQ_PATH_OFF] = 0x00; /* path length 4096 */
	big[REQ_PATH_OFF + 1] = 0x10;
	CU_ASSERT_EQUAL(decode(big, len, out), -FERRY_EPROTO);
	len = encode_sample(FERRY_MSG_REQ, big, sizeof(big));
	set_le32(big + REQ_LEN_OFF(plen), REQ_DATA_LEN + 1); /* data too */
	CU_ASSERT_EQUAL(decode(big, len, out), -FERRY_EPROTO);
	set_le32(big + REQ_LEN_OFF(plen), REQ_DATA_LEN - 1); /* trailing */
	CU_ASSERT_EQUAL(decode(big, len, out), -FERRY_EPROTO);
	/* Data over the maximum, with the bytes there. */
	sample(FERRY_MSG_REQ, in);
	in->u.req.len = FERRY_REQ_DATA_MAX;
	CU_ASSERT_EQUAL(ferry__ctrl_encode(in, big, sizeof(big), &len), 0);
	big[len] = 0;
	set_le32(big + 4, (uint32_t)(len + 1 - FERRY_CTRL_HDR_LEN));
	set_le32(big + REQ_LEN_OFF(plen), FERRY_REQ_DATA_MAX + 1);
	CU_ASSERT_EQUAL(decode(big, len + 1, out), -FERRY_EPROTO);
	free(in);
	free(out);
}

static void test_reply(void)
{
	struct ferry_msg *in = malloc(sizeof(*in));
	struct ferry_msg *out = malloc(sizeof(*out));
	const size_t len_off = FERRY_CTRL_HDR_LEN + 16;
	size_t len;

	CU_ASSERT_PTR_NOT_NULL_FATAL(in);
	CU_ASSERT_PTR_NOT_NULL_FATAL(out);
	/* The most data fits, and comes back. */
	sample(FERRY_MSG_REPLY, in);
	in->u.reply.len = FERRY_REPLY_DATA_MAX;
	for (size_t i = 0; i < FERRY_REPLY_DATA_MAX; i++)
		in->u.reply.data[i] = (uint8_t)(i * 13);
	CU_ASSERT_EQUAL(ferry__ctrl_encode(in, big, sizeof(big), &len), 0);
	CU_ASSERT(len - FERRY_CTRL_HDR_LEN <= FERRY_CTRL_MAX_BODY);
	CU_ASSERT_EQUAL(decode(big, len, out), 0);
	CU_ASSERT_EQUAL(memcmp(in, out, sizeof(*in)), 0);
	/* A byte too short: read more; a buffer too small: ETOOBIG. */
	CU_ASSERT_EQUAL(decode(big, len - 1, out), -EAGAIN);
	CU_ASSERT_EQUAL(ferry__ctrl_encode(in, big, len - 1, &len),
			-FERRY_ETOOBIG);

	in->u.reply.len = FERRY_REPLY_DATA_MAX + 1;
	CU_ASSERT_EQUAL(ferry__ctrl_encode(in, big, sizeof(big), &len),
			-EINVAL);

	/* A length over the maximum, the body agreeing. */
	in->u.reply.len = FERRY_REPLY_DATA_MAX;
	CU_ASSERT_EQUAL(ferry__ctrl_encode(in, big, sizeof(big), &len), 0);
	big[len] = 0;
	set_le32(big + 4, (uint32_t)(len + 1 - FERRY_CTRL_HDR_LEN));
	set_le32(big + len_off, FERRY_REPLY_DATA_MAX + 1);
	CU_ASSERT_EQUAL(decode(big, len + 1, out), -FERRY_EPROTO);
	/* Lengths disagreeing with the body. */
	len = encode_sample(FERRY_MSG_REPLY, big, sizeof(big));
	set_le32(big + len_off, REPLY_DATA_LEN + 1);
	CU_ASSERT_EQUAL(decode(big, len, out), -FERRY_EPROTO);
	set_le32(big + len_off, 0);
	CU_ASSERT_EQUAL(decode(big, len, out), -FERRY_EPROTO);
	set_le32(big + len_off, UINT32_MAX);
	CU_ASSERT_EQUAL(decode(big, len, out), -FERRY_EPROTO);
	free(in);
	free(out);
}

/* ---- socket I/O ---- */

static void test_io_roundtrip(void)
{
	int sv[2];

	pair(sv);
	for (size_t i = 0; i < FERRY__ARRAY_SIZE(sampled); i++) {
		uint16_t t = sampled[i];
		struct ferry_msg in, out;

		sample(t, &in);
		CU_ASSERT_EQUAL(ferry__ctrl_send(sv[0], &in, IO_MS), 0);
		CU_ASSERT_EQUAL(ferry__ctrl_recv(sv[1], &out, IO_MS),
				t == FERRY_MSG_ERROR ? -FERRY_EPEER : 0);
		CU_ASSERT_EQUAL(memcmp(&in, &out, sizeof(in)), 0);
	}
	close(sv[0]);
	close(sv[1]);
}

static void test_io_send_error(void)
{
	struct ferry_msg m;
	int sv[2];

	pair(sv);
	CU_ASSERT_EQUAL(ferry__ctrl_send_error(sv[0], -FERRY_EAUTH,
					       "no \x1b[31m%d", 5), 0);
	CU_ASSERT_EQUAL(ferry__ctrl_recv(sv[1], &m, IO_MS), -FERRY_EPEER);
	CU_ASSERT_EQUAL(m.type, FERRY_MSG_ERROR);
	CU_ASSERT_EQUAL(m.u.error.code, FERRY_EAUTH);
	CU_ASSERT_STRING_EQUAL(m.u.error.text, "no \\x1b[31m5");
	close(sv[0]);
	close(sv[1]);
}

static void test_io_timeout(void)
{
	struct ferry_msg m;
	uint64_t t0;
	int sv[2];

	pair(sv);
	t0 = ferry__now_ns();
	CU_ASSERT_EQUAL(ferry__ctrl_recv(sv[1], &m, 200), -FERRY_ETIMEOUT);
	CU_ASSERT(ferry__now_ns() - t0 >= 190000000ull);
	CU_ASSERT(ferry__now_ns() - t0 < 2000000000ull);
	/* Half a header, then silence: the deadline covers the message. */
	CU_ASSERT_EQUAL(write(sv[0], "FRRY", 4), 4);
	CU_ASSERT_EQUAL(ferry__ctrl_recv(sv[1], &m, 200), -FERRY_ETIMEOUT);
	close(sv[0]);
	close(sv[1]);
}

static void test_io_closed(void)
{
	uint8_t buf[SAMPLE_BUF];
	size_t len = encode_sample(FERRY_MSG_HELLO, buf, sizeof(buf));
	struct ferry_msg m;
	int sv[2];

	pair(sv);
	close(sv[0]);
	CU_ASSERT_EQUAL(ferry__ctrl_recv(sv[1], &m, IO_MS), -FERRY_ECLOSED);
	/* No SIGPIPE, a code. */
	sample(FERRY_MSG_READY, &m);
	CU_ASSERT_EQUAL(ferry__ctrl_send(sv[1], &m, IO_MS), -FERRY_ECLOSED);
	close(sv[1]);

	/* Closed in the middle of a body. */
	pair(sv);
	CU_ASSERT_EQUAL(write(sv[0], buf, len - 3), (ssize_t)(len - 3));
	close(sv[0]);
	CU_ASSERT_EQUAL(ferry__ctrl_recv(sv[1], &m, IO_MS), -FERRY_ECLOSED);
	close(sv[1]);
}

static void test_io_limits(void)
{
	uint8_t buf[SAMPLE_BUF];
	size_t len = encode_sample(FERRY_MSG_HELLO, buf, sizeof(buf));
	struct ferry_msg m;
	uint64_t t0;
	int sv[2];

	/* A huge declared body is refused at once, without waiting for it. */
	pair(sv);
	set_le32(buf + 4, 1u << 30);
	CU_ASSERT_EQUAL(write(sv[0], buf, len), (ssize_t)len);
	t0 = ferry__now_ns();
	CU_ASSERT_EQUAL(ferry__ctrl_recv(sv[1], &m, IO_MS), -FERRY_ETOOBIG);
	CU_ASSERT(ferry__now_ns() - t0 < 1000000000ull);
	close(sv[0]);
	close(sv[1]);

	/* Another version: the whole frame is read and reported. */
	pair(sv);
	len = encode_sample(FERRY_MSG_HELLO, buf, sizeof(buf));
	buf[8] = 2;
	CU_ASSERT_EQUAL(write(sv[0], buf, len), (ssize_t)len);
	CU_ASSERT_EQUAL(ferry__ctrl_recv(sv[1], &m, IO_MS), -FERRY_EVERSION);
	CU_ASSERT_EQUAL(m.version, 2);
	CU_ASSERT_EQUAL(m.type, FERRY_MSG_HELLO);
	close(sv[0]);
	close(sv[1]);
}

int main(void)
{
	CU_TestInfo tests[] = {
		{ "codec round trip, every type", test_roundtrip },
		{ "codec golden FIN bytes", test_golden_fin },
		{ "codec truncated at every length", test_truncated },
		{ "codec oversized", test_too_big },
		{ "codec bad frames", test_bad_frames },
		{ "codec bad ACCEPT endpoint", test_bad_accept },
		{ "codec ERROR text", test_error_text },
		{ "codec other version", test_version },
		{ "codec HELLO key names", test_hello_name },
		{ "codec golden MARKER bytes", test_golden_marker },
		{ "codec golden REQ and REPLY bytes", test_golden_req_reply },
		{ "codec REQ limits and damage", test_req },
		{ "codec REPLY limits and damage", test_reply },
		{ "io round trip", test_io_roundtrip },
		{ "io send_error", test_io_send_error },
		{ "io timeout", test_io_timeout },
		{ "io peer closed", test_io_closed },
		{ "io size and version limits", test_io_limits },
		CU_TEST_INFO_NULL,
	};
	return ferry_cu_run("ctrl", tests);
}
