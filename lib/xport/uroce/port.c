/* uroce: the process's DPDK port. Starts the EAL once (arguments from
 * --dpdk or FERRY_DPDK), sets up the first ethdev port with one rx and one tx queue,
 * and works out what it can carry. The one place DPDK results (-1 and
 * rte_errno, or negative errno) become ferry's -errno. */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/ethtool.h>
#include <linux/filter.h>
#include <linux/if_packet.h>
#include <linux/sockios.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_devargs.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_log.h>
#include <rte_mbuf.h>

#include "ferry/args.h"
#include "util/util.h"
#include "ferry/xport.h"
#include "xport/uroce/port.h"
#include "xport/roce/wire.h"

#define MAX_ARGS 64
#define RX_POOL 2047
#define TX_POOL 2047
#define POOL_CACHE 128
#define RING_DESC 1024
/* af_packet TPACKET_V2: a tx frame carries framesz - 32 bytes; received
 * data starts 66 bytes into a frame (80 - 14 of Ethernet header) */
#define AFP_TX_OVERHEAD 32
#define AFP_RX_OVERHEAD 80
#define AFP_DEFAULT_FRAMESZ 2048
#define AFP_DEFAULT_FRAMECNT 512

static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ferry__uport the_port = { .absorb_fd = -1, .rx_fd = -1,
					.post_fd = -1, .wake_fd = -1,
					.raw_fd = -1 };
static bool init_done;
static int init_err;
static char init_why[320];
static char dpdk_said[256]; /* last error DPDK logged during start */

/* DPDK's log goes to ferry's logger: DEBUG, or WARN for its errors; the
 * last error line is kept for the reason when the start fails. */
static ssize_t log_write(void *cookie, const char *buf, size_t len)
{
	uint32_t lvl = rte_log_cur_msg_loglevel();
	char line[256];
	size_t n = len < sizeof(line) - 1 ? len : sizeof(line) - 1;

	(void)cookie;
	memcpy(line, buf, n);
	while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
		n--;
	line[n] = 0;
	if (!n)
		return (ssize_t)len;
	if (lvl <= RTE_LOG_ERR) {
		snprintf(dpdk_said, sizeof(dpdk_said), "%s", line);
		ferry__log(FERRY_LOG_WARN, "uroce: DPDK: %s", line);
	} else {
		ferry__log(FERRY_LOG_DEBUG, "uroce: DPDK: %s", line);
	}
	return (ssize_t)len;
}

static bool has_arg(char **argv, int argc, const char *name)
{
	size_t n = strlen(name);

	for (int i = 1; i < argc; i++)
		if (strncmp(argv[i], name, n) == 0 &&
		    (argv[i][n] == 0 || argv[i][n] == '='))
			return true;
	return false;
}

/* EAL arguments: the settings' (--dpdk, FERRY_DPDK), plus what ferry
 * needs unless given there: one lcore on a CPU this thread may use (ferry
 * runs its own polling thread), --in-memory (no files under /var/run/dpdk, so any number of ferry
 * processes can run side by side; --no-shconf with --no-huge), and --no-pci when only virtual devices
 * are named (no probing of the host's own NICs). The strings live for the
 * process. */
