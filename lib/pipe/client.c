/* The sending side of a session: connect, propose, run, account. */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include "metrics/metrics.h"
#include "pipe/net.h"
#include "pipe/path.h"
#include "pipe/session.h"
#include "util/util.h"

/* The file-system refusals a caller can act on: they keep their errno
 * across the wire (gfal2 and `ferry cp` map them to ENOENT, EEXIST,
 * EACCES, ...). Anything else is "the peer reported an error". */
static bool fs_errno(int32_t code)
{
	switch (code) {
	case ENOENT: case EEXIST: case EACCES: case EPERM: case ENOTDIR:
	case EISDIR: case ENOTEMPTY: case ENOSPC: case EDQUOT: case EROFS:
	case EFBIG: case ENAMETOOLONG: case EXDEV: case EINVAL: case EBUSY:
	case ENOTSUP:
		return true;
	default:
		return code == FERRY_EAUTH;
	}
}

int ferry__peer_error(const struct ferry_msg *m, const char *who, char *why,
		      size_t whylen)
{
	ferry__why(why, whylen, "%s: %s", who, m->u.error.text);
	return fs_errno(m->u.error.code) ? -m->u.error.code : -FERRY_EPEER;
}

int ferry__client_open(const char *host, const char *port,
		       const struct ferry_opts *o, int *fd,
		       struct ferry_xport_attr *xa, struct ferry_report *rep,
		       char *why, size_t whylen)
{
	int err;

	rep->dscp = o->dscp; /* the session's, whatever the receiver's */
	err = ferry__dial(host, port, o->timeout_ms, o->dscp, fd, &xa->addr,
			  &xa->addr_len, why, whylen);
	if (err)
		return err;
	ferry__addr_str((struct sockaddr *)&xa->addr, xa->addr_len, rep->peer,
			sizeof(rep->peer));
	err = ferry__ctrl_auth_client_ex(*fd, o->key, o->key_name,
					 o->timeout_ms, NULL, why, whylen);
	if (err) {
		close(*fd);
		*fd = -1;
	}
	return err;
}

/* Send m; why says the control channel failed, where it did. */
static int send_ctl(int fd, const struct ferry_msg *m, int timeout_ms,
		    char *why, size_t whylen)
{
	int err = ferry__ctrl_send(fd, m, timeout_ms);

	if (err)
		ferry__why(why, whylen, "control channel: %s",
			   ferry_strerror(err));
	return err;
}

int ferry__client_propose(int fd, const struct ferry_opts *o,
			  const struct ferry_xport_attr *xa,
			  struct ferry__xscan *xs, uint32_t mode,
			  uint64_t total_bytes, char *why, size_t whylen)
{
	struct ferry_msg m = { .type = FERRY_MSG_TCLASS };
	uint32_t offer = ferry__xport_offer(xs,
					    (const struct sockaddr *)&xa->addr,
					    xa->addr_len);
	int err;

	/* the session's traffic class, for the receiver to mark its own
	 * packets with; said only when there is one, so that a session
	 * without it has the bytes of earlier versions */
	if (o->dscp >= 0) {
		m.u.tclass.dscp = (uint8_t)o->dscp;
		err = send_ctl(fd, &m, o->timeout_ms, why, whylen);
		if (err)
			return err;
	}
	/* what this end knows of the path, for the receiver's plan */
	memset(&m, 0, sizeof(m));
	m.type = FERRY_MSG_PATH;
	ferry__path_local(o, fd, (const struct sockaddr *)&xa->addr,
			  xa->addr_len, true, &m.u.path);
	err = send_ctl(fd, &m, o->timeout_ms, why, whylen);
	if (err)
		return err;
	memset(&m, 0, sizeof(m));
	m.type = FERRY_MSG_PROPOSE;
	m.u.propose = (struct ferry_params){
		.mode = mode,
		.transports = offer,
		.streams = o->streams,
		.slots = o->slots,
		.chunk_size = o->chunk_size,
		.total_bytes = total_bytes,
	};
	return send_ctl(fd, &m, o->timeout_ms, why, whylen);
}

/* A duplex session (osu): the receiver writes into the sender's pool too. */
static int client_duplex(struct ferry__pipe *p, char *why, size_t whylen)
{
	if (!FERRY_XPORT_HAS(p->ops, duplex)) {
		ferry__why(why, whylen,
			   "--osu (the message path) is not supported on %s yet (the transport has no two-way writes)",
			   p->ops->name);
		return -ENOTSUP;
	}
	return p->ops->duplex(p->x, p->mr, why, whylen);
}

