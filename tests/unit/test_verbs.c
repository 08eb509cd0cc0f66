/* verbs transport: the parts that run without an RDMA device (device
 * selection on fake sysfs trees, ACK timeout, wire formats, error
 * conversion, the locked-memory check) and what probe/open say on a host
 * without one. End-to-end runs are tests/integration/verbs_e2e.sh. */
#include <stdio.h>
#include <stdlib.h>

#if __has_include(<infiniband/verbs.h>) && __has_include(<rdma/rdma_cma.h>)

#include <arpa/inet.h>
#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <netinet/in.h>
#include <string.h>
#include <unistd.h>

#include "cu.h"
#include "ferry/xport.h"
#include "util/util.h"
#include "xport/verbs/verbs.h"

extern const struct ferry_xport_ops ferry__xport_verbs;

/* A fake sysfs tree under $FERRY_TEST_DATA/verbs (see its README). */
static const char *tree(const char *name)
{
	static char paths[4][PATH_MAX];
	static unsigned next;
	char *path = paths[next++ % 4];
	const char *data = getenv("FERRY_TEST_DATA");

	snprintf(path, PATH_MAX, "%s/verbs/%s",
		 data ? data : "tests/unit/data", name);
	return path;
}

/* Does this host have an RDMA device at all? */
static bool host_has_rdma(void)
{
	DIR *d = opendir("/sys/class/infiniband");
	struct dirent *e;
	bool any = false;

	if (!d)
		return false;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			any = true;
	closedir(d);
	return any;
}

static void test_dev_of_netdev(void)
{
	char dev[64];

	CU_ASSERT_EQUAL(ferry__verbs_dev_of_netdev(tree("two_devs"), "ens1f0",
						   dev, sizeof(dev)), 0);
	CU_ASSERT_STRING_EQUAL(dev, "mlx5_0");
	CU_ASSERT_EQUAL(ferry__verbs_dev_of_netdev(tree("two_devs"), "ens1f1",
						   dev, sizeof(dev)), 0);
	CU_ASSERT_STRING_EQUAL(dev, "mlx5_1");
	/* a NIC without an RDMA device, names that are not names */
	CU_ASSERT_EQUAL(ferry__verbs_dev_of_netdev(tree("two_devs"), "eth0",
						   dev, sizeof(dev)), -ENODEV);
	CU_ASSERT_EQUAL(ferry__verbs_dev_of_netdev(tree("two_devs"), "../net",
						   dev, sizeof(dev)), -ENODEV);
	CU_ASSERT_EQUAL(ferry__verbs_dev_of_netdev(tree("two_devs"), "",
						   dev, sizeof(dev)), -ENODEV);
	CU_ASSERT_EQUAL(ferry__verbs_dev_of_netdev(tree("none"), "eth0", dev,
						   sizeof(dev)), -ENODEV);
	/* soft-RoCE: through the GID table */
	CU_ASSERT_EQUAL(ferry__verbs_dev_of_netdev(tree("rxe"), "eth0", dev,
						   sizeof(dev)), 0);
	CU_ASSERT_STRING_EQUAL(dev, "rxe0");
}

static void test_netdev_of_dev(void)
{
	char nd[FERRY_IFNAMSIZ];

	CU_ASSERT_EQUAL(ferry__verbs_netdev_of_dev(tree("two_devs"), "mlx5_0",
						   nd, sizeof(nd)), 0);
	CU_ASSERT_STRING_EQUAL(nd, "ens1f0");
	CU_ASSERT_EQUAL(ferry__verbs_netdev_of_dev(tree("two_devs"), "mlx5_1",
						   nd, sizeof(nd)), 0);
	CU_ASSERT_STRING_EQUAL(nd, "ens1f1");
	CU_ASSERT_EQUAL(ferry__verbs_netdev_of_dev(tree("two_devs"), "mlx5_9",
						   nd, sizeof(nd)), -ENODEV);
	CU_ASSERT_EQUAL(ferry__verbs_netdev_of_dev(tree("rxe"), "rxe0", nd,
						   sizeof(nd)), 0);
	CU_ASSERT_STRING_EQUAL(nd, "eth0"); /* the empty GID 0 is skipped */
}

static void test_dev_list(void)
{
	char buf[128];

	CU_ASSERT_EQUAL(ferry__verbs_dev_list(tree("two_devs"), buf,
					      sizeof(buf)), 2);
	CU_ASSERT_STRING_EQUAL(buf, "mlx5_0 (ens1f0), mlx5_1 (ens1f1)");
	CU_ASSERT_EQUAL(ferry__verbs_dev_list(tree("rxe"), buf, sizeof(buf)), 1);
	CU_ASSERT_STRING_EQUAL(buf, "rxe0 (eth0)");
	CU_ASSERT_EQUAL(ferry__verbs_dev_list(tree("none"), buf, sizeof(buf)), 0);
	CU_ASSERT_STRING_EQUAL(buf, "");
	/* a short buffer is cut, not overrun */
	CU_ASSERT_EQUAL(ferry__verbs_dev_list(tree("two_devs"), buf, 8), 2);
	CU_ASSERT_EQUAL(strlen(buf), 7);
}

static void test_pick_dev(void)
{
	char dev[64], why[256];

	/* by device name, by netdev name */
	CU_ASSERT_EQUAL(ferry__verbs_pick_dev(tree("two_devs"), "mlx5_1", NULL,
					      dev, sizeof(dev), why,
					      sizeof(why)), 0);
	CU_ASSERT_STRING_EQUAL(dev, "mlx5_1");
	CU_ASSERT_EQUAL(ferry__verbs_pick_dev(tree("two_devs"), "ens1f0", NULL,
					      dev, sizeof(dev), why,
					      sizeof(why)), 0);
	CU_ASSERT_STRING_EQUAL(dev, "mlx5_0");
	/* what the user names wins over the route */
	CU_ASSERT_EQUAL(ferry__verbs_pick_dev(tree("two_devs"), "mlx5_0",
					      "ens1f1", dev, sizeof(dev), why,
					      sizeof(why)), 0);
	CU_ASSERT_STRING_EQUAL(dev, "mlx5_0");
	/* by the route to the peer */
	CU_ASSERT_EQUAL(ferry__verbs_pick_dev(tree("two_devs"), NULL, "ens1f1",
					      dev, sizeof(dev), why,
					      sizeof(why)), 0);
	CU_ASSERT_STRING_EQUAL(dev, "mlx5_1");
	CU_ASSERT_EQUAL(ferry__verbs_pick_dev(tree("two_devs"), "", "ens1f0",
					      dev, sizeof(dev), why,
					      sizeof(why)), 0);
	CU_ASSERT_STRING_EQUAL(dev, "mlx5_0");

	/* refusals say what there is */
	why[0] = '\0';
	CU_ASSERT_EQUAL(ferry__verbs_pick_dev(tree("two_devs"), "bogus", NULL,
					      dev, sizeof(dev), why,
					      sizeof(why)), -ENODEV);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "bogus"));
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "mlx5_0 (ens1f0), mlx5_1 (ens1f1)"));
	CU_ASSERT_EQUAL(ferry__verbs_pick_dev(tree("two_devs"), "../../etc",
					      NULL, dev, sizeof(dev), why,
					      sizeof(why)), -ENODEV);
	why[0] = '\0';
	CU_ASSERT_EQUAL(ferry__verbs_pick_dev(tree("two_devs"), NULL, "eth0",
					      dev, sizeof(dev), why,
					      sizeof(why)), -FERRY_ENOXPORT);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "eth0"));
	why[0] = '\0';
	CU_ASSERT_EQUAL(ferry__verbs_pick_dev(tree("two_devs"), NULL, NULL,
					      dev, sizeof(dev), why,
					      sizeof(why)), -ENODEV);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "FERRY_VERBS_DEVICE"));

	/* a host with none */
	why[0] = '\0';
	CU_ASSERT_EQUAL(ferry__verbs_pick_dev(tree("none"), NULL, "eth0", dev,
					      sizeof(dev), why, sizeof(why)),
			-FERRY_ENOXPORT);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "no RDMA device"));
	CU_ASSERT_EQUAL(ferry__verbs_pick_dev(tree("none"), "mlx5_0", NULL, dev,
					      sizeof(dev), NULL, 0),
			-FERRY_ENOXPORT);

	/* one device and no route: that one */
	CU_ASSERT_EQUAL(ferry__verbs_pick_dev(tree("rxe"), NULL, NULL, dev,
					      sizeof(dev), why, sizeof(why)), 0);
	CU_ASSERT_STRING_EQUAL(dev, "rxe0");
	CU_ASSERT_EQUAL(ferry__verbs_pick_dev(tree("rxe"), NULL, "eth0", dev,
					      sizeof(dev), why, sizeof(why)), 0);
	CU_ASSERT_STRING_EQUAL(dev, "rxe0");
}

