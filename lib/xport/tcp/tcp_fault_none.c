/* tcp's fault hook (tcp.h) in a build without test hooks (meson option
 * test_hooks off, as in release builds): nothing to set, nothing fires. */
#include <sys/uio.h>

#include "xport/tcp/tcp.h"

void ferry__tcp_fault_open(struct ferry_xport *x)
{
	(void)x;
}

int ferry__tcp_fault_flip(struct ferry_xport *x, const struct tcp_ep *e,
			  const void *laddr, size_t len, struct iovec *iov,
			  uint8_t *flipped)
{
	(void)x, (void)e, (void)laddr, (void)len, (void)iov, (void)flipped;
	return 2;
}

unsigned ferry__tcp_fault_pause(struct ferry_xport *x)
{
	(void)x;
	return 0;
}

bool ferry__tcp_fault_built(void)
{
	return false;
}
