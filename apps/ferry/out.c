/* The commands' text output: interval and progress lines, summaries,
 * file lines and doctor's table (JSON: out_json.c). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ferry/error.h"
#include "ferry/log.h"
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

/* CPU seconds, and per GB moved where the session moved any (a session of
 * empty files moves none: no rate to print). */
static void out_cpu(FILE *f, double cpu, uint64_t bytes)
{
	double per_gb = ferry_cpu_per_gb(cpu, bytes);

	fprintf(f, "%.2f s", cpu);
	if (per_gb >= 0)
		fprintf(f, " (%.3f s/GB)", per_gb);
}

void out_summary(FILE *f, const char *prefix, const struct ferry_report *r)
{
	char b[32], pool[32], dscp[24] = "";
	double cpu = r->cpu_user + r->cpu_sys;

	if (r->dscp >= 0)
		snprintf(dscp, sizeof(dscp), "; DSCP %d", r->dscp);
	fprintf(f, "%s%s over %s (%s; %s polling%s): %u stream(s), %llu KiB chunks, %u slots (%u per stream)\n",
		prefix, r->role, r->transport, r->transport_why,
		r->poll[0] ? r->poll : "?", dscp, r->streams,
		(unsigned long long)(r->chunk_size >> 10), r->slots, r->depth);
	if (r->plan[0])
		fprintf(f, "%spath: %s\n", prefix, r->plan);
	if (r->ramp[0])
		fprintf(f, "%sramp: %u of %u streams at the end, %u at most: %s\n",
			prefix, r->streams_used, r->streams, r->streams_peak,
			r->ramp);
	if (r->fit_streams) {
		char w[32];

		fprintf(f, "%swindows: %u of %u streams held to the rate they carry, %s in all at the end\n",
			prefix, r->fit_streams, r->streams,
			out_bytes(w, sizeof(w), (double)r->fit_bytes));
	}
	fprintf(f, "%smemory: %s on %s pages, NUMA node %d; %s\n", prefix,
		out_bytes(pool, sizeof(pool), (double)r->pool_bytes),
		r->page_kind, r->numa_node, r->placement);
	fprintf(f, "%s%.2f s  %s  %.2f Gb/s  %llu chunks verified, %llu crc errors, %llu credit stalls\n",
		prefix, r->seconds, out_bytes(b, sizeof(b), (double)r->bytes),
		ferry_gbps(r->bytes, r->seconds),
		(unsigned long long)r->chunks,
		(unsigned long long)r->crc_errors,
		(unsigned long long)r->stalls);
	fprintf(f, "%scpu: this side ", prefix);
	out_cpu(f, cpu, r->bytes);
	if (r->peer_cpu_user >= 0) {
		fputs(", peer ", f);
		out_cpu(f, r->peer_cpu_user + r->peer_cpu_sys, r->bytes);
	}
	fputc('\n', f);
}

/* ferry_report_json_ex's extra: "error", when there is one. */
static void error_member(FILE *f, void *arg)
{
	fputs(",\n  \"error\": ", f);
	ferry_json_str(f, arg);
}

void out_report(FILE *f, const char *prefix, const struct ferry_report *r,
		bool json, const char *error)
{
	if (json)
		ferry_report_json_ex(r, f, error ? error_member : NULL,
				     (void *)error);
	else
		out_summary(f, prefix, r);
}

void out_json_line(FILE *f, const struct ferry_report *r, const char *error)
{
	char *doc = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&doc, &len);

	if (!m)
		return;
	ferry_report_json_ex(r, m, error ? error_member : NULL, (void *)error);
	fclose(m);
	/* a line break and the indent after it lie between members: a JSON
	 * string holds none (ferry_json_str escapes them) */
	for (size_t i = 0; doc && i < len; i++) {
		if (doc[i] != '\n') {
			fputc(doc[i], f);
			continue;
		}
		while (i + 1 < len && doc[i + 1] == ' ')
			i++;
	}
	fputc('\n', f);
	free(doc);
}

void out_osu(FILE *f, const struct ferry_osu_result *r, bool json, bool csv,
	     const char *error)
{
	if (json)
		ferry_osu_json_ex(r, f, error ? error_member : NULL,
				  (void *)error);
	else if (csv)
		ferry_osu_csv(r, f);
	else
		ferry_osu_table(r, f);
}

/* File lines reach a terminal at once; a pipe or file gets them at least
 * every FILE_FLUSH_NS, not one write per file (a million small files
 * would pay a million writes). Errors go to stderr after what came
 * before them on stdout. */
#define FILE_FLUSH_NS 200000000LL

