/* Sizes for people (util.h). */
#include <math.h>
#include <stdio.h>

#include "util/util.h"

const char *ferry__bytes_str(char *buf, size_t len, double bytes)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	unsigned u = 0;

	while (bytes >= 1024 && u + 1 < FERRY__ARRAY_SIZE(units)) {
		bytes /= 1024;
		u++;
	}
	snprintf(buf, len, bytes == floor(bytes) ? "%.0f %s" : "%.1f %s",
		 bytes, units[u]);
	return buf;
}
