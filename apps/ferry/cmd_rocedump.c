/* ferry rocedump: what a RoCE fabric carries, one line per RoCEv2 frame,
 * then one per flow, then the counts (the decoding: ferry/rocedump.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cmd_rocedump.h"
#include "ferry/error.h"
#include "ferry/rocedump.h"

const char help_rocedump[] =
"usage: ferry rocedump [--port N] [--quiet] FILE\n"
"\n"
"Decode what a RoCE fabric carries, from FILE, a pcap or pcapng capture of\n"
"Ethernet frames (tcpdump -w, tshark -w; '-' reads standard input), and\n"
"check the invariant CRC (ICRC) of every RoCEv2 frame.\n"
"\n"
"A frame is RoCEv2 when it holds IPv4 or IPv6 (VLAN tags allowed), not a\n"
"fragment, and UDP to the RoCEv2 port; other frames are counted, not\n"
"printed. A RoCEv2 frame is either decoded or undecodable:\n"
"  - decoded: its BTH and every extended header its opcode carries, for\n"
"    every base transport opcode of RC, UC, RD, UD and XRC (SEND, RDMA\n"
"    WRITE, RDMA READ request and response, atomics, ACK and NAK, SEND\n"
"    with invalidate, FLUSH, ATOMIC WRITE) and CNP; a UD SEND to QP 1 as a\n"
"    management datagram (MAD), the CM's named (REQ, MRA, REJ, REP, RTU,\n"
"    DREQ, DREP, SIDR_REQ, SIDR_REP, LAP, APR). Then its ICRC: ok, BAD, or\n"
"    unchecked when the capture holds only part of the frame (its\n"
"    snapshot length);\n"
"  - undecodable: a reserved or vendor opcode, lengths that disagree, a\n"
"    header the capture cut off: the reason is printed, and its ICRC is\n"
"    counted neither good nor bad.\n"
"\n"
"One line per RoCEv2 frame:\n"
"\n"
"  N TIME SRC -> DST TRANSPORT OP qp QPN psn PSN [FLAGS] [HEADERS]\n"
"      payload BYTES icrc ok|ICRC BAD|icrc unchecked\n"
"  N TIME SRC -> DST undecodable: REASON [(opcode 0xOP qp QPN psn PSN)]\n"
"\n"
"N is the frame's number in the capture, TIME seconds since its first\n"
"frame, TRANSPORT RC, UC, RD, UD, XRC or CNP, OP the operation\n"
"(SEND_FIRST, RDMA_WRITE_ONLY_IMM, RDMA_READ_REQUEST, ACKNOWLEDGE, ...).\n"
"FLAGS: se, migreq, ackreq, fecn, becn, ce (IP ECN congestion\n"
"experienced), pkey P (when not 0xffff), vlan ID. HEADERS, each when the\n"
"opcode carries it:\n"
"\n"
"  rdeth eec N\n"
"  deth qkey Q srcqp QPN\n"
"  xrceth srq N\n"
"  feth sel N plt N\n"
"  reth va VA rkey K len N\n"
"  atomic va VA rkey K swap|add N [cmp N]\n"
"  aeth 0xSS ACK credits N|none msn N\n"
"  aeth 0xSS RNR_NAK timer MS ms msn N\n"
"  aeth 0xSS NAK code N (WHAT) msn N\n"
"  atomicack orig N\n"
"  imm N\n"
"  ieth rkey K\n"
"  cm NAME [lcid N] [rcid N] [qpn QPN] [psn PSN] [reason N]\n"
"  cm attr 0xNNNN\n"
"  mad class 0xNN method 0xNN attr 0xNNNN\n"
"\n"
"Then one line per flow, the decoded frames sent from SRC to one\n"
"destination QP (for datagrams, from one source QP), in the order their\n"
"first frames came:\n"
"\n"
"  flow DST qp QPN from SRC [qp QPN]: N frames, N payload bytes,\n"
"      N psn gaps, N retransmitted, N naks, N rnr naks, N cnps\n"
"\n"
"PSN gaps and retransmissions are counted over requests: a gap is a PSN\n"
"past the next one due, a retransmission a PSN before it. An RDMA READ\n"
"request takes as many PSNs as its responses, which depends on the path\n"
"MTU: any from len/4096 to len/256 are in order. NAKs, RNR NAKs and CNPs\n"
"are counted in the flow they reach, the requester's.\n"
"\n"
"The last line has every count, always, in this order (one line):\n"
"\n"
"  N frames, N RoCEv2, N decoded, N undecodable, N ICRC ok,\n"
"  N ICRC bad, N ICRC unchecked\n"
"\n"
"where RoCEv2 = decoded + undecodable and decoded = ICRC ok + ICRC bad +\n"
"ICRC unchecked.\n"
"\n"
"Options:\n"
"  -p, --port N   the RoCEv2 UDP destination port (default 4791)\n"
"  -q, --quiet    no frame lines: the flows and the last line only\n"
"  -h, --help     this text\n"
"\n"
"Exit status: 0 when no ICRC is bad and no RoCEv2 frame is undecodable,\n"
"1 when one is, 2 on a usage error or an unreadable file.\n";

struct dump {
	bool quiet, have_t0;
	uint64_t t0;
};

static const char *ip_str(char *s, size_t n, uint8_t version,
			  const uint8_t *ip)
{
	if (!inet_ntop(version == 6 ? AF_INET6 : AF_INET, ip, s, (socklen_t)n))
		snprintf(s, n, "?");
	return s;
}

static void print_flags(const struct ferry_roce_frame *f)
{
	printf("%s%s%s%s%s%s", f->se ? " se" : "", f->migreq ? " migreq" : "",
	       f->ackreq ? " ackreq" : "", f->fecn ? " fecn" : "",
	       f->becn ? " becn" : "", f->ecn == 3 ? " ce" : "");
	if (f->pkey != 0xffff)
		printf(" pkey 0x%04x", f->pkey);
	if (f->vlan != FERRY_ROCE_NO_VLAN)
		printf(" vlan %u", f->vlan);
}

static void print_aeth(const struct ferry_roce_frame *f)
{
	printf(" aeth 0x%02x", f->syndrome);
	switch (f->ack) {
	case FERRY_ROCE_ACK:
		if (f->credits < 0)
			printf(" ACK credits none");
		else
			printf(" ACK credits %d", f->credits);
		break;
	case FERRY_ROCE_RNR_NAK:
		printf(" RNR_NAK timer %u.%02u ms", f->rnr_us / 1000,
		       f->rnr_us % 1000 / 10);
		break;
	case FERRY_ROCE_NAK:
		printf(" NAK code %u (%s)", f->syndrome & 0x1fu, f->nak);
		break;
	default:
		printf(" reserved");
	}
	printf(" msn %" PRIu32, f->msn);
}

/* The extended headers before the AETH (wire order). */
static void print_request_hdrs(const struct ferry_roce_frame *f)
{
	unsigned h = f->hdrs;

	if (h & FERRY_ROCE_H_RDETH)
		printf(" rdeth eec 0x%06" PRIx32, f->ee_context);
	if (h & FERRY_ROCE_H_DETH)
		printf(" deth qkey 0x%08" PRIx32 " srcqp 0x%06" PRIx32, f->qkey,
		       f->src_qp);
	if (h & FERRY_ROCE_H_XRCETH)
		printf(" xrceth srq 0x%06" PRIx32, f->xrc_srq);
	if (h & FERRY_ROCE_H_FETH)
		printf(" feth sel %" PRIu32 " plt %" PRIu32, f->feth >> 4 & 3,
		       f->feth & 0xf);
	if (h & FERRY_ROCE_H_RETH)
		printf(" reth va 0x%" PRIx64 " rkey 0x%08" PRIx32 " len %" PRIu32,
		       f->va, f->rkey, f->dma_len);
	if (h & FERRY_ROCE_H_ATOMICETH) {
		bool cas = (f->opcode & 0x1f) == 0x13;

		printf(" atomic va 0x%" PRIx64 " rkey 0x%08" PRIx32
		       " %s 0x%" PRIx64, f->va, f->rkey, cas ? "swap" : "add",
		       f->swap_add);
		if (cas)
			printf(" cmp 0x%" PRIx64, f->compare);
	}
}

