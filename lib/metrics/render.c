/* ferry_metrics_render: the registry, this process's CPU time and context
 * switches, and the host signals, as Prometheus text (format 0.0.4).
 * Each family is written once, HELP and TYPE first, then its samples;
 * label values are escaped (backslash, double quote, newline). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "metrics/metrics.h"

struct out {
	char *buf;
	size_t size, len; /* len counts on past size, for the retry */
};

static void put(struct out *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	if (o->len < o->size)
		n = vsnprintf(o->buf + o->len, o->size - o->len, fmt, ap);
	else
		n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->len += (size_t)n;
}

/* A label value as the format wants it. */
static const char *esc(char *dst, size_t n, const char *s)
{
	size_t j = 0;

	for (; *s && j + 3 < n; s++) {
		if (*s == '\\' || *s == '"' || *s == '\n') {
			dst[j++] = '\\';
			dst[j++] = *s == '\n' ? 'n' : *s;
		} else {
			dst[j++] = *s;
		}
	}
	dst[j] = 0;
	return dst;
}

static void family(struct out *o, const char *name, const char *type,
		   const char *help)
{
	put(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static const char *const dir_name[2] = { "rx", "tx" };
static const char *const role_name[2] = { "receiver", "sender" };

/* One family over every transport and direction in use. */
enum xfield { XF_BYTES, XF_CHUNKS, XF_STALLS, XF_STREAMS, XF_GOODPUT };

static void per_xport(struct out *o, const struct ferry__m_snap *s,
		      enum xfield f, const char *name, const char *type,
		      const char *help)
{
	char t[32];

	family(o, name, type, help);
	for (unsigned i = 0; i < s->n_xport; i++)
		for (unsigned d = 0; d < 2; d++) {
			const struct ferry__m_pipe *v = &s->x[i].v[d];

			if (!s->x[i].used[d])
				continue;
			put(o, "%s{transport=\"%s\",direction=\"%s\"} ", name,
			    esc(t, sizeof(t), s->x[i].name), dir_name[d]);
			switch (f) {
			case XF_BYTES:
				put(o, "%llu\n", (unsigned long long)v->bytes);
				break;
			case XF_CHUNKS:
				put(o, "%llu\n", (unsigned long long)v->chunks);
				break;
			case XF_STALLS:
				put(o, "%llu\n", (unsigned long long)v->stalls);
				break;
			case XF_STREAMS:
				put(o, "%u\n", v->streams);
				break;
			case XF_GOODPUT:
				put(o, "%.3f\n", s->x[i].goodput[d]);
				break;
			}
		}
}

static void transfers(struct out *o, const struct ferry__m_snap *s)
{
	uint64_t crc = 0;

	per_xport(o, s, XF_BYTES, "ferry_payload_bytes_total", "counter",
		  "Payload bytes moved (chunk headers and framing not counted): sent (tx) or received and verified (rx).");
	per_xport(o, s, XF_CHUNKS, "ferry_chunks_total", "counter",
		  "Chunks sent (tx) or received and verified (rx).");
	per_xport(o, s, XF_STALLS, "ferry_credit_stalls_total", "counter",
		  "Times a sending stream waited for a credit or a free buffer.");
	per_xport(o, s, XF_GOODPUT, "ferry_goodput_bytes_per_second", "gauge",
		  "Payload bytes per second between the last two samples (about a second apart).");
	per_xport(o, s, XF_STREAMS, "ferry_streams_active", "gauge",
		  "Stream workers (TCP connections, queue pairs) running now.");
	for (unsigned i = 0; i < s->n_xport; i++)
		crc += s->x[i].v[0].crc_errors + s->x[i].v[1].crc_errors;
	family(o, "ferry_checksum_failures_total", "counter",
	       "Chunks whose crc32c did not match (kind=chunk) and files whose whole-file checksum did not match (kind=file).");
	put(o, "ferry_checksum_failures_total{kind=\"chunk\"} %llu\n",
	    (unsigned long long)crc);
	put(o, "ferry_checksum_failures_total{kind=\"file\"} %llu\n",
	    (unsigned long long)s->file_cksum_fail);
}

static void sessions(struct out *o, const struct ferry__m_snap *s)
{
	family(o, "ferry_sessions_active", "gauge",
	       "Sessions in progress, from the handshake to the final accounting.");
	for (unsigned r = 0; r < 2; r++)
		put(o, "ferry_sessions_active{role=\"%s\"} %llu\n", role_name[r],
		    (unsigned long long)s->sessions_active[r]);
	family(o, "ferry_sessions_total", "counter",
	       "Sessions ended, by outcome.");
	for (unsigned r = 0; r < 2; r++)
		put(o, "ferry_sessions_total{role=\"%s\",outcome=\"ok\"} %llu\n"
		       "ferry_sessions_total{role=\"%s\",outcome=\"error\"} %llu\n",
		    role_name[r], (unsigned long long)s->sessions_ok[r],
		    role_name[r], (unsigned long long)s->sessions_err[r]);
	family(o, "ferry_session_errors_total", "counter",
	       "Failed sessions by the class of their error.");
	for (unsigned r = 0; r < 2; r++)
		for (unsigned c = 0; c < FERRY__M_CLASSES; c++)
			put(o, "ferry_session_errors_total{role=\"%s\",class=\"%s\"} %llu\n",
			    role_name[r], ferry__metrics_err_name(c),
			    (unsigned long long)s->errors[r][c]);
	family(o, "ferry_files_total", "counter",
	       "Files of file sessions by outcome: published, skipped (identical target) or failed.");
	for (unsigned r = 0; r < 2; r++)
		put(o, "ferry_files_total{role=\"%s\",outcome=\"published\"} %llu\n"
		       "ferry_files_total{role=\"%s\",outcome=\"skipped\"} %llu\n"
		       "ferry_files_total{role=\"%s\",outcome=\"failed\"} %llu\n",
		    role_name[r], (unsigned long long)s->files_published[r],
		    role_name[r], (unsigned long long)s->files_skipped[r],
		    role_name[r], (unsigned long long)s->files_failed[r]);
	family(o, "ferry_files_resumed_total", "counter",
	       "Files continued from the journal of an earlier attempt.");
	for (unsigned r = 0; r < 2; r++)
		put(o, "ferry_files_resumed_total{role=\"%s\"} %llu\n",
		    role_name[r], (unsigned long long)s->files_resumed[r]);
}

static void uroce(struct out *o, const struct ferry__m_uroce *u)
{
	static const char *const rx_kind[FERRY__M_NAK_KINDS] = {
		"sequence", "rnr", "access", "other" };
	static const char *const tx_kind[FERRY__M_NAK_KINDS] = {
		"sequence", "rnr", "access", "invalid" };

	family(o, "ferry_uroce_retransmitted_packets_total", "counter",
	       "uroce request packets sent again (added when a session ends).");
	put(o, "ferry_uroce_retransmitted_packets_total %llu\n",
	    (unsigned long long)u->retx_pkts);
	family(o, "ferry_uroce_retransmit_timeouts_total", "counter",
	       "uroce retransmit timer expiries (added when a session ends).");
	put(o, "ferry_uroce_retransmit_timeouts_total %llu\n",
	    (unsigned long long)u->timeouts);
	family(o, "ferry_uroce_naks_total", "counter",
	       "uroce NAKs received (rx) and sent (tx) by kind (added when a session ends).");
	for (unsigned k = 0; k < FERRY__M_NAK_KINDS; k++)
		put(o, "ferry_uroce_naks_total{direction=\"rx\",kind=\"%s\"} %llu\n",
		    rx_kind[k], (unsigned long long)u->rx_nak[k]);
	for (unsigned k = 0; k < FERRY__M_NAK_KINDS; k++)
		put(o, "ferry_uroce_naks_total{direction=\"tx\",kind=\"%s\"} %llu\n",
		    tx_kind[k], (unsigned long long)u->tx_nak[k]);
	family(o, "ferry_uroce_out_of_order_packets_total", "counter",
	       "uroce requests dropped for arriving ahead of the expected PSN (added when a session ends).");
	put(o, "ferry_uroce_out_of_order_packets_total %llu\n",
	    (unsigned long long)u->oow_drops);
	family(o, "ferry_uroce_duplicate_packets_total", "counter",
	       "uroce requests that arrived again and were only acknowledged (added when a session ends).");
	put(o, "ferry_uroce_duplicate_packets_total %llu\n",
	    (unsigned long long)u->dup_pkts);
}

static void process(struct out *o)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) != 0)
		return;
	family(o, "ferry_cpu_seconds_total", "counter",
	       "CPU time this process has used, every thread.");
	put(o, "ferry_cpu_seconds_total{mode=\"user\"} %ld.%06ld\n",
	    (long)ru.ru_utime.tv_sec, (long)ru.ru_utime.tv_usec);
	put(o, "ferry_cpu_seconds_total{mode=\"system\"} %ld.%06ld\n",
	    (long)ru.ru_stime.tv_sec, (long)ru.ru_stime.tv_usec);
	family(o, "ferry_context_switches_total", "counter",
	       "Context switches of this process's threads: voluntary (waits) and involuntary (preempted).");
	put(o, "ferry_context_switches_total{kind=\"voluntary\"} %ld\n",
	    ru.ru_nvcsw);
	put(o, "ferry_context_switches_total{kind=\"involuntary\"} %ld\n",
	    ru.ru_nivcsw);
}