/* A RoCEv2 peer that is not verbs: this end's GID index and MAC, from
 * sysfs. */
static void test_gid_mac(void)
{
	unsigned port = 0, index = 0;
	uint8_t mac[6];
	const uint8_t want[6] = { 0x52, 0x54, 0x00, 0xfe, 0x00, 0x01 };

	/* ::ffff:10.0.0.5 is listed as RoCE v1 (index 2), then v2 (3) */
	CU_ASSERT_EQUAL(ferry__verbs_gid_find(tree("rxe"), "rxe0", 0x0a000005,
					      &port, &index), 0);
	CU_ASSERT(port == 1 && index == 3);
	/* only a v1 entry, no entry, no ports, not a device name */
	CU_ASSERT_EQUAL(ferry__verbs_gid_find(tree("rxe"), "rxe0", 0x0a000006,
					      &port, &index), -ENOENT);
	CU_ASSERT_EQUAL(ferry__verbs_gid_find(tree("rxe"), "rxe0", 0x0a000007,
					      &port, &index), -ENOENT);
	CU_ASSERT_EQUAL(ferry__verbs_gid_find(tree("two_devs"), "mlx5_0",
					      0x0a000005, &port, &index),
			-ENODEV);
	CU_ASSERT_EQUAL(ferry__verbs_gid_find(tree("rxe"), "..", 0x0a000005,
					      &port, &index), -ENODEV);

	CU_ASSERT_EQUAL(ferry__verbs_netdev_mac(tree("rxe"), "eth0", mac), 0);
	CU_ASSERT(memcmp(mac, want, 6) == 0);
	CU_ASSERT_EQUAL(ferry__verbs_netdev_mac(tree("two_devs"), "eth0", mac),
			-EINVAL);
	CU_ASSERT_EQUAL(ferry__verbs_netdev_mac(tree("two_devs"), "ens1f0",
						mac), -ENOENT);
	CU_ASSERT_EQUAL(ferry__verbs_netdev_mac(tree("rxe"), "../x", mac),
			-ENODEV);
}

