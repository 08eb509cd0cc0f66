/* NUMA binding through libnuma's mbind(). libnuma's higher-level calls
 * (numa_tonode_memory) report errors by printing, so only mbind() is used. */
#include <errno.h>
#include <limits.h>
#include <numa.h>
#include <numaif.h>
#include <string.h>

#include "mem_int.h"
#include "util/util.h"

#define MASK_BITS 1024
#define WORD_BITS (sizeof(unsigned long) * CHAR_BIT)

int ferry__mem_bind(void *addr, size_t len, int node, char *why,
		    size_t why_len)
{
	unsigned long mask[MASK_BITS / WORD_BITS];
	int max;

	if (numa_available() < 0) {
		ferry__why(why, why_len,
			   "the kernel has no NUMA support; cannot bind to node %d",
			   node);
		return -ENOTSUP;
	}
	max = numa_max_node();
	/* The kernel reads maxnode - 1 bits of the mask. */
	if (node < 0 || node > max || (size_t)node >= MASK_BITS - 1) {
		ferry__why(why, why_len,
			   "NUMA node %d does not exist (highest is %d)",
			   node, max);
		return -EINVAL;
	}
	memset(mask, 0, sizeof(mask));
	mask[(size_t)node / WORD_BITS] |= 1ul << ((size_t)node % WORD_BITS);
	if (mbind(addr, len, MPOL_BIND, mask, MASK_BITS, 0) < 0) {
		int r = -errno;

		ferry__why(why, why_len, "mbind to NUMA node %d failed: %s",
			   node, ferry_strerror(r));
		return r;
	}
	return 0;
}
