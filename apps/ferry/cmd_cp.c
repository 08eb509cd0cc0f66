/* ferry cp: copy files to, from or between ferry daemons. */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cmds.h"
#include "ferry/error.h"
#include "ferry/files.h"
#include "ferry/log.h"
#include "ferry/remote.h"
#include "metrics.h"
#include "opts_table.h"
#include "out.h"

struct side {
	bool remote;
	char host[FERRY_URL_HOST_MAX + 1];
	char port[FERRY_URL_PORT_MAX + 1];
	char path[FERRY_URL_PATH_MAX + 1];
};

/* SIGINT / SIGTERM: stop the copy (the source daemon too), keep what
 * was verified for a rerun. */
static atomic_bool cancelled;

static void on_signal(int sig)
{
	(void)sig;
	atomic_store(&cancelled, true);
}

struct cp_out {
	struct out_sink sink;
	bool quiet;
	uint64_t last_bytes, last_files; /* the last marker printed */
	unsigned published, skipped, failed;
	uint64_t bytes;
};

static void on_file(const struct ferry_file_result *r, void *arg)
{
	struct cp_out *co = arg;

	if (r->status)
		co->failed++;
	else if (r->skipped)
		co->skipped++;
	else
		co->published++;
	co->bytes += r->status ? 0 : r->bytes_sent;
	out_sink_file(&co->sink, "cp", r);
}

static void on_marker(const struct ferry_marker *mk, void *arg)
{
	struct cp_out *co = arg;
	char tail[32];

	/* the source's last marker and its final one can say the same */
	if (co->quiet || co->sink.json ||
	    (mk->bytes == co->last_bytes && mk->files_done == co->last_files &&
	     mk->bytes))
		return;
	co->last_bytes = mk->bytes;
	co->last_files = mk->files_done;
	snprintf(tail, sizeof(tail), "%.0f s", mk->elapsed);
	out_progress(co->sink.tty, mk->bytes, mk->total, mk->files_done,
		     mk->files_total, mk->rate * 8 / 1e9, tail);
}

static bool parse_side(const char *arg, struct side *s)
{
	char why[256], e[1024];
	int r = ferry_url_parse(arg, s->host, sizeof(s->host), s->port,
				sizeof(s->port), s->path, sizeof(s->path), why,
				sizeof(why));
	size_t n = strspn(arg, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			       "0123456789+.-");

	if (r < 0) {
		fprintf(stderr, "ferry cp: %s\n", why);
		return false;
	}
	/* another scheme (http://, root://, file://): not a local path */
	if (r == 1 && n && n <= 32 && !strncmp(arg + n, "://", 3)) {
		snprintf(why, sizeof(why), "%.*s", (int)n + 3, arg);
		fprintf(stderr, "ferry cp: %s: the %s scheme is not supported; give a local path or ferry://HOST[:PORT]/PATH\n",
			ferry_escape(arg, e, sizeof(e)), why);
		return false;
	}
	s->remote = r == 0;
	if (!s->remote)
		snprintf(s->path, sizeof(s->path), "%s", arg);
	return true;
}

/* The last component of path ("/a/b/" -> "b"), into buf. */
static const char *base_of(const char *path, char *buf, size_t len)
{
	char tmp[FERRY_URL_PATH_MAX + 1];

	snprintf(tmp, sizeof(tmp), "%s", path);
	snprintf(buf, len, "%s", basename(tmp));
	return buf;
}

/* Is DST a directory to copy into? -1 when it cannot be told (reported). */
static int dst_is_dir(const struct side *dst, size_t n_src,
		      const struct ferry_opts *o)
{
	size_t len = strlen(dst->path);
	struct ferry_remote_stat rst;
	struct ferry_remote *c = NULL;
	struct stat st;
	char why[512] = "";
	int err;

	if (n_src > 1 || (len && dst->path[len - 1] == '/'))
		return 1;
	if (!dst->remote)
		return stat(dst->path, &st) == 0 && S_ISDIR(st.st_mode);
	err = ferry_remote_open(dst->host, dst->port, o, &c, why, sizeof(why));
	if (!err) {
		err = ferry_remote_stat(c, dst->path, &rst, why, sizeof(why));
		ferry_remote_close(c);
	}
	if (err == -ENOENT)
		return 0;
	if (err) {
		fprintf(stderr, "ferry cp: %s\n", why[0] ? why : ferry_strerror(err));
		return -1;
	}
	return rst.type == FERRY_REMOTE_DIR;
}

