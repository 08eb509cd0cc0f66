/* Session options: defaults and checks (the transport choice: xpick.c). */
#include <errno.h>
#include <string.h>

#include "ctrl/msg.h"
#include "ferry/topo.h"
#include "pipe/pipe.h"
#include "util/util.h"

void ferry_opts_init(struct ferry_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->transport = "auto";
	o->streams = FERRY_DEFAULT_STREAMS;
	o->chunk_size = FERRY_DEFAULT_CHUNK;
	o->slots = FERRY_DEFAULT_SLOTS;
	o->numa_node = -1;
	o->dscp = -1;
	o->timeout_ms = FERRY_DEFAULT_TIMEOUT_MS;
	o->max_mem = FERRY_DEFAULT_MAX_MEM;
	o->interval = 1.0;
	ferry_xport_conf_init(&o->xport);
	/* The registry names every transport's counter families the first
	   time it is asked: here, so that they are in a command's first
	   scrape, before any session. */
	(void)ferry_xport_list();
}

const char *ferry_fsync_name(int mode)
{
	return mode == FERRY_FSYNC_FILE ? "file" :
	       mode == FERRY_FSYNC_END ? "end" :
	       mode == FERRY_FSYNC_BATCH ? "batch" : "?";
}

int ferry_fsync_parse(const char *name)
{
	static const int modes[] = { FERRY_FSYNC_BATCH, FERRY_FSYNC_FILE,
				     FERRY_FSYNC_END };

	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (!strcmp(name, ferry_fsync_name(modes[i])))
			return modes[i];
	return -1;
}

int ferry__opts_check(const struct ferry_opts *o, struct ferry__xscan *s,
		      char *why, size_t whylen)
{
	struct ferry__pipe p = { 0 };
	int err;

	err = ferry__pipe_geometry(&p, o->streams, o->chunk_size, o->slots,
				   why, whylen);
	if (err)
		return err;
	if (o->timeout_ms < 100 || o->timeout_ms > 3600 * 1000) {
		ferry__why(why, whylen,
			   "timeout must be 0.1 s to 1 hour, not %d ms",
			   o->timeout_ms);
		return -EINVAL;
	}
	if (o->dscp < -1 || o->dscp > FERRY_DSCP_MAX) {
		ferry__why(why, whylen,
			   "DSCP must be 0 to %d (or -1: the system's default), not %d",
			   FERRY_DSCP_MAX, o->dscp);
		return -EINVAL;
	}
	if (o->interval < 0 || o->interval > 3600) {
		ferry__why(why, whylen,
			   "interval must be 0 (off) to 3600 seconds");
		return -EINVAL;
	}
	if (p.stride * p.slots > o->max_mem) {
		ferry__why(why, whylen,
			   "%u slots of %llu KiB need %llu MiB, over the %llu MiB limit; lower --slots or -l",
			   p.slots, (unsigned long long)(o->chunk_size >> 10),
			   (unsigned long long)((p.stride * p.slots) >> 20),
			   (unsigned long long)(o->max_mem >> 20));
		return -EINVAL;
	}
	if (o->cpulist) {
		err = ferry_cpulist_check(o->cpulist, why, whylen);
		if (err < 0)
			return err == -ENOMEM ? err : -EINVAL;
	}
	return ferry__xport_scan(o->transport, &o->xport, s, why, whylen);
}

int ferry_opts_check(const struct ferry_opts *o, char *why, size_t whylen)
{
	struct ferry__xscan s = { 0 };

	return ferry__opts_check(o, &s, why, whylen);
}
