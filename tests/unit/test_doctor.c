/* ferry doctor on fake hosts (tests/unit/data/doctor, see its README):
 * each check passes on the tuned host, warns or fails on the badly tuned
 * one, and says INFO where a virtual machine cannot tell. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu.h"
#include "ferry/doctor.h"
#include "ferry/xport.h"

static struct ferry_check checks[FERRY_DOCTOR_MAX_CHECKS];
static size_t nchecks;

static const char *tree(const char *name)
{
	static char path[PATH_MAX];
	const char *data = getenv("FERRY_TEST_DATA");

	snprintf(path, sizeof(path), "%s/doctor/%s",
		 data ? data : "tests/unit/data", name);
	return path;
}

static int run_ex(const char *name, const char *netdev, double rtt,
		  double rate)
{
	struct ferry_doctor_attr a = {
		.root = tree(name),
		.netdev = netdev,
		.rtt_ms = rtt,
		.rate_gbps = rate,
	};

	return ferry_doctor_run(&a, checks, FERRY_DOCTOR_MAX_CHECKS, &nchecks);
}

static int run(const char *name, const char *netdev)
{
	return run_ex(name, netdev, 0, 0);
}

static const struct ferry_check *find(const char *name)
{
	for (size_t i = 0; i < nchecks; i++)
		if (!strcmp(checks[i].name, name))
			return &checks[i];
	return NULL;
}

static unsigned count(enum ferry_check_status st)
{
	unsigned n = 0;

	for (size_t i = 0; i < nchecks; i++)
		n += checks[i].status == st;
	return n;
}

static void dump(void)
{
	for (size_t i = 0; i < nchecks; i++)
		fprintf(stderr, "  %s %-34s %s | %s\n",
			ferry_check_status_name(checks[i].status),
			checks[i].name, checks[i].value, checks[i].fix);
}

/* The check exists with this status, and its value (or, with fix, its fix)
 * contains text. */
#define EXPECT(name, st, text)                                               \
	do {                                                                 \
		const struct ferry_check *c_ = find(name);                   \
		CU_ASSERT_PTR_NOT_NULL(c_);                                  \
		if (!c_) {                                                   \
			fprintf(stderr, "\nno check '%s'\n", name);          \
			dump();                                              \
			break;                                               \
		}                                                            \
		CU_ASSERT_EQUAL(c_->status, st);                             \
		CU_ASSERT_PTR_NOT_NULL(strstr(c_->value, text));             \
		if (c_->status != (st) || !strstr(c_->value, text))          \
			fprintf(stderr, "\n%s: %s: '%s'\n", name,            \
				ferry_check_status_name(c_->status),         \
				c_->value);                                  \
	} while (0)

#define EXPECT_FIX(name, text)                                               \
	do {                                                                 \
		const struct ferry_check *c_ = find(name);                   \
		CU_ASSERT(c_ && strstr(c_->fix, text));                      \
		if (c_ && !strstr(c_->fix, text))                            \
			fprintf(stderr, "\n%s fix: '%s'\n", name, c_->fix);  \
	} while (0)

