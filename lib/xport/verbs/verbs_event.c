/* verbs transport: event mode (--poll event).
 *
 * An endpoint's send and receive CQs share one completion channel. A
 * thread that found nothing to do arms both CQs, looks once more (a
 * completion that arrived before the arm raises no event), and only then
 * sleeps in poll() on the channel's descriptor, in slices of
 * FERRY__VERBS_EVENT_SLICE_MS so that cancel and a departed peer (which
 * raise no completion) are noticed. Events are acknowledged as soon as
 * they are read, so destroying a CQ never waits for an acknowledgement.
 * Busy mode (the default) creates no channel and never comes here. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>

#include "xport/verbs/verbs.h"

int ferry__verbs_event_open(struct ferry_xport *x, struct verbs_ep *e)
{
	int fl;

	e->cch = NULL;
	e->armed = false;
	if (x->attr.poll_mode != FERRY_POLL_EVENT)
		return 0;
	e->cch = ibv_create_comp_channel(x->ctx);
	if (!e->cch)
		return ferry__verbs_errno();
	fl = fcntl(e->cch->fd, F_GETFL);
	if (fl < 0 || fcntl(e->cch->fd, F_SETFL, fl | O_NONBLOCK) < 0) {
		int err = -errno;
		ibv_destroy_comp_channel(e->cch);
		e->cch = NULL;
		return err;
	}
	return 0;
}

void ferry__verbs_event_close(struct verbs_ep *e)
{
	/* after the CQs are gone: a channel with CQs on it cannot go */
	if (e->cch)
		ibv_destroy_comp_channel(e->cch);
	e->cch = NULL;
}

int ferry__verbs_event_arm(struct verbs_ep *e)
{
	int err = ferry__verbs_ibv(ibv_req_notify_cq(e->scq, 0));

	if (!err)
		err = ferry__verbs_ibv(ibv_req_notify_cq(e->rcq, 0));
	e->armed = !err;
	return err;
}

int ferry__verbs_event_wait(struct verbs_ep *e, int timeout_ms)
{
	struct pollfd pf = { .fd = e->cch->fd, .events = POLLIN };
	int ms = timeout_ms < 0 || timeout_ms > FERRY__VERBS_EVENT_SLICE_MS ?
			 FERRY__VERBS_EVENT_SLICE_MS : timeout_ms;
	struct ibv_cq *cq;
	void *ctx;

	if (poll(&pf, 1, ms) < 0 && errno != EINTR)
		return -errno;
	/* read every pending event: each one disarmed its CQ */
	while (ibv_get_cq_event(e->cch, &cq, &ctx) == 0) {
		ibv_ack_cq_events(cq, 1);
		e->armed = false;
	}
	if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
		return -errno;
	return 0;
}
