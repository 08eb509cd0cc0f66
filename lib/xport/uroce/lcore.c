/* uroce: the polling thread. It alone calls the RC engine and the port:
 * receive a burst, check and hand each frame to the QP its number names,
 * submit what workers posted, run the engine's timers, move completions to
 * the workers, send a burst. It busy-polls while there is traffic and
 * backs off after 2 ms without any (yield, then from 20 ms short sleeps),
 * so an idle receiver costs next to nothing. While a session in event
 * mode is attached it sleeps on the port's receive ring between rounds
 * instead (port_sleep), and wakes the workers asleep in
 * ferry__uport_wait when a round hands them something.
 *
 * Sessions come and go under the port's lock: attach and detach publish
 * the other of two lists and wait until the thread has finished two rounds
 * (it then holds no pointer into the old one, which is free for the next
 * change). No allocation, logging or locks per packet here. */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include "util/util.h"
#include "xport/uroce/uroce.h"
#include "xport/roce/wire.h"

#define RX_BURST 32
#define COMP_BATCH 16
#define IDLE_SPIN_NS 2000000ull   /* spin this long without work, */
#define IDLE_YIELD_NS 20000000ull /* then yield the CPU until this, */
#define IDLE_SLEEP_NS 50000l      /* then sleep this long per round */
#define BACKSTOP_NS 200000ull     /* a worker drove a round this recently: */
#define BACKSTOP_SLEEP_NS 100000l /* the thread sleeps this long */
#define EVENT_MAX_NS 5000000ull   /* an event wait looks again after this
				     long at most (the pipeline's own
				     deadlines, a timer a round just armed) */
#define EVENT_GATHER_NS 30000l    /* while frames stream in, event waits */
#define GATHER_FRAMES 4ull        /* (this many per EVENT_GATHER_NS, or
				     more) let them gather this long between
				     rounds rather than wake for each */

/* The first n frames of the batch are gone: the rest move up. */
static void tx_shift(struct ferry__uport *pt, unsigned n)
{
	if (n < pt->ntx)
		memmove(pt->txb, pt->txb + n, (pt->ntx - n) * sizeof(pt->txb[0]));
	pt->ntx -= n;
}

/* The burst through raw_fd: one message per frame (raw_tx pointed each
 * at its iovecs), its mbufs as the iovecs, one sendmmsg; the kernel has
 * copied what it took when the call returns, so those mbufs are freed at
 * once. A full socket buffer or device queue leaves the rest for the
 * next flush; a frame the kernel refuses for good (too big for the
 * interface, say) is dropped, as a NIC drops one, and the engine resends
 * it. */
static unsigned tx_flush_raw(struct ferry__uport *pt)
{
	unsigned n = pt->ntx, i, k;
	int sent;

	for (i = 0; i < n; i++) {
		struct rte_mbuf *s = pt->txb[i];

		for (k = 0; s && k < FERRY__UPORT_TXSEG; s = s->next, k++) {
			pt->txv[i][k].iov_base = rte_pktmbuf_mtod(s, void *);
			pt->txv[i][k].iov_len = s->data_len;
		}
		pt->txm[i].msg_hdr.msg_iovlen = k;
	}
	sent = sendmmsg(pt->raw_fd, pt->txm, n, MSG_DONTWAIT);
	if (sent < 0) {
		if (errno == EAGAIN || errno == ENOBUFS || errno == EINTR)
			return 0;
		pt->st.tx_refused++;
		rte_pktmbuf_free(pt->txb[0]);
		tx_shift(pt, 1);
		return 1;
	}
	rte_pktmbuf_free_bulk(pt->txb, (unsigned)sent);
	tx_shift(pt, (unsigned)sent);
	pt->st.tx_frames += (unsigned)sent;
	return (unsigned)sent;
}

