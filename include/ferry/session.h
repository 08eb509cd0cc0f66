/* Sessions: a sender and a receiver agree over the control channel, then
 * move chunks through the pipeline on the chosen transport.
 *
 * A session is: control connection, mutual authentication, capability
 * negotiation (transport, streams, chunk size, slots), the transport's
 * endpoint exchange, the data phase, and the final accounting in which each
 * side tells the other what it counted and what CPU it spent.
 */
#ifndef FERRY_SESSION_H
#define FERRY_SESSION_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ferry/key.h"
#include "ferry/stats.h"
#include "ferry/xport.h"

#define FERRY_DEFAULT_PORT "7471"
#define FERRY_DEFAULT_STREAMS 4
#define FERRY_DEFAULT_CHUNK (4u << 20)
#define FERRY_DEFAULT_SLOTS 64
#define FERRY_DEFAULT_TIMEOUT_MS 10000

#define FERRY_MAX_STREAMS 256
#define FERRY_MIN_CHUNK 4096u
#define FERRY_MAX_CHUNK (1u << 30)
#define FERRY_MAX_SLOTS 65536u
#define FERRY_DEFAULT_MAX_MEM (4ull << 30) /* receiver's ring cap */

/* ferry_opts.fixed: which of streams and slots are the user's, kept as
 * given. The others are a floor: the receiver plans them for the path
 * (its RTT, the target rate, both ends' socket-buffer limits: enough
 * tcp windows, and a ring, to hold the bandwidth-delay product). */
#define FERRY_FIXED_STREAMS 1u
#define FERRY_FIXED_SLOTS 2u

/* Called from the session's control thread once per interval with the
 * interval just ended; r holds the session's settings. */
typedef void (*ferry_interval_fn)(const struct ferry_report *r,
				  const struct ferry_interval *iv, void *arg);

/* When the receiver syncs what it publishes (files and directories land
 * under their final names only once verified, whichever is chosen). */
enum ferry_fsync {
	FERRY_FSYNC_BATCH = 0, /* one syncfs, then a batch of renames (up to
				  256 files or 256 MiB, 200 ms at most);
				  syncfs again before the session's result */
	FERRY_FSYNC_FILE = 1,  /* fsync each file before its rename and its
				  directory after */
	FERRY_FSYNC_END = 2,   /* rename as verified; one syncfs before the
				  session's result */
};

/* Raise this process's soft limit on open files to its hard limit, and
 * say so at info level when it changed (ferry_log_set). A receiver keeps
 * few files open at a time whatever the limit (it closes the least
 * recently used), but more room means more sessions and files in flight.
 * Returns 0 or -errno. */
int ferry_nofile_raise(void);

/* "batch", "file", "end"; and back (-1 when unknown). */
const char *ferry_fsync_name(int mode);
int ferry_fsync_parse(const char *name);

struct ferry_opts {
	const char *transport; /* "auto", or a transport's name
				  (ferry_xport_list) */
	unsigned streams;      /* streams / queue pairs */
	uint64_t chunk_size;   /* payload bytes per chunk (slot) */
	unsigned slots;        /* ring slots; split evenly over streams */
	unsigned fixed;        /* FERRY_FIXED_*: streams and slots as given;
				  0 (the default): planned for the path */
	const struct ferry_key *key; /* NULL: no authentication */
	const char *key_path;  /* for messages only */
	const char *key_name;  /* client: the name the daemon knows key by
				  (its exports file); NULL: none */
	const char *cpulist;   /* pin workers here; NULL: the NIC's node */
	int numa_node;         /* bind memory here; -1: the NIC's node */
	int timeout_ms;        /* handshake, connect, and stall limit */
	int poll_mode;         /* enum ferry_poll_mode; 0: the transport's */
	uint64_t rate_bps;     /* sender: payload bits per second at most,
				  paced chunk by chunk over all streams
				  (tcp: each socket paced by the kernel
				  too); 0: no cap */
	int dscp;              /* the session's traffic class: a DSCP, 0 ..
				  FERRY_DSCP_MAX, on every packet of the
				  session, both ways: the control connection
				  and each transport's data (attr.dscp says
				  how). A sender's travels to the receiver,
				  which marks its own packets (credits,
				  ACKs) with it; a receiver's is for senders
				  that name none. -1 (the default): leave
				  the system's default */
	struct ferry_xport_conf xport; /* each transport's own settings
					  (socket buffers, DPDK arguments,
					  device...): ferry_xport_conf_init's
					  defaults, then the app's options */
	uint64_t max_mem;      /* largest ring this end will allocate (a
				  receiver refuses more; a planned ring
				  stays within both ends') */
	const char *dir;       /* receiver: where file sessions land; NULL:
				  bench sessions only */
	const char *exports;   /* receiver: an exports file: the daemon's
				  roles (see ferry_server_open); NULL: none */
	int fsync_mode;        /* receiver: enum ferry_fsync */
	bool keep_setid;       /* receiver: keep setuid, setgid and sticky
				  bits of what lands (never with exports) */
	double interval;       /* seconds between interval callbacks; 0 off */
	ferry_interval_fn on_interval;
	void *arg;
	atomic_bool *cancel;   /* sender: when it turns true (any thread, or
				  on_interval), the data phase stops within
				  20 ms and the call fails with -ECANCELED;
				  the receiver keeps what was verified, so
				  the same send resumes. A server's
				  (ferry_server_open): every session in its
				  data phase ends so within 20 ms, its peer
				  told that the receiver is shutting down.
				  NULL: never */
};

