/* Stream workers: the sender waits for a credit, has p->dp fill the
 * chunk, seals and writes it into the receiver's ring; the receiver checks
 * each chunk, has p->dp consume it, and returns credits. No allocation,
 * logging or locks per chunk here. */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "pipe/credit.h"
#include "pipe/pipe.h"
#include "util/util.h"

#define POLL_BATCH 16
#define IDLE_POLL_MS 50
#define HELD_NAP_NS 5000000 /* a stream the ramp holds back looks again */

void ferry__stream_fail(struct ferry__stream *s, int err, const char *what,
			unsigned long long chunks)
{
	if (!s->err) {
		s->err = err;
		snprintf(s->why, sizeof(s->why), "stream %u: %s after %llu %s",
			 s->idx, ferry_strerror(err), chunks, what);
	}
	ferry__pipe_abort(s->p);
}

void ferry__stream_finish(struct ferry__stream *s)
{
	ferry__thread_cpu(&s->cpu_user, &s->cpu_sys);
	atomic_store(&s->done, true);
	if (atomic_fetch_sub(&s->p->running, 1) == 1)
		s->p->end_ns = ferry__now_ns();
}

/* The sender's wait for the receiver (a stall for credits, the final
 * drain) ends in -FERRY_ETIMEOUT only when nothing has moved for the
 * session timeout: the deadline counts from the last credit or write
 * completion, not from the start of the wait. A transport that puts the
 * whole ring in flight at once needs this: draining a 256 MiB ring at
 * 100 Mb/s takes 21 s, each credit coming well within --timeout. */
struct quiet {
	uint64_t seen;     /* credits freed + writes completed, last look */
	uint64_t deadline; /* ns */
};

static void quiet_start(struct quiet *q, const struct ferry_credit_tx *c,
			uint64_t wdone, int timeout_ms)
{
	q->seen = c->freed + wdone;
	q->deadline = ferry__now_ns() + (uint64_t)timeout_ms * 1000000ull;
}

static bool quiet_too_long(const struct ferry__pipe *p, struct quiet *q,
			   const struct ferry_credit_tx *c, uint64_t wdone,
			   int timeout_ms)
{
	uint64_t limit = (uint64_t)timeout_ms * 1000000ull, now, heard;

	if (c->freed + wdone != q->seen) {
		quiet_start(q, c, wdone, timeout_ms);
		return false;
	}
	now = ferry__now_ns();
	if (now <= q->deadline)
		return false;
	/* the peer still answers elsewhere: keep waiting, within a bound
	 * (another stream may have heard it after this one read now) */
	heard = atomic_load_explicit(&p->heard_ns, memory_order_relaxed);
	return (heard < now && now - heard > limit) ||
	       now > q->deadline + (FERRY__STALL_ALIVE - 1) * limit;
}

/* Reap completions and credits. Returns 0 or a negative error. */
static int reap(struct ferry__stream *s, struct ferry_credit_tx *c,
		uint64_t *wdone, int timeout_ms)
{
	struct ferry__pipe *p = s->p;
	struct ferry_wc wc[POLL_BATCH];
	int n = p->ops->poll(p->x, s->idx, wc, POLL_BATCH, timeout_ms);
	bool heard = false;

	for (int i = 0; i < n; i++) {
		if (wc[i].op == FERRY_WC_WRITE) {
			/* completions are cumulative: wr_id is the sequence */
			if (wc[i].wr_id + 1 > *wdone)
				*wdone = wc[i].wr_id + 1;
		} else if (wc[i].op == FERRY_WC_RECV) {
			int err = ferry__credit_tx_apply(c, wc[i].msg,
							 wc[i].len);
			if (err)
				return err;
			heard = true;
		}
	}
	if (heard)
		atomic_store_explicit(&p->heard_ns, ferry__now_ns(),
				      memory_order_relaxed);
	return n < 0 ? n : 0;
}

/* The rate cap: take the next slot of the pipeline's clock for a chunk
 * of len payload bytes, and wait (in slices, watching abort) until it
 * begins. A clock that fell behind (idle streams) restarts at now, so
 * an idle spell is not made up for with a burst. 1: the slot begins past
 * a time-bound run's deadline (the stream is done). */
