/* The tcp transport through its ops table, over loopback: a receiver
 * thread opens, registers its ring, listens and accepts; the main thread
 * is the sender. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "cu.h"
#include "ferry/error.h"
#include "ferry/log.h"
#include "ferry/xport.h"
#include "xport/tcp/tcp.h" /* ferry__tcp_fault_built */

#define TMO_MS 2000
#define GUARD 4096     /* bytes after the ring, never registered */
#define GUARD_BYTE 0xee
#define HDR 24         /* frame header on a data stream */

static const struct ferry_xport_ops *ops;

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Count the transport's "dropped a data connection" warnings. */
static atomic_int dropped_logs;

static void log_cb(enum ferry_log_level level, const char *msg, void *arg)
{
	(void)arg;
	if (level == FERRY_LOG_WARN && strstr(msg, "dropped"))
		atomic_fetch_add(&dropped_logs, 1);
}

static struct ferry_xport_conf conf; /* the defaults: autotuned buffers */
static int pair_dscp = -1; /* the class loopback() gives both ends */

static void loopback(struct ferry_xport_attr *a, unsigned n_ep, int tmo)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)&a->addr;

	memset(a, 0, sizeof(*a));
	a->conf = &conf;
	a->dscp = pair_dscp;
	a->n_ep = n_ep;
	a->timeout_ms = tmo;
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a->addr_len = sizeof(*sin);
}

/* A connected receiver/sender pair. */
struct pair {
	unsigned n_ep;
	/* receiver */
	struct ferry_xport *rx;
	struct ferry_mr *ring_mr;
	uint8_t *ringbuf; /* ring_len bytes of ring, then GUARD bytes */
	size_t ring_len;
	uint8_t blob[FERRY_EP_MAX];
	size_t blob_len;
	int listen_rc, accept_rc;
	char why[256];
	sem_t listening;
	pthread_t thr;
	/* sender */
	struct ferry_xport *tx;
	struct ferry_mr *lmr;
	uint8_t *src;
	size_t src_len;
};

static void *rx_main(void *arg)
{
	struct pair *p = arg;
	struct ferry_xport_attr a;
	int err;

	loopback(&a, p->n_ep, TMO_MS);
	err = ops->open(&a, &p->rx, p->why, sizeof(p->why));
	if (!err)
		err = ops->reg_mem(p->rx, p->ringbuf, p->ring_len,
				   FERRY_ACCESS_REMOTE_WRITE, &p->ring_mr);
	if (!err) {
		p->blob_len = sizeof(p->blob);
		err = ops->listen(p->rx, p->ring_mr, p->blob, &p->blob_len,
				  p->why, sizeof(p->why));
	}
	p->listen_rc = err;
	sem_post(&p->listening);
	if (!err)
		p->accept_rc = ops->accept(p->rx, NULL, 0, p->why, sizeof(p->why));
	return NULL;
}

/* Start the receiver and wait for its blob. */
static int pair_listen(struct pair *p, unsigned n_ep, size_t ring_len)
{
	struct timespec dl;

	memset(p, 0, sizeof(*p));
	p->n_ep = n_ep;
	p->ring_len = ring_len;
	p->ringbuf = malloc(ring_len + GUARD);
	p->src_len = ring_len + GUARD;
	p->src = malloc(p->src_len);
	if (!p->ringbuf || !p->src)
		return -ENOMEM;
	memset(p->ringbuf, 0, ring_len);
	memset(p->ringbuf + ring_len, GUARD_BYTE, GUARD);
	for (size_t i = 0; i < p->src_len; i++)
		p->src[i] = (uint8_t)(i * 131 + (i >> 8) + 7);
	p->accept_rc = -EINPROGRESS;
	sem_init(&p->listening, 0, 0);
	if (pthread_create(&p->thr, NULL, rx_main, p))
		return -EAGAIN;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += 5;
	if (sem_timedwait(&p->listening, &dl))
		return -ETIMEDOUT;
	return p->listen_rc;
}

/* Connect the sender and wait for accept. */
static int pair_connect(struct pair *p)
{
	struct ferry_xport_attr a;
	char why[256] = "";
	int err;

	loopback(&a, p->n_ep, TMO_MS);
	err = ops->open(&a, &p->tx, why, sizeof(why));
	if (!err)
		err = ops->reg_mem(p->tx, p->src, p->src_len,
				   FERRY_ACCESS_LOCAL, &p->lmr);
	if (!err)
		err = ops->connect(p->tx, p->blob, p->blob_len, NULL, &(size_t){0}, why, sizeof(why));
	pthread_join(p->thr, NULL);
	p->thr = 0;
	if (err)
		fprintf(stderr, "\nconnect: %s (%s)\n", ferry_strerror(err), why);
	if (p->accept_rc)
		fprintf(stderr, "\naccept: %s (%s)\n",
			ferry_strerror(p->accept_rc), p->why);
	return err ? err : p->accept_rc;
}

static int pair_open(struct pair *p, unsigned n_ep, size_t ring_len)
{
	int err = pair_listen(p, n_ep, ring_len);

	return err ? err : pair_connect(p);
}

static void pair_close_tx(struct pair *p)
{
	if (p->tx) {
		ops->dereg_mem(p->tx, p->lmr);
		ops->close(p->tx);
		p->tx = NULL;
	}
}

static void pair_close_rx(struct pair *p)
{
	if (p->rx) {
		ops->dereg_mem(p->rx, p->ring_mr);
		ops->close(p->rx);
		p->rx = NULL;
	}
}

static void pair_close(struct pair *p)
{
	if (p->thr)
		pthread_join(p->thr, NULL);
	pair_close_tx(p);
	pair_close_rx(p);
	sem_destroy(&p->listening);
	free(p->ringbuf);
	free(p->src);
}

