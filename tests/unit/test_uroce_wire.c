/* uroce wire format, ICRC and capture reader.
 *
 * Also a helper for tests/integration/uroce_icrc.sh:
 *   test_uroce_wire --write-pcap FILE   frames built by ferry, as pcap
 *   test_uroce_wire --check-pcap FILE   count RoCEv2 frames, ICRC ok/bad
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cu.h"
#include "ferry/error.h"
#include "xport/roce/pcap.h"
#include "xport/roce/wire.h"

static const uint8_t all_ops[] = {
	FERRY_OP_SEND_FIRST, FERRY_OP_SEND_MIDDLE, FERRY_OP_SEND_LAST,
	FERRY_OP_SEND_LAST_IMM, FERRY_OP_SEND_ONLY, FERRY_OP_SEND_ONLY_IMM,
	FERRY_OP_WRITE_FIRST, FERRY_OP_WRITE_MIDDLE, FERRY_OP_WRITE_LAST,
	FERRY_OP_WRITE_LAST_IMM, FERRY_OP_WRITE_ONLY, FERRY_OP_WRITE_ONLY_IMM,
	FERRY_OP_ACK, FERRY_OP_CNP,
};
#define N_OPS (sizeof(all_ops) / sizeof(all_ops[0]))

static uint32_t rnd_state = 12345;

static uint32_t rnd(void)
{
	rnd_state = rnd_state * 1103515245u + 12345u;
	return rnd_state >> 8 ^ rnd_state << 13;
}

static uint8_t payload[70000];

static void fill_payload(void)
{
	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 7 + 3);
}

/* A packet with every field set to something recognizable. */
static struct ferry_roce_pkt mkpkt(uint8_t op, uint32_t len)
{
	struct ferry_roce_pkt p = {
		.src = { { 0x02, 0, 0, 0, 0, 0x01 }, 0xc6120001 },
		.dst = { { 0x02, 0, 0, 0, 0, 0x02 }, 0xc6120002 },
		.udp_sport = (uint16_t)(0xc000 | (rnd() & 0x3fff)),
		.opcode = op,
		.se = rnd() & 1, .mig = rnd() & 1, .ackreq = rnd() & 1,
		.pkey = 0xffff,
		.dest_qp = rnd() & FERRY_PSN_MASK,
		.psn = rnd() & FERRY_PSN_MASK,
		.payload = len ? payload + (rnd() % 1000) : NULL,
		.len = len,
	};
	if (ferry__roce_has_reth(op)) {
		p.va = (uint64_t)rnd() << 32 | rnd();
		p.rkey = rnd();
		p.dma_len = rnd();
	}
	if (ferry__roce_has_imm(op))
		p.imm = rnd();
	if (ferry__roce_has_aeth(op)) {
		p.syndrome = (uint8_t)rnd();
		p.msn = rnd() & FERRY_PSN_MASK;
	}
	p.dscp = (uint8_t)(rnd() & 63);
	p.ecn = (uint8_t)(rnd() & 3);
	p.becn = op == FERRY_OP_CNP;
	return p;
}

static uint8_t frame[70200];

static size_t build(const struct ferry_roce_pkt *p)
{
	size_t len = 0;
	int rc = ferry__roce_build(frame, sizeof(frame), p, &len);

	CU_ASSERT_EQUAL_FATAL(rc, 0);
	return len;
}

static void test_ops(void)
{
	for (unsigned op = 0; op < 256; op++) {
		bool known = false;

		for (size_t i = 0; i < N_OPS; i++)
			known |= all_ops[i] == op;
		CU_ASSERT_EQUAL(ferry__roce_op_valid((uint8_t)op), known);
		if (!known) {
			CU_ASSERT_EQUAL(ferry__roce_hdr_len((uint8_t)op), 0);
			CU_ASSERT_STRING_EQUAL(ferry__roce_op_name((uint8_t)op),
					       "UNKNOWN");
			CU_ASSERT_FALSE(ferry__roce_has_reth((uint8_t)op));
			CU_ASSERT_FALSE(ferry__roce_has_imm((uint8_t)op));
			CU_ASSERT_FALSE(ferry__roce_has_aeth((uint8_t)op));
		}
	}
	CU_ASSERT_TRUE(ferry__roce_has_reth(FERRY_OP_WRITE_FIRST));
	CU_ASSERT_TRUE(ferry__roce_has_reth(FERRY_OP_WRITE_ONLY));
	CU_ASSERT_TRUE(ferry__roce_has_reth(FERRY_OP_WRITE_ONLY_IMM));
	CU_ASSERT_FALSE(ferry__roce_has_reth(FERRY_OP_WRITE_MIDDLE));
	CU_ASSERT_FALSE(ferry__roce_has_reth(FERRY_OP_WRITE_LAST_IMM));
	CU_ASSERT_TRUE(ferry__roce_has_imm(FERRY_OP_SEND_LAST_IMM));
	CU_ASSERT_TRUE(ferry__roce_has_imm(FERRY_OP_SEND_ONLY_IMM));
	CU_ASSERT_TRUE(ferry__roce_has_imm(FERRY_OP_WRITE_LAST_IMM));
	CU_ASSERT_TRUE(ferry__roce_has_imm(FERRY_OP_WRITE_ONLY_IMM));
	CU_ASSERT_FALSE(ferry__roce_has_imm(FERRY_OP_SEND_ONLY));
	CU_ASSERT_TRUE(ferry__roce_has_aeth(FERRY_OP_ACK));
	CU_ASSERT_FALSE(ferry__roce_has_aeth(FERRY_OP_SEND_FIRST));
	CU_ASSERT_EQUAL(ferry__roce_hdr_len(FERRY_OP_SEND_ONLY), 54);
	CU_ASSERT_EQUAL(ferry__roce_hdr_len(FERRY_OP_WRITE_FIRST), 70);
	CU_ASSERT_EQUAL(ferry__roce_hdr_len(FERRY_OP_WRITE_ONLY_IMM), 74);
	CU_ASSERT_EQUAL(ferry__roce_hdr_len(FERRY_OP_SEND_LAST_IMM), 58);
	CU_ASSERT_EQUAL(ferry__roce_hdr_len(FERRY_OP_ACK), 58);
	for (size_t i = 0; i < N_OPS; i++)
		CU_ASSERT_TRUE(ferry__roce_hdr_len(all_ops[i]) <=
			       FERRY_ROCE_HDR_MAX);
	CU_ASSERT_STRING_EQUAL(ferry__roce_op_name(FERRY_OP_WRITE_FIRST),
			       "RDMA_WRITE_FIRST");
	CU_ASSERT_STRING_EQUAL(ferry__roce_op_name(FERRY_OP_ACK),
			       "ACKNOWLEDGE");
}

