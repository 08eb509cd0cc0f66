/* ferry send: files and directories to a `ferry recv --dir`. */
#include <getopt.h>
#include <limits.h>
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
#include "out.h"

const char help_send[] =
"usage: ferry send [options] PATH... HOST[:PORT][:/DEST]\n"
"\n"
"Send files and directories to a `ferry recv --dir DIR` on HOST (port 7471\n"
"unless given). They land below DIR/DEST (DEST defaults to DIR itself) with\n"
"their relative layout: a file argument by its name, a directory argument\n"
"as that directory and everything below it. Symlinks are skipped (with a\n"
"warning) unless -L; devices, FIFOs and sockets are refused.\n"
"\n"
"Every chunk is crc32c-checked on arrival. Each file is written into the\n"
"receiver's staging area (DIR/.ferry) and published (renamed to its name,\n"
"synced as the receiver's --fsync says) only when its whole-file\n"
"checksums, computed on both sides, match: nothing partial ever appears\n"
"under a final name. Another transfer writing the same path at the same\n"
"time makes that file fail (it says so); the other files go on. The\n"
"sender prints each file's checksum the way xrdcp does (adler32:1a2b3c4d).\n"
"\n"
"Resume is on by default: after an interruption (a peer killed, the\n"
"network cut) run the same command again; the receiver keeps a journal of\n"
"verified chunks beside each staged file, only the missing chunks are\n"
"sent, and the whole file is still verified. A journal is discarded when the\n"
"source's size or mtime changed. Files the earlier attempt already\n"
"published (same size and mtime) are skipped once both sides' checksums\n"
"agree.\n"
"\n"
"Files:\n"
"      --cksum TYPE      adler32 (default), crc32c or none: the whole-file\n"
"                        checksum compared before publishing and printed\n"
"                        (crc32c is always compared; chunks always checked)\n"
"      --force           replace existing targets (default: such a file\n"
"                        fails, before any of its data moves, and the others\n"
"                        go on; a target identical to its source - same\n"
"                        size, mtime and checksum - is skipped instead)\n"
"      --skip-existing   skip targets of the same size and checksum\n"
"      --no-resume       ignore journals of earlier attempts; start over\n"
"      --resume          use them (the default; undoes an earlier --no-resume)\n"
"  -L, --follow-symlinks send what symlinks point to\n"
"      --files N         files in flight at once (default 4, at most 256)\n"
"\n"
"Pipeline:\n"
"  -P, --streams N       parallel streams / queue pairs (default 4, max 256)\n"
"  -l, --chunk SIZE      bytes per chunk, a multiple of 4K (default 4M)\n"
"      --slots N         receiver ring slots (default 64; fewer when the\n"
"                        files fill fewer: one per chunk they hold)\n"
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
"      --numa N          put buffers on NUMA node N (default: the NIC's)\n"
"\n"
"Security:\n"
"      --key FILE        shared key (default $FERRY_KEY), made by `ferry keygen`\n"
"      --key-name NAME   the name a daemon's exports file gives the key\n"
"                        (default $FERRY_KEY_NAME, else the key file's name\n"
"                        without .key); a receiver with one key ignores it\n"
"      --no-auth         no authentication (loopback receivers only)\n"
"\n"
"Output:\n"
"  -i, --interval SEC    progress every SEC seconds (default 1, 0 off); on a\n"
"                        terminal one line redrawn in place\n"
"      --json            one JSON document with per-file results\n"
"      --metrics ADDR:PORT\n"
"                        serve Prometheus metrics over HTTP at\n"
"                        http://ADDR:PORT/metrics while the transfer runs\n"
"                        (:PORT: every address; port 0: any free one,\n"
"                        printed); see docs/metrics.md\n"
"  -q, --quiet           only warnings, errors and the summary\n"
"  -v, --verbose         debug messages from the library\n"
"  -h, --help            this text\n"
"      --timeout SEC     give up when the peer is silent this long (10)\n"
"\n"
"Exit status: 0 when every file was published (or skipped as identical),\n"
"1 when any file or the session failed (each failure is printed), 2 on bad\n"
"usage.\n"
"\n"
"Example: ferry send --key /etc/ferry/key -P 8 run42/ dtn2:/store/run42\n";

struct send_out {
	bool json, quiet, tty;
	FILE *jf; /* per-file JSON, spooled until the end */
	unsigned n_json;
	const struct ferry_report *rep;
};

