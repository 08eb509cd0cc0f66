/* verbs transport internals: RC queue pairs on an RDMA device, connected
 * with librdmacm.
 *
 * Shape of a session (both roles):
 *   one PD on the device chosen at open (by name, by netdev, or by the
 *   route to the peer); one SRQ of small receive buffers shared by every
 *   endpoint (each write-with-immediate consumes one, so does a message);
 *   per endpoint an RC QP with its own send CQ and receive CQ, driven by
 *   one worker thread; one rdma_cm event channel, read by a cm thread
 *   (receiver: from listen on, so it accepts QPs whenever the sender's
 *   REQs come; both: marks endpoints whose peer disconnected).
 * With a uroce peer (attr.family, verbs_rc.c) there is no rdma_cm: the QPs
 * are made on the PD and brought to RTS from the RoCEv2 family's endpoint
 * description (lib/xport/rocev2.h); the receiver's hello on each QP tells
 * its sender that the QP is ready.
 *
 * Endpoint blob (listen -> control channel -> connect), little-endian,
 * FERRY__VERBS_BLOB_LEN bytes:
 *   u16 version   FERRY__VERBS_VERSION
 *   u16 port      rdma_cm port the receiver listens on
 *   u16 n_ep      endpoints (QPs) to connect
 *   u8  family    4 or 6
 *   u8  zero
 *   u8  addr[16]  receiver's data address (IPv4 in the first 4 bytes)
 *   u8  token[16] binds the QPs to this session
 *
 * Connection private data, both directions, little-endian,
 * FERRY__VERBS_PRIV_LEN bytes (the REQ limit for RC over rdma_cm is 56):
 *   u8  version, u8 kind (REQ from the sender, REP from the receiver)
 *   u16 zero, u32 ep, u32 n_ep
 *   u32 rkey      (REP) key of the receiver's ring
 *   u64 ring_base (REP) where offset 0 of the ring is on the wire (the ring
 *                  is registered zero-based, so this is 0 for a
 *                  page-aligned ring: no virtual address leaves the host)
 *   u64 ring_len  (REP) bytes of the ring
 *   u8  token[16] (REQ) the blob's token; (REP) echoed
 */
#ifndef FERRY_XPORT_VERBS_H
#define FERRY_XPORT_VERBS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "ferry/error.h"
#include "ferry/topo.h"
#include "ferry/xport.h"

#define FERRY__VERBS_VERSION 1
#define FERRY__VERBS_MAX_EP 256
#define FERRY__VERBS_TOKEN 16
#define FERRY__VERBS_BLOB_LEN 40
#define FERRY__VERBS_PRIV_LEN 48
#define FERRY__VERBS_PRIV_REQ 1
#define FERRY__VERBS_PRIV_REP 2

/* Queue sizes (each capped by what the device reports). The SQ bounds the
 * writes in flight per QP; a post that finds it full waits (up to the
 * session timeout) for the NIC. Unsignalled WRs only free SQ slots when a
 * later signalled one completes, so every SIG_DIV-th of the SQ is
 * signalled even when the caller asks for no completion. */
#define FERRY__VERBS_SQ_DEPTH 1024
#define FERRY__VERBS_SIG_DIV 4
/* SRQ: SRQ_PER_EP buffers per endpoint, within [SRQ_MIN, SRQ_MAX]. Every
 * endpoint's receive CQ must hold the whole SRQ (one QP may consume all of
 * it), so this is also the receive CQ size. Running dry is not an error:
 * the sender's NIC gets RNR NAKs and retries (rnr_retry 7 = forever). */
#define FERRY__VERBS_SRQ_PER_EP 16
#define FERRY__VERBS_SRQ_MIN 256
#define FERRY__VERBS_SRQ_MAX 4096
#define FERRY__VERBS_POLL_BATCH 32 /* CQEs per ibv_poll_cq, reposts per chain */
/* Event mode: the longest sleep on a completion channel before looking at
 * cancel, a departed peer and the deadline again. */
#define FERRY__VERBS_EVENT_SLICE_MS 100

/* Transport timers, sized for WAN round trips (see ferry__verbs_ack_timeout
 * and docs/verbs.md). */
#define FERRY__VERBS_RTT_MS 300.0 /* assumed RTT unless FERRY_VERBS_RTT_MS */
#define FERRY__VERBS_ACK_MIN 14   /* 67 ms: the floor, for short paths */
#define FERRY__VERBS_ACK_MAX 31   /* the field is 5 bits; 0 means never */
#define FERRY__VERBS_ACK_MARGIN 4.0 /* timeout >= MARGIN x RTT */
#define FERRY__VERBS_RETRY 7      /* transport retries (3-bit field, max) */
#define FERRY__VERBS_RNR_RETRY 7  /* 7 = retry forever on RNR NAK */

