/* The transport interface: what the pipeline asks of a transport.
 *
 * A transport moves two things between two hosts over n_ep endpoints (RC
 * queue pairs, or TCP streams): one-sided writes with immediate data into
 * the receiver's registered ring, and small messages (credits) both ways.
 * The pipeline knows nothing else about it.
 *
 * Threads: open, reg_mem, listen, accept, connect and close are called from
 * the session's control thread. Endpoint ep is driven by one worker thread at
 * a time (post_write_imm, post_send and poll on ep), different endpoints by
 * different threads concurrently. cancel may be called from any thread.
 *
 * Errors: every op returns 0 (or a count) or a negative ferry error; ops that
 * take why/whylen fill it with one line a person can act on.
 */
#ifndef FERRY_XPORT_H
#define FERRY_XPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define FERRY_XPORT_MSG_MAX 64 /* largest small message (post_send) */
#define FERRY_DSCP_MAX 63      /* a DSCP is the top 6 bits of the IP
				  DS field (RFC 2474); the low 2 are ECN */
#define FERRY_EP_MAX 4096      /* largest endpoint blob */

struct ferry_xport; /* one session's transport state, opaque */
struct ferry_mr;    /* a registered memory region, opaque */
struct ferry_metric_set; /* a transport's counter families, opaque */

/* Access rights for reg_mem. */
#define FERRY_ACCESS_LOCAL 0u        /* sender buffers: local use only */
#define FERRY_ACCESS_REMOTE_WRITE 1u /* the receive ring */

/* post_write_imm flags */
#define FERRY_POST_SIGNALED 1u /* produce a FERRY_WC_WRITE completion */

enum ferry_wc_op {
	FERRY_WC_WRITE = 1,     /* sender: a signalled write is done; its
				   local buffer may be reused */
	FERRY_WC_WRITE_IMM = 2, /* receiver: a write landed at offset */
	FERRY_WC_RECV = 3,      /* a small message arrived, in msg */
};

/* wc.offset when the transport cannot tell where a write landed (an RDMA
 * write-with-immediate completion carries only imm and length): the
 * pipeline then derives it from imm. */
#define FERRY_WC_OFFSET_UNKNOWN UINT64_MAX

struct ferry_wc {
	uint64_t wr_id;   /* WRITE: the wr_id given to post_write_imm */
	uint64_t offset;  /* WRITE_IMM: ring offset the write landed at, or
			     FERRY_WC_OFFSET_UNKNOWN */
	uint32_t imm;     /* WRITE_IMM: the immediate data */
	uint32_t len;     /* WRITE_IMM: bytes landed; RECV: message bytes */
	uint8_t op;       /* enum ferry_wc_op */
	uint8_t msg[FERRY_XPORT_MSG_MAX];
};

/* How a transport waits for completions. BUSY spins on the completion
 * queue (lowest latency, a core per polling thread); EVENT sleeps until
 * the device or the kernel signals (completion channels on verbs, poll()
 * on tcp). DEFAULT stands for the transport's own choice (ops.poll_default)
 * and never reaches open. */
enum ferry_poll_mode {
	FERRY_POLL_DEFAULT = 0,
	FERRY_POLL_BUSY = 1,
	FERRY_POLL_EVENT = 2,
};
#define FERRY_POLL_BIT(m) (1u << (m))

/* What a transport puts on the wire (ops.wire). Two transports of one
 * family speak the same protocol, so one can be each end of a session:
 * a uroce sender writes into a verbs receiver's ring. Each then describes
 * its endpoints in the family's own description (attr.family), not in its
 * private one. */
enum ferry_wire {
	FERRY_WIRE_OWN = 0,    /* a protocol only this transport speaks (tcp) */
	FERRY_WIRE_ROCEV2 = 1, /* RoCEv2 reliable connections: the IBA
				  transport over UDP port 4791; the family's
				  endpoint description: lib/xport/rocev2.h */
	FERRY_WIRE_MAX = 1,
};

