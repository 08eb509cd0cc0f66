/* The receiving side: listen, and serve sessions. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "daemon/daemon.h"
#include "daemon/gate.h"
#include "daemon/tokens.h"
#include "files/files.h"
#include "metrics/metrics.h"
#include "osu/osu.h"
#include "pipe/net.h"
#include "pipe/path.h"
#include "pipe/session.h"
#include "util/util.h"
#include "xport/xport_ids.h"

struct ferry_server {
	int fd;
	struct ferry_opts o;
	/* admission: sessions past the handshake (0 max: no limit) */
	pthread_mutex_t lock;
	pthread_cond_t freed;
	unsigned admitted, max_admitted;
	struct ferry__daemon *d; /* o.exports loaded; NULL: none */
	struct ferry__gate *gate; /* connections in their handshake */
};

/* 127.0.0.0/8, ::1 or ::ffff:127.x.y.z. */
static bool is_loopback(const struct sockaddr_storage *ss)
{
	const struct sockaddr_in6 *a6 = (const struct sockaddr_in6 *)ss;
	const uint8_t *b = a6->sin6_addr.s6_addr;

	if (ss->ss_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)ss)->sin_addr.s_addr) >>
			24) == 127;
	if (ss->ss_family != AF_INET6)
		return false;
	if (IN6_IS_ADDR_LOOPBACK(&a6->sin6_addr))
		return true;
	return IN6_IS_ADDR_V4MAPPED(&a6->sin6_addr) && b[12] == 127;
}

/* Without a key, only a socket bound to a loopback address may listen:
 * checked on the address the socket got, not on the name it was given
 * (a name like "127.example" may resolve to any address, 0.0.0.0 too). */
static int check_noauth(int fd, const char *addr, char *why, size_t whylen)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char name[80];

	if (getsockname(fd, (struct sockaddr *)&ss, &sl) != 0)
		return -errno;
	if (is_loopback(&ss))
		return 0;
	ferry__addr_str((struct sockaddr *)&ss, sl, name, sizeof(name));
	ferry__why(why, whylen,
		   "refusing to listen on %s (from '%s') without authentication: "
		   "only a loopback address may go without a key; give --key FILE",
		   name, addr ? addr : "every address");
	return -FERRY_EAUTH;
}

int ferry_server_open(const char *addr, const char *port,
		      const struct ferry_opts *o, struct ferry_server **out,
		      char *why, size_t whylen)
{
	struct ferry_server *srv;
	int err;

	err = ferry_opts_check(o, why, whylen);
	if (err)
		return err;
	srv = calloc(1, sizeof(*srv));
	if (!srv)
		return -ENOMEM;
	srv->o = *o;
	err = ferry__gate_open(&srv->gate);
	if (err) {
		free(srv);
		return err;
	}
	pthread_mutex_init(&srv->lock, NULL);
	pthread_cond_init(&srv->freed, NULL);
	if (o->exports) {
		err = ferry__daemon_open(o->exports, &srv->d, why, whylen);
		if (err) {
			ferry__gate_close(srv->gate);
			free(srv);
			return err;
		}
		srv->o.dir = ferry__exports_root(srv->d->ex);
		srv->o.key = NULL; /* every client names its key */
	}
	err = ferry__listen(addr, port, &srv->fd, why, whylen);
	/* this end's own class, from the SYN-ACK on (accepted connections
	 * inherit it), for senders that name none */
	if (!err) {
		err = ferry__dscp_set(srv->fd, o->dscp);
		if (err) {
			ferry__why(why, whylen,
				   "cannot mark the control port with DSCP %d: %s",
				   o->dscp, ferry_strerror(err));
			close(srv->fd);
		}
	}
	if (err) {
		ferry__daemon_close(srv->d);
		ferry__gate_close(srv->gate);
		free(srv);
		return err;
	}
	if (!o->key && !srv->d) {
		err = check_noauth(srv->fd, addr, why, whylen);
		if (err) {
			close(srv->fd);
			ferry__daemon_close(srv->d);
			ferry__gate_close(srv->gate);
			free(srv);
			return err;
		}
	}
	*out = srv;
	return 0;
}

