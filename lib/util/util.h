/* Internal helpers shared across libferry files (double-underscore names). */
#ifndef FERRY_UTIL_H
#define FERRY_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "ferry/error.h"
#include "ferry/log.h"

#if defined(__GNUC__)
#define FERRY__PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define FERRY__PRINTF(a, b)
#endif

void ferry__log(enum ferry_log_level level, const char *fmt, ...)
	FERRY__PRINTF(2, 3);

/* snprintf into a caller's reason buffer (NULL or len 0: ignored), then
 * ferry_escape: a reason is one line of plain text whatever names and
 * peer texts it quotes. why may be one of the arguments. */
void ferry__why(char *why, size_t len, const char *fmt, ...)
	FERRY__PRINTF(3, 4);

/* Length of the valid UTF-8 sequence at s (1 to 4 bytes: no overlong
 * form, surrogate or code point above U+10FFFF), or 0 when s does not
 * start one. s[0] == 0 is a sequence of 1. */
int ferry__utf8_len(const unsigned char *s);

static inline uint64_t ferry__now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Read the small file at path into buf (len bytes, NUL-terminated; ""
 * when it cannot be opened). Returns 0 or -errno. */
int ferry__read_text(const char *path, char *buf, size_t len);

/* Does this process hold capability cap (linux/capability.h's CAP_*)
 * in its effective set? Read from root/proc/self/status (root NULL or
 * "": the real one; a test passes a fake tree), so no libcap. */
bool ferry__cap_effective(const char *root, unsigned cap);

/* CPU seconds thread tid of this process has spent so far, in user and
 * kernel mode (/proc/self/task/TID/stat; at the clock tick's
 * resolution). Returns 0, or -errno with both left at 0. */
int ferry__task_cpu(int tid, double *user, double *sys);

/* bytes in binary units, "4 MiB", "71.5 MiB", "1 GiB" (one decimal when
 * not whole), into buf. Returns buf. */
const char *ferry__bytes_str(char *buf, size_t len, double bytes);

/* secs (since the epoch) as "Tue, 01 Dec 2026 22:11:37 GMT" into buf,
 * the form of iperf3's start.timestamp.time. Returns buf. */
const char *ferry__utc_date(int64_t secs, char *buf, size_t len);

/* Descriptors this process has open now (a scan of /proc/self/fd). */
long ferry__fds_in_use(void);

/* Mark what socket fd sends with DSCP dscp (0 .. FERRY_DSCP_MAX; < 0:
 * leave the system's default): IP_TOS = dscp << 2, and on an IPv6 socket
 * IPV6_TCLASS as well (its IPv4 peers, v4-mapped, get IP_TOS's). The ECN
 * bits stay the kernel's. Set it before connect or listen, so that the
 * handshake is marked too (accepted sockets inherit the listener's).
 * Returns 0, -EINVAL (dscp too large), -EAFNOSUPPORT (not an IP socket)
 * or -errno. */
int ferry__dscp_set(int fd, int dscp);

/* Fill buf with len bytes from getrandom(). Returns 0 or -errno. */
int ferry__random(void *buf, size_t len);

#define FERRY__ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* A data stream that hears nothing for a session's --timeout while the
 * peer still answers on its other streams (one stream in TCP's
 * retransmission backoff after a burst of loss on a long path) waits up
 * to this many times as long before the session gives up on it: the
 * sender's credit wait (lib/pipe/pipe_dp.c) and tcp's blocked send. */
#define FERRY__STALL_ALIVE 6

#endif