/* Private data of REQ must fit what rdma_cm leaves of the IB CM REQ (92
 * bytes less its 36-byte header); the blob, the ops table's limit. */
_Static_assert(FERRY__VERBS_PRIV_LEN <= 56, "REQ private data limit");
_Static_assert(FERRY__VERBS_BLOB_LEN <= FERRY_EP_MAX, "endpoint blob");
_Static_assert(FERRY__VERBS_SRQ_MIN <= FERRY__VERBS_SRQ_MAX, "SRQ bounds");
_Static_assert(FERRY__VERBS_SQ_DEPTH / FERRY__VERBS_SIG_DIV >= 2,
	       "signal often enough that the SQ never fills unsignalled");
_Static_assert((FERRY__VERBS_SQ_DEPTH & (FERRY__VERBS_SQ_DEPTH - 1)) == 0,
	       "the SQ depth is a power of two");

struct ferry_mr {
	struct ibv_mr *mr;
	uint8_t *base;
	size_t len;
	uint64_t iova;          /* where base is in the MR's address space:
				 * what local SGEs and the peer's writes use
				 * (its offset in the page when zero-based) */
	unsigned access;
	struct ferry_mr *next;  /* every registration, freed at close */
};

/* A signalled send WR, in posting order (RC completes in order). */
struct verbs_sig {
	uint64_t wr_id;  /* the caller's, for FERRY_WC_WRITE */
	uint64_t sq_end; /* sq_posted after this WR: its completion frees
			    every SQ slot up to here */
	bool user;       /* report it (false: signalled only to free slots) */
};

enum verbs_ep_state {
	FERRY__VERBS_EP_IDLE = 0,
	FERRY__VERBS_EP_ADDR,      /* sender: resolving the address */
	FERRY__VERBS_EP_ROUTE,     /* sender: resolving the route */
	FERRY__VERBS_EP_CONNECT,   /* REQ sent / REP sent */
	FERRY__VERBS_EP_UP,        /* ESTABLISHED */
};

struct verbs_ep {
	/* datapath: the endpoint's worker only */
	struct ibv_qp *qp;
	struct ibv_cq *scq, *rcq;
	struct ibv_comp_channel *cch; /* event mode: both CQs report here */
	bool armed;                  /* event mode: both CQs armed */
	uint64_t sq_posted, sq_done; /* send WRs posted / known complete */
	unsigned sq_depth, sig_every, unsig;
	struct verbs_sig *sig;      /* ring of 2 x sq_depth */
	uint64_t sig_mask, sig_tail, sig_done, sig_rep;
	struct ibv_send_wr wwr, swr; /* built once: write-imm, send */
	struct ibv_sge wsge, ssge;
	struct ibv_recv_wr rwr[FERRY__VERBS_POLL_BATCH]; /* SRQ reposts */
	struct ibv_sge rsge[FERRY__VERBS_POLL_BATCH];
	bool await_hello;            /* sender with a family peer: post
					nothing before its hello came */
	int err;                     /* first error: every later call */
	uint64_t qp_err_ns;          /* receiver: when its QP was first seen
					in the error state, 0 if never */
	atomic_bool peer_gone;       /* set by the cm thread */

	/* control path */
	struct rdma_cm_id *id;
	enum verbs_ep_state state;
	unsigned idx;
	uint32_t psn;                /* family peer: this QP's first PSN */
	uint64_t t0_ns;              /* connect started (RTT estimate) */
} __attribute__((aligned(64)));

struct ferry_xport {
	struct ferry_xport_attr attr;
	unsigned n_ep;
	struct verbs_ep *ep;
	atomic_bool cancelled;
	bool receiver;               /* listen was called */

	/* device */
	struct ibv_context **devs;   /* rdma_get_devices(), librdmacm's */
	struct ibv_context *ctx;     /* the chosen one, shared with cm ids */
	struct ibv_pd *pd;
	char dev[64], netdev[FERRY_IFNAMSIZ], route_if[FERRY_IFNAMSIZ];
	bool dev_forced;             /* FERRY_VERBS_DEVICE named it */
	struct ibv_device_attr dattr;
	uint32_t max_msg;            /* smallest port max_msg_sz in use */
	uint8_t ack_timeout;
	double rtt_ms;