static void check_same(const struct ferry_roce_pkt *a,
		       const struct ferry_roce_pkt *b)
{
	CU_ASSERT_EQUAL(memcmp(a->src.mac, b->src.mac, 6), 0);
	CU_ASSERT_EQUAL(memcmp(a->dst.mac, b->dst.mac, 6), 0);
	CU_ASSERT_EQUAL(a->src.ip, b->src.ip);
	CU_ASSERT_EQUAL(a->dst.ip, b->dst.ip);
	CU_ASSERT_EQUAL(a->udp_sport, b->udp_sport);
	CU_ASSERT_EQUAL(a->opcode, b->opcode);
	CU_ASSERT_EQUAL(a->se, b->se);
	CU_ASSERT_EQUAL(a->mig, b->mig);
	CU_ASSERT_EQUAL(a->ackreq, b->ackreq);
	CU_ASSERT_EQUAL(a->pkey, b->pkey);
	CU_ASSERT_EQUAL(a->dest_qp, b->dest_qp);
	CU_ASSERT_EQUAL(a->psn, b->psn);
	CU_ASSERT_EQUAL(a->va, b->va);
	CU_ASSERT_EQUAL(a->rkey, b->rkey);
	CU_ASSERT_EQUAL(a->dma_len, b->dma_len);
	CU_ASSERT_EQUAL(a->imm, b->imm);
	CU_ASSERT_EQUAL(a->syndrome, b->syndrome);
	CU_ASSERT_EQUAL(a->msn, b->msn);
	CU_ASSERT_EQUAL(a->dscp, b->dscp);
	CU_ASSERT_EQUAL(a->ecn, b->ecn);
	CU_ASSERT_EQUAL(a->becn, b->becn);
	CU_ASSERT_EQUAL(a->len, b->len);
	if (a->len && a->len == b->len)
		CU_ASSERT_EQUAL(memcmp(a->payload, b->payload, a->len), 0);
}

/* Build, parse, compare; the zero-copy pieces give the same bytes. */
static void roundtrip(uint8_t op, uint32_t len)
{
	static uint8_t zc[sizeof(frame)];
	struct ferry_roce_pkt p = mkpkt(op, len), q;
	uint8_t trailer[FERRY_ROCE_TRAILER_MAX];
	size_t n = build(&p), hlen = 0, tlen;
	uint32_t crc = 0;
	bool ok = false;

	CU_ASSERT_EQUAL(n, ferry__roce_frame_len(&p));
	CU_ASSERT_EQUAL(n, ferry__roce_hdr_len(op) + len +
			   ferry__roce_pad(len) + 4);
	CU_ASSERT_EQUAL_FATAL(ferry__roce_parse(frame, n, 0, &q, &ok, NULL), 0);
	CU_ASSERT_TRUE(ok);
	check_same(&p, &q);
	CU_ASSERT_EQUAL(q.pad, (4 - len % 4) % 4);
	CU_ASSERT_PTR_EQUAL(q.payload, frame + ferry__roce_hdr_len(op));

	CU_ASSERT_EQUAL_FATAL(ferry__roce_build_hdr(zc, FERRY_ROCE_HDR_MAX, &p,
						    &hlen, &crc), 0);
	CU_ASSERT_EQUAL(hlen, ferry__roce_hdr_len(op));
	/* the payload in uneven pieces, as from several buffers */
	for (uint32_t off = 0, k = 1; off < len; off += k, k = k * 3 + 1) {
		if (k > len - off)
			k = len - off;
		crc = ferry__roce_icrc_more(crc, p.payload + off, k);
		memcpy(zc + hlen + off, p.payload + off, k);
	}
	tlen = ferry__roce_trailer(trailer, crc, ferry__roce_pad(len));
	CU_ASSERT_EQUAL(tlen, ferry__roce_pad(len) + 4u);
	memcpy(zc + hlen + len, trailer, tlen);
	CU_ASSERT_EQUAL(hlen + len + tlen, n);
	CU_ASSERT_EQUAL(memcmp(zc, frame, n), 0);

	/* Ethernet padding after the IPv4 packet is ignored */
	if (n < 60) {
		memset(frame + n, 0xee, 60 - n);
		CU_ASSERT_EQUAL(ferry__roce_parse(frame, 60, 0, &q, &ok, NULL),
				0);
		CU_ASSERT_TRUE(ok);
		check_same(&p, &q);
	}
}

static void test_roundtrip(void)
{
	static const uint32_t lens[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 255, 1024,
					 4093, 4096, 9000, 65000 };

	fill_payload();
	for (size_t i = 0; i < N_OPS; i++) {
		if (all_ops[i] == FERRY_OP_ACK || all_ops[i] == FERRY_OP_CNP) {
			for (int k = 0; k < 8; k++)
				roundtrip(all_ops[i], all_ops[i] == FERRY_OP_CNP ?
						 FERRY_ROCE_CNP_LEN : 0);
			continue;
		}
		for (size_t j = 0; j < sizeof(lens) / sizeof(lens[0]); j++)
			roundtrip(all_ops[i], lens[j]);
	}
}

