/* The stream ramp (lib/pipe/ramp.h) on a simulated path and clock: tcp
 * streams that each carry at most a window per round trip after a slow
 * start, behind a bottleneck of a given rate, sampled as the sender's
 * control loop samples them (every 20 ms). The ramp must find the stream
 * count the bottleneck can use, use every stream where each one pays,
 * hold where there is loss, and wait out each step's slow start. */
#include <string.h>

#include "cu.h"
#include "pipe/ramp.h"

#define MS 1000000ull
#define RTT_S 0.1
#define PER_STREAM 12.5e6 /* B/s: a 1.25 MB window per 100 ms */
#define IW_RATE 0.145e6  /* B/s: ten segments per 100 ms */

struct path {
	double cap;          /* the bottleneck, B/s */
	double loss;         /* retransmitted segments per segment sent */
	uint64_t start_ns[64]; /* when each stream began to carry data */
	unsigned started;
	double acked, retx;
};

/* One stream's rate t_ns after it began: doubling per round trip from
 * ten segments up to its window. */
static double stream_rate(uint64_t t_ns)
{
	double r = IW_RATE;

	for (double t = (double)t_ns / 1e9; t >= RTT_S && r < PER_STREAM;
	     t -= RTT_S)
		r *= 2;
	return r < PER_STREAM ? r : PER_STREAM;
}

/* Run the ramp over the path for secs; returns the final count. */
static unsigned run(struct ferry__ramp *r, struct path *pa, double secs,
		    unsigned *changes)
{
	uint64_t now = 0, step = 20 * MS;

	*changes = 0;
	for (; now < (uint64_t)(secs * 1e9); now += step) {
		double sum = 0;

		while (pa->started < r->active)
			pa->start_ns[pa->started++] = now;
		for (unsigned i = 0; i < r->active; i++)
			sum += stream_rate(now - pa->start_ns[i]);
		if (sum > pa->cap)
			sum = pa->cap;
		pa->acked += sum * (double)step / 1e9;
		pa->retx += pa->loss * sum * (double)step / 1e9 /
			    FERRY__RAMP_MSS;
		if (ferry__ramp_sample(r, now, (uint64_t)pa->acked,
				       (uint64_t)pa->retx))
			(*changes)++;
	}
	return r->active;
}

/* A ramp from start of max streams on a path that cap_streams streams'
 * windows fill, losing loss of the segments sent, for secs. */
static unsigned ramp_on(struct ferry__ramp *r, double cap_streams,
			double loss, unsigned start, unsigned max, double secs,
			unsigned *changes)
{
	struct path pa = { .cap = cap_streams * PER_STREAM, .loss = loss };

	ferry__ramp_init(r, start, max, RTT_S, 0);
	return run(r, &pa, secs, changes);
}

static void test_interval(void)
{
	struct ferry__ramp r;

	ferry__ramp_init(&r, 4, 64, 0.3, 0);
	CU_ASSERT_EQUAL(r.interval_ns, 600 * MS);
	CU_ASSERT_EQUAL(r.active, 4);
	CU_ASSERT_FALSE(r.done);
	ferry__ramp_init(&r, 4, 64, 0.001, 0);
	CU_ASSERT_EQUAL(r.interval_ns, FERRY__RAMP_MIN_IV_NS);
	/* nothing to ramp: every stream from the start */
	ferry__ramp_init(&r, 8, 8, 0.1, 0);
	CU_ASSERT_TRUE(r.done);
	CU_ASSERT_EQUAL(r.active, 8);
	/* an interval with less than a first window per stream acknowledged
	 * (the session's data not started) is no baseline */
	ferry__ramp_init(&r, 4, 64, 0.1, 0);
	CU_ASSERT_FALSE(ferry__ramp_sample(&r, 200 * MS, 1000, 2));
	CU_ASSERT_FALSE(ferry__ramp_sample(&r, 400 * MS, 2000, 2));
	CU_ASSERT_FALSE(ferry__ramp_sample(&r, 600 * MS, 3000, 2));
	CU_ASSERT_TRUE(r.last_rate < 0);
	CU_ASSERT_EQUAL(r.since_step, 0);
	CU_ASSERT_FALSE(r.done);
	/* before an interval has passed a sample changes nothing */
	ferry__ramp_init(&r, 4, 64, 0.1, 0);
	CU_ASSERT_FALSE(ferry__ramp_sample(&r, 100 * MS, 1 << 20, 0));
	CU_ASSERT_EQUAL(r.bytes, 0);
}