/* A receiving endpoint's counters (ops.rx_counts). */
struct ferry_xport_rx {
	uint64_t bytes;        /* payload received in order so far */
	uint64_t out_of_order; /* packets that arrived with a hole ahead */
	uint32_t rtt_us;       /* the receiver's estimate of the round trip
				  (0: none yet) */
};

/* Each transport's own settings: one typed block per transport, all in
 * struct ferry_xport_conf. ferry_xport_conf_init fills the defaults (the
 * environment variables named below, else the built-in values); an app
 * then sets what its options say. Strings are borrowed: they must stay
 * valid while sessions use the block. A transport reads its own block,
 * no other. */
struct ferry_tcp_conf {
	size_t sockbuf;        /* socket buffer bytes per stream (up to
				  1 GiB); 0: kernel autotuning */
	bool kernel_windows;   /* a receiver leaves its windows to the
				  kernel: none held to the rate
				  (FERRY_TCP_FIT=0; docs/wan.md) */
};

struct ferry_uroce_conf {
	const char *eal;       /* DPDK EAL arguments, one string split into
				  words as a shell would (FERRY_DPDK);
				  NULL or "": uroce is not usable. Read once:
				  the EAL starts once per process */
	const char *ip;        /* this end's IPv4 in the frames
				  (FERRY_UROCE_IP); NULL or "": the address
				  of the port's kernel interface */
	unsigned mtu;          /* cap on the path MTU, 256 .. 4096
				  (FERRY_UROCE_MTU); 0: what the port
				  carries */
	unsigned window;       /* packets in flight per queue pair, fixed,
				  16 .. 1024 (FERRY_UROCE_WINDOW); 0: start
				  from the peer's receive ring and follow
				  the path */
	bool tx_copy;          /* copy every frame into an mbuf instead of
				  zero-copy transmit (FERRY_UROCE_TX=copy) */
	bool tx_ring;          /* af_packet: the PMD's transmit ring instead
				  of sendmmsg on a socket of uroce's own
				  (FERRY_UROCE_TX=ring) */
	bool kernel_mac;       /* put the kernel interface's Ethernet
				  address in the frames even on a veth,
				  where uroce otherwise takes one of its own
				  (FERRY_UROCE_MAC=kernel) */
};

struct ferry_verbs_conf {
	const char *device;    /* RDMA device (mlx5_1) or netdev (eth1)
				  (FERRY_VERBS_DEVICE); NULL or "": the one
				  on the route to the peer, else the only
				  one */
	double rtt_ms;         /* the round trip the ACK timeout plans for,
				  0 .. 100000 ms (FERRY_VERBS_RTT_MS); < 0:
				  the built-in WAN-sized default; anything
				  else (NaN) is warned about and replaced by
				  the default */
};

struct ferry_xport_conf {
	struct ferry_tcp_conf tcp;
	struct ferry_uroce_conf uroce;
	struct ferry_verbs_conf verbs;
};

/* Fill c with the defaults: built-in values, overridden by the
 * environment variables named in the blocks above where they are set
 * (one place reads them: lib/xport/env.c). */
void ferry_xport_conf_init(struct ferry_xport_conf *c);