static void test_build_errors(void)
{
	struct ferry_roce_pkt p = mkpkt(FERRY_OP_SEND_ONLY, 100);
	size_t len, hl;
	uint32_t crc;

	fill_payload();
	CU_ASSERT_EQUAL(ferry__roce_build(frame, 54 + 100 + 4 - 1, &p, &len),
			-ENOSPC);
	CU_ASSERT_EQUAL(ferry__roce_build(frame, 54 + 100 + 4, &p, &len), 0);
	CU_ASSERT_EQUAL(len, 158u);
	CU_ASSERT_EQUAL(ferry__roce_build_hdr(frame, 53, &p, &hl, &crc),
			-ENOSPC);
	p.psn = 1u << 24;
	CU_ASSERT_EQUAL(ferry__roce_build(frame, sizeof(frame), &p, &len),
			-EINVAL);
	p = mkpkt(FERRY_OP_SEND_ONLY, 100);
	p.dest_qp = 1u << 24;
	CU_ASSERT_EQUAL(ferry__roce_build(frame, sizeof(frame), &p, &len),
			-EINVAL);
	p = mkpkt(FERRY_OP_SEND_ONLY, 100);
	p.payload = NULL;
	CU_ASSERT_EQUAL(ferry__roce_build(frame, sizeof(frame), &p, &len),
			-EINVAL);
	p = mkpkt(0x0c, 0);     /* RDMA READ request: not spoken */
	CU_ASSERT_EQUAL(ferry__roce_build(frame, sizeof(frame), &p, &len),
			-EINVAL);
	p = mkpkt(FERRY_OP_ACK, 4);
	CU_ASSERT_EQUAL(ferry__roce_build(frame, sizeof(frame), &p, &len),
			-EINVAL);
	p = mkpkt(FERRY_OP_ACK, 0);
	p.msn = 1u << 24;
	CU_ASSERT_EQUAL(ferry__roce_build(frame, sizeof(frame), &p, &len),
			-EINVAL);
	p = mkpkt(FERRY_OP_CNP, 4); /* a CNP is 16 reserved bytes */
	CU_ASSERT_EQUAL(ferry__roce_build(frame, sizeof(frame), &p, &len),
			-EINVAL);
	p = mkpkt(FERRY_OP_SEND_ONLY, 4);
	p.ecn = 4;
	CU_ASSERT_EQUAL(ferry__roce_build(frame, sizeof(frame), &p, &len),
			-EINVAL);
	p = mkpkt(FERRY_OP_SEND_ONLY, 4);
	p.dscp = 64;
	CU_ASSERT_EQUAL(ferry__roce_build(frame, sizeof(frame), &p, &len),
			-EINVAL);
	/* the IPv4 total length tops out at 65535: 65532 with the pad */
	p = mkpkt(FERRY_OP_SEND_ONLY, 65532 - 20 - 8 - 12 - 4);
	CU_ASSERT_EQUAL(ferry__roce_build(frame, sizeof(frame), &p, &len), 0);
	p.len++;
	CU_ASSERT_EQUAL(ferry__roce_build(frame, sizeof(frame), &p, &len),
			-FERRY_ETOOBIG);
}

static uint32_t icrc_of(size_t n)
{
	uint32_t v = 0;

	CU_ASSERT_EQUAL(ferry__roce_icrc(frame, n, &v), 0);
	return v;
}

static uint32_t stored_icrc(size_t n)
{
	return (uint32_t)frame[n - 4] | (uint32_t)frame[n - 3] << 8 |
	       (uint32_t)frame[n - 2] << 16 | (uint32_t)frame[n - 1] << 24;
}

static void fix_ip_csum(void)
{
	frame[24] = frame[25] = 0;
	uint16_t c = ferry__ip4_csum(frame + 14, 20);
	frame[24] = (uint8_t)(c >> 8);
	frame[25] = (uint8_t)c;
}

static void test_icrc(void)
{
	/* the pseudo-LRH seed: Linux rxe starts from the raw CRC state
	 * 0xdebb20e3, which is zlib's crc32 of 8 0xff bytes, inverted */
	static const uint8_t ff[8] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
				       0xff, 0xff };
	CU_ASSERT_EQUAL(ferry__roce_icrc_more(0, ff, 8), ~0xdebb20e3u);
	CU_ASSERT_EQUAL(ferry__roce_icrc_more(0, "123456789", 9), 0xcbf43926u);

	/* one frame checked against scapy 2.5's contrib/roce.py (ICRC
	 * computed there for these exact bytes; see scapy_icrc.py) */
	static const uint8_t ref[] = {
		0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00,
		0x00, 0x01, 0x08, 0x00, 0x45, 0x00, 0x00, 0x30, 0x00, 0x01,
		0x40, 0x00, 0x40, 0x11, 0xae, 0x94, 0xc6, 0x12, 0x00, 0x01,
		0xc6, 0x12, 0x00, 0x02, 0xc0, 0x01, 0x12, 0xb7, 0x00, 0x1c,
		0x00, 0x00, 0x04, 0x10, 0xff, 0xff, 0x00, 0x00, 0x00, 0x12,
		0x00, 0x00, 0x00, 0x05, 0x61, 0x62, 0x63, 0x00, 0x20, 0x14,
		0xa5, 0xf4,
	};
	struct ferry_roce_pkt q;
	bool ok = false;
	CU_ASSERT_EQUAL(ferry__roce_parse(ref, sizeof(ref), 0, &q, &ok, NULL),
			0);
	CU_ASSERT_TRUE(ok);
	CU_ASSERT_EQUAL(q.len, 3);
	CU_ASSERT_EQUAL(q.pad, 1);
	memcpy(frame, ref, sizeof(ref));
	CU_ASSERT_EQUAL(icrc_of(sizeof(ref)), 0xf4a51420u);

	fill_payload();
	struct ferry_roce_pkt p = mkpkt(FERRY_OP_WRITE_FIRST, 1001);
	size_t n = build(&p);
	uint32_t c0 = icrc_of(n);
	CU_ASSERT_EQUAL(c0, stored_icrc(n));

	/* masked fields: TOS, TTL, IP checksum, UDP checksum, FECN/BECN */
	static const size_t masked[] = { 15, 22, 24, 25, 40, 41, 46 };
	for (size_t i = 0; i < sizeof(masked) / sizeof(masked[0]); i++) {
		uint8_t old = frame[masked[i]];

		frame[masked[i]] ^= 0xa5;
		CU_ASSERT_EQUAL(icrc_of(n), c0);
		frame[masked[i]] = old;
	}
	/* covered fields: UDP source port, opcode flags, P_Key, QP, PSN,
	 * AckReq, IP addresses and id, RETH, payload, pad */
	const size_t covered[] = { 18, 26, 33, 34, 35, 42, 43, 44,
					  47, 49, 50, 53, 54, 69, 70, 500,
					  n - 5 };
	for (size_t i = 0; i < sizeof(covered) / sizeof(covered[0]); i++) {
		uint8_t old = frame[covered[i]];

		frame[covered[i]] ^= 0x01;
		CU_ASSERT_NOT_EQUAL(icrc_of(n), c0);
		frame[covered[i]] = old;
	}

	/* what a router may change leaves the ICRC good: TTL and ECN, with
	 * the IPv4 checksum redone, and the BTH's FECN bit */
	frame[22] = 3;
	frame[15] |= 3;
	frame[46] |= 0x80;
	fix_ip_csum();
	CU_ASSERT_EQUAL(ferry__roce_parse(frame, n, 0, &q, &ok, NULL), 0);
	CU_ASSERT_TRUE(ok);
	/* ... but not the payload or the PSN */
	frame[n - 100] ^= 0x40;
	CU_ASSERT_EQUAL(ferry__roce_parse(frame, n, 0, &q, &ok, NULL), 0);
	CU_ASSERT_FALSE(ok);
	frame[n - 100] ^= 0x40;
	frame[53]++;
	CU_ASSERT_EQUAL(ferry__roce_parse(frame, n, 0, &q, &ok, NULL), 0);
	CU_ASSERT_FALSE(ok);
	frame[53]--;
	frame[n - 1] ^= 0x80;   /* the ICRC itself */
	CU_ASSERT_EQUAL(ferry__roce_parse(frame, n, 0, &q, &ok, NULL), 0);
	CU_ASSERT_FALSE(ok);
	frame[n - 1] ^= 0x80;
	CU_ASSERT_EQUAL(ferry__roce_parse(frame, n, 0, &q, &ok, NULL), 0);
	CU_ASSERT_TRUE(ok);
}

