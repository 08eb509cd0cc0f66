/* Reading the host's sys/ and proc/ under the doctor's root directory. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "doctor_int.h"

static int vpath(const struct ferry__doctor *d, char *path, size_t len,
		 const char *fmt, va_list ap)
{
	int r = snprintf(path, len, "%s/", d->root);
	int w;

	if (r < 0 || (size_t)r >= len)
		return -ENAMETOOLONG;
	w = vsnprintf(path + r, len - (size_t)r, fmt, ap);
	if (w < 0 || (size_t)w >= len - (size_t)r)
		return -ENAMETOOLONG;
	return 0;
}

static int read_fd(int fd, char *buf, size_t len)
{
	size_t got = 0;

	while (got < len - 1) {
		ssize_t n = read(fd, buf + got, len - 1 - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	while (got && isspace((unsigned char)buf[got - 1]))
		got--;
	buf[got] = '\0';
	return 0;
}

int ferry__doctor_read(const struct ferry__doctor *d, char *buf, size_t len,
		       const char *fmt, ...)
{
	char path[PATH_MAX];
	va_list ap;
	int fd, r;

	if (!len)
		return -EINVAL;
	buf[0] = '\0';
	va_start(ap, fmt);
	r = vpath(d, path, sizeof(path), fmt, ap);
	va_end(ap);
	if (r)
		return r;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = read_fd(fd, buf, len);
	close(fd);
	return r;
}

static int parse_long(const char *s, long *v)
{
	char *end;

	errno = 0;
	*v = strtol(s, &end, 10);
	if (errno || end == s || *end)
		return -EIO;
	return 0;
}

int ferry__doctor_long(const struct ferry__doctor *d, long *v,
		       const char *fmt, ...)
{
	char path[PATH_MAX], buf[64];
	va_list ap;
	int fd, r;

	va_start(ap, fmt);
	r = vpath(d, path, sizeof(path), fmt, ap);
	va_end(ap);
	if (r)
		return r;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = read_fd(fd, buf, sizeof(buf));
	close(fd);
	return r ? r : parse_long(buf, v);
}

bool ferry__doctor_exists(const struct ferry__doctor *d, const char *fmt, ...)
{
	char path[PATH_MAX];
	struct stat st;
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vpath(d, path, sizeof(path), fmt, ap);
	va_end(ap);
	return !r && stat(path, &st) == 0;
}

static int not_dots(const struct dirent *e)
{
	return strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
}

int ferry__doctor_list(const struct ferry__doctor *d,
		       char (*names)[FERRY__DOCTOR_NAME], size_t max,
		       const char *fmt, ...)
{
	char path[PATH_MAX];
	struct dirent **ents;
	size_t got = 0;
	va_list ap;
	int r, n;

	va_start(ap, fmt);
	r = vpath(d, path, sizeof(path), fmt, ap);
	va_end(ap);
	if (r)
		return r;
	n = scandir(path, &ents, not_dots, versionsort);
	if (n < 0)
		return -errno;
	for (int i = 0; i < n; i++) {
		if (got < max && strlen(ents[i]->d_name) < FERRY__DOCTOR_NAME)
			memcpy(names[got++], ents[i]->d_name,
			       strlen(ents[i]->d_name) + 1);
		free(ents[i]);
	}
	free(ents);
	return (int)got;
}

FILE *ferry__doctor_fopen(const struct ferry__doctor *d, const char *fmt, ...)
{
	char path[PATH_MAX];
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vpath(d, path, sizeof(path), fmt, ap);
	va_end(ap);
	if (r) {
		errno = -r;
		return NULL;
	}
	return fopen(path, "re");
}

int ferry__doctor_ib_netdevs(const struct ferry__doctor *d, const char *ibdev,
			     char (*nics)[FERRY__DOCTOR_NAME], size_t max)
{
	int n = ferry__doctor_list(d, nics, max,
				   "sys/class/infiniband/%s/device/net", ibdev);

	if (n > 0 || !max)
		return n > 0 ? n : 0;
	/* rxe and siw name the netdev they run over in "parent". */
	if (ferry__doctor_read(d, nics[0], FERRY__DOCTOR_NAME,
			       "sys/class/infiniband/%s/parent", ibdev) ||
	    !nics[0][0] || strchr(nics[0], '/'))
		return 0;
	return 1;
}

bool ferry__doctor_has_ib(const struct ferry__doctor *d, const char *ifname)
{
	char devs[FERRY__DOCTOR_MAX_IB][FERRY__DOCTOR_NAME];
	char nics[8][FERRY__DOCTOR_NAME];
	int ndev = ferry__doctor_list(d, devs, FERRY__DOCTOR_MAX_IB,
				      "sys/class/infiniband");

	for (int i = 0; i < ndev; i++) {
		int n = ferry__doctor_ib_netdevs(d, devs[i], nics, 8);

		for (int j = 0; j < n; j++)
			if (!strcmp(nics[j], ifname))
				return true;
	}
	return false;
}

int ferry__doctor_pcidir(const struct ferry__doctor *d, const char *ifname,
			 char *rel, size_t len)
{
	/* A PCI function has a config file; virtio's device is a child of
	 * one. A PF's parent is a bridge, never the NIC: do not climb there. */
	if (ferry__doctor_exists(d, "sys/class/net/%s/device/config", ifname))
		snprintf(rel, len, "sys/class/net/%s/device", ifname);
	else if (ferry__doctor_exists(d, "sys/class/net/%s/device/../config",
				      ifname))
		snprintf(rel, len, "sys/class/net/%s/device/..", ifname);
	else
		return -ENOENT;
	return 0;
}
