/* The data of daemon requests and replies (ctrl/req.h): round trips, the
 * exact layouts, refusals, and every truncation and random damage of
 * valid encodings, which must decode to an error or to a value that
 * encodes back to the very same bytes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu.h"
#include "ctrl/req.h"
#include "ferry/error.h"
#include "io/manifest.h"

#define TOKEN "token:00112233445566778899aabbccddeeff"
#define BUF_MAX (FERRY_REPLY_DATA_MAX + 64)

static uint8_t buf[BUF_MAX], buf2[BUF_MAX], bad[BUF_MAX];

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

/* xorshift64*: a fixed sequence, so a failure repeats. */
static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static bool all_zero(const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		if (b[i])
			return false;
	return true;
}

/* ---- STAT ---- */

static void test_rstat(void)
{
	static const struct ferry_rstat samples[] = {
		{ FERRY_ENTRY_FILE, 0644, 12345, 1700000000123456789ll },
		{ FERRY_ENTRY_DIR, 07777, 0, -1 },
		{ FERRY_RSTAT_OTHER, 0, UINT64_MAX, INT64_MIN },
		{ FERRY_ENTRY_FILE, 0, 0, INT64_MAX },
	};
	static const uint8_t want[FERRY_RSTAT_LEN] = {
		1,                                /* type */
		0xa4, 0x01, 0, 0,                 /* mode 0644 */
		0x39, 0x30, 0, 0, 0, 0, 0, 0,     /* size 12345 */
		0x15, 0x81, 0xe9, 0x7d, 0xf4, 0x10, 0x22, 0x11,
	};
	struct ferry_rstat st, out;
	size_t len;

	for (size_t i = 0; i < FERRY__ARRAY_SIZE(samples); i++) {
		CU_ASSERT_EQUAL(ferry__rstat_encode(&samples[i], buf,
						    sizeof(buf), &len), 0);
		CU_ASSERT_EQUAL(len, FERRY_RSTAT_LEN);
		CU_ASSERT_EQUAL(ferry__rstat_decode(buf, len, &out), 0);
		CU_ASSERT_EQUAL(out.type, samples[i].type);
		CU_ASSERT_EQUAL(out.mode, samples[i].mode);
		CU_ASSERT_EQUAL(out.size, samples[i].size);
		CU_ASSERT_EQUAL(out.mtime_ns, samples[i].mtime_ns);
	}
	/* The exact bytes (mtime 0x112210f47de98115). */
	st = (struct ferry_rstat){ FERRY_ENTRY_FILE, 0644, 12345,
				   0x112210f47de98115ll };
	CU_ASSERT_EQUAL(ferry__rstat_encode(&st, buf, sizeof(buf), &len), 0);
	CU_ASSERT_EQUAL(memcmp(buf, want, sizeof(want)), 0);

	/* Too small a buffer; not a valid type or mode. */
	CU_ASSERT_EQUAL(ferry__rstat_encode(&st, buf, FERRY_RSTAT_LEN - 1,
					    &len), -FERRY_ETOOBIG);
	st.type = 0;
	CU_ASSERT_EQUAL(ferry__rstat_encode(&st, buf, sizeof(buf), &len),
			-EINVAL);
	st.type = FERRY_ENTRY_FILE;
	st.mode = 010000;
	CU_ASSERT_EQUAL(ferry__rstat_encode(&st, buf, sizeof(buf), &len),
			-EINVAL);

	/* The decoder: exact length, valid type and mode. */
	memcpy(bad, want, sizeof(want));
	CU_ASSERT_EQUAL(ferry__rstat_decode(bad, FERRY_RSTAT_LEN - 1, &out),
			-FERRY_EPROTO);
	bad[FERRY_RSTAT_LEN] = 0;
	CU_ASSERT_EQUAL(ferry__rstat_decode(bad, FERRY_RSTAT_LEN + 1, &out),
			-FERRY_EPROTO);
	bad[0] = 4;
	CU_ASSERT_EQUAL(ferry__rstat_decode(bad, FERRY_RSTAT_LEN, &out),
			-FERRY_EPROTO);
	CU_ASSERT(all_zero(&out, sizeof(out)));
	memcpy(bad, want, sizeof(want));
	bad[2] = 0x10; /* mode 010244 */
	CU_ASSERT_EQUAL(ferry__rstat_decode(bad, FERRY_RSTAT_LEN, &out),
			-FERRY_EPROTO);
}