static unsigned tx_flush(struct ferry__uport *pt)
{
	uint16_t n;

	if (!pt->ntx)
		return 0;
	if (pt->raw_fd >= 0)
		return tx_flush_raw(pt);
	n = rte_eth_tx_burst(pt->port_id, 0, pt->txb, (uint16_t)pt->ntx);
	tx_shift(pt, n);
	pt->st.tx_frames += n;
	return n;
}

/* Zero copy: header mbuf -> mbuf attached to the payload where it lies
 * (the registered region) -> trailer mbuf; the PMD copies them into its
 * ring. The ICRC is computed over the payload in place. */
static int tx_zc(struct ferry__uport *pt, const struct ferry_roce_pkt *p)
{
	struct rte_mbuf *m[2], *pay;
	size_t hlen, tlen;
	uint32_t crc;
	int rc;

	if (rte_pktmbuf_alloc_bulk(pt->hdr_pool, m, 2)) {
		pt->st.tx_nombuf++;
		return -EAGAIN;
	}
	pay = rte_pktmbuf_alloc(pt->ext_pool);
	if (!pay) {
		rte_pktmbuf_free_bulk(m, 2);
		pt->st.tx_nombuf++;
		return -EAGAIN;
	}
	rc = ferry__roce_build_hdr(rte_pktmbuf_mtod(m[0], uint8_t *),
				   rte_pktmbuf_tailroom(m[0]), p, &hlen, &crc);
	if (rc) {
		rte_pktmbuf_free_bulk(m, 2);
		rte_pktmbuf_free(pay);
		return rc;
	}
	crc = ferry__roce_icrc_more(crc, p->payload, p->len);
	tlen = ferry__roce_trailer(rte_pktmbuf_mtod(m[1], uint8_t *), crc,
				   ferry__roce_pad(p->len));
	rte_mbuf_ext_refcnt_update(pt->shinfo, 1);
	rte_pktmbuf_attach_extbuf(pay, (void *)(uintptr_t)p->payload,
				  RTE_BAD_IOVA, (uint16_t)p->len, pt->shinfo);
	pay->data_len = (uint16_t)p->len;
	m[0]->data_len = (uint16_t)hlen;
	m[1]->data_len = (uint16_t)tlen;
	m[0]->next = pay;
	pay->next = m[1];
	m[0]->nb_segs = 3;
	m[0]->pkt_len = (uint32_t)(hlen + p->len + tlen);
	pt->txb[pt->ntx++] = m[0];
	return 0;
}

/* The engine's tx callback: queue the frame for the next burst. Full-size
 * payloads go zero-copy where the port allows; the rest is built in one
 * mbuf (payload copied, ICRC computed on the way). */
int ferry__uport_tx(void *ctx, const struct ferry_roce_pkt *p)
{
	struct ferry__uport *pt = ctx;
	struct rte_mbuf *m;
	size_t len;
	int rc;

	if (pt->ntx == FERRY__UPORT_TXB && !tx_flush(pt))
		return -EAGAIN;
	if (pt->hdr_pool && p->len > FERRY_XPORT_MSG_MAX)
		return tx_zc(pt, p);
	m = rte_pktmbuf_alloc(pt->tx_pool);
	if (!m) {
		pt->st.tx_nombuf++;
		return -EAGAIN;
	}
	rc = ferry__roce_build(rte_pktmbuf_mtod(m, uint8_t *),
			       rte_pktmbuf_tailroom(m), p, &len);
	if (rc) {
		rte_pktmbuf_free(m);
		return rc;
	}
	m->data_len = (uint16_t)len;
	m->pkt_len = (uint32_t)len;
	pt->txb[pt->ntx++] = m;
	return 0;
}

static struct ferry_rc_qp *lookup(const struct ferry__usess_list *l,
				  uint32_t qpn)
{
	uint32_t tag = qpn >> FERRY__UROCE_QPN_SHIFT;
	uint32_t ep = qpn & ((1u << FERRY__UROCE_QPN_SHIFT) - 1);

	for (unsigned i = 0; l && i < l->n; i++)
		if (l->s[i]->tag == tag)
			return ep < l->s[i]->n_ep ? l->s[i]->ep[ep].qp : NULL;
	return NULL;
}

