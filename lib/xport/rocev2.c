/* The RoCEv2 family's endpoint description: encode, decode, and the path
 * MTU rule (format in rocev2.h). Pure: no device, no DPDK; unit-tested
 * and fuzzed. The description is control-channel data (it travels in
 * ACCEPT and READY), so it is written with that channel's cursors. */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "ferry/error.h"
#include "util/cursor.h"
#include "util/util.h"
#include "xport/rocev2.h"

#define QPN_MAX 0xffffffu
#define PSN_MAX 0xffffffu

static bool mtu_ok(unsigned mtu)
{
	return mtu >= 256 && mtu <= 4096 && (mtu & (mtu - 1)) == 0;
}
/* What a peer would refuse in e, or NULL. */
static const char *check(const struct ferry__rocev2_ep *e)
{
	if (e->role != FERRY__ROCEV2_RECEIVER && e->role != FERRY__ROCEV2_SENDER)
		return "has no valid role";
	if (e->n_ep == 0 || e->n_ep > FERRY__ROCEV2_MAX_EP)
		return "has no valid queue pair count";
	if (!mtu_ok(e->mtu))
		return "has no valid path MTU";
	if (e->ip == 0)
		return "has no IPv4 address";
	if (e->ring_len > UINT64_MAX - e->ring_base)
		return "describes a ring that wraps";
	if ((e->rkey == 0) != (e->ring_len == 0))
		return "describes a ring without a key, or a key without a ring";
	if (e->role == FERRY__ROCEV2_RECEIVER && e->ring_len == 0)
		return "describes a receiver without a ring";
	for (unsigned i = 0; i < e->n_ep; i++) {
		if (e->qp[i].qpn < 2 || e->qp[i].qpn > QPN_MAX)
			return "has a QP number that is not one";
		if (e->qp[i].psn > PSN_MAX)
			return "has a PSN above 24 bits";
		for (unsigned j = 0; j < i; j++)
			if (e->qp[j].qpn == e->qp[i].qpn)
				return "names one QP twice";
	}
	return NULL;
}

int ferry__rocev2_encode(const struct ferry__rocev2_ep *e, void *buf,
			 size_t *len)
{
	struct ferry__wcur c = { .p = buf, .cap = *len };
	/* the address in network order, as on the wire */
	const uint8_t ip[4] = { (uint8_t)(e->ip >> 24), (uint8_t)(e->ip >> 16),
				(uint8_t)(e->ip >> 8), (uint8_t)e->ip };

	if (check(e))
		return -EINVAL;
	ferry__put_u32(&c, FERRY__ROCEV2_MAGIC);
	ferry__put_u8(&c, FERRY__ROCEV2_VERSION);
	ferry__put_u8(&c, e->role);
	ferry__put_u16(&c, e->n_ep);
	ferry__put_u16(&c, e->mtu);
	ferry__put_u16(&c, 0);
	ferry__put_bytes(&c, e->mac, 6);
	ferry__put_u16(&c, 0);
	ferry__put_bytes(&c, ip, 4);
	ferry__put_u32(&c, e->rkey);
	ferry__put_u32(&c, e->rx_hint);
	ferry__put_u64(&c, e->ring_base);
	ferry__put_u64(&c, e->ring_len);
	for (unsigned i = 0; i < e->n_ep; i++) {
		ferry__put_u32(&c, e->qp[i].qpn);
		ferry__put_u32(&c, e->qp[i].psn);
	}
	if (c.overrun)
		return -ENOSPC;
	*len = c.off;
	return 0;
}

int ferry__rocev2_decode(const void *buf, size_t len, uint8_t role,
			 unsigned n_ep, struct ferry__rocev2_ep *e, char *why,
			 size_t whylen)
{
	struct ferry__rcur c = { .p = buf, .len = len };
	const char *bad = NULL;
	uint8_t version, ip[4];
	uint32_t magic;

	memset(e, 0, sizeof(*e));
	magic = ferry__get_u32(&c);
	version = ferry__get_u8(&c);
	e->role = ferry__get_u8(&c);
	e->n_ep = ferry__get_u16(&c);
	if (c.overrun || magic != FERRY__ROCEV2_MAGIC) {
		bad = "is not a RoCEv2 endpoint description";
	} else if (version != FERRY__ROCEV2_VERSION) {
		ferry__why(why, whylen,
			   "the peer's RoCEv2 endpoint description is version %u, this side speaks %u",
			   version, FERRY__ROCEV2_VERSION);
		return -FERRY_EVERSION;
	} else if (e->role != role) {
		bad = role == FERRY__ROCEV2_RECEIVER ? "is not a receiver's" :
						       "is not a sender's";
	} else if (e->n_ep != n_ep || n_ep > FERRY__ROCEV2_MAX_EP) {
		bad = "has another queue pair count";
	}
	if (!bad) {
		e->mtu = ferry__get_u16(&c);
		bool zero = ferry__get_u16(&c) == 0;
		ferry__get_bytes(&c, e->mac, 6);
		zero = ferry__get_u16(&c) == 0 && zero;
		ferry__get_bytes(&c, ip, 4);
		e->ip = (uint32_t)ip[0] << 24 | (uint32_t)ip[1] << 16 |
			(uint32_t)ip[2] << 8 | ip[3];
		e->rkey = ferry__get_u32(&c);
		e->rx_hint = ferry__get_u32(&c);
		e->ring_base = ferry__get_u64(&c);
		e->ring_len = ferry__get_u64(&c);
		for (unsigned i = 0; i < n_ep; i++) {
			e->qp[i].qpn = ferry__get_u32(&c);
			e->qp[i].psn = ferry__get_u32(&c);
		}
		if (c.overrun || c.off != len || !zero)
			bad = "has the wrong length";
		else
			bad = check(e);
	}
	if (bad) {
		ferry__why(why, whylen, "the peer's RoCEv2 endpoint description %s",
			   bad);
		return -FERRY_EPROTO;
	}
	return 0;
}

int ferry__rocev2_take(const void *buf, size_t len, uint8_t role,
		       unsigned n_ep, uint32_t *mtu, struct ferry__rocev2_ep *e,
		       char *why, size_t whylen)
{
	int err = ferry__rocev2_decode(buf, len, role, n_ep, e, why, whylen);

	if (err)
		return err;
	if (role == FERRY__ROCEV2_RECEIVER) { /* the sender chooses */
		if (e->mtu < *mtu)
			*mtu = e->mtu;
		return 0;
	}
	if (e->mtu > *mtu) {
		ferry__why(why, whylen,
			   "the sender chose path MTU %u; this end takes at most %u",
			   e->mtu, *mtu);
		return -FERRY_ENEGOTIATE;
	}
	*mtu = e->mtu;
	return 0;
}
