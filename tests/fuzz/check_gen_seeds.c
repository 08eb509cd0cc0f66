/* The seeds of fuzz_manifest, fuzz_roce and fuzz_pcap come from
 * gen_seeds.py, encoders written apart from the C code: check that the C
 * decoders read each seed as that script meant (a valid seed is accepted,
 * a near miss refused, RoCEv2 ICRCs agree; what only rocedump decodes,
 * the transport refuses and rocedump decodes, ICRC good).
 *
 *   check_gen_seeds CORPUS_DIR   (the directory holding manifest/ roce/ pcap/)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ferry/error.h"
#include "ferry/rocedump.h"
#include "io/manifest.h"
#include "xport/roce/pcap.h"
#include "xport/roce/wire.h"

static int failures;

#define EXPECT(cond, name)                                                   \
	do {                                                                 \
		if (!(cond)) {                                               \
			fprintf(stderr, "%s: expected %s\n", name, #cond);   \
			failures++;                                          \
		}                                                            \
	} while (0)

static uint8_t *slurp(const char *dir, const char *sub, const char *name,
		      size_t *len)
{
	char path[4096];
	uint8_t *buf;
	FILE *f;
	long n;

	snprintf(path, sizeof(path), "%s/%s/%s", dir, sub, name);
	f = fopen(path, "rb");
	if (!f) {
		perror(path);
		exit(1);
	}
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		perror(path);
		exit(1);
	}
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/* manifest seeds: [max_entries][split] batch A | batch B */
static const struct {
	const char *name;
	int ret_a, ret_b;
	size_t entries;
} man[] = {
	{ "one_file", 0, 0, 1 },
	{ "tree", 0, 0, 4 },
	{ "two_batches", 0, 0, 3 },
	{ "longest_path", 0, 0, 1 },
	{ "too_many", 0, -FERRY_ETOOBIG, 2 },
	{ "dotdot", -FERRY_EPROTO, 0, 0 },
	{ "dotdot_mid", -FERRY_EPROTO, 0, 0 },
	{ "absolute", -FERRY_EPROTO, 0, 0 },
	{ "dot", -FERRY_EPROTO, 0, 0 },
	{ "empty_comp", -FERRY_EPROTO, 0, 0 },
	{ "trailing_slash", -FERRY_EPROTO, 0, 0 },
	{ "nul", -FERRY_EPROTO, 0, 0 },
	{ "path_too_long", 0, -FERRY_EPROTO, 0 },
	{ "dir_with_size", -FERRY_EPROTO, 0, 0 },
	{ "bad_type", -FERRY_EPROTO, 0, 0 },
	{ "bad_mode", -FERRY_EPROTO, 0, 0 },
	{ "size_too_big", -FERRY_EPROTO, 0, 0 },
	{ "truncated", -FERRY_EPROTO, 0, 0 },
};

static void check_manifest(const char *dir)
{
	for (size_t i = 0; i < sizeof(man) / sizeof(man[0]); i++) {
		size_t len, split;
		uint8_t *b = slurp(dir, "manifest", man[i].name, &len);
		struct ferry_manifest m;

		ferry__manifest_init(&m);
		split = b[1] < len - 2 ? b[1] : len - 2;
		EXPECT(ferry__manifest_decode(&m, b + 2, split, b[0]) ==
			       man[i].ret_a, man[i].name);
		EXPECT(ferry__manifest_decode(&m, b + 2 + split,
					      len - 2 - split, b[0]) ==
			       man[i].ret_b, man[i].name);
		EXPECT(m.n == man[i].entries, man[i].name);
		ferry__manifest_free(&m);
		free(b);
	}
}