/* Fill the copy: sources, their names and the destination directory. */
static int plan(struct side *src, size_t n, const struct side *dst,
		const struct ferry_opts *o, struct ferry_copy *cp,
		char **srcs, char **names, char *dest, size_t destlen)
{
	char b[FERRY_URL_PATH_MAX + 1], e[FERRY_ESCAPED_MAX(FERRY_URL_PATH_MAX + 1)];
	int dir = dst_is_dir(dst, n, o);

	if (dir < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		srcs[i] = src[i].path;
		names[i] = strdup(dir ? base_of(src[i].path, b, sizeof(b)) :
					base_of(dst->path, b, sizeof(b)));
		if (!names[i] || !strcmp(names[i], "/") || !strcmp(names[i], ".") ||
		    !strcmp(names[i], "..")) {
			fprintf(stderr, "ferry cp: %s: name it, not a root or '.'\n",
				ferry_escape(dir ? src[i].path : dst->path, e,
					     sizeof(e)));
			return -1;
		}
	}
	if (dir) {
		size_t l;

		snprintf(dest, destlen, "%s", dst->path);
		while ((l = strlen(dest)) > 1 && dest[l - 1] == '/')
			dest[l - 1] = '\0';
	} else {
		snprintf(b, sizeof(b), "%s", dst->path);
		snprintf(dest, destlen, "%s", dirname(b));
	}
	cp->n = n;
	cp->src = srcs;
	cp->names = names;
	cp->dest = dest;
	return 0;
}

/* Remote sources with their directories expanded into files. */
struct expand {
	char **src, **names;
	size_t n, cap;
	const char *top_src, *top_name; /* the directory being walked */
};

static int expand_add(struct expand *x, char *src, char *name)
{
	if (!src || !name)
		goto nomem;
	if (x->n == x->cap) {
		size_t cap = x->cap ? 2 * x->cap : 64;
		char **v = realloc(x->src, cap * sizeof(*v));

		if (!v)
			goto nomem;
		x->src = v;
		v = realloc(x->names, cap * sizeof(*v));
		if (!v)
			goto nomem;
		x->names = v;
		x->cap = cap;
	}
	x->src[x->n] = src;
	x->names[x->n++] = name;
	return 0;
nomem:
	free(src);
	free(name);
	return -ENOMEM;
}

static int expand_file(void *arg, const char *rel, uint64_t size)
{
	struct expand *x = arg;
	char *s = NULL, *n = NULL;

	(void)size;
	if (asprintf(&s, "%s/%s", x->top_src, rel) < 0)
		s = NULL;
	if (asprintf(&n, "%s/%s", x->top_name, rel) < 0)
		n = NULL;
	return expand_add(x, s, n);
}

static void expand_free(struct expand *x)
{
	for (size_t i = 0; i < x->n; i++) {
		free(x->src[i]);
		free(x->names[i]);
	}
	free(x->src);
	free(x->names);
}

/* A directory on the source daemon becomes the files below it, each
 * under the directory's name; files stay as they are. */
static int expand_remote(const struct side *src, const struct ferry_opts *o,
			 struct ferry_copy *cp, struct expand *x)
{
	struct ferry_remote_stat st;
	struct ferry_remote *c = NULL;
	char why[512] = "";
	int err;