struct ferry_xport_attr {
	unsigned n_ep;        /* endpoints (streams, QPs), >= 1 */
	int timeout_ms;       /* connect/accept deadline; also how long a
				 blocked post may wait for the peer */
	/* receiver: the local address of the control connection; data
	 * endpoints listen there. sender: the peer's control address. */
	struct sockaddr_storage addr;
	socklen_t addr_len;
	/* every transport's settings; this one reads its own block. Kept
	 * (not copied) until close. */
	const struct ferry_xport_conf *conf;
	int poll_mode;        /* FERRY_POLL_BUSY or _EVENT, one of the
				 transport's poll_modes */
	uint64_t rate_bps;    /* sender: the session's cap on payload bits
				 per second, for a transport that paces its
				 endpoints itself (tcp: SO_MAX_PACING_RATE;
				 uroce: each packet; verbs: the device's QP
				 rate limit, where it has one); 0: none */
	uint64_t sockbuf;     /* the session's plan: socket buffer bytes per
				 endpoint for a transport that has sockets
				 (tcp), where conf sets none; 0: the
				 transport's default */
	/* The peer runs another transport of this one's wire family
	 * (ops.wire): listen, connect and accept exchange the family's
	 * endpoint description instead of the transport's own. Only for a
	 * transport whose ops.wire is not FERRY_WIRE_OWN. */
	int family;
	uint64_t rtt_ns;      /* the control connection's round trip, where
				 the session measured it (0: unknown): a
				 transport with timers of its own (uroce)
				 starts them from it */
	int dscp;             /* the session's traffic class: a DSCP, 0 ..
				 FERRY_DSCP_MAX, that every packet this end
				 sends carries (tcp: IP_TOS / IPV6_TCLASS
				 dscp << 2 on each socket; uroce: the IPv4
				 DS field of every frame, ECN bits kept;
				 verbs: the QPs' traffic class dscp << 2);
				 -1: the system's default (uroce: 0). Both
				 ends get the sender's (lib/pipe) */
};

/* Ops table. Each transport defines one `const` instance. size is
 * sizeof(struct ferry_xport_ops) as the transport was built; callers check
 * it before using an op, so a table from an older build is detected. */
struct ferry_xport_ops {
	size_t size;
	const char *name;

	/* Is the transport usable on this host with the settings in conf?
	 * 0, or -FERRY_ENOXPORT with why saying what is missing. Any thread;
	 * no side effects. A session calls it once per transport. */
	int (*probe)(const struct ferry_xport_conf *conf, char *why,
		     size_t whylen);

	/* Create the session's transport state. */
	int (*open)(const struct ferry_xport_attr *attr,
		    struct ferry_xport **out, char *why, size_t whylen);

	/* Register [addr, addr+len) with access rights. The region stays
	 * registered until dereg_mem or close. Register once per pool. */
	int (*reg_mem)(struct ferry_xport *x, void *addr, size_t len,
		       unsigned access, struct ferry_mr **out);
	void (*dereg_mem)(struct ferry_xport *x, struct ferry_mr *mr);

	/* Receiver: prepare n_ep endpoints whose writes land in ring, and
	 * describe them in blob (at most FERRY_EP_MAX bytes; *blob_len in:
	 * capacity, out: used) for the sender. Offsets, never addresses, go
	 * on the wire. */
	int (*listen)(struct ferry_xport *x, struct ferry_mr *ring, void *blob,
		      size_t *blob_len, char *why, size_t whylen);
	/* Sender: connect every endpoint to the receiver's blob, and
	 * describe this side in out (at most FERRY_EP_MAX bytes; *out_len
	 * in: capacity, out: used, 0 when the receiver needs nothing, as
	 * with tcp). The pipeline hands out to the receiver's accept. */
	int (*connect)(struct ferry_xport *x, const void *blob, size_t blob_len,
		       void *out, size_t *out_len, char *why, size_t whylen);
	/* Receiver: with the sender's blob from connect, finish every
	 * endpoint and wait until all are connected. */
	int (*accept)(struct ferry_xport *x, const void *peer_blob,
		      size_t peer_len, char *why, size_t whylen);

	/* Sender: write len bytes from laddr (inside lmr) to ring offset roff
	 * on endpoint ep, delivering imm with it. The local bytes must not
	 * change until the write completes (FERRY_WC_WRITE when signalled;
	 * an unsignalled write is complete when a later signalled write on
	 * the same ep is). The receiver bounds-checks roff + len. */
	int (*post_write_imm)(struct ferry_xport *x, unsigned ep,
			      struct ferry_mr *lmr, const void *laddr,
			      size_t len, uint64_t roff, uint32_t imm,
			      uint64_t wr_id, unsigned flags);

