/* uroce transport internals: one session's state (internal).
 *
 * n_ep RC queue pairs of the engine (rc.h), one per endpoint, all driven by
 * the port's polling thread (port.h). A stream worker never touches the
 * engine: per endpoint it shares two single-producer single-consumer rings
 * with the polling thread.
 *
 *  work ring (worker -> poller, R entries): post_write_imm / post_send fill
 *    the entry at tail and publish tail. The poller submits [sub, tail) to
 *    the QP, always signalled, so the engine completes every entry in
 *    order; it writes the entry's status and publishes done. The worker's
 *    poll reaps [head, done): a FERRY_WC_WRITE for each signalled write,
 *    nothing for sends and unsignalled writes. An entry is reused only
 *    after head passed it, so the pipeline may keep up to R writes posted
 *    and not yet reaped (R is sized from the ring geometry, below).
 *  completion ring (poller -> worker, C entries): the QP's receive
 *    completions (WRITE_IMM landed, SEND arrived) as struct ferry__ucqe.
 *    The poller stops reaping the QP while it is full; the engine then
 *    answers RNR NAKs and the peer waits, so nothing is lost.
 *
 * Start: the receiver's accept posts one 16-byte SEND, the hello, on
 * every QP before the polling thread sees them; the sender's poller takes
 * the first message on a QP as that hello (it does not reach the worker)
 * and submits nothing on the QP before it. So no write reaches a receiver
 * whose QPs do not exist yet (such frames would be dropped and cost a
 * retransmission timeout).
 *
 * QP numbers: tag << 9 | endpoint, with a per-session random tag unique in
 * the process, so the polling thread demultiplexes on the number alone
 * and frames of an older session are dropped. Start PSNs come from a
 * random per-session seed. Both travel in the endpoint blobs (uroce.c);
 * with a verbs peer (attr.family), this end's QPNs and PSNs go in the
 * RoCEv2 family's description, and the peer's come back listed there
 * (uroce_rocev2.c).
 */
#ifndef FERRY_UROCE_H
#define FERRY_UROCE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "ferry/session.h"
#include "ferry/xport.h"
#include "xport/rocev2.h"
#include "xport/uroce/port.h"
#include "xport/uroce/rc.h"

#define FERRY__UROCE_QPN_SHIFT 9
#define FERRY__UROCE_MSG 64 /* receive buffer bytes: one small message */
#define FERRY__UROCE_HELLO UINT64_MAX /* wr_id of the receiver's hello */
/* The hello's bytes are the RoCEv2 family's (FERRY__ROCEV2_HELLO), so a
 * verbs peer sends and expects the same. */

_Static_assert(FERRY_XPORT_MSG_MAX <= FERRY__UROCE_MSG, "messages fit");
_Static_assert(FERRY_MAX_STREAMS <= (1u << FERRY__UROCE_QPN_SHIFT),
	       "an endpoint index fits below the tag");

struct ferry_mr {
	uint8_t *base;
	size_t len;
	unsigned access;
	uint32_t rkey;
};

enum { FERRY__UWR_WRITE = 1, FERRY__UWR_SEND = 2 };

struct ferry__uwr { /* one work ring entry */
	const uint8_t *laddr;
	uint64_t roff, wr_id;
	uint32_t len, imm;
	uint8_t op;
	bool signaled;
	int status; /* written by the poller before done passes the entry */
	uint8_t msg[FERRY_XPORT_MSG_MAX];
};

struct ferry__ucqe { /* one completion ring entry */
	uint64_t offset;
	uint32_t imm, len;
	uint8_t op; /* FERRY_WC_WRITE_IMM or FERRY_WC_RECV */
	uint8_t msg[FERRY_XPORT_MSG_MAX];
};

