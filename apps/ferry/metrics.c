/* --metrics: GET /metrics answers with ferry_metrics_render's text (the
 * host-wide series too with --metrics-host), served by libmicrohttpd from
 * its own thread; a second thread takes a goodput sample every
 * FERRY_METRICS_SAMPLE_MS. The listening socket is made here, so a port
 * in use or an address not on this host is reported with its reason. */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>

#include "ferry/error.h"
#include "ferry/metrics.h"
#include "metrics.h"

struct app_metrics {
	struct MHD_Daemon *d;
	pthread_t sampler;
	atomic_bool stop;
	bool host; /* --metrics-host: the host-wide series too */
};

/* "ADDR:PORT", "[V6]:PORT" or ":PORT" (every address) -> host, port. */
static bool parse_spec(const char *spec, char *host, size_t hlen,
		       const char **port)
{
	const char *colon, *h = spec;
	size_t n;

	if (spec[0] == '[') {
		const char *rb = strchr(spec, ']');
		if (!rb || rb[1] != ':')
			return false;
		h = spec + 1;
		n = (size_t)(rb - h);
		colon = rb + 1;
	} else {
		colon = strrchr(spec, ':');
		if (!colon || strchr(spec, ':') != colon)
			return false; /* no port, or IPv6 without brackets */
		n = (size_t)(colon - spec);
	}
	if (n >= hlen)
		return false;
	memcpy(host, h, n);
	host[n] = 0;
	*port = colon + 1;
	if (!**port || strspn(*port, "0123456789") != strlen(*port) ||
	    atol(*port) > 65535)
		return false;
	return true;
}

/* Bind and listen on the first address of host:port (of family, or any)
 * that allows it. */
static int listen_af(const char *host, const char *port, int family,
		     int *fd_out)
{
	struct addrinfo hints = { .ai_flags = AI_PASSIVE | AI_NUMERICSERV,
				  .ai_family = family,
				  .ai_socktype = SOCK_STREAM }, *res, *ai;
	int err, fd = -1, one = 1, zero = 0;

	err = getaddrinfo(host[0] ? host : NULL, port, &hints, &res);
	if (err)
		return err == EAI_SYSTEM ? -errno : -EADDRNOTAVAIL;
	err = -EADDRNOTAVAIL;
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
			    ai->ai_protocol);
		if (fd < 0) {
			err = -errno;
			continue;
		}
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (ai->ai_family == AF_INET6 && !host[0])
			setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero,
				   sizeof(zero));
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 &&
		    listen(fd, 16) == 0)
			break;
		err = -errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0)
		return err;
	*fd_out = fd;
	return 0;
}

/* Every address (no host): IPv6 and IPv4 on one socket where the host
 * has IPv6, else IPv4. */
static int listen_on(const char *host, const char *port, int *fd_out)
{
	if (!host[0] && listen_af(host, port, AF_INET6, fd_out) == 0)
		return 0;
	return listen_af(host, port, AF_UNSPEC, fd_out);
}

