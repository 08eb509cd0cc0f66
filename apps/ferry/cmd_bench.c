/* ferry bench: memory-to-memory transfer against a `ferry recv`. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmds.h"
#include "ferry/error.h"
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
"      --cpus LIST       pin workers to these CPUs (default: the NIC's node)\n"
"      --numa N          put buffers on NUMA node N (default: the NIC's)\n"
"\n"
"Security:\n"
"      --key FILE        shared key (default $FERRY_KEY); both hosts need\n"
"                        the same file, made by `ferry keygen`\n"
"      --no-auth         no authentication (the receiver must allow it too;\n"
"                        loopback only)\n"
"\n"
"Output:\n"
"  -i, --interval SEC    seconds between interval lines (default 1, 0 off)\n"
"      --json            print one JSON document (start, intervals, end)\n"
"  -q, --quiet           only warnings and the summary\n"
"  -v, --verbose         debug messages from the library\n"
"      --timeout SEC     give up when the peer is silent this long (10)\n"
"\n"
"Exit status: 0 when every chunk arrived intact, 1 when the session\n"
"failed (the reason is printed), 2 on bad usage.\n"
"\n"
"Example: ferry bench -P 8 -t 30 --key /etc/ferry/key dtn2.example.org\n";

int cmd_bench(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "time", required_argument, NULL, 't' },
		{ "bytes", required_argument, NULL, 'n' },
		{ "streams", required_argument, NULL, 'P' },
		{ "chunk", required_argument, NULL, 'l' },
		CLI_COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	struct ferry_bench_spec spec = { .seconds = 10 };
	struct cli_common c;
	struct ferry_key key;
	struct ferry_report *rep;
	char host[256], port[8], why[512];
	uint64_t v;
	int opt, err;

	cli_common_init(&c);
	while ((opt = getopt_long(argc, argv, "t:n:P:l:i:qvh", longopts,
				  NULL)) != -1) {
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
	if (c.o.streams > c.o.slots)
		c.o.slots = c.o.streams; /* at least one slot per stream */
	if (ferry_opts_check(&c.o, why, sizeof(why))) {
		fprintf(stderr, "ferry bench: %s\n", why);
		return 2;
	}
	if (!cli_key("bench", c.key_path, c.no_auth, &key, &c.o.key))
		return 2;
	cli_logger("bench", c.quiet || c.json, c.verbose);
	if (!c.json && !c.quiet) {
		c.o.on_interval = out_interval;
		c.o.arg = stdout;
	}
	rep = malloc(sizeof(*rep));
	if (!rep) {
		fprintf(stderr, "ferry bench: out of memory\n");
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
	return err ? 1 : 0;
}
