/* Report arithmetic and the JSON writer. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ferry/stats.h"
#include "util/util.h"
#include "util/version.h"

double ferry_gbps(uint64_t bytes, double seconds)
{
	return seconds > 0 ? (double)bytes * 8.0 / seconds / 1e9 : 0.0;
}

double ferry_cpu_per_gb(double cpu_seconds, uint64_t bytes)
{
	return bytes ? cpu_seconds / ((double)bytes / 1e9) : -1.0;
}

void ferry_report_add_interval(struct ferry_report *r,
			       const struct ferry_interval *iv)
{
	if (r->n_iv < FERRY_REPORT_MAX_IV)
		r->iv[r->n_iv++] = *iv;
	else
		r->iv_dropped++;
}

void ferry_json_str(FILE *out, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	fputc('"', out);
	while (*s) {
		int n = ferry__utf8_len(s);
		if (*s == '"' || *s == '\\')
			fprintf(out, "\\%c", *s);
		else if (*s < 0x20 || *s == 0x7f)
			fprintf(out, "\\u%04x", *s);
		else if (n == 0)
			fputs("\\ufffd", out);
		else
			fwrite(s, 1, (size_t)n, out);
		s += n ? n : 1;
	}
	fputc('"', out);
}

/* Numbers: JSON has no NaN or infinity; print null instead. */
static void jnum(FILE *out, double v)
{
	if (v != v || v > 1e300 || v < -1e300)
		fputs("null", out);
	else
		fprintf(out, "%.6g", v);
}

int ferry_report_json(const struct ferry_report *r, FILE *out)
{
	return ferry_report_json_ex(r, out, NULL, NULL);
}

/* "host:port" (or "[v6]:port") into host and port; port 0 if none. */
static void split_peer(const char *peer, char *host, size_t len,
		       unsigned *port)
{
	const char *colon = strrchr(peer, ':');
	size_t n = colon ? (size_t)(colon - peer) : strlen(peer);

	*port = colon ? (unsigned)strtoul(colon + 1, NULL, 10) : 0;
	if (n >= 2 && peer[0] == '[' && peer[n - 1] == ']') {
		peer++;
		n -= 2;
	}
	snprintf(host, len, "%.*s", (int)n, peer);
}

/* iperf3's interval and summary object: {"socket"?, start, end, seconds,
 * bytes, bits_per_second, retransmits?, omitted?, sender}; retx < 0: not
 * counted. */
static void span(FILE *out, int socket, double start, double end,
		 uint64_t bytes, int64_t retx, bool interval, bool sender)
{
	fputc('{', out);
	if (socket > 0)
		fprintf(out, "\"socket\": %d, ", socket);
	fputs("\"start\": ", out);
	jnum(out, start);
	fputs(", \"end\": ", out);
	jnum(out, end);
	fputs(", \"seconds\": ", out);
	jnum(out, end - start);
	fprintf(out, ", \"bytes\": %llu, \"bits_per_second\": ",
		(unsigned long long)bytes);
	jnum(out, end > start ? (double)bytes * 8 / (end - start) : 0);
	if (retx >= 0)
		fprintf(out, ", \"retransmits\": %lld", (long long)retx);
	if (interval)
		fputs(", \"omitted\": false", out);
	fprintf(out, ", \"sender\": %s}", sender ? "true" : "false");
}

/* A retransmit count for span: -1 where the report has none. */
static int64_t retx_of(const struct ferry_report *r, uint64_t v)
{
	return r->has_retransmits ? (int64_t)v : -1;
}

/* iperf3's cpu_utilization_percent: CPU seconds over wall seconds. */
static void cpu_percent(FILE *out, const struct ferry_report *r)
{
	static const char *const name[6] = { "host_total", "host_user",
					      "host_system", "remote_total",
					      "remote_user", "remote_system" };
	const double secs[6] = { r->cpu_user + r->cpu_sys, r->cpu_user,
				 r->cpu_sys, r->peer_cpu_user + r->peer_cpu_sys,
				 r->peer_cpu_user, r->peer_cpu_sys };
	bool peer = r->peer_cpu_user >= 0 && r->peer_cpu_sys >= 0;

	fputs("\"cpu_utilization_percent\": {", out);
	for (int i = 0; i < 6; i++) {
		fprintf(out, "%s\"%s\": ", i ? ", " : "", name[i]);
		if (i >= 3 && !peer)
			fputs("null", out); /* the peer did not say */
		else
			jnum(out, r->seconds > 0 ? secs[i] * 100 / r->seconds : 0);
	}
	fputc('}', out);
}

