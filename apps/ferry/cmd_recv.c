/* ferry recv: the receiving daemon. */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cmds.h"
#include "ferry/error.h"
#include "metrics.h"
#include "opts_table.h"
#include "out.h"

/* `ferry recv` or `ferry serve`: messages and --help name the one typed. */
static const char *cmd = "recv";

/* Session threads at most: the sessions, as many authenticated senders
 * waiting for a slot, and the connections the library holds in their
 * handshake (it closes the oldest silent one when it needs room), twice
 * over for those on their way out. Past this the daemon stops accepting
 * until some end; peers that only connect never get it there. */
#define MAX_THREADS(sessions) (2 * (sessions) + 2 * FERRY_SERVER_HANDSHAKES)

static atomic_bool stopping;
static atomic_uint active;
static atomic_uint session_seq;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

struct session_job {
	struct ferry_server *srv;
	int fd;
	unsigned id;
	bool json;
	char peer[80];
};

static void on_signal(int sig)
{
	(void)sig;
	atomic_store(&stopping, true);
}

static int serve(struct session_job *j)
{
	struct ferry_report *rep = malloc(sizeof(*rep));
	char why[512] = "", prefix[128];
	int err;

	if (!rep) {
		close(j->fd);
		return -ENOMEM;
	}
	snprintf(prefix, sizeof(prefix), "[session %u from %s] ", j->id,
		 j->peer);
	err = ferry_server_session(j->srv, j->fd, rep, why, sizeof(why));
	pthread_mutex_lock(&out_lock);
	bool data = rep->chunks || rep->files_total;
	/* --json: a line per session that moved data or failed (a daemon's
	 * requests, stat and list, are not sessions of their own) */
	if (j->json) {
		if (data || err)
			out_json_line(stdout, rep,
				      out_error_text(err, why));
	} else if (!err && rep->requests && !data) {
		fprintf(stdout, "%skey %s: %llu request(s) served\n", prefix,
			rep->client, (unsigned long long)rep->requests);
	} else if (!err) {
		out_report(stdout, prefix, rep, false, NULL);
	}
	if (err)
		fprintf(stderr, "ferry %s: %ssession failed: %s\n", cmd, prefix,
			why[0] ? why : ferry_strerror(err));
	fflush(stdout);
	pthread_mutex_unlock(&out_lock);
	free(rep);
	return err;
}

static void *session_thread(void *arg)
{
	struct session_job *j = arg;

	serve(j);
	free(j);
	atomic_fetch_sub(&active, 1);
	return NULL;
}

static bool loopback_addr(const char *addr)
{
	return addr && (strncmp(addr, "127.", 4) == 0 ||
			strcmp(addr, "::1") == 0 ||
			strcmp(addr, "localhost") == 0);
}

/* The options that do not go together, and the key. Returns false
 * after saying why. */
static bool check(struct cli_args *a)
{
	struct ferry_opts *o = &a->c.o;
	char why[512];

	if (o->exports && (o->dir || a->c.key_path || a->c.no_auth)) {
		fprintf(stderr,
			"ferry %s: --exports names the export root and the keys; drop --dir, --key and --no-auth\n",
			cmd);
		return false;
	}
	if (o->exports && o->keep_setid) {
		fprintf(stderr,
			"ferry %s: a daemon never keeps setuid, setgid or sticky bits for its clients; drop --keep-setid\n",
			cmd);
		return false;
	}
	if (a->c.no_auth && !loopback_addr(a->bind)) {
		fprintf(stderr,
			"ferry %s: --no-auth is only allowed with a loopback --bind address (127.0.0.1 or ::1); use --key FILE on a network\n",
			cmd);
		return false;
	}
	if (!o->exports &&
	    !cli_key(cmd, a->c.key_path, a->c.no_auth, &a->c.key, &o->key))
		return false;
	if (o->dir && access(o->dir, W_OK | X_OK) != 0) {
		fprintf(stderr, "ferry %s: --dir %s is not a directory this user can write\n",
			cmd, o->dir);
		return false;
	}
	/* the sender proposes the geometry; these only bound the checks */
	o->streams = 1;
	o->slots = 1;
	o->chunk_size = FERRY_MIN_CHUNK;
	if (ferry_opts_check(o, why, sizeof(why))) {
		fprintf(stderr, "ferry %s: %s\n", cmd, why);
		return false;
	}
	return true;
}

