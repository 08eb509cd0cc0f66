/* The process-wide metrics registry (internal): what sessions, pipelines
 * and transports tell it, read by ferry_metrics_render (render.c).
 *
 * Everything here is control path: one call per session, per pipeline or
 * per file, never per chunk. The per-chunk counts stay where the pipeline
 * keeps them (each stream's atomics, summed for interval reports); a
 * pipeline attaches a reader for them and the scraper calls it. When the
 * pipeline goes, its last reading joins the retired totals, so counters
 * only ever grow.
 */
#ifndef FERRY_METRICS_INT_H
#define FERRY_METRICS_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "ferry/metrics.h"
#include "ferry/stats.h"

#define FERRY__M_MAX_XPORT 8  /* transport names kept */
#define FERRY__M_MAX_NETDEV 16 /* interfaces sessions were routed over */

enum ferry__m_dir { FERRY__M_RX, FERRY__M_TX };
enum ferry__m_role { FERRY__M_RECEIVER, FERRY__M_SENDER };

/* What one live pipeline counted so far. */
struct ferry__m_pipe {
	uint64_t bytes, chunks, stalls, crc_errors;
	unsigned streams; /* workers still running */
};

/* Reads a pipeline's counters; called on the scraper's thread with the
 * registry locked, so it must only load atomics. */
typedef void (*ferry__m_read_fn)(const void *ctx, struct ferry__m_pipe *out);

/* Make the counters of pipeline ctx visible, on transport (a static
 * name, e.g. ops->name) in direction dir, until ferry__metrics_detach.
 * Returns 0 or -ENOMEM (the metrics miss this pipeline; the session does
 * not mind). */
int ferry__metrics_attach(const void *ctx, const char *transport,
			  enum ferry__m_dir dir, ferry__m_read_fn read);
/* Read ctx a last time into the retired totals and forget it. A ctx that
 * was never attached is ignored. */
void ferry__metrics_detach(const void *ctx);

/* A session began / ended with err (0, -errno or -FERRY_E*). */
void ferry__metrics_session_begin(enum ferry__m_role role);
void ferry__metrics_session_end(enum ferry__m_role role, int err);

/* A file session's outcome per file (rep's files_done, _skipped, _failed,
 * _resumed). */
void ferry__metrics_files(enum ferry__m_role role,
			  const struct ferry_report *rep);

/* A whole-file checksum did not match the sender's. */
void ferry__metrics_file_cksum_fail(void);

/* Counter families of the layers above, which this one does not know:
 * a transport describes its own (name, type, help, label names) and adds
 * to their series, each a tuple of label values. They are written after
 * the session and file families, in the order they were first named, and
 * their series in the order those were. A series, once named, stays: add
 * 0 to make it appear (at 0) before anything is counted. */
#define FERRY__M_MAX_LABELS 2   /* labels of a family */
#define FERRY__M_MAX_FAMILIES 16
#define FERRY__M_MAX_SERIES 64  /* of all families together */
#define FERRY__M_VALUE_MAX 24   /* a label value, with its NUL */

struct ferry__m_family {
	const char *name; /* ferry_..., _total for a counter */
	const char *type; /* "counter" or "gauge" */
	const char *help;
	const char *labels[FERRY__M_MAX_LABELS]; /* names; NULL after the
						    last */
};

/* Add n to the series of family f (static: the registry keeps the
 * pointer) with label values values[], one per label of f (NULL when f
 * has none); both are made when first named. Returns 0, -EINVAL (a value
 * missing or too long, no name) or -ENOSPC (the registry is full: that
 * count is lost, the session does not mind). */
int ferry__metrics_add(const struct ferry__m_family *f,
		       const char *const *values, uint64_t n);

/* A set of counters one struct holds, each a series of some family: how a
 * transport publishes what it counts (its table's metrics field). */
struct ferry__m_counter {
	const struct ferry__m_family *family;
	const char *values[FERRY__M_MAX_LABELS];
	size_t off; /* of its uint64_t in the struct */
};
struct ferry_metric_set {
	const struct ferry__m_counter *c;
	unsigned n;
};

