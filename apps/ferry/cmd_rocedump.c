/* ferry rocedump: what a RoCE fabric carries, one line per RoCEv2 frame,
 * then one per flow, then the counts (the decoding: ferry/rocedump.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cmd_rocedump.h"
#include "ferry/error.h"
#include "ferry/rocedump.h"
#include "opts_table.h"

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

int cmd_rocedump(int argc, char **argv)
{
	struct dump d = { 0 };
	struct ferry_rocedump *rd = NULL;
	struct ferry_rocedump_totals t;
	struct cli_args a;
	char why[256];
	int i, rc;

	i = cli_parse(&cli_cmd_rocedump, argc, argv, &a);
	if (i < 0)
		return a.exit;
	d.quiet = a.c.quiet;
	const char *path = argv[i];
	FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
	if (!f) {
		fprintf(stderr, "ferry rocedump: %s: %s\n", path,
			ferry_strerror(-errno));
		return 2;
	}
	rc = ferry_rocedump_new((uint16_t)a.roce_port, &rd);
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