/* After a signal: sessions in their data phase end within 20 ms (the
 * library's o->cancel), their peers told why; each session thread gets
 * up to DRAIN_S to finish (its report, its transport's teardown) before
 * the process ends with whatever is left. True when none is left. */
#define DRAIN_S 10
static bool drain(const struct cli_args *a)
{
	unsigned n = atomic_load(&active);

	if (!n)
		return true;
	if (!a->c.quiet && !a->c.json)
		fprintf(stderr, "ferry %s: stopping: %u session(s) to end\n",
			cmd, n);
	for (int i = 0; i < DRAIN_S * 50 && atomic_load(&active); i++)
		usleep(20000);
	return !atomic_load(&active);
}

/* Accept sessions until a signal (or one, with --once). Returns the
 * --once session's error, else 0. */
static int accept_loop(struct ferry_server *srv, const struct cli_args *a)
{
	int err = 0;

	while (!atomic_load(&stopping)) {
		struct pollfd pf = { .fd = ferry_server_fd(srv),
				     .events = POLLIN };
		if (atomic_load(&active) >= MAX_THREADS(a->max_sessions)) {
			usleep(20000);
			continue;
		}
		if (poll(&pf, 1, 200) <= 0)
			continue;
		struct session_job *j = calloc(1, sizeof(*j));
		if (!j)
			break;
		j->srv = srv;
		j->json = a->c.json;
		j->id = atomic_fetch_add(&session_seq, 1) + 1;
		j->fd = ferry_server_accept(srv, j->peer, sizeof(j->peer));
		if (j->fd < 0) {
			free(j);
			continue;
		}
		if (a->once) {
			err = serve(j);
			free(j);
			break;
		}
		pthread_t th;
		atomic_fetch_add(&active, 1);
		if (pthread_create(&th, NULL, session_thread, j)) {
			atomic_fetch_sub(&active, 1);
			close(j->fd);
			free(j);
			continue;
		}
		pthread_detach(th);
	}
	return err;
}

int cmd_recv(int argc, char **argv)
{
	struct app_metrics *metrics = NULL;
	struct ferry_server *srv;
	struct cli_args a;
	char why[512];
	int i, err;

	cmd = argv[0]; /* "recv" or "serve" */
	i = cli_parse(&cli_cmd_recv, argc, argv, &a);
	if (i < 0)
		return a.exit;
	if (!check(&a))
		return 2;
	cli_logger(cmd, a.c.quiet || a.c.json, a.c.verbose);
	if (!a.c.json && !a.c.quiet) {
		a.c.o.on_interval = out_interval;
		a.c.o.arg = stdout;
	}
	a.c.o.cancel = &stopping; /* SIGINT, SIGTERM: sessions end */
	if (ferry_server_open(a.bind, a.port, &a.c.o, &srv, why, sizeof(why))) {
		fprintf(stderr, "ferry %s: %s\n", cmd, why);
		return 1;
	}
	ferry_server_limit(srv, a.max_sessions);
	if (a.metrics_at) {
		err = app_metrics_start(cmd, a.metrics_at, a.metrics_host,
					a.c.quiet || a.c.json, &metrics);
		if (err) {
			ferry_server_close(srv);
			return app_metrics_exit(err);
		}
	}
	signal(SIGPIPE, SIG_IGN);
	struct sigaction sa = { .sa_handler = on_signal };
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (!a.c.quiet && !a.c.json && a.c.o.exports)
		fprintf(stderr, "ferry %s: listening on %s port %s (daemon for %s)\n",
			cmd, a.bind ? a.bind : "every address", a.port,
			a.c.o.exports);
	else if (!a.c.quiet && !a.c.json)
		fprintf(stderr, "ferry %s: listening on %s port %s (%s; %s%s)\n",
			cmd, a.bind ? a.bind : "every address", a.port,
			a.c.o.key ? "key required" : "no authentication",
			a.c.o.dir ? "files land in " : "bench only: no --dir",
			a.c.o.dir ? a.c.o.dir : "");
	err = accept_loop(srv, &a);
	/* a session thread still running holds the server: it ends with
	 * the process */
	if (drain(&a))
		ferry_server_close(srv);
	app_metrics_stop(metrics);
	return err ? 1 : 0;
}