/* Insert 4 bytes of IPv4 options (NOPs) into the frame in frame[0..n). */
static size_t add_ip_options(size_t n)
{
	memmove(frame + 38, frame + 34, n - 34);
	memset(frame + 34, 1, 4);
	frame[14] = 0x46;
	uint32_t tot = ((uint32_t)frame[16] << 8 | frame[17]) + 4;
	frame[16] = (uint8_t)(tot >> 8);
	frame[17] = (uint8_t)tot;
	frame[24] = frame[25] = 0;
	uint16_t c = ferry__ip4_csum(frame + 14, 24);
	frame[24] = (uint8_t)(c >> 8);
	frame[25] = (uint8_t)c;
	return n + 4;
}

/* The session's DSCP in the IPv4 DS field, beside the ECN bits: a
 * request goes DSCP << 2 | ECT(0), an ACK and a CNP DSCP << 2 alone.
 * The header checksum covers the byte; the ICRC masks it (annex A17),
 * so a frame's ICRC does not depend on its class. Built whole and in
 * the zero-copy pieces, the bytes are the same. */
static void test_dscp(void)
{
	static const struct {
		uint8_t op, ecn;
		uint32_t len;
	} k[] = {
		{ FERRY_OP_WRITE_ONLY_IMM, FERRY_ECN_ECT0, 1001 },
		{ FERRY_OP_WRITE_MIDDLE, FERRY_ECN_ECT0, 4096 },
		{ FERRY_OP_ACK, FERRY_ECN_NOT_ECT, 0 },
		{ FERRY_OP_CNP, FERRY_ECN_NOT_ECT, FERRY_ROCE_CNP_LEN },
	};
	static uint8_t whole[8192];

	fill_payload();
	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		struct ferry_roce_pkt p = mkpkt(k[i].op, k[i].len), q;
		size_t n, n0, hl, tl;
		uint32_t c0, crc;
		uint8_t tr[FERRY_ROCE_TRAILER_MAX];
		bool ok = false;

		p.ecn = k[i].ecn;
		p.dscp = 0;
		n0 = build(&p);
		c0 = stored_icrc(n0);
		p.dscp = 10;
		n = build(&p);
		CU_ASSERT_EQUAL_FATAL(n, n0);
		CU_ASSERT_EQUAL(frame[15], 10 << 2 | k[i].ecn);
		CU_ASSERT_EQUAL(ferry__ip4_csum(frame + 14, 20), 0);
		CU_ASSERT_EQUAL(icrc_of(n), stored_icrc(n));
		CU_ASSERT_EQUAL(stored_icrc(n), c0); /* masked */
		CU_ASSERT_EQUAL(ferry__roce_parse(frame, n, 0, &q, &ok, NULL), 0);
		CU_ASSERT_TRUE(ok);
		CU_ASSERT_EQUAL(q.dscp, 10);
		CU_ASSERT_EQUAL(q.ecn, k[i].ecn);

		/* zero copy: header, the payload where it lies, trailer */
		memcpy(whole, frame, n);
		CU_ASSERT_EQUAL_FATAL(ferry__roce_build_hdr(frame, sizeof(frame),
							    &p, &hl, &crc), 0);
		crc = ferry__roce_icrc_more(crc, p.payload, p.len);
		tl = ferry__roce_trailer(tr, crc, ferry__roce_pad(p.len));
		CU_ASSERT_EQUAL(hl + p.len + tl, n);
		CU_ASSERT_EQUAL(memcmp(frame, whole, hl), 0);
		CU_ASSERT_EQUAL(memcmp(tr, whole + hl + p.len, tl), 0);
	}
}

