/* The path plan (lib/pipe/path.h): what the receiver chooses from the
 * two ends' PATH messages and the proposal, on facts given here (not this
 * host's): streams and socket buffers over tcp, the ring on every
 * transport, the user's fixed values kept, the limits that cap it. */
#include <string.h>

#include "cu.h"
#include "pipe/path.h"

#define MIB (1ull << 20)
#define STRIDE (4 * MIB + 4096) /* a 4 MiB chunk's slot */

/* A stock Debian host: tcp_rmem max 6 MiB, tcp_wmem max 4 MiB, the core
 * limits at 208 KiB, no CAP_NET_ADMIN, a 4 GiB ring limit. */
static void stock(struct ferry_msg_path *p, bool sender)
{
	memset(p, 0, sizeof(*p));
	p->mem_max = 4ull << 30;
	p->buf_tcp_max = sender ? 4 * MIB : 6 * MIB;
	p->buf_core_max = 212992;
}

/* A proposal of the defaults: 4 streams, 64 slots of 4 MiB. */
static void defaults(struct ferry_params *pr, uint64_t total)
{
	memset(pr, 0, sizeof(*pr));
	pr->mode = FERRY_MODE_BENCH;
	pr->streams = FERRY_DEFAULT_STREAMS;
	pr->slots = FERRY_DEFAULT_SLOTS;
	pr->chunk_size = FERRY_DEFAULT_CHUNK;
	pr->total_bytes = total;
}

/* The receiver's answer to a sender: RTT and target as it measured. */
static void answer(const struct ferry_msg_path *tx, struct ferry_msg_path *rx,
		   uint32_t rtt_us, uint64_t nic_bps)
{
	stock(rx, false);
	rx->rtt_us = rtt_us;
	rx->rate_bps = nic_bps;
	ferry__path_answer(tx, rx);
}

/* 300 ms and 2 Gb/s between stock hosts, over tcp: a window is 2 MiB
 * (half the sender's tcp_wmem), 45 of them hold BDP x 5/4; autotuning
 * reaches that, so no buffer is set; the ring holds the BDP too (23
 * slots), above the floor of 64, rounded to whole streams: 90. */
static void test_tcp_long_fat(void)
{
	struct ferry_msg_path tx, rx;
	struct ferry_params pr;
	struct ferry__path_plan pl;

	stock(&tx, true);
	tx.rate_bps = 2000000000;
	defaults(&pr, 0);
	answer(&tx, &rx, 300000, 10000000000ull); /* a 10 Gb/s NIC */
	CU_ASSERT_EQUAL(rx.rate_bps, 2000000000); /* the lower target */
	ferry__path_plan(&tx, &rx, &pr, true, &pl);
	CU_ASSERT_EQUAL(pl.streams, 45);
	CU_ASSERT_EQUAL(pl.slots, 90);
	CU_ASSERT_EQUAL(pl.sockbuf, 0);
	CU_ASSERT_EQUAL(pl.ring_want, 23);
	CU_ASSERT_PTR_NOT_NULL(strstr(pl.why, "RTT 300 ms, target 2 Gb/s, BDP 72 MiB: 45 streams x 2 MiB (tcp_rmem max 6 MiB; no CAP_NET_ADMIN); ring 90 x 4 MiB"));

	/* the same over an RDMA transport: the streams stay, the ring
	 * grows as the BDP needs (64 already hold it) */
	ferry__path_plan(&tx, &rx, &pr, false, &pl);
	CU_ASSERT_EQUAL(pl.streams, 4);
	CU_ASSERT_EQUAL(pl.slots, 64);
	CU_ASSERT_PTR_NOT_NULL(strstr(pl.why, "RTT 300 ms, target 2 Gb/s, BDP 71.5 MiB; ring 64 x 4 MiB"));
}

/* CAP_NET_ADMIN on both ends: 4 streams with windows past the sysctls,
 * a socket buffer both ends set. */
static void test_tcp_force(void)
{
	struct ferry_msg_path tx, rx;
	struct ferry_params pr;
	struct ferry__path_plan pl;

	stock(&tx, true);
	tx.buf_flags = FERRY_PATH_FORCE;
	tx.rate_bps = 2000000000;
	defaults(&pr, 0);
	answer(&tx, &rx, 300000, 0);
	rx.buf_flags = FERRY_PATH_FORCE;
	ferry__path_plan(&tx, &rx, &pr, true, &pl);
	CU_ASSERT_EQUAL(pl.streams, 4);
	CU_ASSERT_EQUAL(pl.sockbuf, 93750000 / 4);
	CU_ASSERT_PTR_NOT_NULL(strstr(pl.why, "CAP_NET_ADMIN on both ends"));
}

/* What the user fixed is kept: -P 4 leaves the windows short (and the
 * plan says so), --slots 16 is the ring whatever the BDP. */
