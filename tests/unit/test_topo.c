#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu.h"
#include "ferry/topo.h"

/* A fake sysfs tree under $FERRY_TEST_DATA/topo (see its README). */
static const char *tree(const char *name)
{
	static char paths[4][PATH_MAX];
	static unsigned next;
	char *path = paths[next++ % 4];
	const char *data = getenv("FERRY_TEST_DATA");

	snprintf(path, PATH_MAX, "%s/topo/%s", data ? data : "tests/unit/data",
		 name);
	return path;
}

static struct ferry_place_attr attr_in(const char *name)
{
	struct ferry_place_attr a = { .sysroot = tree(name), .numa_node = -1 };

	return a;
}

static void test_cpulist_parse(void)
{
	int cpus[16];

	CU_ASSERT_EQUAL(ferry_cpulist_parse("0-3,8,10-11", cpus, 16), 7);
	CU_ASSERT(cpus[0] == 0 && cpus[3] == 3 && cpus[4] == 8 &&
		  cpus[5] == 10 && cpus[6] == 11);
	CU_ASSERT_EQUAL(ferry_cpulist_parse("5", cpus, 16), 1);
	CU_ASSERT_EQUAL(cpus[0], 5);
	CU_ASSERT_EQUAL(ferry_cpulist_parse("", cpus, 16), 0);
	CU_ASSERT_EQUAL(ferry_cpulist_parse("0-1\n", cpus, 16), 2); /* sysfs */
	/* Sorted, duplicates dropped. */
	CU_ASSERT_EQUAL(ferry_cpulist_parse("9,2-3,3,2", cpus, 16), 3);
	CU_ASSERT(cpus[0] == 2 && cpus[1] == 3 && cpus[2] == 9);

	CU_ASSERT_EQUAL(ferry_cpulist_parse("3-1", cpus, 16), -EINVAL);
	CU_ASSERT_EQUAL(ferry_cpulist_parse("a", cpus, 16), -EINVAL);
	CU_ASSERT_EQUAL(ferry_cpulist_parse("1,,2", cpus, 16), -EINVAL);
	CU_ASSERT_EQUAL(ferry_cpulist_parse("1,", cpus, 16), -EINVAL);
	CU_ASSERT_EQUAL(ferry_cpulist_parse(",1", cpus, 16), -EINVAL);
	CU_ASSERT_EQUAL(ferry_cpulist_parse("-1", cpus, 16), -EINVAL);
	CU_ASSERT_EQUAL(ferry_cpulist_parse("1-", cpus, 16), -EINVAL);
	CU_ASSERT_EQUAL(ferry_cpulist_parse("1 2", cpus, 16), -EINVAL);
	CU_ASSERT_EQUAL(ferry_cpulist_parse("0-7:2", cpus, 16), -EINVAL);
	CU_ASSERT_EQUAL(ferry_cpulist_parse(NULL, cpus, 16), -EINVAL);

	/* Overflow: a number no int holds, and more CPUs than fit. */
	CU_ASSERT_EQUAL(ferry_cpulist_parse("99999999999999999999", cpus, 16),
			-EINVAL);
	CU_ASSERT_EQUAL(ferry_cpulist_parse("0-4294967296", cpus, 16), -EINVAL);
	CU_ASSERT_EQUAL(ferry_cpulist_parse("0-16", cpus, 16), -E2BIG);
	CU_ASSERT_EQUAL(ferry_cpulist_parse("0-15", cpus, 16), 16);
	CU_ASSERT_EQUAL(ferry_cpulist_parse("0", NULL, 0), -E2BIG);
}

