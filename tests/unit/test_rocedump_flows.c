/* rocedump's flows (lib/rocedump/flows.c) and the capture reader's path
 * through the decoder (ferry_rocedump_read). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cu.h"
#include "ferry/error.h"
#include "ferry/rocedump.h"
#include "roce_frames.h"

static struct ferry_rocedump *rd;
static uint8_t fb[2048];

/* Add one frame of opcode to qp at psn (ext: its extended header bytes,
 * zeros but for a RETH's DMA length and an AETH's syndrome). */
static void add(uint8_t opcode, uint32_t qp, uint32_t psn, uint32_t arg,
		size_t pay, uint8_t ipver)
{
	bool nopay;
	int x = ext_bytes(opcode, &nopay);
	uint8_t ext[64] = { 0 };
	struct ferry_roce_frame o;

	CU_ASSERT_FATAL(x >= 0);
	if ((opcode & 0x1f) == 0x0c) { /* RETH DMA length */
		ext[12] = (uint8_t)(arg >> 24), ext[13] = (uint8_t)(arg >> 16);
		ext[14] = (uint8_t)(arg >> 8), ext[15] = (uint8_t)arg;
	} else if ((opcode & 0x1f) == 0x11) {
		ext[0] = (uint8_t)arg; /* AETH syndrome */
	} else if (opcode >> 5 == 3) {
		ext[7] = (uint8_t)arg; /* DETH source QP */
	}
	struct spec s = { .opcode = opcode, .qp = qp, .psn = psn, .ext = ext,
			  .ext_len = (size_t)x, .pay = pay, .ipver = ipver };
	size_t n = build(fb, &s);
	CU_ASSERT_EQUAL(ferry_rocedump_add(rd, fb, n, n, psn, &o), 0);
	CU_ASSERT_EQUAL(o.verdict, FERRY_ROCE_DECODED);
}

static const struct ferry_roce_flow *flow(size_t i)
{
	const struct ferry_roce_flow *fl = ferry_rocedump_flow(rd, i);

	CU_ASSERT_PTR_NOT_NULL_FATAL(fl);
	return fl;
}