int ferry_server_fd(const struct ferry_server *srv)
{
	return srv->fd;
}

int ferry_server_accept(struct ferry_server *srv, char *peer, size_t peerlen)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	int fd = ferry__accept(srv->fd, &ss, &sl), err;

	if (fd < 0)
		return fd;
	ferry__addr_str((struct sockaddr *)&ss, sl, peer, peerlen);
	err = ferry__gate_enter(srv->gate, fd, &ss);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

void ferry_server_close(struct ferry_server *srv)
{
	if (!srv)
		return;
	close(srv->fd);
	ferry__daemon_close(srv->d);
	ferry__gate_close(srv->gate);
	pthread_cond_destroy(&srv->freed);
	pthread_mutex_destroy(&srv->lock);
	free(srv);
}

void ferry_server_limit(struct ferry_server *srv, unsigned max_sessions)
{
	pthread_mutex_lock(&srv->lock);
	srv->max_admitted = max_sessions;
	pthread_cond_broadcast(&srv->freed);
	pthread_mutex_unlock(&srv->lock);
}

/* An authenticated client waits for a session slot, at most timeout_ms;
 * a client still in its handshake holds none. 0, or -EBUSY with why. */
static int admit(struct ferry_server *srv, int timeout_ms, char *why,
		 size_t whylen)
{
	struct timespec until;
	int err = 0;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += timeout_ms / 1000;
	until.tv_nsec += (long)(timeout_ms % 1000) * 1000000l;
	if (until.tv_nsec >= 1000000000l) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000l;
	}
	pthread_mutex_lock(&srv->lock);
	while (srv->max_admitted && srv->admitted >= srv->max_admitted && !err)
		err = pthread_cond_timedwait(&srv->freed, &srv->lock, &until);
	if (srv->max_admitted && srv->admitted >= srv->max_admitted) {
		ferry__why(why, whylen,
			   "receiver busy: %u session(s) running, its limit (--max-sessions); try again later",
			   srv->admitted);
		err = -EBUSY;
	} else {
		srv->admitted++;
		err = 0;
	}
	pthread_mutex_unlock(&srv->lock);
	return err;
}

static void release(struct ferry_server *srv)
{
	pthread_mutex_lock(&srv->lock);
	srv->admitted--;
	pthread_cond_signal(&srv->freed);
	pthread_mutex_unlock(&srv->lock);
}

/* Check the client's proposal against this receiver's limits. On refusal,
 * the client is told why and so is the caller. */
static int check_proposal(struct ferry_server *srv, struct ferry__pipe *p,
			  const struct ferry_params *pr, char *why,
			  size_t whylen)
{
	int err;

	if (pr->mode == FERRY_MODE_FILES && !srv->o.dir) {
		ferry__why(why, whylen,
			   "this receiver takes no files: it was started without --dir");
		return -FERRY_ENEGOTIATE;
	}
	if (pr->mode != FERRY_MODE_BENCH && pr->mode != FERRY_MODE_FILES &&
	    pr->mode != FERRY_MODE_OSU) {
		ferry__why(why, whylen, "unknown session mode %u", pr->mode);
		return -FERRY_ENEGOTIATE;
	}
	err = ferry__pipe_geometry(p, pr->streams, pr->chunk_size, pr->slots,
				   why, whylen);
	if (err)
		return -FERRY_ENEGOTIATE;
	if (p->slots != pr->slots) {
		ferry__why(why, whylen,
			   "%u slots do not split evenly over %u streams",
			   pr->slots, pr->streams);
		return -FERRY_ENEGOTIATE;
	}
	if (p->stride * p->slots > srv->o.max_mem) {
		ferry__why(why, whylen,
			   "a ring of %llu MiB is over this receiver's limit of %llu MiB (--max-mem)",
			   (unsigned long long)((p->stride * p->slots) >> 20),
			   (unsigned long long)(srv->o.max_mem >> 20));
		return -FERRY_ENEGOTIATE;
	}
	return 0;
}

static int refuse(int fd, int err, const char *why)
{
	ferry__ctrl_send_error(fd, err, "%s", why);
	return err;
}