/* Add every counter of set from the struct at from, under one lock;
 * from NULL: only name them, so that they are there at 0. Returns 0 or the
 * first error of ferry__metrics_add (the other counters are still added). */
int ferry__metrics_add_set(const struct ferry_metric_set *set,
			   const void *from);

/* A session's traffic goes over interface ifname: its NIC drops are
 * reported even when it is the loopback. */
void ferry__metrics_netdev(const char *ifname);

/* Error classes of failed sessions (docs/metrics.md says which codes go
 * where); ferry__metrics_err_name gives the label value. */
enum ferry__m_class {
	FERRY__M_AUTH, FERRY__M_TIMEOUT, FERRY__M_PEER, FERRY__M_NETWORK,
	FERRY__M_PROTOCOL, FERRY__M_NEGOTIATE, FERRY__M_CHECKSUM, FERRY__M_IO,
	FERRY__M_RESOURCE, FERRY__M_CANCELLED, FERRY__M_OTHER, FERRY__M_CLASSES
};
enum ferry__m_class ferry__metrics_err_class(int err);
const char *ferry__metrics_err_name(enum ferry__m_class c);
extern const char *const ferry__m_class_names[FERRY__M_CLASSES];

/* Goodput sample at now_ns (ferry_metrics_sample takes the clock).
 * Goodput reads 0 for a transport and direction without a live pipeline,
 * and everywhere when the last sample is older than FERRY__M_STALE_NS
 * (2.5 sampling periods: one missed sample is not enough). */
#define FERRY__M_STALE_NS (FERRY_METRICS_SAMPLE_MS * 2500000ull)
void ferry__metrics_sample_at(uint64_t now_ns);

/* Forget every count (unit tests): the families and series named stay,
 * at 0. Pipelines must be detached first. */
void ferry__metrics_reset(void);

/* ---- for render.c: a consistent copy of the registry ---- */
struct ferry__m_families {
	unsigned n_family, n_series;
	const struct ferry__m_family *family[FERRY__M_MAX_FAMILIES];
	struct ferry__m_series {
		unsigned family; /* index into family[] */
		char values[FERRY__M_MAX_LABELS][FERRY__M_VALUE_MAX];
		uint64_t v;
	} series[FERRY__M_MAX_SERIES];
};
struct ferry__m_xport {
	char name[12];
	bool used[2]; /* by direction: something was attached */
	struct ferry__m_pipe v[2]; /* retired + live, by direction */
	double goodput[2]; /* bytes/s between the last two samples; 0 when
			      no pipeline is live or the samples are stale */
};
struct ferry__m_snap {
	unsigned n_xport;
	struct ferry__m_xport x[FERRY__M_MAX_XPORT];
	uint64_t sessions_active[2], sessions_ok[2], sessions_err[2];
	uint64_t errors[2][FERRY__M_CLASSES];
	uint64_t files_published[2], files_skipped[2], files_failed[2];
	uint64_t files_resumed[2];
	uint64_t chunk_cksum_fail; /* crc_errors of every transport (set by
				      ferry__metrics_snapshot) */
	uint64_t file_cksum_fail;
	struct ferry__m_families fam;
	unsigned n_netdev;
	char netdev[FERRY__M_MAX_NETDEV][16];
};
void ferry__metrics_snapshot(struct ferry__m_snap *s);

/* ---- host signals (host.c) ---- */
#define FERRY__M_MAX_HOST_IF 64
struct ferry__m_netdev {
	char name[16];
	bool has_dropped, has_missed;
	uint64_t rx_dropped, rx_missed;
};
struct ferry__m_host {
	bool has_tcp, has_ctxt;
	uint64_t tcp_out, tcp_retrans; /* Tcp OutSegs, RetransSegs */
	uint64_t ctxt;                 /* /proc/stat ctxt */
	unsigned n_if;                 /* sorted by name */
	struct ferry__m_netdev ifs[FERRY__M_MAX_HOST_IF];
};
/* Read them below root (NULL: /). Interfaces: every one in
 * sys/class/net except the loopback, which only when it is in used. */
void ferry__metrics_host(const char *root, const char (*used)[16],
			 unsigned n_used, struct ferry__m_host *h);

#endif
