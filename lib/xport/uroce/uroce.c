/* uroce transport: control path and ops table. Our own RoCEv2 RC engine
 * (rc.h) over a DPDK port (port.h); see docs/uroce.md.
 *
 * Endpoint blob, both ways, 52 bytes, big endian:
 *   0 magic "UROC" | 4 version 2 | 5 role (1 receiver, 2 sender) |
 *   6 n_ep u16 | 8 path MTU u16 (receiver: the largest it takes; sender:
 *   the one chosen) | 10 zero u16 | 12 MAC | 18 zero u16 | 20 IPv4 |
 *   24 QPN tag u32 | 28 start-PSN seed u64 | 36 ring rkey u32 |
 *   40 ring bytes u64 | 48 frames the rx ring holds u32
 * (ring: the receiver's; the sender's only after duplex, else zero)
 * QPN of endpoint i: tag << 9 | i; its first PSN: ferry__uroce_psn(seed, i).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/util.h"
#include "xport/uroce/uroce.h"
#include "xport/uroce/uroce_id.h"

#define BLOB_LEN 52
#define BLOB_MAGIC 0x55524f43u /* "UROC" */
#define BLOB_VERSION 2 /* 2: the hello is the RoCEv2 family's */
#define ROLE_RECEIVER 1
#define ROLE_SENDER 2

struct blob {
	uint8_t role;
	uint16_t n_ep, mtu;
	struct ferry_roce_addr addr;
	uint32_t tag, rkey, rx_frames;
	uint64_t seed, ring_len;
};

static void put(uint8_t *b, uint64_t v, unsigned n)
{
	while (n--) {
		b[n] = (uint8_t)v;
		v >>= 8;
	}
}

static uint64_t get(const uint8_t *b, unsigned n)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < n; i++)
		v = v << 8 | b[i];
	return v;
}

static void blob_put(uint8_t *b, const struct blob *o)
{
	memset(b, 0, BLOB_LEN);
	put(b, BLOB_MAGIC, 4);
	b[4] = BLOB_VERSION;
	b[5] = o->role;
	put(b + 6, o->n_ep, 2);
	put(b + 8, o->mtu, 2);
	memcpy(b + 12, o->addr.mac, 6);
	put(b + 20, o->addr.ip, 4);
	put(b + 24, o->tag, 4);
	put(b + 28, o->seed, 8);
	put(b + 36, o->rkey, 4);
	put(b + 40, o->ring_len, 8);
	put(b + 48, o->rx_frames, 4);
}

static int blob_get(const void *p, size_t len, uint8_t role,
		    const struct ferry_xport *x, struct blob *o, char *why,
		    size_t whylen)
{
	const uint8_t *b = p;
	const char *bad = NULL;

	if (len != BLOB_LEN || get(b, 4) != BLOB_MAGIC || b[4] != BLOB_VERSION ||
	    b[5] != role)
		bad = "is not a uroce endpoint description of this version";
	if (!bad) {
		o->role = role;
		o->n_ep = (uint16_t)get(b + 6, 2);
		o->mtu = (uint16_t)get(b + 8, 2);
		memcpy(o->addr.mac, b + 12, 6);
		o->addr.ip = (uint32_t)get(b + 20, 4);
		o->tag = (uint32_t)get(b + 24, 4);
		o->seed = get(b + 28, 8);
		o->rkey = (uint32_t)get(b + 36, 4);
		o->ring_len = get(b + 40, 8);
		o->rx_frames = (uint32_t)get(b + 48, 4);
		if (o->n_ep != x->n_ep)
			bad = "has a different queue pair count";
		else if (o->mtu < 256 || o->mtu > 4096 || (o->mtu & (o->mtu - 1)))
			bad = "has no valid path MTU";
		else if (!o->tag || o->tag >> FERRY__UROCE_TAG_BITS)
			bad = "has a bad QPN tag";
	}
	if (bad) {
		ferry__why(why, whylen, "uroce: the peer's endpoint blob %s", bad);
		return -FERRY_EPROTO;
	}
	return 0;
}

static void blob_mine(const struct ferry_xport *x, uint8_t role,
		      struct blob *o)
{
	*o = (struct blob){ .role = role, .n_ep = (uint16_t)x->n_ep,
			    .mtu = (uint16_t)x->mtu, .addr = x->port->addr,
			    .tag = x->tag, .seed = x->seed,
			    .rx_frames = x->port->rx_frames };
}