/* Collect exactly want completions on ep (or fewer on timeout/error). */
static int poll_n(struct ferry_xport *x, unsigned ep, struct ferry_wc *wc,
		  unsigned want)
{
	unsigned got = 0;

	while (got < want) {
		int n = ops->poll(x, ep, wc + got, want - got, TMO_MS);
		if (n <= 0)
			return got ? (int)got : n;
		got += (unsigned)n;
	}
	return (int)got;
}

static bool guard_intact(const struct pair *p)
{
	for (size_t i = 0; i < GUARD; i++)
		if (p->ringbuf[p->ring_len + i] != GUARD_BYTE)
			return false;
	return true;
}

static bool zero(const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (b[i])
			return false;
	return true;
}

/* ---- tests ---- */

static void test_ops_table(void)
{
	const struct ferry_xport_ops *const *l = ferry_xport_list();
	char why[128] = "";
	bool listed = false;

	CU_ASSERT_PTR_NOT_NULL_FATAL(ops);
	CU_ASSERT_EQUAL(ops->size, sizeof(struct ferry_xport_ops));
	CU_ASSERT_STRING_EQUAL(ops->name, "tcp");
	CU_ASSERT_PTR_NULL(ferry_xport_find("no-such-transport"));
	for (; *l; l++)
		listed |= *l == ops;
	CU_ASSERT(listed);
	CU_ASSERT_EQUAL(ops->probe(&conf, why, sizeof(why)), 0);
	CU_ASSERT(ops->open && ops->reg_mem && ops->dereg_mem && ops->listen &&
		  ops->accept && ops->connect && ops->post_write_imm &&
		  ops->post_send && ops->poll && ops->cancel && ops->close);
	ops->close(NULL);
}

/* Every transport in the build names a default poll mode it offers; the
 * resolver keeps offered modes, refuses the others with the reason. */
static void test_poll_modes(void)
{
	const struct ferry_xport_ops *const *l = ferry_xport_list();
	const struct ferry_xport_ops busy_only = {
		.name = "demo", .poll_modes = FERRY_POLL_BIT(FERRY_POLL_BUSY),
		.poll_default = FERRY_POLL_BUSY, .poll_why = "no interrupts",
	};
	char why[160] = "";

	for (; *l; l++) {
		CU_ASSERT((*l)->poll_modes & FERRY_POLL_BIT((*l)->poll_default));
		CU_ASSERT_EQUAL(ferry_xport_poll_mode(*l, FERRY_POLL_DEFAULT,
						      why, sizeof(why)),
				(*l)->poll_default);
	}
	CU_ASSERT_EQUAL(ferry_xport_poll_mode(ops, FERRY_POLL_DEFAULT, why,
					      sizeof(why)), FERRY_POLL_EVENT);
	CU_ASSERT_EQUAL(ferry_xport_poll_mode(ops, FERRY_POLL_BUSY, why,
					      sizeof(why)), FERRY_POLL_BUSY);
	CU_ASSERT_EQUAL(ferry_xport_poll_mode(&busy_only, FERRY_POLL_BUSY, why,
					      sizeof(why)), FERRY_POLL_BUSY);
	CU_ASSERT_EQUAL(ferry_xport_poll_mode(&busy_only, FERRY_POLL_EVENT, why,
					      sizeof(why)), -EINVAL);
	CU_ASSERT_STRING_EQUAL(why, "demo transport cannot poll in event mode: no interrupts");
	CU_ASSERT_EQUAL(ferry_xport_poll_mode(ops, 7, why, sizeof(why)), -EINVAL);
	CU_ASSERT_STRING_EQUAL(ferry_poll_name(FERRY_POLL_EVENT), "event");
	CU_ASSERT_STRING_EQUAL(ferry_poll_name(FERRY_POLL_BUSY), "busy");
}

static void test_setup_errors(void)
{
	struct ferry_xport_attr a;
	struct ferry_xport *x = NULL;
	struct ferry_mr *mr;
	uint8_t ring[4096], blob[FERRY_EP_MAX];
	size_t blen;
	char why[256] = "";

	loopback(&a, 0, TMO_MS);
	CU_ASSERT_EQUAL(ops->open(&a, &x, why, sizeof(why)), -EINVAL);
	CU_ASSERT(why[0] != 0);
	loopback(&a, 257, TMO_MS);
	CU_ASSERT_EQUAL(ops->open(&a, &x, why, sizeof(why)), -EINVAL);

	loopback(&a, 1, 200);
	CU_ASSERT_EQUAL_FATAL(ops->open(&a, &x, why, sizeof(why)), 0);
	/* a ring the peer may not write, and a blob buffer too small */
	CU_ASSERT_EQUAL_FATAL(ops->reg_mem(x, ring, sizeof(ring),
					   FERRY_ACCESS_LOCAL, &mr), 0);
	blen = sizeof(blob);
	CU_ASSERT_EQUAL(ops->listen(x, mr, blob, &blen, why, sizeof(why)),
			-EINVAL);
	ops->dereg_mem(x, mr);
	CU_ASSERT_EQUAL_FATAL(ops->reg_mem(x, ring, sizeof(ring),
					   FERRY_ACCESS_REMOTE_WRITE, &mr), 0);
	blen = 4;
	CU_ASSERT_EQUAL(ops->listen(x, mr, blob, &blen, why, sizeof(why)),
			-EINVAL);
	blen = sizeof(blob);
	CU_ASSERT_EQUAL_FATAL(ops->listen(x, mr, blob, &blen, why, sizeof(why)),
			      0);
	CU_ASSERT_EQUAL(blen, 20);
	CU_ASSERT_EQUAL(blob[2] << 8 | blob[3], 1);
	CU_ASSERT((blob[0] << 8 | blob[1]) != 0);

	/* nobody connects: accept gives up at the deadline */
	uint64_t t0 = now_ms();
	why[0] = 0;
	CU_ASSERT_EQUAL(ops->accept(x, NULL, 0, why, sizeof(why)), -FERRY_ETIMEOUT);
	uint64_t dt = now_ms() - t0;
	CU_ASSERT(dt >= 150 && dt < 1500);
	CU_ASSERT(why[0] != 0);

	/* a sender given a malformed blob */
	struct ferry_xport *s = NULL;
	loopback(&a, 1, 200);
	CU_ASSERT_EQUAL_FATAL(ops->open(&a, &s, why, sizeof(why)), 0);
	CU_ASSERT_EQUAL(ops->connect(s, blob, blen - 1, NULL, &(size_t){0}, why, sizeof(why)),
			-FERRY_EPROTO);
	CU_ASSERT_EQUAL(ops->connect(s, blob, blen + 1, NULL, &(size_t){0}, why, sizeof(why)),
			-FERRY_EPROTO);
	blob[3] = 2; /* n_ep differs */
	CU_ASSERT_EQUAL(ops->connect(s, blob, blen, NULL, &(size_t){0}, why, sizeof(why)),
			-FERRY_EPROTO);
	ops->close(s);
	ops->dereg_mem(x, mr);
	ops->close(x);
}

