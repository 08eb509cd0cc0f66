/* ferry rocedump's decoder (lib/rocedump): frames scapy built, a CNP a
 * ConnectX-4 Lx sent, every opcode and its header lengths, every AETH
 * syndrome, VLAN and IPv6, frames cut short, undecodable frames. Flows
 * and capture files: test_rocedump_flows.c.
 * tests/integration/rocedump.sh checks the command's output on a larger
 * capture, against scapy's and tshark's reading.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cu.h"
#include "ferry/error.h"
#include "ferry/rocedump.h"
#include "roce_frames.h"
#include "xport/roce/wire.h"

/* ---- frames scapy 2.5 built (contrib/roce.py: BTH, cnp(), ICRC) ---- */
/* Ether / IP(198.18.0.1 > 198.18.0.2, DF) / UDP(0xc123 > 4791) /
 * BTH(opcode=0x0c, dqpn=0x12ab, psn=0x345678, ackreq=1) /
 * RETH(va=0x7f1234560000, rkey=0x5eed0042, len=65536) */
static const uint8_t read_req[] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x08, 0x00, 0x45, 0x00, 0x00, 0x3c, 0x00, 0x01, 0x40, 0x00, 0x40, 0x11,
	0xae, 0x88, 0xc6, 0x12, 0x00, 0x01, 0xc6, 0x12, 0x00, 0x02, 0xc1, 0x23,
	0x12, 0xb7, 0x00, 0x28, 0x00, 0x00, 0x0c, 0x00, 0xff, 0xff, 0x00, 0x00,
	0x12, 0xab, 0x80, 0x34, 0x56, 0x78, 0x00, 0x00, 0x7f, 0x12, 0x34, 0x56,
	0x00, 0x00, 0x5e, 0xed, 0x00, 0x42, 0x00, 0x01, 0x00, 0x00, 0x2f, 0xe1,
	0x7f, 0xbd,
};
/* ... / cnp(0x12ab): opcode 0x81, BECN, 16 reserved bytes */
static const uint8_t cnp[] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x08, 0x00, 0x45, 0x00, 0x00, 0x3c, 0x00, 0x01, 0x40, 0x00, 0x40, 0x11,
	0xae, 0x88, 0xc6, 0x12, 0x00, 0x01, 0xc6, 0x12, 0x00, 0x02, 0xc1, 0x23,
	0x12, 0xb7, 0x00, 0x28, 0x00, 0x00, 0x81, 0x00, 0xff, 0xff, 0x40, 0x00,
	0x12, 0xab, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xed, 0xd6,
	0x4b, 0x2c,
};
/* ... / BTH(opcode=0x11, dqpn=0x12ab, psn=0x102) /
 * AETH(syndrome=0x60, msn=0xaaaa): a NAK, PSN sequence error */
static const uint8_t nak[] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x08, 0x00, 0x45, 0x00, 0x00, 0x30, 0x00, 0x01, 0x40, 0x00, 0x40, 0x11,
	0xae, 0x94, 0xc6, 0x12, 0x00, 0x01, 0xc6, 0x12, 0x00, 0x02, 0xc1, 0x23,
	0x12, 0xb7, 0x00, 0x1c, 0x00, 0x00, 0x11, 0x00, 0xff, 0xff, 0x00, 0x00,
	0x12, 0xab, 0x00, 0x00, 0x01, 0x02, 0x60, 0x00, 0xaa, 0xaa, 0xcd, 0xa4,
	0xdb, 0x23,
};
/* ... / BTH(opcode=0x64, dqpn=1, psn=7) / DETH(0x80010000, 1) / a CM REQ
 * MAD (tid 0x1122334455667788; local comm ID 0xa1a2a3a4, local QPN
 * 0xc1c2, starting PSN 0xd1d2 at ibta_vol1_c12.h's offsets); zeros to
 * its 256th byte, then the ICRC */
