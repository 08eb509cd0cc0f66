/* The client side of the daemon's roles: namespace requests on one
 * authenticated connection, and the ferry:// URL (ferry/remote.h,
 * daemon/remote.h). The three copies are in remote_copy.c.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "daemon/remote.h"
#include "pipe/net.h"
#include "pipe/session.h"
#include "util/util.h"

int ferry__remote_connect(const char *host, const char *port,
			  const struct ferry_opts *o, struct ferry_remote *c,
			  char *why, size_t whylen)
{
	struct sockaddr_storage peer;
	socklen_t peer_len = sizeof(peer);
	int err;

	memset(c, 0, sizeof(*c));
	c->fd = -1;
	c->timeout_ms = o->timeout_ms;
	if (strlen(host) > FERRY_PUSH_HOST_MAX ||
	    strlen(port) > FERRY_PUSH_PORT_MAX) {
		ferry__why(why, whylen, "host or port name too long: %s:%s",
			   host, port);
		return -EINVAL;
	}
	snprintf(c->host, sizeof(c->host), "%s", host);
	snprintf(c->port, sizeof(c->port), "%s", port);
	err = ferry__dial(host, port, o->timeout_ms, o->dscp, &c->fd, &peer,
			  &peer_len, why, whylen);
	if (err)
		return err;
	ferry__addr_str((struct sockaddr *)&peer, peer_len, c->peer,
			sizeof(c->peer));
	err = ferry__ctrl_auth_client_ex(c->fd, o->key, o->key_name,
					 o->timeout_ms, c->wrap, why, whylen);
	if (err) {
		close(c->fd);
		c->fd = -1;
	}
	return err;
}

void ferry__remote_disconnect(struct ferry_remote *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	memset(c->wrap, 0, sizeof(c->wrap));
}

int ferry_remote_open(const char *host, const char *port,
		      const struct ferry_opts *o, struct ferry_remote **out,
		      char *why, size_t whylen)
{
	struct ferry_remote *c = malloc(sizeof(*c));
	int err;

	if (!c)
		return -ENOMEM;
	err = ferry__remote_connect(host, port, o, c, why, whylen);
	if (err) {
		free(c);
		return err;
	}
	*out = c;
	return 0;
}

void ferry_remote_close(struct ferry_remote *c)
{
	if (!c)
		return;
	ferry__remote_disconnect(c);
	free(c);
}

int ferry__remote_call(struct ferry_remote *c, uint32_t op, const char *path,
		       uint32_t flags, uint64_t arg, const void *data,
		       size_t len, struct ferry_msg *m, char *why,
		       size_t whylen)
{
	int err = ferry__remote_send(c, op, path, flags, arg, data, len, m,
				     why, whylen);

	if (err)
		return err;
	return ferry__remote_answer(c, op, m, c->timeout_ms, why, whylen);
}

int ferry__remote_send(struct ferry_remote *c, uint32_t op, const char *path,
		       uint32_t flags, uint64_t arg, const void *data,
		       size_t len, struct ferry_msg *m, char *why,
		       size_t whylen)
{
	int err;

	if (strlen(path) >= sizeof(m->u.req.path) ||
	    len > sizeof(m->u.req.data)) {
		ferry__why(why, whylen, "request too large (path %zu bytes, data %zu)",
			   strlen(path), len);
		return -ENAMETOOLONG;
	}
	memset(m, 0, offsetof(struct ferry_msg, u) + sizeof(m->u.req) -
			     sizeof(m->u.req.data));
	m->type = FERRY_MSG_REQ;
	m->u.req.op = op;
	m->u.req.flags = flags;
	m->u.req.arg = arg;
	snprintf(m->u.req.path, sizeof(m->u.req.path), "%s", path);
	m->u.req.len = (uint32_t)len;
	if (len)
		memcpy(m->u.req.data, data, len);
	err = ferry__ctrl_send(c->fd, m, c->timeout_ms);
	if (err && path[0])
		ferry__why(why, whylen, "%s: sending the request for %.200s: %s",
			   c->peer, path, ferry_strerror(err));
	else if (err)
		ferry__why(why, whylen, "%s: sending the request: %s", c->peer,
			   ferry_strerror(err));
	return err;
}

int ferry__remote_answer(struct ferry_remote *c, uint32_t op,
			 struct ferry_msg *m, int timeout_ms, char *why,
			 size_t whylen)
{
	int err = ferry__ctrl_recv(c->fd, m, timeout_ms);

	if (err == -FERRY_EPEER)
		return ferry__peer_error(m, c->host, why, whylen);
	if (err == -FERRY_ECLOSED) {
		ferry__why(why, whylen,
			   "%s: the daemon went away before it answered (its log says why)",
			   c->peer);
		return err;
	}
	if (err) {
		ferry__why(why, whylen, "%s: waiting for the answer: %s",
			   c->peer, ferry_strerror(err));
		return err;
	}
	if ((m->type == FERRY_MSG_REPLY && m->u.reply.op == op) ||
	    (m->type == FERRY_MSG_MARKER && op == FERRY_REQ_PUSH))
		return 0;
	ferry__why(why, whylen, "%s: unexpected %s in answer to a request",
		   c->peer, ferry__ctrl_type_name(m->type));
	return -FERRY_EPROTO;
}

/* A request whose answer is one REPLY: into *m. */
static int call1(struct ferry_remote *c, uint32_t op, const char *path,
		 uint32_t flags, uint64_t arg, struct ferry_msg **m, char *why,
		 size_t whylen)
{
	int err;

	*m = malloc(sizeof(**m));
	if (!*m)
		return -ENOMEM;
	err = ferry__remote_call(c, op, path, flags, arg, NULL, 0, *m, why,
				 whylen);
	if (err) {
		free(*m);
		*m = NULL;
	}
	return err;
}