static void test_ack_timeout(void)
{
	static const struct {
		double rtt_ms;
		uint8_t want;
	} cases[] = {
		{ 0.1, 14 }, { 5, 14 }, { 50, 16 }, { 120, 17 }, { 300, 19 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		double rtt = cases[i].rtt_ms;
		uint8_t t = ferry__verbs_ack_timeout(rtt);
		double period = ferry__verbs_ack_period_ms(t);

		CU_ASSERT_EQUAL(t, cases[i].want);
		/* an ACK one RTT late (even four) does not trip it */
		CU_ASSERT(period > rtt);
		CU_ASSERT(period >= FERRY__VERBS_ACK_MARGIN * rtt);
		/* and it is the smallest such, above the floor */
		if (t > FERRY__VERBS_ACK_MIN)
			CU_ASSERT(ferry__verbs_ack_period_ms((uint8_t)(t - 1)) <
				  FERRY__VERBS_ACK_MARGIN * rtt);
	}
	/* the brief's figure: 300 ms needs >= 19, which is 2.1 s */
	CU_ASSERT(ferry__verbs_ack_timeout(300) >= 19);
	CU_ASSERT(fabs(ferry__verbs_ack_period_ms(19) - 2147.48) < 0.01);
	CU_ASSERT(fabs(ferry__verbs_ack_period_ms(14) - 67.11) < 0.01);

	/* monotonic, bounded, never 0 (which would mean "no timeout") */
	uint8_t prev = 0;
	for (double r = 0; r <= 2000; r += 0.5) {
		uint8_t t = ferry__verbs_ack_timeout(r);
		CU_ASSERT(t >= prev && t >= FERRY__VERBS_ACK_MIN &&
			  t <= FERRY__VERBS_ACK_MAX);
		prev = t;
	}
	CU_ASSERT_EQUAL(ferry__verbs_ack_timeout(0), FERRY__VERBS_ACK_MIN);
	CU_ASSERT_EQUAL(ferry__verbs_ack_timeout(INFINITY), FERRY__VERBS_ACK_MAX);
	CU_ASSERT_EQUAL(ferry__verbs_ack_timeout(1e12), FERRY__VERBS_ACK_MAX);
	/* not a usable number: the design's longest RTT */
	CU_ASSERT_EQUAL(ferry__verbs_ack_timeout(NAN), 19);
	CU_ASSERT_EQUAL(ferry__verbs_ack_timeout(-1), 19);
}

static struct ferry__verbs_priv sample_rep(void)
{
	struct ferry__verbs_priv p = {
		.kind = FERRY__VERBS_PRIV_REP,
		.ep = 3,
		.n_ep = 4,
		.rkey = 0x11223344u,
		.ring_base = 0,
		.ring_len = 0x0102030405060708ull,
	};

	for (int i = 0; i < FERRY__VERBS_TOKEN; i++)
		p.token[i] = (uint8_t)(0xa0 + i);
	return p;
}

/* The QPs' traffic class: the DS byte of the session's DSCP, ECN bits 0;
 * none (or out of range) is 0, an unmarked QP's. */
static void test_tclass(void)
{
	CU_ASSERT_EQUAL(ferry__verbs_tclass(10), 40);
	CU_ASSERT_EQUAL(ferry__verbs_tclass(46), 184);
	CU_ASSERT_EQUAL(ferry__verbs_tclass(FERRY_DSCP_MAX), 0xfc);
	CU_ASSERT_EQUAL(ferry__verbs_tclass(0), 0);
	CU_ASSERT_EQUAL(ferry__verbs_tclass(-1), 0);
	CU_ASSERT_EQUAL(ferry__verbs_tclass(FERRY_DSCP_MAX + 1), 0);
}

static void test_priv_roundtrip(void)
{
	struct ferry__verbs_priv p = sample_rep(), q;
	uint8_t b[64];

	memset(b, 0xee, sizeof(b));
	CU_ASSERT_EQUAL(ferry__verbs_priv_encode(&p, b, sizeof(b)),
			FERRY__VERBS_PRIV_LEN);
	/* explicit little-endian layout */
	CU_ASSERT(b[0] == FERRY__VERBS_VERSION && b[1] == FERRY__VERBS_PRIV_REP);
	CU_ASSERT(b[2] == 0 && b[3] == 0);
	CU_ASSERT(b[4] == 3 && b[5] == 0 && b[6] == 0 && b[7] == 0);
	CU_ASSERT(b[8] == 4 && b[11] == 0);
	CU_ASSERT(b[12] == 0x44 && b[13] == 0x33 && b[14] == 0x22 &&
		  b[15] == 0x11);
	for (int i = 16; i < 24; i++)
		CU_ASSERT_EQUAL(b[i], 0);
	for (int i = 0; i < 8; i++)
		CU_ASSERT_EQUAL(b[24 + i], 8 - i);
	CU_ASSERT(b[32] == 0xa0 && b[47] == 0xaf);
	CU_ASSERT_EQUAL(b[48], 0xee); /* nothing past the end */

	CU_ASSERT_EQUAL(ferry__verbs_priv_decode(b, FERRY__VERBS_PRIV_LEN, &q), 0);
	CU_ASSERT(q.kind == p.kind && q.ep == p.ep && q.n_ep == p.n_ep &&
		  q.rkey == p.rkey && q.ring_base == p.ring_base &&
		  q.ring_len == p.ring_len &&
		  !memcmp(q.token, p.token, sizeof(p.token)));
	/* rdma_cm pads a REQ to 56 bytes: longer is fine */
	memset(b + FERRY__VERBS_PRIV_LEN, 0, 8);
	CU_ASSERT_EQUAL(ferry__verbs_priv_decode(b, 56, &q), 0);

	/* a REQ */
	struct ferry__verbs_priv r = { .kind = FERRY__VERBS_PRIV_REQ, .ep = 0,
				       .n_ep = 1 };
	memset(r.token, 0x5a, sizeof(r.token));
	CU_ASSERT_EQUAL(ferry__verbs_priv_encode(&r, b, sizeof(b)),
			FERRY__VERBS_PRIV_LEN);
	CU_ASSERT_EQUAL(ferry__verbs_priv_decode(b, FERRY__VERBS_PRIV_LEN, &q), 0);
	CU_ASSERT(q.kind == FERRY__VERBS_PRIV_REQ && q.n_ep == 1 &&
		  q.token[15] == 0x5a);
	/* too small a buffer to encode into */
	CU_ASSERT_EQUAL(ferry__verbs_priv_encode(&r, b, FERRY__VERBS_PRIV_LEN - 1),
			0);
}

static void test_priv_malformed(void)
{
	struct ferry__verbs_priv p = sample_rep(), q;
	uint8_t b[FERRY__VERBS_PRIV_LEN], c[FERRY__VERBS_PRIV_LEN];

	ferry__verbs_priv_encode(&p, b, sizeof(b));
	/* truncated */
	CU_ASSERT_EQUAL(ferry__verbs_priv_decode(b, sizeof(b) - 1, &q),
			-FERRY_EPROTO);
	CU_ASSERT_EQUAL(ferry__verbs_priv_decode(b, 1, &q), -FERRY_EPROTO);
	CU_ASSERT_EQUAL(ferry__verbs_priv_decode(b, 0, &q), -FERRY_EPROTO);
	CU_ASSERT_EQUAL(ferry__verbs_priv_decode(NULL, 48, &q), -FERRY_EPROTO);
	/* another version, whatever its length */
	memcpy(c, b, sizeof(c));
	c[0] = FERRY__VERBS_VERSION + 1;
	CU_ASSERT_EQUAL(ferry__verbs_priv_decode(c, sizeof(c), &q),
			-FERRY_EVERSION);
	CU_ASSERT_EQUAL(ferry__verbs_priv_decode(c, 4, &q), -FERRY_EVERSION);
	c[0] = 0;
	CU_ASSERT_EQUAL(ferry__verbs_priv_decode(c, sizeof(c), &q),
			-FERRY_EVERSION);
	/* unknown kind */
	memcpy(c, b, sizeof(c));
	c[1] = 3;
	CU_ASSERT_EQUAL(ferry__verbs_priv_decode(c, sizeof(c), &q),
			-FERRY_EPROTO);
	/* endpoint index out of range; no endpoints; too many */
	memcpy(c, b, sizeof(c));
	c[4] = 4; /* ep 4 of 4 */
	CU_ASSERT_EQUAL(ferry__verbs_priv_decode(c, sizeof(c), &q),
			-FERRY_EPROTO);
	memcpy(c, b, sizeof(c));
	c[4] = 0;
	c[8] = 0; /* n_ep 0 */
	CU_ASSERT_EQUAL(ferry__verbs_priv_decode(c, sizeof(c), &q),
			-FERRY_EPROTO);
	memcpy(c, b, sizeof(c));
	c[9] = 0x10; /* n_ep 4100 */
	CU_ASSERT_EQUAL(ferry__verbs_priv_decode(c, sizeof(c), &q),
			-FERRY_EPROTO);
	/* a REP ring that is empty, or wraps the address space */
	p.ring_len = 0;
	ferry__verbs_priv_encode(&p, c, sizeof(c));
	CU_ASSERT_EQUAL(ferry__verbs_priv_decode(c, sizeof(c), &q),
			-FERRY_EPROTO);
	p.ring_len = 4096;
	p.ring_base = UINT64_MAX - 100;
	ferry__verbs_priv_encode(&p, c, sizeof(c));
	CU_ASSERT_EQUAL(ferry__verbs_priv_decode(c, sizeof(c), &q),
			-FERRY_EPROTO);
}

/* The duplex description (the sender's ring, for --osu): byte layout,
 * round trip, and every malformed form refused. */
static void test_duplex(void)
{
	struct ferry__verbs_duplex d = { .rkey = 0x11223344,
					 .ring_base = 0x123,
					 .ring_len = 8392704 }, q;
	uint8_t b[FERRY__VERBS_DUPLEX_LEN + 8], c[FERRY__VERBS_DUPLEX_LEN];

	CU_ASSERT_EQUAL(ferry__verbs_duplex_encode(&d, b, 10), 0);
	CU_ASSERT_EQUAL(ferry__verbs_duplex_encode(&d, b, sizeof(b)),
			FERRY__VERBS_DUPLEX_LEN);
	CU_ASSERT_EQUAL(b[0], FERRY__VERBS_VERSION);
	CU_ASSERT_EQUAL(b[1], 0);
	CU_ASSERT_EQUAL(b[4], 0x44); /* little-endian rkey */
	CU_ASSERT_EQUAL(b[7], 0x11);
	CU_ASSERT_EQUAL(b[8], 0x23);
	CU_ASSERT_EQUAL(ferry__verbs_duplex_decode(b, FERRY__VERBS_DUPLEX_LEN, &q), 0);
	CU_ASSERT_EQUAL(q.rkey, d.rkey);
	CU_ASSERT_EQUAL(q.ring_base, d.ring_base);
	CU_ASSERT_EQUAL(q.ring_len, d.ring_len);
	/* length must be exact; version first */
	CU_ASSERT_EQUAL(ferry__verbs_duplex_decode(b, FERRY__VERBS_DUPLEX_LEN + 1, &q), -FERRY_EPROTO);
	CU_ASSERT_EQUAL(ferry__verbs_duplex_decode(b, FERRY__VERBS_DUPLEX_LEN - 1, &q), -FERRY_EPROTO);
	CU_ASSERT_EQUAL(ferry__verbs_duplex_decode(b, 1, &q), -FERRY_EPROTO);
	CU_ASSERT_EQUAL(ferry__verbs_duplex_decode(NULL, 24, &q), -FERRY_EPROTO);
	memcpy(c, b, sizeof(c));
	c[0]++;
	CU_ASSERT_EQUAL(ferry__verbs_duplex_decode(c, sizeof(c), &q), -FERRY_EVERSION);
	memcpy(c, b, sizeof(c));
	c[2] = 1; /* the reserved field */
	CU_ASSERT_EQUAL(ferry__verbs_duplex_decode(c, sizeof(c), &q), -FERRY_EPROTO);
	d.ring_len = 0;
	ferry__verbs_duplex_encode(&d, c, sizeof(c));
	CU_ASSERT_EQUAL(ferry__verbs_duplex_decode(c, sizeof(c), &q), -FERRY_EPROTO);
	d.ring_len = 4096;
	d.ring_base = UINT64_MAX - 100; /* wraps */
	ferry__verbs_duplex_encode(&d, c, sizeof(c));
	CU_ASSERT_EQUAL(ferry__verbs_duplex_decode(c, sizeof(c), &q), -FERRY_EPROTO);
}

static void test_blob(void)
{
	struct ferry__verbs_blob a = { .port = 20886, .n_ep = 4 }, b;
	struct sockaddr_in *a4 = (struct sockaddr_in *)&a.addr;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&a.addr;
	uint8_t buf[FERRY_EP_MAX], c[FERRY__VERBS_BLOB_LEN];
	size_t len = sizeof(buf);

	memset(a.token, 0x42, sizeof(a.token));
	a4->sin_family = AF_INET;
	inet_pton(AF_INET, "198.18.0.2", &a4->sin_addr);
	CU_ASSERT_EQUAL(ferry__verbs_blob_encode(&a, buf, &len), 0);
	CU_ASSERT_EQUAL(len, FERRY__VERBS_BLOB_LEN);
	CU_ASSERT(buf[0] == FERRY__VERBS_VERSION && buf[1] == 0);
	CU_ASSERT(buf[2] == (20886 & 0xff) && buf[3] == (20886 >> 8));
	CU_ASSERT(buf[4] == 4 && buf[5] == 0 && buf[6] == 4);
	CU_ASSERT_EQUAL(ferry__verbs_blob_decode(buf, len, &b), 0);
	CU_ASSERT(b.port == 20886 && b.n_ep == 4);
	CU_ASSERT_EQUAL(b.addr.ss_family, AF_INET);
	CU_ASSERT_EQUAL(((struct sockaddr_in *)&b.addr)->sin_addr.s_addr,
			a4->sin_addr.s_addr);
	CU_ASSERT_EQUAL(ntohs(((struct sockaddr_in *)&b.addr)->sin_port), 20886);
	CU_ASSERT(!memcmp(b.token, a.token, sizeof(a.token)));

	/* IPv6, and IPv4-mapped IPv6 (a dual-stack control socket) */
	memset(&a.addr, 0, sizeof(a.addr));
	a6->sin6_family = AF_INET6;
	inet_pton(AF_INET6, "2001:db8::7", &a6->sin6_addr);
	len = sizeof(buf);
	CU_ASSERT_EQUAL(ferry__verbs_blob_encode(&a, buf, &len), 0);
	CU_ASSERT_EQUAL(ferry__verbs_blob_decode(buf, len, &b), 0);
	CU_ASSERT_EQUAL(b.addr.ss_family, AF_INET6);
	CU_ASSERT(!memcmp(&((struct sockaddr_in6 *)&b.addr)->sin6_addr,
			  &a6->sin6_addr, 16));
	inet_pton(AF_INET6, "::ffff:198.18.0.9", &a6->sin6_addr);
	len = sizeof(buf);
	CU_ASSERT_EQUAL(ferry__verbs_blob_encode(&a, buf, &len), 0);
	CU_ASSERT_EQUAL(ferry__verbs_blob_decode(buf, len, &b), 0);
	CU_ASSERT_EQUAL(b.addr.ss_family, AF_INET);
	CU_ASSERT_EQUAL(((struct sockaddr_in *)&b.addr)->sin_addr.s_addr,
			inet_addr("198.18.0.9"));

	/* encode refusals */
	len = FERRY__VERBS_BLOB_LEN - 1;
	CU_ASSERT_EQUAL(ferry__verbs_blob_encode(&a, buf, &len), -ENOSPC);
	a.addr.ss_family = AF_UNIX;
	len = sizeof(buf);
	CU_ASSERT_EQUAL(ferry__verbs_blob_encode(&a, buf, &len), -EINVAL);

	/* decode refusals: wrong length, version, family, port, count */
	a.addr.ss_family = AF_INET;
	len = sizeof(buf);
	ferry__verbs_blob_encode(&a, buf, &len);
	CU_ASSERT_EQUAL(ferry__verbs_blob_decode(buf, len - 1, &b), -FERRY_EPROTO);
	CU_ASSERT_EQUAL(ferry__verbs_blob_decode(buf, len + 1, &b), -FERRY_EPROTO);
	CU_ASSERT_EQUAL(ferry__verbs_blob_decode(buf, 1, &b), -FERRY_EPROTO);
	memcpy(c, buf, sizeof(c));
	c[0] = 2;
	CU_ASSERT_EQUAL(ferry__verbs_blob_decode(c, sizeof(c), &b),
			-FERRY_EVERSION);
	memcpy(c, buf, sizeof(c));
	c[6] = 5;
	CU_ASSERT_EQUAL(ferry__verbs_blob_decode(c, sizeof(c), &b), -FERRY_EPROTO);
	memcpy(c, buf, sizeof(c));
	c[2] = c[3] = 0;
	CU_ASSERT_EQUAL(ferry__verbs_blob_decode(c, sizeof(c), &b), -FERRY_EPROTO);
	memcpy(c, buf, sizeof(c));
	c[4] = c[5] = 0;
	CU_ASSERT_EQUAL(ferry__verbs_blob_decode(c, sizeof(c), &b), -FERRY_EPROTO);
	memcpy(c, buf, sizeof(c));
	c[5] = 2; /* 516 endpoints */
	CU_ASSERT_EQUAL(ferry__verbs_blob_decode(c, sizeof(c), &b), -FERRY_EPROTO);
}

static void test_errors(void)
{
	/* libibverbs: positive errno */
	CU_ASSERT_EQUAL(ferry__verbs_ibv(0), 0);
	CU_ASSERT_EQUAL(ferry__verbs_ibv(ENOMEM), -ENOMEM);
	CU_ASSERT_EQUAL(ferry__verbs_ibv(-EINVAL), -EINVAL);
	CU_ASSERT_EQUAL(ferry__verbs_ibv(-1), -EIO);
	/* librdmacm: -1 and errno */
	errno = ENODEV;
	CU_ASSERT_EQUAL(ferry__verbs_cm(-1), -ENODEV);
	CU_ASSERT_EQUAL(ferry__verbs_cm(0), 0);
	errno = EADDRINUSE;
	CU_ASSERT_EQUAL(ferry__verbs_errno(), -EADDRINUSE);
	errno = 0;
	CU_ASSERT_EQUAL(ferry__verbs_cm(-1), -EIO); /* never a success */

	/* completion status */
	CU_ASSERT_EQUAL(ferry__verbs_wc_err(IBV_WC_SUCCESS, false), 0);
	CU_ASSERT_EQUAL(ferry__verbs_wc_err(IBV_WC_WR_FLUSH_ERR, false),
			-FERRY_ECLOSED);
	CU_ASSERT_EQUAL(ferry__verbs_wc_err(IBV_WC_WR_FLUSH_ERR, true),
			-ECANCELED);
	CU_ASSERT_EQUAL(ferry__verbs_wc_err(IBV_WC_REM_ACCESS_ERR, false),
			-FERRY_EBOUNDS);
	CU_ASSERT_EQUAL(ferry__verbs_wc_err(IBV_WC_RETRY_EXC_ERR, false),
			-FERRY_ETIMEOUT);
	CU_ASSERT_EQUAL(ferry__verbs_wc_err(IBV_WC_RNR_RETRY_EXC_ERR, false),
			-FERRY_ETIMEOUT);
	CU_ASSERT_EQUAL(ferry__verbs_wc_err(IBV_WC_REM_INV_REQ_ERR, false),
			-FERRY_EPEER);
	CU_ASSERT_EQUAL(ferry__verbs_wc_err(IBV_WC_REM_OP_ERR, false),
			-FERRY_EPEER);
	CU_ASSERT_EQUAL(ferry__verbs_wc_err(IBV_WC_LOC_LEN_ERR, false),
			-FERRY_EPROTO);
	CU_ASSERT_EQUAL(ferry__verbs_wc_err(IBV_WC_LOC_PROT_ERR, false), -EIO);
	CU_ASSERT_EQUAL(ferry__verbs_wc_err(IBV_WC_FATAL_ERR, false), -EIO);
	CU_ASSERT_EQUAL(ferry__verbs_wc_err(IBV_WC_GENERAL_ERR, false), -EIO);
}

static void test_memlock(void)
{
	const uint64_t MiB = 1u << 20;
	char why[512];

	CU_ASSERT_EQUAL(ferry__verbs_memlock_check(UINT64_MAX, 0, 1ull << 40,
						   false, why, sizeof(why)), 0);
	CU_ASSERT_EQUAL(ferry__verbs_memlock_check(8 * MiB, 0, 1ull << 40,
						   true, why, sizeof(why)), 0);
	CU_ASSERT_EQUAL(ferry__verbs_memlock_check(64 * MiB, 0, 32 * MiB,
						   false, why, sizeof(why)), 0);
	CU_ASSERT_EQUAL(ferry__verbs_memlock_check(64 * MiB, 32 * MiB, 32 * MiB,
						   false, why, sizeof(why)), 0);
	why[0] = '\0';
	CU_ASSERT_EQUAL(ferry__verbs_memlock_check(8 * MiB, 0, 257 * MiB,
						   false, why, sizeof(why)),
			-ENOMEM);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "RLIMIT_MEMLOCK is 8192 KiB"));
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "ulimit -l"));
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "LimitMEMLOCK"));
	CU_ASSERT_EQUAL(ferry__verbs_memlock_check(64 * MiB, 60 * MiB, 8 * MiB,
						   false, NULL, 0), -ENOMEM);
	CU_ASSERT_EQUAL(ferry__verbs_memlock_check(64 * MiB, 65 * MiB, 1, false,
						   NULL, 0), -ENOMEM);
}

