/* How many tcp streams, and how big their buffers, to fill a path
 * (internal). The rule (tcp_plan.c, docs/wan.md):
 *
 *   BDP = rate x RTT; the streams' windows together must cover
 *   BDP x 5/4. A stream's window is what both ends can give it: the
 *   receiver's buffer, autotuned up to tcp_rmem's maximum (a window of
 *   half of it: the kernel keeps half for overhead) or set by ferry up to
 *   rmem_max (or past it, with CAP_NET_ADMIN), and the sender's, up to
 *   tcp_wmem's maximum or wmem_max (or past it). Streams = the windows
 *   needed, at least FERRY__PLAN_MIN_STREAMS (a core's worth of
 *   parallelism on short paths) and at most FERRY__PLAN_MAX_STREAMS,
 *   within a memory budget for one host's socket buffers. A ring for
 *   RDMA holds the same BDP x 5/4.
 *
 * Explicit choices win: streams (-P) and a buffer (--sockbuf) the user
 * gave are kept, and the plan says what they leave short.
 */
#ifndef FERRY_XPORT_TCP_PLAN_H
#define FERRY_XPORT_TCP_PLAN_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#define FERRY__PLAN_MIN_STREAMS 4
#define FERRY__PLAN_MAX_STREAMS 64
/* Socket buffers one host may spend on a session, by default (spent
 * only while the data is in flight). */
#define FERRY__PLAN_BUDGET ((uint64_t)16 << 30)
/* TCP's largest window (scale 14), and what ferry asks for at most when
 * it may exceed the sysctls. */
#define FERRY__PLAN_MAX_WINDOW ((uint64_t)1 << 30)
#define FERRY__PLAN_FORCE_BUF ((uint64_t)256 << 20)
/* A new connection's first window, bytes: ten segments of 1448 (RFC 6928,
 * Linux's default where the route sets no initcwnd). */
#define FERRY__TCP_IW 14480u

/* One host's limits on a socket's buffers (bytes), from its sysctls, and
 * whether it may exceed them (CAP_NET_ADMIN: SO_RCVBUFFORCE and
 * SO_SNDBUFFORCE). */
struct ferry__tcp_limits {
	uint64_t rmem_max, wmem_max;         /* net.core */
	uint64_t tcp_rmem_max, tcp_wmem_max; /* net.ipv4, the third value */
	bool force;
	bool known;                          /* read; else the defaults */
};

/* Read root/proc/sys (root "" for the host) and root/proc/self/status
 * (CapEff). Unreadable values keep Linux's defaults (212992, 6 MiB,
 * 4 MiB) and leave known false. */
void ferry__tcp_limits_read(const char *root, struct ferry__tcp_limits *l);

struct ferry__tcp_plan {
	uint64_t bdp;       /* rate x RTT, bytes */
	uint64_t want;      /* BDP x 5/4: what the windows must cover */
	uint64_t window;    /* one stream's window */
	uint64_t reach;     /* the largest window a stream could have */
	unsigned streams;
	uint64_t sockbuf;   /* to ask for per socket; 0: autotuning will do */
	uint64_t covered;   /* streams x window */
	uint64_t ring;      /* an RDMA ring that holds want */
	char why[256];      /* "RTT 300 ms, target 2 Gb/s, BDP 75 MB: ..." */
};

/* The plan for rtt_s and rate_bps between a receiver rx and a sender tx;
 * streams and sockbuf: the user's (0: ferry's to choose); budget: bytes
 * of socket buffers one host may spend (0: FERRY__PLAN_BUDGET). */
void ferry__tcp_plan(double rtt_s, double rate_bps,
		     const struct ferry__tcp_limits *rx,
		     const struct ferry__tcp_limits *tx, unsigned streams,
		     uint64_t sockbuf, uint64_t budget,
		     struct ferry__tcp_plan *p);

#endif
