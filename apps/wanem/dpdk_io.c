/* DPDK I/O for ferry-wanem: EAL start from --dpdk, ports 0 and 1 with one
 * rx and one tx queue each, one mbuf pool sized for the delay line, and
 * the polling loop on the main lcore. The one place DPDK's results
 * (negative errno, or -1 and rte_errno) become -errno and a reason. */
#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include <rte_devargs.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "dpdk_io.h"
#include "ferry/args.h"
#include "report.h"

#define MAX_ARGS 64
#define BURST 32
#define RING_DESC 1024
#define POOL_CACHE 256
/* net_af_packet: frames start this far into a ring frame of framesz
 * bytes, so its rx needs mbufs holding framesz - 32 (TPACKET2). */
#define AFP_RX_OVERHEAD 32
#define AFP_DEFAULT_FRAMESZ 2048
#define IDLE_SPINS 4
#define IDLE_SLEEP_NS 20000
/* Under a real-time policy the kernel stops the thread for the rest of
 * its period once real-time tasks used sched_rt_runtime_us of every
 * sched_rt_period_us (95% of 1 s by default): a stall of 50 ms. A pause
 * of 1 ms after 10 ms without sleeping keeps clear of that. */
#define RT_BUSY_NS 10000000
#define RT_PAUSE_NS 1000000

struct io_dir {
	uint16_t tx_port;
	struct rte_mempool *pool;
};

