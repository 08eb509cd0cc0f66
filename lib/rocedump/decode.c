/* rocedump: one Ethernet frame, decoded (layout in ferry/rocedump.h).
 *
 *   Ethernet II | 802.1Q/802.1ad tags* | IPv4 (any IHL) or IPv6 |
 *   UDP (destination: the RoCEv2 port) | BTH | extended headers |
 *   payload | pad (BTH PadCnt) | ICRC (4 bytes)
 * BTH (IBA vol. 1 9.2; as lib/xport/roce/wire.c reads it): opcode |
 * SE M PadCnt(2) TVer(4) | P_Key(16) | FECN BECN resv6 | DestQP(24) |
 * AckReq resv7 | PSN(24). Extended headers (ibop.c says which an opcode
 * carries): RDETH resv8 EE-Context(24); DETH Q_Key(32) resv8 SrcQP(24);
 * XRCETH resv8 XRCSRQ(24); FETH resv26 SEL(2) PLT(4); RETH VA(64)
 * R_Key(32) DMALen(32); AtomicETH VA(64) R_Key(32) SwapAdd(64)
 * Compare(64); AETH Syndrome(8) MSN(24); AtomicAckETH OrigRemData(64);
 * ImmDt(32); IETH R_Key(32). All big endian.
 *
 * What is RoCEv2 is what the bytes show before anything else is checked:
 * IPv4 or IPv6 (next header UDP), not a fragment, UDP to the port. From
 * there every failure is "undecodable" with its reason. Lengths come from
 * the IP header, not from what the capture holds, so a frame cut short by
 * a snapshot length still decodes when its headers were captured; only
 * its ICRC is then unchecked. Bytes past the IP packet (Ethernet padding,
 * an FCS) are ignored.
 */
#include <errno.h>
#include <string.h>

#include "rocedump_int.h"
#include "xport/roce/wire.h"

#define ETH_LEN 14
#define UDP_LEN 8
#define BTH_LEN 12
#define ICRC_LEN 4

/* The frame being decoded: offsets into it, and how much was captured. */
struct cur {
	const uint8_t *f;
	size_t cap, len;   /* captured, on the wire */
	uint16_t port;
	size_t ip, ip_len; /* IP header offset, IP packet length (its header's) */
	size_t udp;        /* UDP header offset */
};

#define OTHER() return FERRY_ROCE_OTHER
#define UNDECODABLE(o, reason) \
	do { (o)->why = (reason); return FERRY_ROCE_UNDECODABLE; } while (0)

/* Ethernet and VLAN tags; the EtherType of what follows in *type. */
static bool l2(struct cur *c, struct ferry_roce_frame *o, uint32_t *type)
{
	size_t off = ETH_LEN;

	if (c->cap < ETH_LEN)
		return false;
	memcpy(o->dst_mac, c->f, 6);
	memcpy(o->src_mac, c->f + 6, 6);
	*type = ferry__be16(c->f + 12);
	while (*type == 0x8100 || *type == 0x88a8) {
		if (c->cap < off + 4)
			return false;
		o->vlan = (uint16_t)(ferry__be16(c->f + off) & 0x0fff);
		*type = ferry__be16(c->f + off + 2);
		off += 4;
	}
	c->ip = off;
	return true;
}

static enum ferry_roce_verdict ip4(struct cur *c, struct ferry_roce_frame *o)
{
	const uint8_t *ip = c->f + c->ip;
	size_t ihl;

	if (c->cap < c->ip + 20 || ip[0] >> 4 != 4)
		OTHER();
	ihl = (size_t)(ip[0] & 0x0f) * 4;
	if (ihl < 20 || (ferry__be16(ip + 6) & 0x3fff) || ip[9] != 17 ||
	    c->cap < c->ip + ihl + 4 ||
	    ferry__be16(ip + ihl + 2) != c->port)
		OTHER();
	o->ip_version = 4;
	o->ecn = ip[1] & 3;
	memcpy(o->src_ip, ip + 12, 4);
	memcpy(o->dst_ip, ip + 16, 4);
	c->udp = c->ip + ihl;
	c->ip_len = ferry__be16(ip + 2);
	if (c->ip_len > c->len - c->ip)
		UNDECODABLE(o, "IPv4 total length past the end of the frame");
	if (c->ip_len < ihl + UDP_LEN)
		UNDECODABLE(o, "IPv4 total length too short for a UDP header");
	if (ferry__ip4_csum(ip, ihl) != 0)
		UNDECODABLE(o, "bad IPv4 header checksum");
	return FERRY_ROCE_DECODED;
}

static enum ferry_roce_verdict ip6(struct cur *c, struct ferry_roce_frame *o)
{
	const uint8_t *ip = c->f + c->ip;