static int eal_args(const struct ferry_uroce_conf *c, char ***out, char *why,
		    size_t whylen)
{
	static char *argv[MAX_ARGS + 9];
	static char lcore[16];
	char *copy = strdup(c->eal ? c->eal : "");
	cpu_set_t cs;
	int argc = 0;

	if (!copy)
		return -ENOMEM;
	argv[argc++] = "ferry";
	argc = ferry_split_args(copy, argv, MAX_ARGS, argc);
	if (argc < 0) {
		ferry__why(why, whylen,
			   "uroce: the DPDK arguments (--dpdk, FERRY_DPDK) have more than %d words",
			   MAX_ARGS);
		return argc;
	}
	if (!has_arg(argv, argc, "-l") && !has_arg(argv, argc, "-c") &&
	    !has_arg(argv, argc, "--lcores")) {
		int cpu = 0;

		if (sched_getaffinity(0, sizeof(cs), &cs) == 0)
			while (cpu < CPU_SETSIZE - 1 && !CPU_ISSET(cpu, &cs))
				cpu++;
		snprintf(lcore, sizeof(lcore), "%d", cpu);
		argv[argc++] = "-l";
		argv[argc++] = lcore;
	}
	/* --in-memory unlinks hugepage files, which the EAL refuses
	 * together with --no-huge: there --no-shconf alone does it */
	if (!has_arg(argv, argc, "--file-prefix") &&
	    !has_arg(argv, argc, "--in-memory") &&
	    !has_arg(argv, argc, "--no-shconf")) {
		bool no_huge = has_arg(argv, argc, "--no-huge");
		argv[argc++] = no_huge ? "--no-shconf" : "--in-memory";
	}
	/* no telemetry socket under /var/run/dpdk (a process killed -9
	 * would leave it behind) unless asked for */
	if (!has_arg(argv, argc, "--telemetry") &&
	    !has_arg(argv, argc, "--no-telemetry"))
		argv[argc++] = "--no-telemetry";
	/* a virtual device alone: leave the host's PCI NICs alone */
	if (has_arg(argv, argc, "--vdev") && !has_arg(argv, argc, "-a") &&
	    !has_arg(argv, argc, "--allow") && !has_arg(argv, argc, "-b") &&
	    !has_arg(argv, argc, "--block") && !has_arg(argv, argc, "--no-pci"))
		argv[argc++] = "--no-pci";
	argv[argc] = NULL;
	*out = argv;
	return argc;
}

static int eal_start(const struct ferry_uroce_conf *c, char *why,
		     size_t whylen)
{
	static char line[512];
	cpu_set_t cs;
	bool have_cs;
	char **argv;
	int argc, rc;
	FILE *logf;

	argc = eal_args(c, &argv, why, whylen);
	if (argc < 0)
		return argc;
	line[0] = 0;
	for (int i = 1; i < argc; i++) {
		size_t n = strlen(line);
		snprintf(line + n, sizeof(line) - n, "%s%s", i > 1 ? " " : "",
			 argv[i]);
	}
	ferry__log(FERRY_LOG_INFO, "uroce: starting the DPDK EAL: %s", line);
	logf = fopencookie(NULL, "w", (cookie_io_functions_t){ .write = log_write });
	if (logf) {
		setvbuf(logf, NULL, _IOLBF, 0);
		rte_openlog_stream(logf);
	}
	/* the EAL pins this thread to its main lcore: undo that, so threads
	 * made later (workers, the poller) do not all inherit one CPU */
	have_cs = pthread_getaffinity_np(pthread_self(), sizeof(cs), &cs) == 0;
	rc = rte_eal_init(argc, argv);
	if (have_cs)
		pthread_setaffinity_np(pthread_self(), sizeof(cs), &cs);
	if (rc < 0) {
		rc = rte_errno > 0 ? -rte_errno : -EINVAL;
		ferry__why(why, whylen,
			   "uroce: DPDK EAL did not start (%s): %s; EAL args: %s "
			   "(see docs/uroce.md: hugepages, or --no-huge -m 512)",
			   rte_strerror(-rc), dpdk_said[0] ? dpdk_said : "no detail",
			   line);
		return rc;
	}
	return 0;
}

/* "key=value" from a device argument string; def when absent. */
static unsigned devarg(const char *args, const char *key, unsigned def)
{
	size_t n = strlen(key);

	for (const char *p = args; p && *p; p = strchr(p, ',')) {
		if (*p == ',')
			p++;
		if (strncmp(p, key, n) == 0 && p[n] == '=')
			return (unsigned)strtoul(p + n + 1, NULL, 0);
	}
	return def;
}

static int kernel_mtu(const char *ifname)
{
	struct ifreq ifr = { 0 };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), mtu = -1;

	if (fd < 0)
		return -1;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(fd, SIOCGIFMTU, &ifr) == 0)
		mtu = ifr.ifr_mtu;
	close(fd);
	return mtu;
}

/* Whether the kernel interface is one end of a veth pair (its driver, as
 * ethtool -i reports it). */
static bool is_veth(const char *ifname)
{
	struct ethtool_drvinfo di = { .cmd = ETHTOOL_GDRVINFO };
	struct ifreq ifr = { 0 };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	bool veth = false;

	if (fd < 0)
		return false;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_data = (void *)&di;
	if (ioctl(fd, SIOCETHTOOL, &ifr) == 0)
		veth = strcmp(di.driver, "veth") == 0;
	close(fd);
	return veth;
}

