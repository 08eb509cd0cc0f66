/* uroce: the RoCEv2 reliable-connection (RC) engine (internal).
 *
 * One struct ferry_rc_qp is both halves of an RC queue pair: a requester
 * that turns posted writes and sends into packets, and a responder that
 * executes the peer's requests into registered memory and acknowledges
 * them. It sees only struct ferry_roce_pkt (pkt.h): packets leave through
 * the attr's tx callback and arrive through ferry__rc_input(); time is
 * passed in. There is no DPDK, no wire encoding, no thread and no clock
 * here, so two QPs can be run against each other in one process.
 *
 * Files: rc_qp.c (control path: create, connect, memory regions, state),
 * rc_req.c (requester: posts, segmentation, timers), rc_win.c (how many
 * packets the requester keeps in flight, its pacing, its retransmit
 * timeout), rc_dcqcn.c (ECN marks answered with CNPs, CNPs with DCQCN),
 * rc_resp.c (responder: input, PSN checks, execution, ACK/NAK), rc_comp.c
 * (completer: ACK/NAK processing and poll). Only rc_qp.c allocates.
 *
 * Protocol in brief (details at each function):
 * - Requester: a work request (WR) is cut into path-MTU packets when it is
 *   transmitted, its payload read from the caller's buffer each time (also
 *   on retransmission), so that buffer must stay unchanged until the WR
 *   completes. PSNs are given to WRs in post order. At most the window's
 *   packets are unacknowledged (fixed, or following the path: rc_win.c).
 *   AckReq is set on the last packet of every message, on every
 *   ackreq_every-th packet and on the packet that fills the window. One
 *   retransmit timer (at least rto_ns, rc_win.c) runs while packets are
 *   unacknowledged and restarts whenever an ACK makes progress. A timeout
 *   or a sequence-error NAK goes back to the oldest unacknowledged PSN and
 *   sends everything again from there (go-back-N), mid-message if need be.
 *   retry_limit such retries in a row without progress put the QP in
 *   error (-FERRY_ETIMEOUT). An RNR NAK pauses transmission for the time
 *   the peer asked, then goes back to the NAKed PSN; rnr_retry_limit RNR
 *   NAKs in a row put the QP in error (-FERRY_ETIMEOUT).
 * - Responder: a request at the expected PSN is checked and executed; one
 *   behind it (a duplicate) is not executed again but counts towards the
 *   next ACK; one ahead of it is dropped, and the first such drop after the
 *   last in-order packet sends one sequence-error NAK. ACKs are coalesced:
 *   one goes out at a packet with AckReq, after ack_every packets, or
 *   ack_delay_ns after the first packet not yet acknowledged. Every RDMA
 *   WRITE is checked on its first packet against the region its rkey names
 *   (the RETH va is an offset into that region): unknown rkey, no
 *   remote-write right, or [va, va + dma_len) outside the region gets a
 *   remote-access NAK, nothing is written, and the QP goes to error
 *   (-FERRY_EBOUNDS), as does the requester that receives that NAK. A
 *   malformed request (opcode out of sequence, lengths that disagree with
 *   the RETH or the path MTU, a SEND larger than the receive buffer, a
 *   multi-packet SEND) is refused the same way with an invalid-request NAK
 *   (-FERRY_EPROTO); a fatal NAK is repeated if its PSN comes again. A
 *   WRITE with immediate or a SEND that finds no receive posted gets an RNR
 *   NAK and is not executed; the requester resumes at that packet.
 * - Errors are final. A QP in error drops its input, completes every
 *   outstanding WR and receive (-ECANCELED unless the WR caused the error),
 *   and then ferry__rc_poll() returns the error; ferry__rc_error() says why.
 *
 * Threads: a QP is driven by one thread at a time. A PD may be shared by
 * the QPs of several threads: they only read it; register and deregister
 * regions only while none of its QPs receives packets.
 */