/* --cpus: only CPUs this process may run on. */
static void test_cpulist_check(void)
{
	cpu_set_t set;
	char why[256] = "", list[16];
	int first = -1;

	CU_ASSERT_EQUAL_FATAL(sched_getaffinity(0, sizeof(set), &set), 0);
	for (int c = 0; c < CPU_SETSIZE && first < 0; c++)
		if (CPU_ISSET(c, &set))
			first = c;
	CU_ASSERT_FATAL(first >= 0);
	snprintf(list, sizeof(list), "%d", first);
	CU_ASSERT_EQUAL(ferry_cpulist_check(list, why, sizeof(why)), 1);
	/* no host has CPU 16383 in its set (the most the parser takes) */
	CU_ASSERT_EQUAL(ferry_cpulist_check("16383", why, sizeof(why)),
			-EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "names CPU 16383, which this "
					   "process cannot run on (it may use "
					   "CPUs "));
	snprintf(list, sizeof(list), "%d,16383", first);
	CU_ASSERT_EQUAL(ferry_cpulist_check(list, why, sizeof(why)), -EINVAL);
	CU_ASSERT_EQUAL(ferry_cpulist_check("a-b", why, sizeof(why)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "malformed"));
	CU_ASSERT_EQUAL(ferry_cpulist_check("", why, sizeof(why)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "names no CPUs"));
}

static void test_node_cpus(void)
{
	int cpus[FERRY_TOPO_MAX_CPUS];

	CU_ASSERT_EQUAL(ferry_topo_node_cpus(tree("two_nodes"), 1, cpus,
					     FERRY_TOPO_MAX_CPUS), 4);
	CU_ASSERT(cpus[0] == 4 && cpus[3] == 7);
	CU_ASSERT_EQUAL(ferry_topo_node_cpus(tree("two_nodes"), 2, cpus,
					     FERRY_TOPO_MAX_CPUS), -ENOENT);
	CU_ASSERT_EQUAL(ferry_topo_node_cpus(tree("no_numa"), 0, cpus,
					     FERRY_TOPO_MAX_CPUS), -ENOENT);
	CU_ASSERT_EQUAL(ferry_topo_node_cpus(tree("two_nodes"), -1, cpus,
					     FERRY_TOPO_MAX_CPUS), -EINVAL);
}

static void test_netdev_node(void)
{
	const char *two = tree("two_nodes");

	CU_ASSERT_EQUAL(ferry_topo_netdev_node(two, "eth0"), 0);
	CU_ASSERT_EQUAL(ferry_topo_netdev_node(two, "eth1"), 1);
	CU_ASSERT_EQUAL(ferry_topo_netdev_node(two, "veth0"), -ENOENT);
	/* virtio: the node is on the PCI function above the device. */
	CU_ASSERT_EQUAL(ferry_topo_netdev_node(two, "virtio0"), 1);
	CU_ASSERT_EQUAL(ferry_topo_netdev_node(two, "eth9"), -ENODEV);
	CU_ASSERT_EQUAL(ferry_topo_netdev_node(two, "../net/eth0"), -EINVAL);
	CU_ASSERT_EQUAL(ferry_topo_netdev_node(two, ""), -EINVAL);
	CU_ASSERT_EQUAL(ferry_topo_netdev_node(tree("no_numa"), "eth0"),
			-ENOENT);
}

static void test_ibdev_node(void)
{
	struct ferry_place_attr a = attr_in("two_nodes");
	struct ferry_placement pl;

	CU_ASSERT_EQUAL(ferry_topo_ibdev_node(a.sysroot, "mlx5_0"), 1);
	CU_ASSERT_EQUAL(ferry_topo_ibdev_node(a.sysroot, "rxe0"), -ENOENT);
	CU_ASSERT_EQUAL(ferry_topo_ibdev_node(a.sysroot, "mlx5_9"), -ENODEV);
	CU_ASSERT_EQUAL(ferry_topo_ibdev_node(tree("no_numa"), "mlx5_0"),
			-ENOENT);

	/* The RDMA device wins over the NIC. */
	a.ifname = "eth0";
	a.ibdev = "mlx5_0";
	CU_ASSERT_EQUAL(ferry_topo_place(&a, &pl), 0);
	CU_ASSERT_EQUAL(pl.node, 1);
	CU_ASSERT_EQUAL(pl.ncpus, 4);
	CU_ASSERT_STRING_EQUAL(pl.why,
		"RDMA device mlx5_0 is on NUMA node 1; pinning to its cores 4-7");
}

