/* Push, pull and third-party copy (daemon/remote.h).
 *
 * Pull and third-party copy are one mechanism: a PUSH request asks the
 * source daemon to send its files to a receiver with a one-time token.
 * For a pull the receiver is a one-shot server this process opens, its
 * key a fresh random secret; for a third-party copy it is the destination
 * daemon, and the token comes from it.
 */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "daemon/remote.h"
#include "daemon/tokens.h"
#include "pipe/session.h"
#include "util/util.h"

int ferry_remote_push(const char *host, const char *port,
		      const struct ferry_opts *o, const struct ferry_copy *cp,
		      struct ferry_report *rep, char *why, size_t whylen)
{
	struct ferry_send_spec ss = {
		.paths = cp->src,
		.n_paths = cp->n,
		.names = cp->names,
		.dest = cp->dest,
		.cksum = cp->cksum,
		.force = cp->force,
		.skip_existing = cp->skip_existing,
		.follow_symlinks = cp->follow_symlinks,
		.files = FERRY_DEFAULT_FILES,
		.on_file = cp->on_file,
		.arg = cp->arg,
	};
	struct ferry_report *own = rep ? NULL : malloc(sizeof(*own));
	int err;

	if (!rep && !own)
		return -ENOMEM;
	err = ferry_send(host, port, o, &ss, rep ? rep : own, why, whylen);
	free(own);
	return err;
}

int ferry__remote_token(struct ferry_remote *dst, const struct ferry_copy *cp,
			const uint64_t *sizes, unsigned ttl_s,
			char name[FERRY_KEYNAME_MAX + 1],
			struct ferry_key *secret, uint64_t *expiry, char *why,
			size_t whylen)
{
	struct ferry_msg *m = malloc(sizeof(*m));
	struct ferry_token_reply tr;
	struct ferry_manifest man;
	uint8_t *buf = malloc(FERRY_REQ_DATA_MAX);
	size_t next = 0, len;
	int err = 0;

	ferry__manifest_init(&man);
	if (!m || !buf) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < cp->n && !err; i++) {
		err = ferry__manifest_add(&man, cp->names[i], NULL,
					  FERRY_ENTRY_FILE, 0644, sizes[i], 0);
		if (err == -EINVAL)
			ferry__why(why, whylen, "%.200s: not a valid target name "
				   "(a relative path without '.', '..' or empty "
				   "components)", cp->names[i]);
	}
	if (err)
		goto out;
	len = ferry__manifest_encode(&man, &next, buf, FERRY_REQ_DATA_MAX);
	if (next != man.n) {
		ferry__why(why, whylen,
			   "too many files for one third-party copy (their names exceed %d bytes); copy them in parts",
			   FERRY_REQ_DATA_MAX);
		err = -E2BIG;
		goto out;
	}
	err = ferry__remote_call(dst, FERRY_REQ_TOKEN, cp->dest,
				 cp->force ? FERRY_FILES_FORCE : 0, ttl_s, buf,
				 len, m, why, whylen);
	if (err)
		goto out;
	err = ferry__token_decode(m->u.reply.data, m->u.reply.len, &tr);
	if (!err)
		err = ferry__ctrl_wrap(dst->wrap, tr.name, tr.secret,
				       secret->bytes);
	if (err) {
		ferry__why(why, whylen, "%s: a malformed token", dst->peer);
		goto out;
	}
	snprintf(name, FERRY_KEYNAME_MAX + 1, "%s", tr.name);
	*expiry = m->u.reply.arg;
out:
	ferry__manifest_free(&man);
	free(buf);
	free(m);
	return err;
}

/* Results of a PUSH, as the client sees them. */
struct push_wait {
	const struct ferry_copy *cp;
	int first_err;
	char *why;
	size_t whylen;
};