/* Fill o with the defaults above (o->xport: ferry_xport_conf_init). */
void ferry_opts_init(struct ferry_opts *o);

/* Check o's values. Returns 0 or -EINVAL with why naming the bad value
 * and its allowed range; or -FERRY_ENOXPORT when o->transport is not in
 * this build or not usable here with o->xport (each transport is probed
 * once), why naming the ones that are. */
int ferry_opts_check(const struct ferry_opts *o, char *why, size_t whylen);

/* What to send in a memory-to-memory run: for seconds, or bytes (whichever
 * is non-zero; bytes wins when both are). */
struct ferry_bench_spec {
	double seconds;
	uint64_t bytes;
};

/* Run a bench session against a receiver at host:port. Fills rep (the
 * sender's view, with the receiver's totals and CPU in peer_*). Returns 0
 * or a negative error with why saying what happened and what to do. */
int ferry_bench(const char *host, const char *port, const struct ferry_opts *o,
		const struct ferry_bench_spec *spec, struct ferry_report *rep,
		char *why, size_t whylen);

struct ferry_server;

/* Listen for sessions on addr:port (addr NULL: all addresses). Without
 * o->key the address the socket got must be loopback: anything else is
 * refused with -FERRY_EAUTH (sessions without authentication stay on this
 * host).
 *
 * With o->exports the server is a data-transfer-node daemon: it loads
 * that file (docs/exports.md: an export root, and per key name its key
 * file, rights and path prefixes), which replaces o->dir and o->key, and
 * serves, besides push sessions below the root, the requests of
 * `ferry cp` and the gfal2 plugin: stat, list, checksum, mkdir, unlink,
 * rmdir, pull and third-party copy (it sends its files to another
 * receiver) and one-time transfer tokens. Each client names its key;
 * every request and every file of a push session is checked against that
 * key's rights and prefixes. An exports file that does not load is an
 * error with why naming its file, line and problem. */
int ferry_server_open(const char *addr, const char *port,
		      const struct ferry_opts *o, struct ferry_server **out,
		      char *why, size_t whylen);

/* At most max_sessions sessions past their handshake at once (0, the
 * default: no limit). An authenticated client beyond that waits up to
 * the session timeout for a slot, then is refused (-EBUSY, "receiver
 * busy"); a client still in its handshake holds no slot, so peers that
 * connect and say nothing cannot keep authenticated ones out. */
void ferry_server_limit(struct ferry_server *srv, unsigned max_sessions);

/* Connections a server holds in their handshake at once (16 of them from
 * one source address). A connection over either number makes room: the
 * oldest one that has sent nothing (else the oldest) is closed, so a new
 * client is always heard, however many peers connect and say nothing.
 * A client must send its first byte within 3 s (or the session timeout,
 * if shorter), and finish the handshake within the timeout and 10 s. */
#define FERRY_SERVER_HANDSHAKES 64

/* The listening socket, for poll(). */
int ferry_server_fd(const struct ferry_server *srv);

/* Accept one control connection; fills peer with "host:port". Returns the
 * connected fd (>= 0) or a negative error. Pass the fd to
 * ferry_server_session (from any thread), which closes it; keep
 * accepting meanwhile: the server bounds what peers still in their
 * handshake hold (FERRY_SERVER_HANDSHAKES). */
int ferry_server_accept(struct ferry_server *srv, char *peer, size_t peerlen);

/* Serve one session on fd to its end and close fd. Safe to call from
 * several threads at once, one fd each. Fills rep (the receiver's view). */
int ferry_server_session(struct ferry_server *srv, int fd,
			 struct ferry_report *rep, char *why, size_t whylen);

void ferry_server_close(struct ferry_server *srv);

/* ---- OSU-style micro-benchmarks (ferry bench --osu) ----
 *
 * One pair of endpoints (bibw: one more, for the way back) moves messages
 * of each size in turn, directly on the transport: an RDMA WRITE with
 * immediate of exactly size bytes into the peer's message ring (on tcp,
 * one frame), no chunk header, no checksum, no credits. The receiver
 * echoes each message (lat), counts and acknowledges each window (bw, mr),
 * or sends its own windows back at the same time (bibw). Between sizes,
 * a small message each way takes each side's counts and CPU time.
 */
