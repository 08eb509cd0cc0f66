/* OSU-style benchmarks: the workers (see osu.h for who runs what).
 *
 * Busy polling calls the transport's poll with a zero timeout in a loop;
 * event mode asks it for one completion, waiting as long as it takes (a
 * blocking read on a socket, for one). So an event-mode worker learns of
 * the end from the peer: the sender's last message on each stream is a
 * BYE. The receiver follows the mode the sender's SYNC names. No
 * allocation, logging or locks per message; the samples of a size are
 * sorted between sizes, off the timed path. */
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "osu/osu.h"
#include "util/util.h"

#define BATCH 16
#define SIGNAL_EVERY 64  /* one write in so many asks for a completion */
#define STOPPED 1        /* next(): the session is over */
#define YIELD_EVERY 64   /* busy: empty polls between sched_yield()s, so a
			    host with more spinning threads than CPUs (the
			    transports' own polling threads too) still
			    makes progress */

struct osu_ep {
	struct ferry__stream *s;
	struct ferry__pipe *p;
	struct ferry__osu *u;
	unsigned idx;
	int poll_mode;
	/* stream 0 counts the sender's messages in s->bytes and s->chunks:
	 * the sender those it writes, the receiver those that land */
	bool count_tx, count_rx;
	uint8_t *rx, *tx;   /* where the peer's messages land; what we send */
	uint64_t off;       /* the landing offset, the same on both sides */
	uint64_t posted;    /* writes posted (their wr_id) */
	uint32_t seq;
	int n, i;           /* completions polled, consumed */
	struct ferry_wc wc[BATCH];
	/* the echo side: counted since the last SYNC start */
	uint64_t msgs, bytes;
	double cpu0;
	char what[64];      /* for errors: the size being run */
};

static void ep_init(struct osu_ep *e, struct ferry__stream *s)
{
	struct ferry__pipe *p = s->p;
	uint64_t slot = (uint64_t)s->idx * p->depth;

	memset(e, 0, sizeof(*e));
	e->s = s;
	e->p = p;
	e->u = p->dp_ctx;
	e->idx = s->idx;
	e->poll_mode = e->u->poll_mode ? e->u->poll_mode : p->poll_mode;
	e->count_tx = s->idx == 0 && p->role == FERRY__SENDER;
	e->count_rx = s->idx == 0 && p->role == FERRY__RECEIVER;
	e->off = slot * p->stride + FERRY_CHUNK_HDR_SPACE;
	e->rx = p->base + e->off;
	e->tx = p->base + (slot + 1) * p->stride + FERRY_CHUNK_HDR_SPACE;
}

static double cpu_now(void)
{
	double u, s;

	ferry__process_cpu(&u, &s);
	return u + s;
}

/* Between rounds of bibw: spin (busy) or nap (event). */
static void pause_a_bit(int poll_mode)
{
	struct timespec ts = { 0, 20000 };

	if (poll_mode == FERRY_POLL_BUSY)
		sched_yield();
	else
		nanosleep(&ts, NULL);
}

static bool stopping(const struct osu_ep *e)
{
	return atomic_load_explicit(&e->p->stop, memory_order_relaxed) ||
	       atomic_load_explicit(&e->u->over, memory_order_relaxed);
}

/* The next completion that is not a write's. idle: waiting for the peer to
 * start something (returns STOPPED at the session's end); otherwise the
 * peer owes an answer within the session timeout (which the transport
 * also applies to a blocked read). */
static int next(struct osu_ep *e, const struct ferry_wc **out, bool idle)
{
	struct ferry__pipe *p = e->p;
	uint64_t deadline = 0;
	unsigned empty = 0;
	int n;

	for (;;) {
		while (e->i < e->n) {
			const struct ferry_wc *w = &e->wc[e->i++];

			if (w->op != FERRY_WC_WRITE) {
				*out = w;
				return 0;
			}
		}
		if (atomic_load_explicit(&p->abort, memory_order_relaxed))
			return -ECANCELED;
		if (idle && stopping(e))
			return STOPPED;
		if (e->poll_mode == FERRY_POLL_BUSY)
			n = p->ops->poll(p->x, e->idx, e->wc, BATCH, 0);
		else
			n = p->ops->poll(p->x, e->idx, e->wc, 1, -1);
		if (n == -FERRY_ECLOSED && idle)
			return STOPPED; /* the sender closed after FIN */
		if (n == -FERRY_ETIMEOUT && idle)
			continue; /* a quiet peer between sizes */
		if (n < 0)
			return n;
		e->n = n;
		e->i = 0;
		if (n == 0 && ++empty % YIELD_EVERY == 0)
			sched_yield();
		if (n == 0 && !idle) {
			uint64_t now = ferry__now_ns();

			if (!deadline)
				deadline = now + (uint64_t)p->timeout_ms * 1000000ull;
			else if (now > deadline)
				return -FERRY_ETIMEOUT;
		}
	}
}

static int put(struct osu_ep *e, uint32_t len, const uint8_t *from,
	       uint32_t imm, bool signal)
{
	struct ferry__pipe *p = e->p;

	if (e->count_tx) {
		atomic_fetch_add_explicit(&e->s->bytes, len, memory_order_relaxed);
		atomic_fetch_add_explicit(&e->s->chunks, 1, memory_order_relaxed);
	}
	return p->ops->post_write_imm(p->x, e->idx, p->mr, from, len, e->off,
				      imm, e->posted++,
				      signal ? FERRY_POST_SIGNALED : 0);
}

static int send_msg(struct osu_ep *e, const struct ferry__osu_msg *m)
{
	uint8_t b[FERRY__OSU_MSG_LEN];

	ferry__osu_msg_encode(m, b);
	return e->p->ops->post_send(e->p->x, e->idx, b, sizeof(b));
}

static int as_msg(const struct ferry_wc *w, struct ferry__osu_msg *m)
{
	if (w->op != FERRY_WC_RECV)
		return -FERRY_EPROTO;
	return ferry__osu_msg_decode(w->msg, w->len, m);
}

static int wait_msg(struct osu_ep *e, uint32_t type, struct ferry__osu_msg *m)
{
	const struct ferry_wc *w;
	int err = next(e, &w, false);

	if (!err)
		err = as_msg(w, m);
	if (!err && m->type != type)
		err = -FERRY_EPROTO;
	return err;
}

/* A message that landed: the right place, a size the ring holds. */
static int landed(const struct osu_ep *e, const struct ferry_wc *w)
{
	if (w->op != FERRY_WC_WRITE_IMM || w->len > e->p->chunk ||
	    (w->offset != FERRY_WC_OFFSET_UNKNOWN && w->offset != e->off))
		return -FERRY_EPROTO;
	return 0;
}

/* ---- the active side: ping-pong and windows ---- */

static int ping(struct osu_ep *e, uint32_t size)
{
	const struct ferry_wc *w;
	uint32_t seq = e->seq++;
	int err;

	err = put(e, size, e->tx, FERRY__OSU_IMM(FERRY__OSU_PING, seq),
		  seq % SIGNAL_EVERY == SIGNAL_EVERY - 1);
	if (!err)
		err = next(e, &w, false);
	if (!err && (landed(e, w) || w->len != size ||
		     w->imm != FERRY__OSU_IMM(FERRY__OSU_PONG, seq)))
		err = -FERRY_EPROTO;
	return err;
}

/* n messages of size, the last asking for an ACK; wait for it. Only the
 * last is signalled, so a window longer than the transport's work ring
 * never waits on a completion nobody reaps. */
static int window(struct osu_ep *e, uint32_t size, unsigned n)
{
	struct ferry__osu_msg m;
	int err = 0;

	for (unsigned k = 0; k < n && !err; k++) {
		bool last = k + 1 == n;

		err = put(e, size, e->tx,
			  FERRY__OSU_IMM(last ? FERRY__OSU_DATA_LAST :
						FERRY__OSU_DATA, e->seq++),
			  last);
	}
	return err ? err : wait_msg(e, FERRY__OSU_ACK, &m);
}

/* bibw: have stream 1 run n windows the other way, and wait for them. */
static void back_start(struct ferry__osu *u, uint32_t size, unsigned n)
{
	u->go_size = size;
	u->go_windows = n;
	atomic_fetch_add_explicit(&u->go_seq, 1, memory_order_release);
}

static int back_wait(struct osu_ep *e)
{
	struct ferry__osu *u = e->u;
	uint64_t want = atomic_load(&u->go_seq);
	uint64_t deadline = ferry__now_ns() +
			    (uint64_t)e->p->timeout_ms * 1000000ull;

	while (atomic_load_explicit(&u->done_seq, memory_order_acquire) != want) {
		if (atomic_load(&e->p->abort))
			return -ECANCELED;
		if (ferry__now_ns() > deadline)
			return -FERRY_ETIMEOUT;
		pause_a_bit(e->poll_mode);
	}
	return 0;
}

/* n iterations of the mode at size; samples (us) when timed. */
static int phase(struct osu_ep *e, uint32_t size, unsigned n, double *samples)
{
	struct ferry__osu *u = e->u;
	bool bibw = u->spec.mode == FERRY_OSU_BIBW;
	int err = 0;

	if (bibw && n)
		back_start(u, size, n);
	for (unsigned i = 0; i < n && !err; i++) {
		uint64_t t = ferry__now_ns();

		if (u->spec.mode == FERRY_OSU_LAT) {
			err = ping(e, size);
			if (samples)
				samples[i] = (double)(ferry__now_ns() - t) / 2e3;
		} else {
			err = window(e, size, u->window);
			if (samples)
				samples[i] = (double)(ferry__now_ns() - t) / 1e3 /
					     u->window;
		}
	}
	if (bibw && n && !err)
		err = back_wait(e);
	return err;
}

/* SYNC: the receiver's counts and CPU since the last start. */
static int sync_peer(struct osu_ep *e, uint32_t arg, struct ferry__osu_msg *st)
{
	struct ferry__osu_msg m = { .type = FERRY__OSU_SYNC, .arg = arg,
				    .a = (uint64_t)e->poll_mode };
	int err = send_msg(e, &m);

	return err ? err : wait_msg(e, FERRY__OSU_STAT, st);
}

static int run_size(struct osu_ep *e, unsigned k)
{
	struct ferry__osu *u = e->u;
	struct ferry_osu_row *r = &u->rows[k];
	uint32_t size = u->spec.sizes[k];
	bool lat = u->spec.mode == FERRY_OSU_LAT;
	struct ferry__osu_msg st;
	unsigned iters, warmup;
	uint64_t t0, t1, want;
	double c0, c1;
	int err;

	snprintf(e->what, sizeof(e->what), "%s, %u-byte messages",
		 ferry_osu_mode_name(u->spec.mode), size);
	ferry_osu_iters(&u->spec, size, &iters, &warmup);
	err = phase(e, size, warmup, NULL);
	if (!err)
		err = sync_peer(e, FERRY__OSU_START, &st);
	if (err)
		return err;
	c0 = cpu_now();
	t0 = ferry__now_ns();
	err = phase(e, size, iters, u->samples);
	t1 = ferry__now_ns();
	c1 = cpu_now();
	if (!err)
		err = sync_peer(e, FERRY__OSU_END, &st);
	if (err)
		return err;
	want = lat ? iters : (uint64_t)iters * u->window;
	if (st.a != want || st.b != want * size) {
		snprintf(e->what, sizeof(e->what),
			 "%u-byte messages: %llu arrived, %llu sent", size,
			 (unsigned long long)st.a, (unsigned long long)want);
		return -FERRY_EPROTO;
	}
	*r = (struct ferry_osu_row){ .size = size, .iters = iters };
	r->count = u->spec.mode == FERRY_OSU_BW ||
				   u->spec.mode == FERRY_OSU_MR ? want : 2 * want;
	r->bytes = r->count * size;
	r->seconds = (double)(t1 - t0) / 1e9;
	if (r->seconds > 0) {
		r->cpu_pct = (c1 - c0) / r->seconds * 100;
		r->peer_cpu_pct = (double)st.c / 1e6 / r->seconds * 100;
	}
	u->peer_poll = (int)st.d;
	ferry_osu_row_stats(r, u->samples, iters);
	u->n_rows = k + 1;
	return 0;
}

/* The last message on a stream: the peer's worker may stop. */
static int bye(struct osu_ep *e)
{
	struct ferry__osu_msg m = { .type = FERRY__OSU_SYNC,
				    .arg = FERRY__OSU_BYE };

	return send_msg(e, &m);
}

/* ---- the passive side: echo, count, acknowledge ---- */

static int serve_write(struct osu_ep *e, const struct ferry_wc *w)
{
	struct ferry__osu_msg ack = { .type = FERRY__OSU_ACK };
	uint32_t op = FERRY__OSU_OP(w->imm);

	if (landed(e, w))
		return -FERRY_EPROTO;
	e->msgs++;
	e->bytes += w->len;
	if (e->count_rx) {
		atomic_fetch_add_explicit(&e->s->bytes, w->len,
					  memory_order_relaxed);
		atomic_fetch_add_explicit(&e->s->chunks, 1, memory_order_relaxed);
	}
	switch (op) {
	case FERRY__OSU_PING: /* echo what landed */
		return put(e, w->len, e->rx,
			   FERRY__OSU_IMM(FERRY__OSU_PONG, w->imm),
			   e->posted % SIGNAL_EVERY == SIGNAL_EVERY - 1);
	case FERRY__OSU_DATA:
		return 0;
	case FERRY__OSU_DATA_LAST:
		return send_msg(e, &ack);
	default:
		return -FERRY_EPROTO;
	}
}

static int serve_sync(struct osu_ep *e, const struct ferry__osu_msg *m)
{
	struct ferry__osu_msg st = { .type = FERRY__OSU_STAT };
	double now = cpu_now();

	if (m->a == FERRY_POLL_BUSY || m->a == FERRY_POLL_EVENT)
		e->poll_mode = (int)m->a;
	st.a = e->msgs;
	st.b = e->bytes;
	st.c = (uint64_t)((now - e->cpu0) * 1e6);
	st.d = e->poll_mode == FERRY_POLL_BUSY ||
			       e->p->poll_mode == FERRY_POLL_BUSY ?
		       FERRY_POLL_BUSY :
		       FERRY_POLL_EVENT;
	if (m->arg != FERRY__OSU_END) { /* a start, the hello: count from here */
		e->msgs = e->bytes = 0;
		e->cpu0 = now;
	}
	return send_msg(e, &st);
}

/* Receiver stream 0: answer until the session ends. */
static int serve(struct osu_ep *e)
{
	const struct ferry_wc *w;
	struct ferry__osu_msg m;
	int err;

	for (;;) {
		err = next(e, &w, true);
		if (err)
			return err == STOPPED ? 0 : err;
		if (w->op == FERRY_WC_WRITE_IMM)
			err = serve_write(e, w);
		else if (as_msg(w, &m) || m.type != FERRY__OSU_SYNC)
			err = -FERRY_EPROTO;
		else if (m.arg == FERRY__OSU_BYE)
			return 0;
		else
			err = serve_sync(e, &m);
		if (err)
			return err;
	}
}

/* Sender stream 1 (bibw): per round from the conductor, ask the receiver
 * for its windows and take them. */
static int back_take(struct osu_ep *e)
{
	struct ferry__osu *u = e->u;
	uint64_t seen = 0;
	int err = 0;

	while (!err) {
		uint64_t go = atomic_load_explicit(&u->go_seq,
						   memory_order_acquire);
		if (go == seen) {
			if (atomic_load(&e->p->abort))
				return -ECANCELED;
			if (atomic_load(&u->over))
				return bye(e);
			pause_a_bit(e->poll_mode);
			continue;
		}
		struct ferry__osu_msg m = { .type = FERRY__OSU_GO,
					    .arg = u->go_windows,
					    .a = u->go_size, .b = u->window,
					    .c = (uint64_t)e->poll_mode };
		uint64_t want = (uint64_t)u->go_windows * u->window;

		err = send_msg(e, &m);
		for (uint64_t got = 0; got < want && !err; got++) {
			const struct ferry_wc *w;

			err = next(e, &w, false);
			if (!err && w->len != u->go_size)
				err = -FERRY_EPROTO;
			if (!err)
				err = serve_write(e, w);
		}
		seen = go;
		atomic_store_explicit(&u->done_seq, go, memory_order_release);
	}
	return err;
}

/* Receiver stream 1 (bibw): send the windows each GO asks for. */
static int back_give(struct osu_ep *e)
{
	const struct ferry_wc *w;
	struct ferry__osu_msg m;
	int err;

	for (;;) {
		err = next(e, &w, true);
		if (err)
			return err == STOPPED ? 0 : err;
		if (!as_msg(w, &m) && m.type == FERRY__OSU_SYNC &&
		    m.arg == FERRY__OSU_BYE)
			return 0;
		if (as_msg(w, &m) || m.type != FERRY__OSU_GO || m.a == 0 ||
		    m.a > e->p->chunk || m.b == 0 || m.b > FERRY_OSU_MAX_WINDOW)
			return -FERRY_EPROTO;
		if (m.c == FERRY_POLL_BUSY || m.c == FERRY_POLL_EVENT)
			e->poll_mode = (int)m.c;
		for (uint32_t i = 0; i < m.arg && !err; i++)
			err = window(e, (uint32_t)m.a, (unsigned)m.b);
		if (err)
			return err;
	}
}

/* ---- worker entry points ---- */

static void done(struct osu_ep *e, int err)
{
	struct ferry__stream *s = e->s;

	if (err && err != -ECANCELED && !s->err) {
		s->err = err;
		snprintf(s->why, sizeof(s->why), "stream %u: %s%s%s%s", s->idx,
			 ferry_strerror(err), e->what[0] ? " (" : "", e->what,
			 e->what[0] ? ")" : "");
		ferry__pipe_abort(s->p);
	}
	ferry__stream_finish(s);
}

void *ferry__osu_send_worker(void *arg)
{
	struct ferry__stream *s = arg;
	struct ferry__osu_msg st;
	struct osu_ep e;
	int err;

	ferry_topo_pin_self(&s->p->pl, s->idx);
	ep_init(&e, s);
	if (s->idx == 1) {
		err = back_take(&e);
	} else {
		for (uint64_t i = 0; i < s->p->chunk; i++)
			e.tx[i] = (uint8_t)(i * 131 + 7);
		snprintf(e.what, sizeof(e.what), "the first message");
		err = sync_peer(&e, FERRY__OSU_HELLO, &st);
		for (unsigned k = 0; !err && k < e.u->spec.n_sizes; k++)
			err = run_size(&e, k);
		if (!err)
			err = bye(&e);
		atomic_store(&e.u->over, true);
	}
	done(&e, err);
	return NULL;
}

void *ferry__osu_recv_worker(void *arg)
{
	struct ferry__stream *s = arg;
	struct osu_ep e;

	ferry_topo_pin_self(&s->p->pl, s->idx);
	ep_init(&e, s);
	e.cpu0 = cpu_now();
	if (s->idx == 1) {
		done(&e, back_give(&e));
	} else {
		done(&e, serve(&e));
	}
	return NULL;
}