static void test_place_nic_node(void)
{
	struct ferry_place_attr a = attr_in("two_nodes");
	struct ferry_placement pl;

	a.ifname = "eth1";
	CU_ASSERT_EQUAL(ferry_topo_place(&a, &pl), 0);
	CU_ASSERT_EQUAL(pl.node, 1);
	CU_ASSERT_EQUAL(pl.ncpus, 4);
	CU_ASSERT(pl.cpus[0] == 4 && pl.cpus[1] == 5 && pl.cpus[2] == 6 &&
		  pl.cpus[3] == 7);
	CU_ASSERT_STRING_EQUAL(pl.why,
		"NIC eth1 is on NUMA node 1; pinning to its cores 4-7");
}

static void test_place_no_numa(void)
{
	struct ferry_place_attr a = attr_in("no_numa");
	struct ferry_placement pl;

	a.ifname = "eth0";
	CU_ASSERT_EQUAL(ferry_topo_place(&a, &pl), 0);
	CU_ASSERT_EQUAL(pl.node, -1);
	CU_ASSERT_EQUAL(pl.ncpus, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(pl.why, "eth0 has no NUMA information"));
	CU_ASSERT_PTR_NOT_NULL(strstr(pl.why, "threads not pinned"));

	/* No device at all. */
	a.ifname = NULL;
	CU_ASSERT_EQUAL(ferry_topo_place(&a, &pl), 0);
	CU_ASSERT_EQUAL(pl.ncpus, 0);
	CU_ASSERT_EQUAL(pl.node, -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(pl.why, "threads not pinned"));
}

static void test_place_virtual_nic(void)
{
	struct ferry_place_attr a = attr_in("two_nodes");
	struct ferry_placement pl;

	CU_ASSERT_EQUAL(ferry_topo_netdev_node(a.sysroot, "veth0"), -ENOENT);
	a.ifname = "veth0";
	CU_ASSERT_EQUAL(ferry_topo_place(&a, &pl), 0);
	CU_ASSERT_EQUAL(pl.node, -1);
	CU_ASSERT_EQUAL(pl.ncpus, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(pl.why, "veth0 has no NUMA information"));
	CU_ASSERT_PTR_NOT_NULL(strstr(pl.why, "virtual NIC"));

	/* A NIC that is not there is not an error for placement. */
	a.ifname = "eth9";
	CU_ASSERT_EQUAL(ferry_topo_place(&a, &pl), 0);
	CU_ASSERT_EQUAL(pl.ncpus, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(pl.why, "eth9 not found"));
}

static void test_place_user(void)
{
	struct ferry_place_attr a = attr_in("two_nodes");
	struct ferry_placement pl;
	char list[4096];
	size_t off = 0;

	/* The user's CPUs win; buffers follow the NIC's node. */
	a.ifname = "eth1";
	a.cpulist = "3,2";	/* written back sorted, kernel style */
	CU_ASSERT_EQUAL(ferry_topo_place(&a, &pl), 0);
	CU_ASSERT_EQUAL(pl.ncpus, 2);
	CU_ASSERT(pl.cpus[0] == 2 && pl.cpus[1] == 3);
	CU_ASSERT_EQUAL(pl.node, 1);
	CU_ASSERT_STRING_EQUAL(pl.why,
		"user CPU list 2-3; buffers on NUMA node 1 of NIC eth1");

	/* ... or the user's node. */
	a.numa_node = 0;
	CU_ASSERT_EQUAL(ferry_topo_place(&a, &pl), 0);
	CU_ASSERT_EQUAL(pl.node, 0);
	CU_ASSERT_EQUAL(pl.ncpus, 2);

	/* The user's node alone: its cores. */
	a.cpulist = NULL;
	CU_ASSERT_EQUAL(ferry_topo_place(&a, &pl), 0);
	CU_ASSERT_EQUAL(pl.node, 0);
	CU_ASSERT_EQUAL(pl.ncpus, 4);
	CU_ASSERT(pl.cpus[0] == 0 && pl.cpus[3] == 3);

	/* A user list with no NUMA information: unbound buffers. */
	a = attr_in("no_numa");
	a.ifname = "eth0";
	a.cpulist = "1";
	CU_ASSERT_EQUAL(ferry_topo_place(&a, &pl), 0);
	CU_ASSERT_EQUAL(pl.ncpus, 1);
	CU_ASSERT_EQUAL(pl.node, -1);

	a.cpulist = "1-x";
	CU_ASSERT_EQUAL(ferry_topo_place(&a, &pl), -EINVAL);
	CU_ASSERT_EQUAL(pl.ncpus, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(pl.why, "malformed"));
	a.cpulist = "";
	CU_ASSERT_EQUAL(ferry_topo_place(&a, &pl), -EINVAL);
	a.cpulist = "0-2000";
	CU_ASSERT_EQUAL(ferry_topo_place(&a, &pl), -EINVAL);

	/* A long list is cut short in why, not overflowed. */
	for (int c = 0; c < FERRY_TOPO_MAX_CPUS; c += 2)
		off += (size_t)snprintf(list + off, sizeof(list) - off, "%s%d",
					c ? "," : "", c);
	a.cpulist = list;
	CU_ASSERT_EQUAL(ferry_topo_place(&a, &pl), 0);
	CU_ASSERT_EQUAL(pl.ncpus, FERRY_TOPO_MAX_CPUS / 2);
	CU_ASSERT(strlen(pl.why) < sizeof(pl.why));
	CU_ASSERT_PTR_NOT_NULL(strstr(pl.why, "user CPU list 0,2,4,"));
	CU_ASSERT_PTR_NOT_NULL(strstr(pl.why, "..."));
}