#ifndef FERRY_UROCE_RC_H
#define FERRY_UROCE_RC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ferry/xport.h" /* FERRY_ACCESS_*, FERRY_XPORT_MSG_MAX */
#include "util/util.h"
#include "xport/roce/pkt.h"

#define FERRY_RC_SEND_MAX FERRY_XPORT_MSG_MAX /* largest post_send */
#define FERRY_RC_MSG_MAX (1u << 31)           /* largest write ... */
#define FERRY_RC_WR_PKTS_MAX (1u << 21)       /* ... and its most packets */
#define FERRY_RC_WINDOW_MAX (1u << 22) /* keeps PSN compares unambiguous */
#define FERRY_RC_DEPTH_MAX (1u << 16)  /* sq_depth, rq_depth */

/* Defaults taken where an attr field below is 0. */
#define FERRY_RC_DEF_WINDOW 128u
#define FERRY_RC_DEF_ACK_EVERY 16u
#define FERRY_RC_DEF_ACK_DELAY_NS 50000ull /* 50 us */
#define FERRY_RC_DEF_RTO_NS 64000000ull    /* 64 ms, as IB's timeout 14 */
#define FERRY_RC_DEF_RNR_DELAY_NS 1280000ull /* 1.28 ms, IB RNR code 14 */

/* Memory regions the peer may write into, looked up by rkey. */
struct ferry_rc_pd;

struct ferry_rc_qp;

enum ferry_rc_state {
	FERRY_RC_RESET = 0, /* created; receives may be posted */
	FERRY_RC_RTS,       /* connected: ready to send and receive */
	FERRY_RC_ERROR,     /* final; see ferry__rc_error() */
};

/* DCQCN's parameters (rc_dcqcn.c says what each is); 0: the default
 * named there. Rates in packets of the path MTU per second. */
struct ferry_rc_dcqcn {
	uint64_t cnp_interval_ns; /* N: a CNP per QP at most this often */
	uint64_t k_ns;            /* alpha is updated this often */
	uint64_t t_ns;            /* a timed increase event this often */
	uint64_t b_pkts;          /* an increase event per this many sent */
	uint64_t ai_pps, hai_pps; /* additive and hyper increase steps */
	uint64_t min_pps;         /* never paced below this */
	uint32_t g_1024;          /* g in 1/1024ths */
	uint32_t f;               /* events of fast recovery */
};

struct ferry_rc_attr {
	struct ferry_rc_pd *pd; /* regions this QP's peer may write */
	uint32_t qpn;           /* this QP's number: 2 .. 0xffffff */
	uint32_t mtu;           /* path MTU: 256, 512, 1024, 2048 or 4096;
				   both peers must use the same */
	uint32_t sq_depth;      /* WRs posted and not yet polled, >= 1 */
	uint32_t rq_depth;      /* receives posted and not yet polled, >= 1 */
	uint32_t window_pkts;   /* most unacked packets in flight (0: dflt) */
	uint32_t window_init;   /* where an adaptive window starts (rc_win.c);
				   0 or >= window_pkts: a fixed window */
	uint32_t ackreq_every;  /* AckReq every N packets (0: start / 4) */
	uint32_t ack_every;     /* responder ACKs after N packets (0: dflt) */
	uint64_t ack_delay_ns;  /* ... or this long after the first unacked
				   one (0: default); keep it well below the
				   peer's rto_ns */
	uint64_t rto_ns;        /* retransmit timeout (0: default); above
				   the round trip plus the peer's ack delay;
				   the least once round trips are sampled */
	uint64_t rtt_hint_ns;   /* the round trip known before any sample
				   (0: none): the timer starts from it */
	uint64_t rate_pps;      /* packets per second at most (0: no cap) */
	uint8_t dscp;           /* the DSCP of every packet it sends,
				   requests, ACKs and CNPs alike, 0 .. 63;
				   each keeps its own ECN bits */
	struct ferry_rc_dcqcn dcqcn;
	uint64_t rnr_delay_ns;  /* how long the peer should wait after this
				   QP's RNR NAK; rounded up to an IB RNR
				   timer code, at most 655.36 ms (0: dflt) */
	unsigned retry_limit;     /* retries without progress, then error */
	unsigned rnr_retry_limit; /* RNR NAKs without progress, then error */
	/* Transmit one packet. Returns 0 when the packet was taken, or a
	 * negative error (e.g. -EAGAIN, no room): the engine keeps it and
	 * tries again at the next ferry__rc_progress(). *p lives only for
	 * the call; p->payload stays valid until the WR that owns it
	 * completes (writes: the caller's buffer; sends: the QP's copy).
	 * Must not call back into this QP. */
	int (*tx)(void *ctx, const struct ferry_roce_pkt *p);
	void *tx_ctx;
};

