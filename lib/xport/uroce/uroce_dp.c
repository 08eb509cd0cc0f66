/* uroce transport: the stream workers' side of the datapath. Posts fill
 * the endpoint's work ring; poll reaps it and the completion ring (rings
 * described in uroce.h). A worker that waits drives the port's rounds
 * itself (port.h): one waiter per process spins doing so while the port
 * has work, the others back off and drive a round whenever they wake. In
 * event mode a waiter drives while rounds have work, then sleeps until a
 * round hands it something (ferry__uport_wait). No allocation, logging
 * or locks here. */
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <time.h>

#include "util/util.h"
#include "xport/uroce/uroce.h"

#define SPIN_ROUNDS 32
#define YIELD_ROUNDS 64
#define SLEEP_MIN_NS 20000l  /* then sleep, doubling every 64 rounds */
#define SLEEP_MAX_NS 200000l /* up to this: a worker waits for chunks and
				credits, of which many are in flight */
#define SPIN_IDLE_NS 2000000ull /* the spinner gives up after this long
				   without work on the port */
#define SPIN_YIELD_EVERY 64u    /* and offers the CPU every so many empty
				   rounds, in case another spinner shares it */
#define EVENT_SPIN_ROUNDS 16u   /* event waits: empty rounds before sleep */
#define EVENT_SPIN_NS 50000ull  /* and, within this long of the worker's
				   last completion, spin on: an answer to
				   a message (a ping-pong, a credit on a
				   short path) comes within it, and a bulk
				   stream's next chunk does not */

void ferry__uroce_backoff(unsigned *spins)
{
	unsigned s = (*spins)++;
	long ns = SLEEP_MIN_NS;

	if (s < SPIN_ROUNDS)
		return;
	if (s < YIELD_ROUNDS) {
		sched_yield();
		return;
	}
	for (unsigned k = (s - YIELD_ROUNDS) / 64; k && ns < SLEEP_MAX_NS; k--)
		ns *= 2;
	struct timespec ts = { 0, ns < SLEEP_MAX_NS ? ns : SLEEP_MAX_NS };
	nanosleep(&ts, NULL);
}

/* A worker's wait, one step per empty look at its rings. */
struct uwait {
	unsigned spins;   /* empty steps (backoff) */
	bool spinner;     /* holds the port's spin_held */
	bool idle;        /* gave it up for lack of work: do not retake */
	uint64_t last_ns; /* spinner: last round with work */
};

/* --poll event: drive rounds while they have work, and while the last
 * completion is recent, then sleep until a round hands this endpoint
 * something (the polling thread runs the port meanwhile, asleep on it
 * between frames). */
static void event_step(struct ferry_xport *x, struct ferry__uep *e,
		       struct uwait *w)
{
	if (ferry__uport_drive(x->port) > 0) {
		w->spins = 0;
		return;
	}
	if (++w->spins < EVENT_SPIN_ROUNDS)
		return;
	if (ferry__now_ns() - e->news_ns < EVENT_SPIN_NS) {
		if (w->spins % SPIN_YIELD_EVERY == 0)
			sched_yield(); /* a peer on this CPU may be due */
		return;
	}
	if (ferry__uport_wait(x->port, e) == -ENOTSUP)
		ferry__uroce_backoff(&w->spins);
}

static void wait_step(struct ferry_xport *x, struct ferry__uep *e,
		      struct uwait *w)
{
	struct ferry__uport *pt = x->port;
	int work;
	uint64_t now;

	if (x->attr.poll_mode == FERRY_POLL_EVENT) {
		event_step(x, e, w);
		return;
	}
	work = ferry__uport_drive(pt);
	if (work > 0) {
		w->spins = 0;
		w->idle = false;
	}
	if (!w->spinner && !w->idle &&
	    !atomic_load_explicit(&pt->spin_held, memory_order_relaxed) &&
	    !atomic_exchange_explicit(&pt->spin_held, true,
				      memory_order_acquire)) {
		w->spinner = true;
		w->last_ns = ferry__now_ns();
	}
	if (w->spinner) {
		now = ferry__now_ns();
		if (work > 0 || now - w->last_ns < SPIN_IDLE_NS) {
			if (work > 0)
				w->last_ns = now;
			else if (++w->spins % SPIN_YIELD_EVERY == 0)
				sched_yield(); /* a peer on this CPU may be due */
			return;
		}
		atomic_store_explicit(&pt->spin_held, false,
				      memory_order_release);
		w->spinner = false;
		w->idle = true;
	}
	if (work <= 0)
		ferry__uroce_backoff(&w->spins);
}

