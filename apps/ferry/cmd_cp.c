/* ferry cp: copy files to, from or between ferry daemons. */
#include <errno.h>
#include <getopt.h>
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
#include "out.h"

const char help_cp[] =
"usage: ferry cp [options] SRC... DST\n"
"\n"
"Copy files to, from or between ferry daemons (`ferry serve --exports`).\n"
"Each SRC and DST is a local path or ferry://HOST[:PORT]/PATH, PATH taken\n"
"below the daemon's export root:\n"
"  local -> ferry://  push: this host sends (as `ferry send`)\n"
"  ferry:// -> local  pull: the daemon sends to a one-shot receiver this\n"
"                     command opens on the address it reaches the daemon\n"
"                     from (so the daemon must be able to connect back)\n"
"  ferry:// -> ferry://  third-party copy: the destination daemon issues a\n"
"                     one-time token bound to the target paths, sizes and\n"
"                     an expiry; the source daemon presents it and sends\n"
"                     straight to the destination. The data never passes\n"
"                     through this host; progress comes back as markers.\n"
"With several SRCs, or a DST that ends in '/' or is an existing directory,\n"
"each SRC lands in DST under its own name; otherwise DST is the new name.\n"
"A directory is copied with everything below it (on a daemon: its files;\n"
"directories without files are not made). Every file is verified end to\n"
"end (crc32c per chunk, the whole-file checksum on both sides) and\n"
"published under its name only when it matches. Many files go in\n"
"batches of up to 256, each its own session (and token).\n"
"\n"
"Options:\n"
"  -f, --force           replace existing targets (default: refuse); on a\n"
"                        daemon that takes the delete right where a file\n"
"                        is replaced\n"
"      --cksum TYPE      adler32 (default), crc32c or none: the whole-file\n"
"                        checksum compared and printed\n"
"  -P, --streams N       parallel streams (default 4)\n"
"      --transport T     auto (default), tcp, uroce or verbs\n"
"      --sockbuf SIZE    tcp socket buffers (default: kernel autotuning)\n"
"      --dpdk \"ARGS\"     uroce: DPDK EAL arguments (or $FERRY_DPDK)\n"
"      --uroce-ip ADDR   uroce: the IPv4 address its frames carry\n"
"      --poll MODE       busy or event (default: the transport's)\n"
"      --cpus LIST       pin this side's workers to these CPUs\n"
"      --numa N          put this side's buffers on NUMA node N\n"
"                        (these five apply to the sending or receiving\n"
"                        this host does: push and pull)\n"
"      --marker SEC      pull, third-party: seconds between performance\n"
"                        markers from the source (default 2)\n"
"      --key FILE        this client's key (default $FERRY_KEY)\n"
"      --key-name NAME   its name in the daemons' exports files (default\n"
"                        $FERRY_KEY_NAME, else the key file's name without\n"
"                        .key)\n"
"      --no-auth         no authentication (loopback daemons only)\n"
"      --timeout SEC     give up when a peer is silent this long (10)\n"
"  -i, --interval SEC    push: progress every SEC seconds (default 1, 0 off)\n"
"  -q, --quiet           only errors\n"
"  -v, --verbose         debug messages from the library\n"
"  -h, --help            this text\n"
"\n"
"Interrupted (SIGINT, SIGTERM), it stops the copy, on the source daemon\n"
"too; what arrived verified is kept beside the target, and the same\n"
"command resumes from there.\n"
"\n"
"Exit status: 0 when every file arrived verified, 1 when any failed (each\n"
"is printed, with the daemon's reason) or the copy was interrupted, 2 on\n"
"bad usage.\n"
"\n"
"Examples:\n"
"  ferry cp run42.root ferry://dtn1/atlas/in/\n"
"  ferry cp ferry://dtn1/atlas/in/run42.root .\n"
"  ferry cp ferry://dtn1/atlas/in/run42.root ferry://dtn2:7471/atlas/\n";

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
	bool quiet, tty;
	unsigned published, skipped, failed;
	uint64_t bytes;
};