/* The transports' settings: the defaults (no device named). */
static struct ferry_xport_conf conf = { .verbs.rtt_ms = -1 };

/* Run fn with stdout and stderr sent to a file; how many bytes it wrote. */
static long quiet_bytes(int (*fn)(const struct ferry_xport_conf *, char *,
				  size_t),
			char *why, size_t len, int *ret)
{
	char path[] = "/tmp/ferry-verbs-probe.XXXXXX";
	int fd = mkstemp(path), o1 = dup(1), o2 = dup(2);
	long n;

	fflush(stdout);
	fflush(stderr);
	dup2(fd, 1);
	dup2(fd, 2);
	*ret = fn(&conf, why, len);
	fflush(stdout);
	fflush(stderr);
	dup2(o1, 1);
	dup2(o2, 2);
	close(o1);
	close(o2);
	n = lseek(fd, 0, SEEK_END);
	close(fd);
	unlink(path);
	return n;
}

static void test_probe_here(void)
{
	char why[256] = "";
	int r;

	/* silent: `--transport auto` probes on every session */
	CU_ASSERT_EQUAL(quiet_bytes(ferry__xport_verbs.probe, why, sizeof(why),
				    &r), 0);
	if (!host_has_rdma()) {
		CU_ASSERT_EQUAL(r, -FERRY_ENOXPORT);
		CU_ASSERT_STRING_EQUAL(why,
				       "no RDMA device (ibv_get_device_list found none)");
		CU_ASSERT_EQUAL(ferry__xport_verbs.probe(&conf, NULL, 0),
				-FERRY_ENOXPORT);
	} else {
		/* a device: usable, or a reason (rdma_ucm missing) */
		CU_ASSERT(r == 0 || (r == -FERRY_ENOXPORT && why[0]));
	}
}


