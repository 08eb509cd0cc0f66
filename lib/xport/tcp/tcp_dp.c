/* tcp transport: datapath (posts and polls). No allocation, no logging. */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>

#include "util/cursor.h"
#include "util/util.h"
#include "xport/tcp/tcp.h"

static int sock_err(struct ferry_xport *x, int e)
{
	if (atomic_load_explicit(&x->cancelled, memory_order_relaxed))
		return -ECANCELED;
	if (e == EAGAIN || e == EWOULDBLOCK)
		return -FERRY_ETIMEOUT;
	if (e == EPIPE || e == ECONNRESET || e == ENOTCONN)
		return -FERRY_ECLOSED;
	return -e;
}

/* A send blocked for a whole SO_SNDTIMEO (--timeout) may wait on while
 * the peer answers on the other streams (FERRY__STALL_ALIVE). since: when
 * this send began to block (0: it has not). */
static bool wait_on(struct ferry_xport *x, uint64_t *since)
{
	uint64_t limit = (uint64_t)x->attr.timeout_ms * 1000000ull;
	uint64_t now = ferry__now_ns();
	uint64_t heard = atomic_load_explicit(&x->heard_ns,
					      memory_order_relaxed);

	if (!*since)
		*since = now - limit;
	/* heard may be after now: another stream read a frame since */
	return !atomic_load_explicit(&x->cancelled, memory_order_relaxed) &&
	       heard && (heard >= now || now - heard <= limit) &&
	       now - *since < FERRY__STALL_ALIVE * limit;
}

int ferry__tcp_writev_full(struct ferry_xport *x, int fd, struct iovec *iov,
			   int iovcnt)
{
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = (size_t)iovcnt };
	uint64_t since = 0;

	while (mh.msg_iovlen) {
		ssize_t n = sendmsg(fd, &mh, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if ((errno == EAGAIN || errno == EWOULDBLOCK) &&
			    wait_on(x, &since))
				continue;
			return sock_err(x, errno);
		}
		since = 0;
		while (n > 0 && mh.msg_iovlen) {
			if ((size_t)n >= mh.msg_iov->iov_len) {
				n -= (ssize_t)mh.msg_iov->iov_len;
				mh.msg_iov++;
				mh.msg_iovlen--;
			} else {
				mh.msg_iov->iov_base =
					(char *)mh.msg_iov->iov_base + n;
				mh.msg_iov->iov_len -= (size_t)n;
				n = 0;
			}
		}
		/* skip empty trailing pieces */
		while (mh.msg_iovlen && mh.msg_iov->iov_len == 0) {
			mh.msg_iov++;
			mh.msg_iovlen--;
		}
	}
	return 0;
}

/* A read that got nothing for a whole SO_RCVTIMEO waits on, like a
 * blocked send, while bytes arrive on the other streams: among many
 * streams through a full bottleneck, one in TCP's retransmission backoff
 * can hear nothing for longer than --timeout while the peer is alive. */