static void test_flows(void)
{
	static const struct { uint8_t op; uint32_t psn, arg; } seq[] = {
		{ 0x06, 0xfffffd, 0 }, { 0x07, 0xfffffe, 0 },
		{ 0x08, 0xffffff, 0 },
		{ 0x04, 0x000001, 0 },                  /* gap: 0 */
		{ 0x04, 0x000002, 0 },
		{ 0x04, 0x000000, 0 }, { 0x04, 0x000001, 0 }, /* resent */
		{ 0x04, 0x000002, 0 },
		{ 0x0c, 0x000003, 8192 },   /* 2 to 32 PSNs */
		{ 0x13, 0x000023, 0 },      /* 3 + 32: in order */
		{ 0x0c, 0x000024, 8192 },
		{ 0x14, 0x000045, 0 },      /* 36 + 33: a gap */
		{ 0x0c, 0x000046, 0 },      /* 0 bytes: 1 PSN */
		{ 0x04, 0x000048, 0 },      /* a gap */
	};
	struct ferry_rocedump_totals t;

	CU_ASSERT_EQUAL_FATAL(ferry_rocedump_new(0, &rd), 0);
	for (size_t i = 0; i < sizeof(seq) / sizeof(seq[0]); i++)
		add(seq[i].op, 0xabcd, seq[i].psn, seq[i].arg,
		    (seq[i].op & 0x1f) <= 0x08 ? 8 : 0, 4);
	/* the other way: responses, NAKs, a CNP */
	add(0x11, 0xdcba, 0x000001, 0x1f, 0, 4);
	add(0x11, 0xdcba, 0x000001, 0x60, 0, 4);
	add(0x11, 0xdcba, 0x000000, 0x62, 0, 4);
	add(0x11, 0xdcba, 0x000000, 0x2e, 0, 4);
	add(0x0d, 0xdcba, 0x000003, 0, 16, 4);
	add(0x0e, 0xdcba, 0x000009, 0, 16, 4);
	add(0x81, 0xdcba, 0, 0, 0, 4);
	/* UD to one QP from two source QPs, and the same over IPv6 */
	add(0x64, 0x20, 1, 0x10, 4, 4);
	add(0x64, 0x20, 7, 0x11, 4, 4);
	add(0x64, 0x20, 2, 0x10, 4, 4);
	add(0x64, 0x20, 1, 0x10, 4, 6);

	const struct ferry_roce_flow *a = flow(0), *b = flow(1);
	CU_ASSERT(a->dest_qp == 0xabcd && a->src_qp == FERRY_ROCE_NO_QP);
	CU_ASSERT_EQUAL(a->frames, 14);
	CU_ASSERT_EQUAL(a->payload_bytes, 9 * 8);
	CU_ASSERT_EQUAL(a->psn_gaps, 3);
	CU_ASSERT_EQUAL(a->retransmits, 3);
	CU_ASSERT(a->naks == 0 && a->cnps == 0);
	CU_ASSERT(a->first_ns == 0xfffffd && a->last_ns == 0x48);
	CU_ASSERT(b->dest_qp == 0xdcba && b->frames == 7);
	CU_ASSERT(b->psn_gaps == 0 && b->retransmits == 0);
	CU_ASSERT(b->naks == 2 && b->rnr_naks == 1 && b->cnps == 1);
	CU_ASSERT_EQUAL(b->payload_bytes, 32);
	CU_ASSERT(flow(2)->src_qp == 0x10 && flow(2)->frames == 2 &&
		  flow(2)->psn_gaps == 0);
	CU_ASSERT(flow(3)->src_qp == 0x11 && flow(3)->frames == 1);
	CU_ASSERT(flow(4)->ip_version == 6 && flow(4)->frames == 1);
	CU_ASSERT_PTR_NULL(ferry_rocedump_flow(rd, 5));
	ferry_rocedump_totals(rd, &t);
	CU_ASSERT(t.frames == 25 && t.roce == 25 && t.decoded == 25 &&
		  t.icrc_ok == 25 && t.flows == 5 && t.untracked == 0);
	ferry_rocedump_free(rd);
}

static void test_flow_limit(void)
{
	struct ferry_rocedump_totals t;

	CU_ASSERT_EQUAL_FATAL(ferry_rocedump_new(0, &rd), 0);
	for (uint32_t qp = 0; qp <= FERRY_ROCEDUMP_MAX_FLOWS; qp++)
		add(0x11, qp, 0, 0, 0, 4);
	add(0x11, 7, 1, 0, 0, 4);       /* a known flow still counts */
	ferry_rocedump_totals(rd, &t);
	CU_ASSERT_EQUAL(t.flows, FERRY_ROCEDUMP_MAX_FLOWS);
	CU_ASSERT_EQUAL(t.untracked, 1);
	CU_ASSERT_EQUAL(t.decoded, FERRY_ROCEDUMP_MAX_FLOWS + 2u);
	CU_ASSERT_EQUAL(flow(7)->frames, 2);
	CU_ASSERT_EQUAL(flow(FERRY_ROCEDUMP_MAX_FLOWS - 1)->dest_qp,
			FERRY_ROCEDUMP_MAX_FLOWS - 1);
	ferry_rocedump_free(rd);
}

/* ---- a capture file ---- */

struct seen {
	uint64_t n, decoded, stop_at;
};

static int on_frame(const struct ferry_roce_frame *f, const uint8_t *frame,
		    void *arg)
{
	struct seen *s = arg;

	CU_ASSERT_EQUAL(f->index, s->n + 1);
	CU_ASSERT_EQUAL(f->ts_ns, 1700000000000000000ull + s->n * 1000);
	CU_ASSERT_PTR_NOT_NULL(frame);
	s->n++;
	s->decoded += f->verdict == FERRY_ROCE_DECODED;
	return s->n == s->stop_at ? 42 : 0;
}