int ferry_remote_stat(struct ferry_remote *c, const char *path,
		      struct ferry_remote_stat *st, char *why, size_t whylen)
{
	struct ferry_rstat rs;
	struct ferry_msg *m;
	int err = call1(c, FERRY_REQ_STAT, path, 0, 0, &m, why, whylen);

	if (err)
		return err;
	err = ferry__rstat_decode(m->u.reply.data, m->u.reply.len, &rs);
	if (err)
		ferry__why(why, whylen, "%s: a malformed stat answer", c->peer);
	else
		*st = (struct ferry_remote_stat){ .type = rs.type,
						  .mode = rs.mode,
						  .size = rs.size,
						  .mtime_ns = rs.mtime_ns };
	free(m);
	return err;
}

/* A directory's children as manifest entries, to fn (ferry_remote_list
 * and the walk). */
static int list_entries(struct ferry_remote *c, const char *path,
			int (*fn)(void *arg, const struct ferry_entry *e),
			void *arg, char *why, size_t whylen)
{
	struct ferry_msg *m = malloc(sizeof(*m));
	struct ferry_manifest man;
	int err, stop = 0;

	if (!m)
		return -ENOMEM;
	err = ferry__remote_call(c, FERRY_REQ_LIST, path, 0, 0, NULL, 0, m,
				 why, whylen);
	for (;;) {
		if (err)
			break;
		ferry__manifest_init(&man);
		err = ferry__manifest_decode(&man, m->u.reply.data,
					     m->u.reply.len, SIZE_MAX);
		if (err)
			ferry__why(why, whylen, "%s: a malformed listing",
				   c->peer);
		for (size_t i = 0; !err && !stop && i < man.n; i++)
			stop = fn(arg, &man.e[i]);
		ferry__manifest_free(&man);
		if (err || (m->u.reply.flags & FERRY_REPLY_LAST))
			break;
		err = ferry__remote_answer(c, FERRY_REQ_LIST, m, c->timeout_ms,
					   why, whylen);
	}
	free(m);
	return err ? err : stop;
}

struct list_ctx {
	ferry_remote_list_fn fn;
	void *arg;
};

static int list_one(void *arg, const struct ferry_entry *e)
{
	const struct list_ctx *l = arg;
	struct ferry_remote_stat st = { .type = e->type, .mode = e->mode,
					.size = e->size,
					.mtime_ns = e->mtime_ns };

	return l->fn(l->arg, e->path, &st);
}

int ferry_remote_list(struct ferry_remote *c, const char *path,
		      ferry_remote_list_fn fn, void *arg, char *why,
		      size_t whylen)
{
	struct list_ctx l = { .fn = fn, .arg = arg };

	return list_entries(c, path, list_one, &l, why, whylen);
}

struct walk_ctx {
	struct ferry_manifest m; /* one directory's children */
};

static int walk_collect(void *arg, const struct ferry_entry *e)
{
	struct walk_ctx *w = arg;

	return ferry__manifest_add(&w->m, e->path, NULL, e->type, e->mode,
				   e->size, e->mtime_ns);
}

/* rel: dir's path below the walk's top ("" at the top), in a buffer of
 * FERRY_PATH_MAX that each level extends and restores. */
static int walk_dir(struct ferry_remote *c, const char *top, char *rel,
		    int depth,
		    int (*fn)(void *arg, const char *rel, uint64_t size),
		    void *arg, char *why, size_t whylen)
{
	struct walk_ctx w;
	char path[FERRY_PATH_MAX + FERRY_DEST_MAX];
	size_t rl = strlen(rel);
	int err;

	if (depth > 128) {
		ferry__why(why, whylen, "%s/%s: directories nested too deep",
			   top, rel);
		return -ELOOP;
	}
	snprintf(path, sizeof(path), "%s%s%s", top, rl ? "/" : "", rel);
	ferry__manifest_init(&w.m);
	err = list_entries(c, path, walk_collect, &w, why, whylen);
	for (size_t i = 0; !err && i < w.m.n; i++) {
		const struct ferry_entry *e = &w.m.e[i];

		if (rl + 1 + strlen(e->path) >= FERRY_PATH_MAX) {
			ferry__why(why, whylen, "%s/%s/%s: path too long", top,
				   rel, e->path);
			err = -ENAMETOOLONG;
			break;
		}
		snprintf(rel + rl, FERRY_PATH_MAX - rl, "%s%s",
			 rl ? "/" : "", e->path);
		if (e->type == FERRY_ENTRY_FILE)
			err = fn(arg, rel, e->size);
		else if (e->type == FERRY_ENTRY_DIR)
			err = walk_dir(c, top, rel, depth + 1, fn, arg, why,
				       whylen);
		rel[rl] = '\0';
	}
	ferry__manifest_free(&w.m);
	return err;
}

