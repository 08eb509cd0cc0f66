/* Buffer pools: one pre-faulted mapping on the largest pages the host gives,
 * bound to a NUMA node, carved up by a bump allocator. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ferry/mem.h"
#include "mem_int.h"
#include "util/util.h"

#define SZ_2M (1ul << 21)
#define SZ_1G (1ul << 30)
#define NKINDS 4

struct ferry_pool {
	void *base;
	size_t size;      /* mapped bytes */
	size_t page_size;
	size_t used;      /* bump offset for ferry_pool_carve */
	enum ferry_page_kind kind;
	int node;         /* bound node, or -1 */
};

static const char *const kind_names[NKINDS] = {
	[FERRY_PAGE_1G] = "1GiB",
	[FERRY_PAGE_2M] = "2MiB",
	[FERRY_PAGE_THP] = "THP",
	[FERRY_PAGE_4K] = "4KiB",
};

const char *ferry_page_kind_name(enum ferry_page_kind kind)
{
	if ((unsigned)kind >= NKINDS)
		return "unknown";
	return kind_names[kind];
}

static size_t base_page_size(void)
{
	long sz = sysconf(_SC_PAGESIZE);

	return sz > 0 ? (size_t)sz : 4096;
}

/* Round size up to a multiple of page (a power of two); false on overflow. */
static bool round_up(size_t size, size_t page, size_t *out)
{
	if (size > SIZE_MAX - (page - 1))
		return false;
	*out = (size + page - 1) & ~(page - 1);
	return true;
}

static int map_hugetlb(struct ferry_pool *p, const struct ferry_pool_attr *attr,
		       size_t page, char *why, size_t why_len)
{
	int shift = page == SZ_1G ? 30 : 21;
	int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB |
		    (shift << MAP_HUGE_SHIFT);
	size_t size;
	void *addr;
	int r;

	if (!round_up(attr->size, page, &size)) {
		ferry__why(why, why_len, "%zu bytes is too large to map", attr->size);
		return -ENOMEM;
	}
	r = ferry__hugetlb_check(page, size / page, attr->numa_node, why,
				 why_len);
	if (r)
		return r;
	addr = mmap(NULL, size, PROT_READ | PROT_WRITE, flags, -1, 0);
	if (addr == MAP_FAILED) {
		r = -errno;
		ferry__why(why, why_len,
			   "mmap of %zu bytes on %s hugepages failed: %s", size,
			   page == SZ_1G ? "1GiB" : "2MiB", ferry_strerror(r));
		return r;
	}
	p->base = addr;
	p->size = size;
	p->page_size = page;
	return 0;
}