static void test_good_host_passes(void)
{
	CU_ASSERT_EQUAL(run("good", NULL), 0);
	CU_ASSERT_EQUAL(count(FERRY_CHECK_WARN), 0);
	CU_ASSERT_EQUAL(count(FERRY_CHECK_FAIL), 0);
	if (count(FERRY_CHECK_WARN) || count(FERRY_CHECK_FAIL))
		dump();
	EXPECT("bdp", FERRY_CHECK_INFO, "100 Gb/s (port speed of ens1f0np0)");
	EXPECT("rdma", FERRY_CHECK_PASS, "mlx5_0 (ens1f0np0)");
	EXPECT("mlx5_0/1 state", FERRY_CHECK_PASS, "ACTIVE, Ethernet");
	EXPECT("mlx5_0/1 gid", FERRY_CHECK_PASS, "4 GIDs, 2 RoCE v2 (index 1, 3)");
	EXPECT("mlx5_0/1 roce mtu", FERRY_CHECK_PASS, "RoCE MTU 4096");
	EXPECT("ens1f0np0 link", FERRY_CHECK_PASS, "up, 100 Gb/s");
	EXPECT("ens1f0np0 numa", FERRY_CHECK_PASS, "node 1 (cpus 8-15)");
	EXPECT("ens1f0np0 pcie", FERRY_CHECK_PASS, "16 GT/s x16 = 252 Gb/s");
	EXPECT("ens1f0np0 pcie link", FERRY_CHECK_PASS, "maximum");
	/* 100-102 from msi_irqs, 103 by its PCI address in /proc/interrupts */
	EXPECT("ens1f0np0 irq", FERRY_CHECK_PASS, "4 IRQs, all on node 1");
	EXPECT("eno1 link", FERRY_CHECK_PASS, "up, 1 Gb/s");
	EXPECT("eno1 mtu", FERRY_CHECK_PASS, "9000");
	EXPECT("eno1 numa", FERRY_CHECK_PASS, "node 0 (cpus 0-7)");
	EXPECT("eno1 pcie", FERRY_CHECK_PASS, "2.5 GT/s x1 = 2 Gb/s");
	/* IRQ 120 by the netdev's name; 121 ("veno10") is not eno1's */
	EXPECT("eno1 irq", FERRY_CHECK_PASS, "1 IRQ, all on node 0");
	EXPECT("hugepages", FERRY_CHECK_PASS, "1024 x 2 MiB");
	EXPECT("thp", FERRY_CHECK_PASS, "madvise");
	EXPECT("memlock", FERRY_CHECK_PASS, "unlimited");
	EXPECT("open files", FERRY_CHECK_PASS, "soft 1024, hard 524288 (ferry raises");
	EXPECT("net.core.rmem_max", FERRY_CHECK_PASS, "1 GiB");
	EXPECT("net.core.wmem_max", FERRY_CHECK_PASS, "1 GiB");
	EXPECT("net.ipv4.tcp_rmem", FERRY_CHECK_PASS, "max 1 GiB");
	EXPECT("net.ipv4.tcp_wmem", FERRY_CHECK_PASS, "max 1 GiB");
	EXPECT("net.ipv4.tcp_congestion_control", FERRY_CHECK_PASS, "bbr");
	EXPECT("net.ipv4.tcp_slow_start_after_idle", FERRY_CHECK_PASS, "0");
	EXPECT("net.ipv4.tcp_mtu_probing", FERRY_CHECK_PASS, "1");
	EXPECT("cpu governor", FERRY_CHECK_PASS, "performance on all 16 CPUs");
	/* Virtual netdevs (no device link) are not NICs to tune. */
	CU_ASSERT_PTR_NULL(find("lo link"));
	CU_ASSERT_PTR_NULL(find("veth0 link"));
	/* A RoCE NIC's MTU is judged as the RoCE MTU, once. */
	CU_ASSERT_PTR_NULL(find("ens1f0np0 mtu"));
}

