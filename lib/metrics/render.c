/* ferry_metrics_render: what this build is, the registry, this process's
 * CPU time and context switches, and (when asked) the host signals, as
 * Prometheus text (format 0.0.4). Every family is one row of metrics[]
 * (name, type, help, where its values are, its labels), written once,
 * HELP and TYPE first, then its samples; label values are escaped
 * (backslash, double quote, newline). One row stands for the families
 * the layers above registered (a transport's own), each written the same
 * way from its description. */
#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "ferry/xport.h"
#include "metrics/metrics.h"
#include "util/version.h"
#include "util/util.h"

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

/* Where a family's values are. M_HOST: only with FERRY_METRICS_HOST. */
enum msrc { M_SNAP, M_HOST, M_RUSAGE, M_INFO, M_NSRC };
/* How a value is stored and written. */
enum mval { V_U64, V_UINT, V_RATE, V_LONG, V_TIMEVAL };
/* Which samples a family has. */
enum mlabels {
	L_NONE,   /* one, unlabelled */
	L_INFO,   /* one, labelled with struct build_info's labels */
	L_DIMS,   /* one per combination of d[0] and d[1] */
	L_XPORT,  /* one per transport and direction in use (of those in
		     dirs); d[0].stride: from direction rx to tx */
	L_NETDEV, /* one per host interface (struct ferry__m_netdev) */
	L_FAMILIES, /* not a family: every registered one, in their order */
};

/* A label with fixed values, laid out stride bytes apart. An inner label
 * (d[1]) takes its values from values[i0 * vstep + i1]. */
struct mdim {
	const char *label;
	const char *const *values;
	unsigned n;
	size_t stride;
	unsigned vstep;
};

struct metric {
	const char *name, *type, *help;
	enum msrc src;
	enum mval val;
	enum mlabels labels;
	size_t off;  /* the first value, in the source (L_XPORT: in a
			struct ferry__m_xport; L_NETDEV: a ferry__m_netdev) */
	size_t when; /* 0, or 1 + the offset of a bool beside the values:
			where false, L_NETDEV leaves that sample out and the
			others the whole family */
	unsigned dirs; /* L_XPORT: the directions that can count
			  (1 << FERRY__M_RX, _TX); 0: both */
	struct mdim d[2];
};

/* What ferry_build_info says: this build's version and transports. */
struct build_info {
	char labels[160];
	unsigned one;
};

#define GAP(T, a, b) (offsetof(T, b) - offsetof(T, a))
#define SNAP(m) .src = M_SNAP, .off = offsetof(struct ferry__m_snap, m)
/* a host value, there when flag is */
#define HOST(m, flag) .src = M_HOST, .off = offsetof(struct ferry__m_host, m), \
		      .when = 1 + offsetof(struct ferry__m_host, flag)
/* a transport's value, rx then tx step bytes apart */
#define XPORT(m, step) .labels = L_XPORT, \
		       .off = offsetof(struct ferry__m_xport, m), \
		       .d = { { .stride = step } }
#define PIPE(m) XPORT(v[0].m, sizeof(struct ferry__m_pipe))
/* only a sender counts it: no receive series, always 0 */
#define TX_ONLY .dirs = 1u << FERRY__M_TX
#define NETDEV(m, flag) .src = M_HOST, .labels = L_NETDEV, \
			.off = offsetof(struct ferry__m_netdev, m), \
			.when = 1 + offsetof(struct ferry__m_netdev, flag)
#define RUSAGE(a, b, label, names) \
	.src = M_RUSAGE, .labels = L_DIMS, .off = offsetof(struct rusage, a), \
	.d = { { label, names, 2, GAP(struct rusage, a, b), 0 } }
#define ROLE { "role", role_name, 2, sizeof(uint64_t), 0 }

/* node_exporter's words for a direction */
static const char *const dir_name[2] = { "receive", "transmit" };
static const char *const role_name[2] = { "receiver", "sender" };
static const char *const ok_error[2] = { "ok", "error" };
static const char *const file_outcome[3] = { "published", "skipped",
					     "failed" };
static const char *const cksum_kind[2] = { "chunk", "file" };
static const char *const cpu_mode[2] = { "user", "system" };
static const char *const csw_kind[2] = { "voluntary", "involuntary" };