	/* Send a small message (len <= FERRY_XPORT_MSG_MAX) on ep. The
	 * bytes are copied before it returns. Delivered in order with the
	 * writes on the same ep. */
	int (*post_send)(struct ferry_xport *x, unsigned ep, const void *msg,
			 size_t len);

	/* Reap up to max completions on ep, waiting up to timeout_ms (0: do
	 * not wait, -1: forever) for the first. Returns the count (0 on
	 * timeout) or a negative error: -FERRY_ECLOSED when the peer went
	 * away, -FERRY_EBOUNDS when the peer wrote outside the ring,
	 * -ECANCELED after cancel. "Forever" may still end in
	 * -FERRY_ETIMEOUT when the peer is silent past attr.timeout_ms
	 * (tcp, which then waits in a blocking read: max 1, event mode). */
	int (*poll)(struct ferry_xport *x, unsigned ep, struct ferry_wc *wc,
		    unsigned max, int timeout_ms);

	/* Wake every thread blocked in this transport; later posts and polls
	 * fail with -ECANCELED. Any thread. */
	void (*cancel)(struct ferry_xport *x);

	/* Tear down endpoints and registrations. NULL is allowed. */
	void (*close)(struct ferry_xport *x);

	/* Waiting: the modes this transport offers (FERRY_POLL_BIT of each)
	 * and the one it uses unless told otherwise. */
	unsigned poll_modes;
	int poll_default;
	/* Why a mode is missing, for the error message ("" if none is). */
	const char *poll_why;

	/* Two-way writes, for the message path of `ferry bench --osu`.
	 * Optional: NULL where the transport lacks it (FERRY_XPORT_HAS says;
	 * the session then refuses --osu on it). Sender, control thread,
	 * after reg_mem and before connect: the receiver may write into
	 * ring (registered FERRY_ACCESS_REMOTE_WRITE) as the sender writes
	 * into the receiver's. connect describes ring in its blob; once the
	 * receiver's accept has returned, its post_write_imm writes to
	 * offsets of ring (bounds-checked as on the receiver) and the
	 * sender's poll reports them as FERRY_WC_WRITE_IMM. Small messages
	 * already go both ways. Returns 0 or a negative error with why. */
	int (*duplex)(struct ferry_xport *x, struct ferry_mr *ring, char *why,
		      size_t whylen);

	/* Can this host reach peer (a sender: the receiver's control
	 * address; a receiver: its own) over this transport? Optional (NULL:
	 * assume so). 0, or -FERRY_ENOXPORT with why (e.g. no RDMA device on
	 * the route to the peer), so that `--transport auto` proposes only
	 * transports that can open. Any thread; cheap and silent. */
	int (*reach)(const struct ferry_xport_conf *conf,
		     const struct sockaddr *peer, socklen_t peer_len,
		     char *why, size_t whylen);

	/* The wire family (enum ferry_wire). A transport of a family other
	 * than FERRY_WIRE_OWN honours attr.family. */
	unsigned wire;

	/* How the control channel names it: one bit, fixed for every
	 * version of ferry (peers compare them), one of bits 0-15.
	 * The PROPOSE and ACCEPT masks are made of these. 0: a transport the
	 * protocol does not know (it is never offered). */
	uint32_t bit;
	/* Preference: where a choice among several transports both hosts
	 * have takes the lowest rank (the fastest, where it runs). */
	unsigned rank;

	/* What the host must offer it (FERRY_XPORT_NEEDS_* bits), and what
	 * it runs on, a word shown after its name ("DPDK"; NULL: nothing to
	 * add). For advice about the host (`ferry doctor`); optional. */
	unsigned needs;
	const char *runs_on;

	/* The counter families the transport publishes itself (its own
	 * names, help, labels and series, described with it); optional
	 * (NULL: none). The registry names them to the metrics once, before
	 * any session, so a scrape shows them at 0 from the start; the
	 * transport adds to them (from its control path, never per chunk). */
	const struct ferry_metric_set *metrics;

