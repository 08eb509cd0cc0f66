#include <string.h>

#include "util.h"

const char *ferry_strerror(int err)
{
	if (err < 0)
		err = -err;
	switch (err) {
	case 0:
		return "success";
#define FERRY__ERR_CASE(name, value, text)                                   \
	case value:                                                          \
		return text;
		FERRY_ERRORS(FERRY__ERR_CASE)
#undef FERRY__ERR_CASE
	default:
		break;
	}
	/* strerror() is not thread-safe in general, but glibc's returns
	 * static strings for known codes; strerrordesc_np() says so. */
	const char *s = strerrordesc_np(err);
	return s ? s : "unknown error";
}
