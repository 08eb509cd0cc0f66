/* RDMA devices: ports up, GIDs (RoCE v2 for Ethernet), and the RoCE MTU
 * that follows the netdev's MTU. */
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "doctor_int.h"

#define MAX_GIDS 256
#define IB_MTU_MAX 4096

struct port {
	const char *dev;
	const char *port;
	char ll[32];      /* link_layer: "Ethernet", "InfiniBand" */
	char ndev[FERRY__DOCTOR_NAME]; /* the netdev the port's GIDs use */
	bool no_active;   /* named by the user, and no port is ACTIVE */
	bool no_gid;      /* named by the user, and no port has a GID */
};

/* "4: ACTIVE" -> "ACTIVE". */
static const char *after_colon(const char *s)
{
	const char *p = strchr(s, ':');

	if (!p)
		return s;
	for (p++; *p == ' '; p++)
		;
	return p;
}

static bool port_active(const struct ferry__doctor *d, const char *dev,
			const char *port)
{
	char st[32];

	return !ferry__doctor_read(d, st, sizeof(st),
				   "sys/class/infiniband/%s/ports/%s/state", dev,
				   port) &&
	       !strcmp(after_colon(st), "ACTIVE");
}

/* A GID table entry in use is not all zeros. */
static bool gid_used(const char *gid)
{
	for (; *gid; gid++)
		if (isxdigit((unsigned char)*gid) && *gid != '0')
			return true;
	return false;
}

/* Whether the port's GID table has an entry in use. */
static bool port_has_gid(const struct ferry__doctor *d, const char *dev,
			 const char *port)
{
	char gid[64];

	for (int i = 0; i < MAX_GIDS; i++) {
		if (ferry__doctor_read(d, gid, sizeof(gid),
				       "sys/class/infiniband/%s/ports/%s/gids/%d",
				       dev, port, i))
			return false;
		if (gid_used(gid))
			return true;
	}
	return false;
}

static void state(struct ferry__doctor *d, struct port *p)
{
	char st[32] = "?", phys[32] = "?";
	enum ferry_check_status s = FERRY_CHECK_PASS;
	const char *ifname = p->ndev[0] ? p->ndev : "IF";
	struct ferry_check *c;

	ferry__doctor_read(d, st, sizeof(st),
			   "sys/class/infiniband/%s/ports/%s/state", p->dev,
			   p->port);
	ferry__doctor_read(d, phys, sizeof(phys),
			   "sys/class/infiniband/%s/ports/%s/phys_state",
			   p->dev, p->port);
	if (strcmp(after_colon(st), "ACTIVE"))
		s = p->no_active ? FERRY_CHECK_FAIL : FERRY_CHECK_WARN;
	c = ferry__doctor_add(d, s, "%s/%s state", p->dev, p->port);
	ferry__doctor_value(c, "%s, %s (phys %s)", after_colon(st),
			    p->ll[0] ? p->ll : "unknown link layer",
			    after_colon(phys));
	if (s == FERRY_CHECK_PASS)
		return;
	if (!strcmp(after_colon(st), "INIT") && !strcmp(p->ll, "InfiniBand"))
		ferry__doctor_fix(c, "the port waits for a subnet manager: start opensm on one host of the fabric");
	else
		ferry__doctor_fix(c, "ip link set %s up; check the cable, transceiver and switch port (ibstat %s)",
				  ifname, p->dev);
}

