/* verbs transport: connection management with librdmacm (control path).
 *
 * Receiver: listen() binds an rdma_cm id to an address of the device's
 * netdev (port chosen by the kernel), puts address, port, QP count and a
 * fresh token in the blob, and starts the cm thread, which from then on
 * answers each REQ whose private data holds that token and a free endpoint
 * index with a REP describing the ring (rkey, base, length). accept() only
 * waits for every endpoint to be ESTABLISHED, so the pipeline may call it
 * before or after the sender's connect() returns.
 * Sender: connect() resolves and connects all endpoints at once (one round
 * trip, not one per QP: 256 QPs over 300 ms would otherwise take a
 * minute), then starts the cm thread.
 * The cm thread also marks endpoints whose peer disconnected, so that the
 * datapath can say so. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "util/util.h"
#include "xport/verbs/verbs.h"

enum { EV_OK = 0, EV_REFUSED = 1 };

static bool token_eq(const uint8_t *a, const uint8_t *b)
{
	uint8_t d = 0;

	for (size_t i = 0; i < FERRY__VERBS_TOKEN; i++)
		d |= a[i] ^ b[i]; /* constant time */
	return d == 0;
}

static void addr_str(const struct sockaddr_storage *ss, char *buf, size_t len)
{
	const void *a = ss->ss_family == AF_INET6 ?
		(const void *)&((const struct sockaddr_in6 *)ss)->sin6_addr :
		(const void *)&((const struct sockaddr_in *)ss)->sin_addr;

	if (!inet_ntop(ss->ss_family, a, buf, (socklen_t)len))
		snprintf(buf, len, "?");
}

/* IPv4-mapped IPv6 as plain IPv4 (rdma_cm binds and resolves those). */
static void normalise(struct sockaddr_storage *ss)
{
	struct sockaddr_in6 a6;
	struct sockaddr_in *a4 = (struct sockaddr_in *)ss;

	memcpy(&a6, ss, sizeof(a6));
	if (ss->ss_family != AF_INET6 || !IN6_IS_ADDR_V4MAPPED(&a6.sin6_addr))
		return;
	memset(ss, 0, sizeof(*ss));
	a4->sin_family = AF_INET;
	a4->sin_port = a6.sin6_port;
	memcpy(&a4->sin_addr, &a6.sin6_addr.s6_addr[12], 4);
}

/* The session's traffic class on an rdma_cm id (RDMA_OPTION_ID_TOS: the
 * DS byte), before its route is resolved: for RoCE the route's traffic
 * class, which the QP's packets carry, comes from it; the receiver's QPs
 * take theirs from the connection request's path. No class: rdma_cm's
 * default stays (configfs' default_roce_tos). */
static int set_tos(struct ferry_xport *x, struct rdma_cm_id *id)
{
	uint8_t tos = ferry__verbs_tclass(x->attr.dscp);

	if (x->attr.dscp < 0)
		return 0;
	return ferry__verbs_cm(rdma_set_option(id, RDMA_OPTION_ID,
					       RDMA_OPTION_ID_TOS, &tos,
					       sizeof(tos)));
}

static int channel_open(struct ferry_xport *x)
{
	int fl;

	x->ch = rdma_create_event_channel();
	if (!x->ch)
		return ferry__verbs_errno();
	fl = fcntl(x->ch->fd, F_GETFL);
	if (fl < 0 || fcntl(x->ch->fd, F_SETFL, fl | O_NONBLOCK) < 0) {
		int err = -errno;
		rdma_destroy_event_channel(x->ch);
		x->ch = NULL;
		return err;
	}
	return 0;
}

/* Next event, waiting until deadline; cancel interrupts within 100 ms. */
static int cm_wait(struct ferry_xport *x, uint64_t deadline,
		   struct rdma_cm_event **ev)
{
	for (;;) {
		struct pollfd pf = { .fd = x->ch->fd, .events = POLLIN };
		uint64_t now;

		if (atomic_load(&x->cancelled))
			return -ECANCELED;
		if (rdma_get_cm_event(x->ch, ev) == 0)
			return 0;
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			return ferry__verbs_errno();
		now = ferry__now_ns();
		if (now >= deadline)
			return -FERRY_ETIMEOUT;
		poll(&pf, 1, (deadline - now) / 1000000u > 100 ?
				     100 : (int)((deadline - now) / 1000000u) + 1);
	}
}

