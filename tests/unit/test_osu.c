/* ferry bench --osu: the pure parts. Size lists, iteration counts,
 * percentiles and row figures, the small control messages, and the
 * table, CSV and JSON a result is written as. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu.h"
#include "ferry/error.h"
#include "ferry/session.h"
#include "osu/osu.h"

static void test_sizes_ranges(void)
{
	struct ferry_osu_spec s = { 0 };
	char why[160];

	CU_ASSERT_EQUAL(ferry_osu_parse_sizes("1-64K", &s, why, sizeof(why)), 0);
	CU_ASSERT_EQUAL(s.n_sizes, 17);
	CU_ASSERT_EQUAL(s.sizes[0], 1);
	CU_ASSERT_EQUAL(s.sizes[6], 64);
	CU_ASSERT_EQUAL(s.sizes[16], 65536);
	/* a range stops at the last power of two from LO not above HI */
	CU_ASSERT_EQUAL(ferry_osu_parse_sizes("3-100", &s, why, sizeof(why)), 0);
	CU_ASSERT_EQUAL(s.n_sizes, 6); /* 3 6 12 24 48 96 */
	CU_ASSERT_EQUAL(s.sizes[5], 96);
	CU_ASSERT_EQUAL(ferry_osu_parse_sizes("4M-4M", &s, why, sizeof(why)), 0);
	CU_ASSERT_EQUAL(s.n_sizes, 1);
	CU_ASSERT_EQUAL(s.sizes[0], 4u << 20);
}

static void test_sizes_lists(void)
{
	struct ferry_osu_spec s = { 0 };
	char why[160];

	CU_ASSERT_EQUAL(ferry_osu_parse_sizes("8,64,1K,1MiB,4KB,2k", &s, why,
					      sizeof(why)), 0);
	CU_ASSERT_EQUAL(s.n_sizes, 6);
	CU_ASSERT_EQUAL(s.sizes[0], 8);
	CU_ASSERT_EQUAL(s.sizes[2], 1024);
	CU_ASSERT_EQUAL(s.sizes[3], 1u << 20);
	CU_ASSERT_EQUAL(s.sizes[4], 4096);
	CU_ASSERT_EQUAL(s.sizes[5], 2048);
	CU_ASSERT_EQUAL(ferry_osu_parse_sizes("1-4,1M", &s, why, sizeof(why)), 0);
	CU_ASSERT_EQUAL(s.n_sizes, 4); /* 1 2 4 1M */
	CU_ASSERT_EQUAL(s.sizes[3], 1u << 20);
	ferry_osu_default_sizes(&s);
	CU_ASSERT_EQUAL(s.n_sizes, 23); /* 1 B .. 4 MiB */
	CU_ASSERT_EQUAL(s.sizes[22], FERRY_OSU_MAX_SIZE);
}

static void test_sizes_bad(void)
{
	static const char *const bad[] = {
		"", "0", "0-8", "8-4", "5M", "1-8M", "64,", ",64", "64;128",
		"x", "1G", "64K-", "-64", "1,,2", "99999999999999",
	};
	struct ferry_osu_spec s = { 0 };
	char why[160];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why[0] = 0;
		CU_ASSERT_EQUAL(ferry_osu_parse_sizes(bad[i], &s, why,
						      sizeof(why)), -EINVAL);
		CU_ASSERT_EQUAL(s.n_sizes, 0);
		CU_ASSERT(why[0] != 0);
	}
	/* more than the table holds */
	CU_ASSERT_EQUAL(ferry_osu_parse_sizes("1-4M,1-4M,1-4M", &s, why,
					      sizeof(why)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "more than"));
}

static void test_iters(void)
{
	struct ferry_osu_spec s = { .mode = FERRY_OSU_LAT };
	unsigned it, wu;

	ferry_osu_iters(&s, 8192, &it, &wu);
	CU_ASSERT(it == 10000 && wu == 1000);
	ferry_osu_iters(&s, 8193, &it, &wu);
	CU_ASSERT(it == 1000 && wu == 100);
	s.mode = FERRY_OSU_BW;
	ferry_osu_iters(&s, 64, &it, &wu);
	CU_ASSERT(it == 100 && wu == 10);
	ferry_osu_iters(&s, 1u << 20, &it, &wu);
	CU_ASSERT(it == 20 && wu == 2);
	s.iters = 50;
	ferry_osu_iters(&s, 1u << 20, &it, &wu);
	CU_ASSERT(it == 50 && wu == 5);
	s.warmup = 7;
	ferry_osu_iters(&s, 1, &it, &wu);
	CU_ASSERT(it == 50 && wu == 7);
	s.warmup = FERRY_OSU_NO_WARMUP;
	ferry_osu_iters(&s, 1, &it, &wu);
	CU_ASSERT(it == 50 && wu == 0);
}