struct io {
	const struct wanem_attr *a;
	uint16_t port[2];
	struct rte_mempool *pool;
	struct io_dir dir[2];
	struct wanem_path *path[2];
	uint64_t t0;
	uint64_t stall_max_ns, stalls_1ms;
	bool rt;              /* a real-time policy with a runtime limit */
	uint64_t rt_pauses;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int pkt_copy(void *ctx, const struct wanem_pkt *in, struct wanem_pkt *out)
{
	struct io_dir *d = ctx;
	struct rte_mbuf *c = rte_pktmbuf_copy(in->h, d->pool, 0, UINT32_MAX);

	if (!c)
		return -ENOMEM;
	if (c->nb_segs > 1) {
		rte_pktmbuf_free(c);
		return -ENOMEM;
	}
	*out = (struct wanem_pkt){ c, rte_pktmbuf_mtod(c, uint8_t *),
				   rte_pktmbuf_data_len(c) };
	return 0;
}

static void pkt_free(void *ctx, void *h)
{
	(void)ctx;
	rte_pktmbuf_free(h);
}

static unsigned pkt_xmit(void *ctx, void *const *h, unsigned n)
{
	struct io_dir *d = ctx;
	struct rte_mbuf *m[BURST];

	if (n > BURST)
		n = BURST;
	for (unsigned i = 0; i < n; i++)
		m[i] = h[i];
	return rte_eth_tx_burst(d->tx_port, 0, m, (uint16_t)n);
}

static const struct wanem_pkt_ops mbuf_ops = {
	.size = sizeof(struct wanem_pkt_ops),
	.copy = pkt_copy,
	.free = pkt_free,
	.xmit = pkt_xmit,
};

static int eal_start(const char *dpdk, char *why, size_t len)
{
	static char *argv[MAX_ARGS + 2];
	char *copy = strdup(dpdk); /* kept: the EAL may hold on to argv */
	int argc;

	if (!copy)
		return -ENOMEM;
	argv[0] = "ferry-wanem";
	argc = ferry_split_args(copy, argv, MAX_ARGS + 1, 1);
	if (argc < 0) {
		snprintf(why, len, "--dpdk has more than %d words", MAX_ARGS);
		return -E2BIG;
	}
	if (rte_eal_init(argc, argv) < 0) {
		int e = rte_errno > 0 ? rte_errno : EINVAL;

		snprintf(why, len, "the DPDK EAL did not start with --dpdk \"%s\": "
			 "%s (hugepages: see --help; --no-huge -m MB works too)",
			 dpdk, rte_strerror(e));
		return -e;
	}
	return 0;
}

/* The mbuf data room the port's receive side needs. */
static unsigned data_room(uint16_t port)
{
	struct rte_eth_dev_info di;
	const struct rte_devargs *da;
	unsigned need = RTE_MBUF_DEFAULT_DATAROOM;

	if (rte_eth_dev_info_get(port, &di))
		return need;
	if (di.driver_name && strstr(di.driver_name, "af_packet")) {
		const char *args, *p;
		unsigned fsz = AFP_DEFAULT_FRAMESZ;

		da = rte_dev_devargs(di.device);
		args = da ? da->args : NULL;
		p = args ? strstr(args, "framesz=") : NULL;
		if (p)
			fsz = (unsigned)strtoul(p + 8, NULL, 0);
		if (fsz > AFP_RX_OVERHEAD && fsz - AFP_RX_OVERHEAD > need)
			need = fsz - AFP_RX_OVERHEAD;
	} else if (di.max_rx_pktlen > need && di.max_rx_pktlen < 16384) {
		need = di.max_rx_pktlen;
	}
	return need;
}

static int make_pool(struct io *io, char *why, size_t len)
{
	unsigned room = data_room(io->port[0]), r1 = data_room(io->port[1]);
	double mib;

	if (r1 > room)
		room = r1;
	room += RTE_PKTMBUF_HEADROOM;
	if (room > UINT16_MAX) {
		snprintf(why, len, "ports' frames (%u bytes) do not fit an mbuf", room);
		return -EINVAL;
	}
	mib = (double)io->a->mbufs * (room + sizeof(struct rte_mbuf) + 64) / 1048576;
	io->pool = rte_pktmbuf_pool_create("wanem", io->a->mbufs, POOL_CACHE, 0,
					   (uint16_t)room, (int)rte_socket_id());
	if (!io->pool) {
		snprintf(why, len, "cannot allocate %u packet buffers of %u bytes "
			 "(about %.0f MiB) for the delay line: %s; give DPDK more "
			 "memory (more hugepages, or --no-huge -m %.0f) or lower "
			 "--mbufs, --rate or --delay", io->a->mbufs, room, mib,
			 rte_strerror(rte_errno), mib * 1.25 + 64);
		return -ENOMEM;
	}
	io->dir[WANEM_AB] = (struct io_dir){ io->port[1], io->pool };
	io->dir[WANEM_BA] = (struct io_dir){ io->port[0], io->pool };
	return 0;
}

static int port_start(uint16_t port, struct rte_mempool *pool, char *why,
		      size_t len)
{
	struct rte_eth_conf conf = { 0 };
	int rc;

	rc = rte_eth_dev_configure(port, 1, 1, &conf);
	if (!rc)
		rc = rte_eth_rx_queue_setup(port, 0, RING_DESC,
					    (unsigned)rte_eth_dev_socket_id(port),
					    NULL, pool);
	if (!rc)
		rc = rte_eth_tx_queue_setup(port, 0, RING_DESC,
					    (unsigned)rte_eth_dev_socket_id(port),
					    NULL);
	if (!rc)
		rc = rte_eth_dev_start(port);
	if (rc) {
		snprintf(why, len, "cannot start DPDK port %u: %s", port,
			 rte_strerror(rc < 0 ? -rc : rc));
		return rc < 0 ? rc : -rc;
	}
	/* frames are addressed to the hosts beyond, not to this port */
	rte_eth_promiscuous_enable(port);
	return 0;
}

static int find_ports(struct io *io, char *why, size_t len)
{
	uint16_t p, n = 0;

	RTE_ETH_FOREACH_DEV(p) {
		if (n < 2)
			io->port[n] = p;
		n++;
	}
	if (n < 2) {
		snprintf(why, len, "DPDK found %u port(s); ferry-wanem forwards "
			 "between two: e.g. --dpdk \"--vdev=net_af_packet0,iface=X "
			 "--vdev=net_af_packet1,iface=Y -l 0-1 --no-pci\"", n);
		return -ENODEV;
	}
	return 0;
}

static void report(struct io *io, const char *type, uint64_t now)
{
	struct wanem_report r = {
		.type = type,
		.seconds = (double)(now - io->t0) / 1e9,
		.attr = io->a,
		.have_ports = true,
		.stall_max_ns = io->stall_max_ns,
		.stalls_1ms = io->stalls_1ms,
		.rt_pauses = io->rt_pauses,
	};

	for (int i = 0; i < 2; i++) {
		struct rte_eth_stats s;

		r.dir[i] = *wanem_path_counters(io->path[i]);
		r.held[i] = wanem_path_held(io->path[i]);
		if (rte_eth_stats_get(io->port[i], &s) == 0)
			r.port[i] = (struct wanem_port_stats){
				s.ipackets, s.opackets, s.ibytes, s.obytes,
				s.imissed, s.ierrors, s.oerrors, s.rx_nombuf,
			};
	}
	if (io->a->json)
		wanem_report_json(stdout, &r);
	else
		wanem_report_text(!strcmp(type, "end") ? stdout : stderr, &r);
}

/* Receive a burst on port i into path i. Returns the frame count. */
static unsigned rx(struct io *io, int i, uint64_t now)
{
	struct rte_mbuf *m[BURST];
	uint16_t n = rte_eth_rx_burst(io->port[i], 0, m, BURST);

	for (uint16_t k = 0; k < n; k++) {
		struct wanem_pkt pkt;

		/* af_packet fills one segment (the pool's data room holds its
		 * ring frames); anything else must be made contiguous */
		if (m[k]->nb_segs > 1 && rte_pktmbuf_linearize(m[k])) {
			rte_pktmbuf_free(m[k]);
			continue;
		}
		pkt = (struct wanem_pkt){ m[k], rte_pktmbuf_mtod(m[k], uint8_t *),
					  rte_pktmbuf_data_len(m[k]) };
		wanem_path_rx(io->path[i], &pkt, now);
	}
	return n;
}

static uint64_t pause_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };

	nanosleep(&ts, NULL);
	return ns;
}