/* --- the datapath against a fake NIC ---
 * ibv_post_send, ibv_poll_cq and ibv_post_srq_recv dispatch through the
 * context's ops, so these stand in for a device: posted WRs queue up until
 * nic_run() "executes" them; completions are whatever the test queues. */
#define FAKE_MAX 4096

static struct {
	struct ibv_context ctx;
	struct ibv_qp qp;
	struct ibv_cq scq, rcq;
	struct ibv_srq srq;
	struct ibv_mr lkey_mr, rbuf_mr;
	struct {
		struct ibv_send_wr wr;
		struct ibv_sge sge;
		uint8_t data[FERRY_XPORT_MSG_MAX];
	} sq[FAKE_MAX];
	unsigned posted, done, sq_cap, high;
	struct ibv_wc scqe[FAKE_MAX], rcqe[FAKE_MAX];
	unsigned s_head, s_tail, r_head, r_tail;
	uint64_t repost_id[FAKE_MAX], repost_addr[FAKE_MAX];
	unsigned reposted;
	uint32_t repost_lkey;
} F;

static struct ferry_xport FX;
static struct verbs_ep FEP __attribute__((aligned(64)));
static uint8_t fbuf[64 * 1024];
static struct ferry_mr flmr;

static int fake_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
			  struct ibv_send_wr **bad)
{
	(void)qp;
	for (; wr; wr = wr->next) {
		if (F.posted - F.done >= F.sq_cap || F.posted == FAKE_MAX) {
			*bad = wr;
			return ENOMEM; /* the SQ overflowed: ferry miscounted */
		}
		F.sq[F.posted].wr = *wr;
		if (wr->num_sge)
			F.sq[F.posted].sge = wr->sg_list[0];
		if ((wr->send_flags & IBV_SEND_INLINE) && wr->num_sge)
			memcpy(F.sq[F.posted].data,
			       (void *)(uintptr_t)wr->sg_list[0].addr,
			       wr->sg_list[0].length);
		F.posted++;
		if (F.posted - F.done > F.high)
			F.high = F.posted - F.done;
	}
	return 0;
}

static int fake_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	bool s = cq == &F.scq;
	unsigned *head = s ? &F.s_head : &F.r_head;
	unsigned tail = s ? F.s_tail : F.r_tail;
	int k = 0;

	while (k < n && *head < tail) {
		wc[k++] = s ? F.scqe[*head] : F.rcqe[*head];
		(*head)++;
	}
	return k;
}

