/* OSU-style benchmarks: the sender's session and the receiver's set-up.
 * The workers are in osu_dp.c, the small messages between sizes in
 * osu_msg.c. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "metrics/metrics.h"
#include "osu/osu.h"
#include "pipe/session.h"
#include "util/util.h"

/* Geometry: one stream (bibw: two), two slots each, chunk = the largest
 * message rounded up to 4 KiB. */
static unsigned osu_streams(int mode)
{
	return mode == FERRY_OSU_BIBW ? 2 : 1;
}

static uint64_t osu_chunk(uint32_t max_size)
{
	uint64_t c = ((uint64_t)max_size + 4095) & ~4095ull;

	return c ? c : 4096;
}

int ferry__osu_serve(struct ferry__pipe *p, const struct ferry_params *pr,
		     char *why, size_t whylen)
{
	struct ferry__osu *u;

	if ((pr->streams != 1 && pr->streams != 2) ||
	    pr->slots != 2 * pr->streams ||
	    pr->chunk_size > osu_chunk(FERRY_OSU_MAX_SIZE)) {
		ferry__why(why, whylen,
			   "a message benchmark of %u streams and %u slots of %llu bytes is not one this receiver runs",
			   pr->streams, pr->slots,
			   (unsigned long long)pr->chunk_size);
		return -FERRY_ENEGOTIATE;
	}
	u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	p->dp_ctx = u;
	p->worker = ferry__osu_recv_worker;
	return 0;
}

void ferry__osu_free(struct ferry__pipe *p)
{
	struct ferry__osu *u = p->dp_ctx;

	if (p->worker != ferry__osu_recv_worker &&
	    p->worker != ferry__osu_send_worker)
		return;
	/* no worker may still hold it (a start that failed half way) */
	ferry__pipe_abort(p);
	ferry__pipe_join(p);
	if (u)
		free(u->samples);
	free(u);
	p->dp_ctx = NULL;
	p->worker = NULL;
}

static int check_spec(const struct ferry_osu_spec *spec, char *why,
		      size_t whylen)
{
	if (!ferry_osu_mode_name(spec->mode)) {
		ferry__why(why, whylen, "unknown benchmark mode %d", spec->mode);
		return -EINVAL;
	}
	if (spec->n_sizes == 0 || spec->n_sizes > FERRY_OSU_MAX_SIZES) {
		ferry__why(why, whylen, "give 1 to %d message sizes, not %u",
			   FERRY_OSU_MAX_SIZES, spec->n_sizes);
		return -EINVAL;
	}
	for (unsigned i = 0; i < spec->n_sizes; i++)
		if (spec->sizes[i] == 0 || spec->sizes[i] > FERRY_OSU_MAX_SIZE) {
			ferry__why(why, whylen,
				   "message sizes are 1 B to %u MiB, not %u",
				   FERRY_OSU_MAX_SIZE >> 20, spec->sizes[i]);
			return -EINVAL;
		}
	if (spec->window > FERRY_OSU_MAX_WINDOW || spec->iters > FERRY_OSU_MAX_ITERS ||
	    (spec->warmup > FERRY_OSU_MAX_ITERS &&
	     spec->warmup != FERRY_OSU_NO_WARMUP)) {
		ferry__why(why, whylen,
			   "the window is at most %d, iterations and warm-up at most %d",
			   FERRY_OSU_MAX_WINDOW, FERRY_OSU_MAX_ITERS);
		return -EINVAL;
	}
	return 0;
}

/* The state of a run: spec, window, room for the samples of a size. */
static int osu_new(const struct ferry_osu_spec *spec, struct ferry__osu **out)
{
	struct ferry__osu *u = calloc(1, sizeof(*u));
	unsigned most = 1, it, wu;

	if (!u)
		return -ENOMEM;
	u->spec = *spec;
	u->window = spec->mode == FERRY_OSU_LAT ? 0 :
		    spec->window ? spec->window : FERRY_OSU_DEFAULT_WINDOW;
	for (unsigned i = 0; i < spec->n_sizes; i++) {
		ferry_osu_iters(spec, spec->sizes[i], &it, &wu);
		if (it > most)
			most = it;
	}
	u->samples = malloc(sizeof(*u->samples) * most);
	if (!u->samples) {
		free(u);
		return -ENOMEM;
	}
	u->samples_cap = most;
	*out = u;
	return 0;
}