static void test_bad_host_warns(void)
{
	CU_ASSERT_EQUAL(run("bad", NULL), 0);
	EXPECT("rdma", FERRY_CHECK_PASS, "mlx5_2 (no netdev)");
	EXPECT("mlx5_0/1 state", FERRY_CHECK_WARN, "DOWN");
	EXPECT_FIX("mlx5_0/1 state", "ip link set ens1f0np0 up");
	EXPECT("mlx5_0/1 gid", FERRY_CHECK_WARN, "no GID: ens1f0np0 has no IP address");
	EXPECT_FIX("mlx5_0/1 gid", "ip addr add");
	EXPECT("mlx5_0/1 roce mtu", FERRY_CHECK_WARN, "mtu 1500 -> RoCE MTU 1024");
	EXPECT_FIX("mlx5_0/1 roce mtu", "ip link set ens1f0np0 mtu 9000");
	EXPECT("mlx5_1/1 state", FERRY_CHECK_PASS, "ACTIVE");
	EXPECT("mlx5_1/1 gid", FERRY_CHECK_WARN, "2 GIDs, none RoCE v2");
	EXPECT("mlx5_2/1 state", FERRY_CHECK_WARN, "INIT, InfiniBand");
	EXPECT_FIX("mlx5_2/1 state", "opensm");
	EXPECT("mlx5_2/1 gid", FERRY_CHECK_WARN, "no GID");
	CU_ASSERT_PTR_NULL(find("mlx5_2/1 roce mtu")); /* InfiniBand */
	EXPECT("ens1f0np0 link", FERRY_CHECK_WARN, "down");
	EXPECT("eno1 mtu", FERRY_CHECK_WARN, "1500: no jumbo frames");
	EXPECT_FIX("eno1 mtu", "ip link set eno1 mtu 9000");
	EXPECT("ens1f0np0 numa", FERRY_CHECK_WARN, "unknown on a 2-node host");
	EXPECT("ens1f1np1 pcie", FERRY_CHECK_WARN,
	       "8 GT/s x8 = 63 Gb/s, below the 100 Gb/s port");
	EXPECT("ens1f1np1 pcie link", FERRY_CHECK_WARN,
	       "running 8 GT/s x8, the card can do 16 GT/s x16");
	EXPECT("ens1f1np1 irq", FERRY_CHECK_WARN,
	       "2 of 3 IRQs may run off node 0 (cpus 0-7)");
	EXPECT_FIX("ens1f1np1 irq", "echo 0-7 > /proc/irq/N/smp_affinity_list");
	EXPECT("hugepages", FERRY_CHECK_WARN, "none reserved");
	EXPECT_FIX("hugepages", "echo 1024 > /proc/sys/vm/nr_hugepages");
	EXPECT_FIX("hugepages", "2 x 256 MiB");
	EXPECT("thp", FERRY_CHECK_WARN, "never");
	/* 8 MiB with RDMA devices to use and no CAP_IPC_LOCK. */
	EXPECT("memlock", FERRY_CHECK_FAIL, "8 MiB");
	EXPECT_FIX("memlock", "ulimit -l unlimited");
	EXPECT_FIX("memlock", "LimitMEMLOCK=infinity");
	EXPECT_FIX("memlock", "limits.conf");
	/* a hard limit of 4096 open files */
	EXPECT("open files", FERRY_CHECK_WARN, "hard limit 4096, below the 65536");
	EXPECT_FIX("open files", "LimitNOFILE=1048576");
	EXPECT_FIX("open files", "ulimit -Hn 1048576");
	/* 100 Gb/s x 100 ms = 1.25 GB: one socket holds 1 GiB at most. */
	EXPECT("net.core.rmem_max", FERRY_CHECK_WARN, "208 KiB, below the 1 GiB");
	EXPECT_FIX("net.core.rmem_max", "sysctl -w net.core.rmem_max=1073741824");
	EXPECT("net.core.wmem_max", FERRY_CHECK_WARN, "208 KiB");
	EXPECT_FIX("net.core.wmem_max", "sysctl -w net.core.wmem_max=1073741824");
	EXPECT("net.ipv4.tcp_rmem", FERRY_CHECK_WARN, "max 6 MiB");
	EXPECT_FIX("net.ipv4.tcp_rmem",
		   "sysctl -w net.ipv4.tcp_rmem='4096 131072 1073741824'");
	EXPECT("net.ipv4.tcp_wmem", FERRY_CHECK_WARN, "max 4 MiB");
	EXPECT_FIX("net.ipv4.tcp_wmem",
		   "sysctl -w net.ipv4.tcp_wmem='4096 16384 1073741824'");
	EXPECT("net.ipv4.tcp_congestion_control", FERRY_CHECK_WARN, "reno");
	EXPECT_FIX("net.ipv4.tcp_congestion_control", "modprobe tcp_bbr; sysctl");
	EXPECT("net.ipv4.tcp_slow_start_after_idle", FERRY_CHECK_WARN, "1");
	EXPECT_FIX("net.ipv4.tcp_slow_start_after_idle",
		   "sysctl -w net.ipv4.tcp_slow_start_after_idle=0");
	EXPECT("net.ipv4.tcp_mtu_probing", FERRY_CHECK_INFO, "0: off");
	EXPECT_FIX("net.ipv4.tcp_mtu_probing", "tcp_mtu_probing=1");
	EXPECT("cpu governor", FERRY_CHECK_WARN, "powersave on 12 of 16 CPUs");
	EXPECT_FIX("cpu governor", "cpupower frequency-set -g performance");
	/* Only memlock fails when nothing is named: the rest is speed. */
	CU_ASSERT_EQUAL(count(FERRY_CHECK_FAIL), 1);
}

