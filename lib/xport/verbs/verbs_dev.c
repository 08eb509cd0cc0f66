/* verbs transport: which RDMA device to use, read from a sysfs tree (the
 * root is a parameter so tests can hand in a fake machine).
 *
 * A hardware device lists its netdevs in SYSROOT/class/infiniband/DEV/
 * device/net/ (mlx5_0 -> ens1f0; IPoIB's ib0 too). Software devices (rxe,
 * siw) have no device link; their GID table names the netdev in
 * SYSROOT/class/infiniband/DEV/ports/P/gid_attrs/ndevs/N.
 * The addresses of the chosen device's netdev come from getifaddrs. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/util.h"
#include "xport/verbs/verbs.h"

static const char *root(const char *sysroot)
{
	return sysroot && *sysroot ? sysroot : "/sys";
}

static bool valid_name(const char *name)
{
	return name && *name && !strchr(name, '/') && strcmp(name, ".") &&
	       strcmp(name, "..") && strlen(name) < NAME_MAX;
}

static int not_dot(const struct dirent *d)
{
	return d->d_name[0] != '.';
}

/* Sorted entries of a directory; -errno when it cannot be read. */
static int list_dir(const char *path, struct dirent ***out)
{
	int n = scandir(path, out, not_dot, alphasort);

	return n < 0 ? -errno : n;
}

static void free_list(struct dirent **l, int n)
{
	for (int i = 0; i < n; i++)
		free(l[i]);
	free(l);
}