/* An af_packet port shares its interface with the kernel, which gets a
 * copy of every frame uroce receives. A frame to the interface's own
 * address climbs the kernel's IP and UDP layers before the absorbing
 * socket drops it: about a fifth of the sending process's CPU on a veth
 * pair, where the sender's transmit call also runs the peer's receive
 * (perf record -g on both ends of a bench, docs/uroce.md). A frame to
 * another address is dropped by IP's first check (PACKET_OTHERHOST).
 * So, on a veth, which delivers every frame whatever its destination,
 * uroce takes an address of its own, as a NIC's virtual function does:
 * the interface's, locally administered, with the low bit of its last
 * byte flipped. The peer learns it in the session's description and
 * sends to it; a verbs peer, which resolves the address through ARP,
 * still sends to the interface's, and uroce takes those frames too. A
 * real NIC filters by destination, so elsewhere the interface's address
 * stays. */
static void own_mac(struct ferry__uport *pt, const char *drv,
		    const struct ferry_uroce_conf *c)
{
	if (c->kernel_mac || strcmp(drv, "net_af_packet") || !pt->ifname[0] ||
	    !is_veth(pt->ifname))
		return;
	pt->addr.mac[0] = (uint8_t)((pt->addr.mac[0] | 0x02) & ~0x01);
	pt->addr.mac[5] ^= 0x01;
	pt->own_mac = true;
}

/* The largest IB MTU whose biggest frame fits frame_max bytes. */
static uint32_t ib_mtu_for(unsigned frame_max)
{
	for (uint32_t m = 4096; m >= 256; m >>= 1)
		if (m + FERRY_ROCE_HDR_MAX + FERRY_ROCE_TRAILER_MAX <= frame_max)
			return m;
	return 0;
}

/* What the port carries: frame sizes, MTU, ring size; fills pt. Returns
 * the rx mbuf data size the PMD needs. */
static unsigned port_geometry(struct ferry__uport *pt,
			      const struct rte_eth_dev_info *di,
			      const struct ferry_uroce_conf *c)
{
	const struct rte_devargs *da = rte_dev_devargs(di->device);
	const char *drv = di->driver_name ? di->driver_name : "";
	const char *args = da ? da->args : NULL;
	unsigned frame_max = di->max_rx_pktlen, rx_data = frame_max;
	uint16_t mtu = 0;
	int kmtu = -1;

	if (di->if_index && if_indextoname(di->if_index, pt->ifname))
		kmtu = kernel_mtu(pt->ifname);
	else
		pt->ifname[0] = 0;
	pt->rx_frames = RING_DESC;
	if (strstr(drv, "af_packet")) {
		/* this PMD reports 1518 as its limit, yet carries what its
		 * ring frames and the interface MTU allow */
		unsigned fsz = devarg(args, "framesz", AFP_DEFAULT_FRAMESZ);

		pt->rx_frames = devarg(args, "framecnt", AFP_DEFAULT_FRAMECNT);
		frame_max = fsz > AFP_RX_OVERHEAD ? fsz - AFP_RX_OVERHEAD : 0;
		rx_data = fsz > AFP_TX_OVERHEAD ? fsz - AFP_TX_OVERHEAD : 0;
	} else if (rte_eth_dev_get_mtu(pt->port_id, &mtu) == 0 && mtu &&
		   (unsigned)mtu + 14 < frame_max) {
		frame_max = (unsigned)mtu + 14;
	}
	if (kmtu > 0 && (unsigned)kmtu + 14 < frame_max)
		frame_max = (unsigned)kmtu + 14;
	pt->max_mtu = ib_mtu_for(frame_max);
	if (c->mtu) {
		uint32_t m = ib_mtu_for(c->mtu + FERRY_ROCE_HDR_MAX +
					FERRY_ROCE_TRAILER_MAX);
		if (m && m < pt->max_mtu)
			pt->max_mtu = m;
	}
	snprintf(pt->desc, sizeof(pt->desc),
		 "port %u (%s%s%s), frames up to %u bytes, path MTU up to %u, "
		 "%u-frame rx ring,",
		 pt->port_id, drv, pt->ifname[0] ? " on " : "", pt->ifname,
		 frame_max, pt->max_mtu, pt->rx_frames);
	return rx_data > frame_max ? rx_data : frame_max;
}

