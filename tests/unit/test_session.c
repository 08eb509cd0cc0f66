/* File-session plumbing: the plan codec, the file queue, and the control
 * messages file sessions add. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ctrl/msg.h"
#include "cu.h"
#include "ferry/error.h"
#include "files/files.h"

struct collect {
	struct ferry__plan_entry e[16];
	struct ferry__range r[16][8];
	size_t n;
};

static int collect_fn(void *arg, const struct ferry__plan_entry *e)
{
	struct collect *c = arg;

	if (c->n == 16)
		return -E2BIG;
	c->e[c->n] = *e;
	for (uint32_t i = 0; i < e->n_ranges && i < 8; i++)
		c->r[c->n][i] = e->ranges[i];
	c->n++;
	return 0;
}

static void test_plan_roundtrip(void)
{
	struct ferry__range rr[3] = { { 0, 2 }, { 5, 1 }, { 9, 100 } };
	struct ferry__plan_entry pe[3] = {
		{ .idx = 1, .action = FERRY__PLAN_SEND },
		{ .idx = 4, .action = FERRY__PLAN_RESUME, .n_ranges = 3,
		  .ranges = rr },
		{ .idx = 7, .action = FERRY__PLAN_EXISTS, .crc32c = 0xdeadbeef,
		  .adler32 = 0x01020304 },
	};
	uint8_t buf[256];
	size_t next = 0, len;
	struct collect c = { 0 };

	len = ferry__plan_encode(pe, 3, &next, buf, sizeof(buf));
	CU_ASSERT_EQUAL(next, 3);
	CU_ASSERT_EQUAL(ferry__plan_decode(buf, len, collect_fn, &c), 0);
	CU_ASSERT_EQUAL_FATAL(c.n, 3);
	CU_ASSERT_EQUAL(c.e[0].idx, 1);
	CU_ASSERT_EQUAL(c.e[1].n_ranges, 3);
	CU_ASSERT_EQUAL(c.r[1][2].first, 9);
	CU_ASSERT_EQUAL(c.r[1][2].count, 100);
	CU_ASSERT_EQUAL(c.e[2].crc32c, 0xdeadbeef);
	CU_ASSERT_EQUAL(c.e[2].adler32, 0x01020304);
	/* every truncation is refused, never read past the end */
	for (size_t cut = 1; cut < len; cut++) {
		struct collect d = { 0 };
		int err = ferry__plan_decode(buf, cut, collect_fn, &d);
		CU_ASSERT(err == -FERRY_EPROTO || (err == 0 && d.n < 3));
	}
	/* an unknown action */
	buf[4] = 9;
	c.n = 0;
	CU_ASSERT_EQUAL(ferry__plan_decode(buf, len, collect_fn, &c),
			-FERRY_EPROTO);
}

static void test_plan_batches(void)
{
	struct ferry__plan_entry pe[100];
	uint8_t buf[64];
	size_t next = 0, batches = 0, total = 0;

	for (int i = 0; i < 100; i++)
		pe[i] = (struct ferry__plan_entry){ .idx = (uint32_t)i,
						    .action = FERRY__PLAN_SEND };
	while (next < 100) {
		struct collect c = { 0 };
		size_t before = next;
		size_t len = ferry__plan_encode(pe, 100, &next, buf, sizeof(buf));
		CU_ASSERT_FATAL(next > before); /* always progress */
		CU_ASSERT(len <= sizeof(buf));
		c.n = 0;
		CU_ASSERT_EQUAL(ferry__plan_decode(buf, len, collect_fn, &c), 0);
		CU_ASSERT_EQUAL(c.e[0].idx, before);
		total += c.n;
		batches++;
	}
	CU_ASSERT_EQUAL(total, 100);
	CU_ASSERT(batches > 1);
}

static void test_fileq(void)
{
	struct ferry__fileq q;
	uint32_t v;

	CU_ASSERT_EQUAL_FATAL(ferry__fileq_init(&q, 3), 0);
	CU_ASSERT_FALSE(ferry__fileq_pop(&q, &v));
	ferry__fileq_push(&q, 7);
	ferry__fileq_push(&q, 8);
	ferry__fileq_push(&q, 9);
	ferry__fileq_ack(&q);
	CU_ASSERT(ferry__fileq_pop(&q, &v) && v == 7);
	CU_ASSERT(ferry__fileq_pop(&q, &v) && v == 8);
	CU_ASSERT(ferry__fileq_pop(&q, &v) && v == 9);
	CU_ASSERT_FALSE(ferry__fileq_pop(&q, &v));
	ferry__fileq_free(&q);
}

static void roundtrip(const struct ferry_msg *m)
{
	static uint8_t buf[FERRY_CTRL_MAX_FRAME];
	static struct ferry_msg out;
	size_t len, used;

	CU_ASSERT_EQUAL_FATAL(ferry__ctrl_encode(m, buf, sizeof(buf), &len), 0);
	CU_ASSERT_EQUAL_FATAL(ferry__ctrl_decode(buf, len, &out, &used), 0);
	CU_ASSERT_EQUAL(used, len);
	CU_ASSERT_EQUAL(out.type, m->type);
	for (size_t cut = 0; cut < len; cut += 1 + cut / 8)
		CU_ASSERT_EQUAL(ferry__ctrl_decode(buf, cut, &out, &used),
				-EAGAIN);
}

static void test_file_messages(void)
{
	static struct ferry_msg m;

	memset(&m, 0, sizeof(m));
	m.type = FERRY_MSG_FILES;
	m.u.files.flags = FERRY_FILES_FORCE;
	m.u.files.cksum = 1;
	m.u.files.n_entries = 12345;
	strcpy(m.u.files.dest, "store/run 42/é");
	roundtrip(&m);
	m.type = FERRY_MSG_MANIFEST;
	m.u.blob.last = 1;
	m.u.blob.len = FERRY_BLOB_MAX;
	memset(m.u.blob.data, 0xab, FERRY_BLOB_MAX);
	roundtrip(&m);
	m.type = FERRY_MSG_FILE_SUM;
	m.u.file_sum = (struct ferry_msg_file_sum){ 3, FERRY_FILE_SUM_SKIP, 1, 2 };
	roundtrip(&m);
	memset(&m, 0, sizeof(m));
	m.type = FERRY_MSG_FILE_DONE;
	m.u.file_done.idx = 9;
	m.u.file_done.status = FERRY_ECRC;
	strcpy(m.u.file_done.text, "whole-file checksum mismatch");
	roundtrip(&m);
	/* a blob longer than allowed is refused both ways */
	m.type = FERRY_MSG_PLAN;
	m.u.blob.len = FERRY_BLOB_MAX + 1;
	{
		static uint8_t buf[FERRY_CTRL_MAX_FRAME + 64];
		size_t len;
		CU_ASSERT_EQUAL(ferry__ctrl_encode(&m, buf, sizeof(buf), &len),
				-EINVAL);
	}
	/* FILE_DONE text with an escape sequence is refused */
	m.type = FERRY_MSG_FILE_DONE;
	strcpy(m.u.file_done.text, "bad \033[2J");
	{
		static uint8_t buf[1024];
		size_t len;
		CU_ASSERT_EQUAL(ferry__ctrl_encode(&m, buf, sizeof(buf), &len),
				-EINVAL);
	}
}

int main(void)
{
	CU_TestInfo tests[] = {
		{ "plan round trip and truncation", test_plan_roundtrip },
		{ "plan in small batches", test_plan_batches },
		{ "file queue", test_fileq },
		{ "file-session control messages", test_file_messages },
		CU_TEST_INFO_NULL,
	};
	return ferry_cu_run("session", tests);
}