static int fake_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr,
			      struct ibv_recv_wr **bad)
{
	(void)srq;
	(void)bad;
	for (; wr; wr = wr->next) {
		F.repost_id[F.reposted] = wr->wr_id;
		F.repost_addr[F.reposted] = wr->sg_list[0].addr;
		F.repost_lkey = wr->sg_list[0].lkey;
		F.reposted++;
	}
	return 0;
}

/* The NIC finishes the next n WRs; signalled ones complete. */
static void nic_run(unsigned n)
{
	while (n-- && F.done < F.posted) {
		const struct ibv_send_wr *w = &F.sq[F.done++].wr;
		if (w->send_flags & IBV_SEND_SIGNALED)
			F.scqe[F.s_tail++] = (struct ibv_wc){
				.wr_id = w->wr_id, .status = IBV_WC_SUCCESS,
				.opcode = w->opcode == IBV_WR_SEND ?
						  IBV_WC_SEND : IBV_WC_RDMA_WRITE };
	}
}

static void push_recv(struct ibv_wc wc)
{
	F.rcqe[F.r_tail++] = wc;
}

/* One connected endpoint on the fake NIC, SQ of sq WRs. */
static struct ferry_xport *fake_x(unsigned sq)
{
	free(FX.rbuf);
	free(FEP.sig);
	memset(&F, 0, sizeof(F));
	memset(&FX, 0, sizeof(FX));
	memset(&FEP, 0, sizeof(FEP));
	F.ctx.ops.post_send = fake_post_send;
	F.ctx.ops.poll_cq = fake_poll_cq;
	F.ctx.ops.post_srq_recv = fake_post_srq_recv;
	F.qp.context = F.scq.context = F.rcq.context = F.srq.context = &F.ctx;
	F.lkey_mr.lkey = 0x55;
	F.rbuf_mr.lkey = 0x77;
	F.sq_cap = sq;
	FX.n_ep = 1;
	FX.ep = &FEP;
	FX.attr.timeout_ms = 50;
	atomic_init(&FX.cancelled, false);
	FX.rbuf = calloc(16, FERRY_XPORT_MSG_MAX);
	FX.rmr = &F.rbuf_mr;
	FX.srq = &F.srq;
	FX.srq_depth = 16;
	FX.max_msg = 1u << 30;
	FX.rkey = 0xabcd;
	FX.rbase = 0;
	FX.rlen = 1u << 20;
	FEP.qp = &F.qp;
	FEP.scq = &F.scq;
	FEP.rcq = &F.rcq;
	atomic_init(&FEP.peer_gone, false);
	CU_ASSERT_EQUAL(ferry__verbs_ep_init(&FX, &FEP, sq), 0);
	FEP.wwr.wr.rdma.rkey = FX.rkey;
	/* registered: the middle of fbuf, so a test can point outside */
	flmr = (struct ferry_mr){ .mr = &F.lkey_mr, .base = fbuf + 4096,
				  .len = sizeof(fbuf) - 8192,
				  .iova = (uintptr_t)(fbuf + 4096) };
	return &FX;
}

static int wr_imm(struct ferry_xport *x, uint64_t roff, uint32_t imm,
		  uint64_t wr_id, unsigned flags)
{
	return ferry__verbs_post_write_imm(x, 0, &flmr, fbuf + 8192, 8192, roff,
					   imm, wr_id, flags);
}

static void test_dp_write(void)
{
	struct ferry_xport *x = fake_x(8);
	struct ferry_wc wc[16];

	CU_ASSERT_EQUAL(wr_imm(x, 3 * 12288, 3, 0, FERRY_POST_SIGNALED), 0);
	const struct ibv_send_wr *w = &F.sq[0].wr;
	CU_ASSERT_EQUAL(w->opcode, IBV_WR_RDMA_WRITE_WITH_IMM);
	CU_ASSERT_EQUAL(w->imm_data, htobe32(3)); /* network order */
	CU_ASSERT_EQUAL(w->wr.rdma.remote_addr, 3 * 12288);
	CU_ASSERT_EQUAL(w->wr.rdma.rkey, 0xabcd);
	CU_ASSERT_EQUAL(w->send_flags, IBV_SEND_SIGNALED);
	CU_ASSERT(F.sq[0].sge.addr == (uintptr_t)(fbuf + 8192) &&
		  F.sq[0].sge.length == 8192 && F.sq[0].sge.lkey == 0x55);
	CU_ASSERT_EQUAL(ferry__verbs_poll(x, 0, wc, 16, 0), 0);
	nic_run(1);
	CU_ASSERT_EQUAL(ferry__verbs_poll(x, 0, wc, 16, 0), 1);
	CU_ASSERT(wc[0].op == FERRY_WC_WRITE && wc[0].wr_id == 0);

	/* a zero-based registration (a duplex sender's pool): the SGE
	 * names the bytes by iova, not by virtual address (rxe fails the
	 * write with a local protection error otherwise) */
	struct ferry_mr zmr = flmr;
	zmr.iova = 0x100;
	CU_ASSERT_EQUAL(ferry__verbs_post_write_imm(x, 0, &zmr, fbuf + 8192,
						    8192, 0, 1, 1,
						    FERRY_POST_SIGNALED), 0);
	CU_ASSERT_EQUAL(F.sq[1].sge.addr, 0x100 + 4096);
	nic_run(1);
	CU_ASSERT_EQUAL(ferry__verbs_poll(x, 0, wc, 16, 0), 1);
	x = fake_x(8);

	/* unsignalled writes: every sig_every-th is signalled for the SQ's
	 * sake, and reported to nobody; the SQ never overflows */
	for (uint64_t i = 1; i <= 200; i++) {
		CU_ASSERT_EQUAL_FATAL(wr_imm(x, 0, 1, i, 0), 0);
		if (i % 3 == 0)
			nic_run(3); /* the NIC lags, then catches up */
		CU_ASSERT_EQUAL(ferry__verbs_poll(x, 0, wc, 16, 0), 0);
	}
	CU_ASSERT(F.high <= 8);
	/* a signalled one still reports, after all the others */
	CU_ASSERT_EQUAL(wr_imm(x, 0, 1, 999, FERRY_POST_SIGNALED), 0);
	nic_run(FAKE_MAX);
	CU_ASSERT_EQUAL(ferry__verbs_poll(x, 0, wc, 16, 0), 1);
	CU_ASSERT_EQUAL(wc[0].wr_id, 999);
}

static void test_dp_sq_full(void)
{
	struct ferry_xport *x = fake_x(8);
	struct ferry_wc wc[16];
	uint64_t t0;
	int n;

	for (uint64_t i = 0; i < 8; i++)
		CU_ASSERT_EQUAL(wr_imm(x, 0, 0, i, FERRY_POST_SIGNALED), 0);
	/* the NIC is stuck: the next post waits out the session timeout */
	t0 = ferry__now_ns();
	CU_ASSERT_EQUAL(wr_imm(x, 0, 0, 8, FERRY_POST_SIGNALED), -FERRY_ETIMEOUT);
	CU_ASSERT(ferry__now_ns() - t0 >= 40000000ull);
	CU_ASSERT_EQUAL(F.posted, 8);
	/* it moves: the post gets its slot, nothing is lost or reordered */
	nic_run(8);
	CU_ASSERT_EQUAL(wr_imm(x, 0, 0, 8, FERRY_POST_SIGNALED), 0);
	n = ferry__verbs_poll(x, 0, wc, 16, 0);
	CU_ASSERT_EQUAL(n, 8);
	for (int i = 0; i < n; i++)
		CU_ASSERT(wc[i].op == FERRY_WC_WRITE && wc[i].wr_id == (uint64_t)i);
	nic_run(1);
	CU_ASSERT_EQUAL(ferry__verbs_poll(x, 0, wc, 16, 0), 1);
	CU_ASSERT_EQUAL(wc[0].wr_id, 8);

	/* completions nobody polls fill the ring: -EAGAIN, then fine */
	x = fake_x(4); /* ring of 8 */
	for (uint64_t i = 0; i < 8; i++) {
		CU_ASSERT_EQUAL(wr_imm(x, 0, 0, i, FERRY_POST_SIGNALED), 0);
		nic_run(1);
	}
	CU_ASSERT_EQUAL(wr_imm(x, 0, 0, 8, FERRY_POST_SIGNALED), -EAGAIN);
	CU_ASSERT_EQUAL(ferry__verbs_poll(x, 0, wc, 16, 0), 8);
	CU_ASSERT_EQUAL(wr_imm(x, 0, 0, 8, FERRY_POST_SIGNALED), 0);
}

