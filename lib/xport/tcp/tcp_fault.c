/* tcp's fault hook (tcp.h), in builds with test hooks only: meson puts
 * this file in when the test_hooks option is on, tcp_fault_none.c when it
 * is off (docs/architecture.md). The corruption tests use it to show that
 * a flipped bit is caught by the chunk checksums, not landed. */
#include <stdlib.h>
#include <sys/uio.h>

#include "util/util.h"
#include "xport/env.h"
#include "xport/tcp/tcp.h"

void ferry__tcp_fault_open(struct ferry_xport *x)
{
	const char *at = ferry__env_hook("FERRY_FAULT_TCP_FLIP_AT");
	const char *ms = ferry__env_hook("FERRY_FAULT_TCP_PAUSE_MS");

	if (ms) {
		x->fault_pause_ms = (unsigned)strtoul(ms, NULL, 0);
		ferry__log(FERRY_LOG_WARN,
			   "tcp: fault hook on: stream 0 stops %s ms half-way through its first chunk",
			   ms);
	}
	if (!at)
		return;
	x->fault_flip_at = strtoull(at, NULL, 0) + 1;
	ferry__log(FERRY_LOG_WARN,
		   "tcp: fault hook on: flipping a bit at stream byte %s", at);
}

int ferry__tcp_fault_flip(struct ferry_xport *x, const struct tcp_ep *e,
			  const void *laddr, size_t len, struct iovec *iov,
			  uint8_t *flipped)
{
	uint64_t at = x->fault_flip_at - 1,
		 start = e->bytes_out + FERRY__TCP_HDR;
	size_t k;

	if (at < start || at >= start + len)
		return 2;
	k = (size_t)(at - start);
	*flipped = ((const uint8_t *)laddr)[k] ^ 0x01;
	iov[1].iov_len = k;
	iov[2] = (struct iovec){ flipped, 1 };
	iov[3] = (struct iovec){ (uint8_t *)laddr + k + 1, len - k - 1 };
	x->fault_flip_at = 0; /* once */
	return 4;
}

unsigned ferry__tcp_fault_pause(struct ferry_xport *x)
{
	unsigned ms = x->fault_pause_ms;

	x->fault_pause_ms = 0; /* once */
	return ms;
}

bool ferry__tcp_fault_built(void)
{
	return true;
}