/* ---- TOKEN ---- */

static void sample_token(struct ferry_token_reply *t)
{
	memset(t, 0, sizeof(*t));
	strcpy(t->name, TOKEN);
	for (int i = 0; i < FERRY_KEY_LEN; i++)
		t->secret[i] = (uint8_t)(0xf0 - i);
}

static void test_token(void)
{
	struct ferry_token_reply t, out;
	size_t len, nlen = strlen(TOKEN);

	sample_token(&t);
	CU_ASSERT_EQUAL(ferry__token_encode(&t, buf, sizeof(buf), &len), 0);
	CU_ASSERT_EQUAL(len, 2 + nlen + FERRY_KEY_LEN);
	CU_ASSERT_EQUAL(buf[0], nlen);
	CU_ASSERT_EQUAL(buf[1], 0);
	CU_ASSERT_EQUAL(memcmp(buf + 2, TOKEN, nlen), 0);
	CU_ASSERT_EQUAL(memcmp(buf + 2 + nlen, t.secret, FERRY_KEY_LEN), 0);
	CU_ASSERT_EQUAL(ferry__token_decode(buf, len, &out), 0);
	CU_ASSERT_EQUAL(memcmp(&t, &out, sizeof(t)), 0);

	CU_ASSERT_EQUAL(ferry__token_encode(&t, buf, len - 1, &len),
			-FERRY_ETOOBIG);
	strcpy(t.name, "token/x");
	CU_ASSERT_EQUAL(ferry__token_encode(&t, buf, sizeof(buf), &len),
			-EINVAL);
	memset(t.name, 'x', sizeof(t.name));
	CU_ASSERT_EQUAL(ferry__token_encode(&t, buf, sizeof(buf), &len),
			-EINVAL);

	/* A name that is not a key name; one over the maximum. */
	sample_token(&t);
	CU_ASSERT_EQUAL(ferry__token_encode(&t, buf, sizeof(buf), &len), 0);
	memcpy(bad, buf, len);
	bad[2 + 5] = ' ';
	CU_ASSERT_EQUAL(ferry__token_decode(bad, len, &out), -FERRY_EPROTO);
	CU_ASSERT(all_zero(&out, sizeof(out)));
	bad[0] = FERRY_KEYNAME_MAX + 1;
	memset(bad + 2, 'a', FERRY_KEYNAME_MAX + 1);
	memset(bad + 2 + FERRY_KEYNAME_MAX + 1, 0, FERRY_KEY_LEN);
	CU_ASSERT_EQUAL(ferry__token_decode(bad, 2 + FERRY_KEYNAME_MAX + 1 +
						      FERRY_KEY_LEN, &out),
			-FERRY_EPROTO);
	/* Short of the secret; a byte after it. */
	CU_ASSERT_EQUAL(ferry__token_decode(buf, len - 1, &out),
			-FERRY_EPROTO);
	buf[len] = 0;
	CU_ASSERT_EQUAL(ferry__token_decode(buf, len + 1, &out),
			-FERRY_EPROTO);
}

/* ---- PUSH spec ---- */

static struct ferry_push_item sample_items[] = {
	{ "data/a.bin", "a.bin" },
	{ "/data/sub/b.txt", "sub/b.txt" },
	{ "c", "deeper/still/c" },
};