/* Where a completion comes from. */
enum ferry_rc_wc_op {
	FERRY_RC_WC_WRITE = 1, /* requester: a write WR (with imm or not) */
	FERRY_RC_WC_SEND = 2,  /* requester: a send WR */
	FERRY_RC_WC_RECV = 3,  /* responder: a send landed in a receive */
	FERRY_RC_WC_RECV_WRITE_IMM = 4, /* responder: a write with imm landed;
					   it consumed a receive */
};

struct ferry_rc_wc {
	uint64_t wr_id;    /* the WR's, or the consumed receive's */
	uint64_t offset;   /* RECV_WRITE_IMM: region offset written (RETH va) */
	uint32_t byte_len; /* WRITE/SEND: WR length; RECV: message bytes;
			      RECV_WRITE_IMM: bytes written */
	uint32_t imm;      /* RECV_WRITE_IMM, and RECV when has_imm */
	int status;        /* 0, or -ECANCELED (flushed), or the QP's error */
	uint8_t op;        /* enum ferry_rc_wc_op */
	bool has_imm;
};

/* Counters, only ever incremented. "rx" counts packets addressed to this
 * QP; the NAK counters are by kind, as sent (tx) and received (rx). */
struct ferry_rc_counters {
	/* requester */
	uint64_t tx_req;        /* request packets sent, retransmits included */
	uint64_t tx_bytes;      /* their payload bytes */
	uint64_t retx_pkts;     /* request packets sent again */
	uint64_t timeouts;      /* retransmit timer expiries */
	uint64_t rx_acks;       /* ACKs (not NAKs) received */
	uint64_t rx_nak_seq, rx_nak_rnr, rx_nak_access, rx_nak_other;
	uint64_t ack_stale;     /* ACK/NAK for a PSN outside the unacked
				   range, or repeating a NAK already obeyed:
				   ignored */
	uint64_t tx_busy;       /* tx callback refused a packet */
	uint64_t win_cuts;      /* losses that capped the window */
	uint64_t loss_no_queue; /* losses with no queue: nothing cut */
	uint64_t rx_cnp;        /* CNPs received */
	uint64_t dcqcn_cuts;    /* of them, those that cut the rate */
	/* responder */
	uint64_t rx_req;        /* request packets received */
	uint64_t tx_acks;
	uint64_t tx_nak_seq, tx_nak_rnr, tx_nak_access, tx_nak_invalid;
	uint64_t dup_pkts;      /* behind the expected PSN: re-ACKed only */
	uint64_t oow_drops;     /* ahead of the expected PSN: dropped */
	uint64_t access_errors; /* writes refused by rkey/bounds/rights */
	uint64_t rnr;           /* requests refused: no receive posted */
	uint64_t bad_qpn;       /* addressed to another QP: dropped */
	uint64_t state_drops;   /* arrived before connect or after error */
	uint64_t rx_ce;         /* requests that arrived marked ECN CE */
	uint64_t tx_cnp;        /* CNPs sent for them */
};

/* Control path (rc_qp.c) -------------------------------------------------*/

