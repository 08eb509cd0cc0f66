/* Control-path steps shared by bench and file sessions (internal). */
#ifndef FERRY_PIPE_SESSION_H
#define FERRY_PIPE_SESSION_H

#include <stdbool.h>

#include "ctrl/msg.h"
#include "pipe/pipe.h"

/* What a session's kind adds to the control loop of the data phase. */
struct ferry__hooks {
	int wake_fd; /* readable when work() has something to do; -1: none */
	/* Send what is queued (sender: FILE_SUM; receiver: FILE_DONE). */
	int (*work)(void *ctx, int fd, char *why, size_t whylen);
	/* A message other than ERROR arrived. Returns 0 to go on, 1 when
	 * the phase is over (receiver: FIN), or a negative error. */
	int (*msg)(void *ctx, int fd, const struct ferry_msg *m, char *why,
		   size_t whylen);
	/* Sender: true when the control side has nothing left to wait for
	 * (every file has its result). NULL: always true. */
	bool (*settled)(void *ctx);
	/* Receiver: called at every wake-up of the control loop (at least
	 * every interval tick), for work that waits on time. NULL: none. */
	int (*tick)(void *ctx, int fd, char *why, size_t whylen);
	void *ctx;
};

/* Sender: dial host:port and authenticate. Fills xa's peer address and
 * rep->peer. */
int ferry__client_open(const char *host, const char *port,
		       const struct ferry_opts *o, int *fd,
		       struct ferry_xport_attr *xa, struct ferry_report *rep,
		       char *why, size_t whylen);

/* Sender: PROPOSE the session (mode, total bytes), offering the
 * transports of xs (ferry__opts_check's scan) that reach xa's peer. */
int ferry__client_propose(int fd, const struct ferry_opts *o,
			  const struct ferry_xport_attr *xa,
			  struct ferry__xscan *xs, uint32_t mode,
			  uint64_t total_bytes, char *why, size_t whylen);

/* Sender: wait for ACCEPT, follow the receiver's choice among xs's
 * transports, then set up the pipeline, connect the data endpoints and
 * send READY. */
int ferry__client_connect(struct ferry__pipe *p, int fd,
			  const struct ferry_opts *o,
			  struct ferry_xport_attr *xa, struct ferry__xscan *xs,
			  struct ferry_report *rep, char *why, size_t whylen);

/* Sender: run the workers to the end with the control loop, then FIN and
 * RESULT. */
int ferry__client_run(struct ferry__pipe *p, int fd, const struct ferry_opts *o,
		      const struct ferry__hooks *h, struct ferry_report *rep,
		      char *why, size_t whylen);

/* Either side: the peer's ERROR as a reason. Returns -code for the
 * file-system errnos a caller can act on (ENOENT, EEXIST, EACCES, ENOSPC,
 * ENOTSUP ...) and FERRY_EAUTH, else -FERRY_EPEER. */
int ferry__peer_error(const struct ferry_msg *m, const char *who, char *why,
		      size_t whylen);

#endif
