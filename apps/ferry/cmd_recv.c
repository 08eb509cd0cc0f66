/* ferry recv: the receiving daemon. */
#include <errno.h>
#include <getopt.h>
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
#include "ferry/chunk.h"
#include "ferry/error.h"
#include "metrics.h"
#include "out.h"

const char help_recv[] =
"usage: ferry recv [options]\n"
"\n"
"Listen for ferry sessions (control port 7471 by default) and serve them\n"
"until stopped with SIGINT or SIGTERM, or one with --once. Each session\n"
"authenticates the sender with the shared key, agrees on transport,\n"
"streams, chunk size and ring slots, then checks the crc32c of every\n"
"chunk that lands. Bench sessions discard the payload; file sessions\n"
"(`ferry send`) write below --dir and publish each file only when its\n"
"whole-file checksum matches the sender's.\n"
"The data streams of a tcp session use an extra port the kernel picks, on\n"
"the address the control connection came in on.\n"
"\n"
"With --exports FILE it is the data-transfer-node daemon (`ferry serve` is\n"
"the same command): the file names an export root and, per client key,\n"
"its rights (read, write, delete) and path prefixes (docs/exports.md).\n"
"Besides push sessions below the root it then serves `ferry cp` and the\n"
"gfal2 plugin: stat, list, checksum, mkdir, rm, pull (it sends files to\n"
"the client), third-party copy (it sends files straight to another\n"
"daemon, with a one-time token that daemon issued) and those tokens.\n"
"\n"
"Files:\n"
"  -e, --exports FILE    be a daemon with the export root, keys, rights and\n"
"                        path prefixes in FILE (instead of --dir and --key);\n"
"                        clients name their key (--key-name)\n"
"  -d, --dir DIR         receive files below DIR (required for file\n"
"                        sessions; nothing is ever written outside it:\n"
"                        absolute paths, '..' and symlinked parents are\n"
"                        refused). The free space is checked against the\n"
"                        file list before any data moves.\n"
"      --fsync MODE      when published files reach the disk: batch\n"
"                        (default: one syncfs for up to 256 files or\n"
"                        256 MiB, then their renames), file (fsync each\n"
"                        file before its rename, its directory after) or\n"
"                        end (rename as verified, one syncfs before the\n"
"                        session's result). With any of them a file is\n"
"                        published only whole and verified, and the\n"
"                        sender exits 0 only once its files are on disk;\n"
"                        after a power cut mid-session, \"end\" may show\n"
"                        a published file whose data did not reach it\n"
"      --keep-setid      keep the setuid, setgid and sticky bits of files\n"
"                        and directories (dropped by default; never kept\n"
"                        with --exports)\n"
"\n"
"Staging: a file is written in DIR/.ferry (mode 0700, made when needed and\n"
"removed when empty) under a name derived from its path, and renamed to\n"
"its final name once verified; on a file system mounted below DIR, in\n"
"that file system's own .ferry. One session writes a path at a time:\n"
"another session sending the same path is told so and that file fails.\n"
"\n"
"Listening:\n"
"  -p, --port PORT       control port (default 7471)\n"
"  -B, --bind ADDR       listen on ADDR only (default: every address)\n"
"      --once            serve one session, then exit with its status\n"
"      --max-sessions N  sessions served at once (default 4); an\n"
"                        authenticated sender beyond that waits up to\n"
"                        --timeout for a slot, then is told the receiver\n"
"                        is busy. Connections still in their handshake\n"
"                        hold no slot: at most 64 at once (16 from one\n"
"                        address), the oldest silent one closed to make\n"
"                        room; the first byte must come within 3 s, the\n"
"                        handshake end within 10 s\n"
"      --max-mem SIZE    largest ring one session may ask for (default 4G)\n"
"\n"
"Pipeline (the sender proposes streams, chunk size and slots):\n"
"      --transport T     auto (default), tcp, uroce or verbs\n"
"      --sockbuf SIZE    tcp socket buffers (default: kernel autotuning)\n"
"      --dpdk \"ARGS\"     uroce: DPDK EAL arguments (or $FERRY_DPDK), e.g.\n"
"                        \"--vdev=net_af_packet0,iface=eth1\"; see docs/uroce.md\n"
"      --uroce-ip ADDR   uroce: the IPv4 address its frames carry (default:\n"
"                        the port's interface address)\n"
"      --poll MODE       busy or event: spin on completions (lowest latency,\n"
"                        a core per stream) or sleep until signalled; default\n"
"                        busy on verbs (event when the streams outnumber the\n"
"                        CPUs), busy on uroce (its only mode), event on tcp\n"
"      --cpus LIST       pin workers to these CPUs (default: the NIC's node)\n"
"      --numa N          put the ring on NUMA node N (default: the NIC's)\n"
"\n"
"Security:\n"
"      --key FILE        shared key (default $FERRY_KEY), made by\n"
"                        `ferry keygen`; senders must hold the same key\n"
"      --no-auth         accept sessions without a key: only together with\n"
"                        a loopback --bind address (127.0.0.1 or ::1)\n"
"\n"
"Output:\n"
"  -i, --interval SEC    seconds between interval lines (default 1, 0 off)\n"
"      --json            one JSON document per session on stdout\n"
"      --metrics ADDR:PORT\n"
"                        serve Prometheus metrics over HTTP at\n"
"                        http://ADDR:PORT/metrics (:PORT: every address;\n"
"                        port 0: any free one, printed): bytes, chunks,\n"
"                        sessions, errors, CPU of every session, and the\n"
"                        host's TCP retransmits, context switches and NIC\n"
"                        drops; see docs/metrics.md\n"
"  -q, --quiet           only warnings and session summaries\n"
"  -v, --verbose         debug messages from the library\n"
"  -h, --help            this text\n"
"      --timeout SEC     drop a peer silent this long (default 10)\n"
"\n"
"Exit status: 0 after a signal (or, with --once, a good session), 1 when\n"
"it cannot listen or the --once session failed, 2 on bad usage.\n"
"\n"
"Examples: ferry recv --key /etc/ferry/key -p 7471\n"
"          ferry serve --exports /etc/ferry/exports.conf\n";

