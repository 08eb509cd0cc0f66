/* verbs transport: a peer of the RoCEv2 family that is not verbs (uroce),
 * so no rdma_cm (control path).
 *
 * The QPs are made on the PD and brought to RTS by hand from what the two
 * ends say in the family's endpoint description (lib/xport/rocev2.h), over
 * the authenticated control channel: RESET -> INIT (port, P_Key index 0,
 * remote write) -> RTR (the peer's QPN, its first PSN, its GID ::ffff:IPv4
 * with our RoCE v2 GID index, the path MTU) -> RTS (our first PSN, the ACK
 * timeout, retries). These are the attributes ibv_modify_qp(3) requires
 * for each move of an RC QP, the same ones perftest sets from what its
 * ib_write_bw exchanges over a TCP socket without -R. The kernel resolves
 * the peer's MAC from its IP (ARP), so the peer's address must be one its
 * host's kernel answers for.
 *
 * Receiver: listen makes the QPs (INIT) and describes them with its ring;
 * accept brings them to RTS and sends the hello on each. Sender: connect
 * takes the receiver's description, brings its QPs to RTS and describes
 * them; its workers post nothing before the hello came (verbs_dp.c). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"
#include "xport/rocev2.h"
#include "xport/verbs/verbs.h"

#define HOP_LIMIT 64
#define RNR_TIMER 14 /* 1.28 ms before a receiver-not-ready NAK is retried */

static enum ibv_mtu mtu_enum(unsigned bytes)
{
	return bytes >= 4096 ? IBV_MTU_4096 : bytes >= 2048 ? IBV_MTU_2048 :
	       bytes >= 1024 ? IBV_MTU_1024 : bytes >= 512 ? IBV_MTU_512 :
							      IBV_MTU_256;
}

/* This end as the QPs name it: an IPv4 address of the device's netdev
 * (the control address when it is one), the RoCE v2 GID of that address,
 * the netdev's MAC and the port's MTU. */
static int local_end(struct ferry_xport *x, char *why, size_t whylen)
{
	struct sockaddr_storage want = x->attr.addr, a;
	struct ibv_port_attr pa;
	char s[INET_ADDRSTRLEN];
	struct in_addr ia;
	int err;

	if (!x->netdev[0] ||
	    ferry__verbs_dev_addr(x, AF_INET, x->receiver ? &want : NULL,
				  &a) != 0) {
		ferry__why(why, whylen,
			   "verbs: %s has no netdev with an IPv4 address, which a RoCEv2 peer that is not verbs needs",
			   x->dev);
		return -EADDRNOTAVAIL;
	}
	ia = ((const struct sockaddr_in *)&a)->sin_addr;
	x->ip = ntohl(ia.s_addr);
	inet_ntop(AF_INET, &ia, s, sizeof(s));
	err = ferry__verbs_gid_find(NULL, x->dev, x->ip, &x->port,
				    &x->gid_index);
	if (err) {
		ferry__why(why, whylen,
			   "verbs: %s has no RoCE v2 GID for %s (its netdev %s)",
			   x->dev, s, x->netdev);
		return -FERRY_ENOXPORT;
	}
	err = ferry__verbs_netdev_mac(NULL, x->netdev, x->mac);
	if (!err)
		err = ferry__verbs_ibv(ibv_query_port(x->ctx, (uint8_t)x->port,
						      &pa));
	if (err) {
		ferry__why(why, whylen, "verbs: %s port %u (%s): %s", x->dev,
			   x->port, x->netdev, ferry_strerror(err));
		return err;
	}
	x->mtu = 128u << pa.active_mtu; /* IBV_MTU_256 is 1 */
	ferry__log(FERRY_LOG_INFO,
		   "verbs: %s port %u, GID index %u (%s, RoCE v2), path MTU up to %u, for a RoCEv2 peer that is not verbs",
		   x->dev, x->port, x->gid_index, s, x->mtu);
	return 0;
}