/* Naming a device makes "it cannot carry traffic" a FAIL. */
static void test_bad_host_named_fails(void)
{
	CU_ASSERT_EQUAL(run("bad", "ens1f0np0"), 0);
	EXPECT("rdma", FERRY_CHECK_PASS, "mlx5_0 (ens1f0np0)");
	EXPECT("mlx5_0/1 state", FERRY_CHECK_FAIL, "DOWN");
	EXPECT("mlx5_0/1 gid", FERRY_CHECK_FAIL, "no GID");
	EXPECT("ens1f0np0 link", FERRY_CHECK_FAIL, "down");
	EXPECT("ens1f0np0 irq", FERRY_CHECK_INFO, "2 IRQs; the NIC's NUMA node");
	EXPECT("ens1f0np0 pcie", FERRY_CHECK_INFO, "port speed unknown");
	CU_ASSERT_PTR_NULL(find("mlx5_1/1 state"));
	CU_ASSERT_PTR_NULL(find("eno1 link"));

	/* An RDMA device by its own name, with no netdev (InfiniBand). */
	CU_ASSERT_EQUAL(run("bad", "mlx5_2"), 0);
	EXPECT("mlx5_2/1 state", FERRY_CHECK_FAIL, "INIT");
	EXPECT("mlx5_2/1 gid", FERRY_CHECK_FAIL, "no GID");

	/* An ACTIVE device named stays a WARN for speed problems. */
	CU_ASSERT_EQUAL(run("bad", "mlx5_1"), 0);
	EXPECT("mlx5_1/1 state", FERRY_CHECK_PASS, "ACTIVE");
	EXPECT("mlx5_1/1 gid", FERRY_CHECK_WARN, "none RoCE v2");
	EXPECT("ens1f1np1 link", FERRY_CHECK_PASS, "up");

	/* A tcp NIC: no RDMA device to register with, memlock only warns. */
	CU_ASSERT_EQUAL(run("bad", "eno1"), 0);
	EXPECT("rdma", FERRY_CHECK_INFO, "no RDMA device on eno1");
	EXPECT("memlock", FERRY_CHECK_WARN, "8 MiB, below the 512 MiB");
	EXPECT("eno1 irq", FERRY_CHECK_INFO, "no IRQs found");
	EXPECT("bdp", FERRY_CHECK_INFO, "1 Gb/s (port speed of eno1)");
	CU_ASSERT_EQUAL(count(FERRY_CHECK_FAIL), 0);

	/* Nothing by that name. */
	CU_ASSERT_EQUAL(run("bad", "eth9"), 0);
	EXPECT("netdev eth9", FERRY_CHECK_FAIL, "no netdev or RDMA device named eth9");
	CU_ASSERT_PTR_NULL(find("rdma"));
	CU_ASSERT_PTR_NOT_NULL(find("hugepages")); /* host checks still run */

	/* A virtual netdev can be named and is then checked. */
	CU_ASSERT_EQUAL(run("good", "lo"), 0);
	EXPECT("lo link", FERRY_CHECK_INFO, "operstate unknown");
	EXPECT("lo mtu", FERRY_CHECK_PASS, "65536");
	EXPECT("lo pcie", FERRY_CHECK_INFO, "no PCIe link information");
}