/* roce seeds: [cfg] then records [flags][us][len u16 LE][frame] */
static const struct {
	const char *name;
	int ret;    /* of every frame's parse */
	bool icrc;  /* ... and its ICRC check */
} roce[] = {
	{ "write_only", 0, true },     { "write_3pkts", 0, true },
	{ "write_imm", 0, true },      { "write_last_imm", 0, true },
	{ "write_oob", 0, true },      { "write_huge_va", 0, true },
	{ "send_only", 0, true },      { "send_only_imm", 0, true },
	{ "dup_and_gap", 0, true },    { "psn_wrap", 0, true },
	{ "mtu512", 0, true },         { "ack", 0, true },
	{ "nak_seq", 0, true },        { "nak_access", 0, true },
	{ "ip_options", 0, true },     { "eth_padding", 0, true },
	{ "bad_icrc", 0, false },      { "icrc_fixed", 0, false },
	{ "truncated", -FERRY_EPROTO, false },
	{ "not_udp", -ENOMSG, false }, { "fragment", -ENOMSG, false },
};

static void check_roce(const char *dir)
{
	for (size_t i = 0; i < sizeof(roce) / sizeof(roce[0]); i++) {
		size_t len, off = 1, frames = 0;
		uint8_t *b = slurp(dir, "roce", roce[i].name, &len);

		while (off + 4 <= len) {
			size_t n = (size_t)b[off + 2] | (size_t)b[off + 3] << 8;
			struct ferry_roce_pkt p;
			bool ok = false;

			off += 4;
			if (n > len - off)
				break;
			if (n) {
				EXPECT(ferry__roce_parse(b + off, n, 0, &p, &ok,
							 NULL) == roce[i].ret,
				       roce[i].name);
				if (roce[i].ret == 0)
					EXPECT(ok == roce[i].icrc,
					       roce[i].name);
				frames++;
			}
			off += n;
		}
		EXPECT(off == len && frames > 0, roce[i].name);
		free(b);
	}
}

/* dump_* roce seeds: one frame each that rocedump decodes, and all but
 * the CNP only rocedump */
static const struct {
	const char *name, *transport, *op;
	int ret;          /* of the transport's parser */
	uint32_t payload; /* bytes after the headers, pad excluded */
} dump[] = {
	{ "dump_read_request", "RC", "RDMA_READ_REQUEST", -FERRY_EPROTO, 0 },
	{ "dump_read_response", "RC", "RDMA_READ_RESPONSE_FIRST",
	  -FERRY_EPROTO, 256 },
	{ "dump_cmp_swap", "RC", "COMPARE_SWAP", -FERRY_EPROTO, 0 },
	{ "dump_atomic_ack", "RC", "ATOMIC_ACKNOWLEDGE", -FERRY_EPROTO, 0 },
	{ "dump_cnp", "CNP", "CNP", 0, 0 },
	{ "dump_cm_req", "UD", "SEND_ONLY", -FERRY_EPROTO, 256 },
	{ "dump_ud_send_imm", "UD", "SEND_ONLY_IMM", -FERRY_EPROTO, 5 },
	{ "dump_xrc_write", "XRC", "RDMA_WRITE_ONLY", -FERRY_EPROTO, 8 },
	{ "dump_rd_send", "RD", "SEND_ONLY", -FERRY_EPROTO, 4 },
	{ "dump_flush", "RC", "FLUSH", -FERRY_EPROTO, 0 },
	{ "dump_vlan_write", "RC", "RDMA_WRITE_ONLY", -ENOMSG, 8 },
	{ "dump_ipv6_ack", "RC", "ACKNOWLEDGE", -ENOMSG, 0 },
};

static void check_dump(const char *dir)
{
	for (size_t i = 0; i < sizeof(dump) / sizeof(dump[0]); i++) {
		size_t len;
		uint8_t *b = slurp(dir, "roce", dump[i].name, &len);
		size_t n = len < 5 ? 0 : (size_t)b[3] | (size_t)b[4] << 8;
		struct ferry_roce_frame o;
		struct ferry_roce_pkt p;
		bool ok;

		EXPECT(len == 5 + n, dump[i].name);
		EXPECT(ferry__roce_parse(b + 5, n, 0, &p, &ok, NULL) ==
		       dump[i].ret, dump[i].name);
		EXPECT(ferry_rocedump_decode(b + 5, n, n, 0, &o) == 0 &&
		       o.verdict == FERRY_ROCE_DECODED &&
		       o.icrc == FERRY_ROCE_ICRC_OK, dump[i].name);
		EXPECT(o.transport && !strcmp(o.transport, dump[i].transport) &&
		       !strcmp(o.op, dump[i].op) &&
		       o.payload_len == dump[i].payload, dump[i].name);
		if (!strcmp(dump[i].name, "dump_cm_req"))
			EXPECT(o.mad.cm.name && !strcmp(o.mad.cm.name, "REQ") &&
			       o.mad.cm.local_id == 0xa1a2a3a4 &&
			       o.mad.cm.qpn == 0x123 && o.mad.cm.psn == 0x200,
			       dump[i].name);
		free(b);
	}
}