static void notify(struct ferry_xport *x)
{
	uint64_t one = 1;
	ssize_t w = write(x->prog_fd, &one, sizeof(one));

	(void)w; /* an eventfd add of 1 does not fail */
}

/* The first setup failure, for accept() to report (cm thread only). */
static void setup_fail(struct ferry_xport *x, int err, const char *why)
{
	int none = 0;

	if (atomic_load(&x->setup_err))
		return;
	snprintf(x->setup_why, sizeof(x->setup_why), "%s", why);
	atomic_compare_exchange_strong(&x->setup_err, &none, err);
	notify(x);
}

static int on_request(struct ferry_xport *x, struct rdma_cm_event *ev,
		      char *why, size_t whylen);

static void on_event(struct ferry_xport *x, struct rdma_cm_event *ev)
{
	struct rdma_cm_id *id = ev->id;
	struct verbs_ep *e = id ? id->context : NULL;
	char why[256] = "";
	int r;

	switch (ev->event) {
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		r = on_request(x, ev, why, sizeof(why));
		rdma_ack_cm_event(ev);
		if (r == EV_REFUSED || (r < 0 && id->context == NULL))
			rdma_destroy_id(id); /* never became an endpoint */
		if (r < 0)
			setup_fail(x, r, why);
		return;
	case RDMA_CM_EVENT_ESTABLISHED:
		if (e && e->state == FERRY__VERBS_EP_CONNECT) {
			e->state = FERRY__VERBS_EP_UP;
			atomic_fetch_add(&x->up, 1);
			notify(x);
		}
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_REJECTED:
		if (!e)
			break;
		if (e->state != FERRY__VERBS_EP_UP) {
			snprintf(why, sizeof(why),
				 "verbs: queue pair %u failed while connecting: %s (status %d)",
				 e->idx, rdma_event_str(ev->event), ev->status);
			setup_fail(x, -FERRY_EPEER, why);
		}
		atomic_store(&e->peer_gone, true);
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		for (unsigned i = 0; i < x->n_ep; i++)
			atomic_store(&x->ep[i].peer_gone, true);
		setup_fail(x, -ENODEV, "verbs: the RDMA device was removed");
		break;
	default:
		break;
	}
	rdma_ack_cm_event(ev);
}

static void *cm_thread(void *arg)
{
	struct ferry_xport *x = arg;
	struct rdma_cm_event *ev;

	for (;;) {
		struct pollfd pf[2] = { { .fd = x->ch->fd, .events = POLLIN },
					{ .fd = x->wake_fd, .events = POLLIN } };
		if (poll(pf, 2, -1) < 0 && errno != EINTR)
			break;
		if (pf[1].revents)
			break;
		while (rdma_get_cm_event(x->ch, &ev) == 0)
			on_event(x, ev);
	}
	return NULL;
}

static int cm_start(struct ferry_xport *x)
{
	int err;

	x->wake_fd = eventfd(0, EFD_CLOEXEC);
	x->prog_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (x->wake_fd < 0 || x->prog_fd < 0) {
		err = -errno;
		goto fail;
	}
	err = -pthread_create(&x->cm, NULL, cm_thread, x);
	if (err)
		goto fail;
	x->cm_on = true;
	return 0;
fail:
	if (x->wake_fd >= 0)
		close(x->wake_fd);
	if (x->prog_fd >= 0)
		close(x->prog_fd);
	x->wake_fd = x->prog_fd = -1;
	return err;
}

