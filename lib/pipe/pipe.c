/* Pipeline setup shared by sender and receiver. */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "metrics/metrics.h"
#include "pipe/pipe.h"
#include "util/util.h"
#include "xport/xport_ids.h"

_Static_assert(FERRY_REPORT_STREAMS == FERRY_MAX_STREAMS,
	       "a report keeps every stream's bytes");

int ferry__pipe_geometry(struct ferry__pipe *p, unsigned streams,
			 uint64_t chunk, unsigned slots, char *why,
			 size_t whylen)
{
	if (streams == 0 || streams > FERRY_MAX_STREAMS) {
		ferry__why(why, whylen, "streams must be 1 to %d, not %u",
			   FERRY_MAX_STREAMS, streams);
		return -EINVAL;
	}
	if (chunk < FERRY_MIN_CHUNK || chunk > FERRY_MAX_CHUNK ||
	    chunk % 4096) {
		ferry__why(why, whylen,
			   "chunk size must be a multiple of 4 KiB from 4 KiB to 1 GiB, not %llu",
			   (unsigned long long)chunk);
		return -EINVAL;
	}
	if (slots < streams || slots > FERRY_MAX_SLOTS) {
		ferry__why(why, whylen,
			   "slots must be at least the stream count (%u) and at most %u, not %u",
			   streams, FERRY_MAX_SLOTS, slots);
		return -EINVAL;
	}
	p->streams = streams;
	atomic_store(&p->active, streams);
	p->chunk = chunk;
	p->stride = FERRY_CHUNK_HDR_SPACE + chunk;
	p->depth = slots / streams;
	p->slots = p->depth * streams; /* a remainder would never be used */
	return 0;
}

int ferry__pipe_memory(struct ferry__pipe *p, const struct ferry_opts *o,
		       const struct sockaddr *peer, socklen_t peer_len,
		       char *why, size_t whylen)
{
	char ifname[FERRY_IFNAMSIZ] = "";
	struct ferry_place_attr pa = {
		.cpulist = o->cpulist,
		.numa_node = o->numa_node,
	};
	struct ferry_pool_attr ma = { 0 };
	int err;

	if (ferry_topo_route_netdev(peer, peer_len, ifname) == 0) {
		pa.ifname = ifname;
		ferry__metrics_netdev(ifname);
	}
	err = ferry_topo_place(&pa, &p->pl);
	if (err) {
		ferry__why(why, whylen, "%s", p->pl.why);
		return err;
	}
	ferry__log(FERRY_LOG_INFO, "placement: %s", p->pl.why);
	ma.size = p->stride * p->slots;
	ma.numa_node = p->pl.node;
	/* memory a transport pins (a NIC, DPDK) is faulted in now; a tcp
	 * ring faults in as it first fills: faulting a ring planned for a
	 * long path in up front took 1.2 s per side for 450 MiB here, all
	 * of it before the first byte moved */
	ma.no_prefault = !(p->ops->needs & FERRY_XPORT_NEEDS_MEMLOCK);
	err = ferry_pool_create(&ma, &p->pool);
	if (err) {
		ferry__why(why, whylen,
			   "cannot allocate %llu MiB of buffers: %s (lower --slots or -l)",
			   (unsigned long long)(ma.size >> 20),
			   ferry_strerror(err));
		return err;
	}
	p->base = ferry_pool_base(p->pool);
	ferry__log(FERRY_LOG_INFO, "memory: %llu MiB on %s pages, NUMA node %d",
		   (unsigned long long)(ferry_pool_size(p->pool) >> 20),
		   ferry_page_kind_name(ferry_pool_page_kind(p->pool)),
		   ferry_pool_node(p->pool));
	err = p->ops->reg_mem(p->x, p->base, p->stride * p->slots,
			      p->role == FERRY__RECEIVER || p->duplex ?
				      FERRY_ACCESS_REMOTE_WRITE :
				      FERRY_ACCESS_LOCAL,
			      &p->mr);
	if (err)
		ferry__why(why, whylen, "%s: cannot register memory: %s",
			   p->ops->name, ferry_strerror(err));
	return err;
}

