/* Every option of every command, once (opts_table.h says how the table
 * is read). A row's help is one paragraph: --help wraps it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ferry/chunk.h"
#include "ferry/rocedump.h"
#include "ferry/xport.h"
#include "opts_table.h"

#define OFF(f) offsetof(struct cli_args, f)
#define AT(a, type, o) ((type *)(void *)((char *)(a) + (o)->off))

/* ---- setters: the generic ones store at o->off ---- */

static bool set_flag(struct cli_args *a, const struct cli_opt *o,
		     const char *arg)
{
	(void)arg;
	*AT(a, bool, o) = true;
	return true;
}

/* a flag that says the default aloud (--resume after --no-resume) */
static bool set_unflag(struct cli_args *a, const struct cli_opt *o,
		       const char *arg)
{
	(void)arg;
	*AT(a, bool, o) = false;
	return true;
}

static bool set_str(struct cli_args *a, const struct cli_opt *o,
		    const char *arg)
{
	*AT(a, const char *, o) = arg;
	return true;
}

static bool set_uint(struct cli_args *a, const struct cli_opt *o,
		     const char *arg)
{
	char l[40];

	return cli_uint(a->cmd, cli_opt_label(o, l, sizeof(l)), arg,
			(uint64_t)o->min, (uint64_t)o->max, AT(a, unsigned, o));
}

static bool set_size(struct cli_args *a, const struct cli_opt *o,
		     const char *arg)
{
	char l[40];

	return cli_size(a->cmd, cli_opt_label(o, l, sizeof(l)), arg,
			AT(a, uint64_t, o));
}

static bool set_secs(struct cli_args *a, const struct cli_opt *o,
		     const char *arg)
{
	char l[40];

	return cli_seconds(a->cmd, cli_opt_label(o, l, sizeof(l)), arg, o->min,
			   o->max, AT(a, double, o));
}

#define FLAG(f) .set = set_flag, .off = OFF(f)
#define UNFLAG(f) .set = set_unflag, .off = OFF(f)
#define STR(f) .set = set_str, .off = OFF(f)
#define UINT(f, lo, hi) .set = set_uint, .off = OFF(f), .min = (lo), .max = (hi)
#define SIZE(f) .set = set_size, .off = OFF(f)
#define SECS(f, lo, hi) .set = set_secs, .off = OFF(f), .min = (lo), .max = (hi)

/* ---- setters of one option each ---- */

static bool set_bytes(struct cli_args *a, const struct cli_opt *o,
		      const char *arg)
{
	(void)o;
	if (!cli_size(a->cmd, "-n", arg, &a->bench.bytes))
		return false;
	if (a->bench.bytes == 0)
		cli_die_usage(a->cmd, "-n must be more than 0");
	return true;
}

static bool set_numa(struct cli_args *a, const struct cli_opt *o,
		     const char *arg)
{
	unsigned u;

	(void)o;
	if (!cli_uint(a->cmd, "--numa", arg, 0, 1023, &u))
		return false;
	a->c.o.numa_node = (int)u;
	return true;
}

static bool set_timeout(struct cli_args *a, const struct cli_opt *o,
			const char *arg)
{
	double d;

	(void)o;
	if (!cli_seconds(a->cmd, "--timeout", arg, 0.1, 3600, &d))
		return false;
	a->c.o.timeout_ms = (int)(d * 1000);
	return true;
}

static bool set_sockbuf(struct cli_args *a, const struct cli_opt *o,
			const char *arg)
{
	uint64_t v;

	(void)o;
	if (!cli_size(a->cmd, "--sockbuf", arg, &v))
		return false;
	if (v > (1ull << 30)) {
		fprintf(stderr, "%s: --sockbuf is at most 1G\n", cli_who(a->cmd));
		return false;
	}
	a->c.o.xport.tcp.sockbuf = v;
	return true;
}

/* -P and --slots: the user's, kept as given (not planned for the path) */
static bool set_streams(struct cli_args *a, const struct cli_opt *o,
			const char *arg)
{
	a->c.o.fixed |= FERRY_FIXED_STREAMS;
	return set_uint(a, o, arg);
}

static bool set_slots(struct cli_args *a, const struct cli_opt *o,
		      const char *arg)
{
	a->c.o.fixed |= FERRY_FIXED_SLOTS;
	return set_uint(a, o, arg);
}

static bool set_dpdk(struct cli_args *a, const struct cli_opt *o,
		     const char *arg)
{
	(void)o;
	/* uroce's settings, over FERRY_DPDK and FERRY_UROCE_IP, which
	 * ferry_opts_init read */
	a->c.o.xport.uroce.eal = arg;
	return true;
}

