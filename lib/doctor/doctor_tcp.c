/* TCP sysctls: socket buffers against the bandwidth-delay product, the
 * congestion control, and the knobs STUDIES.md A found mattered. */
#include <string.h>

#include "doctor_int.h"
#include "ferry/session.h"
#include "xport/tcp/tcp_plan.h"

/* The bytes one socket must buffer: the BDP, up to TCP's largest window. */
static uint64_t per_socket(const struct ferry__doctor *d)
{
	return d->bdp < FERRY__DOCTOR_TCP_MAX_WIN ? d->bdp
						  : FERRY__DOCTOR_TCP_MAX_WIN;
}

/* The sysctl value to suggest: a power of two that holds need. */
static unsigned long long suggest(uint64_t need)
{
	unsigned long long v = 4ull << 20;

	while (v < need)
		v <<= 1;
	return v;
}

static void core_max(struct ferry__doctor *d, const char *name)
{
	uint64_t need = per_socket(d);
	char b1[32], b2[32];
	struct ferry_check *c;
	long v;

	if (ferry__doctor_long(d, &v, "proc/sys/net/core/%s", name)) {
		c = ferry__doctor_add(d, FERRY_CHECK_INFO, "net.core.%s", name);
		ferry__doctor_value(c, "unreadable (proc/sys/net/core/%s)", name);
		return;
	}
	ferry__bytes_str(b1, sizeof(b1), (double)v);
	ferry__bytes_str(b2, sizeof(b2), (double)need);
	if (v >= 0 && (uint64_t)v >= need) {
		c = ferry__doctor_add(d, FERRY_CHECK_PASS, "net.core.%s", name);
		ferry__doctor_value(c, "%s, holds the %s per socket", b1, b2);
		return;
	}
	c = ferry__doctor_add(d, FERRY_CHECK_WARN, "net.core.%s", name);
	ferry__doctor_value(c, "%s, below the %s per socket: --sockbuf is capped here",
			    b1, b2);
	ferry__doctor_fix(c, "sysctl -w net.core.%s=%llu (and in /etc/sysctl.d/ to keep it)",
			  name, suggest(need));
}

static void tcp_mem(struct ferry__doctor *d, const char *name)
{
	uint64_t need = per_socket(d);
	char buf[96], b1[32], b2[32];
	struct ferry_check *c;
	long lo, def, max;

	if (ferry__doctor_read(d, buf, sizeof(buf), "proc/sys/net/ipv4/%s",
			       name) ||
	    sscanf(buf, "%ld %ld %ld", &lo, &def, &max) != 3) {
		c = ferry__doctor_add(d, FERRY_CHECK_INFO, "net.ipv4.%s", name);
		ferry__doctor_value(c, "unreadable (proc/sys/net/ipv4/%s)", name);
		return;
	}
	ferry__bytes_str(b1, sizeof(b1), (double)max);
	ferry__bytes_str(b2, sizeof(b2), (double)need);
	if (max >= 0 && (uint64_t)max >= need) {
		c = ferry__doctor_add(d, FERRY_CHECK_PASS, "net.ipv4.%s", name);
		ferry__doctor_value(c, "max %s, holds the %s per socket", b1, b2);
		return;
	}
	c = ferry__doctor_add(d, FERRY_CHECK_WARN, "net.ipv4.%s", name);
	ferry__doctor_value(c, "max %s, below the %s per socket: autotuning stops short",
			    b1, b2);
	ferry__doctor_fix(c, "sysctl -w net.ipv4.%s='%ld %ld %llu' (and in /etc/sysctl.d/)",
			  name, lo, def, suggest(need));
}

static void congestion(struct ferry__doctor *d)
{
	char cc[32], avail[256] = "";
	struct ferry_check *c;
	bool have_bbr;

	if (ferry__doctor_read(d, cc, sizeof(cc),
			       "proc/sys/net/ipv4/tcp_congestion_control")) {
		c = ferry__doctor_add(d, FERRY_CHECK_INFO, "net.ipv4.tcp_congestion_control");
		ferry__doctor_value(c, "unreadable");
		return;
	}
	if (!strncmp(cc, "bbr", 3)) {
		c = ferry__doctor_add(d, FERRY_CHECK_PASS, "net.ipv4.tcp_congestion_control");
		ferry__doctor_value(c, "%s", cc);
		return;
	}
	ferry__doctor_read(d, avail, sizeof(avail),
			   "proc/sys/net/ipv4/tcp_available_congestion_control");
	have_bbr = strstr(avail, "bbr") != NULL;
	if (!strcmp(cc, "cubic") || !strcmp(cc, "htcp")) {
		c = ferry__doctor_add(d, FERRY_CHECK_INFO, "net.ipv4.tcp_congestion_control");
		ferry__doctor_value(c, "%s: fine on clean paths; after a loss on a long path it regrows slowly (BBR does not)",
				    cc);
	} else {
		c = ferry__doctor_add(d, FERRY_CHECK_WARN, "net.ipv4.tcp_congestion_control");
		ferry__doctor_value(c, "%s: halves the window per loss and regrows by one segment per RTT",
				    cc);
	}
	ferry__doctor_fix(c, "%ssysctl -w net.ipv4.tcp_congestion_control=bbr (what STUDIES.md A ran at 400G)",
			  have_bbr ? "" : "modprobe tcp_bbr; ");
}

