/* The metrics renderer: what it writes is valid Prometheus text (format
 * 0.0.4: each family once, HELP then TYPE then its samples; valid metric
 * and label names; label values escaped; counters named _total, never
 * negative, never going back), and says what the registry, the build and
 * (when asked) the fake host hold; goodput falls to 0 when nothing moves.
 * Pipelines here are stand-ins with counters of their own. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cu.h"
#include "ferry/error.h"
#include "ferry/metrics.h"
#include "ferry/session.h"
#include "ferry/xport.h"
#include "metrics/metrics.h"
#include "util/version.h"
#include "util/util.h"
#include "xport/uroce/rc.h"
#include "xport/uroce/uroce_id.h"

#define MAX_SAMPLES 512
#define BUF (256 << 10)

struct sample {
	char key[256]; /* name{labels} as written */
	double v;
	bool counter;
};

struct scrape {
	unsigned n;
	struct sample s[MAX_SAMPLES];
};

/* ---- a strict reader of the text format ---- */

static bool name_ok(const char *s, size_t n)
{
	if (n == 0 || !(isalpha((unsigned char)s[0]) || s[0] == '_' || s[0] == ':'))
		return false;
	for (size_t i = 1; i < n; i++)
		if (!(isalnum((unsigned char)s[i]) || s[i] == '_' || s[i] == ':'))
			return false;
	return true;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* Labels "{a="x",b="y"}" starting at p; returns the end, or NULL. */
static const char *labels(const char *p)
{
	char seen[8][64];
	unsigned n = 0;

	if (*p++ != '{')
		return NULL;
	while (*p != '}') {
		const char *q = p;

		while (isalnum((unsigned char)*q) || *q == '_')
			q++;
		if (q == p || isdigit((unsigned char)*p) ||
		    (q - p >= 2 && p[0] == '_' && p[1] == '_') || *q != '=' ||
		    q[1] != '"' || q - p >= 64 || n == 8)
			return NULL;
		for (unsigned i = 0; i < n; i++)
			if (strlen(seen[i]) == (size_t)(q - p) &&
			    strncmp(seen[i], p, (size_t)(q - p)) == 0)
				return NULL; /* a label twice */
		memcpy(seen[n], p, (size_t)(q - p));
		seen[n++][q - p] = 0;
		for (p = q + 2; *p != '"'; p++) {
			if (*p == '\n' || !*p)
				return NULL;
			if (*p == '\\') {
				p++;
				if (*p != '\\' && *p != '"' && *p != 'n')
					return NULL;
			}
		}
		p++;
		if (*p == ',')
			p++;
		else if (*p != '}')
			return NULL;
	}
	return p + 1;
}

/* Check text line by line; fill sc with every sample. Failures are
 * asserted with the line that failed. */
static void parse(const char *text, struct scrape *sc)
{
	char fams[128][96], help[96] = "", fam[96] = "", type[16] = "";
	unsigned n_fam = 0;
	const char *line = text;

	sc->n = 0;
	CU_ASSERT_FATAL(text[0] && text[strlen(text) - 1] == '\n');
	while (*line) {
		const char *eol = strchr(line, '\n');
		char l[512], name[96];
		size_t len = (size_t)(eol - line);

		CU_ASSERT_FATAL(eol && len < sizeof(l));
		memcpy(l, line, len);
		l[len] = 0;
		line = eol + 1;
		if (sscanf(l, "# HELP %95s", name) == 1) {
			CU_ASSERT(name_ok(name, strlen(name)));
			CU_ASSERT(strncmp(name, "ferry_", 6) == 0);
			CU_ASSERT(strlen(l) > strlen("# HELP ") + strlen(name) + 1);
			CU_ASSERT(strchr(l, '\\') == NULL);
			for (unsigned i = 0; i < n_fam; i++)
				if (strcmp(fams[i], name) == 0) {
					fprintf(stderr, "family twice: %s\n", name);
					CU_FAIL("a family written twice");
				}
			CU_ASSERT_FATAL(n_fam < 128);
			snprintf(fams[n_fam++], sizeof(fams[0]), "%s", name);
			snprintf(help, sizeof(help), "%s", name);
			fam[0] = 0;
			continue;
		}
		if (sscanf(l, "# TYPE %95s %15s", name, type) == 2) {
			CU_ASSERT_STRING_EQUAL(name, help); /* HELP, then TYPE */
			CU_ASSERT(strcmp(type, "counter") == 0 ||
				  strcmp(type, "gauge") == 0);
			/* counters end in _total, gauges do not */
			CU_ASSERT(ends_with(name, "_total") ==
				  (strcmp(type, "counter") == 0));
			snprintf(fam, sizeof(fam), "%s", name);
			continue;
		}
		CU_ASSERT_FATAL(l[0] != '#' && l[0] != ' ' && fam[0]);
		/* a sample of the current family */
		const char *p = l, *v;
		char *end;
		size_t nl = strcspn(l, "{ ");

		if (nl != strlen(fam) || strncmp(l, fam, nl) != 0) {
			fprintf(stderr, "sample outside its family: %s\n", l);
			CU_FAIL("sample outside its family");
			continue;
		}
		p = l + nl;
		if (*p == '{')
			p = labels(p);
		if (!p || *p != ' ') {
			fprintf(stderr, "bad labels: %s\n", l);
			CU_FAIL("bad labels");
			continue;
		}
		v = p + 1;
		double d = strtod(v, &end);
		CU_ASSERT(end != v && *end == 0 && isfinite(d));
		if (strcmp(type, "counter") == 0)
			CU_ASSERT(d >= 0);
		for (unsigned i = 0; i < sc->n; i++)
			if (strncmp(sc->s[i].key, l, (size_t)(p - l)) == 0 &&
			    sc->s[i].key[p - l] == 0) {
				fprintf(stderr, "series twice: %s\n", l);
				CU_FAIL("a series written twice");
			}
		CU_ASSERT_FATAL(sc->n < MAX_SAMPLES && (size_t)(p - l) < 256);
		memcpy(sc->s[sc->n].key, l, (size_t)(p - l));
		sc->s[sc->n].key[p - l] = 0;
		sc->s[sc->n].v = d;
		sc->s[sc->n].counter = strcmp(type, "counter") == 0;
		sc->n++;
	}
}

/* The value of series key, or NAN when absent. */
static double val(const struct scrape *sc, const char *key)
{
	for (unsigned i = 0; i < sc->n; i++)
		if (strcmp(sc->s[i].key, key) == 0)
			return sc->s[i].v;
	return NAN;
}

/* Every counter in a is in b, no smaller. */
static void monotonic(const struct scrape *a, const struct scrape *b)
{
	for (unsigned i = 0; i < a->n; i++) {
		double nb;

		if (!a->s[i].counter)
			continue;
		nb = val(b, a->s[i].key);
		if (!(nb >= a->s[i].v)) {
			fprintf(stderr, "%s: %g then %g\n", a->s[i].key,
				a->s[i].v, nb);
			CU_FAIL("a counter went back or vanished");
		}
	}
}

/* ---- a fake host ---- */

static char root[64];

static void put_file(const char *rel, const char *fmt, ...)
{
	char path[512], dir[512], *slash;
	va_list ap;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	/* make the parents */
	snprintf(dir, sizeof(dir), "%s", path);
	for (slash = dir + strlen(root) + 1; (slash = strchr(slash, '/'));
	     slash++) {
		*slash = 0;
		mkdir(dir, 0755);
		*slash = '/';
	}
	f = fopen(path, "w");
	CU_ASSERT_FATAL(f != NULL);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fclose(f);
}

static void make_root(void)
{
	if (root[0])
		return;
	snprintf(root, sizeof(root), "/tmp/ferry-metrics.XXXXXX");
	CU_ASSERT_FATAL(mkdtemp(root) != NULL);
	put_file("proc/net/snmp",
		 "Ip: Forwarding DefaultTTL\nIp: 1 64\n"
		 "Tcp: RtoAlgorithm RtoMin RtoMax MaxConn ActiveOpens PassiveOpens AttemptFails EstabResets CurrEstab InSegs OutSegs RetransSegs InErrs OutRsts InCsumErrors\n"
		 "Tcp: 1 200 120000 -1 10 11 0 0 2 900 1000 7 0 1 0\n"
		 "Udp: InDatagrams\nUdp: 5\n");
	put_file("proc/stat", "cpu  1 2 3 4\nintr 99\nctxt 12345\nbtime 1\n");
	put_file("sys/class/net/eth0/statistics/rx_dropped", "3\n");
	put_file("sys/class/net/eth0/statistics/rx_missed_errors", "4\n");
	put_file("sys/class/net/lo/statistics/rx_dropped", "0\n");
	put_file("sys/class/net/lo/statistics/rx_missed_errors", "0\n");
	put_file("sys/class/net/we\"ird\\x/statistics/rx_dropped", "5\n");
}

/* A scrape with flags; text (when not NULL) gets the text, to free. */
static void render_text(const char *r, unsigned flags, struct scrape *sc,
			char **text)
{
	char *buf = malloc(BUF);
	size_t len = 0;

	CU_ASSERT_FATAL(buf != NULL);
	CU_ASSERT_EQUAL_FATAL(ferry_metrics_render(r, flags, buf, BUF, &len),
			      0);
	CU_ASSERT_EQUAL(len, strlen(buf));
	parse(buf, sc);
	if (text)
		*text = buf;
	else
		free(buf);
}

/* A scrape as `--metrics` serves it by default: no host series. */
static void render(const char *r, struct scrape *sc)
{
	render_text(r, 0, sc, NULL);
}

/* A scrape as `--metrics --metrics-host` serves it. */
static void render_host(const char *r, struct scrape *sc)
{
	render_text(r, FERRY_METRICS_HOST, sc, NULL);
}

/* ---- stand-in pipelines ---- */

struct fake {
	_Atomic uint64_t bytes, chunks, stalls, crc;
	_Atomic unsigned streams;
};

static void fake_read(const void *ctx, struct ferry__m_pipe *v)
{
	const struct fake *f = ctx;

	v->bytes = atomic_load(&f->bytes);
	v->chunks = atomic_load(&f->chunks);
	v->stalls = atomic_load(&f->stalls);
	v->crc_errors = atomic_load(&f->crc);
	v->streams = atomic_load(&f->streams);
}

#define TCP_RX "{transport=\"tcp\",direction=\"receive\"}"
#define TCP_TX "{transport=\"tcp\",direction=\"transmit\"}"
#define UROCE_TX "{transport=\"uroce\",direction=\"transmit\"}"
/* uroce's NAK directions, as lib/xport/uroce/rc_metrics.c names them */
#define NAK_RX "receive"
#define NAK_TX "transmit"

static void test_host(void)
{
	struct scrape *sc = malloc(sizeof(*sc));

	make_root();
	ferry__metrics_reset();
	render_host(root, sc);
	CU_ASSERT_EQUAL(val(sc, "ferry_host_tcp_sent_segments_total"), 1000);
	CU_ASSERT_EQUAL(val(sc, "ferry_host_tcp_retransmitted_segments_total"), 7);
	CU_ASSERT_EQUAL(val(sc, "ferry_host_context_switches_total"), 12345);
	CU_ASSERT_EQUAL(val(sc, "ferry_netdev_rx_dropped_total{interface=\"eth0\"}"), 3);
	CU_ASSERT_EQUAL(val(sc, "ferry_netdev_rx_missed_errors_total{interface=\"eth0\"}"), 4);
	/* the escapes of a label value */
	CU_ASSERT_EQUAL(val(sc, "ferry_netdev_rx_dropped_total{interface=\"we\\\"ird\\\\x\"}"), 5);
	CU_ASSERT(isnan(val(sc, "ferry_netdev_rx_missed_errors_total{interface=\"we\\\"ird\\\\x\"}")));
	/* the loopback only once a session went over it */
	CU_ASSERT(isnan(val(sc, "ferry_netdev_rx_dropped_total{interface=\"lo\"}")));
	ferry__metrics_netdev("lo");
	render_host(root, sc);
	CU_ASSERT_EQUAL(val(sc, "ferry_netdev_rx_dropped_total{interface=\"lo\"}"), 0);
	/* the loopback has no ring to miss from: no series that stays 0 */
	CU_ASSERT(isnan(val(sc, "ferry_netdev_rx_missed_errors_total{interface=\"lo\"}")));
	/* this process: CPU time and context switches, from the kernel */
	CU_ASSERT(val(sc, "ferry_cpu_seconds_total{mode=\"user\"}") >= 0);
	CU_ASSERT(val(sc, "ferry_context_switches_total{kind=\"voluntary\"}") >= 0);
	free(sc);
}

/* A tree without the files: their families are left out, the rest is
 * still valid. */
static void test_no_host(void)
{
	struct scrape *sc = malloc(sizeof(*sc));

	ferry__metrics_reset();
	render_host("/nonexistent-ferry-root", sc);
	CU_ASSERT(isnan(val(sc, "ferry_host_tcp_sent_segments_total")));
	CU_ASSERT(isnan(val(sc, "ferry_host_context_switches_total")));
	CU_ASSERT_EQUAL(val(sc, "ferry_sessions_active{role=\"receiver\"}"), 0);
	free(sc);
}

static void test_pipelines(void)
{
	struct scrape *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	struct fake *p1 = calloc(1, sizeof(*p1)), *p2 = calloc(1, sizeof(*p2)),
		    *p3 = calloc(1, sizeof(*p3));

	make_root();
	ferry__metrics_reset();
	render(root, a);
	CU_ASSERT(isnan(val(a, "ferry_payload_bytes_total" TCP_RX)));
	atomic_store(&p1->streams, 4);
	atomic_store(&p1->bytes, 4096);
	atomic_store(&p1->chunks, 1);
	CU_ASSERT_EQUAL(ferry__metrics_attach(p1, "tcp", FERRY__M_RX, fake_read), 0);
	atomic_store(&p2->streams, 2);
	atomic_store(&p2->stalls, 9);
	CU_ASSERT_EQUAL(ferry__metrics_attach(p2, "uroce", FERRY__M_TX, fake_read), 0);
	render(root, a);
	CU_ASSERT_EQUAL(val(a, "ferry_payload_bytes_total" TCP_RX), 4096);
	CU_ASSERT_EQUAL(val(a, "ferry_chunks_total" TCP_RX), 1);
	CU_ASSERT_EQUAL(val(a, "ferry_streams_active" TCP_RX), 4);
	CU_ASSERT_EQUAL(val(a, "ferry_streams_active" UROCE_TX), 2);
	CU_ASSERT_EQUAL(val(a, "ferry_credit_stalls_total" UROCE_TX), 9);
	CU_ASSERT(isnan(val(a, "ferry_payload_bytes_total" TCP_TX)));
	/* only senders stall: no receive series, which would stay 0 */
	CU_ASSERT(isnan(val(a, "ferry_credit_stalls_total" TCP_RX)));

	/* the datapath counts on; a scrape sees it, nothing goes back */
	atomic_store(&p1->bytes, 3 * 4096);
	atomic_store(&p1->chunks, 3);
	atomic_store(&p1->crc, 1);
	render(root, b);
	monotonic(a, b);
	CU_ASSERT_EQUAL(val(b, "ferry_payload_bytes_total" TCP_RX), 3 * 4096);
	CU_ASSERT_EQUAL(val(b, "ferry_checksum_failures_total{kind=\"chunk\"}"), 1);

	/* a pipeline that ends keeps its counts; its streams are gone */
	atomic_store(&p1->streams, 0);
	ferry__metrics_detach(p1);
	ferry__metrics_detach(p1); /* twice is harmless */
	render(root, a);
	monotonic(b, a);
	CU_ASSERT_EQUAL(val(a, "ferry_payload_bytes_total" TCP_RX), 3 * 4096);
	CU_ASSERT_EQUAL(val(a, "ferry_streams_active" TCP_RX), 0);

	/* the next session on tcp adds to them */
	atomic_store(&p3->bytes, 100);
	atomic_store(&p3->streams, 1);
	CU_ASSERT_EQUAL(ferry__metrics_attach(p3, "tcp", FERRY__M_RX, fake_read), 0);
	render(root, b);
	monotonic(a, b);
	CU_ASSERT_EQUAL(val(b, "ferry_payload_bytes_total" TCP_RX), 3 * 4096 + 100);
	CU_ASSERT_EQUAL(val(b, "ferry_streams_active" TCP_RX), 1);
	ferry__metrics_detach(p3);
	ferry__metrics_detach(p2);
	free(p1);
	free(p2);
	free(p3);
	free(a);
	free(b);
}

/* Without FERRY_METRICS_HOST no host-wide family is written at all (not
 * even HELP); with it they are; an unknown flag is refused. */
static void test_host_flag(void)
{
	struct scrape *sc = malloc(sizeof(*sc));
	char *text = NULL, buf[16];
	size_t len;

	make_root();
	ferry__metrics_reset();
	ferry__metrics_netdev("lo");
	render_text(root, 0, sc, &text);
	CU_ASSERT(strstr(text, "ferry_host_") == NULL);
	CU_ASSERT(strstr(text, "ferry_netdev_") == NULL);
	CU_ASSERT_EQUAL(val(sc, "ferry_sessions_active{role=\"receiver\"}"), 0);
	free(text);
	render_text(root, FERRY_METRICS_HOST, sc, &text);
	CU_ASSERT(strstr(text, "# TYPE ferry_host_context_switches_total counter\n") != NULL);
	CU_ASSERT_EQUAL(val(sc, "ferry_host_tcp_sent_segments_total"), 1000);
	CU_ASSERT_EQUAL(val(sc, "ferry_netdev_rx_dropped_total{interface=\"eth0\"}"), 3);
	free(text);
	CU_ASSERT_EQUAL(ferry_metrics_render(root, 1u << 7, buf, sizeof(buf),
					     &len), -EINVAL);
	free(sc);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* ferry_build_info: one series at 1, in every scrape, with the build's
 * version and its transports (ferry_xport_list) sorted by name. */
static void test_build_info(void)
{
	const struct ferry_xport_ops *const *l = ferry_xport_list();
	struct scrape *sc = malloc(sizeof(*sc));
	const char *names[8];
	char key[256];
	size_t n = 0, at;
	unsigned found = 0;

	for (; l[n]; n++) {
		CU_ASSERT_FATAL(n < 8);
		names[n] = l[n]->name;
	}
	qsort(names, n, sizeof(names[0]), by_name);
	at = (size_t)snprintf(key, sizeof(key),
			      "ferry_build_info{version=\"%s\",transports=\"",
			      FERRY_VERSION);
	for (size_t i = 0; i < n; i++)
		at += (size_t)snprintf(key + at, sizeof(key) - at, "%s%s",
				       i ? "," : "", names[i]);
	snprintf(key + at, sizeof(key) - at, "\"}");
	CU_ASSERT(FERRY_VERSION[0] != 0); /* meson.build's version */
	CU_ASSERT(strstr(key, "tcp") != NULL); /* built everywhere */

	make_root();
	ferry__metrics_reset();
	render("/nonexistent-ferry-root", sc);
	if (val(sc, key) != 1)
		fprintf(stderr, "no series %s\n", key);
	CU_ASSERT_EQUAL(val(sc, key), 1);
	for (unsigned i = 0; i < sc->n; i++)
		found += strncmp(sc->s[i].key, "ferry_build_info", 16) == 0;
	CU_ASSERT_EQUAL(found, 1);
	render_host(root, sc);
	CU_ASSERT_EQUAL(val(sc, key), 1);
	free(sc);
}

/* Goodput is the rate between the last two samples, and 0 when nothing
 * moves: a sample that saw no new bytes, a transport and direction whose
 * last pipeline is gone (at once, and the bytes it moved after the last
 * sample never show as a rate), and a last sample older than 2.5
 * periods. The samples are given times; those ahead of the clock are
 * fresh whatever the test's pace. */
#define SEC 1000000000ull
#define GOODPUT_TCP_RX "ferry_goodput_bytes_per_second" TCP_RX
#define GOODPUT_UROCE_TX "ferry_goodput_bytes_per_second" UROCE_TX

static void test_goodput(void)
{
	struct scrape *sc = malloc(sizeof(*sc));
	struct fake *p = calloc(1, sizeof(*p)), *p2 = calloc(1, sizeof(*p2)),
		    *q = calloc(1, sizeof(*q));
	const char *none = "/nonexistent-ferry-root";
	uint64_t now = ferry__now_ns(), f = now + 1000 * SEC;

	CU_ASSERT_FATAL(now > 20 * SEC);
	ferry__metrics_reset();
	CU_ASSERT_EQUAL(ferry__metrics_attach(p, "tcp", FERRY__M_RX, fake_read), 0);
	CU_ASSERT_EQUAL(ferry__metrics_attach(q, "uroce", FERRY__M_TX, fake_read), 0);
	render(none, sc); /* no sample yet */
	CU_ASSERT_EQUAL(val(sc, GOODPUT_TCP_RX), 0);

	/* stale: the last two samples saw bytes, but 9 s ago */
	ferry__metrics_sample_at(now - 10 * SEC);
	atomic_store(&p->bytes, 1000);
	ferry__metrics_sample_at(now - 9 * SEC);
	render(none, sc);
	CU_ASSERT_EQUAL(val(sc, GOODPUT_TCP_RX), 0);

	/* fresh: bytes over the time between the last two samples */
	ferry__metrics_sample_at(f);
	atomic_store(&p->bytes, 1000 + 1000000000ull);
	atomic_store(&q->bytes, 100000000ull);
	ferry__metrics_sample_at(f + 2 * SEC);
	render(none, sc);
	CU_ASSERT_DOUBLE_EQUAL(val(sc, GOODPUT_TCP_RX), 5e8, 1);
	CU_ASSERT_DOUBLE_EQUAL(val(sc, GOODPUT_UROCE_TX), 5e7, 1);

	/* idle, pipeline still there: 0 at the next sample */
	ferry__metrics_sample_at(f + 3 * SEC);
	render(none, sc);
	CU_ASSERT_EQUAL(val(sc, GOODPUT_TCP_RX), 0);
	CU_ASSERT_EQUAL(val(sc, GOODPUT_UROCE_TX), 0);

	/* moving again, then the pipeline ends (with bytes no sample saw):
	   tcp receive reads 0 at once, uroce transmit goes on */
	atomic_fetch_add(&p->bytes, 2000000000ull);
	atomic_fetch_add(&q->bytes, 300000000ull);
	ferry__metrics_sample_at(f + 4 * SEC);
	render(none, sc);
	CU_ASSERT_DOUBLE_EQUAL(val(sc, GOODPUT_TCP_RX), 2e9, 1);
	atomic_fetch_add(&p->bytes, 700000000ull);
	ferry__metrics_detach(p);
	render(none, sc);
	CU_ASSERT_EQUAL(val(sc, GOODPUT_TCP_RX), 0);
	CU_ASSERT_DOUBLE_EQUAL(val(sc, GOODPUT_UROCE_TX), 3e8, 1);
	ferry__metrics_sample_at(f + 5 * SEC);
	render(none, sc);
	CU_ASSERT_EQUAL(val(sc, GOODPUT_TCP_RX), 0); /* not the 7e8 */
	ferry__metrics_sample_at(f + 6 * SEC);
	render(none, sc);
	CU_ASSERT_EQUAL(val(sc, GOODPUT_TCP_RX), 0);

	/* the next session on tcp: 0 until a sample sees it move */
	CU_ASSERT_EQUAL(ferry__metrics_attach(p2, "tcp", FERRY__M_RX, fake_read), 0);
	render(none, sc);
	CU_ASSERT_EQUAL(val(sc, GOODPUT_TCP_RX), 0);
	atomic_store(&p2->bytes, 400000000ull);
	ferry__metrics_sample_at(f + 7 * SEC);
	render(none, sc);
	CU_ASSERT_DOUBLE_EQUAL(val(sc, GOODPUT_TCP_RX), 4e8, 1);
	ferry__metrics_detach(p2);
	ferry__metrics_detach(q);
	free(p);
	free(p2);
	free(q);
	free(sc);
}

static void test_sessions(void)
{
	struct scrape *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	struct ferry_report *rep = calloc(1, sizeof(*rep));
	struct ferry_rc_counters u = { .retx_pkts = 5, .timeouts = 1 };

	ferry__metrics_reset();
	render("/nonexistent-ferry-root", a);
	ferry__metrics_session_begin(FERRY__M_RECEIVER);
	ferry__metrics_session_begin(FERRY__M_RECEIVER);
	ferry__metrics_session_begin(FERRY__M_SENDER);
	render("/nonexistent-ferry-root", b);
	monotonic(a, b);
	CU_ASSERT_EQUAL(val(b, "ferry_sessions_active{role=\"receiver\"}"), 2);
	CU_ASSERT_EQUAL(val(b, "ferry_sessions_active{role=\"sender\"}"), 1);
	ferry__metrics_session_end(FERRY__M_RECEIVER, 0);
	ferry__metrics_session_end(FERRY__M_RECEIVER, -FERRY_EAUTH);
	ferry__metrics_session_end(FERRY__M_SENDER, -ENOSPC);
	rep->files_done = 3;
	rep->files_failed = 1;
	rep->files_resumed = 2;
	ferry__metrics_files(FERRY__M_RECEIVER, rep);
	ferry__metrics_file_cksum_fail();
	u.rx_nak_seq = 2;
	u.tx_nak_invalid = 1;
	CU_ASSERT_EQUAL(ferry__metrics_add_set(&ferry__uroce_metrics, &u), 0);
	render("/nonexistent-ferry-root", a);
	monotonic(b, a);
	CU_ASSERT_EQUAL(val(a, "ferry_sessions_active{role=\"receiver\"}"), 0);
	CU_ASSERT_EQUAL(val(a, "ferry_sessions_total{role=\"receiver\",outcome=\"ok\"}"), 1);
	CU_ASSERT_EQUAL(val(a, "ferry_sessions_total{role=\"receiver\",outcome=\"error\"}"), 1);
	CU_ASSERT_EQUAL(val(a, "ferry_session_errors_total{role=\"receiver\",class=\"auth\"}"), 1);
	CU_ASSERT_EQUAL(val(a, "ferry_session_errors_total{role=\"sender\",class=\"io\"}"), 1);
	CU_ASSERT_EQUAL(val(a, "ferry_session_errors_total{role=\"sender\",class=\"timeout\"}"), 0);
	CU_ASSERT_EQUAL(val(a, "ferry_files_total{role=\"receiver\",outcome=\"published\"}"), 3);
	CU_ASSERT_EQUAL(val(a, "ferry_files_total{role=\"receiver\",outcome=\"failed\"}"), 1);
	CU_ASSERT_EQUAL(val(a, "ferry_files_resumed_total{role=\"receiver\"}"), 2);
	CU_ASSERT_EQUAL(val(a, "ferry_checksum_failures_total{kind=\"file\"}"), 1);
	CU_ASSERT_EQUAL(val(a, "ferry_uroce_retransmitted_packets_total"), 5);
	CU_ASSERT_EQUAL(val(a, "ferry_uroce_retransmit_timeouts_total"), 1);
	CU_ASSERT_EQUAL(val(a, "ferry_uroce_naks_total{direction=\"" NAK_RX "\",kind=\"sequence\"}"), 2);
	CU_ASSERT_EQUAL(val(a, "ferry_uroce_naks_total{direction=\"" NAK_TX "\",kind=\"invalid\"}"), 1);
	free(rep);
	free(a);
	free(b);
}

static void test_error_classes(void)
{
	static const struct { int err; const char *cls; } t[] = {
		{ -FERRY_EAUTH, "auth" }, { -FERRY_EKEY, "auth" },
		{ -FERRY_ETIMEOUT, "timeout" }, { -ETIMEDOUT, "timeout" },
		{ -FERRY_EPEER, "peer" }, { -FERRY_ECLOSED, "peer" },
		{ -ECONNRESET, "peer" }, { -ECONNREFUSED, "network" },
		{ -FERRY_EPROTO, "protocol" }, { -FERRY_EBOUNDS, "protocol" },
		{ -FERRY_ENEGOTIATE, "negotiate" }, { -FERRY_ENOXPORT, "negotiate" },
		{ -FERRY_ECRC, "checksum" }, { -EIO, "io" }, { -ENOSPC, "io" },
		{ -ENOMEM, "resource" }, { -ECANCELED, "cancelled" },
		{ -99999, "other" },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		CU_ASSERT_STRING_EQUAL(
			ferry__metrics_err_name(ferry__metrics_err_class(t[i].err)),
			t[i].cls);
	/* the names are label values: short, lower case */
	for (unsigned c = 0; c < FERRY__M_CLASSES; c++) {
		const char *n = ferry__metrics_err_name(c);

		CU_ASSERT(n && n[0] && strspn(n, "abcdefghijklmnopqrstuvwxyz") ==
					       strlen(n));
	}
}

/* A buffer too small: -ENOSPC with the length needed, then it fits. */
static void test_enospc(void)
{
	char small[64], *buf;
	size_t need = 0, len = 0;

	ferry__metrics_reset();
	CU_ASSERT_EQUAL(ferry_metrics_render("/nonexistent-ferry-root", 0, small,
					     sizeof(small), &need), -ENOSPC);
	CU_ASSERT(need > sizeof(small));
	CU_ASSERT_EQUAL(strlen(small), sizeof(small) - 1);
	buf = malloc(need + 1);
	CU_ASSERT_EQUAL(ferry_metrics_render("/nonexistent-ferry-root", 0, buf,
					     need + 1, &len), 0);
	CU_ASSERT_EQUAL(len, need);
	CU_ASSERT_EQUAL(strlen(buf), len);
	CU_ASSERT_EQUAL(ferry_metrics_render("/nonexistent-ferry-root", 0, buf,
					     need, &len), -ENOSPC);
	free(buf);
}

/* uroce's RC counters of one session, as its endpoint code adds them. */
static void add_uroce_counts(void)
{
	struct ferry_rc_counters c = {
		.retx_pkts = 11, .timeouts = 12, .oow_drops = 13, .dup_pkts = 14,
		.rx_nak_seq = 1, .rx_nak_rnr = 2, .rx_nak_access = 3,
		.rx_nak_other = 4, .tx_nak_seq = 5, .tx_nak_rnr = 6,
		.tx_nak_access = 7, .tx_nak_invalid = 8,
		.tx_req = 99, .rx_req = 98, /* not published */
	};

	CU_ASSERT_EQUAL(ferry__metrics_add_set(&ferry__uroce_metrics, &c), 0);
}

/* ---- the exposition text itself, pinned ----
 * Golden files under $FERRY_TEST_DATA/metrics: what a scrape writes,
 * byte for byte, with this process's CPU time and context switches
 * (which move by themselves) written as X, and so are the label values
 * of ferry_build_info (the version and the transports differ between
 * builds; test_build_info checks them). A change to a name, a help
 * line, the order of families or series, or a label fails here. */

/* The value of every line naming a family of prefix, as X. */
static void mask(char *text, const char *prefix)
{
	for (char *l = text; *l; l = strchr(l, '\n') + 1) {
		char *eol = strchr(l, '\n'), *sp;

		if (strncmp(l, prefix, strlen(prefix)) != 0)
			continue;
		sp = eol;
		while (sp > l && sp[-1] != ' ')
			sp--;
		/* shift the rest of the text over the value */
		memmove(sp + 1, eol, strlen(eol) + 1);
		*sp = 'X';
	}
}

/* Every label value of the lines of family name, as X. */
static void mask_labels(char *text, const char *name)
{
	size_t n = strlen(name);

	for (char *l = text; *l; l = strchr(l, '\n') + 1) {
		char *v, *end;

		if (strncmp(l, name, n) != 0 || l[n] != '{')
			continue;
		for (v = strstr(l, "=\""); v && v < strchr(l, '}');
		     v = strstr(v, "=\"")) {
			v += 2;
			end = strchr(v, '"'); /* the values here have no escapes */
			if (end > v) {
				memmove(v + 1, end, strlen(end) + 1);
				*v = 'X';
			}
		}
	}
}

static void golden_path(char *path, size_t n, const char *name)
{
	const char *data = getenv("FERRY_TEST_DATA");

	CU_ASSERT_FATAL(data != NULL);
	snprintf(path, n, "%s/metrics/%s", data, name);
}

static char *read_golden(const char *name)
{
	char path[512], *text;
	FILE *f;
	long n;

	golden_path(path, sizeof(path), name);
	f = fopen(path, "r");
	CU_ASSERT_FATAL(f != NULL);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	text = malloc((size_t)n + 1);
	CU_ASSERT_FATAL(text && fread(text, 1, (size_t)n, f) == (size_t)n);
	text[n] = 0;
	fclose(f);
	return text;
}

/* A scrape with flags of the fake host, masked, equals the golden file
 * name; on a difference the first differing line is shown. With
 * FERRY_METRICS_GOLDEN_WRITE=1 in the environment the file is written
 * instead (for a change meant to alter the text: review its diff). */
static void golden(const char *name, unsigned flags)
{
	char *buf = malloc(BUF), *want;
	size_t len = 0, at = 0;

	CU_ASSERT_FATAL(buf != NULL);
	CU_ASSERT_EQUAL_FATAL(ferry_metrics_render(root, flags, buf, BUF, &len),
			      0);
	mask(buf, "ferry_cpu_seconds_total");
	mask(buf, "ferry_context_switches_total");
	mask_labels(buf, "ferry_build_info");
	if (getenv("FERRY_METRICS_GOLDEN_WRITE")) {
		char path[512];
		FILE *f;

		golden_path(path, sizeof(path), name);
		f = fopen(path, "w");
		CU_ASSERT_FATAL(f != NULL);
		fputs(buf, f);
		fclose(f);
	}
	want = read_golden(name);
	if (strcmp(buf, want) != 0) {
		while (buf[at] && buf[at] == want[at])
			at++;
		while (at && buf[at - 1] != '\n')
			at--;
		fprintf(stderr, "%s differs at byte %zu:\n  got:  %.*s\n  want: %.*s\n",
			name, at, (int)strcspn(buf + at, "\n"), buf + at,
			(int)strcspn(want + at, "\n"), want + at);
		CU_FAIL("the exposition text differs from its golden file");
	}
	free(want);
	free(buf);
}

static void test_golden(void)
{
	struct fake *p = calloc(1, sizeof(*p)), *t = calloc(1, sizeof(*t));
	struct ferry_report *rep = calloc(1, sizeof(*rep));

	make_root();
	ferry__metrics_reset();
	/* before any session: what the first scrape of `ferry recv
	 * --metrics` holds, the transports' families at 0 included, no
	 * host-wide series */
	golden("first.txt", 0);

	/* then with --metrics-host, after a receiving and a sending tcp
	 * pipeline, sessions, files and a uroce session */
	atomic_store(&p->bytes, 1 << 20);
	atomic_store(&p->chunks, 16);
	atomic_store(&p->streams, 2);
	CU_ASSERT_EQUAL(ferry__metrics_attach(p, "tcp", FERRY__M_RX, fake_read), 0);
	atomic_store(&t->bytes, 1 << 16);
	atomic_store(&t->chunks, 1);
	atomic_store(&t->stalls, 3);
	atomic_store(&t->streams, 1);
	CU_ASSERT_EQUAL(ferry__metrics_attach(t, "tcp", FERRY__M_TX, fake_read), 0);
	ferry__metrics_session_begin(FERRY__M_RECEIVER);
	ferry__metrics_session_end(FERRY__M_SENDER, -FERRY_ETIMEOUT);
	rep->files_done = 4;
	ferry__metrics_files(FERRY__M_RECEIVER, rep);
	ferry__metrics_netdev("lo");
	add_uroce_counts();
	golden("counted.txt", FERRY_METRICS_HOST);
	ferry__metrics_detach(p);
	ferry__metrics_detach(t);
	free(rep);
	free(p);
	free(t);
}

/* The families a layer above describes: written as described, series in
 * the order first named, label values escaped; wrong calls refused;
 * counts forgotten by a reset, the series not. */
static const struct ferry__m_family fam_two = {
	"ferry_test_events_total", "counter", "Events by side and kind.",
	{ "side", "kind" },
};
static const struct ferry__m_family fam_none = {
	"ferry_test_depth", "gauge", "A depth.",
};

static const char want_families[] =
	"# HELP ferry_test_events_total Events by side and kind.\n"
	"# TYPE ferry_test_events_total counter\n"
	"ferry_test_events_total{side=\"b\",kind=\"x\"} 3\n"
	"ferry_test_events_total{side=\"a\",kind=\"we\\\"ird\\\\\"} 0\n"
	"ferry_test_events_total{side=\"a\",kind=\"x\"} 7\n"
	"# HELP ferry_test_depth A depth.\n"
	"# TYPE ferry_test_depth gauge\n"
	"ferry_test_depth 5\n";

/* The text of the test's families: from the first to ferry_cpu_*. */
static void test_families_text(char *out, size_t n)
{
	char *buf = malloc(BUF), *a, *b;
	size_t len = 0;

	CU_ASSERT_FATAL(buf != NULL);
	CU_ASSERT_EQUAL_FATAL(ferry_metrics_render("/nonexistent-ferry-root",
						   0, buf, BUF, &len), 0);
	a = strstr(buf, "# HELP ferry_test_");
	b = strstr(buf, "# HELP ferry_cpu_seconds_total");
	CU_ASSERT_FATAL(a && b && a < b);
	snprintf(out, n, "%.*s", (int)(b - a), a);
	free(buf);
}

static void test_families(void)
{
	const char *bx[] = { "b", "x" }, *ax[] = { "a", "x" },
		   *aw[] = { "a", "we\"ird\\" }, *missing[] = { "a", NULL },
		   *toolong[] = { "a", "abcdefghijklmnopqrstuvwxyz" };
	struct scrape *sc = malloc(sizeof(*sc));
	char text[1024];

	ferry__metrics_reset();
	CU_ASSERT_EQUAL(ferry__metrics_add(&fam_two, bx, 3), 0);
	CU_ASSERT_EQUAL(ferry__metrics_add(&fam_two, aw, 0), 0);
	CU_ASSERT_EQUAL(ferry__metrics_add(&fam_two, ax, 4), 0);
	CU_ASSERT_EQUAL(ferry__metrics_add(&fam_two, ax, 3), 0);
	CU_ASSERT_EQUAL(ferry__metrics_add(&fam_none, NULL, 5), 0);
	CU_ASSERT_EQUAL(ferry__metrics_add(&fam_two, missing, 1), -EINVAL);
	CU_ASSERT_EQUAL(ferry__metrics_add(&fam_two, NULL, 1), -EINVAL);
	CU_ASSERT_EQUAL(ferry__metrics_add(&fam_two, toolong, 1), -EINVAL);
	test_families_text(text, sizeof(text));
	CU_ASSERT_STRING_EQUAL(text, want_families);
	render("/nonexistent-ferry-root", sc); /* the strict reader agrees */
	CU_ASSERT_EQUAL(val(sc, "ferry_test_events_total{side=\"a\",kind=\"x\"}"), 7);

	/* a reset forgets the counts, not the series */
	ferry__metrics_reset();
	render("/nonexistent-ferry-root", sc);
	CU_ASSERT_EQUAL(val(sc, "ferry_test_events_total{side=\"b\",kind=\"x\"}"), 0);
	CU_ASSERT_EQUAL(val(sc, "ferry_test_depth"), 0);
	CU_ASSERT_EQUAL(val(sc, "ferry_uroce_naks_total{direction=\"" NAK_TX "\",kind=\"invalid\"}"), 0);
	free(sc);
}

static void rm_root(void)
{
	char cmd[128];

	if (!root[0])
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", root);
}

int main(void)
{
	CU_TestInfo tests[] = {
		{ "host signals from a fake tree, label escapes", test_host },
		{ "a tree without the files", test_no_host },
		{ "pipelines: live, retired, monotonic", test_pipelines },
		{ "goodput: between samples, 0 when nothing moves", test_goodput },
		{ "host-wide series only when asked", test_host_flag },
		{ "build info", test_build_info },
		{ "sessions, files, errors, uroce", test_sessions },
		{ "error classes", test_error_classes },
		{ "a buffer too small", test_enospc },
		{ "the text, against golden files", test_golden },
		{ "families registered from above", test_families },
		CU_TEST_INFO_NULL,
	};
	struct ferry_opts o;
	int rc;

	/* what every command does first: the transports' families are
	   named from here on (ferry_xport_list) */
	ferry_opts_init(&o);
	rc = ferry_cu_run("metrics", tests);

	rm_root();
	return rc;
}