struct ferry__uep {
	/* written by the worker */
	_Atomic uint32_t tail __attribute__((aligned(64)));
	uint32_t head;
	_Atomic uint32_t cq_head;
	atomic_bool sleeping;     /* its worker sleeps until kicked (event
				     waits): a round that hands it something
				     rings the port's wake_fd */
	uint64_t news_ns;         /* when its worker last reaped something
				     (event waits spin a while after it) */
	/* written by the poller */
	_Atomic uint32_t done __attribute__((aligned(64)));
	_Atomic uint32_t cq_tail;
	_Atomic int err;          /* the QP's error, once in error */
	uint32_t sub;             /* next entry to submit */
	struct ferry_rc_qp *qp;
	uint8_t (*rbuf)[FERRY__UROCE_MSG]; /* receive buffers, R of them */
	bool dead;                /* error seen and reported */
	bool ready;               /* sender: the receiver's hello arrived */
	bool bad_hello;           /* sender: something else came first */
	char why[200];            /* the engine's reason, set before err */
	/* fixed after setup */
	struct ferry__uwr *wr __attribute__((aligned(64)));
	struct ferry__ucqe *cq;
	uint32_t qpn, my_psn, peer_psn;
};

struct ferry_xport {
	struct ferry_xport_attr attr;
	unsigned n_ep;
	struct ferry__uport *port;
	struct ferry_rc_pd *pd;
	struct ferry_mr *ring;     /* where the peer writes: the receiver's ring;
				      the sender's too once duplex (osu) */
	uint32_t tag;              /* this end's QPN tag */
	uint64_t seed;             /* this end's start-PSN seed */
	uint32_t mtu;              /* path MTU, once agreed */
	uint32_t R;                /* work / completion ring entries */
	/* the peer, from its blob */
	struct ferry_roce_addr peer;
	uint32_t peer_tag, peer_rkey;
	uint64_t peer_seed;
	uint64_t peer_base;        /* RETH address of its ring's offset 0 */
	struct ferry__rocev2_qp *peer_qp; /* a verbs peer's QPs (n_ep),
					     or NULL: from tag and seed */
	struct ferry__uep *ep;     /* n_ep, once connected */
	bool attached;
	atomic_bool cancelled;
};

/* Start PSN of endpoint i for a seed (24 bits). */
uint32_t ferry__uroce_psn(uint64_t seed, unsigned i);

/* Endpoints (uroce_ep.c): with mtu, the peer's address and its QPs (tag
 * and seed, or peer_qp) set, size the rings for a receive ring of
 * ring_len bytes, create the QPs, post their receives and connect them;
 * the receiver's also queue their hello. peer_rx_frames: what the peer's
 * port takes in a burst (0: unknown). Free logs the counters. */
int ferry__uroce_eps_create(struct ferry_xport *x, bool receiver,
			    uint64_t ring_len, unsigned peer_rx_frames, char *why,
			    size_t whylen);
void ferry__uroce_eps_free(struct ferry_xport *x);

/* Both ends, the peer's description in (x->peer and its QPs set): make
 * the QPs and hand the session to the polling thread (uroce_ep.c). */
int ferry__uroce_start(struct ferry_xport *x, bool receiver,
		       uint64_t ring_len, unsigned peer_rx_frames, char *why,
		       size_t whylen);

/* A verbs peer (attr.family): listen, connect and accept in the RoCEv2
 * family's description (uroce_rocev2.c). */
int ferry__uroce_rc_listen(struct ferry_xport *x, struct ferry_mr *ring,
			   void *blob, size_t *blob_len, char *why,
			   size_t whylen);
int ferry__uroce_rc_connect(struct ferry_xport *x, const void *blob,
			    size_t blob_len, void *out, size_t *out_len,
			    char *why, size_t whylen);
int ferry__uroce_rc_accept(struct ferry_xport *x, const void *peer_blob,
			   size_t peer_len, char *why, size_t whylen);

/* The polling thread's service of one session (lcore.c): submit posted
 * work, run the engine's timers, move completions. Returns work done. */
unsigned ferry__uroce_service(struct ferry_xport *x, uint64_t now);

/* Datapath ops (uroce_dp.c). */
int ferry__uroce_post_write_imm(struct ferry_xport *x, unsigned ep,
				struct ferry_mr *lmr, const void *laddr,
				size_t len, uint64_t roff, uint32_t imm,
				uint64_t wr_id, unsigned flags);
int ferry__uroce_post_send(struct ferry_xport *x, unsigned ep,
			   const void *msg, size_t len);
int ferry__uroce_poll(struct ferry_xport *x, unsigned ep, struct ferry_wc *wc,
		      unsigned max, int timeout_ms);

/* Wait a little, longer the longer it has waited (spin, yield, sleep);
 * spins counts the calls so far. For worker waits. */
void ferry__uroce_backoff(unsigned *spins);

#endif