void ferry__verbs_cm_stop(struct ferry_xport *x)
{
	uint64_t one = 1;
	ssize_t w;

	if (!x->cm_on)
		return;
	w = write(x->wake_fd, &one, sizeof(one));
	(void)w; /* an eventfd add of 1 does not fail */
	pthread_join(x->cm, NULL);
	x->cm_on = false;
	close(x->wake_fd);
	close(x->prog_fd);
	x->wake_fd = x->prog_fd = -1;
}

int ferry__verbs_listen(struct ferry_xport *x, struct ferry_mr *ring,
			void *blob, size_t *blob_len, char *why, size_t whylen)
{
	struct ferry__verbs_blob bl = { .n_ep = (uint16_t)x->n_ep };
	struct sockaddr_storage ss = x->attr.addr;
	char a[INET6_ADDRSTRLEN];
	int err;

	if (x->attr.family)
		return ferry__verbs_rc_listen(x, ring, blob, blob_len, why,
					      whylen);
	if (!ring || !(ring->access & FERRY_ACCESS_REMOTE_WRITE) || x->ch ||
	    *blob_len < FERRY__VERBS_BLOB_LEN)
		return -EINVAL;
	x->ring = ring;
	x->receiver = true;
	err = ferry__random(x->token, sizeof(x->token));
	if (err)
		return err;
	normalise(&ss);
	bl.addr = ss;
	if (x->netdev[0] &&
	    ferry__verbs_dev_addr(x, ss.ss_family, &ss, &bl.addr) != 0) {
		ferry__why(why, whylen,
			   "verbs: %s (the netdev of %s) has no usable %s address",
			   x->netdev, x->dev,
			   ss.ss_family == AF_INET ? "IPv4" : "IPv6");
		return -EADDRNOTAVAIL;
	}
	if (bl.addr.ss_family == AF_INET) /* the kernel picks the port */
		((struct sockaddr_in *)&bl.addr)->sin_port = 0;
	else
		((struct sockaddr_in6 *)&bl.addr)->sin6_port = 0;
	addr_str(&bl.addr, a, sizeof(a));
	err = channel_open(x);
	if (err) {
		ferry__why(why, whylen, "verbs: no rdma_cm event channel: %s",
			   ferry_strerror(err));
		return err;
	}
	err = ferry__verbs_cm(rdma_create_id(x->ch, &x->lid, NULL,
					     RDMA_PS_TCP));
	if (err) {
		ferry__why(why, whylen, "verbs: no rdma_cm id: %s",
			   ferry_strerror(err));
		goto out_ch;
	}
	err = set_tos(x, x->lid);
	if (err) {
		ferry__why(why, whylen,
			   "verbs: cannot set the traffic class %u (DSCP %d): %s",
			   ferry__verbs_tclass(x->attr.dscp), x->attr.dscp,
			   ferry_strerror(err));
		goto out_id;
	}
	err = ferry__verbs_cm(rdma_bind_addr(x->lid,
					     (struct sockaddr *)&bl.addr));
	if (!err && x->lid->verbs != x->ctx) {
		ferry__why(why, whylen,
			   "verbs: %s belongs to RDMA device %s, not to %s",
			   a, ibv_get_device_name(x->lid->verbs->device),
			   x->dev);
		err = -EADDRNOTAVAIL;
		goto out_id;
	}
	if (!err)
		err = ferry__verbs_cm(rdma_listen(x->lid, (int)x->n_ep));
	if (err) {
		ferry__why(why, whylen,
			   "verbs: cannot listen for queue pairs on %s (%s): %s",
			   a, x->dev, ferry_strerror(err));
		goto out_id;
	}
	err = ferry__verbs_srq_create(x, why, whylen);
	if (err)
		goto out_id;
	bl.port = ntohs(rdma_get_src_port(x->lid));
	memcpy(bl.token, x->token, sizeof(bl.token));
	err = ferry__verbs_blob_encode(&bl, blob, blob_len);
	if (err) {
		ferry__why(why, whylen, "verbs: cannot describe %s: %s", a,
			   ferry_strerror(err));
		goto out_srq;
	}
	err = cm_start(x); /* from here on, REQs are answered */
	if (err) {
		ferry__why(why, whylen, "verbs: cannot start the cm thread: %s",
			   ferry_strerror(err));
		goto out_srq;
	}
	ferry__log(FERRY_LOG_DEBUG, "verbs: listening on %s port %u (%s)", a,
		   bl.port, x->dev);
	return 0;
out_srq:
	ferry__verbs_srq_destroy(x);
out_id:
	rdma_destroy_id(x->lid);
	x->lid = NULL;
out_ch:
	rdma_destroy_event_channel(x->ch);
	x->ch = NULL;
	return err;
}

