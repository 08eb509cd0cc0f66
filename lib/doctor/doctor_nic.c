/* One NIC: link state, MTU, NUMA node, PCIe link, then its IRQs. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "doctor_int.h"
#include "ferry/topo.h"
#include "topo/topo_int.h"

static const char *speed_str(char *buf, size_t len, long mbps)
{
	if (mbps >= 1000)
		snprintf(buf, len, "%g Gb/s", (double)mbps / 1000);
	else
		snprintf(buf, len, "%ld Mb/s", mbps);
	return buf;
}

static void link_state(struct ferry__doctor *d, const char *ifname)
{
	bool named = d->netdev && !strcmp(d->netdev, ifname);
	char op[32], sp[32] = "speed unknown";
	struct ferry_check *c;
	long mbps;

	if (ferry__doctor_read(d, op, sizeof(op), "sys/class/net/%s/operstate",
			       ifname)) {
		c = ferry__doctor_add(d, FERRY_CHECK_INFO, "%s link", ifname);
		ferry__doctor_value(c, "operstate unreadable");
		return;
	}
	if (!ferry__doctor_long(d, &mbps, "sys/class/net/%s/speed", ifname) &&
	    mbps > 0)
		speed_str(sp, sizeof(sp), mbps);
	if (!strcmp(op, "up")) {
		c = ferry__doctor_add(d, FERRY_CHECK_PASS, "%s link", ifname);
		ferry__doctor_value(c, "up, %s", sp);
	} else if (!strcmp(op, "unknown")) {
		c = ferry__doctor_add(d, FERRY_CHECK_INFO, "%s link", ifname);
		ferry__doctor_value(c, "operstate unknown (the driver does not say), %s",
				    sp);
	} else {
		c = ferry__doctor_add(d, named ? FERRY_CHECK_FAIL
					       : FERRY_CHECK_WARN,
				      "%s link", ifname);
		ferry__doctor_value(c, "%s", op);
		ferry__doctor_fix(c, "ip link set %s up; check the cable, transceiver and switch port",
				  ifname);
	}
}

/* Jumbo frames for a NIC without RDMA (a RoCE NIC's MTU is checked with
 * its port). */
static void jumbo(struct ferry__doctor *d, const char *ifname)
{
	struct ferry_check *c;
	long mtu;

	if (ferry__doctor_long(d, &mtu, "sys/class/net/%s/mtu", ifname))
		return;
	c = ferry__doctor_add(d, mtu >= 9000 ? FERRY_CHECK_PASS
					     : FERRY_CHECK_WARN,
			      "%s mtu", ifname);
	if (mtu >= 9000) {
		ferry__doctor_value(c, "%ld (jumbo frames)", mtu);
		return;
	}
	ferry__doctor_value(c, "%ld: no jumbo frames (9000 carries ~6x the bytes per packet)",
			    mtu);
	ferry__doctor_fix(c, "ip link set %s mtu 9000 (every hop of the path must pass jumbo frames)",
			  ifname);
}

static int host_nodes(const struct ferry__doctor *d)
{
	char names[64][FERRY__DOCTOR_NAME];
	int n = ferry__doctor_list(d, names, 64, "sys/devices/system/node");
	int nodes = 0;

	for (int i = 0; i < n; i++)
		nodes += !strncmp(names[i], "node", 4) &&
			 names[i][4] >= '0' && names[i][4] <= '9';
	return nodes;
}

static int numa(struct ferry__doctor *d, const char *ifname)
{
	int *cpus = calloc(FERRY_TOPO_MAX_CPUS, sizeof(*cpus));
	char why[160], list[96];
	int node, n, nodes;
	struct ferry_check *c;

	node = ferry__topo_dev_node(d->sys, "net", ifname, why, sizeof(why));
	if (node >= 0) {
		c = ferry__doctor_add(d, FERRY_CHECK_PASS, "%s numa", ifname);
		n = cpus ? ferry_topo_node_cpus(d->sys, node, cpus,
						FERRY_TOPO_MAX_CPUS)
			 : -ENOMEM;
		if (n > 0) {
			ferry__cpulist_format(cpus, n, list, sizeof(list));
			ferry__doctor_value(c, "node %d (cpus %s)", node, list);
		} else {
			ferry__doctor_value(c, "node %d (its cpu list: %s)", node,
					    ferry_strerror(n ? n : -ENOENT));
		}
		free(cpus);
		return node;
	}
	free(cpus);
	nodes = host_nodes(d);
	if (nodes > 1) {
		c = ferry__doctor_add(d, FERRY_CHECK_WARN, "%s numa", ifname);
		ferry__doctor_value(c, "unknown on a %d-node host: %s %s", nodes,
				    ifname, why);
		ferry__doctor_fix(c, "enable NUMA (ACPI SRAT) in the BIOS, or give ferry --numa N --cpus LIST of the NIC's socket");
	} else {
		c = ferry__doctor_add(d, FERRY_CHECK_INFO, "%s numa", ifname);
		ferry__doctor_value(c, "unknown: %s %s; single node or virtual machine",
				    ifname, why);
	}
	return -1;
}

