/* Which transport a session runs on, and why (the words go in its report).
 *
 * The sender offers the transports it can use (usable here, and able to
 * reach the receiver) and the wire families those speak; the receiver
 * takes the first of its own, in preference order (ferry_xport_list:
 * verbs, uroce, tcp), that the sender offered, or, failing that, one of a
 * wire family the sender offered: then each end runs its own transport of
 * that family (a uroce sender, a verbs receiver) and they describe their
 * endpoints in the family's shared format. The receiver's ACCEPT names
 * its transport, and the family when it is such a pair; the sender
 * follows. Nothing here names a transport: the ops tables say what each
 * one is. */
#include <errno.h>
#include <string.h>

#include "pipe/pipe.h"
#include "util/util.h"
#include "xport/xport_ids.h"

static bool usable(const struct ferry_xport_ops *x, char *why, size_t whylen)
{
	return x->probe(why, whylen) == 0;
}

static bool reaches(const struct ferry_xport_ops *x, const struct sockaddr *sa,
		    socklen_t len, char *why, size_t whylen)
{
	if (!sa || !len || !FERRY_XPORT_HAS(x, reach))
		return true;
	return x->reach(sa, len, why, whylen) == 0;
}

/* "verbs, uroce, tcp": the transports usable here. */
static void list_usable(char *buf, size_t len)
{
	const struct ferry_xport_ops *const *l = ferry_xport_list();
	size_t used = 0;

	buf[0] = 0;
	for (size_t i = 0; l[i] && used < len; i++)
		if (usable(l[i], NULL, 0))
			used += (size_t)snprintf(buf + used, len - used, "%s%s",
						 used ? ", " : "", l[i]->name);
}

/* want ("auto" or a name) as a transport of this build: 0, or
 * -FERRY_ENOXPORT with why when it is not built or not usable here. */
static int named(const char *want, const struct ferry_xport_ops **out,
		 char *why, size_t whylen)
{
	char have[128], reason[160];
	const struct ferry_xport_ops *x;

	*out = NULL;
	if (!want || strcmp(want, "auto") == 0)
		return 0;
	list_usable(have, sizeof(have));
	x = ferry_xport_find(want);
	if (!x) {
		ferry__why(why, whylen,
			   "transport '%s' is not in this build; usable here: %s",
			   want, have);
		return -FERRY_ENOXPORT;
	}
	if (!usable(x, reason, sizeof(reason))) {
		ferry__why(why, whylen,
			   "transport %s is not usable here: %s; usable here: %s",
			   want, reason, have);
		return -FERRY_ENOXPORT;
	}
	*out = x;
	return 0;
}

int ferry__xport_usable(const char *want, char *why, size_t whylen)
{
	const struct ferry_xport_ops *x;

	return named(want, &x, why, whylen);
}

uint32_t ferry__xport_offer(const char *want, const struct sockaddr *peer,
			    socklen_t peer_len)
{
	const struct ferry_xport_ops *const *l = ferry_xport_list();
	const struct ferry_xport_ops *x;
	char why[200];
	uint32_t mask = 0;

	if (named(want, &x, NULL, 0))
		return 0;
	for (size_t i = 0; l[i]; i++) {
		unsigned w = ferry_xport_wire(l[i]);

		if ((x && l[i] != x) || !usable(l[i], NULL, 0))
			continue;
		if (!x && !reaches(l[i], peer, peer_len, why, sizeof(why))) {
			ferry__log(FERRY_LOG_INFO, "not offering %s: %s",
				   l[i]->name, why);
			continue;
		}
		mask |= ferry__xport_bit(l[i]);
		if (w != FERRY_WIRE_OWN)
			mask |= FERRY_XPORT_FAMILY(w);
	}
	return mask;
}