/* A CONNECT_REQUEST (cm thread): check it, make the endpoint's QP, answer
 * REP. EV_REFUSED: not ours, or a late one (the caller destroys the id
 * after the ack). */
static int on_request(struct ferry_xport *x, struct rdma_cm_event *ev,
		      char *why, size_t whylen)
{
	struct ferry__verbs_priv req, rep = { .kind = FERRY__VERBS_PRIV_REP };
	uint8_t pd[FERRY__VERBS_PRIV_LEN];
	struct rdma_conn_param cp = {
		.private_data = pd,
		.private_data_len = sizeof(pd),
		.rnr_retry_count = FERRY__VERBS_RNR_RETRY,
		.retry_count = FERRY__VERBS_RETRY,
	};
	struct verbs_ep *e;
	int err;

	err = ferry__verbs_priv_decode(ev->param.conn.private_data,
				       ev->param.conn.private_data_len, &req);
	if (err || !x->ring || req.kind != FERRY__VERBS_PRIV_REQ ||
	    req.n_ep != x->n_ep || !token_eq(req.token, x->token) ||
	    x->ep[req.ep].id || ev->id->verbs != x->ctx) {
		ferry__log(FERRY_LOG_WARN,
			   "verbs: refused a queue pair with a bad token, version or index");
		rdma_reject(ev->id, NULL, 0);
		return EV_REFUSED;
	}
	e = &x->ep[req.ep];
	err = ferry__verbs_ep_create(x, e, ev->id, why, whylen);
	if (err) {
		rdma_reject(ev->id, NULL, 0);
		return err; /* the id is not e's: the caller destroys it */
	}
	ev->id->context = e;
	rep.ep = e->idx;
	rep.n_ep = x->n_ep;
	rep.rkey = x->ring->mr->rkey;
	rep.ring_base = x->ring->iova;
	rep.ring_len = x->ring->len;
	memcpy(rep.token, x->token, sizeof(rep.token));
	ferry__verbs_priv_encode(&rep, pd, sizeof(pd));
	err = ferry__verbs_cm(rdma_accept(ev->id, &cp));
	if (err) {
		ferry__why(why, whylen, "verbs: cannot accept queue pair %u: %s",
			   e->idx, ferry_strerror(err));
		return err;
	}
	e->state = FERRY__VERBS_EP_CONNECT;
	return EV_OK;
}