static void start_json(const struct ferry_report *r, FILE *out)
{
	bool sender = r->role[0] == 's';
	char host[80], when[64];
	unsigned port;

	split_peer(r->peer, host, sizeof(host), &port);
	fputs("{\n    \"version\": \"ferry " FERRY_VERSION "\",\n", out);
	fprintf(out, "    \"timestamp\": {\"time\": \"%s\", \"timesecs\": %lld},\n",
		ferry__utc_date(r->start_time, when, sizeof(when)),
		(long long)r->start_time);
	fprintf(out, "    \"%s\": {\"host\": ",
		sender ? "connecting_to" : "accepted_connection");
	ferry_json_str(out, host);
	fprintf(out, ", \"port\": %u},\n    \"connected\": [", port);
	for (unsigned i = 0; i < r->streams; i++) {
		fprintf(out, "%s{\"socket\": %u, \"remote_host\": ",
			i ? ", " : "", i + 1);
		ferry_json_str(out, host);
		fputc('}', out);
	}
	fprintf(out, "],\n    \"test_start\": {\"protocol\": \"%s\", \"num_streams\": %u, \"blksize\": %llu, \"omit\": 0, \"duration\": ",
		strcmp(r->transport, "tcp") ? "RoCEv2" : "TCP", r->streams,
		(unsigned long long)r->chunk_size);
	jnum(out, r->test_seconds);
	/* iperf3's tos is the whole byte (-S): the DSCP's six bits, ECN 0 */
	fprintf(out, ", \"bytes\": %llu, \"blocks\": 0, \"reverse\": %d, \"tos\": %d},\n",
		(unsigned long long)r->test_bytes, sender ? 0 : 1,
		r->dscp >= 0 ? r->dscp << 2 : 0);
	fputs("    \"role\": ", out);
	ferry_json_str(out, r->role);
	fputs(", \"transport\": ", out);
	ferry_json_str(out, r->transport);
	fputs(", \"transport_reason\": ", out);
	ferry_json_str(out, r->transport_why);
	fputs(", \"peer_transport\": ", out);
	ferry_json_str(out, r->peer_transport);
	fputs(", \"poll\": ", out);
	ferry_json_str(out, r->poll);
	fprintf(out, ", \"dscp\": %d", r->dscp >= 0 ? r->dscp : -1);
	fputs(", \"peer\": ", out);
	ferry_json_str(out, r->peer);
	fprintf(out,
		",\n    \"streams\": %u, \"slots\": %u, \"depth\": %u, \"chunk_bytes\": %llu,\n",
		r->streams, r->slots, r->depth,
		(unsigned long long)r->chunk_size);
	if (r->plan[0]) {
		fputs("    \"path\": {\"rtt_ms\": ", out);
		jnum(out, r->rtt_ms);
		fprintf(out, ", \"target_bps\": %llu, \"plan\": ",
			(unsigned long long)r->target_bps);
		ferry_json_str(out, r->plan);
		if (r->ramp[0]) {
			fprintf(out,
				", \"ramp\": {\"streams_used\": %u, \"streams_peak\": %u, \"why\": ",
				r->streams_used, r->streams_peak);
			ferry_json_str(out, r->ramp);
			fputc('}', out);
		}
		if (r->fit_streams)
			fprintf(out,
				", \"fit\": {\"streams_held\": %u, \"window_bytes\": %llu}",
				r->fit_streams,
				(unsigned long long)r->fit_bytes);
		fputs("},\n", out);
	}
	fputs("    \"memory\": {\"pages\": ", out);
	ferry_json_str(out, r->page_kind);
	fprintf(out, ", \"pool_bytes\": %llu, \"numa_node\": %d, \"placement\": ",
		(unsigned long long)r->pool_bytes, r->numa_node);
	ferry_json_str(out, r->placement);
	fputs("}}", out);
}

static void intervals_json(const struct ferry_report *r, FILE *out)
{
	bool sender = r->role[0] == 's';
	unsigned ns = r->streams < FERRY_REPORT_IV_STREAMS ?
			      r->streams : FERRY_REPORT_IV_STREAMS;

	for (unsigned i = 0; i < r->n_iv; i++) {
		const struct ferry_interval *iv = &r->iv[i];
		fprintf(out, "%s\n    {\"streams\": [", i ? "," : "");
		for (unsigned k = 0; k < ns; k++) {
			fputs(k ? ",\n      " : "\n      ", out);
			span(out, (int)k + 1, iv->start, iv->end,
			     iv->stream_bytes[k],
			     retx_of(r, iv->stream_retransmits[k]), true, sender);
		}
		fputs("],\n     \"sum\": ", out);
		span(out, 0, iv->start, iv->end, iv->bytes,
		     retx_of(r, iv->retransmits), true, sender);
		fputs(",\n     \"start\": ", out);
		jnum(out, iv->start);
		fputs(", \"end\": ", out);
		jnum(out, iv->end);
		fprintf(out, ", \"bytes\": %llu, \"chunks\": %llu, \"stalls\": %llu, \"gbps\": ",
			(unsigned long long)iv->bytes,
			(unsigned long long)iv->chunks,
			(unsigned long long)iv->stalls);
		jnum(out, ferry_gbps(iv->bytes, iv->end - iv->start));
		fputc('}', out);
	}
}

