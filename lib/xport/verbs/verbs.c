/* verbs transport: control path (probe, device and PD, memory registration,
 * teardown) and the ops table. Connection management is in verbs_cm.c,
 * queue pairs in verbs_qp.c, the datapath in verbs_dp.c. */
#include <linux/capability.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "util/util.h"
#include "xport/verbs/verbs.h"
#include "xport/verbs/verbs_id.h"


/* Cheap and silent: `--transport auto` calls it on every session. */
static int verbs_probe(const struct ferry_xport_conf *conf, char *why,
		       size_t whylen)
{
	int n = 0;
	struct ibv_device **l = ibv_get_device_list(&n);

	(void)conf; /* the device is chosen at open (or by reach) */
	if (l)
		ibv_free_device_list(l);
	if (!l || n <= 0) {
		ferry__why(why, whylen,
			   "no RDMA device (ibv_get_device_list found none)");
		return -FERRY_ENOXPORT;
	}
	if (access("/dev/infiniband/rdma_cm", R_OK | W_OK) != 0) {
		ferry__why(why, whylen,
			   "%d RDMA device(s), but /dev/infiniband/rdma_cm is not usable (%s): load rdma_ucm (modprobe rdma_ucm) or check its permissions",
			   n, ferry_strerror(-errno));
		return -FERRY_ENOXPORT;
	}
	return 0;
}

/* For `--transport auto`: is there an RDMA device on the way to peer
 * (or the one the settings name: FERRY_VERBS_DEVICE)? Only a definite no
 * says no: an ambiguous choice is left to open, which explains it. */
static int verbs_reach(const struct ferry_xport_conf *conf,
		       const struct sockaddr *peer, socklen_t peer_len,
		       char *why, size_t whylen)
{
	char route_if[FERRY_IFNAMSIZ], dev[64];
	int err;

	if (ferry_topo_route_netdev(peer, peer_len, route_if) != 0)
		route_if[0] = '\0';
	err = ferry__verbs_pick_dev(NULL, conf->verbs.device, route_if, dev,
				    sizeof(dev), why, whylen);
	return err == -FERRY_ENOXPORT ? err : 0;
}

/* The settings' round trip (FERRY_VERBS_RTT_MS), else the default. */
static double assumed_rtt_ms(const struct ferry_verbs_conf *c)
{
	double v = c->rtt_ms;

	if (v < 0)
		return FERRY__VERBS_RTT_MS;
	if (!(v <= 100000)) { /* NaN too: what the environment did not parse */
		ferry__log(FERRY_LOG_WARN,
			   "verbs: the assumed round trip (FERRY_VERBS_RTT_MS) is not a number of milliseconds from 0 to 100000; assuming %.0f ms",
			   FERRY__VERBS_RTT_MS);
		return FERRY__VERBS_RTT_MS;
	}
	return v;
}

/* Which device: the settings' (FERRY_VERBS_DEVICE: a device or netdev
 * name), else the one behind the netdev that reaches attr.addr (the
 * sender's peer; for the receiver its own control address), else the only
 * one. */
static int choose_device(struct ferry_xport *x, char *why, size_t whylen)
{
	const char *want = x->attr.conf->verbs.device;
	const char *how;
	int err;

	if (x->attr.addr_len &&
	    ferry_topo_route_netdev((const struct sockaddr *)&x->attr.addr,
				    x->attr.addr_len, x->route_if) != 0)
		x->route_if[0] = '\0';
	x->dev_forced = want && *want;
	err = ferry__verbs_pick_dev(NULL, want, x->route_if, x->dev,
				    sizeof(x->dev), why, whylen);
	if (err)
		return err;
	if (!x->dev_forced && x->route_if[0]) {
		/* the netdev that carries the control traffic */
		snprintf(x->netdev, sizeof(x->netdev), "%s", x->route_if);
		how = "it carries the route to the peer";
	} else {
		if (ferry__verbs_netdev_of_dev(NULL, x->dev, x->netdev,
					       sizeof(x->netdev)))
			x->netdev[0] = '\0';
		how = x->dev_forced ? "FERRY_VERBS_DEVICE names it" :
				      "the only RDMA device";
	}
	ferry__log(FERRY_LOG_INFO, "verbs: device %s (netdev %s): %s", x->dev,
		   x->netdev[0] ? x->netdev : "none", how);
	return 0;
}

/* Open the device through librdmacm's own contexts: a QP made on an
 * rdma_cm id must use a PD of the id's context. */
