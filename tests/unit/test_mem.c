#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cu.h"
#include "ferry/log.h"
#include "ferry/mem.h"

#define KIND(k) (1u << (k))
#define NR_HUGEPAGES "/proc/sys/vm/nr_hugepages"
#define FREE_2M "/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages"
#define FREE_1G "/sys/kernel/mm/hugepages/hugepages-1048576kB/free_hugepages"
#define THP_ENABLED "/sys/kernel/mm/transparent_hugepage/enabled"

/* Everything libferry logged since log_reset(). */
static char logged[8192];

static void log_cb(enum ferry_log_level level, const char *msg, void *arg)
{
	size_t n = strlen(logged);

	(void)level;
	(void)arg;
	snprintf(logged + n, sizeof(logged) - n, "%s\n", msg);
}

static void log_reset(void)
{
	logged[0] = '\0';
}

static long read_long(const char *path)
{
	FILE *f = fopen(path, "r");
	long v = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

static int write_long(const char *path, long v)
{
	FILE *f = fopen(path, "w");
	int r = 0;

	if (!f)
		return -errno;
	if (fprintf(f, "%ld\n", v) < 0)
		r = -EIO;
	if (fclose(f))
		r = -errno;
	return r;
}

static bool writable(void *p, size_t len)
{
	unsigned char *c = p;

	memset(c, 0xa5, len);
	return c[0] == 0xa5 && c[len / 2] == 0xa5 && c[len - 1] == 0xa5;
}

static void test_invalid(void)
{
	struct ferry_pool_attr attr = { .size = 0, .numa_node = -1 };
	struct ferry_pool *pool = (void *)1;

	CU_ASSERT_EQUAL(ferry_pool_create(&attr, &pool), -EINVAL);
	CU_ASSERT_PTR_NULL(pool);
	attr.size = 4096;
	attr.kinds = 0x10;
	CU_ASSERT_EQUAL(ferry_pool_create(&attr, &pool), -EINVAL);
	attr.kinds = 0;
	attr.numa_node = -2;
	CU_ASSERT_EQUAL(ferry_pool_create(&attr, &pool), -EINVAL);
	CU_ASSERT_EQUAL(ferry_pool_create(NULL, &pool), -EINVAL);
	ferry_pool_destroy(NULL);
}

static void test_sizes_4k(void)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct ferry_pool_attr attr = {
		.size = 1, .numa_node = -1, .kinds = KIND(FERRY_PAGE_4K),
	};
	struct ferry_pool *pool;

	CU_ASSERT_EQUAL_FATAL(ferry_pool_create(&attr, &pool), 0);
	CU_ASSERT_EQUAL(ferry_pool_page_kind(pool), FERRY_PAGE_4K);
	CU_ASSERT_EQUAL(ferry_pool_page_size(pool), page);
	CU_ASSERT_EQUAL(ferry_pool_size(pool), page);
	CU_ASSERT_EQUAL(ferry_pool_node(pool), -1);
	CU_ASSERT_EQUAL((uintptr_t)ferry_pool_base(pool) % page, 0);
	CU_ASSERT(writable(ferry_pool_base(pool), ferry_pool_size(pool)));
	ferry_pool_destroy(pool);

	attr.size = 3 * page + 1;
	CU_ASSERT_EQUAL_FATAL(ferry_pool_create(&attr, &pool), 0);
	CU_ASSERT_EQUAL(ferry_pool_size(pool), 4 * page);
	CU_ASSERT(writable(ferry_pool_base(pool), ferry_pool_size(pool)));
	ferry_pool_destroy(pool);

	/* Skipping the pre-fault changes nothing the caller sees. */
	attr.no_prefault = true;
	attr.size = 1 << 20;
	CU_ASSERT_EQUAL_FATAL(ferry_pool_create(&attr, &pool), 0);
	CU_ASSERT_EQUAL(ferry_pool_size(pool), (size_t)1 << 20);
	CU_ASSERT(writable(ferry_pool_base(pool), ferry_pool_size(pool)));
	ferry_pool_destroy(pool);

	/* More than any host can map. */
	attr.size = SIZE_MAX - 10;
	CU_ASSERT_EQUAL(ferry_pool_create(&attr, &pool), -ENOMEM);
}

