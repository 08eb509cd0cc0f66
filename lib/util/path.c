/* Relative path rules (util/path.h). */
#include <string.h>

#include "util/path.h"

bool ferry__path_valid(const char *path)
{
	size_t len = strnlen(path, FERRY_PATH_MAX);
	const char *p = path;

	if (len == 0 || len >= FERRY_PATH_MAX)
		return false;
	for (;;) {
		const char *slash = strchr(p, '/');
		size_t n = slash ? (size_t)(slash - p) : strlen(p);

		if (n == 0) /* leading '/', "//" or trailing '/' */
			return false;
		if ((n == 1 && p[0] == '.') ||
		    (n == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		if (!slash)
			return true;
		p = slash + 1;
	}
}
