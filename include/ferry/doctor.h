/* ferry doctor: is this host ready for bulk transfer?
 *
 * Reads ROOT/sys and ROOT/proc only (ROOT is "/" on a real host; tests give
 * a fake tree) and returns one result per check: RDMA devices and ports,
 * the NICs' link, MTU, NUMA node, PCIe link and IRQ placement, hugepages,
 * RLIMIT_MEMLOCK, the TCP sysctls against the bandwidth-delay product, and
 * the CPU frequency governor. Each result carries the value seen and, unless
 * it passed, the command that fixes it. Nothing is changed on the host.
 *
 * What FAIL means: ferry cannot work at all on what was asked for, so a
 * transfer would fail, not just be slow:
 *  - --netdev names a netdev or RDMA device that does not exist;
 *  - the named netdev is down, or the RDMA device named (or riding on the
 *    named netdev) has no ACTIVE port, or a port of it has no GID at all
 *    (RoCE: the netdev has no IP address, so neither RoCE nor TCP can use
 *    it; InfiniBand: no subnet manager);
 *  - RLIMIT_MEMLOCK is below 64 MiB (FERRY_DOCTOR_MEMLOCK_FAIL) without
 *    CAP_IPC_LOCK while an RDMA device is checked: verbs cannot register
 *    even a small ring. With no RDMA device checked it is a WARN (tcp pins
 *    nothing).
 * Without --netdev, a port down or without GIDs is a WARN: another NIC may
 * carry the transfer. No RDMA device at all is a WARN (uroce or tcp).
 * Everything that only costs speed is WARN; facts with nothing to fix, or
 * that cannot be read here (virtual machines), are INFO.
 */
#ifndef FERRY_DOCTOR_H
#define FERRY_DOCTOR_H

#include <stddef.h>

/* Defaults of ferry_doctor_attr: a coast-to-coast path (STUDIES.md A: 50 ms
 * US, 120 ms transatlantic); the rate defaults to the fastest checked NIC's
 * port speed, else 10 Gb/s. */
#define FERRY_DOCTOR_DEFAULT_RTT_MS 100.0
#define FERRY_DOCTOR_DEFAULT_RATE_GBPS 10.0

/* The memory ferry pins by default: receive ring + send buffers, 2 x 256
 * MiB (64 slots of 4 MiB chunks each). */
#define FERRY_DOCTOR_POOL_BYTES (512ull << 20)
#define FERRY_DOCTOR_MEMLOCK_FAIL (64ull << 20)
/* The hard limit on open files a data-transfer node wants: 64 sessions
 * each with its full set of open targets, streams and sockets. */
#define FERRY_DOCTOR_NOFILE 65536u

/* Room for every check of a large host; ferry_doctor_run says when more
 * would have followed. */
#define FERRY_DOCTOR_MAX_CHECKS 512

struct ferry_doctor_attr {
	const char *root;  /* host root holding sys/ and proc/; NULL = "/" */
	double rtt_ms;     /* path round-trip time; <= 0: the default */
	double rate_gbps;  /* target rate; <= 0: the default */
	const char *netdev; /* check only this netdev or RDMA device; NULL:
			     * every netdev with a device link (not virtual)
			     * and every RDMA device */
};

enum ferry_check_status {
	FERRY_CHECK_PASS,
	FERRY_CHECK_WARN,
	FERRY_CHECK_FAIL,
	FERRY_CHECK_INFO,
};

struct ferry_check {
	char name[48];      /* "eth0 pcie", "net.core.rmem_max", ... */
	enum ferry_check_status status;
	char value[160];    /* what was seen, in words */
	char fix[256];      /* how to fix it; "" when nothing to do */
};

/* Run every check, writing results into out[0..max) in a fixed order and
 * their count into *n. Returns 0; -ENOSPC when more than max results were
 * due (out holds the first max, *n = max); -EINVAL for a NULL argument or a
 * netdev name that is not one (empty, '/', too long); -ENOENT when root has
 * neither sys/ nor proc/. A missing --netdev is a FAIL result, not an
 * error. */
int ferry_doctor_run(const struct ferry_doctor_attr *a, struct ferry_check *out,
		     size_t max, size_t *n);

/* "pass", "warn", "fail" or "info"; "?" for anything else. */
const char *ferry_check_status_name(enum ferry_check_status s);

#endif
