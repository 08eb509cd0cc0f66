/* libFuzzer target for what `ferry rocedump FILE` reads: the pcap/pcapng
 * reader (lib/xport/roce/pcap.c), and each frame it delivers through the
 * rocedump decoder (lib/rocedump: decode, MADs, flows) as the command
 * does, and through the uroce transport's parser (parse, port test, ICRC).
 *
 * Beyond "no crash, no out-of-bounds access", it checks the reader's
 * contract: only the documented return codes, a reason with every
 * -FERRY_EPROTO, frames of at most FERRY_PCAP_MAX_FRAME bytes with
 * len >= caplen, in file order, starting inside the file, and at most one
 * frame per 8 bytes of input (the smallest record that can carry one).
 * And the decoder's: a verdict and, for an undecodable frame only, a
 * reason; a decoded frame's payload, pad and ICRC inside its IP packet
 * and the frame, its ICRC checked only when captured whole; what the
 * transport's parser accepts decodes to the same fields and ICRC verdict;
 * an untagged IPv4 frame is RoCEv2 exactly when the transport says it is
 * to the port; the counts add up (RoCEv2 = decoded + undecodable, decoded
 * = ICRC ok + bad + unchecked = the flows' frames + untracked ones).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "ferry/error.h"
#include "ferry/rocedump.h"
#include "xport/roce/pcap.h"
#include "xport/roce/wire.h"

struct seen {
	size_t size;
	uint64_t frames, last_off;
	int stop_at;        /* stop the reading at this frame (-1: never) */
	struct ferry_rocedump *rd;
};

static uint8_t copy[FERRY_PCAP_MAX_FRAME];

/* A decoded frame's fields hold together. */
static void check_decoded(const struct ferry_roce_frame *o)
{
	CHECK(o->has_bth && o->transport && o->op && o->why == NULL);
	CHECK(o->ip_version == 4 || o->ip_version == 6);
	CHECK(o->dest_qp <= 0xffffff && o->psn <= 0xffffff && o->padcnt <= 3);
	CHECK(o->hdrs < FERRY_ROCE_H_MAD << 1);
	CHECK(!(o->hdrs & FERRY_ROCE_H_MAD) ||
	      (o->opcode == 0x64 && o->dest_qp == 1));
	CHECK((uint64_t)o->payload_off + o->payload_len + o->padcnt + 4 <=
	      o->len);
	CHECK(o->icrc == FERRY_ROCE_ICRC_OK || o->icrc == FERRY_ROCE_ICRC_BAD ||
	      o->icrc == FERRY_ROCE_ICRC_UNCHECKED);
	if (o->icrc != FERRY_ROCE_ICRC_UNCHECKED)
		CHECK((uint64_t)o->payload_off + o->payload_len + o->padcnt +
		      4 <= o->caplen);
	if (o->icrc == FERRY_ROCE_ICRC_OK)
		CHECK(o->icrc_wire == o->icrc_calc);
	if (o->mad.cm.name)
		CHECK(o->mad.mgmt_class == 0x07);
}

/* The rocedump decoder on frame f, against the transport's parser. */
static void check_rocedump(struct seen *s, const struct ferry_pcap_frame *f)
{
	struct ferry_roce_frame o;
	struct ferry_roce_pkt p;
	bool icrc_ok;

	CHECK(ferry_rocedump_add(s->rd, f->data, f->caplen, f->len, f->ts_ns,
				 &o) == 0);
	CHECK(o.index == s->frames && o.caplen == f->caplen && o.len == f->len);
	CHECK((o.verdict == FERRY_ROCE_UNDECODABLE) == (o.why != NULL));
	if (o.verdict == FERRY_ROCE_OTHER)
		CHECK(!o.has_bth && o.ip_version == 0);
	if (o.verdict == FERRY_ROCE_DECODED)
		check_decoded(&o);
	/* untagged IPv4: RoCEv2 here exactly when it is to the transport */
	if (f->caplen >= 14 && f->data[12] == 0x08 && f->data[13] == 0x00)
		CHECK((o.verdict != FERRY_ROCE_OTHER) ==
		      ferry__roce_to_port(f->data, f->caplen, 0));
	if (f->caplen != f->len ||
	    ferry__roce_parse(f->data, f->caplen, 0, &p, &icrc_ok, NULL))
		return;
	CHECK(o.verdict == FERRY_ROCE_DECODED);
	CHECK(o.opcode == p.opcode && o.dest_qp == p.dest_qp &&
	      o.psn == p.psn);
	/* a CNP's 16 reserved bytes: a header to rocedump, the payload to
	 * the transport */
	CHECK(p.opcode == FERRY_OP_CNP ||
	      (o.payload_len == p.len && f->data + o.payload_off == p.payload));
	CHECK((o.icrc == FERRY_ROCE_ICRC_OK) == icrc_ok);
}

