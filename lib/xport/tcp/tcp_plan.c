/* Streams and socket buffers for a path (tcp_plan.h). */
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>

#include "util/util.h"
#include "xport/tcp/tcp_plan.h"

/* The third value of a "min default max" sysctl, or one value. */
static bool read_max(const char *root, const char *rel, bool triple,
		     uint64_t *v)
{
	unsigned long long a, b, c;
	char path[4200], buf[128];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	if (ferry__read_text(path, buf, sizeof(buf)))
		return false;
	if (triple ? sscanf(buf, "%llu %llu %llu", &a, &b, &c) != 3 :
		     sscanf(buf, "%llu", &c) != 1)
		return false;
	*v = c;
	return true;
}

void ferry__tcp_limits_read(const char *root, struct ferry__tcp_limits *l)
{
	bool ok;

	/* Linux's defaults, where a value cannot be read */
	*l = (struct ferry__tcp_limits){ 212992, 212992, 6 << 20, 4 << 20,
					 false, false };
	root = root ? root : "";
	ok = read_max(root, "proc/sys/net/core/rmem_max", false, &l->rmem_max);
	ok &= read_max(root, "proc/sys/net/core/wmem_max", false, &l->wmem_max);
	ok &= read_max(root, "proc/sys/net/ipv4/tcp_rmem", true,
		       &l->tcp_rmem_max);
	ok &= read_max(root, "proc/sys/net/ipv4/tcp_wmem", true,
		       &l->tcp_wmem_max);
	l->known = ok;
	l->force = ferry__cap_effective(root, CAP_NET_ADMIN);
}

static uint64_t max64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

static uint64_t min64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* The largest window one stream can have at this end: autotuned (half of
 * the sysctl's maximum), or set by ferry (up to the core limit, or past
 * it with CAP_NET_ADMIN). */
static uint64_t reach(uint64_t tcp_max, uint64_t core_max, bool force)
{
	return min64(max64(tcp_max / 2, force ? FERRY__PLAN_FORCE_BUF :
						  core_max),
		     FERRY__PLAN_MAX_WINDOW);
}

static const char *mib(char *b, size_t len, uint64_t v)
{
	if (v >= (1ull << 20))
		snprintf(b, len, "%.0f MiB", (double)v / (1 << 20));
	else
		snprintf(b, len, "%.0f KiB", (double)v / (1 << 10));
	return b;
}

void ferry__tcp_plan(double rtt_s, double rate_bps,
		     const struct ferry__tcp_limits *rx,
		     const struct ferry__tcp_limits *tx, unsigned streams,
		     uint64_t sockbuf, uint64_t budget,
		     struct ferry__tcp_plan *p)
{
	uint64_t rxw, txw, w, cover;
	char b1[32], b2[32], b3[32], limit[96];
	unsigned n;

	memset(p, 0, sizeof(*p));
	budget = budget ? budget : FERRY__PLAN_BUDGET;
	p->bdp = (uint64_t)(rate_bps > 0 && rtt_s > 0 ? rate_bps / 8 * rtt_s : 0);
	p->want = p->bdp + p->bdp / 4;
	rxw = reach(rx->tcp_rmem_max, rx->rmem_max, rx->force);
	txw = reach(tx->tcp_wmem_max, tx->wmem_max, tx->force);
	if (sockbuf) { /* the user's, as the kernel allows it */
		rxw = min64(sockbuf, rx->force ? FERRY__PLAN_MAX_WINDOW :
				     max64(rx->rmem_max, rx->tcp_rmem_max / 2));
		txw = min64(sockbuf, tx->force ? FERRY__PLAN_MAX_WINDOW :
				     max64(tx->wmem_max, tx->tcp_wmem_max / 2));
	}
	w = max64(min64(rxw, txw), 1);
	p->reach = w;
	/* the windows one host can afford: a window costs about twice its
	 * bytes in socket buffer */
	cover = min64(p->want, budget / 2);
	if (streams) {
		n = streams;
	} else {
		uint64_t need = (cover + w - 1) / w;
		n = need < FERRY__PLAN_MIN_STREAMS ? FERRY__PLAN_MIN_STREAMS :
		    need > FERRY__PLAN_MAX_STREAMS ? FERRY__PLAN_MAX_STREAMS :
						      (unsigned)need;
	}
	p->streams = n;
	/* each stream's share, within what it can have */
	p->window = min64(w, max64((cover + n - 1) / n, 1));
	if (sockbuf)
		p->sockbuf = sockbuf;
	else if (p->window > rx->tcp_rmem_max / 2 ||
		 p->window > tx->tcp_wmem_max / 2)
		p->sockbuf = p->window; /* past what autotuning reaches */
	p->covered = (uint64_t)n * p->window;
	p->ring = p->want;
	if (rx->force && tx->force)
		snprintf(limit, sizeof(limit), "CAP_NET_ADMIN on both ends");
	else
		snprintf(limit, sizeof(limit), "tcp_rmem max %s%s",
			 mib(b1, sizeof(b1), rx->tcp_rmem_max),
			 rx->force ? "" : "; no CAP_NET_ADMIN");
	int at = snprintf(p->why, sizeof(p->why),
			  "RTT %.3g ms, target %.3g Gb/s, BDP %s: %u streams x %s (%s%s)",
			  rtt_s * 1e3, rate_bps / 1e9,
			  mib(b2, sizeof(b2), p->bdp), n,
			  mib(b3, sizeof(b3), p->window),
			  streams || sockbuf ? "as asked; " : "", limit);
	if (p->covered < p->bdp && at > 0 && (size_t)at < sizeof(p->why))
		snprintf(p->why + at, sizeof(p->why) - (size_t)at,
			 "; short of the BDP: about %.3g Gb/s at this RTT",
			 (double)p->covered * 8 / rtt_s / 1e9);
}