/* What the metrics read of a live pipeline: the streams' counters. */
static void metrics_read(const void *ctx, struct ferry__m_pipe *v)
{
	const struct ferry__pipe *p = ctx;

	ferry__pipe_totals(p, &v->bytes, &v->chunks, &v->stalls,
			   &v->crc_errors);
	v->streams = atomic_load(&p->running);
}

int ferry__pipe_start(struct ferry__pipe *p, void *(*fn)(void *))
{
	p->st = aligned_alloc(64, sizeof(*p->st) * p->streams);
	if (!p->st)
		return -ENOMEM;
	memset(p->st, 0, sizeof(*p->st) * p->streams);
	/* without it the metrics miss this pipeline; the session goes on */
	(void)ferry__metrics_attach(p, p->ops ? p->ops->name : "",
				    p->role == FERRY__SENDER ? FERRY__M_TX :
							       FERRY__M_RX,
				    metrics_read);
	p->start_ns = p->last_ns = ferry__now_ns();
	p->ramp.last_ns = p->start_ns;
	ferry__thread_cpu(&p->ctl_u0, &p->ctl_s0);
	ferry__process_cpu(&p->proc_u0, &p->proc_s0);
	if (p->ops && FERRY_XPORT_HAS(p->ops, shared_cpu))
		p->ops->shared_cpu(p->x, &p->shared_u0, &p->shared_s0);
	for (unsigned i = 0; i < p->streams; i++) {
		p->st[i].p = p;
		p->st[i].idx = i;
		atomic_fetch_add(&p->running, 1);
		int err = -pthread_create(&p->st[i].th, NULL, fn, &p->st[i]);
		if (err) {
			atomic_fetch_sub(&p->running, 1);
			ferry__pipe_abort(p);
			return err;
		}
		p->st[i].started = true;
	}
	return 0;
}

void ferry__pipe_abort(struct ferry__pipe *p)
{
	atomic_store(&p->abort, true);
	if (p->x)
		p->ops->cancel(p->x);
}

void ferry__pipe_stop(struct ferry__pipe *p)
{
	atomic_store(&p->stop, true);
	if (p->x)
		p->ops->cancel(p->x);
}

void ferry__pipe_join(struct ferry__pipe *p)
{
	for (unsigned i = 0; p->st && i < p->streams; i++)
		if (p->st[i].started) {
			pthread_join(p->st[i].th, NULL);
			p->st[i].started = false;
		}
}

int ferry__pipe_error(const struct ferry__pipe *p, char *why, size_t whylen)
{
	for (unsigned i = 0; p->st && i < p->streams; i++)
		if (p->st[i].err) {
			ferry__why(why, whylen, "%s", p->st[i].why);
			return p->st[i].err;
		}
	return 0;
}

void ferry__pipe_totals(const struct ferry__pipe *p, uint64_t *bytes,
			uint64_t *chunks, uint64_t *stalls, uint64_t *crc_err)
{
	uint64_t b = 0, c = 0, s = 0, e = 0;

	for (unsigned i = 0; p->st && i < p->streams; i++) {
		b += atomic_load_explicit(&p->st[i].bytes, memory_order_relaxed);
		c += atomic_load_explicit(&p->st[i].chunks, memory_order_relaxed);
		s += atomic_load_explicit(&p->st[i].stalls, memory_order_relaxed);
		e += atomic_load_explicit(&p->st[i].crc_errors,
					  memory_order_relaxed);
	}
	*bytes = b;
	*chunks = c;
	*stalls = s;
	if (crc_err)
		*crc_err = e;
}

int ferry__pipe_next_tick_ms(const struct ferry__pipe *p,
			     const struct ferry_opts *o)
{
	uint64_t due, now = ferry__now_ns();

	/* wake often enough to notice workers finishing */
	if (o->interval <= 0)
		return 20;
	due = p->last_ns + (uint64_t)(o->interval * 1e9);
	if (due <= now)
		return 0;
	due = (due - now) / 1000000ull + 1;
	return due > 20 ? 20 : (int)due;
}

