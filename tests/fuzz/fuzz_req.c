/* libFuzzer target for the data of daemon requests and replies
 * (lib/ctrl/req.c): what a daemon decodes from a client (a PUSH spec) and
 * what a client decodes from a daemon (STAT, TOKEN and PUSH replies).
 *
 * Input: byte 0 picks the decoder (STAT, TOKEN, PUSH, results), the rest
 * is its input. Beyond "no crash, no out-of-bounds access, no leak", it
 * checks the contract: only the documented codes, a refused PUSH spec is
 * left zeroed, accepted values are valid (key names, item paths, the item
 * limit) and encode back to the very same bytes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "ctrl/req.h"
#include "ferry/error.h"
#include "io/manifest.h"

/* Inputs are at most 1 MiB (replay.c); they encode back to as much. */
static uint8_t out[1 << 20];

static void same_bytes(const uint8_t *data, size_t size, size_t len)
{
	CHECK(len == size);
	CHECK(memcmp(out, data, size) == 0);
}

static bool all_zero(const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		if (b[i])
			return false;
	return true;
}

static void check_rstat(const uint8_t *data, size_t size)
{
	struct ferry_rstat st;
	size_t len = 0;
	int ret = ferry__rstat_decode(data, size, &st);

	CHECK(ret == 0 || ret == -FERRY_EPROTO);
	if (ret)
		return;
	CHECK(size == FERRY_RSTAT_LEN);
	CHECK(ferry__rstat_encode(&st, out, sizeof(out), &len) == 0);
	same_bytes(data, size, len);
}

static void check_token(const uint8_t *data, size_t size)
{
	struct ferry_token_reply t;
	size_t len = 0;
	int ret = ferry__token_decode(data, size, &t);

	CHECK(ret == 0 || ret == -FERRY_EPROTO);
	if (ret)
		return;
	CHECK(ferry__ctrl_keyname_valid(t.name));
	CHECK(ferry__token_encode(&t, out, sizeof(out), &len) == 0);
	same_bytes(data, size, len);
}

static void check_push(const uint8_t *data, size_t size)
{
	struct ferry_push_spec p;
	size_t len = 0;
	int ret = ferry__push_decode(data, size, &p);

	CHECK(ret == 0 || ret == -FERRY_EPROTO || ret == -ENOMEM);
	if (ret) {
		CHECK(all_zero(&p, sizeof(p)));
		return;
	}
	CHECK(p.n <= FERRY_PUSH_MAX_ITEMS);
	CHECK(ferry__ctrl_keyname_valid(p.token));
	for (uint32_t i = 0; i < p.n; i++) {
		const char *src = p.items[i].src;

		CHECK(ferry__path_valid(src[0] == '/' ? src + 1 : src));
		CHECK(ferry__path_valid(p.items[i].name));
	}
	CHECK(ferry__push_encode(&p, out, sizeof(out), &len) == 0);
	same_bytes(data, size, len);
	ferry__push_free(&p);
	CHECK(all_zero(&p, sizeof(p)));
}

/* Where the next result begins in the batch being decoded. */
struct batch {
	const uint8_t *data;
	size_t size, off, calls;
};

/* Each result, as fn sees it, encodes to the batch's next bytes. */
static int result_fn(void *arg, const struct ferry_push_result *r)
{
	struct batch *b = arg;
	size_t next = 0, len;

	b->calls++;
	CHECK(r->skipped <= 1);
	CHECK(strlen(r->name) < sizeof(r->name));
	CHECK(strlen(r->why) < sizeof(r->why));
	len = ferry__results_encode(r, 1, &next, out, sizeof(out));
	CHECK(next == 1 && len > 0 && len <= b->size - b->off);
	CHECK(memcmp(out, b->data + b->off, len) == 0);
	b->off += len;
	return 0;
}

static void check_results(const uint8_t *data, size_t size)
{
	struct batch b = { .data = data, .size = size };
	int ret = ferry__results_decode(data, size, result_fn, &b);

	CHECK(ret == 0 || ret == -FERRY_EPROTO);
	if (ret)
		CHECK(b.calls == 0); /* fn sees nothing of a bad batch */
	else
		CHECK(b.off == size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size - 1 > sizeof(out))
		return 0;
	switch (data[0] % 4) {
	case 0: check_rstat(data + 1, size - 1); break;
	case 1: check_token(data + 1, size - 1); break;
	case 2: check_push(data + 1, size - 1); break;
	default: check_results(data + 1, size - 1); break;
	}
	return 0;
}