/* The totals and the flows agree. */
static void check_totals(const struct ferry_rocedump *rd, uint64_t frames)
{
	struct ferry_rocedump_totals t;
	const struct ferry_roce_flow *fl;
	uint64_t in_flows = 0;
	size_t i;

	ferry_rocedump_totals(rd, &t);
	CHECK(t.frames == frames && t.roce <= t.frames);
	CHECK(t.roce == t.decoded + t.undecodable);
	CHECK(t.decoded == t.icrc_ok + t.icrc_bad + t.icrc_unchecked);
	for (i = 0; (fl = ferry_rocedump_flow(rd, i)); i++) {
		CHECK(fl->frames > 0 && fl->psn_gaps < fl->frames &&
		      fl->retransmits < fl->frames);
		CHECK(fl->naks + fl->rnr_naks + fl->cnps <= fl->frames);
		in_flows += fl->frames;
	}
	CHECK(i == t.flows && i <= FERRY_ROCEDUMP_MAX_FLOWS);
	CHECK(in_flows + t.untracked == t.decoded);
}

static int on_frame(const struct ferry_pcap_frame *f, void *arg)
{
	struct seen *s = arg;
	struct ferry_roce_pkt p;
	const char *why = NULL;
	bool icrc_ok;
	uint32_t crc;
	int rc;

	CHECK(f->caplen <= FERRY_PCAP_MAX_FRAME);
	CHECK(f->len >= f->caplen);
	CHECK(f->offset < s->size);
	CHECK(s->frames == 0 || f->offset > s->last_off);
	CHECK(f->caplen == 0 || f->data);
	s->last_off = f->offset;
	s->frames++;
	memcpy(copy, f->data, f->caplen); /* all of it is readable */

	check_rocedump(s, f);
	/* what the uroce transport does with each frame */
	rc = ferry__roce_parse(f->data, f->caplen, 0, &p, &icrc_ok, &why);
	CHECK(rc == 0 || rc == -ENOMSG || rc == -FERRY_EPROTO);
	CHECK(rc == 0 ? why == NULL : why != NULL);
	if (rc == 0)
		CHECK(ferry__roce_to_port(f->data, f->caplen, 0));
	if (rc == 0) /* a failed parse leaves p unset */
		(void)ferry__roce_op_name(p.opcode);
	(void)ferry__roce_icrc(f->data, f->caplen, &crc);
	return s->stop_at >= 0 && s->frames == (uint64_t)s->stop_at ? 42 : 0;
}

static void read_all(const uint8_t *data, size_t size, int stop_at)
{
	struct seen s = { .size = size, .stop_at = stop_at };
	char why[160];
	FILE *f;
	int rc;

	/* fmemopen refuses an empty buffer */
	f = size ? fmemopen((void *)data, size, "rb") : fopen("/dev/null", "rb");
	CHECK(f);
	CHECK(ferry_rocedump_new(0, &s.rd) == 0);
	why[0] = 'x';
	rc = ferry__pcap_read(f, on_frame, &s, why, sizeof(why));
	fclose(f);
	check_totals(s.rd, s.frames);
	ferry_rocedump_free(s.rd);
	CHECK(rc == 0 || rc == -FERRY_EPROTO || rc == -ENOMEM ||
	      (rc == 42 && stop_at >= 0));
	CHECK(rc == 42 ? s.frames == (uint64_t)stop_at : true);
	CHECK(rc != -FERRY_EPROTO || why[0] != '\0');
	CHECK(strnlen(why, sizeof(why)) < sizeof(why));
	CHECK(s.frames <= size / 8);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	read_all(data, size, -1);
	/* a callback stopping the reading is honoured at once */
	if (size && (data[size - 1] & 3) == 0)
		read_all(data, size, 1);
	return 0;
}
