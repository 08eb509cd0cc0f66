/* libFuzzer target for what a receiver decodes from a sender before it
 * creates anything: manifest batches and relative paths
 * (lib/io/manifest.c), and the plan batches the sender decodes
 * (lib/files/files_plan.c).
 *
 * Input: byte 0 is max_entries, byte 1 where the rest splits into two
 * manifest batches decoded one after the other into the same manifest;
 * the whole rest is also decoded as a plan batch and, up to its first NUL,
 * checked as a path. Beyond "no crash, no out-of-bounds access", it checks
 * the contract: every accepted path passes a path checker written apart
 * from ferry__path_valid (relative, no empty, "." or ".." component, no
 * NUL, shorter than FERRY_PATH_MAX), both agree on every string, a refused
 * batch leaves the manifest as it was, and an accepted batch or plan
 * re-encodes to the very same bytes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ferry/error.h"
#include "files/files.h"
#include "fuzz.h"
#include "io/manifest.h"

/* The rules of io/manifest.h, written again without strchr/strnlen. */
static bool ref_path_ok(const uint8_t *p, size_t len)
{
	size_t comp = 0; /* bytes in the current component */
	size_t dots = 0; /* of which '.' */

	if (len == 0 || len >= FERRY_PATH_MAX)
		return false;
	for (size_t i = 0; i <= len; i++) {
		if (i == len || p[i] == '/') {
			if (comp == 0 || (comp == dots && comp <= 2))
				return false;
			comp = dots = 0;
			continue;
		}
		if (p[i] == '\0')
			return false;
		comp++;
		dots += p[i] == '.';
	}
	return true;
}

static void check_entries(const struct ferry_manifest *m, size_t from)
{
	uint64_t files = 0;

	for (size_t i = 0; i < m->n; i++) {
		const struct ferry_entry *e = &m->e[i];

		files += e->type == FERRY_ENTRY_FILE;
		if (i < from)
			continue;
		CHECK(ref_path_ok((const uint8_t *)e->path, strlen(e->path)));
		CHECK(e->type == FERRY_ENTRY_FILE || e->type == FERRY_ENTRY_DIR);
		CHECK(e->mode <= 07777);
		CHECK(e->size <= INT64_MAX);
		CHECK(e->type == FERRY_ENTRY_FILE || e->size == 0);
		CHECK(e->src == NULL);
	}
	CHECK(m->n_files == files);
	CHECK(m->n <= m->cap);
}

/* Decode one batch; on success it must re-encode to the same bytes. */
static void one_batch(struct ferry_manifest *m, const uint8_t *b, size_t len,
		      size_t max_entries)
{
	size_t n0 = m->n, next = n0;
	uint64_t total0 = m->total_bytes, files0 = m->n_files;
	int ret = ferry__manifest_decode(m, b, len, max_entries);

	if (ret) {
		CHECK(ret == -FERRY_EPROTO || ret == -FERRY_ETOOBIG ||
		      ret == -ENOMEM);
		CHECK(m->n == n0 && m->total_bytes == total0 &&
		      m->n_files == files0);
		return;
	}
	CHECK(m->n <= max_entries);
	check_entries(m, n0);
	/* exactly len bytes: an encoder writing past them is caught */
	uint8_t *out = malloc(len ? len : 1);
	CHECK(out);
	CHECK(ferry__manifest_encode(m, &next, out, len) == len);
	CHECK(next == m->n);
	CHECK(len == 0 || memcmp(out, b, len) == 0);
	free(out);
}

struct plan_out {
	uint8_t *buf;
	size_t cap, len;
};

static int plan_entry(void *arg, const struct ferry__plan_entry *e)
{
	struct plan_out *o = arg;
	size_t next = 0;
	size_t n;

	CHECK(e->action == FERRY__PLAN_SEND || e->action == FERRY__PLAN_RESUME ||
	      e->action == FERRY__PLAN_EXISTS || e->action == FERRY__PLAN_FAIL);
	CHECK(e->action != FERRY__PLAN_FAIL ||
	      (e->text && strlen(e->text) <= 255));
	CHECK(e->n_ranges == 0 || e->ranges);
	n = ferry__plan_encode(e, 1, &next, o->buf + o->len, o->cap - o->len);
	CHECK(next == 1 && n > 0);
	o->len += n;
	return 0;
}

static void check_plan(const uint8_t *b, size_t len)
{
	struct plan_out o = { .buf = malloc(len ? len : 1), .cap = len };
	int ret;

	CHECK(o.buf);
	ret = ferry__plan_decode(b, len, plan_entry, &o);
	CHECK(ret == 0 || ret == -FERRY_EPROTO || ret == -ENOMEM);
	if (ret == 0)
		CHECK(o.len == len && (len == 0 || memcmp(o.buf, b, len) == 0));
	else
		CHECK(o.len <= len && (o.len == 0 || !memcmp(o.buf, b, o.len)));
	free(o.buf);
}

static void check_path(const uint8_t *b, size_t len)
{
	const uint8_t *nul = memchr(b, '\0', len);
	size_t n = nul ? (size_t)(nul - b) : len;
	char *s = malloc(n + 1);
	struct ferry_manifest m;
	bool ok;

	CHECK(s);
	memcpy(s, b, n);
	s[n] = '\0';
	ok = ferry__path_valid(s);
	CHECK(ok == ref_path_ok(b, n));
	ferry__manifest_init(&m);
	CHECK(ferry__manifest_add(&m, s, NULL, FERRY_ENTRY_DIR, 0755, 0, 0) ==
	      (ok ? 0 : -EINVAL));
	ferry__manifest_free(&m);
	free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ferry_manifest m;
	size_t max_entries, split;

	if (size < 2)
		return 0;
	max_entries = data[0];
	split = data[1];
	data += 2;
	size -= 2;
	if (split > size)
		split = size;

	ferry__manifest_init(&m);
	one_batch(&m, data, split, max_entries);
	one_batch(&m, data + split, size - split, max_entries);
	check_entries(&m, 0);
	ferry__manifest_free(&m);
	CHECK(m.n == 0 && m.e == NULL);

	check_plan(data, size);
	check_path(data, size);
	return 0;
}
