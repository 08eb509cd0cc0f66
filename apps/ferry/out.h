/* What the apps print: interval lines and summaries (text or JSON). */
#ifndef FERRY_APP_OUT_H
#define FERRY_APP_OUT_H

#include <stdio.h>

#include "ferry/stats.h"

/* ferry_interval_fn printing one line per interval to the FILE in arg. */
void out_interval(const struct ferry_report *r, const struct ferry_interval *iv,
		  void *arg);

/* The human summary of a finished (or failed) session. */
void out_summary(FILE *f, const char *prefix, const struct ferry_report *r);

/* "1.50 GiB" style sizes. */
const char *out_bytes(char *buf, size_t len, double bytes);

#endif