/* Does this pipeline's transport count a sender's retransmissions? */
static bool counts_retx(const struct ferry__pipe *p)
{
	return p->role == FERRY__SENDER && p->x && p->ops &&
	       FERRY_XPORT_HAS(p->ops, retransmits);
}

void ferry__pipe_tick(struct ferry__pipe *p, const struct ferry_opts *o,
		      struct ferry_report *rep, bool force)
{
	uint64_t now = p->end_ns ? p->end_ns : ferry__now_ns(), b, c, s;
	struct ferry_interval iv;

	if (o->interval <= 0 && !force)
		return;
	if (!force && now < p->last_ns + (uint64_t)(o->interval * 1e9))
		return;
	ferry__pipe_totals(p, &b, &c, &s, NULL);
	if (force && (now <= p->last_ns || b == p->last_bytes))
		return; /* nothing worth reporting */
	iv.start = (double)(p->last_ns - p->start_ns) / 1e9;
	iv.end = (double)(now - p->start_ns) / 1e9;
	iv.bytes = b - p->last_bytes;
	iv.chunks = c - p->last_chunks;
	iv.stalls = s - p->last_stalls;
	for (unsigned i = 0; i < FERRY_REPORT_IV_STREAMS; i++) {
		uint64_t sb = p->st && i < p->streams ?
				      atomic_load(&p->st[i].bytes) : 0;
		iv.stream_bytes[i] = sb - p->last_sbytes[i];
		p->last_sbytes[i] = sb;
	}
	iv.retransmits = 0;
	memset(iv.stream_retransmits, 0, sizeof(iv.stream_retransmits));
	if (counts_retx(p)) {
		uint64_t all = 0;
		for (unsigned i = 0; i < p->streams; i++) {
			uint64_t r = p->ops->retransmits(p->x, i);
			all += r;
			if (i < FERRY_REPORT_IV_STREAMS) {
				iv.stream_retransmits[i] =
					(uint32_t)(r - p->last_sretx[i]);
				p->last_sretx[i] = r;
			}
		}
		iv.retransmits = all - p->last_retx;
		p->last_retx = all;
	}
	p->last_ns = now;
	p->last_bytes = b;
	p->last_chunks = c;
	p->last_stalls = s;
	ferry_report_add_interval(rep, &iv);
	if (o->on_interval && o->interval > 0)
		o->on_interval(rep, &iv, o->arg);
}

void ferry__pipe_fit_start(struct ferry__pipe *p, double rtt_s, uint64_t max)
{
	if (!p->ops || !FERRY_XPORT_HAS(p->ops, clamp) ||
	    !FERRY_XPORT_HAS(p->ops, rx_counts))
		return;
	p->fit_in = calloc(p->streams ? p->streams : 1, sizeof(*p->fit_in));
	if (!p->fit_in ||
	    ferry__fit_init(&p->fit, p->streams, rtt_s, max, ferry__now_ns())) {
		free(p->fit_in);
		p->fit_in = NULL;
		return; /* no memory: the kernel's windows, as without it */
	}
	if (p->fit.n)
		ferry__log(FERRY_LOG_DEBUG,
			   "windows follow the rate: base RTT %.1f ms, an interval of %.0f ms",
			   rtt_s * 1e3, (double)p->fit.interval_ns / 1e6);
}

