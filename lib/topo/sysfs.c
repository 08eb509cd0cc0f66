/* Reading the machine's shape from sysfs: device NUMA nodes, node CPUs. */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ferry/topo.h"
#include "topo_int.h"
#include "util/util.h"

static bool valid_name(const char *name)
{
	return name && *name && !strchr(name, '/') && strcmp(name, ".") &&
	       strcmp(name, "..") && strlen(name) < NAME_MAX;
}

/* numa_node of the device at dev (a resolved path), or of its parent: a
 * virtio NIC's device has none, the PCI function above it does. */
static int read_numa_node(char *dev, long *node)
{
	char path[PATH_MAX + 16], buf[32], *end;
	int r;

	snprintf(path, sizeof(path), "%s/numa_node", dev);
	r = ferry__read_text(path, buf, sizeof(buf));
	if (r == -ENOENT) {
		snprintf(path, sizeof(path), "%s/numa_node", dirname(dev));
		r = ferry__read_text(path, buf, sizeof(buf));
	}
	if (r)
		return r;
	errno = 0;
	*node = strtol(buf, &end, 10);
	if (errno || end == buf || (*end && *end != '\n') || *node > INT_MAX)
		return -EIO;
	return 0;
}

int ferry__topo_dev_node(const char *sysroot, const char *cls,
			 const char *name, char *why, size_t why_len)
{
	const char *kind = strcmp(cls, "net") ? "software RDMA device"
					      : "virtual NIC";
	char path[PATH_MAX], dev[PATH_MAX];
	struct stat st;
	long node;
	int r;

	if (!sysroot)
		sysroot = "/sys";
	if (!valid_name(name)) {
		ferry__why(why, why_len, "is not a valid device name");
		return -EINVAL;
	}
	r = snprintf(path, sizeof(path), "%s/class/%s/%s", sysroot, cls, name);
	if (r < 0 || (size_t)r >= sizeof(path) - strlen("/device"))
		return -ENAMETOOLONG;
	if (stat(path, &st) < 0) {
		r = -errno;
		ferry__why(why, why_len, "not found (%s: %s)", path,
			   ferry_strerror(r));
		return r == -ENOENT ? -ENODEV : r;
	}
	strcat(path, "/device");
	if (!realpath(path, dev)) {
		r = -errno;
		if (r == -ENOENT) {
			ferry__why(why, why_len,
				   "has no NUMA information (%s, no %s)", kind,
				   path);
			return -ENOENT;
		}
		ferry__why(why, why_len, "cannot be resolved (%s: %s)", path,
			   ferry_strerror(r));
		return r;
	}
	r = read_numa_node(dev, &node);
	if (r == -ENOENT) {
		ferry__why(why, why_len,
			   "has no NUMA information (its device has no numa_node)");
		return -ENOENT;
	}
	if (r) {
		ferry__why(why, why_len, "has an unreadable numa_node (%s: %s)",
			   dev, ferry_strerror(r));
		return r;
	}
	if (node < 0) {
		ferry__why(why, why_len,
			   "has no NUMA information (numa_node = %ld)", node);
		return -ENOENT;
	}
	return (int)node;
}

int ferry_topo_netdev_node(const char *sysroot, const char *ifname)
{
	return ferry__topo_dev_node(sysroot, "net", ifname, NULL, 0);
}

int ferry_topo_ibdev_node(const char *sysroot, const char *ibdev)
{
	return ferry__topo_dev_node(sysroot, "infiniband", ibdev, NULL, 0);
}

int ferry_topo_node_cpus(const char *sysroot, int node, int *cpus, size_t max)
{
	char path[PATH_MAX], buf[8192];
	int r;

	if (node < 0)
		return -EINVAL;
	if (!sysroot)
		sysroot = "/sys";
	r = snprintf(path, sizeof(path), "%s/devices/system/node/node%d/cpulist",
		     sysroot, node);
	if (r < 0 || (size_t)r >= sizeof(path))
		return -ENAMETOOLONG;
	r = ferry__read_text(path, buf, sizeof(buf));
	if (r)
		return r;
	return ferry_cpulist_parse(buf, cpus, max);
}
