/* The client side of the daemon's roles (internal): what
 * include/ferry/remote.h does not show. The connection's state, requests
 * one message at a time, and third-party copy in its steps, for
 * remote_copy.c and the tests.
 */
#ifndef FERRY_DAEMON_REMOTE_H
#define FERRY_DAEMON_REMOTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctrl/msg.h"
#include "ctrl/req.h"
#include "ferry/files.h"
#include "ferry/remote.h"
#include "io/manifest.h"

/* One authenticated control connection to a daemon (opaque in
 * ferry/remote.h; used by value here). */
struct ferry_remote {
	int fd;
	int timeout_ms;
	uint8_t wrap[FERRY_KEY_LEN];
	char host[FERRY_PUSH_HOST_MAX + 1]; /* as given */
	char port[FERRY_PUSH_PORT_MAX + 1];
	char peer[80];                      /* "addr:port" it reached */
};

/* ferry_remote_open and _close on a connection the caller holds. */
int ferry__remote_connect(const char *host, const char *port,
			  const struct ferry_opts *o, struct ferry_remote *c,
			  char *why, size_t whylen);
void ferry__remote_disconnect(struct ferry_remote *c);

/* Send one REQ and read the first answer into m: a REPLY to op (or, for
 * PUSH, a MARKER). An ERROR from the daemon returns ferry__peer_error's
 * code (-ENOENT, -EEXIST, -EACCES, ... or -FERRY_EPEER) with its text in
 * why. ferry__remote_answer reads a further answer. */
int ferry__remote_call(struct ferry_remote *c, uint32_t op, const char *path,
		       uint32_t flags, uint64_t arg, const void *data,
		       size_t len, struct ferry_msg *m, char *why,
		       size_t whylen);
int ferry__remote_answer(struct ferry_remote *c, uint32_t op,
			 struct ferry_msg *m, int timeout_ms, char *why,
			 size_t whylen);
/* The first half of ferry__remote_call: send the REQ (m is scratch). */
int ferry__remote_send(struct ferry_remote *c, uint32_t op, const char *path,
		       uint32_t flags, uint64_t arg, const void *data,
		       size_t len, struct ferry_msg *m, char *why,
		       size_t whylen);

/* A checksum request waits at least this long (the daemon reads the
 * whole file). */
#define FERRY__CKSUM_TIMEOUT_MS 1800000

/* Third-party copy in its steps, for tools and tests:
 * ferry__remote_token asks dst for a token for cp->names below cp->dest
 * with sizes[i] (ttl_s 0: the daemon's default) and unwraps its secret;
 * ferry__remote_push_req asks src to send cp->src to dst_host:dst_port
 * with that token and waits for the end (markers and results reach cp's
 * callbacks). */
int ferry__remote_token(struct ferry_remote *dst, const struct ferry_copy *cp,
			const uint64_t *sizes, unsigned ttl_s,
			char name[FERRY_KEYNAME_MAX + 1],
			struct ferry_key *secret, uint64_t *expiry, char *why,
			size_t whylen);
int ferry__remote_push_req(struct ferry_remote *src, const char *dst_host,
			   const char *dst_port, const struct ferry_opts *o,
			   const char *token, const struct ferry_key *secret,
			   const struct ferry_copy *cp, char *why,
			   size_t whylen);

_Static_assert(FERRY_URL_HOST_MAX == FERRY_PUSH_HOST_MAX &&
	       FERRY_URL_PORT_MAX == FERRY_PUSH_PORT_MAX &&
	       FERRY_URL_PATH_MAX + 1 == FERRY_DEST_MAX &&
	       FERRY_REMOTE_XPORT_MAX == FERRY_PUSH_XPORT_MAX &&
	       FERRY_KEY_NAME_MAX == FERRY_KEYNAME_MAX,
	       "ferry/remote.h's limits are the protocol's");

#endif