static const uint8_t cm_req[322] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x08, 0x00, 0x45, 0x00, 0x01, 0x34, 0x00, 0x01, 0x40, 0x00, 0x40, 0x11,
	0xad, 0x90, 0xc6, 0x12, 0x00, 0x01, 0xc6, 0x12, 0x00, 0x02, 0xc1, 0x23,
	0x12, 0xb7, 0x01, 0x20, 0x00, 0x00, 0x64, 0x00, 0xff, 0xff, 0x00, 0x00,
	0x00, 0x01, 0x00, 0x00, 0x00, 0x07, 0x80, 0x01, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x01, 0x01, 0x07, 0x02, 0x03, 0x00, 0x00, 0x00, 0x00, 0x11, 0x22,
	0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0xa1, 0xa2, 0xa3, 0xa4, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xc1,
	0xc2, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xd1,
	0xd2, 0x37,
	[318] = 0x2d, 0x80, 0x56, 0xf7,
};
/* Ether / Dot1Q(vlan=42) / IPv6(fd00::1 > fd00::2, tc=0x63, fl=0x12345,
 * hlim=7) / UDP / BTH(opcode=0x65, dqpn=0x777, psn=0x10, padcount=2) /
 * DETH(0x1234, 0xabc) / ImmDt(0x01020304) / "hello!" + 2 pad bytes; the
 * ICRC (scapy has none for IPv6) from scapy_icrc.py's own_icrc_ip, rxe's
 * masks */
static const uint8_t ud_ipv6[] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x81, 0x00, 0x00, 0x2a, 0x86, 0xdd, 0x66, 0x31, 0x23, 0x45, 0x00, 0x2c,
	0x11, 0x07, 0xfd, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0xfd, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0xc1, 0x23,
	0x12, 0xb7, 0x00, 0x2c, 0x00, 0x00, 0x65, 0x20, 0xff, 0xff, 0x00, 0x00,
	0x07, 0x77, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x12, 0x34, 0x00, 0x00,
	0x0a, 0xbc, 0x01, 0x02, 0x03, 0x04, 0x68, 0x65, 0x6c, 0x6c, 0x6f, 0x21,
	0x00, 0x00, 0xcd, 0xa5, 0xd9, 0xd8,
};

/* A CNP a ConnectX-4 Lx sent (the bytes of scapy's test/contrib/roce.uts,
 * "RoCE CNP captured on ConnectX-4 Lx"): ECN 2 in the IP header, UDP
 * source port 0, BECN, QP 0x118, its ICRC as the NIC computed it. */
static const uint8_t cx4_cnp[] = {
	0xe4, 0x1d, 0x2d, 0xab, 0x2b, 0xc2, 0x7c, 0xfe, 0x90, 0x64, 0x3b, 0x32,
	0x08, 0x00, 0x45, 0xc2, 0x00, 0x3c, 0x71, 0x8c, 0x40, 0x00, 0x40, 0x11,
	0x91, 0x61, 0x0a, 0x00, 0x11, 0x01, 0x0a, 0x00, 0x12, 0x01, 0x00, 0x00,
	0x12, 0xb7, 0x00, 0x28, 0x00, 0x00, 0x81, 0x00, 0xff, 0xff, 0x40, 0x00,
	0x01, 0x18, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x82, 0xfd,
	0x00, 0x2a,
};

static struct ferry_roce_frame dec(const uint8_t *f, size_t len)
{
	struct ferry_roce_frame o;

	CU_ASSERT_EQUAL_FATAL(ferry_rocedump_decode(f, len, len, 0, &o), 0);
	return o;
}