/* The smallest ring a session can have: one slot of the smallest chunk
 * (the chunk header's block, then the payload). */
#define MIN_RING (FERRY_CHUNK_HDR_SPACE + FERRY_MIN_CHUNK)

/* `ferry recv` or `ferry serve`: messages and --help name the one typed. */
static const char *cmd = "recv";

static void print_help(const char *name)
{
	static const char usage[] = "usage: ferry recv";

	/* help_recv is written for recv, and its man page for both */
	if (strncmp(help_recv, usage, strlen(usage)) == 0)
		printf("usage: ferry %s%s", name, help_recv + strlen(usage));
	else
		fputs(help_recv, stdout);
}

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
	if (j->json && rep->chunks)
		ferry_report_json(rep, stdout);
	else if (!err && rep->requests && !rep->chunks && !rep->files_total)
		fprintf(stdout, "%skey %s: %llu request(s) served\n", prefix,
			rep->client, (unsigned long long)rep->requests);
	else if (!err)
		out_summary(stdout, prefix, rep);
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

int cmd_recv(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "port", required_argument, NULL, 'p' },
		{ "bind", required_argument, NULL, 'B' },
		{ "dir", required_argument, NULL, 'd' },
		{ "exports", required_argument, NULL, 'e' },
		{ "once", no_argument, NULL, OPT_ONCE },
		{ "max-sessions", required_argument, NULL, OPT_MAX_SESSIONS },
		{ "max-mem", required_argument, NULL, OPT_MAX_MEM },
		{ "metrics", required_argument, NULL, OPT_METRICS },
		{ "fsync", required_argument, NULL, OPT_FSYNC },
		{ "keep-setid", no_argument, NULL, OPT_KEEP_SETID },
		CLI_COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	const char *port = FERRY_DEFAULT_PORT, *bind_addr = NULL;
	const char *metrics_at = NULL;
	struct app_metrics *metrics = NULL;
	unsigned max_sessions = 4, dummy;
	struct cli_common c;
	struct ferry_key key;
	struct ferry_server *srv;
	bool once = false;
	char why[512];
	uint64_t v;
	int opt, err;

	cmd = argv[0]; /* "recv" or "serve" */
	cli_common_init(&c);
	while ((opt = cli_getopt(cmd, argc, argv, "p:B:d:e:i:qvh", longopts)) !=
	       -1) {
		switch (opt) {
		case 'p':
			if (!cli_uint(cmd, "-p", optarg, 1, 65535, &dummy))
				return 2;
			port = optarg;
			break;
		case 'B':
			bind_addr = optarg;
			break;
		case 'd':
			c.o.dir = optarg;
			break;
		case 'e':
			c.o.exports = optarg;
			break;
		case OPT_ONCE:
			once = true;
			break;
		case OPT_MAX_SESSIONS:
			if (!cli_uint(cmd, "--max-sessions", optarg, 1, 64,
				      &max_sessions))
				return 2;
			break;
		case OPT_MAX_MEM:
			if (!cli_size(cmd, "--max-mem", optarg, &v))
				return 2;
			if (v < MIN_RING) {
				fprintf(stderr, "ferry %s: bad value '%s' for --max-mem: a session's ring needs at least 8K (one slot of the smallest chunk); senders ask for 64 slots of 4M (256M) by default\n",
					cmd, optarg);
				return 2;
			}
			c.o.max_mem = v;
			break;
		case OPT_METRICS:
			metrics_at = optarg;
			break;
		case OPT_FSYNC:
			c.o.fsync_mode = ferry_fsync_parse(optarg);
			if (c.o.fsync_mode < 0) {
				fprintf(stderr, "ferry recv: --fsync takes batch, file or end, not '%s'\n",
					optarg);
				return 2;
			}
			break;
		case OPT_KEEP_SETID:
			c.o.keep_setid = true;
			break;
		case OPT_SLOTS:
			fprintf(stderr, "ferry %s: --slots is the sender's choice (ferry send/bench --slots); bound the receiver's memory with --max-mem\n",
				cmd);
			return 2;
		case 'h':
			print_help(cmd);
			return 0;
		default:
			err = cli_common_opt(&c, cmd, opt, optarg);
			if (err < 0)
				return 2;
			if (err == 0)
				cli_die_usage(cmd, "unknown option");
		}
	}
	if (optind != argc)
		cli_die_usage(cmd, "unexpected argument");
	if (c.o.exports && (c.o.dir || c.key_path || c.no_auth)) {
		fprintf(stderr,
			"ferry %s: --exports names the export root and the keys; drop --dir, --key and --no-auth\n",
			cmd);
		return 2;
	}
	if (c.o.exports && c.o.keep_setid) {
		fprintf(stderr,
			"ferry recv: a daemon never keeps setuid, setgid or sticky bits for its clients; drop --keep-setid\n");
		return 2;
	}
	if (c.no_auth && !loopback_addr(bind_addr)) {
		fprintf(stderr,
			"ferry %s: --no-auth is only allowed with a loopback --bind address (127.0.0.1 or ::1); use --key FILE on a network\n",
			cmd);
		return 2;
	}
	if (!c.o.exports &&
	    !cli_key(cmd, c.key_path, c.no_auth, &key, &c.o.key))
		return 2;
	if (c.o.dir && access(c.o.dir, W_OK | X_OK) != 0) {
		fprintf(stderr, "ferry %s: --dir %s is not a directory this user can write\n",
			cmd, c.o.dir);
		return 2;
	}
	/* the sender proposes the geometry; these only bound the checks */
	c.o.streams = 1;
	c.o.slots = 1;
	c.o.chunk_size = FERRY_MIN_CHUNK;
	if (ferry_opts_check(&c.o, why, sizeof(why))) {
		fprintf(stderr, "ferry %s: %s\n", cmd, why);
		return 2;
	}
	cli_logger(cmd, c.quiet || c.json, c.verbose);
	if (!c.json && !c.quiet) {
		c.o.on_interval = out_interval;
		c.o.arg = stdout;
	}
	if (ferry_server_open(bind_addr, port, &c.o, &srv, why, sizeof(why))) {
		fprintf(stderr, "ferry %s: %s\n", cmd, why);
		return 1;
	}
	ferry_server_limit(srv, max_sessions);
	if (metrics_at) {
		err = app_metrics_start(cmd, metrics_at, c.quiet || c.json,
					&metrics);
		if (err) {
			ferry_server_close(srv);
			return app_metrics_exit(err);
		}
	}
	signal(SIGPIPE, SIG_IGN);
	struct sigaction sa = { .sa_handler = on_signal };
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (!c.quiet && !c.json && c.o.exports)
		fprintf(stderr, "ferry %s: listening on %s port %s (daemon for %s)\n",
			cmd, bind_addr ? bind_addr : "every address", port,
			c.o.exports);
	else if (!c.quiet && !c.json)
		fprintf(stderr, "ferry %s: listening on %s port %s (%s; %s%s)\n",
			cmd, bind_addr ? bind_addr : "every address", port,
			c.o.key ? "key required" : "no authentication",
			c.o.dir ? "files land in " : "bench only: no --dir",
			c.o.dir ? c.o.dir : "");

	err = 0;
	while (!atomic_load(&stopping)) {
		struct pollfd pf = { .fd = ferry_server_fd(srv),
				     .events = POLLIN };
		if (atomic_load(&active) >= MAX_THREADS(max_sessions)) {
			usleep(20000);
			continue;
		}
		if (poll(&pf, 1, 200) <= 0)
			continue;
		struct session_job *j = calloc(1, sizeof(*j));
		if (!j)
			break;
		j->srv = srv;
		j->json = c.json;
		j->id = atomic_fetch_add(&session_seq, 1) + 1;
		j->fd = ferry_server_accept(srv, j->peer, sizeof(j->peer));
		if (j->fd < 0) {
			free(j);
			continue;
		}
		if (once) {
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
	/* sessions still running end with the process */
	ferry_server_close(srv);
	app_metrics_stop(metrics);
	return err ? 1 : 0;
}
