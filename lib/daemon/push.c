/* A daemon sends its files on a client's behalf (PUSH request): the
 * source side of pull and third-party copy (daemon/remote.h).
 *
 * Each file is checked below the export root with the daemon's resolver
 * (the key's read right, no symlinks, never outside the root, a regular
 * file), and ferry_send opens it through the same resolver
 * (ferry_send_spec.open_source) when it lists it and when it reads it:
 * whatever is renamed meanwhile, only a file below the root at a path
 * the key may read is sent, and only the files in flight are open, so a
 * PUSH of many files needs no descriptor per file. The receiver is
 * whatever the request names; the daemon authenticates to it with the
 * token the client passed (wrapped under this connection's key), never
 * with a key of its own. While the session runs, the client gets a
 * MARKER every marker_ms; at the end, every file's result and a final
 * REPLY LAST (all published) or ERROR (the first failure). A client that
 * goes away (a marker cannot be sent) stops the session.
 */
#include <errno.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "ctrl/req.h"
#include "daemon/daemon.h"
#include "daemon/tokens.h"
#include "ferry/files.h"
#include "pipe/session.h"
#include "util/util.h"

#define MARKER_MS_DEFAULT 2000
#define MARKER_MS_MIN 200

struct push_run {
	int fd;                     /* the client's control connection */
	int timeout_ms;
	bool client_gone;
	atomic_bool cancel;         /* the client went away, or the daemon
				       stops: stop sending */
	atomic_bool *stop;          /* the daemon's own (o->cancel): it is
				       shutting down */
	uint64_t bytes, total;
	uint64_t t0_ns;
	uint32_t files_done, files_total;
	struct ferry_push_result *res;
	size_t n_res;
};

static void send_marker(struct push_run *pr, uint64_t rate)
{
	struct ferry_msg *m;

	if (pr->client_gone)
		return;
	m = calloc(1, sizeof(*m));
	if (!m)
		return;
	m->type = FERRY_MSG_MARKER;
	m->u.marker = (struct ferry_msg_marker){
		.bytes = pr->bytes,
		.total = pr->total,
		.rate = rate,
		.elapsed_ms = (ferry__now_ns() - pr->t0_ns) / 1000000,
		.files_done = pr->files_done,
		.files_total = pr->files_total,
	};
	if (ferry__ctrl_send(pr->fd, m, pr->timeout_ms)) {
		/* nobody waits for these files: stop (the receiver keeps what
		 * arrived, so the same copy resumes) */
		pr->client_gone = true;
		atomic_store(&pr->cancel, true);
	}
	free(m);
}

static void on_interval(const struct ferry_report *r,
			const struct ferry_interval *iv, void *arg)
{
	struct push_run *pr = arg;
	struct pollfd pf = { .fd = pr->fd, .events = POLLIN };
	double dt = iv->end - iv->start;

	if (pr->stop && atomic_load(pr->stop)) {
		atomic_store(&pr->cancel, true);
		return;
	}
	/* the client says nothing while it waits: anything readable is its
	 * connection closing */
	if (poll(&pf, 1, 0) > 0) {
		pr->client_gone = true;
		atomic_store(&pr->cancel, true);
		return;
	}
	pr->bytes += iv->bytes;
	if (r->bytes_total)
		pr->total = r->bytes_total;
	send_marker(pr, dt > 0 ? (uint64_t)(iv->bytes / dt) : 0);
}

static void on_file(const struct ferry_file_result *fr, void *arg)
{
	struct push_run *pr = arg;
	struct ferry_push_result *r;

	if (pr->n_res >= pr->files_total)
		return;
	r = &pr->res[pr->n_res++];
	snprintf(r->name, sizeof(r->name), "%s", fr->path);
	r->status = fr->status < 0 ? -fr->status : fr->status;
	r->adler32 = fr->adler32;
	r->crc32c = fr->crc32c;
	r->size = fr->size;
	r->bytes_sent = fr->bytes_sent;
	r->skipped = fr->skipped;
	snprintf(r->why, sizeof(r->why), "%s", fr->why ? fr->why : "");
	pr->files_done++;
}