/* Anonymous memory aligned to 2 MiB so that THP can back all of it. */
static int map_thp(struct ferry_pool *p, const struct ferry_pool_attr *attr,
		   char *why, size_t why_len)
{
	size_t size, len, head;
	uintptr_t start;
	char *addr;
	int r;

	r = ferry__thp_check(why, why_len);
	if (r)
		return r;
	if (!round_up(attr->size, SZ_2M, &size) || size > SIZE_MAX - SZ_2M) {
		ferry__why(why, why_len, "%zu bytes is too large to map", attr->size);
		return -ENOMEM;
	}
	len = size + SZ_2M;
	addr = mmap(NULL, len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (addr == MAP_FAILED) {
		r = -errno;
		ferry__why(why, why_len,
			   "mmap of %zu bytes for transparent hugepages failed: %s",
			   len, ferry_strerror(r));
		return r;
	}
	start = ((uintptr_t)addr + SZ_2M - 1) & ~(uintptr_t)(SZ_2M - 1);
	head = start - (uintptr_t)addr;
	if (head)
		munmap(addr, head);
	if (len - head - size)
		munmap((char *)start + size, len - head - size);
	if (madvise((void *)start, size, MADV_HUGEPAGE) < 0) {
		r = -errno;
		munmap((void *)start, size);
		ferry__why(why, why_len, "madvise(MADV_HUGEPAGE) failed: %s",
			   ferry_strerror(r));
		return r;
	}
	p->base = (void *)start;
	p->size = size;
	p->page_size = SZ_2M;
	return 0;
}

static int map_4k(struct ferry_pool *p, const struct ferry_pool_attr *attr,
		  char *why, size_t why_len)
{
	size_t page = base_page_size(), size;
	void *addr;
	int r;

	if (!round_up(attr->size, page, &size)) {
		ferry__why(why, why_len, "%zu bytes is too large to map", attr->size);
		return -ENOMEM;
	}
	addr = mmap(NULL, size, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (addr == MAP_FAILED) {
		r = -errno;
		ferry__why(why, why_len,
			   "mmap of %zu bytes on 4KiB pages failed: %s", size,
			   ferry_strerror(r));
		return r;
	}
	p->base = addr;
	p->size = size;
	p->page_size = page;
	return 0;
}

/* Fault every page in now, writable. MADV_POPULATE_WRITE (Linux 5.14)
 * fails cleanly where a touch would SIGBUS; older kernels get touched. */
static int prefault(struct ferry_pool *p, char *why, size_t why_len)
{
	size_t step = p->kind == FERRY_PAGE_THP ? base_page_size()
						: p->page_size;
	volatile char *c = p->base;
	int r;

	if (madvise(p->base, p->size, MADV_POPULATE_WRITE) == 0)
		return 0;
	r = -errno;
	if (r != -EINVAL) {
		ferry__why(why, why_len,
			   "pre-faulting %zu bytes on %s pages failed: %s",
			   p->size, kind_names[p->kind], ferry_strerror(r));
		return r;
	}
	for (size_t off = 0; off < p->size; off += step)
		c[off] = 0;
	return 0;
}

static int map_kind(struct ferry_pool *p, const struct ferry_pool_attr *attr,
		    enum ferry_page_kind kind, char *why, size_t why_len)
{
	switch (kind) {
	case FERRY_PAGE_1G:
		return map_hugetlb(p, attr, SZ_1G, why, why_len);
	case FERRY_PAGE_2M:
		return map_hugetlb(p, attr, SZ_2M, why, why_len);
	case FERRY_PAGE_THP:
		return map_thp(p, attr, why, why_len);
	case FERRY_PAGE_4K:
		return map_4k(p, attr, why, why_len);
	}
	return -EINVAL;
}

/* Map one kind, bind it, fault it in. On failure nothing stays mapped. */
static int try_kind(struct ferry_pool *p, const struct ferry_pool_attr *attr,
		    enum ferry_page_kind kind, char *why, size_t why_len)
{
	char bind_why[192];
	int r;

	p->kind = kind;
	p->node = -1;
	r = map_kind(p, attr, kind, why, why_len);
	if (r)
		return r;
	if (attr->numa_node >= 0) {
		r = ferry__mem_bind(p->base, p->size, attr->numa_node,
				    bind_why, sizeof(bind_why));
		if (r)
			ferry__log(FERRY_LOG_WARN,
				   "pool of %zu bytes not bound to NUMA node %d: %s",
				   p->size, attr->numa_node, bind_why);
		else
			p->node = attr->numa_node;
	}
	if (!attr->no_prefault) {
		r = prefault(p, why, why_len);
		if (r)
			goto err_unmap;
	}
	return 0;

err_unmap:
	munmap(p->base, p->size);
	p->base = NULL;
	return r;
}

static void log_fallback(enum ferry_page_kind kind, unsigned kinds,
			 const char *why)
{
	for (unsigned k = (unsigned)kind + 1; k < NKINDS; k++) {
		if (kinds & (1u << k)) {
			ferry__log(FERRY_LOG_INFO, "%s; trying %s", why,
				   kind_names[k]);
			return;
		}
	}
	ferry__log(FERRY_LOG_INFO, "%s; no other page kind allowed", why);
}

int ferry_pool_create(const struct ferry_pool_attr *attr,
		      struct ferry_pool **out)
{
	struct ferry_pool *p;
	unsigned kinds;
	char why[256];

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!attr || !attr->size || attr->numa_node < -1 ||
	    (attr->kinds & ~FERRY_PAGE_ALL))
		return -EINVAL;
	kinds = attr->kinds ? attr->kinds : FERRY_PAGE_ALL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	for (unsigned k = 0; k < NKINDS; k++) {
		if (!(kinds & (1u << k)))
			continue;
		if (try_kind(p, attr, (enum ferry_page_kind)k, why,
			     sizeof(why)) == 0) {
			ferry__log(FERRY_LOG_DEBUG,
				   "pool: %zu bytes on %s pages, NUMA node %d",
				   p->size, kind_names[k], p->node);
			*out = p;
			return 0;
		}
		log_fallback((enum ferry_page_kind)k, kinds, why);
	}
	free(p);
	return -ENOMEM;
}

void ferry_pool_destroy(struct ferry_pool *pool)
{
	if (!pool)
		return;
	munmap(pool->base, pool->size);
	free(pool);
}

void *ferry_pool_base(const struct ferry_pool *pool)
{
	return pool->base;
}

size_t ferry_pool_size(const struct ferry_pool *pool)
{
	return pool->size;
}

size_t ferry_pool_page_size(const struct ferry_pool *pool)
{
	return pool->page_size;
}

enum ferry_page_kind ferry_pool_page_kind(const struct ferry_pool *pool)
{
	return pool->kind;
}

int ferry_pool_node(const struct ferry_pool *pool)
{
	return pool->node;
}

void *ferry_pool_carve(struct ferry_pool *pool, size_t len, size_t align)
{
	uintptr_t base, at, aligned;
	size_t off;

	if (!pool || (align & (align - 1)))
		return NULL;
	if (!align)
		align = 1;
	base = (uintptr_t)pool->base;
	at = base + pool->used;
	aligned = (at + (align - 1)) & ~(uintptr_t)(align - 1);
	if (aligned < at)
		return NULL;
	off = aligned - base;
	if (off > pool->size || len > pool->size - off)
		return NULL;
	pool->used = off + len;
	return (void *)aligned;
}