/* A table of up to max_mr regions. Returns 0, -EINVAL or -ENOMEM. */
int ferry__rc_pd_create(unsigned max_mr, struct ferry_rc_pd **out);
/* Free pd (NULL is fine); its QPs must be destroyed first. */
void ferry__rc_pd_destroy(struct ferry_rc_pd *pd);

/* Let peers reach [base, base + len) with rkey, at offsets 0 .. len - 1.
 * access is FERRY_ACCESS_LOCAL or FERRY_ACCESS_REMOTE_WRITE. rkey is the
 * caller's choice (unpredictable, per session). Returns 0, -EINVAL,
 * -EEXIST (rkey in use) or -ENOSPC (table full). */
int ferry__rc_reg_mr(struct ferry_rc_pd *pd, void *base, size_t len,
		     unsigned access, uint32_t rkey);
/* Returns 0 or -ENOENT. */
int ferry__rc_dereg_mr(struct ferry_rc_pd *pd, uint32_t rkey);

/* A QP in RESET with its rings allocated. Returns 0, -EINVAL (a field out
 * of range: tx, pd or qpn missing, mtu not an IB MTU, depth or window too
 * large) or -ENOMEM. */
int ferry__rc_create(const struct ferry_rc_attr *attr,
		     struct ferry_rc_qp **out);
/* Free qp (NULL is fine). Nothing is sent; outstanding WRs are dropped. */
void ferry__rc_destroy(struct ferry_rc_qp *qp);

/* RESET -> RTS: talk to peer QP dest_qpn at dst from src. my_start_psn
 * is the PSN of this QP's first request; peer_start_psn that of the
 * peer's (its my_start_psn). udp_sport 0 picks 0xC000 | (qpn & 0x3fff).
 * Returns 0, -EINVAL (a number wider than 24 bits) or -EISCONN (not in
 * RESET). */
int ferry__rc_connect(struct ferry_rc_qp *qp, uint32_t dest_qpn,
		      uint32_t my_start_psn, uint32_t peer_start_psn,
		      const struct ferry_roce_addr *src,
		      const struct ferry_roce_addr *dst, uint16_t udp_sport);

enum ferry_rc_state ferry__rc_state(const struct ferry_rc_qp *qp);
/* Why the QP is in error (one line), or NULL when it is not. */
const char *ferry__rc_error(const struct ferry_rc_qp *qp);
const struct ferry_rc_counters *
ferry__rc_counters(const struct ferry_rc_qp *qp);
/* Packets the requester may have in flight now, and the smallest round
 * trip it sampled (ns, 0: none yet) into *rtt_ns when not NULL. */
uint32_t ferry__rc_window(const struct ferry_rc_qp *qp, uint64_t *rtt_ns);
/* DCQCN's current rate in packets/s (0: no CNP has come for this QP),
 * and its alpha in 1/1024ths into *alpha when not NULL. */
uint64_t ferry__rc_dcqcn_rate(const struct ferry_rc_qp *qp, uint32_t *alpha);

/* Datapath (rc_req.c, rc_resp.c, rc_comp.c): no allocation, no output -----*/

/* Queue an RDMA WRITE of len bytes (0 .. FERRY_RC_MSG_MAX, and at most
 * FERRY_RC_WR_PKTS_MAX packets: 512 MiB at MTU 256) from laddr to
 * offset remote_off of the peer's region rkey, with immediate data imm if
 * with_imm (the peer then consumes one of its receives). laddr must stay
 * unchanged until the WR completes. A signaled WR produces a completion;
 * an unsignaled one completes silently (its slot is freed by the poll that
 * passes it). Nothing is sent until ferry__rc_progress(). Returns 0,
 * -EINVAL, -ENOTCONN (before connect), -EAGAIN (send queue full: poll and
 * retry) or the QP's error. */
int ferry__rc_post_write(struct ferry_rc_qp *qp, const void *laddr,
			 uint32_t len, uint64_t remote_off, uint32_t rkey,
			 bool with_imm, uint32_t imm, uint64_t wr_id,
			 bool signaled);