static void gids(struct ferry__doctor *d, struct port *p)
{
	char (*idx)[FERRY__DOCTOR_NAME] = calloc(MAX_GIDS, sizeof(*idx));
	bool eth = !strcmp(p->ll, "Ethernet");
	int n, used = 0, v2 = 0;
	char v2list[64] = "", other[96];
	struct ferry_check *c;
	bool have_ndev = false;
	size_t off = 0;

	n = idx ? ferry__doctor_list(d, idx, MAX_GIDS,
				     "sys/class/infiniband/%s/ports/%s/gids",
				     p->dev, p->port)
		: 0;
	for (int i = 0; i < n; i++) {
		char gid[64], type[32], ndev[FERRY__DOCTOR_NAME];

		if (ferry__doctor_read(d, gid, sizeof(gid),
				       "sys/class/infiniband/%s/ports/%s/gids/%s",
				       p->dev, p->port, idx[i]) ||
		    !gid_used(gid))
			continue;
		used++;
		/* The GID's own netdev is the port's, exactly. */
		if (!have_ndev &&
		    !ferry__doctor_read(d, ndev, sizeof(ndev),
					"sys/class/infiniband/%s/ports/%s/gid_attrs/ndevs/%s",
					p->dev, p->port, idx[i]) &&
		    ndev[0] && !strchr(ndev, '/')) {
			memcpy(p->ndev, ndev, sizeof(ndev));
			have_ndev = true;
		}
		if (ferry__doctor_read(d, type, sizeof(type),
				       "sys/class/infiniband/%s/ports/%s/gid_attrs/types/%s",
				       p->dev, p->port, idx[i]) ||
		    strcasecmp(type, "RoCE v2"))
			continue;
		if (v2++ < 8 && off < sizeof(v2list))
			off += (size_t)snprintf(v2list + off,
						sizeof(v2list) - off, "%s%s",
						off ? ", " : "", idx[i]);
	}
	free(idx);

	if (!used) {
		c = ferry__doctor_add(d, p->no_gid ? FERRY_CHECK_FAIL
						   : FERRY_CHECK_WARN,
				      "%s/%s gid", p->dev, p->port);
		if (eth) {
			ferry__doctor_value(c, "no GID: %s has no IP address",
					    p->ndev[0] ? p->ndev : "its netdev");
			ferry__doctor_fix(c, "ip addr add ADDR/PREFIX dev %s (RoCE GIDs follow the netdev's IP addresses)",
					  p->ndev[0] ? p->ndev : "IF");
		} else {
			ferry__doctor_value(c, "no GID in the port's table");
			ferry__doctor_fix(c, "the port needs a subnet manager: start opensm on one host of the fabric");
		}
		return;
	}
	if (!eth) {
		c = ferry__doctor_add(d, FERRY_CHECK_PASS, "%s/%s gid", p->dev,
				      p->port);
		ferry__doctor_value(c, "%d GIDs (%s)", used,
				    p->ll[0] ? p->ll : "unknown link layer");
		return;
	}
	c = ferry__doctor_add(d, v2 ? FERRY_CHECK_PASS : FERRY_CHECK_WARN,
			      "%s/%s gid", p->dev, p->port);
	if (v2) {
		ferry__doctor_value(c, "%d GIDs, %d RoCE v2 (index %s%s)", used,
				    v2, v2list, v2 > 8 ? ", ..." : "");
		return;
	}
	ferry__doctor_value(c, "%d GIDs, none RoCE v2 (UDP/IP, routable)", used);
	ferry__doctor_xports(other, sizeof(other), FERRY_XPORT_NEEDS_RDMA, 0,
			     0);
	ferry__doctor_fix(c, "RoCE v2 needs ConnectX-4 or newer (ConnectX-3 Pro with current firmware); update firmware and driver, or use --transport %s",
			  other);
}

/* The RoCE path MTU follows the netdev MTU less the RoCE headers (GRH 40,
 * UDP 8, BTH 12, extended headers 32, ICRC 4: the kernel's iboe_get_mtu),
 * rounded down to an IB MTU. */
static int roce_mtu(long mtu)
{
	long room = mtu - 96;
	int ib = IB_MTU_MAX;

	while (ib > 256 && room < ib)
		ib /= 2;
	return room < 256 ? 0 : ib;
}

static void mtu(struct ferry__doctor *d, const struct port *p)
{
	struct ferry_check *c;
	long m;
	int ib;

	if (!p->ndev[0] ||
	    ferry__doctor_long(d, &m, "sys/class/net/%s/mtu", p->ndev)) {
		c = ferry__doctor_add(d, FERRY_CHECK_INFO, "%s/%s roce mtu",
				      p->dev, p->port);
		ferry__doctor_value(c, "no netdev found for the port: RoCE MTU unknown");
		return;
	}
	ib = roce_mtu(m);
	c = ferry__doctor_add(d, ib == IB_MTU_MAX ? FERRY_CHECK_PASS
						  : FERRY_CHECK_WARN,
			      "%s/%s roce mtu", p->dev, p->port);
	ferry__doctor_value(c, "%s mtu %ld -> RoCE MTU %d%s", p->ndev, m, ib,
			    ib == IB_MTU_MAX ? "" : " (4096 wanted)");
	if (ib != IB_MTU_MAX)
		ferry__doctor_fix(c, "ip link set %s mtu 9000 (RoCE MTU 4096 needs >= 4200; every switch on the path must pass jumbo frames)",
				  p->ndev);
}