static void test_fixed(void)
{
	struct ferry_msg_path tx, rx;
	struct ferry_params pr;
	struct ferry__path_plan pl;

	stock(&tx, true);
	tx.rate_bps = 2000000000;
	tx.fixed = FERRY_FIXED_STREAMS;
	defaults(&pr, 0);
	answer(&tx, &rx, 300000, 0);
	ferry__path_plan(&tx, &rx, &pr, true, &pl);
	CU_ASSERT_EQUAL(pl.streams, 4);
	CU_ASSERT_EQUAL(pl.slots, 64);
	CU_ASSERT_PTR_NOT_NULL(strstr(pl.why, "as asked"));
	CU_ASSERT_PTR_NOT_NULL(strstr(pl.why, "short of the BDP"));

	tx.fixed = FERRY_FIXED_SLOTS;
	pr.slots = 16;
	answer(&tx, &rx, 300000, 0);
	ferry__path_plan(&tx, &rx, &pr, true, &pl);
	CU_ASSERT_EQUAL(pl.streams, 45);
	CU_ASSERT_EQUAL(pl.slots, 45); /* at least one per stream */
	CU_ASSERT_PTR_NOT_NULL(strstr(pl.why, "as asked"));
}

/* A ring the BDP needs past the ring limit: capped, and said. 300 ms at
 * 100 Gb/s wants 1118 slots; 4 GiB hold 1022, 1020 in whole streams. */
static void test_ring_cap(void)
{
	struct ferry_msg_path tx, rx;
	struct ferry_params pr;
	struct ferry__path_plan pl;

	stock(&tx, true);
	tx.rate_bps = 100000000000ull;
	defaults(&pr, 0);
	answer(&tx, &rx, 300000, 0);
	ferry__path_plan(&tx, &rx, &pr, false, &pl);
	CU_ASSERT_EQUAL(pl.ring_want, 1118);
	CU_ASSERT_EQUAL(pl.slots, (4ull << 30) / STRIDE / 4 * 4);
	CU_ASSERT_PTR_NOT_NULL(strstr(pl.why, "capped by the ring limit, 4 GiB; raise --max-mem"));
	/* the lower of the two ends' limits */
	tx.mem_max = 256 * MIB;
	ferry__path_plan(&tx, &rx, &pr, false, &pl);
	CU_ASSERT_EQUAL(pl.slots, 256 * MIB / STRIDE / 4 * 4);
}

/* A small session needs neither the streams nor the ring the path
 * would: no more than one of each per chunk, above the floor. */
static void test_small_total(void)
{
	struct ferry_msg_path tx, rx;
	struct ferry_params pr;
	struct ferry__path_plan pl;

	stock(&tx, true);
	tx.rate_bps = 2000000000;
	defaults(&pr, 10 * MIB); /* 3 chunks */
	pr.slots = 4;            /* what ferry_send asks for it */
	answer(&tx, &rx, 300000, 0);
	ferry__path_plan(&tx, &rx, &pr, true, &pl);
	CU_ASSERT_EQUAL(pl.streams, 4);
	CU_ASSERT_EQUAL(pl.slots, 4);
	defaults(&pr, 400 * MIB); /* 100 chunks */
	ferry__path_plan(&tx, &rx, &pr, true, &pl);
	CU_ASSERT_EQUAL(pl.streams, 45);
	CU_ASSERT_EQUAL(pl.slots, 90);
}

/* No target (loopback: no NIC speed, no --rate): the defaults, said. The
 * RTT is the receiver's, else the sender's sample. */
static void test_no_target(void)
{
	struct ferry_msg_path tx, rx;
	struct ferry_params pr;
	struct ferry__path_plan pl;

	stock(&tx, true);
	tx.rtt_us = 40;
	defaults(&pr, 0);
	answer(&tx, &rx, 0, 0);
	CU_ASSERT_EQUAL(rx.rtt_us, 40);
	CU_ASSERT_EQUAL(rx.rate_bps, 0);
	ferry__path_plan(&tx, &rx, &pr, true, &pl);
	CU_ASSERT_EQUAL(pl.streams, FERRY_DEFAULT_STREAMS);
	CU_ASSERT_EQUAL(pl.slots, FERRY_DEFAULT_SLOTS);
	CU_ASSERT_EQUAL(pl.sockbuf, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(pl.why, "RTT 0.04 ms, no target rate"));
	/* a sender's rate cap is a target even where no NIC says one */
	tx.rate_bps = 1000000000;
	answer(&tx, &rx, 120000, 0);
	CU_ASSERT_EQUAL(rx.rtt_us, 120000);
	CU_ASSERT_EQUAL(rx.rate_bps, 1000000000);
}

int main(void)
{
	CU_TestInfo tests[] = {
		{ "300 ms, 2 Gb/s, stock hosts", test_tcp_long_fat },
		{ "CAP_NET_ADMIN on both ends", test_tcp_force },
		{ "fixed streams or slots", test_fixed },
		{ "the ring limit", test_ring_cap },
		{ "a small session", test_small_total },
		{ "no target rate", test_no_target },
		CU_TEST_INFO_NULL,
	};

	return ferry_cu_run("path_plan", tests);
}