static void test_dp_send_recv(void)
{
	struct ferry_xport *x = fake_x(8);
	struct ferry_wc wc[4];
	uint8_t msg[FERRY_XPORT_MSG_MAX + 1];

	/* a message goes inline: copied at post time */
	memcpy(msg, "credit-16-bytes!", 16);
	CU_ASSERT_EQUAL(ferry__verbs_post_send(x, 0, msg, 16), 0);
	CU_ASSERT_EQUAL(F.sq[0].wr.opcode, IBV_WR_SEND);
	CU_ASSERT(F.sq[0].wr.send_flags & IBV_SEND_INLINE);
	CU_ASSERT(!memcmp(F.sq[0].data, "credit-16-bytes!", 16));
	CU_ASSERT_EQUAL(ferry__verbs_post_send(x, 0, msg, sizeof(msg)),
			-EMSGSIZE);

	/* a write landed, a message arrived */
	push_recv((struct ibv_wc){ .wr_id = 5, .opcode = IBV_WC_RECV_RDMA_WITH_IMM,
				   .imm_data = htobe32(9), .byte_len = 12288,
				   .wc_flags = IBV_WC_WITH_IMM });
	memcpy(x->rbuf + 2 * FERRY_XPORT_MSG_MAX, "0123456789abcdef", 16);
	push_recv((struct ibv_wc){ .wr_id = 2, .opcode = IBV_WC_RECV,
				   .byte_len = 16 });
	CU_ASSERT_EQUAL(ferry__verbs_poll(x, 0, wc, 4, 0), 2);
	CU_ASSERT(wc[0].op == FERRY_WC_WRITE_IMM && wc[0].imm == 9 &&
		  wc[0].len == 12288 && wc[0].offset == FERRY_WC_OFFSET_UNKNOWN);
	CU_ASSERT(wc[1].op == FERRY_WC_RECV && wc[1].len == 16 &&
		  !memcmp(wc[1].msg, "0123456789abcdef", 16));
	/* both buffers went back to the SRQ, in one chain */
	CU_ASSERT_EQUAL(F.reposted, 2);
	CU_ASSERT(F.repost_id[0] == 5 && F.repost_id[1] == 2);
	CU_ASSERT_EQUAL(F.repost_addr[1],
			(uintptr_t)(x->rbuf + 2 * FERRY_XPORT_MSG_MAX));
	CU_ASSERT_EQUAL(F.repost_lkey, 0x77);
	/* the prebuilt chain is whole again: a batch of one, then of three */
	push_recv((struct ibv_wc){ .wr_id = 7, .opcode = IBV_WC_RECV });
	CU_ASSERT_EQUAL(ferry__verbs_poll(x, 0, wc, 4, 0), 1);
	for (int i = 0; i < 3; i++)
		push_recv((struct ibv_wc){ .wr_id = (uint64_t)i,
					   .opcode = IBV_WC_RECV });
	CU_ASSERT_EQUAL(ferry__verbs_poll(x, 0, wc, 4, 0), 3);
	CU_ASSERT_EQUAL(F.reposted, 6);

	/* something no peer of ours sends: a protocol error, and it sticks */
	push_recv((struct ibv_wc){ .wr_id = 1, .opcode = IBV_WC_RDMA_READ });
	CU_ASSERT_EQUAL(ferry__verbs_poll(x, 0, wc, 4, 0), -FERRY_EPROTO);
	CU_ASSERT_EQUAL(ferry__verbs_post_send(x, 0, msg, 4), -FERRY_EPROTO);
	CU_ASSERT_EQUAL(F.reposted, 7); /* its buffer still went back */
}

/* A sender whose receiver is of the RoCEv2 family but not verbs posts
 * nothing before the receiver's hello; the hello itself reaches nobody. */
static void test_dp_hello(void)
{
	struct ferry_xport *x = fake_x(8);
	struct ferry_wc wc[4];
	uint8_t msg[16] = "credit-16-bytes!";
	uint64_t t0;

	/* it comes while the worker polls: swallowed, the QP is ready */
	FEP.await_hello = true;
	memcpy(x->rbuf + 3 * FERRY_XPORT_MSG_MAX, "ferry roce hello", 16);
	push_recv((struct ibv_wc){ .wr_id = 3, .opcode = IBV_WC_RECV,
				   .byte_len = 16 });
	CU_ASSERT_EQUAL(ferry__verbs_poll(x, 0, wc, 4, 0), 0);
	CU_ASSERT(!FEP.await_hello);
	CU_ASSERT_EQUAL(F.reposted, 1); /* its buffer went back */
	CU_ASSERT_EQUAL(ferry__verbs_post_send(x, 0, msg, 16), 0);

	/* a post waits for it, then goes */
	x = fake_x(8);
	FEP.await_hello = true;
	memcpy(x->rbuf, "ferry roce hello", 16);
	push_recv((struct ibv_wc){ .wr_id = 0, .opcode = IBV_WC_RECV,
				   .byte_len = 16 });
	CU_ASSERT_EQUAL(wr_imm(x, 0, 1, 1, FERRY_POST_SIGNALED), 0);
	CU_ASSERT_EQUAL(F.posted, 1);

	/* none comes: the post gives up after the session timeout */
	x = fake_x(8);
	FEP.await_hello = true;
	t0 = ferry__now_ns();
	CU_ASSERT_EQUAL(wr_imm(x, 0, 1, 1, 0), -FERRY_ETIMEOUT);
	CU_ASSERT(ferry__now_ns() - t0 >= 40000000ull);
	CU_ASSERT_EQUAL(F.posted, 0);

	/* something else comes first: a protocol error, nothing posted */
	x = fake_x(8);
	FEP.await_hello = true;
	memcpy(x->rbuf, "credit-16-bytes!", 16);
	push_recv((struct ibv_wc){ .wr_id = 0, .opcode = IBV_WC_RECV,
				   .byte_len = 16 });
	CU_ASSERT_EQUAL(ferry__verbs_post_send(x, 0, msg, 16), -FERRY_EPROTO);
	CU_ASSERT_EQUAL(ferry__verbs_poll(x, 0, wc, 4, 0), -FERRY_EPROTO);
	x = fake_x(8);
	FEP.await_hello = true;
	push_recv((struct ibv_wc){ .wr_id = 0, .opcode = IBV_WC_RECV_RDMA_WITH_IMM,
				   .byte_len = 4096, .wc_flags = IBV_WC_WITH_IMM });
	CU_ASSERT_EQUAL(ferry__verbs_poll(x, 0, wc, 4, 0), -FERRY_EPROTO);
	CU_ASSERT_EQUAL(F.posted, 0);
}