static void test_write_imm(void)
{
	struct pair p;
	struct ferry_wc wc[4];
	const size_t len = 5000, roff = 12345, loff = 777;

	CU_ASSERT_EQUAL_FATAL(pair_open(&p, 1, 64 * 1024), 0);

	CU_ASSERT_EQUAL(ops->post_write_imm(p.tx, 0, p.lmr, p.src + loff, len,
					    roff, 0xdeadbeefu, 77,
					    FERRY_POST_SIGNALED), 0);
	memset(wc, 0, sizeof(wc));
	CU_ASSERT_EQUAL_FATAL(poll_n(p.rx, 0, wc, 1), 1);
	CU_ASSERT_EQUAL(wc[0].op, FERRY_WC_WRITE_IMM);
	CU_ASSERT_EQUAL(wc[0].imm, 0xdeadbeefu);
	CU_ASSERT_EQUAL(wc[0].len, len);
	CU_ASSERT_EQUAL(wc[0].offset, roff);
	CU_ASSERT_EQUAL(memcmp(p.ringbuf + roff, p.src + loff, len), 0);
	CU_ASSERT(zero(p.ringbuf, roff));
	CU_ASSERT(zero(p.ringbuf + roff + len, p.ring_len - roff - len));
	CU_ASSERT(guard_intact(&p));

	/* the sender's completion carries its wr_id */
	memset(wc, 0, sizeof(wc));
	CU_ASSERT_EQUAL(ops->poll(p.tx, 0, wc, 4, 0), 1);
	CU_ASSERT_EQUAL(wc[0].op, FERRY_WC_WRITE);
	CU_ASSERT_EQUAL(wc[0].wr_id, 77);
	CU_ASSERT_EQUAL(ops->poll(p.tx, 0, wc, 4, 0), 0);

	/* unsignalled: lands, but no sender completion; imm 0 and len 0 */
	CU_ASSERT_EQUAL(ops->post_write_imm(p.tx, 0, p.lmr, p.src, 100, 0, 0,
					    78, 0), 0);
	CU_ASSERT_EQUAL(ops->post_write_imm(p.tx, 0, p.lmr, p.src, 0,
					    p.ring_len, 0xffffffffu, 79, 0), 0);
	CU_ASSERT_EQUAL_FATAL(poll_n(p.rx, 0, wc, 2), 2);
	CU_ASSERT_EQUAL(wc[0].op, FERRY_WC_WRITE_IMM);
	CU_ASSERT_EQUAL(wc[0].offset, 0);
	CU_ASSERT_EQUAL(wc[0].len, 100);
	CU_ASSERT_EQUAL(wc[0].imm, 0);
	CU_ASSERT_EQUAL(wc[1].op, FERRY_WC_WRITE_IMM);
	CU_ASSERT_EQUAL(wc[1].offset, p.ring_len);
	CU_ASSERT_EQUAL(wc[1].len, 0);
	CU_ASSERT_EQUAL(wc[1].imm, 0xffffffffu);
	CU_ASSERT_EQUAL(memcmp(p.ringbuf, p.src, 100), 0);
	CU_ASSERT_EQUAL(ops->poll(p.tx, 0, wc, 4, 0), 0);

	/* a write that exactly fills the ring's end */
	CU_ASSERT_EQUAL(ops->post_write_imm(p.tx, 0, p.lmr, p.src + 1, 4096,
					    p.ring_len - 4096, 5, 80,
					    FERRY_POST_SIGNALED), 0);
	CU_ASSERT_EQUAL_FATAL(poll_n(p.rx, 0, wc, 1), 1);
	CU_ASSERT_EQUAL(wc[0].offset, p.ring_len - 4096);
	CU_ASSERT_EQUAL(memcmp(p.ringbuf + p.ring_len - 4096, p.src + 1, 4096),
			0);
	CU_ASSERT(guard_intact(&p));
	CU_ASSERT_EQUAL(ops->poll(p.tx, 0, wc, 4, 0), 1);
	CU_ASSERT_EQUAL(wc[0].wr_id, 80);

	/* the local buffer must lie inside the local registration */
	CU_ASSERT_EQUAL(ops->post_write_imm(p.tx, 0, p.lmr, p.src - 1, 10, 0,
					    0, 0, 0), -EINVAL);
	CU_ASSERT_EQUAL(ops->post_write_imm(p.tx, 0, p.lmr,
					    p.src + p.src_len - 9, 10, 0, 0, 0,
					    0), -EINVAL);

	/* the completion queue is bounded: reap before posting more */
	int posted = 0, rc = 0;
	while (posted < 1000) {
		rc = ops->post_write_imm(p.tx, 0, p.lmr, p.src, 16,
					 (uint64_t)posted * 16, (uint32_t)posted,
					 1000 + (uint64_t)posted,
					 FERRY_POST_SIGNALED);
		if (rc)
			break;
		posted++;
	}
	CU_ASSERT_EQUAL(rc, -EAGAIN);
	CU_ASSERT(posted >= 1 && posted < 1000);
	struct ferry_wc *many = calloc((size_t)posted + 1, sizeof(*many));
	CU_ASSERT_PTR_NOT_NULL_FATAL(many);
	CU_ASSERT_EQUAL(ops->poll(p.tx, 0, many, (unsigned)posted + 1, 0),
			posted);
	for (int i = 0; i < posted; i++) {
		CU_ASSERT_EQUAL(many[i].op, FERRY_WC_WRITE);
		CU_ASSERT_EQUAL(many[i].wr_id, 1000 + (uint64_t)i);
	}
	CU_ASSERT_EQUAL(poll_n(p.rx, 0, many, (unsigned)posted), posted);
	for (int i = 0; i < posted; i++) {
		CU_ASSERT_EQUAL(many[i].imm, (uint32_t)i);
		CU_ASSERT_EQUAL(many[i].offset, (uint64_t)i * 16);
	}
	free(many);
	/* room again */
	CU_ASSERT_EQUAL(ops->post_write_imm(p.tx, 0, p.lmr, p.src, 16, 0, 0, 1,
					    FERRY_POST_SIGNALED), 0);
	CU_ASSERT_EQUAL(poll_n(p.rx, 0, wc, 1), 1);
	pair_close(&p);
}