static unsigned rx(struct ferry__uport *pt, const struct ferry__usess_list *l,
		   uint64_t now)
{
	struct rte_mbuf *m[RX_BURST];
	uint16_t n = rte_eth_rx_burst(pt->port_id, 0, m, RX_BURST);

	for (uint16_t i = 0; i < n; i++) {
		const uint8_t *f = rte_pktmbuf_mtod(m[i], uint8_t *);
		struct ferry_roce_pkt p;
		struct ferry_rc_qp *qp;
		bool ok = false;
		int rc = -FERRY_EPROTO;

		/* our own frame, back from the kernel (the PMD's socket
		 * filters them out: port.c, drop_outgoing; counted should
		 * one come anyway): not news, and a NIC would not deliver
		 * it */
		if (m[i]->data_len >= 12 && !memcmp(f + 6, pt->addr.mac, 6)) {
			pt->st.rx_own++;
			continue;
		}
		if (m[i]->nb_segs == 1)
			rc = ferry__roce_parse(f, m[i]->data_len, 0, &p, &ok,
					       NULL);
		if (rc == -ENOMSG) {
			pt->st.rx_other++;
		} else if (rc) {
			pt->st.rx_malformed++;
		} else if (!ok) {
			pt->st.rx_icrc_bad++;
		} else if (!(qp = lookup(l, p.dest_qp))) {
			pt->st.rx_unknown_qp++;
		} else {
			ferry__rc_input(qp, &p, now);
		}
	}
	if (n)
		rte_pktmbuf_free_bulk(m, n);
	pt->st.rx_frames += n;
	return n;
}

/* The QP is in error: say why, once, before the worker can see it. */
static void fail_ep(struct ferry_xport *x, struct ferry__uep *e, int err)
{
	const char *why = ferry__rc_error(e->qp);

	e->dead = true;
	if (why || !e->why[0])
		snprintf(e->why, sizeof(e->why), "%s",
			 why ? why : ferry_strerror(err));
	atomic_store_explicit(&e->err, err, memory_order_release);
	ferry__log(FERRY_LOG_WARN, "uroce: endpoint %u (QP 0x%06x) failed: %s",
		   (unsigned)(e - x->ep), e->qpn, e->why);
}

/* Hand the worker what it posted, up to what the QP's send queue takes. */
static unsigned submit(struct ferry_xport *x, struct ferry__uep *e)
{
	uint32_t tail = atomic_load_explicit(&e->tail, memory_order_acquire);
	unsigned n = 0;

	if (!e->ready)
		return 0; /* sender: the receiver's QP is not there yet */
	while (e->sub != tail) {
		const struct ferry__uwr *w = &e->wr[e->sub & (x->R - 1)];
		int rc = w->op == FERRY__UWR_WRITE ?
			ferry__rc_post_write(e->qp, w->laddr, w->len,
					     x->peer_base + w->roff,
					     x->peer_rkey, true, w->imm, e->sub,
					     true) :
			ferry__rc_post_send(e->qp, w->msg, w->len, e->sub, true);
		if (rc)
			break; /* full (-EAGAIN), or the QP's error: see reap */
		e->sub++;
		n++;
	}
	return n;
}

