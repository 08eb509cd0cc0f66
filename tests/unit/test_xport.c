/* Above the transports: the RoCEv2 family's endpoint description (what a
 * verbs end and a uroce end tell each other), the names and bits the
 * control channel uses, and which transport a session runs on (the
 * sender's offer, the receiver's choice, the sender following it). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "cu.h"
#include "ferry/error.h"
#include "pipe/pipe.h"
#include "xport/rocev2.h"
#include "xport/xport_ids.h"

#define FAM FERRY_XPORT_FAMILY(FERRY_WIRE_ROCEV2)
/* The bits peers of every version put on the wire: the tables must keep
 * them. */
#define FERRY_XPORT_TCP 1u
#define FERRY_XPORT_UROCE 2u
#define FERRY_XPORT_VERBS 4u

/* The transports' settings, as a session would pass them. */
static struct ferry_xport_conf conf;

static void sample(struct ferry__rocev2_ep *e, uint8_t role, unsigned n)
{
	memset(e, 0, sizeof(*e));
	e->role = role;
	e->n_ep = (uint16_t)n;
	e->mtu = 4096;
	memcpy(e->mac, "\x52\x54\x00\xfe\x00\x01", 6);
	e->ip = 0xc6130101; /* 198.19.1.1 */
	e->rkey = 0x1234abcd;
	e->rx_hint = 1024;
	e->ring_base = 0;
	e->ring_len = 64ull << 20;
	for (unsigned i = 0; i < n; i++) {
		e->qp[i].qpn = 0x11 + 3 * i;
		e->qp[i].psn = (0xfffff0 + i) & 0xffffff; /* wraps */
	}
}

static void test_rocev2_roundtrip(void)
{
	static struct ferry__rocev2_ep e, d;
	uint8_t buf[FERRY_EP_MAX];
	size_t len = sizeof(buf);

	sample(&e, FERRY__ROCEV2_RECEIVER, 3);
	CU_ASSERT_EQUAL_FATAL(ferry__rocev2_encode(&e, buf, &len), 0);
	CU_ASSERT_EQUAL(len, 48 + 3 * 8);
	/* little-endian fields at their offsets; the address in wire order */
	CU_ASSERT(!memcmp(buf, "RCv2", 4) && buf[4] == 1 && buf[5] == 1);
	CU_ASSERT(buf[8] == 0x00 && buf[9] == 0x10); /* 4096 */
	CU_ASSERT(!memcmp(buf + 20, "\xc6\x13\x01\x01", 4));
	CU_ASSERT(!memcmp(buf + 48, "\x11\x00\x00\x00\xf0\xff\xff\x00", 8));
	CU_ASSERT_EQUAL(ferry__rocev2_decode(buf, len, FERRY__ROCEV2_RECEIVER,
					     3, &d, NULL, 0), 0);
	CU_ASSERT(d.role == e.role && d.n_ep == 3 && d.mtu == 4096 &&
		  !memcmp(d.mac, e.mac, 6) && d.ip == e.ip &&
		  d.rkey == e.rkey && d.rx_hint == 1024 && d.ring_base == 0 &&
		  d.ring_len == e.ring_len);
	for (unsigned i = 0; i < 3; i++)
		CU_ASSERT(d.qp[i].qpn == e.qp[i].qpn &&
			  d.qp[i].psn == e.qp[i].psn);

	/* the most QPs fit an endpoint blob; a sender needs no ring */
	sample(&e, FERRY__ROCEV2_SENDER, FERRY__ROCEV2_MAX_EP);
	e.rkey = 0;
	e.ring_len = 0;
	len = sizeof(buf);
	CU_ASSERT_EQUAL(ferry__rocev2_encode(&e, buf, &len), 0);
	CU_ASSERT_EQUAL(ferry__rocev2_decode(buf, len, FERRY__ROCEV2_SENDER,
					     FERRY__ROCEV2_MAX_EP, &d, NULL, 0),
			0);
	CU_ASSERT_EQUAL(d.qp[255].qpn, e.qp[255].qpn);

	/* no room; nothing a peer would refuse is written */
	len = 48 + 8 * 255;
	CU_ASSERT_EQUAL(ferry__rocev2_encode(&e, buf, &len), -ENOSPC);
	len = sizeof(buf);
	e.mtu = 1500;
	CU_ASSERT_EQUAL(ferry__rocev2_encode(&e, buf, &len), -EINVAL);
}