static void test_scapy_frames(void)
{
	struct ferry_roce_frame o = dec(read_req, sizeof(read_req));

	CU_ASSERT_EQUAL(o.verdict, FERRY_ROCE_DECODED);
	CU_ASSERT_STRING_EQUAL(o.transport, "RC");
	CU_ASSERT_STRING_EQUAL(o.op, "RDMA_READ_REQUEST");
	CU_ASSERT(o.dest_qp == 0x12ab && o.psn == 0x345678 && o.ackreq);
	CU_ASSERT_EQUAL(o.hdrs, FERRY_ROCE_H_RETH);
	CU_ASSERT(o.va == 0x7f1234560000ull && o.rkey == 0x5eed0042 &&
		  o.dma_len == 65536);
	CU_ASSERT(o.payload_len == 0 && o.payload_off == 14 + 20 + 8 + 12 + 16);
	CU_ASSERT_EQUAL(o.icrc, FERRY_ROCE_ICRC_OK);
	CU_ASSERT(o.ip_version == 4 && !memcmp(o.src_ip, "\xc6\x12\0\x01", 4));
	CU_ASSERT(o.udp_sport == 0xc123 && o.udp_dport == 4791);

	o = dec(cnp, sizeof(cnp));
	CU_ASSERT_EQUAL(o.verdict, FERRY_ROCE_DECODED);
	CU_ASSERT_STRING_EQUAL(o.transport, "CNP");
	CU_ASSERT(o.opcode == 0x81 && o.becn && !o.fecn && o.dest_qp == 0x12ab);
	CU_ASSERT(o.hdrs == FERRY_ROCE_H_CNP && o.payload_len == 0);
	CU_ASSERT_EQUAL(o.icrc, FERRY_ROCE_ICRC_OK);

	o = dec(cx4_cnp, sizeof(cx4_cnp));
	CU_ASSERT_EQUAL(o.verdict, FERRY_ROCE_DECODED);
	CU_ASSERT(!strcmp(o.transport, "CNP") && o.opcode == 0x81);
	CU_ASSERT(o.dest_qp == 0x118 && o.becn && o.ecn == 2 &&
		  o.udp_sport == 0 && o.psn == 0);
	CU_ASSERT(o.icrc == FERRY_ROCE_ICRC_OK && o.icrc_wire == 0x2a00fd82);

	o = dec(nak, sizeof(nak));
	CU_ASSERT_STRING_EQUAL(o.op, "ACKNOWLEDGE");
	CU_ASSERT(o.hdrs == FERRY_ROCE_H_AETH && o.syndrome == 0x60);
	CU_ASSERT(o.ack == FERRY_ROCE_NAK && o.msn == 0xaaaa && o.psn == 0x102);
	CU_ASSERT_STRING_EQUAL(o.nak, "PSN sequence error");
	CU_ASSERT_EQUAL(o.icrc, FERRY_ROCE_ICRC_OK);

	o = dec(cm_req, sizeof(cm_req));
	CU_ASSERT_EQUAL(o.verdict, FERRY_ROCE_DECODED);
	CU_ASSERT(!strcmp(o.transport, "UD") && !strcmp(o.op, "SEND_ONLY"));
	CU_ASSERT(o.hdrs == (FERRY_ROCE_H_DETH | FERRY_ROCE_H_MAD));
	CU_ASSERT(o.qkey == 0x80010000 && o.src_qp == 1 && o.dest_qp == 1);
	CU_ASSERT(o.mad.mgmt_class == 7 && o.mad.method == 3 &&
		  o.mad.attr_id == 0x0010 &&
		  o.mad.tid == 0x1122334455667788ull);
	CU_ASSERT_PTR_NOT_NULL_FATAL(o.mad.cm.name);
	CU_ASSERT_STRING_EQUAL(o.mad.cm.name, "REQ");
	CU_ASSERT_EQUAL(o.mad.cm.fields, FERRY_ROCE_CM_LOCAL_ID |
			FERRY_ROCE_CM_QPN | FERRY_ROCE_CM_PSN);
	CU_ASSERT(o.mad.cm.local_id == 0xa1a2a3a4 && o.mad.cm.qpn == 0xc1c2 &&
		  o.mad.cm.psn == 0xd1d2);
	CU_ASSERT(o.payload_len == 256 && o.icrc == FERRY_ROCE_ICRC_OK);

	o = dec(ud_ipv6, sizeof(ud_ipv6));
	CU_ASSERT_EQUAL(o.verdict, FERRY_ROCE_DECODED);
	CU_ASSERT(o.ip_version == 6 && o.vlan == 42 && o.ecn == 3);
	CU_ASSERT(o.dst_ip[0] == 0xfd && o.dst_ip[15] == 2);
	CU_ASSERT(o.hdrs == (FERRY_ROCE_H_DETH | FERRY_ROCE_H_IMMDT));
	CU_ASSERT(o.qkey == 0x1234 && o.src_qp == 0xabc && o.imm == 0x01020304);
	CU_ASSERT(o.padcnt == 2 && o.payload_len == 6);
	CU_ASSERT(!memcmp(ud_ipv6 + o.payload_off, "hello!", 6));
	CU_ASSERT_EQUAL(o.icrc, FERRY_ROCE_ICRC_OK);
}