#define FERRY_OSU_MAX_SIZE (4u << 20) /* largest message */
#define FERRY_OSU_MAX_SIZES 64
#define FERRY_OSU_MAX_WINDOW 1024
#define FERRY_OSU_MAX_ITERS 1000000
#define FERRY_OSU_DEFAULT_WINDOW 64
#define FERRY_OSU_NO_WARMUP UINT32_MAX

enum ferry_osu_mode {
	FERRY_OSU_LAT = 1,  /* ping-pong; latency is half the round trip */
	FERRY_OSU_BW = 2,   /* windows one way, an ack after each */
	FERRY_OSU_BIBW = 3, /* windows both ways at once */
	FERRY_OSU_MR = 4,   /* as bw; the figure is messages per second */
};

struct ferry_osu_spec {
	int mode;                /* enum ferry_osu_mode */
	unsigned n_sizes;        /* sizes in the order they run */
	uint32_t sizes[FERRY_OSU_MAX_SIZES];
	unsigned iters, warmup;  /* 0: the defaults of ferry_osu_iters;
				    warmup FERRY_OSU_NO_WARMUP: none */
	unsigned window;         /* bw, bibw, mr; 0: the default */
};

/* One size. Timed phase only (warm-up excluded). */
struct ferry_osu_row {
	uint32_t size;
	uint64_t iters;   /* lat: round trips; others: windows */
	uint64_t count;   /* messages moved, both ways (lat: pings and
			     pongs; bibw: both windows) */
	uint64_t bytes;   /* size x count */
	double seconds;
	/* lat: half round trips; others: window time / window, per window */
	double avg_us, p50_us, p99_us, max_us;
	double mbps;      /* 1e6 bytes per second */
	double gbps;      /* 1e9 bits per second */
	double msg_rate;  /* count / seconds */
	double cpu_pct;   /* this process, % of one core */
	double peer_cpu_pct; /* the receiver's process, as it reported */
};

struct ferry_osu_result {
	int mode;
	char transport[12];
	char poll[8];      /* "busy" or "event": this side's waiting */
	char peer_poll[8]; /* the receiver's */
	char peer[80];
	unsigned window;   /* 0 for lat */
	unsigned n_rows;
	struct ferry_osu_row rows[FERRY_OSU_MAX_SIZES];
};

/* Run spec against a receiver at host:port (o: transport, timeout, key,
 * cpus, poll mode; streams, chunk and slots are the benchmark's own).
 * Returns 0 or a negative error with why; -ENOTSUP for a transport
 * without two-way writes (the ops table's duplex). */
int ferry_osu(const char *host, const char *port, const struct ferry_opts *o,
	      const struct ferry_osu_spec *spec, struct ferry_osu_result *res,
	      char *why, size_t whylen);

/* "lat", "bw", "bibw", "mr" and back (0 if unknown). */
const char *ferry_osu_mode_name(int mode);
int ferry_osu_mode_parse(const char *s);

/* Parse a size list into spec->sizes: comma-separated items, each a size
 * ("64", "4K", "1M"; K and M are powers of 2) or a range "LO-HI", the
 * powers of two from LO up to HI (LO itself, then doubling). Sizes from 1
 * to FERRY_OSU_MAX_SIZE. Returns 0 or -EINVAL with why. */
int ferry_osu_parse_sizes(const char *s, struct ferry_osu_spec *spec,
			  char *why, size_t whylen);

/* The default size list: 1 B to 4 MiB in powers of two. */
void ferry_osu_default_sizes(struct ferry_osu_spec *spec);

/* Iterations and warm-up for one size: spec's when set, else OSU's
 * habit: lat 10000 and 1000 up to 8 KiB, 1000 and 100 above; windows of
 * bw, bibw and mr 100 and 10 up to 8 KiB, 20 and 2 above. A warm-up of
 * spec->iters alone is a tenth of it. */
void ferry_osu_iters(const struct ferry_osu_spec *spec, uint32_t size,
		     unsigned *iters, unsigned *warmup);

/* The p-th percentile (0..100, nearest rank) of n sorted values. */
double ferry_osu_percentile(const double *sorted, size_t n, double p);

/* Fill a row's figures from its counts, its time, and per-iteration
 * samples in microseconds (sorted here, in place). */
void ferry_osu_row_stats(struct ferry_osu_row *r, double *samples, size_t n);

/* Write the result as an OSU-style aligned table (with a "#" header), as
 * CSV (one header line), or as one JSON document. Return 0 or -errno. */
int ferry_osu_table(const struct ferry_osu_result *r, FILE *out);
int ferry_osu_csv(const struct ferry_osu_result *r, FILE *out);
int ferry_osu_json(const struct ferry_osu_result *r, FILE *out);

/* The JSON document with extra top-level members written by extra (which
 * starts each member with ",\n  \"name\": "), as ferry_report_json_ex. */
int ferry_osu_json_ex(const struct ferry_osu_result *r, FILE *out,
		      void (*extra)(FILE *out, void *arg), void *arg);

#endif