/* Every result, then REPLY LAST or the ERROR. */
static int finish(struct push_run *pr, int err, const char *why)
{
	struct ferry_msg *m = calloc(1, sizeof(*m));
	size_t next = 0;
	double elapsed;
	int ret = 0;

	if (!m)
		return -ENOMEM;
	elapsed = (ferry__now_ns() - pr->t0_ns) / 1e9;
	send_marker(pr, elapsed > 0 ? (uint64_t)(pr->bytes / elapsed) : 0);
	while (!ret && next < pr->n_res) {
		memset(m, 0, sizeof(*m));
		m->type = FERRY_MSG_REPLY;
		m->u.reply.op = FERRY_REQ_PUSH;
		m->u.reply.len = (uint32_t)ferry__results_encode(
			pr->res, pr->n_res, &next, m->u.reply.data,
			sizeof(m->u.reply.data));
		if (!m->u.reply.len)
			break;
		ret = ferry__ctrl_send(pr->fd, m, pr->timeout_ms);
	}
	if (!ret && err) {
		ret = ferry__ctrl_send_error(pr->fd, err, "%s", why);
	} else if (!ret) {
		memset(m, 0, sizeof(*m));
		m->type = FERRY_MSG_REPLY;
		m->u.reply.op = FERRY_REQ_PUSH;
		m->u.reply.flags = FERRY_REPLY_LAST;
		ret = ferry__ctrl_send(pr->fd, m, pr->timeout_ms);
	}
	free(m);
	return ret;
}

/* Check each source below the root: the read right, a regular file. */
static int check_sources(struct ferry__daemon *d,
			 const struct ferry__who *who,
			 const struct ferry_push_spec *ps, uint64_t *total,
			 char *why, size_t whylen)
{
	struct stat st;
	int err, fd;

	for (uint32_t i = 0; i < ps->n; i++) {
		const char *src = ps->items[i].src;

		err = ferry__exports_allow(d->ex, who->name, FERRY__RIGHT_READ,
					   src, why, whylen);
		if (err)
			return err;
		fd = ferry__daemon_open_path(d, src, O_RDONLY | O_NONBLOCK |
							     O_CLOEXEC, 0);
		if (fd < 0) {
			ferry__why(why, whylen, "%s: %s", src,
				   fd == -EACCES ?
					   "refused (a symlink, or outside the export)" :
					   ferry_strerror(fd));
			return fd;
		}
		err = fstat(fd, &st) ? -errno : 0;
		close(fd);
		if (err)
			return err;
		if (!S_ISREG(st.st_mode)) {
			ferry__why(why, whylen,
				   "%s is %s: only files can be pulled or copied",
				   src, S_ISDIR(st.st_mode) ? "a directory" :
							      "not a regular file");
			return S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
		}
		*total += (uint64_t)st.st_size;
	}
	return 0;
}

/* ferry_send's opener: the daemon's resolver. */
static int open_below_root(void *arg, const char *path, int flags)
{
	return ferry__daemon_open_path(arg, path, flags, 0);
}

/* The session's options: the daemon's host settings, the request's
 * transport and streams, the token as key. */
static void push_opts(struct ferry_opts *so, const struct ferry_opts *o,
		      const struct ferry_push_spec *ps,
		      const struct ferry_key *key, struct push_run *pr)
{
	ferry_opts_init(so);
	so->transport = ps->transport[0] ? ps->transport : "auto";
	if (ps->streams) {
		so->streams = ps->streams;
		so->fixed |= FERRY_FIXED_STREAMS;
	}
	so->key = key;
	so->key_name = ps->token;
	so->cpulist = o->cpulist;
	so->numa_node = o->numa_node;
	so->timeout_ms = o->timeout_ms;
	so->xport = o->xport;
	so->dscp = o->dscp; /* the daemon's class marks what it sends */
	so->interval = (ps->marker_ms ? ps->marker_ms : MARKER_MS_DEFAULT) /
		       1000.0;
	if (so->interval < MARKER_MS_MIN / 1000.0)
		so->interval = MARKER_MS_MIN / 1000.0;
	so->on_interval = on_interval;
	so->arg = pr;
	so->cancel = &pr->cancel;
}

