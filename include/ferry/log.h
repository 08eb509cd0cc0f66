/* libferry's only way to say things: a logger the application installs.
 *
 * The library never prints. It reports decisions worth knowing (a hugepage
 * fallback, the transport it picked, socket buffer sizes it got) through the
 * callback installed here; without one, messages are dropped.
 */
#ifndef FERRY_LOG_H
#define FERRY_LOG_H

enum ferry_log_level {
	FERRY_LOG_ERR = 0,
	FERRY_LOG_WARN = 1,
	FERRY_LOG_INFO = 2,
	FERRY_LOG_DEBUG = 3,
};

/* Called from any libferry thread; must be thread-safe. msg has no newline. */
typedef void (*ferry_log_fn)(enum ferry_log_level level, const char *msg,
			     void *arg);

/* Install fn (NULL to silence) for messages at or below max_level. */
void ferry_log_set(ferry_log_fn fn, void *arg, enum ferry_log_level max_level);

#endif
