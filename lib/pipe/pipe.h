/* lib/pipe: the pipeline and the steps of a session that every kind of
 * session shares (bench, files, OSU). It owns the ring geometry, memory,
 * transport choice (xpick.c), credits, the stream workers, and the
 * sender's control steps (client.c, session.h). It includes no folder
 * above it: files/, osu/ and daemon/ build on it.
 *
 * The pipeline shared by both roles: geometry, memory, transport, worker
 * threads, counters. Control-path code (client.c, daemon/server.c) drives
 * it; the worker loops live in pipe_dp.c and bench_dp.c. */
#ifndef FERRY_PIPE_PIPE_H
#define FERRY_PIPE_PIPE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "ferry/chunk.h"
#include "ferry/mem.h"
#include "ferry/session.h"
#include "ferry/stats.h"
#include "ferry/topo.h"
#include "ferry/xport.h"
#include "pipe/fit.h"
#include "pipe/ramp.h"

enum ferry__role { FERRY__SENDER, FERRY__RECEIVER };

struct ferry__stream;

/* What stream workers do with chunks: bench makes and discards them,
 * file sessions read and write files. Called on the worker's thread;
 * they must not block on the network. */
struct ferry__dp_ops {
	/* Worker start (optional). */
	void (*start)(struct ferry__stream *s);
	/* Sender: claim the next chunk, fill its payload (at most p->chunk
	 * bytes) and h's len, offset, file_idx, flags and crc (the payload's
	 * crc32c, ferry_chunk_seal). Returns 1 to send
	 * it, 0 when it was only read (to checksum a resumed file), -ENODATA
	 * when there is no more work, or a negative error. */
	int (*fill)(struct ferry__stream *s, uint8_t *payload,
		    struct ferry_chunk_hdr *h);
	/* Receiver: use a chunk whose header and crc32c were checked. Its
	 * slot is released when this returns 0. */
	int (*consume)(struct ferry__stream *s, const struct ferry_chunk_hdr *h,
		       const uint8_t *payload);
	/* consume checks the payload's crc32c itself (returning
	 * -FERRY_ECRC), fused with the other sums it takes, so the payload
	 * is read once while it is in the cache. */
	bool checks_crc;
};

/* Per-stream state and counters, one cache line apart. Counters are
 * written by the stream's worker and read by the control thread. */
struct ferry__stream {
	struct ferry__pipe *p;
	unsigned idx;
	pthread_t th;
	bool started;
	_Atomic uint64_t bytes, chunks, stalls, crc_errors;
	_Atomic bool done;
	int err;
	char why[160];
	double cpu_user, cpu_sys;
} __attribute__((aligned(64)));

struct ferry__pipe {
	enum ferry__role role;
	const struct ferry__dp_ops *dp;
	void *dp_ctx; /* files: struct ferry__ftx or ferry__frx; osu:
			 struct ferry__osu */
	/* the stream workers' loop; NULL: ferry__send_worker or
	 * ferry__recv_worker, driving dp (osu has its own, osu_dp.c) */
	void *(*worker)(void *arg);
	bool duplex; /* the sender's pool takes the receiver's writes too */
	const struct ferry_xport_ops *ops;
	struct ferry_xport *x;
	struct ferry_pool *pool;
	struct ferry_mr *mr;
	uint8_t *base;
	uint64_t chunk, stride;
	unsigned streams, depth, slots;
	uint64_t xfer_id;
	int poll_mode;           /* FERRY_POLL_BUSY or _EVENT, once picked */
	struct ferry_placement pl;
	int timeout_ms;

	/* sender: at most rate_bps payload bits per second over all
	 * streams (0: no cap); pace_next: when the next chunk may go */
	uint64_t rate_bps;
	_Atomic uint64_t pace_next;

	/* sender: the streams that may claim work (idx < active: all but
	 * while the stream ramp holds some back, ramp.h), and whether the
	 * work ran out, so that held streams end */
	_Atomic unsigned active;
	atomic_bool no_work;
	bool ramping;
	struct ferry__ramp ramp;

	/* receiver: windows that follow the rate (fit.h); fit.n 0: off */
	struct ferry__fit fit;
	struct ferry__fit_in *fit_in; /* fit.n counters, read each interval */

