/* Internal to lib/doctor: the run's state and the helpers every check uses. */
#ifndef FERRY_DOCTOR_INT_H
#define FERRY_DOCTOR_INT_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ferry/doctor.h"
#include "ferry/xport.h" /* FERRY_XPORT_NEEDS_* */
#include "util/util.h"

#define FERRY__DOCTOR_NAME 64     /* a directory entry we care about */
#define FERRY__DOCTOR_MAX_NICS 64
#define FERRY__DOCTOR_MAX_IB 32
#define FERRY__DOCTOR_IFNAMSIZ 16
/* TCP's largest window (scale 14): no socket buffers more than this. */
#define FERRY__DOCTOR_TCP_MAX_WIN (1ull << 30)

struct ferry__doctor {
	char root[PATH_MAX];  /* "" for "/", else without a trailing '/' */
	char sys[PATH_MAX + 8]; /* root + "/sys", for lib/topo */
	const char *netdev;   /* the user's --netdev, or NULL */
	char nics[FERRY__DOCTOR_MAX_NICS][FERRY__DOCTOR_IFNAMSIZ];
	size_t nnics;
	char ibdevs[FERRY__DOCTOR_MAX_IB][FERRY__DOCTOR_NAME];
	size_t nib;
	bool any_ib;          /* the host has an RDMA device at all */
	bool missing;         /* netdev names nothing on this host */
	double rtt_ms, rate_gbps;
	uint64_t bdp;         /* bytes in flight for rate x rtt */
	struct ferry_check *out;
	size_t max, n;
	bool overflow;
	struct ferry_check spare; /* written to once out is full */
};

/* The results list (doctor_report.c).
 * Append a result named by fmt; returns it for value and fix. Never NULL:
 * once out is full it returns a scratch entry and notes the overflow. */
struct ferry_check *ferry__doctor_add(struct ferry__doctor *d,
				      enum ferry_check_status st,
				      const char *fmt, ...) FERRY__PRINTF(3, 4);
void ferry__doctor_value(struct ferry_check *c, const char *fmt, ...)
	FERRY__PRINTF(2, 3);
void ferry__doctor_fix(struct ferry_check *c, const char *fmt, ...)
	FERRY__PRINTF(2, 3);

/* Files under the root, named relative to it by fmt ("sys/class/net/%s").
 * _read reads a small file into buf without trailing white space; _long
 * parses one decimal number; _exists says whether the path exists;
 * _list fills names[0..max) with a directory's entries in version order
 * ("cpu2" before "cpu10"), skipping "." and "..", and returns the count;
 * _fopen opens for reading. All return 0 (or the count) or -errno;
 * _fopen returns NULL with errno set. */
int ferry__doctor_read(const struct ferry__doctor *d, char *buf, size_t len,
		       const char *fmt, ...) FERRY__PRINTF(4, 5);
int ferry__doctor_long(const struct ferry__doctor *d, long *v,
		       const char *fmt, ...) FERRY__PRINTF(3, 4);
bool ferry__doctor_exists(const struct ferry__doctor *d, const char *fmt, ...)
	FERRY__PRINTF(2, 3);
int ferry__doctor_list(const struct ferry__doctor *d,
		       char (*names)[FERRY__DOCTOR_NAME], size_t max,
		       const char *fmt, ...) FERRY__PRINTF(4, 5);
FILE *ferry__doctor_fopen(const struct ferry__doctor *d, const char *fmt, ...)
	FERRY__PRINTF(2, 3);

/* The netdevs an RDMA device's ports run over (device/net/ entries, else a soft
 * device's parent), into nics[0..max). Returns the count. */
int ferry__doctor_ib_netdevs(const struct ferry__doctor *d, const char *ibdev,
			     char (*nics)[FERRY__DOCTOR_NAME], size_t max);
/* Whether ifname carries an RDMA device. */
bool ferry__doctor_has_ib(const struct ferry__doctor *d, const char *ifname);

/* The names of this build's transports (ferry_xport_list, in preference
 * order) whose needs & mask == want, as "a, b or c" into buf; with
 * FERRY__DX_AND "a, b and c"; FERRY__DX_RUNS_ON adds what each runs on
 * ("NAME (WHAT)"); FERRY__DX_PLAIN keeps only those that run on nothing
 * special. Returns how many (buf is "" for none). */
#define FERRY__DX_AND (1u << 0)
#define FERRY__DX_RUNS_ON (1u << 1)
#define FERRY__DX_PLAIN (1u << 2)
size_t ferry__doctor_xports(char *buf, size_t len, unsigned mask,
			    unsigned want, unsigned flags);

/* The checks, in the order ferry_doctor_run (doctor.c) calls them. */
void ferry__doctor_rdma(struct ferry__doctor *d);
void ferry__doctor_nic(struct ferry__doctor *d, const char *ifname);
void ferry__doctor_irq(struct ferry__doctor *d, const char *ifname, int node);
void ferry__doctor_mem(struct ferry__doctor *d);
void ferry__doctor_tcp(struct ferry__doctor *d);
void ferry__doctor_cpu(struct ferry__doctor *d);

/* The PCI function of ifname relative to the root ("sys/class/net/IF/device"
 * or, for a virtio NIC, its parent ".../device/.."), or -ENOENT. */
int ferry__doctor_pcidir(const struct ferry__doctor *d, const char *ifname,
			 char *rel, size_t len);

#endif