int ferry_remote_walk(struct ferry_remote *c, const char *dir,
		      int (*fn)(void *arg, const char *rel, uint64_t size),
		      void *arg, char *why, size_t whylen)
{
	char rel[FERRY_PATH_MAX] = "";
	char top[FERRY_DEST_MAX];
	size_t l;

	snprintf(top, sizeof(top), "%s", dir);
	while ((l = strlen(top)) > 1 && top[l - 1] == '/')
		top[l - 1] = '\0';
	if (!strcmp(top, "/"))
		top[0] = '\0';
	return walk_dir(c, top, rel, 0, fn, arg, why, whylen);
}

int ferry_remote_cksum(struct ferry_remote *c, const char *path,
		       enum ferry_cksum kind, uint32_t *value, char *why,
		       size_t whylen)
{
	struct ferry_msg *m;
	/* a checksum reads the whole file: give it time */
	int saved = c->timeout_ms, err;

	if (c->timeout_ms >= 0 && c->timeout_ms < FERRY__CKSUM_TIMEOUT_MS)
		c->timeout_ms = FERRY__CKSUM_TIMEOUT_MS;
	err = call1(c, FERRY_REQ_CKSUM, path, 0, kind, &m, why, whylen);
	c->timeout_ms = saved;
	if (err)
		return err;
	*value = (uint32_t)m->u.reply.arg;
	free(m);
	return 0;
}

int ferry_remote_mkdir(struct ferry_remote *c, const char *path,
		       uint32_t mode, bool parents, char *why, size_t whylen)
{
	struct ferry_msg *m;
	int err = call1(c, FERRY_REQ_MKDIR, path,
			parents ? FERRY_REQ_PARENTS : 0, mode, &m, why, whylen);

	free(m);
	return err;
}

int ferry_remote_unlink(struct ferry_remote *c, const char *path, char *why,
			size_t whylen)
{
	struct ferry_msg *m;
	int err = call1(c, FERRY_REQ_UNLINK, path, 0, 0, &m, why, whylen);

	free(m);
	return err;
}

int ferry_remote_rmdir(struct ferry_remote *c, const char *path, char *why,
		       size_t whylen)
{
	struct ferry_msg *m;
	int err = call1(c, FERRY_REQ_RMDIR, path, 0, 0, &m, why, whylen);

	free(m);
	return err;
}

_Static_assert((int)FERRY_REMOTE_FILE == (int)FERRY_ENTRY_FILE &&
	       (int)FERRY_REMOTE_DIR == (int)FERRY_ENTRY_DIR &&
	       FERRY_REMOTE_OTHER == FERRY_RSTAT_OTHER,
	       "ferry_remote_type takes the wire's values");

int ferry_url_parse(const char *url, char *host, size_t hostlen, char *port,
		    size_t portlen, char *path, size_t pathlen, char *why,
		    size_t whylen)
{
	static const char scheme[] = "ferry://";
	const char *h = url + strlen(scheme), *hend, *slash, *p = NULL;
	size_t hl;

	if (strncasecmp(url, scheme, strlen(scheme)) != 0)
		return 1;
	slash = strchr(h, '/');
	if (!slash)
		slash = h + strlen(h);
	if (*h == '[') {
		hend = memchr(h, ']', (size_t)(slash - h));
		if (!hend)
			goto bad;
		h++;
		if (hend[1] == ':')
			p = hend + 2;
		else if (hend + 1 != slash)
			goto bad;
	} else {
		hend = memchr(h, ':', (size_t)(slash - h));
		if (hend)
			p = hend + 1;
		else
			hend = slash;
	}
	hl = (size_t)(hend - h);
	if (!hl || hl >= hostlen)
		goto bad;
	memcpy(host, h, hl);
	host[hl] = '\0';
	if (p) {
		size_t pl = (size_t)(slash - p);

		if (!pl || pl >= portlen || strspn(p, "0123456789") < pl)
			goto bad;
		memcpy(port, p, pl);
		port[pl] = '\0';
		if (pl > 5 || atoi(port) < 1 || atoi(port) > 65535) {
			ferry__why(why, whylen, "%s: port %s is out of range "
				   "(1 to 65535)", url, port);
			return -EINVAL;
		}
	} else {
		snprintf(port, portlen, "%s", FERRY_DEFAULT_PORT);
	}
	/* ferry://host//abs and ferry://host/abs are the same path */
	while (slash[0] == '/' && slash[1] == '/')
		slash++;
	if (snprintf(path, pathlen, "%s", *slash ? slash : "/") >=
	    (int)pathlen)
		goto bad;
	return 0;
bad:
	ferry__why(why, whylen,
		   "%s: not a ferry URL (ferry://HOST[:PORT]/PATH; an IPv6 host in [brackets])",
		   url);
	return -EINVAL;
}
