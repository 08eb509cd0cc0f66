/* OSU-style benchmarks: the pure parts. Size lists, iteration counts,
 * percentiles, and the table, CSV and JSON a run is written as. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ferry/session.h"
#include "util/util.h"
#include "util/version.h"

static const char *const mode_names[] = { NULL, "lat", "bw", "bibw", "mr" };

const char *ferry_osu_mode_name(int mode)
{
	return mode > 0 && mode < (int)FERRY__ARRAY_SIZE(mode_names) ?
		       mode_names[mode] :
		       NULL;
}

int ferry_osu_mode_parse(const char *s)
{
	for (int i = 1; i < (int)FERRY__ARRAY_SIZE(mode_names); i++)
		if (strcmp(s, mode_names[i]) == 0)
			return i;
	return 0;
}

void ferry_osu_default_sizes(struct ferry_osu_spec *spec)
{
	spec->n_sizes = 0;
	for (uint32_t s = 1; s <= FERRY_OSU_MAX_SIZE; s <<= 1)
		spec->sizes[spec->n_sizes++] = s;
}

/* One size: digits, then K or M (powers of 2), then an optional "iB" or
 * "B". Sets *end past it. */
static int one_size(const char *s, const char **end, uint32_t *out)
{
	uint64_t v = 0, mul = 1;
	const char *p = s;

	if (!isdigit((unsigned char)*p))
		return -EINVAL;
	while (isdigit((unsigned char)*p)) {
		v = v * 10 + (uint64_t)(*p++ - '0');
		if (v > FERRY_OSU_MAX_SIZE)
			return -ERANGE;
	}
	if (*p == 'K' || *p == 'k')
		mul = 1u << 10;
	else if (*p == 'M' || *p == 'm')
		mul = 1u << 20;
	if (mul > 1) {
		p++;
		if (*p == 'i')
			p++;
	}
	if (*p == 'B' || *p == 'b')
		p++;
	v *= mul;
	if (v == 0 || v > FERRY_OSU_MAX_SIZE)
		return -ERANGE;
	*out = (uint32_t)v;
	*end = p;
	return 0;
}

static int add_size(struct ferry_osu_spec *spec, uint32_t v)
{
	if (spec->n_sizes == FERRY_OSU_MAX_SIZES)
		return -E2BIG;
	spec->sizes[spec->n_sizes++] = v;
	return 0;
}

int ferry_osu_parse_sizes(const char *s, struct ferry_osu_spec *spec,
			  char *why, size_t whylen)
{
	const char *p = s, *end;
	uint32_t lo, hi;
	int err = 0;

	spec->n_sizes = 0;
	while (!err) {
		err = one_size(p, &end, &lo);
		hi = lo;
		if (!err && *end == '-') {
			err = one_size(end + 1, &end, &hi);
			if (!err && hi < lo)
				err = -EINVAL;
		}
		for (uint64_t v = lo; !err && v <= hi; v <<= 1)
			err = add_size(spec, (uint32_t)v);
		if (err || *end == 0)
			break;
		if (*end != ',')
			err = -EINVAL;
		p = end + 1;
	}
	if (err) {
		ferry__why(why, whylen,
			   err == -E2BIG ? "'%s' has more than %d sizes" :
			   err == -ERANGE ? "'%s': sizes are 1 B to 4M" :
					    "bad size list '%s': want sizes or ranges such as 1-64K or 8,64,1K,1M",
			   s, FERRY_OSU_MAX_SIZES);
		spec->n_sizes = 0;
		return -EINVAL;
	}
	return 0;
}

#define SMALL (8u << 10) /* OSU's boundary between small and large */

void ferry_osu_iters(const struct ferry_osu_spec *spec, uint32_t size,
		     unsigned *iters, unsigned *warmup)
{
	bool small = size <= SMALL;

	if (spec->mode == FERRY_OSU_LAT) {
		*iters = small ? 10000 : 1000;
		*warmup = small ? 1000 : 100;
	} else {
		*iters = small ? 100 : 20;
		*warmup = small ? 10 : 2;
	}
	if (spec->iters) {
		*iters = spec->iters;
		*warmup = spec->iters / 10;
	}
	if (spec->warmup == FERRY_OSU_NO_WARMUP)
		*warmup = 0;
	else if (spec->warmup)
		*warmup = spec->warmup;
}