static void test_carve(void)
{
	struct ferry_pool_attr attr = {
		.size = 65536, .numa_node = -1, .kinds = KIND(FERRY_PAGE_4K),
	};
	struct ferry_pool *pool;
	char *base, *a, *b, *c, *d;
	size_t size;

	CU_ASSERT_EQUAL_FATAL(ferry_pool_create(&attr, &pool), 0);
	base = ferry_pool_base(pool);
	size = ferry_pool_size(pool);

	a = ferry_pool_carve(pool, 1, 1);
	CU_ASSERT_PTR_EQUAL(a, base);
	b = ferry_pool_carve(pool, 100, 64);
	CU_ASSERT_PTR_EQUAL(b, base + 64);
	c = ferry_pool_carve(pool, 10, 4096);
	CU_ASSERT_PTR_EQUAL(c, base + 4096);
	CU_ASSERT_EQUAL((uintptr_t)c % 4096, 0);
	d = ferry_pool_carve(pool, 3, 0); /* 0 = no alignment */
	CU_ASSERT_PTR_EQUAL(d, c + 10);
	CU_ASSERT_PTR_NULL(ferry_pool_carve(pool, 8, 24)); /* not 2^n */
	CU_ASSERT_PTR_NULL(ferry_pool_carve(pool, SIZE_MAX, 1));
	CU_ASSERT_PTR_NULL(ferry_pool_carve(pool, 8, (size_t)1 << 62));

	/* The rest fits exactly; then nothing does. */
	CU_ASSERT_PTR_NULL(ferry_pool_carve(pool, size - 8192 + 1, 4096));
	CU_ASSERT_PTR_EQUAL(ferry_pool_carve(pool, size - 8192, 4096),
			    base + 8192);
	CU_ASSERT_PTR_NULL(ferry_pool_carve(pool, 1, 1));
	CU_ASSERT(writable(base, size));
	ferry_pool_destroy(pool);
}

static void test_thp(void)
{
	struct ferry_pool_attr attr = {
		.size = (3u << 20) + 5, .numa_node = -1,
		.kinds = KIND(FERRY_PAGE_THP),
	};
	struct ferry_pool *pool;
	char mode[128] = "";
	FILE *f = fopen(THP_ENABLED, "r");
	int r;

	if (f) {
		if (!fgets(mode, sizeof(mode), f))
			mode[0] = '\0';
		fclose(f);
	}
	log_reset();
	r = ferry_pool_create(&attr, &pool);
	if (!f || strstr(mode, "[never]")) {
		CU_ASSERT_EQUAL(r, -ENOMEM);
		CU_ASSERT_PTR_NOT_NULL(strstr(logged, "transparent hugepages"));
		CU_ASSERT_PTR_NOT_NULL(strstr(logged, "no other page kind allowed"));
		return;
	}
	CU_ASSERT_EQUAL_FATAL(r, 0);
	CU_ASSERT_EQUAL(ferry_pool_page_kind(pool), FERRY_PAGE_THP);
	CU_ASSERT_EQUAL(ferry_pool_page_size(pool), (size_t)2 << 20);
	CU_ASSERT_EQUAL(ferry_pool_size(pool), (size_t)4 << 20);
	CU_ASSERT_EQUAL((uintptr_t)ferry_pool_base(pool) % (2u << 20), 0);
	CU_ASSERT(writable(ferry_pool_base(pool), ferry_pool_size(pool)));
	ferry_pool_destroy(pool);
}

/* With every kind allowed the pool falls back and says why at each step. */
static void test_fallback_logged(void)
{
	struct ferry_pool_attr attr = {
		.size = 1 << 20, .numa_node = -1,
		.kinds = KIND(FERRY_PAGE_1G) | KIND(FERRY_PAGE_4K),
	};
	struct ferry_pool *pool;

	if (read_long(FREE_1G) > 0) {
		printf("\n  skipped: this host has free 1GiB hugepages\n");
		return;
	}
	log_reset();
	CU_ASSERT_EQUAL_FATAL(ferry_pool_create(&attr, &pool), 0);
	CU_ASSERT_EQUAL(ferry_pool_page_kind(pool), FERRY_PAGE_4K);
	CU_ASSERT_PTR_NOT_NULL(strstr(logged, "1GiB"));
	CU_ASSERT_PTR_NOT_NULL(strstr(logged, "; trying 4KiB"));
	ferry_pool_destroy(pool);

	/* Plain defaults always give a pool. */
	attr.kinds = 0;
	CU_ASSERT_EQUAL_FATAL(ferry_pool_create(&attr, &pool), 0);
	CU_ASSERT(writable(ferry_pool_base(pool), ferry_pool_size(pool)));
	ferry_pool_destroy(pool);
}

