/* --metrics ADDR:PORT: libferry's metrics (ferry/metrics.h) served over
 * HTTP at /metrics for Prometheus, by libmicrohttpd (metrics.c), or a
 * clear refusal when this build has no libmicrohttpd (metrics_none.c). */
#ifndef FERRY_APP_METRICS_H
#define FERRY_APP_METRICS_H

#include <errno.h>
#include <stdbool.h>

struct app_metrics;

/* Listen on spec ("ADDR:PORT", "[V6ADDR]:PORT" or ":PORT") and serve
 * /metrics from threads of its own until app_metrics_stop; host: with
 * the host-wide series too (--metrics-host). Prints
 * "ferry CMD: metrics at http://..." unless quiet, or the reason it
 * cannot. Returns 0, -EINVAL (a bad spec), -ENOTSUP (built without
 * libmicrohttpd) or another negative error (it cannot listen). */
int app_metrics_start(const char *cmd, const char *spec, bool host,
		      bool quiet, struct app_metrics **out);

/* Stop serving and free m (NULL is fine). */
void app_metrics_stop(struct app_metrics *m);

/* The exit status for a start error: 2 for bad usage, else 1. */
static inline int app_metrics_exit(int err)
{
	return err == -EINVAL || err == -ENOTSUP ? 2 : 1;
}

#endif