static void test_vm(void)
{
	CU_ASSERT_EQUAL(run("vm", NULL), 0);
	EXPECT("bdp", FERRY_CHECK_INFO,
	       "119.2 MiB in flight = 10 Gb/s (default) x 100 ms (default)");
	/* the transports this build has that need no RDMA device */
	EXPECT("rdma", FERRY_CHECK_INFO,
	       ferry_xport_find("uroce") ?
		       "no RDMA device: ferry will use uroce (DPDK) or tcp" :
		       "no RDMA device: ferry will use tcp");
	EXPECT_FIX("rdma", ferry_xport_find("verbs") ?
				   "for verbs: load the NIC's RDMA driver" :
				   "load the NIC's RDMA driver");
	EXPECT("eth0 link", FERRY_CHECK_PASS, "up, speed unknown");
	EXPECT("eth0 mtu", FERRY_CHECK_WARN, "1500");
	EXPECT("eth0 numa", FERRY_CHECK_INFO, "unknown");
	EXPECT("eth0 pcie", FERRY_CHECK_INFO, "virtual NIC?");
	/* virtio's IRQs belong to its PCI parent's msi_irqs. */
	EXPECT("eth0 irq", FERRY_CHECK_INFO, "3 IRQs");
	EXPECT("hugepages", FERRY_CHECK_WARN, "200 MiB free, below the 512 MiB");
	EXPECT_FIX("hugepages", "echo 285 > /proc/sys/vm/nr_hugepages");
	EXPECT("thp", FERRY_CHECK_INFO, "no transparent huge pages");
	EXPECT("memlock", FERRY_CHECK_WARN, "64 KiB");
	EXPECT("net.core.rmem_max", FERRY_CHECK_WARN, "below the 119.2 MiB");
	EXPECT_FIX("net.core.rmem_max", "net.core.rmem_max=134217728");
	EXPECT("net.ipv4.tcp_congestion_control", FERRY_CHECK_INFO, "cubic");
	EXPECT_FIX("net.ipv4.tcp_congestion_control", "modprobe tcp_bbr");
	EXPECT("cpu governor", FERRY_CHECK_INFO, "no cpufreq (virtual machine?)");
	CU_ASSERT_PTR_NULL(find("lo link"));
	CU_ASSERT_EQUAL(count(FERRY_CHECK_FAIL), 0);
}

/* A root with only proc/self: root's CAP_IPC_LOCK lifts the limit, and
 * what cannot be read is INFO, never a false alarm. */
static void test_capable_and_unreadable(void)
{
	CU_ASSERT_EQUAL(run("capable", NULL), 0);
	EXPECT("memlock", FERRY_CHECK_PASS, "CAP_IPC_LOCK");
	/* a ConnectX without its RDMA driver: that is worth a WARN */
	EXPECT("rdma", FERRY_CHECK_WARN,
	       "no RDMA device, though ens5np0's driver mlx5_core has one");
	EXPECT("hugepages", FERRY_CHECK_WARN, "no hugetlb pages");
	EXPECT("net.core.rmem_max", FERRY_CHECK_INFO, "unreadable");
	EXPECT("net.ipv4.tcp_rmem", FERRY_CHECK_INFO, "unreadable");
	EXPECT("net.ipv4.tcp_slow_start_after_idle", FERRY_CHECK_INFO, "unreadable");
	EXPECT("cpu governor", FERRY_CHECK_INFO, "no cpufreq");
	CU_ASSERT_EQUAL(count(FERRY_CHECK_FAIL), 0);
}

