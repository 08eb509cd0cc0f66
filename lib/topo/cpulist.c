/* CPU lists as the kernel writes them: "0-3,8,10-11". */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "ferry/topo.h"
#include "topo_int.h"
#include "util/util.h"

/* Highest CPU number accepted; x86 kernels top out at 8192 CPUs. */
#define MAX_CPU_ID 16383
#define WORD_BITS (sizeof(unsigned long) * CHAR_BIT)
#define NWORDS ((MAX_CPU_ID + 1 + WORD_BITS - 1) / WORD_BITS)

/* Parse a decimal CPU number at *s; advances *s. */
static int parse_cpu(const char **s, unsigned *out)
{
	const char *p = *s;
	unsigned v = 0;

	if (!isdigit((unsigned char)*p))
		return -EINVAL;
	for (; isdigit((unsigned char)*p); p++) {
		v = v * 10 + (unsigned)(*p - '0');
		if (v > MAX_CPU_ID)
			return -EINVAL;
	}
	*s = p;
	*out = v;
	return 0;
}

/* Length of s without trailing white space (sysfs ends lines with \n). */
static size_t trimmed_len(const char *s)
{
	size_t n = strlen(s);

	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	return n;
}

static int parse_ranges(const char *s, const char *end, unsigned long *set)
{
	while (s < end) {
		unsigned lo, hi;

		if (parse_cpu(&s, &lo))
			return -EINVAL;
		hi = lo;
		if (s < end && *s == '-') {
			s++;
			if (parse_cpu(&s, &hi) || hi < lo)
				return -EINVAL;
		}
		if (s > end)
			return -EINVAL;
		for (unsigned c = lo; c <= hi; c++)
			set[c / WORD_BITS] |= 1ul << (c % WORD_BITS);
		if (s == end)
			break;
		if (*s != ',' || s + 1 == end)
			return -EINVAL;
		s++;
	}
	return 0;
}

int ferry_cpulist_parse(const char *list, int *cpus, size_t max)
{
	unsigned long set[NWORDS] = { 0 };
	const char *end;
	size_t n = 0;
	int r;

	if (!list || (!cpus && max))
		return -EINVAL;
	while (isspace((unsigned char)*list))
		list++;
	end = list + trimmed_len(list);
	r = parse_ranges(list, end, set);
	if (r)
		return r;
	for (unsigned c = 0; c <= MAX_CPU_ID; c++) {
		if (!(set[c / WORD_BITS] & (1ul << (c % WORD_BITS))))
			continue;
		if (n == max || n == INT_MAX)
			return -E2BIG;
		cpus[n++] = (int)c;
	}
	return (int)n;
}

void ferry__cpulist_format(const int *cpus, int n, char *buf, size_t len)
{
	size_t used = 0;

	if (!len)
		return;
	buf[0] = '\0';
	for (int i = 0; i < n;) {
		char item[32];
		int j = i, w;

		while (j + 1 < n && cpus[j + 1] == cpus[j] + 1)
			j++;
		if (j == i)
			w = snprintf(item, sizeof(item), "%s%d", i ? "," : "",
				     cpus[i]);
		else
			w = snprintf(item, sizeof(item), "%s%d-%d",
				     i ? "," : "", cpus[i], cpus[j]);
		/* Keep room for "..." while more entries follow. */
		if (w < 0 || used + (size_t)w + (j + 1 < n ? 3 : 0) >= len) {
			if (used + 3 < len)
				memcpy(buf + used, "...", 4);
			return;
		}
		memcpy(buf + used, item, (size_t)w + 1);
		used += (size_t)w;
		i = j + 1;
	}
}

int ferry__cpulist_user(const char *list, int *cpus, char *why,
			size_t whylen)
{
	int n = ferry_cpulist_parse(list, cpus, FERRY_TOPO_MAX_CPUS);

	if (n == -E2BIG)
		ferry__why(why, whylen,
			   "user CPU list \"%s\" names more than %d CPUs", list,
			   FERRY_TOPO_MAX_CPUS);
	else if (n == 0)
		ferry__why(why, whylen, "user CPU list \"%s\" names no CPUs",
			   list);
	else if (n < 0)
		ferry__why(why, whylen,
			   "user CPU list \"%s\" is malformed (expected e.g. 0-3,8)",
			   list);
	return n == 0 ? -EINVAL : n;
}

int ferry_cpulist_check(const char *list, char *why, size_t whylen)
{
	int cpus[FERRY_TOPO_MAX_CPUS], have[FERRY_TOPO_MAX_CPUS];
	int n = ferry__cpulist_user(list, cpus, why, whylen), nh = 0;
	size_t size = CPU_ALLOC_SIZE(MAX_CPU_ID + 1);
	cpu_set_t *set;
	char can[128];

	if (n < 0)
		return n;
	set = CPU_ALLOC(MAX_CPU_ID + 1);
	if (!set)
		return -ENOMEM;
	if (sched_getaffinity(0, size, set)) {
		CPU_FREE(set);
		return 0 - errno;
	}
	for (int c = 0; c <= MAX_CPU_ID && nh < FERRY_TOPO_MAX_CPUS; c++)
		if (CPU_ISSET_S((size_t)c, size, set))
			have[nh++] = c;
	for (int i = 0; i < n; i++) {
		if (CPU_ISSET_S((size_t)cpus[i], size, set))
			continue;
		ferry__cpulist_format(have, nh, can, sizeof(can));
		ferry__why(why, whylen,
			   "user CPU list \"%s\" names CPU %d, which this "
			   "process cannot run on (it may use CPUs %s)", list,
			   cpus[i], can);
		n = -EINVAL;
		break;
	}
	CPU_FREE(set);
	return n;
}