/* Several endpoints: each write arrives on its own endpoint only. */
static void test_endpoints(void)
{
	struct pair p;
	struct ferry_wc wc[2];
	const unsigned n = 4;

	CU_ASSERT_EQUAL_FATAL(pair_open(&p, n, 64 * 1024), 0);
	for (unsigned e = 0; e < n; e++)
		CU_ASSERT_EQUAL(ops->post_write_imm(p.tx, e, p.lmr,
						    p.src + 100 * e, 1000,
						    1000 * e, 0x100 + e, e,
						    FERRY_POST_SIGNALED), 0);
	for (unsigned e = 0; e < n; e++) {
		CU_ASSERT_EQUAL_FATAL(poll_n(p.rx, e, wc, 1), 1);
		CU_ASSERT_EQUAL(wc[0].imm, 0x100 + e);
		CU_ASSERT_EQUAL(wc[0].offset, 1000 * e);
		CU_ASSERT_EQUAL(ops->poll(p.rx, e, wc, 2, 0), 0);
		CU_ASSERT_EQUAL(ops->poll(p.tx, e, wc, 2, 0), 1);
		CU_ASSERT_EQUAL(wc[0].wr_id, e);
	}
	for (unsigned e = 0; e < n; e++)
		CU_ASSERT_EQUAL(memcmp(p.ringbuf + 1000 * e, p.src + 100 * e,
				       1000), 0);
	pair_close(&p);
}

static void test_send(void)
{
	struct pair p;
	struct ferry_wc wc[4];
	uint8_t msg[FERRY_XPORT_MSG_MAX + 1];

	for (size_t i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)(0xa0 + i);
	CU_ASSERT_EQUAL_FATAL(pair_open(&p, 2, 16 * 1024), 0);

	/* sender -> receiver */
	CU_ASSERT_EQUAL(ops->post_send(p.tx, 1, msg, 16), 0);
	memset(wc, 0, sizeof(wc));
	CU_ASSERT_EQUAL_FATAL(poll_n(p.rx, 1, wc, 1), 1);
	CU_ASSERT_EQUAL(wc[0].op, FERRY_WC_RECV);
	CU_ASSERT_EQUAL(wc[0].len, 16);
	CU_ASSERT_EQUAL(memcmp(wc[0].msg, msg, 16), 0);
	CU_ASSERT_EQUAL(ops->poll(p.rx, 0, wc, 4, 0), 0);

	/* receiver -> sender (credits), largest allowed and empty */
	CU_ASSERT_EQUAL(ops->post_send(p.rx, 0, msg + 1, FERRY_XPORT_MSG_MAX),
			0);
	CU_ASSERT_EQUAL(ops->post_send(p.rx, 0, msg, 0), 0);
	memset(wc, 0, sizeof(wc));
	CU_ASSERT_EQUAL_FATAL(poll_n(p.tx, 0, wc, 2), 2);
	CU_ASSERT_EQUAL(wc[0].op, FERRY_WC_RECV);
	CU_ASSERT_EQUAL(wc[0].len, FERRY_XPORT_MSG_MAX);
	CU_ASSERT_EQUAL(memcmp(wc[0].msg, msg + 1, FERRY_XPORT_MSG_MAX), 0);
	CU_ASSERT_EQUAL(wc[1].op, FERRY_WC_RECV);
	CU_ASSERT_EQUAL(wc[1].len, 0);

	/* too big: refused, nothing sent */
	CU_ASSERT_EQUAL(ops->post_send(p.tx, 0, msg, FERRY_XPORT_MSG_MAX + 1),
			-EMSGSIZE);
	CU_ASSERT_EQUAL(ops->post_send(p.rx, 0, msg, FERRY_XPORT_MSG_MAX + 1),
			-EMSGSIZE);
	CU_ASSERT_EQUAL(ops->post_send(p.tx, 0, msg, SIZE_MAX), -EMSGSIZE);
	CU_ASSERT_EQUAL(ops->poll(p.rx, 0, wc, 4, 50), 0);
	CU_ASSERT_EQUAL(ops->poll(p.tx, 0, wc, 4, 50), 0);

	/* messages and writes on one endpoint arrive in order */
	CU_ASSERT_EQUAL(ops->post_write_imm(p.tx, 0, p.lmr, p.src, 64, 0, 1, 0,
					    0), 0);
	CU_ASSERT_EQUAL(ops->post_send(p.tx, 0, msg, 3), 0);
	CU_ASSERT_EQUAL(ops->post_write_imm(p.tx, 0, p.lmr, p.src, 64, 64, 2,
					    0, 0), 0);
	CU_ASSERT_EQUAL_FATAL(poll_n(p.rx, 0, wc, 3), 3);
	CU_ASSERT_EQUAL(wc[0].op, FERRY_WC_WRITE_IMM);
	CU_ASSERT_EQUAL(wc[0].imm, 1);
	CU_ASSERT_EQUAL(wc[1].op, FERRY_WC_RECV);
	CU_ASSERT_EQUAL(wc[1].len, 3);
	CU_ASSERT_EQUAL(wc[2].op, FERRY_WC_WRITE_IMM);
	CU_ASSERT_EQUAL(wc[2].imm, 2);
	pair_close(&p);
}

