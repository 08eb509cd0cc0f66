/* Socket plumbing for the control channel: dial, listen, names. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "pipe/net.h"
#include "util/util.h"

void ferry__addr_str(const struct sockaddr *sa, socklen_t len, char *buf,
		     size_t buflen)
{
	char host[INET6_ADDRSTRLEN], port[8];

	if (getnameinfo(sa, len, host, sizeof(host), port, sizeof(port),
			NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
		snprintf(buf, buflen, "?");
		return;
	}
	if (strncmp(host, "::ffff:", 7) == 0 && strchr(host, '.'))
		snprintf(buf, buflen, "%s:%s", host + 7, port);
	else if (sa->sa_family == AF_INET6)
		snprintf(buf, buflen, "[%s]:%s", host, port);
	else
		snprintf(buf, buflen, "%s:%s", host, port);
}

/* Control messages are small and often two in a row (PLAN then ACCEPT,
 * the last FILE_DONES then RESULT): with Nagle the second waited for the
 * peer's delayed ACK, 40 ms per exchange. Both ends of a control
 * connection turn it off. */
static void control_socket(int fd)
{
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

int ferry__accept(int lfd, struct sockaddr_storage *ss, socklen_t *sl)
{
	int fd;

	do
		fd = accept4(lfd, (struct sockaddr *)ss, sl, SOCK_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return -errno;
	control_socket(fd);
	return fd;
}

static int dial_one(const struct addrinfo *ai, int timeout_ms, int dscp,
		    int *out)
{
	int fd = socket(ai->ai_family,
			SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	int err = 0;
	socklen_t el = sizeof(err);
	struct pollfd p;

	if (fd < 0)
		return -errno;
	/* before the SYN: every packet of the connection carries it */
	err = ferry__dscp_set(fd, dscp);
	if (err)
		goto fail;
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
		if (errno != EINPROGRESS) {
			err = -errno;
			goto fail;
		}
		p = (struct pollfd){ .fd = fd, .events = POLLOUT };
		int n;
		do
			n = poll(&p, 1, timeout_ms);
		while (n < 0 && errno == EINTR);
		if (n == 0) {
			err = -FERRY_ETIMEOUT;
			goto fail;
		}
		getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el);
		if (err) {
			err = -err;
			goto fail;
		}
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	control_socket(fd);
	*out = fd;
	return 0;
fail:
	close(fd);
	return err;
}

int ferry__dial(const char *host, const char *port, int timeout_ms, int dscp,
		int *fd, struct sockaddr_storage *peer, socklen_t *peer_len,
		char *why, size_t whylen)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC,
				  .ai_socktype = SOCK_STREAM };
	struct addrinfo *res, *ai;
	int rc, err = -EHOSTUNREACH;

	rc = getaddrinfo(host, port, &hints, &res);
	if (rc) {
		ferry__why(why, whylen, "cannot resolve %s: %s", host,
			   gai_strerror(rc));
		return -EHOSTUNREACH;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		err = dial_one(ai, timeout_ms, dscp, fd);
		if (err == 0) {
			memcpy(peer, ai->ai_addr, ai->ai_addrlen);
			*peer_len = ai->ai_addrlen;
			break;
		}
	}
	freeaddrinfo(res);
	if (err == -ECONNREFUSED)
		ferry__why(why, whylen,
			   "nothing listens on %s port %s: start `ferry recv` there, or check the port",
			   host, port);
	else if (err == -FERRY_ETIMEOUT)
		ferry__why(why, whylen,
			   "%s port %s did not answer within %.1f s: the host is down or a firewall drops the connection",
			   host, port, timeout_ms / 1000.0);
	else if (err == -ENETUNREACH || err == -EHOSTUNREACH)
		ferry__why(why, whylen, "no route to %s: %s", host,
			   ferry_strerror(err));
	else if (err)
		ferry__why(why, whylen, "cannot connect to %s port %s: %s",
			   host, port, ferry_strerror(err));
	return err;
}

int ferry__listen(const char *addr, const char *port, int *fd, char *why,
		  size_t whylen)
{
	struct addrinfo hints = { .ai_family = addr ? AF_UNSPEC : AF_INET6,
				  .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE };
	struct addrinfo *res;
	int rc, s, err, one = 1, zero = 0;

	rc = getaddrinfo(addr, port, &hints, &res);
	if (rc && !addr) {
		hints.ai_family = AF_INET; /* no IPv6 on this host */
		rc = getaddrinfo(addr, port, &hints, &res);
	}
	if (rc) {
		ferry__why(why, whylen, "cannot listen on %s port %s: %s",
			   addr ? addr : "*", port, gai_strerror(rc));
		return -EINVAL;
	}
	s = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0) {
		err = -errno;
		goto fail;
	}
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (res->ai_family == AF_INET6)
		setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	if (bind(s, res->ai_addr, res->ai_addrlen) < 0 || listen(s, 64) < 0) {
		err = -errno;
		close(s);
		goto fail;
	}
	freeaddrinfo(res);
	*fd = s;
	return 0;
fail:
	freeaddrinfo(res);
	if (err == -EADDRINUSE)
		ferry__why(why, whylen,
			   "port %s is already in use (another ferry recv?): stop it or pick another port with -p",
			   port);
	else if (err == -EACCES)
		ferry__why(why, whylen,
			   "not allowed to listen on port %s: use a port above 1023",
			   port);
	else
		ferry__why(why, whylen, "cannot listen on %s port %s: %s",
			   addr ? addr : "*", port, ferry_strerror(err));
	return err;
}

bool ferry__is_loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >>
			24) == 127;
	if (sa->sa_family == AF_INET6) {
		const struct in6_addr *a =
			&((const struct sockaddr_in6 *)sa)->sin6_addr;
		if (IN6_IS_ADDR_LOOPBACK(a))
			return true;
		if (IN6_IS_ADDR_V4MAPPED(a))
			return a->s6_addr[12] == 127;
	}
	return false;
}