/* The socket buffers are judged against --rate x --rtt. */
static void test_bdp(void)
{
	CU_ASSERT_EQUAL(run_ex("bad", NULL, 1, 1), 0);
	EXPECT("bdp", FERRY_CHECK_INFO, "122.1 KiB in flight = 1 Gb/s (--rate) x 1 ms (--rtt)");
	CU_ASSERT_STRING_EQUAL(find("bdp")->fix, "");
	/* 122 KiB: three round trips from 4 x 10 segments, nothing to fix */
	EXPECT("tcp ramp", FERRY_CHECK_INFO, "about 6 ms to full rate: 4 round trips of setup, then 2 of slow start");
	CU_ASSERT_STRING_EQUAL(find("tcp ramp")->fix, "");
	EXPECT("net.core.rmem_max", FERRY_CHECK_PASS, "208 KiB, holds the 122.1 KiB");
	EXPECT("net.ipv4.tcp_wmem", FERRY_CHECK_PASS, "max 4 MiB");

	/* 10 Gb/s x 40 ms = 50 MB: 6 MiB is short, 64 MiB suggested. */
	CU_ASSERT_EQUAL(run_ex("bad", NULL, 40, 10), 0);
	EXPECT("net.ipv4.tcp_rmem", FERRY_CHECK_WARN, "below the 47.7 MiB");
	EXPECT_FIX("net.ipv4.tcp_rmem", "'4096 131072 67108864'");

	/* 400 Gb/s x 120 ms (STUDIES.md A): 1 GiB per socket is enough, and
	 * 7 streams of TCP's largest window carry the BDP: more than the
	 * default 4, which ferry plans by itself; nothing to warn of. */
	CU_ASSERT_EQUAL(run_ex("good", NULL, 120, 400), 0);
	EXPECT("bdp", FERRY_CHECK_INFO, "1 GiB per TCP socket at most");
	EXPECT("net.core.rmem_max", FERRY_CHECK_PASS, "1 GiB");
	EXPECT("tcp streams", FERRY_CHECK_PASS, "7 streams x 1022 MiB");
	EXPECT("tcp streams", FERRY_CHECK_PASS, "ferry opens 7 streams by itself");
	CU_ASSERT_EQUAL(count(FERRY_CHECK_WARN), 0);

	/* 300 ms x 2 Gb/s on stock sysctls: 45 streams of 2 MiB windows */
	CU_ASSERT_EQUAL(run_ex("bad", NULL, 300, 2), 0);
	EXPECT("tcp streams", FERRY_CHECK_INFO, "BDP 72 MiB: 45 streams x 2 MiB (tcp_rmem max 6 MiB; no CAP_NET_ADMIN)");
	EXPECT("tcp streams", FERRY_CHECK_INFO, "ferry opens 45 streams by itself on this path (no -P needed)");
	EXPECT_FIX("tcp streams", "the buffer sysctls above would let 4 streams do (with -b 2;");
	EXPECT_FIX("tcp streams", "without -b, ferry plans for the NIC's speed, starts 4 of those streams");
	/* 75 MB from 4 x 14,480 B: 11 doublings; from ten times that, 8 */
	EXPECT("tcp ramp", FERRY_CHECK_INFO, "about 4.5 s to full rate: 4 round trips of setup, then 11 of slow start from 10 segments on each of the 4 streams");
	EXPECT_FIX("tcp ramp", "makes it 8 round trips, 0.9 s sooner");
	EXPECT_FIX("tcp ramp", "ip route change $(ip route show default | head -n 1) initcwnd 100 initrwnd 100");
}

/* Every WARN and FAIL says how to fix it; every result says what it saw. */
static void test_every_problem_has_a_fix(void)
{
	static const char *const trees[] = { "good", "bad", "vm", "capable" };

	for (size_t t = 0; t < sizeof(trees) / sizeof(trees[0]); t++) {
		CU_ASSERT_EQUAL(run(trees[t], NULL), 0);
		CU_ASSERT(nchecks > 5);
		for (size_t i = 0; i < nchecks; i++) {
			const struct ferry_check *c = &checks[i];

			CU_ASSERT(c->name[0] && c->value[0]);
			if (c->status == FERRY_CHECK_WARN ||
			    c->status == FERRY_CHECK_FAIL) {
				CU_ASSERT(c->fix[0] != '\0');
				if (!c->fix[0])
					fprintf(stderr, "\n%s: %s has no fix\n",
						trees[t], c->name);
			}
			if (c->status == FERRY_CHECK_PASS)
				CU_ASSERT_STRING_EQUAL(c->fix, "");
		}
	}
}