static int pace(struct ferry__stream *s, uint32_t len)
{
	struct ferry__pipe *p = s->p;
	uint64_t cost = (uint64_t)((double)len * 8e9 / (double)p->rate_bps);
	uint64_t now = ferry__now_ns(), prev = atomic_load(&p->pace_next);
	uint64_t start;

	do {
		start = prev > now ? prev : now;
	} while (!atomic_compare_exchange_weak(&p->pace_next, &prev,
					       start + cost));
	if (!p->budget && p->deadline_ns && start >= p->deadline_ns)
		return 1;
	while ((now = ferry__now_ns()) < start) {
		uint64_t left = start - now;
		struct timespec ts = { 0, (long)(left < 20000000 ? left :
							       20000000) };
		if (atomic_load(&p->abort))
			return -ECANCELED;
		nanosleep(&ts, NULL);
	}
	return 0;
}

void *ferry__send_worker(void *arg)
{
	struct ferry__stream *s = arg;
	struct ferry__pipe *p = s->p;
	struct ferry_credit_tx c;
	uint64_t wdone = 0;
	struct quiet q;
	int err = 0, send;

	ferry_topo_pin_self(&p->pl, s->idx);
	ferry__credit_tx_init(&c, s->idx * p->depth, p->depth);
	if (p->dp->start)
		p->dp->start(s);
	for (;;) {
		if (atomic_load_explicit(&p->abort, memory_order_relaxed)) {
			err = -ECANCELED;
			goto out;
		}
		/* held back by the stream ramp: take what comes back, nap */
		if (p->ramping &&
		    s->idx >= atomic_load_explicit(&p->active,
						   memory_order_relaxed)) {
			struct timespec nap = { 0, HELD_NAP_NS };

			if (atomic_load(&p->no_work))
				break;
			err = reap(s, &c, &wdone, 0);
			if (err)
				goto out;
			nanosleep(&nap, NULL);
			continue;
		}
		/* wait for a credit and a free local buffer */
		if (!ferry__credit_can_post(&c) || c.sent - wdone >= p->depth) {
			atomic_fetch_add_explicit(&s->stalls, 1,
						  memory_order_relaxed);
			quiet_start(&q, &c, wdone, p->timeout_ms);
			do {
				err = reap(s, &c, &wdone, IDLE_POLL_MS);
				if (err)
					goto out;
				if (atomic_load(&p->abort)) {
					err = -ECANCELED;
					goto out;
				}
				if (quiet_too_long(p, &q, &c, wdone, p->timeout_ms)) {
					err = -FERRY_ETIMEOUT;
					goto out;
				}
			} while (!ferry__credit_can_post(&c) ||
				 c.sent - wdone >= p->depth);
		}
		uint32_t slot = ferry__credit_next_slot(&c);
		uint8_t *lb = p->base + (uint64_t)slot * p->stride;
		uint8_t *payload = lb + FERRY_CHUNK_HDR_SPACE;
		struct ferry_chunk_hdr h = { .xfer_id = p->xfer_id };

		send = p->dp->fill(s, payload, &h);
		if (send == -ENODATA) {
			atomic_store(&p->no_work, true);
			break;
		}
		if (send < 0) {
			err = send;
			goto out;
		}
		if (!send)
			continue; /* read for its checksum only */
		ferry_chunk_encode(&h, lb); /* fill computed h.crc */
		if (p->rate_bps) {
			err = pace(s, h.len);
			if (err == 1) {
				err = 0;
				atomic_store(&p->no_work, true);
				break; /* the deadline came first */
			}
			if (err)
				goto out;
		}
		err = p->ops->post_write_imm(p->x, s->idx, p->mr, lb,
					     FERRY_CHUNK_HDR_SPACE + h.len,
					     (uint64_t)slot * p->stride, slot,
					     c.sent, FERRY_POST_SIGNALED);
		if (err)
			goto out;
		c.sent++;
		atomic_fetch_add_explicit(&s->bytes, ferry_chunk_data_bytes(&h),
					  memory_order_relaxed);
		atomic_fetch_add_explicit(&s->chunks, 1, memory_order_relaxed);
		err = reap(s, &c, &wdone, 0);
		if (err)
			goto out;
	}
	/* drain: every credit back means the receiver checked every chunk */
	quiet_start(&q, &c, wdone, p->timeout_ms);
	while (!ferry__credit_idle(&c) && !err) {
		if (atomic_load(&p->abort)) {
			err = -ECANCELED;
			break;
		}
		if (quiet_too_long(p, &q, &c, wdone, p->timeout_ms)) {
			err = -FERRY_ETIMEOUT;
			break;
		}
		err = reap(s, &c, &wdone, IDLE_POLL_MS);
	}
out:
	if (err && err != -ECANCELED)
		ferry__stream_fail(s, err, "chunks acknowledged", c.freed);
	ferry__stream_finish(s);
	return NULL;
}