	if (c->cap < c->ip + FERRY_ROCE_IP6_LEN + 4 || ip[0] >> 4 != 6 ||
	    ip[6] != 17 || ferry__be16(ip + FERRY_ROCE_IP6_LEN + 2) != c->port)
		OTHER();
	o->ip_version = 6;
	o->ecn = (ip[1] >> 4) & 3;
	memcpy(o->src_ip, ip + 8, 16);
	memcpy(o->dst_ip, ip + 24, 16);
	c->udp = c->ip + FERRY_ROCE_IP6_LEN;
	c->ip_len = FERRY_ROCE_IP6_LEN + ferry__be16(ip + 4);
	if (c->ip_len == FERRY_ROCE_IP6_LEN)
		UNDECODABLE(o, "IPv6 payload length 0 (a jumbogram?)");
	if (c->ip_len > c->len - c->ip)
		UNDECODABLE(o, "IPv6 payload length past the end of the frame");
	if (c->ip_len < FERRY_ROCE_IP6_LEN + UDP_LEN)
		UNDECODABLE(o, "IPv6 payload length too short for a UDP header");
	return FERRY_ROCE_DECODED;
}

/* IP and UDP: OTHER, UNDECODABLE, or DECODED with c->udp and c->ip_len. */
static enum ferry_roce_verdict l3_l4(struct cur *c, struct ferry_roce_frame *o)
{
	enum ferry_roce_verdict v;
	uint32_t type;

	if (!l2(c, o, &type))
		OTHER();
	if (type == 0x0800)
		v = ip4(c, o);
	else if (type == 0x86dd)
		v = ip6(c, o);
	else
		OTHER();
	if (v != FERRY_ROCE_DECODED)
		return v;
	const uint8_t *u = c->f + c->udp;
	o->udp_sport = (uint16_t)ferry__be16(u);
	o->udp_dport = c->port;
	if (c->cap < c->udp + UDP_LEN)
		UNDECODABLE(o, "UDP header cut off by the capture");
	if (ferry__be16(u + 4) != c->ip + c->ip_len - c->udp)
		UNDECODABLE(o, "UDP length disagrees with the IP length");
	return FERRY_ROCE_DECODED;
}

static void bth(const uint8_t *b, struct ferry_roce_frame *o)
{
	o->has_bth = true;
	o->opcode = b[0];
	o->se = b[1] & 0x80;
	o->migreq = b[1] & 0x40;
	o->padcnt = (b[1] >> 4) & 3;
	o->tver = b[1] & 0x0f;
	o->pkey = (uint16_t)ferry__be16(b + 2);
	o->fecn = b[4] & 0x80;
	o->becn = b[4] & 0x40;
	o->dest_qp = ferry__be24(b + 5);
	o->ackreq = b[8] & 0x80;
	o->psn = ferry__be24(b + 9);
}

/* One extended header h at e into o. */
static void ext(unsigned h, const uint8_t *e, struct ferry_roce_frame *o)
{
	switch (h) {
	case FERRY_ROCE_H_RDETH:
		o->ee_context = ferry__be24(e + 1);
		break;
	case FERRY_ROCE_H_DETH:
		o->qkey = ferry__be32(e);
		o->src_qp = ferry__be24(e + 5);
		break;
	case FERRY_ROCE_H_XRCETH:
		o->xrc_srq = ferry__be24(e + 1);
		break;
	case FERRY_ROCE_H_FETH:
		o->feth = ferry__be32(e) & 0x3f;
		break;
	case FERRY_ROCE_H_RETH:
		o->va = ferry__be64(e);
		o->rkey = ferry__be32(e + 8);
		o->dma_len = ferry__be32(e + 12);
		break;
	case FERRY_ROCE_H_ATOMICETH:
		o->va = ferry__be64(e);
		o->rkey = ferry__be32(e + 8);
		o->swap_add = ferry__be64(e + 12);
		o->compare = ferry__be64(e + 20);
		break;
	case FERRY_ROCE_H_AETH:
		o->msn = ferry__be24(e + 1);
		ferry__aeth(e[0], o);
		break;
	case FERRY_ROCE_H_ATOMICACKETH:
		o->orig_data = ferry__be64(e);
		break;
	case FERRY_ROCE_H_IMMDT:
		o->imm = ferry__be32(e);
		break;
	case FERRY_ROCE_H_IETH:
		o->inv_rkey = ferry__be32(e);
		break;
	default: /* CNP: reserved bytes */
		break;
	}
}

/* The extended headers' bytes in all. */
static size_t ext_len(unsigned hdrs)
{
	size_t n = 0;

	for (unsigned h = 1; h <= hdrs; h <<= 1)
		if (hdrs & h)
			n += ferry__ibop_hdr_len(h);
	return n;
}