static void print_url(const char *cmd, int fd)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char h[NI_MAXHOST], p[NI_MAXSERV];

	if (getsockname(fd, (struct sockaddr *)&ss, &sl) ||
	    getnameinfo((struct sockaddr *)&ss, sl, h, sizeof(h), p, sizeof(p),
			NI_NUMERICHOST | NI_NUMERICSERV))
		return;
	fprintf(stderr, "ferry %s: metrics at http://%s%s%s:%s/metrics\n", cmd,
		ss.ss_family == AF_INET6 ? "[" : "", h,
		ss.ss_family == AF_INET6 ? "]" : "", p);
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status,
			     const char *text)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(
		strlen(text), (void *)text, MHD_RESPMEM_PERSISTENT);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				"text/plain; charset=utf-8");
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result metrics(struct MHD_Connection *c,
			       const struct app_metrics *m)
{
	unsigned flags = m->host ? FERRY_METRICS_HOST : 0;
	size_t size = 64 << 10, len = 0;
	char *buf = NULL, *nb;
	struct MHD_Response *r;
	enum MHD_Result ret;
	int err = -ENOSPC;

	for (int tries = 0; err == -ENOSPC && tries < 4; tries++) {
		nb = realloc(buf, size);
		if (!nb)
			break;
		buf = nb;
		err = ferry_metrics_render(NULL, flags, buf, size, &len);
		size = len + 4096; /* it may grow between tries */
	}
	if (err) {
		free(buf);
		return reply(c, MHD_HTTP_INTERNAL_SERVER_ERROR,
			     "cannot render the metrics\n");
	}
	r = MHD_create_response_from_buffer(len, buf, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(buf);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				FERRY_METRICS_CONTENT_TYPE);
	ret = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

/* One request; cls is the struct app_metrics. */
static enum MHD_Result handle(void *cls, struct MHD_Connection *c,
			      const char *url, const char *method,
			      const char *version, const char *upload,
			      size_t *upload_size, void **req_cls)
{
	(void)version;
	(void)upload;
	(void)upload_size;
	(void)req_cls;
	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 &&
	    strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
		return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "GET /metrics\n");
	if (strcmp(url, "/metrics") == 0)
		return metrics(c, cls);
	if (strcmp(url, "/") == 0)
		return reply(c, MHD_HTTP_OK,
			     "ferry: Prometheus metrics at /metrics\n");
	return reply(c, MHD_HTTP_NOT_FOUND, "not found; try /metrics\n");
}

static void *sampler(void *arg)
{
	struct app_metrics *m = arg;

	while (!atomic_load(&m->stop)) {
		ferry_metrics_sample();
		for (int i = 0;
		     i < FERRY_METRICS_SAMPLE_MS / 50 && !atomic_load(&m->stop);
		     i++)
			usleep(50000);
	}
	return NULL;
}

int app_metrics_start(const char *cmd, const char *spec, bool with_host,
		      bool quiet, struct app_metrics **out)
{
	struct app_metrics *m;
	const char *port;
	char host[256];
	int fd = -1, err;

	*out = NULL;
	if (!parse_spec(spec, host, sizeof(host), &port)) {
		fprintf(stderr,
			"ferry %s: bad value '%s' for --metrics: want ADDR:PORT, [IPv6]:PORT or :PORT\n",
			cmd, spec);
		return -EINVAL;
	}
	err = listen_on(host, port, &fd);
	if (err) {
		fprintf(stderr, "ferry %s: --metrics: cannot listen on %s: %s\n",
			cmd, spec, ferry_strerror(err));
		return err;
	}
	m = calloc(1, sizeof(*m));
	if (!m) {
		close(fd);
		return -ENOMEM;
	}
	m->host = with_host;
	m->d = MHD_start_daemon(MHD_USE_AUTO_INTERNAL_THREAD, 0, NULL, NULL,
				handle, m, MHD_OPTION_LISTEN_SOCKET, fd,
				MHD_OPTION_CONNECTION_LIMIT, 32u,
				MHD_OPTION_CONNECTION_TIMEOUT, 10u,
				MHD_OPTION_END);
	if (!m->d) {
		fprintf(stderr, "ferry %s: --metrics: libmicrohttpd did not start\n",
			cmd);
		close(fd);
		free(m);
		return -EIO;
	}
	err = -pthread_create(&m->sampler, NULL, sampler, m);
	if (err) {
		MHD_stop_daemon(m->d);
		free(m);
		return err;
	}
	if (!quiet)
		print_url(cmd, fd);
	*out = m;
	return 0;
}

void app_metrics_stop(struct app_metrics *m)
{
	if (!m)
		return;
	atomic_store(&m->stop, true);
	pthread_join(m->sampler, NULL);
	MHD_stop_daemon(m->d); /* closes the listening socket too */
	free(m);
}
