#include <errno.h>
#include <string.h>

#include "ferry/xport.h"
#include "util/util.h"
#include "xport/xport_ids.h"
#include "xport/xport_int.h"

static const struct ferry_xport_ops *const xports[] = {
#define FERRY__XPORT_ENTRY(sym) &sym,
	FERRY__XPORTS(FERRY__XPORT_ENTRY)
#undef FERRY__XPORT_ENTRY
	NULL,
};

const struct ferry_xport_ops *const *ferry_xport_list(void)
{
	return xports;
}

const struct ferry_xport_ops *ferry_xport_find(const char *name)
{
	for (size_t i = 0; xports[i]; i++)
		if (strcmp(xports[i]->name, name) == 0)
			return xports[i];
	return NULL;
}

/* Every transport the control protocol knows, built here or not. */
static const struct {
	const char *name;
	uint32_t bit;
	unsigned wire;
} ids[] = {
	{ "tcp", FERRY_XPORT_TCP, FERRY_WIRE_OWN },
	{ "uroce", FERRY_XPORT_UROCE, FERRY_WIRE_ROCEV2 },
	{ "verbs", FERRY_XPORT_VERBS, FERRY_WIRE_ROCEV2 },
};

uint32_t ferry__xport_bit(const struct ferry_xport_ops *ops)
{
	for (size_t i = 0; i < FERRY__ARRAY_SIZE(ids); i++)
		if (strcmp(ids[i].name, ops->name) == 0)
			return ids[i].bit;
	return 0;
}

const char *ferry__xport_bit_name(uint32_t mask)
{
	uint32_t low = mask & FERRY_XPORT_IDS & -(mask & FERRY_XPORT_IDS);

	for (size_t i = 0; low && i < FERRY__ARRAY_SIZE(ids); i++)
		if (ids[i].bit == low)
			return ids[i].name;
	return "?";
}

const char *ferry__xport_family_name(uint32_t mask, unsigned wire,
				     uint32_t except)
{
	for (size_t i = 0; i < FERRY__ARRAY_SIZE(ids); i++)
		if ((mask & ids[i].bit) && ids[i].bit != except &&
		    ids[i].wire == wire)
			return ids[i].name;
	return "?";
}

unsigned ferry_xport_wire(const struct ferry_xport_ops *ops)
{
	if (ops->size < offsetof(struct ferry_xport_ops, wire) +
				sizeof(ops->wire) ||
	    ops->wire > FERRY_WIRE_MAX)
		return FERRY_WIRE_OWN;
	return ops->wire;
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
