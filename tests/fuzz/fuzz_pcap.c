/* libFuzzer target for what `ferry rocedump FILE` reads: the pcap/pcapng
 * reader (lib/xport/uroce/pcap.c), and each frame it delivers through the
 * RoCEv2 parser as rocedump does (parse, port test, ICRC).
 *
 * Beyond "no crash, no out-of-bounds access", it checks the reader's
 * contract: only the documented return codes, a reason with every
 * -FERRY_EPROTO, frames of at most FERRY_PCAP_MAX_FRAME bytes with
 * len >= caplen, in file order, starting inside the file, and at most one
 * frame per 8 bytes of input (the smallest record that can carry one).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "ferry/error.h"
#include "xport/uroce/pcap.h"
#include "xport/uroce/wire.h"

struct seen {
	size_t size;
	uint64_t frames, last_off;
	int stop_at;        /* stop the reading at this frame (-1: never) */
};

static uint8_t copy[FERRY_PCAP_MAX_FRAME];

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

	/* what rocedump does with each frame */
	rc = ferry__roce_parse(f->data, f->caplen, 0, &p, &icrc_ok, &why);
	CHECK(rc == 0 || rc == -ENOMSG || rc == -FERRY_EPROTO);
	CHECK(rc == 0 ? why == NULL : why != NULL);
	if (rc == 0)
		CHECK(ferry__roce_to_port(f->data, f->caplen, 0));
	if (rc == 0) /* as rocedump: a failed parse leaves p unset */
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
	why[0] = 'x';
	rc = ferry__pcap_read(f, on_frame, &s, why, sizeof(why));
	fclose(f);
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
