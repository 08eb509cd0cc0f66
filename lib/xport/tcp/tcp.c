/* tcp transport: control path (setup, endpoint exchange, teardown). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "util/cursor.h"
#include "util/util.h"
#include "xport/tcp/tcp.h"
#include "xport/tcp/tcp_plan.h"
#include "xport/tcp/tcp_id.h"

#define BLOB_LEN (2 + 2 + FERRY__TCP_TOKEN)
#define HELLO_LEN (FERRY__TCP_TOKEN + 4)

static int tcp_probe(const struct ferry_xport_conf *conf, char *why,
		     size_t whylen)
{
	(void)conf;
	(void)why;
	(void)whylen;
	return 0; /* every host has TCP */
}

static void set_port(struct sockaddr_storage *ss, uint16_t port)
{
	if (ss->ss_family == AF_INET6)
		((struct sockaddr_in6 *)ss)->sin6_port = htons(port);
	else
		((struct sockaddr_in *)ss)->sin_port = htons(port);
}

static uint16_t get_port(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
	return ntohs(((const struct sockaddr_in *)ss)->sin_port);
}

/* The send buffer each stream gets when none was asked for, or 0 to
 * leave it to the kernel's autotuning. Autotuning grows a send buffer
 * only up to tcp_wmem's maximum (4 MiB by default), and that buffer holds
 * every unacknowledged byte at ~1.5 bytes of memory per byte of payload:
 * ~2.7 MB in flight per stream, 0.7 Gb/s over 4 streams at a 120 ms RTT
 * (docs/wan.md). So ferry asks for FERRY__TCP_SNDBUF_TOTAL split over the
 * streams (at most FERRY__TCP_SNDBUF_MAX each) when that is more than
 * autotuning would reach: ~21 MB in flight per session, a 1 Gb/s x 170 ms
 * path. Not more: the buffer is also the only bound on what BBR keeps in
 * flight, and at twice that, four streams overran a one-BDP bottleneck
 * queue all the time. It is a limit, not an allocation. The receive side
 * keeps autotuning (tcp_rmem, which needs no privilege to raise). */
static size_t auto_sndbuf(unsigned n_ep)
{
	size_t want = FERRY__TCP_SNDBUF_TOTAL / n_ep;
	struct ferry__tcp_limits l;

	if (want > FERRY__TCP_SNDBUF_MAX)
		want = FERRY__TCP_SNDBUF_MAX;
	ferry__tcp_limits_read("", &l);
	/* without CAP_NET_ADMIN a socket gets at most wmem_max, and setting
	 * it turns autotuning off: worse than leaving it */
	if (!l.force && want / 2 > l.wmem_max)
		return 0;
	return want > l.tcp_wmem_max ? want : 0;
}

/* Sets the socket's send buffer to BYTES as the kernel counts it (it
 * doubles what it is given), past wmem_max where we are allowed to
 * (CAP_NET_ADMIN), else up to wmem_max. */
static void set_sndbuf(int fd, size_t bytes)
{
	int half = (int)(bytes / 2);

	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &half, sizeof(half)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &half, sizeof(half));
}

/* Socket options every data stream gets. Buffer sizes: 0 leaves the
 * kernel's receive autotuning alone (setting SO_RCVBUF turns it off) and
 * sizes the send buffer by auto_sndbuf(); otherwise ask for the size,
 * forcing past rmem_max where we are allowed to. */