static void test_modes(void)
{
	static const char *const names[] = { "lat", "bw", "bibw", "mr" };

	for (int i = 0; i < 4; i++) {
		CU_ASSERT_EQUAL(ferry_osu_mode_parse(names[i]), i + 1);
		CU_ASSERT_STRING_EQUAL(ferry_osu_mode_name(i + 1), names[i]);
	}
	CU_ASSERT_EQUAL(ferry_osu_mode_parse("latency"), 0);
	CU_ASSERT_PTR_NULL(ferry_osu_mode_name(0));
	CU_ASSERT_PTR_NULL(ferry_osu_mode_name(5));
}

static void test_percentile(void)
{
	double v[100];

	for (int i = 0; i < 100; i++)
		v[i] = i + 1; /* 1 .. 100 */
	CU_ASSERT_DOUBLE_EQUAL(ferry_osu_percentile(v, 100, 50), 50, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(ferry_osu_percentile(v, 100, 99), 99, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(ferry_osu_percentile(v, 100, 100), 100, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(ferry_osu_percentile(v, 100, 0), 1, 1e-9);
	/* nearest rank on few values: p99 of 3 is the largest */
	CU_ASSERT_DOUBLE_EQUAL(ferry_osu_percentile(v, 3, 99), 3, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(ferry_osu_percentile(v, 3, 50), 2, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(ferry_osu_percentile(v, 1, 50), 1, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(ferry_osu_percentile(v, 0, 50), 0, 1e-9);
}

static void test_row_stats(void)
{
	struct ferry_osu_row r = { .size = 1000, .iters = 5, .count = 10,
				   .bytes = 10000, .seconds = 0.5 };
	double s[5] = { 9, 1, 5, 3, 7 };

	ferry_osu_row_stats(&r, s, 5);
	CU_ASSERT_DOUBLE_EQUAL(s[0], 1, 1e-9); /* sorted in place */
	CU_ASSERT_DOUBLE_EQUAL(s[4], 9, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(r.avg_us, 5, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(r.p50_us, 5, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(r.p99_us, 9, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(r.max_us, 9, 1e-9);
	CU_ASSERT(r.p50_us <= r.p99_us && r.p99_us <= r.max_us);
	CU_ASSERT_DOUBLE_EQUAL(r.mbps, 0.02, 1e-12);     /* 20000 B/s */
	CU_ASSERT_DOUBLE_EQUAL(r.gbps, 0.00016, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(r.msg_rate, 20, 1e-9);
}

static void test_msg_codec(void)
{
	struct ferry__osu_msg m = { .type = FERRY__OSU_STAT, .arg = 7,
				    .a = 1, .b = UINT64_MAX, .c = 1234567,
				    .d = FERRY_POLL_BUSY }, back;
	uint8_t b[FERRY__OSU_MSG_LEN];

	CU_ASSERT(FERRY__OSU_MSG_LEN <= FERRY_XPORT_MSG_MAX);
	ferry__osu_msg_encode(&m, b);
	CU_ASSERT_EQUAL(b[0], FERRY__OSU_STAT); /* little-endian */
	CU_ASSERT_EQUAL(ferry__osu_msg_decode(b, sizeof(b), &back), 0);
	CU_ASSERT(memcmp(&m, &back, sizeof(m)) == 0);
	CU_ASSERT_EQUAL(ferry__osu_msg_decode(b, sizeof(b) - 1, &back),
			-FERRY_EPROTO);
	/* imm: the op above a 28-bit sequence number */
	CU_ASSERT_EQUAL(FERRY__OSU_OP(FERRY__OSU_IMM(FERRY__OSU_PONG, 0xffffffffu)),
			FERRY__OSU_PONG);
	CU_ASSERT_EQUAL(FERRY__OSU_IMM(FERRY__OSU_PING, 5) & 0xfffffffu, 5);
}

/* A result of two rows, as ferry_osu would fill it. */
static void sample_result(struct ferry_osu_result *r)
{
	memset(r, 0, sizeof(*r));
	r->mode = FERRY_OSU_BW;
	snprintf(r->transport, sizeof(r->transport), "tcp");
	snprintf(r->poll, sizeof(r->poll), "event");
	snprintf(r->peer_poll, sizeof(r->peer_poll), "busy");
	snprintf(r->peer, sizeof(r->peer), "host \"x\":7471");
	r->window = 64;
	r->n_rows = 2;
	for (unsigned i = 0; i < 2; i++) {
		struct ferry_osu_row *w = &r->rows[i];
		double s[3] = { 3, 1, 2 };

		w->size = i ? 1u << 20 : 1;
		w->iters = 3;
		w->count = 192;
		w->bytes = (uint64_t)w->size * w->count;
		w->seconds = 0.25;
		w->cpu_pct = 50;
		w->peer_cpu_pct = 25;
		ferry_osu_row_stats(w, s, 3);
	}
}

/* Write with fn into memory; returns the text (free it). */
static char *render(int (*fn)(const struct ferry_osu_result *, FILE *),
		    const struct ferry_osu_result *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	CU_ASSERT_EQUAL(fn(r, f), 0);
	fclose(f);
	return buf;
}

static void test_table(void)
{
	struct ferry_osu_result r;
	char *t, *line, *save = NULL;
	unsigned rows = 0;
	size_t width = 0;

	sample_result(&r);
	t = render(ferry_osu_table, &r);
	CU_ASSERT_PTR_NOT_NULL(strstr(t, "--osu bw"));
	CU_ASSERT_PTR_NOT_NULL(strstr(t, "window 64"));
	CU_ASSERT_PTR_NOT_NULL(strstr(t, "event polling (receiver busy)"));
	CU_ASSERT_PTR_NOT_NULL(strstr(t, "sizes 1..1M"));
	/* aligned: every data line and the column header the same width */
	for (line = strtok_r(t, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "# Size", 6) != 0 && line[0] == '#')
			continue;
		if (!width)
			width = strlen(line);
		CU_ASSERT_EQUAL(strlen(line), width);
		rows += line[0] != '#';
	}
	CU_ASSERT_EQUAL(rows, 2);
	free(t);
}

static void test_csv(void)
{
	struct ferry_osu_result r;
	char *t, *nl;

	sample_result(&r);
	t = render(ferry_osu_csv, &r);
	nl = strchr(t, '\n');
	CU_ASSERT_PTR_NOT_NULL_FATAL(nl);
	CU_ASSERT(strncmp(t, "mode,transport,poll,window,size,", 32) == 0);
	CU_ASSERT(strncmp(nl + 1, "bw,tcp,event,64,1,3,192,192,0.25,2,", 35) == 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(t, "\nbw,tcp,event,64,1048576,3,192,201326592,"));
	/* two data lines, each with as many fields as the header */
	unsigned lines = 0;
	for (char *p = t; *p; p++)
		lines += *p == '\n';
	CU_ASSERT_EQUAL(lines, 3);
	free(t);
}

static void test_json(void)
{
	struct ferry_osu_result r;
	char *t;

	sample_result(&r);
	r.rows[1].max_us = NAN; /* never written as NaN */
	t = render(ferry_osu_json, &r);
	CU_ASSERT_PTR_NOT_NULL(strstr(t, "\"osu\": \"bw\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(t, "\"peer\": \"host \\\"x\\\":7471\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(t, "\"size\": 1048576"));
	CU_ASSERT_PTR_NOT_NULL(strstr(t, "\"bytes\": 201326592"));
	CU_ASSERT_PTR_NULL(strstr(t, "nan"));
	CU_ASSERT_PTR_NULL(strstr(t, "NaN"));
	if (system("command -v python3 >/dev/null 2>&1") == 0) {
		FILE *py = popen("python3 -c 'import json,sys; r=json.load(sys.stdin); "
				 "assert [w[\"size\"] for w in r[\"rows\"]]==[1,1048576]; "
				 "assert all(w[\"bytes\"]==w[\"size\"]*w[\"count\"] for w in r[\"rows\"])'",
				 "w");
		CU_ASSERT_PTR_NOT_NULL_FATAL(py);
		fputs(t, py);
		CU_ASSERT_EQUAL(pclose(py), 0);
	}
	free(t);
}

int main(void)
{
	CU_TestInfo tests[] = {
		{ "size ranges", test_sizes_ranges },
		{ "size lists", test_sizes_lists },
		{ "bad size lists", test_sizes_bad },
		{ "iterations", test_iters },
		{ "mode names", test_modes },
		{ "percentiles", test_percentile },
		{ "row figures", test_row_stats },
		{ "control messages", test_msg_codec },
		{ "table", test_table },
		{ "csv", test_csv },
		{ "json", test_json },
		CU_TEST_INFO_NULL,
	};

	return ferry_cu_run("osu", tests);
}