static void sample_push(struct ferry_push_spec *p)
{
	memset(p, 0, sizeof(*p));
	strcpy(p->host, "dest.example.org");
	strcpy(p->port, "7471");
	strcpy(p->transport, "tcp");
	strcpy(p->token, TOKEN);
	for (int i = 0; i < FERRY_KEY_LEN; i++)
		p->secret[i] = (uint8_t)(i + 0x30);
	strcpy(p->dest, "incoming/run 7");
	p->cksum = 2;
	p->streams = 8;
	p->flags = FERRY_FILES_FORCE;
	p->marker_ms = 1500;
	p->n = FERRY__ARRAY_SIZE(sample_items);
	p->items = sample_items;
}

/* a and b describe the same push. */
static bool push_equal(const struct ferry_push_spec *a,
		       const struct ferry_push_spec *b)
{
	if (strcmp(a->host, b->host) || strcmp(a->port, b->port) ||
	    strcmp(a->transport, b->transport) ||
	    strcmp(a->token, b->token) || strcmp(a->dest, b->dest) ||
	    memcmp(a->secret, b->secret, FERRY_KEY_LEN) ||
	    a->cksum != b->cksum || a->streams != b->streams ||
	    a->flags != b->flags || a->marker_ms != b->marker_ms ||
	    a->n != b->n)
		return false;
	for (uint32_t i = 0; i < a->n; i++)
		if (strcmp(a->items[i].src, b->items[i].src) ||
		    strcmp(a->items[i].name, b->items[i].name))
			return false;
	return true;
}

/* Encode p, decode it back, compare. */
static void push_roundtrip(const struct ferry_push_spec *p)
{
	struct ferry_push_spec out;
	size_t len = 0;

	CU_ASSERT_EQUAL_FATAL(ferry__push_encode(p, buf, sizeof(buf), &len),
			      0);
	CU_ASSERT_EQUAL_FATAL(ferry__push_decode(buf, len, &out), 0);
	CU_ASSERT(push_equal(p, &out));
	ferry__push_free(&out);
	CU_ASSERT(all_zero(&out, sizeof(out)));
}

/* Decode must refuse bytes; the spec is left zeroed. */
static void push_refused(const uint8_t *b, size_t len)
{
	struct ferry_push_spec out;

	memset(&out, 0x5a, sizeof(out));
	CU_ASSERT_EQUAL(ferry__push_decode(b, len, &out), -FERRY_EPROTO);
	CU_ASSERT(all_zero(&out, sizeof(out)));
}

/* Write t at b + off as on the wire (u16 length, bytes); the offset
 * after it. */
static size_t put_wire_str(uint8_t *b, size_t off, const char *t)
{
	size_t n = strlen(t);

	b[off] = (uint8_t)n;
	b[off + 1] = (uint8_t)(n >> 8);
	memcpy(b + off + 2, t, n);
	return off + 2 + n;
}

/* A push whose one item the encoder refuses: so must the decoder, given
 * the item spliced by hand after a valid encoding's fixed part. */
static void item_refused(const char *src, const char *name)
{
	struct ferry_push_item it = { (char *)src, (char *)name };
	struct ferry_push_spec p;
	size_t len, off;

	sample_push(&p);
	p.items = &it;
	p.n = 1;
	CU_ASSERT_EQUAL(ferry__push_encode(&p, buf, sizeof(buf), &len),
			-EINVAL);
	it = (struct ferry_push_item){ "k", "k" };
	CU_ASSERT_EQUAL_FATAL(ferry__push_encode(&p, buf, sizeof(buf), &len),
			      0);
	off = len - 2 * (2 + strlen("k"));
	off = put_wire_str(buf, off, src);
	off = put_wire_str(buf, off, name);
	push_refused(buf, off);
}