/* The words for a choice: "auto picked verbs: ..." or "verbs as asked". */
static void say(const char *want, const struct ferry__xpick *p, bool receiver,
		char *why, size_t whylen)
{
	char have[128], pair[96] = "";
	bool rdma = ferry_xport_wire(p->ops) != FERRY_WIRE_OWN;

	list_usable(have, sizeof(have));
	if (p->family)
		snprintf(pair, sizeof(pair), "the %s %s %s, the same wire (%s)",
			 receiver ? "sender" : "receiver",
			 receiver ? "offered" : "chose", p->peer,
			 ferry_wire_name(ferry_xport_wire(p->ops)));
	if (want && strcmp(want, "auto") != 0)
		ferry__why(why, whylen, "%s as asked%s%s", p->ops->name,
			   p->family ? "; " : "", pair);
	else if (p->family)
		ferry__why(why, whylen, "auto picked %s: %s (usable here: %s)",
			   p->ops->name, pair, have);
	else
		ferry__why(why, whylen, "auto picked %s: %s (usable here: %s)",
			   p->ops->name,
			   rdma ? "the fastest transport both hosts have" :
				  "no RDMA transport is usable on both hosts",
			   have);
}

int ferry__xport_choose(const char *want, uint32_t offer, uint32_t skip,
			const struct sockaddr *addr, socklen_t addr_len,
			struct ferry__xpick *pick, char *why, size_t whylen)
{
	const struct ferry_xport_ops *const *l = ferry_xport_list();
	const struct ferry_xport_ops *x;
	char reason[200] = "";
	int err;

	memset(pick, 0, sizeof(*pick));
	err = named(want, &x, why, whylen);
	if (err)
		return err;
	for (size_t i = 0; l[i]; i++) {
		uint32_t bit = ferry__xport_bit(l[i]);
		unsigned w = ferry_xport_wire(l[i]);

		if ((x && l[i] != x) || (skip & bit) || !usable(l[i], NULL, 0))
			continue;
		if (!(offer & bit) &&
		    (w == FERRY_WIRE_OWN || !(offer & FERRY_XPORT_FAMILY(w))))
			continue;
		if (!reaches(l[i], addr, addr_len, reason, sizeof(reason))) {
			ferry__log(FERRY_LOG_INFO, "not choosing %s: %s",
				   l[i]->name, reason);
			continue;
		}
		pick->ops = l[i];
		pick->family = !(offer & bit);
		snprintf(pick->peer, sizeof(pick->peer), "%s",
			 pick->family ? ferry__xport_family_name(offer, w, bit) :
					l[i]->name);
		say(want, pick, true, why, whylen);
		return 0;
	}
	if (x && reason[0])
		ferry__why(why, whylen, "transport %s cannot serve this peer: %s",
			   x->name, reason);
	else if (x)
		ferry__why(why, whylen, "transport %s is not usable on the peer",
			   x->name);
	else
		ferry__why(why, whylen, "no transport is usable on both hosts");
	return -FERRY_ENOXPORT;
}

uint32_t ferry__xport_answer(const struct ferry__xpick *pick)
{
	uint32_t m = ferry__xport_bit(pick->ops);

	if (pick->family)
		m |= FERRY_XPORT_FAMILY(ferry_xport_wire(pick->ops));
	return m;
}

int ferry__xport_follow(const char *want, uint32_t chosen,
			const struct sockaddr *peer, socklen_t peer_len,
			struct ferry__xpick *pick, char *why, size_t whylen)
{
	const struct ferry_xport_ops *const *l = ferry_xport_list();
	uint32_t bit = chosen & FERRY_XPORT_IDS & -(chosen & FERRY_XPORT_IDS);
	const struct ferry_xport_ops *x;
	int err;

	memset(pick, 0, sizeof(*pick));
	err = named(want, &x, why, whylen);
	if (err)
		return err;
	snprintf(pick->peer, sizeof(pick->peer), "%s",
		 ferry__xport_bit_name(bit));
	for (size_t i = 0; l[i]; i++) {
		unsigned w = ferry_xport_wire(l[i]);

		if ((x && l[i] != x) || !usable(l[i], NULL, 0))
			continue;
		if (!(chosen & FERRY_XPORT_FAMILIES) ?
			    ferry__xport_bit(l[i]) != bit :
			    (w == FERRY_WIRE_OWN || ferry__xport_bit(l[i]) == bit ||
			     !(chosen & FERRY_XPORT_FAMILY(w)) ||
			     !reaches(l[i], peer, peer_len, NULL, 0)))
			continue;
		pick->ops = l[i];
		pick->family = (chosen & FERRY_XPORT_FAMILIES) != 0;
		say(want, pick, false, why, whylen);
		return 0;
	}
	ferry__why(why, whylen,
		   "the receiver chose %s, which this host cannot pair with",
		   pick->peer);
	return -FERRY_EPROTO;
}