static void fill_result(const struct ferry__osu *u, const struct ferry_report *rep,
			int poll_mode, struct ferry_osu_result *res)
{
	res->mode = u->spec.mode;
	snprintf(res->transport, sizeof(res->transport), "%s", rep->transport);
	snprintf(res->poll, sizeof(res->poll), "%s", ferry_poll_name(poll_mode));
	snprintf(res->peer_poll, sizeof(res->peer_poll), "%s",
		 u->peer_poll ? ferry_poll_name(u->peer_poll) : "");
	snprintf(res->peer, sizeof(res->peer), "%s", rep->peer);
	res->window = u->window;
	res->n_rows = u->n_rows;
	memcpy(res->rows, u->rows, sizeof(res->rows[0]) * u->n_rows);
}

int ferry_osu(const char *host, const char *port, const struct ferry_opts *o,
	      const struct ferry_osu_spec *spec, struct ferry_osu_result *res,
	      char *why, size_t whylen)
{
	struct ferry__pipe p = { .role = FERRY__SENDER,
				 .timeout_ms = o->timeout_ms,
				 .dp = &ferry__bench_dp,
				 .worker = ferry__osu_send_worker,
				 .duplex = true };
	struct ferry__hooks h = { .wake_fd = -1 };
	struct ferry_xport_attr xa = { 0 };
	/* the message path runs only on transports with two-way writes,
	 * each paired with itself (the scan says when one is named) */
	struct ferry__xscan xs = { .duplex = true };
	struct ferry_opts oo = *o;
	struct ferry_report *rep = NULL;
	struct ferry__osu *u = NULL;
	uint32_t max_size = 0;
	int fd = -1, err;

	memset(res, 0, sizeof(*res));
	err = check_spec(spec, why, whylen);
	if (err)
		return err;
	for (unsigned i = 0; i < spec->n_sizes; i++)
		if (spec->sizes[i] > max_size)
			max_size = spec->sizes[i];
	oo.streams = osu_streams(spec->mode);
	oo.chunk_size = osu_chunk(max_size);
	oo.slots = 2 * oo.streams;
	oo.fixed = FERRY_FIXED_STREAMS | FERRY_FIXED_SLOTS; /* a message
							       path's own */
	oo.interval = 0;
	oo.on_interval = NULL;
	/* busy unless told: what MPI libraries (and so the OSU numbers
	 * people compare with) do; every transport offers it */
	if (oo.poll_mode == FERRY_POLL_DEFAULT)
		oo.poll_mode = FERRY_POLL_BUSY;
	err = ferry__opts_check(&oo, &xs, why, whylen);
	if (err)
		return err;
	ferry__metrics_session_begin(FERRY__M_SENDER);
	rep = calloc(1, sizeof(*rep));
	err = rep ? osu_new(spec, &u) : -ENOMEM;
	if (err)
		goto out;
	p.dp_ctx = u;
	err = ferry__client_open(host, port, &oo, &fd, &xa, rep, why, whylen);
	if (err)
		goto out;
	err = ferry__client_propose(fd, &oo, &xa, &xs, FERRY_MODE_OSU, 0, why,
				    whylen);
	if (!err)
		err = ferry__client_connect(&p, fd, &oo, &xa, &xs, rep, why,
					    whylen);
	if (err == -ENOTSUP)
		ferry__ctrl_send_error(fd, err, "%s", why);
	if (!err) {
		u->poll_mode = p.poll_mode;
		err = ferry__client_run(&p, fd, &oo, &h, rep, why, whylen);
	}
	fill_result(u, rep, p.poll_mode, res);
out:
	ferry__osu_free(&p); /* u too */
	ferry__pipe_free(&p);
	if (fd >= 0)
		close(fd);
	free(rep);
	ferry__metrics_session_end(FERRY__M_SENDER, err);
	return err;
}