	err = ferry_remote_open(src->host, src->port, o, &c, why, sizeof(why));
	for (size_t i = 0; !err && i < cp->n; i++) {
		err = ferry_remote_stat(c, cp->src[i], &st, why, sizeof(why));
		if (err)
			break;
		if (st.type != FERRY_REMOTE_DIR) {
			err = expand_add(x, strdup(cp->src[i]),
					 strdup(cp->names[i]));
			continue;
		}
		x->top_src = cp->src[i];
		x->top_name = cp->names[i];
		err = ferry_remote_walk(c, cp->src[i], expand_file, x, why,
					sizeof(why));
	}
	ferry_remote_close(c);
	if (!err && !x->n) {
		char e[FERRY_ESCAPED_MAX(FERRY_URL_PATH_MAX + 1)];

		snprintf(why, sizeof(why), "nothing to copy: no files below %s",
			 ferry_escape(cp->src[0], e, sizeof(e)));
		err = -ENOENT;
	}
	if (err) {
		fprintf(stderr, "ferry cp: %s\n", why[0] ? why : ferry_strerror(err));
		return err;
	}
	cp->n = x->n;
	cp->src = x->src;
	cp->names = x->names;
	return 0;
}

/* rep: a push's report (a pull or third-party copy fills in none) */
static int run(const struct side *src, const struct side *dst,
	       struct ferry_opts *o, struct ferry_copy *cp,
	       struct ferry_report *rep, char *why, size_t whylen)
{
	if (!src[0].remote)
		return ferry_remote_push(dst->host, dst->port, o, cp, rep, why,
					 whylen);
	if (!dst->remote)
		return ferry_remote_pull(src[0].host, src[0].port, o, cp, why,
					 whylen);
	return ferry_remote_tpc(src[0].host, src[0].port, dst->host,
				dst->port, o, cp, why, whylen);
}

/* All sources on one side, and on one daemon. */
static bool check_sides(const struct side *src, size_t n,
			const struct side *dst)
{
	for (size_t i = 1; i < n; i++) {
		if (src[i].remote != src[0].remote ||
		    (src[0].remote && (strcmp(src[i].host, src[0].host) ||
				       strcmp(src[i].port, src[0].port)))) {
			fprintf(stderr,
				"ferry cp: the sources must all be local or all on one daemon; run one ferry cp per source daemon\n");
			return false;
		}
	}
	if (!src[0].remote && !dst->remote) {
		fprintf(stderr,
			"ferry cp: both sides are local; one of them must be a ferry:// URL\n");
		return false;
	}
	return true;
}

/* Run the copy cp plans (interruptible), then say how it went. */
static int copy(const struct side *src, const struct side *dst,
		struct cli_common *c, struct ferry_copy *cp)
{
	struct cp_out *co = cp->arg;
	struct ferry_report *rep = calloc(1, sizeof(*rep));
	struct timespec t0, t1;
	char why[1024] = "";
	int err;

