/* uroce: the DPDK side (internal). One process-wide port, and one polling
 * thread (the "lcore") that stands by while any uroce session is attached.
 *
 * port.c starts the EAL once per process (arguments from the settings,
 * struct ferry_uroce_conf: --dpdk or FERRY_DPDK), takes
 * the first ethdev port, sizes mbuf pools for its frames and works out the
 * largest path MTU the port carries. lcore.c runs the rounds: rx/tx bursts
 * and every QP of every attached session (the RC engine is
 * single-threaded), one round at a time under the port's driver flag.
 * Run to completion: a worker that waits for its completions or for room
 * drives rounds itself (ferry__uport_drive), so a frame goes from the
 * worker's post to the wire, and from the wire to the worker, in one
 * thread. The polling thread only drives while no worker has for a while
 * (workers busy with files or sums). Workers still reach their QPs only
 * through the SPSC rings of uroce.h; the round moves entries between
 * those rings and the engine.
 *
 * Threads: ferry__uport_get, _tag_alloc/_free and _attach/_detach are
 * control-path calls (any thread; they take the port's lock). What is
 * marked "whoever holds driving" belongs to the thread running a round.
 */
#ifndef FERRY_UROCE_PORT_H
#define FERRY_UROCE_PORT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "xport/roce/pkt.h"

struct rte_mempool;
struct rte_mbuf;
struct rte_mbuf_ext_shared_info;
struct ferry_xport;
struct ferry__uep;
struct ferry_uroce_conf;

#define FERRY__UPORT_TXB 64      /* frames batched before a tx burst */
#define FERRY__UPORT_TXSEG 4     /* mbufs in one frame at most (zero
				    copy: header, payload, trailer) */
#define FERRY__UPORT_MAX_SESS 64 /* sessions attached at once */
#define FERRY__UROCE_TAG_BITS 15 /* QPN = tag << 9 | endpoint */

/* Port counters since the process started, written by the polling thread
 * (sessions read them for their closing log line: approximate). */
struct ferry__uport_stats {
	uint64_t rx_frames;     /* frames the port delivered */
	uint64_t rx_other;      /* not RoCEv2 (ARP, IPv6 ND, ICMP...): ignored */
	uint64_t rx_own;        /* sent by this port (a kernel that hands an
				   af_packet socket its own frames): ignored */
	uint64_t rx_malformed;  /* RoCEv2 port, but ferry__roce_parse refused */
	uint64_t rx_icrc_bad;   /* ICRC mismatch: dropped */
	uint64_t rx_unknown_qp; /* no attached QP has that number: dropped */
	uint64_t tx_frames;     /* frames the port took */
	uint64_t tx_nombuf;     /* no mbuf for a frame: the engine retries */
	uint64_t tx_flushed;    /* frames dropped unsent when sessions changed */
	uint64_t tx_refused;    /* frames the kernel refused for good (raw_fd):
				   dropped, as a NIC drops, for the engine
				   to resend */
};

/* The sessions the polling thread serves; replaced, never changed while
 * published. */
struct ferry__usess_list {
	unsigned n;
	struct ferry_xport *s[FERRY__UPORT_MAX_SESS];
};

struct ferry__uport {
	/* set once at start, read-only after */
	uint16_t port_id;
	char ifname[32];          /* kernel interface behind it, or "" */
	char desc[160];           /* one line for the log */
	struct ferry_roce_addr addr; /* this end's MAC and IPv4 */
	bool own_mac;             /* addr.mac is uroce's, not the interface's */
	uint32_t max_mtu;         /* largest IB path MTU the port carries */
	unsigned rx_frames;       /* frames its receive ring holds */
	struct rte_mempool *rx_pool, *tx_pool;
	/* zero-copy transmit: header and trailer mbufs around an mbuf that
	 * points into the registered region (only for PMDs that copy, as
	 * af_packet does: nothing is DMA-mapped); NULL pools: copy */
	struct rte_mempool *hdr_pool, *ext_pool;
	struct rte_mbuf_ext_shared_info *shinfo;
	int absorb_fd;            /* UDP 4791 socket that soaks up the
				     kernel's copy of our frames, or -1 */
	/* event waits (--poll event): rx_fd becomes readable when the port
	 * has a frame (af_packet: the PMD's socket, whose poll() looks at
	 * its receive ring; -1 where the PMD offers none, and then the two
	 * eventfds are -1 too); post_fd is rung by a post while the polling
	 * thread sleeps on the port, wake_fd by a round that handed a
	 * sleeping worker something */
	int rx_fd, post_fd, wake_fd;
	/* af_packet: a socket of uroce's own on the interface that sends
	 * each burst with one sendmmsg, the kernel copying every frame once
	 * from where it lies, instead of the PMD's transmit ring (-1: the
	 * PMD transmits) */
	int raw_fd;