int ferry__verbs_accept(struct ferry_xport *x, const void *peer_blob,
			size_t peer_len, char *why, size_t whylen)
{
	uint64_t deadline = ferry__now_ns() +
			    (uint64_t)x->attr.timeout_ms * 1000000ull;
	int err;

	if (x->attr.family)
		return ferry__verbs_rc_accept(x, peer_blob, peer_len, why,
					      whylen);
	if (!x->lid || !x->cm_on)
		return -EINVAL;
	/* the REQs carried what the receiver needs; a duplex sender adds
	 * where this side may write back */
	if (peer_len) {
		struct ferry__verbs_duplex d;

		err = ferry__verbs_duplex_decode(peer_blob, peer_len, &d);
		if (err) {
			ferry__why(why, whylen,
				   "verbs: the sender's duplex description is malformed");
			return err;
		}
		x->rkey = d.rkey;
		x->rbase = d.ring_base;
		x->rlen = d.ring_len;
	}
	for (;;) {
		struct pollfd pf = { .fd = x->prog_fd, .events = POLLIN };
		uint64_t now, left, v;
		unsigned up;

		err = atomic_load(&x->setup_err);
		if (err) {
			ferry__why(why, whylen, "%s", x->setup_why);
			return err;
		}
		up = atomic_load(&x->up);
		if (up >= x->n_ep)
			break;
		if (atomic_load(&x->cancelled))
			return -ECANCELED;
		now = ferry__now_ns();
		if (now >= deadline) {
			ferry__why(why, whylen,
				   "verbs: only %u of %u queue pairs connected within %d ms",
				   up, x->n_ep, x->attr.timeout_ms);
			return -FERRY_ETIMEOUT;
		}
		left = (deadline - now) / 1000000u;
		/* woken by the cm thread; every 100 ms to look at cancel */
		if (poll(&pf, 1, left > 100 ? 100 : (int)left + 1) > 0 &&
		    read(x->prog_fd, &v, sizeof(v)) < 0)
			continue; /* nothing to clear: look again */
	}
	for (unsigned i = 0; x->rlen && i < x->n_ep; i++)
		x->ep[i].wwr.wr.rdma.rkey = x->rkey;
	ferry__log(FERRY_LOG_INFO, "verbs: %u queue pair(s) connected on %s%s",
		   x->n_ep, x->dev, x->rlen ? " (duplex)" : "");
	return 0;
}

int ferry__verbs_duplex(struct ferry_xport *x, struct ferry_mr *ring,
			char *why, size_t whylen)
{
	if (x->ch || x->lid || !(ring->access & FERRY_ACCESS_REMOTE_WRITE)) {
		ferry__why(why, whylen, "verbs: a two-way ring must be "
					"remotely writable and set before connect");
		return -EINVAL;
	}
	x->ring = ring;
	return 0;
}

/* Sender: one step of an endpoint's connection. Returns 1 when it came
 * up, 0 to keep going, or a negative error with why. */
static int on_active(struct ferry_xport *x, struct rdma_cm_event *ev,
		     const struct ferry__verbs_blob *bl, char *why,
		     size_t whylen)
{
	struct verbs_ep *e = ev->id->context;
	struct ferry__verbs_priv p = { .kind = FERRY__VERBS_PRIV_REQ };
	uint8_t pd[FERRY__VERBS_PRIV_LEN];
	struct rdma_conn_param cp = {
		.private_data = pd,
		.private_data_len = sizeof(pd),
		.rnr_retry_count = FERRY__VERBS_RNR_RETRY,
		.retry_count = FERRY__VERBS_RETRY,
	};
	char a[INET6_ADDRSTRLEN];
	int err;

	addr_str(&bl->addr, a, sizeof(a));
	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		if (ev->id->verbs != x->ctx) {
			ferry__why(why, whylen,
				   "verbs: %s is reached through RDMA device %s, but this session's memory is on %s (chosen by %s)",
				   a, ibv_get_device_name(ev->id->verbs->device),
				   x->dev,
				   x->dev_forced ? "FERRY_VERBS_DEVICE" :
						   "the route to the control address");
			return -ENODEV;
		}
		e->state = FERRY__VERBS_EP_ROUTE;
		err = ferry__verbs_cm(rdma_resolve_route(ev->id,
							 x->attr.timeout_ms));
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		err = ferry__verbs_ep_create(x, e, ev->id, why, whylen);
		if (err)
			return err;
		p.ep = e->idx;
		p.n_ep = x->n_ep;
		memcpy(p.token, bl->token, sizeof(p.token));
		ferry__verbs_priv_encode(&p, pd, sizeof(pd));
		e->state = FERRY__VERBS_EP_CONNECT;
		err = ferry__verbs_cm(rdma_connect(ev->id, &cp));
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		err = ferry__verbs_priv_decode(ev->param.conn.private_data,
					       ev->param.conn.private_data_len,
					       &p);
		if (err || p.kind != FERRY__VERBS_PRIV_REP || p.ep != e->idx ||
		    p.n_ep != x->n_ep || !token_eq(p.token, bl->token) ||
		    (x->rlen && (p.rkey != x->rkey || p.ring_base != x->rbase ||
				 p.ring_len != x->rlen))) {
			ferry__why(why, whylen,
				   "verbs: the receiver's answer for queue pair %u is malformed or inconsistent",
				   e->idx);
			return err == -FERRY_EVERSION ? err : -FERRY_EPROTO;
		}
		x->rkey = p.rkey;
		x->rbase = p.ring_base;
		x->rlen = p.ring_len;
		e->wwr.wr.rdma.rkey = p.rkey;
		e->state = FERRY__VERBS_EP_UP;
		return 1;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		ferry__why(why, whylen,
			   "verbs: queue pair %u to %s port %u: %s (status %d)%s",
			   e->idx, a, bl->port, rdma_event_str(ev->event),
			   ev->status,
			   ev->event == RDMA_CM_EVENT_REJECTED ?
				   ": the receiver refused it" :
			   ev->event == RDMA_CM_EVENT_ADDR_ERROR ?
				   ": no RDMA path to that address" :
			   ev->event == RDMA_CM_EVENT_UNREACHABLE ?
				   ": the receiver's rdma_cm did not answer" :
				   "");
		return ev->event == RDMA_CM_EVENT_REJECTED ? -FERRY_EPEER :
		       ev->status < 0 ? ev->status : -FERRY_ECLOSED;
	default:
		return 0;
	}
	if (err)
		ferry__why(why, whylen, "verbs: queue pair %u to %s: %s",
			   e->idx, a, ferry_strerror(err));
	return err;
}