static void test_parse_rejects(void)
{
	struct ferry_roce_pkt p, q;
	const char *why;
	bool ok;
	size_t n;

	fill_payload();
	for (size_t i = 0; i < N_OPS; i++) {
		uint32_t len = all_ops[i] == FERRY_OP_ACK ? 0 :
			       all_ops[i] == FERRY_OP_CNP ? FERRY_ROCE_CNP_LEN :
							    37;

		p = mkpkt(all_ops[i], len);
		n = build(&p);
		for (size_t k = 0; k < n; k++) {
			why = NULL;
			CU_ASSERT_EQUAL(ferry__roce_parse(frame, k, 0, &q, &ok,
							  &why),
					-FERRY_EPROTO);
			CU_ASSERT_PTR_NOT_NULL(why);
		}
		CU_ASSERT_EQUAL(ferry__roce_parse(frame, n, 0, &q, &ok, &why),
				0);
		CU_ASSERT_PTR_NULL(why);
	}

	p = mkpkt(FERRY_OP_SEND_ONLY, 37);
	n = build(&p);
	frame[12] = 0x86;
	frame[13] = 0xdd;       /* IPv6 */
	CU_ASSERT_EQUAL(ferry__roce_parse(frame, n, 0, &q, &ok, &why), -ENOMSG);
	CU_ASSERT_FALSE(ferry__roce_to_port(frame, n, 0));
	n = build(&p);
	frame[37] = 0xb8;       /* UDP port 4792 */
	CU_ASSERT_EQUAL(ferry__roce_parse(frame, n, 0, &q, &ok, &why), -ENOMSG);
	CU_ASSERT_FALSE(ferry__roce_to_port(frame, n, 0));
	CU_ASSERT_TRUE(ferry__roce_to_port(frame, n, 4792));
	CU_ASSERT_EQUAL(ferry__roce_parse(frame, n, 4792, &q, &ok, &why), 0);
	CU_ASSERT_FALSE(ok);    /* the port is covered by the ICRC */
	n = build(&p);
	frame[23] = 6;          /* TCP */
	fix_ip_csum();
	CU_ASSERT_EQUAL(ferry__roce_parse(frame, n, 0, &q, &ok, &why), -ENOMSG);
	n = build(&p);
	frame[20] |= 0x20;      /* more fragments */
	fix_ip_csum();
	CU_ASSERT_EQUAL(ferry__roce_parse(frame, n, 0, &q, &ok, &why), -ENOMSG);

	/* malformed: checksum, versions, lengths, opcodes */
	n = build(&p);
	frame[30] ^= 1;         /* source address, checksum not redone */
	CU_ASSERT_EQUAL(ferry__roce_parse(frame, n, 0, &q, &ok, &why),
			-FERRY_EPROTO);
	n = build(&p);
	frame[14] = 0x44;       /* IHL 4 */
	CU_ASSERT_EQUAL(ferry__roce_parse(frame, n, 0, &q, &ok, &why),
			-FERRY_EPROTO);
	n = build(&p);
	frame[14] = 0x65;       /* version 6 in an IPv4 ethertype */
	CU_ASSERT_EQUAL(ferry__roce_parse(frame, n, 0, &q, &ok, &why),
			-FERRY_EPROTO);
	n = build(&p);
	frame[39]++;            /* UDP length */
	CU_ASSERT_EQUAL(ferry__roce_parse(frame, n, 0, &q, &ok, &why),
			-FERRY_EPROTO);
	n = build(&p);
	frame[43] |= 1;         /* TVer 1 */
	CU_ASSERT_EQUAL(ferry__roce_parse(frame, n, 0, &q, &ok, &why),
			-FERRY_EPROTO);
	n = build(&p);          /* one pad byte short: 37 + 2 */
	memmove(frame + n - 5, frame + n - 4, 4);
	n--;
	frame[17]--;
	frame[39]--;
	fix_ip_csum();
	CU_ASSERT_EQUAL(ferry__roce_parse(frame, n, 0, &q, &ok, &why),
			-FERRY_EPROTO);
	p = mkpkt(FERRY_OP_SEND_ONLY, 0);
	n = build(&p);
	frame[43] |= 0x30;      /* PadCnt 3 with nothing to pad */
	CU_ASSERT_EQUAL(ferry__roce_parse(frame, n, 0, &q, &ok, &why),
			-FERRY_EPROTO);
	p = mkpkt(FERRY_OP_SEND_ONLY, 37);
	static const uint8_t bad_ops[] = { 0x0c, 0x0d, 0x10, 0x12, 0x13, 0x14,
					   0x20, 0x64, 0x81, 0xff };
	for (size_t i = 0; i < sizeof(bad_ops); i++) {
		n = build(&p);
		frame[42] = bad_ops[i];
		CU_ASSERT_EQUAL(ferry__roce_parse(frame, n, 0, &q, &ok, &why),
				-FERRY_EPROTO);
		/* the ICRC is still computable for opcodes ferry won't parse */
		CU_ASSERT_NOT_EQUAL(icrc_of(n), stored_icrc(n));
		CU_ASSERT_TRUE(ferry__roce_to_port(frame, n, 0));
	}
	/* an ACK with a payload: a SEND_ONLY of 8 bytes relabelled */
	p = mkpkt(FERRY_OP_SEND_ONLY, 8);
	n = build(&p);
	frame[42] = FERRY_OP_ACK;
	CU_ASSERT_EQUAL(ferry__roce_parse(frame, n, 0, &q, &ok, &why),
			-FERRY_EPROTO);
	/* a WRITE_ONLY_IMM too short for its RETH and ImmDt */
	p = mkpkt(FERRY_OP_SEND_ONLY, 16);
	n = build(&p);
	frame[42] = FERRY_OP_WRITE_ONLY_IMM;
	CU_ASSERT_EQUAL(ferry__roce_parse(frame, n, 0, &q, &ok, &why),
			-FERRY_EPROTO);

	/* IPv4 options are allowed and covered by the ICRC */
	p = mkpkt(FERRY_OP_WRITE_ONLY_IMM, 99);
	n = add_ip_options(build(&p));
	uint32_t c = icrc_of(n);
	memcpy(frame + n - 4, (uint8_t[]){ (uint8_t)c, (uint8_t)(c >> 8),
					   (uint8_t)(c >> 16),
					   (uint8_t)(c >> 24) }, 4);
	CU_ASSERT_EQUAL(ferry__roce_parse(frame, n, 0, &q, &ok, &why), 0);
	CU_ASSERT_TRUE(ok);
	check_same(&p, &q);
	frame[35] = 0;          /* an option byte */
	frame[24] = frame[25] = 0;
	uint16_t ck = ferry__ip4_csum(frame + 14, 24);
	frame[24] = (uint8_t)(ck >> 8);
	frame[25] = (uint8_t)ck;
	CU_ASSERT_EQUAL(ferry__roce_parse(frame, n, 0, &q, &ok, &why), 0);
	CU_ASSERT_FALSE(ok);
}