static int make_pools(struct ferry__uport *pt, unsigned rx_data, int socket,
		      char *why, size_t whylen)
{
	unsigned tx_data = pt->max_mtu + FERRY_ROCE_HDR_MAX +
			   FERRY_ROCE_TRAILER_MAX;

	if (rx_data + RTE_PKTMBUF_HEADROOM > UINT16_MAX) {
		ferry__why(why, whylen,
			   "uroce: the port's frames (%u bytes) do not fit an "
			   "mbuf: use framesz=16384 or less", rx_data);
		return -EINVAL;
	}
	pt->rx_pool = rte_pktmbuf_pool_create("ferry_rx", RX_POOL, POOL_CACHE, 0,
					      (uint16_t)(rx_data +
							 RTE_PKTMBUF_HEADROOM),
					      socket);
	pt->tx_pool = rte_pktmbuf_pool_create("ferry_tx", TX_POOL, POOL_CACHE, 0,
					      (uint16_t)(tx_data +
							 RTE_PKTMBUF_HEADROOM),
					      socket);
	if (!pt->rx_pool || !pt->tx_pool) {
		ferry__why(why, whylen,
			   "uroce: cannot make mbuf pools (%u + %u mbufs of "
			   "%u and %u bytes): %s; give the EAL more memory "
			   "(hugepages, or -m with --no-huge)",
			   RX_POOL, TX_POOL, rx_data, tx_data,
			   rte_strerror(rte_errno));
		return -ENOMEM;
	}
	return 0;
}

static void shinfo_free(void *addr, void *opaque)
{
	(void)addr;
	(void)opaque; /* the region belongs to the session, not to DPDK */
}

/* Zero-copy transmit, where the PMD copies frames itself (af_packet): a
 * header mbuf, an mbuf attached to the payload in the registered region,
 * a trailer mbuf. FERRY_UROCE_TX=copy turns it off. */
static void make_zc_pools(struct ferry__uport *pt, const char *drv,
			  int socket, const struct ferry_uroce_conf *c)
{
	static struct rte_mbuf_ext_shared_info shinfo;

	if (!strstr(drv, "af_packet") || c->tx_copy)
		return;
	pt->hdr_pool = rte_pktmbuf_pool_create("ferry_hdr", 2 * TX_POOL + 1,
					       POOL_CACHE, 0,
					       RTE_PKTMBUF_HEADROOM + 128, socket);
	pt->ext_pool = rte_pktmbuf_pool_create("ferry_ext", TX_POOL, POOL_CACHE,
					       0, 0, socket);
	if (!pt->hdr_pool || !pt->ext_pool) {
		rte_mempool_free(pt->hdr_pool);
		rte_mempool_free(pt->ext_pool);
		pt->hdr_pool = pt->ext_pool = NULL;
		ferry__log(FERRY_LOG_WARN, "uroce: no memory for zero-copy "
					   "transmit: copying frames");
		return;
	}
	shinfo.free_cb = shinfo_free;
	rte_mbuf_ext_refcnt_set(&shinfo, 1); /* ours; +1 per attached mbuf */
	pt->shinfo = &shinfo;
}

static int port_start(struct ferry__uport *pt, const struct ferry_uroce_conf *c,
		      char *why, size_t whylen)
{
	struct rte_eth_conf conf = { 0 };
	struct rte_eth_dev_info di;
	struct rte_ether_addr mac;
	uint16_t pid = RTE_MAX_ETHPORTS, p;
	int socket, rc;

	RTE_ETH_FOREACH_DEV(p) {
		pid = p;
		break;
	}
	if (pid == RTE_MAX_ETHPORTS) {
		ferry__why(why, whylen,
			   "uroce: DPDK found no port: add one to --dpdk (FERRY_DPDK), "
			   "e.g. --vdev=net_af_packet0,iface=eth1");
		return -ENODEV;
	}
	pt->port_id = pid;
	rc = rte_eth_dev_info_get(pid, &di);
	if (rc)
		goto fail;
	unsigned rx_data = port_geometry(pt, &di, c);
	if (!pt->max_mtu) {
		ferry__why(why, whylen,
			   "uroce: %s: too small for a 256-byte path MTU "
			   "(af_packet: framesz=16384 and an interface MTU "
			   "of 9000 carry 4096)", pt->desc);
		return -EINVAL;
	}
	socket = rte_eth_dev_socket_id(pid);
	if (socket < 0)
		socket = (int)rte_socket_id();
	rc = make_pools(pt, rx_data, socket, why, whylen);
	if (rc)
		return rc;
	make_zc_pools(pt, di.driver_name ? di.driver_name : "", socket, c);
	rc = rte_eth_dev_configure(pid, 1, 1, &conf);
	if (!rc)
		rc = rte_eth_rx_queue_setup(pid, 0, RING_DESC, (unsigned)socket,
					    NULL, pt->rx_pool);
	if (!rc)
		rc = rte_eth_tx_queue_setup(pid, 0, RING_DESC, (unsigned)socket,
					    NULL);
	if (!rc)
		rc = rte_eth_dev_start(pid);
	if (!rc)
		rc = rte_eth_macaddr_get(pid, &mac);
	if (rc)
		goto fail;
	memcpy(pt->addr.mac, mac.addr_bytes, 6);
	own_mac(pt, di.driver_name ? di.driver_name : "", c);
	return 0;
fail:
	ferry__why(why, whylen, "uroce: cannot set up DPDK port %u: %s%s%s", pid,
		   rte_strerror(rc < 0 ? -rc : rc), dpdk_said[0] ? "; " : "",
		   dpdk_said);
	return rc < 0 ? rc : -rc;
}

