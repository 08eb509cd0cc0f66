/* The sending side of a bench session. */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include "core/net.h"
#include "core/pipe.h"
#include "ctrl/msg.h"
#include "util/util.h"

/* Say what the receiver said when it refused or aborted. */
static int peer_error(const struct ferry_msg *m, char *why, size_t whylen)
{
	ferry__why(why, whylen, "receiver: %s", m->u.error.text);
	return -FERRY_EPEER;
}

static int negotiate(int fd, const struct ferry_opts *o,
		     const struct ferry_bench_spec *spec, struct ferry_msg *m,
		     char *why, size_t whylen)
{
	int err;

	memset(m, 0, sizeof(*m));
	m->type = FERRY_MSG_PROPOSE;
	m->u.propose = (struct ferry_params){
		.mode = FERRY_MODE_BENCH,
		.transports = strcmp(o->transport, "auto") == 0 ?
				      ferry__xport_mask() :
				      (uint32_t)0,
		.streams = o->streams,
		.slots = o->slots,
		.chunk_size = o->chunk_size,
		.total_bytes = spec->bytes,
	};
	if (!m->u.propose.transports) {
		/* a named transport: propose only it */
		const struct ferry_xport_ops *x =
			ferry__pick_xport(o->transport, 0, NULL, 0);
		m->u.propose.transports = x && strcmp(x->name, "tcp") == 0 ?
						  FERRY_XPORT_TCP :
					  x && strcmp(x->name, "uroce") == 0 ?
						  FERRY_XPORT_UROCE :
						  FERRY_XPORT_VERBS;
	}
	err = ferry__ctrl_send(fd, m, o->timeout_ms);
	if (err)
		goto io;
	err = ferry__ctrl_recv(fd, m, o->timeout_ms);
	if (err == -FERRY_EPEER)
		return peer_error(m, why, whylen);
	if (err)
		goto io;
	if (m->type != FERRY_MSG_ACCEPT ||
	    m->u.accept.params.streams != o->streams ||
	    m->u.accept.params.chunk_size != o->chunk_size ||
	    m->u.accept.params.slots != o->slots) {
		ferry__why(why, whylen,
			   "the receiver answered with unexpected parameters");
		return -FERRY_EPROTO;
	}
	return 0;
io:
	ferry__why(why, whylen, "control channel: %s", ferry_strerror(err));
	return err;
}

/* Wait for the workers, reporting intervals and watching the control
 * channel for an ERROR from the receiver. */
static int run(struct ferry__pipe *p, int fd, const struct ferry_opts *o,
	       struct ferry_report *rep, char *why, size_t whylen)
{
	struct ferry_msg m;
	int err = 0;

	while (atomic_load(&p->running) > 0) {
		struct pollfd pf = { .fd = fd, .events = POLLIN };
		int n = poll(&pf, 1, ferry__pipe_next_tick_ms(p, o));

		if (n > 0) {
			err = ferry__ctrl_recv(fd, &m, o->timeout_ms);
			if (err == -FERRY_EPEER)
				err = peer_error(&m, why, whylen);
			else if (err == 0)
				err = -FERRY_EPROTO;
			else
				ferry__why(why, whylen,
					   "the receiver went away: %s",
					   ferry_strerror(err));
			ferry__pipe_abort(p);
			break;
		}
		ferry__pipe_tick(p, o, rep, false);
	}
	ferry__pipe_join(p);
	ferry__pipe_tick(p, o, rep, true);
	if (!err) {
		err = ferry__pipe_error(p, why, whylen);
		if (err) {
			/* a failed stream: did the receiver say why? */
			if (ferry__ctrl_recv(fd, &m, 500) == -FERRY_EPEER)
				err = peer_error(&m, why, whylen);
		}
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
		return peer_error(&m, why, whylen);
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

int ferry_bench(const char *host, const char *port, const struct ferry_opts *o,
		const struct ferry_bench_spec *spec, struct ferry_report *rep,
		char *why, size_t whylen)
{
	struct ferry__pipe p = { .role = FERRY__SENDER,
				 .timeout_ms = o->timeout_ms };
	struct ferry_xport_attr xa = { .timeout_ms = o->timeout_ms,
				       .sockbuf = o->sockbuf };
	struct ferry_msg m;
	char xwhy[160];
	int fd = -1, err;

	memset(rep, 0, sizeof(*rep));
	rep->peer_cpu_user = rep->peer_cpu_sys = -1;
	rep->numa_node = -1;
	if (spec->seconds <= 0 && spec->bytes == 0) {
		ferry__why(why, whylen, "give a duration or a byte count");
		return -EINVAL;
	}
	err = ferry_opts_check(o, why, whylen);
	if (err)
		return err;
	err = ferry__dial(host, port, o->timeout_ms, &fd, &xa.addr,
			  &xa.addr_len, why, whylen);
	if (err)
		return err;
	ferry__addr_str((struct sockaddr *)&xa.addr, xa.addr_len, rep->peer,
			sizeof(rep->peer));
	err = ferry__ctrl_auth_client(fd, o->key, o->timeout_ms, why, whylen);
	if (err)
		goto out;
	err = negotiate(fd, o, spec, &m, why, whylen);
	if (err)
		goto out;
	p.ops = ferry__pick_xport(o->transport, m.u.accept.params.transports,
				  xwhy, sizeof(xwhy));
	if (!p.ops) {
		ferry__why(why, whylen, "%s", xwhy);
		err = -FERRY_ENOXPORT;
		goto out;
	}
	snprintf(rep->transport_why, sizeof(rep->transport_why), "%s", xwhy);
	p.xfer_id = m.u.accept.params.xfer_id;
	err = ferry__pipe_geometry(&p, o->streams, o->chunk_size, o->slots,
				   why, whylen);
	if (err)
		goto out;
	xa.n_ep = p.streams;
	err = p.ops->open(&xa, &p.x, why, whylen);
	if (err)
		goto out;
	err = ferry__pipe_memory(&p, o, (struct sockaddr *)&xa.addr,
				 xa.addr_len, why, whylen);
	if (err)
		goto out;
	err = p.ops->connect(p.x, m.u.accept.ep.data, m.u.accept.ep.len, why,
			     whylen);
	if (err)
		goto out;
	memset(&m, 0, sizeof(m));
	m.type = FERRY_MSG_READY;
	err = ferry__ctrl_send(fd, &m, o->timeout_ms);
	if (err)
		goto out;
	p.budget = spec->bytes;
	p.deadline_ns = ferry__now_ns() + (uint64_t)(spec->seconds * 1e9);
	ferry__pipe_report(&p, rep); /* settings, for interval callbacks */
	err = ferry__pipe_start(&p, ferry__bench_send_worker);
	if (!err)
		err = run(&p, fd, o, rep, why, whylen);
	if (!err)
		err = finish(&p, fd, o, rep, why, whylen);
	else
		ferry__pipe_report(&p, rep);
out:
	ferry__pipe_free(&p);
	close(fd);
	return err;
}
