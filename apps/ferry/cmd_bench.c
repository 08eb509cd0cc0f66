/* ferry bench: memory-to-memory transfer against a `ferry recv`. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmds.h"
#include "ferry/error.h"
#include "metrics.h"
#include "out.h"

const char help_bench[] =
"usage: ferry bench [options] HOST[:PORT]\n"
"\n"
"Memory-to-memory transfer to a `ferry recv` on HOST (port 7471 unless\n"
"given), like iperf3 or ib_write_bw: the sender fills chunks, the receiver\n"
"checks each chunk's crc32c and discards it. Nothing touches a disk.\n"
"Prints an interval line every -i seconds and a summary with goodput\n"
"(Gb/s of payload), CPU time of both sides (CPU-seconds per GB), and what\n"
"memory and placement each side got.\n"
"\n"
"What to send (default -t 10):\n"
"  -t, --time SEC        send for SEC seconds\n"
"  -n, --bytes SIZE      send SIZE bytes (K, M, G, T suffixes), then stop\n"
"\n"
"Pipeline:\n"
"  -P, --streams N       parallel streams / queue pairs (default 4, max 256)\n"
"  -l, --chunk SIZE      payload per chunk, a multiple of 4K (default 4M)\n"
"      --slots N         receiver ring slots, split over the streams\n"
"                        (default 64; ring memory = slots x (chunk + 4K))\n"
"      --transport T     auto (default), tcp, uroce or verbs; auto says\n"
"                        which it picked and why\n"
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
"OSU-style message benchmarks (instead of -t and -n):\n"
"      --osu MODE        lat: ping-pong, latency is half the round trip;\n"
"                        bw: windows of messages one way, an ack after each;\n"
"                        bibw: windows both ways at once; mr: as bw, read as\n"
"                        messages/s. One pair of endpoints (bibw: two), each\n"
"                        message written straight to the peer's small ring\n"
"                        (tcp: one frame, TCP_NODELAY; uroce and verbs: one\n"
"                        RDMA WRITE with immediate)\n"
"      --sizes LIST      message sizes, 1 B to 4M: a range LO-HI (powers of\n"
"                        two from LO), a list (8,64,1K), or both; default 1-4M\n"
"      --iters N         timed iterations per size (default: lat 10000 up\n"
"                        to 8K, 1000 above; bw, bibw, mr 100 windows up to\n"
"                        8K, 20 above)\n"
"      --warmup N        untimed iterations before (default: a tenth)\n"
"      --window N        messages per window for bw, bibw, mr (default 64)\n"
"      --csv             CSV instead of the table (--json: one JSON document)\n"
"  Per size: latency avg, p50, p99 and max in us, MB/s, Gb/s, messages/s,\n"
"  and the CPU % of each side's process (the receiver reports its own).\n"
"  --poll busy|event sets how both sides wait (default busy, as MPI\n"
"  libraries poll), and is reported.\n"
"\n"
"Security:\n"
"      --key FILE        shared key (default $FERRY_KEY); both hosts need\n"
"                        the same file, made by `ferry keygen`\n"
"      --key-name NAME   the name a daemon's exports file gives the key\n"
"                        (default $FERRY_KEY_NAME, else the key file's name\n"
"                        without .key); a receiver with one key ignores it\n"
"      --no-auth         no authentication (the receiver must allow it too;\n"
"                        loopback only)\n"
"\n"
"Output:\n"
"  -i, --interval SEC    seconds between interval lines (default 1, 0 off)\n"
"      --json            print one JSON document (start, intervals, end)\n"
"      --metrics ADDR:PORT\n"
"                        serve Prometheus metrics over HTTP at\n"
"                        http://ADDR:PORT/metrics while it runs (:PORT:\n"
"                        every address; port 0: any free one, printed);\n"
"                        see docs/metrics.md\n"
"  -q, --quiet           only warnings and the summary\n"
"  -v, --verbose         debug messages from the library\n"
"      --timeout SEC     give up when the peer is silent this long (10)\n"
"\n"
"Exit status: 0 when every chunk arrived intact, 1 when the session\n"
"failed (the reason is printed), 2 on bad usage.\n"
"\n"
"Example: ferry bench -P 8 -t 30 --key /etc/ferry/key dtn2.example.org\n"
"         ferry bench --osu lat --sizes 1-64K --transport tcp dtn2\n";

enum { OPT_OSU = 2000, OPT_SIZES, OPT_ITERS, OPT_WARMUP, OPT_WINDOW, OPT_CSV };

struct osu_args {
	struct ferry_osu_spec spec;
	bool csv, sizes, other; /* other: an --osu option was given */
	bool bulk;              /* -t, -n, -P, -l or --slots was given */
};