	pthread_mutex_t lock;     /* guards what follows, up to the poller's */
	uint8_t tags[1u << (FERRY__UROCE_TAG_BITS - 3)]; /* bitmap in use */
	struct ferry__usess_list lists[2]; /* live is one of them */
	unsigned cur;
	pthread_t th;
	bool running;

	/* shared with the polling thread and the workers */
	_Atomic(struct ferry__usess_list *) live;
	atomic_bool driving;      /* one thread at a time runs a round */
	atomic_bool spin_held;    /* a worker is the process's spinner */
	_Atomic uint64_t worker_ns; /* when a worker last drove a round */
	atomic_bool stop;
	_Atomic uint64_t loops;   /* finished polling rounds (quiescence) */
	_Atomic int tid;          /* the polling thread's (its CPU time);
				     0: not running */
	atomic_bool port_asleep;  /* the polling thread sleeps on rx_fd */
	atomic_uint event_sess;   /* attached sessions in event mode: the
				     polling thread sleeps on the port
				     instead of spinning */

	/* whoever holds driving */
	const struct ferry__usess_list *seen; /* the list of the last round */
	struct rte_mbuf *txb[FERRY__UPORT_TXB];
	unsigned ntx;
	struct mmsghdr txm[FERRY__UPORT_TXB]; /* raw_fd's burst */
	struct iovec txv[FERRY__UPORT_TXB][FERRY__UPORT_TXSEG];
	bool wake_due;            /* the round handed a sleeper something */
	/* the polling thread's, event waits (port_sleep): frames received
	 * when the last window began, and when; whether frames streamed in
	 * over the window before */
	uint64_t gather_rx, gather_ns;
	bool gathering;
	struct ferry__uport_stats st;
};

/* The process's port, started on first use (EAL init, port setup) with
 * the settings c of that first call. A failure is final for the process
 * (the EAL cannot start twice): every later call returns the same error
 * and reason. */
int ferry__uport_get(const struct ferry_uroce_conf *c,
		     struct ferry__uport **out, char *why, size_t whylen);

/* True, with the reason, when the port failed to start earlier in this
 * process (so the transport is not usable here). Starts nothing. */
bool ferry__uport_failed(char *why, size_t whylen);

/* A session tag (1 .. 2^15 - 1) no other live session of this process
 * has. Returns 0, or -EBUSY when too many sessions are open. */
int ferry__uport_tag_alloc(struct ferry__uport *pt, uint32_t *tag);
void ferry__uport_tag_free(struct ferry__uport *pt, uint32_t tag);

/* Hand a connected session to the polling thread (started with the first
 * one), or take it back: when detach returns, the thread no longer looks
 * at x and has stopped if x was the last. Returns 0, -ENOSPC (too many
 * sessions), or -errno when the thread cannot start. */
int ferry__uport_attach(struct ferry__uport *pt, struct ferry_xport *x);
void ferry__uport_detach(struct ferry__uport *pt, struct ferry_xport *x);

/* Run one round (receive, serve every attached session, send) in the
 * calling thread, unless another thread is running one. Returns the work
 * done (frames and completions), or -EBUSY. For workers of attached
 * sessions, while they wait. */
int ferry__uport_drive(struct ferry__uport *pt);

/* Event waits (--poll event). A worker with nothing to do sleeps on
 * wake_fd after marking its endpoint e as sleeping, unless e's rings
 * already hold something; the round that hands e a completion or its
 * error rings wake_fd. Meanwhile the polling thread runs the port and
 * sleeps on its receive ring between frames. Returns 0 after a sleep, 1
 * when there was no need to, -ENOTSUP when there is nothing to sleep on
 * (the caller backs off instead). */
int ferry__uport_wait(struct ferry__uport *pt, struct ferry__uep *e);

/* After a post is published: wake the polling thread if it sleeps on the
 * port, so that the post goes out now. */
void ferry__uport_kick(struct ferry__uport *pt);

/* The polling thread's body (lcore.c) and the engine's tx callback. */
void *ferry__uport_poller(void *arg);
int ferry__uport_tx(void *ctx, const struct ferry_roce_pkt *p);

#endif
