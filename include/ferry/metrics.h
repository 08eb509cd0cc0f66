/* Metrics of ferry's sessions, and if asked of the host they run on, for
 * Prometheus. The renderer writes this process's counters and gauges in
 * the Prometheus text exposition format (version 0.0.4), for `ferry recv
 * --metrics` and any program that serves them itself.
 *
 * libferry keeps them for every session of the process: payload bytes,
 * chunks, credit stalls, goodput and active streams per transport and
 * direction; sessions active and ended (by outcome and error class); file
 * results and resumes; chunk and whole-file checksum failures; the
 * counters transports publish themselves (uroce's retransmissions,
 * timeouts and NAKs), at 0 from the first scrape; CPU time and context
 * switches; and ferry_build_info (version, transports), always 1. With
 * FERRY_METRICS_HOST the renderer adds the host signals an operator of a
 * data-transfer node watches: TCP segments sent and retransmitted,
 * context switches of the whole host, and rx drops of the network
 * interfaces. They are off by default because node_exporter has them,
 * and several ferry processes on one host would each report them.
 * docs/metrics.md lists every metric with its type, labels and meaning.
 *
 * Counting costs the datapath nothing: the per-chunk counts are the ones
 * the pipeline keeps for its interval reports, read when rendering.
 */
#ifndef FERRY_METRICS_H
#define FERRY_METRICS_H

#include <stddef.h>

/* The Content-Type of what ferry_metrics_render writes. */
#define FERRY_METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* ferry_metrics_render's flags: the host-wide series too (ferry_host_*,
 * ferry_netdev_*). */
#define FERRY_METRICS_HOST (1u << 0)

/* How often a program serving metrics calls ferry_metrics_sample. */
#define FERRY_METRICS_SAMPLE_MS 1000

/* Write every metric into buf (size bytes), NUL-terminated: each family's
 * HELP and TYPE lines, then its samples. flags: 0 or FERRY_METRICS_HOST,
 * with which the host signals are read from ROOT/proc and ROOT/sys (root
 * NULL: the real ones; a test passes a fake tree); a file that cannot be
 * read leaves its family out. Returns 0 with *len the text's length,
 * -EINVAL for an unknown flag, -ENOMEM, or -ENOSPC with *len the length
 * buf would have needed (give it at least *len + 1 bytes and call
 * again). Thread-safe. */
int ferry_metrics_render(const char *root, unsigned flags, char *buf,
			 size_t size, size_t *len);

/* Take a goodput sample: ferry_goodput_bytes_per_second is the rate
 * between the last two samples (0 until there are two). A program serving
 * metrics calls it every FERRY_METRICS_SAMPLE_MS. The gauge reads 0
 * while no session of its transport runs in its direction, and when the
 * last sample is more than 2.5 of those periods old. Thread-safe. */
void ferry_metrics_sample(void);

#endif