/* A bottleneck that 10 streams' windows fill: 4 -> 8 pays in full, so
 * the next step quadruples; 8 -> 32 adds two streams' worth, so the ramp
 * keeps 10 and stops. */
static void test_finds_bottleneck(void)
{
	struct ferry__ramp r;
	unsigned changes;

	CU_ASSERT_EQUAL(ramp_on(&r, 10, 0, 4, 64, 20, &changes), 10);
	CU_ASSERT_TRUE(r.done);
	CU_ASSERT_EQUAL(r.peak, 32);
	CU_ASSERT_EQUAL(changes, 3); /* 4 -> 8, 8 -> 32, keep 10 */
	CU_ASSERT_PTR_NOT_NULL(strstr(r.why, "10 streams (24 more added"));
}

/* A bottleneck that 6 streams fill: 4 -> 8 pays for two of the four
 * new streams; the ramp keeps 6 and stops. */
static void test_pays_in_part(void)
{
	struct ferry__ramp r;
	unsigned changes;

	CU_ASSERT_EQUAL(ramp_on(&r, 6, 0, 4, 64, 20, &changes), 6);
	CU_ASSERT_TRUE(r.done);
	CU_ASSERT_EQUAL(r.peak, 8);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.why, "6 streams (4 more added +50%"));
}

/* Room for every stream: each step pays, and the ramp ends with all
 * (16 -> 32, then quadrupling, capped at the 64 planned). */
static void test_all_pay(void)
{
	struct ferry__ramp r;
	unsigned changes;

	CU_ASSERT_EQUAL(ramp_on(&r, 100, 0, 16, 64, 20, &changes), 64);
	CU_ASSERT_TRUE(r.done);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.why, "all 64 streams"));
}

/* The first streams already fill the bottleneck: a step adds nothing,
 * and the ramp goes back to where it was. */
static void test_full_at_start(void)
{
	struct ferry__ramp r;
	unsigned changes;

	CU_ASSERT_EQUAL(ramp_on(&r, 3.5, 0, 4, 64, 20, &changes), 4);
	CU_ASSERT_TRUE(r.done);
	CU_ASSERT_EQUAL(r.peak, 8);
	CU_ASSERT_EQUAL(changes, 2); /* 4 -> 8, back to 4 */
}

/* Loss over the limit: no stream is added. */
static void test_loss_holds(void)
{
	struct ferry__ramp r;
	unsigned changes;

	CU_ASSERT_EQUAL(ramp_on(&r, 100, 0.01, 4, 64, 20, &changes), 4);
	CU_ASSERT_TRUE(r.done);
	CU_ASSERT_EQUAL(changes, 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.why, "loss"));
	/* under the limit it is not loss */
	CU_ASSERT_EQUAL(ramp_on(&r, 100, FERRY__RAMP_LOSS / 2, 4, 64, 30,
				&changes), 64);
}

/* A step's new streams get their slow start before it is judged: on a
 * path whose windows take 7 round trips to open, the step from 4 must
 * not be judged (and undone) before those streams carry their windows. */
static void test_waits_for_slow_start(void)
{
	struct ferry__ramp r;
	unsigned changes;

	CU_ASSERT_EQUAL(ramp_on(&r, 100, 0, 4, 8, 3, &changes), 8);
	CU_ASSERT_TRUE(r.done);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.why, "all 8 streams"));
}

int main(void)
{
	CU_TestInfo tests[] = {
		{ "the interval and the start", test_interval },
		{ "stops at the bottleneck's stream count", test_finds_bottleneck },
		{ "a step that pays in part keeps its worth", test_pays_in_part },
		{ "every stream where each pays", test_all_pay },
		{ "a step that adds nothing is undone", test_full_at_start },
		{ "loss holds the count", test_loss_holds },
		{ "a step gets its slow start", test_waits_for_slow_start },
		CU_TEST_INFO_NULL,
	};

	return ferry_cu_run("ramp", tests);
}