static void flush_file_lines(bool tty)
{
	static long long last;
	struct timespec t;
	long long now;

	clock_gettime(CLOCK_MONOTONIC, &t);
	now = (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
	if (tty || now - last >= FILE_FLUSH_NS) {
		fflush(stdout);
		last = now;
	}
}

void out_file(const char *cmd, const struct ferry_file_result *r, bool tty,
	      const char *target)
{
	char b[32], path[FERRY_ESCAPED_MAX(PATH_MAX)], why[1024];

	if (tty)
		fputs("\r\033[K", stdout);
	/* names and the peer's words, as plain text */
	ferry_escape(r->path, path, sizeof(path));
	if (r->status) {
		fflush(stdout);
		fprintf(stderr, "ferry %s: %s: %s\n", cmd, path,
			r->why && r->why[0] ?
				ferry_escape(r->why, why, sizeof(why)) :
				ferry_strerror(r->status));
	} else if (!tty) {
		if (r->cksum != FERRY_CKSUM_NONE)
			printf("%s: %x %s%s %llu\n", ferry_cksum_name(r->cksum),
			       r->value, target, path,
			       (unsigned long long)r->size);
	} else if (r->cksum == FERRY_CKSUM_NONE) {
		printf("%-18s %s (%s)%s\n", "-", path,
		       out_bytes(b, sizeof(b), (double)r->size),
		       r->skipped ? " skipped: identical" : "");
	} else {
		printf("%s:%08x  %s (%s)%s%s\n", ferry_cksum_name(r->cksum),
		       r->value, path, out_bytes(b, sizeof(b), (double)r->size),
		       r->skipped ? " skipped: identical" : "",
		       r->resumed ? " resumed" : "");
	}
	flush_file_lines(tty);
}

void out_progress(bool tty, uint64_t done, uint64_t total, uint64_t files_done,
		  uint64_t files_total, double gbps, const char *tail)
{
	char b[32], t[32];

	printf("%s%s of %s  files %llu/%llu  %.2f Gb/s  %s%s",
	       tty ? "\r\033[K" : "", out_bytes(b, sizeof(b), (double)done),
	       out_bytes(t, sizeof(t), (double)total),
	       (unsigned long long)files_done,
	       (unsigned long long)files_total, gbps, tail, tty ? "" : "\n");
	fflush(stdout);
}

void out_send_progress(const struct ferry_report *r,
		       const struct ferry_interval *iv, bool tty)
{
	double rate = ferry_gbps(iv->bytes, iv->end - iv->start);
	uint64_t done = 0;
	char eta[32] = "ETA ?";

	for (unsigned i = 0; i < r->n_iv; i++)
		done += r->iv[i].bytes;
	if (rate > 0)
		snprintf(eta, sizeof(eta), "ETA %.0f s",
			 (r->bytes_total > done ? (double)(r->bytes_total - done) :
						  0) * 8 / (rate * 1e9));
	out_progress(tty, done, r->bytes_total,
		     r->files_done + r->files_skipped, r->files_total, rate,
		     eta);
}

void out_sink_interval(const struct ferry_report *r,
		       const struct ferry_interval *iv, void *arg)
{
	const struct out_sink *s = arg;

	out_send_progress(r, iv, s->tty);
}

void out_sink_target(struct out_sink *s, const char *host, const char *port,
		     const char *dir)
{
	char raw[sizeof(s->target)], real[PATH_MAX];
	bool v6 = host && strchr(host, ':');
	size_t n;

	if (!host && realpath(dir, real))
		dir = real;
	while (*dir == '/')
		dir++;
	n = strlen(dir);
	while (n && dir[n - 1] == '/')
		n--;
	if (host)
		snprintf(raw, sizeof(raw), "ferry://%s%s%s:%s/%.*s%s",
			 v6 ? "[" : "", host, v6 ? "]" : "", port, (int)n, dir,
			 n ? "/" : "");
	else
		snprintf(raw, sizeof(raw), "/%.*s%s", (int)n, dir, n ? "/" : "");
	ferry_escape(raw, s->target, sizeof(s->target));
}

const char *out_error_text(int err, const char *why)
{
	return !err ? NULL : why && why[0] ? why : ferry_strerror(err);
}

void out_files_total(FILE *f, uint64_t published, uint64_t total,
		     uint64_t skipped, uint64_t failed, uint64_t bytes,
		     double seconds)
{
	char b[32];

	fprintf(f, "%llu of %llu files published, %llu skipped, %llu failed; %s in %.2f s, %.2f Gb/s\n",
		(unsigned long long)published, (unsigned long long)total,
		(unsigned long long)skipped, (unsigned long long)failed,
		out_bytes(b, sizeof(b), (double)bytes), seconds,
		ferry_gbps(bytes, seconds));
}

void out_checks(FILE *f, const struct ferry_check *c, size_t n,
		const unsigned *count)
{
	static const char *const words[] = { "PASS", "WARN", "FAIL", "INFO" };

	for (size_t i = 0; i < n; i++) {
		fprintf(f, "%s  %-34s %s\n", words[c[i].status], c[i].name,
			c[i].value);
		if (c[i].fix[0])
			fprintf(f, "      fix: %s\n", c[i].fix);
	}
	fprintf(f, "\n%u pass, %u warn, %u fail, %u info\n",
		count[FERRY_CHECK_PASS], count[FERRY_CHECK_WARN],
		count[FERRY_CHECK_FAIL], count[FERRY_CHECK_INFO]);
}
