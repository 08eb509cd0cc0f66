/* Report arithmetic and the JSON report. The JSON is checked twice: by a
 * strict validator here (RFC 8259 grammar, no NaN/Infinity, no raw control
 * characters, UTF-8 strings), and, where python3 exists, by Python's json
 * module, which also decodes chosen fields for comparison. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cu.h"
#include "ferry/stats.h"

/* ---- a strict JSON validator ---- */

struct jp {
	const char *p, *end;
	int depth;
};

static void ws(struct jp *j)
{
	while (j->p < j->end &&
	       (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
		j->p++;
}

static bool lit(struct jp *j, const char *s)
{
	size_t n = strlen(s);

	if ((size_t)(j->end - j->p) < n || memcmp(j->p, s, n) != 0)
		return false;
	j->p += n;
	return true;
}

/* One UTF-8 sequence starting at a byte >= 0x80. */
static bool utf8(struct jp *j)
{
	unsigned char c = (unsigned char)*j->p;
	int more;
	unsigned cp;

	if (c >= 0xc2 && c <= 0xdf) {
		more = 1;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		more = 2;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		more = 3;
		cp = c & 0x07;
	} else {
		return false;
	}
	j->p++;
	for (int i = 0; i < more; i++, j->p++) {
		if (j->p >= j->end || ((unsigned char)*j->p & 0xc0) != 0x80)
			return false;
		cp = cp << 6 | ((unsigned char)*j->p & 0x3f);
	}
	if ((more == 2 && cp < 0x800) || (more == 3 && cp < 0x10000) ||
	    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return false;
	return true;
}

static bool jstring(struct jp *j)
{
	if (!lit(j, "\""))
		return false;
	while (j->p < j->end) {
		unsigned char c = (unsigned char)*j->p;
		if (c == '"') {
			j->p++;
			return true;
		}
		if (c < 0x20)
			return false;
		if (c >= 0x80) {
			if (!utf8(j))
				return false;
			continue;
		}
		j->p++;
		if (c != '\\')
			continue;
		if (j->p >= j->end)
			return false;
		c = (unsigned char)*j->p++;
		if (c == 'u') {
			for (int i = 0; i < 4; i++, j->p++)
				if (j->p >= j->end || !isxdigit((unsigned char)*j->p))
					return false;
		} else if (!strchr("\"\\/bfnrt", c) || c == 0) {
			return false;
		}
	}
	return false;
}

static bool digits(struct jp *j)
{
	const char *s = j->p;

	while (j->p < j->end && isdigit((unsigned char)*j->p))
		j->p++;
	return j->p > s;
}

static bool jnumber(struct jp *j)
{
	if (j->p < j->end && *j->p == '-')
		j->p++;
	if (j->p < j->end && *j->p == '0')
		j->p++;
	else if (!(j->p < j->end && *j->p >= '1' && *j->p <= '9') || !digits(j))
		return false;
	if (j->p < j->end && *j->p == '.') {
		j->p++;
		if (!digits(j))
			return false;
	}
	if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
		j->p++;
		if (j->p < j->end && (*j->p == '+' || *j->p == '-'))
			j->p++;
		if (!digits(j))
			return false;
	}
	return true;
}

static bool jvalue(struct jp *j);

static bool jcontainer(struct jp *j, char open, char close, bool keyed)
{
	if (!lit(j, (char[]){ open, 0 }) || ++j->depth > 64)
		return false;
	ws(j);
	if (j->p < j->end && *j->p == close) {
		j->p++;
		j->depth--;
		return true;
	}
	for (;;) {
		ws(j);
		if (keyed) {
			if (!jstring(j))
				return false;
			ws(j);
			if (!lit(j, ":"))
				return false;
		}
		if (!jvalue(j))
			return false;
		ws(j);
		if (lit(j, ","))
			continue;
		if (!lit(j, (char[]){ close, 0 }))
			return false;
		j->depth--;
		return true;
	}
}

static bool jvalue(struct jp *j)
{
	ws(j);
	if (j->p >= j->end)
		return false;
	switch (*j->p) {
	case '{':
		return jcontainer(j, '{', '}', true);
	case '[':
		return jcontainer(j, '[', ']', false);
	case '"':
		return jstring(j);
	case 't':
		return lit(j, "true");
	case 'f':
		return lit(j, "false");
	case 'n':
		return lit(j, "null");
	default:
		return jnumber(j);
	}
}

static bool json_valid(const char *s, size_t n)
{
	struct jp j = { s, s + n, 0 };

	if (!jvalue(&j))
		return false;
	ws(&j);
	return j.p == j.end;
}

static void test_validator(void)
{
	const char *good[] = {
		"{}", "[]", "null", "-0", "1.5e+300", "{\"a\": [1, 2, {\"b\": null}]}",
		"\"\\u0001\\\"\\\\\"", "\"\xc3\xa9\"", " [true , false] ",
	};
	const char *bad[] = {
		"", "{", "[1,]", "nan", "-nan", "inf", "NaN", "01", "1.", ".5",
		"\"\x01\"", "\"\\x\"", "\"\\u12\"", "\"a", "{\"a\" 1}", "[] []",
		"\"\xff\"", "\"\xc3\"", "{a: 1}",
	};

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		CU_ASSERT(json_valid(good[i], strlen(good[i])));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CU_ASSERT_FALSE(json_valid(bad[i], strlen(bad[i])));
}

/* ---- python3 as a second, independent parser ---- */

static int have_python = -1;

static bool python_ok(void)
{
	if (have_python < 0)
		have_python = system("python3 -c pass >/dev/null 2>&1") == 0;
	return have_python == 1;
}

/* Parse json strictly (NaN/Infinity rejected) and write, for each path
 * ("end.peer.cpu_user_s", "intervals.3.gbps", "#intervals" for a length),
 * the value followed by a NUL: strings as their UTF-8 bytes, anything else
 * as JSON. */
#define PY_QUERY                                                             \
	"import json, sys\n"                                                 \
	"def bad(c): raise ValueError(c)\n"                                  \
	"d = json.loads(sys.stdin.buffer.read().decode(\"utf-8\"),\n"        \
	"               parse_constant=bad)\n"                               \
	"o = sys.stdout.buffer\n"                                            \
	"for p in sys.argv[1:]:\n"                                           \
	"    n = p.startswith(\"#\")\n"                                      \
	"    v = d\n"                                                        \
	"    for k in p.lstrip(\"#\").split(\".\"):\n"                       \
	"        v = v[int(k)] if isinstance(v, list) else v[k]\n"           \
	"    if n: v = len(v)\n"                                             \
	"    o.write(v.encode() if isinstance(v, str) else json.dumps(v).encode())\n" \
	"    o.write(b\"\\0\")\n"

/* Returns python's exit status (0 = parsed and all paths found); the
 * answers are in out (malloc'd), *outlen bytes. */
static int py_query(const char *json, size_t n, const char *paths,
		    char **out, size_t *outlen)
{
	char tmpl[] = "/tmp/ferry_test_stats_XXXXXX";
	char cmd[4096];
	int fd = mkstemp(tmpl), st;
	FILE *p, *f;

	*out = NULL;
	*outlen = 0;
	if (fd < 0)
		return -1;
	close(fd);
	snprintf(cmd, sizeof(cmd), "python3 -c '%s' %s > %s", PY_QUERY, paths,
		 tmpl);
	p = popen(cmd, "w");
	if (!p) {
		unlink(tmpl);
		return -1;
	}
	fwrite(json, 1, n, p);
	st = pclose(p);
	f = fopen(tmpl, "rb");
	if (f) {
		char *buf = malloc(1 << 16);
		if (buf) {
			*outlen = fread(buf, 1, 1 << 16, f);
			*out = buf;
		}
		fclose(f);
	}
	unlink(tmpl);
	return st == -1 ? -1 : (WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

/* The next NUL-terminated answer in the python output. */
static const char *next_answer(const char **cur, const char *end)
{
	const char *a = *cur;

	if (!a || a >= end)
		return "<missing>";
	*cur = a + strlen(a) + 1;
	return a;
}

/* ---- the report ---- */

static char *render(const struct ferry_report *r, size_t *n)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, n);

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	CU_ASSERT_EQUAL(ferry_report_json(r, f), 0);
	CU_ASSERT_EQUAL(fclose(f), 0);
	return buf;
}

static struct ferry_report *sample_report(void)
{
	struct ferry_report *r = calloc(1, sizeof(*r));

	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	strcpy(r->role, "sender");
	strcpy(r->transport, "tcp");
	strcpy(r->peer, "10.0.0.2:5201");
	strcpy(r->transport_why, "no RDMA device");
	strcpy(r->peer_transport, "tcp");
	r->streams = 8;
	r->slots = 256;
	r->depth = 32;
	r->chunk_size = 4 << 20;
	strcpy(r->page_kind, "2M");
	r->pool_bytes = 1ull << 31;
	r->numa_node = -1;
	strcpy(r->placement, "cpus 0-7");
	r->seconds = 10.0;
	r->bytes = 12500000000ull;
	r->chunks = 2980;
	r->stalls = 3;
	r->crc_errors = 0;
	r->cpu_user = 1.5;
	r->cpu_sys = 3.5;
	r->peer_cpu_user = 0.25;
	r->peer_cpu_sys = 0.75;
	r->peer_bytes = r->bytes;
	return r;
}

static void test_arithmetic(void)
{
	CU_ASSERT_DOUBLE_EQUAL(ferry_gbps(1000000000ull, 1.0), 8.0, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(ferry_gbps(125000000ull, 1.0), 1.0, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(ferry_gbps(12500000000ull, 10.0), 10.0, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(ferry_gbps(1, 8e-9), 1.0, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(ferry_gbps(UINT64_MAX, 1.0),
			       (double)UINT64_MAX * 8 / 1e9, 1.0);
	CU_ASSERT_DOUBLE_EQUAL(ferry_gbps(0, 5.0), 0.0, 0);
	/* no time: 0, never inf or NaN */
	CU_ASSERT_DOUBLE_EQUAL(ferry_gbps(1000, 0.0), 0.0, 0);
	CU_ASSERT_DOUBLE_EQUAL(ferry_gbps(1000, -1.0), 0.0, 0);
	CU_ASSERT_DOUBLE_EQUAL(ferry_gbps(1000, -0.0), 0.0, 0);
	CU_ASSERT_DOUBLE_EQUAL(ferry_gbps(1000, NAN), 0.0, 0);

	CU_ASSERT_DOUBLE_EQUAL(ferry_cpu_per_gb(2.0, 4000000000ull), 0.5, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(ferry_cpu_per_gb(1.0, 1000000000ull), 1.0, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(ferry_cpu_per_gb(0.0, 1000000000ull), 0.0, 0);
	CU_ASSERT_DOUBLE_EQUAL(ferry_cpu_per_gb(3.0, 500000000ull), 6.0, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(ferry_cpu_per_gb(1.0, 1), 1e9, 1e-3);
	/* nothing moved: negative (unknown) */
	CU_ASSERT(ferry_cpu_per_gb(0.0, 0) < 0);
	CU_ASSERT(ferry_cpu_per_gb(5.0, 0) < 0);
}

static void test_intervals(void)
{
	struct ferry_report *r = calloc(1, sizeof(*r));
	const unsigned extra = 7;

	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	for (unsigned i = 0; i < FERRY_REPORT_MAX_IV + extra; i++) {
		struct ferry_interval iv = { i, i + 1.0, 1000ull * i, i, 0 };
		ferry_report_add_interval(r, &iv);
		CU_ASSERT_EQUAL(r->n_iv, i < FERRY_REPORT_MAX_IV ?
					 i + 1 : FERRY_REPORT_MAX_IV);
	}
	CU_ASSERT_EQUAL(r->n_iv, FERRY_REPORT_MAX_IV);
	CU_ASSERT_EQUAL(r->iv_dropped, extra);
	/* the first ones are kept, in order */
	CU_ASSERT_EQUAL(r->iv[0].bytes, 0);
	CU_ASSERT_DOUBLE_EQUAL(r->iv[1].start, 1.0, 0);
	CU_ASSERT_EQUAL(r->iv[FERRY_REPORT_MAX_IV - 1].bytes,
			1000ull * (FERRY_REPORT_MAX_IV - 1));
	CU_ASSERT_EQUAL(r->iv[FERRY_REPORT_MAX_IV - 1].chunks,
			FERRY_REPORT_MAX_IV - 1);

	/* the full report is valid JSON with every kept interval */
	size_t n;
	char *js = render(r, &n);
	CU_ASSERT(json_valid(js, n));
	if (python_ok()) {
		char *ans;
		size_t alen;
		int st = py_query(js, n,
				  "\\#intervals end.intervals_dropped "
				  "intervals.3599.bytes intervals.3599.gbps "
				  "intervals.0.start",
				  &ans, &alen);
		const char *cur = ans, *end = ans + alen;
		CU_ASSERT_EQUAL(st, 0);
		CU_ASSERT_STRING_EQUAL(next_answer(&cur, end), "3600");
		CU_ASSERT_STRING_EQUAL(next_answer(&cur, end), "7");
		CU_ASSERT_STRING_EQUAL(next_answer(&cur, end), "3599000");
		CU_ASSERT_STRING_EQUAL(next_answer(&cur, end), "0.028792");
		CU_ASSERT_STRING_EQUAL(next_answer(&cur, end), "0");
		free(ans);
	}
	free(js);
	free(r);
}

static void test_json_plain(void)
{
	struct ferry_report *r = sample_report();
	struct ferry_interval iv = { 0.0, 1.0, 1250000000ull, 300, 1 };
	size_t n;
	char *js;

	ferry_report_add_interval(r, &iv);
	iv = (struct ferry_interval){ 1.0, 1.0, 5, 1, 0 }; /* zero length */
	ferry_report_add_interval(r, &iv);
	js = render(r, &n);
	CU_ASSERT_FATAL(js != NULL);
	CU_ASSERT(json_valid(js, n));
	if (!json_valid(js, n))
		fprintf(stderr, "\n--- invalid JSON ---\n%s\n", js);
	if (python_ok()) {
		char *ans;
		size_t alen;
		int st = py_query(js, n,
				  "start.role start.transport start.peer "
				  "start.transport_reason start.peer_transport "
				  "start.streams "
				  "start.chunk_bytes start.memory.pool_bytes "
				  "start.memory.numa_node start.memory.placement "
				  "\\#intervals intervals.0.gbps intervals.1.gbps "
				  "end.gbps end.bytes end.cpu.per_gb_s "
				  "end.peer.cpu_user_s end.peer.cpu_sys_s "
				  "end.peer.bytes end.intervals_dropped",
				  &ans, &alen);
		const char *cur = ans, *end = ans + alen;
		const char *want[] = {
			"sender", "tcp", "10.0.0.2:5201", "no RDMA device", "tcp",
			"8",
			"4194304", "2147483648", "-1", "cpus 0-7", "2", "10",
			"0", "10", "12500000000", "0.4", "0.25", "0.75",
			"12500000000", "0",
		};
		CU_ASSERT_EQUAL(st, 0);
		for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
			const char *a = next_answer(&cur, end);
			CU_ASSERT_STRING_EQUAL(a, want[i]);
			if (strcmp(a, want[i]) != 0)
				fprintf(stderr, "\nanswer %zu: got '%s' want '%s'\n",
					i, a, want[i]);
		}
		free(ans);
	}
	free(js);
	free(r);
}

/* The DSCP a session used is in start, and in iperf3's test_start.tos
 * as the whole byte; a session without one says -1 and tos 0. */
static void test_json_dscp(void)
{
	struct ferry_report *r = sample_report();
	const int dscp[] = { 10, -1, 0 };
	const char *want[][2] = { { "10", "40" }, { "-1", "0" }, { "0", "0" } };

	for (size_t i = 0; i < 3; i++) {
		size_t n;
		char *js;

		r->dscp = dscp[i];
		js = render(r, &n);
		CU_ASSERT(json_valid(js, n));
		if (python_ok()) {
			char *ans;
			size_t alen;
			int st = py_query(js, n, "start.dscp start.test_start.tos",
					  &ans, &alen);
			const char *cur = ans, *end = ans + alen;

			CU_ASSERT_EQUAL(st, 0);
			CU_ASSERT_STRING_EQUAL(next_answer(&cur, end), want[i][0]);
			CU_ASSERT_STRING_EQUAL(next_answer(&cur, end), want[i][1]);
			free(ans);
		} else {
			char key[32];

			snprintf(key, sizeof(key), "\"dscp\": %s", want[i][0]);
			CU_ASSERT_PTR_NOT_NULL(strstr(js, key));
		}
		free(js);
	}
	free(r);
}

/* Quotes, backslashes and every control character in the string fields
 * come back as the same bytes. */
static void test_json_escapes(void)
{
	struct ferry_report *r = sample_report();
	char ctl[40];
	size_t n;
	char *js;

	strcpy(r->peer, "[fe80::1%\"eth0\"]:5201\\x");
	for (int i = 0; i < 31; i++)
		ctl[i] = (char)(i + 1); /* 0x01 .. 0x1f */
	ctl[31] = 0x7f;
	ctl[32] = '/';
	ctl[33] = 0;
	memcpy(r->placement, ctl, sizeof(ctl));
	strcpy(r->transport_why, "say \"hi\"\n\tthen \\n stop");
	strcpy(r->role, "\"\\\"\\");
	strcpy(r->page_kind, "\b\f\r");
	js = render(r, &n);
	CU_ASSERT_FATAL(js != NULL);
	CU_ASSERT(json_valid(js, n));
	if (!json_valid(js, n))
		fprintf(stderr, "\n--- invalid JSON ---\n%s\n", js);
	if (python_ok()) {
		char *ans;
		size_t alen;
		int st = py_query(js, n,
				  "start.peer start.transport_reason start.role "
				  "start.memory.pages",
				  &ans, &alen);
		const char *cur = ans, *end = ans + alen;
		CU_ASSERT_EQUAL(st, 0);
		CU_ASSERT_STRING_EQUAL(next_answer(&cur, end), r->peer);
		CU_ASSERT_STRING_EQUAL(next_answer(&cur, end), r->transport_why);
		CU_ASSERT_STRING_EQUAL(next_answer(&cur, end), r->role);
		CU_ASSERT_STRING_EQUAL(next_answer(&cur, end), r->page_kind);
		free(ans);
		/* placement has 0x01..0x1f; compare it as a JSON string with a
		 * separate query so the NUL separators stay unambiguous */
		st = py_query(js, n, "start.memory.placement", &ans, &alen);
		CU_ASSERT_EQUAL(st, 0);
		CU_ASSERT_EQUAL(alen, strlen(r->placement) + 1);
		if (ans && alen == strlen(r->placement) + 1)
			CU_ASSERT_EQUAL(memcmp(ans, r->placement, alen), 0);
		free(ans);
	}
	free(js);
	free(r);
}

/* JSON has no NaN or infinity: unknown numbers are null. Negative peer CPU
 * means "unknown" and is null too. */
static void test_json_null(void)
{
	struct ferry_report *r = sample_report();
	struct ferry_interval iv = { NAN, 1.0, 100, 1, 0 };
	size_t n;
	char *js;

	r->peer_cpu_user = -1.0;
	r->peer_cpu_sys = NAN;
	r->cpu_user = NAN;
	r->seconds = INFINITY;
	ferry_report_add_interval(r, &iv);
	iv = (struct ferry_interval){ 0.0, INFINITY, 100, 1, 0 };
	ferry_report_add_interval(r, &iv);
	iv = (struct ferry_interval){ -INFINITY, NAN, 100, 1, 0 };
	ferry_report_add_interval(r, &iv);
	js = render(r, &n);
	CU_ASSERT_FATAL(js != NULL);
	CU_ASSERT(json_valid(js, n));
	CU_ASSERT_PTR_NULL(strstr(js, "nan"));
	CU_ASSERT_PTR_NULL(strstr(js, "inf"));
	if (!json_valid(js, n))
		fprintf(stderr, "\n--- invalid JSON ---\n%s\n", js);
	if (python_ok()) {
		char *ans;
		size_t alen;
		int st = py_query(js, n,
				  "end.peer.cpu_user_s end.peer.cpu_sys_s "
				  "end.cpu.user_s end.cpu.per_gb_s end.seconds "
				  "end.gbps intervals.0.start intervals.0.gbps "
				  "intervals.1.end intervals.1.gbps "
				  "intervals.2.start intervals.2.end",
				  &ans, &alen);
		const char *cur = ans, *end = ans + alen;
		const char *want[] = { "null", "null", "null", "null", "null", "0",
				       "null", "0", "null", "0", "null", "null" };
		CU_ASSERT_EQUAL(st, 0);
		for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
			const char *a = next_answer(&cur, end);
			CU_ASSERT_STRING_EQUAL(a, want[i]);
			if (strcmp(a, want[i]) != 0)
				fprintf(stderr, "\nanswer %zu: got '%s' want '%s'\n",
					i, a, want[i]);
		}
		free(ans);
	}
	free(js);

	/* nothing moved: per-GB CPU is unknown, null; zero peer CPU is 0 */
	r->bytes = 0;
	r->cpu_user = 1.0;
	r->seconds = 0.0;
	r->peer_cpu_user = 0.0;
	r->peer_cpu_sys = -INFINITY;
	js = render(r, &n);
	CU_ASSERT(json_valid(js, n));
	if (python_ok()) {
		char *ans;
		size_t alen;
		int st = py_query(js, n,
				  "end.cpu.per_gb_s end.gbps end.peer.cpu_user_s "
				  "end.peer.cpu_sys_s",
				  &ans, &alen);
		const char *cur = ans, *end = ans + alen;
		CU_ASSERT_EQUAL(st, 0);
		/* per_gb_s is null, never a number a reader would take
		 * for a measurement */
		CU_ASSERT_STRING_EQUAL(next_answer(&cur, end), "null");
		CU_ASSERT_STRING_EQUAL(next_answer(&cur, end), "0");
		CU_ASSERT_STRING_EQUAL(next_answer(&cur, end), "0");
		CU_ASSERT_STRING_EQUAL(next_answer(&cur, end), "null");
		free(ans);
	}
	free(js);
	free(r);
}

/* A stream that cannot be written reports -EIO. */
static void test_json_write_error(void)
{
	struct ferry_report *r = sample_report();
	FILE *f = fopen("/dev/full", "w");

	if (!f) {
		free(r);
		return;
	}
	setvbuf(f, NULL, _IONBF, 0);
	CU_ASSERT_EQUAL(ferry_report_json(r, f), -EIO);
	fclose(f);
	free(r);
}

int main(void)
{
	CU_TestInfo tests[] = {
		{ "JSON validator self-check", test_validator },
		{ "gbps and cpu per GB", test_arithmetic },
		{ "intervals beyond the maximum are dropped", test_intervals },
		{ "JSON report, plain values", test_json_plain },
		{ "JSON report: the DSCP", test_json_dscp },
		{ "JSON escapes in strings", test_json_escapes },
		{ "JSON null for NaN, infinity, unknown", test_json_null },
		{ "JSON write error", test_json_write_error },
		CU_TEST_INFO_NULL,
	};
	if (!python_ok())
		fprintf(stderr, "python3 not found: JSON checked by the built-in "
				"validator only\n");
	return ferry_cu_run("stats", tests);
}
