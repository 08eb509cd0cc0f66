/* --metrics in a build without libmicrohttpd: refused with the reason. */
#include <stdio.h>

#include "metrics.h"

int app_metrics_start(const char *cmd, const char *spec, bool host,
		      bool quiet, struct app_metrics **out)
{
	(void)spec;
	(void)host;
	(void)quiet;
	*out = NULL;
	fprintf(stderr,
		"ferry %s: --metrics: this ferry was built without libmicrohttpd, which serves the metrics; install it (Debian: libmicrohttpd-dev, or tools/deps.sh) and rebuild\n",
		cmd);
	return -ENOTSUP;
}

void app_metrics_stop(struct app_metrics *m)
{
	(void)m;
}
