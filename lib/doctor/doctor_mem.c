/* Memory ferry pins: hugepages for its pools, transparent huge pages as the
 * fallback, and RLIMIT_MEMLOCK for registering them with an RDMA NIC. */
#include <linux/capability.h>
#include <stdlib.h>
#include <string.h>

#include "doctor_int.h"


static void hugepages(struct ferry__doctor *d)
{
	char names[8][FERRY__DOCTOR_NAME], desc[120] = "", b1[32], b2[32];
	double total = 0, avail = 0;
	long nr2m = 0, nr, nfree;
	struct ferry_check *c;
	size_t off = 0;
	int n;

	n = ferry__doctor_list(d, names, 8, "sys/kernel/mm/hugepages");
	for (int i = 0; i < n; i++) {
		unsigned long kb;

		if (sscanf(names[i], "hugepages-%lukB", &kb) != 1 ||
		    ferry__doctor_long(d, &nr,
				       "sys/kernel/mm/hugepages/%s/nr_hugepages",
				       names[i]) ||
		    ferry__doctor_long(d, &nfree,
				       "sys/kernel/mm/hugepages/%s/free_hugepages",
				       names[i]))
			continue;
		if (kb == 2048)
			nr2m = nr;
		total += (double)nr * (double)kb * 1024;
		avail += (double)nfree * (double)kb * 1024;
		if (nr > 0 && off < sizeof(desc))
			off += (size_t)snprintf(desc + off, sizeof(desc) - off,
						"%s%ld x %s (%ld free)",
						off ? ", " : "", nr,
						ferry__bytes_str(b1, sizeof(b1),
								    (double)kb * 1024),
						nfree);
	}
	if (n <= 0) {
		c = ferry__doctor_add(d, FERRY_CHECK_WARN, "hugepages");
		ferry__doctor_value(c, "the kernel offers no hugetlb pages (no sys/kernel/mm/hugepages)");
		ferry__doctor_fix(c, "use a kernel with CONFIG_HUGETLBFS; until then ferry falls back to transparent huge pages");
	} else if (total == 0) {
		c = ferry__doctor_add(d, FERRY_CHECK_WARN, "hugepages");
		ferry__doctor_value(c, "none reserved: ferry's pools fall back to THP or 4 KiB pages (more TLB misses, slower registration)");
		ferry__doctor_fix(c, "echo 1024 > /proc/sys/vm/nr_hugepages (2 GiB of 2 MiB pages; ferry's ring + buffers take 2 x 256 MiB by default)");
	} else if (avail < (double)FERRY_DOCTOR_POOL_BYTES) {
		/* Enough 2 MiB pages for the default pools on top of what
		 * is in use. */
		long want = nr2m + (long)(((double)FERRY_DOCTOR_POOL_BYTES -
					   avail) / (2 << 20)) + 1;

		c = ferry__doctor_add(d, FERRY_CHECK_WARN, "hugepages");
		ferry__doctor_value(c, "%s: %s free, below the %s ferry pins by default",
				    desc, ferry__bytes_str(b1, sizeof(b1), avail),
				    ferry__bytes_str(b2, sizeof(b2),
							(double)FERRY_DOCTOR_POOL_BYTES));
		ferry__doctor_fix(c, "echo %ld > /proc/sys/vm/nr_hugepages (ferry's ring + buffers take 2 x 256 MiB by default)",
				  want);
	} else {
		c = ferry__doctor_add(d, FERRY_CHECK_PASS, "hugepages");
		ferry__doctor_value(c, "%s: %s free", desc,
				    ferry__bytes_str(b1, sizeof(b1), avail));
	}
}

static void thp(struct ferry__doctor *d)
{
	struct ferry_check *c;
	char buf[96], *sel, *end;

	if (ferry__doctor_read(d, buf, sizeof(buf),
			       "sys/kernel/mm/transparent_hugepage/enabled")) {
		c = ferry__doctor_add(d, FERRY_CHECK_INFO, "thp");
		ferry__doctor_value(c, "no transparent huge pages in this kernel");
		return;
	}
	sel = strchr(buf, '[');
	end = sel ? strchr(sel, ']') : NULL;
	if (!sel || !end) {
		c = ferry__doctor_add(d, FERRY_CHECK_INFO, "thp");
		ferry__doctor_value(c, "unrecognised setting: %s", buf);
		return;
	}
	*end = '\0';
	sel++;
	if (!strcmp(sel, "never")) {
		c = ferry__doctor_add(d, FERRY_CHECK_WARN, "thp");
		ferry__doctor_value(c, "never: without hugetlb pages ferry's pools get 4 KiB pages");
		ferry__doctor_fix(c, "echo madvise > /sys/kernel/mm/transparent_hugepage/enabled");
		return;
	}
	c = ferry__doctor_add(d, FERRY_CHECK_PASS, "thp");
	ferry__doctor_value(c, "%s (ferry asks with MADV_HUGEPAGE)", sel);
}

/* " (A and B pin; C does not)": which transports pin memory, which not. */
static const char *who_pins(char *buf, size_t len)
{
	char pin[64], not[64];
	size_t n = ferry__doctor_xports(pin, sizeof(pin),
					FERRY_XPORT_NEEDS_MEMLOCK,
					FERRY_XPORT_NEEDS_MEMLOCK,
					FERRY__DX_AND);
	size_t m = ferry__doctor_xports(not, sizeof(not),
					FERRY_XPORT_NEEDS_MEMLOCK, 0,
					FERRY__DX_AND);

	if (!n)
		return "";
	snprintf(buf, len, " (%s pin%s%s%s%s)", pin, n > 1 ? "" : "s",
		 m ? "; " : "", not, m > 1 ? " do not" : m ? " does not" : "");
	return buf;
}