static void device(struct ferry__doctor *d, const char *dev)
{
	char ports[16][FERRY__DOCTOR_NAME], nets[4][FERRY__DOCTOR_NAME];
	int np = ferry__doctor_list(d, ports, 16, "sys/class/infiniband/%s/ports",
				    dev);
	int nn = ferry__doctor_ib_netdevs(d, dev, nets, 4);
	bool any_active = false, any_gid = false;

	for (int i = 0; i < np; i++) {
		any_active |= port_active(d, dev, ports[i]);
		any_gid |= port_has_gid(d, dev, ports[i]);
	}
	for (int i = 0; i < np; i++) {
		/* Named by the user and no port can carry traffic: FAIL. */
		struct port p = {
			.dev = dev,
			.port = ports[i],
			.no_active = d->netdev && !any_active,
			.no_gid = d->netdev && !any_gid,
		};

		ferry__doctor_read(d, p.ll, sizeof(p.ll),
				   "sys/class/infiniband/%s/ports/%s/link_layer",
				   dev, ports[i]);
		/* mlx4 lists one netdev per port; mlx5 one per device. */
		if (nn > 0)
			memcpy(p.ndev, nets[i < nn ? i : 0], sizeof(p.ndev));
		state(d, &p);
		gids(d, &p);
		if (!strcmp(p.ll, "Ethernet"))
			mtu(d, &p);
	}
	if (np <= 0) {
		struct ferry_check *c = ferry__doctor_add(d, FERRY_CHECK_WARN,
							  "%s ports", dev);

		ferry__doctor_value(c, "no ports in sysfs");
		ferry__doctor_fix(c, "reload the driver (modprobe -r mlx5_ib; modprobe mlx5_ib) and see dmesg");
	}
}

/* The first checked netdev whose driver can do RDMA, whose RDMA half
 * (mlx5_ib for mlx5_core, ...) is then missing; its driver in drv. The
 * netdev drivers of the kernel's RDMA providers (drivers/infiniband/hw). */
static const char *rdma_capable_nic(const struct ferry__doctor *d, char *drv,
				    size_t len)
{
	static const char *const capable[] = {
		"mlx5_core", "mlx4_en", "bnxt_en", "ice", "i40e", "qede",
		"hns3", "be2net", "ionic",
	};
	char path[PATH_MAX + 64], link[PATH_MAX];

	for (size_t i = 0; i < d->nnics; i++) {
		snprintf(path, sizeof(path), "%s/sys/class/net/%s/device/driver",
			 d->root, d->nics[i]);
		ssize_t n = readlink(path, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		const char *base = strrchr(link, '/');
		base = base ? base + 1 : link;
		for (size_t k = 0; k < sizeof(capable) / sizeof(capable[0]); k++)
			if (!strcmp(base, capable[k])) {
				snprintf(drv, len, "%s", capable[k]);
				return d->nics[i];
			}
	}
	return NULL;
}

/* No RDMA device: which transports do without one, and what the others
 * (and those that need nothing) ask for. A WARN only where a NIC could
 * do RDMA and its RDMA driver is missing; otherwise it is how this host
 * is, and tcp (or uroce) the path meant. */
static void no_device(struct ferry__doctor *d)
{
	char drv[64];
	const char *nic = rdma_capable_nic(d, drv, sizeof(drv));
	struct ferry_check *c = ferry__doctor_add(
		d, nic ? FERRY_CHECK_WARN : FERRY_CHECK_INFO, "rdma");
	char other[96], rdma[96], plain[96], fix[sizeof(c->fix)] = "";
	size_t n;

	ferry__doctor_xports(other, sizeof(other), FERRY_XPORT_NEEDS_RDMA, 0,
			     FERRY__DX_RUNS_ON);
	if (nic)
		ferry__doctor_value(c, "no RDMA device, though %s's driver %s has one: ferry will use %s",
				    nic, drv, other);
	else if (d->netdev && d->any_ib)
		ferry__doctor_value(c, "no RDMA device on %s: ferry will use %s",
				    d->netdev, other);
	else
		ferry__doctor_value(c, "no RDMA device: ferry will use %s",
				    other);
	if (ferry__doctor_xports(rdma, sizeof(rdma), FERRY_XPORT_NEEDS_RDMA,
				 FERRY_XPORT_NEEDS_RDMA, FERRY__DX_AND))
		snprintf(fix, sizeof(fix), "for %s: ", rdma);
	n = ferry__doctor_xports(plain, sizeof(plain), ~0u, 0,
				 FERRY__DX_AND | FERRY__DX_PLAIN);
	ferry__doctor_fix(c, "%sload the NIC's RDMA driver (modprobe mlx5_ib) and install rdma-core%s%s%s",
			  fix, n ? "; " : "", plain,
			  n > 1 ? " need nothing" : n ? " needs nothing" : "");
}

void ferry__doctor_rdma(struct ferry__doctor *d)
{
	struct ferry_check *c;
	size_t off = 0;

	if (!d->nib) {
		no_device(d);
		return;
	}
	c = ferry__doctor_add(d, FERRY_CHECK_PASS, "rdma");
	for (size_t i = 0; i < d->nib && off < sizeof(c->value); i++) {
		char nets[4][FERRY__DOCTOR_NAME];
		int n = ferry__doctor_ib_netdevs(d, d->ibdevs[i], nets, 4);

		off += (size_t)snprintf(c->value + off, sizeof(c->value) - off,
					"%s%s (%s)", i ? ", " : "",
					d->ibdevs[i], n > 0 ? nets[0] : "no netdev");
	}
	for (size_t i = 0; i < d->nib; i++)
		device(d, d->ibdevs[i]);
}