static_assert(GAP(struct ferry__m_snap, files_published, files_skipped) ==
		      GAP(struct ferry__m_snap, files_skipped, files_failed),
	      "files_total's outcomes lie evenly apart");
static_assert(FERRY__M_RX == 0 && FERRY__M_TX == 1 &&
		      FERRY__M_RECEIVER == 0 && FERRY__M_SENDER == 1,
	      "label values in index order");

static const struct metric metrics[] = {
	{ "ferry_build_info", "gauge",
	  "Always 1: this ferry's version and the transports it was built with.",
	  .src = M_INFO, .labels = L_INFO, .val = V_UINT,
	  .off = offsetof(struct build_info, one) },
	{ "ferry_payload_bytes_total", "counter",
	  "Payload bytes moved (chunk headers and framing not counted): sent (transmit) or received and verified (receive).",
	  PIPE(bytes) },
	{ "ferry_chunks_total", "counter",
	  "Chunks sent (transmit) or received and verified (receive).",
	  PIPE(chunks) },
	{ "ferry_credit_stalls_total", "counter",
	  "Times a sending stream waited for a credit or a free buffer.",
	  PIPE(stalls), TX_ONLY },
	{ "ferry_goodput_bytes_per_second", "gauge",
	  "Payload bytes per second between the last two samples, a second apart; 0 while no session of this transport runs in this direction, and when the last sample is more than 2.5 s old.",
	  XPORT(goodput[0], sizeof(double)), .val = V_RATE },
	{ "ferry_streams_active", "gauge",
	  "Stream workers (TCP connections, queue pairs) running now.",
	  PIPE(streams), .val = V_UINT },
	{ "ferry_checksum_failures_total", "counter",
	  "Chunks whose crc32c did not match (kind=chunk) and files whose whole-file checksum did not match (kind=file).",
	  SNAP(chunk_cksum_fail), .labels = L_DIMS,
	  .d = { { "kind", cksum_kind, 2,
		   GAP(struct ferry__m_snap, chunk_cksum_fail, file_cksum_fail), 0 } } },
	{ "ferry_sessions_active", "gauge",
	  "Sessions in progress, from the handshake to the final accounting.",
	  SNAP(sessions_active), .labels = L_DIMS, .d = { ROLE } },
	{ "ferry_sessions_total", "counter", "Sessions ended, by outcome.",
	  SNAP(sessions_ok), .labels = L_DIMS,
	  .d = { ROLE, { "outcome", ok_error, 2,
			 GAP(struct ferry__m_snap, sessions_ok, sessions_err), 0 } } },
	{ "ferry_session_errors_total", "counter",
	  "Failed sessions by the class of their error.",
	  SNAP(errors), .labels = L_DIMS,
	  .d = { { "role", role_name, 2, sizeof(uint64_t) * FERRY__M_CLASSES, 0 },
		 { "class", ferry__m_class_names, FERRY__M_CLASSES,
		   sizeof(uint64_t), 0 } } },
	{ "ferry_files_total", "counter",
	  "Files of file sessions by outcome: published, skipped (identical target) or failed.",
	  SNAP(files_published), .labels = L_DIMS,
	  .d = { ROLE, { "outcome", file_outcome, 3,
			 GAP(struct ferry__m_snap, files_published, files_skipped), 0 } } },
	{ "ferry_files_resumed_total", "counter",
	  "Files continued from the journal of an earlier attempt.",
	  SNAP(files_resumed), .labels = L_DIMS, .d = { ROLE } },
	{ NULL, .src = M_SNAP, .labels = L_FAMILIES },
	{ "ferry_cpu_seconds_total", "counter",
	  "CPU time this process has used, every thread.",
	  RUSAGE(ru_utime, ru_stime, "mode", cpu_mode), .val = V_TIMEVAL },
	{ "ferry_context_switches_total", "counter",
	  "Context switches of this process's threads: voluntary (waits) and involuntary (preempted).",
	  RUSAGE(ru_nvcsw, ru_nivcsw, "kind", csw_kind), .val = V_LONG },
	{ "ferry_host_context_switches_total", "counter",
	  "Context switches of the whole host (/proc/stat ctxt).", HOST(ctxt, has_ctxt) },
	{ "ferry_host_tcp_sent_segments_total", "counter",
	  "TCP segments the host sent (/proc/net/snmp Tcp OutSegs).",
	  HOST(tcp_out, has_tcp) },
	{ "ferry_host_tcp_retransmitted_segments_total", "counter",
	  "TCP segments the host sent again (/proc/net/snmp Tcp RetransSegs).",
	  HOST(tcp_retrans, has_tcp) },
	{ "ferry_netdev_rx_dropped_total", "counter",
	  "Packets a network interface received and dropped (sysfs statistics/rx_dropped).",
	  NETDEV(rx_dropped, has_dropped) },
	{ "ferry_netdev_rx_missed_errors_total", "counter",
	  "Packets a network interface missed for want of buffers (sysfs statistics/rx_missed_errors).",
	  NETDEV(rx_missed, has_missed) },
};

