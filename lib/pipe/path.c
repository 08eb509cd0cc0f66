/* The path plan: what each end knows, and the streams, buffers and ring
 * it leads to (path.h). */
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>

#include "ferry/chunk.h"
#include "ferry/topo.h"
#include "pipe/path.h"
#include "util/util.h"
#include "xport/tcp/tcp_plan.h"

/* The speed of the NIC the route to peer leaves by, bits per second; 0
 * when it has none (loopback) or does not say. */
static uint64_t route_speed(const struct sockaddr *peer, socklen_t len)
{
	char ifname[FERRY_IFNAMSIZ] = "", path[96], buf[32];
	long long mbps;

	if (!peer || ferry_topo_route_netdev(peer, len, ifname))
		return 0;
	snprintf(path, sizeof(path), "/sys/class/net/%s/speed", ifname);
	if (ferry__read_text(path, buf, sizeof(buf)) ||
	    sscanf(buf, "%lld", &mbps) != 1 || mbps <= 0)
		return 0;
	return (uint64_t)mbps * 1000000u;
}

/* The control connection's smoothed RTT, microseconds (0: none yet). */
static uint32_t ctrl_rtt_us(int fd)
{
	struct tcp_info ti;
	socklen_t l = sizeof(ti);

	memset(&ti, 0, sizeof(ti));
	if (fd < 0 || getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &l) < 0)
		return 0;
	return ti.tcpi_rtt;
}

void ferry__path_local(const struct ferry_opts *o, int ctrl,
		       const struct sockaddr *peer, socklen_t peer_len,
		       bool sender, struct ferry_msg_path *out)
{
	struct ferry__tcp_limits l;

	ferry__tcp_limits_read("", &l);
	memset(out, 0, sizeof(*out));
	out->fixed = sender ? o->fixed & FERRY_PATH_FIXED_ALL : 0;
	out->rtt_us = ctrl_rtt_us(ctrl);
	out->rate_bps = sender && o->rate_bps ? o->rate_bps :
						route_speed(peer, peer_len);
	out->mem_max = o->max_mem;
	out->buf_tcp_max = sender ? l.tcp_wmem_max : l.tcp_rmem_max;
	out->buf_core_max = sender ? l.wmem_max : l.rmem_max;
	out->buf_flags = l.force ? FERRY_PATH_FORCE : 0;
	out->sockbuf = sender ? o->xport.tcp.sockbuf : 0;
}

void ferry__path_answer(const struct ferry_msg_path *tx,
			struct ferry_msg_path *rx)
{
	rx->fixed = tx->fixed;
	if (!rx->rtt_us)
		rx->rtt_us = tx->rtt_us;
	if (!rx->rate_bps || (tx->rate_bps && tx->rate_bps < rx->rate_bps))
		rx->rate_bps = tx->rate_bps;
}

static uint64_t min64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

void ferry__path_plan(const struct ferry_msg_path *tx,
		      const struct ferry_msg_path *rx,
		      const struct ferry_params *pr, bool tcp,
		      struct ferry__path_plan *pl)
{
	const struct ferry__tcp_limits rxl = {
		.rmem_max = rx->buf_core_max, .tcp_rmem_max = rx->buf_tcp_max,
		.force = rx->buf_flags & FERRY_PATH_FORCE, .known = true };
	const struct ferry__tcp_limits txl = {
		.wmem_max = tx->buf_core_max, .tcp_wmem_max = tx->buf_tcp_max,
		.force = tx->buf_flags & FERRY_PATH_FORCE, .known = true };
	bool fix_streams = tx->fixed & FERRY_FIXED_STREAMS;
	bool fix_slots = tx->fixed & FERRY_FIXED_SLOTS;
	uint64_t chunk = pr->chunk_size ? pr->chunk_size : 1;
	uint64_t stride = FERRY_CHUNK_HDR_SPACE + chunk;
	uint64_t chunks = pr->total_bytes ?
				  (pr->total_bytes + chunk - 1) / chunk : 0;
	uint64_t slots, cap, mem = min64(tx->mem_max, rx->mem_max);
	struct ferry__tcp_plan tp;
	unsigned n = pr->streams ? pr->streams : 1;
	char b1[32], b2[32];
	int at;

