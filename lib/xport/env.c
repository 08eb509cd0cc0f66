/* The environment, read in one place: the user-facing variables that set
 * a transport's defaults (ferry_xport_conf_init), and the test builds'
 * fault hooks (ferry__env_hook). Nothing else in libferry reads or sets
 * the environment; options reach a transport as typed settings
 * (struct ferry_xport_conf, include/ferry/xport.h).
 *
 *   FERRY_DPDK          uroce: DPDK EAL arguments (docs/uroce.md)
 *   FERRY_UROCE_IP      uroce: this end's IPv4 in the frames
 *   FERRY_UROCE_MTU     uroce: cap on the path MTU
 *   FERRY_UROCE_WINDOW  uroce: packets in flight per queue pair, fixed
 *   FERRY_UROCE_TX=copy uroce: no zero-copy transmit
 *   FERRY_UROCE_TX=ring uroce: af_packet transmits through the PMD's ring
 *   FERRY_UROCE_MAC=kernel uroce: the interface's Ethernet address even
 *                       on a veth
 *   FERRY_VERBS_DEVICE  verbs: the RDMA device or netdev (docs/verbs.md)
 *   FERRY_VERBS_RTT_MS  verbs: the round trip the ACK timeout plans for
 *   FERRY_TCP_FIT=0     tcp: a receiver's windows are the kernel's, not
 *                       held to the rate each stream carries
 *
 * The command-line options (--dpdk, --uroce-ip, --sockbuf) override them.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ferry/xport.h"
#include "xport/env.h"

static const char *text(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

static unsigned number(const char *name)
{
	const char *v = text(name);

	return v ? (unsigned)strtoul(v, NULL, 10) : 0;
}

/* A number of milliseconds, 0 .. 100000; NaN for anything else, which
 * the transport warns about. */
static double millis(const char *name, double dflt)
{
	const char *v = text(name);
	char *end;
	double d;

	if (!v)
		return dflt;
	d = strtod(v, &end);
	return *end || !(d >= 0 && d <= 100000) ? NAN : d;
}

void ferry_xport_conf_init(struct ferry_xport_conf *c)
{
	const char *tx = text("FERRY_UROCE_TX");
	const char *fit = text("FERRY_TCP_FIT");
	const char *mac = text("FERRY_UROCE_MAC");

	memset(c, 0, sizeof(*c));
	c->uroce.eal = text("FERRY_DPDK");
	c->uroce.ip = text("FERRY_UROCE_IP");
	c->uroce.mtu = number("FERRY_UROCE_MTU");
	c->uroce.window = number("FERRY_UROCE_WINDOW");
	c->uroce.tx_copy = tx && strcmp(tx, "copy") == 0;
	c->uroce.tx_ring = tx && strcmp(tx, "ring") == 0;
	c->uroce.kernel_mac = mac && strcmp(mac, "kernel") == 0;
	c->verbs.device = text("FERRY_VERBS_DEVICE");
	c->verbs.rtt_ms = millis("FERRY_VERBS_RTT_MS", -1);
	c->tcp.kernel_windows = fit && strcmp(fit, "0") == 0;
}

const char *ferry__env_hook(const char *name)
{
	return text(name);
}