static void test_push(void)
{
	struct ferry_push_spec p;
	struct ferry_push_item *many;
	char (*names)[16];
	size_t len;

	sample_push(&p);
	push_roundtrip(&p);
	/* The head's layout: strings, secret, dest, five u32s. */
	CU_ASSERT_EQUAL(ferry__push_encode(&p, buf, sizeof(buf), &len), 0);
	CU_ASSERT_EQUAL(buf[0], 16);
	CU_ASSERT_EQUAL(memcmp(buf + 2, "dest.example.org", 16), 0);
	CU_ASSERT_EQUAL(buf[18], 4);
	CU_ASSERT_EQUAL(memcmp(buf + 20, "7471", 4), 0);
	CU_ASSERT_EQUAL(buf[24], 3);
	CU_ASSERT_EQUAL(buf[29], strlen(TOKEN));
	size_t off = 31 + strlen(TOKEN);
	CU_ASSERT_EQUAL(buf[off], 0x30);
	off += FERRY_KEY_LEN;
	CU_ASSERT_EQUAL(buf[off], strlen("incoming/run 7"));
	off += 2 + strlen("incoming/run 7");
	CU_ASSERT_EQUAL(buf[off], 2);         /* cksum */
	CU_ASSERT_EQUAL(buf[off + 4], 8);     /* streams */
	CU_ASSERT_EQUAL(buf[off + 8], 1);     /* flags */
	CU_ASSERT_EQUAL(buf[off + 12], 0xdc); /* marker_ms 1500 */
	CU_ASSERT_EQUAL(buf[off + 13], 0x05);
	CU_ASSERT_EQUAL(buf[off + 16], 3);    /* n */
	CU_ASSERT_EQUAL(buf[off + 20], strlen("data/a.bin"));
	CU_ASSERT_EQUAL(ferry__push_encode(&p, buf, len - 1, &len),
			-FERRY_ETOOBIG);

	/* Empty strings, no items. */
	memset(&p, 0, sizeof(p));
	push_roundtrip(&p);

	/* The most items. */
	many = calloc(FERRY_PUSH_MAX_ITEMS + 1, sizeof(*many));
	names = calloc(FERRY_PUSH_MAX_ITEMS + 1, sizeof(*names));
	CU_ASSERT_PTR_NOT_NULL_FATAL(many);
	CU_ASSERT_PTR_NOT_NULL_FATAL(names);
	for (size_t i = 0; i <= FERRY_PUSH_MAX_ITEMS; i++) {
		snprintf(names[i], sizeof(names[i]), "f%zu", i);
		many[i].src = names[i];
		many[i].name = names[i];
	}
	sample_push(&p);
	p.items = many;
	p.n = FERRY_PUSH_MAX_ITEMS;
	push_roundtrip(&p);
	p.n = FERRY_PUSH_MAX_ITEMS + 1;
	CU_ASSERT_EQUAL(ferry__push_encode(&p, buf, sizeof(buf), &len),
			-EINVAL);
	/* ... and n over the maximum on the wire. */
	p.n = FERRY_PUSH_MAX_ITEMS;
	CU_ASSERT_EQUAL(ferry__push_encode(&p, buf, sizeof(buf), &len), 0);
	memcpy(bad, buf, len);
	off = 2 + 16 + 2 + 4 + 2 + 3 + 2 + strlen(TOKEN) + FERRY_KEY_LEN + 2 +
	      strlen("incoming/run 7") + 16;
	CU_ASSERT_EQUAL(bad[off] | bad[off + 1] << 8, FERRY_PUSH_MAX_ITEMS);
	bad[off] = (FERRY_PUSH_MAX_ITEMS + 1) & 0xff;
	bad[off + 1] = (FERRY_PUSH_MAX_ITEMS + 1) >> 8;
	push_refused(bad, len);
	/* n larger than the bytes could hold. */
	bad[off] = 0xff;
	bad[off + 1] = 0xff;
	bad[off + 2] = 0xff;
	bad[off + 3] = 0xff;
	push_refused(bad, len);
	/* One item fewer than declared: the last one is missing. */
	CU_ASSERT_EQUAL(ferry__push_encode(&p, buf, sizeof(buf), &len), 0);
	push_refused(buf, len - (2 + strlen("f1023")) * 2);
	free(many);
	free(names);

	/* Items the encoder refuses, and so must the decoder. */
	static const char *const bad_src[] = {
		"", "/", "//etc/passwd", "../x", "a/../b", "a//b", "a/",
		"./a",
	};
	static const char *const bad_name[] = {
		"", "/abs", "../up", "a/./b", "x/",
	};
	for (size_t i = 0; i < FERRY__ARRAY_SIZE(bad_src); i++)
		item_refused(bad_src[i], "ok");
	for (size_t i = 0; i < FERRY__ARRAY_SIZE(bad_name); i++)
		item_refused("ok", bad_name[i]);

	/* Any name a file system takes travels exactly: control bytes,
	 * bytes that are not UTF-8, 255-byte components. */
	{
		static char odd[][300] = {
			"a\nb", "tab\tname\r", "esc\x1b[2J", "del\x7f",
			"latin\xe9/\x01\x02", "",
		};
		struct ferry_push_item items[FERRY__ARRAY_SIZE(odd)];

		memset(odd[5], 'n', 255);
		for (size_t i = 0; i < FERRY__ARRAY_SIZE(odd); i++)
			items[i] = (struct ferry_push_item){ odd[i], odd[i] };
		sample_push(&p);
		strcpy(p.dest, "in\ncoming\x1b");
		p.items = items;
		p.n = FERRY__ARRAY_SIZE(odd);
		push_roundtrip(&p);
	}

	/* Head strings: control characters, too long, a bad token. */
	sample_push(&p);
	strcpy(p.host, "evil\x1b[2J");
	CU_ASSERT_EQUAL(ferry__push_encode(&p, buf, sizeof(buf), &len),
			-EINVAL);
	sample_push(&p);
	memset(p.port, '7', sizeof(p.port));
	CU_ASSERT_EQUAL(ferry__push_encode(&p, buf, sizeof(buf), &len),
			-EINVAL);
	sample_push(&p);
	strcpy(p.token, "token x");
	CU_ASSERT_EQUAL(ferry__push_encode(&p, buf, sizeof(buf), &len),
			-EINVAL);
	sample_push(&p);
	CU_ASSERT_EQUAL(ferry__push_encode(&p, buf, sizeof(buf), &len), 0);
	memcpy(bad, buf, len);
	bad[2 + 4] = '\n'; /* in host */
	push_refused(bad, len);
	memcpy(bad, buf, len);
	bad[18] = 16; /* port length 16 > FERRY_PUSH_PORT_MAX */
	push_refused(bad, len);
	memcpy(bad, buf, len);
	bad[31 + 5] = '/'; /* in the token name */
	push_refused(bad, len);
	buf[len] = 0; /* trailing */
	push_refused(buf, len + 1);

	/* push_free on a spec with no items is fine. */
	memset(&p, 0, sizeof(p));
	ferry__push_free(&p);
}