/* This end's IPv4: the settings' (--uroce-ip, FERRY_UROCE_IP), else the
 * kernel interface's. */
static int port_ip(struct ferry__uport *pt, const struct ferry_uroce_conf *c,
		   char *why, size_t whylen)
{
	struct ifaddrs *ifa, *i;
	struct in_addr a;

	if (c->ip && *c->ip) {
		if (inet_pton(AF_INET, c->ip, &a) != 1) {
			ferry__why(why, whylen,
				   "uroce: the address '%s' (--uroce-ip, "
				   "FERRY_UROCE_IP) is not an IPv4 address",
				   c->ip);
			return -EINVAL;
		}
		pt->addr.ip = ntohl(a.s_addr);
		return 0;
	}
	if (pt->ifname[0] && getifaddrs(&ifa) == 0) {
		for (i = ifa; i; i = i->ifa_next)
			if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET &&
			    strcmp(i->ifa_name, pt->ifname) == 0) {
				pt->addr.ip = ntohl(((struct sockaddr_in *)
							     i->ifa_addr)
							    ->sin_addr.s_addr);
				break;
			}
		freeifaddrs(ifa);
		if (pt->addr.ip)
			return 0;
	}
	ferry__why(why, whylen,
		   "uroce: %s has no IPv4 address to put in the frames: give "
		   "--uroce-ip or set FERRY_UROCE_IP", pt->ifname[0] ? pt->ifname : "the port");
	return -EADDRNOTAVAIL;
}

/* The kernel sees every frame the port carries. Frames to an address it
 * owns, on UDP 4791 with no socket there, would draw ICMP port unreachable
 * replies: a bound socket with the smallest buffer takes them (and drops
 * them) instead. An address the kernel does not own needs nothing. */
static void absorb(struct ferry__uport *pt)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons(FERRY_ROCE_UDP_PORT),
				  .sin_addr.s_addr = htonl(pt->addr.ip) };
	int one = 1, small = 1;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
		pt->absorb_fd = fd;
		ferry__log(FERRY_LOG_INFO,
			   "uroce: bound UDP %u on %s's address so the kernel "
			   "drops its copy of our frames quietly",
			   FERRY_ROCE_UDP_PORT, pt->ifname);
		return;
	}
	if (errno == EADDRNOTAVAIL)
		ferry__log(FERRY_LOG_INFO,
			   "uroce: the kernel does not own this end's address: "
			   "it drops our frames without replying");
	else
		ferry__log(FERRY_LOG_WARN,
			   "uroce: cannot bind UDP %u (%s): the kernel may "
			   "answer our frames with ICMP port unreachable",
			   FERRY_ROCE_UDP_PORT, strerror(errno));
	close(fd);
}

/* What an event wait sleeps on. DPDK 22.11's af_packet PMD offers no
 * receive interrupt, but its receive queue starts with the socket whose
 * mmap'ed ring it reads (struct pkt_rx_queue in
 * drivers/net/af_packet/rte_eth_af_packet.c, unchanged since the PMD
 * came in 2014), and that socket's poll() says whether the ring holds a
 * frame. The descriptor is used only if it proves to be an AF_PACKET
 * socket bound to the port's interface. Other PMDs: none (event waits
 * then sleep in short spells). rx_fd is set last, once post_fd and
 * wake_fd exist too: rx_fd >= 0 says that event waits can sleep. */