	/* Packets endpoint ep has sent again so far (tcp: TCP_INFO's
	 * total_retrans of its socket), for the reports' retransmits.
	 * Optional (NULL: the transport does not count them). The control
	 * thread, while the endpoint is open; cheap. */
	uint64_t (*retransmits)(struct ferry_xport *x, unsigned ep);

	/* CPU seconds, so far, of the threads the transport runs for all
	 * the sessions of this process (uroce: its port's polling thread).
	 * A receiver's report counts its session's own threads and adds
	 * what these spent during the session. Optional (NULL: none); the
	 * control thread, while x is open. */
	void (*shared_cpu)(struct ferry_xport *x, double *user, double *sys);

	/* Busy polling spins one thread per process, however many streams
	 * (uroce: the waiting workers take turns driving the port), not one
	 * per stream: the pipeline then keeps busy as the default when the
	 * streams outnumber the CPUs. Optional (false for a table without
	 * it). */
	bool busy_spins_one;

	/* Payload bytes the peer has acknowledged on endpoint ep so far
	 * (tcp: TCP_INFO's bytes_acked of its socket): what a sender's
	 * stream ramp measures goodput by, finer than whole chunks. Optional
	 * (NULL: the transport does not count them); the control thread,
	 * while the endpoint is open; cheap. */
	uint64_t (*acked)(struct ferry_xport *x, unsigned ep);

	/* What endpoint ep has received so far (struct ferry_xport_rx;
	 * tcp: TCP_INFO's bytes_received, rcv_ooopack and rcv_rtt), 0 or
	 * -errno (-EOPNOTSUPP where the kernel does not count them); and a
	 * bound on the window a receiver advertises on it (tcp:
	 * TCP_WINDOW_CLAMP), 0 or -errno. What a receiver's windows that
	 * follow the rate (pipe/fit.h) read and set. Optional as a pair
	 * (NULL: the transport has no window); the control thread, while the
	 * endpoint is open. */
	int (*rx_counts)(struct ferry_xport *x, unsigned ep,
			 struct ferry_xport_rx *rx);
	int (*clamp)(struct ferry_xport *x, unsigned ep, uint64_t bytes);
};

/* ops.needs: an RDMA device (a NIC's, or rxe); memory it may pin
 * (RLIMIT_MEMLOCK bounds what it registers). */
#define FERRY_XPORT_NEEDS_RDMA (1u << 0)
#define FERRY_XPORT_NEEDS_MEMLOCK (1u << 1)

/* Does ops (a table of ops->size bytes) have the optional op m? */
#define FERRY_XPORT_HAS(ops, m)                                             \
	((ops)->size >= offsetof(struct ferry_xport_ops, m) +               \
				sizeof((ops)->m) &&                         \
	 (ops)->m != NULL)

/* ops' wire family (FERRY_WIRE_OWN for a table without the field). */
unsigned ferry_xport_wire(const struct ferry_xport_ops *ops);
/* "RoCEv2" for FERRY_WIRE_ROCEV2, "" for FERRY_WIRE_OWN. */
const char *ferry_wire_name(unsigned wire);
/* What ops needs of the host (FERRY_XPORT_NEEDS_*; 0 for a table without
 * the field), and what it runs on (NULL: nothing to add). */
unsigned ferry_xport_needs(const struct ferry_xport_ops *ops);
const char *ferry_xport_runs_on(const struct ferry_xport_ops *ops);

/* The mode a session of ops uses when the user asked for want (DEFAULT:
 * the transport's). Returns it, or -EINVAL with why naming the transport,
 * the mode and the reason. */
int ferry_xport_poll_mode(const struct ferry_xport_ops *ops, int want,
			  char *why, size_t whylen);
/* "busy" or "event". */
const char *ferry_poll_name(int mode);

/* The transports this build has, NULL-terminated, in preference order
 * (their ranks). */
const struct ferry_xport_ops *const *ferry_xport_list(void);

/* Look a transport up by name; NULL if this build does not have it. */
const struct ferry_xport_ops *ferry_xport_find(const char *name);

#endif