static int one_result(void *arg, const struct ferry_push_result *r)
{
	struct push_wait *pw = arg;
	struct ferry_file_result fr = {
		.path = r->name,
		.size = r->size,
		.bytes_sent = r->bytes_sent,
		.cksum = pw->cp->cksum,
		.value = pw->cp->cksum == FERRY_CKSUM_CRC32C ? r->crc32c :
							      r->adler32,
		.adler32 = r->adler32,
		.crc32c = r->crc32c,
		.skipped = r->skipped,
		.status = -r->status,
		.why = r->why,
	};

	if (r->status && !pw->first_err) {
		pw->first_err = -r->status;
		ferry__why(pw->why, pw->whylen, "%s: %s", r->name, r->why);
	}
	if (pw->cp->on_file)
		pw->cp->on_file(&fr, pw->cp->arg);
	return 0;
}

static void marker_of(const struct ferry_msg_marker *mm,
		      struct ferry_marker *mk)
{
	*mk = (struct ferry_marker){
		.bytes = mm->bytes,
		.total = mm->total,
		.rate = mm->rate,
		.elapsed = mm->elapsed_ms / 1000.0,
		.files_done = mm->files_done,
		.files_total = mm->files_total,
	};
}

/* Fill a PUSH spec from cp; the secret goes wrapped under src's key. */
static int push_spec(struct ferry_push_spec *ps, struct ferry_remote *src,
		     const char *dst_host, const char *dst_port,
		     const struct ferry_opts *o, const char *token,
		     const struct ferry_key *secret,
		     const struct ferry_copy *cp, char *why, size_t whylen)
{
	memset(ps, 0, sizeof(*ps));
	if (strlen(dst_host) > FERRY_PUSH_HOST_MAX ||
	    strlen(dst_port) > FERRY_PUSH_PORT_MAX ||
	    strlen(cp->dest) >= sizeof(ps->dest) || cp->n > FERRY_PUSH_MAX_ITEMS) {
		ferry__why(why, whylen,
			   "a copy of at most %d files, to a host and directory of sane length",
			   FERRY_PUSH_MAX_ITEMS);
		return -E2BIG;
	}
	snprintf(ps->host, sizeof(ps->host), "%s", dst_host);
	snprintf(ps->port, sizeof(ps->port), "%s", dst_port);
	if (o->transport && strcmp(o->transport, "auto") != 0)
		snprintf(ps->transport, sizeof(ps->transport), "%s",
			 o->transport);
	snprintf(ps->token, sizeof(ps->token), "%s", token);
	snprintf(ps->dest, sizeof(ps->dest), "%s", cp->dest);
	ps->cksum = cp->cksum;
	ps->streams = o->fixed & FERRY_FIXED_STREAMS ? o->streams : 0;
	ps->flags = (cp->force ? FERRY_FILES_FORCE : 0) |
		    (cp->skip_existing ? FERRY_FILES_SKIP_EXISTING : 0);
	ps->marker_ms = cp->marker_ms;
	ps->n = (uint32_t)cp->n;
	ps->items = calloc(cp->n + 1, sizeof(*ps->items));
	if (!ps->items)
		return -ENOMEM;
	for (size_t i = 0; i < cp->n; i++) {
		const char *s = cp->src[i];
		bool name_ok = ferry__path_valid(cp->names[i]);

		/* what the PUSH encoder would refuse, named */
		if (!name_ok || !ferry__path_valid(s[0] == '/' ? s + 1 : s)) {
			ferry__why(why, whylen, "%.200s: not a valid %s (a "
				   "path without '.', '..' or empty components)",
				   name_ok ? s : cp->names[i],
				   name_ok ? "source path" : "target name");
			return -EINVAL;
		}
		ps->items[i].src = cp->src[i];
		ps->items[i].name = cp->names[i];
	}
	return ferry__ctrl_wrap(src->wrap, token, secret->bytes, ps->secret);
}

/* Wait until the daemon says something, at most wait_ms (< 0: no limit),
 * watching o->cancel: cancelled, this side closes the connection and the
 * daemon stops at its next marker. */