static int open_device(struct ferry_xport *x, char *why, size_t whylen)
{
	int n = 0, err;

	x->devs = rdma_get_devices(&n);
	if (!x->devs) {
		err = ferry__verbs_errno();
		ferry__why(why, whylen,
			   "verbs: librdmacm sees no RDMA device (%s); is rdma_ucm loaded?",
			   ferry_strerror(err));
		return err == -ENODEV ? -FERRY_ENOXPORT : err;
	}
	for (int i = 0; i < n && !x->ctx; i++)
		if (strcmp(ibv_get_device_name(x->devs[i]->device), x->dev) == 0)
			x->ctx = x->devs[i];
	if (!x->ctx) {
		ferry__why(why, whylen,
			   "verbs: librdmacm does not list device %s", x->dev);
		err = -ENODEV;
		goto out_devs;
	}
	x->pd = ibv_alloc_pd(x->ctx);
	if (!x->pd) {
		err = ferry__verbs_errno();
		ferry__why(why, whylen, "verbs: %s: cannot allocate a PD: %s",
			   x->dev, ferry_strerror(err));
		goto out_devs;
	}
	err = ferry__verbs_ibv(ibv_query_device(x->ctx, &x->dattr));
	if (err) {
		ferry__why(why, whylen, "verbs: %s: cannot query it: %s",
			   x->dev, ferry_strerror(err));
		goto out_pd;
	}
	if (x->dattr.max_srq == 0) {
		ferry__why(why, whylen,
			   "verbs: %s has no shared receive queues", x->dev);
		err = -FERRY_ENOXPORT;
		goto out_pd;
	}
	return 0;
out_pd:
	ibv_dealloc_pd(x->pd);
	x->pd = NULL;
out_devs:
	rdma_free_devices(x->devs);
	x->devs = NULL;
	x->ctx = NULL;
	return err;
}

static int verbs_open(const struct ferry_xport_attr *attr,
		      struct ferry_xport **out, char *why, size_t whylen)
{
	struct ferry_xport *x;
	struct rlimit rl;
	int err;

	if (attr->n_ep == 0 || attr->n_ep > FERRY__VERBS_MAX_EP) {
		ferry__why(why, whylen,
			   "verbs supports 1 to %d queue pairs, not %u",
			   FERRY__VERBS_MAX_EP, attr->n_ep);
		return -EINVAL;
	}
	if (attr->dscp > FERRY_DSCP_MAX) {
		ferry__why(why, whylen, "verbs: DSCP %d is over %d", attr->dscp,
			   FERRY_DSCP_MAX);
		return -EINVAL;
	}
	x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	x->ep = aligned_alloc(64, sizeof(*x->ep) * attr->n_ep);
	if (!x->ep) {
		err = -ENOMEM;
		goto out_x;
	}
	memset(x->ep, 0, sizeof(*x->ep) * attr->n_ep);
	for (unsigned i = 0; i < attr->n_ep; i++) {
		x->ep[i].idx = i;
		atomic_init(&x->ep[i].peer_gone, false);
	}
	x->attr = *attr;
	x->n_ep = attr->n_ep;
	x->wake_fd = x->prog_fd = -1;
	atomic_init(&x->up, 0);
	atomic_init(&x->setup_err, 0);
	x->max_msg = UINT32_MAX;
	atomic_init(&x->cancelled, false);

	err = choose_device(x, why, whylen);
	if (err)
		goto out_ep;
	err = open_device(x, why, whylen);
	if (err)
		goto out_ep;

	x->memlock_limit = UINT64_MAX;
	if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		x->memlock_limit = rl.rlim_cur;
	x->cap_ipc_lock = ferry__cap_effective(NULL, CAP_IPC_LOCK);
	x->rtt_ms = assumed_rtt_ms(&attr->conf->verbs);
	x->ack_timeout = ferry__verbs_ack_timeout(x->rtt_ms);
	ferry__log(FERRY_LOG_INFO,
		   "verbs: ACK timeout %u (%.0f ms, for RTTs up to %.0f ms), retry_cnt %d, rnr_retry %d",
		   x->ack_timeout, ferry__verbs_ack_period_ms(x->ack_timeout),
		   x->rtt_ms, FERRY__VERBS_RETRY, FERRY__VERBS_RNR_RETRY);
	if (!x->cap_ipc_lock && x->memlock_limit != UINT64_MAX)
		ferry__log(FERRY_LOG_DEBUG,
			   "verbs: registrations may lock %llu KiB (RLIMIT_MEMLOCK)",
			   (unsigned long long)(x->memlock_limit >> 10));
	*out = x;
	return 0;
out_ep:
	free(x->ep);
out_x:
	free(x);
	return err;
}