/* Nothing moved for a while: sleep until the next release, 20 us at most.
 * Returns the time asked for (0: none). */
static uint64_t idle(struct io *io, uint64_t now)
{
	uint64_t next = wanem_path_next_event(io->path[0]), n1;

	n1 = wanem_path_next_event(io->path[1]);
	if (n1 < next)
		next = n1;
	if (next <= now + 2000)
		return 0;
	return pause_ns(next - now < IDLE_SLEEP_NS ? next - now : IDLE_SLEEP_NS);
}

/* Whether this thread runs under a real-time policy that the kernel
 * throttles (sched_rt_runtime_us is not -1). */
static bool rt_limited(void)
{
	int pol = sched_getscheduler(0);
	FILE *f;
	long rt = -1;

	if (pol != SCHED_FIFO && pol != SCHED_RR)
		return false;
	f = fopen("/proc/sys/kernel/sched_rt_runtime_us", "r");
	if (f) {
		if (fscanf(f, "%ld", &rt) != 1)
			rt = 0;
		fclose(f);
	}
	return rt != -1;
}

static void loop(struct io *io, volatile sig_atomic_t *stop)
{
	uint64_t every = (uint64_t)(io->a->stats_interval * 1e9);
	uint64_t next_report = every ? io->t0 + every : UINT64_MAX;
	uint64_t last = io->t0, awake = io->t0, slept;
	unsigned quiet = 0;

	while (!*stop) {
		uint64_t now = now_ns();
		unsigned work = rx(io, 0, now) + rx(io, 1, now);

		/* the time between two turns, less any sleep asked for: the
		 * thread was descheduled, or busy in the kernel */
		if (now - last > io->stall_max_ns)
			io->stall_max_ns = now - last;
		io->stalls_1ms += now - last > 1000000;

		work += wanem_path_poll(io->path[0], now);
		work += wanem_path_poll(io->path[1], now);
		if (now >= next_report) {
			report(io, "interval", now);
			next_report += every;
		}
		slept = 0;
		if (work)
			quiet = 0;
		else if (++quiet > IDLE_SPINS && !io->a->busy_poll)
			slept = idle(io, now);
		if (!slept && io->rt && now - awake > RT_BUSY_NS) {
			slept = pause_ns(RT_PAUSE_NS);
			io->rt_pauses++;
		}
		if (slept)
			awake = now + slept;
		last = now + slept;
	}
}

int wanem_dpdk_run(const struct wanem_attr *a, volatile sig_atomic_t *stop,
		   char *why, size_t len)
{
	struct io io = { .a = a };
	int rc;

	rc = eal_start(a->dpdk, why, len);
	if (rc)
		return rc;
	rc = find_ports(&io, why, len);
	if (!rc)
		rc = make_pool(&io, why, len);
	for (int i = 0; !rc && i < 2; i++)
		rc = port_start(io.port[i], io.pool, why, len);
	for (int i = 0; !rc && i < 2; i++) {
		rc = wanem_path_create(&a->dir[i], &mbuf_ops, &io.dir[i], &io.path[i]);
		if (rc)
			snprintf(why, len, "cannot set up the emulation: %s",
				 strerror(-rc));
	}
	if (rc)
		goto out;
	/* sleeps of a few microseconds, not the default 50 us of slack */
	prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
	io.rt = rt_limited();
	io.t0 = now_ns();
	/* for whoever waits to send through it (bench/lib/wan.sh) */
	fprintf(stderr, "ferry-wanem: forwarding\n");
	loop(&io, stop);
	for (int i = 0; i < 2; i++)
		wanem_path_flush(io.path[i]);
	report(&io, "end", now_ns());
out:
	for (int i = 0; i < 2; i++)
		wanem_path_destroy(io.path[i]);
	for (int i = 0; io.pool && i < 2; i++) {
		rte_eth_dev_stop(io.port[i]);
		rte_eth_dev_close(io.port[i]);
	}
	rte_mempool_free(io.pool);
	rte_eal_cleanup();
	return rc;
}
