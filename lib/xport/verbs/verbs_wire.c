/* verbs transport: what goes on the wire (endpoint blob, connection private
 * data) and the numbers the QPs are set up with. Pure functions; the
 * layouts are in verbs.h. */
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "util/util.h"
#include "xport/verbs/verbs.h"

/* --- little-endian fields, byte by byte (no host-order assumption) --- */

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)v);
	put16(p + 2, (uint16_t)(v >> 16));
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)get16(p) | (uint32_t)get16(p + 2) << 16;
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

/* --- ACK timeout ---
 *
 * An RC requester retransmits when no ACK arrives within the local ACK
 * timeout, 4.096 us x 2^timeout (the spec lets the NIC wait up to 4x
 * that). The ACK for a packet comes back one RTT after it left, plus what
 * deep WAN buffers add under load, plus the responder's ACK coalescing. A
 * timeout that fires early makes the QP resend everything it has in
 * flight (go-back-N: up to a bandwidth-delay product, gigabytes at 100
 * Gb/s and 300 ms), and each early firing spends one of the 7 retries; a
 * long one only slows recovery from a real loss, which lossless RoCE
 * fabrics rarely see. So: at least 4 x RTT, and never below 67 ms (2^14)
 * so that a busy host on a short path does not trip it either.
 *   RTT 0.1 ms -> 14 (67 ms)    RTT 50 ms  -> 16 (268 ms)
 *   RTT 5 ms   -> 14 (67 ms)    RTT 120 ms -> 17 (537 ms)
 *   RTT 300 ms -> 19 (2.1 s)
 * With retry_cnt 7 a dead path is declared after 8 periods (17 s at 300
 * ms; the control channel's timeout usually notices first). */
uint8_t ferry__verbs_ack_timeout(double rtt_ms)
{
	double need_us;
	uint8_t t;

	if (isnan(rtt_ms) || rtt_ms < 0)
		rtt_ms = FERRY__VERBS_RTT_MS;
	need_us = FERRY__VERBS_ACK_MARGIN * rtt_ms * 1000.0;
	for (t = FERRY__VERBS_ACK_MIN; t < FERRY__VERBS_ACK_MAX; t++)
		if (4.096 * ldexp(1.0, t) >= need_us)
			break;
	return t;
}

double ferry__verbs_ack_period_ms(uint8_t timeout)
{
	return 4.096e-3 * ldexp(1.0, timeout);
}

uint8_t ferry__verbs_tclass(int dscp)
{
	return dscp < 0 || dscp > FERRY_DSCP_MAX ? 0 : (uint8_t)(dscp << 2);
}

/* --- connection private data --- */

size_t ferry__verbs_priv_encode(const struct ferry__verbs_priv *p, void *buf,
				size_t len)
{
	uint8_t *b = buf;

	if (len < FERRY__VERBS_PRIV_LEN)
		return 0;
	memset(b, 0, FERRY__VERBS_PRIV_LEN);
	b[0] = FERRY__VERBS_VERSION;
	b[1] = p->kind;
	put32(b + 4, p->ep);
	put32(b + 8, p->n_ep);
	put32(b + 12, p->rkey);
	put64(b + 16, p->ring_base);
	put64(b + 24, p->ring_len);
	memcpy(b + 32, p->token, FERRY__VERBS_TOKEN);
	return FERRY__VERBS_PRIV_LEN;
}

int ferry__verbs_priv_decode(const void *buf, size_t len,
			     struct ferry__verbs_priv *p)
{
	const uint8_t *b = buf;

	if (!b || len < 1)
		return -FERRY_EPROTO;
	if (b[0] != FERRY__VERBS_VERSION)
		return -FERRY_EVERSION;
	if (len < FERRY__VERBS_PRIV_LEN)
		return -FERRY_EPROTO;
	memset(p, 0, sizeof(*p));
	p->kind = b[1];
	p->ep = get32(b + 4);
	p->n_ep = get32(b + 8);
	p->rkey = get32(b + 12);
	p->ring_base = get64(b + 16);
	p->ring_len = get64(b + 24);
	memcpy(p->token, b + 32, FERRY__VERBS_TOKEN);
	if (p->kind != FERRY__VERBS_PRIV_REQ && p->kind != FERRY__VERBS_PRIV_REP)
		return -FERRY_EPROTO;
	if (p->n_ep == 0 || p->n_ep > FERRY__VERBS_MAX_EP || p->ep >= p->n_ep)
		return -FERRY_EPROTO;
	if (p->kind == FERRY__VERBS_PRIV_REP &&
	    (p->ring_len == 0 || p->ring_base > UINT64_MAX - p->ring_len))
		return -FERRY_EPROTO;
	return 0;
}

/* --- duplex description (sender -> receiver, in READY) --- */