/* Make every QP (RESET -> INIT) with a random first PSN. */
static int make_qps(struct ferry_xport *x, char *why, size_t whylen)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = (uint8_t)x->port,
		.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
	};
	int err = ferry__verbs_srq_create(x, why, whylen);

	for (unsigned i = 0; !err && i < x->n_ep; i++) {
		struct verbs_ep *e = &x->ep[i];

		err = ferry__verbs_ep_create(x, e, NULL, why, whylen);
		if (!err)
			err = ferry__random(&e->psn, sizeof(e->psn));
		e->psn &= 0xffffff;
		if (err)
			break;
		err = ferry__verbs_ibv(ibv_modify_qp(e->qp, &a,
						     IBV_QP_STATE | IBV_QP_PKEY_INDEX |
							     IBV_QP_PORT |
							     IBV_QP_ACCESS_FLAGS));
		if (err)
			ferry__why(why, whylen,
				   "verbs: %s: queue pair %u to INIT: %s", x->dev,
				   i, ferry_strerror(err));
	}
	return err;
}

static void unmake_qps(struct ferry_xport *x)
{
	for (unsigned i = 0; i < x->n_ep; i++)
		ferry__verbs_ep_destroy(x, &x->ep[i]);
	ferry__verbs_srq_destroy(x);
}

/* INIT -> RTR -> RTS against the peer's description. */
static int qps_up(struct ferry_xport *x, const struct ferry__rocev2_ep *peer,
		  char *why, size_t whylen)
{
	for (unsigned i = 0; i < x->n_ep; i++) {
		struct verbs_ep *e = &x->ep[i];
		struct ibv_qp_attr a = {
			.qp_state = IBV_QPS_RTR,
			.path_mtu = mtu_enum(x->mtu),
			.dest_qp_num = peer->qp[i].qpn,
			.rq_psn = peer->qp[i].psn,
			.max_dest_rd_atomic = 1,
			.min_rnr_timer = RNR_TIMER,
			.ah_attr = {
				.is_global = 1,
				.port_num = (uint8_t)x->port,
				.grh = { .sgid_index = (uint8_t)x->gid_index,
					 .hop_limit = HOP_LIMIT,
					 /* the session's class: the IPv4
					  * DS byte of every packet */
					 .traffic_class = ferry__verbs_tclass(
						 x->attr.dscp) },
			},
		};
		const char *step = "RTR";
		int err;

		/* the peer's GID: its IPv4 mapped into IPv6 */
		a.ah_attr.grh.dgid.raw[10] = 0xff;
		a.ah_attr.grh.dgid.raw[11] = 0xff;
		for (int k = 0; k < 4; k++)
			a.ah_attr.grh.dgid.raw[12 + k] =
				(uint8_t)(peer->ip >> (24 - 8 * k));
		err = ferry__verbs_ibv(ibv_modify_qp(e->qp, &a,
			IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER));
		if (!err) {
			step = "RTS";
			a = (struct ibv_qp_attr){
				.qp_state = IBV_QPS_RTS,
				.timeout = x->ack_timeout,
				.retry_cnt = FERRY__VERBS_RETRY,
				.rnr_retry = FERRY__VERBS_RNR_RETRY,
				.sq_psn = e->psn,
				.max_rd_atomic = 1,
			};
			err = ferry__verbs_ibv(ibv_modify_qp(e->qp, &a,
				IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
				IBV_QP_MAX_QP_RD_ATOMIC));
		}
		if (err) {
			ferry__why(why, whylen,
				   "verbs: %s: queue pair %u (0x%06x) to %s, peer QP 0x%06x: %s",
				   x->dev, i, e->qp->qp_num, step,
				   peer->qp[i].qpn, ferry_strerror(err));
			return err;
		}
		e->state = FERRY__VERBS_EP_UP;
	}
	return 0;
}

static void describe(const struct ferry_xport *x, uint8_t role,
		     struct ferry__rocev2_ep *d)
{
	memset(d, 0, sizeof(*d));
	d->role = role;
	d->n_ep = (uint16_t)x->n_ep;
	d->mtu = (uint16_t)x->mtu;
	memcpy(d->mac, x->mac, sizeof(d->mac));
	d->ip = x->ip;
	if (x->ring) { /* the receiver's ring; a duplex sender's pool */
		d->rkey = x->ring->mr->rkey;
		d->ring_base = x->ring->iova;
		d->ring_len = x->ring->len;
	}
	for (unsigned i = 0; i < x->n_ep; i++) {
		d->qp[i].qpn = x->ep[i].qp->qp_num;
		d->qp[i].psn = x->ep[i].psn;
	}
}