double ferry_osu_percentile(const double *sorted, size_t n, double p)
{
	size_t rank;

	if (n == 0)
		return 0;
	if (p <= 0)
		return sorted[0];
	rank = (size_t)ceil(p / 100 * (double)n); /* nearest rank, 1-based */
	if (rank < 1)
		rank = 1;
	return sorted[(rank > n ? n : rank) - 1];
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

void ferry_osu_row_stats(struct ferry_osu_row *r, double *samples, size_t n)
{
	double sum = 0;

	qsort(samples, n, sizeof(*samples), cmp_double);
	for (size_t i = 0; i < n; i++)
		sum += samples[i];
	r->avg_us = n ? sum / (double)n : 0;
	r->p50_us = ferry_osu_percentile(samples, n, 50);
	r->p99_us = ferry_osu_percentile(samples, n, 99);
	r->max_us = n ? samples[n - 1] : 0;
	if (r->seconds > 0) {
		r->mbps = (double)r->bytes / r->seconds / 1e6;
		r->gbps = (double)r->bytes * 8 / r->seconds / 1e9;
		r->msg_rate = (double)r->count / r->seconds;
	}
}

/* ---- output ---- */

static double fin(double v)
{
	return isfinite(v) ? v : 0;
}

static void size_str(char *b, size_t len, uint32_t s)
{
	if (s >= (1u << 20) && s % (1u << 20) == 0)
		snprintf(b, len, "%uM", s >> 20);
	else if (s >= 1024 && s % 1024 == 0)
		snprintf(b, len, "%uK", s >> 10);
	else
		snprintf(b, len, "%u", s);
}

int ferry_osu_table(const struct ferry_osu_result *r, FILE *out)
{
	const char *mode = ferry_osu_mode_name(r->mode);
	char lo[16] = "", hi[16] = "";

	if (r->n_rows) {
		size_str(lo, sizeof(lo), r->rows[0].size);
		size_str(hi, sizeof(hi), r->rows[r->n_rows - 1].size);
	}
	fprintf(out, "# ferry bench --osu %s: %s to %s, %s polling (receiver %s)",
		mode ? mode : "?", r->transport, r->peer, r->poll,
		r->peer_poll[0] ? r->peer_poll : "?");
	if (r->window)
		fprintf(out, ", window %u", r->window);
	fprintf(out, ", sizes %s..%s\n", lo, hi);
	fprintf(out, "# Avg..Max: %s; CPU: %% of one core, each side's process\n",
		r->mode == FERRY_OSU_LAT ? "half a round trip" :
					   "per message, each window's time / window");
	fprintf(out, "%-9s %8s %10s %10s %10s %10s %10s %11s %8s %12s %6s %8s\n",
		"# Size", "Iters", "Count", "Avg(us)", "P50(us)", "P99(us)",
		"Max(us)", "MB/s", "Gb/s", "Msg/s", "CPU%", "PeerCPU%");
	for (unsigned i = 0; i < r->n_rows; i++) {
		const struct ferry_osu_row *w = &r->rows[i];

		fprintf(out,
			"%-9u %8llu %10llu %10.2f %10.2f %10.2f %10.2f %11.2f %8.3f %12.0f %6.1f %8.1f\n",
			w->size, (unsigned long long)w->iters,
			(unsigned long long)w->count, fin(w->avg_us),
			fin(w->p50_us), fin(w->p99_us), fin(w->max_us),
			fin(w->mbps), fin(w->gbps), fin(w->msg_rate),
			fin(w->cpu_pct), fin(w->peer_cpu_pct));
	}
	return ferror(out) ? -EIO : 0;
}

int ferry_osu_csv(const struct ferry_osu_result *r, FILE *out)
{
	const char *mode = ferry_osu_mode_name(r->mode);

	fputs("mode,transport,poll,window,size,iters,count,bytes,seconds,avg_us,p50_us,p99_us,max_us,mbps,gbps,msg_rate,cpu_pct,peer_cpu_pct\n",
	      out);
	for (unsigned i = 0; i < r->n_rows; i++) {
		const struct ferry_osu_row *w = &r->rows[i];

		fprintf(out,
			"%s,%s,%s,%u,%u,%llu,%llu,%llu,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.4g,%.4g\n",
			mode ? mode : "", r->transport, r->poll, r->window,
			w->size, (unsigned long long)w->iters,
			(unsigned long long)w->count,
			(unsigned long long)w->bytes, fin(w->seconds),
			fin(w->avg_us), fin(w->p50_us), fin(w->p99_us),
			fin(w->max_us), fin(w->mbps), fin(w->gbps),
			fin(w->msg_rate), fin(w->cpu_pct),
			fin(w->peer_cpu_pct));
	}
	return ferror(out) ? -EIO : 0;
}

/* iperf3 -J's members for a message benchmark: each size an interval
 * (its messages' bytes over its timed seconds, one after another), the
 * run's sums in end; ferry's rows beside them. */
static void osu_iperf(const struct ferry_osu_result *r, FILE *out)
{
	static const char *const sums[] = { "sum_sent", "sum_received" };
	double t = 0, cpu = 0, peer = 0;
	uint64_t bytes = 0;
	time_t now = time(NULL);
	char when[64];

	fprintf(out, "  \"start\": {\"version\": \"ferry %s\", \"timestamp\": {\"time\": \"%s\", \"timesecs\": %lld},\n"
		"    \"test_start\": {\"protocol\": \"%s\", \"num_streams\": %d, \"omit\": 0, \"reverse\": 0, \"tos\": 0}},\n"
		"  \"intervals\": [",
		FERRY_VERSION, ferry__utc_date(now, when, sizeof(when)),
		(long long)now, strcmp(r->transport, "tcp") ? "RoCEv2" : "TCP",
		r->mode == FERRY_OSU_BIBW ? 2 : 1);
	for (unsigned i = 0; i < r->n_rows; i++) {
		const struct ferry_osu_row *w = &r->rows[i];
		double s = fin(w->seconds);

		fprintf(out, "%s\n    {\"size\": %u, \"sum\": {\"start\": %.9g, \"end\": %.9g, \"seconds\": %.9g, \"bytes\": %llu, \"bits_per_second\": %.9g, \"omitted\": false, \"sender\": true}}",
			i ? "," : "", w->size, t, t + s, s,
			(unsigned long long)w->bytes,
			s > 0 ? (double)w->bytes * 8 / s : 0);
		t += s;
		bytes += w->bytes;
		cpu += fin(w->cpu_pct) * s;
		peer += fin(w->peer_cpu_pct) * s;
	}
	/* every message sent is received: the two sums are one */
	fputs("\n  ],\n  \"end\": {", out);
	for (int i = 0; i < 2; i++)
		fprintf(out, "\"%s\": {\"start\": 0, \"end\": %.9g, \"seconds\": %.9g, \"bytes\": %llu, \"bits_per_second\": %.9g, \"sender\": true},\n    ",
			sums[i], t, t, (unsigned long long)bytes,
			t > 0 ? (double)bytes * 8 / t : 0);
	fprintf(out, "\"cpu_utilization_percent\": {\"host_total\": %.4g, \"remote_total\": %.4g}},\n",
		t > 0 ? cpu / t : 0, t > 0 ? peer / t : 0);
}

int ferry_osu_json(const struct ferry_osu_result *r, FILE *out)
{
	return ferry_osu_json_ex(r, out, NULL, NULL);
}

int ferry_osu_json_ex(const struct ferry_osu_result *r, FILE *out,
		      void (*extra)(FILE *out, void *arg), void *arg)
{
	const char *mode = ferry_osu_mode_name(r->mode);

	fputs("{\n", out);
	osu_iperf(r, out);
	fputs("  \"osu\": ", out);
	ferry_json_str(out, mode ? mode : "");
	fputs(", \"transport\": ", out);
	ferry_json_str(out, r->transport);
	fputs(", \"poll\": ", out);
	ferry_json_str(out, r->poll);
	fputs(", \"peer_poll\": ", out);
	ferry_json_str(out, r->peer_poll);
	fputs(",\n  \"peer\": ", out);
	ferry_json_str(out, r->peer);
	fprintf(out, ", \"window\": %u,\n  \"rows\": [", r->window);
	for (unsigned i = 0; i < r->n_rows; i++) {
		const struct ferry_osu_row *w = &r->rows[i];

		fprintf(out,
			"%s\n    {\"size\": %u, \"iters\": %llu, \"count\": %llu, \"bytes\": %llu, \"seconds\": %.9g, "
			"\"avg_us\": %.9g, \"p50_us\": %.9g, \"p99_us\": %.9g, \"max_us\": %.9g, "
			"\"mbps\": %.9g, \"gbps\": %.9g, \"msg_rate\": %.9g, \"cpu_pct\": %.4g, \"peer_cpu_pct\": %.4g}",
			i ? "," : "", w->size, (unsigned long long)w->iters,
			(unsigned long long)w->count,
			(unsigned long long)w->bytes, fin(w->seconds),
			fin(w->avg_us), fin(w->p50_us), fin(w->p99_us),
			fin(w->max_us), fin(w->mbps), fin(w->gbps),
			fin(w->msg_rate), fin(w->cpu_pct),
			fin(w->peer_cpu_pct));
	}
	fputs("\n  ]", out);
	if (extra)
		extra(out, arg);
	fputs("\n}\n", out);
	return ferror(out) ? -EIO : 0;
}