static bool set_uroce_ip(struct cli_args *a, const struct cli_opt *o,
			 const char *arg)
{
	(void)o;
	a->c.o.xport.uroce.ip = arg;
	return true;
}

static bool set_poll(struct cli_args *a, const struct cli_opt *o,
		     const char *arg)
{
	(void)o;
	if (strcmp(arg, "busy") == 0)
		a->c.o.poll_mode = FERRY_POLL_BUSY;
	else if (strcmp(arg, "event") == 0)
		a->c.o.poll_mode = FERRY_POLL_EVENT;
	else {
		fprintf(stderr, "%s: bad value '%s' for --poll: busy or event\n",
			cli_who(a->cmd), arg);
		return false;
	}
	return true;
}

static bool set_dscp(struct cli_args *a, const struct cli_opt *o,
		     const char *arg)
{
	unsigned u;

	(void)o;
	if (!cli_uint(a->cmd, "--dscp", arg, 0, FERRY_DSCP_MAX, &u))
		return false;
	a->c.o.dscp = (int)u;
	return true;
}

/* A traffic-class byte, as verbs tools and iperf3 -S take it (decimal,
 * or hex after 0x): its top six bits are the DSCP, its ECN bits are the
 * transport's own. */
static bool set_tclass(struct cli_args *a, const struct cli_opt *o,
		       const char *arg)
{
	char *end;
	unsigned long v;

	(void)o;
	errno = 0;
	v = (arg[0] == '0' && (arg[1] == 'x' || arg[1] == 'X')) ?
		    strtoul(arg + 2, &end, 16) : strtoul(arg, &end, 10);
	if (end == arg || (arg[0] == '0' && end == arg + 2) || *end ||
	    errno || arg[0] == '-' || v > 255) {
		fprintf(stderr, "%s: bad value '%s' for --tclass: want a traffic-class byte from 0 to 255 (or 0x00 to 0xff); its top six bits are the DSCP\n",
			cli_who(a->cmd), arg);
		return false;
	}
	a->c.o.dscp = (int)(v >> 2);
	return true;
}

static bool set_key_name(struct cli_args *a, const struct cli_opt *o,
			 const char *arg)
{
	(void)o;
	snprintf(a->c.key_name, sizeof(a->c.key_name), "%s", arg);
	if (strlen(arg) >= sizeof(a->c.key_name))
		a->c.key_name[0] = '?'; /* refused by cli_key_name */
	return true;
}

static bool set_osu(struct cli_args *a, const struct cli_opt *o,
		    const char *arg)
{
	(void)o;
	a->osu.mode = ferry_osu_mode_parse(arg);
	if (!a->osu.mode) {
		fprintf(stderr, "ferry bench: bad value '%s' for --osu: lat, bw, bibw or mr\n",
			arg);
		return false;
	}
	return true;
}

static bool set_sizes(struct cli_args *a, const struct cli_opt *o,
		      const char *arg)
{
	char why[256];

	(void)o;
	if (ferry_osu_parse_sizes(arg, &a->osu, why, sizeof(why))) {
		fprintf(stderr, "ferry bench: --sizes: %s\n", why);
		return false;
	}
	a->osu_sizes = true;
	return true;
}

static bool set_warmup(struct cli_args *a, const struct cli_opt *o,
		       const char *arg)
{
	unsigned u;

	(void)o;
	if (!cli_uint("bench", "--warmup", arg, 0, FERRY_OSU_MAX_ITERS, &u))
		return false;
	a->osu.warmup = u ? u : FERRY_OSU_NO_WARMUP;
	return true;
}

static bool set_cksum(struct cli_args *a, const struct cli_opt *o,
		      const char *arg)
{
	int ck = ferry_cksum_parse(arg);

	(void)o;
	if (ck >= 0) {
		a->send.cksum = (enum ferry_cksum)ck;
		return true;
	}
	if (strcmp(a->cmd, "cp") == 0) /* cp has always said it so */
		cli_die_usage("cp", "--cksum is adler32, crc32c or none");
	fprintf(stderr, "%s: bad value '%s' for --cksum: want adler32, crc32c or none\n",
		cli_who(a->cmd), arg);
	return false;
}

static bool set_marker(struct cli_args *a, const struct cli_opt *o,
		       const char *arg)
{
	double d;

	(void)o;
	if (!cli_seconds(a->cmd, "--marker", arg, 0.2, 600, &d))
		return false;
	a->marker_ms = (unsigned)(d * 1000);
	return true;
}