void ferry__pipe_fit_tick(struct ferry__pipe *p)
{
	unsigned before = p->fit.engaged;

	if (!ferry__fit_due(&p->fit, ferry__now_ns()))
		return;
	for (unsigned i = 0; i < p->fit.n; i++) {
		struct ferry_xport_rx rx;
		int err = p->ops->rx_counts(p->x, i, &rx);

		if (err == -EOPNOTSUPP) {
			ferry__log(FERRY_LOG_INFO,
				   "windows: this kernel does not count packets out of order (TCP_INFO rcv_ooopack, Linux 5.4); they are left to it");
			p->fit.n = 0; /* before any stream was held */
			return;
		}
		if (!err) {
			p->fit_in[i].bytes = rx.bytes;
			p->fit_in[i].ooo = rx.out_of_order;
			p->fit_in[i].rtt_s = (double)rx.rtt_us / 1e6;
		}
	}
	if (!ferry__fit_sample(&p->fit, ferry__now_ns(), p->fit_in))
		return;
	for (unsigned i = 0; i < p->fit.n; i++)
		if (p->fit.s[i].clamp)
			(void)p->ops->clamp(p->x, i, p->fit.s[i].clamp);
	if (p->fit.engaged != before)
		ferry__log(FERRY_LOG_INFO,
			   "windows: %u of %u streams out of slow start, held to the rate they carry",
			   p->fit.engaged, p->fit.n);
}

void ferry__pipe_ramp_start(struct ferry__pipe *p, unsigned start,
			    double rtt_s)
{
	ferry__ramp_init(&p->ramp, start, p->streams, rtt_s, ferry__now_ns());
	if (p->ramp.done || !FERRY_XPORT_HAS(p->ops, acked))
		return;
	p->ramping = true;
	atomic_store(&p->active, p->ramp.active);
	ferry__log(FERRY_LOG_INFO, "stream ramp: %s", p->ramp.why);
}

void ferry__pipe_ramp_tick(struct ferry__pipe *p)
{
	uint64_t now = ferry__now_ns(), acked = 0, retx = 0;

	if (!p->ramping || p->ramp.done ||
	    now < p->ramp.last_ns + p->ramp.interval_ns)
		return;
	for (unsigned i = 0; i < p->streams; i++) {
		acked += p->ops->acked(p->x, i);
		if (counts_retx(p))
			retx += p->ops->retransmits(p->x, i);
	}
	if (!ferry__ramp_sample(&p->ramp, now, acked, retx))
		return;
	atomic_store(&p->active, p->ramp.active);
	ferry__log(FERRY_LOG_INFO, "stream ramp: %s", p->ramp.why);
}