int ferry__push_serve(struct ferry__daemon *d, const struct ferry__who *who,
		      const struct ferry_opts *o, int fd,
		      const struct ferry_msg_req *req, char *why,
		      size_t whylen)
{
	struct ferry_push_spec ps;
	struct push_run pr = { .fd = fd, .timeout_ms = o->timeout_ms,
			       .stop = o->cancel,
			       .t0_ns = ferry__now_ns() };
	struct ferry_send_spec ss = { 0 };
	struct ferry_report *rep = NULL;
	struct ferry_opts so;
	struct ferry_key key;
	char **paths = NULL, **names = NULL;
	char ewhy[512] = "";
	int err, ret;

	if (who->token) {
		return ferry__ctrl_send_error(fd, EACCES,
					      "a transfer token cannot ask for a push");
	}
	err = ferry__push_decode(req->data, req->len, &ps);
	if (err)
		return ferry__ctrl_send_error(fd, FERRY_EPROTO,
					      "malformed PUSH request");
	if (!ps.n) {
		ferry__push_free(&ps);
		return ferry__ctrl_send_error(fd, EINVAL, "a PUSH of no files");
	}
	pr.files_total = ps.n;
	paths = calloc(ps.n + 1, sizeof(*paths));
	names = calloc(ps.n + 1, sizeof(*names));
	pr.res = calloc(ps.n + 1, sizeof(*pr.res));
	rep = malloc(sizeof(*rep));
	for (uint32_t i = 0; paths && names && i < ps.n; i++) {
		paths[i] = ps.items[i].src;
		names[i] = ps.items[i].name;
	}
	if (!paths || !names || !pr.res || !rep) {
		err = -ENOMEM;
		snprintf(ewhy, sizeof(ewhy), "out of memory");
		goto answer;
	}
	err = check_sources(d, who, &ps, &pr.total, ewhy, sizeof(ewhy));
	if (err)
		goto answer;
	err = ferry__ctrl_wrap(who->wrap, ps.token, ps.secret, key.bytes);
	if (err)
		goto answer;
	push_opts(&so, o, &ps, &key, &pr);
	ss = (struct ferry_send_spec){
		.paths = paths,
		.n_paths = ps.n,
		.names = names,
		.dest = ps.dest,
		.cksum = ps.cksum,
		.force = ps.flags & FERRY_FILES_FORCE,
		.skip_existing = ps.flags & FERRY_FILES_SKIP_EXISTING,
		.files = FERRY_DEFAULT_FILES,
		.on_file = on_file,
		.arg = &pr,
		.open_source = open_below_root,
		.open_arg = d,
	};
	ferry__log(FERRY_LOG_INFO, "key %s: pushing %u file(s), %llu bytes, to %s:%s as %s",
		   who->name, ps.n, (unsigned long long)pr.total, ps.host,
		   ps.port, ps.token);
	err = ferry_send(ps.host, ps.port, &so, &ss, rep, ewhy, sizeof(ewhy));
	pr.bytes = rep->bytes;
	if (err)
		ferry__log(FERRY_LOG_WARN, "key %s: push to %s:%s failed: %s",
			   who->name, ps.host, ps.port, ewhy);
answer:
	if (err && !ewhy[0])
		snprintf(ewhy, sizeof(ewhy), "%s", ferry_strerror(err));
	ret = finish(&pr, err, ewhy);
	if (ret)
		ferry__why(why, whylen, "answering the client: %s",
			   ferry_strerror(ret));
	OPENSSL_cleanse(&key, sizeof(key));
	free(paths);
	free(names);
	free(pr.res);
	free(rep);
	ferry__push_free(&ps);
	return ret;
}