static bool set_port(struct cli_args *a, const struct cli_opt *o,
		     const char *arg)
{
	unsigned port;

	(void)o;
	if (!cli_uint(a->cmd, "-p", arg, 1, 65535, &port))
		return false;
	a->port = arg;
	return true;
}

/* The smallest ring a session can have: one slot of the smallest chunk
 * (the chunk header's block, then the payload). */
#define MIN_RING (FERRY_CHUNK_HDR_SPACE + FERRY_MIN_CHUNK)

static bool set_max_mem(struct cli_args *a, const struct cli_opt *o,
			const char *arg)
{
	uint64_t v;

	(void)o;
	if (!cli_size(a->cmd, "--max-mem", arg, &v))
		return false;
	if (v < MIN_RING) {
		fprintf(stderr, "%s: bad value '%s' for --max-mem: a session's ring needs at least 8K (one slot of the smallest chunk); senders ask for 64 slots of 4M (256M) by default\n",
			cli_who(a->cmd), arg);
		return false;
	}
	a->c.o.max_mem = v;
	return true;
}

static bool set_fsync(struct cli_args *a, const struct cli_opt *o,
		      const char *arg)
{
	(void)o;
	a->c.o.fsync_mode = ferry_fsync_parse(arg);
	if (a->c.o.fsync_mode < 0) {
		fprintf(stderr, "%s: --fsync takes batch, file or end, not '%s'\n",
			cli_who(a->cmd), arg);
		return false;
	}
	return true;
}

static bool refuse_slots(struct cli_args *a, const struct cli_opt *o,
			 const char *arg)
{
	(void)o;
	(void)arg;
	fprintf(stderr, "%s: --slots is the sender's choice (ferry send/bench --slots); bound the receiver's memory with --max-mem\n",
		cli_who(a->cmd));
	return false;
}

static bool set_positive(struct cli_args *a, const struct cli_opt *o,
			 const char *arg)
{
	char *end, l[40];
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (end == arg || *end || errno || !(v > 0 && v <= o->max)) {
		fprintf(stderr, "%s: bad value '%s' for %s: want a number above 0, at most %g\n",
			cli_who(a->cmd), arg, cli_opt_label(o, l, sizeof(l)), o->max);
		return false;
	}
	*AT(a, double, o) = v;
	return true;
}

/* "2G", "500M", "1.5G", "800000": bits per second, decimal units. */
static bool set_rate(struct cli_args *a, const struct cli_opt *o,
		     const char *arg)
{
	char *end, l[40];
	double v, mul = 1;

	errno = 0;
	v = strtod(arg, &end);
	switch (*end) {
	case 'k': case 'K': mul = 1e3; end++; break;
	case 'm': case 'M': mul = 1e6; end++; break;
	case 'g': case 'G': mul = 1e9; end++; break;
	case 't': case 'T': mul = 1e12; end++; break;
	}
	v *= mul;
	if (end == arg || *end || errno || !(v >= 1000 && v <= 1e15)) {
		fprintf(stderr, "%s: bad value '%s' for %s: want bits per second such as 500M, 2G or 1.5G (decimal: 1G = 10^9), at least 1K\n",
			cli_who(a->cmd), arg, cli_opt_label(o, l, sizeof(l)));
		return false;
	}
	a->c.o.rate_bps = (uint64_t)v;
	return true;
}

static bool set_roce_port(struct cli_args *a, const struct cli_opt *o,
			  const char *arg)
{
	(void)o;
	return cli_uint(a->cmd, "--port", arg, 1, 65535, &a->roce_port);
}

void cli_args_init(struct cli_args *a, const char *cmd)
{
	memset(a, 0, sizeof(*a));
	a->cmd = cmd;
	cli_common_init(&a->c);
	a->bench.seconds = 10;
	a->send.cksum = FERRY_CKSUM_ADLER32;
	a->send.files = FERRY_DEFAULT_FILES;
	a->port = FERRY_DEFAULT_PORT;
	a->max_sessions = 4;
	a->doctor.root = "/";
	a->roce_port = FERRY_ROCEDUMP_PORT;
	a->split = UINT64_C(1) << 30;
}

/* ---- the table, in the order --help lists each group ---- */