static void test_psn(void)
{
	CU_ASSERT_EQUAL(ferry__psn_add(0xffffff, 1), 0);
	CU_ASSERT_EQUAL(ferry__psn_add(0xfffffe, 5), 3);
	CU_ASSERT_EQUAL(ferry__psn_add(7, 0), 7);
	CU_ASSERT_EQUAL(ferry__psn_diff(0, 0xffffff), 1);
	CU_ASSERT_EQUAL(ferry__psn_diff(0xffffff, 0), -1);
	CU_ASSERT_EQUAL(ferry__psn_diff(5, 0xfffffe), 7);
	CU_ASSERT_EQUAL(ferry__psn_diff(0xfffffe, 5), -7);
	CU_ASSERT_EQUAL(ferry__psn_diff(100, 100), 0);
	CU_ASSERT_EQUAL(ferry__psn_diff(0x7fffff, 0), 0x7fffff);
	CU_ASSERT_EQUAL(ferry__psn_diff(0, 0x7fffff), -0x7fffff);
	/* half the space apart: the two's-complement end, -2^23 */
	CU_ASSERT_EQUAL(ferry__psn_diff(0x800000, 0), -0x800000);
	for (uint32_t i = 0; i < 2000; i++) {
		uint32_t a = rnd() & FERRY_PSN_MASK, d = rnd() % 0x7fffff;

		CU_ASSERT_EQUAL(ferry__psn_diff(ferry__psn_add(a, d), a),
				(int32_t)d);
		CU_ASSERT_EQUAL(ferry__psn_diff(a, ferry__psn_add(a, d)),
				-(int32_t)d);
		CU_ASSERT_TRUE(ferry__psn_add(a, d) <= FERRY_PSN_MASK);
	}
}

/* Capture files, written here in both byte orders. */

struct cap {
	uint8_t *b;
	size_t n, cap;
	bool be;
};

static void cap_put(struct cap *c, const void *p, size_t n)
{
	if (c->n + n > c->cap) {
		c->cap = (c->n + n) * 2;
		c->b = realloc(c->b, c->cap);
		if (!c->b)
			abort();        /* also used outside CUnit */
	}
	memcpy(c->b + c->n, p, n);
	c->n += n;
}

static void cap_u16(struct cap *c, uint16_t v)
{
	uint8_t b[2] = { (uint8_t)v, (uint8_t)(v >> 8) };

	if (c->be) {
		b[0] = (uint8_t)(v >> 8);
		b[1] = (uint8_t)v;
	}
	cap_put(c, b, 2);
}

static void cap_u32(struct cap *c, uint32_t v)
{
	if (c->be) {
		cap_u16(c, (uint16_t)(v >> 16));
		cap_u16(c, (uint16_t)v);
	} else {
		cap_u16(c, (uint16_t)v);
		cap_u16(c, (uint16_t)(v >> 16));
	}
}

static void cap_pad4(struct cap *c)
{
	static const uint8_t z[4];

	cap_put(c, z, (4 - c->n % 4) % 4);
}

static void pcap_hdr(struct cap *c, bool nano, uint32_t linktype)
{
	cap_u32(c, nano ? 0xa1b23c4d : 0xa1b2c3d4);
	cap_u16(c, 2);
	cap_u16(c, 4);
	cap_u32(c, 0);
	cap_u32(c, 0);
	cap_u32(c, 65535);
	cap_u32(c, linktype);
}

static void pcap_rec(struct cap *c, bool nano, uint64_t ts_ns,
		     const uint8_t *d, uint32_t caplen, uint32_t len)
{
	cap_u32(c, (uint32_t)(ts_ns / 1000000000u));
	cap_u32(c, (uint32_t)(ts_ns % 1000000000u / (nano ? 1 : 1000)));
	cap_u32(c, caplen);
	cap_u32(c, len);
	cap_put(c, d, caplen);
}

static void ng_shb(struct cap *c)
{
	cap_u32(c, 0x0a0d0d0a);
	cap_u32(c, 28);
	cap_u32(c, 0x1a2b3c4d);
	cap_u16(c, 1);
	cap_u16(c, 0);
	cap_u32(c, 0xffffffff);
	cap_u32(c, 0xffffffff);
	cap_u32(c, 28);
}

/* tsresol < 0: no option (microseconds) */
static void ng_idb(struct cap *c, uint16_t linktype, int tsresol)
{
	uint32_t len = 28 + (tsresol >= 0 ? 12 : 0);

	cap_u32(c, 1);
	cap_u32(c, len);
	cap_u16(c, linktype);
	cap_u16(c, 0);
	cap_u32(c, 0);          /* snaplen: none */
	cap_u16(c, 2);          /* if_name "e0" */
	cap_u16(c, 2);
	cap_put(c, "e0\0\0", 4);
	if (tsresol >= 0) {
		cap_u16(c, 9);
		cap_u16(c, 1);
		cap_put(c, (uint8_t[]){ (uint8_t)tsresol, 0, 0, 0 }, 4);
		cap_u16(c, 0);
		cap_u16(c, 0);
	}
	cap_u32(c, len);
}

static void ng_epb(struct cap *c, uint32_t ifid, uint64_t ts,
		   const uint8_t *d, uint32_t caplen, uint32_t len,
		   bool comment)
{
	uint32_t tot = 32 + ((caplen + 3) & ~3u) + (comment ? 16 : 0);

	cap_u32(c, 6);
	cap_u32(c, tot);
	cap_u32(c, ifid);
	cap_u32(c, (uint32_t)(ts >> 32));
	cap_u32(c, (uint32_t)ts);
	cap_u32(c, caplen);
	cap_u32(c, len);
	cap_put(c, d, caplen);
	cap_pad4(c);
	if (comment) {
		cap_u16(c, 1);  /* opt_comment "hi!" */
		cap_u16(c, 3);
		cap_put(c, "hi!\0", 4);
		cap_u16(c, 0);
		cap_u16(c, 0);
		cap_u32(c, 0);  /* junk the reader must skip (options end) */
	}
	cap_u32(c, tot);
}

static void ng_spb(struct cap *c, const uint8_t *d, uint32_t len)
{
	uint32_t tot = 16 + ((len + 3) & ~3u);

	cap_u32(c, 3);
	cap_u32(c, tot);
	cap_u32(c, len);
	cap_put(c, d, len);
	cap_pad4(c);
	cap_u32(c, tot);
}

