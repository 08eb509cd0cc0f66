/* RoCEv2 frames, built and parsed (layout in wire.h).
 *
 * Header layouts (IBTA vol. 1 ch. 9.2-9.3; as in Linux rxe_hdr.h and
 * Wireshark's packet-infiniband.c):
 *   BTH  12 bytes: opcode | SE M PadCnt(2) TVer(4) | P_Key(16) |
 *                  FECN BECN resv6 | DestQP(24) | AckReq resv7 | PSN(24)
 *   RETH 16 bytes: VA(64) | R_Key(32) | DMA length(32)
 *   ImmDt 4 bytes; AETH 4 bytes: Syndrome(8) | MSN(24)
 * Which opcode carries which (Wireshark's opCode_RETH_PAYLD,
 * opCode_RETH_IMMDT_PAYLD, opCode_IMMDT_PAYLD; the RC ACKNOWLEDGE carries
 * only an AETH): the table below. All fields are big endian. A CNP
 * (opcode 0x81, annex A17 of the IBA as scapy's contrib/roce.py lays it
 * out) is a BTH with BECN set and 16 reserved bytes, kept here as its
 * payload. The IPv4 DS field (DSCP and ECN) is written as asked and
 * read back; the ICRC masks it (icrc.c), so neither changes it.
 */
#include <errno.h>
#include <string.h>

#include "ferry/error.h"
#include "wire.h"

enum { H_RETH = 1, H_IMM = 2, H_AETH = 4, H_VALID = 8 };

static const struct {
	const char *name;
	uint8_t hdrs;
} ops[FERRY_OP_ACK + 1] = {
	[FERRY_OP_SEND_FIRST] = { "SEND_FIRST", H_VALID },
	[FERRY_OP_SEND_MIDDLE] = { "SEND_MIDDLE", H_VALID },
	[FERRY_OP_SEND_LAST] = { "SEND_LAST", H_VALID },
	[FERRY_OP_SEND_LAST_IMM] = { "SEND_LAST_IMM", H_VALID | H_IMM },
	[FERRY_OP_SEND_ONLY] = { "SEND_ONLY", H_VALID },
	[FERRY_OP_SEND_ONLY_IMM] = { "SEND_ONLY_IMM", H_VALID | H_IMM },
	[FERRY_OP_WRITE_FIRST] = { "RDMA_WRITE_FIRST", H_VALID | H_RETH },
	[FERRY_OP_WRITE_MIDDLE] = { "RDMA_WRITE_MIDDLE", H_VALID },
	[FERRY_OP_WRITE_LAST] = { "RDMA_WRITE_LAST", H_VALID },
	[FERRY_OP_WRITE_LAST_IMM] = { "RDMA_WRITE_LAST_IMM", H_VALID | H_IMM },
	[FERRY_OP_WRITE_ONLY] = { "RDMA_WRITE_ONLY", H_VALID | H_RETH },
	[FERRY_OP_WRITE_ONLY_IMM] = { "RDMA_WRITE_ONLY_IMM",
				      H_VALID | H_RETH | H_IMM },
	[FERRY_OP_ACK] = { "ACKNOWLEDGE", H_VALID | H_AETH },
};

static uint8_t op_hdrs(uint8_t opcode)
{
	if (opcode == FERRY_OP_CNP)
		return H_VALID;
	return opcode <= FERRY_OP_ACK ? ops[opcode].hdrs : 0;
}

bool ferry__roce_op_valid(uint8_t opcode)
{
	return op_hdrs(opcode) & H_VALID;
}

bool ferry__roce_has_reth(uint8_t opcode)
{
	return op_hdrs(opcode) & H_RETH;
}

bool ferry__roce_has_imm(uint8_t opcode)
{
	return op_hdrs(opcode) & H_IMM;
}

bool ferry__roce_has_aeth(uint8_t opcode)
{
	return op_hdrs(opcode) & H_AETH;
}

const char *ferry__roce_op_name(uint8_t opcode)
{
	if (opcode == FERRY_OP_CNP)
		return "CNP";
	return ferry__roce_op_valid(opcode) ? ops[opcode].name : "UNKNOWN";
}

/* Extended header bytes after the BTH. */
static size_t ext_len(uint8_t opcode)
{
	uint8_t h = op_hdrs(opcode);

	return (h & H_RETH ? FERRY_ROCE_RETH_LEN : 0) +
	       (h & H_IMM ? FERRY_ROCE_IMM_LEN : 0) +
	       (h & H_AETH ? FERRY_ROCE_AETH_LEN : 0);
}

