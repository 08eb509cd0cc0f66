/* Small files of /proc and /sys, read whole (util.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "util/util.h"

int ferry__read_text(const char *path, char *buf, size_t len)
{
	size_t got = 0;
	int fd, r = 0;

	if (!len)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		buf[0] = '\0';
		return -errno;
	}
	while (got < len - 1) {
		ssize_t n = read(fd, buf + got, len - 1 - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			break;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	buf[got] = '\0';
	return r;
}

bool ferry__cap_effective(const char *root, unsigned cap)
{
	char path[4200], status[8192];
	unsigned long long caps;
	const char *p;

	snprintf(path, sizeof(path), "%s/proc/self/status", root ? root : "");
	return ferry__read_text(path, status, sizeof(status)) == 0 &&
	       (p = strstr(status, "CapEff:")) &&
	       sscanf(p + strlen("CapEff:"), "%llx", &caps) == 1 &&
	       cap < 64 && (caps >> cap) & 1;
}

int ferry__task_cpu(int tid, double *user, double *sys)
{
	char path[64], buf[1024];
	const char *end;
	unsigned long ut, st;
	long hz = sysconf(_SC_CLK_TCK);
	int err;

	*user = *sys = 0;
	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	err = ferry__read_text(path, buf, sizeof(buf));
	if (err)
		return err;
	/* after the name in parentheses (which may hold anything): state,
	 * then ten fields, then utime and stime (proc(5)) */
	end = strrchr(buf, ')');
	if (!end || hz <= 0 ||
	    sscanf(end + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
		   &ut, &st) != 2)
		return -EINVAL;
	*user = (double)ut / (double)hz;
	*sys = (double)st / (double)hz;
	return 0;
}