static void ng_other(struct cap *c, uint32_t type)
{
	cap_u32(c, type);
	cap_u32(c, 20);
	cap_put(c, "skipskip", 8);
	cap_u32(c, 20);
}

#define MAXF 16
struct got {
	unsigned n, stop_at;
	uint64_t ts[MAXF];
	uint32_t caplen[MAXF], len[MAXF];
	uint8_t data[MAXF][200];
};

static int on_frame(const struct ferry_pcap_frame *f, void *arg)
{
	struct got *g = arg;

	if (g->n < MAXF) {
		g->ts[g->n] = f->ts_ns;
		g->caplen[g->n] = f->caplen;
		g->len[g->n] = f->len;
		memcpy(g->data[g->n], f->data, f->caplen < 200 ? f->caplen : 200);
	}
	g->n++;
	return g->stop_at && g->n == g->stop_at ? 77 : 0;
}

static int read_mem(const struct cap *c, size_t n, struct got *g, char *why,
		    size_t wl)
{
	FILE *f = fmemopen(c->b, n, "rb");
	int rc;

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	rc = ferry__pcap_read(f, on_frame, g, why, wl);
	fclose(f);
	return rc;
}

static uint8_t frames[3][200];
static uint32_t frame_lens[3];

static void make_frames(void)
{
	fill_payload();
	for (int i = 0; i < 3; i++) {
		struct ferry_roce_pkt p = mkpkt(all_ops[i * 4],
						(uint32_t)(i * 50 + 1));
		frame_lens[i] = (uint32_t)build(&p);
		memcpy(frames[i], frame, frame_lens[i]);
	}
}

static void check_got(const struct got *g, const uint64_t *ts, bool trunc2)
{
	CU_ASSERT_EQUAL_FATAL(g->n, 3);
	for (int i = 0; i < 3; i++) {
		uint32_t cl = trunc2 && i == 2 ? 60 : frame_lens[i];

		CU_ASSERT_EQUAL(g->caplen[i], cl);
		CU_ASSERT_EQUAL(g->len[i], frame_lens[i]);
		CU_ASSERT_EQUAL(memcmp(g->data[i], frames[i], cl), 0);
		if (ts)
			CU_ASSERT_EQUAL(g->ts[i], ts[i]);
	}
}

static void test_pcap(void)
{
	static const uint64_t ts[3] = { 1700000000123456000ull,
					1700000000123457000ull,
					1700000001000001000ull };
	char why[200];

	make_frames();
	for (int be = 0; be < 2; be++) {
		for (int nano = 0; nano < 2; nano++) {
			struct cap c = { .be = be };
			struct got g = { 0 };
			uint64_t t[3];

			pcap_hdr(&c, nano, 1);
			for (int i = 0; i < 3; i++) {
				t[i] = ts[i] + (nano ? (uint64_t)i * 7 : 0);
				pcap_rec(&c, nano, t[i], frames[i],
					 i == 2 ? 60 : frame_lens[i],
					 frame_lens[i]);
			}
			CU_ASSERT_EQUAL(read_mem(&c, c.n, &g, why, sizeof(why)),
					0);
			check_got(&g, t, true);

			/* cut anywhere: a clean error, or fewer frames at a
			 * record boundary */
			for (size_t k = 0; k < c.n; k++) {
				struct got h = { 0 };
				int rc = read_mem(&c, k, &h, why, sizeof(why));

				CU_ASSERT(rc == -FERRY_EPROTO ||
					  (rc == 0 && h.n < 3));
				if (rc)
					CU_ASSERT(why[0] != '\0');
			}
			/* the callback stops the reading */
			struct got s = { .stop_at = 2 };
			CU_ASSERT_EQUAL(read_mem(&c, c.n, &s, why, sizeof(why)),
					77);
			CU_ASSERT_EQUAL(s.n, 2);
			free(c.b);
		}
	}

	/* not Ethernet; not a capture; a record over the limit */
	struct cap c = { 0 };
	struct got g = { 0 };
	pcap_hdr(&c, false, 113);
	CU_ASSERT_EQUAL(read_mem(&c, c.n, &g, why, sizeof(why)),
			-FERRY_EPROTO);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "linktype 113"));
	c.n = 0;
	cap_put(&c, "hello, world, not a capture", 27);
	CU_ASSERT_EQUAL(read_mem(&c, c.n, &g, why, sizeof(why)),
			-FERRY_EPROTO);
	c.n = 0;
	pcap_hdr(&c, false, 1);
	cap_u32(&c, 0);
	cap_u32(&c, 0);
	cap_u32(&c, FERRY_PCAP_MAX_FRAME + 1);
	cap_u32(&c, FERRY_PCAP_MAX_FRAME + 1);
	CU_ASSERT_EQUAL(read_mem(&c, c.n, &g, why, sizeof(why)),
			-FERRY_EPROTO);
	CU_ASSERT_EQUAL(read_mem(&c, 0, &g, why, sizeof(why)), -FERRY_EPROTO);
	CU_ASSERT_EQUAL(g.n, 0);
	free(c.b);
}