size_t ferry__roce_hdr_len(uint8_t opcode)
{
	if (!ferry__roce_op_valid(opcode))
		return 0;
	return FERRY_ROCE_ETH_LEN + FERRY_ROCE_IP_LEN + FERRY_ROCE_UDP_LEN +
	       FERRY_ROCE_BTH_LEN + ext_len(opcode);
}

size_t ferry__roce_frame_len(const struct ferry_roce_pkt *p)
{
	return ferry__roce_hdr_len(p->opcode) + p->len +
	       ferry__roce_pad(p->len) + FERRY_ROCE_ICRC_LEN;
}

static void put16(uint8_t *b, uint32_t v)
{
	b[0] = (uint8_t)(v >> 8);
	b[1] = (uint8_t)v;
}

static void put32(uint8_t *b, uint32_t v)
{
	b[0] = (uint8_t)(v >> 24);
	b[1] = (uint8_t)(v >> 16);
	b[2] = (uint8_t)(v >> 8);
	b[3] = (uint8_t)v;
}

static uint32_t get16(const uint8_t *b)
{
	return (uint32_t)b[0] << 8 | b[1];
}

static uint32_t get24(const uint8_t *b)
{
	return (uint32_t)b[0] << 16 | (uint32_t)b[1] << 8 | b[2];
}

static uint32_t get32(const uint8_t *b)
{
	return (uint32_t)b[0] << 24 | get24(b + 1);
}