/* end.streams, sum_sent, sum_received: this side's counts, and the
 * peer's where it reported them (a receiver that verified every byte a
 * stream sent received what that stream sent). */
static void end_iperf(const struct ferry_report *r, FILE *out)
{
	bool sender = r->role[0] == 's';
	uint64_t sent = sender ? r->bytes : r->peer_bytes;
	uint64_t got = sender ? r->peer_bytes : r->bytes;
	bool whole = r->peer_bytes == r->bytes;

	fputs("\"streams\": [", out);
	for (unsigned k = 0; k < r->streams && k < FERRY_REPORT_STREAMS; k++) {
		fputs(k ? ",\n      " : "\n      ", out);
		if (sender || whole) {
			fputs("{\"sender\": ", out);
			span(out, (int)k + 1, 0, r->seconds, r->stream_bytes[k],
			     retx_of(r, r->stream_retransmits[k]), false, true);
		}
		if (!sender || whole) {
			fputs(sender || whole ? ", \"receiver\": " :
						"{\"receiver\": ", out);
			span(out, (int)k + 1, 0, r->seconds, r->stream_bytes[k],
			     -1, false, true);
		}
		fputc('}', out);
	}
	fputs("],\n    \"sum_sent\": ", out);
	span(out, 0, 0, r->seconds, sent, retx_of(r, r->retransmits), false,
	     true);
	fputs(",\n    \"sum_received\": ", out);
	span(out, 0, 0, r->seconds, got, -1, false, true);
	fputs(",\n    ", out);
	cpu_percent(out, r);
	fputs(",\n    ", out);
}

int ferry_report_json_ex(const struct ferry_report *r, FILE *out,
			 void (*extra)(FILE *out, void *arg), void *arg)
{
	double cpu = r->cpu_user + r->cpu_sys, per_gb;

	fputs("{\n  \"start\": ", out);
	start_json(r, out);
	fputs(",\n  \"intervals\": [", out);
	intervals_json(r, out);
	fprintf(out, "\n  ],\n  \"end\": {");
	end_iperf(r, out);
	fputs("\"seconds\": ", out);
	jnum(out, r->seconds);
	fprintf(out, ", \"bytes\": %llu, \"chunks\": %llu, \"stalls\": %llu, \"crc_errors\": %llu,\n    \"gbps\": ",
		(unsigned long long)r->bytes, (unsigned long long)r->chunks,
		(unsigned long long)r->stalls,
		(unsigned long long)r->crc_errors);
	jnum(out, ferry_gbps(r->bytes, r->seconds));
	fputs(", \"cpu\": {\"user_s\": ", out);
	jnum(out, r->cpu_user);
	fputs(", \"sys_s\": ", out);
	jnum(out, r->cpu_sys);
	fputs(", \"per_gb_s\": ", out);
	per_gb = ferry_cpu_per_gb(cpu, r->bytes);
	if (per_gb < 0)
		fputs("null", out); /* no rate of nothing moved */
	else
		jnum(out, per_gb);
	fputs("},\n    \"peer\": {\"bytes\": ", out);
	fprintf(out, "%llu", (unsigned long long)r->peer_bytes);
	fputs(", \"cpu_user_s\": ", out);
	if (r->peer_cpu_user < 0)
		fputs("null", out);
	else
		jnum(out, r->peer_cpu_user);
	fputs(", \"cpu_sys_s\": ", out);
	if (r->peer_cpu_sys < 0)
		fputs("null", out);
	else
		jnum(out, r->peer_cpu_sys);
	fprintf(out, "},\n    \"intervals_dropped\": %llu",
		(unsigned long long)r->iv_dropped);
	if (r->files_total)
		fprintf(out,
			",\n    \"files\": {\"total\": %llu, \"done\": %llu, \"skipped\": %llu, \"failed\": %llu, \"resumed\": %llu, \"bytes\": %llu}",
			(unsigned long long)r->files_total,
			(unsigned long long)r->files_done,
			(unsigned long long)r->files_skipped,
			(unsigned long long)r->files_failed,
			(unsigned long long)r->files_resumed,
			(unsigned long long)r->bytes_total);
	fputc('}', out);
	if (extra)
		extra(out, arg);
	fputs("\n}\n", out);
	return fflush(out) || ferror(out) ? -EIO : 0;
}
