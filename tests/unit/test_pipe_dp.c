/* The sender's stream worker (lib/pipe/pipe_dp.c) against a slow fake
 * link: its waits for the receiver (a stall for credits, the final drain)
 * give up only when nothing has moved for the session timeout, however
 * long the whole wait takes; a peer that goes silent still ends the
 * stream within about one timeout; one stream that hears nothing while
 * the peer answers on the others waits longer, within a bound.
 *
 * The fake transport completes writes and returns credits one event at a
 * time, an event every GAP_MS of real time, so a ring of DEPTH slots takes
 * DEPTH x GAP_MS to drain: several session timeouts. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cu.h"
#include "ferry/chunk.h"
#include "ferry/error.h"
#include "pipe/credit.h"
#include "pipe/pipe.h"
#include "util/util.h"

#define DEPTH 8
#define CHUNK 4096u
#define GAP_MS 15
#define TIMEOUT_MS 50 /* DEPTH x GAP_MS = 120 ms to drain a full ring */

/* What the fake link does with the writes it gets. */
enum pace {
	CREDITS_PACED,   /* a write completes at once; a credit per GAP_MS */
	WRITES_PACED,    /* a write completes per GAP_MS; credits come only
			    when no write is outstanding, all in one */
	SILENT_AFTER,    /* as CREDITS_PACED, then nothing after `quiet_at`
			    credits */
	SILENT_SPELL,    /* as SILENT_AFTER for `spell_ms`, then on again */
};

static struct fake {
	enum pace pace;
	uint64_t posted, completed, reported, credited, quiet_at;
	uint64_t next_ns, spell_ms, spell_end;
	struct ferry_credit_rx rx;
} L;

static int fake_write(struct ferry_xport *x, unsigned ep, struct ferry_mr *lmr,
		      const void *laddr, size_t len, uint64_t roff,
		      uint32_t imm, uint64_t wr_id, unsigned flags)
{
	(void)x; (void)ep; (void)lmr; (void)laddr; (void)len; (void)roff;
	(void)flags;
	CU_ASSERT_EQUAL(wr_id, L.posted);
	CU_ASSERT_EQUAL(imm, L.posted % DEPTH);
	CU_ASSERT_EQUAL(ferry__credit_rx_land(&L.rx, imm), 0);
	L.posted++;
	if (L.pace != WRITES_PACED)
		L.completed = L.posted;
	return 0;
}

/* One event when it is due: a write's completion or a credit. */
static int fake_event(struct ferry_wc *wc)
{
	if (L.pace == WRITES_PACED && L.completed < L.posted) {
		wc->op = FERRY_WC_WRITE;
		wc->wr_id = L.completed++;
		L.reported = L.completed;
		return 1;
	}
	if (L.pace == SILENT_AFTER && L.credited >= L.quiet_at)
		return 0;
	if (L.pace == SILENT_SPELL && L.credited >= L.quiet_at) {
		if (!L.spell_end)
			L.spell_end = ferry__now_ns() + L.spell_ms * 1000000ull;
		if (ferry__now_ns() < L.spell_end)
			return 0;
	}
	if (L.credited < L.completed) {
		uint64_t n = L.pace == WRITES_PACED ? L.completed - L.credited : 1;

		for (uint64_t i = 0; i < n; i++)
			ferry__credit_rx_release(&L.rx);
		L.credited += n;
		wc->op = FERRY_WC_RECV;
		wc->len = FERRY__CREDIT_MSG_LEN;
		ferry__credit_rx_encode(&L.rx, wc->msg);
		return 1;
	}
	return 0;
}

static int fake_poll(struct ferry_xport *x, unsigned ep, struct ferry_wc *wc,
		     unsigned max, int timeout_ms)
{
	uint64_t now = ferry__now_ns();

	(void)x; (void)ep; (void)max;
	if (L.reported < L.completed) { /* completions at once: no pacing */
		wc->op = FERRY_WC_WRITE;
		wc->wr_id = L.completed - 1; /* cumulative */
		L.reported = L.completed;
		return 1;
	}
	if (now < L.next_ns) {
		uint64_t wait = L.next_ns - now;

		if (wait > (uint64_t)timeout_ms * 1000000ull)
			wait = (uint64_t)timeout_ms * 1000000ull;
		nanosleep(&(struct timespec){ .tv_sec = (time_t)(wait / 1000000000ull),
					      .tv_nsec = (long)(wait % 1000000000ull) },
			  NULL);
		if (ferry__now_ns() < L.next_ns)
			return 0;
	}
	if (!fake_event(wc))
		return 0;
	L.next_ns = ferry__now_ns() + GAP_MS * 1000000ull;
	return 1;
}

