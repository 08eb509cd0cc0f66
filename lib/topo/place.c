/* Placement: which CPUs worker threads run on and which node holds their
 * buffers, decided from the user's wishes and the device's NUMA node. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "ferry/topo.h"
#include "topo_int.h"
#include "util/util.h"

/* The device placement is decided by: the RDMA device, else the NIC. */
struct dev_info {
	const char *name;  /* NULL: none given */
	const char *label; /* "NIC" or "RDMA device" */
	int node;          /* >= 0, or -errno */
	char why[160];     /* when node < 0: what the device lacks */
};

static void probe_dev(const struct ferry_place_attr *attr, const char *sysroot,
		      struct dev_info *dev)
{
	const char *cls;

	memset(dev, 0, sizeof(*dev));
	dev->node = -ENODEV;
	if (attr->ibdev) {
		dev->name = attr->ibdev;
		dev->label = "RDMA device";
		cls = "infiniband";
	} else if (attr->ifname) {
		dev->name = attr->ifname;
		dev->label = "NIC";
		cls = "net";
	} else {
		return;
	}
	dev->node = ferry__topo_dev_node(sysroot, cls, dev->name, dev->why,
					 sizeof(dev->why));
}

/* Pin to the cores of node; what says how the node was chosen. */
static void place_on_node(struct ferry_placement *out, const char *sysroot,
			  int node, const char *what)
{
	char list[128];
	int n;

	out->node = node;
	n = ferry_topo_node_cpus(sysroot, node, out->cpus, FERRY_TOPO_MAX_CPUS);
	if (n < 0) {
		ferry__why(out->why, sizeof(out->why),
			   "%s, but its CPU list is unreadable (%s); threads not pinned",
			   what, ferry_strerror(n));
		return;
	}
	if (n == 0) {
		ferry__why(out->why, sizeof(out->why),
			   "%s, which has no CPUs; threads not pinned", what);
		return;
	}
	out->ncpus = n;
	ferry__cpulist_format(out->cpus, n, list, sizeof(list));
	ferry__why(out->why, sizeof(out->why), "%s; pinning to its cores %s",
		   what, list);
}

static int place_user_list(const struct ferry_place_attr *attr,
			   const struct dev_info *dev,
			   struct ferry_placement *out)
{
	char list[128];
	int n;

	n = ferry__cpulist_user(attr->cpulist, out->cpus, out->why,
				sizeof(out->why));
	if (n < 0) {
		out->ncpus = 0;
		return -EINVAL;
	}
	out->ncpus = n;
	ferry__cpulist_format(out->cpus, n, list, sizeof(list));
	if (attr->numa_node >= 0) {
		out->node = attr->numa_node;
		ferry__why(out->why, sizeof(out->why),
			   "user CPU list %s; buffers on user NUMA node %d", list,
			   out->node);
	} else if (dev->node >= 0) {
		out->node = dev->node;
		ferry__why(out->why, sizeof(out->why),
			   "user CPU list %s; buffers on NUMA node %d of %s %s",
			   list, out->node, dev->label, dev->name);
	} else {
		ferry__why(out->why, sizeof(out->why),
			   "user CPU list %s; buffers not bound to a NUMA node",
			   list);
	}
	return 0;
}

int ferry_topo_place(const struct ferry_place_attr *attr,
		     struct ferry_placement *out)
{
	const char *sysroot;
	struct dev_info dev;
	char what[96];

	if (!attr || !out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->node = -1;
	if (attr->numa_node < -1)
		return -EINVAL;
	sysroot = attr->sysroot ? attr->sysroot : "/sys";
	probe_dev(attr, sysroot, &dev);

	if (attr->cpulist)
		return place_user_list(attr, &dev, out);
	if (attr->numa_node >= 0) {
		snprintf(what, sizeof(what), "user NUMA node %d",
			 attr->numa_node);
		place_on_node(out, sysroot, attr->numa_node, what);
	} else if (dev.node >= 0) {
		snprintf(what, sizeof(what), "%s %.32s is on NUMA node %d",
			 dev.label, dev.name, dev.node);
		place_on_node(out, sysroot, dev.node, what);
	} else if (dev.name) {
		ferry__why(out->why, sizeof(out->why),
			   "%s %s %s; threads not pinned", dev.label, dev.name,
			   dev.why);
	} else {
		ferry__why(out->why, sizeof(out->why),
			   "no device or CPU list given; threads not pinned");
	}
	return 0;
}

int ferry_topo_pin_self(const struct ferry_placement *pl, unsigned i)
{
	cpu_set_t *set;
	size_t size;
	int cpu, r;

	if (!pl || pl->ncpus < 0 || pl->ncpus > FERRY_TOPO_MAX_CPUS)
		return -EINVAL;
	if (pl->ncpus == 0)
		return 0;
	cpu = pl->cpus[i % (unsigned)pl->ncpus];
	if (cpu < 0)
		return -EINVAL;
	set = CPU_ALLOC(cpu + 1);
	if (!set)
		return -ENOMEM;
	size = CPU_ALLOC_SIZE(cpu + 1);
	CPU_ZERO_S(size, set);
	CPU_SET_S((size_t)cpu, size, set);
	r = pthread_setaffinity_np(pthread_self(), size, set);
	CPU_FREE(set);
	return -r;
}