/* Queue a SEND of len (0 .. FERRY_RC_SEND_MAX) bytes, copied before this
 * returns; it lands in the peer's next posted receive. Returns as
 * ferry__rc_post_write(). */
int ferry__rc_post_send(struct ferry_rc_qp *qp, const void *msg, uint32_t len,
			uint64_t wr_id, bool signaled);

/* Post a receive buffer of len bytes. Each incoming SEND (copied in) and
 * each WRITE with immediate (nothing copied; the completion says where the
 * write landed) consumes one, in post order. A send larger than the buffer
 * is a fatal invalid request. Allowed before connect. Returns 0, -EINVAL,
 * -EAGAIN (receive queue full) or the QP's error. */
int ferry__rc_post_recv(struct ferry_rc_qp *qp, void *buf, uint32_t len,
			uint64_t wr_id);

/* Hand the QP one received packet (already ICRC-checked and parsed; its
 * dest_qp is checked here). p->payload is only read during the call. It
 * may transmit ACKs/NAKs through tx. */
void ferry__rc_input(struct ferry_rc_qp *qp, const struct ferry_roce_pkt *p,
		     uint64_t now_ns);

/* Do what is due at now_ns: transmit what the window allows, retransmit
 * on timeout, end an RNR pause, send a delayed ACK. Call it after posts
 * and input, and often enough for the timers (a fraction of ack_delay). */
void ferry__rc_progress(struct ferry_rc_qp *qp, uint64_t now_ns);

/* When progress has something to do next (a delayed ACK, the end of an
 * RNR pause, the retransmit timer, a packet the window allows once its
 * pacing gap has passed; 0: now), as now_ns counts; UINT64_MAX: nothing
 * until a post or a packet arrives. For a thread that sleeps between. */
uint64_t ferry__rc_due(const struct ferry_rc_qp *qp);

/* Reap up to max completions: the send queue's, in post order, then the
 * receive queue's, in arrival order. Returns how many (0: none yet); once
 * the QP is in error and all are reaped, its error (-FERRY_ETIMEOUT,
 * -FERRY_EBOUNDS, -FERRY_EPROTO, -FERRY_EPEER). */
int ferry__rc_poll(struct ferry_rc_qp *qp, struct ferry_rc_wc *wc, int max);

/* Engine internals, shared by rc_*.c only ----------------------------------
 * Users of this header treat struct ferry_rc_qp as opaque. Queue indices
 * are free-running uint32_t; a slot is index & mask. */

struct ferry__rc_mr {
	uint8_t *base;
	size_t len;
	uint32_t rkey;
	unsigned access;
	bool used;
};

struct ferry_rc_pd {
	unsigned n;
	struct ferry__rc_mr mr[];
};

struct ferry__rc_swqe {          /* send queue entry */
	const uint8_t *laddr;    /* payload (msg for sends) */
	uint64_t wr_id;
	uint64_t roff;
	uint32_t len, rkey, imm;
	uint32_t first_psn, npkts;
	uint8_t op;              /* FERRY_RC_WC_WRITE or _SEND */
	bool with_imm, signaled;
	uint8_t msg[FERRY_RC_SEND_MAX];
};

#define FERRY__RC_BW_ROUNDS 8 /* periods the path's rate is the max of */

struct ferry__rc_dcqcn_st {     /* the reaction point (rc_dcqcn.c) */
	bool active;                /* a CNP came: DCQCN paces this QP */
	bool cnp_seen;              /* a CNP in the current K */
	uint64_t rc, rt;            /* current and target rate, packets/s */
	uint32_t alpha;             /* in 1/1024ths */
	uint32_t t_n, b_n;          /* increase events since the last cut */
	uint64_t cut_at, alpha_at, t_at, b_sent;
};

struct ferry__rc_rwqe {          /* receive queue entry */
	uint8_t *buf;
	uint64_t wr_id, offset;
	uint32_t cap, byte_len, imm;
	uint8_t op;
	bool has_imm;
};