/* decode a copy of good (len bytes) with byte off set to v */
static int poke(const uint8_t *good, size_t len, size_t off, uint8_t v,
		uint8_t role, unsigned n, char *why, size_t whylen)
{
	static struct ferry__rocev2_ep d;
	uint8_t b[FERRY_EP_MAX];

	memcpy(b, good, len);
	b[off] = v;
	return ferry__rocev2_decode(b, len, role, n, &d, why, whylen);
}

static void test_rocev2_malformed(void)
{
	static struct ferry__rocev2_ep e, d;
	const uint8_t R = FERRY__ROCEV2_RECEIVER;
	uint8_t good[FERRY_EP_MAX];
	size_t len = sizeof(good);
	char why[160] = "";

	sample(&e, R, 2);
	CU_ASSERT_EQUAL_FATAL(ferry__rocev2_encode(&e, good, &len), 0);
	/* cut anywhere, or one byte more */
	for (size_t l = 0; l < len; l++)
		CU_ASSERT_EQUAL(ferry__rocev2_decode(good, l, R, 2, &d, NULL, 0),
				-FERRY_EPROTO);
	good[len] = 0;
	CU_ASSERT_EQUAL(ferry__rocev2_decode(good, len + 1, R, 2, &d, NULL, 0),
			-FERRY_EPROTO);
	/* another version is said as such */
	CU_ASSERT_EQUAL(poke(good, len, 4, 2, R, 2, why, sizeof(why)),
			-FERRY_EVERSION);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "version 2"));
	/* the wrong role, QP count, magic; reserved bytes not zero */
	CU_ASSERT_EQUAL(ferry__rocev2_decode(good, len, FERRY__ROCEV2_SENDER,
					     2, &d, why, sizeof(why)),
			-FERRY_EPROTO);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "not a sender's"));
	CU_ASSERT_EQUAL(ferry__rocev2_decode(good, len, R, 3, &d, NULL, 0),
			-FERRY_EPROTO);
	CU_ASSERT_EQUAL(poke(good, len, 0, 'X', R, 2, NULL, 0), -FERRY_EPROTO);
	CU_ASSERT_EQUAL(poke(good, len, 10, 1, R, 2, NULL, 0), -FERRY_EPROTO);
	CU_ASSERT_EQUAL(poke(good, len, 19, 1, R, 2, NULL, 0), -FERRY_EPROTO);
	/* MTU 4097, 2304, 0 */
	CU_ASSERT_EQUAL(poke(good, len, 8, 0x01, R, 2, NULL, 0), -FERRY_EPROTO);
	CU_ASSERT_EQUAL(poke(good, len, 9, 0x09, R, 2, NULL, 0), -FERRY_EPROTO);
	CU_ASSERT_EQUAL(poke(good, len, 9, 0x00, R, 2, NULL, 0), -FERRY_EPROTO);
	/* QPN 1 (the GSI's), above 24 bits, twice; PSN above 24 bits */
	CU_ASSERT_EQUAL(poke(good, len, 48, 0x01, R, 2, NULL, 0), -FERRY_EPROTO);
	CU_ASSERT_EQUAL(poke(good, len, 51, 0x01, R, 2, NULL, 0), -FERRY_EPROTO);
	CU_ASSERT_EQUAL(poke(good, len, 56, 0x11, R, 2, why, sizeof(why)),
			-FERRY_EPROTO);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "twice"));
	CU_ASSERT_EQUAL(poke(good, len, 55, 0x01, R, 2, NULL, 0), -FERRY_EPROTO);
	/* no address; a receiver without its ring; a ring that wraps */
	e.ip = 0;
	len = sizeof(good);
	CU_ASSERT_EQUAL(ferry__rocev2_encode(&e, good, &len), -EINVAL);
	sample(&e, R, 2);
	e.rkey = 0;
	CU_ASSERT_EQUAL(ferry__rocev2_encode(&e, good, &len), -EINVAL);
	sample(&e, R, 2);
	CU_ASSERT_EQUAL_FATAL(ferry__rocev2_encode(&e, good, &len), 0);
	CU_ASSERT_EQUAL(poke(good, len, 39, 0xff, R, 2, NULL, 0), 0); /* base */
	memset(good + 32, 0xff, 8);
	CU_ASSERT_EQUAL(ferry__rocev2_decode(good, len, R, 2, &d, why,
					     sizeof(why)), -FERRY_EPROTO);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "wraps"));
}

