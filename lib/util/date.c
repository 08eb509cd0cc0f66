/* Dates as iperf3's JSON writes them (util.h). */
#include <string.h>
#include <time.h>

#include "util/util.h"

const char *ferry__utc_date(int64_t secs, char *buf, size_t len)
{
	time_t t = (time_t)secs;
	struct tm tm;

	if (!gmtime_r(&t, &tm))
		memset(&tm, 0, sizeof(tm));
	strftime(buf, len, "%a, %d %b %Y %H:%M:%S GMT", &tm);
	return buf;
}