static void host(struct out *o, const struct ferry__m_host *h)
{
	char n[40];

	if (h->has_ctxt) {
		family(o, "ferry_host_context_switches_total", "counter",
		       "Context switches of the whole host (/proc/stat ctxt).");
		put(o, "ferry_host_context_switches_total %llu\n",
		    (unsigned long long)h->ctxt);
	}
	if (h->has_tcp) {
		family(o, "ferry_host_tcp_sent_segments_total", "counter",
		       "TCP segments the host sent (/proc/net/snmp Tcp OutSegs).");
		put(o, "ferry_host_tcp_sent_segments_total %llu\n",
		    (unsigned long long)h->tcp_out);
		family(o, "ferry_host_tcp_retransmitted_segments_total", "counter",
		       "TCP segments the host sent again (/proc/net/snmp Tcp RetransSegs).");
		put(o, "ferry_host_tcp_retransmitted_segments_total %llu\n",
		    (unsigned long long)h->tcp_retrans);
	}
	family(o, "ferry_netdev_rx_dropped_total", "counter",
	       "Packets a network interface received and dropped (sysfs statistics/rx_dropped).");
	for (unsigned i = 0; i < h->n_if; i++)
		if (h->ifs[i].has_dropped)
			put(o, "ferry_netdev_rx_dropped_total{interface=\"%s\"} %llu\n",
			    esc(n, sizeof(n), h->ifs[i].name),
			    (unsigned long long)h->ifs[i].rx_dropped);
	family(o, "ferry_netdev_rx_missed_errors_total", "counter",
	       "Packets a network interface missed for want of buffers (sysfs statistics/rx_missed_errors).");
	for (unsigned i = 0; i < h->n_if; i++)
		if (h->ifs[i].has_missed)
			put(o, "ferry_netdev_rx_missed_errors_total{interface=\"%s\"} %llu\n",
			    esc(n, sizeof(n), h->ifs[i].name),
			    (unsigned long long)h->ifs[i].rx_missed);
}

int ferry_metrics_render(const char *root, char *buf, size_t size,
			 size_t *len)
{
	struct ferry__m_snap *s = malloc(sizeof(*s));
	struct ferry__m_host *h = malloc(sizeof(*h));
	struct out o = { .buf = buf, .size = size };

	if (!s || !h) {
		free(s);
		free(h);
		return -ENOMEM;
	}
	ferry__metrics_snapshot(s);
	ferry__metrics_host(root, (const char (*)[16])s->netdev, s->n_netdev,
			    h);
	transfers(&o, s);
	sessions(&o, s);
	uroce(&o, &s->uroce);
	process(&o);
	host(&o, h);
	free(s);
	free(h);
	*len = o.len;
	if (o.len >= size) {
		if (size)
			buf[size - 1] = 0;
		return -ENOSPC;
	}
	return 0;
}