	/* a peer of the RoCEv2 family (attr.family, verbs_rc.c): this end
	 * as its QPs name it */
	unsigned port, gid_index;
	uint32_t ip;                 /* IPv4, host order: GID ::ffff:ip */
	uint8_t mac[6];
	uint32_t mtu;                /* path MTU in bytes: the port's, then
					the one agreed */

	/* registrations and the locked-memory budget */
	struct ferry_mr *mrs;
	uint64_t memlock_limit, locked;
	bool cap_ipc_lock;

	/* shared receive side: SRQ of 64-byte buffers */
	struct ibv_srq *srq;
	uint8_t *rbuf;
	struct ibv_mr *rmr;
	unsigned srq_depth;

	/* connection management */
	struct rdma_event_channel *ch;
	struct rdma_cm_id *lid;      /* receiver: listener */
	uint8_t token[FERRY__VERBS_TOKEN];
	struct ferry_mr *ring;       /* where the peer's writes land: the
					receiver's ring; the sender's once
					duplex (osu) */
	uint32_t rkey;               /* sender: the receiver's ring */
	uint64_t rbase, rlen;
	/* the cm thread: from listen (receiver) or the end of connect
	 * (sender) to close, it handles every rdma_cm event */
	pthread_t cm;
	bool cm_on;
	int wake_fd;                 /* eventfd: stop the cm thread */
	int prog_fd;                 /* eventfd: an endpoint came up or failed */
	atomic_uint up;              /* receiver: endpoints ESTABLISHED */
	atomic_int setup_err;        /* receiver: first setup failure */
	char setup_why[256];         /* written before setup_err is set */
};

/* --- pure helpers (verbs_wire.c), unit-tested --- */

/* The IB local ACK timeout exponent for a path of rtt_ms: the smallest t
 * in [FERRY__VERBS_ACK_MIN, FERRY__VERBS_ACK_MAX] with 4.096 us x 2^t >=
 * FERRY__VERBS_ACK_MARGIN x rtt_ms. Not a finite number >= 0: the RTT the
 * design plans for (FERRY__VERBS_RTT_MS). Never 0 (0 disables the timer). */
uint8_t ferry__verbs_ack_timeout(double rtt_ms);
/* The period that exponent stands for, in milliseconds. */
double ferry__verbs_ack_period_ms(uint8_t timeout);

/* The traffic class of a session's QPs for a DSCP (attr.dscp): the whole
 * DS byte, dscp << 2, the ECN bits left 0 (a NIC with ECN on sets ECT
 * itself); what rdma_cm's RDMA_OPTION_ID_TOS and a hand-made RTR's
 * grh.traffic_class take. dscp < 0: 0, an unmarked QP's. */
uint8_t ferry__verbs_tclass(int dscp);

struct ferry__verbs_priv {
	uint8_t kind; /* FERRY__VERBS_PRIV_REQ or _REP */
	uint32_t ep, n_ep, rkey;
	uint64_t ring_base, ring_len;
	uint8_t token[FERRY__VERBS_TOKEN];
};

/* Encode into buf (len >= FERRY__VERBS_PRIV_LEN). Returns the bytes used,
 * or 0 when buf is too small. */
size_t ferry__verbs_priv_encode(const struct ferry__verbs_priv *p, void *buf,
				size_t len);
/* Decode what a peer sent (rdma_cm may pad it: longer is fine). Returns 0,
 * -FERRY_EVERSION for another version, or -FERRY_EPROTO when truncated or
 * inconsistent (unknown kind, ep >= n_ep, a REP ring that wraps). */
int ferry__verbs_priv_decode(const void *buf, size_t len,
			     struct ferry__verbs_priv *p);

/* Duplex (`ferry bench --osu`): the sender's ring, which the receiver may
 * write into, described in connect's out blob (carried by READY to the
 * receiver's accept). Little-endian, FERRY__VERBS_DUPLEX_LEN bytes:
 *   u16 version, u16 zero, u32 rkey, u64 ring_base (the zero-based iova,
 *   as in REP), u64 ring_len
 * A sender that is not duplex sends nothing (length 0). */
#define FERRY__VERBS_DUPLEX_LEN 24
_Static_assert(FERRY__VERBS_DUPLEX_LEN <= FERRY_EP_MAX, "duplex blob");
struct ferry__verbs_duplex {
	uint32_t rkey;
	uint64_t ring_base, ring_len;
};
/* Encode into buf; the bytes used, or 0 when buf is too small. */
size_t ferry__verbs_duplex_encode(const struct ferry__verbs_duplex *d,
				  void *buf, size_t len);
/* 0, -FERRY_EVERSION, or -FERRY_EPROTO (wrong length, a ring of 0 bytes
 * or one that wraps). */