static void on_file(const struct ferry_file_result *r, void *arg)
{
	struct cp_out *co = arg;
	char b[32], path[FERRY_ESCAPED_MAX(PATH_MAX)], why[1024];

	/* names and the daemons' words, as plain text */
	ferry_escape(r->path, path, sizeof(path));
	if (co->tty && !co->quiet)
		fputs("\r\033[K", stdout);
	if (r->status)
		co->failed++;
	else if (r->skipped)
		co->skipped++;
	else
		co->published++;
	co->bytes += r->status ? 0 : r->bytes_sent;
	if (r->status) {
		fprintf(stderr, "ferry cp: %s: %s\n", path,
			r->why && r->why[0] ?
				ferry_escape(r->why, why, sizeof(why)) :
				ferry_strerror(r->status));
	} else if (!co->quiet) {
		if (r->cksum == FERRY_CKSUM_NONE)
			printf("%-18s %s (%s)\n", "-", path,
			       out_bytes(b, sizeof(b), (double)r->size));
		else
			printf("%s:%08x  %s (%s)%s\n", ferry_cksum_name(r->cksum),
			       r->value, path,
			       out_bytes(b, sizeof(b), (double)r->size),
			       r->skipped ? " skipped: identical" : "");
	}
	fflush(stdout);
}