static bool present(const struct metric *m, const uint8_t *obj)
{
	bool b = true;

	if (m->when)
		memcpy(&b, obj + m->when - 1, sizeof(b));
	return b;
}

/* One sample: name, {labels} unless there are none, the value at p. */
static void sample(struct out *o, const struct metric *m, const char *labels,
		   const uint8_t *p)
{
	static const size_t vsize[] = {
		[V_U64] = sizeof(uint64_t), [V_UINT] = sizeof(unsigned),
		[V_RATE] = sizeof(double), [V_LONG] = sizeof(long),
		[V_TIMEVAL] = sizeof(struct timeval),
	};
	union {
		uint64_t u64;
		unsigned u;
		double d;
		long l;
		struct timeval tv;
	} v;

	memcpy(&v, p, vsize[m->val]);
	if (labels[0])
		put(o, "%s{%s} ", m->name, labels);
	else
		put(o, "%s ", m->name);
	switch (m->val) {
	case V_U64:
		put(o, "%llu\n", (unsigned long long)v.u64);
		break;
	case V_UINT:
		put(o, "%u\n", v.u);
		break;
	case V_RATE:
		put(o, "%.3f\n", v.d);
		break;
	case V_LONG:
		put(o, "%ld\n", v.l);
		break;
	case V_TIMEVAL:
		put(o, "%ld.%06ld\n", (long)v.tv.tv_sec, (long)v.tv.tv_usec);
		break;
	}
}

static void samples_dims(struct out *o, const struct metric *m,
			 const uint8_t *base)
{
	const struct mdim *a = &m->d[0], *b = &m->d[1];
	char lab[128];

	if (!a->label) {
		sample(o, m, "", base + m->off);
		return;
	}
	for (unsigned i = 0; i < a->n; i++)
		for (unsigned j = 0; j < (b->label ? b->n : 1); j++) {
			const uint8_t *p = base + m->off + i * a->stride;

			if (b->label)
				snprintf(lab, sizeof(lab), "%s=\"%s\",%s=\"%s\"",
					 a->label, a->values[i], b->label,
					 b->values[i * b->vstep + j]);
			else
				snprintf(lab, sizeof(lab), "%s=\"%s\"",
					 a->label, a->values[i]);
			sample(o, m, lab, p + j * b->stride);
		}
}

static void samples_xport(struct out *o, const struct metric *m,
			  const struct ferry__m_snap *s)
{
	char t[40], lab[96];

	for (unsigned i = 0; i < s->n_xport; i++)
		for (unsigned d = 0; d < 2; d++) {
			if (!s->x[i].used[d] ||
			    (m->dirs && !(m->dirs & 1u << d)))
				continue;
			snprintf(lab, sizeof(lab),
				 "transport=\"%s\",direction=\"%s\"",
				 esc(t, sizeof(t), s->x[i].name), dir_name[d]);
			sample(o, m, lab,
			       (const uint8_t *)&s->x[i] + m->off +
				       d * m->d[0].stride);
		}
}

static void samples_netdev(struct out *o, const struct metric *m,
			   const struct ferry__m_host *h)
{
	char n[40], lab[64];

	for (unsigned i = 0; i < h->n_if; i++) {
		const uint8_t *obj = (const uint8_t *)&h->ifs[i];

		if (!present(m, obj))
			continue;
		snprintf(lab, sizeof(lab), "interface=\"%s\"",
			 esc(n, sizeof(n), h->ifs[i].name));
		sample(o, m, lab, obj + m->off);
	}
}