static int wait_answer(struct ferry_remote *c, const struct ferry_opts *o,
		       int wait_ms, char *why, size_t whylen)
{
	uint64_t until = ferry__now_ns() + (uint64_t)wait_ms * 1000000ull;

	for (;;) {
		struct pollfd pf = { .fd = c->fd, .events = POLLIN };
		int n = poll(&pf, 1, 200);

		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return -errno;
		if (o->cancel && atomic_load(o->cancel)) {
			ferry__why(why, whylen, "cancelled");
			return -ECANCELED;
		}
		if (wait_ms >= 0 && ferry__now_ns() >= until) {
			ferry__why(why, whylen, "%s: no progress for %d s",
				   c->peer, wait_ms / 1000);
			return -FERRY_ETIMEOUT;
		}
	}
}

int ferry__remote_push_req(struct ferry_remote *src, const char *dst_host,
			   const char *dst_port, const struct ferry_opts *o,
			   const char *token, const struct ferry_key *secret,
			   const struct ferry_copy *cp, char *why,
			   size_t whylen)
{
	struct push_wait pw = { .cp = cp, .why = why, .whylen = whylen };
	struct ferry_msg *m = malloc(sizeof(*m));
	uint8_t *buf = malloc(FERRY_REQ_DATA_MAX);
	struct ferry_push_spec ps = { 0 };
	struct ferry_marker mk;
	/* markers come every few seconds during the data phase; before it,
	 * the source dials and the destination plans */
	int wait_ms = src->timeout_ms < 0 ? -1 : 3 * src->timeout_ms + 60000;
	size_t len;
	int err;

	if (!m || !buf) {
		err = -ENOMEM;
		goto out;
	}
	err = push_spec(&ps, src, dst_host, dst_port, o, token, secret, cp,
			why, whylen);
	if (!err)
		err = ferry__push_encode(&ps, buf, FERRY_REQ_DATA_MAX, &len);
	if (err == -FERRY_ETOOBIG)
		ferry__why(why, whylen,
			   "too many files for one request (over %d bytes of names); copy them in parts",
			   FERRY_REQ_DATA_MAX);
	if (!err)
		err = ferry__remote_send(src, FERRY_REQ_PUSH, "", 0, 0, buf, len,
					 m, why, whylen);
	if (!err)
		err = wait_answer(src, o, wait_ms, why, whylen);
	if (!err)
		err = ferry__remote_answer(src, FERRY_REQ_PUSH, m,
					   src->timeout_ms, why, whylen);
	while (!err) {
		if (m->type == FERRY_MSG_MARKER) {
			marker_of(&m->u.marker, &mk);
			if (cp->on_marker)
				cp->on_marker(&mk, cp->arg);
		} else {
			err = ferry__results_decode(m->u.reply.data,
						    m->u.reply.len, one_result,
						    &pw);
			if (err) {
				ferry__why(why, whylen, "%s: malformed results",
					   src->peer);
				break;
			}
			if (m->u.reply.flags & FERRY_REPLY_LAST)
				break;
		}
		err = wait_answer(src, o, wait_ms, why, whylen);
		if (!err)
			err = ferry__remote_answer(src, FERRY_REQ_PUSH, m,
						   src->timeout_ms, why, whylen);
	}
	if (!err && pw.first_err)
		err = pw.first_err;
out:
	free(ps.items); /* the strings are cp's */
	OPENSSL_cleanse(ps.secret, sizeof(ps.secret));
	free(buf);
	free(m);
	return err;
}

/* A token name for a pull: "token:" and 32 random hex digits. */
static int pull_token(char name[FERRY_KEYNAME_MAX + 1], struct ferry_key *k)
{
	uint8_t id[16];
	int err = ferry__random(id, sizeof(id));

	if (!err)
		err = ferry__random(k->bytes, sizeof(k->bytes));
	if (err)
		return err;
	strcpy(name, FERRY__TOKEN_PREFIX);
	for (size_t i = 0; i < sizeof(id); i++)
		sprintf(name + strlen(FERRY__TOKEN_PREFIX) + 2 * i, "%02x",
			id[i]);
	return 0;
}

/* The one-shot receiver of a pull: serves sessions until told to stop;
 * the first session that authenticates is the daemon's (only it holds the
 * secret). */
struct pull_rx {
	struct ferry_server *srv;
	pthread_t th;
	atomic_bool stop;
	int err;      /* the daemon's session; 1 until one ran */
	char why[512];
};