/* Handle one --osu option. Returns 1 if handled, 0 if not one, -1 on a bad
 * value (reported). */
static int osu_opt(struct osu_args *a, int opt, const char *arg)
{
	char why[256];
	unsigned u;

	switch (opt) {
	case OPT_OSU:
		a->spec.mode = ferry_osu_mode_parse(arg);
		if (!a->spec.mode) {
			fprintf(stderr, "ferry bench: bad value '%s' for --osu: lat, bw, bibw or mr\n",
				arg);
			return -1;
		}
		return 1;
	case OPT_SIZES:
		if (ferry_osu_parse_sizes(arg, &a->spec, why, sizeof(why))) {
			fprintf(stderr, "ferry bench: --sizes: %s\n", why);
			return -1;
		}
		a->sizes = true;
		break;
	case OPT_ITERS:
		if (!cli_uint("bench", "--iters", arg, 1, FERRY_OSU_MAX_ITERS,
			      &a->spec.iters))
			return -1;
		break;
	case OPT_WARMUP:
		if (!cli_uint("bench", "--warmup", arg, 0, FERRY_OSU_MAX_ITERS, &u))
			return -1;
		a->spec.warmup = u ? u : FERRY_OSU_NO_WARMUP;
		break;
	case OPT_WINDOW:
		if (!cli_uint("bench", "--window", arg, 1, FERRY_OSU_MAX_WINDOW,
			      &a->spec.window))
			return -1;
		break;
	case OPT_CSV:
		a->csv = true;
		break;
	default:
		return 0;
	}
	a->other = true;
	return 1;
}

static int run_osu(const char *host, const char *port, struct cli_common *c,
		   struct osu_args *a)
{
	struct ferry_osu_result *res;
	char why[512] = "";
	int err;

	if (a->bulk)
		cli_die_usage("bench", "-t, -n, -P, -l and --slots do not go with --osu");
	if (!a->sizes)
		ferry_osu_default_sizes(&a->spec);
	res = malloc(sizeof(*res));
	if (!res) {
		fprintf(stderr, "ferry bench: out of memory\n");
		return 1;
	}
	err = ferry_osu(host, port, &c->o, &a->spec, res, why, sizeof(why));
	if (!err || res->n_rows) {
		if (c->json)
			ferry_osu_json(res, stdout);
		else if (a->csv)
			ferry_osu_csv(res, stdout);
		else
			ferry_osu_table(res, stdout);
	}
	if (err)
		fprintf(stderr, "ferry bench: %s\n", why[0] ? why :
			ferry_strerror(err));
	free(res);
	return err ? 1 : 0;
}

