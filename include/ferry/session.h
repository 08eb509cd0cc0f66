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

#include <stddef.h>
#include <stdint.h>

#include "ferry/key.h"
#include "ferry/stats.h"

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

/* Called from the session's control thread once per interval with the
 * interval just ended; r holds the session's settings. */
typedef void (*ferry_interval_fn)(const struct ferry_report *r,
				  const struct ferry_interval *iv, void *arg);

struct ferry_opts {
	const char *transport; /* "auto", "tcp", "uroce", "verbs" */
	unsigned streams;      /* streams / queue pairs */
	uint64_t chunk_size;   /* payload bytes per chunk (slot) */
	unsigned slots;        /* ring slots; split evenly over streams */
	const struct ferry_key *key; /* NULL: no authentication */
	const char *key_path;  /* for messages only */
	const char *cpulist;   /* pin workers here; NULL: the NIC's node */
	int numa_node;         /* bind memory here; -1: the NIC's node */
	int timeout_ms;        /* handshake, connect, and stall limit */
	size_t sockbuf;        /* tcp socket buffers; 0: kernel autotuning */
	uint64_t max_mem;      /* receiver: largest ring it will allocate */
	const char *dir;       /* receiver: where file sessions land; NULL:
				  bench sessions only */
	double interval;       /* seconds between interval callbacks; 0 off */
	ferry_interval_fn on_interval;
	void *arg;
};

/* Fill o with the defaults above. */
void ferry_opts_init(struct ferry_opts *o);

/* Check o's values. Returns 0 or -EINVAL with why naming the bad value
 * and its allowed range. */
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

/* Listen for sessions on addr:port (addr NULL: all addresses). */
int ferry_server_open(const char *addr, const char *port,
		      const struct ferry_opts *o, struct ferry_server **out,
		      char *why, size_t whylen);

/* The listening socket, for poll(). */
int ferry_server_fd(const struct ferry_server *srv);

/* Accept one control connection; fills peer with "host:port". Returns the
 * connected fd (>= 0) or a negative error. */
int ferry_server_accept(struct ferry_server *srv, char *peer, size_t peerlen);

/* Serve one session on fd to its end and close fd. Safe to call from
 * several threads at once, one fd each. Fills rep (the receiver's view). */
int ferry_server_session(struct ferry_server *srv, int fd,
			 struct ferry_report *rep, char *why, size_t whylen);

void ferry_server_close(struct ferry_server *srv);

#endif