/* ---- PUSH results ---- */

#define RES_MAX 64

struct collect {
	struct ferry_push_result *r;
	size_t n;
	int stop_at; /* return 99 on this call (0: never) */
};

static int collect_fn(void *arg, const struct ferry_push_result *r)
{
	struct collect *c = arg;

	if (c->n >= RES_MAX)
		return -ENOSPC;
	c->r[c->n++] = *r;
	if (c->stop_at && (int)c->n == c->stop_at)
		return 99;
	return 0;
}

static void sample_result(struct ferry_push_result *r, size_t i)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->name, sizeof(r->name), "dir/file-%zu.bin", i);
	r->status = i % 3 ? 0 : (int32_t)(i == 3 ? -1 : EACCES);
	r->adler32 = 0x11111111u * (uint32_t)(i % 15 + 1);
	r->crc32c = ~r->adler32;
	r->size = (uint64_t)i << 33;
	r->bytes_sent = (uint64_t)i * 1000;
	r->skipped = i % 4 == 1;
	if (r->status)
		snprintf(r->why, sizeof(r->why), "cannot open: error %zu", i);
}

static bool result_equal(const struct ferry_push_result *a,
			 const struct ferry_push_result *b)
{
	return !strcmp(a->name, b->name) && a->status == b->status &&
	       a->adler32 == b->adler32 && a->crc32c == b->crc32c &&
	       a->size == b->size && a->bytes_sent == b->bytes_sent &&
	       a->skipped == b->skipped && !strcmp(a->why, b->why);
}

