/* lib/osu: OSU-style benchmarks over lib/pipe (ferry_osu, and the
 * receiver's side that daemon/server.c runs).
 *
 * OSU-style benchmarks: the message path (internal).
 *
 * Sessions: the client proposes mode FERRY_MODE_OSU with one stream (two
 * for bibw), chunk = the largest size rounded up to 4 KiB and two slots per
 * stream; the pool of each side is registered remotely writable (the
 * sender's through the transport's duplex op). Per stream s, slot 2s is
 * where the peer's messages land and slot 2s+1 what this side sends from.
 *
 * Messages are writes with immediate of exactly the size tested; imm says
 * what the peer does with them (FERRY__OSU_OP). Small control messages
 * (post_send, struct ferry__osu_msg) synchronise the sizes.
 *
 * Threads: stream 0 of the sender (the conductor) runs the sizes; stream 0
 * of the receiver answers. For bibw, stream 1 carries the other way: the
 * sender's stream 1 gets a round from the conductor (go_*), asks the
 * receiver's stream 1 for it with a GO message, and counts and
 * acknowledges what that sends.
 */
#ifndef FERRY_OSU_OSU_H
#define FERRY_OSU_OSU_H

#include <stdatomic.h>
#include <stdint.h>

#include "ctrl/msg.h"
#include "ferry/session.h"
#include "pipe/pipe.h"


/* imm of a message: op in the top 4 bits, a sequence number below */
#define FERRY__OSU_IMM(op, seq) ((uint32_t)(op) << 28 | ((seq) & 0xfffffffu))
#define FERRY__OSU_OP(imm) ((imm) >> 28)
enum {
	FERRY__OSU_PING = 1,      /* echo it */
	FERRY__OSU_PONG = 2,      /* the echo */
	FERRY__OSU_DATA = 3,      /* count it */
	FERRY__OSU_DATA_LAST = 4, /* count it; the window is over: ACK */
};

/* Small messages, FERRY__OSU_MSG_LEN bytes, little-endian: u32 type, u32
 * arg, u64 a, b, c, d. */
enum {
	FERRY__OSU_SYNC = 1, /* arg: FERRY__OSU_START..BYE below; a: the
				poll mode to follow. Answered with a STAT,
				except BYE (the sender's last message on a
				stream) */
	FERRY__OSU_STAT = 2, /* the answer: a messages and b bytes counted
				since the last start, c CPU microseconds of
				the process since then, d its poll mode */
	FERRY__OSU_ACK = 3,  /* a window arrived */
	FERRY__OSU_GO = 4,   /* bibw: send arg windows of a bytes each,
				window b, poll mode c */
};
enum { FERRY__OSU_START, FERRY__OSU_END, FERRY__OSU_HELLO, FERRY__OSU_BYE };
#define FERRY__OSU_MSG_LEN 40

struct ferry__osu_msg {
	uint32_t type, arg;
	uint64_t a, b, c, d;
};

void ferry__osu_msg_encode(const struct ferry__osu_msg *m, uint8_t *buf);
/* Returns 0, or -FERRY_EPROTO for a message of another length. */
int ferry__osu_msg_decode(const uint8_t *buf, size_t len,
			  struct ferry__osu_msg *m);

/* One session's benchmark state, shared by its workers. */
struct ferry__osu {
	struct ferry_osu_spec spec;
	unsigned window;
	int poll_mode;         /* sender: FERRY_POLL_*; receiver: adopted */
	int peer_poll;         /* sender: what the receiver reported */
	unsigned n_rows;
	struct ferry_osu_row rows[FERRY_OSU_MAX_SIZES];
	double *samples;       /* room for the most iterations of a size */
	size_t samples_cap;
	/* bibw: the conductor hands stream 1 a round of go_windows windows
	 * of go_size bytes (go_seq++), which says it is over (done_seq) */
	uint32_t go_size, go_windows;
	_Atomic uint64_t go_seq, done_seq;
	atomic_bool over;      /* sender: the conductor has finished */
};

/* The workers (osu_dp.c): by stream index, the conductor or the way back
 * on the sender; the echo or the way back on the receiver. */
void *ferry__osu_send_worker(void *arg);
void *ferry__osu_recv_worker(void *arg);

/* Receiver: check an OSU proposal's geometry and set the pipe up for it
 * (its workers, a fresh state in p->dp_ctx, freed by ferry__osu_free). */
int ferry__osu_serve(struct ferry__pipe *p, const struct ferry_params *pr,
		     char *why, size_t whylen);
void ferry__osu_free(struct ferry__pipe *p);

#endif