/* The path MTU: the sender takes the smaller of the receiver's and its
 * own; the receiver takes the sender's choice if it can. */
static void test_rocev2_mtu(void)
{
	static struct ferry__rocev2_ep e, d;
	uint8_t buf[FERRY_EP_MAX];
	size_t len = sizeof(buf);
	uint32_t mtu = 4096;
	char why[160];

	sample(&e, FERRY__ROCEV2_RECEIVER, 1);
	e.mtu = 1024;
	CU_ASSERT_EQUAL_FATAL(ferry__rocev2_encode(&e, buf, &len), 0);
	CU_ASSERT_EQUAL(ferry__rocev2_take(buf, len, FERRY__ROCEV2_RECEIVER, 1,
					   &mtu, &d, why, sizeof(why)), 0);
	CU_ASSERT_EQUAL(mtu, 1024);
	mtu = 512;
	CU_ASSERT_EQUAL(ferry__rocev2_take(buf, len, FERRY__ROCEV2_RECEIVER, 1,
					   &mtu, &d, why, sizeof(why)), 0);
	CU_ASSERT_EQUAL(mtu, 512);

	e.role = FERRY__ROCEV2_SENDER;
	len = sizeof(buf);
	CU_ASSERT_EQUAL_FATAL(ferry__rocev2_encode(&e, buf, &len), 0);
	mtu = 4096;
	CU_ASSERT_EQUAL(ferry__rocev2_take(buf, len, FERRY__ROCEV2_SENDER, 1,
					   &mtu, &d, why, sizeof(why)), 0);
	CU_ASSERT_EQUAL(mtu, 1024);
	mtu = 512;
	CU_ASSERT_EQUAL(ferry__rocev2_take(buf, len, FERRY__ROCEV2_SENDER, 1,
					   &mtu, &d, why, sizeof(why)),
			-FERRY_ENEGOTIATE);
	CU_ASSERT_STRING_EQUAL(why, "the sender chose path MTU 1024; this end takes at most 512");
	CU_ASSERT_EQUAL(mtu, 512);
	CU_ASSERT_EQUAL(ferry__rocev2_take(buf, len, FERRY__ROCEV2_RECEIVER, 1,
					   &mtu, &d, why, sizeof(why)),
			-FERRY_EPROTO);
}