static void head(struct out *o, const char *name, const char *help,
		 const char *type)
{
	put(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* The registered families, each with its series in the order named. */
static void families(struct out *o, const struct ferry__m_families *f)
{
	for (unsigned i = 0; i < f->n_family; i++) {
		const struct ferry__m_family *d = f->family[i];
		const struct metric m = { .name = d->name, .val = V_U64 };

		head(o, d->name, d->help, d->type);
		for (unsigned j = 0; j < f->n_series; j++) {
			const struct ferry__m_series *s = &f->series[j];
			char lab[160] = "", v[48];
			size_t n = 0;

			if (s->family != i)
				continue;
			for (unsigned k = 0; k < FERRY__M_MAX_LABELS &&
					     d->labels[k] && n < sizeof(lab);
			     k++)
				n += (size_t)snprintf(lab + n, sizeof(lab) - n,
						      "%s%s=\"%s\"",
						      k ? "," : "", d->labels[k],
						      esc(v, sizeof(v),
							  s->values[k]));
			sample(o, &m, lab, (const uint8_t *)&s->v);
		}
	}
}

static void family(struct out *o, const struct metric *m,
		   const void *const src[M_NSRC])
{
	const uint8_t *base = src[m->src];

	if (m->labels == L_FAMILIES) {
		families(o, &((const struct ferry__m_snap *)base)->fam);
		return;
	}
	if (!base || (m->labels != L_NETDEV && !present(m, base)))
		return;
	head(o, m->name, m->help, m->type);
	switch (m->labels) {
	case L_INFO:
		sample(o, m, ((const struct build_info *)base)->labels,
		       base + m->off);
		break;
	case L_NONE:
	case L_DIMS:
		samples_dims(o, m, base);
		break;
	case L_XPORT:
		samples_xport(o, m, (const struct ferry__m_snap *)base);
		break;
	case L_NETDEV:
		samples_netdev(o, m, (const struct ferry__m_host *)base);
		break;
	case L_FAMILIES:
		break;
	}
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The version and this build's transports (ferry_xport_list), by name. */
static void build_info(struct build_info *bi)
{
	const struct ferry_xport_ops *const *l = ferry_xport_list();
	const char *names[FERRY__M_MAX_XPORT];
	char list[96] = "", v[2][96];
	size_t n = 0, at = 0;

	for (; l[n] && n < FERRY__ARRAY_SIZE(names); n++)
		names[n] = l[n]->name;
	qsort(names, n, sizeof(names[0]), by_name);
	for (size_t i = 0; i < n && at < sizeof(list); i++)
		at += (size_t)snprintf(list + at, sizeof(list) - at, "%s%s",
				       i ? "," : "", names[i]);
	snprintf(bi->labels, sizeof(bi->labels),
		 "version=\"%s\",transports=\"%s\"",
		 esc(v[0], sizeof(v[0]), FERRY_VERSION),
		 esc(v[1], sizeof(v[1]), list));
	bi->one = 1;
}

int ferry_metrics_render(const char *root, unsigned flags, char *buf,
			 size_t size, size_t *len)
{
	struct out o = { .buf = buf, .size = size };
	struct ferry__m_host *h = NULL;
	struct ferry__m_snap *s;
	struct build_info bi;
	struct rusage ru;
	const void *src[M_NSRC];
	int err = -ENOMEM;

	if (flags & ~FERRY_METRICS_HOST)
		return -EINVAL;
	/* first: the transports' families are named by then */
	build_info(&bi);
	s = malloc(sizeof(*s));
	if (!s)
		return -ENOMEM;
	if (flags & FERRY_METRICS_HOST) {
		h = malloc(sizeof(*h));
		if (!h)
			goto out_snap;
	}
	ferry__metrics_snapshot(s);
	if (h)
		ferry__metrics_host(root, (const char (*)[16])s->netdev,
				    s->n_netdev, h);
	src[M_SNAP] = s;
	src[M_HOST] = h;
	src[M_RUSAGE] = getrusage(RUSAGE_SELF, &ru) == 0 ? &ru : NULL;
	src[M_INFO] = &bi;
	for (size_t i = 0; i < FERRY__ARRAY_SIZE(metrics); i++)
		family(&o, &metrics[i], src);
	*len = o.len;
	err = 0;
	if (o.len >= size) {
		if (size)
			buf[size - 1] = 0;
		err = -ENOSPC;
	}
	free(h);
out_snap:
	free(s);
	return err;
}
