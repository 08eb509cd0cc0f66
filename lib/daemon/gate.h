/* The handshake gate (internal): the share of a server that peers who
 * have not authenticated may hold.
 *
 * A connection is in the gate from accept until its handshake ends. Peers
 * that connect and say nothing cost a thread and a socket each, up to the
 * handshake's bound; unchecked, a hundred of them kept a real client
 * waiting in the listen backlog until its own timeout. So:
 *
 *   - at most FERRY_SERVER_HANDSHAKES connections are in the gate at once,
 *     and at most GATE_PER_ADDR of them from one source address;
 *   - a connection over either cap makes room: the gate closes the
 *     oldest one that has sent nothing (a real client sends HELLO at
 *     once), else the oldest, counted among the same address for that
 *     cap; the newcomer always gets its chance;
 *   - the first byte must come within FERRY_CTRL_FIRST_BYTE_MS (msg.h),
 *     the whole handshake within its bound as before.
 *
 * The server keeps accepting whatever the gate holds, so an authenticated
 * client never waits behind silent ones. The gate shuts a connection down
 * through a dup of its own, never through the session's number, which the
 * session may have closed and the kernel given to another file.
 */
#ifndef FERRY_DAEMON_GATE_H
#define FERRY_DAEMON_GATE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#define GATE_PER_ADDR 16

struct ferry__gate;

int ferry__gate_open(struct ferry__gate **out);
void ferry__gate_close(struct ferry__gate *g);

/* A connection accepted from peer enters, maybe closing another to make
 * room. 0, or -EBUSY when the gate has no room even so (connections it
 * closed have not left yet) or -errno: the caller closes fd. */
int ferry__gate_enter(struct ferry__gate *g, int fd,
		      const struct sockaddr_storage *peer);

/* Wait at most ms for fd's first byte (or its end). 0 when there is
 * something to read, -FERRY_ETIMEOUT, or -errno. fd need not be in the
 * gate. */
int ferry__gate_first_byte(struct ferry__gate *g, int fd, int ms);

/* fd's handshake is over, either way: it leaves the gate (before the
 * caller closes fd). Returns true when the gate had closed it to make
 * room, with why saying so. */
bool ferry__gate_leave(struct ferry__gate *g, int fd, char *why,
		       size_t whylen);

#endif