static const struct ferry_xport_ops fake_ops = {
	.size = sizeof(struct ferry_xport_ops),
	.name = "fake",
	.post_write_imm = fake_write,
	.poll = fake_poll,
};

static uint8_t ring[DEPTH * (FERRY_CHUNK_HDR_SPACE + CHUNK)];

/* The session's other streams, hearing from the peer all along: the
 * pipeline's heard_ns kept fresh while `others` runs. */
static struct ferry__pipe P;
static atomic_bool others_stop;
/* the session timeout of the next run: the tests with other streams use
 * a longer one than TIMEOUT_MS, so that the helper thread keeps heard_ns
 * fresh well within it on a loaded host */
static int run_timeout_ms = TIMEOUT_MS;
#define ALIVE_TIMEOUT_MS 250

static void *others(void *arg)
{
	(void)arg;
	while (!atomic_load(&others_stop)) {
		atomic_store(&P.heard_ns, ferry__now_ns());
		nanosleep(&(struct timespec){ .tv_nsec = 5000000 }, NULL);
	}
	return NULL;
}

/* Run one stream of `chunks` chunks to its end on the fake link, with
 * the peer answering on other streams or not; the stream's error (0 if
 * none) and, in ms, how long it ran. */
static int run_ex(enum pace pace, uint64_t chunks, uint64_t quiet_at,
		  bool others_alive, struct ferry__stream *s, double *ms)
{
	struct ferry__pipe *p = &P;
	pthread_t th;
	uint64_t t0;

	memset(&L, 0, sizeof(L));
	L.pace = pace;
	L.quiet_at = quiet_at;
	L.spell_ms = 3 * (uint64_t)run_timeout_ms;
	ferry__credit_rx_init(&L.rx, 0, DEPTH);
	memset(p, 0, sizeof(*p));
	p->role = FERRY__SENDER;
	p->dp = &ferry__bench_dp;
	p->ops = &fake_ops;
	p->base = ring;
	p->chunk = CHUNK;
	p->stride = FERRY_CHUNK_HDR_SPACE + CHUNK;
	p->streams = 1;
	p->depth = p->slots = DEPTH;
	p->timeout_ms = run_timeout_ms;
	p->budget = chunks * CHUNK;
	atomic_init(&p->running, 1);
	memset(s, 0, sizeof(*s));
	s->p = p;
	atomic_store(&others_stop, false);
	if (others_alive)
		CU_ASSERT_EQUAL_FATAL(pthread_create(&th, NULL, others, NULL), 0);
	t0 = ferry__now_ns();
	ferry__send_worker(s);
	*ms = (double)(ferry__now_ns() - t0) / 1e6;
	atomic_store(&others_stop, true);
	if (others_alive)
		pthread_join(th, NULL);
	return s->err;
}

static int run(enum pace pace, uint64_t chunks, uint64_t quiet_at,
	       struct ferry__stream *s, double *ms)
{
	return run_ex(pace, chunks, quiet_at, false, s, ms);
}

/* Credits come back one per GAP_MS: the stalls (ring full) and the final
 * drain each last longer than the timeout, with progress throughout. */
static void test_slow_credits_complete(void)
{
	struct ferry__stream s;
	double ms;

	CU_ASSERT_EQUAL(run(CREDITS_PACED, 3 * DEPTH, 0, &s, &ms), 0);
	CU_ASSERT_EQUAL(atomic_load(&s.chunks), 3 * DEPTH);
	CU_ASSERT_EQUAL(L.credited, 3 * DEPTH);
	/* the drain alone took several timeouts: the case this is about */
	CU_ASSERT(ms > 2.0 * TIMEOUT_MS);
	CU_ASSERT(atomic_load(&s.stalls) > 0);
}

