/* Text a peer or a file system chose, made safe to print (ferry/log.h).
 *
 * File names may hold any byte but '/' and NUL, and peers send texts of
 * their own: printed raw, a newline forges a log line and an ESC drives
 * the reader's terminal. Every reason (ferry__why) and log message
 * (ferry__log) passes through ferry_escape, and so does every name the
 * apps print; JSON output carries the exact name instead (ferry_json_str).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util.h"

int ferry__utf8_len(const unsigned char *s)
{
	unsigned c = s[0];
	int n = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 :
		(c & 0xf0) == 0xe0 ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;

	for (int i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	/* overlong forms, UTF-16 surrogates, above U+10FFFF */
	if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] >= 0xa0) ||
	    (c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] >= 0x90))
		return 0;
	return n;
}

const char *ferry_escape(const char *in, char *out, size_t outlen)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)in;
	size_t o = 0;

	if (!outlen)
		return out;
	while (s && *s) {
		char e[4];
		int n = ferry__utf8_len(s), k;

		/* a C1 control (U+0080-U+009F) is as active as a C0 one
		 * on many terminals: escape both of its bytes */
		if (n == 2 && s[0] == 0xc2 && s[1] < 0xa0)
			n = 0;
		if (n > 1 || (n == 1 && *s >= 0x20 && *s != 0x7f)) {
			if ((size_t)n >= outlen - o)
				break;
			memcpy(out + o, s, (size_t)n);
			o += (size_t)n;
			s += n;
			continue;
		}
		e[0] = '\\';
		k = 2;
		if (*s == '\n')
			e[1] = 'n';
		else if (*s == '\t')
			e[1] = 't';
		else if (*s == '\r')
			e[1] = 'r';
		else {
			e[1] = 'x';
			e[2] = hex[*s >> 4];
			e[3] = hex[*s & 0xf];
			k = 4;
		}
		if ((size_t)k >= outlen - o)
			break;
		memcpy(out + o, e, (size_t)k);
		o += (size_t)k;
		s++;
	}
	out[o] = '\0';
	return out;
}

/* Longest raw text formatted before escaping: longer reasons and log
 * lines are cut anyway. */
#define RAW_MAX 4096

static void vwhy(char *why, size_t len, const char *fmt, va_list ap)
{
	char raw[RAW_MAX];

	if (!why || !len)
		return;
	/* formatted apart from why, so why may be one of the arguments */
	vsnprintf(raw, len < sizeof(raw) ? len : sizeof(raw), fmt, ap);
	ferry_escape(raw, why, len);
}

void ferry__why(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwhy(why, len, fmt, ap);
	va_end(ap);
}