/* The receiver planned the session (its PATH came before ACCEPT): run the
 * same plan on the same facts; the streams and slots it answered must be
 * the plan's. Fills pl and the report's plan. */
static int follow_plan(int fd, const struct ferry_opts *o,
		       const struct ferry_xport_attr *xa,
		       const struct ferry_params *acc,
		       const struct ferry_msg_path *rx, bool tcp,
		       struct ferry__path_plan *pl, struct ferry_report *rep,
		       char *why, size_t whylen)
{
	struct ferry_params floor = *acc;
	struct ferry_msg_path tx;

	ferry__path_local(o, fd, (const struct sockaddr *)&xa->addr,
			  xa->addr_len, true, &tx);
	floor.streams = o->streams;
	floor.slots = o->slots;
	ferry__path_plan(&tx, rx, &floor, tcp, pl);
	if (acc->streams != pl->streams || acc->slots != pl->slots) {
		ferry__why(why, whylen,
			   "the receiver answered %u streams and %u slots where the path plan makes %u and %u",
			   acc->streams, acc->slots, pl->streams, pl->slots);
		return -FERRY_EPROTO;
	}
	ferry__path_report(pl, rep);
	return 0;
}

int ferry__client_connect(struct ferry__pipe *p, int fd,
			  const struct ferry_opts *o,
			  struct ferry_xport_attr *xa, struct ferry__xscan *xs,
			  struct ferry_report *rep, char *why, size_t whylen)
{
	struct ferry__xpick pick;
	struct ferry__path_plan pl;
	struct ferry_msg_path rx;
	bool planned = false;
	struct ferry_msg m;
	char xwhy[160];
	int err;

	err = ferry__ctrl_recv(fd, &m, o->timeout_ms);
	if (!err && m.type == FERRY_MSG_PATH) { /* the receiver planned */
		rx = m.u.path;
		planned = true;
		err = ferry__ctrl_recv(fd, &m, o->timeout_ms);
	}
	if (err == -FERRY_EPEER)
		return ferry__peer_error(&m, "receiver", why, whylen);
	if (err) {
		ferry__why(why, whylen, "control channel: %s",
			   ferry_strerror(err));
		return err;
	}
	if (m.type != FERRY_MSG_ACCEPT ||
	    m.u.accept.params.chunk_size != o->chunk_size ||
	    (!planned && (m.u.accept.params.streams != o->streams ||
			  m.u.accept.params.slots != o->slots))) {
		ferry__why(why, whylen,
			   "the receiver answered with unexpected parameters");
		return -FERRY_EPROTO;
	}
	err = ferry__xport_follow(xs, m.u.accept.params.transports,
				  (const struct sockaddr *)&xa->addr,
				  xa->addr_len, &pick, xwhy, sizeof(xwhy));
	if (err) {
		ferry__why(why, whylen, "%s", xwhy);
		return err;
	}
	p->ops = pick.ops;
	snprintf(rep->transport_why, sizeof(rep->transport_why), "%s", xwhy);
	snprintf(rep->peer_transport, sizeof(rep->peer_transport), "%s",
		 pick.peer);
	p->xfer_id = m.u.accept.params.xfer_id;
	memset(&pl, 0, sizeof(pl));
	pl.streams = o->streams;
	pl.slots = o->slots;
	if (planned) {
		err = follow_plan(fd, o, xa, &m.u.accept.params, &rx,
				  !strcmp(pick.ops->name, "tcp"), &pl, rep, why,
				  whylen);
		if (err)
			return err;
	}
	err = ferry__pipe_geometry(p, pl.streams, o->chunk_size, pl.slots, why,
				   whylen);
	if (err)
		return err;
	if (p->stride * p->slots > o->max_mem) {
		ferry__why(why, whylen,
			   "the receiver asked for a ring of %llu MiB, over this end's limit of %llu MiB",
			   (unsigned long long)((p->stride * p->slots) >> 20),
			   (unsigned long long)(o->max_mem >> 20));
		return -FERRY_EPROTO;
	}
	err = ferry__pipe_poll_mode(p, o->poll_mode, why, whylen);
	if (err < 0)
		return err;
	p->poll_mode = err;
	xa->n_ep = p->streams;
	xa->timeout_ms = o->timeout_ms;
	xa->rate_bps = p->rate_bps = o->rate_bps;
	xa->sockbuf = pl.sockbuf;
	xa->rtt_ns = (uint64_t)(pl.rtt_s * 1e9);
	xa->conf = &o->xport;
	xa->poll_mode = p->poll_mode;
	xa->family = pick.family;
	xa->dscp = o->dscp;
	err = p->ops->open(xa, &p->x, why, whylen);
	if (err)
		return err;
	err = ferry__pipe_memory(p, o, (struct sockaddr *)&xa->addr,
				 xa->addr_len, why, whylen);
	if (!err && p->duplex)
		err = client_duplex(p, why, whylen);
	if (err)
		return err;
	struct ferry_msg_ep ep = m.u.accept.ep;
	size_t out_len = sizeof(m.u.ready.data);