/* A write outside the ring fails on the receiver like a remote access
 * error, and nothing outside the ring is written. Each case needs a fresh
 * pair: after the error the stream is not usable. */
static void test_bounds(void)
{
	const size_t ring = 8192;
	const struct { uint64_t roff; size_t len; } bad[] = {
		{ ring - 10, 20 },
		{ ring - 4095, 4096 },
		{ ring, 1 },
		{ ring + 1, 0 },
		{ ring + 100, 50 },
		{ UINT64_MAX - 5, 10 },
		{ UINT64_MAX, 1 },
		{ 0, ring + 1 },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct pair p;
		struct ferry_wc wc[2];

		CU_ASSERT_EQUAL_FATAL(pair_open(&p, 1, ring), 0);
		CU_ASSERT_EQUAL(ops->post_write_imm(p.tx, 0, p.lmr, p.src,
						    bad[i].len, bad[i].roff, 9,
						    9, FERRY_POST_SIGNALED), 0);
		CU_ASSERT_EQUAL(ops->poll(p.rx, 0, wc, 2, TMO_MS),
				-FERRY_EBOUNDS);
		CU_ASSERT(zero(p.ringbuf, p.ring_len));
		CU_ASSERT(guard_intact(&p));
		pair_close(&p);
	}
}

/* Raw TCP to the receiver's data port, as a stranger would. */
static int raw_connect(const uint8_t *blob)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct timeval tv = { .tv_sec = 2 * TMO_MS / 1000 };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0)
		return -1;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = htons((uint16_t)(blob[0] << 8 | blob[1]));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Send hello (len bytes of it) and wait until the receiver hangs up. */
static bool rejected(const uint8_t *blob, const uint8_t *hello, size_t len)
{
	uint8_t b;
	int fd = raw_connect(blob);
	bool ok;

	if (fd < 0)
		return false;
	if (len && send(fd, hello, len, MSG_NOSIGNAL) != (ssize_t)len) {
		close(fd);
		return false;
	}
	/* EOF after the hello, so a short one is not waited on */
	shutdown(fd, SHUT_WR);
	ssize_t n = recv(fd, &b, 1, 0);
	ok = n == 0 || (n < 0 && errno == ECONNRESET);
	close(fd);
	return ok;
}

static void hello_for(uint8_t *h, const uint8_t *blob, uint32_t idx)
{
	memcpy(h, blob + 4, 16);
	h[16] = (uint8_t)(idx >> 24);
	h[17] = (uint8_t)(idx >> 16);
	h[18] = (uint8_t)(idx >> 8);
	h[19] = (uint8_t)idx;
}

static void test_bad_token(void)
{
	struct pair p;
	struct ferry_wc wc[2];
	uint8_t h[20];

	atomic_store(&dropped_logs, 0);
	CU_ASSERT_EQUAL_FATAL(pair_listen(&p, 2, 16 * 1024), 0);
	CU_ASSERT_EQUAL_FATAL(p.blob_len, 20);

	/* a wrong token (one bit off), for a valid index */
	hello_for(h, p.blob, 0);
	h[5] ^= 0x10;
	CU_ASSERT(rejected(p.blob, h, sizeof(h)));
	/* the right token, an index out of range */
	hello_for(h, p.blob, 2);
	CU_ASSERT(rejected(p.blob, h, sizeof(h)));
	hello_for(h, p.blob, 0x01000000u);
	CU_ASSERT(rejected(p.blob, h, sizeof(h)));
	/* a short hello, then EOF; and no hello at all */
	hello_for(h, p.blob, 1);
	CU_ASSERT(rejected(p.blob, h, 19));
	CU_ASSERT(rejected(p.blob, h, 0));
	CU_ASSERT_EQUAL(atomic_load(&dropped_logs), 5);

	/* the real sender still gets in, and both streams work */
	CU_ASSERT_EQUAL_FATAL(pair_connect(&p), 0);
	for (unsigned e = 0; e < 2; e++) {
		CU_ASSERT_EQUAL(ops->post_write_imm(p.tx, e, p.lmr, p.src, 32,
						    32 * e, e + 1, 0, 0), 0);
		CU_ASSERT_EQUAL_FATAL(poll_n(p.rx, e, wc, 1), 1);
		CU_ASSERT_EQUAL(wc[0].imm, e + 1);
	}
	CU_ASSERT_EQUAL(memcmp(p.ringbuf + 32, p.src, 32), 0);
	pair_close(&p);
}