/* Write completions are progress too: the link is slow to complete the
 * writes, and the receiver's credits come only after all of them, so a
 * stall (ring full) and the drain each see nothing but completions for
 * longer than the timeout. */
static void test_slow_completions_complete(void)
{
	struct ferry__stream s;
	double ms;

	CU_ASSERT_EQUAL(run(WRITES_PACED, 2 * DEPTH, 0, &s, &ms), 0);
	CU_ASSERT_EQUAL(atomic_load(&s.chunks), 2 * DEPTH);
	CU_ASSERT_EQUAL(L.completed, 2 * DEPTH);
	CU_ASSERT_EQUAL(L.credited, 2 * DEPTH);
	CU_ASSERT(ms > 4.0 * TIMEOUT_MS);
	CU_ASSERT(atomic_load(&s.stalls) > 0);
}

/* A peer that stops answering: the stream fails with a timeout, one
 * timeout after the last credit (not after the whole wait began), naming
 * how far it got. */
static void test_silent_peer_times_out(void)
{
	struct ferry__stream s;
	double ms;

	CU_ASSERT_EQUAL(run(SILENT_AFTER, 3 * DEPTH, DEPTH + 3, &s, &ms),
			-FERRY_ETIMEOUT);
	CU_ASSERT_EQUAL(L.credited, DEPTH + 3);
	CU_ASSERT_PTR_NOT_NULL(strstr(s.why, "after 11 chunks acknowledged"));
	/* the first credit comes at once, then (DEPTH + 2) gaps of progress,
	 * then one timeout of silence; a generous upper bound for a loaded
	 * machine */
	CU_ASSERT(ms >= (DEPTH + 2) * GAP_MS + TIMEOUT_MS - 5);
	CU_ASSERT(ms < (DEPTH + 3) * GAP_MS + TIMEOUT_MS + 2000);
}

/* One stream silent for three timeouts while the peer answers on the
 * others (TCP retrying after a loss burst): it waits and completes. The
 * same spell with the peer silent everywhere ends the session. */
static void test_one_silent_stream_waits(void)
{
	struct ferry__stream s;
	double ms;

	run_timeout_ms = ALIVE_TIMEOUT_MS;
	CU_ASSERT_EQUAL(run_ex(SILENT_SPELL, 3 * DEPTH, DEPTH + 3, true, &s,
			       &ms), 0);
	CU_ASSERT_EQUAL(atomic_load(&s.chunks), 3 * DEPTH);
	CU_ASSERT(ms > 3.0 * ALIVE_TIMEOUT_MS);
	CU_ASSERT_EQUAL(run_ex(SILENT_SPELL, 3 * DEPTH, DEPTH + 3, false, &s,
			       &ms), -FERRY_ETIMEOUT);
	run_timeout_ms = TIMEOUT_MS;
}

/* ... but not for ever: FERRY__STALL_ALIVE timeouts at most. */
static void test_one_silent_stream_bounded(void)
{
	struct ferry__stream s;
	double ms;

	run_timeout_ms = ALIVE_TIMEOUT_MS;
	CU_ASSERT_EQUAL(run_ex(SILENT_AFTER, 3 * DEPTH, DEPTH + 3, true, &s,
			       &ms), -FERRY_ETIMEOUT);
	CU_ASSERT(ms >= (DEPTH + 2) * GAP_MS +
			       FERRY__STALL_ALIVE * ALIVE_TIMEOUT_MS - 5);
	CU_ASSERT(ms < (DEPTH + 3) * GAP_MS +
			       FERRY__STALL_ALIVE * ALIVE_TIMEOUT_MS + 2000);
	run_timeout_ms = TIMEOUT_MS;
}

int main(void)
{
	CU_TestInfo tests[] = {
		{ "slow credits: stalls and drain longer than the timeout complete",
		  test_slow_credits_complete },
		{ "slow write completions count as progress",
		  test_slow_completions_complete },
		{ "a silent peer still times out, one timeout after its last credit",
		  test_silent_peer_times_out },
		{ "one silent stream waits while the peer answers on the others",
		  test_one_silent_stream_waits },
		{ "... for a bounded time", test_one_silent_stream_bounded },
		CU_TEST_INFO_NULL,
	};
	return ferry_cu_run("pipe_dp", tests);
}
