/* The transport registry: the tables this build has, in preference
 * order, and the names of every transport the control channel knows.
 * Also the small helpers every caller of a table shares. */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "ferry/xport.h"
#include "metrics/metrics.h"
#include "util/util.h"
#include "xport/xport_ids.h"
#include "xport/xport_int.h"
#include "xport/tcp/tcp_id.h"
#include "xport/uroce/uroce_id.h"
#include "xport/verbs/verbs_id.h"

/* Every transport the control protocol knows, built here or not: a
 * peer's choice is named even when this build lacks it. */
static const struct ferry_xport_ops known[] = {
	{ FERRY__VERBS_ID },
	{ FERRY__UROCE_ID },
	{ FERRY__TCP_ID },
};

/* The registry: this build's tables (xport_list.h, from meson), put in
 * preference order once. */
static const struct ferry_xport_ops *xports[] = {
#define FERRY__XPORT_ENTRY(sym) &sym,
	FERRY__XPORTS(FERRY__XPORT_ENTRY)
#undef FERRY__XPORT_ENTRY
	NULL,
};
static pthread_once_t xports_once = PTHREAD_ONCE_INIT;

static void by_rank(void)
{
	for (size_t i = 1; xports[i]; i++)
		for (size_t j = i; j && ferry__xport_rank(xports[j]) <
					ferry__xport_rank(xports[j - 1]);
		     j--) {
			const struct ferry_xport_ops *t = xports[j];

			xports[j] = xports[j - 1];
			xports[j - 1] = t;
		}
}

/* Every transport's counter families, named once so that they are in
 * the first scrape: this build's, and those of the transports it lacks
 * (known[], above), so that a scrape has the same families in every
 * build. A family the registry has no room for is left out. */
static void name_metrics(void)
{
	for (size_t i = 0; xports[i]; i++)
		if (FERRY_XPORT_HAS(xports[i], metrics))
			(void)ferry__metrics_add_set(xports[i]->metrics, NULL);
	for (size_t i = 0; i < FERRY__ARRAY_SIZE(known); i++)
		if (known[i].metrics)
			(void)ferry__metrics_add_set(known[i].metrics, NULL);
}

static void once(void)
{
	by_rank();
	name_metrics();
}

const struct ferry_xport_ops *const *ferry_xport_list(void)
{
	pthread_once(&xports_once, once);
	return xports;
}

const struct ferry_xport_ops *ferry_xport_find(const char *name)
{
	const struct ferry_xport_ops *const *l = ferry_xport_list();

	for (size_t i = 0; l[i]; i++)
		if (strcmp(l[i]->name, name) == 0)
			return l[i];
	return NULL;
}

#define HAS_FIELD(ops, f)                                                   \
	((ops)->size >= offsetof(struct ferry_xport_ops, f) + sizeof((ops)->f))

uint32_t ferry__xport_bit(const struct ferry_xport_ops *ops)
{
	return HAS_FIELD(ops, bit) ? ops->bit & FERRY_XPORT_IDS : 0;
}

unsigned ferry__xport_rank(const struct ferry_xport_ops *ops)
{
	return HAS_FIELD(ops, rank) ? ops->rank : UINT32_MAX;
}

const char *ferry__xport_bit_name(uint32_t mask)
{
	uint32_t low = mask & FERRY_XPORT_IDS & -(mask & FERRY_XPORT_IDS);

	for (size_t i = 0; low && i < FERRY__ARRAY_SIZE(known); i++)
		if (known[i].bit == low)
			return known[i].name;
	return "?";
}

const char *ferry__xport_family_name(uint32_t mask, unsigned wire,
				     uint32_t except)
{
	for (size_t i = 0; i < FERRY__ARRAY_SIZE(known); i++)
		if ((mask & known[i].bit) && known[i].bit != except &&
		    known[i].wire == wire)
			return known[i].name;
	return "?";
}

unsigned ferry_xport_wire(const struct ferry_xport_ops *ops)
{
	if (!HAS_FIELD(ops, wire) || ops->wire > FERRY_WIRE_MAX)
		return FERRY_WIRE_OWN;
	return ops->wire;
}

unsigned ferry_xport_needs(const struct ferry_xport_ops *ops)
{
	return HAS_FIELD(ops, needs) ? ops->needs : 0;
}

const char *ferry_xport_runs_on(const struct ferry_xport_ops *ops)
{
	return HAS_FIELD(ops, runs_on) ? ops->runs_on : NULL;
}

bool ferry__xport_busy_spins_one(const struct ferry_xport_ops *ops)
{
	return HAS_FIELD(ops, busy_spins_one) && ops->busy_spins_one;
}

const char *ferry_wire_name(unsigned wire)
{
	return wire == FERRY_WIRE_ROCEV2 ? "RoCEv2" : "";
}

const char *ferry_poll_name(int mode)
{
	return mode == FERRY_POLL_EVENT ? "event" : "busy";
}

int ferry_xport_poll_mode(const struct ferry_xport_ops *ops, int want,
			  char *why, size_t whylen)
{
	if (want == FERRY_POLL_DEFAULT)
		return ops->poll_default;
	if (want != FERRY_POLL_BUSY && want != FERRY_POLL_EVENT) {
		ferry__why(why, whylen, "poll mode %d is neither busy nor event",
			   want);
		return -EINVAL;
	}
	if (!(ops->poll_modes & FERRY_POLL_BIT(want))) {
		ferry__why(why, whylen, "%s transport cannot poll in %s mode%s%s",
			   ops->name, ferry_poll_name(want),
			   ops->poll_why && *ops->poll_why ? ": " : "",
			   ops->poll_why ? ops->poll_why : "");
		return -EINVAL;
	}
	return want;
}