static void test_results(void)
{
	struct ferry_push_result *in = calloc(RES_MAX, sizeof(*in));
	struct ferry_push_result *got = calloc(RES_MAX, sizeof(*got));
	struct collect c = { .r = got };
	size_t next = 0, used, n = 20, batches = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(in);
	CU_ASSERT_PTR_NOT_NULL_FATAL(got);
	for (size_t i = 0; i < n; i++)
		sample_result(&in[i], i);

	/* In small batches: each decodes alone, all come back in order. */
	while (next < n) {
		size_t before = next;

		used = ferry__results_encode(in, n, &next, buf, 200);
		CU_ASSERT_FATAL(used > 0 && used <= 200);
		CU_ASSERT(next > before);
		CU_ASSERT_EQUAL(ferry__results_decode(buf, used, collect_fn,
						      &c), 0);
		batches++;
	}
	CU_ASSERT(batches > 1);
	CU_ASSERT_EQUAL(c.n, n);
	for (size_t i = 0; i < n && i < c.n; i++)
		CU_ASSERT(result_equal(&in[i], &got[i]));
	/* Nothing left: 0. */
	CU_ASSERT_EQUAL(ferry__results_encode(in, n, &next, buf, 200), 0);
	/* An empty batch decodes to nothing. */
	c.n = 0;
	CU_ASSERT_EQUAL(ferry__results_decode(buf, 0, collect_fn, &c), 0);
	CU_ASSERT_EQUAL(c.n, 0);

	/* The layout of one. */
	next = 0;
	sample_result(&in[0], 3);
	used = ferry__results_encode(in, 1, &next, buf, sizeof(buf));
	size_t nl = strlen(in[0].name), wl = strlen(in[0].why);
	CU_ASSERT_EQUAL(used, 2 + nl + 4 + 4 + 4 + 8 + 8 + 1 + 2 + wl);
	CU_ASSERT_EQUAL(buf[0], nl);
	CU_ASSERT_EQUAL(buf[2 + nl], 0xff); /* status -1 */
	CU_ASSERT_EQUAL(buf[2 + nl + 3], 0xff);
	CU_ASSERT_EQUAL(buf[2 + nl + 4 + 4 + 4 + 8 + 8], 0); /* skipped */
	CU_ASSERT_EQUAL(buf[2 + nl + 29], wl);

	/* The longest result fits FERRY_PUSH_RESULT_MAX, not one byte less. */
	memset(&in[0], 0, sizeof(in[0]));
	memset(in[0].name, 'n', sizeof(in[0].name) - 1);
	memset(in[0].why, 'w', sizeof(in[0].why) - 1);
	next = 0;
	CU_ASSERT_EQUAL(ferry__results_encode(in, 1, &next, buf,
					      FERRY_PUSH_RESULT_MAX - 1), 0);
	CU_ASSERT_EQUAL(next, 0);
	CU_ASSERT_EQUAL(ferry__results_encode(in, 1, &next, buf,
					      FERRY_PUSH_RESULT_MAX),
			FERRY_PUSH_RESULT_MAX);
	CU_ASSERT_EQUAL(next, 1);
	c.n = 0;
	CU_ASSERT_EQUAL(ferry__results_decode(buf, FERRY_PUSH_RESULT_MAX,
					      collect_fn, &c), 0);
	CU_ASSERT(c.n == 1 && result_equal(&in[0], &got[0]));

	/* The encoder cannot fail: it writes what decodes (unterminated
	 * strings cut, the why escaped, skipped as 0 or 1). */
	memset(&in[0], 0, sizeof(in[0]));
	memset(in[0].name, 'x', sizeof(in[0].name));
	strcpy(in[0].why, "bad\x1b[2J\ttext\n\xff");
	in[0].skipped = 7;
	next = 0;
	used = ferry__results_encode(in, 1, &next, buf, sizeof(buf));
	CU_ASSERT(used > 0);
	c.n = 0;
	CU_ASSERT_EQUAL(ferry__results_decode(buf, used, collect_fn, &c), 0);
	CU_ASSERT_EQUAL_FATAL(c.n, 1);
	CU_ASSERT_EQUAL(strlen(got[0].name), sizeof(got[0].name) - 1);
	CU_ASSERT_STRING_EQUAL(got[0].why, "bad\\x1b[2J\\ttext\\n\\xff");
	CU_ASSERT_EQUAL(got[0].skipped, 1);

	/* fn's non-zero return stops the batch and is returned. */
	next = 0;
	used = ferry__results_encode(in + 1, 5, &next, buf, sizeof(buf));
	c = (struct collect){ .r = got, .stop_at = 2 };
	CU_ASSERT_EQUAL(ferry__results_decode(buf, used, collect_fn, &c), 99);
	CU_ASSERT_EQUAL(c.n, 2);

	/* A malformed batch: fn sees none of it. */
	c = (struct collect){ .r = got };
	CU_ASSERT_EQUAL(ferry__results_decode(buf, used - 1, collect_fn, &c),
			-FERRY_EPROTO);
	CU_ASSERT_EQUAL(c.n, 0);
	memcpy(bad, buf, used);
	bad[used - 1] = '\a'; /* damage in the last result */
	CU_ASSERT_EQUAL(ferry__results_decode(bad, used, collect_fn, &c),
			-FERRY_EPROTO);
	CU_ASSERT_EQUAL(c.n, 0);
	free(in);
	free(got);
}