/* The frame header's bytes, both ways, against a hand-built stream: a
 * WRITE from a raw sender lands where its header says, and a SEND from
 * the receiver arrives as these 24 bytes and the message. */
static void test_frame_bytes(void)
{
	static const uint8_t write_hdr[HDR] = {
		'F', 'T', 'R', 'W',                     /* type WRITE, LE */
		0x44, 0x33, 0x22, 0x11,                 /* imm 0x11223344 */
		0x00, 0x01, 0, 0, 0, 0, 0, 0,           /* off 256 */
		0x05, 0, 0, 0,                          /* len 5 */
		0, 0, 0, 0,                             /* reserved */
	};
	static const uint8_t send_hdr[HDR] = {
		'F', 'T', 'R', 'S', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		0x03, 0, 0, 0, 0, 0, 0, 0,
	};
	uint8_t h[20], got[HDR + 3];
	struct ferry_wc wc[1];
	struct pair p;
	size_t n = 0;
	int fd;

	CU_ASSERT_EQUAL_FATAL(pair_listen(&p, 1, 4096), 0);
	fd = raw_connect(p.blob);
	CU_ASSERT_FATAL(fd >= 0);
	hello_for(h, p.blob, 0);
	CU_ASSERT_EQUAL(send(fd, h, sizeof(h), MSG_NOSIGNAL), 20);
	pthread_join(p.thr, NULL);
	p.thr = 0;
	CU_ASSERT_EQUAL_FATAL(p.accept_rc, 0);

	CU_ASSERT_EQUAL(send(fd, write_hdr, HDR, MSG_NOSIGNAL), HDR);
	CU_ASSERT_EQUAL(send(fd, "abcde", 5, MSG_NOSIGNAL), 5);
	CU_ASSERT_EQUAL_FATAL(poll_n(p.rx, 0, wc, 1), 1);
	CU_ASSERT_EQUAL(wc[0].op, FERRY_WC_WRITE_IMM);
	CU_ASSERT_EQUAL(wc[0].imm, 0x11223344u);
	CU_ASSERT_EQUAL(wc[0].offset, 256);
	CU_ASSERT_EQUAL(wc[0].len, 5);
	CU_ASSERT_EQUAL(memcmp(p.ringbuf + 256, "abcde", 5), 0);

	CU_ASSERT_EQUAL(ops->post_send(p.rx, 0, "xyz", 3), 0);
	while (n < sizeof(got)) {
		ssize_t r = recv(fd, got + n, sizeof(got) - n, 0);

		if (r <= 0)
			break;
		n += (size_t)r;
	}
	CU_ASSERT_EQUAL(n, sizeof(got));
	CU_ASSERT_EQUAL(memcmp(got, send_hdr, HDR), 0);
	CU_ASSERT_EQUAL(memcmp(got + HDR, "xyz", 3), 0);
	close(fd);
	pair_close(&p);
}

static void test_timeout_and_close(void)
{
	struct pair p;
	struct ferry_wc wc[2];
	uint64_t t0, dt;

	CU_ASSERT_EQUAL_FATAL(pair_open(&p, 2, 16 * 1024), 0);
	/* nothing to reap: 0 at once, or 0 after the timeout */
	t0 = now_ms();
	CU_ASSERT_EQUAL(ops->poll(p.rx, 0, wc, 2, 0), 0);
	CU_ASSERT_EQUAL(ops->poll(p.tx, 1, wc, 2, 0), 0);
	CU_ASSERT(now_ms() - t0 < 100);
	t0 = now_ms();
	CU_ASSERT_EQUAL(ops->poll(p.rx, 1, wc, 2, 100), 0);
	dt = now_ms() - t0;
	CU_ASSERT(dt >= 90 && dt < 1000);

	/* the sender goes away: the receiver hears it on every endpoint */
	pair_close_tx(&p);
	CU_ASSERT_EQUAL(ops->poll(p.rx, 0, wc, 2, TMO_MS), -FERRY_ECLOSED);
	CU_ASSERT_EQUAL(ops->poll(p.rx, 1, wc, 2, TMO_MS), -FERRY_ECLOSED);
	pair_close(&p);

	/* the receiver goes away: the sender's polls and posts fail */
	CU_ASSERT_EQUAL_FATAL(pair_open(&p, 1, 16 * 1024), 0);
	pair_close_rx(&p);
	CU_ASSERT_EQUAL(ops->poll(p.tx, 0, wc, 2, TMO_MS), -FERRY_ECLOSED);
	int rc = 0;
	for (int i = 0; i < 100 && rc == 0; i++) {
		rc = ops->post_send(p.tx, 0, "x", 1);
		if (!rc)
			usleep(1000);
	}
	CU_ASSERT_EQUAL(rc, -FERRY_ECLOSED);
	pair_close(&p);
}

struct blocked {
	struct ferry_xport *x;
	unsigned ep;
	int rc;
	uint64_t returned_ms;
};

static void *poll_forever(void *arg)
{
	struct blocked *b = arg;
	struct ferry_wc wc[2];

	b->rc = ops->poll(b->x, b->ep, wc, 2, -1);
	b->returned_ms = now_ms();
	return NULL;
}