static void test_pin_self(void)
{
	struct ferry_placement pl = { .node = -1 };
	cpu_set_t old, now;
	int cpu = -1;

	CU_ASSERT_EQUAL(ferry_topo_pin_self(&pl, 3), 0); /* nothing to do */
	CU_ASSERT_EQUAL_FATAL(
		pthread_getaffinity_np(pthread_self(), sizeof(old), &old), 0);
	for (int c = CPU_SETSIZE - 1; c >= 0; c--)
		if (CPU_ISSET(c, &old))
			cpu = c;
	CU_ASSERT_FATAL(cpu >= 0);
	pl.ncpus = 1;
	pl.cpus[0] = cpu;
	CU_ASSERT_EQUAL(ferry_topo_pin_self(&pl, 5), 0);
	CU_ASSERT_EQUAL(pthread_getaffinity_np(pthread_self(), sizeof(now), &now),
			0);
	CU_ASSERT_EQUAL(CPU_COUNT(&now), 1);
	CU_ASSERT(CPU_ISSET(cpu, &now));
	pthread_setaffinity_np(pthread_self(), sizeof(old), &old);
}

static void test_route(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6 };
	char ifname[FERRY_IFNAMSIZ];
	int r;

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CU_ASSERT_EQUAL(ferry_topo_route_netdev((struct sockaddr *)&sin,
						sizeof(sin), ifname), 0);
	CU_ASSERT_STRING_EQUAL(ifname, "lo");
	CU_ASSERT_EQUAL(ferry_topo_route_netdev((struct sockaddr *)&sin,
						sizeof(sin) - 1, ifname),
			-EINVAL);

	sin6.sin6_addr = in6addr_loopback;
	r = ferry_topo_route_netdev((struct sockaddr *)&sin6, sizeof(sin6),
				    ifname);
	if (r == -EAFNOSUPPORT || r == -EADDRNOTAVAIL || r == -ENETUNREACH)
		printf("\n  skipped ::1: no IPv6 loopback here (%s)\n",
		       strerror(-r));
	else {
		CU_ASSERT_EQUAL(r, 0);
		if (r == 0)
			CU_ASSERT_STRING_EQUAL(ifname, "lo");
	}
}

int main(void)
{
	CU_TestInfo tests[] = {
		{ "cpulist_parse", test_cpulist_parse },
		{ "cpulist_check", test_cpulist_check },
		{ "node_cpus", test_node_cpus },
		{ "netdev_node", test_netdev_node },
		{ "ibdev_node", test_ibdev_node },
		{ "place_nic_node", test_place_nic_node },
		{ "place_no_numa", test_place_no_numa },
		{ "place_virtual_nic", test_place_virtual_nic },
		{ "place_user", test_place_user },
		{ "pin_self", test_pin_self },
		{ "route", test_route },
		CU_TEST_INFO_NULL,
	};
	return ferry_cu_run("topo", tests);
}
