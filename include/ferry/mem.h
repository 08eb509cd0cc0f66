/* Buffer pools on hugepages, bound to a NUMA node, sized up front.
 *
 * A pool is one contiguous mapping, pre-faulted, that the pipeline carves
 * into the receive ring or the send buffers and registers with a transport
 * once. The page size is the best the host gives, tried in this order:
 * 1 GiB hugetlb pages, 2 MiB hugetlb pages, transparent huge pages, 4 KiB
 * pages. Every fallback is logged (ferry_log_set) with its reason, and the
 * pool reports what it got.
 */
#ifndef FERRY_MEM_H
#define FERRY_MEM_H

#include <stdbool.h>
#include <stddef.h>

enum ferry_page_kind {
	FERRY_PAGE_1G = 0,  /* hugetlb, 1 GiB pages */
	FERRY_PAGE_2M = 1,  /* hugetlb, 2 MiB pages */
	FERRY_PAGE_THP = 2, /* anonymous memory with MADV_HUGEPAGE */
	FERRY_PAGE_4K = 3,  /* plain anonymous memory */
};

/* Bit (1u << kind) set in ferry_pool_attr.kinds allows that kind. */
#define FERRY_PAGE_ALL 0xfu

struct ferry_pool_attr {
	size_t size;    /* bytes wanted; rounded up to the page size got */
	int numa_node;  /* node to bind to; -1 = no binding */
	unsigned kinds; /* allowed page kinds (bit mask); 0 = FERRY_PAGE_ALL */
	bool no_prefault; /* skip faulting every page in up front: for memory
			     nothing pins (a tcp session's ring: its pages
			     fault in as the ring first fills) */
};

struct ferry_pool;

/* Map and pre-fault a pool. Returns 0 or -errno (-ENOMEM when no allowed
 * page kind could provide attr->size bytes, -EINVAL for size 0). */
int ferry_pool_create(const struct ferry_pool_attr *attr,
		      struct ferry_pool **out);

/* Unmap the pool. NULL is allowed. */
void ferry_pool_destroy(struct ferry_pool *pool);

void *ferry_pool_base(const struct ferry_pool *pool);
size_t ferry_pool_size(const struct ferry_pool *pool);   /* mapped bytes */
size_t ferry_pool_page_size(const struct ferry_pool *pool);
enum ferry_page_kind ferry_pool_page_kind(const struct ferry_pool *pool);
/* Node the memory is bound to, or -1 when unbound (no libnuma, no NUMA). */
int ferry_pool_node(const struct ferry_pool *pool);

/* Carve len bytes aligned to align (a power of two) from the pool. Returns
 * NULL when the pool has no room left; memory is never given back except by
 * destroying the pool. Not thread-safe: carve at setup time. */
void *ferry_pool_carve(struct ferry_pool *pool, size_t len, size_t align);

/* "1GiB", "2MiB", "THP" or "4KiB". */
const char *ferry_page_kind_name(enum ferry_page_kind kind);

#endif