static void wait_end(struct ferry_xport *x, struct uwait *w)
{
	if (w->spinner)
		atomic_store_explicit(&x->port->spin_held, false,
				      memory_order_release);
}

static int ep_state(const struct ferry_xport *x, struct ferry__uep *e)
{
	if (atomic_load_explicit(&x->cancelled, memory_order_relaxed))
		return -ECANCELED;
	return atomic_load_explicit(&e->err, memory_order_acquire);
}

/* Step head over finished entries that owe the worker no completion. */
static void skip_silent(const struct ferry_xport *x, struct ferry__uep *e)
{
	uint32_t done = atomic_load_explicit(&e->done, memory_order_acquire);

	while (e->head != done) {
		const struct ferry__uwr *w = &e->wr[e->head & (x->R - 1)];

		if (w->status || (w->op == FERRY__UWR_WRITE && w->signaled))
			break;
		e->head++;
	}
}

/* The entry at tail, once there is room; waits (driving rounds) up to the
 * session timeout for older ones to finish. */
static int wr_slot_wait(struct ferry_xport *x, struct ferry__uep *e,
			struct ferry__uwr **out, struct uwait *w)
{
	uint32_t t = atomic_load_explicit(&e->tail, memory_order_relaxed);
	uint64_t deadline = 0;

	for (;;) {
		int err = ep_state(x, e);

		if (err)
			return err;
		if (t - e->head < x->R) {
			*out = &e->wr[t & (x->R - 1)];
			return 0;
		}
		skip_silent(x, e);
		if (t - e->head < x->R)
			continue;
		uint64_t now = ferry__now_ns();
		if (!deadline)
			deadline = now + (uint64_t)x->attr.timeout_ms * 1000000ull;
		else if (now > deadline)
			return -FERRY_ETIMEOUT;
		wait_step(x, e, w);
	}
}

static int wr_slot(struct ferry_xport *x, struct ferry__uep *e,
		   struct ferry__uwr **out)
{
	struct uwait w = { 0 };
	int err = wr_slot_wait(x, e, out, &w);

	wait_end(x, &w);
	return err;
}

static void publish(struct ferry_xport *x, struct ferry__uep *e)
{
	uint32_t t = atomic_load_explicit(&e->tail, memory_order_relaxed);

	atomic_store_explicit(&e->tail, t + 1, memory_order_release);
	ferry__uport_kick(x->port);
}

int ferry__uroce_post_write_imm(struct ferry_xport *x, unsigned ep,
				struct ferry_mr *lmr, const void *laddr,
				size_t len, uint64_t roff, uint32_t imm,
				uint64_t wr_id, unsigned flags)
{
	const uint8_t *l = laddr;
	struct ferry__uwr *w;
	int err;

	if (ep >= x->n_ep || !x->ep || !lmr || l < lmr->base ||
	    (size_t)(l - lmr->base) > lmr->len ||
	    len > lmr->len - (size_t)(l - lmr->base) || len > FERRY_RC_MSG_MAX)
		return -EINVAL;
	err = wr_slot(x, &x->ep[ep], &w);
	if (err)
		return err;
	w->op = FERRY__UWR_WRITE;
	w->laddr = l;
	w->len = (uint32_t)len;
	w->roff = roff;
	w->imm = imm;
	w->wr_id = wr_id;
	w->signaled = flags & FERRY_POST_SIGNALED;
	w->status = 0;
	publish(x, &x->ep[ep]);
	return 0;
}

