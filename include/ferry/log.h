/* libferry's only way to say things: a logger the application installs.
 *
 * The library never prints. It reports decisions worth knowing (a hugepage
 * fallback, the transport it picked, socket buffer sizes it got) through the
 * callback installed here; without one, messages are dropped.
 */
#ifndef FERRY_LOG_H
#define FERRY_LOG_H

#include <stddef.h>

enum ferry_log_level {
	FERRY_LOG_ERR = 0,
	FERRY_LOG_WARN = 1,
	FERRY_LOG_INFO = 2,
	FERRY_LOG_DEBUG = 3,
};

/* Called from any libferry thread; must be thread-safe. msg is one line
 * of plain text (ferry_escape below), without a newline. */
typedef void (*ferry_log_fn)(enum ferry_log_level level, const char *msg,
			     void *arg);

/* Install fn (NULL to silence) for messages at or below max_level. */
void ferry_log_set(ferry_log_fn fn, void *arg, enum ferry_log_level max_level);

/* Make in one line of plain text, safe to print: control bytes (0x00-0x1f,
 * 0x7f) become C escapes (\t, \n, \r, else \xNN such as \x1b), C1
 * controls and bytes that are not valid UTF-8 become \xNN per byte;
 * valid UTF-8 stays as it is, and so does the backslash, so escaping the
 * output again changes nothing. Writes at most outlen - 1 bytes and a NUL
 * into out, never cutting an escape or a character; FERRY_ESCAPED_MAX(n)
 * bytes always hold the escaped form of n bytes. Returns out (in NULL:
 * ""). Every message given to the logger and every reason (why) the
 * library fills is escaped so; an application escapes the names it
 * prints itself (a file name may hold any byte but '/' and NUL). */
#define FERRY_ESCAPED_MAX(n) (4 * (n) + 1)
const char *ferry_escape(const char *in, char *out, size_t outlen);

#endif