static void put32le(FILE *f, uint32_t v)
{
	uint8_t b[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16),
			 (uint8_t)(v >> 24) };
	fwrite(b, 1, 4, f);
}

static void test_read(void)
{
	static uint8_t frames[4][512];
	static const uint8_t deth[8] = { 0, 0, 0, 1, 0, 0, 0, 9 };
	const struct spec specs[4] = {
		{ .opcode = 0x0c, .qp = 0x12ab, .ext_len = 16 },
		{ .opcode = 0x81, .qp = 0x12ab, .ext_len = 16 },
		{ .opcode = 0x11, .qp = 0x12ab, .ext_len = 4 },
		{ .opcode = 0x64, .qp = 5, .ext = deth, .ext_len = 8, .pay = 4 },
	};
	struct ferry_rocedump_totals t;
	struct seen s = { 0 };
	size_t lens[4];
	char why[128];
	FILE *f = tmpfile();

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	put32le(f, 0xa1b2c3d4);
	put32le(f, 2 | 4u << 16);
	put32le(f, 0);
	put32le(f, 0);
	put32le(f, 65535);
	put32le(f, 1);
	for (int i = 0; i < 4; i++) {
		lens[i] = build(frames[i], &specs[i]);
		put32le(f, 1700000000);
		put32le(f, (uint32_t)i);
		put32le(f, (uint32_t)lens[i]);
		put32le(f, (uint32_t)lens[i]);
		fwrite(frames[i], 1, lens[i], f);
	}
	rewind(f);
	CU_ASSERT_EQUAL_FATAL(ferry_rocedump_new(0, &rd), 0);
	CU_ASSERT_EQUAL(ferry_rocedump_read(rd, f, on_frame, &s, why,
					    sizeof(why)), 0);
	ferry_rocedump_totals(rd, &t);
	CU_ASSERT(s.n == 4 && s.decoded == 4 && t.frames == 4 &&
		  t.icrc_ok == 4 && t.flows == 2);
	CU_ASSERT(flow(0)->frames == 3 && flow(0)->cnps == 1 &&
		  flow(1)->src_qp == 9);
	ferry_rocedump_free(rd);

	/* a callback stops the reading */
	rewind(f);
	s = (struct seen){ .stop_at = 2 };
	CU_ASSERT_EQUAL_FATAL(ferry_rocedump_new(0, &rd), 0);
	CU_ASSERT_EQUAL(ferry_rocedump_read(rd, f, on_frame, &s, NULL, 0), 42);
	ferry_rocedump_totals(rd, &t);
	CU_ASSERT_EQUAL(t.frames, 2);
	ferry_rocedump_free(rd);
	fclose(f);

	/* not a capture */
	f = tmpfile();
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs("not a capture at all", f);
	rewind(f);
	CU_ASSERT_EQUAL_FATAL(ferry_rocedump_new(0, &rd), 0);
	CU_ASSERT_EQUAL(ferry_rocedump_read(rd, f, NULL, NULL, why,
					    sizeof(why)), -FERRY_EPROTO);
	CU_ASSERT(strstr(why, "not a pcap") != NULL);
	CU_ASSERT_EQUAL(ferry_rocedump_read(rd, NULL, NULL, NULL, NULL, 0),
			-EINVAL);
	ferry_rocedump_free(rd);
	fclose(f);
	CU_ASSERT_EQUAL(ferry_rocedump_new(0, NULL), -EINVAL);
}

int main(void)
{
	CU_TestInfo tests[] = {
		{ "flows: PSN gaps, retransmissions, NAKs, CNPs",
		  test_flows },
		{ "flows past the limit", test_flow_limit },
		{ "capture files", test_read },
		CU_TEST_INFO_NULL,
	};
	return ferry_cu_run("rocedump_flows", tests);
}