/* BTH to payload; the UDP payload is c->f[b .. end). */
static enum ferry_roce_verdict ib(struct cur *c, struct ferry_roce_frame *o)
{
	size_t b = c->udp + UDP_LEN, end = c->ip + c->ip_len;
	struct ferry__ibop op;

	if (end - b < BTH_LEN + ICRC_LEN)
		UNDECODABLE(o, "UDP payload too short for a BTH and an ICRC");
	if (c->cap < b + BTH_LEN)
		UNDECODABLE(o, "BTH cut off by the capture");
	bth(c->f + b, o);
	if (o->tver != 0)
		UNDECODABLE(o, "BTH transport header version is not 0");
	if (!ferry__ibop(o->opcode, &op, &o->why))
		return FERRY_ROCE_UNDECODABLE;
	o->transport = op.transport;
	o->op = op.name;
	o->hdrs = op.hdrs;

	size_t x = ext_len(op.hdrs), e = b + BTH_LEN;
	if (end - b < BTH_LEN + x + o->padcnt + ICRC_LEN)
		UNDECODABLE(o, "UDP payload too short for the opcode's headers");
	if (c->cap < e + x)
		UNDECODABLE(o, "extended headers cut off by the capture");
	for (unsigned h = 1; h <= op.hdrs; h <<= 1) {
		if (op.hdrs & h) {
			ext(h, c->f + e, o);
			e += ferry__ibop_hdr_len(h);
		}
	}
	size_t body = end - e - ICRC_LEN;
	if (body % 4)
		UNDECODABLE(o, "payload and pad not a multiple of 4 bytes");
	if (op.flags & FERRY__IBOP_NOPAY && body)
		UNDECODABLE(o, "payload on an opcode that carries none");
	o->payload_off = (uint32_t)e;
	o->payload_len = (uint32_t)(body - o->padcnt);
	return FERRY_ROCE_DECODED;
}

/* A UD SEND to QP 1 carries a MAD (the general services interface). */
static enum ferry_roce_verdict mad(struct cur *c, struct ferry_roce_frame *o)
{
	if (o->opcode != 0x64 || o->dest_qp != 1)
		return FERRY_ROCE_DECODED;
	if (c->cap < (size_t)o->payload_off + o->payload_len)
		UNDECODABLE(o, "MAD cut off by the capture");
	if (!ferry__mad_decode(c->f + o->payload_off, o->payload_len, &o->mad,
			       &o->why))
		return FERRY_ROCE_UNDECODABLE;
	o->hdrs |= FERRY_ROCE_H_MAD;
	return FERRY_ROCE_DECODED;
}

static void icrc(struct cur *c, struct ferry_roce_frame *o)
{
	const uint8_t *t;

	o->icrc = FERRY_ROCE_ICRC_UNCHECKED;
	if (c->cap < c->ip + c->ip_len ||
	    ferry__roce_icrc_ip(c->f + c->ip, c->ip_len, &o->icrc_calc))
		return;
	t = c->f + c->ip + c->ip_len - ICRC_LEN;
	o->icrc_wire = (uint32_t)t[0] | (uint32_t)t[1] << 8 |
		       (uint32_t)t[2] << 16 | (uint32_t)t[3] << 24;
	o->icrc = o->icrc_wire == o->icrc_calc ? FERRY_ROCE_ICRC_OK
					       : FERRY_ROCE_ICRC_BAD;
}

/* Nothing decoded yet: the frame's sizes only. */
static void blank(struct ferry_roce_frame *o, size_t caplen, size_t len)
{
	memset(o, 0, sizeof(*o));
	o->caplen = (uint32_t)(caplen > UINT32_MAX ? UINT32_MAX : caplen);
	o->len = (uint32_t)(len > UINT32_MAX ? UINT32_MAX : len);
	o->vlan = FERRY_ROCE_NO_VLAN;
}

int ferry_rocedump_decode(const uint8_t *frame, size_t caplen, size_t len,
			  uint16_t port, struct ferry_roce_frame *out)
{
	struct cur c = { .f = frame, .cap = caplen, .len = len,
			 .port = port ? port : FERRY_ROCEDUMP_PORT };

	if ((!frame && caplen) || !out || caplen > len)
		return -EINVAL;
	blank(out, caplen, len);
	out->verdict = l3_l4(&c, out);
	if (out->verdict == FERRY_ROCE_DECODED)
		out->verdict = ib(&c, out);
	if (out->verdict == FERRY_ROCE_DECODED)
		out->verdict = mad(&c, out);
	if (out->verdict == FERRY_ROCE_DECODED)
		icrc(&c, out);
	else if (out->verdict == FERRY_ROCE_OTHER)
		blank(out, caplen, len); /* no half-read addresses */
	return 0;
}
