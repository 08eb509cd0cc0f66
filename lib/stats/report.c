/* Report arithmetic and the JSON writer. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ferry/stats.h"
#include "util/util.h"

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

int ferry_report_json_ex(const struct ferry_report *r, FILE *out,
			 void (*extra)(FILE *out, void *arg), void *arg)
{
	double cpu = r->cpu_user + r->cpu_sys;

	fputs("{\n  \"start\": {\"role\": ", out);
	ferry_json_str(out, r->role);
	fputs(", \"transport\": ", out);
	ferry_json_str(out, r->transport);
	fputs(", \"transport_reason\": ", out);
	ferry_json_str(out, r->transport_why);
	fputs(", \"peer_transport\": ", out);
	ferry_json_str(out, r->peer_transport);
	fputs(", \"poll\": ", out);
	ferry_json_str(out, r->poll);
	fputs(", \"peer\": ", out);
	ferry_json_str(out, r->peer);
	fprintf(out,
		",\n    \"streams\": %u, \"slots\": %u, \"depth\": %u, \"chunk_bytes\": %llu,\n"
		"    \"memory\": {\"pages\": ",
		r->streams, r->slots, r->depth,
		(unsigned long long)r->chunk_size);
	ferry_json_str(out, r->page_kind);
	fprintf(out, ", \"pool_bytes\": %llu, \"numa_node\": %d, \"placement\": ",
		(unsigned long long)r->pool_bytes, r->numa_node);
	ferry_json_str(out, r->placement);
	fputs("}},\n  \"intervals\": [", out);
	for (unsigned i = 0; i < r->n_iv; i++) {
		const struct ferry_interval *iv = &r->iv[i];
		fprintf(out, "%s\n    {\"start\": ", i ? "," : "");
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
	fprintf(out, "\n  ],\n  \"end\": {\"seconds\": ");
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
	jnum(out, ferry_cpu_per_gb(cpu, r->bytes));
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