static void memlock(struct ferry__doctor *d)
{
	char *limits = malloc(8192), soft[32], hard[32], b1[32], b2[32];
	char rdma[96], pins[200];
	const char *line = NULL;
	struct ferry_check *c;
	unsigned long long v;
	char *end;

	if (limits && !ferry__doctor_read(d, limits, 8192, "proc/self/limits"))
		line = strstr(limits, "Max locked memory");
	if (!line || sscanf(line, "Max locked memory %31s %31s", soft, hard) != 2) {
		free(limits);
		c = ferry__doctor_add(d, FERRY_CHECK_INFO, "memlock");
		ferry__doctor_value(c, "unknown (no Max locked memory in proc/self/limits)");
		return;
	}
	free(limits);
	if (!strcmp(soft, "unlimited")) {
		c = ferry__doctor_add(d, FERRY_CHECK_PASS, "memlock");
		ferry__doctor_value(c, "unlimited");
		return;
	}
	v = strtoull(soft, &end, 10);
	ferry__bytes_str(b1, sizeof(b1), (double)v);
	if (v >= FERRY_DOCTOR_POOL_BYTES) {
		c = ferry__doctor_add(d, FERRY_CHECK_PASS, "memlock");
		ferry__doctor_value(c, "%s", b1);
		return;
	}
	if (ferry__cap_effective(d->root, CAP_IPC_LOCK)) {
		c = ferry__doctor_add(d, FERRY_CHECK_PASS, "memlock");
		ferry__doctor_value(c, "%s, lifted by CAP_IPC_LOCK (root); ferry run by another user needs %s",
				    b1, ferry__bytes_str(b2, sizeof(b2),
					(double)FERRY_DOCTOR_POOL_BYTES));
		return;
	}
	if (v < FERRY_DOCTOR_MEMLOCK_FAIL && d->nib &&
	    ferry__doctor_xports(rdma, sizeof(rdma), FERRY_XPORT_NEEDS_RDMA,
				 FERRY_XPORT_NEEDS_RDMA, FERRY__DX_AND)) {
		c = ferry__doctor_add(d, FERRY_CHECK_FAIL, "memlock");
		ferry__doctor_value(c, "%s: %s cannot register even a %s ring",
				    b1, rdma, ferry__bytes_str(b2, sizeof(b2),
					(double)FERRY_DOCTOR_MEMLOCK_FAIL));
	} else {
		c = ferry__doctor_add(d, FERRY_CHECK_WARN, "memlock");
		ferry__doctor_value(c, "%s, below the %s ferry pins by default%s",
				    b1, ferry__bytes_str(b2, sizeof(b2),
					(double)FERRY_DOCTOR_POOL_BYTES),
				    who_pins(pins, sizeof(pins)));
	}
	ferry__doctor_fix(c, "ulimit -l unlimited; services: LimitMEMLOCK=infinity in the systemd unit; users: '* - memlock unlimited' in /etc/security/limits.conf");
}

/* Open files: ferry raises its soft limit to the hard one at start, so
 * the hard limit is what counts. A receiver keeps at most a bounded set of
 * targets open per session whatever the limit (two descriptors each, 512
 * targets at most), so FERRY_DOCTOR_NOFILE covers 64 sessions with all
 * their files, streams and sockets. */
static void nofile(struct ferry__doctor *d)
{
	char *limits = malloc(8192), soft[32], hard[32];
	const char *line = NULL;
	struct ferry_check *c;
	unsigned long long h;

	if (limits && !ferry__doctor_read(d, limits, 8192, "proc/self/limits"))
		line = strstr(limits, "Max open files");
	if (!line || sscanf(line, "Max open files %31s %31s", soft, hard) != 2) {
		free(limits);
		c = ferry__doctor_add(d, FERRY_CHECK_INFO, "open files");
		ferry__doctor_value(c, "unknown (no Max open files in proc/self/limits)");
		return;
	}
	free(limits);
	h = strcmp(hard, "unlimited") ? strtoull(hard, NULL, 10) : ~0ull;
	if (h >= FERRY_DOCTOR_NOFILE) {
		c = ferry__doctor_add(d, FERRY_CHECK_PASS, "open files");
		ferry__doctor_value(c, "soft %s, hard %s (ferry raises the soft limit to the hard one)",
				    soft, hard);
		return;
	}
	c = ferry__doctor_add(d, FERRY_CHECK_WARN, "open files");
	ferry__doctor_value(c, "hard limit %s, below the %u a data-transfer node wants: fewer files in flight per session, fewer sessions at once",
			    hard, FERRY_DOCTOR_NOFILE);
	ferry__doctor_fix(c, "services: LimitNOFILE=1048576 in the systemd unit (ferry-recv.service sets it); shells: ulimit -Hn 1048576, or '* - nofile 1048576' in /etc/security/limits.conf");
}

void ferry__doctor_mem(struct ferry__doctor *d)
{
	hugepages(d);
	thp(d);
	memlock(d);
	nofile(d);
}
