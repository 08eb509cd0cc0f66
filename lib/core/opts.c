/* Session options: defaults, checks, and the transport choice. */
#include <errno.h>
#include <string.h>

#include "core/pipe.h"
#include "ctrl/msg.h"
#include "ferry/topo.h"
#include "util/util.h"

void ferry_opts_init(struct ferry_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->transport = "auto";
	o->streams = FERRY_DEFAULT_STREAMS;
	o->chunk_size = FERRY_DEFAULT_CHUNK;
	o->slots = FERRY_DEFAULT_SLOTS;
	o->numa_node = -1;
	o->timeout_ms = FERRY_DEFAULT_TIMEOUT_MS;
	o->max_mem = FERRY_DEFAULT_MAX_MEM;
	o->interval = 1.0;
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

int ferry_opts_check(const struct ferry_opts *o, char *why, size_t whylen)
{
	struct ferry__pipe p = { 0 };
	char pick[256];
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
	if (!ferry__pick_xport(o->transport, 0, pick, sizeof(pick))) {
		ferry__why(why, whylen, "%s", pick);
		return -FERRY_ENOXPORT;
	}
	return 0;
}

uint32_t ferry__xport_bit(const char *name)
{
	if (strcmp(name, "tcp") == 0)
		return FERRY_XPORT_TCP;
	if (strcmp(name, "uroce") == 0)
		return FERRY_XPORT_UROCE;
	if (strcmp(name, "verbs") == 0)
		return FERRY_XPORT_VERBS;
	return 0;
}

uint32_t ferry__xport_mask(void)
{
	const struct ferry_xport_ops *const *l = ferry_xport_list();
	uint32_t mask = 0;

	for (size_t i = 0; l[i]; i++)
		if (l[i]->probe(NULL, 0) == 0)
			mask |= ferry__xport_bit(l[i]->name);
	return mask;
}

static void list_usable(char *buf, size_t len)
{
	const struct ferry_xport_ops *const *l = ferry_xport_list();
	size_t used = 0;

	buf[0] = 0;
	for (size_t i = 0; l[i] && used < len; i++)
		if (l[i]->probe(NULL, 0) == 0)
			used += (size_t)snprintf(buf + used, len - used, "%s%s",
						 used ? ", " : "", l[i]->name);
}

const struct ferry_xport_ops *ferry__pick_xport(const char *want,
						uint32_t peer_mask,
						char *why, size_t whylen)
{
	const struct ferry_xport_ops *x;
	char have[128], reason[160];
	int err;

	list_usable(have, sizeof(have));
	if (!want || strcmp(want, "auto") == 0) {
		/* preference: verbs, then uroce, then tcp (the list's order
		 * is the build's; walk it by preference) */
		static const char *const pref[] = { "verbs", "uroce", "tcp" };
		for (size_t i = 0; i < FERRY__ARRAY_SIZE(pref); i++) {
			x = ferry_xport_find(pref[i]);
			if (!x || x->probe(reason, sizeof(reason)) != 0)
				continue;
			if (peer_mask && !(peer_mask & ferry__xport_bit(x->name)))
				continue;
			ferry__why(why, whylen,
				   "auto picked %s: %s", x->name,
				   strcmp(x->name, "tcp") == 0 ?
					   "no RDMA transport is usable on both hosts (usable here: " :
					   "the fastest transport both hosts have (usable here: ");
			size_t n = strlen(why ? why : "");
			if (why && n < whylen)
				snprintf(why + n, whylen - n, "%s)", have);
			return x;
		}
		ferry__why(why, whylen, "no transport is usable on both hosts");
		return NULL;
	}
	x = ferry_xport_find(want);
	if (!x) {
		ferry__why(why, whylen,
			   "transport '%s' is not in this build; usable here: %s",
			   want, have);
		return NULL;
	}
	err = x->probe(reason, sizeof(reason));
	if (err) {
		ferry__why(why, whylen, "transport %s is not usable here: %s; usable here: %s",
			   want, reason, have);
		return NULL;
	}
	if (peer_mask && !(peer_mask & ferry__xport_bit(x->name))) {
		ferry__why(why, whylen,
			   "transport %s is not usable on the peer", want);
		return NULL;
	}
	ferry__why(why, whylen, "%s as asked", x->name);
	return x;
}
