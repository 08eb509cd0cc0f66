/* What the host offers in huge pages, read from /sys before mapping: a
 * hugetlb mapping made without free pages behind it faults with SIGBUS. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mem_int.h"
#include "util/util.h"

#define HUGEPAGES_DIR "/sys/kernel/mm/hugepages"
#define NODE_DIR "/sys/devices/system/node"
#define THP_ENABLED "/sys/kernel/mm/transparent_hugepage/enabled"

/* Read the first line of path into buf, without its newline. */
static int read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	int r = 0;

	if (!f)
		return -errno;
	if (!fgets(buf, (int)len, f))
		r = ferror(f) ? -EIO : -ENODATA;
	fclose(f);
	if (!r)
		buf[strcspn(buf, "\n")] = '\0';
	return r;
}

static int read_count(const char *path, long *out)
{
	char buf[64], *end;
	int r = read_line(path, buf, sizeof(buf));

	if (r)
		return r;
	errno = 0;
	*out = strtol(buf, &end, 10);
	if (errno || end == buf || *end || *out < 0)
		return -EIO;
	return 0;
}

static const char *page_name(size_t page_size)
{
	return page_size >= (1ul << 30) ? "1GiB" : "2MiB";
}

/* The global pool: pages free and not promised to another mapping. */
static int check_global(size_t page_size, size_t need, char *why,
			size_t why_len)
{
	char free_path[128], resv_path[128];
	long nfree, nresv = 0;
	int r;

	snprintf(free_path, sizeof(free_path),
		 HUGEPAGES_DIR "/hugepages-%zukB/free_hugepages",
		 page_size >> 10);
	snprintf(resv_path, sizeof(resv_path),
		 HUGEPAGES_DIR "/hugepages-%zukB/resv_hugepages",
		 page_size >> 10);
	r = read_count(free_path, &nfree);
	if (r) {
		ferry__why(why, why_len,
			   "the kernel has no %s hugepage pool (%s: %s)",
			   page_name(page_size), free_path, ferry_strerror(r));
		return -ENOENT;
	}
	if (read_count(resv_path, &nresv))
		nresv = 0;
	if (nfree == 0) {
		ferry__why(why, why_len, "no %s hugepages free (%s = 0)",
			   page_name(page_size), free_path);
		return -ENOMEM;
	}
	if (nfree - nresv < 0 || (size_t)(nfree - nresv) < need) {
		ferry__why(why, why_len,
			   "too few %s hugepages free: need %zu, have %ld (%s = %ld, resv_hugepages = %ld)",
			   page_name(page_size), need, nfree - nresv,
			   free_path, nfree, nresv);
		return -ENOMEM;
	}
	return 0;
}

/* A node's own pool; pages bound to a node come only from there. */
static int check_node(size_t page_size, size_t need, int node, char *why,
		      size_t why_len)
{
	char path[160];
	long nfree;

	snprintf(path, sizeof(path),
		 NODE_DIR "/node%d/hugepages/hugepages-%zukB/free_hugepages",
		 node, page_size >> 10);
	/* No per-node counter (no NUMA, old kernel): the global one stands. */
	if (read_count(path, &nfree))
		return 0;
	if ((size_t)nfree < need) {
		ferry__why(why, why_len,
			   "too few %s hugepages free on NUMA node %d: need %zu, have %ld (%s)",
			   page_name(page_size), node, need, nfree, path);
		return -ENOMEM;
	}
	return 0;
}

int ferry__hugetlb_check(size_t page_size, size_t need, int node, char *why,
			 size_t why_len)
{
	int r = check_global(page_size, need, why, why_len);

	if (r || node < 0)
		return r;
	return check_node(page_size, need, node, why, why_len);
}

int ferry__thp_check(char *why, size_t why_len)
{
	char buf[128];
	int r = read_line(THP_ENABLED, buf, sizeof(buf));

	if (r) {
		ferry__why(why, why_len,
			   "the kernel has no transparent hugepages (%s: %s)",
			   THP_ENABLED, ferry_strerror(r));
		return -ENOTSUP;
	}
	if (strstr(buf, "[never]")) {
		ferry__why(why, why_len,
			   "transparent hugepages are disabled (%s = never)",
			   THP_ENABLED);
		return -ENOTSUP;
	}
	return 0;
}
