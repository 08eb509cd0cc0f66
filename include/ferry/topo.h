/* Topology and placement: which NUMA node holds the NIC that reaches a peer,
 * which cores belong to that node, and pinning worker threads to them.
 *
 * Every function that reads sysfs takes the sysfs root ("/sys" on a real
 * host) so tests can hand it a fake machine.
 */
#ifndef FERRY_TOPO_H
#define FERRY_TOPO_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#define FERRY_TOPO_MAX_CPUS 1024
#define FERRY_IFNAMSIZ 16

/* The network interface the kernel would use to reach peer (IPv4 or IPv6),
 * found by connecting a UDP socket (no packet is sent) and matching the
 * chosen local address against the host's interfaces. Returns 0 or -errno
 * (-ENETUNREACH when there is no route). */
int ferry_topo_route_netdev(const struct sockaddr *peer, socklen_t len,
			    char ifname[FERRY_IFNAMSIZ]);

/* NUMA node of a netdev (SYSROOT/class/net/IF/device/numa_node) or an RDMA
 * device (SYSROOT/class/infiniband/DEV/device/numa_node). Returns the node
 * (>= 0), -ENODEV when the device does not exist, or -ENOENT when the host
 * does not say (virtual NIC without a device link, no NUMA, or -1 in sysfs). */
int ferry_topo_netdev_node(const char *sysroot, const char *ifname);
int ferry_topo_ibdev_node(const char *sysroot, const char *ibdev);

/* Parse a CPU list such as "0-3,8,10-11" into cpus[] (ascending, no
 * duplicates). Returns the number of CPUs, or -EINVAL on a malformed list,
 * or -E2BIG when more than max CPUs are named. */
int ferry_cpulist_parse(const char *list, int *cpus, size_t max);

/* Check a user's CPU list (--cpus): well formed, naming at most
 * FERRY_TOPO_MAX_CPUS CPUs, each one this process may run on. Returns the
 * number of CPUs, or -EINVAL (-E2BIG) with why naming the problem and, for
 * a CPU this host does not have or this process may not use, the CPUs it
 * may ("user CPU list \"99\" names CPU 99, which this process cannot run
 * on (it may use CPUs 0-1)"). */
int ferry_cpulist_check(const char *list, char *why, size_t whylen);

/* CPUs of a NUMA node (SYSROOT/devices/system/node/nodeN/cpulist). Returns
 * the count, or -errno. */
int ferry_topo_node_cpus(const char *sysroot, int node, int *cpus, size_t max);

/* Where worker threads and buffers go. */
struct ferry_placement {
	int node;     /* NUMA node for buffers, -1 = unbound */
	int ncpus;    /* 0 = threads are not pinned */
	int cpus[FERRY_TOPO_MAX_CPUS];
	char why[256]; /* one line saying how this was decided */
};

struct ferry_place_attr {
	const char *sysroot;  /* NULL = "/sys" */
	const char *ifname;   /* netdev that reaches the peer, or NULL */
	const char *ibdev;    /* RDMA device, or NULL; wins over ifname */
	const char *cpulist;  /* user's CPU list, or NULL; wins over topology */
	int numa_node;        /* user's node, or -1 */
};

/* Decide placement: the user's CPU list (its node is the user's node or the
 * device's), else the cores of the device's node, else no pinning. Fills
 * out->why. Returns 0, or -EINVAL for a malformed user CPU list. */
int ferry_topo_place(const struct ferry_place_attr *attr,
		     struct ferry_placement *out);

/* Pin the calling thread to the i-th placement CPU (round-robin). Does
 * nothing and returns 0 when the placement has no CPUs. Returns 0 or
 * -errno. */
int ferry_topo_pin_self(const struct ferry_placement *pl, unsigned i);

#endif