/* What a session knows about its client. */
struct session_ctx {
	struct ferry__daemon *d; /* NULL: not a daemon */
	struct ferry__who who;
	struct ferry_msg_path path; /* the sender's PATH, when it sent one */
	bool has_path;
	int dscp;      /* the session's: the sender's TCLASS, else ours */
	bool has_tclass;
};

/* Set up the pipeline and answer ACCEPT; then wait for the data streams
 * and READY. */
static int setup(struct ferry_server *srv, struct ferry__pipe *p, int fd,
		 const struct ferry_params *pr, const struct session_ctx *sc,
		 struct ferry_report *rep, char *why, size_t whylen)
{
	const struct ferry_opts *o = &srv->o;
	struct ferry_xport_attr xa = { .timeout_ms = o->timeout_ms,
				       .conf = &o->xport };
	struct sockaddr_storage peer;
	socklen_t peer_len = sizeof(peer);
	struct ferry_msg m = { .type = FERRY_MSG_ACCEPT };
	size_t blob_len = sizeof(m.u.accept.ep.data);
	struct ferry__xpick pick;
	struct ferry__xscan xs = { 0 };
	struct ferry__path_plan pl = { 0 };
	struct ferry_msg_path rx;
	uint32_t skip = 0;
	int err;

	xa.addr_len = sizeof(xa.addr);
	xa.dscp = sc->dscp;
	getsockname(fd, (struct sockaddr *)&xa.addr, &xa.addr_len);
	getpeername(fd, (struct sockaddr *)&peer, &peer_len);
	if (sc->has_path) {
		ferry__path_local(o, fd, (struct sockaddr *)&peer, peer_len,
				  false, &rx);
		ferry__path_answer(&sc->path, &rx);
	}
	xa.n_ep = p->streams;
	/* every transport probed once for the session: the choice (and the
	 * next one, when a chosen one fails to listen) reads the scan */
	err = ferry__xport_scan(o->transport, &o->xport, &xs,
				rep->transport_why, sizeof(rep->transport_why));
	if (err) {
		ferry__why(why, whylen, "%s", rep->transport_why);
		return refuse(fd, err, why);
	}
	for (;;) {
		err = ferry__xport_choose(&xs, pr->transports, skip,
					  (struct sockaddr *)&xa.addr,
					  xa.addr_len, &pick,
					  rep->transport_why,
					  sizeof(rep->transport_why));
		if (err) {
			/* auto: the last transport's failure says more */
			if (!skip)
				ferry__why(why, whylen, "%s",
					   rep->transport_why);
			return refuse(fd, err, why);
		}
		p->ops = pick.ops;
		xa.family = pick.family;
		if (sc->has_path) {
			/* the plan for this transport: tcp's streams and
			 * buffers, every transport's ring */
			ferry__path_plan(&sc->path, &rx, pr,
					 !strcmp(pick.ops->name, "tcp"), &pl);
			err = ferry__pipe_geometry(p, pl.streams,
						   pr->chunk_size, pl.slots,
						   why, whylen);
			if (err)
				return refuse(fd, -FERRY_ENEGOTIATE, why);
			xa.n_ep = p->streams;
			xa.sockbuf = pl.sockbuf;
			xa.rtt_ns = (uint64_t)(pl.rtt_s * 1e9);
		}
		err = ferry__pipe_poll_mode(p, o->poll_mode, why, whylen);
		if (err >= 0) {
			p->poll_mode = xa.poll_mode = err;
			err = p->ops->open(&xa, &p->x, why, whylen);
		}
		if (!err)
			err = ferry__pipe_memory(p, o, (struct sockaddr *)&peer,
						 peer_len, why, whylen);
		if (!err)
			err = p->ops->listen(p->x, p->mr, m.u.accept.ep.data,
					     &blob_len, why, whylen);
		/* auto: a transport this host has may still not reach this
		 * peer (an RDMA NIC, a peer on loopback): try the next */
		if (!err || xs.want)
			break;
		ferry__log(FERRY_LOG_INFO, "%s does not reach %s: %s; trying the next transport",
			   p->ops->name, rep->peer, why);
		skip |= ferry__xport_bit(p->ops);
		ferry__pipe_release(p);
		blob_len = sizeof(m.u.accept.ep.data);
	}
	if (!err)
		err = ferry__random(&p->xfer_id, sizeof(p->xfer_id));
	if (err)
		return refuse(fd, err, why);
	snprintf(rep->peer_transport, sizeof(rep->peer_transport), "%s",
		 pick.peer);
	if (sc->has_path && p->role == FERRY__RECEIVER &&
	    !o->xport.tcp.kernel_windows)
		ferry__pipe_fit_start(p, pl.rtt_s, pl.sockbuf);
	if (sc->has_path) {
		struct ferry_msg mp = { .type = FERRY_MSG_PATH };

		mp.u.path = rx;
		mp.u.path.sockbuf = pl.sockbuf;
		ferry__path_report(&pl, rep);
		err = ferry__ctrl_send(fd, &mp, o->timeout_ms);
		if (err)
			return err;
	}
	m.u.accept.params = *pr;
	m.u.accept.params.streams = p->streams;
	m.u.accept.params.slots = p->slots;
	m.u.accept.params.transports = ferry__xport_answer(&pick);
	m.u.accept.params.depth = p->depth;
	m.u.accept.params.xfer_id = p->xfer_id;
	m.u.accept.ep.len = (uint16_t)blob_len;
	err = ferry__ctrl_send(fd, &m, o->timeout_ms);
	if (err)
		return err;
	err = ferry__ctrl_recv(fd, &m, o->timeout_ms);
	if (!err && m.type != FERRY_MSG_READY)
		err = -FERRY_EPROTO;
	if (err) {
		ferry__why(why, whylen, "the sender did not start: %s",
			   ferry_strerror(err));
		return err;
	}
	err = p->ops->accept(p->x, m.u.ready.data, m.u.ready.len, why, whylen);
	if (err)
		return refuse(fd, err, why);
	return err;
}