/* Resolve and connect every endpoint, all in flight at once. */
static int connect_all(struct ferry_xport *x,
		       const struct ferry__verbs_blob *bl, struct sockaddr *src,
		       char *why, size_t whylen)
{
	uint64_t t0 = ferry__now_ns();
	uint64_t deadline = t0 + (uint64_t)x->attr.timeout_ms * 1000000ull;
	unsigned up = 0;
	int err = 0;

	for (unsigned i = 0; i < x->n_ep && !err; i++) {
		struct verbs_ep *e = &x->ep[i];
		err = ferry__verbs_cm(rdma_create_id(x->ch, &e->id, e,
						     RDMA_PS_TCP));
		if (!err)
			err = set_tos(x, e->id);
		if (err)
			break;
		e->state = FERRY__VERBS_EP_ADDR;
		err = ferry__verbs_cm(rdma_resolve_addr(
			e->id, src, (struct sockaddr *)&bl->addr,
			x->attr.timeout_ms));
	}
	if (err) {
		ferry__why(why, whylen, "verbs: cannot start connecting: %s",
			   ferry_strerror(err));
		return err;
	}
	while (up < x->n_ep) {
		struct rdma_cm_event *ev;
		int r;

		err = cm_wait(x, deadline, &ev);
		if (err) {
			ferry__why(why, whylen,
				   "verbs: only %u of %u queue pairs connected within %d ms: %s",
				   up, x->n_ep, x->attr.timeout_ms,
				   ferry_strerror(err));
			return err;
		}
		r = ev->id && ev->id->context ? on_active(x, ev, bl, why, whylen)
					      : 0;
		rdma_ack_cm_event(ev);
		if (r < 0)
			return r;
		up += (unsigned)r;
	}
	double ms = (double)(ferry__now_ns() - t0) / 1e6;
	ferry__log(FERRY_LOG_INFO,
		   "verbs: %u queue pair(s) connected on %s in %.1f ms", x->n_ep,
		   x->dev, ms);
	if (ms > x->rtt_ms)
		ferry__log(FERRY_LOG_WARN,
			   "verbs: connecting took %.0f ms, more than the %.0f ms RTT the ACK timeout is sized for: set FERRY_VERBS_RTT_MS to the path's RTT",
			   ms, x->rtt_ms);
	return 0;
}