/* ---- hostile input: truncations and damage ---- */

/* Decode b[0..len) with the decoder of kind; on success, the value must
 * encode back to exactly those bytes. Returns the decoder's result. */
enum kind { K_RSTAT, K_TOKEN, K_PUSH, K_RESULTS };

static struct ferry_push_result *fz_results;

static int check_one(enum kind k, const uint8_t *b, size_t len)
{
	size_t n = 0;
	int ret;

	switch (k) {
	case K_RSTAT: {
		struct ferry_rstat st;

		ret = ferry__rstat_decode(b, len, &st);
		if (!ret) {
			CU_ASSERT_EQUAL(ferry__rstat_encode(&st, buf2,
							    sizeof(buf2), &n),
					0);
		}
		break;
	}
	case K_TOKEN: {
		struct ferry_token_reply t;

		ret = ferry__token_decode(b, len, &t);
		if (!ret) {
			CU_ASSERT(ferry__ctrl_keyname_valid(t.name));
			CU_ASSERT_EQUAL(ferry__token_encode(&t, buf2,
							    sizeof(buf2), &n),
					0);
		}
		break;
	}
	case K_PUSH: {
		struct ferry_push_spec p;

		ret = ferry__push_decode(b, len, &p);
		if (!ret) {
			CU_ASSERT(p.n <= FERRY_PUSH_MAX_ITEMS);
			CU_ASSERT_EQUAL(ferry__push_encode(&p, buf2,
							   sizeof(buf2), &n),
					0);
			ferry__push_free(&p);
		} else {
			CU_ASSERT(all_zero(&p, sizeof(p)));
		}
		break;
	}
	case K_RESULTS: {
		struct collect c = { .r = fz_results };
		size_t next = 0;

		ret = ferry__results_decode(b, len, collect_fn, &c);
		if (!ret)
			n = ferry__results_encode(fz_results, c.n, &next, buf2,
						  sizeof(buf2));
		break;
	}
	default:
		return -EINVAL;
	}
	CU_ASSERT(ret == 0 || ret == -FERRY_EPROTO);
	if (!ret) {
		CU_ASSERT_EQUAL(n, len);
		CU_ASSERT(n != len || memcmp(buf2, b, len) == 0);
	}
	return ret;
}