static void event_fds(struct ferry__uport *pt, const char *drv)
{
	struct sockaddr_ll sll;
	socklen_t len = sizeof(sll), flen = sizeof(int);
	int fam = 0, fd;
	void *q;

	if (strcmp(drv, "net_af_packet") || !pt->ifname[0] ||
	    !rte_eth_fp_ops[pt->port_id].rxq.data ||
	    !(q = rte_eth_fp_ops[pt->port_id].rxq.data[0]))
		return;
	fd = *(const int *)q;
	if (fd < 0 ||
	    getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &fam, &flen) < 0 ||
	    fam != AF_PACKET ||
	    getsockname(fd, (struct sockaddr *)&sll, &len) < 0 ||
	    sll.sll_family != AF_PACKET ||
	    sll.sll_ifindex != (int)if_nametoindex(pt->ifname))
		return;
	pt->post_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	pt->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (pt->post_fd >= 0 && pt->wake_fd >= 0) {
		pt->rx_fd = fd;
		return;
	}
	if (pt->post_fd >= 0)
		close(pt->post_fd);
	if (pt->wake_fd >= 0)
		close(pt->wake_fd);
	pt->post_fd = pt->wake_fd = -1;
}

/* Drop, in the kernel, every outgoing frame the PMD's socket would be
 * handed where the device's taps see them (qdisc_bypass=0), before their
 * copy into its ring. PACKET_IGNORE_OUTGOING cannot do it: DPDK's
 * af_packet PMD puts its socket in a fanout group (its queues share
 * frames by hash), and for a socket in a group the kernel registers the
 * group's hook, not the socket's, so the option changes nothing (the
 * group's own flag, PACKET_FANOUT_FLAG_IGNORE_OUTGOING of Linux 6.2, is
 * the PMD's to set, and it does not). The socket's filter still runs for
 * what the group hands it: a classic BPF program that refuses
 * PACKET_OUTGOING. 0, or -1 with errno. */
static int drop_outgoing(int fd)
{
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_B | BPF_ABS, SKF_AD_OFF + SKF_AD_PKTTYPE),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PACKET_OUTGOING, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, 0),
		BPF_STMT(BPF_RET | BPF_K, 0xffffffffu),
	};
	struct sock_fprog prog = { .len = sizeof(code) / sizeof(code[0]),
				   .filter = code };

	return setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog,
			  sizeof(prog));
}

/* Transmit on a socket of uroce's own, where the port is af_packet and
 * its socket was found (event_fds). Through the PMD a frame is copied
 * from its mbufs into the PMD's mmap'ed transmit ring, a sendto() kicks
 * the ring, and the kernel walks it, building an skb over the ring's
 * pages and handing each slot back when the skb is freed. sendmmsg from
 * the mbufs where they lie has the kernel copy each frame once into an
 * skb of its own, a burst per call, with no slots to walk or return:
 * about 5% fewer cycles per byte in bench/uroce_ceiling.sh
 * (docs/benchmarks.md). The PMD's socket is given a filter that drops
 * outgoing frames (drop_outgoing), or it would receive a copy of every
 * frame this socket sends where the device's taps see them; where that
 * fails, the PMD transmits.
 * The socket is bound with protocol 0, so it receives nothing, and
 * bypasses the qdisc as the PMD does unless its qdisc_bypass=0 says
 * otherwise. FERRY_UROCE_TX=ring keeps the PMD's ring. */
