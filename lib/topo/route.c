/* Which interface reaches a peer: ask the kernel's routing by connecting a
 * UDP socket (nothing is sent), then find who holds the local address. */
#include <errno.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ferry/topo.h"

/* The local address the kernel picks for reaching peer. */
static int local_addr(const struct sockaddr *peer, socklen_t len,
		      struct sockaddr_storage *local)
{
	struct sockaddr_storage dst;
	socklen_t llen = sizeof(*local);
	int fd, r = 0;

	memcpy(&dst, peer, len);
	/* Port 0 is not a destination; any port routes the same. */
	if (dst.ss_family == AF_INET &&
	    ((struct sockaddr_in *)&dst)->sin_port == 0)
		((struct sockaddr_in *)&dst)->sin_port = htons(9);
	if (dst.ss_family == AF_INET6 &&
	    ((struct sockaddr_in6 *)&dst)->sin6_port == 0)
		((struct sockaddr_in6 *)&dst)->sin6_port = htons(9);

	fd = socket(peer->sa_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&dst, len) < 0) {
		r = -errno;
		if (r == -EHOSTUNREACH || r == -ENETDOWN)
			r = -ENETUNREACH;
		goto out_close;
	}
	if (getsockname(fd, (struct sockaddr *)local, &llen) < 0)
		r = -errno;
out_close:
	close(fd);
	return r;
}

static bool same_addr(const struct sockaddr_storage *local,
		      const struct sockaddr *ifa)
{
	const struct sockaddr_in6 *l6 = (const struct sockaddr_in6 *)local;

	if (local->ss_family == AF_INET && ifa->sa_family == AF_INET)
		return ((const struct sockaddr_in *)local)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)ifa)->sin_addr.s_addr;
	if (local->ss_family != AF_INET6)
		return false;
	if (ifa->sa_family == AF_INET6)
		return !memcmp(&l6->sin6_addr,
			       &((const struct sockaddr_in6 *)ifa)->sin6_addr,
			       sizeof(l6->sin6_addr));
	/* An IPv6 socket reaching an IPv4 peer (::ffff:a.b.c.d). */
	return ifa->sa_family == AF_INET &&
	       IN6_IS_ADDR_V4MAPPED(&l6->sin6_addr) &&
	       !memcmp(&l6->sin6_addr.s6_addr[12],
		       &((const struct sockaddr_in *)ifa)->sin_addr, 4);
}

int ferry_topo_route_netdev(const struct sockaddr *peer, socklen_t len,
			    char ifname[FERRY_IFNAMSIZ])
{
	struct sockaddr_storage local;
	struct ifaddrs *ifs, *ifa;
	int r;

	if (!peer || !ifname)
		return -EINVAL;
	if (!(peer->sa_family == AF_INET &&
	      len >= sizeof(struct sockaddr_in)) &&
	    !(peer->sa_family == AF_INET6 &&
	      len >= sizeof(struct sockaddr_in6)))
		return -EINVAL;
	if (len > sizeof(local))
		len = sizeof(local);
	r = local_addr(peer, len, &local);
	if (r)
		return r;
	if (getifaddrs(&ifs) < 0)
		return -errno;
	r = -ENODEV;
	for (ifa = ifs; ifa; ifa = ifa->ifa_next) {
		size_t n;

		if (!ifa->ifa_addr || !same_addr(&local, ifa->ifa_addr))
			continue;
		/* An IPv4 alias is labelled "eth0:1"; sysfs knows "eth0". */
		n = strcspn(ifa->ifa_name, ":");
		if (n >= FERRY_IFNAMSIZ) {
			r = -ENAMETOOLONG;
			break;
		}
		memcpy(ifname, ifa->ifa_name, n);
		ifname[n] = '\0';
		r = 0;
		break;
	}
	freeifaddrs(ifs);
	return r;
}