/* One engine completion: a work entry done, or a receive to pass on. */
static void complete(struct ferry_xport *x, struct ferry__uep *e,
		     const struct ferry_rc_wc *wc, uint32_t *done, uint32_t *cqt)
{
	const uint32_t mask = x->R - 1;
	struct ferry__ucqe *c;

	if (wc->op == FERRY_RC_WC_WRITE || wc->op == FERRY_RC_WC_SEND) {
		if (wc->wr_id == FERRY__UROCE_HELLO)
			return; /* receiver: the hello went out */
		e->wr[wc->wr_id & mask].status = wc->status;
		*done = (uint32_t)wc->wr_id + 1;
		return;
	}
	if (wc->status)
		return; /* a receive flushed by the QP's error */
	if (!e->ready) { /* sender: the hello; the receiver is there */
		e->ready = wc->op == FERRY_RC_WC_RECV &&
			   wc->byte_len == FERRY__ROCEV2_HELLO_LEN &&
			   !memcmp(e->rbuf[wc->wr_id & mask],
				   FERRY__ROCEV2_HELLO,
				   FERRY__ROCEV2_HELLO_LEN);
		ferry__rc_post_recv(e->qp, e->rbuf[wc->wr_id & mask],
				    FERRY__UROCE_MSG, wc->wr_id);
		if (!e->ready)
			e->bad_hello = true;
		return;
	}
	c = &e->cq[*cqt & mask];
	c->offset = wc->offset;
	c->imm = wc->imm;
	c->len = wc->byte_len;
	if (wc->op == FERRY_RC_WC_RECV_WRITE_IMM) {
		c->op = FERRY_WC_WRITE_IMM;
	} else {
		c->op = FERRY_WC_RECV;
		memcpy(c->msg, e->rbuf[wc->wr_id & mask],
		       wc->byte_len < sizeof(c->msg) ? wc->byte_len
						     : sizeof(c->msg));
	}
	++*cqt;
	ferry__rc_post_recv(e->qp, e->rbuf[wc->wr_id & mask], FERRY__UROCE_MSG,
			    wc->wr_id);
}

/* Move the QP's completions to the worker; while the completion ring has
 * less room than a batch, leave them in the engine. */
static unsigned reap(struct ferry_xport *x, struct ferry__uep *e)
{
	struct ferry_rc_wc wc[COMP_BATCH];
	uint32_t cqh = atomic_load_explicit(&e->cq_head, memory_order_acquire);
	uint32_t cqt = atomic_load_explicit(&e->cq_tail, memory_order_relaxed);
	uint32_t done = atomic_load_explicit(&e->done, memory_order_relaxed);
	unsigned total = 0;
	int n, err = 0;

	while (x->R - (cqt - cqh) >= COMP_BATCH) {
		n = ferry__rc_poll(e->qp, wc, COMP_BATCH);
		if (n < 0)
			err = n;
		if (n <= 0)
			break;
		for (int i = 0; i < n; i++)
			complete(x, e, &wc[i], &done, &cqt);
		total += (unsigned)n;
		if (n < COMP_BATCH)
			break;
	}
	if (!err && ferry__rc_state(e->qp) == FERRY_RC_ERROR) {
		/* drain the flushed entries so the worker sees them all */
		while ((n = ferry__rc_poll(e->qp, wc, COMP_BATCH)) > 0)
			for (int i = 0; i < n; i++)
				if (wc[i].op == FERRY_RC_WC_WRITE ||
				    wc[i].op == FERRY_RC_WC_SEND)
					complete(x, e, &wc[i], &done, &cqt);
		err = n;
	}
	if (!err && e->bad_hello) {
		snprintf(e->why, sizeof(e->why), "QP 0x%06x: the receiver's "
			 "first message is not ferry's hello", e->qpn);
		err = -FERRY_EPROTO;
	}
	if (err)
		fail_ep(x, e, err);
	atomic_store_explicit(&e->cq_tail, cqt, memory_order_release);
	atomic_store_explicit(&e->done, done, memory_order_release);
	/* a worker asleep until its rings change: ring it (it marked
	 * itself before it looked at them, sequentially consistent) */
	if (total || err) {
		atomic_thread_fence(memory_order_seq_cst);
		if (atomic_load_explicit(&e->sleeping, memory_order_relaxed))
			x->port->wake_due = true;
	}
	return total;
}

unsigned ferry__uroce_service(struct ferry_xport *x, uint64_t now)
{
	unsigned work = 0;

	for (unsigned i = 0; i < x->n_ep; i++) {
		struct ferry__uep *e = &x->ep[i];

		if (e->dead)
			continue;
		work += submit(x, e);
		ferry__rc_progress(e->qp, now);
		work += reap(x, e);
	}
	return work;
}

