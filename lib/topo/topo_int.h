/* Internal to lib/topo. */
#ifndef FERRY_TOPO_INT_H
#define FERRY_TOPO_INT_H

#include <stddef.h>

/* Write cpus[0..n) (ascending) as a compact list ("0-3,8") into buf,
 * ending in "..." when it does not fit. */
void ferry__cpulist_format(const int *cpus, int n, char *buf, size_t len);

/* Parse a user's CPU list into cpus[0..FERRY_TOPO_MAX_CPUS) as
 * ferry_cpulist_parse does; a list that names none is -EINVAL too. On
 * failure why says what is wrong with it. */
int ferry__cpulist_user(const char *list, int *cpus, char *why,
			size_t whylen);

/* NUMA node of SYSROOT/class/CLS/NAME's device, as ferry_topo_netdev_node
 * returns it; on failure why says why in words ("has no NUMA information
 * (virtual NIC)"), to follow the device's name. */
int ferry__topo_dev_node(const char *sysroot, const char *cls,
			 const char *name, char *why, size_t why_len);

#endif