static int connect_any(struct ferry_xport *x, const void *blob,
		       size_t blob_len, void *out, size_t *out_len, char *why,
		       size_t whylen)
{
	struct ferry__verbs_blob bl;
	struct sockaddr_storage src;
	bool use_src = false;
	int err;

	if (x->attr.family)
		return ferry__verbs_rc_connect(x, blob, blob_len, out, out_len,
					       why, whylen);
	if (x->ch)
		return -EINVAL;
	err = ferry__verbs_blob_decode(blob, blob_len, &bl);
	if (err || bl.n_ep != x->n_ep) {
		ferry__why(why, whylen,
			   err == -FERRY_EVERSION ?
				   "verbs: the receiver speaks another version of the endpoint description" :
				   "verbs: the receiver's endpoint description is malformed");
		return err ? err : -FERRY_EPROTO;
	}
	/* A device the user named: leave from its address. Otherwise the
	 * route decides, and ADDR_RESOLVED checks it is our device. */
	if (x->dev_forced && x->netdev[0] &&
	    ferry__verbs_dev_addr(x, bl.addr.ss_family, NULL, &src) == 0)
		use_src = true;
	err = channel_open(x);
	if (err) {
		ferry__why(why, whylen, "verbs: no rdma_cm event channel: %s",
			   ferry_strerror(err));
		return err;
	}
	err = ferry__verbs_srq_create(x, why, whylen);
	if (err)
		goto out_ch;
	err = connect_all(x, &bl, use_src ? (struct sockaddr *)&src : NULL,
			  why, whylen);
	if (!err) {
		err = cm_start(x);
		if (err)
			ferry__why(why, whylen,
				   "verbs: cannot start the cm thread: %s",
				   ferry_strerror(err));
	}
	if (!err) {
		/* the REQs told the receiver all it needs, but for a duplex
		 * session: where it may write back */
		size_t n = 0;

		if (x->ring) {
			struct ferry__verbs_duplex d = {
				.rkey = x->ring->mr->rkey,
				.ring_base = x->ring->iova,
				.ring_len = x->ring->len,
			};
			n = ferry__verbs_duplex_encode(&d, out, *out_len);
			if (!n)
				err = -ENOSPC;
		}
		if (!err) {
			*out_len = n;
			return 0;
		}
		ferry__why(why, whylen, "verbs: no room for the duplex description");
	}
	/* endpoints, their ids and the SRQ; close() would do it too, but a
	 * failed connect leaves the transport as open() made it */
	for (unsigned i = 0; i < x->n_ep; i++) {
		struct verbs_ep *e = &x->ep[i];
		ferry__verbs_ep_destroy(x, e);
		if (e->id)
			rdma_destroy_id(e->id);
		e->id = NULL;
		e->state = FERRY__VERBS_EP_IDLE;
	}
	ferry__verbs_srq_destroy(x);
out_ch:
	rdma_destroy_event_channel(x->ch);
	x->ch = NULL;
	return err;
}

void ferry__verbs_cm_close(struct ferry_xport *x)
{
	ferry__verbs_cm_stop(x);
	for (unsigned i = 0; i < x->n_ep; i++) {
		struct verbs_ep *e = &x->ep[i];
		if (e->id && e->state == FERRY__VERBS_EP_UP &&
		    !atomic_load(&e->peer_gone))
			rdma_disconnect(e->id);
		ferry__verbs_ep_destroy(x, e);
		if (e->id)
			rdma_destroy_id(e->id);
		e->id = NULL;
	}
	if (x->lid)
		rdma_destroy_id(x->lid);
	x->lid = NULL;
	ferry__verbs_srq_destroy(x);
	if (x->ch)
		rdma_destroy_event_channel(x->ch);
	x->ch = NULL;
}

int ferry__verbs_connect(struct ferry_xport *x, const void *blob,
			 size_t blob_len, void *out, size_t *out_len,
			 char *why, size_t whylen)
{
	int err = connect_any(x, blob, blob_len, out, out_len, why, whylen);

	if (!err)
		ferry__verbs_rate_limit(x);
	return err;
}
