/* Which transport a session runs on, and why (the words go in its report).
 *
 * Once per session, every transport of this build is probed (once) and
 * those usable here are kept in a scan; the rest of the choice reads the
 * scan. The sender offers the transports it can use (usable here, and
 * able to reach the receiver) and the wire families those speak; the
 * receiver takes the first of its own, in preference order (the tables'
 * ranks, ferry_xport_list), that the sender offered, or, failing that,
 * one of a wire family the sender offered: then each end runs its own
 * transport of that family and they describe their endpoints in the
 * family's shared format. The receiver's ACCEPT names its transport, and
 * the family when it is such a pair; the sender follows. Nothing here
 * names a transport: the ops tables say what each one is. */
#include <errno.h>
#include <string.h>

#include "pipe/pipe.h"
#include "util/util.h"
#include "xport/xport_ids.h"

/* Does x reach sa (asked once per scan; a no is logged as "not <what>")? */
static bool reaches(struct ferry__xscan *s, const struct ferry_xport_ops *x,
		    const struct sockaddr *sa, socklen_t len, const char *what)
{
	uint32_t bit = ferry__xport_bit(x);

	if (!sa || !len || !FERRY_XPORT_HAS(x, reach))
		return true;
	if (!(s->reach_asked & bit)) {
		s->reach_asked |= bit;
		if (x->reach(s->conf, sa, len, s->reach_why,
			     sizeof(s->reach_why)) == 0)
			s->reach_ok |= bit;
		else if (what)
			ferry__log(FERRY_LOG_INFO, "not %s %s: %s", what,
				   x->name, s->reach_why);
	}
	return (s->reach_ok & bit) != 0;
}

/* Append name to the list in buf ("a, b"); returns the new length. */
static size_t add_name(char *buf, size_t len, size_t used, const char *name)
{
	if (used < len)
		used += (size_t)snprintf(buf + used, len - used, "%s%s",
					 used ? ", " : "", name);
	return used;
}

static bool usable(const struct ferry__xscan *s,
		   const struct ferry_xport_ops *x)
{
	return (!s->want || x == s->want) &&
	       (s->usable & ferry__xport_bit(x)) != 0;
}

int ferry__xport_scan(const char *want, const struct ferry_xport_conf *conf,
		      struct ferry__xscan *s, char *why, size_t whylen)
{
	const struct ferry_xport_ops *const *l = ferry_xport_list();
	const struct ferry_xport_ops *x = NULL;
	bool duplex = s->duplex;
	char reason[160] = "";
	size_t used = 0;

	memset(s, 0, sizeof(*s));
	s->duplex = duplex;
	s->conf = conf;
	if (want && strcmp(want, "auto") != 0)
		x = ferry_xport_find(want);
	for (size_t i = 0; l[i]; i++) {
		if (l[i]->probe(conf, l[i] == x ? reason : NULL,
				l[i] == x ? sizeof(reason) : 0))
			continue;
		s->usable |= ferry__xport_bit(l[i]);
		used = add_name(s->have, sizeof(s->have), used, l[i]->name);
	}
	if (!want || strcmp(want, "auto") == 0)
		return 0;
	if (!x) {
		ferry__why(why, whylen,
			   "transport '%s' is not in this build; usable here: %s",
			   want, s->have);
		return -FERRY_ENOXPORT;
	}
	if (!(s->usable & ferry__xport_bit(x))) {
		ferry__why(why, whylen,
			   "transport %s is not usable here: %s; usable here: %s",
			   want, reason, s->have);
		return -FERRY_ENOXPORT;
	}
	if (s->duplex && !FERRY_XPORT_HAS(x, duplex)) {
		char with[128] = "";

		used = 0;
		for (size_t i = 0; l[i]; i++)
			if (FERRY_XPORT_HAS(l[i], duplex))
				used = add_name(with, sizeof(with), used,
						l[i]->name);
		ferry__why(why, whylen,
			   "--osu (the message path) is not supported on %s (the transport has no two-way writes); use %s",
			   x->name, with[0] ? with : "another build");
		return -ENOTSUP;
	}
	s->want = x;
	return 0;
}