	memset(&m, 0, sizeof(m));
	err = p->ops->connect(p->x, ep.data, ep.len, m.u.ready.data, &out_len,
			      why, whylen);
	if (err)
		return err;
	/* the plan went past the floor (tcp, streams not fixed, a path with
	 * a target) for a target that is only the NIC's speed: the floor to
	 * start, more while they pay (ramp.h; the gate is in the pipeline's
	 * own send worker) */
	if (!p->worker && !o->rate_bps && pl.streams > o->streams)
		ferry__pipe_ramp_start(p, o->streams, pl.rtt_s);
	m.type = FERRY_MSG_READY;
	m.u.ready.len = (uint16_t)out_len;
	return ferry__ctrl_send(fd, &m, o->timeout_ms);
}

/* Handle what the receiver has said: every message already there, up to
 * READ_BURST. Both sides send per-file messages back to back (a million
 * empty files: a million FILE_SUMs one way, FILE_DONEs the other), so
 * each must keep reading while it writes, or both block on full socket
 * buffers. */
#define READ_BURST 256
static int read_msgs(int fd, const struct ferry_opts *o,
		     const struct ferry__hooks *h, struct ferry_msg *m,
		     char *why, size_t whylen)
{
	for (int i = 0; i < READ_BURST; i++) {
		struct pollfd pf = { .fd = fd, .events = POLLIN };
		int err;

		if (i && poll(&pf, 1, 0) <= 0)
			return 0;
		err = ferry__ctrl_recv(fd, m, o->timeout_ms);
		if (err == -FERRY_EPEER)
			return ferry__peer_error(m, "receiver", why, whylen);
		if (err) {
			ferry__why(why, whylen, "the receiver went away: %s",
				   ferry_strerror(err));
			return err;
		}
		err = h->msg ? h->msg(h->ctx, fd, m, why, whylen) :
			       -FERRY_EPROTO;
		if (err == -FERRY_EPROTO && !why[0])
			ferry__why(why, whylen,
				   "unexpected %s from the receiver",
				   ferry__ctrl_type_name(m->type));
		if (err < 0)
			return err;
	}
	return 0;
}

/* Wait for the workers (and the hooks) to finish, reporting intervals and
 * handling what the receiver says. */