/* Node 0 exists on every Linux host; the memory policy must say so. */
static void test_numa_bind(void)
{
	struct ferry_pool_attr attr = {
		.size = 1 << 20, .numa_node = 0, .kinds = KIND(FERRY_PAGE_4K),
	};
	struct ferry_pool *pool;
	unsigned long mask[16] = { 0 };
	int mode = -1;

	log_reset();
	CU_ASSERT_EQUAL_FATAL(ferry_pool_create(&attr, &pool), 0);
	if (ferry_pool_node(pool) == -1) {
		/* No libnuma or no NUMA: said, not silent. */
		CU_ASSERT_PTR_NOT_NULL(strstr(logged, "not bound to NUMA node 0"));
		printf("\n  binding not checked: %s", logged);
	} else {
		CU_ASSERT_EQUAL(ferry_pool_node(pool), 0);
		/* get_mempolicy(MPOL_F_ADDR): mode 2 is MPOL_BIND. */
		CU_ASSERT_EQUAL(syscall(SYS_get_mempolicy, &mode, mask,
					sizeof(mask) * 8, ferry_pool_base(pool),
					2 /* MPOL_F_ADDR */), 0);
		CU_ASSERT_EQUAL(mode, 2);
		CU_ASSERT_EQUAL(mask[0], 1ul);
	}
	CU_ASSERT(writable(ferry_pool_base(pool), ferry_pool_size(pool)));
	ferry_pool_destroy(pool);
}

/* Needs root: reserve two 2 MiB pages, map them, give them back. */
static void test_hugetlb_2m(void)
{
	struct ferry_pool_attr attr = {
		.size = (2u << 20) + 1, .numa_node = -1,
		.kinds = KIND(FERRY_PAGE_2M),
	};
	struct ferry_pool *pool;
	long old;
	int r;

	if (geteuid() != 0) {
		printf("\n  skipped: reserving hugepages needs root\n");
		return;
	}
	old = read_long(NR_HUGEPAGES);
	if (old < 0) {
		printf("\n  skipped: cannot read " NR_HUGEPAGES "\n");
		return;
	}
	r = write_long(NR_HUGEPAGES, old + 2);
	if (r) {
		printf("\n  skipped: cannot write " NR_HUGEPAGES ": %s\n",
		       strerror(-r));
		return;
	}
	if (read_long(FREE_2M) < 2) {
		printf("\n  skipped: the kernel could not reserve two 2MiB pages\n");
		goto restore;
	}
	log_reset();
	r = ferry_pool_create(&attr, &pool);
	CU_ASSERT_EQUAL(r, 0);
	if (r) {
		printf("\n  log: %s", logged);
		goto restore;
	}
	CU_ASSERT_EQUAL(ferry_pool_page_kind(pool), FERRY_PAGE_2M);
	CU_ASSERT_EQUAL(ferry_pool_page_size(pool), (size_t)2 << 20);
	CU_ASSERT_EQUAL(ferry_pool_size(pool), (size_t)4 << 20);
	CU_ASSERT_EQUAL((uintptr_t)ferry_pool_base(pool) % (2u << 20), 0);
	CU_ASSERT(writable(ferry_pool_base(pool), ferry_pool_size(pool)));
	ferry_pool_destroy(pool);
restore:
	write_long(NR_HUGEPAGES, old);
}

int main(void)
{
	CU_TestInfo tests[] = {
		{ "invalid", test_invalid },
		{ "sizes_4k", test_sizes_4k },
		{ "carve", test_carve },
		{ "thp", test_thp },
		{ "fallback_logged", test_fallback_logged },
		{ "numa_bind", test_numa_bind },
		{ "hugetlb_2m", test_hugetlb_2m },
		CU_TEST_INFO_NULL,
	};

	ferry_log_set(log_cb, NULL, FERRY_LOG_DEBUG);
	return ferry_cu_run("mem", tests);
}