int ferry__tcp_read_full(struct ferry_xport *x, int fd, void *buf, size_t len)
{
	uint64_t since = 0;
	char *p = buf;

	while (len) {
		ssize_t n = recv(fd, p, len, MSG_WAITALL);
		if (n == 0)
			return atomic_load(&x->cancelled) ? -ECANCELED :
							    -FERRY_ECLOSED;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if ((errno == EAGAIN || errno == EWOULDBLOCK) &&
			    wait_on(x, &since))
				continue;
			return sock_err(x, errno);
		}
		since = 0;
		/* the peer answers (what waits in wait_on go by) */
		atomic_store_explicit(&x->heard_ns, ferry__now_ns(),
				      memory_order_relaxed);
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static void put_hdr(uint8_t *h, uint32_t type, uint32_t imm, uint64_t off,
		    uint32_t len)
{
	struct ferry__wcur c = { .p = h, .cap = FERRY__TCP_HDR };

	ferry__put_u32(&c, type);
	ferry__put_u32(&c, imm);
	ferry__put_u64(&c, off);
	ferry__put_u32(&c, len);
	ferry__put_u32(&c, 0);
}

int ferry__tcp_post_write_imm(struct ferry_xport *x, unsigned ep,
			      struct ferry_mr *lmr, const void *laddr,
			      size_t len, uint64_t roff, uint32_t imm,
			      uint64_t wr_id, unsigned flags)
{
	struct tcp_ep *e = &x->ep[ep];
	uint8_t hdr[FERRY__TCP_HDR], flipped;
	struct iovec iov[4];
	int iovcnt, err;

	if (atomic_load_explicit(&x->cancelled, memory_order_relaxed))
		return -ECANCELED;
	if (ep >= x->n_ep ||
	    (const uint8_t *)laddr < lmr->base ||
	    (const uint8_t *)laddr + len > lmr->base + lmr->len ||
	    len > UINT32_MAX)
		return -EINVAL;
	if ((flags & FERRY_POST_SIGNALED) && e->wc_count == FERRY__TCP_WCQ)
		return -EAGAIN; /* caller must reap completions first */
	put_hdr(hdr, FERRY__TCP_WRITE, imm, roff, (uint32_t)len);
	iov[0] = (struct iovec){ hdr, sizeof(hdr) };
	iov[1] = (struct iovec){ (void *)laddr, len };
	iovcnt = 2;
	if (x->fault_flip_at && ep == 0)
		iovcnt = ferry__tcp_fault_flip(x, e, laddr, len, iov, &flipped);
	if (x->fault_pause_ms && ep == 0 && iovcnt == 2) {
		/* the hook: half the frame, a silence (in slices, ended by
		 * a cancel as a blocked send would be), then the rest */
		unsigned ms = ferry__tcp_fault_pause(x);
		struct timespec slice = { 0, 10000000L };
		size_t half = len / 2;

		iov[1].iov_len = half;
		err = ferry__tcp_writev_full(x, e->fd, iov, 2);
		if (err)
			return err;
		ferry__log(FERRY_LOG_WARN, "tcp: fault hook: stream 0 silent "
			   "from now, for %u ms", ms);
		for (; ms >= 10; ms -= 10) {
			if (atomic_load_explicit(&x->cancelled,
						 memory_order_relaxed))
				return -ECANCELED;
			nanosleep(&slice, NULL);
		}
		iov[0] = (struct iovec){ (uint8_t *)laddr + half, len - half };
		iovcnt = 1;
	}
	err = ferry__tcp_writev_full(x, e->fd, iov, iovcnt);
	if (err)
		return err;
	e->bytes_out += sizeof(hdr) + len;
	if (flags & FERRY_POST_SIGNALED) {
		e->wcq[(e->wc_head + e->wc_count) % FERRY__TCP_WCQ] = wr_id;
		e->wc_count++;
	}
	return 0;
}

int ferry__tcp_post_send(struct ferry_xport *x, unsigned ep, const void *msg,
			 size_t len)
{
	struct tcp_ep *e = &x->ep[ep];
	uint8_t hdr[FERRY__TCP_HDR];
	struct iovec iov[2];
	int err;

	if (ep >= x->n_ep)
		return -EINVAL;
	if (len > FERRY_XPORT_MSG_MAX)
		return -EMSGSIZE;
	put_hdr(hdr, FERRY__TCP_SEND, 0, 0, (uint32_t)len);
	iov[0] = (struct iovec){ hdr, sizeof(hdr) };
	iov[1] = (struct iovec){ (void *)msg, len };
	err = ferry__tcp_writev_full(x, e->fd, iov, 2);
	if (!err)
		e->bytes_out += sizeof(hdr) + len;
	return err;
}

/* Read one frame from ep into wc; the WRITE payload goes into the ring. */
static int read_frame(struct ferry_xport *x, struct tcp_ep *e,
		      struct ferry_wc *wc)
{
	uint8_t hdr[FERRY__TCP_HDR];
	struct ferry__rcur c = { .p = hdr, .len = sizeof(hdr) };
	uint32_t type, imm, len;
	uint64_t off;
	int err;

	err = ferry__tcp_read_full(x, e->fd, hdr, sizeof(hdr));
	if (err)
		return err;
	type = ferry__get_u32(&c);
	imm = ferry__get_u32(&c);
	off = ferry__get_u64(&c);
	len = ferry__get_u32(&c);
	if (type == FERRY__TCP_SEND) {
		if (len > FERRY_XPORT_MSG_MAX)
			return -FERRY_EPROTO;
		wc->op = FERRY_WC_RECV;
		wc->len = len;
		return ferry__tcp_read_full(x, e->fd, wc->msg, len);
	}
	if (type != FERRY__TCP_WRITE)
		return -FERRY_EPROTO;
	/* The check an RDMA NIC makes against the memory region. */
	if (!x->ring || off > x->ring->len || len > x->ring->len - off)
		return -FERRY_EBOUNDS;
	wc->op = FERRY_WC_WRITE_IMM;
	wc->imm = imm;
	wc->len = len;
	wc->offset = off;
	return ferry__tcp_read_full(x, e->fd, x->ring->base + off, len);
}

int ferry__tcp_poll(struct ferry_xport *x, unsigned ep, struct ferry_wc *wc,
		    unsigned max, int timeout_ms)
{
	struct tcp_ep *e;
	uint64_t deadline = 0;
	unsigned n = 0;

	if (ep >= x->n_ep)
		return -EINVAL;
	e = &x->ep[ep];
	if (atomic_load_explicit(&x->cancelled, memory_order_relaxed))
		return -ECANCELED;
	while (n < max && e->wc_count) {
		wc[n].op = FERRY_WC_WRITE;
		wc[n].wr_id = e->wcq[e->wc_head];
		e->wc_head = (e->wc_head + 1) % FERRY__TCP_WCQ;
		e->wc_count--;
		n++;
	}
	/* event mode, waiting forever for one frame: block in the read
	 * itself, a syscall fewer per frame (ping-pong latency) */
	if (max == 1 && !n && timeout_ms < 0 &&
	    x->attr.poll_mode != FERRY_POLL_BUSY) {
		int r = read_frame(x, e, &wc[0]);
		return r ? r : 1;
	}
	while (n < max) {
		struct pollfd p = { .fd = e->fd, .events = POLLIN };
		bool spin = x->attr.poll_mode == FERRY_POLL_BUSY && !n &&
			    timeout_ms != 0;
		int r = poll(&p, 1, n || spin ? 0 : timeout_ms);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0 && spin) {
			/* busy mode: spin until data or the deadline */
			uint64_t now = ferry__now_ns();
			if (!deadline)
				deadline = now + (uint64_t)(timeout_ms < 0 ? 0 : timeout_ms) * 1000000ull;
			if (timeout_ms < 0 || now < deadline) {
				if (atomic_load_explicit(&x->cancelled,
							 memory_order_relaxed))
					return -ECANCELED;
				continue;
			}
		}
		if (r == 0)
			break;
		r = read_frame(x, e, &wc[n]);
		if (r)
			return r;
		n++;
	}
	return (int)n;
}
