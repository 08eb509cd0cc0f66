/* Marking a socket's packets with a DSCP (RFC 2474): the one place that
 * sets IP_TOS and IPV6_TCLASS, for the control connection (lib/pipe) and
 * tcp's data streams (lib/xport/tcp) alike. */
#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "ferry/xport.h" /* FERRY_DSCP_MAX */
#include "util/util.h"

int ferry__dscp_set(int fd, int dscp)
{
	int tos, fam = 0;
	socklen_t len = sizeof(fam);

	if (dscp < 0)
		return 0;
	if (dscp > FERRY_DSCP_MAX)
		return -EINVAL;
	tos = dscp << 2;
	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &fam, &len) < 0)
		return -errno;
	if (fam != AF_INET && fam != AF_INET6)
		return -EAFNOSUPPORT;
	if (fam == AF_INET6 &&
	    setsockopt(fd, IPPROTO_IPV6, IPV6_TCLASS, &tos, sizeof(tos)) < 0)
		return -errno;
	/* an IPv6 socket needs it too: its IPv4 peers (v4-mapped
	 * addresses, a dual-stack listener's) get IPv4 packets, whose DS
	 * field is IP_TOS's, not IPV6_TCLASS's */
	if (setsockopt(fd, IPPROTO_IP, IP_TOS, &tos, sizeof(tos)) < 0)
		return -errno;
	return 0;
}