static void test_ids(void)
{
	const struct ferry_xport_ops *const *l = ferry_xport_list();
	const struct ferry_xport_ops old = { .size = offsetof(struct ferry_xport_ops,
							       reach),
					     .name = "old", .wire = 1 };

	CU_ASSERT_EQUAL(ferry__xport_bit(ferry_xport_find("tcp")),
			FERRY_XPORT_TCP);
	CU_ASSERT_EQUAL(ferry__xport_bit(&old), 0);
	CU_ASSERT_STRING_EQUAL(ferry__xport_bit_name(FERRY_XPORT_VERBS | FAM),
			       "verbs");
	CU_ASSERT_STRING_EQUAL(ferry__xport_bit_name(FERRY_XPORT_UROCE |
						     FERRY_XPORT_VERBS), "uroce");
	CU_ASSERT_STRING_EQUAL(ferry__xport_bit_name(FAM), "?");
	CU_ASSERT_STRING_EQUAL(ferry__xport_family_name(FERRY_XPORT_UROCE |
							FERRY_XPORT_VERBS,
							FERRY_WIRE_ROCEV2,
							FERRY_XPORT_UROCE),
			       "verbs");
	CU_ASSERT_STRING_EQUAL(ferry__xport_family_name(FERRY_XPORT_TCP,
							FERRY_WIRE_ROCEV2, 0),
			       "?");
	/* every transport of this build has its wire bit, and the list is in
	 * rank order; tcp speaks only to tcp, the RDMA ones are RoCEv2; a
	 * table without the field is its own */
	for (size_t i = 0; l[i]; i++) {
		unsigned w = ferry_xport_wire(l[i]);
		uint32_t bit = ferry__xport_bit(l[i]);

		CU_ASSERT(bit != 0 && (bit & (bit - 1)) == 0);
		CU_ASSERT_STRING_EQUAL(ferry__xport_bit_name(bit), l[i]->name);
		CU_ASSERT_EQUAL(bit, !strcmp(l[i]->name, "tcp") ? FERRY_XPORT_TCP :
				     !strcmp(l[i]->name, "uroce") ? FERRY_XPORT_UROCE :
				     FERRY_XPORT_VERBS);
		CU_ASSERT_EQUAL(w, strcmp(l[i]->name, "tcp") ? FERRY_WIRE_ROCEV2 :
							       FERRY_WIRE_OWN);
		if (i)
			CU_ASSERT(ferry__xport_rank(l[i - 1]) <
				  ferry__xport_rank(l[i]));
	}
	/* the preference of every build: verbs, uroce, tcp */
	CU_ASSERT_STRING_EQUAL(l[0]->name, ferry_xport_find("verbs") ? "verbs" :
					   ferry_xport_find("uroce") ? "uroce" :
					   "tcp");
	CU_ASSERT_EQUAL(ferry__xport_rank(&old), UINT32_MAX);
	CU_ASSERT_EQUAL(ferry_xport_wire(&old), FERRY_WIRE_OWN);
	CU_ASSERT_STRING_EQUAL(ferry_wire_name(FERRY_WIRE_ROCEV2), "RoCEv2");
}

/* Which transports this host may use, as the choice sees them. */
static bool usable(const char *name)
{
	const struct ferry_xport_ops *x = ferry_xport_find(name);

	return x && x->probe(&conf, NULL, 0) == 0;
}

/* One session's steps, each after its own scan of this host. */
static uint32_t offer(const char *want, const struct sockaddr *sa,
		      socklen_t len)
{
	struct ferry__xscan s = { 0 };

	if (ferry__xport_scan(want, &conf, &s, NULL, 0))
		return 0;
	return ferry__xport_offer(&s, sa, len);
}

static int choose(const char *want, uint32_t off, uint32_t skip,
		  const struct sockaddr *sa, socklen_t len,
		  struct ferry__xpick *p, char *why, size_t whylen)
{
	struct ferry__xscan s = { 0 };
	int err = ferry__xport_scan(want, &conf, &s, why, whylen);

	return err ? err : ferry__xport_choose(&s, off, skip, sa, len, p, why,
					       whylen);
}

static int follow(const char *want, uint32_t chosen, const struct sockaddr *sa,
		  socklen_t len, struct ferry__xpick *p, char *why,
		  size_t whylen)
{
	struct ferry__xscan s = { 0 };
	int err = ferry__xport_scan(want, &conf, &s, why, whylen);

	return err ? err : ferry__xport_follow(&s, chosen, sa, len, p, why,
					       whylen);
}

/* A named transport is checked once, with the reasons */
static void test_scan(void)
{
	struct ferry__xscan s = { .duplex = true };
	char why[200];

	conf.uroce.eal = NULL;
	CU_ASSERT_EQUAL(ferry__xport_scan("auto", &conf, &s, why, sizeof(why)),
			0);
	CU_ASSERT(s.duplex && !s.want && (s.usable & FERRY_XPORT_TCP));
	CU_ASSERT_PTR_NOT_NULL(strstr(s.have, "tcp"));
	CU_ASSERT_EQUAL(ferry__xport_scan("tcp", &conf, &s, why, sizeof(why)),
			0);
	CU_ASSERT(s.want == ferry_xport_find("tcp"));
	CU_ASSERT_EQUAL(ferry__xport_scan("nope", &conf, &s, why, sizeof(why)),
			-FERRY_ENOXPORT);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "transport 'nope' is not in this build; usable here: "));
	if (!ferry_xport_find("uroce"))
		return;
	CU_ASSERT_EQUAL(ferry__xport_scan("uroce", &conf, &s, why, sizeof(why)),
			-FERRY_ENOXPORT);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "transport uroce is not usable here: uroce needs DPDK EAL arguments: give --dpdk"));
}