/* The fields the ICRC masks may change on the way; anything else may not. */
static void test_icrc_masks(void)
{
	uint8_t f[sizeof(read_req)], g[sizeof(ud_ipv6)];
	struct ferry_roce_frame o;

	memcpy(f, read_req, sizeof(f));
	f[15] = 0x63;           /* DSCP, ECN */
	f[22] = 3;              /* TTL */
	f[24] = f[25] = 0;
	uint16_t cs = ferry__ip4_csum(f + 14, 20);
	f[24] = (uint8_t)(cs >> 8);
	f[25] = (uint8_t)cs;
	f[40] = 0x12;           /* UDP checksum */
	f[46] |= 0xc0;          /* FECN, BECN */
	o = dec(f, sizeof(f));
	CU_ASSERT(o.icrc == FERRY_ROCE_ICRC_OK && o.fecn && o.becn &&
		  o.ecn == 3);
	f[60] ^= 1;             /* the RETH: covered */
	CU_ASSERT_EQUAL(dec(f, sizeof(f)).icrc, FERRY_ROCE_ICRC_BAD);

	memcpy(g, ud_ipv6, sizeof(g));
	g[18] ^= 0x0f;          /* traffic class, flow label, hop limit */
	g[20] ^= 0xff;
	g[25] = 64;
	CU_ASSERT_EQUAL(dec(g, sizeof(g)).icrc, FERRY_ROCE_ICRC_OK);
	g[sizeof(g) - 9] ^= 1;  /* the payload */
	o = dec(g, sizeof(g));
	CU_ASSERT(o.icrc == FERRY_ROCE_ICRC_BAD && o.icrc_wire != o.icrc_calc);
}

/* ---- frames built here (roce_frames.h) ---- */

static void test_every_opcode(void)
{
	static uint8_t f[512];
	unsigned decoded = 0;

	for (unsigned op = 0; op < 256; op++) {
		bool nopay;
		int x = ext_bytes((uint8_t)op, &nopay);
		struct spec s = { .opcode = (uint8_t)op, .qp = op, .psn = op,
				  .ext_len = x < 0 ? 0 : (size_t)x,
				  .pay = nopay ? 0 : 5, .pad = nopay ? 0 : 3,
				  .ipver = op & 1 ? 6 : 4 };
		size_t n = build(f, &s);
		struct ferry_roce_frame o = dec(f, n);

		if (x < 0) {
			CU_ASSERT_EQUAL(o.verdict, FERRY_ROCE_UNDECODABLE);
			CU_ASSERT(o.has_bth && o.opcode == op);
			CU_ASSERT_STRING_EQUAL(o.why, op >= 0xc0
					       ? "manufacturer-specific opcode"
					       : "reserved opcode");
			continue;
		}
		decoded++;
		if (o.verdict != FERRY_ROCE_DECODED) {
			printf("opcode 0x%02x: %s\n", op, o.why);
			CU_FAIL("a valid opcode did not decode");
			continue;
		}
		CU_ASSERT_EQUAL(o.payload_off, (op & 1 ? 14 + 40 : 14 + 20) +
				8 + 12 + (unsigned)x);
		CU_ASSERT_EQUAL(o.payload_len, s.pay);
		CU_ASSERT(o.icrc == FERRY_ROCE_ICRC_OK && o.opcode == op &&
			  o.dest_qp == op && o.psn == op);
		/* one byte of extended header less: too short */
		if (x > 0) {
			s.ext_len--;
			s.pay = 0;
			s.pad = 1;
			n = build(f, &s);
			CU_ASSERT_EQUAL(dec(f, n).verdict,
					FERRY_ROCE_UNDECODABLE);
		}
	}
	/* RC 25 (0x00-0x14, 0x16, 0x17, 0x1c, 0x1d), UC 12, RD 23, UD 2,
	 * CNP 2, XRC 24 */
	CU_ASSERT_EQUAL(decoded, 25 + 12 + 23 + 2 + 2 + 24);
}

static void test_aeth(void)
{
	/* rdmavt's credit_table; ib_verbs.h enum ib_rnr_timeout, x 10 us */
	static const unsigned credits[31] = {
		0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256,
		384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288,
		16384, 24576, 32768,
	};
	static const char *const naks[] = {
		"PSN sequence error", "invalid request", "remote access error",
		"remote operational error", "invalid RD request",
	};
	static uint8_t f[128];

	for (unsigned syn = 0; syn < 256; syn++) {
		uint8_t aeth[4] = { (uint8_t)syn, 0x12, 0x34, 0x56 };
		struct spec s = { .opcode = 0x11, .ext = aeth, .ext_len = 4 };
		struct ferry_roce_frame o = dec(f, build(f, &s));
		unsigned code = syn & 31;

		CU_ASSERT(o.verdict == FERRY_ROCE_DECODED && o.msn == 0x123456 &&
			  o.syndrome == syn);
		switch (syn >> 5) {
		case 0:
			CU_ASSERT_EQUAL(o.ack, FERRY_ROCE_ACK);
			CU_ASSERT_EQUAL(o.credits,
					code == 31 ? -1 : (int)credits[code]);
			break;
		case 1:
			CU_ASSERT_EQUAL(o.ack, FERRY_ROCE_RNR_NAK);
			CU_ASSERT_EQUAL(o.rnr_us, code == 0 ? 655360u
					: code == 31 ? 491520u
					: credits[code] * 10);
			break;
		case 3:
			CU_ASSERT_EQUAL(o.ack, FERRY_ROCE_NAK);
			CU_ASSERT_STRING_EQUAL(o.nak, code < 5 ? naks[code]
					       : "reserved NAK code");
			break;
		default:
			CU_ASSERT_EQUAL(o.ack, FERRY_ROCE_ACK_RESERVED);
		}
	}
}