struct ferry_rc_qp {
	struct ferry_rc_attr attr;   /* with defaults filled in */
	enum ferry_rc_state state;
	int err;
	char why[200];
	struct ferry_roce_pkt tmpl;  /* path and BTH fields set at connect */
	struct ferry_rc_counters cnt;
	uint8_t rnr_code;            /* advertised in this QP's RNR NAKs */

	/* requester: [sq_head, sq_acked) acked, awaiting poll;
	 * [sq_acked, sq_tail) outstanding; the WR at sq_acked holds una. */
	struct ferry__rc_swqe *sq;
	uint32_t sq_mask, sq_head, sq_acked, sq_tail;
	uint32_t sq_psn;       /* first PSN of the next posted WR */
	uint32_t cur, cur_pkt; /* WR and packet index transmitted next */
	uint32_t snd_psn;      /* PSN transmitted next */
	uint32_t snd_max;      /* one past the highest PSN ever transmitted */
	uint32_t una;          /* oldest unacknowledged PSN */
	uint32_t since_ackreq; /* packets sent since the last AckReq */
	unsigned retries, rnr_retries;
	bool timer_on, rnr_wait, nak_obeyed;
	uint32_t nak_psn;      /* the sequence NAK last obeyed */
	uint64_t rto_at, rnr_until;
	bool sq_blame;         /* error: the WR at sq_fail caused it */
	uint32_t sq_fail;
	/* requester: the window and the round trip (rc_win.c) */
	uint32_t win;          /* packets in flight allowed now */
	uint32_t win_cap, cap_step; /* bound after a loss, its next lift */
	uint32_t recover;      /* a loss before this PSN cuts no more */
	uint32_t probe_psn, bw_i;
	bool probe_on, loss_round;
	bool filled;           /* the rate stopped rising: the path is full */
	bool app_limited;      /* this period the sender ran out of work */
	uint32_t cyc;          /* periods since, for the pacing cycle */
	uint64_t pace_pps;     /* pacing rate (0: not paced) */
	uint64_t pace_at;      /* the next packet leaves at this time */
	uint32_t full_n;       /* periods without a quarter more than full_bw */
	uint64_t full_bw;
	uint64_t probe_at, round_at, dlv, round_dlv;
	uint64_t srtt, rttvar, rtt_min, rtt_min_at, rtt_last; /* ns */
	uint64_t bw[FERRY__RC_BW_ROUNDS]; /* delivery rate, packets/s */
	struct ferry__rc_dcqcn_st dc;

	/* responder: [rq_head, rq_done) completed, [rq_done, rq_tail) posted */
	struct ferry__rc_rwqe *rq;
	uint32_t rq_mask, rq_head, rq_done, rq_tail;
	uint32_t epsn, msn;
	bool nak_sent;         /* a sequence NAK went out for this epsn */
	bool in_write;         /* between a WRITE FIRST and its LAST */
	uint8_t *w_dst;        /* where the next packet of it lands */
	uint64_t w_va;         /* its RETH va and dma_len */
	uint32_t w_len, w_left;
	uint32_t ack_unsent;   /* packets since the last ACK/NAK */
	uint64_t ack_at;       /* when a delayed ACK is due */
	uint8_t fatal_syn;     /* NAK that put the QP in error (0: none) */
	bool cnp_sent;         /* a CNP went out, at cnp_at */
	uint64_t cnp_at;
	uint32_t fatal_psn;    /* repeated when that PSN comes again */
};

/* Internal entry points between the rc_*.c files. */
/* Move to ERROR with err and a reason; blame: the outstanding WR at
 * sq_acked caused it and completes with err (the others: -ECANCELED). */
void ferry__rc_fail(struct ferry_rc_qp *qp, int err, bool blame,
		    const char *fmt, ...) FERRY__PRINTF(4, 5);