static void print_mad(const struct ferry_roce_mad *m)
{
	const struct ferry_roce_cm *cm = &m->cm;

	if (m->mgmt_class != 0x07) {
		printf(" mad class 0x%02x method 0x%02x attr 0x%04x",
		       m->mgmt_class, m->method, m->attr_id);
		return;
	}
	if (!cm->name) {
		printf(" cm attr 0x%04x", m->attr_id);
		return;
	}
	printf(" cm %s", cm->name);
	if (cm->fields & FERRY_ROCE_CM_LOCAL_ID)
		printf(" lcid 0x%08" PRIx32, cm->local_id);
	if (cm->fields & FERRY_ROCE_CM_REMOTE_ID)
		printf(" rcid 0x%08" PRIx32, cm->remote_id);
	if (cm->fields & FERRY_ROCE_CM_QPN)
		printf(" qpn 0x%06" PRIx32, cm->qpn);
	if (cm->fields & FERRY_ROCE_CM_PSN)
		printf(" psn %" PRIu32, cm->psn);
	if (cm->fields & FERRY_ROCE_CM_REASON)
		printf(" reason %u", cm->reason);
}

static void print_decoded(const struct ferry_roce_frame *f)
{
	static const char *const icrc[] = {
		[FERRY_ROCE_ICRC_OK] = "icrc ok",
		[FERRY_ROCE_ICRC_BAD] = "ICRC BAD",
		[FERRY_ROCE_ICRC_UNCHECKED] = "icrc unchecked",
	};
	unsigned h = f->hdrs;

	printf(" %s %s qp 0x%06" PRIx32 " psn %" PRIu32, f->transport, f->op,
	       f->dest_qp, f->psn);
	print_flags(f);
	print_request_hdrs(f);
	if (h & FERRY_ROCE_H_AETH)
		print_aeth(f);
	if (h & FERRY_ROCE_H_ATOMICACKETH)
		printf(" atomicack orig 0x%" PRIx64, f->orig_data);
	if (h & FERRY_ROCE_H_IMMDT)
		printf(" imm 0x%08" PRIx32, f->imm);
	if (h & FERRY_ROCE_H_IETH)
		printf(" ieth rkey 0x%08" PRIx32, f->inv_rkey);
	if (h & FERRY_ROCE_H_MAD)
		print_mad(&f->mad);
	printf(" payload %" PRIu32 " %s\n", f->payload_len, icrc[f->icrc]);
}

