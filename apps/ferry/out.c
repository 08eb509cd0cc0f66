#include <stdio.h>

#include "out.h"

const char *out_bytes(char *buf, size_t len, double b)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	int u = 0;

	while (b >= 1024 && u < 4) {
		b /= 1024;
		u++;
	}
	snprintf(buf, len, u ? "%.2f %s" : "%.0f %s", b, unit[u]);
	return buf;
}

void out_interval(const struct ferry_report *r, const struct ferry_interval *iv,
		  void *arg)
{
	FILE *f = arg;
	char b[32];

	if (r->n_iv == 1)
		fprintf(f, "[%s] interval          transferred       goodput  stalls\n",
			r->role[0] == 's' ? "send" : "recv");
	fprintf(f, "[%s] %6.2f-%-6.2f s  %12s  %7.2f Gb/s  %6llu\n",
		r->role[0] == 's' ? "send" : "recv", iv->start, iv->end,
		out_bytes(b, sizeof(b), (double)iv->bytes),
		ferry_gbps(iv->bytes, iv->end - iv->start),
		(unsigned long long)iv->stalls);
	fflush(f);
}

void out_summary(FILE *f, const char *prefix, const struct ferry_report *r)
{
	char b[32], pool[32];
	double cpu = r->cpu_user + r->cpu_sys;

	fprintf(f, "%s%s over %s (%s; %s polling): %u stream(s), %llu KiB chunks, %u slots (%u per stream)\n",
		prefix, r->role, r->transport, r->transport_why,
		r->poll[0] ? r->poll : "?", r->streams,
		(unsigned long long)(r->chunk_size >> 10), r->slots, r->depth);
	fprintf(f, "%smemory: %s on %s pages, NUMA node %d; %s\n", prefix,
		out_bytes(pool, sizeof(pool), (double)r->pool_bytes),
		r->page_kind, r->numa_node, r->placement);
	fprintf(f, "%s%.2f s  %s  %.2f Gb/s  %llu chunks verified, %llu crc errors, %llu credit stalls\n",
		prefix, r->seconds, out_bytes(b, sizeof(b), (double)r->bytes),
		ferry_gbps(r->bytes, r->seconds),
		(unsigned long long)r->chunks,
		(unsigned long long)r->crc_errors,
		(unsigned long long)r->stalls);
	fprintf(f, "%scpu: this side %.2f s (%.3f s/GB)", prefix, cpu,
		ferry_cpu_per_gb(cpu, r->bytes));
	if (r->peer_cpu_user >= 0)
		fprintf(f, ", peer %.2f s (%.3f s/GB)",
			r->peer_cpu_user + r->peer_cpu_sys,
			ferry_cpu_per_gb(r->peer_cpu_user + r->peer_cpu_sys,
					 r->bytes));
	fputc('\n', f);
}