static void test_paths(void)
{
	static uint8_t f[256];
	struct spec s = { .opcode = 0x0a, .ext_len = 16, .pay = 7, .pad = 1,
			  .vlans = 2, .qp = 5 };
	struct ferry_roce_frame o = dec(f, build(f, &s));

	CU_ASSERT(o.verdict == FERRY_ROCE_DECODED && o.vlan == 101 &&
		  o.icrc == FERRY_ROCE_ICRC_OK);
	s.ipver = 6;
	o = dec(f, build(f, &s));
	CU_ASSERT(o.verdict == FERRY_ROCE_DECODED && o.ip_version == 6 &&
		  o.icrc == FERRY_ROCE_ICRC_OK && o.src_ip[15] == 1);
	/* another port: not RoCEv2 unless asked for */
	s.port = 4792;
	size_t n = build(f, &s);
	CU_ASSERT_EQUAL(dec(f, n).verdict, FERRY_ROCE_OTHER);
	CU_ASSERT_EQUAL(ferry_rocedump_decode(f, n, n, 4792, &o), 0);
	CU_ASSERT_EQUAL(o.verdict, FERRY_ROCE_DECODED);
	/* Ethernet padding and an FCS after the IP packet are ignored */
	s.port = 0;
	s.ipver = 4;
	n = build(f, &s);
	memset(f + n, 0xee, 8);
	o = dec(f, n + 8);
	CU_ASSERT(o.verdict == FERRY_ROCE_DECODED &&
		  o.icrc == FERRY_ROCE_ICRC_OK && o.payload_len == 7);
	/* ARP, and an IPv4 fragment to 4791: not RoCEv2 */
	s.vlans = 0;
	n = build(f, &s);
	f[12] = 0x08, f[13] = 0x06;
	CU_ASSERT_EQUAL(dec(f, n).verdict, FERRY_ROCE_OTHER);
	n = build(f, &s);
	f[14 + 6] = 0x20; /* more fragments */
	CU_ASSERT_EQUAL(dec(f, n).verdict, FERRY_ROCE_OTHER);
}

/* A snapshot length cuts the frame: headers captured decode (ICRC
 * unchecked), headers cut off do not, and without the UDP ports it is
 * not known to be RoCEv2. */
static void test_cut(void)
{
	static uint8_t f[256];
	struct spec s = { .opcode = 0x06, .ext_len = 16, .pay = 100 };
	size_t n = build(f, &s), hdrs = 14 + 20 + 8 + 12 + 16;
	struct ferry_roce_frame o;

	CU_ASSERT_EQUAL(ferry_rocedump_decode(f, n - 1, n, 0, &o), 0);
	CU_ASSERT(o.verdict == FERRY_ROCE_DECODED &&
		  o.icrc == FERRY_ROCE_ICRC_UNCHECKED && o.payload_len == 100);
	CU_ASSERT(o.caplen == n - 1 && o.len == n);
	ferry_rocedump_decode(f, hdrs, n, 0, &o);
	CU_ASSERT(o.verdict == FERRY_ROCE_DECODED &&
		  o.icrc == FERRY_ROCE_ICRC_UNCHECKED);
	ferry_rocedump_decode(f, hdrs - 1, n, 0, &o);
	CU_ASSERT_EQUAL(o.verdict, FERRY_ROCE_UNDECODABLE);
	CU_ASSERT_STRING_EQUAL(o.why, "extended headers cut off by the capture");
	ferry_rocedump_decode(f, 14 + 20 + 8 + 11, n, 0, &o);
	CU_ASSERT_STRING_EQUAL(o.why, "BTH cut off by the capture");
	ferry_rocedump_decode(f, 14 + 20 + 3, n, 0, &o);
	CU_ASSERT_EQUAL(o.verdict, FERRY_ROCE_OTHER);
	CU_ASSERT_EQUAL(ferry_rocedump_decode(f, n, n - 1, 0, &o), -EINVAL);
	CU_ASSERT_EQUAL(ferry_rocedump_decode(NULL, 0, 0, 0, &o), 0);
	CU_ASSERT_EQUAL(o.verdict, FERRY_ROCE_OTHER);
	CU_ASSERT_EQUAL(ferry_rocedump_decode(f, n, n, 0, NULL), -EINVAL);
}