/* The choice, on a host where tcp and (with FERRY_DPDK set) uroce are
 * usable and verbs is not: a uroce receiver pairs with a verbs sender. */
static void test_choice(void)
{
	struct sockaddr_in lo = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	const struct sockaddr *sa = (const struct sockaddr *)&lo;
	struct ferry__xpick p;
	char why[200];

	conf.uroce.eal = NULL;
	if (usable("verbs") || usable("uroce"))
		return; /* an RDMA host: the guest tests cover it */
	CU_ASSERT_EQUAL(offer("auto", sa, sizeof(lo)),
			FERRY_XPORT_TCP);
	CU_ASSERT_EQUAL(offer("uroce", sa, sizeof(lo)), 0);
	CU_ASSERT_EQUAL(choose("auto", FERRY_XPORT_VERBS | FAM |
						    FERRY_XPORT_TCP,
					    0, sa, sizeof(lo), &p, why,
					    sizeof(why)), 0);
	CU_ASSERT(p.ops == ferry_xport_find("tcp") && !p.family);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "auto picked tcp: no RDMA transport"));
	if (!ferry_xport_find("uroce"))
		return; /* a build without DPDK */

	conf.uroce.eal = "--vdev=net_null0";
	CU_ASSERT_EQUAL(offer("auto", sa, sizeof(lo)),
			FERRY_XPORT_UROCE | FERRY_XPORT_TCP | FAM);
	CU_ASSERT_EQUAL(offer("uroce", sa, sizeof(lo)),
			FERRY_XPORT_UROCE | FAM);
	CU_ASSERT_EQUAL(offer("tcp", sa, sizeof(lo)),
			FERRY_XPORT_TCP);

	/* receiver: the same transport when the sender has it ... */
	CU_ASSERT_EQUAL(choose("auto", FERRY_XPORT_UROCE | FAM |
						    FERRY_XPORT_VERBS,
					    0, sa, sizeof(lo), &p, why,
					    sizeof(why)), 0);
	CU_ASSERT(p.ops == ferry_xport_find("uroce") && !p.family);
	CU_ASSERT_STRING_EQUAL(p.peer, "uroce");
	CU_ASSERT_EQUAL(ferry__xport_answer(&p), FERRY_XPORT_UROCE);
	/* ... else one of the family the sender offered, before tcp */
	CU_ASSERT_EQUAL(choose("auto", FERRY_XPORT_VERBS | FAM |
						    FERRY_XPORT_TCP,
					    0, sa, sizeof(lo), &p, why,
					    sizeof(why)), 0);
	CU_ASSERT(p.ops == ferry_xport_find("uroce") && p.family);
	CU_ASSERT_STRING_EQUAL(p.peer, "verbs");
	CU_ASSERT_EQUAL(ferry__xport_answer(&p), FERRY_XPORT_UROCE | FAM);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "auto picked uroce: the sender offered verbs, the same wire (RoCEv2)"));
	CU_ASSERT_EQUAL(choose("uroce", FERRY_XPORT_VERBS | FAM,
					    0, sa, sizeof(lo), &p, why,
					    sizeof(why)), 0);
	CU_ASSERT_STRING_EQUAL(why, "uroce as asked; the sender offered verbs, the same wire (RoCEv2)");
	/* a sender that cannot pair (an older one): tcp, or nothing */
	CU_ASSERT_EQUAL(choose("auto", FERRY_XPORT_VERBS |
						    FERRY_XPORT_TCP,
					    0, sa, sizeof(lo), &p, why,
					    sizeof(why)), 0);
	CU_ASSERT(p.ops == ferry_xport_find("tcp"));
	CU_ASSERT_EQUAL(choose("auto", FERRY_XPORT_VERBS, 0, sa,
					    sizeof(lo), &p, why, sizeof(why)),
			-FERRY_ENOXPORT);
	CU_ASSERT_STRING_EQUAL(why, "no transport is usable on both hosts");
	CU_ASSERT_EQUAL(choose("tcp", FERRY_XPORT_VERBS | FAM, 0,
					    sa, sizeof(lo), &p, why,
					    sizeof(why)), -FERRY_ENOXPORT);
	CU_ASSERT_STRING_EQUAL(why, "transport tcp is not usable on the peer");
	/* one that failed to listen is passed by */
	CU_ASSERT_EQUAL(choose("auto", FERRY_XPORT_VERBS | FAM |
						    FERRY_XPORT_TCP,
					    FERRY_XPORT_UROCE, sa, sizeof(lo),
					    &p, why, sizeof(why)), 0);
	CU_ASSERT(p.ops == ferry_xport_find("tcp"));

	/* sender: follow the receiver */
	CU_ASSERT_EQUAL(follow("auto", FERRY_XPORT_UROCE, sa,
					    sizeof(lo), &p, why, sizeof(why)),
			0);
	CU_ASSERT(p.ops == ferry_xport_find("uroce") && !p.family);
	CU_ASSERT_EQUAL(follow("auto", FERRY_XPORT_VERBS | FAM,
					    sa, sizeof(lo), &p, why,
					    sizeof(why)), 0);
	CU_ASSERT(p.ops == ferry_xport_find("uroce") && p.family);
	CU_ASSERT_STRING_EQUAL(p.peer, "verbs");
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "auto picked uroce: the receiver chose verbs, the same wire (RoCEv2)"));
	/* a pair needs another transport of the family here */
	CU_ASSERT_EQUAL(follow("auto", FERRY_XPORT_UROCE | FAM,
					    sa, sizeof(lo), &p, why,
					    sizeof(why)), -FERRY_EPROTO);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "cannot pair"));
	CU_ASSERT_EQUAL(follow("tcp", FERRY_XPORT_UROCE, sa,
					    sizeof(lo), &p, why, sizeof(why)),
			-FERRY_EPROTO);
	conf.uroce.eal = NULL;
}