/* One round over every attached session: receive a burst, serve the
 * sessions, send a burst. The caller holds the port's driver flag. */
static unsigned round_locked(struct ferry__uport *pt, uint64_t now)
{
	const struct ferry__usess_list *l =
		atomic_load_explicit(&pt->live, memory_order_acquire);
	uint64_t tx0 = pt->st.tx_frames;
	unsigned work;

	if (l != pt->seen) {
		/* frames not sent yet may point into the memory of a session
		 * that just left: drop them (the engines of the others resend
		 * theirs) */
		pt->st.tx_flushed += pt->ntx;
		if (pt->ntx)
			rte_pktmbuf_free_bulk(pt->txb, pt->ntx);
		pt->ntx = 0;
		pt->seen = l;
	}
	work = rx(pt, l, now);
	for (unsigned i = 0; l && i < l->n; i++)
		work += ferry__uroce_service(l->s[i], now);
	tx_flush(pt);
	if (pt->wake_due) {
		pt->wake_due = false;
		eventfd_write(pt->wake_fd, 1);
	}
	work += (unsigned)(pt->st.tx_frames - tx0) + pt->ntx;
	atomic_fetch_add_explicit(&pt->loops, 1, memory_order_release);
	return work;
}

static bool driver_take(struct ferry__uport *pt)
{
	return !atomic_load_explicit(&pt->driving, memory_order_relaxed) &&
	       !atomic_exchange_explicit(&pt->driving, true,
					 memory_order_acquire);
}

static void driver_give(struct ferry__uport *pt)
{
	atomic_store_explicit(&pt->driving, false, memory_order_release);
}

int ferry__uport_drive(struct ferry__uport *pt)
{
	uint64_t now;
	unsigned work;

	if (!driver_take(pt))
		return -EBUSY;
	now = ferry__now_ns();
	work = round_locked(pt, now);
	atomic_store_explicit(&pt->worker_ns, now, memory_order_relaxed);
	driver_give(pt);
	return (int)work;
}

/* The earliest time any attached engine has something due (UINT64_MAX:
 * none). Whoever holds driving. */
static uint64_t next_due(const struct ferry__usess_list *l)
{
	uint64_t due = UINT64_MAX;

	for (unsigned i = 0; l && i < l->n; i++)
		for (unsigned k = 0; k < l->s[i]->n_ep; k++) {
			const struct ferry__uep *e = &l->s[i]->ep[k];
			uint64_t d;

			if (e->dead)
				continue;
			d = ferry__rc_due(e->qp);
			if (d < due)
				due = d;
		}
	return due;
}

/* The polling thread, for event sessions: one round, then sleep on the
 * port's receive ring and post_fd until a frame, a post or what the
 * engines have due; or, while frames stream in, nap a fixed short time.
 * False when it did not sleep (the round had work, or another thread
 * runs rounds). */