static void raw_tx(struct ferry__uport *pt, const struct rte_eth_dev_info *di,
		   const struct ferry_uroce_conf *c)
{
	const struct rte_devargs *da = rte_dev_devargs(di->device);
	struct sockaddr_ll sll = { .sll_family = AF_PACKET };
	int one = 1, bypass, buf = 4 << 20;
	int fd;

	if (c->tx_ring || pt->rx_fd < 0)
		return;
	sll.sll_ifindex = (int)if_nametoindex(pt->ifname);
	bypass = (int)devarg(da ? da->args : NULL, "qdisc_bypass", 1);
	fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || !sll.sll_ifindex ||
	    bind(fd, (struct sockaddr *)&sll, sizeof(sll)) < 0 ||
	    (bypass && setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one,
				  sizeof(one)) < 0) ||
	    drop_outgoing(pt->rx_fd) < 0) {
		ferry__log(FERRY_LOG_DEBUG, "uroce: the PMD transmits (a "
			   "socket of our own on %s: %s)", pt->ifname,
			   strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	/* room for a few bursts of the largest frames in the kernel */
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &buf, sizeof(buf)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
	/* each message's iovecs once: a burst fills in only their count */
	memset(pt->txm, 0, sizeof(pt->txm));
	for (unsigned i = 0; i < FERRY__UPORT_TXB; i++)
		pt->txm[i].msg_hdr.msg_iov = pt->txv[i];
	pt->raw_fd = fd;
}

static const char *tx_mode(const struct ferry__uport *pt)
{
	if (pt->raw_fd >= 0)
		return pt->hdr_pool ? "zero-copy sendmmsg" : "sendmmsg";
	return pt->hdr_pool ? "zero-copy" : "copying";
}

static int start(struct ferry__uport *pt, const struct ferry_uroce_conf *c,
		 char *why, size_t whylen)
{
	int rc = eal_start(c, why, whylen);

	if (!rc)
		rc = port_start(pt, c, why, whylen);
	if (!rc)
		rc = port_ip(pt, c, why, whylen);
	if (rc)
		return rc;
	absorb(pt);
	struct rte_eth_dev_info di;
	if (rte_eth_dev_info_get(pt->port_id, &di) == 0) {
		event_fds(pt, di.driver_name ? di.driver_name : "");
		raw_tx(pt, &di, c);
	}
	ferry__log(FERRY_LOG_DEBUG, "uroce: --poll event sleeps %s",
		   pt->rx_fd >= 0 ? "on the af_packet socket's ring" :
		   "in short spells (the port offers nothing to wait on)");
	pthread_mutex_init(&pt->lock, NULL);
	atomic_init(&pt->live, &pt->lists[0]);
	char ip[INET_ADDRSTRLEN];
	struct in_addr a = { .s_addr = htonl(pt->addr.ip) };
	inet_ntop(AF_INET, &a, ip, sizeof(ip));
	ferry__log(FERRY_LOG_INFO,
		   "uroce: %s %s transmit; MAC %02x:%02x:%02x:%02x:%02x:%02x%s, "
		   "IPv4 %s", pt->desc, tx_mode(pt),
		   pt->addr.mac[0], pt->addr.mac[1], pt->addr.mac[2],
		   pt->addr.mac[3], pt->addr.mac[4], pt->addr.mac[5],
		   pt->own_mac ? " (uroce's own; FERRY_UROCE_MAC=kernel for "
				 "the interface's)" : "", ip);
	return 0;
}

int ferry__uport_get(const struct ferry_uroce_conf *c,
		     struct ferry__uport **out, char *why, size_t whylen)
{
	pthread_mutex_lock(&init_lock);
	if (!init_done) {
		init_err = start(&the_port, c, init_why, sizeof(init_why));
		init_done = true;
	}
	pthread_mutex_unlock(&init_lock);
	if (init_err) {
		ferry__why(why, whylen, "%s", init_why);
		return init_err;
	}
	*out = &the_port;
	return 0;
}

bool ferry__uport_failed(char *why, size_t whylen)
{
	bool failed;

	pthread_mutex_lock(&init_lock);
	failed = init_done && init_err;
	if (failed)
		ferry__why(why, whylen, "%s", init_why);
	pthread_mutex_unlock(&init_lock);
	return failed;
}

int ferry__uport_tag_alloc(struct ferry__uport *pt, uint32_t *tag)
{
	const uint32_t n = 1u << FERRY__UROCE_TAG_BITS;
	uint32_t t;
	int err;

	err = ferry__random(&t, sizeof(t));
	if (err)
		return err;
	pthread_mutex_lock(&pt->lock);
	err = -EBUSY;
	for (uint32_t k = 0; k < n; k++, t++) {
		uint32_t c = t % n;
		if (c && !(pt->tags[c / 8] & (1u << (c % 8)))) {
			pt->tags[c / 8] |= (uint8_t)(1u << (c % 8));
			*tag = c;
			err = 0;
			break;
		}
	}
	pthread_mutex_unlock(&pt->lock);
	return err;
}

void ferry__uport_tag_free(struct ferry__uport *pt, uint32_t tag)
{
	pthread_mutex_lock(&pt->lock);
	pt->tags[tag / 8] &= (uint8_t)~(1u << (tag % 8));
	pthread_mutex_unlock(&pt->lock);
}