static const char *why_of(uint8_t *f, size_t n)
{
	static struct ferry_roce_frame o;

	o = dec(f, n);
	return o.verdict == FERRY_ROCE_UNDECODABLE ? o.why : "(decoded)";
}

static void test_undecodable(void)
{
	static uint8_t f[512];
	struct spec s = { .opcode = 0x04, .pay = 8 };
	size_t n = build(f, &s);

	f[14 + 2] = 0x10; /* IPv4 total length past the frame */
	CU_ASSERT_STRING_EQUAL(why_of(f, n),
			       "IPv4 total length past the end of the frame");
	n = build(f, &s);
	f[14 + 11] ^= 1;
	CU_ASSERT_STRING_EQUAL(why_of(f, n), "bad IPv4 header checksum");
	n = build(f, &s);
	f[14 + 20 + 5] ^= 4;
	CU_ASSERT_STRING_EQUAL(why_of(f, n),
			       "UDP length disagrees with the IP length");
	n = build(f, &s);
	f[14 + 20 + 8 + 1] = 1;
	CU_ASSERT_STRING_EQUAL(why_of(f, n),
			       "BTH transport header version is not 0");
	n = build(f, &s);
	f[14 + 20 + 8 + 1] = 3 << 4; /* pad 3 + 8 bytes: payload 5 */
	CU_ASSERT_STRING_EQUAL(why_of(f, n), "(decoded)");
	CU_ASSERT_EQUAL(dec(f, n).payload_len, 5);
	s.pay = 9;
	n = build(f, &s);
	CU_ASSERT_STRING_EQUAL(why_of(f, n),
			       "payload and pad not a multiple of 4 bytes");
	s = (struct spec){ .opcode = 0x81, .ext_len = 20 };
	n = build(f, &s);
	CU_ASSERT_STRING_EQUAL(why_of(f, n),
			       "payload on an opcode that carries none");
	s.ext_len = 12;
	n = build(f, &s);
	CU_ASSERT_STRING_EQUAL(why_of(f, n),
			       "UDP payload too short for the opcode's headers");
	/* MADs on QP 1 */
	uint8_t mad[8 + 256] = { 0x80, 0x01, 0, 0, 0, 0, 0, 1, 1, 7, 2, 3 };
	mad[8 + 16] = 0x00, mad[8 + 17] = 0x13; /* REP */
	/* the DETH and MAD as the builder's "extended header" bytes */
	s = (struct spec){ .opcode = 0x64, .qp = 1, .ext = mad,
			   .ext_len = 8 + 256 };
	n = build(f, &s);
	struct ferry_roce_frame o = dec(f, n);
	CU_ASSERT(o.verdict == FERRY_ROCE_DECODED && o.payload_len == 256);
	CU_ASSERT(o.mad.cm.name && !strcmp(o.mad.cm.name, "REP"));
	s.ext_len = 8 + 24 + 24; /* REP's PSN lies at 20..22: 24 is enough */
	CU_ASSERT_STRING_EQUAL(why_of(f, build(f, &s)), "(decoded)");
	s.ext_len = 8 + 24 + 20;
	CU_ASSERT_STRING_EQUAL(why_of(f, build(f, &s)),
			       "CM MAD too short for its message's fields");
	s.ext_len = 8 + 20;
	CU_ASSERT_STRING_EQUAL(why_of(f, build(f, &s)),
			       "MAD on QP 1 shorter than its 24-byte header");
	s.qp = 2; /* not QP 1: no MAD */
	CU_ASSERT_STRING_EQUAL(why_of(f, build(f, &s)), "(decoded)");
}

int main(void)
{
	CU_TestInfo tests[] = {
		{ "frames scapy built, a ConnectX-4 Lx CNP", test_scapy_frames },
		{ "ICRC: masked fields and covered ones", test_icrc_masks },
		{ "every opcode and its headers' length", test_every_opcode },
		{ "every AETH syndrome", test_aeth },
		{ "VLAN, IPv6, ports, padding, not RoCEv2", test_paths },
		{ "frames cut by the snapshot length", test_cut },
		{ "undecodable frames say why", test_undecodable },
		CU_TEST_INFO_NULL,
	};
	return ferry_cu_run("rocedump", tests);
}
