/* uroce transport: a verbs peer (attr.family), control path.
 *
 * The same engine and QPs as with a uroce peer; only the description
 * differs: the RoCEv2 family's (lib/xport/rocev2.h) instead of uroce's
 * blob. This end's QPNs (tag << 9 | i) and first PSNs (from its seed) are
 * listed one by one, and the peer's, which a NIC or the kernel chose, come
 * back listed (x->peer_qp). No ARP: the peer's MAC is in its description.
 * The receiver sends the hello on every QP and the sender waits for it,
 * as between two uroce ends (lcore.c). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"
#include "xport/uroce/uroce.h"

static void describe(const struct ferry_xport *x, uint8_t role,
		     struct ferry__rocev2_ep *d)
{
	memset(d, 0, sizeof(*d));
	d->role = role;
	d->n_ep = (uint16_t)x->n_ep;
	d->mtu = (uint16_t)x->mtu;
	memcpy(d->mac, x->port->addr.mac, sizeof(d->mac));
	d->ip = x->port->addr.ip;
	d->rx_hint = x->port->rx_frames;
	if (x->ring) { /* the receiver's ring; a duplex sender's pool */
		d->rkey = x->ring->rkey;
		d->ring_base = 0; /* the RETH carries ring offsets */
		d->ring_len = x->ring->len;
	}
	for (unsigned i = 0; i < x->n_ep; i++) {
		d->qp[i].qpn = x->tag << FERRY__UROCE_QPN_SHIFT | i;
		d->qp[i].psn = ferry__uroce_psn(x->seed, i);
	}
}

/* The peer's address, QPs and (if any) ring, for the engine. */
static int take_peer(struct ferry_xport *x, const struct ferry__rocev2_ep *p)
{
	x->peer_qp = calloc(x->n_ep, sizeof(*x->peer_qp));
	if (!x->peer_qp)
		return -ENOMEM;
	memcpy(x->peer_qp, p->qp, x->n_ep * sizeof(*x->peer_qp));
	memcpy(x->peer.mac, p->mac, sizeof(x->peer.mac));
	x->peer.ip = p->ip;
	x->peer_rkey = p->rkey;
	x->peer_base = p->ring_base;
	return 0;
}

static int encode(const struct ferry_xport *x, uint8_t role, void *out,
		  size_t *out_len, char *why, size_t whylen)
{
	struct ferry__rocev2_ep *d = malloc(sizeof(*d));
	int err;

	if (!d)
		return -ENOMEM;
	describe(x, role, d);
	err = ferry__rocev2_encode(d, out, out_len);
	if (err)
		ferry__why(why, whylen, "uroce: cannot describe %u QPs: %s",
			   x->n_ep, ferry_strerror(err));
	free(d);
	return err;
}

int ferry__uroce_rc_listen(struct ferry_xport *x, struct ferry_mr *ring,
			   void *blob, size_t *blob_len, char *why,
			   size_t whylen)
{
	if (!(ring->access & FERRY_ACCESS_REMOTE_WRITE) ||
	    x->n_ep > FERRY__ROCEV2_MAX_EP)
		return -EINVAL;
	x->ring = ring;
	return encode(x, FERRY__ROCEV2_RECEIVER, blob, blob_len, why, whylen);
}

int ferry__uroce_rc_connect(struct ferry_xport *x, const void *blob,
			    size_t blob_len, void *out, size_t *out_len,
			    char *why, size_t whylen)
{
	struct ferry__rocev2_ep *peer = malloc(sizeof(*peer));
	int err;

	if (!peer)
		return -ENOMEM;
	err = x->peer_qp ? -EINVAL : 0;
	if (!err)
		err = ferry__rocev2_take(blob, blob_len, FERRY__ROCEV2_RECEIVER,
					 x->n_ep, &x->mtu, peer, why, whylen);
	if (!err)
		err = take_peer(x, peer);
	if (!err)
		err = ferry__uroce_start(x, false, peer->ring_len,
					 peer->rx_hint, why, whylen);
	if (!err)
		err = encode(x, FERRY__ROCEV2_SENDER, out, out_len, why,
			     whylen);
	free(peer);
	return err;
}

int ferry__uroce_rc_accept(struct ferry_xport *x, const void *peer_blob,
			   size_t peer_len, char *why, size_t whylen)
{
	struct ferry__rocev2_ep *peer = malloc(sizeof(*peer));
	int err;

	if (!peer)
		return -ENOMEM;
	err = !x->ring || x->peer_qp ? -EINVAL : 0;
	if (!err)
		err = ferry__rocev2_take(peer_blob, peer_len,
					 FERRY__ROCEV2_SENDER, x->n_ep, &x->mtu,
					 peer, why, whylen);
	if (!err)
		err = take_peer(x, peer); /* its ring only when duplex */
	if (!err)
		err = ferry__uroce_start(x, true, x->ring->len, peer->rx_hint,
					 why, whylen);
	free(peer);
	return err;
}