/* Requester: process an ACK/NAK packet. */
void ferry__rc_comp_input(struct ferry_rc_qp *qp,
			  const struct ferry_roce_pkt *p, uint64_t now_ns);
/* Responder: send a delayed ACK when due. */
void ferry__rc_resp_progress(struct ferry_rc_qp *qp, uint64_t now_ns);
/* The window (rc_win.c): at connect; a new PSN sent; ACKed up to next
 * (una was old_una); a sequence NAK obeyed; a retransmit timeout (the
 * last two next to a rewind, which drops the round-trip sample). */
void ferry__rc_win_start(struct ferry_rc_qp *qp);
void ferry__rc_win_sent(struct ferry_rc_qp *qp, uint32_t psn, uint64_t now);
void ferry__rc_win_acked(struct ferry_rc_qp *qp, uint32_t old_una,
			 uint32_t next, uint64_t now);
void ferry__rc_win_loss(struct ferry_rc_qp *qp);
void ferry__rc_win_timeout(struct ferry_rc_qp *qp);
/* The window and the pacing rate again (DCQCN's rate changed), and the
 * path's delivery rate in packets/s (0: none measured). */
void ferry__rc_win_update(struct ferry_rc_qp *qp);
uint64_t ferry__rc_win_bw(const struct ferry_rc_qp *qp);
/* DCQCN (rc_dcqcn.c): the defaults for a path MTU; a request marked CE
 * arrived; a CNP arrived; timers; a request packet went out. */
void ferry__rc_dcqcn_defaults(struct ferry_rc_dcqcn *d, uint32_t mtu);
void ferry__rc_dcqcn_marked(struct ferry_rc_qp *qp, uint64_t now);
void ferry__rc_dcqcn_cnp(struct ferry_rc_qp *qp, uint64_t now);
void ferry__rc_dcqcn_progress(struct ferry_rc_qp *qp, uint64_t now);
void ferry__rc_dcqcn_sent(struct ferry_rc_qp *qp);
/* Pacing: must the next packet wait (now < its time)? One was sent. A
 * paced QP whose time came sends up to ferry__rc_pace_burst packets back
 * to back before it waits again (each still advances its time). */
bool ferry__rc_pace_wait(struct ferry_rc_qp *qp, uint64_t now);
void ferry__rc_pace_sent(struct ferry_rc_qp *qp, uint64_t now);
uint32_t ferry__rc_pace_burst(const struct ferry_rc_qp *qp);
/* The retransmit timeout now. */
uint64_t ferry__rc_rto(const struct ferry_rc_qp *qp);
/* Nanoseconds an AETH RNR timer code asks for, and the code for ns. */
uint64_t ferry__rc_rnr_ns(uint8_t code);
uint8_t ferry__rc_rnr_code(uint64_t ns);

static inline struct ferry__rc_swqe *ferry__rc_sq(struct ferry_rc_qp *qp,
						 uint32_t i)
{
	return &qp->sq[i & qp->sq_mask];
}

/* DCQCN's rate in packets/s, 0 while no CNP governs the QP (rc_dcqcn.c
 * sets it; the window's pacing reads it). */
static inline uint64_t ferry__rc_dc_pps(const struct ferry_rc_qp *qp)
{
	return qp->dc.active ? qp->dc.rc : 0;
}

/* Point the transmit cursor at una (go-back-N, or skip what got acked).
 * The requester's timer and the completer's NAKs both rewind. */
static inline void ferry__rc_rewind(struct ferry_rc_qp *qp)
{
	qp->probe_on = false; /* a resent PSN gives no round trip */
	qp->snd_psn = qp->una;
	qp->cur = qp->sq_acked;
	qp->cur_pkt = 0;
	if (qp->cur != qp->sq_tail)
		qp->cur_pkt = (uint32_t)ferry__psn_diff(
			qp->una, ferry__rc_sq(qp, qp->cur)->first_psn);
	qp->since_ackreq = 0;
}

#endif