static void test_dp_errors(void)
{
	struct ferry_xport *x = fake_x(8);
	struct ferry_wc wc[4];
	uint64_t t0;

	/* the receiver's NIC refused the write: out of bounds, and sticky */
	CU_ASSERT_EQUAL(wr_imm(x, 0, 0, 0, FERRY_POST_SIGNALED), 0);
	F.scqe[F.s_tail++] = (struct ibv_wc){ .wr_id = 0,
					      .status = IBV_WC_REM_ACCESS_ERR };
	CU_ASSERT_EQUAL(ferry__verbs_poll(x, 0, wc, 4, 0), -FERRY_EBOUNDS);
	CU_ASSERT_EQUAL(wr_imm(x, 0, 0, 1, 0), -FERRY_EBOUNDS);
	CU_ASSERT_EQUAL(ferry__verbs_poll(x, 0, wc, 4, 0), -FERRY_EBOUNDS);

	/* a flush: the connection went away, or we cancelled */
	x = fake_x(8);
	push_recv((struct ibv_wc){ .wr_id = 3, .status = IBV_WC_WR_FLUSH_ERR });
	CU_ASSERT_EQUAL(ferry__verbs_poll(x, 0, wc, 4, 0), -FERRY_ECLOSED);
	x = fake_x(8);
	atomic_store(&x->cancelled, true);
	CU_ASSERT_EQUAL(ferry__verbs_poll(x, 0, wc, 4, -1), -ECANCELED);
	CU_ASSERT_EQUAL(wr_imm(x, 0, 0, 0, 0), -ECANCELED);

	/* the peer disconnected: poll and posts say so at once */
	x = fake_x(8);
	atomic_store(&x->ep[0].peer_gone, true);
	t0 = ferry__now_ns();
	CU_ASSERT_EQUAL(ferry__verbs_poll(x, 0, wc, 4, 5000), -FERRY_ECLOSED);
	CU_ASSERT(ferry__now_ns() - t0 < 1000000000ull);
	CU_ASSERT_EQUAL(wr_imm(x, 0, 0, 0, 0), -FERRY_ECLOSED);

	/* local checks before anything reaches the NIC */
	x = fake_x(8);
	CU_ASSERT_EQUAL(wr_imm(x, x->rlen - 100, 0, 0, 0), -FERRY_EBOUNDS);
	CU_ASSERT_EQUAL(ferry__verbs_post_write_imm(x, 0, &flmr, fbuf + 4095, 16,
						    0, 0, 0, 0), -EINVAL);
	CU_ASSERT_EQUAL(ferry__verbs_post_write_imm(x, 0, &flmr,
						    fbuf + sizeof(fbuf) - 4104, 16,
						    0, 0, 0, 0), -EINVAL);
	x->max_msg = 4096;
	CU_ASSERT_EQUAL(wr_imm(x, 0, 0, 0, 0), -EMSGSIZE);
	CU_ASSERT_EQUAL(F.posted, 0);

	/* nothing comes: poll waits its timeout, then says 0 */
	x = fake_x(8);
	t0 = ferry__now_ns();
	CU_ASSERT_EQUAL(ferry__verbs_poll(x, 0, wc, 4, 30), 0);
	CU_ASSERT(ferry__now_ns() - t0 >= 30000000ull);
	free(FX.rbuf);
	free(FEP.sig);
	FX.rbuf = NULL;
	FEP.sig = NULL;
}

static void test_ops_table(void)
{
	const struct ferry_xport_ops *o = ferry_xport_find("verbs");
	const struct ferry_xport_ops *const *l = ferry_xport_list();
	size_t iv = SIZE_MAX, it = SIZE_MAX;

	CU_ASSERT_PTR_EQUAL(o, &ferry__xport_verbs);
	if (!o)
		return;
	CU_ASSERT_EQUAL(o->size, sizeof(struct ferry_xport_ops));
	CU_ASSERT_STRING_EQUAL(o->name, "verbs");
	CU_ASSERT(o->probe && o->open && o->reg_mem && o->dereg_mem &&
		  o->listen && o->accept && o->connect && o->post_write_imm &&
		  o->post_send && o->poll && o->cancel && o->close);
	o->close(NULL);
	for (size_t i = 0; l[i]; i++) {
		if (l[i] == o)
			iv = i;
		if (!strcmp(l[i]->name, "tcp"))
			it = i;
	}
	CU_ASSERT(iv < it); /* listed before the tcp fallback */
}

static void test_open_here(void)
{
	struct ferry_xport_attr a = { .n_ep = 1, .timeout_ms = 1000,
				      .conf = &conf };
	struct sockaddr_in *sin = (struct sockaddr_in *)&a.addr;
	struct ferry_xport *x = NULL;
	char why[256] = "";
	int r;

	a.n_ep = 0;
	CU_ASSERT_EQUAL(ferry__xport_verbs.open(&a, &x, why, sizeof(why)),
			-EINVAL);
	a.n_ep = FERRY__VERBS_MAX_EP + 1;
	CU_ASSERT_EQUAL(ferry__xport_verbs.open(&a, &x, why, sizeof(why)),
			-EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "queue pairs"));
	a.n_ep = 1;
	a.dscp = FERRY_DSCP_MAX + 1;
	CU_ASSERT_EQUAL(ferry__xport_verbs.open(&a, &x, why, sizeof(why)),
			-EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "DSCP 64"));
	a.dscp = -1;
	if (host_has_rdma())
		return; /* verbs_e2e.sh covers a host with a device */
	a.n_ep = 2;
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.addr_len = sizeof(*sin);
	why[0] = '\0';
	r = ferry__xport_verbs.open(&a, &x, why, sizeof(why));
	CU_ASSERT_EQUAL(r, -FERRY_ENOXPORT);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "no RDMA device"));
	CU_ASSERT_PTR_NULL(x);
}

int main(void)
{
	CU_TestInfo tests[] = {
		{ "netdev -> RDMA device", test_dev_of_netdev },
		{ "RDMA device -> netdev", test_netdev_of_dev },
		{ "device list", test_dev_list },
		{ "device selection", test_pick_dev },
		{ "GID index and MAC for a RoCEv2 peer", test_gid_mac },
		{ "ACK timeout for RTT", test_ack_timeout },
		{ "traffic class of a DSCP", test_tclass },
		{ "private data round trip", test_priv_roundtrip },
		{ "private data malformed", test_priv_malformed },
		{ "endpoint blob", test_blob },
		{ "duplex description", test_duplex },
		{ "error conversion", test_errors },
		{ "locked-memory check", test_memlock },
		{ "probe on this host", test_probe_here },
		{ "datapath: writes and signalling", test_dp_write },
		{ "datapath: full send queue", test_dp_sq_full },
		{ "datapath: messages and receives", test_dp_send_recv },
		{ "datapath: the hello of a RoCEv2 receiver", test_dp_hello },
		{ "datapath: errors", test_dp_errors },
		{ "ops table", test_ops_table },
		{ "open on this host", test_open_here },
		CU_TEST_INFO_NULL,
	};

	return ferry_cu_run("verbs", tests);
}

#else /* no libibverbs / librdmacm headers: the transport is not built */

int main(void)
{
	fprintf(stderr,
		"SKIP: libibverbs/librdmacm development files are not installed, so this build has no verbs transport\n");
	return 77;
}

#endif