static void tune(struct ferry_xport *x, int fd, unsigned i)
{
	int one = 1;
	struct timeval tv = { .tv_sec = x->attr.timeout_ms / 1000,
			      .tv_usec = (x->attr.timeout_ms % 1000) * 1000 };

	/* credits are small and must not wait for Nagle */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	/* the session's class: set before the SYN, and on the listener,
	 * whose SYN-ACKs and accepted streams inherit it */
	int err = ferry__dscp_set(fd, x->attr.dscp);
	if (err)
		ferry__log(FERRY_LOG_WARN,
			   "tcp: cannot mark a data stream with DSCP %d: %s",
			   x->attr.dscp, ferry_strerror(err));
	setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (x->sockbuf) {
		int want = x->sockbuf > (size_t)1 << 30 ?
				   1 << 30 : (int)x->sockbuf;
		if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &want,
			       sizeof(want)) < 0)
			setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &want,
				   sizeof(want));
		if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &want,
			       sizeof(want)) < 0)
			setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &want,
				   sizeof(want));
	} else if (x->auto_sndbuf) {
		set_sndbuf(fd, x->auto_sndbuf);
	}
	if (x->attr.rate_bps) {
		/* the session's cap on each socket, as the kernel paces one:
		 * bytes per second. It smooths a chunk's burst; the pipeline
		 * spaces the chunks at the cap, so one chunk at the cap ends
		 * as the next begins. The cap over the streams instead made
		 * each chunk take streams x its slot, and a paced session
		 * that much longer at its end (a 64 MiB send at 300 Mb/s in
		 * 2.25 s, 1.79 s at the cap) */
		uint64_t bps = x->attr.rate_bps / 8 + 1;
		unsigned int b32 = bps > UINT32_MAX ? UINT32_MAX : (unsigned)bps;
		if (setsockopt(fd, SOL_SOCKET, SO_MAX_PACING_RATE, &bps,
			       sizeof(bps)) < 0)
			setsockopt(fd, SOL_SOCKET, SO_MAX_PACING_RATE, &b32,
				   sizeof(b32));
	}
	if (i == 0) {
		int snd = 0, rcv = 0;
		socklen_t l = sizeof(int);
		getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &snd, &l);
		l = sizeof(int);
		getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, &l);
		ferry__log(FERRY_LOG_INFO,
			   "tcp: %u stream(s); socket buffers %s: SO_SNDBUF %d, SO_RCVBUF %d bytes",
			   x->n_ep,
			   x->planned     ? "as the path plan asks" :
			   x->sockbuf     ? "as asked" :
			   x->auto_sndbuf ? "receive autotuned (starting), send sized for long paths" :
						 "autotuned (starting)",
			   snd, rcv);
	}
}

static int tcp_open(const struct ferry_xport_attr *attr,
		    struct ferry_xport **out, char *why, size_t whylen)
{
	struct ferry_xport *x;

	if (attr->n_ep == 0 || attr->n_ep > FERRY__TCP_MAX_EP) {
		ferry__why(why, whylen, "tcp supports 1 to %d streams, not %u",
			   FERRY__TCP_MAX_EP, attr->n_ep);
		return -EINVAL;
	}
	if (attr->dscp > FERRY_DSCP_MAX) {
		ferry__why(why, whylen, "tcp: DSCP %d is over %d", attr->dscp,
			   FERRY_DSCP_MAX);
		return -EINVAL;
	}
	x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	x->ep = aligned_alloc(64, sizeof(*x->ep) * attr->n_ep);
	if (!x->ep) {
		free(x);
		return -ENOMEM;
	}
	memset(x->ep, 0, sizeof(*x->ep) * attr->n_ep);
	for (unsigned i = 0; i < attr->n_ep; i++)
		x->ep[i].fd = -1;
	x->attr = *attr;
	x->n_ep = attr->n_ep;
	x->lfd = -1;
	x->sockbuf = attr->conf->tcp.sockbuf ? attr->conf->tcp.sockbuf :
					       attr->sockbuf;
	x->planned = !attr->conf->tcp.sockbuf && attr->sockbuf;
	x->auto_sndbuf = x->sockbuf ? 0 : auto_sndbuf(attr->n_ep);
	atomic_init(&x->cancelled, false);
	atomic_init(&x->heard_ns, 0);
	ferry__tcp_fault_open(x);
	*out = x;
	return 0;
}

static int tcp_reg_mem(struct ferry_xport *x, void *addr, size_t len,
		       unsigned access, struct ferry_mr **out)
{
	struct ferry_mr *mr = malloc(sizeof(*mr));

	(void)x;
	if (!mr)
		return -ENOMEM;
	mr->base = addr;
	mr->len = len;
	mr->access = access;
	*out = mr;
	return 0;
}

static void tcp_dereg_mem(struct ferry_xport *x, struct ferry_mr *mr)
{
	(void)x;
	free(mr);
}