static int bench_msg(void *ctx, int fd, const struct ferry_msg *m,
		     char *why, size_t whylen)
{
	(void)ctx;
	(void)fd;
	if (m->type == FERRY_MSG_FIN)
		return 1;
	ferry__why(why, whylen, "unexpected %s from the sender",
		   ferry__ctrl_type_name(m->type));
	return -FERRY_EPROTO;
}

/* Data phase: report intervals and serve the hooks until FIN, an error,
 * or the sender going away. */
static int run(struct ferry_server *srv, struct ferry__pipe *p, int fd,
	       const struct ferry__hooks *h, struct ferry_report *rep,
	       char *why, size_t whylen)
{
	const struct ferry_opts *o = &srv->o;
	struct ferry_msg *m = malloc(sizeof(*m));
	int err = 0;

	if (!m)
		return -ENOMEM;
	for (;;) {
		struct pollfd pf[2] = { { .fd = fd, .events = POLLIN },
					{ .fd = h->wake_fd, .events = POLLIN } };
		int n = poll(pf, h->wake_fd >= 0 ? 2 : 1,
			     ferry__pipe_next_tick_ms(p, o));

		ferry__pipe_tick(p, o, rep, false);
		ferry__pipe_fit_tick(p);
		if (o->cancel && atomic_load(o->cancel)) {
			err = -ECANCELED;
			ferry__why(why, whylen,
				   "shutting down (stopped by its operator); what was verified is kept: run the same transfer again once it is back");
			refuse(fd, err, why);
			goto fail;
		}
		if (atomic_load(&p->abort)) {
			ferry__pipe_join(p);
			err = ferry__pipe_error(p, why, whylen);
			if (!err) {
				err = -FERRY_EPROTO;
				ferry__why(why, whylen, "session aborted");
			}
			refuse(fd, err, why);
			goto out;
		}
		if (n > 0 && h->wake_fd >= 0 && (pf[1].revents & POLLIN)) {
			err = h->work(h->ctx, fd, why, whylen);
			if (err)
				goto fail;
		}
		if (h->tick) {
			err = h->tick(h->ctx, fd, why, whylen);
			if (err)
				goto fail;
		}
		if (n <= 0 || !(pf[0].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		err = ferry__ctrl_recv(fd, m, o->timeout_ms);
		if (err == -FERRY_EPEER) {
			ferry__peer_error(m, "sender", why, whylen);
			goto fail;
		}
		if (err) {
			ferry__why(why, whylen,
				   "the sender went away mid-session: %s",
				   ferry_strerror(err));
			goto fail;
		}
		err = h->msg(h->ctx, fd, m, why, whylen);
		if (err == 1)
			break;
		if (err < 0) {
			refuse(fd, err, why);
			goto fail;
		}
	}
	/* FIN: the sender holds every credit back, so all chunks landed */
	ferry__pipe_stop(p);
	ferry__pipe_join(p);
	ferry__pipe_tick(p, o, rep, true);
	ferry__pipe_report(p, rep);
	err = ferry__pipe_error(p, why, whylen);
	if (err) {
		refuse(fd, err, why);
		goto out;
	}
	rep->peer_bytes = m->u.fin.bytes;
	memset(&m->u, 0, sizeof(m->u));
	m->type = FERRY_MSG_RESULT;
	m->u.result.bytes = rep->bytes;
	m->u.result.chunks = rep->chunks;
	m->u.result.crc_errors = rep->crc_errors;
	m->u.result.cpu_user_us = (uint64_t)(rep->cpu_user * 1e6);
	m->u.result.cpu_sys_us = (uint64_t)(rep->cpu_sys * 1e6);
	err = ferry__ctrl_send(fd, m, o->timeout_ms);
	if (!err && rep->bytes != rep->peer_bytes) {
		ferry__why(why, whylen,
			   "the sender sent %llu bytes, %llu arrived",
			   (unsigned long long)rep->peer_bytes,
			   (unsigned long long)rep->bytes);
		err = -FERRY_EPROTO;
	}
	goto out;
fail:
	ferry__pipe_abort(p);
	ferry__pipe_join(p);
	ferry__pipe_report(p, rep);
out:
	free(m);
	return err;
}

/* A push session on a daemon: every file must be one the client's key
 * may write (and, with --force, delete where one would be replaced), or,
 * for a token, exactly what the token names. */
static int check_files(void *arg, const char *dest, uint32_t flags,
		       const struct ferry_manifest *m, char *why,
		       size_t whylen)
{
	const struct session_ctx *sc = arg;
	char path[FERRY_PATH_MAX + FERRY_DEST_MAX];
	int err;

	if (sc->who.token)
		return ferry__tokens_check(sc->d->tokens, sc->who.name, dest,
					   flags, m, why, whylen);
	for (size_t i = 0; i < m->n; i++) {
		snprintf(path, sizeof(path), "%s%s%s", dest,
			 dest[0] ? "/" : "", m->e[i].path);
		err = ferry__exports_allow(sc->d->ex, sc->who.name,
					   FERRY__RIGHT_WRITE, path, why,
					   whylen);
		if (!err && (flags & FERRY_FILES_FORCE) &&
		    m->e[i].type == FERRY_ENTRY_FILE)
			err = ferry__daemon_may_replace(sc->d, sc->who.name,
							path, why, whylen);
		if (err)
			return err;
	}
	if (!m->n && dest[0])
		return ferry__exports_allow(sc->d->ex, sc->who.name,
					    FERRY__RIGHT_WRITE, dest, why,
					    whylen);
	return 0;
}

/* Authenticate: with one key, or on a daemon by the name the client
 * gives (a token is claimed here, once). */
static int authenticate(struct ferry_server *srv, int fd,
			struct session_ctx *sc, struct ferry_report *rep,
			char *why, size_t whylen)
{
	const struct ferry_opts *o = &srv->o;
	struct ferry__auth_cfg cfg = { .key = o->key,
				       .t0_ns = ferry__now_ns() };
	struct ferry__authed au;
	/* the handshake gets at most FERRY_CTRL_HANDSHAKE_TIMEOUT_MS in all,
	 * whatever --timeout says, and its first byte comes sooner: a peer
	 * that connects and says nothing holds a thread no longer than that
	 * (and the gate closes it sooner when others need the room) */
	int bound = o->timeout_ms < FERRY_CTRL_HANDSHAKE_TIMEOUT_MS ?
			    o->timeout_ms : FERRY_CTRL_HANDSHAKE_TIMEOUT_MS;
	int first = bound < FERRY_CTRL_FIRST_BYTE_MS ? bound :
						       FERRY_CTRL_FIRST_BYTE_MS;
	int err;

	if (srv->d) {
		cfg.lookup = ferry__daemon_lookup;
		cfg.arg = srv->d;
	}
	err = ferry__gate_first_byte(srv->gate, fd, first);
	if (err == -FERRY_ETIMEOUT) {
		ferry__why(why, whylen, "waiting for the client's HELLO: %s "
			   "(%.1f s)", ferry_strerror(err), first / 1000.0);
		return err;
	}
	if (!err)
		err = ferry__ctrl_auth_server_ex(fd, &cfg, bound, &au, why,
						 whylen);
	if (err)
		return err;
	sc->d = srv->d;
	snprintf(sc->who.name, sizeof(sc->who.name), "%s", au.name);
	memcpy(sc->who.wrap, au.wrap, sizeof(sc->who.wrap));
	snprintf(rep->client, sizeof(rep->client), "%s", au.name);
	if (!srv->d)
		return 0;
	sc->who.token = strncmp(au.name, FERRY__TOKEN_PREFIX,
				strlen(FERRY__TOKEN_PREFIX)) == 0;
	if (sc->who.token) {
		err = ferry__tokens_claim(srv->d->tokens, au.name, why, whylen);
		if (err)
			return refuse(fd, err, why);
	}
	return 0;
}

/* Requests before the session proper (daemons only): serve REQs until the
 * client proposes a session (1, m holds the PROPOSE) or goes away (0): it
 * may stay idle between requests for FERRY__IDLE_MS. */
#define FERRY__IDLE_MS 60000
static int requests(struct ferry_server *srv, int fd,
		    struct session_ctx *sc, struct ferry_msg *m,
		    struct ferry_report *rep, char *why, size_t whylen)
{
	const struct ferry_opts *o = &srv->o;
	int err;

	for (;;) {
		err = ferry__ctrl_recv(fd, m, rep->requests ? FERRY__IDLE_MS :
							      o->timeout_ms);
		if ((err == -FERRY_ECLOSED || err == -FERRY_ETIMEOUT) &&
		    rep->requests)
			return 0; /* a client done with its requests */
		if (!err && m->type == FERRY_MSG_PROPOSE && sc->who.token &&
		    m->u.propose.mode != FERRY_MODE_FILES) {
			ferry__why(why, whylen,
				   "a transfer token opens a file session, nothing else");
			return refuse(fd, -EACCES, why);
		}
		if (!err && m->type == FERRY_MSG_TCLASS && !sc->has_tclass &&
		    !sc->has_path) {
			/* the sender's class, on our packets too from now */
			sc->has_tclass = true;
			sc->dscp = rep->dscp = m->u.tclass.dscp;
			err = ferry__dscp_set(fd, sc->dscp);
			if (err) {
				ferry__why(why, whylen,
					   "cannot mark the control connection with DSCP %d: %s",
					   sc->dscp, ferry_strerror(err));
				return refuse(fd, err, why);
			}
			continue;
		}
		if (!err && m->type == FERRY_MSG_PATH && !sc->has_path) {
			sc->path = m->u.path; /* PROPOSE follows */
			sc->has_path = true;
			continue;
		}
		if (!err && m->type == FERRY_MSG_PROPOSE)
			return 1;
		if (!err && m->type != FERRY_MSG_REQ)
			err = -FERRY_EPROTO;
		if (err) {
			ferry__why(why, whylen, "no proposal from the client: %s",
				   ferry_strerror(err));
			return err;
		}
		rep->requests++;
		if (!srv->d) {
			ferry__ctrl_send_error(fd, ENOTSUP,
					       "this receiver serves no requests: it runs without --exports");
			continue;
		}
		if (m->u.req.op == FERRY_REQ_PUSH)
			err = ferry__push_serve(srv->d, &sc->who, &srv->o, fd,
						&m->u.req, why, whylen);
		else
			err = ferry__daemon_serve(srv->d, &sc->who, fd,
						  &m->u.req, o->timeout_ms);
		if (err) {
			ferry__why(why, whylen, "serving a request: %s",
				   ferry_strerror(err));
			return err;
		}
	}
}

int ferry_server_session(struct ferry_server *srv, int fd,
			 struct ferry_report *rep, char *why, size_t whylen)
{
	const struct ferry_opts *o = &srv->o;
	struct ferry__pipe p = { .role = FERRY__RECEIVER,
				 .timeout_ms = o->timeout_ms,
				 .dp = &ferry__bench_dp };
	struct ferry__hooks h = { .wake_fd = -1, .msg = bench_msg };
	struct ferry__frx *files = NULL;
	struct session_ctx sc = { 0 };
	struct ferry__frx_check fc = { .fn = check_files, .arg = &sc };
	struct sockaddr_storage peer;
	socklen_t peer_len = sizeof(peer);
	struct ferry_msg *mp = malloc(sizeof(*mp));
	bool admitted = false;
	int err;

	if (!mp) {
		close(fd);
		return -ENOMEM;
	}

	memset(rep, 0, sizeof(*rep));
	rep->peer_cpu_user = rep->peer_cpu_sys = -1;
	rep->numa_node = -1;
	rep->dscp = sc.dscp = o->dscp; /* until the sender names its own */
	ferry__metrics_session_begin(FERRY__M_RECEIVER);
	getpeername(fd, (struct sockaddr *)&peer, &peer_len);
	ferry__addr_str((struct sockaddr *)&peer, peer_len, rep->peer,
			sizeof(rep->peer));
	err = authenticate(srv, fd, &sc, rep, why, whylen);
	/* out of the gate, either way; closed by it, the session says so */
	if (ferry__gate_leave(srv->gate, fd, why, whylen) && !err)
		err = -ECONNABORTED;
	if (err)
		goto out;
	err = admit(srv, o->timeout_ms, why, whylen);
	if (err) {
		refuse(fd, err, why);
		goto out;
	}
	admitted = true;
	err = requests(srv, fd, &sc, mp, rep, why, whylen);
	if (err <= 0)
		goto out;
	err = check_proposal(srv, &p, &mp->u.propose, why, whylen);
	if (err) {
		refuse(fd, err, why);
		goto out;
	}
	if (mp->u.propose.mode == FERRY_MODE_FILES) {
		files = calloc(1, sizeof(*files));
		if (!files) {
			err = -ENOMEM;
			goto out;
		}
		err = ferry__frx_open(files, fd, o, p.chunk,
				      srv->d ? &fc : NULL, why, whylen);
		if (err)
			goto out;
		rep->files_total = files->m.n_files;
		rep->bytes_total = files->m.total_bytes;
		p.dp = &ferry__files_rx_dp;
		p.dp_ctx = files;
		h = (struct ferry__hooks){ .wake_fd = files->q.efd,
					   .work = ferry__frx_work,
					   .msg = ferry__frx_msg,
					   .tick = ferry__frx_tick,
					   .ctx = files };
	}
	if (mp->u.propose.mode == FERRY_MODE_OSU) {
		err = ferry__osu_serve(&p, &mp->u.propose, why, whylen);
		if (err) {
			refuse(fd, err, why);
			goto out;
		}
	}
	err = setup(srv, &p, fd, &mp->u.propose, &sc, rep, why, whylen);
	if (err)
		goto out;
	ferry__pipe_report(&p, rep);
	err = ferry__pipe_start(&p, p.worker ? p.worker : ferry__recv_worker);
	if (!err)
		err = run(srv, &p, fd, &h, rep, why, whylen);
out:
	ferry__osu_free(&p); /* after its workers, before the pipe goes */
	ferry__pipe_free(&p);
	if (files) {
		rep->files_done = files->published;
		rep->files_failed = files->failed;
		rep->files_skipped = files->skipped;
		rep->files_resumed = files->resumed;
		ferry__frx_close(files, err == 0);
		free(files);
		ferry__metrics_files(FERRY__M_RECEIVER, rep);
	}
	ferry__metrics_session_end(FERRY__M_RECEIVER, err);
	close(fd);
	if (admitted)
		release(srv);
	free(mp);
	return err;
}