static int uroce_probe(const struct ferry_xport_conf *conf, char *why,
		       size_t whylen)
{
	const char *eal = conf->uroce.eal;

	if (!eal || !*eal) {
		ferry__why(why, whylen,
			   "uroce needs DPDK EAL arguments: give --dpdk '--vdev=net_af_packet0,iface=eth1 ...' or set FERRY_DPDK (see docs/uroce.md)");
		return -FERRY_ENOXPORT;
	}
	return ferry__uport_failed(why, whylen) ? -FERRY_ENOXPORT : 0;
}

static int uroce_open(const struct ferry_xport_attr *attr,
		      struct ferry_xport **out, char *why, size_t whylen)
{
	struct ferry__uport *pt;
	struct ferry_xport *x;
	int err;

	if (attr->n_ep == 0 || attr->n_ep > FERRY_MAX_STREAMS) {
		ferry__why(why, whylen, "uroce supports 1 to %d queue pairs, not %u",
			   FERRY_MAX_STREAMS, attr->n_ep);
		return -EINVAL;
	}
	if (attr->dscp > FERRY_DSCP_MAX) {
		ferry__why(why, whylen, "uroce: DSCP %d is over %d", attr->dscp,
			   FERRY_DSCP_MAX);
		return -EINVAL;
	}
	err = ferry__uport_get(&attr->conf->uroce, &pt, why, whylen);
	if (err)
		return err;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	if (cpus > 0 && attr->n_ep > (unsigned long)cpus)
		ferry__log(FERRY_LOG_INFO,
			   "uroce: %u streams on %ld CPUs: one thread of this "
			   "process at a time drives the port and spins; the "
			   "other streams' threads wait without spinning",
			   attr->n_ep, cpus);
	x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	x->attr = *attr;
	x->n_ep = attr->n_ep;
	x->port = pt;
	x->mtu = pt->max_mtu;
	atomic_init(&x->cancelled, false);
	err = ferry__rc_pd_create(8, &x->pd);
	if (err)
		goto err_x;
	err = ferry__random(&x->seed, sizeof(x->seed));
	if (!err)
		err = ferry__uport_tag_alloc(pt, &x->tag);
	if (err) {
		ferry__why(why, whylen, "uroce: %s", ferry_strerror(err));
		goto err_pd;
	}
	*out = x;
	return 0;
err_pd:
	ferry__rc_pd_destroy(x->pd);
err_x:
	free(x);
	return err;
}

/* Keys are per session and unpredictable; none is 0. */
static int uroce_reg_mem(struct ferry_xport *x, void *addr, size_t len,
			 unsigned access, struct ferry_mr **out)
{
	struct ferry_mr *mr;
	int err;

	if (x->attached)
		return -EBUSY; /* the engine's table is read by the poller */
	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return -ENOMEM;
	*mr = (struct ferry_mr){ .base = addr, .len = len, .access = access };
	do {
		err = ferry__random(&mr->rkey, sizeof(mr->rkey));
		if (!err && mr->rkey)
			err = ferry__rc_reg_mr(x->pd, addr, len, access,
					       mr->rkey);
		else if (!err)
			err = -EEXIST;
	} while (err == -EEXIST);
	if (err) {
		free(mr);
		return err;
	}
	*out = mr;
	return 0;
}

static void uroce_dereg_mem(struct ferry_xport *x, struct ferry_mr *mr)
{
	if (!mr)
		return;
	if (x->attached) { /* no packet may reach the region any more */
		ferry__uport_detach(x->port, x);
		x->attached = false;
	}
	ferry__rc_dereg_mr(x->pd, mr->rkey);
	if (x->ring == mr)
		x->ring = NULL;
	free(mr);
}

static int uroce_listen(struct ferry_xport *x, struct ferry_mr *ring,
			void *blob, size_t *blob_len, char *why, size_t whylen)
{
	struct blob o;

	if (x->attr.family)
		return ferry__uroce_rc_listen(x, ring, blob, blob_len, why,
					      whylen);
	if (*blob_len < BLOB_LEN || !(ring->access & FERRY_ACCESS_REMOTE_WRITE)) {
		ferry__why(why, whylen, "uroce: listen needs a remotely "
					"writable ring and %d bytes of blob",
			   BLOB_LEN);
		return -EINVAL;
	}
	x->ring = ring;
	blob_mine(x, ROLE_RECEIVER, &o);
	o.rkey = ring->rkey;
	o.ring_len = ring->len;
	blob_put(blob, &o);
	*blob_len = BLOB_LEN;
	return 0;
}