static int tcp_listen(struct ferry_xport *x, struct ferry_mr *ring,
		      void *blob, size_t *blob_len, char *why, size_t whylen)
{
	struct sockaddr_storage ss = x->attr.addr;
	socklen_t sl = x->attr.addr_len;
	struct ferry__wcur b = { .p = blob, .cap = BLOB_LEN };
	int one = 1, err;

	if (*blob_len < BLOB_LEN || !(ring->access & FERRY_ACCESS_REMOTE_WRITE))
		return -EINVAL;
	x->ring = ring;
	err = ferry__random(x->token, sizeof(x->token));
	if (err)
		return err;
	set_port(&ss, 0);
	x->lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (x->lfd < 0)
		return -errno;
	setsockopt(x->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/* the streams inherit the buffers, and the window scale their
	 * SYN-ACK offers is chosen from them */
	tune(x, x->lfd, 1);
	if (bind(x->lfd, (struct sockaddr *)&ss, sl) < 0 ||
	    listen(x->lfd, (int)x->n_ep) < 0 ||
	    getsockname(x->lfd, (struct sockaddr *)&ss, &sl) < 0) {
		err = -errno;
		ferry__why(why, whylen, "tcp: cannot open a data port: %s",
			   ferry_strerror(err));
		return err;
	}
	ferry__put_be16(&b, get_port(&ss));
	ferry__put_be16(&b, (uint16_t)x->n_ep);
	ferry__put_bytes(&b, x->token, FERRY__TCP_TOKEN);
	*blob_len = b.off;
	return 0;
}

static int wait_fd(int fd, short events, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = events };
	int n;

	do
		n = poll(&p, 1, timeout_ms);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return n == 0 ? -FERRY_ETIMEOUT : 0;
}