static void test_cancel(void)
{
	struct pair p;
	struct ferry_wc wc[2];
	struct blocked b[2];
	pthread_t t[2];
	uint64_t t0;

	CU_ASSERT_EQUAL_FATAL(pair_open(&p, 2, 16 * 1024), 0);
	/* two workers block forever on the receiver's endpoints */
	for (unsigned i = 0; i < 2; i++) {
		b[i] = (struct blocked){ p.rx, i, 1, 0 };
		CU_ASSERT_EQUAL_FATAL(pthread_create(&t[i], NULL, poll_forever,
						     &b[i]), 0);
	}
	usleep(100 * 1000);
	CU_ASSERT_EQUAL(b[0].returned_ms, 0);
	CU_ASSERT_EQUAL(b[1].returned_ms, 0);
	t0 = now_ms();
	ops->cancel(p.rx);
	for (unsigned i = 0; i < 2; i++) {
		pthread_join(t[i], NULL);
		CU_ASSERT_EQUAL(b[i].rc, -ECANCELED);
		CU_ASSERT(b[i].returned_ms - t0 < 500);
	}
	/* later posts and polls fail the same way */
	CU_ASSERT_EQUAL(ops->poll(p.rx, 0, wc, 2, TMO_MS), -ECANCELED);
	CU_ASSERT_EQUAL(ops->poll(p.rx, 1, wc, 2, 0), -ECANCELED);
	CU_ASSERT_EQUAL(ops->post_send(p.rx, 0, "c", 1), -ECANCELED);

	/* the sender side: cancelled posts fail at once */
	ops->cancel(p.tx);
	CU_ASSERT_EQUAL(ops->post_write_imm(p.tx, 0, p.lmr, p.src, 8, 0, 0, 0,
					    FERRY_POST_SIGNALED), -ECANCELED);
	CU_ASSERT_EQUAL(ops->post_send(p.tx, 1, "c", 1), -ECANCELED);
	CU_ASSERT_EQUAL(ops->poll(p.tx, 0, wc, 2, TMO_MS), -ECANCELED);
	pair_close(&p);
}

struct big_post {
	struct ferry_xport *x;
	struct ferry_mr *mr;
	const uint8_t *buf;
	size_t len;
	int rc;
	uint64_t returned_ms;
};

static void *post_big(void *arg)
{
	struct big_post *b = arg;

	b->rc = ops->post_write_imm(b->x, 0, b->mr, b->buf, b->len, 0, 0, 0,
				    FERRY_POST_SIGNALED);
	b->returned_ms = now_ms();
	return NULL;
}

/* A sender blocked in a post (the receiver is not reading and the socket
 * buffers are full) is woken by cancel, well before the stream timeout. */
static void test_cancel_blocked_post(void)
{
	struct pair p;
	struct big_post b = { .len = 256u << 20, .rc = 1 };
	pthread_t t;
	uint64_t t0;

	CU_ASSERT_EQUAL_FATAL(pair_open(&p, 1, 4096), 0);
	b.x = p.tx;
	b.buf = calloc(1, b.len); /* zero pages (memcheck: defined bytes) */
	CU_ASSERT_PTR_NOT_NULL_FATAL(b.buf);
	CU_ASSERT_EQUAL_FATAL(ops->reg_mem(p.tx, (void *)b.buf, b.len,
					   FERRY_ACCESS_LOCAL, &b.mr), 0);
	CU_ASSERT_EQUAL_FATAL(pthread_create(&t, NULL, post_big, &b), 0);
	usleep(200 * 1000);
	CU_ASSERT_EQUAL(b.returned_ms, 0); /* still blocked */
	t0 = now_ms();
	ops->cancel(p.tx);
	pthread_join(t, NULL);
	CU_ASSERT_EQUAL(b.rc, -ECANCELED);
	CU_ASSERT(b.returned_ms - t0 < TMO_MS / 2);
	ops->dereg_mem(p.tx, b.mr);
	free((void *)b.buf);
	pair_close(&p);
}

/* The fault hook flips one bit of endpoint 0's byte stream at stream byte
 * N; the 20-byte hello is not counted, frames (24-byte header, payload)
 * are. Checks that exactly that bit of the landed payload differs. */
