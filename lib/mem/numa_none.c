/* NUMA binding when ferry is built without libnuma. */
#include <errno.h>

#include "mem_int.h"
#include "util/util.h"

int ferry__mem_bind(void *addr, size_t len, int node, char *why,
		    size_t why_len)
{
	(void)addr;
	(void)len;
	ferry__why(why, why_len,
		   "ferry was built without libnuma; cannot bind to node %d",
		   node);
	return -ENOTSUP;
}