static bool is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* First line of a small file, without its newline. */
static int read_line(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	do
		n = read(fd, buf, len - 1);
	while (n < 0 && errno == EINTR);
	close(fd);
	if (n < 0)
		return -errno; /* an unused GID entry reads as EINVAL */
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* Call fn on each netdev name of dev until it returns true. */
static bool each_netdev(const char *sysroot, const char *dev,
			bool (*fn)(const char *name, void *arg), void *arg)
{
	char path[PATH_MAX], name[NAME_MAX + 1];
	struct dirent **ports, **ndevs;
	int np, nn;
	bool hit = false;

	snprintf(path, sizeof(path), "%s/class/infiniband/%s/device/net",
		 root(sysroot), dev);
	if (is_dir(path)) {
		nn = list_dir(path, &ndevs);
		for (int i = 0; i < nn && !hit; i++)
			hit = fn(ndevs[i]->d_name, arg);
		if (nn > 0)
			free_list(ndevs, nn);
		return hit;
	}
	snprintf(path, sizeof(path), "%s/class/infiniband/%s/ports",
		 root(sysroot), dev);
	np = list_dir(path, &ports);
	for (int p = 0; p < np && !hit; p++) {
		snprintf(path, sizeof(path),
			 "%s/class/infiniband/%s/ports/%s/gid_attrs/ndevs",
			 root(sysroot), dev, ports[p]->d_name);
		nn = list_dir(path, &ndevs);
		for (int i = 0; i < nn && !hit; i++) {
			char f[PATH_MAX + NAME_MAX + 2];
			snprintf(f, sizeof(f), "%s/%s", path, ndevs[i]->d_name);
			if (read_line(f, name, sizeof(name)) == 0 && *name)
				hit = fn(name, arg);
		}
		if (nn > 0)
			free_list(ndevs, nn);
	}
	if (np > 0)
		free_list(ports, np);
	return hit;
}

static bool same_name(const char *name, void *arg)
{
	return strcmp(name, arg) == 0;
}

struct copy_arg {
	char *buf;
	size_t len;
};

static bool copy_name(const char *name, void *arg)
{
	struct copy_arg *c = arg;

	snprintf(c->buf, c->len, "%s", name);
	return true;
}

int ferry__verbs_netdev_of_dev(const char *sysroot, const char *dev,
			       char *ifname, size_t iflen)
{
	struct copy_arg c = { ifname, iflen };

	if (!valid_name(dev) || iflen == 0)
		return -ENODEV;
	return each_netdev(sysroot, dev, copy_name, &c) ? 0 : -ENODEV;
}

int ferry__verbs_dev_of_netdev(const char *sysroot, const char *ifname,
			       char *dev, size_t devlen)
{
	char path[PATH_MAX];
	struct dirent **devs;
	int n, r = -ENODEV;

	if (!valid_name(ifname) || devlen == 0)
		return -ENODEV;
	snprintf(path, sizeof(path), "%s/class/infiniband", root(sysroot));
	n = list_dir(path, &devs);
	for (int i = 0; i < n && r; i++)
		if (each_netdev(sysroot, devs[i]->d_name, same_name,
				(void *)ifname)) {
			snprintf(dev, devlen, "%s", devs[i]->d_name);
			r = 0;
		}
	if (n > 0)
		free_list(devs, n);
	return r;
}

int ferry__verbs_dev_list(const char *sysroot, char *buf, size_t len)
{
	char path[PATH_MAX], nd[NAME_MAX + 1];
	struct dirent **devs;
	size_t used = 0;
	int n;

	if (len)
		buf[0] = '\0';
	snprintf(path, sizeof(path), "%s/class/infiniband", root(sysroot));
	n = list_dir(path, &devs);
	if (n <= 0)
		return 0;
	for (int i = 0; i < n; i++) {
		if (used < len) {
			if (ferry__verbs_netdev_of_dev(sysroot, devs[i]->d_name,
						       nd, sizeof(nd)))
				snprintf(nd, sizeof(nd), "no netdev");
			used += (size_t)snprintf(buf + used, len - used,
						 "%s%s (%s)", i ? ", " : "",
						 devs[i]->d_name, nd);
		}
	}
	free_list(devs, n);
	return n;
}

int ferry__verbs_pick_dev(const char *sysroot, const char *want,
			  const char *route_if, char *dev, size_t devlen,
			  char *why, size_t whylen)
{
	char have[256], path[PATH_MAX];
	int n = ferry__verbs_dev_list(sysroot, have, sizeof(have));

	if (n <= 0) {
		ferry__why(why, whylen, "no RDMA device in %s/class/infiniband",
			   root(sysroot));
		return -FERRY_ENOXPORT;
	}
	if (want && *want) {
		snprintf(path, sizeof(path), "%s/class/infiniband/%s",
			 root(sysroot), want);
		if (valid_name(want) && is_dir(path)) {
			snprintf(dev, devlen, "%s", want);
			return 0;
		}
		if (ferry__verbs_dev_of_netdev(sysroot, want, dev, devlen) == 0)
			return 0;
		ferry__why(why, whylen,
			   "FERRY_VERBS_DEVICE=%s names neither an RDMA device nor a netdev that has one (here: %s)",
			   want, have);
		return -ENODEV;
	}
	if (route_if && *route_if) {
		if (ferry__verbs_dev_of_netdev(sysroot, route_if, dev,
					       devlen) == 0)
			return 0;
		ferry__why(why, whylen,
			   "the peer is reached through %s, which has no RDMA device (here: %s); give the address of an RDMA NIC, or name one in FERRY_VERBS_DEVICE",
			   route_if, have);
		return -FERRY_ENOXPORT; /* not for this peer: tcp may do */
	}
	if (n == 1) {
		snprintf(path, sizeof(path), "%s", have);
		path[strcspn(path, " ")] = '\0';
		snprintf(dev, devlen, "%s", path);
		return 0;
	}
	ferry__why(why, whylen,
		   "no route to the peer says which of %d RDMA devices to use (%s): name one in FERRY_VERBS_DEVICE",
		   n, have);
	return -ENODEV;
}

/* "0000:0000:0000:0000:0000:ffff:c612:fa01" as 16 bytes. */
static bool parse_gid(const char *s, uint8_t gid[16])
{
	for (int i = 0; i < 8; i++) {
		unsigned v;
		int n;

		if (sscanf(s, "%4x%n", &v, &n) != 1 || n != 4 ||
		    s[4] != (i < 7 ? ':' : '\0'))
			return false;
		gid[2 * i] = (uint8_t)(v >> 8);
		gid[2 * i + 1] = (uint8_t)v;
		s += 5;
	}
	return true;
}

int ferry__verbs_gid_find(const char *sysroot, const char *dev, uint32_t ip,
			  unsigned *port, unsigned *index)
{
	const uint8_t want[16] = { [10] = 0xff, [11] = 0xff,
				   [12] = (uint8_t)(ip >> 24),
				   [13] = (uint8_t)(ip >> 16),
				   [14] = (uint8_t)(ip >> 8), [15] = (uint8_t)ip };
	char path[PATH_MAX], line[64];
	struct dirent **ports, **gids;
	int np, ng, r = -ENOENT;

	if (!valid_name(dev))
		return -ENODEV;
	snprintf(path, sizeof(path), "%s/class/infiniband/%s/ports",
		 root(sysroot), dev);
	np = list_dir(path, &ports);
	if (np < 0)
		return -ENODEV;
	for (int p = 0; p < np && r; p++) {
		snprintf(path, sizeof(path), "%s/class/infiniband/%s/ports/%s/gids",
			 root(sysroot), dev, ports[p]->d_name);
		ng = list_dir(path, &gids);
		for (int i = 0; i < ng && r; i++) {
			char f[PATH_MAX + NAME_MAX + 2];
			uint8_t gid[16];

			snprintf(f, sizeof(f), "%s/%s", path, gids[i]->d_name);
			if (read_line(f, line, sizeof(line)) ||
			    !parse_gid(line, gid) || memcmp(gid, want, 16))
				continue;
			snprintf(f, sizeof(f),
				 "%s/class/infiniband/%s/ports/%s/gid_attrs/types/%s",
				 root(sysroot), dev, ports[p]->d_name,
				 gids[i]->d_name);
			if (read_line(f, line, sizeof(line)) ||
			    strcasecmp(line, "RoCE v2") != 0)
				continue;
			*port = (unsigned)strtoul(ports[p]->d_name, NULL, 10);
			*index = (unsigned)strtoul(gids[i]->d_name, NULL, 10);
			r = 0;
		}
		if (ng > 0)
			free_list(gids, ng);
	}
	free_list(ports, np);
	return r;
}

int ferry__verbs_netdev_mac(const char *sysroot, const char *ifname,
			    uint8_t mac[6])
{
	char path[PATH_MAX], line[64];
	unsigned b[6];
	int err;

	if (!valid_name(ifname))
		return -ENODEV;
	snprintf(path, sizeof(path), "%s/class/net/%s/address", root(sysroot),
		 ifname);
	err = read_line(path, line, sizeof(line));
	if (err)
		return err;
	if (sscanf(line, "%2x:%2x:%2x:%2x:%2x:%2x", &b[0], &b[1], &b[2], &b[3],
		   &b[4], &b[5]) != 6 || strlen(line) != 17)
		return -EINVAL;
	for (int i = 0; i < 6; i++)
		mac[i] = (uint8_t)b[i];
	return 0;
}

static bool same_ip(const struct sockaddr_storage *a, const struct sockaddr *b)
{
	if (a->ss_family != b->sa_family)
		return false;
	if (a->ss_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
		      &((const struct sockaddr_in6 *)b)->sin6_addr, 16) == 0;
}

/* No IPv6 link-local: it would need a scope. Port 0. */
int ferry__verbs_dev_addr(const struct ferry_xport *x, int fam,
			  const struct sockaddr_storage *want,
			  struct sockaddr_storage *out)
{
	struct ifaddrs *ifs, *i;
	int r = -EADDRNOTAVAIL;

	if (getifaddrs(&ifs) < 0)
		return -errno;
	for (i = ifs; i; i = i->ifa_next) {
		const struct sockaddr *sa = i->ifa_addr;
		bool match;

		if (!sa || sa->sa_family != fam ||
		    strcmp(i->ifa_name, x->netdev) != 0)
			continue;
		if (fam == AF_INET6 &&
		    IN6_IS_ADDR_LINKLOCAL(
			    &((const struct sockaddr_in6 *)sa)->sin6_addr))
			continue;
		match = want && same_ip(want, sa);
		if (r == 0 && !match)
			continue; /* keep the first, unless want turns up */
		memset(out, 0, sizeof(*out));
		memcpy(out, sa, fam == AF_INET ? sizeof(struct sockaddr_in) :
						 sizeof(struct sockaddr_in6));
		r = 0;
		if (match || !want)
			break;
	}
	freeifaddrs(ifs);
	return r;
}
