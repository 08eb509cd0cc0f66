/* Host signals for the metrics, read only with FERRY_METRICS_HOST
 * (STUDIES.md A): TCP segments sent and retransmitted (/proc/net/snmp),
 * the host's context switches (/proc/stat), and the rx drops of network
 * interfaces (/sys/class/net/IF/statistics). Every path is below a root
 * directory, so the unit test runs on a fake tree. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/metrics.h"

static FILE *open_at(const char *root, const char *path)
{
	char full[4096];

	snprintf(full, sizeof(full), "%s/%s", root ? root : "", path);
	return fopen(full, "re");
}

static int read_u64(const char *root, const char *path, uint64_t *v)
{
	FILE *f = open_at(root, path);
	unsigned long long x;
	int n;

	if (!f)
		return -errno;
	n = fscanf(f, "%llu", &x);
	fclose(f);
	if (n != 1)
		return -EINVAL;
	*v = x;
	return 0;
}

/* Tcp OutSegs and RetransSegs: a line of names, then a line of values. */
static void tcp_snmp(const char *root, struct ferry__m_host *h)
{
	FILE *f = open_at(root, "proc/net/snmp");
	char names[1024], vals[1024], *sn, *sv, *n, *v;
	int got = 0;

	if (!f)
		return;
	while (fgets(names, sizeof(names), f)) {
		if (strncmp(names, "Tcp:", 4) != 0)
			continue;
		if (!fgets(vals, sizeof(vals), f) || strncmp(vals, "Tcp:", 4))
			break;
		n = strtok_r(names + 4, " \n", &sn);
		v = strtok_r(vals + 4, " \n", &sv);
		for (; n && v; n = strtok_r(NULL, " \n", &sn),
			       v = strtok_r(NULL, " \n", &sv)) {
			if (strcmp(n, "OutSegs") == 0) {
				h->tcp_out = strtoull(v, NULL, 10);
				got |= 1;
			} else if (strcmp(n, "RetransSegs") == 0) {
				h->tcp_retrans = strtoull(v, NULL, 10);
				got |= 2;
			}
		}
		break;
	}
	fclose(f);
	h->has_tcp = got == 3;
}

static void host_ctxt(const char *root, struct ferry__m_host *h)
{
	FILE *f = open_at(root, "proc/stat");
	char line[256];
	unsigned long long v;

	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "ctxt %llu", &v) == 1) {
			h->ctxt = v;
			h->has_ctxt = true;
			break;
		}
	fclose(f);
}

static bool listed(const char (*names)[16], unsigned n, const char *name)
{
	for (unsigned i = 0; i < n; i++)
		if (strcmp(names[i], name) == 0)
			return true;
	return false;
}

static void netdev(const char *root, const char *name,
		   struct ferry__m_host *h)
{
	struct ferry__m_netdev *d;
	char path[128];

	if (h->n_if == FERRY__M_MAX_HOST_IF)
		return;
	d = &h->ifs[h->n_if];
	memset(d, 0, sizeof(*d));
	snprintf(d->name, sizeof(d->name), "%s", name);
	snprintf(path, sizeof(path), "sys/class/net/%s/statistics/rx_dropped",
		 name);
	d->has_dropped = read_u64(root, path, &d->rx_dropped) == 0;
	snprintf(path, sizeof(path),
		 "sys/class/net/%s/statistics/rx_missed_errors", name);
	/* the loopback has no receive ring to miss from: always 0 */
	d->has_missed = strcmp(name, "lo") != 0 &&
			read_u64(root, path, &d->rx_missed) == 0;
	if (d->has_dropped || d->has_missed)
		h->n_if++;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct ferry__m_netdev *)a)->name,
		      ((const struct ferry__m_netdev *)b)->name);
}

void ferry__metrics_host(const char *root, const char (*used)[16],
			 unsigned n_used, struct ferry__m_host *h)
{
	char path[4096];
	struct dirent *e;
	DIR *dir;

	memset(h, 0, sizeof(*h));
	tcp_snmp(root, h);
	host_ctxt(root, h);
	snprintf(path, sizeof(path), "%s/sys/class/net", root ? root : "");
	dir = opendir(path);
	while (dir && (e = readdir(dir))) {
		if (e->d_name[0] == '.' || strlen(e->d_name) >= 16)
			continue;
		/* every interface but the loopback, which only when a
		 * session used it */
		if (strcmp(e->d_name, "lo") == 0 &&
		    !listed(used, n_used, e->d_name))
			continue;
		netdev(root, e->d_name, h);
	}
	if (dir)
		closedir(dir);
	qsort(h->ifs, h->n_if, sizeof(h->ifs[0]), by_name);
}
