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

void ferry__log(enum ferry_log_level level, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (!log_fn || level > log_max)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_fn(level, msg, log_arg);
}

void ferry__why(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!why || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
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
