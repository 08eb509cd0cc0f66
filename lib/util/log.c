#include <stdarg.h>
#include <stdio.h>
#include <sys/random.h>
#include <errno.h>

#include "util.h"

static ferry_log_fn log_fn;
static void *log_arg;
static enum ferry_log_level log_max = FERRY_LOG_INFO;

void ferry_log_set(ferry_log_fn fn, void *arg, enum ferry_log_level max_level)
{
	log_fn = fn;
	log_arg = arg;
	log_max = max_level;
}

/* Every message is one line of plain text (escape.c): a file name or a
 * peer's text in it cannot start a line of its own or drive a terminal. */
void ferry__log(enum ferry_log_level level, const char *fmt, ...)
{
	char raw[512], msg[512];
	va_list ap;

	if (!log_fn || level > log_max)
		return;
	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	log_fn(level, ferry_escape(raw, msg, sizeof(msg)), log_arg);
}

int ferry__random(void *buf, size_t len)
{
	unsigned char *p = buf;

	while (len) {
		ssize_t n = getrandom(p, len, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}
