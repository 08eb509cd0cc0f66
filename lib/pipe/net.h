/* Socket plumbing for the control channel (internal). */
#ifndef FERRY_PIPE_NET_H
#define FERRY_PIPE_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

/* Connect to host:port within timeout_ms, the socket marked with DSCP
 * dscp from its SYN on (-1: the system's default; ferry__dscp_set); why
 * says what went wrong in the user's terms (refused, timed out,
 * unresolvable, unreachable). */
int ferry__dial(const char *host, const char *port, int timeout_ms, int dscp,
		int *fd, struct sockaddr_storage *peer, socklen_t *peer_len,
		char *why, size_t whylen);

/* Accept a control connection on lfd (ss, sl: the peer's address):
 * the fd, set up as ferry__dial's are, or -errno. */
int ferry__accept(int lfd, struct sockaddr_storage *ss, socklen_t *sl);

/* Listen on addr:port (addr NULL: every address, IPv6 and IPv4). */
int ferry__listen(const char *addr, const char *port, int *fd, char *why,
		  size_t whylen);

/* "host:port" or "[v6]:port". */
void ferry__addr_str(const struct sockaddr *sa, socklen_t len, char *buf,
		     size_t buflen);

bool ferry__is_loopback(const struct sockaddr *sa);

#endif