static void cpu_of(int who, double *user, double *sys)
{
	struct rusage ru;

	getrusage(who, &ru);
	*user = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6;
	*sys = (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

void ferry__thread_cpu(double *user, double *sys)
{
	cpu_of(RUSAGE_THREAD, user, sys);
}

void ferry__process_cpu(double *user, double *sys)
{
	cpu_of(RUSAGE_SELF, user, sys);
}

void ferry__pipe_report(struct ferry__pipe *p, struct ferry_report *rep)
{
	uint64_t end = p->end_ns ? p->end_ns : ferry__now_ns();
	double u, s;

	snprintf(rep->role, sizeof(rep->role), "%s",
		 p->role == FERRY__SENDER ? "sender" : "receiver");
	snprintf(rep->transport, sizeof(rep->transport), "%s",
		 p->ops ? p->ops->name : "");
	snprintf(rep->poll, sizeof(rep->poll), "%s",
		 p->poll_mode ? ferry_poll_name(p->poll_mode) : "");
	rep->streams = p->streams;
	rep->streams_used = p->ramping ? p->ramp.active : p->streams;
	rep->streams_peak = p->ramping ? p->ramp.peak : p->streams;
	rep->fit_streams = p->fit.engaged;
	rep->fit_bytes = 0;
	for (unsigned i = 0; i < p->fit.n; i++)
		rep->fit_bytes += p->fit.s[i].engaged ? p->fit.s[i].clamp : 0;
	if (p->ramping)
		snprintf(rep->ramp, sizeof(rep->ramp), "%s%s", p->ramp.why,
			 p->ramp.done ? "" : "; the session ended first");
	rep->slots = p->slots;
	rep->depth = p->depth;
	rep->chunk_size = p->chunk;
	rep->numa_node = p->pl.node;
	snprintf(rep->placement, sizeof(rep->placement), "%s", p->pl.why);
	if (p->pool) {
		snprintf(rep->page_kind, sizeof(rep->page_kind), "%s",
			 ferry_page_kind_name(ferry_pool_page_kind(p->pool)));
		rep->pool_bytes = ferry_pool_size(p->pool);
	}
	if (p->start_ns) {
		rep->seconds = (double)(end - p->start_ns) / 1e9;
		rep->start_time = (int64_t)time(NULL) -
				  (int64_t)((ferry__now_ns() - p->start_ns) /
					    1000000000ull);
	}
	ferry__pipe_totals(p, &rep->bytes, &rep->chunks, &rep->stalls,
			   &rep->crc_errors);
	for (unsigned i = 0; p->st && i < p->streams &&
			     i < FERRY_REPORT_STREAMS; i++)
		rep->stream_bytes[i] = atomic_load(&p->st[i].bytes);
	rep->has_retransmits = counts_retx(p);
	rep->retransmits = 0;
	for (unsigned i = 0; rep->has_retransmits && i < p->streams &&
			     i < FERRY_REPORT_STREAMS; i++) {
		rep->stream_retransmits[i] = p->ops->retransmits(p->x, i);
		rep->retransmits += rep->stream_retransmits[i];
	}
	ferry__thread_cpu(&u, &s);
	rep->cpu_user = u - p->ctl_u0;
	rep->cpu_sys = s - p->ctl_s0;
	for (unsigned i = 0; p->st && i < p->streams; i++) {
		rep->cpu_user += p->st[i].cpu_user;
		rep->cpu_sys += p->st[i].cpu_sys;
	}
	/* a sender is alone in its process: count every thread it has,
	 * a transport's own (a port's polling thread) included. A receiver may
	 * serve several sessions at once: it counts its session's threads and
	 * what the transport's shared ones spent meanwhile (with sessions at
	 * once, each counts those whole). */
	if (p->role == FERRY__SENDER && p->start_ns) {
		ferry__process_cpu(&u, &s);
		rep->cpu_user = u - p->proc_u0;
		rep->cpu_sys = s - p->proc_s0;
	} else if (p->start_ns && p->x &&
		   FERRY_XPORT_HAS(p->ops, shared_cpu)) {
		p->ops->shared_cpu(p->x, &u, &s);
		if (u >= p->shared_u0 && s >= p->shared_s0) {
			rep->cpu_user += u - p->shared_u0;
			rep->cpu_sys += s - p->shared_s0;
		}
	}
}

void ferry__pipe_release(struct ferry__pipe *p)
{
	if (p->mr)
		p->ops->dereg_mem(p->x, p->mr);
	if (p->x)
		p->ops->close(p->x);
	ferry_pool_destroy(p->pool);
	p->mr = NULL;
	p->x = NULL;
	p->pool = NULL;
	p->base = NULL;
}

void ferry__pipe_free(struct ferry__pipe *p)
{
	if (p->st) {
		ferry__pipe_abort(p);
		ferry__pipe_join(p);
		ferry__metrics_detach(p);
		free(p->st);
		p->st = NULL;
	}
	ferry__pipe_release(p);
	ferry__fit_free(&p->fit);
	free(p->fit_in);
	memset(p, 0, sizeof(*p));
}

int ferry__pipe_poll_mode(const struct ferry__pipe *p, int want, char *why,
			  size_t whylen)
{
	int mode = ferry_xport_poll_mode(p->ops, want, why, whylen);
	cpu_set_t cpus;
	int n;

	if (mode != FERRY_POLL_BUSY || want != FERRY_POLL_DEFAULT ||
	    !(p->ops->poll_modes & FERRY_POLL_BIT(FERRY_POLL_EVENT)) ||
	    ferry__xport_busy_spins_one(p->ops) ||
	    sched_getaffinity(0, sizeof(cpus), &cpus))
		return mode;
	n = CPU_COUNT(&cpus);
	if (p->streams <= (unsigned)n)
		return mode;
	ferry__log(FERRY_LOG_INFO,
		   "event polling: %u streams would spin on %d CPU(s) (ask --poll busy to spin anyway)",
		   p->streams, n);
	return FERRY_POLL_EVENT;
}