static void on_file(const struct ferry_file_result *r, void *arg)
{
	struct send_out *so = arg;
	char b[32], path[FERRY_ESCAPED_MAX(PATH_MAX)], why[1024];

	if (so->json) {
		fprintf(so->jf, "%s\n    {\"path\": ", so->n_json++ ? "," : "");
		ferry_json_str(so->jf, r->path);
		fprintf(so->jf,
			", \"bytes\": %llu, \"sent\": %llu, \"seconds\": %.3f, \"checksum\": \"%s:%08x\", \"crc32c\": \"%08x\", ",
			(unsigned long long)r->size,
			(unsigned long long)r->bytes_sent, r->seconds,
			ferry_cksum_name(r->cksum), r->value, r->crc32c);
		if (r->cksum == FERRY_CKSUM_ADLER32 || r->skipped)
			fprintf(so->jf, "\"adler32\": \"%08x\", ", r->adler32);
		else
			fputs("\"adler32\": null, ", so->jf);
		fprintf(so->jf, "\"skipped\": %s, \"resumed\": %s, \"ok\": %s",
			r->skipped ? "true" : "false",
			r->resumed ? "true" : "false",
			r->status ? "false" : "true");
		if (r->status)
			fprintf(so->jf, ", \"error\": \"%s\"", ferry_strerror(r->status));
		fputc('}', so->jf);
		return;
	}
	if (so->tty)
		fputs("\r\033[K", stdout);
	/* names and the receiver's words, as plain text (the JSON above
	 * carries the exact name) */
	ferry_escape(r->path, path, sizeof(path));
	if (r->status)
		fprintf(stderr, "ferry send: %s: %s\n", path,
			ferry_escape(r->why, why, sizeof(why)));
	else if (r->cksum == FERRY_CKSUM_NONE)
		printf("%-18s %s (%s)%s\n", "-", path,
		       out_bytes(b, sizeof(b), (double)r->size),
		       r->skipped ? " skipped: identical" : "");
	else
		printf("%s:%08x  %s (%s)%s%s\n", ferry_cksum_name(r->cksum),
		       r->value, path, out_bytes(b, sizeof(b), (double)r->size),
		       r->skipped ? " skipped: identical" : "",
		       r->resumed ? " resumed" : "");
	fflush(stdout);
}

static void on_interval(const struct ferry_report *r,
			const struct ferry_interval *iv, void *arg)
{
	struct send_out *so = arg;
	char b[32], t[32];
	double rate = ferry_gbps(iv->bytes, iv->end - iv->start);
	double left = (double)r->bytes_total - (double)0;
	uint64_t done = 0;

	for (unsigned i = 0; i < r->n_iv; i++)
		done += r->iv[i].bytes;
	left = r->bytes_total > done ? (double)(r->bytes_total - done) : 0;
	double eta = rate > 0 ? left * 8 / (rate * 1e9) : -1;
	printf("%s%s of %s  files %llu/%llu  %.2f Gb/s  ETA %s%s",
	       so->tty ? "\r\033[K" : "", out_bytes(b, sizeof(b), (double)done),
	       out_bytes(t, sizeof(t), (double)r->bytes_total),
	       (unsigned long long)(r->files_done + r->files_skipped),
	       (unsigned long long)r->files_total, rate,
	       eta < 0 ? "?" : "", so->tty ? "" : "");
	if (eta >= 0)
		printf("%.0f s", eta);
	if (!so->tty)
		putchar('\n');
	fflush(stdout);
}

static void json_files(FILE *out, void *arg)
{
	struct send_out *so = arg;
	char *buf = NULL;
	size_t len = 0;

	fflush(so->jf);
	fputs(",\n  \"files\": [", out);
	rewind(so->jf);
	buf = malloc(1 << 16);
	while (buf && (len = fread(buf, 1, 1 << 16, so->jf)) > 0)
		fwrite(buf, 1, len, out);
	free(buf);
	fputs("\n  ]", out);
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
static bool parse_dest(const char *arg, char *host, size_t hl, char *port,
		       size_t pl, char *dest, size_t dl)
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
	return cli_hostport("send", hp, host, hl, port, pl);
}