#define SENDERS (CLI_BENCH | CLI_SEND | CLI_CP | CLI_STAGE)
#define FILERS (CLI_SEND | CLI_STAGE) /* send's file options */
#define PEERS (SENDERS | CLI_RECV)
#define EVERY (PEERS | CLI_DOCTOR | CLI_ROCEDUMP | CLI_KEYGEN | CLI_VERSION)

const struct cli_opt cli_opts[] = {
	/* bench: what to send */
	{ .name = "time", .letter = 't', .arg = "SEC", .cmds = CLI_BENCH,
	  .group = G_WHAT, .mark = CLI_M_BULK,
	  SECS(bench.seconds, 0.1, 86400 * 7),
	  .help = "send for SEC seconds",
	  .like = "iperf3 -t, --time" },
	{ .name = "bytes", .letter = 'n', .arg = "SIZE", .cmds = CLI_BENCH,
	  .group = G_WHAT, .mark = CLI_M_BULK, .set = set_bytes,
	  .help = "send SIZE bytes, then stop",
	  .like = "iperf3 -n, --bytes" },

	/* files: send and cp */
	{ .name = "cksum", .arg = "TYPE", .cmds = FILERS | CLI_CP,
	  .group = G_FILES, .set = set_cksum,
	  .help = "adler32 (default), crc32c or none: the whole-file checksum "
		  "compared before publishing and printed (crc32c is always "
		  "compared; chunks always checked)",
	  .like = "xrdcp -C, --cksum" },
	{ .name = "force", .letter = 'f', .cmds = FILERS, .group = G_FILES,
	  FLAG(send.force),
	  .help = "replace existing targets (default: such a file fails, "
		  "before any of its data moves, and the others go on; a "
		  "target identical to its source - same size, mtime and "
		  "checksum - is skipped instead)",
	  .like = "xrdcp -f, --force" },
	{ .name = "force", .letter = 'f', .cmds = CLI_CP, .group = G_FILES,
	  FLAG(send.force),
	  .help = "replace existing targets (default: refuse); on a daemon "
		  "that takes the delete right where a file is replaced",
	  .like = "xrdcp -f, --force" },
	{ .name = "skip-existing", .cmds = FILERS | CLI_CP, .group = G_FILES,
	  FLAG(send.skip_existing),
	  .help = "skip targets of the same size and checksum" },
	{ .name = "no-resume", .cmds = FILERS, .group = G_FILES,
	  FLAG(send.no_resume),
	  .help = "ignore journals of earlier attempts; start over" },
	{ .name = "resume", .cmds = FILERS, .group = G_FILES,
	  UNFLAG(send.no_resume),
	  .help = "use them (the default; undoes an earlier --no-resume)",
	  .like = "xrdcp --continue" },
	{ .name = "follow-symlinks", .letter = 'L', .cmds = FILERS,
	  .group = G_FILES, FLAG(send.follow_symlinks),
	  .help = "send what symlinks point to" },
	{ .name = "follow-symlinks", .letter = 'L', .cmds = CLI_CP,
	  .group = G_FILES, FLAG(send.follow_symlinks),
	  .help = "push: send what local symlinks point to (a daemon never "
		  "follows a symlink out of its export)" },
	{ .name = "files", .arg = "N", .cmds = FILERS, .group = G_FILES,
	  UINT(send.files, 1, FERRY_MAX_FILES),
	  .help = "files in flight at once (default 4, at most 256)",
	  .like = "xrdcp --parallel" },
	{ .name = "split", .arg = "SIZE", .cmds = CLI_STAGE, .group = G_FILES,
	  SIZE(split),
	  .help = "a file larger than SIZE is cut into one range per rank "
		  "(on chunk boundaries), each sent by its own rank and the "
		  "file published whole by its receiver once every range is "
		  "in and checked (default 1G; 0: never split)" },
	{ .name = "map", .arg = "FILE", .cmds = CLI_STAGE, .group = G_FILES,
	  STR(map),
	  .help = "which destination each rank sends to: lines \"RANK N\", N "
		  "counting the ferry:// destinations from 1 in the order "
		  "given ('#' starts a comment); ranks not listed go round "
		  "robin (rank r to destination r mod the count + 1)" },

	/* files: the receiver */
	{ .name = "exports", .letter = 'e', .arg = "FILE", .cmds = CLI_RECV,
	  .group = G_FILES, STR(c.o.exports),
	  .help = "be a daemon with the export root, keys, rights and path "
		  "prefixes in FILE (instead of --dir and --key); clients "
		  "name their key (--key-name)" },
	{ .name = "dir", .letter = 'd', .arg = "DIR", .cmds = CLI_RECV,
	  .group = G_FILES, STR(c.o.dir),
	  .help = "receive files below DIR (required for file sessions; "
		  "nothing is ever written outside it: absolute paths, '..' "
		  "and symlinked parents are refused). The free space is "
		  "checked against the file list before any data moves." },
	{ .name = "fsync", .arg = "MODE", .cmds = CLI_RECV, .group = G_FILES,
	  .set = set_fsync,
	  .help = "when published files reach the disk: batch (default: one "
		  "syncfs for up to 256 files or 256 MiB, then their renames), "
		  "file (fsync each file before its rename, its directory "
		  "after) or end (rename as verified, one syncfs before the "
		  "session's result). With any of them a file is published "
		  "only whole and verified, and the sender exits 0 only once "
		  "its files are on disk; after a power cut mid-session, "
		  "\"end\" may show a published file whose data did not "
		  "reach it" },
	{ .name = "keep-setid", .cmds = CLI_RECV, .group = G_FILES,
	  FLAG(c.o.keep_setid),
	  .help = "keep the setuid, setgid and sticky bits of files and "
		  "directories (dropped by default; never kept with "
		  "--exports)" },

	/* listening */
	{ .name = "port", .letter = 'p', .arg = "PORT", .cmds = CLI_RECV,
	  .group = G_LISTEN, .set = set_port,
	  .help = "control port (default 7471)",
	  .like = "iperf3 -p, --port" },
	{ .name = "bind", .letter = 'B', .arg = "ADDR", .cmds = CLI_RECV,
	  .group = G_LISTEN, STR(bind),
	  .help = "listen on ADDR only (default: every address)",
	  .like = "iperf3 -B, --bind" },
	{ .name = "once", .cmds = CLI_RECV, .group = G_LISTEN, FLAG(once),
	  .help = "serve one session, then exit with its status",
	  .like = "iperf3 -1, --one-off" },
	{ .name = "max-sessions", .arg = "N", .cmds = CLI_RECV,
	  .group = G_LISTEN, UINT(max_sessions, 1, 64),
	  .help = "sessions served at once (default 4); an authenticated "
		  "sender beyond that waits up to --timeout for a slot, then "
		  "is told the receiver is busy. Connections still in their "
		  "handshake hold no slot: at most 64 at once (16 from one "
		  "address), the oldest silent one closed to make room; the "
		  "first byte must come within 3 s, the handshake end within "
		  "10 s" },
	{ .name = "max-mem", .arg = "SIZE", .cmds = CLI_RECV,
	  .group = G_LISTEN, .set = set_max_mem,
	  .help = "largest ring one session may ask for (default 4G)" },

	/* the pipeline */
	{ .name = "streams", .alias = "parallel", .letter = 'P', .arg = "N",
	  .cmds = SENDERS,
	  .group = G_PIPELINE, .mark = CLI_M_BULK,
	  .set = set_streams, .off = OFF(c.o.streams), .min = 1,
	  .max = FERRY_MAX_STREAMS,
	  .help = "parallel streams / queue pairs (default: planned for the "
		  "path, at least 4, so that the tcp windows hold its "
		  "bandwidth-delay product; where that takes more than 4 "
		  "and no --rate says the target, 4 start and more join "
		  "while they add goodput; given, all carry data; "
		  "max 256)",
	  .like = "iperf3 -P, --parallel; xrdcp -S, --streams" },
	{ .name = "port", .letter = 'p', .arg = "PORT",
	  .cmds = CLI_BENCH | CLI_SEND, .group = G_PIPELINE, .set = set_port,
	  .help = "the receiver's control port when HOST gives none (default "
		  "7471)",
	  .like = "iperf3 -p, --port" },
	{ .name = "bitrate", .alias = "rate", .letter = 'b', .arg = "RATE",
	  .cmds = CLI_STAGE, .group = G_PIPELINE, .set = set_rate,
	  .help = "the whole job sends at most RATE bits of payload per "
		  "second, e.g. 2G or 500M (decimal units; default: no cap): "
		  "each rank is paced at RATE / ranks, chunk by chunk, over "
		  "tcp each socket by the kernel too, and over uroce each "
		  "packet",
	  .like = "iperf3 -b, --bitrate" },
	{ .name = "bitrate", .alias = "rate", .letter = 'b', .arg = "RATE",
	  .cmds = SENDERS & ~CLI_STAGE, .group = G_PIPELINE,
	  .mark = CLI_M_BULK | CLI_M_SHAPE, .set = set_rate,
	  .help = "send at most RATE bits of payload per second over all "
		  "streams, e.g. 2G or 500M (decimal units; default: no cap): "
		  "chunks are paced, over tcp each socket by the kernel too, "
		  "and over uroce each packet",
	  .like = "iperf3 -b, --bitrate" },
	{ .name = "chunk", .letter = 'l', .arg = "SIZE",
	  .cmds = SENDERS, .group = G_PIPELINE,
	  .mark = CLI_M_BULK | CLI_M_SHAPE, SIZE(c.o.chunk_size),
	  .help = "payload per chunk, a multiple of 4K (default 4M)",
	  .like = "iperf3 -l, --length" },
	{ .name = "slots", .arg = "N", .cmds = SENDERS,
	  .group = G_PIPELINE, .mark = CLI_M_BULK | CLI_M_SHAPE,
	  .set = set_slots, .off = OFF(c.o.slots), .min = 1,
	  .max = FERRY_MAX_SLOTS,
	  .help = "ring slots, split over the streams (default: planned for "
		  "the path, at least 64, to hold its bandwidth-delay product "
		  "within the receiver's --max-mem; fewer when the files fill "
		  "fewer: one per chunk they hold; ring memory = slots x "
		  "(chunk + 4K))" },
	{ .name = "slots", .arg = "N", .cmds = CLI_RECV, .group = G_HIDDEN,
	  .set = refuse_slots },
	{ .name = "transport", .arg = "T", .cmds = PEERS, .group = G_PIPELINE,
	  STR(c.o.transport),
	  .help = "auto (default), or one of this build's transports, in "
		  "the order auto prefers them: " CLI_XPORTS "; auto says which "
		  "it picked and why" },
	{ .name = "sockbuf", .arg = "SIZE", .cmds = PEERS,
	  .group = G_PIPELINE, .set = set_sockbuf,
	  .help = "tcp socket buffers, both directions, per stream (default: "
		  "the receive buffer autotuned by the kernel; the send buffer "
		  "32M per session split over the streams, where tcp_wmem's "
		  "maximum is smaller)",
	  .like = "iperf3 -w, --window" },
	{ .name = "dpdk", .arg = "\"ARGS\"", .cmds = PEERS,
	  .group = G_PIPELINE, .set = set_dpdk,
	  .help = "uroce: DPDK EAL arguments (or $FERRY_DPDK), e.g. "
		  "\"--vdev=net_af_packet0,iface=eth1\"; see docs/uroce.md" },
	{ .name = "uroce-ip", .arg = "ADDR", .cmds = PEERS,
	  .group = G_PIPELINE, .set = set_uroce_ip,
	  .help = "uroce: the IPv4 address its frames carry (default: the "
		  "port's interface address)" },
	{ .name = "poll", .arg = "MODE", .cmds = PEERS, .group = G_PIPELINE,
	  .set = set_poll,
	  .help = "busy or event: spin on completions (lowest latency, a "
		  "core per stream) or sleep until signalled; default busy on "
		  "verbs (event when the streams outnumber the CPUs), event on "
		  "uroce (a worker spins 50 us after a completion; frames that "
		  "stream in are gathered 30 us at a time) and on tcp" },
	{ .name = "dscp", .arg = "N", .cmds = PEERS, .group = G_PIPELINE,
	  .set = set_dscp,
	  .help = "mark every packet of the session, both ways, with DSCP N "
		  "(0-63; default: unmarked, the system's default), for a "
		  "fabric that gives staging its own priority and queue: tcp "
		  "sets IP_TOS (IPv6: IPV6_TCLASS) to N x 4 on the control "
		  "connection and every data stream; uroce writes N into "
		  "every frame's IPv4 DS field beside its ECN bits; verbs "
		  "gives its queue pairs the traffic class N x 4. The "
		  "sender's class wins: the receiver marks its own packets "
		  "(credits, ACKs, control) with it, and with its own --dscp "
		  "only for senders that name none (and, with --exports, the "
		  "pushes it runs)",
	  .like = "iperf3 --dscp" },
	{ .name = "tclass", .arg = "N", .cmds = PEERS, .group = G_PIPELINE,
	  .set = set_tclass,
	  .help = "the same as --dscp, given as a traffic-class byte (0-255, "
		  "or 0x00-0xff), as verbs tools and iperf3 -S take it: its "
		  "top six bits are the DSCP (--tclass 40 is --dscp 10), its "
		  "two ECN bits are ignored",
	  .like = "iperf3 -S, --tos" },
	{ .name = "cpus", .arg = "LIST", .cmds = PEERS, .group = G_PIPELINE,
	  STR(c.o.cpulist),
	  .help = "pin this host's workers to these CPUs (default: the NIC's "
		  "node)",
	  .like = "iperf3 -A, --affinity" },
	{ .name = "numa", .arg = "N", .cmds = PEERS, .group = G_PIPELINE,
	  .set = set_numa,
	  .help = "put this host's buffers on NUMA node N (default: the "
		  "NIC's)" },

	/* bench --osu */
	{ .name = "osu", .arg = "MODE", .cmds = CLI_BENCH, .group = G_OSU,
	  .set = set_osu,
	  .help = "lat: ping-pong, latency is half the round trip; bw: "
		  "windows of messages one way, an ack after each; bibw: "
		  "windows both ways at once; mr: as bw, read as messages/s. "
		  "One pair of endpoints (bibw: two), each message written "
		  "straight to the peer's small ring (tcp: one frame, "
		  "TCP_NODELAY; uroce and verbs: one RDMA WRITE with "
		  "immediate)" },
	{ .name = "sizes", .arg = "LIST", .cmds = CLI_BENCH, .group = G_OSU,
	  .mark = CLI_M_OSU, .set = set_sizes,
	  .help = "message sizes, 1 B to 4M: a range LO-HI (powers of two "
		  "from LO), a list (8,64,1K), or both; default 1-4M" },
	{ .name = "iters", .arg = "N", .cmds = CLI_BENCH, .group = G_OSU,
	  .mark = CLI_M_OSU, UINT(osu.iters, 1, FERRY_OSU_MAX_ITERS),
	  .help = "timed iterations per size (default: lat 10000 up to 8K, "
		  "1000 above; bw, bibw, mr 100 windows up to 8K, 20 above)" },
	{ .name = "warmup", .arg = "N", .cmds = CLI_BENCH, .group = G_OSU,
	  .mark = CLI_M_OSU, .set = set_warmup,
	  .help = "untimed iterations before (default: a tenth)" },
	{ .name = "window", .arg = "N", .cmds = CLI_BENCH, .group = G_OSU,
	  .mark = CLI_M_OSU, UINT(osu.window, 1, FERRY_OSU_MAX_WINDOW),
	  .help = "messages per window for bw, bibw, mr (default 64)" },
	{ .name = "csv", .cmds = CLI_BENCH, .group = G_OSU, .mark = CLI_M_OSU,
	  FLAG(csv),
	  .help = "CSV instead of the table (--json: one JSON document)" },

	/* doctor */
	{ .name = "rtt", .arg = "MS", .cmds = CLI_DOCTOR, .group = G_CHECKS,
	  .set = set_positive, .off = OFF(doctor.rtt_ms), .max = 60000,
	  .help = "round-trip time of your longest path (default 100)" },
	{ .name = "rate", .arg = "GBPS", .cmds = CLI_DOCTOR, .group = G_CHECKS,
	  .set = set_positive, .off = OFF(doctor.rate_gbps), .max = 100000,
	  .help = "rate to plan for, in Gb/s (default: the fastest checked "
		  "NIC's port speed, else 10)" },
	{ .name = "netdev", .arg = "IF", .cmds = CLI_DOCTOR, .group = G_CHECKS,
	  STR(doctor.netdev),
	  .help = "check only this netdev, or this RDMA device, and what "
		  "rides on it (default: every netdev with a device link, "
		  "i.e. not virtual, and every RDMA device)" },
	{ .name = "root", .arg = "DIR", .cmds = CLI_DOCTOR, .group = G_CHECKS,
	  STR(doctor.root),
	  .help = "read DIR/sys and DIR/proc instead (a copy of a host)" },

	/* rocedump */
	{ .name = "port", .letter = 'p', .arg = "N", .cmds = CLI_ROCEDUMP,
	  .group = G_CAPTURE, .set = set_roce_port,
	  .help = "the RoCEv2 UDP destination port (default 4791)" },

	/* security */
	{ .name = "key", .arg = "FILE", .cmds = PEERS, .group = G_SECURITY,
	  STR(c.key_path),
	  .help = "shared key (default $FERRY_KEY), made by `ferry keygen`; "
		  "both hosts need the same file" },
	{ .name = "key-name", .arg = "NAME", .cmds = SENDERS,
	  .group = G_SECURITY, .set = set_key_name,
	  .help = "the name a daemon's exports file gives the key (default "
		  "$FERRY_KEY_NAME, else the key file's name without .key); a "
		  "receiver with one key ignores it" },
	{ .name = "no-auth", .cmds = PEERS, .group = G_SECURITY,
	  FLAG(c.no_auth),
	  .help = "no authentication, loopback only: a receiver takes it only "
		  "with a loopback --bind address (127.0.0.1 or ::1), and a "
		  "sender needs a receiver that does" },

	/* output */
	{ .name = "interval", .letter = 'i', .arg = "SEC",
	  .cmds = PEERS & ~CLI_STAGE,
	  .group = G_OUTPUT, SECS(c.o.interval, 0, 3600),
	  .help = "seconds between progress lines (default 1, 0 off)",
	  .like = "iperf3 -i, --interval" },
	{ .name = "json", .letter = 'J', .cmds = CLI_BENCH, .group = G_OUTPUT,
	  FLAG(c.json),
	  .help = "print one JSON document (start, intervals, end)",
	  .like = "iperf3 -J, --json" },
	{ .name = "json", .letter = 'J', .cmds = CLI_SEND | CLI_CP,
	  .group = G_OUTPUT, FLAG(c.json),
	  .help = "one JSON document with per-file results",
	  .like = "iperf3 -J, --json" },
	{ .name = "json", .letter = 'J', .cmds = CLI_STAGE, .group = G_OUTPUT,
	  FLAG(c.json),
	  .help = "rank 0 prints one JSON document for the whole job: the "
		  "totals, each rank's sessions and each file that failed",
	  .like = "iperf3 -J, --json" },
	{ .name = "json", .letter = 'J', .cmds = CLI_RECV, .group = G_OUTPUT,
	  FLAG(c.json),
	  .help = "one JSON document per session on stdout, each on one line "
		  "(JSON Lines)",
	  .like = "iperf3 -J, --json" },
	{ .name = "json", .letter = 'J', .cmds = CLI_DOCTOR, .group = G_OUTPUT,
	  FLAG(c.json),
	  .help = "one JSON document: checks (name, status, value, fix) and "
		  "summary counts" },
	{ .name = "metrics", .arg = "ADDR:PORT",
	  .cmds = CLI_BENCH | CLI_SEND | CLI_CP | CLI_RECV, .group = G_OUTPUT,
	  STR(metrics_at),
	  .help = "serve Prometheus metrics over HTTP at "
		  "http://ADDR:PORT/metrics while it runs (:PORT: every "
		  "address; port 0: any free one, printed): bytes, chunks, "
		  "goodput, sessions, errors, files, CPU; see docs/metrics.md" },
	{ .name = "metrics-host", .cmds = CLI_BENCH | CLI_SEND | CLI_CP | CLI_RECV,
	  .group = G_OUTPUT, FLAG(metrics_host),
	  .help = "with --metrics, the host's own series too: TCP segments "
		  "sent and retransmitted, context switches, NIC drops (off by "
		  "default: node_exporter owns them, and several ferry "
		  "processes on a host would count them twice)" },
	{ .name = "marker", .arg = "SEC", .cmds = CLI_CP, .group = G_OUTPUT,
	  .set = set_marker,
	  .help = "pull, third-party: seconds between performance markers "
		  "from the source (default 2)" },
	{ .name = "quiet", .letter = 'q', .cmds = PEERS, .group = G_OUTPUT,
	  FLAG(c.quiet), .help = "only warnings, errors and summaries",
	  .like = "xrdcp -s, --silent" },
	{ .name = "quiet", .letter = 'q', .cmds = CLI_ROCEDUMP,
	  .group = G_OUTPUT, FLAG(c.quiet),
	  .help = "no frame lines: the flows and the last line only" },
	{ .name = "verbose", .letter = 'v', .cmds = PEERS, .group = G_OUTPUT,
	  FLAG(c.verbose), .help = "debug messages from the library, on stderr (with --json and -q too)",
	  .like = "iperf3 -V, --verbose; xrdcp --verbose" },
	{ .name = "timeout", .arg = "SEC", .cmds = PEERS, .group = G_OUTPUT,
	  .set = set_timeout,
	  .help = "give up on a peer silent this long (default 10); one "
		  "data stream may stay silent up to 6 times as long while the "
		  "peer answers on the others (TCP retrying after a loss burst)" },
	{ .name = "help", .letter = 'h', .cmds = EVERY, .group = G_OUTPUT,
	  .help = "this text" },
};

const size_t cli_n_opts = sizeof(cli_opts) / sizeof(cli_opts[0]);