struct pcie {
	double gts;  /* GT/s per lane */
	long width;
};

static bool pcie_read(const struct ferry__doctor *d, const char *rel,
		      const char *which, struct pcie *p)
{
	char buf[64], *end;

	if (ferry__doctor_read(d, buf, sizeof(buf), "%s/%s_link_speed", rel,
			       which))
		return false;
	p->gts = strtod(buf, &end);
	if (end == buf || p->gts <= 0 ||
	    ferry__doctor_long(d, &p->width, "%s/%s_link_width", rel, which) ||
	    p->width <= 0)
		return false;
	return true;
}

/* Payload bandwidth of a link in Gb/s: 8b/10b coding below 8 GT/s,
 * 128b/130b from Gen3 on; TLP headers take a little more. */
static double pcie_gbps(const struct pcie *p)
{
	return p->gts * (double)p->width * (p->gts >= 8 ? 128.0 / 130 : 0.8);
}

static void pcie(struct ferry__doctor *d, const char *ifname)
{
	struct pcie cur, max;
	char rel[PATH_MAX], port[32];
	struct ferry_check *c;
	double usable;
	long mbps = 0;

	if (ferry__doctor_pcidir(d, ifname, rel, sizeof(rel)) ||
	    !pcie_read(d, rel, "current", &cur)) {
		c = ferry__doctor_add(d, FERRY_CHECK_INFO, "%s pcie", ifname);
		ferry__doctor_value(c, "no PCIe link information (virtual NIC?)");
		return;
	}
	usable = pcie_gbps(&cur);
	if (ferry__doctor_long(d, &mbps, "sys/class/net/%s/speed", ifname) ||
	    mbps <= 0) {
		c = ferry__doctor_add(d, FERRY_CHECK_INFO, "%s pcie", ifname);
		ferry__doctor_value(c, "%g GT/s x%ld = %.0f Gb/s; port speed unknown (link down?)",
				    cur.gts, cur.width, usable);
	} else if (usable * 1000 < (double)mbps) {
		c = ferry__doctor_add(d, FERRY_CHECK_WARN, "%s pcie", ifname);
		ferry__doctor_value(c, "%g GT/s x%ld = %.0f Gb/s, below the %s port",
				    cur.gts, cur.width, usable,
				    speed_str(port, sizeof(port), mbps));
		ferry__doctor_fix(c, "move the NIC to a faster slot (x16, Gen4 for 200G, Gen5 for 400G); see lspci -vv LnkCap/LnkSta");
	} else {
		c = ferry__doctor_add(d, FERRY_CHECK_PASS, "%s pcie", ifname);
		ferry__doctor_value(c, "%g GT/s x%ld = %.0f Gb/s for a %s port",
				    cur.gts, cur.width, usable,
				    speed_str(port, sizeof(port), mbps));
	}
	if (!pcie_read(d, rel, "max", &max))
		return;
	if (cur.gts < max.gts || cur.width < max.width) {
		c = ferry__doctor_add(d, FERRY_CHECK_WARN, "%s pcie link", ifname);
		ferry__doctor_value(c, "running %g GT/s x%ld, the card can do %g GT/s x%ld",
				    cur.gts, cur.width, max.gts, max.width);
		ferry__doctor_fix(c, "reseat the card or use a slot wired x%ld; check the BIOS slot speed and bifurcation settings",
				  max.width);
	} else {
		c = ferry__doctor_add(d, FERRY_CHECK_PASS, "%s pcie link", ifname);
		ferry__doctor_value(c, "%g GT/s x%ld, the card's maximum", cur.gts,
				    cur.width);
	}
}

void ferry__doctor_nic(struct ferry__doctor *d, const char *ifname)
{
	int node;

	link_state(d, ifname);
	if (!ferry__doctor_has_ib(d, ifname))
		jumbo(d, ifname);
	node = numa(d, ifname);
	pcie(d, ifname);
	ferry__doctor_irq(d, ifname, node);
}