/* Check one landed chunk. Returns 0 or a negative error. */
static int check_chunk(struct ferry__stream *s, struct ferry_credit_rx *c,
		       const struct ferry_wc *wc)
{
	struct ferry__pipe *p = s->p;
	struct ferry_chunk_hdr h;
	uint8_t *slotp;
	int err;

	if (wc->imm >= p->slots ||
	    (wc->offset != FERRY_WC_OFFSET_UNKNOWN &&
	     wc->offset != (uint64_t)wc->imm * p->stride))
		return -FERRY_EPROTO;
	err = ferry__credit_rx_land(c, wc->imm);
	if (err)
		return err;
	slotp = p->base + (uint64_t)wc->imm * p->stride;
	if (wc->len < FERRY_CHUNK_HDR_SPACE ||
	    ferry_chunk_decode(slotp, &h) ||
	    h.len != wc->len - FERRY_CHUNK_HDR_SPACE || h.len > p->chunk ||
	    h.xfer_id != p->xfer_id)
		return -FERRY_EPROTO;
	err = p->dp->checks_crc ? 0 :
				  ferry_chunk_verify(&h, slotp + FERRY_CHUNK_HDR_SPACE);
	if (!err)
		err = p->dp->consume(s, &h, slotp + FERRY_CHUNK_HDR_SPACE);
	if (err == -FERRY_ECRC)
		atomic_fetch_add_explicit(&s->crc_errors, 1,
					  memory_order_relaxed);
	if (err)
		return err;
	atomic_fetch_add_explicit(&s->bytes, ferry_chunk_data_bytes(&h),
				  memory_order_relaxed);
	atomic_fetch_add_explicit(&s->chunks, 1, memory_order_relaxed);
	ferry__credit_rx_release(c);
	return 0;
}

void *ferry__recv_worker(void *arg)
{
	struct ferry__stream *s = arg;
	struct ferry__pipe *p = s->p;
	struct ferry_credit_rx c;
	struct ferry_wc wc[POLL_BATCH];
	uint8_t msg[FERRY__CREDIT_MSG_LEN];
	int err = 0;

	ferry_topo_pin_self(&p->pl, s->idx);
	ferry__credit_rx_init(&c, s->idx * p->depth, p->depth);
	if (p->dp->start)
		p->dp->start(s);
	for (;;) {
		bool owed = ferry__credit_rx_due(&c, true);
		int n = p->ops->poll(p->x, s->idx, wc, POLL_BATCH,
				     owed ? 0 : IDLE_POLL_MS);
		if (n < 0) {
			/* the sender closing its streams after FIN is the
			 * normal end; the control channel says if it was */
			if (n != -FERRY_ECLOSED && n != -ECANCELED)
				err = n;
			break;
		}
		for (int i = 0; i < n && !err; i++) {
			if (wc[i].op != FERRY_WC_WRITE_IMM)
				err = -FERRY_EPROTO;
			else
				err = check_chunk(s, &c, &wc[i]);
		}
		if (err)
			break;
		if (ferry__credit_rx_due(&c, n == 0)) {
			ferry__credit_rx_encode(&c, msg);
			err = p->ops->post_send(p->x, s->idx, msg, sizeof(msg));
			if (err)
				break;
		}
		if (n == 0 && (atomic_load(&p->stop) || atomic_load(&p->abort)))
			break;
	}
	if (err && err != -ECANCELED && err != -FERRY_ECLOSED)
		ferry__stream_fail(s, err, "chunks verified",
				   atomic_load(&s->chunks));
	ferry__stream_finish(s);
	return NULL;
}
