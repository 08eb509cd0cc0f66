/* The handshake gate (daemon/gate.h). */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/gate.h"
#include "ferry/session.h"
#include "util/util.h"

/* Room for every connection in the gate and as many more that it closed
 * and whose sessions have not yet noticed (they leave within moments). */
#define GATE_SLOTS (2 * FERRY_SERVER_HANDSHAKES)

struct entry {
	bool used;
	bool spoke;     /* its first byte came */
	bool closed;    /* the gate shut it down to make room */
	bool by_addr;   /* ... for its address's share */
	int fd;         /* the session's number */
	int own;        /* our dup, for shutdown() */
	uint8_t addr[17]; /* family byte, then the IPv4 or IPv6 address */
	uint64_t t0;    /* accepted, ns */
	uint64_t age;   /* when closed: ns in the gate */
	uint64_t t_closed;
};

/* A connection the gate closed leaves when its session notices, within
 * moments; one still here after this long has no session (the app closed
 * it unserved) and its slot is taken back. */
#define GATE_LINGER_NS (60ull * 1000000000ull)

struct ferry__gate {
	pthread_mutex_t lock;
	struct entry e[GATE_SLOTS];
};

int ferry__gate_open(struct ferry__gate **out)
{
	struct ferry__gate *g = calloc(1, sizeof(*g));

	if (!g)
		return -ENOMEM;
	pthread_mutex_init(&g->lock, NULL);
	*out = g;
	return 0;
}

static void drop(struct entry *e)
{
	close(e->own);
	e->used = false;
}

void ferry__gate_close(struct ferry__gate *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < GATE_SLOTS; i++)
		if (g->e[i].used)
			drop(&g->e[i]);
	pthread_mutex_destroy(&g->lock);
	free(g);
}

/* The peer's address without its port; an IPv4-mapped IPv6 address is
 * the IPv4 address it maps. */
static void addr_key(const struct sockaddr_storage *ss, uint8_t key[17])
{
	const struct sockaddr_in6 *a6 = (const struct sockaddr_in6 *)ss;

	memset(key, 0, 17);
	if (ss->ss_family == AF_INET) {
		key[0] = 4;
		memcpy(key + 1, &((const struct sockaddr_in *)ss)->sin_addr, 4);
	} else if (ss->ss_family == AF_INET6 &&
		   IN6_IS_ADDR_V4MAPPED(&a6->sin6_addr)) {
		key[0] = 4;
		memcpy(key + 1, a6->sin6_addr.s6_addr + 12, 4);
	} else if (ss->ss_family == AF_INET6) {
		key[0] = 6;
		memcpy(key + 1, a6->sin6_addr.s6_addr, 16);
	}
}

/* The connection to close for room among those in the gate (from addr
 * only, when addr is not NULL): the oldest silent one, else the oldest. */
static struct entry *victim(struct ferry__gate *g, const uint8_t *addr)
{
	struct entry *best = NULL;

	for (size_t i = 0; i < GATE_SLOTS; i++) {
		struct entry *e = &g->e[i];

		if (!e->used || e->closed || (addr && memcmp(e->addr, addr, 17)))
			continue;
		if (!best || (best->spoke && !e->spoke) ||
		    (best->spoke == e->spoke && e->t0 < best->t0))
			best = e;
	}
	return best;
}

int ferry__gate_enter(struct ferry__gate *g, int fd,
		      const struct sockaddr_storage *peer)
{
	struct entry *v = NULL, *slot = NULL;
	unsigned all = 0, same = 0;
	uint64_t now = ferry__now_ns();
	uint8_t key[17];
	int own, err = 0;

	addr_key(peer, key);
	pthread_mutex_lock(&g->lock);
	for (size_t i = 0; i < GATE_SLOTS; i++) {
		struct entry *e = &g->e[i];

		/* the number was closed without a session: a stale entry */
		if (e->used && e->fd == fd)
			drop(e);
		if (!e->used) {
			slot = slot ? slot : e;
			continue;
		}
		if (e->closed)
			continue;
		all++;
		same += !memcmp(e->addr, key, sizeof(key));
	}
	if (same >= GATE_PER_ADDR)
		v = victim(g, key);
	else if (all >= FERRY_SERVER_HANDSHAKES)
		v = victim(g, NULL);
	if (v) {
		shutdown(v->own, SHUT_RDWR);
		v->closed = true;
		v->by_addr = same >= GATE_PER_ADDR;
		v->age = now - v->t0;
		v->t_closed = now;
	}
	for (size_t i = 0; !slot && i < GATE_SLOTS; i++)
		if (g->e[i].closed && now - g->e[i].t_closed > GATE_LINGER_NS) {
			drop(&g->e[i]);
			slot = &g->e[i];
		}
	own = slot ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1;
	if (!slot)
		err = -EBUSY;
	else if (own < 0)
		err = -errno;
	else
		*slot = (struct entry){ .used = true, .fd = fd, .own = own,
					.t0 = now };
	if (!err)
		memcpy(slot->addr, key, sizeof(key));
	pthread_mutex_unlock(&g->lock);
	return err;
}

int ferry__gate_first_byte(struct ferry__gate *g, int fd, int ms)
{
	struct pollfd pf = { .fd = fd, .events = POLLIN };
	uint64_t until = ferry__now_ns() + (uint64_t)ms * 1000000ull;
	int n;

	for (;;) {
		uint64_t now = ferry__now_ns();

		n = poll(&pf, 1, now >= until ? 0 :
			 (int)((until - now + 999999) / 1000000));
		if (n >= 0 || errno != EINTR)
			break;
	}
	if (n < 0)
		return -errno;
	if (n == 0)
		return -FERRY_ETIMEOUT;
	pthread_mutex_lock(&g->lock);
	for (size_t i = 0; i < GATE_SLOTS; i++)
		if (g->e[i].used && g->e[i].fd == fd)
			g->e[i].spoke = true;
	pthread_mutex_unlock(&g->lock);
	return 0;
}

bool ferry__gate_leave(struct ferry__gate *g, int fd, char *why,
		       size_t whylen)
{
	struct entry was = { 0 };

	pthread_mutex_lock(&g->lock);
	for (size_t i = 0; i < GATE_SLOTS; i++) {
		if (g->e[i].used && g->e[i].fd == fd) {
			was = g->e[i];
			drop(&g->e[i]);
		}
	}
	pthread_mutex_unlock(&g->lock);
	if (!was.closed)
		return false;
	ferry__why(why, whylen,
		   "closed in its handshake to make room: %d connections %s "
		   "were in theirs (the most %s); it had %s for %.1f s",
		   was.by_addr ? GATE_PER_ADDR : FERRY_SERVER_HANDSHAKES,
		   was.by_addr ? "from its address" : "in all",
		   was.by_addr ? "one address may hold" :
				 "the receiver holds",
		   was.spoke ? "not finished" : "sent nothing",
		   (double)was.age / 1e9);
	return true;
}