static void *pull_rx_main(void *arg)
{
	struct pull_rx *rx = arg;
	struct ferry_report *rep = malloc(sizeof(*rep));
	char peer[80];

	while (rep && !atomic_load(&rx->stop)) {
		struct pollfd pf = { .fd = ferry_server_fd(rx->srv),
				     .events = POLLIN };
		int fd, err;

		if (poll(&pf, 1, 100) <= 0)
			continue;
		fd = ferry_server_accept(rx->srv, peer, sizeof(peer));
		if (fd < 0)
			continue;
		err = ferry_server_session(rx->srv, fd, rep, rx->why,
					   sizeof(rx->why));
		if (err == -FERRY_EAUTH)
			continue; /* not the daemon */
		rx->err = err;
		break;
	}
	free(rep);
	return NULL;
}

/* Open the receiver on the address this host reaches the daemon from. */
static int pull_listen(struct ferry_remote *c, const struct ferry_opts *o,
		       const struct ferry_copy *cp, const struct ferry_key *k,
		       struct pull_rx *rx, char *host, size_t hostlen,
		       char *port, size_t portlen, char *why, size_t whylen)
{
	struct ferry_opts lo;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	int err;

	if (getsockname(c->fd, (struct sockaddr *)&ss, &sl) ||
	    getnameinfo((struct sockaddr *)&ss, sl, host, (socklen_t)hostlen,
			NULL, 0, NI_NUMERICHOST))
		return -errno ? -errno : -EINVAL;
	ferry_opts_init(&lo);
	lo.transport = o->transport;
	lo.key = k;
	lo.dir = cp->dest;
	lo.timeout_ms = o->timeout_ms;
	lo.cpulist = o->cpulist;
	lo.numa_node = o->numa_node;
	lo.xport = o->xport;
	lo.poll_mode = o->poll_mode;
	lo.dscp = o->dscp; /* for a daemon that names no class */
	lo.max_mem = o->max_mem;
	err = ferry_server_open(host, "0", &lo, &rx->srv, why, whylen);
	if (err)
		return err;
	sl = sizeof(ss);
	if (getsockname(ferry_server_fd(rx->srv), (struct sockaddr *)&ss, &sl) ||
	    getnameinfo((struct sockaddr *)&ss, sl, NULL, 0, port,
			(socklen_t)portlen, NI_NUMERICSERV)) {
		ferry_server_close(rx->srv);
		return -EINVAL;
	}
	rx->err = 1;
	if (pthread_create(&rx->th, NULL, pull_rx_main, rx)) {
		ferry_server_close(rx->srv);
		return -EAGAIN;
	}
	return 0;
}

/* One PUSH request carries at most this much: many files go in batches,
 * each its own request (and, for a third-party copy, its own token). */
#define BATCH_FILES 256
#define BATCH_BYTES 16000 /* src + name bytes: the request stays well
			     under FERRY_REQ_DATA_MAX with any dest */

static size_t batch_end(const struct ferry_copy *cp, size_t from)
{
	size_t end = from, bytes = 0;

	while (end < cp->n && end - from < BATCH_FILES) {
		bytes += strlen(cp->src[end]) + strlen(cp->names[end]) + 4;
		if (bytes > BATCH_BYTES && end > from)
			break;
		end++;
	}
	return end;
}

static struct ferry_copy sub_copy(const struct ferry_copy *cp, size_t from,
				  size_t end)
{
	struct ferry_copy sub = *cp;

	sub.n = end - from;
	sub.src = cp->src + from;
	sub.names = cp->names + from;
	return sub;
}

static int pull_batch(const char *host, const char *port,
		      const struct ferry_opts *o, const struct ferry_copy *cp,
		      char *why, size_t whylen);

int ferry_remote_pull(const char *host, const char *port,
		      const struct ferry_opts *o, const struct ferry_copy *cp,
		      char *why, size_t whylen)
{
	int err = 0;

	for (size_t from = 0, end; !err && from < cp->n; from = end) {
		struct ferry_copy sub;

		end = batch_end(cp, from);
		sub = sub_copy(cp, from, end);
		err = pull_batch(host, port, o, &sub, why, whylen);
	}
	return err;
}