static int loop(struct ferry__pipe *p, int fd, const struct ferry_opts *o,
		const struct ferry__hooks *h, struct ferry_report *rep,
		char *why, size_t whylen)
{
	struct ferry_msg m;
	int err = 0;

	for (;;) {
		bool workers = atomic_load(&p->running) > 0;
		if (!workers && (!h->settled || h->settled(h->ctx)))
			break;
		struct pollfd pf[2] = { { .fd = fd, .events = POLLIN },
					{ .fd = h->wake_fd, .events = POLLIN } };
		int n = poll(pf, h->wake_fd >= 0 ? 2 : 1,
			     ferry__pipe_next_tick_ms(p, o));
		ferry__pipe_tick(p, o, rep, false);
		ferry__pipe_ramp_tick(p);
		if (o->cancel && atomic_load(o->cancel)) {
			ferry__why(why, whylen, "cancelled");
			err = -ECANCELED;
			break;
		}
		if (n > 0 && h->wake_fd >= 0 && (pf[1].revents & POLLIN)) {
			err = h->work(h->ctx, fd, why, whylen);
			if (err)
				break;
		}
		if (!workers && ferry__pipe_error(p, NULL, 0))
			break; /* a stream failed: no more results will come */
		if (n <= 0 || !(pf[0].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		err = read_msgs(fd, o, h, &m, why, whylen);
		if (err < 0)
			break;
	}
	if (err)
		ferry__pipe_abort(p);
	ferry__pipe_join(p);
	ferry__pipe_tick(p, o, rep, true);
	if (!err) {
		err = ferry__pipe_error(p, why, whylen);
		/* a failed stream: did the receiver say why? (one that died
		 * closes the socket at once; this waits only for a live one) */
		if (err && ferry__ctrl_recv(fd, &m, o->timeout_ms) == -FERRY_EPEER)
			err = ferry__peer_error(&m, "receiver", why, whylen);
	}
	return err;
}

static int finish(struct ferry__pipe *p, int fd, const struct ferry_opts *o,
		  struct ferry_report *rep, char *why, size_t whylen)
{
	struct ferry_msg m = { .type = FERRY_MSG_FIN };
	int err;

	ferry__pipe_report(p, rep);
	m.u.fin.bytes = rep->bytes;
	m.u.fin.chunks = rep->chunks;
	err = ferry__ctrl_send(fd, &m, o->timeout_ms);
	if (!err)
		err = ferry__ctrl_recv(fd, &m, o->timeout_ms);
	if (err == -FERRY_EPEER)
		return ferry__peer_error(&m, "receiver", why, whylen);
	if (err) {
		ferry__why(why, whylen, "no final result from the receiver: %s",
			   ferry_strerror(err));
		return err;
	}
	if (m.type != FERRY_MSG_RESULT)
		return -FERRY_EPROTO;
	rep->peer_bytes = m.u.result.bytes;
	rep->peer_cpu_user = (double)m.u.result.cpu_user_us / 1e6;
	rep->peer_cpu_sys = (double)m.u.result.cpu_sys_us / 1e6;
	rep->crc_errors = m.u.result.crc_errors;
	if (m.u.result.bytes != rep->bytes || m.u.result.chunks != rep->chunks) {
		ferry__why(why, whylen,
			   "the receiver verified %llu bytes in %llu chunks, the sender sent %llu in %llu",
			   (unsigned long long)m.u.result.bytes,
			   (unsigned long long)m.u.result.chunks,
			   (unsigned long long)rep->bytes,
			   (unsigned long long)rep->chunks);
		return -FERRY_EPROTO;
	}
	return 0;
}

int ferry__client_run(struct ferry__pipe *p, int fd, const struct ferry_opts *o,
		      const struct ferry__hooks *h, struct ferry_report *rep,
		      char *why, size_t whylen)
{
	int err;

	ferry__pipe_report(p, rep); /* settings, for interval callbacks */
	err = ferry__pipe_start(p, p->worker ? p->worker : ferry__send_worker);
	if (!err)
		err = loop(p, fd, o, h, rep, why, whylen);
	if (!err)
		return finish(p, fd, o, rep, why, whylen);
	ferry__pipe_report(p, rep);
	return err;
}

int ferry_bench(const char *host, const char *port, const struct ferry_opts *o,
		const struct ferry_bench_spec *spec, struct ferry_report *rep,
		char *why, size_t whylen)
{
	struct ferry__pipe p = { .role = FERRY__SENDER,
				 .timeout_ms = o->timeout_ms,
				 .dp = &ferry__bench_dp };
	struct ferry__hooks h = { .wake_fd = -1 };
	struct ferry_xport_attr xa = { 0 };
	struct ferry__xscan xs = { 0 };
	int fd = -1, err;

	memset(rep, 0, sizeof(*rep));
	rep->peer_cpu_user = rep->peer_cpu_sys = -1;
	rep->numa_node = -1;
	rep->dscp = -1;
	rep->test_bytes = spec->bytes;
	rep->test_seconds = spec->bytes ? 0 : spec->seconds;
	if (spec->seconds <= 0 && spec->bytes == 0) {
		ferry__why(why, whylen, "give a duration or a byte count");
		return -EINVAL;
	}
	err = ferry__opts_check(o, &xs, why, whylen);
	if (err)
		return err;
	ferry__metrics_session_begin(FERRY__M_SENDER);
	err = ferry__client_open(host, port, o, &fd, &xa, rep, why, whylen);
	if (err) {
		ferry__metrics_session_end(FERRY__M_SENDER, err);
		return err;
	}
	err = ferry__client_propose(fd, o, &xa, &xs, FERRY_MODE_BENCH,
				    spec->bytes, why, whylen);
	if (!err)
		err = ferry__client_connect(&p, fd, o, &xa, &xs, rep, why,
					    whylen);
	if (!err) {
		p.budget = spec->bytes;
		p.deadline_ns = ferry__now_ns() + (uint64_t)(spec->seconds * 1e9);
		err = ferry__client_run(&p, fd, o, &h, rep, why, whylen);
	}
	ferry__pipe_free(&p);
	close(fd);
	ferry__metrics_session_end(FERRY__M_SENDER, err);
	return err;
}
