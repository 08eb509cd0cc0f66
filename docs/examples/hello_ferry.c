/* hello_ferry: libferry from outside its source tree.
 *
 * Lists the transports this libferry has, checks a checksum, makes and
 * loads a key, then runs a short memory-to-memory session over tcp on
 * loopback: a receiver (ferry_server_*) on a thread, a sender (ferry_bench)
 * here, both authenticated with the key.
 *
 *   cc -o hello_ferry hello_ferry.c $(pkg-config --cflags --libs libferry)
 *   ./hello_ferry [DIR]     (DIR holds the key file for the run; /tmp)
 *
 * Exit status 0 when the session moved every byte intact.
 */
#define _POSIX_C_SOURCE 200809L /* getpid, unlink, getsockname */

#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <ferry/error.h>
#include <ferry/key.h>
#include <ferry/log.h>
#include <ferry/session.h>
#include <ferry/sum.h>
#include <ferry/xport.h>

#define BYTES (64u << 20)

struct receiver {
	struct ferry_server *srv;
	struct ferry_report rep;
	int err;
	char why[256];
};

static void logger(enum ferry_log_level level, const char *msg, void *arg)
{
	(void)arg;
	if (level <= FERRY_LOG_WARN)
		fprintf(stderr, "hello_ferry: libferry: %s\n", msg);
}

/* The receiver: one session, then done. */
static void *receive(void *p)
{
	struct receiver *r = p;
	char peer[80];
	int fd = ferry_server_accept(r->srv, peer, sizeof(peer));

	if (fd < 0) {
		r->err = fd;
		snprintf(r->why, sizeof(r->why), "accept: %s",
			 ferry_strerror(fd));
		return NULL;
	}
	r->err = ferry_server_session(r->srv, fd, &r->rep, r->why,
				      sizeof(r->why));
	return NULL;
}

static int session(const struct ferry_key *key)
{
	static struct receiver r;
	static struct ferry_report rep;
	struct ferry_bench_spec spec = { .bytes = BYTES };
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	struct ferry_opts o;
	pthread_t t;
	char why[256], port[8];
	int err;

	ferry_opts_init(&o);
	o.transport = "tcp";
	o.key = key;
	o.streams = 2;
	o.chunk_size = 256u << 10;
	o.slots = 8;
	o.interval = 0;

	err = ferry_server_open("127.0.0.1", "0", &o, &r.srv, why, sizeof(why));
	if (err) {
		fprintf(stderr, "hello_ferry: listen: %s\n", why);
		return 1;
	}
	getsockname(ferry_server_fd(r.srv), (struct sockaddr *)&sin, &len);
	snprintf(port, sizeof(port), "%u", ntohs(sin.sin_port));
	if (pthread_create(&t, NULL, receive, &r)) {
		ferry_server_close(r.srv);
		return 1;
	}
	err = ferry_bench("127.0.0.1", port, &o, &spec, &rep, why, sizeof(why));
	pthread_join(t, NULL);
	ferry_server_close(r.srv);
	if (err || r.err) {
		fprintf(stderr, "hello_ferry: session failed: %s\n",
			err ? why : r.why);
		return 1;
	}
	printf("session: %llu bytes in %llu chunks over %s, %.2f Gb/s; "
	       "the receiver counted %llu\n",
	       (unsigned long long)rep.bytes, (unsigned long long)rep.chunks,
	       rep.transport, ferry_gbps(rep.bytes, rep.seconds),
	       (unsigned long long)r.rep.bytes);
	return rep.bytes == BYTES && r.rep.bytes == BYTES ? 0 : 1;
}

int main(int argc, char **argv)
{
	const struct ferry_xport_ops *const *x;
	struct ferry_key key;
	char path[4096], why[256];
	int err, rc;

	ferry_log_set(logger, NULL, FERRY_LOG_WARN);

	printf("transports:");
	for (x = ferry_xport_list(); *x; x++)
		printf(" %s", (*x)->name);
	printf("\n");

	if (ferry_crc32c(0, "123456789", 9) != 0xe3069283) {
		fprintf(stderr, "hello_ferry: crc32c is wrong\n");
		return 1;
	}
	printf("crc32c(\"123456789\") = 0x%08x\n",
	       ferry_crc32c(0, "123456789", 9));

	snprintf(path, sizeof(path), "%s/hello_ferry.%ld.key",
		 argc > 1 ? argv[1] : "/tmp", (long)getpid());
	err = ferry_key_generate(path, why, sizeof(why));
	if (!err)
		err = ferry_key_load(path, &key, why, sizeof(why));
	if (err) {
		fprintf(stderr, "hello_ferry: key: %s (%s)\n", why,
			ferry_strerror(err));
		unlink(path);
		return 1;
	}
	printf("key: made and loaded %s\n", path);
	printf("an error reads: %s\n", ferry_strerror(-FERRY_EAUTH));

	rc = session(&key);
	unlink(path);
	return rc;
}