	/* sender: when a stream last got credits back (ns): the peer is
	 * alive, so another stream that hears nothing may wait longer
	 * (FERRY__STALL_ALIVE, pipe_dp.c) */
	_Atomic uint64_t heard_ns;

	/* sender: run for a byte budget or until a deadline */
	uint64_t budget;          /* 0: time-bound */
	_Atomic uint64_t claimed; /* bytes handed to streams so far */
	uint64_t deadline_ns;

	uint64_t start_ns, end_ns; /* end: when the last worker finished */
	atomic_bool stop;   /* finish cleanly (receiver: sender said FIN) */
	atomic_bool abort;  /* give up: an error somewhere */
	_Atomic unsigned running;

	struct ferry__stream *st;
	/* interval sampling */
	uint64_t last_ns, last_bytes, last_chunks, last_stalls;
	uint64_t last_sbytes[FERRY_REPORT_IV_STREAMS]; /* per stream */
	uint64_t last_retx, last_sretx[FERRY_REPORT_IV_STREAMS];
	double ctl_u0, ctl_s0; /* control thread CPU when the session began */
	double proc_u0, proc_s0; /* the process's, likewise */
	double shared_u0, shared_s0; /* the transport's shared threads' */
};

/* Geometry from negotiated values: slots split over streams. Returns 0 or
 * -EINVAL with why. */
int ferry__pipe_geometry(struct ferry__pipe *p, unsigned streams,
			 uint64_t chunk, unsigned slots, char *why,
			 size_t whylen);

/* Decide placement for traffic to/from peer; allocate and register the
 * pool (the receiver's is remotely writable). */
int ferry__pipe_memory(struct ferry__pipe *p, const struct ferry_opts *o,
		       const struct sockaddr *peer, socklen_t peer_len,
		       char *why, size_t whylen);

/* The poll mode this session's streams use: what was asked, else the
 * transport's default, except that a default of busy polling with more
 * streams than CPUs to spin on becomes event mode (said at info level):
 * spinning workers would take the CPUs from each other and from what
 * feeds them. p->ops and p->streams are set. Returns the mode or -errno. */
int ferry__pipe_poll_mode(const struct ferry__pipe *p, int want, char *why,
			  size_t whylen);

/* Start one worker per stream running fn; stop/abort them; join. */
int ferry__pipe_start(struct ferry__pipe *p, void *(*fn)(void *));
void ferry__pipe_abort(struct ferry__pipe *p);
/* Receiver, at FIN: every credit is back, so nothing more can land;
 * stop the workers now rather than at the end of their idle poll (the
 * transport's cancel wakes them). */
void ferry__pipe_stop(struct ferry__pipe *p);
void ferry__pipe_join(struct ferry__pipe *p);

/* First worker error (0 if none), with its reason copied to why. */
int ferry__pipe_error(const struct ferry__pipe *p, char *why, size_t whylen);

/* Sum of the streams' counters. */
void ferry__pipe_totals(const struct ferry__pipe *p, uint64_t *bytes,
			uint64_t *chunks, uint64_t *stalls, uint64_t *crc_err);

/* Close an interval if one is due (or force) and hand it to the app. */
void ferry__pipe_tick(struct ferry__pipe *p, const struct ferry_opts *o,
		      struct ferry_report *rep, bool force);

/* Milliseconds until the next interval is due (for poll timeouts). */
int ferry__pipe_next_tick_ms(const struct ferry__pipe *p,
			     const struct ferry_opts *o);

/* Receiver: hold each stream's window to the rate it carries (fit.h),
 * on a tcp path of base RTT rtt_s whose sockets hold windows of max bytes
 * (0: unknown). Off where the transport has no window to clamp or the
 * path is short. */
void ferry__pipe_fit_start(struct ferry__pipe *p, double rtt_s, uint64_t max);

/* Receiver, from the control loop: sample when due and set the clamps. */
void ferry__pipe_fit_tick(struct ferry__pipe *p);

/* Sender: start the stream ramp with start of the session's streams
 * carrying data (ramp.h); rtt_s: the path's round trip. */