int ferry__uroce_post_send(struct ferry_xport *x, unsigned ep,
			   const void *msg, size_t len)
{
	struct ferry__uwr *w;
	int err;

	if (ep >= x->n_ep || !x->ep || (len && !msg))
		return -EINVAL;
	if (len > FERRY_XPORT_MSG_MAX)
		return -EMSGSIZE;
	err = wr_slot(x, &x->ep[ep], &w);
	if (err)
		return err;
	w->op = FERRY__UWR_SEND;
	memcpy(w->msg, msg, len);
	w->laddr = NULL;
	w->len = (uint32_t)len;
	w->wr_id = 0;
	w->signaled = false;
	w->status = 0;
	publish(x, &x->ep[ep]);
	return 0;
}

/* Finished work entries: a WRITE completion for each signalled write.
 * An entry that failed stops the reaping: it is reported, as the QP's
 * error, once the completions before it are. */
static int reap_work(const struct ferry_xport *x, struct ferry__uep *e,
		     struct ferry_wc *wc, unsigned max)
{
	uint32_t done = atomic_load_explicit(&e->done, memory_order_acquire);
	unsigned n = 0;

	while (n < max && e->head != done) {
		const struct ferry__uwr *w = &e->wr[e->head & (x->R - 1)];

		if (w->status) {
			int err = atomic_load_explicit(&e->err,
						       memory_order_acquire);
			return n ? (int)n : err ? err : w->status;
		}
		if (w->op == FERRY__UWR_WRITE && w->signaled) {
			wc[n].op = FERRY_WC_WRITE;
			wc[n].wr_id = w->wr_id;
			wc[n].len = w->len;
			wc[n].imm = 0;
			wc[n].offset = 0;
			n++;
		}
		e->head++;
	}
	return (int)n;
}

/* Receive completions the polling thread passed on. */
static unsigned reap_cq(const struct ferry_xport *x, struct ferry__uep *e,
			struct ferry_wc *wc, unsigned max)
{
	uint32_t t = atomic_load_explicit(&e->cq_tail, memory_order_acquire);
	uint32_t h = atomic_load_explicit(&e->cq_head, memory_order_relaxed);
	unsigned n = 0;

	for (; n < max && h != t; h++, n++) {
		const struct ferry__ucqe *c = &e->cq[h & (x->R - 1)];

		wc[n].op = c->op;
		wc[n].wr_id = 0;
		wc[n].offset = c->offset;
		wc[n].imm = c->imm;
		wc[n].len = c->len;
		if (c->op == FERRY_WC_RECV)
			memcpy(wc[n].msg, c->msg, c->len < sizeof(wc[n].msg) ?
							  c->len :
							  sizeof(wc[n].msg));
	}
	atomic_store_explicit(&e->cq_head, h, memory_order_release);
	return n;
}

static int poll_wait(struct ferry_xport *x, struct ferry__uep *e,
		     struct ferry_wc *wc, unsigned max, int timeout_ms,
		     struct uwait *w)
{
	uint64_t deadline = 0;
	bool drove = false;

	for (;;) {
		if (atomic_load_explicit(&x->cancelled, memory_order_relaxed))
			return -ECANCELED;
		int n = reap_work(x, e, wc, max);
		if (n < 0)
			return n;
		n += (int)reap_cq(x, e, wc + n, max - (unsigned)n);
		if (n) {
			e->news_ns = ferry__now_ns();
			return n;
		}
		int err = atomic_load_explicit(&e->err, memory_order_acquire);
		if (err)
			return err;
		if (timeout_ms == 0) {
			/* a look, not a wait: one round, then look again */
			if (drove || ferry__uport_drive(x->port) <= 0)
				return 0;
			drove = true;
			continue;
		}
		if (timeout_ms > 0) {
			uint64_t now = ferry__now_ns();
			if (!deadline)
				deadline = now + (uint64_t)timeout_ms * 1000000ull;
			else if (now >= deadline)
				return 0;
		}
		wait_step(x, e, w);
	}
}

int ferry__uroce_poll(struct ferry_xport *x, unsigned ep, struct ferry_wc *wc,
		      unsigned max, int timeout_ms)
{
	struct uwait w = { 0 };
	int n;

	if (ep >= x->n_ep || !x->ep || (max && !wc))
		return -EINVAL;
	n = poll_wait(x, &x->ep[ep], wc, max, timeout_ms, &w);
	wait_end(x, &w);
	return n;
}
