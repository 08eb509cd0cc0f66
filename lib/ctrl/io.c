/* Control-channel socket I/O: one whole message per call, under a deadline.
 *
 * poll() waits for the socket; the transfers themselves use MSG_DONTWAIT so
 * a blocking socket can never stall past the deadline, and MSG_NOSIGNAL so
 * a closed peer is an error code, not a SIGPIPE.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "ctrl/msg.h"
#include "ferry/error.h"

/* Absolute deadline in ns, or 0 for none. */
static uint64_t deadline_of(int timeout_ms)
{
	if (timeout_ms < 0)
		return 0;
	return ferry__now_ns() + (uint64_t)timeout_ms * 1000000ull;
}

/* Wait until fd is ready for events. Returns 0, -FERRY_ETIMEOUT or
 * -errno. */
static int wait_fd(int fd, short events, uint64_t deadline)
{
	struct pollfd pfd = { .fd = fd, .events = events };
	int ms = -1;

	for (;;) {
		if (deadline) {
			uint64_t now = ferry__now_ns();

			if (now >= deadline)
				return -FERRY_ETIMEOUT;
			/* Round up so we never wake just before the deadline. */
			ms = (int)((deadline - now + 999999) / 1000000);
		}
		int n = poll(&pfd, 1, ms);
		if (n > 0)
			return 0; /* ready, or an error the transfer reports */
		if (n == 0)
			continue; /* the deadline check above decides */
		if (errno != EINTR)
			return -errno;
	}
}

static int write_all(int fd, const uint8_t *p, size_t len, uint64_t deadline)
{
	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n >= 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (errno == EINTR)
			continue;
		if (errno == EPIPE)
			return -FERRY_ECLOSED;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return -errno;
		int ret = wait_fd(fd, POLLOUT, deadline);
		if (ret)
			return ret;
	}
	return 0;
}

static int read_all(int fd, uint8_t *p, size_t len, uint64_t deadline)
{
	while (len) {
		ssize_t n = recv(fd, p, len, MSG_DONTWAIT);

		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n == 0)
			return -FERRY_ECLOSED;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return -errno;
		int ret = wait_fd(fd, POLLIN, deadline);
		if (ret)
			return ret;
	}
	return 0;
}

int ferry__ctrl_send(int fd, const struct ferry_msg *m, int timeout_ms)
{
	uint64_t deadline = deadline_of(timeout_ms);
	uint8_t *buf;
	size_t len;
	int ret;

	buf = malloc(FERRY_CTRL_MAX_FRAME);
	if (!buf)
		return -ENOMEM;
	ret = ferry__ctrl_encode(m, buf, FERRY_CTRL_MAX_FRAME, &len);
	if (ret)
		goto out_free;
	ret = write_all(fd, buf, len, deadline);
out_free:
	free(buf);
	return ret;
}

int ferry__ctrl_recv(int fd, struct ferry_msg *m, int timeout_ms)
{
	uint64_t deadline = deadline_of(timeout_ms);
	uint8_t hdr[FERRY_CTRL_HDR_LEN];
	uint8_t *buf;
	size_t used, body_len;
	int ret;

	ret = read_all(fd, hdr, sizeof(hdr), deadline);
	if (ret)
		return ret;
	/* A complete header alone decodes to -EAGAIN (body missing) or to an
	 * error: the size limit is enforced before any body byte is read. */
	ret = ferry__ctrl_decode(hdr, sizeof(hdr), m, &used);
	if (ret != -EAGAIN && ret != 0 && ret != -FERRY_EVERSION)
		return ret;
	body_len = (size_t)hdr[4] | (size_t)hdr[5] << 8 |
		   (size_t)hdr[6] << 16 | (size_t)hdr[7] << 24;

	buf = malloc(FERRY_CTRL_HDR_LEN + body_len);
	if (!buf)
		return -ENOMEM;
	memcpy(buf, hdr, sizeof(hdr));
	ret = read_all(fd, buf + FERRY_CTRL_HDR_LEN, body_len, deadline);
	if (ret)
		goto out_free;
	ret = ferry__ctrl_decode(buf, FERRY_CTRL_HDR_LEN + body_len, m, &used);
	if (ret == 0 && m->type == FERRY_MSG_ERROR)
		ret = -FERRY_EPEER;
out_free:
	free(buf);
	return ret;
}

int ferry__ctrl_send_error(int fd, int code, const char *fmt, ...)
{
	struct ferry_msg m = { .type = FERRY_MSG_ERROR };
	char raw[FERRY_ERRTEXT_MAX];
	va_list ap;

	if (code == INT_MIN)
		code = FERRY_EPROTO;
	m.u.error.code = code < 0 ? -code : code;
	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	ferry_escape(raw, m.u.error.text, sizeof(m.u.error.text));
	return ferry__ctrl_send(fd, &m, FERRY_CTRL_ERROR_TIMEOUT_MS);
}