static int pull_batch(const char *host, const char *port,
		      const struct ferry_opts *o, const struct ferry_copy *cp,
		      char *why, size_t whylen)
{
	struct ferry_copy rcp = *cp;
	struct ferry_remote c;
	struct pull_rx rx = { 0 };
	struct ferry_key k;
	char token[FERRY_KEYNAME_MAX + 1], lhost[NI_MAXHOST], lport[16];
	int err;

	err = ferry__remote_connect(host, port, o, &c, why, whylen);
	if (err)
		return err;
	err = pull_token(token, &k);
	if (!err)
		err = pull_listen(&c, o, cp, &k, &rx, lhost, sizeof(lhost),
				  lport, sizeof(lport), why, whylen);
	if (err) {
		if (!why[0])
			ferry__why(why, whylen, "opening the local receiver: %s",
				   ferry_strerror(err));
		goto out;
	}
	rcp.dest = ""; /* the receiver's own directory is cp->dest */
	err = ferry__remote_push_req(&c, lhost, lport, o, token, &k, &rcp, why,
				     whylen);
	atomic_store(&rx.stop, true);
	pthread_join(rx.th, NULL);
	ferry_server_close(rx.srv);
	/* the daemon's word covers the session; ours adds what it missed */
	if (err == -FERRY_EPEER && rx.err == 1) {
		char inner[512];

		snprintf(inner, sizeof(inner), "%s", why);
		ferry__why(why, whylen,
			   "the daemon did not reach this host's receiver at %s port %s (a pull needs the daemon to connect back): %s",
			   lhost, lport, inner);
	} else if (!err && rx.err) {
		err = rx.err == 1 ? -FERRY_EPROTO : rx.err;
		ferry__why(why, whylen, "the local receiver: %s",
			   rx.err == 1 ? "no session arrived" : rx.why);
	}
out:
	OPENSSL_cleanse(&k, sizeof(k));
	ferry__remote_disconnect(&c);
	return err;
}

int ferry_remote_tpc(const char *src_host, const char *src_port,
		     const char *dst_host, const char *dst_port,
		     const struct ferry_opts *o, const struct ferry_copy *cp,
		     char *why, size_t whylen)
{
	struct ferry_remote cs = { .fd = -1 }, cd = { .fd = -1 };
	uint64_t *sizes = calloc(cp->n + 1, sizeof(*sizes));
	char token[FERRY_KEYNAME_MAX + 1];
	struct ferry_remote_stat st;
	struct ferry_key k;
	uint64_t expiry;
	int err;

	if (!sizes)
		return -ENOMEM;
	err = ferry__remote_connect(src_host, src_port, o, &cs, why, whylen);
	for (size_t i = 0; !err && i < cp->n; i++) {
		err = ferry_remote_stat(&cs, cp->src[i], &st, why, whylen);
		if (!err && st.type != FERRY_REMOTE_FILE) {
			ferry__why(why, whylen,
				   "%s is %s: only files can be copied between daemons",
				   cp->src[i], st.type == FERRY_REMOTE_DIR ?
						       "a directory" : "not a regular file");
			err = st.type == FERRY_REMOTE_DIR ? -EISDIR : -EINVAL;
		}
		sizes[i] = st.size;
	}
	/* per batch: a token from the destination, a PUSH to the source */
	for (size_t from = 0, end; !err && from < cp->n; from = end) {
		struct ferry_copy sub;

		end = batch_end(cp, from);
		sub = sub_copy(cp, from, end);
		err = ferry__remote_connect(dst_host, dst_port, o, &cd, why,
					    whylen);
		if (!err)
			err = ferry__remote_token(&cd, &sub, sizes + from, 0,
						  token, &k, &expiry, why,
						  whylen);
		ferry__remote_disconnect(&cd);
		if (!err)
			err = ferry__remote_push_req(&cs, dst_host, dst_port, o,
						     token, &k, &sub, why,
						     whylen);
		OPENSSL_cleanse(&k, sizeof(k));
	}
	ferry__remote_disconnect(&cs);
	free(sizes);
	return err;
}