static int on_frame(const struct ferry_roce_frame *f, const uint8_t *frame,
		    void *arg)
{
	struct dump *d = arg;
	char src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN];

	(void)frame;
	if (!d->have_t0) {
		d->t0 = f->ts_ns;
		d->have_t0 = true;
	}
	if (d->quiet || f->verdict == FERRY_ROCE_OTHER)
		return 0;
	uint64_t t = f->ts_ns >= d->t0 ? f->ts_ns - d->t0 : 0;
	printf("%" PRIu64 " %" PRIu64 ".%06" PRIu64 " %s -> %s", f->index,
	       t / 1000000000u, t % 1000000000u / 1000u,
	       ip_str(src, sizeof(src), f->ip_version, f->src_ip),
	       ip_str(dst, sizeof(dst), f->ip_version, f->dst_ip));
	if (f->verdict == FERRY_ROCE_DECODED) {
		print_decoded(f);
		return 0;
	}
	printf(" undecodable: %s", f->why);
	if (f->has_bth)
		printf(" (opcode 0x%02x qp 0x%06" PRIx32 " psn %" PRIu32 ")",
		       f->opcode, f->dest_qp, f->psn);
	printf("\n");
	return 0;
}

static void print_flows(const struct ferry_rocedump *rd)
{
	const struct ferry_roce_flow *fl;
	char src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN];

	for (size_t i = 0; (fl = ferry_rocedump_flow(rd, i)); i++) {
		printf("flow %s qp 0x%06" PRIx32 " from %s",
		       ip_str(dst, sizeof(dst), fl->ip_version, fl->dst_ip),
		       fl->dest_qp,
		       ip_str(src, sizeof(src), fl->ip_version, fl->src_ip));
		if (fl->src_qp != FERRY_ROCE_NO_QP)
			printf(" qp 0x%06" PRIx32, fl->src_qp);
		printf(": %" PRIu64 " frames, %" PRIu64 " payload bytes, %"
		       PRIu64 " psn gaps, %" PRIu64 " retransmitted, %" PRIu64
		       " naks, %" PRIu64 " rnr naks, %" PRIu64 " cnps\n",
		       fl->frames, fl->payload_bytes, fl->psn_gaps,
		       fl->retransmits, fl->naks, fl->rnr_naks, fl->cnps);
	}
}