int ferry__verbs_duplex_decode(const void *buf, size_t len,
			       struct ferry__verbs_duplex *d);

struct ferry__verbs_blob {
	uint16_t port, n_ep;
	struct sockaddr_storage addr; /* AF_INET or AF_INET6, port set */
	uint8_t token[FERRY__VERBS_TOKEN];
};

/* Encode into buf (*len in: capacity, out: used). 0, -ENOSPC, or -EINVAL
 * for an address that is not IPv4/IPv6. IPv4-mapped IPv6 goes as IPv4. */
int ferry__verbs_blob_encode(const struct ferry__verbs_blob *b, void *buf,
			     size_t *len);
/* 0, -FERRY_EVERSION, or -FERRY_EPROTO (wrong length, family, port 0, no
 * endpoints). */
int ferry__verbs_blob_decode(const void *buf, size_t len,
			     struct ferry__verbs_blob *b);

/* May want more bytes be locked, with limit (UINT64_MAX = unlimited) and
 * locked already? 0, or -ENOMEM with why saying how to raise the limit. */
int ferry__verbs_memlock_check(uint64_t limit, uint64_t locked, uint64_t want,
			       bool cap_ipc_lock, char *why, size_t whylen);

/* --- device selection over a sysfs tree (verbs_dev.c), unit-tested --- */

/* The RDMA device bound to netdev ifname: SYSROOT/class/infiniband/DEV/
 * device/net/IFNAME, or for software devices (rxe, siw) a GID's netdev in
 * SYSROOT/class/infiniband/DEV/ports/P/gid_attrs/ndevs/N. 0, or -ENODEV. */
int ferry__verbs_dev_of_netdev(const char *sysroot, const char *ifname,
			       char *dev, size_t devlen);
/* The netdev of RDMA device dev, the same two ways. 0, or -ENODEV. */
int ferry__verbs_netdev_of_dev(const char *sysroot, const char *dev,
			       char *ifname, size_t iflen);
/* "mlx5_0 (ens1f0), mlx5_1 (ens1f1)", sorted; "" when there are none.
 * Returns the number of devices. */
int ferry__verbs_dev_list(const char *sysroot, char *buf, size_t len);
/* Choose the device: want (an RDMA device or a netdev name, from the user)
 * if given, else the device behind route_if (the netdev that reaches the
 * peer), else the only device there is. 0, or with why: -FERRY_ENOXPORT
 * when there is no device at all or none on the way to the peer (another
 * transport may serve), -ENODEV when want names none or the choice is
 * ambiguous. */
int ferry__verbs_pick_dev(const char *sysroot, const char *want,
			  const char *route_if, char *dev, size_t devlen,
			  char *why, size_t whylen);

/* The RoCE v2 GID entry of dev for IPv4 address ip (host order):
 * SYSROOT/class/infiniband/DEV/ports/P/gids/N reads ::ffff:ip and
 * gid_attrs/types/N "RoCE v2". 0 with *port and *index, -ENOENT when no
 * entry has it, -ENODEV when dev has no ports. */
int ferry__verbs_gid_find(const char *sysroot, const char *dev, uint32_t ip,
			  unsigned *port, unsigned *index);
/* The Ethernet address of netdev ifname (SYSROOT/class/net/IF/address).
 * 0, -ENODEV, -errno, or -EINVAL when it is not one. */
int ferry__verbs_netdev_mac(const char *sysroot, const char *ifname,
			    uint8_t mac[6]);

/* An address of the device's netdev (x->netdev, from getifaddrs) in
 * family fam: want itself if the netdev holds it, else its first one (no
 * IPv6 link-local). 0, or -EADDRNOTAVAIL. */
int ferry__verbs_dev_addr(const struct ferry_xport *x, int fam,
			  const struct sockaddr_storage *want,
			  struct sockaddr_storage *out);

/* --- error conversion, the one boundary (verbs_err.c) --- */

/* libibverbs calls returning 0 or a positive errno. */
int ferry__verbs_ibv(int ret);
/* libibverbs / librdmacm calls that returned NULL or -1 and set errno. */
int ferry__verbs_errno(void);
/* librdmacm calls returning 0 or -1 with errno. */
int ferry__verbs_cm(int ret);
/* A completion's status as a ferry error: 0 for success, -ECANCELED for a
 * flush after cancel, -FERRY_ECLOSED for a flush (the QP went to error:
 * the peer disconnected), -FERRY_EBOUNDS (remote access), -FERRY_ETIMEOUT
 * (retries exhausted), -FERRY_EPEER (the peer refused the request),
 * -FERRY_EPROTO (message too long for the buffer), else -EIO. */