static void test_pcapng(void)
{
	static const uint64_t t_us[3] = { 1700000000123456000ull,
					  1700000000123457000ull,
					  1700000001000001000ull };
	char why[200];

	make_frames();
	for (int be = 0; be < 2; be++) {
		struct cap c = { .be = be };
		struct got g = { 0 };

		/* interface 0 in microseconds, 1 in nanoseconds (be) or in
		 * 2^-10 s (le) */
		ng_shb(&c);
		ng_other(&c, 0x00000bad);       /* unknown: skipped */
		ng_idb(&c, 1, -1);
		ng_idb(&c, 1, be ? 9 : 0x8a);
		ng_epb(&c, 0, t_us[0] / 1000, frames[0], frame_lens[0],
		       frame_lens[0], true);
		ng_other(&c, 5);                /* interface statistics */
		uint64_t t1 = be ? t_us[1] + 5 : (uint64_t)1700000000 << 10 | 512;
		ng_epb(&c, 1, t1, frames[1], frame_lens[1], frame_lens[1],
		       false);
		ng_epb(&c, 0, t_us[2] / 1000, frames[2], 60, frame_lens[2],
		       false);
		CU_ASSERT_EQUAL(read_mem(&c, c.n, &g, why, sizeof(why)), 0);
		if (why[0])
			fprintf(stderr, "pcapng: %s\n", why);
		check_got(&g, NULL, true);
		CU_ASSERT_EQUAL(g.ts[0], t_us[0]);
		CU_ASSERT_EQUAL(g.ts[1], be ? t_us[1] + 5
					    : 1700000000500000000ull);
		CU_ASSERT_EQUAL(g.ts[2], t_us[2]);

		for (size_t k = 0; k < c.n; k++) {
			struct got h = { 0 };
			int rc = read_mem(&c, k, &h, why, sizeof(why));

			CU_ASSERT(rc == -FERRY_EPROTO || (rc == 0 && h.n < 3));
		}

		/* a second section in the other byte order, with an SPB */
		c.be = !be;
		ng_shb(&c);
		ng_idb(&c, 1, -1);
		ng_spb(&c, frames[0], frame_lens[0]);
		struct got g2 = { 0 };
		CU_ASSERT_EQUAL(read_mem(&c, c.n, &g2, why, sizeof(why)), 0);
		CU_ASSERT_EQUAL(g2.n, 4);
		CU_ASSERT_EQUAL(g2.caplen[3], frame_lens[0]);
		CU_ASSERT_EQUAL(g2.ts[3], 0);
		CU_ASSERT_EQUAL(memcmp(g2.data[3], frames[0], frame_lens[0]),
				0);
		free(c.b);
	}

	/* malformed: packet before any interface, bad trailing length,
	 * length not a multiple of 4, non-Ethernet interface */
	struct cap c = { 0 };
	struct got g = { 0 };
	ng_shb(&c);
	ng_epb(&c, 0, 0, frames[0], frame_lens[0], frame_lens[0], false);
	CU_ASSERT_EQUAL(read_mem(&c, c.n, &g, why, sizeof(why)),
			-FERRY_EPROTO);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "interface 0"));
	c.n = 0;
	ng_shb(&c);
	ng_idb(&c, 1, -1);
	ng_other(&c, 4);
	c.b[c.n - 1] ^= 4;      /* trailing length */
	CU_ASSERT_EQUAL(read_mem(&c, c.n, &g, why, sizeof(why)),
			-FERRY_EPROTO);
	c.n = 0;
	ng_shb(&c);
	cap_u32(&c, 4);
	cap_u32(&c, 13);
	CU_ASSERT_EQUAL(read_mem(&c, c.n, &g, why, sizeof(why)),
			-FERRY_EPROTO);
	c.n = 0;
	ng_shb(&c);
	ng_idb(&c, 101, -1);    /* raw IP */
	CU_ASSERT_EQUAL(read_mem(&c, c.n, &g, why, sizeof(why)),
			-FERRY_EPROTO);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "linktype 101"));
	c.n = 0;
	ng_shb(&c);
	c.b[8] = 0x55;          /* byte-order magic */
	CU_ASSERT_EQUAL(read_mem(&c, c.n, &g, why, sizeof(why)),
			-FERRY_EPROTO);
	CU_ASSERT_EQUAL(g.n, 0);
	free(c.b);
}

/* Integration helpers. */

static int write_pcap(const char *path)
{
	struct cap c = { 0 };
	static const uint32_t lens[] = { 0, 1, 2, 3, 4, 5, 255, 1024, 4096 };
	uint64_t t = 1700000000000000000ull;

	fill_payload();
	pcap_hdr(&c, true, 1);
	for (size_t i = 0; i < N_OPS; i++) {
		for (size_t j = 0; j < sizeof(lens) / sizeof(lens[0]); j++) {
			if (all_ops[i] == FERRY_OP_ACK && lens[j])
				continue;
			if (all_ops[i] == FERRY_OP_CNP && j)
				continue; /* one, of its 16 reserved bytes */
			struct ferry_roce_pkt p = mkpkt(all_ops[i],
				all_ops[i] == FERRY_OP_CNP ? FERRY_ROCE_CNP_LEN :
							     lens[j]);
			size_t n = 0;

			if (ferry__roce_build(frame, sizeof(frame), &p, &n))
				return 2;
			pcap_rec(&c, true, t += 1000, frame, (uint32_t)n,
				 (uint32_t)n);
		}
	}
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(c.b, 1, c.n, f) != c.n || fclose(f)) {
		perror(path);
		return 2;
	}
	free(c.b);
	return 0;
}

struct counts {
	unsigned frames, roce, ok, bad;
};

static int count_frame(const struct ferry_pcap_frame *f, void *arg)
{
	struct counts *k = arg;
	struct ferry_roce_pkt p;
	bool ok;

	k->frames++;
	if (ferry__roce_parse(f->data, f->caplen, 0, &p, &ok, NULL) == 0) {
		k->roce++;
		if (ok)
			k->ok++;
		else
			k->bad++;
	}
	return 0;
}

static int check_pcap(const char *path)
{
	struct counts k = { 0 };
	char why[200];
	FILE *f = fopen(path, "rb");

	if (!f) {
		perror(path);
		return 2;
	}
	int rc = ferry__pcap_read(f, count_frame, &k, why, sizeof(why));
	fclose(f);
	printf("%u frames, %u RoCEv2, %u ICRC ok, %u ICRC bad\n", k.frames,
	       k.roce, k.ok, k.bad);
	if (rc) {
		fprintf(stderr, "%s: %s\n", path, why);
		return 2;
	}
	return k.bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--write-pcap"))
		return write_pcap(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "--check-pcap"))
		return check_pcap(argv[2]);

	CU_TestInfo tests[] = {
		{ "opcodes and header lengths", test_ops },
		{ "build/parse round trip, every opcode", test_roundtrip },
		{ "build refuses bad packets", test_build_errors },
		{ "ICRC coverage and masks", test_icrc },
		{ "the DSCP in the DS field, beside ECN", test_dscp },
		{ "parse rejects malformed frames", test_parse_rejects },
		{ "PSN arithmetic across the wrap", test_psn },
		{ "pcap reader", test_pcap },
		{ "pcapng reader", test_pcapng },
		CU_TEST_INFO_NULL,
	};
	return ferry_cu_run("uroce_wire", tests);
}