/* Both ends: the peer's blob is in; make the QPs and start serving them. */
static int start(struct ferry_xport *x, const struct blob *peer,
		 bool receiver, uint64_t ring_len, char *why, size_t whylen)
{
	x->peer = peer->addr;
	x->peer_tag = peer->tag;
	x->peer_seed = peer->seed;
	return ferry__uroce_start(x, receiver, ring_len, peer->rx_frames, why,
				  whylen);
}

static int uroce_connect(struct ferry_xport *x, const void *blob,
			 size_t blob_len, void *out, size_t *out_len, char *why,
			 size_t whylen)
{
	struct blob peer, o;
	int err;

	if (x->attr.family)
		return ferry__uroce_rc_connect(x, blob, blob_len, out, out_len,
					       why, whylen);
	if (*out_len < BLOB_LEN)
		return -EINVAL;
	err = blob_get(blob, blob_len, ROLE_RECEIVER, x, &peer, why, whylen);
	if (err)
		return err;
	if (peer.mtu < x->mtu)
		x->mtu = peer.mtu;
	x->peer_rkey = peer.rkey;
	err = start(x, &peer, false, peer.ring_len, why, whylen);
	if (err)
		return err;
	blob_mine(x, ROLE_SENDER, &o);
	if (x->ring) { /* duplex: the receiver writes back into this */
		o.rkey = x->ring->rkey;
		o.ring_len = x->ring->len;
	}
	blob_put(out, &o);
	*out_len = BLOB_LEN;
	return 0;
}

static int uroce_accept(struct ferry_xport *x, const void *peer_blob,
			size_t peer_len, char *why, size_t whylen)
{
	struct blob peer;
	int err;

	if (x->attr.family)
		return ferry__uroce_rc_accept(x, peer_blob, peer_len, why,
					      whylen);
	if (!x->ring)
		return -EINVAL;
	err = blob_get(peer_blob, peer_len, ROLE_SENDER, x, &peer, why, whylen);
	if (err)
		return err;
	if (peer.mtu > x->mtu) {
		ferry__why(why, whylen,
			   "uroce: the sender chose path MTU %u; this port "
			   "carries at most %u", peer.mtu, x->mtu);
		return -FERRY_ENEGOTIATE;
	}
	x->mtu = peer.mtu;
	x->peer_rkey = peer.rkey; /* 0 unless the sender is duplex */
	return start(x, &peer, true, x->ring->len, why, whylen);
}

/* Sender: the receiver may write into ring; connect says so in the blob,
 * and the engine's responder checks each write against its rkey. */
static int uroce_duplex(struct ferry_xport *x, struct ferry_mr *ring,
			char *why, size_t whylen)
{
	if (x->attached || !(ring->access & FERRY_ACCESS_REMOTE_WRITE)) {
		ferry__why(why, whylen, "uroce: a two-way ring must be "
					"remotely writable and set before connect");
		return -EINVAL;
	}
	x->ring = ring;
	return 0;
}

static void uroce_cancel(struct ferry_xport *x)
{
	atomic_store(&x->cancelled, true);
}

static void uroce_close(struct ferry_xport *x)
{
	if (!x)
		return;
	if (x->attached)
		ferry__uport_detach(x->port, x);
	ferry__uroce_eps_free(x);
	ferry__rc_pd_destroy(x->pd);
	ferry__uport_tag_free(x->port, x->tag);
	free(x->peer_qp);
	free(x);
}

/* The port's polling thread: every session of this process shares it. */
static void uroce_shared_cpu(struct ferry_xport *x, double *user,
			     double *sys)
{
	int tid = atomic_load(&x->port->tid);

	*user = *sys = 0;
	if (tid > 0)
		(void)ferry__task_cpu(tid, user, sys);
}

const struct ferry_xport_ops ferry__xport_uroce = {
	.size = sizeof(struct ferry_xport_ops),
	FERRY__UROCE_ID, /* name, control-channel bit, rank, wire, needs */
	.probe = uroce_probe,
	.open = uroce_open,
	.reg_mem = uroce_reg_mem,
	.dereg_mem = uroce_dereg_mem,
	.listen = uroce_listen,
	.accept = uroce_accept,
	.connect = uroce_connect,
	.post_write_imm = ferry__uroce_post_write_imm,
	.post_send = ferry__uroce_post_send,
	.poll = ferry__uroce_poll,
	.cancel = uroce_cancel,
	.close = uroce_close,
	.poll_modes = FERRY_POLL_BIT(FERRY_POLL_BUSY) |
		      FERRY_POLL_BIT(FERRY_POLL_EVENT),
	.poll_default = FERRY_POLL_EVENT,
	.duplex = uroce_duplex,
	.shared_cpu = uroce_shared_cpu,
	.busy_spins_one = true,
};