static void test_errors(void)
{
	struct ferry_doctor_attr a = { .root = tree("good") };
	struct ferry_check few[3];
	size_t n = 99;

	CU_ASSERT_EQUAL(ferry_doctor_run(NULL, checks, 4, &n), -EINVAL);
	CU_ASSERT_EQUAL(ferry_doctor_run(&a, NULL, 4, &n), -EINVAL);
	CU_ASSERT_EQUAL(ferry_doctor_run(&a, checks, 4, NULL), -EINVAL);
	a.netdev = "../../etc";
	CU_ASSERT_EQUAL(ferry_doctor_run(&a, checks, 4, &n), -EINVAL);
	a.netdev = "";
	CU_ASSERT_EQUAL(ferry_doctor_run(&a, checks, 4, &n), -EINVAL);
	a.netdev = "..";
	CU_ASSERT_EQUAL(ferry_doctor_run(&a, checks, 4, &n), -EINVAL);
	a.netdev = NULL;
	a.root = "/nonexistent/ferry-doctor";
	CU_ASSERT_EQUAL(ferry_doctor_run(&a, checks, 4, &n), -ENOENT);
	CU_ASSERT_EQUAL(n, 0);

	/* Too small an array: the first results, then -ENOSPC. */
	a.root = tree("good");
	CU_ASSERT_EQUAL(ferry_doctor_run(&a, few, 3, &n), -ENOSPC);
	CU_ASSERT_EQUAL(n, 3);
	CU_ASSERT_STRING_EQUAL(few[0].name, "bdp");
	CU_ASSERT_STRING_EQUAL(few[1].name, "rdma");
	CU_ASSERT_EQUAL(ferry_doctor_run(&a, NULL, 0, &n), -ENOSPC);
	CU_ASSERT_EQUAL(n, 0);

	/* Trailing slashes in the root are fine. */
	a.root = tree("good/");
	CU_ASSERT_EQUAL(ferry_doctor_run(&a, checks, FERRY_DOCTOR_MAX_CHECKS,
					 &n), 0);
	CU_ASSERT(n > 20);

	CU_ASSERT_STRING_EQUAL(ferry_check_status_name(FERRY_CHECK_PASS), "pass");
	CU_ASSERT_STRING_EQUAL(ferry_check_status_name(FERRY_CHECK_WARN), "warn");
	CU_ASSERT_STRING_EQUAL(ferry_check_status_name(FERRY_CHECK_FAIL), "fail");
	CU_ASSERT_STRING_EQUAL(ferry_check_status_name(FERRY_CHECK_INFO), "info");
	CU_ASSERT_STRING_EQUAL(ferry_check_status_name((enum ferry_check_status)9), "?");
}

/* The live host: whatever it is, the run completes with the host checks. */
static void test_this_host(void)
{
	struct ferry_doctor_attr a = { 0 };

	CU_ASSERT_EQUAL(ferry_doctor_run(&a, checks, FERRY_DOCTOR_MAX_CHECKS,
					 &nchecks), 0);
	CU_ASSERT_PTR_NOT_NULL(find("rdma"));
	CU_ASSERT_PTR_NOT_NULL(find("hugepages"));
	CU_ASSERT_PTR_NOT_NULL(find("memlock"));
	CU_ASSERT_PTR_NOT_NULL(find("cpu governor"));
}

int main(void)
{
	CU_TestInfo tests[] = {
		{ "good host passes", test_good_host_passes },
		{ "bad host warns", test_bad_host_warns },
		{ "named device fails", test_bad_host_named_fails },
		{ "virtual machine", test_vm },
		{ "CAP_IPC_LOCK, unreadable files", test_capable_and_unreadable },
		{ "bandwidth-delay product", test_bdp },
		{ "every problem has a fix", test_every_problem_has_a_fix },
		{ "errors", test_errors },
		{ "this host", test_this_host },
		CU_TEST_INFO_NULL,
	};

	return ferry_cu_run("doctor", tests);
}