static int tcp_accept(struct ferry_xport *x, const void *peer_blob,
		      size_t peer_len, char *why, size_t whylen)
{
	uint64_t deadline = ferry__now_ns() +
			    (uint64_t)x->attr.timeout_ms * 1000000ull;
	unsigned connected = 0;

	(void)peer_blob; /* the streams identify themselves with the token */
	(void)peer_len;
	while (connected < x->n_ep) {
		uint64_t now = ferry__now_ns();
		int left = now >= deadline ? 0 :
				(int)((deadline - now) / 1000000ull);
		uint8_t hello[HELLO_LEN];
		int fd, err;

		err = wait_fd(x->lfd, POLLIN, left);
		if (atomic_load(&x->cancelled))
			return -ECANCELED;
		if (err) {
			ferry__why(why, whylen,
				   "tcp: only %u of %u data streams connected within %d ms",
				   connected, x->n_ep, x->attr.timeout_ms);
			return err;
		}
		fd = accept4(x->lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		tune(x, fd, 1);
		err = ferry__tcp_read_full(x, fd, hello, sizeof(hello));
		struct ferry__rcur hc = { .p = hello + FERRY__TCP_TOKEN,
					  .len = 4 };
		uint32_t idx = ferry__get_be32(&hc);
		if (err || memcmp(hello, x->token, FERRY__TCP_TOKEN) != 0 ||
		    idx >= x->n_ep || x->ep[idx].fd >= 0) {
			/* not one of ours: drop it, keep waiting */
			ferry__log(FERRY_LOG_WARN,
				   "tcp: dropped a data connection with a bad token or index");
			close(fd);
			continue;
		}
		if (idx == 0)
			tune(x, fd, 0); /* report buffer sizes once */
		x->ep[idx].fd = fd;
		connected++;
	}
	close(x->lfd);
	x->lfd = -1;
	return 0;
}

/* Sender: every data stream's connection at once (on a long path each
 * takes a round trip: one after another, 16 streams took 5 s at 300 ms).
 * Each socket is tuned before its SYN, so that the window scale it offers
 * covers the buffer it was given. 0, or -errno with the stream's index. */
static int connect_all(struct ferry_xport *x, const struct sockaddr_storage *ss,
		       socklen_t sl, unsigned *bad)
{
	uint64_t deadline = ferry__now_ns() +
			    (uint64_t)x->attr.timeout_ms * 1000000ull;
	struct pollfd *pf = calloc(x->n_ep, sizeof(*pf));
	unsigned pending = 0;
	int err = 0;

	if (!pf)
		return -ENOMEM;
	for (unsigned i = 0; i < x->n_ep && !err; i++) {
		int fd = socket(ss->ss_family,
				SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

		*bad = i;
		if (fd < 0) {
			err = -errno;
			break;
		}
		x->ep[i].fd = fd;
		tune(x, fd, i);
		pf[i] = (struct pollfd){ .fd = fd, .events = POLLOUT };
		if (connect(fd, (const struct sockaddr *)ss, sl) == 0)
			pf[i].fd = -1; /* connected already */
		else if (errno == EINPROGRESS)
			pending++;
		else
			err = -errno;
	}
	while (!err && pending) {
		uint64_t now = ferry__now_ns();
		int left = now >= deadline ? 0 :
				(int)((deadline - now) / 1000000ull);
		int n = poll(pf, x->n_ep, left);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? -errno : -FERRY_ETIMEOUT;
			break;
		}
		for (unsigned i = 0; i < x->n_ep && !err; i++) {
			int e = 0;
			socklen_t el = sizeof(e);

			if (pf[i].fd < 0 || !pf[i].revents)
				continue;
			getsockopt(pf[i].fd, SOL_SOCKET, SO_ERROR, &e, &el);
			*bad = i;
			err = -e;
			pf[i].fd = -1;
			pending--;
		}
	}
	for (unsigned i = 0; i < x->n_ep && !err; i++) {
		int fd = x->ep[i].fd;

		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	}
	if (!err && atomic_load(&x->cancelled))
		err = -ECANCELED;
	free(pf);
	return err;
}

static int tcp_connect(struct ferry_xport *x, const void *blob,
		       size_t blob_len, void *out, size_t *out_len, char *why,
		       size_t whylen)
{
	struct ferry__rcur b = { .p = blob, .len = blob_len };
	struct sockaddr_storage ss = x->attr.addr;
	uint8_t hello[HELLO_LEN];
	uint16_t port = ferry__get_be16(&b);
	uint16_t n_ep = ferry__get_be16(&b);
	unsigned bad = 0;
	int err;

	ferry__get_bytes(&b, hello, FERRY__TCP_TOKEN);
	if (blob_len != BLOB_LEN || n_ep != x->n_ep) {
		ferry__why(why, whylen,
			   "tcp: the receiver's endpoint description is malformed");
		return -FERRY_EPROTO;
	}
	(void)out;
	*out_len = 0;
	set_port(&ss, port);
	err = connect_all(x, &ss, x->attr.addr_len, &bad);
	if (err) {
		ferry__why(why, whylen,
			   "tcp: data stream %u could not connect to port %u: %s",
			   bad, (unsigned)port, ferry_strerror(err));
		return err;
	}
	for (unsigned i = 0; i < x->n_ep; i++) {
		struct ferry__wcur hc = { .p = hello + FERRY__TCP_TOKEN,
					  .cap = 4 };
		struct iovec iov = { hello, sizeof(hello) };

		ferry__put_be32(&hc, i);
		err = ferry__tcp_writev_full(x, x->ep[i].fd, &iov, 1);
		if (err)
			return err;
	}
	return 0;
}

/* Sender: the receiver's WRITE frames land in ring, after the same
 * bounds check as on the receiver (read_frame). */
static int tcp_duplex(struct ferry_xport *x, struct ferry_mr *ring,
		      char *why, size_t whylen)
{
	if (!(ring->access & FERRY_ACCESS_REMOTE_WRITE)) {
		ferry__why(why, whylen, "tcp: a two-way ring must be remotely writable");
		return -EINVAL;
	}
	x->ring = ring;
	return 0;
}

static void tcp_cancel(struct ferry_xport *x)
{
	atomic_store(&x->cancelled, true);
	if (x->lfd >= 0)
		shutdown(x->lfd, SHUT_RDWR); /* wakes accept's poll */
	for (unsigned i = 0; i < x->n_ep; i++)
		if (x->ep[i].fd >= 0)
			shutdown(x->ep[i].fd, SHUT_RDWR);
}

static void tcp_close(struct ferry_xport *x)
{
	if (!x)
		return;
	for (unsigned i = 0; i < x->n_ep; i++)
		if (x->ep[i].fd >= 0)
			close(x->ep[i].fd);
	if (x->lfd >= 0)
		close(x->lfd);
	free(x->ep);
	free(x);
}

/* TCP_INFO past glibc's struct tcp_info, which ends at total_retrans:
 * the kernel's next fields (include/uapi/linux/tcp.h; bytes_acked and
 * bytes_received from Linux 4.1, rcv_ooopack from 5.4). */
struct tcp_info_acked {
	struct tcp_info ti;
	uint64_t pacing_rate, max_pacing_rate, bytes_acked, bytes_received;
	uint32_t segs_out, segs_in, notsent_bytes, min_rtt;
	uint32_t data_segs_in, data_segs_out;
	uint64_t delivery_rate, busy_time, rwnd_limited, sndbuf_limited;
	uint32_t delivered, delivered_ce;
	uint64_t bytes_sent, bytes_retrans;
	uint32_t dsack_dups, reord_seen, rcv_ooopack;
};
_Static_assert(sizeof(struct tcp_info) == 104,
	       "glibc's struct tcp_info ends where the kernel's pacing_rate begins");

/* Endpoint ep's TCP_INFO into t; what the kernel did not fill (all of it,
 * without a socket) reads 0. */
static socklen_t ep_info(struct ferry_xport *x, unsigned ep,
			 struct tcp_info_acked *t)
{
	socklen_t len = sizeof(*t);

	memset(t, 0, sizeof(*t));
	if (ep >= x->n_ep || x->ep[ep].fd < 0 ||
	    getsockopt(x->ep[ep].fd, IPPROTO_TCP, TCP_INFO, t, &len) < 0)
		return 0;
	return len;
}

static uint64_t tcp_retransmits(struct ferry_xport *x, unsigned ep)
{
	struct tcp_info_acked t;

	ep_info(x, ep, &t);
	return t.ti.tcpi_total_retrans;
}

static uint64_t tcp_acked(struct ferry_xport *x, unsigned ep)
{
	struct tcp_info_acked t;

	ep_info(x, ep, &t);
	return t.bytes_acked;
}

static int tcp_rx_counts(struct ferry_xport *x, unsigned ep,
			 struct ferry_xport_rx *rx)
{
	struct tcp_info_acked t;

	if (ep_info(x, ep, &t) < offsetof(struct tcp_info_acked, rcv_ooopack) +
					 sizeof(t.rcv_ooopack))
		return -EOPNOTSUPP;
	rx->bytes = t.bytes_received;
	rx->out_of_order = t.rcv_ooopack;
	rx->rtt_us = t.ti.tcpi_rcv_rtt;
	return 0;
}

/* The kernel lowers the window it advertises to the clamp as the data in
 * flight is read (it never takes back what it offered), and raises it
 * again, up to what the socket's buffer holds, when the clamp goes up. */
static int tcp_clamp(struct ferry_xport *x, unsigned ep, uint64_t bytes)
{
	int v = bytes > INT_MAX ? INT_MAX : (int)bytes;

	if (ep >= x->n_ep || x->ep[ep].fd < 0)
		return -EBADF;
	if (setsockopt(x->ep[ep].fd, IPPROTO_TCP, TCP_WINDOW_CLAMP, &v,
		       sizeof(v)) < 0)
		return -errno;
	return 0;
}

const struct ferry_xport_ops ferry__xport_tcp = {
	.size = sizeof(struct ferry_xport_ops),
	FERRY__TCP_ID, /* name, control-channel bit, rank, wire */
	.probe = tcp_probe,
	.open = tcp_open,
	.reg_mem = tcp_reg_mem,
	.dereg_mem = tcp_dereg_mem,
	.listen = tcp_listen,
	.accept = tcp_accept,
	.connect = tcp_connect,
	.post_write_imm = ferry__tcp_post_write_imm,
	.post_send = ferry__tcp_post_send,
	.poll = ferry__tcp_poll,
	.cancel = tcp_cancel,
	.close = tcp_close,
	/* event: poll() on the sockets; busy: non-blocking reads, spinning */
	.poll_modes = FERRY_POLL_BIT(FERRY_POLL_BUSY) |
		      FERRY_POLL_BIT(FERRY_POLL_EVENT),
	.poll_default = FERRY_POLL_EVENT,
	.duplex = tcp_duplex,
	.retransmits = tcp_retransmits,
	.acked = tcp_acked,
	.rx_counts = tcp_rx_counts,
	.clamp = tcp_clamp,
};