static bool port_sleep(struct ferry__uport *pt)
{
	struct pollfd fds[2] = { { .fd = pt->rx_fd, .events = POLLIN },
				 { .fd = pt->post_fd, .events = POLLIN } };
	uint64_t now, due, ns, rx;
	unsigned work;
	eventfd_t v;

	/* announced before the round: a post published after the round
	 * looked finds the flag and kicks (both sides sequentially
	 * consistent) */
	atomic_store(&pt->port_asleep, true);
	if (!driver_take(pt)) {
		atomic_store(&pt->port_asleep, false);
		return false;
	}
	now = ferry__now_ns();
	work = round_locked(pt, now);
	due = next_due(atomic_load_explicit(&pt->live, memory_order_acquire));
	rx = pt->st.rx_frames;
	driver_give(pt);
	if (work || due <= now) {
		atomic_store(&pt->port_asleep, false);
		return false;
	}
	/* Frames arriving at GATHER_FRAMES or more per EVENT_GATHER_NS,
	 * over the last window of that length at least: a stream, not a
	 * ping-pong. A wake-up per frame would cost a context switch each
	 * (most of a receiver's CPU on a veth pair); let them gather
	 * instead, as a NIC's interrupt moderation does: a nap that neither
	 * frames nor posts cut short, then a round takes what came. Frames
	 * sent do not count: a ping-pong sends as many as it receives, and
	 * a paced sender's rounds each have a frame due. */
	if (now - pt->gather_ns >= (uint64_t)EVENT_GATHER_NS) {
		pt->gathering = (rx - pt->gather_rx) *
					(uint64_t)EVENT_GATHER_NS >=
				GATHER_FRAMES * (now - pt->gather_ns);
		pt->gather_rx = rx;
		pt->gather_ns = now;
	}
	if (pt->gathering) {
		struct timespec nap = { 0, EVENT_GATHER_NS };

		atomic_store(&pt->port_asleep, false);
		nanosleep(&nap, NULL);
		return true;
	}
	ns = due - now < EVENT_MAX_NS ? due - now : EVENT_MAX_NS;
	struct timespec ts = { (time_t)(ns / 1000000000ull),
			       (long)(ns % 1000000000ull) };
	if (ppoll(fds, 2, &ts, NULL) > 0 && (fds[1].revents & POLLIN))
		eventfd_read(pt->post_fd, &v);
	atomic_store(&pt->port_asleep, false);
	return true;
}

static bool ep_has_news(struct ferry__uep *e)
{
	return atomic_load(&e->cq_tail) !=
		       atomic_load_explicit(&e->cq_head, memory_order_relaxed) ||
	       atomic_load(&e->done) != e->head || atomic_load(&e->err);
}

int ferry__uport_wait(struct ferry__uport *pt, struct ferry__uep *e)
{
	struct pollfd fd = { .fd = pt->wake_fd, .events = POLLIN };
	struct timespec ts = { 0, (long)EVENT_MAX_NS };
	eventfd_t v;

	if (pt->rx_fd < 0)
		return -ENOTSUP;
	/* the polling thread takes over the port now, not after its
	 * stand-back */
	atomic_store_explicit(&pt->worker_ns, 0, memory_order_relaxed);
	atomic_store(&e->sleeping, true);
	if (ep_has_news(e)) {
		atomic_store(&e->sleeping, false);
		return 1;
	}
	if (ppoll(&fd, 1, &ts, NULL) > 0)
		eventfd_read(pt->wake_fd, &v);
	atomic_store(&e->sleeping, false);
	return 0;
}

void ferry__uport_kick(struct ferry__uport *pt)
{
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&pt->port_asleep, memory_order_relaxed))
		eventfd_write(pt->post_fd, 1);
}

static void idle(unsigned work, uint64_t *since, uint64_t now)
{
	if (work) {
		*since = 0;
	} else if (!*since) {
		*since = now;
	} else if (now - *since > IDLE_YIELD_NS) {
		struct timespec ts = { 0, IDLE_SLEEP_NS };
		nanosleep(&ts, NULL);
	} else if (now - *since > IDLE_SPIN_NS) {
		sched_yield();
	}
}

/* The backstop: while workers drive rounds in their own waits, it sleeps;
 * when none has for BACKSTOP_NS (they are busy elsewhere: files, sums),
 * it drives, so that acknowledgements, timers and receives still run. */