static void flip_case(uint64_t n_at, bool send_first)
{
	struct pair p;
	struct ferry_wc wc[4];
	char env[32];
	const size_t len1 = 1000, len2 = 4096;
	const size_t roff1 = 0, roff2 = 8192;
	uint64_t pos = 0;

	snprintf(env, sizeof(env), "%llu", (unsigned long long)n_at);
	/* set before either side opens (the receiver thread reads it too) */
	CU_ASSERT_EQUAL_FATAL(setenv("FERRY_FAULT_TCP_FLIP_AT", env, 1), 0);
	int err = pair_listen(&p, 2, 64 * 1024);
	if (!err)
		err = pair_connect(&p);
	unsetenv("FERRY_FAULT_TCP_FLIP_AT");
	CU_ASSERT_EQUAL_FATAL(err, 0);

	uint8_t *orig = malloc(p.src_len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(orig);
	memcpy(orig, p.src, p.src_len);

	/* traffic on endpoint 1 does not count */
	CU_ASSERT_EQUAL(ops->post_write_imm(p.tx, 1, p.lmr, p.src, 2000,
					    32768, 0, 0, 0), 0);
	CU_ASSERT_EQUAL(ops->post_send(p.tx, 1, "abc", 3), 0);
	if (send_first) {
		CU_ASSERT_EQUAL(ops->post_send(p.tx, 0, "0123456789", 10), 0);
		pos += HDR + 10;
	}
	CU_ASSERT_EQUAL(ops->post_write_imm(p.tx, 0, p.lmr, p.src + 3, len1,
					    roff1, 1, 1, 0), 0);
	uint64_t pay1 = pos + HDR;
	pos = pay1 + len1;
	CU_ASSERT_EQUAL(ops->post_write_imm(p.tx, 0, p.lmr, p.src + 5, len2,
					    roff2, 2, 2, 0), 0);
	uint64_t pay2 = pos + HDR;
	pos = pay2 + len2;
	/* a third write after the flip is untouched (the hook fires once) */
	CU_ASSERT_EQUAL(ops->post_write_imm(p.tx, 0, p.lmr, p.src + 5, len2,
					    roff2 + len2, 3, 3, 0), 0);

	int want = send_first ? 4 : 3;
	CU_ASSERT_EQUAL_FATAL(poll_n(p.rx, 0, wc, (unsigned)want), want);
	CU_ASSERT_EQUAL_FATAL(poll_n(p.rx, 1, wc, 2), 2);
	CU_ASSERT_EQUAL(wc[1].op, FERRY_WC_RECV);
	CU_ASSERT_EQUAL(memcmp(wc[1].msg, "abc", 3), 0);
	CU_ASSERT_EQUAL(memcmp(p.ringbuf + 32768, p.src, 2000), 0);
	/* the sender's buffer is never modified */
	CU_ASSERT_EQUAL(memcmp(orig, p.src, p.src_len), 0);

	/* every landed byte equals its source but one, which differs in
	 * exactly one bit */
	struct { const uint8_t *got, *sent; size_t len; uint64_t at; } w[] = {
		{ p.ringbuf + roff1, p.src + 3, len1, pay1 },
		{ p.ringbuf + roff2, p.src + 5, len2, pay2 },
		{ p.ringbuf + roff2 + len2, p.src + 5, len2, UINT64_MAX },
	};
	unsigned flipped_bits = 0;
	for (size_t k = 0; k < 3; k++) {
		for (size_t i = 0; i < w[k].len; i++) {
			uint8_t x = w[k].got[i] ^ w[k].sent[i];
			if (!x)
				continue;
			flipped_bits += (unsigned)__builtin_popcount(x);
			CU_ASSERT_EQUAL(w[k].at + i, n_at);
			CU_ASSERT_EQUAL(__builtin_popcount(x), 1);
		}
	}
	CU_ASSERT_EQUAL(flipped_bits, 1);
	free(orig);
	pair_close(&p);
}

static void test_fault_flip(void)
{
	if (!ferry__tcp_fault_built()) {
		printf("\n  (skipped: a build without test hooks has no fault hook)");
		return;
	}
	/* first payload byte of the first frame: 24 */
	flip_case(HDR, false);
	/* last payload byte of the first write */
	flip_case(HDR + 1000 - 1, false);
	/* in the middle of the second write, after a message */
	flip_case((HDR + 10) + (HDR + 1000) + HDR + 1234, true);
	/* the first and last payload bytes of the second write */
	flip_case((HDR + 1000) + HDR, false);
	flip_case((HDR + 1000) + HDR + 4096 - 1, false);
}

/* The DS field of a data stream's packets, as its socket will write it
 * (IPv4: IP_TOS; TCP may add ECN bits, the low two). */
static int dscp_of(int fd)
{
	int tos = -1;
	socklen_t l = sizeof(tos);

	if (getsockopt(fd, IPPROTO_IP, IP_TOS, &tos, &l) < 0)
		return -1;
	return tos >> 2;
}

/* The session's DSCP marks every data stream at both ends, and a session
 * without one leaves the system's default (0); one over 63 is refused. */
static void test_dscp(void)
{
	struct ferry_xport_attr a;
	struct ferry_xport *x = NULL;
	struct pair p;
	char why[256] = "";

	pair_dscp = 10;
	CU_ASSERT_EQUAL_FATAL(pair_open(&p, 3, 64 << 10), 0);
	for (unsigned i = 0; i < 3; i++) {
		CU_ASSERT_EQUAL(dscp_of(p.tx->ep[i].fd), 10);
		CU_ASSERT_EQUAL(dscp_of(p.rx->ep[i].fd), 10);
	}
	pair_close(&p);

	pair_dscp = -1;
	CU_ASSERT_EQUAL_FATAL(pair_open(&p, 2, 64 << 10), 0);
	for (unsigned i = 0; i < 2; i++) {
		CU_ASSERT_EQUAL(dscp_of(p.tx->ep[i].fd), 0);
		CU_ASSERT_EQUAL(dscp_of(p.rx->ep[i].fd), 0);
	}
	pair_close(&p);

	loopback(&a, 1, TMO_MS);
	a.dscp = FERRY_DSCP_MAX + 1;
	CU_ASSERT_EQUAL(ops->open(&a, &x, why, sizeof(why)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "DSCP 64"));
}

int main(void)
{
	CU_TestInfo tests[] = {
		{ "ops table", test_ops_table },
		{ "poll modes", test_poll_modes },
		{ "setup errors", test_setup_errors },
		{ "write with immediate", test_write_imm },
		{ "several endpoints", test_endpoints },
		{ "small messages", test_send },
		{ "writes outside the ring", test_bounds },
		{ "connections with a bad token are dropped", test_bad_token },
		{ "frame header bytes", test_frame_bytes },
		{ "poll timeout and peer close", test_timeout_and_close },
		{ "cancel", test_cancel },
		{ "cancel wakes a blocked post", test_cancel_blocked_post },
		{ "fault hook flips one bit", test_fault_flip },
		{ "the session's DSCP on every data stream", test_dscp },
		CU_TEST_INFO_NULL,
	};

	ops = ferry_xport_find("tcp");
	ferry_log_set(log_cb, NULL, FERRY_LOG_WARN);
	unsetenv("FERRY_FAULT_TCP_FLIP_AT");
	return ferry_cu_run("xport_tcp", tests);
}