int ferry__verbs_wc_err(enum ibv_wc_status st, bool cancelled);

/* --- connection management (verbs_cm.c) --- */
int ferry__verbs_listen(struct ferry_xport *x, struct ferry_mr *ring,
			void *blob, size_t *blob_len, char *why,
			size_t whylen);
int ferry__verbs_accept(struct ferry_xport *x, const void *peer_blob,
			size_t peer_len, char *why, size_t whylen);
/* Sender, before connect: the receiver may write into ring too. */
int ferry__verbs_duplex(struct ferry_xport *x, struct ferry_mr *ring,
			char *why, size_t whylen);
/* A sender with a rate cap (attr.rate_bps): each connected QP limited to
 * the cap by the device (ibv_modify_qp_rate_limit; the pipeline spaces
 * the chunks at the cap, so the QPs' chunks follow one another), where the device
 * offers it; otherwise the pipeline's pacing of chunks is the cap alone
 * (said at debug level). */
void ferry__verbs_rate_limit(struct ferry_xport *x);

int ferry__verbs_connect(struct ferry_xport *x, const void *blob,
			 size_t blob_len, void *out, size_t *out_len,
			 char *why, size_t whylen);
/* Stop the cm thread (it touches the ring while accepting). Idempotent. */
void ferry__verbs_cm_stop(struct ferry_xport *x);
/* Tear down endpoints, SRQ, listener, channel and the cm thread. */
void ferry__verbs_cm_close(struct ferry_xport *x);

/* --- a peer of the RoCEv2 family: QPs brought up by hand (verbs_rc.c) */
int ferry__verbs_rc_listen(struct ferry_xport *x, struct ferry_mr *ring,
			   void *blob, size_t *blob_len, char *why,
			   size_t whylen);
int ferry__verbs_rc_connect(struct ferry_xport *x, const void *blob,
			    size_t blob_len, void *out, size_t *out_len,
			    char *why, size_t whylen);
int ferry__verbs_rc_accept(struct ferry_xport *x, const void *peer_blob,
			   size_t peer_len, char *why, size_t whylen);

/* --- queue pairs and the SRQ (verbs_qp.c) --- */
int ferry__verbs_srq_create(struct ferry_xport *x, char *why, size_t whylen);
void ferry__verbs_srq_destroy(struct ferry_xport *x);
/* e's send bookkeeping for an SQ of sq_depth WRs and its prebuilt work
 * requests (no device calls: the unit test drives the datapath with it). */
int ferry__verbs_ep_init(struct ferry_xport *x, struct verbs_ep *e,
			 unsigned sq_depth);
/* CQs and the QP of e on id (rdma_cm), or with id NULL on the PD, in the
 * RESET state, on port x->port (a family peer: verbs_rc.c); the ACK
 * timeout is set on id. */
int ferry__verbs_ep_create(struct ferry_xport *x, struct verbs_ep *e,
			   struct rdma_cm_id *id, char *why, size_t whylen);
void ferry__verbs_ep_destroy(struct ferry_xport *x, struct verbs_ep *e);

/* --- event mode (verbs_event.c) --- */
/* A completion channel for e when the session polls in event mode
 * (nothing otherwise). 0 or -errno. */
int ferry__verbs_event_open(struct ferry_xport *x, struct verbs_ep *e);
void ferry__verbs_event_close(struct verbs_ep *e);
/* Request an event for the next completion on either CQ. 0 or -errno. */
int ferry__verbs_event_arm(struct verbs_ep *e);
/* Sleep until an event, timeout_ms (< 0: forever) or a slice passes,
 * whichever is first; reads and acknowledges what arrived. 0 or -errno. */
int ferry__verbs_event_wait(struct verbs_ep *e, int timeout_ms);

/* --- datapath ops (verbs_dp.c) --- */
int ferry__verbs_post_write_imm(struct ferry_xport *x, unsigned ep,
				struct ferry_mr *lmr, const void *laddr,
				size_t len, uint64_t roff, uint32_t imm,
				uint64_t wr_id, unsigned flags);
int ferry__verbs_post_send(struct ferry_xport *x, unsigned ep,
			   const void *msg, size_t len);
int ferry__verbs_poll(struct ferry_xport *x, unsigned ep,
		      struct ferry_wc *wc, unsigned max, int timeout_ms);
/* Sender with a family peer: wait, up to the session timeout, until the
 * receiver's hello arrived on ep. 0 or a negative error. */
int ferry__verbs_hello_wait(struct ferry_xport *x, struct verbs_ep *e);

#endif