/* ferry_opts.dscp: -1 (the default: leave the system's) or a DSCP of
 * six bits; anything else is refused with the range named. */
static void test_opts_dscp(void)
{
	struct ferry_opts o;
	char why[256] = "";

	ferry_opts_init(&o);
	o.transport = "tcp";
	CU_ASSERT_EQUAL(o.dscp, -1);
	CU_ASSERT_EQUAL(ferry_opts_check(&o, why, sizeof(why)), 0);
	o.dscp = 0;
	CU_ASSERT_EQUAL(ferry_opts_check(&o, why, sizeof(why)), 0);
	o.dscp = FERRY_DSCP_MAX;
	CU_ASSERT_EQUAL(ferry_opts_check(&o, why, sizeof(why)), 0);
	o.dscp = 64;
	CU_ASSERT_EQUAL(ferry_opts_check(&o, why, sizeof(why)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "0 to 63"));
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "not 64"));
	why[0] = 0;
	o.dscp = -2;
	CU_ASSERT_EQUAL(ferry_opts_check(&o, why, sizeof(why)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "not -2"));
}

int main(void)
{
	CU_TestInfo tests[] = {
		{ "RoCEv2 description: round trip", test_rocev2_roundtrip },
		{ "RoCEv2 description: malformed", test_rocev2_malformed },
		{ "RoCEv2 description: path MTU", test_rocev2_mtu },
		{ "transport bits and wire families", test_ids },
		{ "each transport probed once, a named one checked", test_scan },
		{ "the transport choice", test_choice },
		{ "session options: the DSCP's range", test_opts_dscp },
		CU_TEST_INFO_NULL,
	};

	ferry_xport_conf_init(&conf);
	return ferry_cu_run("xport", tests);
}