static void on_marker(const struct ferry_marker *mk, void *arg)
{
	struct cp_out *co = arg;
	char b[32], t[32];

	if (co->quiet)
		return;
	printf("%s%s of %s  files %u/%u  %.2f Gb/s  %.0f s%s",
	       co->tty ? "\r\033[K" : "", out_bytes(b, sizeof(b), (double)mk->bytes),
	       out_bytes(t, sizeof(t), (double)mk->total), mk->files_done,
	       mk->files_total, mk->rate * 8 / 1e9, mk->elapsed,
	       co->tty ? "" : "\n");
	fflush(stdout);
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

static int run(const struct side *src, const struct side *dst,
	       struct ferry_opts *o, struct ferry_copy *cp, char *why,
	       size_t whylen)
{
	struct ferry_report *rep;
	int err;

	if (!src[0].remote) {
		rep = malloc(sizeof(*rep));
		if (!rep)
			return -ENOMEM;
		err = ferry_remote_push(dst->host, dst->port, o, cp, rep, why,
					whylen);
		free(rep);
		return err;
	}
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

int cmd_cp(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "force", no_argument, NULL, 'f' },
		{ "cksum", required_argument, NULL, OPT_CKSUM },
		{ "streams", required_argument, NULL, 'P' },
		{ "marker", required_argument, NULL, OPT_MARKER },
		CLI_KEY_NAME_LONGOPT,
		{ "key", required_argument, NULL, OPT_KEY },
		{ "no-auth", no_argument, NULL, OPT_NO_AUTH },
		{ "transport", required_argument, NULL, OPT_TRANSPORT },
		{ "cpus", required_argument, NULL, OPT_CPUS },
		{ "numa", required_argument, NULL, OPT_NUMA },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "sockbuf", required_argument, NULL, OPT_SOCKBUF },
		{ "dpdk", required_argument, NULL, OPT_DPDK },
		{ "uroce-ip", required_argument, NULL, OPT_UROCE_IP },
		{ "poll", required_argument, NULL, OPT_POLL },
		{ "interval", required_argument, NULL, 'i' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct cp_out co = { .tty = isatty(1) };
	struct ferry_copy cp = { .cksum = FERRY_CKSUM_ADLER32,
				  .on_file = on_file,
				  .on_marker = on_marker,
				  .arg = &co };
	struct cli_common c;
	struct ferry_key key;
	struct expand x = { 0 };
	struct side *src = NULL, dst;
	char **srcs = NULL, **names = NULL, dest[FERRY_URL_PATH_MAX + 1];
	char why[1024] = "";
	size_t n = 0;
	double d;
	int opt, err, ret = 1;

	cli_common_init(&c);
	while ((opt = cli_getopt("cp", argc, argv, "fP:i:qvh", longopts)) != -1) {
		switch (opt) {
		case 'f':
			cp.force = true;
			break;
		case OPT_CKSUM:
			err = ferry_cksum_parse(optarg);
			if (err < 0)
				cli_die_usage("cp", "--cksum is adler32, crc32c or none");
			cp.cksum = (enum ferry_cksum)err;
			break;
		case OPT_MARKER:
			if (!cli_seconds("cp", "--marker", optarg, 0.2, 600, &d))
				return 2;
			cp.marker_ms = (unsigned)(d * 1000);
			break;
		case 'h':
			fputs(help_cp, stdout);
			return 0;
		default:
			err = cli_common_opt(&c, "cp", opt, optarg);
			if (err < 0)
				return 2;
			if (err == 0)
				cli_die_usage("cp", "unknown option");
		}
	}
	if (argc - optind < 2)
		cli_die_usage("cp", "give one or more SRCs and a DST");
	n = (size_t)(argc - optind - 1);
	src = calloc(n, sizeof(*src));
	srcs = calloc(n, sizeof(*srcs));
	names = calloc(n, sizeof(*names));
	if (!src || !srcs || !names) {
		fprintf(stderr, "ferry cp: out of memory\n");
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		if (!parse_side(argv[optind + (int)i], &src[i]))
			goto usage;
	if (!parse_side(argv[argc - 1], &dst) || !check_sides(src, n, &dst))
		goto usage;
	if (c.o.streams > c.o.slots)
		c.o.slots = c.o.streams;
	if (ferry_opts_check(&c.o, why, sizeof(why))) {
		fprintf(stderr, "ferry cp: %s\n", why);
		goto usage;
	}
	if (!cli_key("cp", c.key_path, c.no_auth, &key, &c.o.key) ||
	    !cli_key_name(&c, "cp"))
		goto usage;
	/* the library's placement and memory notes only with -v */
	cli_logger("cp", !c.verbose, c.verbose);
	co.quiet = c.quiet;
	if (!c.quiet && !src[0].remote) {
		c.o.on_interval = out_interval;
		c.o.arg = stdout;
	}
	if (plan(src, n, &dst, &c.o, &cp, srcs, names, dest, sizeof(dest)))
		goto out;
	if (src[0].remote && expand_remote(&src[0], &c.o, &cp, &x))
		goto out;
	struct sigaction sa = { .sa_handler = on_signal };
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	c.o.cancel = &cancelled;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	err = run(src, &dst, &c.o, &cp, why, sizeof(why));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (co.tty && !c.quiet)
		fputs("\r\033[K", stdout);
	double secs = (double)(t1.tv_sec - t0.tv_sec) +
		      (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	unsigned total = co.published + co.skipped + co.failed;
	unsigned said = co.failed; /* failures already printed */
	char b[32];
	/* as ferry send says it; files never reported (a session that
	 * failed before they were planned) count as failed */
	if (src[0].remote && total < cp.n) {
		co.failed += (unsigned)cp.n - total;
		total = (unsigned)cp.n;
	}
	printf("%u of %u files published, %u skipped, %u failed; %s in %.2f s, %.2f Gb/s\n",
	       co.published, total, co.skipped, co.failed,
	       out_bytes(b, sizeof(b), (double)co.bytes), secs,
	       secs > 0 ? (double)co.bytes * 8 / secs / 1e9 : 0.0);
	/* a file's failure was printed as it happened; say the rest */
	if (err && !said)
		fprintf(stderr, "ferry cp: %s\n", why[0] ? why : ferry_strerror(err));
	ret = err ? 1 : 0;
	goto out;
usage:
	ret = 2;
out:
	expand_free(&x);
	for (size_t i = 0; names && i < n; i++)
		free(names[i]);
	free(names);
	free(srcs);
	free(src);
	return ret;
}