/* pcap_rocedump: the dump_* frames, pcap_le_us's four, a reserved
 * opcode, one frame cut to 80 bytes */
static void check_pcap_rocedump(const char *dir)
{
	const char *name = "pcap_rocedump";
	size_t len;
	uint8_t *b = slurp(dir, "pcap", name, &len);
	FILE *f = fmemopen(b, len, "rb");
	struct ferry_rocedump_totals t;
	struct ferry_rocedump *rd;

	if (!f || ferry_rocedump_new(0, &rd)) {
		perror(name);
		exit(1);
	}
	EXPECT(ferry_rocedump_read(rd, f, NULL, NULL, NULL, 0) == 0, name);
	ferry_rocedump_totals(rd, &t);
	EXPECT(t.frames == 18 && t.roce == 17 && t.decoded == 16 &&
	       t.undecodable == 1, name);
	EXPECT(t.icrc_ok == 14 && t.icrc_bad == 1 && t.icrc_unchecked == 1,
	       name);
	ferry_rocedump_free(rd);
	fclose(f);
	free(b);
}

static int count(const struct ferry_pcap_frame *f, void *arg)
{
	struct ferry_roce_pkt p;
	bool ok;

	if (ferry__roce_parse(f->data, f->caplen, 0, &p, &ok, NULL) == 0 && ok)
		++*((unsigned *)arg + 1);
	++*(unsigned *)arg;
	return 0;
}

static const struct {
	const char *name;
	int ret;
	unsigned frames, good; /* frames read, RoCEv2 ones with a good ICRC */
} pcaps[] = {
	{ "pcap_le_us", 0, 4, 2 },
	{ "pcap_be_ns", 0, 4, 2 },
	{ "pcap_header_only", 0, 0, 0 },
	{ "pcap_truncated", -FERRY_EPROTO, 3, 2 },
	{ "pcap_linktype", -FERRY_EPROTO, 0, 0 },
	{ "pcapng_le", 0, 3, 2 },
	{ "pcapng_be_opts", 0, 2, 2 },
	{ "pcapng_two_sections", 0, 2, 2 },
	{ "pcapng_no_idb", -FERRY_EPROTO, 0, 0 },
	{ "pcapng_snaplen_cut", 0, 1, 0 },
	{ "pcapng_bad_caplen", -FERRY_EPROTO, 0, 0 },
	{ "pcapng_bad_tsresol", -FERRY_EPROTO, 0, 0 },
	{ "not_a_capture", -FERRY_EPROTO, 0, 0 },
	{ "pcap_rocedump", 0, 18, 3 }, /* and the CNP */
};

static void check_pcap(const char *dir)
{
	for (size_t i = 0; i < sizeof(pcaps) / sizeof(pcaps[0]); i++) {
		size_t len;
		uint8_t *b = slurp(dir, "pcap", pcaps[i].name, &len);
		unsigned n[2] = { 0, 0 };
		FILE *f = fmemopen(b, len, "rb");

		if (!f) {
			perror("fmemopen");
			exit(1);
		}
		EXPECT(ferry__pcap_read(f, count, n, NULL, 0) == pcaps[i].ret,
		       pcaps[i].name);
		EXPECT(n[0] == pcaps[i].frames && n[1] == pcaps[i].good,
		       pcaps[i].name);
		fclose(f);
		free(b);
	}
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
		return 2;
	}
	check_manifest(argv[1]);
	check_roce(argv[1]);
	check_pcap(argv[1]);
	check_dump(argv[1]);
	check_pcap_rocedump(argv[1]);
	if (failures)
		return 1;
	printf("seeds of manifest, roce and pcap read as meant\n");
	return 0;
}
