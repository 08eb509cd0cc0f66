/* The sizing rule (lib/xport/tcp/tcp_plan.h): streams, buffers and ring
 * for a path, from its RTT, a target rate and each end's window limits,
 * read from the fake hosts of tests/unit/data/doctor. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu.h"
#include "xport/tcp/tcp_plan.h"

static char root[4096];

static void limits(const char *tree, struct ferry__tcp_limits *l)
{
	const char *data = getenv("FERRY_TEST_DATA");

	snprintf(root, sizeof(root), "%s/doctor/%s", data ? data : ".", tree);
	ferry__tcp_limits_read(root, l);
}

static void test_read(void)
{
	struct ferry__tcp_limits l;

	limits("bad", &l); /* Debian's defaults: 208 KiB, 6 MiB, 4 MiB */
	CU_ASSERT_TRUE(l.known);
	CU_ASSERT_EQUAL(l.rmem_max, 212992);
	CU_ASSERT_EQUAL(l.wmem_max, 212992);
	CU_ASSERT_EQUAL(l.tcp_rmem_max, 6291456);
	CU_ASSERT_EQUAL(l.tcp_wmem_max, 4194304);
	CU_ASSERT_FALSE(l.force);
	limits("good", &l);
	CU_ASSERT_EQUAL(l.tcp_rmem_max, 1073741824);
	CU_ASSERT_FALSE(l.force);
	limits("capable", &l); /* no sysctls there: the defaults; CapEff */
	CU_ASSERT_FALSE(l.known);
	CU_ASSERT_EQUAL(l.tcp_rmem_max, 6u << 20);
	CU_ASSERT_TRUE(l.force);
}

/* 300 ms at 2 Gb/s between two stock hosts: BDP 75 MB; a stream's
 * window is 2 MiB (half of tcp_wmem's 4 MiB on the sender), so 45
 * streams cover BDP x 5/4, each within autotuning's reach. */
static void test_long_fat_stock(void)
{
	struct ferry__tcp_limits l;
	struct ferry__tcp_plan p;

	limits("bad", &l);
	ferry__tcp_plan(0.300, 2e9, &l, &l, 0, 0, 0, &p);
	CU_ASSERT_EQUAL(p.bdp, 75000000);
	CU_ASSERT_EQUAL(p.want, 93750000);
	CU_ASSERT_EQUAL(p.streams, 45);
	CU_ASSERT(p.window <= 2097152 && p.window * 45 >= p.want);
	CU_ASSERT_EQUAL(p.sockbuf, 0); /* autotuning reaches it */
	CU_ASSERT(p.covered >= p.bdp);
	CU_ASSERT_EQUAL(p.ring, p.want);
	CU_ASSERT_PTR_NOT_NULL(strstr(p.why, "RTT 300 ms, target 2 Gb/s, BDP 72 MiB: 45 streams x 2 MiB (tcp_rmem max 6 MiB; no CAP_NET_ADMIN)"));
	CU_ASSERT_PTR_NULL(strstr(p.why, "short"));
}

/* Hosts tuned for 1 GiB buffers: the floor of 4 streams covers the BDP,
 * and autotuning (up to 512 MiB windows here) reaches each share. */
static void test_tuned_hosts(void)
{
	struct ferry__tcp_limits l;
	struct ferry__tcp_plan p;

	limits("good", &l);
	ferry__tcp_plan(0.300, 2e9, &l, &l, 0, 0, 0, &p);
	CU_ASSERT_EQUAL(p.streams, FERRY__PLAN_MIN_STREAMS);
	CU_ASSERT_EQUAL(p.window, (93750000 + 3) / 4);
	CU_ASSERT_EQUAL(p.sockbuf, 0);
	/* a short path: the floor, autotuning */
	ferry__tcp_plan(0.0001, 10e9, &l, &l, 0, 0, 0, &p);
	CU_ASSERT_EQUAL(p.streams, FERRY__PLAN_MIN_STREAMS);
	CU_ASSERT_EQUAL(p.bdp, 125000);
	CU_ASSERT_EQUAL(p.sockbuf, 0);
}

/* CAP_NET_ADMIN at both ends of stock sysctls: fewer streams, buffers
 * set past the sysctls. */
static void test_force(void)
{
	struct ferry__tcp_limits l;
	struct ferry__tcp_plan p;

	limits("capable", &l);
	ferry__tcp_plan(0.300, 2e9, &l, &l, 0, 0, 0, &p);
	CU_ASSERT_EQUAL(p.streams, FERRY__PLAN_MIN_STREAMS);
	CU_ASSERT_EQUAL(p.sockbuf, p.window);
	CU_ASSERT(p.window > (6u << 20) / 2);
	CU_ASSERT_PTR_NOT_NULL(strstr(p.why, "CAP_NET_ADMIN on both ends"));
}

/* What the user asked for wins, and the plan says what it leaves short;
 * the memory budget bounds the streams. */
static void test_explicit_and_budget(void)
{
	struct ferry__tcp_limits l;
	struct ferry__tcp_plan p;

	limits("bad", &l);
	ferry__tcp_plan(0.300, 2e9, &l, &l, 4, 0, 0, &p);
	CU_ASSERT_EQUAL(p.streams, 4);
	CU_ASSERT_EQUAL(p.window, 2097152);
	CU_ASSERT_PTR_NOT_NULL(strstr(p.why, "as asked"));
	CU_ASSERT_PTR_NOT_NULL(strstr(p.why, "short of the BDP: about 0.224 Gb/s"));
	ferry__tcp_plan(0.300, 2e9, &l, &l, 0, 1 << 20, 0, &p);
	CU_ASSERT_EQUAL(p.sockbuf, 1 << 20);
	CU_ASSERT_EQUAL(p.streams, FERRY__PLAN_MAX_STREAMS);
	CU_ASSERT(p.covered < p.bdp);
	/* 64 MiB of buffers: 2 x 2 MiB per stream, 16 streams */
	ferry__tcp_plan(0.300, 2e9, &l, &l, 0, 0, 64 << 20, &p);
	CU_ASSERT_EQUAL(p.streams, 16);
	CU_ASSERT_PTR_NOT_NULL(strstr(p.why, "short of the BDP"));
}

int main(void)
{
	CU_TestInfo tests[] = {
		{ "limits from a host's sysctls and capabilities", test_read },
		{ "300 ms, 2 Gb/s, stock hosts", test_long_fat_stock },
		{ "tuned hosts, a short path", test_tuned_hosts },
		{ "CAP_NET_ADMIN", test_force },
		{ "explicit -P and --sockbuf, the budget", test_explicit_and_budget },
		CU_TEST_INFO_NULL,
	};

	return ferry_cu_run("tcp_plan", tests);
}