uint16_t ferry__ip4_csum(const uint8_t *hdr, size_t len)
{
	uint32_t sum = 0;

	for (size_t i = 0; i + 1 < len; i += 2)
		sum += get16(hdr + i);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static int check_pkt(const struct ferry_roce_pkt *p)
{
	if (!ferry__roce_op_valid(p->opcode) || p->dest_qp > FERRY_PSN_MASK ||
	    p->psn > FERRY_PSN_MASK || p->msn > FERRY_PSN_MASK ||
	    (p->len && !p->payload) ||
	    (p->len && ferry__roce_has_aeth(p->opcode)) ||
	    (p->opcode == FERRY_OP_CNP && p->len != FERRY_ROCE_CNP_LEN) ||
	    p->ecn > 3 || p->dscp > 63)
		return -EINVAL;
	return 0;
}

/* Writes BTH and extended headers; returns the bytes written. */
static size_t put_bth_ext(uint8_t *b, const struct ferry_roce_pkt *p)
{
	uint8_t *e = b + FERRY_ROCE_BTH_LEN;

	b[0] = p->opcode;
	b[1] = (uint8_t)((p->se ? 0x80 : 0) | (p->mig ? 0x40 : 0) |
			 ferry__roce_pad(p->len) << 4); /* TVer 0 */
	put16(b + 2, p->pkey);
	put32(b + 4, p->dest_qp | (p->becn ? 0x40000000u : 0)); /* FECN 0 */
	put32(b + 8, p->psn | (p->ackreq ? 0x80000000u : 0));
	if (ferry__roce_has_reth(p->opcode)) {
		put32(e, (uint32_t)(p->va >> 32));
		put32(e + 4, (uint32_t)p->va);
		put32(e + 8, p->rkey);
		put32(e + 12, p->dma_len);
		e += FERRY_ROCE_RETH_LEN;
	}
	if (ferry__roce_has_imm(p->opcode)) {
		put32(e, p->imm);
		e += FERRY_ROCE_IMM_LEN;
	}
	if (ferry__roce_has_aeth(p->opcode)) {
		put32(e, (uint32_t)p->syndrome << 24 | p->msn);
		e += FERRY_ROCE_AETH_LEN;
	}
	return (size_t)(e - b);
}

int ferry__roce_build_hdr(uint8_t *hdr, size_t cap,
			  const struct ferry_roce_pkt *p, size_t *hdr_len,
			  uint32_t *crc)
{
	int rc = check_pkt(p);

	if (rc)
		return rc;
	size_t hlen = ferry__roce_hdr_len(p->opcode);
	size_t ip_len = ferry__roce_frame_len(p) - FERRY_ROCE_ETH_LEN;
	if (ip_len > 0xffff)
		return -FERRY_ETOOBIG;
	if (cap < hlen)
		return -ENOSPC;

	uint8_t *ip = hdr + FERRY_ROCE_ETH_LEN;
	uint8_t *udp = ip + FERRY_ROCE_IP_LEN;

	memcpy(hdr, p->dst.mac, 6);
	memcpy(hdr + 6, p->src.mac, 6);
	put16(hdr + 12, 0x0800);

	ip[0] = 0x45;               /* version 4, IHL 5 */
	ip[1] = (uint8_t)(p->dscp << 2 | p->ecn); /* DS field: DSCP, ECN */
	put16(ip + 2, (uint32_t)ip_len);
	put16(ip + 4, 0);           /* id */
	put16(ip + 6, 0x4000);      /* DF, offset 0 */
	ip[8] = 64;                 /* TTL */
	ip[9] = 17;                 /* UDP */
	put16(ip + 10, 0);
	put32(ip + 12, p->src.ip);
	put32(ip + 16, p->dst.ip);
	put16(ip + 10, ferry__ip4_csum(ip, FERRY_ROCE_IP_LEN));

	put16(udp, p->udp_sport);
	put16(udp + 2, FERRY_ROCE_UDP_PORT);
	put16(udp + 4, (uint32_t)(ip_len - FERRY_ROCE_IP_LEN));
	put16(udp + 6, 0);          /* no UDP checksum */

	size_t bth_ext = put_bth_ext(udp + FERRY_ROCE_UDP_LEN, p);
	uint32_t c = ferry__roce_icrc_hdr(ip, FERRY_ROCE_IP_LEN);
	*crc = ferry__roce_icrc_more(c, udp + FERRY_ROCE_UDP_LEN +
				     FERRY_ROCE_BTH_LEN,
				     bth_ext - FERRY_ROCE_BTH_LEN);
	*hdr_len = hlen;
	return 0;
}

int ferry__roce_build(uint8_t *frame, size_t cap,
		      const struct ferry_roce_pkt *p, size_t *len)
{
	size_t hlen;
	uint32_t crc;
	int rc = ferry__roce_build_hdr(frame, cap, p, &hlen, &crc);

	if (rc)
		return rc;
	if (cap < ferry__roce_frame_len(p))
		return -ENOSPC;
	if (p->len)
		memcpy(frame + hlen, p->payload, p->len);
	crc = ferry__roce_icrc_more(crc, frame + hlen, p->len);
	*len = hlen + p->len +
	       ferry__roce_trailer(frame + hlen + p->len, crc,
				   ferry__roce_pad(p->len));
	return 0;
}

/* Parsing. */

#define NOT_ROCE(reason) do { *why = (reason); return -ENOMSG; } while (0)
#define BAD(reason) do { *why = (reason); return -FERRY_EPROTO; } while (0)

/* Ethernet, IPv4 and UDP; on success *udp and *udp_len locate the UDP
 * header and its length. Says -ENOMSG (not RoCEv2) as soon as the bytes
 * show it, and only then checks lengths and the IPv4 checksum. */
static int parse_l2_l4(const uint8_t *f, size_t len, uint16_t port,
		       struct ferry_roce_pkt *out, const uint8_t **udp,
		       size_t *udp_len, const char **why)
{
	const uint8_t *ip = f + FERRY_ROCE_ETH_LEN;

	if (len < FERRY_ROCE_ETH_LEN)
		BAD("truncated Ethernet header");
	if (get16(f + 12) != 0x0800)
		NOT_ROCE("not IPv4");
	if (len < FERRY_ROCE_ETH_LEN + 20)
		BAD("truncated IPv4 header");
	if (ip[0] >> 4 != 4)
		BAD("IP version is not 4");

	size_t ihl = (size_t)(ip[0] & 0x0f) * 4, tot = get16(ip + 2);
	if (ihl < 20)
		BAD("IPv4 header length below 20");
	if (len < FERRY_ROCE_ETH_LEN + ihl)
		BAD("truncated IPv4 options");
	if (get16(ip + 6) & 0x3fff)
		NOT_ROCE("IPv4 fragment");
	if (ip[9] != 17)
		NOT_ROCE("not UDP");
	if (len < FERRY_ROCE_ETH_LEN + ihl + 4)
		BAD("truncated UDP header");

	const uint8_t *u = ip + ihl;
	if (get16(u + 2) != (port ? port : FERRY_ROCE_UDP_PORT))
		NOT_ROCE("not the RoCEv2 UDP port");
	if (tot > len - FERRY_ROCE_ETH_LEN)
		BAD("frame shorter than the IPv4 total length");
	if (tot < ihl + FERRY_ROCE_UDP_LEN)
		BAD("IPv4 total length too short for a UDP header");
	if (ferry__ip4_csum(ip, ihl) != 0)
		BAD("bad IPv4 header checksum");
	if (get16(u + 4) != tot - ihl)
		BAD("UDP length disagrees with the IPv4 total length");

	memcpy(out->dst.mac, f, 6);
	memcpy(out->src.mac, f + 6, 6);
	out->src.ip = get32(ip + 12);
	out->dst.ip = get32(ip + 16);
	out->udp_sport = (uint16_t)get16(u);
	out->dscp = ip[1] >> 2;
	out->ecn = ip[1] & 3;
	*udp = u;
	*udp_len = tot - ihl;
	return 0;
}

/* BTH, extended headers, payload; n is the UDP payload length. */
static int parse_ib(const uint8_t *b, size_t n, struct ferry_roce_pkt *out,
		    const char **why)
{
	if (n < FERRY_ROCE_BTH_LEN + FERRY_ROCE_ICRC_LEN)
		BAD("UDP payload too short for a BTH and an ICRC");
	out->opcode = b[0];
	if (!ferry__roce_op_valid(b[0]))
		BAD("opcode not supported (not an RC SEND, WRITE, ACK or a CNP)");
	if (b[1] & 0x0f)
		BAD("BTH transport version is not 0");
	out->se = b[1] & 0x80;
	out->mig = b[1] & 0x40;
	out->pad = (b[1] >> 4) & 3;
	out->pkey = (uint16_t)get16(b + 2);
	out->becn = b[4] & 0x40;
	out->dest_qp = get24(b + 5);
	out->ackreq = b[8] & 0x80;
	out->psn = get24(b + 9);

	size_t ext = ext_len(out->opcode);
	if (n < FERRY_ROCE_BTH_LEN + ext + out->pad + FERRY_ROCE_ICRC_LEN)
		BAD("UDP payload too short for the opcode's headers");
	const uint8_t *e = b + FERRY_ROCE_BTH_LEN;
	out->va = 0;
	out->rkey = out->dma_len = out->imm = out->msn = 0;
	out->syndrome = 0;
	if (ferry__roce_has_reth(out->opcode)) {
		out->va = (uint64_t)get32(e) << 32 | get32(e + 4);
		out->rkey = get32(e + 8);
		out->dma_len = get32(e + 12);
		e += FERRY_ROCE_RETH_LEN;
	}
	if (ferry__roce_has_imm(out->opcode)) {
		out->imm = get32(e);
		e += FERRY_ROCE_IMM_LEN;
	}
	if (ferry__roce_has_aeth(out->opcode)) {
		out->syndrome = e[0];
		out->msn = get24(e + 1);
		e += FERRY_ROCE_AETH_LEN;
	}
	size_t body = n - FERRY_ROCE_BTH_LEN - ext - FERRY_ROCE_ICRC_LEN;
	if (body % 4)
		BAD("payload and pad not a multiple of 4 bytes");
	if (ferry__roce_has_aeth(out->opcode) && body)
		BAD("ACK with a payload");
	if (out->opcode == FERRY_OP_CNP &&
	    (body != FERRY_ROCE_CNP_LEN || out->pad))
		BAD("CNP other than a BTH and its 16 reserved bytes");
	out->payload = e;
	out->len = (uint32_t)(body - out->pad);
	return 0;
}

bool ferry__roce_to_port(const uint8_t *f, size_t len, uint16_t port)
{
	const uint8_t *ip = f + FERRY_ROCE_ETH_LEN;
	size_t ihl;

	if (len < FERRY_ROCE_ETH_LEN + 20 || get16(f + 12) != 0x0800 ||
	    ip[0] >> 4 != 4 || (get16(ip + 6) & 0x3fff) || ip[9] != 17)
		return false;
	ihl = (size_t)(ip[0] & 0x0f) * 4;
	return ihl >= 20 && len >= FERRY_ROCE_ETH_LEN + ihl + 4 &&
	       get16(ip + ihl + 2) == (port ? port : FERRY_ROCE_UDP_PORT);
}

int ferry__roce_parse(const uint8_t *frame, size_t len, uint16_t port,
		      struct ferry_roce_pkt *out, bool *icrc_ok,
		      const char **why)
{
	const char *ignored;
	const uint8_t *udp;
	size_t udp_len;
	int rc;

	if (!why)
		why = &ignored;
	rc = parse_l2_l4(frame, len, port, out, &udp, &udp_len, why);
	if (rc)
		return rc;
	rc = parse_ib(udp + FERRY_ROCE_UDP_LEN, udp_len - FERRY_ROCE_UDP_LEN,
		      out, why);
	if (rc)
		return rc;

	*why = NULL;
	if (!icrc_ok)
		return 0;

	const uint8_t *ip = frame + FERRY_ROCE_ETH_LEN;
	size_t ihl = (size_t)(udp - ip);
	const uint8_t *rest = udp + FERRY_ROCE_UDP_LEN + FERRY_ROCE_BTH_LEN;
	const uint8_t *icrc = udp + udp_len - FERRY_ROCE_ICRC_LEN;
	uint32_t crc = ferry__roce_icrc_more(ferry__roce_icrc_hdr(ip, ihl),
					     rest, (size_t)(icrc - rest));
	*icrc_ok = crc == ((uint32_t)icrc[0] | (uint32_t)icrc[1] << 8 |
			   (uint32_t)icrc[2] << 16 | (uint32_t)icrc[3] << 24);
	return 0;
}
