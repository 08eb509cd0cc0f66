/* Internal to lib/mem: page-size probing and NUMA binding. */
#ifndef FERRY_MEM_INT_H
#define FERRY_MEM_INT_H

#include <stddef.h>
#include <sys/mman.h>

/* Older C libraries lack these; the kernel ABI values are fixed. */
#ifndef MAP_HUGE_SHIFT
#define MAP_HUGE_SHIFT 26
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14; older kernels: EINVAL */
#endif

/* Can `need` hugetlb pages of page_size bytes be had (on node, if >= 0)?
 * Reads the pool counters in /sys so that faulting cannot SIGBUS. Returns
 * 0, or -ENOENT (no such pool) / -ENOMEM (too few free) with why filled. */
int ferry__hugetlb_check(size_t page_size, size_t need, int node, char *why,
			 size_t why_len);

/* Is transparent hugepage support on (enabled is "always" or "madvise")?
 * Returns 0, or -ENOTSUP with why filled. */
int ferry__thp_check(char *why, size_t why_len);

/* Bind [addr, addr + len) to NUMA node before it is faulted in. Returns 0 or
 * -errno with why filled (-ENOTSUP when built without libnuma). */
int ferry__mem_bind(void *addr, size_t len, int node, char *why,
		    size_t why_len);

#endif
