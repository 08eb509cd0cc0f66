/* ferry rocedump: one line per RoCEv2 frame of a capture, ICRC checked. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cmd_rocedump.h"
#include "ferry/error.h"
#include "xport/uroce/pcap.h"
#include "xport/uroce/wire.h"

const char help_rocedump[] =
"usage: ferry rocedump [--port N] FILE\n"
"\n"
"Decode the RoCEv2 frames in FILE, a pcap or pcapng capture of Ethernet\n"
"frames (tcpdump -w, tshark -w; '-' reads standard input), and check each\n"
"frame's invariant CRC (ICRC). One line per RoCEv2 frame:\n"
"\n"
"  TIME SRC -> DST OPCODE qp QPN psn PSN [ackreq] [se]\n"
"       [reth va VA rkey RKEY len LEN] [imm IMM] [aeth SYNDROME msn MSN]\n"
"       payload BYTES icrc ok|ICRC BAD\n"
"\n"
"TIME is seconds since the first frame of the capture. Frames that are\n"
"not RoCEv2 (not IPv4 UDP to the port) are counted, not printed; RoCEv2\n"
"frames ferry cannot decode are printed as malformed, with the reason;\n"
"frames the capture cut short (snapshot length) are not decoded. The last\n"
"line counts them all:\n"
"\n"
"  N frames, N RoCEv2, N ICRC ok, N ICRC bad[, N malformed][, N truncated]\n"
"\n"
"Options:\n"
"  -p, --port N   the RoCEv2 UDP destination port (default 4791)\n"
"  -h, --help     this text\n"
"\n"
"Exit status: 0 when every ICRC checked is good, 1 when an ICRC is bad or\n"
"a RoCEv2 frame is malformed, 2 on a usage error or an unreadable file.\n";

struct dump {
	uint16_t port;
	bool have_t0;
	uint64_t t0, frames, roce, ok, bad, malformed, truncated;
};

static void ip_str(char *s, size_t n, uint32_t ip)
{
	snprintf(s, n, "%u.%u.%u.%u", ip >> 24, (ip >> 16) & 0xff,
		 (ip >> 8) & 0xff, ip & 0xff);
}

static const char *aeth_kind(uint8_t syn)
{
	switch (syn >> 5) {
	case 0:
		return "ACK";
	case 1:
		return "RNR NAK";
	case 3:
		return "NAK";
	default:
		return "reserved";
	}
}

static void print_pkt(const struct ferry_roce_pkt *p, bool icrc_ok)
{
	char src[16], dst[16];

	ip_str(src, sizeof(src), p->src.ip);
	ip_str(dst, sizeof(dst), p->dst.ip);
	printf(" %s -> %s %s qp 0x%06" PRIx32 " psn %" PRIu32 "%s%s", src, dst,
	       ferry__roce_op_name(p->opcode), p->dest_qp, p->psn,
	       p->ackreq ? " ackreq" : "", p->se ? " se" : "");
	if (ferry__roce_has_reth(p->opcode))
		printf(" reth va 0x%" PRIx64 " rkey 0x%08" PRIx32
		       " len %" PRIu32, p->va, p->rkey, p->dma_len);
	if (ferry__roce_has_imm(p->opcode))
		printf(" imm 0x%08" PRIx32, p->imm);
	if (ferry__roce_has_aeth(p->opcode))
		printf(" aeth 0x%02x (%s) msn %" PRIu32, p->syndrome,
		       aeth_kind(p->syndrome), p->msn);
	printf(" payload %" PRIu32 " %s\n", p->len,
	       icrc_ok ? "icrc ok" : "ICRC BAD");
}

static int on_frame(const struct ferry_pcap_frame *f, void *arg)
{
	struct dump *d = arg;
	struct ferry_roce_pkt p;
	const char *why;
	bool icrc_ok;
	int rc;

	d->frames++;
	if (!d->have_t0) {
		d->t0 = f->ts_ns;
		d->have_t0 = true;
	}
	rc = ferry__roce_parse(f->data, f->caplen, d->port, &p, &icrc_ok,
			       &why);
	if (rc && !ferry__roce_to_port(f->data, f->caplen, d->port))
		return 0;   /* not RoCEv2 */
	uint64_t t = f->ts_ns >= d->t0 ? f->ts_ns - d->t0 : 0;
	printf("%" PRIu64 ".%06" PRIu64, t / 1000000000u,
	       t % 1000000000u / 1000u);
	d->roce++;
	if (rc == 0) {
		print_pkt(&p, icrc_ok);
		if (icrc_ok)
			d->ok++;
		else
			d->bad++;
	} else if (f->caplen < f->len) {
		printf(" frame %" PRIu64 ": truncated by the capture (%" PRIu32
		       " of %" PRIu32 " bytes), not decoded\n", d->frames,
		       f->caplen, f->len);
		d->truncated++;
	} else {
		printf(" frame %" PRIu64 ": malformed RoCEv2: %s\n", d->frames,
		       why);
		d->malformed++;
	}
	return 0;
}

int cmd_rocedump(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "port", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct dump d = { .port = FERRY_ROCE_UDP_PORT };
	char why[256];
	unsigned port;
	FILE *f;
	int opt, rc;

	while ((opt = cli_getopt("rocedump", argc, argv, "p:h", longopts)) != -1) {
		switch (opt) {
		case 'p':
			if (!cli_uint("rocedump", "--port", optarg, 1, 65535,
				      &port))
				return 2;
			d.port = (uint16_t)port;
			break;
		case 'h':
			fputs(help_rocedump, stdout);
			return 0;
		default:
			cli_die_usage("rocedump", "unknown option");
		}
	}
	if (argc - optind != 1)
		cli_die_usage("rocedump", "give one capture FILE");
	const char *path = argv[optind];
	f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
	if (!f) {
		fprintf(stderr, "ferry rocedump: %s: %s\n", path,
			ferry_strerror(-errno));
		return 2;
	}
	rc = ferry__pcap_read(f, on_frame, &d, why, sizeof(why));
	if (f != stdin)
		fclose(f);
	if (rc == 0 || d.frames) {      /* no summary of a non-capture */
		printf("%" PRIu64 " frames, %" PRIu64 " RoCEv2, %" PRIu64
		       " ICRC ok, %" PRIu64 " ICRC bad", d.frames, d.roce,
		       d.ok, d.bad);
		if (d.malformed)
			printf(", %" PRIu64 " malformed", d.malformed);
		if (d.truncated)
			printf(", %" PRIu64 " truncated", d.truncated);
		printf("\n");
		fflush(stdout);
	}
	if (rc) {
		fprintf(stderr, "ferry rocedump: %s: %s\n", path,
			why[0] ? why : ferry_strerror(rc));
		return 2;
	}
	return d.bad || d.malformed ? 1 : 0;
}