static void print_totals(const struct ferry_rocedump_totals *t)
{
	if (t->untracked)
		printf("flows: %" PRIu64 " decoded frames not in a flow (only "
		       "the first %u flows are kept)\n", t->untracked,
		       FERRY_ROCEDUMP_MAX_FLOWS);
	printf("%" PRIu64 " frames, %" PRIu64 " RoCEv2, %" PRIu64
	       " decoded, %" PRIu64 " undecodable, %" PRIu64 " ICRC ok, %"
	       PRIu64 " ICRC bad, %" PRIu64 " ICRC unchecked\n", t->frames,
	       t->roce, t->decoded, t->undecodable, t->icrc_ok, t->icrc_bad,
	       t->icrc_unchecked);
	fflush(stdout);
}

/* Options into *d and *port; returns the index of FILE, -1 after a bad
 * value (said), -2 after --help. */
static int parse_args(int argc, char **argv, struct dump *d, uint16_t *port)
{
	static const struct option longopts[] = {
		{ "port", required_argument, NULL, 'p' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned v;
	int opt;

	while ((opt = cli_getopt("rocedump", argc, argv, "p:qh", longopts)) != -1) {
		switch (opt) {
		case 'p':
			if (!cli_uint("rocedump", "--port", optarg, 1, 65535,
				      &v))
				return -1;
			*port = (uint16_t)v;
			break;
		case 'q':
			d->quiet = true;
			break;
		case 'h':
			fputs(help_rocedump, stdout);
			return -2;
		default:
			cli_die_usage("rocedump", "unknown option");
		}
	}
	if (argc - optind != 1)
		cli_die_usage("rocedump", "give one capture FILE");
	return optind;
}

int cmd_rocedump(int argc, char **argv)
{
	struct dump d = { 0 };
	struct ferry_rocedump *rd = NULL;
	struct ferry_rocedump_totals t;
	uint16_t port = FERRY_ROCEDUMP_PORT;
	char why[256];
	int i, rc;

	if ((i = parse_args(argc, argv, &d, &port)) < 0)
		return i == -2 ? 0 : 2;
	const char *path = argv[i];
	FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
	if (!f) {
		fprintf(stderr, "ferry rocedump: %s: %s\n", path,
			ferry_strerror(-errno));
		return 2;
	}
	rc = ferry_rocedump_new(port, &rd);
	if (rc == 0)
		rc = ferry_rocedump_read(rd, f, on_frame, &d, why,
					 sizeof(why));
	if (f != stdin)
		fclose(f);
	if (!rd) {
		fprintf(stderr, "ferry rocedump: %s\n", ferry_strerror(rc));
		return 2;
	}
	ferry_rocedump_totals(rd, &t);
	if (rc == 0 || t.frames) {      /* no counts of a non-capture */
		print_flows(rd);
		print_totals(&t);
	}
	ferry_rocedump_free(rd);
	if (rc) {
		fprintf(stderr, "ferry rocedump: %s: %s\n", path,
			why[0] ? why : ferry_strerror(rc));
		return 2;
	}
	return t.icrc_bad || t.undecodable ? 1 : 0;
}