	if (!rep) {
		fprintf(stderr, "ferry cp: out of memory\n");
		return 1;
	}
	struct sigaction sa = { .sa_handler = on_signal };
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	c->o.cancel = &cancelled;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	err = run(src, dst, &c->o, cp, rep, why, sizeof(why));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (co->sink.tty && !c->json)
		fputs("\r\033[K", stdout);
	double secs = (double)(t1.tv_sec - t0.tv_sec) +
		      (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	unsigned total = co->published + co->skipped + co->failed;
	unsigned said = co->failed; /* failures already printed */
	/* as ferry send says it; files never reported (a session that
	 * failed before they were planned) count as failed */
	if (src[0].remote && total < cp->n) {
		co->failed += (unsigned)cp->n - total;
		total = (unsigned)cp->n;
	}
	if (!src[0].remote && total < rep->files_total) {
		co->failed += (unsigned)rep->files_total - total;
		total = (unsigned)rep->files_total;
	}
	if (c->json) {
		/* a pull or third-party copy: this host's view of it */
		if (src[0].remote) {
			snprintf(rep->role, sizeof(rep->role), "%s",
				 dst->remote ? "client" : "receiver");
			rep->bytes = co->bytes;
			rep->seconds = secs;
			/* a pull's receiver marks its packets with this,
			 * unless the daemon names its own; a third-party
			 * copy moves nothing through this host */
			rep->dscp = dst->remote ? -1 : c->o.dscp;
		}
		rep->files_total = total;
		rep->files_done = co->published;
		rep->files_skipped = co->skipped;
		rep->files_failed = co->failed;
		out_send_json(stdout, rep, &co->sink.files,
			      out_error_text(err, why));
	} else {
		out_files_total(stdout, co->published, total, co->skipped,
				co->failed, co->bytes, secs);
	}
	/* a file's failure was printed as it happened; say the rest */
	if (err && (!said || c->json))
		fprintf(stderr, "ferry cp: %s\n", why[0] ? why : ferry_strerror(err));
	if (co->sink.err)
		fprintf(stderr, "ferry cp: out of memory: the JSON lacks files\n");
	free(rep);
	return err || co->sink.err ? 1 : 0;
}

int cmd_cp(int argc, char **argv)
{
	struct cp_out co = { 0 };
	struct app_metrics *metrics = NULL;
	struct cli_args a;
	struct expand x = { 0 };
	struct side *src = NULL, dst;
	char **srcs = NULL, **names = NULL, dest[FERRY_URL_PATH_MAX + 1];
	size_t n = 0;
	int i, ret = 1;

	i = cli_parse(&cli_cmd_cp, argc, argv, &a);
	if (i < 0)
		return a.exit;
	struct ferry_copy cp = { .cksum = a.send.cksum,
				  .force = a.send.force,
				  .skip_existing = a.send.skip_existing,
				  .follow_symlinks = a.send.follow_symlinks,
				  .marker_ms = a.marker_ms,
				  .on_file = on_file,
				  .on_marker = on_marker,
				  .arg = &co };
	n = (size_t)(argc - i - 1);
	src = calloc(n, sizeof(*src));
	srcs = calloc(n, sizeof(*srcs));
	names = calloc(n, sizeof(*names));
	if (!src || !srcs || !names) {
		fprintf(stderr, "ferry cp: out of memory\n");
		goto out;
	}
	ret = 2;
	for (size_t k = 0; k < n; k++)
		if (!parse_side(argv[i + (int)k], &src[k]))
			goto out;
	if (!parse_side(argv[argc - 1], &dst) || !check_sides(src, n, &dst) ||
	    !cli_client(&a.c, "cp", true))
		goto out;
	if ((a.marks & CLI_M_SHAPE) && src[0].remote) {
		fprintf(stderr, "ferry cp: -b, -l and --slots shape a push, which this host sends; a pull or third-party copy is sent by the source daemon, with its own\n");
		goto out;
	}
	/* the library's placement and memory notes only with -v */
	cli_logger("cp", !a.c.verbose, a.c.verbose);
	co.quiet = a.c.quiet;
	co.sink.json = a.c.json;
	/* -q on a terminal: the lines scripts read, and no line to clear */
	co.sink.tty = isatty(1) && !a.c.quiet;
	if (!a.c.quiet && !a.c.json && !src[0].remote) {
		a.c.o.on_interval = out_sink_interval;
		a.c.o.arg = &co.sink;
	}
	ret = 1;
	if (plan(src, n, &dst, &a.c.o, &cp, srcs, names, dest, sizeof(dest)) ||
	    (src[0].remote && expand_remote(&src[0], &a.c.o, &cp, &x)))
		goto out;
	out_sink_target(&co.sink, dst.remote ? dst.host : NULL, dst.port, dest);
	if (a.metrics_at) {
		int err = app_metrics_start("cp", a.metrics_at, a.metrics_host,
					    a.c.quiet, &metrics);
		if (err) {
			ret = app_metrics_exit(err);
			goto out;
		}
	}
	ret = copy(src, &dst, &a.c, &cp);
	app_metrics_stop(metrics);
out:
	expand_free(&x);
	out_files_free(&co.sink.files);
	for (size_t k = 0; names && k < n; k++)
		free(names[k]);
	free(names);
	free(srcs);
	free(src);
	return ret;
}