	memset(pl, 0, sizeof(*pl));
	pl->rtt_s = rx->rtt_us / 1e6;
	pl->rate_bps = (double)rx->rate_bps;
	ferry__tcp_plan(pl->rtt_s, pl->rate_bps, &rxl, &txl,
			fix_streams ? n : 0, tx->sockbuf, 0, &tp);
	/* streams: tcp's windows, no more than there are chunks to carry */
	if (tcp && !fix_streams && rx->rate_bps) {
		uint64_t want = tp.streams;

		if (chunks && want > chunks)
			want = chunks;
		if (want > n)
			n = (unsigned)want;
	}
	pl->streams = n;
	if (tcp && rx->rate_bps && !tx->sockbuf)
		pl->sockbuf = tp.sockbuf;
	/* slots: the ring that holds the BDP x 5/4, no more than the chunks
	 * there are, within both ends' ring limits */
	slots = pr->slots;
	if (!fix_slots && rx->rate_bps) {
		pl->ring_want = (tp.want + chunk - 1) / chunk;
		uint64_t want = pl->ring_want;

		if (chunks && want > chunks)
			want = chunks;
		if (want > slots)
			slots = want;
		slots = (slots + n - 1) / n * n; /* whole streams */
	}
	if (slots < n)
		slots = n;
	cap = mem / stride / n * n;
	if (cap > FERRY_MAX_SLOTS / n * n)
		cap = FERRY_MAX_SLOTS / n * n;
	if (!fix_slots && slots > cap)
		slots = cap > n ? cap : n;
	pl->slots = (unsigned)(slots / n * n);

	if (!rx->rate_bps) {
		snprintf(pl->why, sizeof(pl->why),
			 "RTT %.3g ms, no target rate (no --rate, no NIC speed): %u stream(s), ring %u x %s",
			 pl->rtt_s * 1e3, pl->streams, pl->slots,
			 ferry__bytes_str(b1, sizeof(b1), (double)chunk));
		return;
	}
	if (tcp)
		at = snprintf(pl->why, sizeof(pl->why), "%s", tp.why);
	else
		at = snprintf(pl->why, sizeof(pl->why),
			      "RTT %.3g ms, target %.3g Gb/s, BDP %s",
			      pl->rtt_s * 1e3, pl->rate_bps / 1e9,
			      ferry__bytes_str(b1, sizeof(b1), (double)tp.bdp));
	if (at < 0 || (size_t)at >= sizeof(pl->why))
		return;
	if (tcp && pl->streams != tp.streams)
		at += snprintf(pl->why + at, sizeof(pl->why) - (size_t)at,
			       "; %u used (%s)", pl->streams,
			       pl->streams > tp.streams ? "the floor asked" :
							  "one per chunk");
	if ((size_t)at >= sizeof(pl->why))
		return;
	at += snprintf(pl->why + at, sizeof(pl->why) - (size_t)at,
		       "; ring %u x %s%s", pl->slots,
		       ferry__bytes_str(b2, sizeof(b2), (double)chunk),
		       fix_slots ? " as asked" : "");
	if (!fix_slots && pl->ring_want > pl->slots &&
	    (!chunks || pl->slots < chunks) && at > 0 &&
	    (size_t)at < sizeof(pl->why))
		snprintf(pl->why + at, sizeof(pl->why) - (size_t)at,
			 " (the BDP needs %llu: capped by the ring limit, %s; raise --max-mem on both ends)",
			 (unsigned long long)pl->ring_want,
			 ferry__bytes_str(b1, sizeof(b1), (double)mem));
}

void ferry__path_report(const struct ferry__path_plan *pl,
			struct ferry_report *rep)
{
	rep->rtt_ms = pl->rtt_s * 1e3;
	rep->target_bps = (uint64_t)pl->rate_bps;
	snprintf(rep->plan, sizeof(rep->plan), "%s", pl->why);
	ferry__log(FERRY_LOG_INFO, "path plan: %s", pl->why);
}