int cmd_send(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "streams", required_argument, NULL, 'P' },
		{ "chunk", required_argument, NULL, 'l' },
		{ "cksum", required_argument, NULL, OPT_CKSUM },
		{ "force", no_argument, NULL, OPT_FORCE },
		{ "skip-existing", no_argument, NULL, OPT_SKIP_EXISTING },
		{ "no-resume", no_argument, NULL, OPT_NO_RESUME },
		{ "resume", no_argument, NULL, OPT_RESUME },
		{ "follow-symlinks", no_argument, NULL, 'L' },
		{ "files", required_argument, NULL, OPT_FILES },
		{ "metrics", required_argument, NULL, OPT_METRICS },
		CLI_COMMON_LONGOPTS,
		CLI_KEY_NAME_LONGOPT,
		{ NULL, 0, NULL, 0 },
	};
	struct ferry_send_spec spec = { .cksum = FERRY_CKSUM_ADLER32,
					.files = FERRY_DEFAULT_FILES };
	struct send_out so = { .tty = isatty(1) };
	const char *metrics_at = NULL;
	struct app_metrics *metrics = NULL;
	struct cli_common c;
	struct ferry_key key;
	struct ferry_report *rep;
	char host[256], port[8], dest[4096], why[512] = "";
	bool said;
	int opt, err, ck;

	cli_common_init(&c);
	while ((opt = cli_getopt("send", argc, argv, "P:l:Li:qvh", longopts)) !=
	       -1) {
		switch (opt) {
		case OPT_CKSUM:
			ck = ferry_cksum_parse(optarg);
			if (ck < 0) {
				fprintf(stderr, "ferry send: bad value '%s' for --cksum: want adler32, crc32c or none\n",
					optarg);
				return 2;
			}
			spec.cksum = (enum ferry_cksum)ck;
			break;
		case OPT_FORCE:
			spec.force = true;
			break;
		case OPT_SKIP_EXISTING:
			spec.skip_existing = true;
			break;
		case OPT_NO_RESUME:
			spec.no_resume = true;
			break;
		case OPT_RESUME:
			spec.no_resume = false; /* the default, said aloud */
			break;
		case 'L':
			spec.follow_symlinks = true;
			break;
		case OPT_METRICS:
			metrics_at = optarg;
			break;
		case OPT_FILES:
			if (!cli_uint("send", "--files", optarg, 1, FERRY_MAX_FILES,
				      &spec.files))
				return 2;
			break;
		case 'h':
			fputs(help_send, stdout);
			return 0;
		default:
			err = cli_common_opt(&c, "send", opt, optarg);
			if (err < 0)
				return 2;
			if (err == 0)
				cli_die_usage("send", "unknown option");
		}
	}
	if (argc - optind < 2)
		cli_die_usage("send", "give one or more PATHs and HOST[:PORT][:/DEST]");
	if (!parse_dest(argv[argc - 1], host, sizeof(host), port, sizeof(port),
			dest, sizeof(dest)))
		return 2;
	spec.paths = argv + optind;
	spec.n_paths = (size_t)(argc - optind - 1);
	spec.dest = dest;
	if (c.o.streams > c.o.slots)
		c.o.slots = c.o.streams;
	if (ferry_opts_check(&c.o, why, sizeof(why))) {
		fprintf(stderr, "ferry send: %s\n", why);
		return 2;
	}
	if (!cli_key("send", c.key_path, c.no_auth, &key, &c.o.key))
		return 2;
	cli_logger("send", c.quiet || c.json, c.verbose);
	if (!cli_key_name(&c, "send"))
		return 2;
	so.json = c.json;
	so.quiet = c.quiet;
	if (so.json && !(so.jf = tmpfile())) {
		fprintf(stderr, "ferry send: cannot make a temporary file\n");
		return 1;
	}
	spec.on_file = on_file;
	spec.arg = &so;
	if (!c.json && !c.quiet) {
		c.o.on_interval = on_interval;
		c.o.arg = &so;
	}
	if (metrics_at) {
		err = app_metrics_start("send", metrics_at, c.quiet || c.json,
					&metrics);
		if (err)
			return app_metrics_exit(err);
	}
	rep = malloc(sizeof(*rep));
	if (!rep) {
		fprintf(stderr, "ferry send: out of memory\n");
		app_metrics_stop(metrics);
		return 1;
	}
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	err = ferry_send(host, port, &c.o, &spec, rep, why, sizeof(why));
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
	if (so.tty && !c.json && !c.quiet)
		fputs("\r\033[K", stdout);
	if (c.json) {
		ferry_report_json_ex(rep, stdout, json_files, &so);
		fclose(so.jf);
	} else if (rep->files_total) {
		char b[32];
		printf("%llu of %llu files published, %llu skipped, %llu failed; %s in %.2f s, %.2f Gb/s\n",
		       (unsigned long long)rep->files_done,
		       (unsigned long long)rep->files_total,
		       (unsigned long long)rep->files_skipped,
		       (unsigned long long)rep->files_failed,
		       out_bytes(b, sizeof(b), (double)rep->bytes), secs,
		       ferry_gbps(rep->bytes, secs));
	}
	if (err && !said)
		fprintf(stderr, "ferry send: %s\n", why[0] ? why :
			ferry_strerror(err));
	free(rep);
	app_metrics_stop(metrics);
	return err ? 1 : 0;
}
