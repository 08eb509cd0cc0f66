/* Open file descriptors: how many this process holds, and its limit. */
#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <sys/resource.h>

#include "ferry/session.h"

#include "util/util.h"

long ferry__fds_in_use(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	long n = 0;

	if (!d)
		return 64; /* no /proc: a guess, for headroom only */
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1; /* not the one reading the directory */
}

int ferry_nofile_raise(void)
{
	struct rlimit rl;
	rlim_t was;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return -errno;
	if (rl.rlim_cur >= rl.rlim_max)
		return 0;
	was = rl.rlim_cur;
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		return -errno;
	if (rl.rlim_max == RLIM_INFINITY)
		ferry__log(FERRY_LOG_INFO,
			   "open-files limit raised from %llu to unlimited",
			   (unsigned long long)was);
	else
		ferry__log(FERRY_LOG_INFO,
			   "open-files limit raised from %llu to %llu (the hard limit)",
			   (unsigned long long)was,
			   (unsigned long long)rl.rlim_max);
	return 0;
}
