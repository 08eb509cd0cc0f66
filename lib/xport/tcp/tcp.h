/* tcp transport internals: N kernel TCP streams carrying ferry frames.
 *
 * Frame on a data stream (little-endian), then len payload bytes:
 *   u32 type   FERRY__TCP_WRITE (sender -> receiver) or FERRY__TCP_SEND
 *   u32 imm    immediate data (WRITE)
 *   u64 off    ring offset (WRITE)
 *   u32 len    payload bytes
 *   u32 rsvd   zero
 * The receiver reads WRITE payload straight into its registered ring after
 * checking off + len against the ring, the same check an RDMA NIC makes
 * against the memory region.
 */
#ifndef FERRY_XPORT_TCP_H
#define FERRY_XPORT_TCP_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "ferry/xport.h"

#define FERRY__TCP_WRITE 0x57525446u /* "FTRW" */
#define FERRY__TCP_SEND 0x53525446u  /* "FTRS" */
#define FERRY__TCP_HDR 24
#define FERRY__TCP_TOKEN 16
#define FERRY__TCP_MAX_EP 256
#define FERRY__TCP_WCQ 64 /* pending write completions per endpoint */
/* send buffers when none is asked for: this much over all streams of a
 * session, at most FERRY__TCP_SNDBUF_MAX per stream (auto_sndbuf(), tcp.c) */
#define FERRY__TCP_SNDBUF_TOTAL ((size_t)32 << 20)
#define FERRY__TCP_SNDBUF_MAX ((size_t)32 << 20)

struct ferry_mr {
	uint8_t *base;
	size_t len;
	unsigned access;
};

struct tcp_ep {
	int fd;
	/* sender: write completions not yet reaped (posts are synchronous) */
	uint64_t wcq[FERRY__TCP_WCQ];
	unsigned wc_head, wc_count;
	uint64_t bytes_out; /* fault hook accounting */
} __attribute__((aligned(64)));

struct ferry_xport {
	struct ferry_xport_attr attr;
	struct tcp_ep *ep;
	unsigned n_ep;
	int lfd;                        /* receiver: data listener */
	uint8_t token[FERRY__TCP_TOKEN]; /* binds data streams to the session */
	struct ferry_mr *ring;          /* where writes land: the receiver's
					   ring; the sender's after duplex */
	size_t sockbuf;                 /* asked for (conf.tcp, else the
					   path plan); 0: none */
	bool planned;                   /* sockbuf is the path plan's */
	size_t auto_sndbuf;             /* 0: kernel autotuning */
	atomic_bool cancelled;
	_Atomic uint64_t heard_ns;      /* bytes last read from the peer,
					   any stream */
	uint64_t fault_flip_at;         /* fault hook: flip at byte N - 1;
					   0 = off (always, in builds
					   without test hooks) */
	unsigned fault_pause_ms;        /* fault hook: pause endpoint 0's
					   first frame half-way; 0 = off */
};

/* Write the bytes of iov / read exactly len bytes. A stream that makes no
 * progress for the session timeout (SO_SNDTIMEO/SO_RCVTIMEO) fails.
 * Return 0, -FERRY_ECLOSED, -FERRY_ETIMEOUT, -ECANCELED or -errno. */
struct iovec;
int ferry__tcp_writev_full(struct ferry_xport *x, int fd, struct iovec *iov,
			   int iovcnt);
int ferry__tcp_read_full(struct ferry_xport *x, int fd, void *buf, size_t len);

/* The fault hook of test builds (tcp_fault.c; tcp_fault_none.c in builds
 * without test hooks, where it never fires): FERRY_FAULT_TCP_FLIP_AT=N
 * flips one bit of endpoint 0's outgoing byte stream at stream byte N
 * (counted from the first frame; only write payload bytes are flipped: an
 * offset inside a frame header or a small message never fires), once.
 * open sets x->fault_flip_at; a write on endpoint 0 while it is set asks
 * flip to split payload [laddr, laddr + len) into iov[1..] around the
 * flipped byte (kept in *flipped) and gets the iovec count back (2 when
 * the byte is not in this write). FERRY_FAULT_TCP_PAUSE_MS=N stops
 * endpoint 0 for N ms half-way through its first data frame, once (a
 * stream silent mid-frame while the others go on): pause gives the
 * milliseconds to a write on endpoint 0 while it is set, once. built says
 * whether the hooks are here. */
void ferry__tcp_fault_open(struct ferry_xport *x);
unsigned ferry__tcp_fault_pause(struct ferry_xport *x);
int ferry__tcp_fault_flip(struct ferry_xport *x, const struct tcp_ep *e,
			  const void *laddr, size_t len, struct iovec *iov,
			  uint8_t *flipped);
bool ferry__tcp_fault_built(void);

/* Datapath ops (tcp_dp.c). */
int ferry__tcp_post_write_imm(struct ferry_xport *x, unsigned ep,
			      struct ferry_mr *lmr, const void *laddr,
			      size_t len, uint64_t roff, uint32_t imm,
			      uint64_t wr_id, unsigned flags);
int ferry__tcp_post_send(struct ferry_xport *x, unsigned ep, const void *msg,
			 size_t len);
int ferry__tcp_poll(struct ferry_xport *x, unsigned ep, struct ferry_wc *wc,
		    unsigned max, int timeout_ms);

#endif
