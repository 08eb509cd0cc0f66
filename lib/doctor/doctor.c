/* ferry doctor: what to check and in which order (the results list is
 * doctor_report.c's). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "doctor_int.h"

static bool valid_name(const char *s)
{
	return *s && !strchr(s, '/') && strcmp(s, ".") && strcmp(s, "..") &&
	       strlen(s) < FERRY__DOCTOR_NAME;
}

static void add_nic(struct ferry__doctor *d, const char *name)
{
	if (strlen(name) >= FERRY__DOCTOR_IFNAMSIZ ||
	    d->nnics == FERRY__DOCTOR_MAX_NICS ||
	    !ferry__doctor_exists(d, "sys/class/net/%s", name))
		return;
	for (size_t i = 0; i < d->nnics; i++)
		if (!strcmp(d->nics[i], name))
			return;
	memcpy(d->nics[d->nnics++], name, strlen(name) + 1);
}

static void add_ib(struct ferry__doctor *d, const char *name)
{
	if (d->nib < FERRY__DOCTOR_MAX_IB)
		memcpy(d->ibdevs[d->nib++], name, strlen(name) + 1);
}

/* What to check: the user's netdev (or RDMA device) and what rides on it,
 * else every netdev with a device link and every RDMA device. */
static void select_devices(struct ferry__doctor *d)
{
	char ib[FERRY__DOCTOR_MAX_IB][FERRY__DOCTOR_NAME];
	char net[FERRY__DOCTOR_MAX_NICS][FERRY__DOCTOR_NAME];
	int nib = ferry__doctor_list(d, ib, FERRY__DOCTOR_MAX_IB,
				     "sys/class/infiniband");
	bool is_net, is_ib = false;
	int n;

	d->any_ib = nib > 0;
	if (!d->netdev) {
		n = ferry__doctor_list(d, net, FERRY__DOCTOR_MAX_NICS,
				       "sys/class/net");
		for (int i = 0; i < n; i++)
			if (ferry__doctor_exists(d, "sys/class/net/%s/device",
						 net[i]))
				add_nic(d, net[i]);
	}
	is_net = d->netdev && ferry__doctor_exists(d, "sys/class/net/%s",
						   d->netdev);
	for (int i = 0; i < nib; i++) {
		bool mine = !d->netdev || !strcmp(ib[i], d->netdev);

		n = ferry__doctor_ib_netdevs(d, ib[i], net,
					     FERRY__DOCTOR_MAX_NICS);
		for (int j = 0; j < n && !mine; j++)
			mine = is_net && !strcmp(net[j], d->netdev);
		if (!mine)
			continue;
		is_ib |= d->netdev && !strcmp(ib[i], d->netdev);
		add_ib(d, ib[i]);
		for (int j = 0; j < n; j++)
			add_nic(d, net[j]);
	}
	if (is_net)
		add_nic(d, d->netdev);
	d->missing = d->netdev && !is_net && !is_ib;
	if (d->missing) {
		struct ferry_check *c = ferry__doctor_add(d, FERRY_CHECK_FAIL,
							  "netdev %s",
							  d->netdev);

		ferry__doctor_value(c, "no netdev or RDMA device named %s",
				    d->netdev);
		ferry__doctor_fix(c, "list them: ip -br link; ls /sys/class/infiniband");
	}
}

/* Rate x RTT, the bytes a single path keeps in flight. The rate defaults to
 * the fastest checked port, the speed ferry should be able to fill. */
static void target(struct ferry__doctor *d, const struct ferry_doctor_attr *a)
{
	char rate_src[48] = "default", bdp[32];
	bool defaults = a->rtt_ms <= 0 || a->rate_gbps <= 0;
	struct ferry_check *c;

	d->rtt_ms = a->rtt_ms > 0 ? a->rtt_ms : FERRY_DOCTOR_DEFAULT_RTT_MS;
	d->rate_gbps = a->rate_gbps;
	if (a->rate_gbps <= 0) {
		long best = 0, mbps;

		for (size_t i = 0; i < d->nnics; i++)
			if (!ferry__doctor_long(d, &mbps, "sys/class/net/%s/speed",
						d->nics[i]) && mbps > best) {
				best = mbps;
				snprintf(rate_src, sizeof(rate_src),
					 "port speed of %s", d->nics[i]);
			}
		d->rate_gbps = best ? (double)best / 1000
				    : FERRY_DOCTOR_DEFAULT_RATE_GBPS;
	}
	d->bdp = (uint64_t)(d->rate_gbps * 1e9 / 8 * d->rtt_ms / 1000);
	c = ferry__doctor_add(d, FERRY_CHECK_INFO, "bdp");
	ferry__doctor_value(c, "%s in flight = %g Gb/s (%s) x %g ms (%s)",
			    ferry__bytes_str(bdp, sizeof(bdp),
						(double)d->bdp),
			    d->rate_gbps, a->rate_gbps > 0 ? "--rate" : rate_src,
			    d->rtt_ms, a->rtt_ms > 0 ? "--rtt" : "default");
	if (d->bdp > FERRY__DOCTOR_TCP_MAX_WIN)
		strncat(c->value, "; 1 GiB per TCP socket at most, streams share the rest",
			sizeof(c->value) - strlen(c->value) - 1);
	if (defaults)
		ferry__doctor_fix(c, "give --rate GBPS and --rtt MS of your longest path");
}

int ferry_doctor_run(const struct ferry_doctor_attr *a, struct ferry_check *out,
		     size_t max, size_t *n)
{
	struct ferry__doctor *d;
	const char *root;
	size_t len;
	int r = 0;

	if (!a || !n || (!out && max))
		return -EINVAL;
	*n = 0;
	if (a->netdev && !valid_name(a->netdev))
		return -EINVAL;
	root = a->root && *a->root ? a->root : "/";
	len = strlen(root);
	while (len > 1 && root[len - 1] == '/')
		len--;
	if (len >= PATH_MAX - 8)
		return -ENAMETOOLONG;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	if (strcmp(root, "/"))
		memcpy(d->root, root, len);
	snprintf(d->sys, sizeof(d->sys), "%s/sys", d->root);
	if (!ferry__doctor_exists(d, "sys") && !ferry__doctor_exists(d, "proc")) {
		r = -ENOENT;
		goto out;
	}
	d->netdev = a->netdev;
	d->out = out;
	d->max = max;

	select_devices(d);
	target(d, a);
	if (!d->missing)
		ferry__doctor_rdma(d);
	for (size_t i = 0; i < d->nnics; i++)
		ferry__doctor_nic(d, d->nics[i]);
	ferry__doctor_mem(d);
	ferry__doctor_tcp(d);
	ferry__doctor_cpu(d);
	*n = d->n;
	if (d->overflow)
		r = -ENOSPC;
out:
	free(d);
	return r;
}
