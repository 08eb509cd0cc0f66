/* ferry send: files and directories to a `ferry recv --dir`. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cmds.h"
#include "ferry/error.h"
#include "ferry/files.h"
#include "ferry/log.h"
#include "metrics.h"
#include "opts_table.h"
#include "out.h"

static void on_file(const struct ferry_file_result *r, void *arg)
{
	out_sink_file(arg, "send", r);
}

/* Could s be a bare IPv6 address ("fe80::1", "::ffff:1.2.3.4")? */
static bool ipv6ish(const char *s)
{
	return strspn(s, "0123456789abcdefABCDEF:.") == strlen(s) &&
	       strstr(s, "::") != NULL;
}

/* Does the DEST part hold a ".." component? */
static bool dotdot(const char *dest)
{
	for (const char *p = dest; (p = strstr(p, "..")) != NULL; p += 2)
		if ((p == dest || p[-1] == '/') && (p[2] == '/' || !p[2]))
			return true;
	return false;
}

/* "HOST[:PORT][:/DEST]" -> host, port, dest */
static bool parse_dest(const char *arg, const char *defport, char *host,
		       size_t hl, char *port, size_t pl, char *dest, size_t dl)
{
	char hp[300], e[1024];
	const char *slash = strstr(arg, ":/");

	if (slash && (size_t)(slash - arg) < sizeof(hp)) {
		memcpy(hp, arg, (size_t)(slash - arg));
		hp[slash - arg] = 0;
		snprintf(dest, dl, "%s", slash + 1);
	} else {
		snprintf(hp, sizeof(hp), "%s", arg);
		dest[0] = 0;
	}
	/* a DEST without its '/' ("dtn2:7471:../x", "dtn2:run42"): say so,
	 * rather than try to resolve it as a host */
	if (!slash && arg[0] != '[' && strchr(arg, ':') && !ipv6ish(arg) &&
	    (strchr(arg, '/') || strchr(arg, ':') != strrchr(arg, ':') ||
	     strspn(strchr(arg, ':') + 1, "0123456789") !=
		     strlen(strchr(arg, ':') + 1))) {
		fprintf(stderr,
			"ferry send: bad destination '%s': write HOST[:PORT]:/DEST, DEST starting with '/' (a directory below the receiver's --dir)\n",
			ferry_escape(arg, e, sizeof(e)));
		return false;
	}
	if (dotdot(dest)) {
		fprintf(stderr,
			"ferry send: bad destination '%s': DEST cannot hold '..' (it would lead outside the receiver's --dir)\n",
			ferry_escape(arg, e, sizeof(e)));
		return false;
	}
	return cli_hostport("send", hp, defport, host, hl, port, pl);
}

/* Send spec's files with a's options; prints what happened. */
static int run(const char *host, const char *port, struct cli_args *a,
	       struct out_sink *so)
{
	struct ferry_report *rep = malloc(sizeof(*rep));
	struct timespec t0, t1;
	char why[512] = "";
	bool said;
	int err;

	if (!rep) {
		fprintf(stderr, "ferry send: out of memory\n");
		return -ENOMEM;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	err = ferry_send(host, port, &a->c.o, &a->send, rep, why, sizeof(why));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	/* the whole command: a session of empty files moves no data, and
	 * its data phase is no measure of it */
	double secs = (double)(t1.tv_sec - t0.tv_sec) +
		      (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	/* a file's failure was printed as it happened; say the rest */
	said = rep->files_failed > 0;
	/* files a failed session did not publish or skip have failed too,
	 * whenever it failed */
	if (err && rep->files_done + rep->files_skipped + rep->files_failed <
			   rep->files_total)
		rep->files_failed = rep->files_total - rep->files_done -
				    rep->files_skipped;
	if (so->tty && !a->c.json && !a->c.quiet)
		fputs("\r\033[K", stdout);
	if (a->c.json)
		out_send_json(stdout, rep, &so->files, out_error_text(err, why));
	else if (rep->files_total)
		out_files_total(stdout, rep->files_done, rep->files_total,
				rep->files_skipped, rep->files_failed,
				rep->bytes, secs);
	if (err && !said)
		fprintf(stderr, "ferry send: %s\n", why[0] ? why :
			ferry_strerror(err));
	if (so->err)
		fprintf(stderr, "ferry send: out of memory: the JSON lacks files\n");
	free(rep);
	return err ? err : so->err;
}

int cmd_send(int argc, char **argv)
{
	struct out_sink so = { .tty = isatty(1) };
	struct app_metrics *metrics = NULL;
	struct cli_args a;
	char host[256], port[8], dest[4096];
	int i, err;

	i = cli_parse(&cli_cmd_send, argc, argv, &a);
	if (i < 0)
		return a.exit;
	if (!parse_dest(argv[argc - 1], a.port, host, sizeof(host), port,
			sizeof(port), dest, sizeof(dest)))
		return 2;
	a.send.paths = argv + i;
	a.send.n_paths = (size_t)(argc - i - 1);
	a.send.dest = dest;
	out_sink_target(&so, host, port, dest);
	if (!cli_client(&a.c, "send", true))
		return 2;
	cli_logger("send", a.c.quiet || a.c.json, a.c.verbose);
	so.json = a.c.json;
	a.send.on_file = on_file;
	a.send.arg = &so;
	if (!a.c.json && !a.c.quiet) {
		a.c.o.on_interval = out_sink_interval;
		a.c.o.arg = &so;
	}
	if (a.metrics_at) {
		err = app_metrics_start("send", a.metrics_at, a.metrics_host,
					a.c.quiet || a.c.json, &metrics);
		if (err)
			return app_metrics_exit(err);
	}
	err = run(host, port, &a, &so);
	out_files_free(&so.files);
	app_metrics_stop(metrics);
	return err ? 1 : 0;
}