static int verbs_reg_mem(struct ferry_xport *x, void *addr, size_t len,
			 unsigned access, struct ferry_mr **out)
{
	char why[512];
	struct ferry_mr *m;
	int err;

	if (!addr || len == 0)
		return -EINVAL;
	/* Checked before ibv_reg_mr, whose failure would only say ENOMEM. */
	err = ferry__verbs_memlock_check(x->memlock_limit, x->locked, len,
					 x->cap_ipc_lock, why, sizeof(why));
	if (err) {
		ferry__log(FERRY_LOG_ERR, "%s", why);
		return err;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->base = addr;
	m->len = len;
	m->access = access;
	if (access & FERRY_ACCESS_REMOTE_WRITE) {
		/* The ring is registered zero-based: the peer writes at
		 * offsets, and no virtual address goes on the wire. The iova
		 * keeps the buffer's offset within its page so the NIC can
		 * map it with the same (huge) page size. Relaxed ordering is
		 * an optional flag: dropped where unsupported. */
		m->iova = (uintptr_t)addr & 4095u;
		m->mr = ibv_reg_mr_iova2(x->pd, addr, len, m->iova,
					 IBV_ACCESS_LOCAL_WRITE |
						 IBV_ACCESS_REMOTE_WRITE |
						 IBV_ACCESS_RELAXED_ORDERING);
	} else {
		m->iova = (uintptr_t)addr;
		m->mr = ibv_reg_mr(x->pd, addr, len, IBV_ACCESS_LOCAL_WRITE);
	}
	if (!m->mr) {
		err = ferry__verbs_errno();
		ferry__log(FERRY_LOG_ERR,
			   "verbs: %s: cannot register %zu bytes: %s", x->dev,
			   len, ferry_strerror(err));
		free(m);
		return err;
	}
	m->next = x->mrs;
	x->mrs = m;
	x->locked += len;
	*out = m;
	return 0;
}

static void verbs_dereg_mem(struct ferry_xport *x, struct ferry_mr *mr)
{
	struct ferry_mr **pp;
	int err;

	if (!mr)
		return;
	for (pp = &x->mrs; *pp && *pp != mr; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = mr->next;
	if (x->ring == mr) {
		ferry__verbs_cm_stop(x); /* it answers REQs with the ring */
		x->ring = NULL;
	}
	err = ferry__verbs_ibv(ibv_dereg_mr(mr->mr));
	if (err)
		ferry__log(FERRY_LOG_WARN, "verbs: deregistering memory: %s",
			   ferry_strerror(err));
	x->locked -= mr->len;
	free(mr);
}

static void verbs_cancel(struct ferry_xport *x)
{
	atomic_store(&x->cancelled, true);
}

static void verbs_close(struct ferry_xport *x)
{
	if (!x)
		return;
	ferry__verbs_cm_close(x);
	while (x->mrs)
		verbs_dereg_mem(x, x->mrs);
	if (x->pd)
		ibv_dealloc_pd(x->pd);
	if (x->devs)
		rdma_free_devices(x->devs);
	free(x->ep);
	free(x);
}

const struct ferry_xport_ops ferry__xport_verbs = {
	.size = sizeof(struct ferry_xport_ops),
	FERRY__VERBS_ID, /* name, control-channel bit, rank, wire, needs */
	.probe = verbs_probe,
	.open = verbs_open,
	.reg_mem = verbs_reg_mem,
	.dereg_mem = verbs_dereg_mem,
	.listen = ferry__verbs_listen,
	.accept = ferry__verbs_accept,
	.connect = ferry__verbs_connect,
	.post_write_imm = ferry__verbs_post_write_imm,
	.post_send = ferry__verbs_post_send,
	.poll = ferry__verbs_poll,
	.cancel = verbs_cancel,
	.close = verbs_close,
	.duplex = ferry__verbs_duplex,
	/* busy on pinned cores by default; completion channels on request */
	.poll_modes = FERRY_POLL_BIT(FERRY_POLL_BUSY) |
		      FERRY_POLL_BIT(FERRY_POLL_EVENT),
	.poll_default = FERRY_POLL_BUSY,
	.reach = verbs_reach,
};
