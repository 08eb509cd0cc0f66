/* ferry-wanem: a WAN emulator between two DPDK ports. main() parses the
 * command line into a wanem_attr and hands it to the DPDK loop. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dpdk_io.h"
#include "opts.h"

static const char help[] =
"usage: ferry-wanem --dpdk \"EAL ARGS\" [--delay MS | --delay-ab MS --delay-ba MS]\n"
"                   [--rate RATE] [--loss PCT] [--dup PCT] [--reorder PCT]\n"
"                   [--corrupt PCT] [--queue BYTES] [--ecn BYTES] [--seed N]\n"
"                   [--json] [more options below]\n"
"\n"
"Forwards Ethernet frames between DPDK ports 0 and 1 and impairs them like\n"
"a wide-area path: delay, a rate limit with a queue, loss, duplication,\n"
"reordering, corruption and ECN marking, separately in each direction.\n"
"\n"
"Topology (bench/lib/wan.sh builds it):\n"
"\n"
"  namespace A                 ferry-wanem                 namespace B\n"
"  198.18.x.1/24 --veth-- [port 0 <==> port 1] --veth-- 198.18.x.2/24\n"
"\n"
"  Ports 0 and 1 are the first two DPDK ports, e.g. net_af_packet on the\n"
"  far ends of two veth pairs (ends with no IP address, so their kernel\n"
"  does not answer). A and B share one subnet and see each other as\n"
"  neighbours. \"ab\" is the direction port 0 -> port 1 (A to B), \"ba\" the\n"
"  other. Frames up to the port's frame size; af_packet's default ring\n"
"  frames carry an MTU of 1500 (framesz=16384 in its device arguments for\n"
"  jumbo frames).\n"
"\n"
"Each frame goes through: loss, corruption, duplication, reordering, the\n"
"bottleneck queue and its token bucket (with --rate), the delay line.\n"
"\n"
"Options:\n"
"  --dpdk \"ARGS\"      DPDK EAL arguments, one string (required), e.g.\n"
"                     \"--vdev=net_af_packet0,iface=wa --vdev=net_af_packet1,\n"
"                     iface=wb -l 0-1 --no-pci --in-memory\". Memory comes from\n"
"                     hugepages, or add --no-huge -m MB; two DPDK processes on\n"
"                     one host need distinct --file-prefix (or --in-memory).\n"
"  --delay MS         one-way delay in each direction, 0 to 1000 ms (fractions\n"
"                     allowed): the round trip gains 2 x MS.\n"
"  --delay-ab MS, --delay-ba MS\n"
"                     one-way delay of each direction on its own (default 0).\n"
"  --rate RATE        rate limit of each direction, counting Ethernet frame\n"
"                     bytes (header to payload, no FCS, preamble or gap):\n"
"                     a number with bit, kbit, mbit, gbit or tbit (powers of\n"
"                     10), e.g. 100mbit, 1gbit, 10gbit. Default: none.\n"
"  --burst BYTES      token bucket depth (default 2 ms of RATE, >= 16K).\n"
"  --queue BYTES      bottleneck queue in front of the rate limiter; frames\n"
"                     that would take it above BYTES are dropped (tail drop).\n"
"                     Default 50 ms of RATE, within 64K..64M. Needs --rate.\n"
"  --ecn BYTES        set ECN CE on ECN-capable IPv4/IPv6 packets (checksum\n"
"                     fixed) that find the queue, with them, above BYTES;\n"
"                     others pass unmarked. Needs --rate; below --queue.\n"
"  --loss PCT         lose PCT percent of frames at random (e.g. 0.1, 1%).\n"
"  --loss-burst N     with --loss: bursty loss instead (simple Gilbert model):\n"
"                     PCT percent lost overall, in bursts of N frames on\n"
"                     average (p = (PCT/100)/(1-PCT/100)/N, r = 1/N).\n"
"  --loss-ge P,R,LB,LG\n"
"                     Gilbert-Elliott loss, all in percent: P = chance per\n"
"                     frame of Good -> Bad, R = of Bad -> Good, LB / LG = loss\n"
"                     in Bad / Good (netem's \"gemodel P R 1-h 1-k\"). Lost\n"
"                     overall: (P*LB + R*LG) / (P + R).\n"
"  --dup PCT          send PCT percent of frames twice (a copy right after).\n"
"  --reorder PCT      hold PCT percent of frames back until the next frame\n"
"                     has passed them (at most 1 ms, then they go in order).\n"
"  --corrupt PCT      flip one random bit (past the Ethernet header) in PCT\n"
"                     percent of frames.\n"
"  --seed N           seed of the random impairments (default: from the\n"
"                     clock; the statistics show it, so a run can be repeated).\n"
"  --json             statistics as JSON lines on stdout (default: text).\n"
"  --stats-interval S also write statistics every S seconds (\"interval\").\n"
"  --mbufs N          packet buffers (default: enough for RATE x delay +\n"
"                     queue in each direction at 512-byte frames, or 250k\n"
"                     frames/s x delay without --rate; at most 1048576).\n"
"  --busy-poll        never sleep when idle (default: sleep up to 20 us).\n"
"  -h, --help         this text.\n"
"\n"
"Timing: frames leave the delay line when the polling thread next runs\n"
"after their release time; on a busy host start it at a real-time\n"
"priority (chrt -f 50 ferry-wanem ...; bench/lib/wan.sh does). It then\n"
"pauses 1 ms after 10 ms without sleeping, to stay under the kernel's\n"
"real-time throttle. \"late_us\" in the statistics says how late frames\n"
"left; \"loop\" how long the host held the thread.\n"
"\n"
"Statistics, per direction: rx, tx, dropped (loss, queue = tail drop, full =\n"
"out of buffers, flush = still queued at exit), duplicated, reordered,\n"
"corrupted, marked, queue peak; they add up: rx + duplicated = tx + dropped.\n"
"Once both ports are up it prints \"ferry-wanem: forwarding\" on stderr.\n"
"SIGINT or SIGTERM stops forwarding and writes them. Exit status 0, 1 on an\n"
"error (with the reason), 2 on bad usage. See docs/wan.md.\n";

enum {
	OPT_DPDK = 1000, OPT_DELAY, OPT_DELAY_AB, OPT_DELAY_BA, OPT_RATE,
	OPT_BURST, OPT_QUEUE, OPT_ECN, OPT_LOSS, OPT_LOSS_BURST, OPT_LOSS_GE,
	OPT_DUP, OPT_REORDER, OPT_CORRUPT, OPT_SEED, OPT_JSON, OPT_INTERVAL,
	OPT_MBUFS, OPT_BUSY,
};

static const struct option longopts[] = {
	{ "dpdk", required_argument, 0, OPT_DPDK },
	{ "delay", required_argument, 0, OPT_DELAY },
	{ "delay-ab", required_argument, 0, OPT_DELAY_AB },
	{ "delay-ba", required_argument, 0, OPT_DELAY_BA },
	{ "rate", required_argument, 0, OPT_RATE },
	{ "burst", required_argument, 0, OPT_BURST },
	{ "queue", required_argument, 0, OPT_QUEUE },
	{ "ecn", required_argument, 0, OPT_ECN },
	{ "loss", required_argument, 0, OPT_LOSS },
	{ "loss-burst", required_argument, 0, OPT_LOSS_BURST },
	{ "loss-ge", required_argument, 0, OPT_LOSS_GE },
	{ "dup", required_argument, 0, OPT_DUP },
	{ "reorder", required_argument, 0, OPT_REORDER },
	{ "corrupt", required_argument, 0, OPT_CORRUPT },
	{ "seed", required_argument, 0, OPT_SEED },
	{ "json", no_argument, 0, OPT_JSON },
	{ "stats-interval", required_argument, 0, OPT_INTERVAL },
	{ "mbufs", required_argument, 0, OPT_MBUFS },
	{ "busy-poll", no_argument, 0, OPT_BUSY },
	{ "help", no_argument, 0, 'h' },
	{ 0, 0, 0, 0 },
};

/* What the command line said, before it becomes per-direction attrs. */
struct cmdline {
	struct wanem_attr a;
	bool delay, delay_dir, seed;
	double loss, loss_burst;
	bool have_loss, have_burst, have_ge;
	struct wanem_loss_attr ge;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int usage(const char *why)
{
	fprintf(stderr, "ferry-wanem: %s (see ferry-wanem --help)\n", why);
	return 2;
}

static int parse_ge(const char *s, struct wanem_loss_attr *l, char *why,
		    size_t len)
{
	double v[4];
	char buf[64], *tok, *save = NULL;
	int n = 0;

	snprintf(buf, sizeof(buf), "%s", s);
	for (tok = strtok_r(buf, ",", &save); tok && n < 4;
	     tok = strtok_r(NULL, ",", &save))
		if (wanem_parse_pct(tok, &v[n++], why, len))
			return -EINVAL;
	if (n != 4 || tok) {
		snprintf(why, len, "bad --loss-ge '%s': want P,R,LB,LG in percent", s);
		return -EINVAL;
	}
	*l = (struct wanem_loss_attr){ .kind = WANEM_LOSS_GE, .p = v[0],
		.r = v[1], .loss_bad = v[2], .loss_good = v[3] };
	return 0;
}

/* One option into c; 0, or -EINVAL with the reason in why. */
static int option(struct cmdline *c, int opt, const char *arg, char *why,
		  size_t len)
{
	struct wanem_path_attr *ab = &c->a.dir[WANEM_AB], *ba = &c->a.dir[WANEM_BA];
	uint64_t v;
	double f;
	char *end;
	int rc = 0;

	switch (opt) {
	case OPT_DPDK:
		c->a.dpdk = arg;
		break;
	case OPT_DELAY:
		c->delay = true;
		rc = wanem_parse_ms(arg, &ab->delay_ns, why, len);
		ba->delay_ns = ab->delay_ns;
		break;
	case OPT_DELAY_AB:
	case OPT_DELAY_BA:
		c->delay_dir = true;
		rc = wanem_parse_ms(arg, opt == OPT_DELAY_AB ? &ab->delay_ns
							     : &ba->delay_ns, why, len);
		break;
	case OPT_RATE:
		rc = wanem_parse_rate(arg, &ab->rate_bps, why, len);
		ba->rate_bps = ab->rate_bps;
		break;
	case OPT_BURST:
	case OPT_QUEUE:
	case OPT_ECN:
		rc = wanem_parse_bytes(arg, &v, why, len);
		if (!rc && v == 0) {
			snprintf(why, len, "a size of 0 for --%s", opt == OPT_BURST ? "burst"
				 : opt == OPT_QUEUE ? "queue" : "ecn");
			rc = -EINVAL;
		}
		if (opt == OPT_BURST)
			ab->burst_bytes = ba->burst_bytes = v;
		else if (opt == OPT_QUEUE)
			ab->queue_bytes = ba->queue_bytes = v;
		else
			ab->ecn_bytes = ba->ecn_bytes = v;
		break;
	case OPT_LOSS:
		c->have_loss = true;
		rc = wanem_parse_pct(arg, &c->loss, why, len);
		break;
	case OPT_LOSS_BURST:
		c->have_burst = true;
		c->loss_burst = strtod(arg, &end);
		if (end == arg || *end || !(c->loss_burst >= 1 && c->loss_burst <= 1e6)) {
			snprintf(why, len, "bad --loss-burst '%s': want a mean burst "
				 "length in frames, 1 or more", arg);
			rc = -EINVAL;
		}
		break;
	case OPT_LOSS_GE:
		c->have_ge = true;
		rc = parse_ge(arg, &c->ge, why, len);
		break;
	case OPT_DUP:
	case OPT_REORDER:
	case OPT_CORRUPT:
		rc = wanem_parse_pct(arg, &f, why, len);
		if (opt == OPT_DUP)
			ab->dup = ba->dup = f;
		else if (opt == OPT_REORDER)
			ab->reorder = ba->reorder = f;
		else
			ab->corrupt = ba->corrupt = f;
		break;
	case OPT_SEED:
		c->seed = true;
		errno = 0;
		c->a.seed = strtoull(arg, &end, 0);
		if (end == arg || *end || errno || arg[0] == '-') {
			snprintf(why, len, "bad --seed '%s': want a whole number", arg);
			rc = -EINVAL;
		}
		break;
	case OPT_JSON:
		c->a.json = true;
		break;
	case OPT_INTERVAL:
		c->a.stats_interval = strtod(arg, &end);
		if (end == arg || *end || !(c->a.stats_interval >= 0.1 &&
					    c->a.stats_interval <= 86400)) {
			snprintf(why, len, "bad --stats-interval '%s': want seconds, "
				 "0.1 or more", arg);
			rc = -EINVAL;
		}
		break;
	case OPT_MBUFS:
		errno = 0;
		v = strtoull(arg, &end, 10);
		if (end == arg || *end || errno || v < 1024 || v > (1u << 31)) {
			snprintf(why, len, "bad --mbufs '%s': want 1024 to 2^31", arg);
			rc = -EINVAL;
		}
		c->a.mbufs = (uint32_t)v;
		break;
	case OPT_BUSY:
		c->a.busy_poll = true;
		break;
	default:
		snprintf(why, len, "unknown option");
		rc = -EINVAL;
	}
	return rc;
}

/* Cross-option rules, then the loss model into both directions. */
static int finish(struct cmdline *c, char *why, size_t len)
{
	struct wanem_loss_attr l = { .kind = WANEM_LOSS_NONE };

	if (!c->a.dpdk) {
		snprintf(why, len, "--dpdk \"EAL ARGS\" is required");
		return -EINVAL;
	}
	if (c->delay && c->delay_dir) {
		snprintf(why, len, "--delay or --delay-ab/--delay-ba, not both");
		return -EINVAL;
	}
	if (c->have_ge && (c->have_loss || c->have_burst)) {
		snprintf(why, len, "--loss-ge replaces --loss and --loss-burst");
		return -EINVAL;
	}
	if (c->have_burst && !c->have_loss) {
		snprintf(why, len, "--loss-burst needs --loss");
		return -EINVAL;
	}
	if (c->have_ge)
		l = c->ge;
	else if (c->have_burst && wanem_loss_gilbert(c->loss, c->loss_burst, &l)) {
		snprintf(why, len, "--loss below 100 with --loss-burst, and a burst "
			 "long enough for that loss");
		return -EINVAL;
	} else if (c->have_loss && !c->have_burst) {
		l = (struct wanem_loss_attr){ .kind = WANEM_LOSS_RANDOM,
					      .p_loss = c->loss };
	}
	c->a.dir[WANEM_AB].loss = c->a.dir[WANEM_BA].loss = l;
	if (!c->seed)
		c->a.seed = (uint64_t)time(NULL) * 1000003u ^ (uint64_t)getpid();
	return wanem_attr_finish(&c->a, why, len);
}

int main(int argc, char **argv)
{
	struct cmdline c = { 0 };
	char why[512];
	int opt, rc;

	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (opt == 'h') {
			fputs(help, stdout);
			return 0;
		}
		if (opt == '?')
			return usage("bad option");
		if (option(&c, opt, optarg, why, sizeof(why)))
			return usage(why);
	}
	if (optind < argc)
		return usage("unexpected argument");
	if (finish(&c, why, sizeof(why)))
		return usage(why);

	struct sigaction sa = { .sa_handler = on_signal };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	rc = wanem_dpdk_run(&c.a, &stop, why, sizeof(why));
	if (rc) {
		fprintf(stderr, "ferry-wanem: %s\n", why);
		return 1;
	}
	return 0;
}