static void peer_ring(struct ferry_xport *x, const struct ferry__rocev2_ep *p)
{
	x->rkey = p->rkey;
	x->rbase = p->ring_base;
	x->rlen = p->ring_len;
	for (unsigned i = 0; i < x->n_ep; i++)
		x->ep[i].wwr.wr.rdma.rkey = p->rkey;
}

int ferry__verbs_rc_listen(struct ferry_xport *x, struct ferry_mr *ring,
			   void *blob, size_t *blob_len, char *why,
			   size_t whylen)
{
	struct ferry__rocev2_ep d;
	int err;

	if (!ring || !(ring->access & FERRY_ACCESS_REMOTE_WRITE) || x->srq ||
	    x->n_ep > FERRY__ROCEV2_MAX_EP)
		return -EINVAL;
	x->ring = ring;
	x->receiver = true;
	err = local_end(x, why, whylen);
	if (!err)
		err = make_qps(x, why, whylen);
	if (!err) {
		describe(x, FERRY__ROCEV2_RECEIVER, &d);
		err = ferry__rocev2_encode(&d, blob, blob_len);
		if (err)
			ferry__why(why, whylen,
				   "verbs: cannot describe %u queue pairs: %s",
				   x->n_ep, ferry_strerror(err));
	}
	if (err)
		unmake_qps(x);
	return err;
}

int ferry__verbs_rc_connect(struct ferry_xport *x, const void *blob,
			    size_t blob_len, void *out, size_t *out_len,
			    char *why, size_t whylen)
{
	struct ferry__rocev2_ep *peer = malloc(2 * sizeof(*peer));
	int err;

	if (!peer)
		return -ENOMEM;
	if (x->srq) {
		err = -EINVAL;
		goto out;
	}
	err = local_end(x, why, whylen);
	if (!err)
		err = ferry__rocev2_take(blob, blob_len, FERRY__ROCEV2_RECEIVER,
					 x->n_ep, &x->mtu, peer, why, whylen);
	if (err)
		goto out;
	err = make_qps(x, why, whylen);
	if (!err)
		err = qps_up(x, peer, why, whylen);
	if (!err) {
		peer_ring(x, peer);
		for (unsigned i = 0; i < x->n_ep; i++)
			x->ep[i].await_hello = true;
		describe(x, FERRY__ROCEV2_SENDER, &peer[1]);
		err = ferry__rocev2_encode(&peer[1], out, out_len);
	}
	if (err) {
		unmake_qps(x);
		goto out;
	}
	ferry__log(FERRY_LOG_INFO,
		   "verbs: %u queue pair(s) 0x%06x.. -> 0x%06x.. (a RoCEv2 peer), path MTU %u",
		   x->n_ep, x->ep[0].qp->qp_num, peer->qp[0].qpn, x->mtu);
out:
	free(peer);
	return err;
}

int ferry__verbs_rc_accept(struct ferry_xport *x, const void *peer_blob,
			   size_t peer_len, char *why, size_t whylen)
{
	struct ferry__rocev2_ep *peer = malloc(sizeof(*peer));
	int err;

	if (!peer)
		return -ENOMEM;
	err = x->srq ? 0 : -EINVAL;
	if (!err)
		err = ferry__rocev2_take(peer_blob, peer_len,
					 FERRY__ROCEV2_SENDER, x->n_ep, &x->mtu,
					 peer, why, whylen);
	if (err)
		goto out;
	err = qps_up(x, peer, why, whylen);
	if (!err && peer->ring_len)
		peer_ring(x, peer); /* a duplex sender */
	/* the QPs are ready: say so on each, the sender waits for it */
	for (unsigned i = 0; !err && i < x->n_ep; i++) {
		err = ferry__verbs_post_send(x, i, FERRY__ROCEV2_HELLO,
					     FERRY__ROCEV2_HELLO_LEN);
		if (err)
			ferry__why(why, whylen,
				   "verbs: cannot send the hello on queue pair %u: %s",
				   i, ferry_strerror(err));
	}
	if (!err)
		ferry__log(FERRY_LOG_INFO,
			   "verbs: %u queue pair(s) 0x%06x.. <- 0x%06x.. (a RoCEv2 peer), path MTU %u",
			   x->n_ep, x->ep[0].qp->qp_num, peer->qp[0].qpn,
			   x->mtu);
out:
	free(peer);
	return err;
}