uint32_t ferry__xport_offer(struct ferry__xscan *s, const struct sockaddr *peer,
			    socklen_t peer_len)
{
	const struct ferry_xport_ops *const *l = ferry_xport_list();
	uint32_t mask = 0;

	for (size_t i = 0; l[i]; i++) {
		unsigned w = ferry_xport_wire(l[i]);

		if (!usable(s, l[i]) ||
		    (s->duplex && !FERRY_XPORT_HAS(l[i], duplex)))
			continue;
		if (!s->want && !reaches(s, l[i], peer, peer_len, "offering"))
			continue;
		mask |= ferry__xport_bit(l[i]);
		/* two-way writes are each transport's own: no pairs */
		if (w != FERRY_WIRE_OWN && !s->duplex)
			mask |= FERRY_XPORT_FAMILY(w);
	}
	return mask;
}

/* The words for a choice: "auto picked NAME: ..." or "NAME as asked". */
static void say(const struct ferry__xscan *s, const struct ferry__xpick *p,
		bool receiver, char *why, size_t whylen)
{
	char pair[96] = "";
	bool rdma = ferry_xport_wire(p->ops) != FERRY_WIRE_OWN;

	if (p->family)
		snprintf(pair, sizeof(pair), "the %s %s %s, the same wire (%s)",
			 receiver ? "sender" : "receiver",
			 receiver ? "offered" : "chose", p->peer,
			 ferry_wire_name(ferry_xport_wire(p->ops)));
	if (s->want)
		ferry__why(why, whylen, "%s as asked%s%s", p->ops->name,
			   p->family ? "; " : "", pair);
	else if (p->family)
		ferry__why(why, whylen, "auto picked %s: %s (usable here: %s)",
			   p->ops->name, pair, s->have);
	else
		ferry__why(why, whylen, "auto picked %s: %s (usable here: %s)",
			   p->ops->name,
			   rdma ? "the fastest transport both hosts have" :
				  "no RDMA transport is usable on both hosts",
			   s->have);
}

int ferry__xport_choose(struct ferry__xscan *s, uint32_t offer, uint32_t skip,
			const struct sockaddr *addr, socklen_t addr_len,
			struct ferry__xpick *pick, char *why, size_t whylen)
{
	const struct ferry_xport_ops *const *l = ferry_xport_list();
	bool unreached = false;

	memset(pick, 0, sizeof(*pick));
	for (size_t i = 0; l[i]; i++) {
		uint32_t bit = ferry__xport_bit(l[i]);
		unsigned w = ferry_xport_wire(l[i]);

		if (!usable(s, l[i]) || (skip & bit))
			continue;
		if (!(offer & bit) &&
		    (w == FERRY_WIRE_OWN || !(offer & FERRY_XPORT_FAMILY(w))))
			continue;
		if (!reaches(s, l[i], addr, addr_len, "choosing")) {
			unreached = true;
			continue;
		}
		pick->ops = l[i];
		pick->family = !(offer & bit);
		snprintf(pick->peer, sizeof(pick->peer), "%s",
			 pick->family ? ferry__xport_family_name(offer, w, bit) :
					l[i]->name);
		say(s, pick, true, why, whylen);
		return 0;
	}
	if (s->want && unreached)
		ferry__why(why, whylen, "transport %s cannot serve this peer: %s",
			   s->want->name, s->reach_why);
	else if (s->want)
		ferry__why(why, whylen, "transport %s is not usable on the peer",
			   s->want->name);
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

int ferry__xport_follow(struct ferry__xscan *s, uint32_t chosen,
			const struct sockaddr *peer, socklen_t peer_len,
			struct ferry__xpick *pick, char *why, size_t whylen)
{
	const struct ferry_xport_ops *const *l = ferry_xport_list();
	uint32_t bit = chosen & FERRY_XPORT_IDS & -(chosen & FERRY_XPORT_IDS);

	memset(pick, 0, sizeof(*pick));
	snprintf(pick->peer, sizeof(pick->peer), "%s",
		 ferry__xport_bit_name(bit));
	for (size_t i = 0; l[i]; i++) {
		uint32_t mine = ferry__xport_bit(l[i]);
		unsigned w = ferry_xport_wire(l[i]);

		if (!usable(s, l[i]))
			continue;
		if (!(chosen & FERRY_XPORT_FAMILIES) ?
			    mine != bit :
			    (w == FERRY_WIRE_OWN || mine == bit ||
			     !(chosen & FERRY_XPORT_FAMILY(w)) ||
			     !reaches(s, l[i], peer, peer_len, NULL)))
			continue;
		pick->ops = l[i];
		pick->family = (chosen & FERRY_XPORT_FAMILIES) != 0;
		say(s, pick, false, why, whylen);
		return 0;
	}
	ferry__why(why, whylen,
		   "the receiver chose %s, which this host cannot pair with",
		   pick->peer);
	return -FERRY_EPROTO;
}