size_t ferry__verbs_duplex_encode(const struct ferry__verbs_duplex *d,
				  void *buf, size_t len)
{
	uint8_t *b = buf;

	if (len < FERRY__VERBS_DUPLEX_LEN)
		return 0;
	memset(b, 0, FERRY__VERBS_DUPLEX_LEN);
	put16(b, FERRY__VERBS_VERSION);
	put32(b + 4, d->rkey);
	put64(b + 8, d->ring_base);
	put64(b + 16, d->ring_len);
	return FERRY__VERBS_DUPLEX_LEN;
}

int ferry__verbs_duplex_decode(const void *buf, size_t len,
			       struct ferry__verbs_duplex *d)
{
	const uint8_t *b = buf;

	if (!b || len < 2)
		return -FERRY_EPROTO;
	if (get16(b) != FERRY__VERBS_VERSION)
		return -FERRY_EVERSION;
	if (len != FERRY__VERBS_DUPLEX_LEN || get16(b + 2) != 0)
		return -FERRY_EPROTO;
	d->rkey = get32(b + 4);
	d->ring_base = get64(b + 8);
	d->ring_len = get64(b + 16);
	if (d->ring_len == 0 || d->ring_base > UINT64_MAX - d->ring_len)
		return -FERRY_EPROTO;
	return 0;
}

/* --- endpoint blob --- */

int ferry__verbs_blob_encode(const struct ferry__verbs_blob *bl, void *buf,
			     size_t *len)
{
	const struct sockaddr_in6 *a6 = (const void *)&bl->addr;
	const struct sockaddr_in *a4 = (const void *)&bl->addr;
	uint8_t *b = buf;

	if (*len < FERRY__VERBS_BLOB_LEN)
		return -ENOSPC;
	memset(b, 0, FERRY__VERBS_BLOB_LEN);
	put16(b, FERRY__VERBS_VERSION);
	put16(b + 2, bl->port);
	put16(b + 4, bl->n_ep);
	if (bl->addr.ss_family == AF_INET) {
		b[6] = 4;
		memcpy(b + 8, &a4->sin_addr, 4);
	} else if (bl->addr.ss_family == AF_INET6 &&
		   IN6_IS_ADDR_V4MAPPED(&a6->sin6_addr)) {
		b[6] = 4;
		memcpy(b + 8, &a6->sin6_addr.s6_addr[12], 4);
	} else if (bl->addr.ss_family == AF_INET6) {
		b[6] = 6;
		memcpy(b + 8, &a6->sin6_addr, 16);
	} else {
		return -EINVAL;
	}
	memcpy(b + 24, bl->token, FERRY__VERBS_TOKEN);
	*len = FERRY__VERBS_BLOB_LEN;
	return 0;
}

int ferry__verbs_blob_decode(const void *buf, size_t len,
			     struct ferry__verbs_blob *bl)
{
	const uint8_t *b = buf;

	if (!b || len < 2)
		return -FERRY_EPROTO;
	if (get16(b) != FERRY__VERBS_VERSION)
		return -FERRY_EVERSION;
	if (len != FERRY__VERBS_BLOB_LEN)
		return -FERRY_EPROTO;
	memset(bl, 0, sizeof(*bl));
	bl->port = get16(b + 2);
	bl->n_ep = get16(b + 4);
	if (bl->port == 0 || bl->n_ep == 0 || bl->n_ep > FERRY__VERBS_MAX_EP)
		return -FERRY_EPROTO;
	if (b[6] == 4) {
		struct sockaddr_in *a4 = (struct sockaddr_in *)&bl->addr;
		a4->sin_family = AF_INET;
		a4->sin_port = htons(bl->port);
		memcpy(&a4->sin_addr, b + 8, 4);
	} else if (b[6] == 6) {
		struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&bl->addr;
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons(bl->port);
		memcpy(&a6->sin6_addr, b + 8, 16);
	} else {
		return -FERRY_EPROTO;
	}
	memcpy(bl->token, b + 24, FERRY__VERBS_TOKEN);
	return 0;
}

/* --- locked memory --- */

int ferry__verbs_memlock_check(uint64_t limit, uint64_t locked, uint64_t want,
			       bool cap_ipc_lock, char *why, size_t whylen)
{
	if (cap_ipc_lock || limit == UINT64_MAX)
		return 0;
	if (locked <= limit && want <= limit - locked)
		return 0;
	ferry__why(why, whylen,
		   "verbs: registering %llu MiB needs %llu MiB of locked memory, but RLIMIT_MEMLOCK is %llu KiB (%llu KiB in use): raise it with `ulimit -l unlimited` in the shell that starts ferry, LimitMEMLOCK=infinity in its systemd unit, or a memlock line in /etc/security/limits.conf",
		   (unsigned long long)(want >> 20),
		   (unsigned long long)((locked + want + (1u << 20) - 1) >> 20),
		   (unsigned long long)(limit >> 10),
		   (unsigned long long)(locked >> 10));
	return -ENOMEM;
}