int cmd_bench(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "time", required_argument, NULL, 't' },
		{ "bytes", required_argument, NULL, 'n' },
		{ "streams", required_argument, NULL, 'P' },
		{ "chunk", required_argument, NULL, 'l' },
		{ "osu", required_argument, NULL, OPT_OSU },
		{ "sizes", required_argument, NULL, OPT_SIZES },
		{ "iters", required_argument, NULL, OPT_ITERS },
		{ "warmup", required_argument, NULL, OPT_WARMUP },
		{ "window", required_argument, NULL, OPT_WINDOW },
		{ "csv", no_argument, NULL, OPT_CSV },
		{ "metrics", required_argument, NULL, OPT_METRICS },
		CLI_COMMON_LONGOPTS,
		CLI_KEY_NAME_LONGOPT,
		{ NULL, 0, NULL, 0 },
	};
	struct ferry_bench_spec spec = { .seconds = 10 };
	struct osu_args osu = { 0 };
	const char *metrics_at = NULL;
	struct app_metrics *metrics = NULL;
	struct cli_common c;
	struct ferry_key key;
	struct ferry_report *rep;
	char host[256], port[8], why[512];
	uint64_t v;
	int opt, err;

	cli_common_init(&c);
	while ((opt = cli_getopt("bench", argc, argv, "t:n:P:l:i:qvh",
				 longopts)) != -1) {
		if (opt == 't' || opt == 'n' || opt == 'P' || opt == 'l' ||
		    opt == OPT_SLOTS)
			osu.bulk = true;
		err = osu_opt(&osu, opt, optarg);
		if (err < 0)
			return 2;
		if (err > 0)
			continue;
		switch (opt) {
		case 't':
			if (!cli_seconds("bench", "-t", optarg, 0.1, 86400 * 7,
					 &spec.seconds))
				return 2;
			break;
		case 'n':
			if (!cli_size("bench", "-n", optarg, &v))
				return 2;
			if (v == 0)
				cli_die_usage("bench", "-n must be more than 0");
			spec.bytes = v;
			break;
		case OPT_METRICS:
			metrics_at = optarg;
			break;
		case 'h':
			fputs(help_bench, stdout);
			return 0;
		default:
			err = cli_common_opt(&c, "bench", opt, optarg);
			if (err < 0)
				return 2;
			if (err == 0)
				cli_die_usage("bench", "unknown option");
		}
	}
	if (optind != argc - 1)
		cli_die_usage("bench", "give exactly one HOST[:PORT]");
	if (!cli_hostport("bench", argv[optind], host, sizeof(host), port,
			  sizeof(port)))
		return 2;
	if (osu.other && !osu.spec.mode)
		cli_die_usage("bench", "--sizes, --iters, --warmup, --window and --csv need --osu");
	if (c.o.streams > c.o.slots)
		c.o.slots = c.o.streams; /* at least one slot per stream */
	/* --osu sets its own geometry, and checks the options then */
	if (!osu.spec.mode && ferry_opts_check(&c.o, why, sizeof(why))) {
		fprintf(stderr, "ferry bench: %s\n", why);
		return 2;
	}
	if (!cli_key("bench", c.key_path, c.no_auth, &key, &c.o.key))
		return 2;
	cli_logger("bench", c.quiet || c.json, c.verbose);
	if (!cli_key_name(&c, "bench"))
		return 2;
	if (metrics_at) {
		err = app_metrics_start("bench", metrics_at, c.quiet || c.json,
					&metrics);
		if (err)
			return app_metrics_exit(err);
	}
	if (osu.spec.mode) {
		err = run_osu(host, port, &c, &osu);
		app_metrics_stop(metrics);
		return err;
	}
	if (!c.json && !c.quiet) {
		c.o.on_interval = out_interval;
		c.o.arg = stdout;
	}
	rep = malloc(sizeof(*rep));
	if (!rep) {
		fprintf(stderr, "ferry bench: out of memory\n");
		app_metrics_stop(metrics);
		return 1;
	}
	err = ferry_bench(host, port, &c.o, &spec, rep, why, sizeof(why));
	if (c.json)
		ferry_report_json(rep, stdout);
	else if (!err)
		out_summary(stdout, "", rep);
	if (err)
		fprintf(stderr, "ferry bench: %s\n", why[0] ? why :
			ferry_strerror(err));
	free(rep);
	app_metrics_stop(metrics);
	return err ? 1 : 0;
}