void *ferry__uport_poller(void *arg)
{
	struct ferry__uport *pt = arg;
	bool reg = rte_thread_register() == 0; /* mempool caches */
	uint64_t since = 0;

	atomic_store(&pt->tid, (int)syscall(SYS_gettid));

	while (!atomic_load_explicit(&pt->stop, memory_order_acquire)) {
		uint64_t now = ferry__now_ns();
		uint64_t w = atomic_load_explicit(&pt->worker_ns,
						  memory_order_relaxed);

		struct timespec nap = { 0, BACKSTOP_SLEEP_NS };

		if (w + BACKSTOP_NS > now) {
			since = 0;
			nanosleep(&nap, NULL);
			continue;
		}
		/* a session in event mode: rounds while they have work,
		 * asleep on the port in between, instead of spin, yield and
		 * nap */
		if (pt->rx_fd >= 0 &&
		    atomic_load_explicit(&pt->event_sess,
					 memory_order_relaxed)) {
			if (!port_sleep(pt))
				sched_yield(); /* work, or another drives */
			continue;
		}
		if (!driver_take(pt)) {
			since = 0;
			nanosleep(&nap, NULL);
			continue;
		}
		/* read under the flag: the engines' clock never goes back */
		now = ferry__now_ns();
		unsigned work = round_locked(pt, now);
		driver_give(pt);
		idle(work, &since, now);
	}
	while (!driver_take(pt))
		sched_yield();
	if (pt->ntx)
		rte_pktmbuf_free_bulk(pt->txb, pt->ntx);
	pt->ntx = 0;
	driver_give(pt);
	atomic_store(&pt->tid, 0);
	if (reg)
		rte_thread_unregister();
	return NULL;
}

/* Wait until two rounds have finished since now, driving them when no
 * other thread does. */
static void quiesce(struct ferry__uport *pt)
{
	uint64_t l0 = atomic_load(&pt->loops), t0 = ferry__now_ns();
	struct timespec ts = { 0, 10000 };
	bool said = false;

	while (atomic_load(&pt->loops) < l0 + 2) {
		if (ferry__uport_drive(pt) < 0)
			nanosleep(&ts, NULL);
		if (!said && ferry__now_ns() - t0 > 5000000000ull) {
			ferry__log(FERRY_LOG_ERR,
				   "uroce: no round of the port has finished "
				   "for 5 s (stuck in a tx burst?)");
			said = true;
		}
	}
}

int ferry__uport_attach(struct ferry__uport *pt, struct ferry_xport *x)
{
	struct ferry__usess_list *old, *nl;
	int err = 0;

	pthread_mutex_lock(&pt->lock);
	old = &pt->lists[pt->cur];
	nl = &pt->lists[pt->cur ^ 1];
	if (old->n == FERRY__UPORT_MAX_SESS) {
		err = -ENOSPC;
		goto out;
	}
	*nl = *old;
	nl->s[nl->n++] = x;
	atomic_store_explicit(&pt->live, nl, memory_order_release);
	if (pt->running) {
		quiesce(pt);
	} else {
		atomic_store(&pt->stop, false);
		err = -pthread_create(&pt->th, NULL, ferry__uport_poller, pt);
		if (err) {
			atomic_store(&pt->live, old);
			goto out;
		}
		pt->running = true;
	}
	pt->cur ^= 1;
	if (x->attr.poll_mode == FERRY_POLL_EVENT)
		atomic_fetch_add(&pt->event_sess, 1);
out:
	pthread_mutex_unlock(&pt->lock);
	return err;
}

void ferry__uport_detach(struct ferry__uport *pt, struct ferry_xport *x)
{
	struct ferry__usess_list *old, *nl;

	pthread_mutex_lock(&pt->lock);
	old = &pt->lists[pt->cur];
	nl = &pt->lists[pt->cur ^ 1];
	nl->n = 0;
	for (unsigned i = 0; i < old->n; i++)
		if (old->s[i] != x)
			nl->s[nl->n++] = old->s[i];
	if (nl->n < old->n && x->attr.poll_mode == FERRY_POLL_EVENT)
		atomic_fetch_sub(&pt->event_sess, 1);
	atomic_store_explicit(&pt->live, nl, memory_order_release);
	if (nl->n) {
		quiesce(pt);
	} else if (pt->running) {
		atomic_store(&pt->stop, true);
		pthread_join(pt->th, NULL);
		pt->running = false;
	}
	pt->cur ^= 1;
	pthread_mutex_unlock(&pt->lock);
}