void ferry__pipe_ramp_start(struct ferry__pipe *p, unsigned start,
			    double rtt_s);

/* Sender, from the control loop: sample the ramp when due and move the
 * gate (logged at info level). */
void ferry__pipe_ramp_tick(struct ferry__pipe *p);

/* Fill the report's settings and totals. */
void ferry__pipe_report(struct ferry__pipe *p, struct ferry_report *rep);

/* CPU seconds this thread / this process has used. */
void ferry__thread_cpu(double *user, double *sys);
void ferry__process_cpu(double *user, double *sys);

/* Undo ferry__pipe_memory and the transport's open (to try another). */
void ferry__pipe_release(struct ferry__pipe *p);
void ferry__pipe_free(struct ferry__pipe *p);

/* Worker loops (pipe_dp.c), driving p->dp. */
void *ferry__send_worker(void *arg);
void *ferry__recv_worker(void *arg);

/* For any worker loop: record the stream's first error ("stream N: ERROR
 * after COUNT WHAT") and abort the session; at the end, take the thread's
 * CPU time and count the worker out. */
void ferry__stream_fail(struct ferry__stream *s, int err, const char *what,
			unsigned long long count);
void ferry__stream_finish(struct ferry__stream *s);

/* Memory-to-memory chunks (bench_dp.c). */
extern const struct ferry__dp_ops ferry__bench_dp;

/* The transport choice (xpick.c). */
struct ferry__xpick {
	const struct ferry_xport_ops *ops; /* this side's transport */
	bool family;  /* the peer runs another transport of ops' wire family
			 (attr.family) */
	char peer[12]; /* the peer's transport */
};
/* What one session may use: each transport of this build probed once. */
struct ferry__xscan {
	bool duplex;  /* in: two-way writes wanted (osu): only transports
			 that have them, each paired with itself */
	const struct ferry_xport_ops *want; /* the one asked for; NULL: auto */
	const struct ferry_xport_conf *conf; /* the transports' settings */
	uint32_t usable;            /* bits of those usable here */
	uint32_t reach_asked, reach_ok; /* bits: reach asked; it said yes */
	char reach_why[200];        /* the last no of reach */
	char have[128];             /* the names of those usable here, in
				       preference order, ", " between */
};
/* Probe every transport (with conf) and check want, the user's "auto" or
 * a name: 0 with *s filled (s->duplex is kept), or -FERRY_ENOXPORT (not
 * in this build, not usable here) or -ENOTSUP (no two-way writes, with
 * s->duplex) with why. */
int ferry__xport_scan(const char *want, const struct ferry_xport_conf *conf,
		      struct ferry__xscan *s, char *why, size_t whylen);
/* ferry_opts_check, keeping the scan for the session that follows. */
int ferry__opts_check(const struct ferry_opts *o, struct ferry__xscan *s,
		      char *why, size_t whylen);
/* Sender: the mask to PROPOSE (lib/xport/xport_ids.h): the transports of
 * s that reach peer (the others are logged), and the wire families they
 * speak; 0 when none. */
uint32_t ferry__xport_offer(struct ferry__xscan *s, const struct sockaddr *peer,
			    socklen_t peer_len);
/* Receiver: the first of s's transports, in preference order, that skip
 * does not name, that reaches addr (this side's control address) and that
 * the sender offered, itself or its wire family. 0 with *pick and why
 * saying so, or -FERRY_ENOXPORT with why. */
int ferry__xport_choose(struct ferry__xscan *s, uint32_t offer, uint32_t skip,
			const struct sockaddr *addr, socklen_t addr_len,
			struct ferry__xpick *pick, char *why, size_t whylen);
/* Receiver: the ACCEPT mask that tells the sender what pick is. */
uint32_t ferry__xport_answer(const struct ferry__xpick *pick);
/* Sender: this side's transport for the receiver's ACCEPT mask: the one
 * it names, or for a pair, one of s's of the same family. 0 with why, or
 * -FERRY_EPROTO. */
int ferry__xport_follow(struct ferry__xscan *s, uint32_t chosen,
			const struct sockaddr *peer, socklen_t peer_len,
			struct ferry__xpick *pick, char *why, size_t whylen);

#endif