static void flag(struct ferry__doctor *d, const char *name, long good,
		 enum ferry_check_status bad, const char *why)
{
	struct ferry_check *c;
	long v;

	if (ferry__doctor_long(d, &v, "proc/sys/net/ipv4/%s", name)) {
		c = ferry__doctor_add(d, FERRY_CHECK_INFO, "net.ipv4.%s", name);
		ferry__doctor_value(c, "unreadable");
		return;
	}
	if (good ? v >= good : v == good) {
		c = ferry__doctor_add(d, FERRY_CHECK_PASS, "net.ipv4.%s", name);
		ferry__doctor_value(c, "%ld", v);
		return;
	}
	c = ferry__doctor_add(d, bad, "net.ipv4.%s", name);
	ferry__doctor_value(c, "%ld: %s", v, why);
	ferry__doctor_fix(c, "sysctl -w net.ipv4.%s=%ld", name, good);
}

/* The streams this path needs with the buffers this host allows (the
 * same at both ends): what each session plans by itself (lib/pipe/path.h)
 * unless -P is given, and whether the sysctls would let fewer do. */
static void plan(struct ferry__doctor *d)
{
	struct ferry__tcp_limits l;
	struct ferry__tcp_plan p;
	struct ferry_check *c;

	ferry__tcp_limits_read(d->root, &l);
	ferry__tcp_plan(d->rtt_ms / 1e3, d->rate_gbps * 1e9, &l, &l, 0, 0, 0,
			&p);
	if (p.covered < p.bdp) {
		c = ferry__doctor_add(d, FERRY_CHECK_WARN, "tcp streams");
		ferry__doctor_value(c, "%s; ferry opens these by itself, and they fall short",
				    p.why);
		ferry__doctor_fix(c, "raise the buffer sysctls above, or give ferry CAP_NET_ADMIN on both hosts");
	} else if (p.streams > FERRY_DEFAULT_STREAMS &&
		   p.reach < FERRY__PLAN_MAX_WINDOW) {
		c = ferry__doctor_add(d, FERRY_CHECK_INFO, "tcp streams");
		ferry__doctor_value(c, "%s; ferry opens %u streams by itself on this path (no -P needed)",
				    p.why, p.streams);
		ferry__doctor_fix(c, "the buffer sysctls above would let %d streams do (with -b %g; without -b, ferry plans for the NIC's speed, starts 4 of those streams and adds more while each adds goodput)",
				  FERRY_DEFAULT_STREAMS, d->rate_gbps);
	} else {
		c = ferry__doctor_add(d, FERRY_CHECK_PASS, "tcp streams");
		ferry__doctor_value(c, "%s; ferry opens %u streams by itself on this path",
				    p.why, p.streams);
	}
}

/* Round trips of slow start until streams of first bytes each, doubling
 * every round trip, hold bdp together. */
static unsigned doublings(uint64_t bdp, double first)
{
	unsigned k = 0;

	for (double w = first; w < (double)bdp && k < 64; w *= 2)
		k++;
	return k;
}

/* The first seconds of a session on this path: four round trips of setup
 * (the control connection, authentication, the plan, the data streams'
 * connections) before data flows, then TCP's slow start from ten segments
 * per stream (RFC 6928), doubling each round trip until the streams a
 * session starts with hold the BDP together. The first window is the
 * route's (initcwnd at the sender, initrwnd at the receiver); ferry
 * changes no route. */
static void ramp(struct ferry__doctor *d)
{
	double rtt = d->rtt_ms / 1e3;
	double first = FERRY_DEFAULT_STREAMS * (double)FERRY__TCP_IW;
	unsigned k = doublings(d->bdp, first);
	unsigned k100 = doublings(d->bdp, 10 * first);
	double t = (4 + k) * rtt;
	struct ferry_check *c;

	c = ferry__doctor_add(d, FERRY_CHECK_INFO, "tcp ramp");
	ferry__doctor_value(c, "about %.*f %s to full rate: 4 round trips of setup, then %u of slow start from 10 segments on each of the %d streams a session starts with",
			    t < 1 ? 0 : 1, t < 1 ? t * 1e3 : t,
			    t < 1 ? "ms" : "s", k, FERRY_DEFAULT_STREAMS);
	if ((k - k100) * rtt >= 0.5)
		ferry__doctor_fix(c, "a first window of 100 segments at both ends makes it %u round trips, %.1f s sooner: ip route change $(ip route show default | head -n 1) initcwnd 100 initrwnd 100 on each host (where the peer is reached by another route: that route's line of ip route show)",
				  k100, (k - k100) * rtt);
}

void ferry__doctor_tcp(struct ferry__doctor *d)
{
	core_max(d, "rmem_max");
	core_max(d, "wmem_max");
	tcp_mem(d, "tcp_rmem");
	tcp_mem(d, "tcp_wmem");
	plan(d);
	ramp(d);
	congestion(d);
	flag(d, "tcp_slow_start_after_idle", 0, FERRY_CHECK_WARN,
	     "a stream idle for one RTO restarts from a small window");
	flag(d, "tcp_mtu_probing", 1, FERRY_CHECK_INFO,
	     "off; a path that drops ICMP (a PMTU black hole) stalls jumbo-frame streams");
}