/* Every truncation of a valid encoding, then random damage. */
static void hammer(enum kind k, const uint8_t *good, size_t len,
		   bool prefixes_fail)
{
	static uint8_t copy[BUF_MAX];
	unsigned ok = 0;

	CU_ASSERT_EQUAL_FATAL(check_one(k, good, len), 0);
	for (size_t n = 0; n < len; n++) {
		/* an exact-size copy, so valgrind sees any overread */
		uint8_t *t = malloc(n ? n : 1);

		CU_ASSERT_PTR_NOT_NULL_FATAL(t);
		memcpy(t, good, n);
		int ret = check_one(k, t, n);

		if (prefixes_fail)
			CU_ASSERT_EQUAL(ret, -FERRY_EPROTO);
		free(t);
	}
	for (int iter = 0; iter < 3000; iter++) {
		size_t n = len;
		int flips = 1 + (int)(rnd() % 4);

		memcpy(copy, good, len);
		for (int f = 0; f < flips; f++) {
			size_t at = rnd() % len;

			switch (rnd() % 4) {
			case 0: copy[at] ^= (uint8_t)(1u << (rnd() % 8)); break;
			case 1: copy[at] = (uint8_t)rnd(); break;
			case 2: copy[at] = 0xff; break;
			default: copy[at] = 0; break;
			}
		}
		if (rnd() % 8 == 0) /* and sometimes cut or extended */
			n = (size_t)(rnd() % (len + 8));
		if (n > len)
			memset(copy + len, (int)(rnd() & 0xff), n - len);
		uint8_t *t = malloc(n ? n : 1);

		CU_ASSERT_PTR_NOT_NULL_FATAL(t);
		memcpy(t, copy, n);
		if (check_one(k, t, n) == 0)
			ok++;
		free(t);
	}
	/* some damage lands where any value is valid */
	CU_ASSERT(ok > 0);
}

static void test_hostile(void)
{
	static uint8_t good[BUF_MAX];
	struct ferry_rstat st = { FERRY_ENTRY_DIR, 0755, 4096, 42 };
	struct ferry_token_reply t;
	struct ferry_push_spec p;
	struct ferry_push_result *r;
	size_t len, next = 0;

	fz_results = calloc(RES_MAX, sizeof(*fz_results));
	r = calloc(8, sizeof(*r));
	CU_ASSERT_PTR_NOT_NULL_FATAL(fz_results);
	CU_ASSERT_PTR_NOT_NULL_FATAL(r);

	CU_ASSERT_EQUAL_FATAL(ferry__rstat_encode(&st, good, sizeof(good),
						  &len), 0);
	hammer(K_RSTAT, good, len, true);

	sample_token(&t);
	CU_ASSERT_EQUAL_FATAL(ferry__token_encode(&t, good, sizeof(good),
						  &len), 0);
	hammer(K_TOKEN, good, len, true);

	sample_push(&p);
	CU_ASSERT_EQUAL_FATAL(ferry__push_encode(&p, good, sizeof(good),
						 &len), 0);
	hammer(K_PUSH, good, len, true);
	memset(&p, 0, sizeof(p));
	CU_ASSERT_EQUAL_FATAL(ferry__push_encode(&p, good, sizeof(good),
						 &len), 0);
	hammer(K_PUSH, good, len, true);

	/* Results: a cut between two results is a valid, shorter batch. */
	for (size_t i = 0; i < 8; i++)
		sample_result(&r[i], i);
	len = ferry__results_encode(r, 8, &next, good, sizeof(good));
	CU_ASSERT_EQUAL_FATAL(next, 8);
	hammer(K_RESULTS, good, len, false);
	free(r);
	free(fz_results);
}

int main(void)
{
	CU_TestInfo tests[] = {
		{ "STAT reply", test_rstat },
		{ "TOKEN reply", test_token },
		{ "PUSH spec", test_push },
		{ "PUSH results", test_results },
		{ "truncated and damaged encodings", test_hostile },
		CU_TEST_INFO_NULL,
	};
	return ferry_cu_run("req", tests);
}
