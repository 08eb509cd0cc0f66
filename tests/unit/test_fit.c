/* Windows that follow the rate (lib/pipe/fit.h) on a simulated path: tcp
 * streams that each send a window per round trip, behind a bottleneck
 * whose queue adds to the round trip, sampled once per interval as the
 * receiver's control loop samples them. A stream's window doubles each
 * round trip in slow start up to what its buffer holds, and is the fit's
 * clamp once the fit has engaged it. The fit must let slow start run,
 * bring uneven sessions to even shares, keep the queue short enough that
 * a small-window flow beside them is not starved, let a stream grow into
 * a path that frees up, and not shrink a window for a short pause. A
 * finer simulation (a quarter of a round trip per step) checks the bound
 * on slow start: no slower to the bottleneck, and no overflow of a queue
 * of one BDP when it gets there. */
#include <string.h>

#include "cu.h"
#include "pipe/fit.h"

#define MS 1000000ull
#define R0 0.15        /* s: the path's base round trip */
#define CAP 125e6      /* B/s: a 1 Gb/s bottleneck */
#define QMAX 18.75e6   /* B: its queue, one bandwidth-delay product */
#define BUF 60e6       /* B: the window a stream's buffer holds */
#define IW 14480.0     /* B: ten segments */
#define MAXS 9

struct sim {
	unsigned n;             /* ferry streams (the fit's) */
	double win[MAXS];       /* each stream's window, B */
	double rate[MAXS];      /* B/s over the last interval */
	struct ferry__fit_in in[MAXS]; /* what the fit reads */
	bool lossy;             /* a loss in every round trip */
	double other_win;       /* a flow beside them with a fixed window */
	double other_rate;
	double cap;
	double rtt;             /* s, the last interval's */
	uint64_t now;
	bool paused[MAXS];
};

/* One interval of the fit (two round trips): the windows cross the
 * bottleneck, each flow gets window / RTT (scaled down to the cap when
 * they ask for more), the fit samples, and the windows move: the clamp
 * for an engaged stream, slow start (x4 per two round trips, up to BUF)
 * for the others. */
static void step(struct ferry__fit *f, struct sim *s)
{
	double dt = (double)f->interval_ns / 1e9, sum = s->other_win, total;
	double q, scale = 1;

	for (unsigned i = 0; i < s->n; i++)
		sum += s->paused[i] ? 0 : s->win[i];
	q = sum - s->cap * R0;
	q = q < 0 ? 0 : q > QMAX ? QMAX : q;
	s->rtt = R0 + q / s->cap;
	total = sum / s->rtt;
	if (total > s->cap)
		scale = s->cap / total;
	for (unsigned i = 0; i < s->n; i++) {
		s->rate[i] = s->paused[i] ? 0 : s->win[i] / s->rtt * scale;
		if (s->lossy) {
			/* each hole holds the window's edge a round trip:
			 * half the window in order per round trip */
			s->rate[i] /= 2;
			s->in[i].ooo += 10;
		}
		s->in[i].bytes += (uint64_t)(s->rate[i] * dt);
		s->in[i].rtt_s = s->rtt;
	}
	s->other_rate = s->other_win / s->rtt * scale;
	s->now += f->interval_ns;
	CU_ASSERT_TRUE(ferry__fit_sample(f, s->now, s->in));
	for (unsigned i = 0; i < s->n; i++) {
		if (f->s[i].engaged)
			s->win[i] = (double)f->s[i].clamp;
		else if ((s->win[i] *= 4) > BUF)
			s->win[i] = BUF;
	}
}

static void sim_init(struct ferry__fit *f, struct sim *s, unsigned n)
{
	memset(s, 0, sizeof(*s));
	s->n = n;
	s->cap = CAP;
	for (unsigned i = 0; i < n; i++)
		s->win[i] = IW;
	CU_ASSERT_EQUAL(ferry__fit_init(f, n, R0, 0, 0), 0);
}

static double sum_rate(const struct sim *s, unsigned from, unsigned to)
{
	double r = 0;

	for (unsigned i = from; i < to; i++)
		r += s->rate[i];
	return r;
}

static void test_init(void)
{
	struct ferry__fit f;
	struct ferry__fit_in b[2] = { { 0 } };

	CU_ASSERT_EQUAL(ferry__fit_init(&f, 4, 0.3, 0, 0), 0);
	CU_ASSERT_EQUAL(f.interval_ns, 600 * MS);
	ferry__fit_free(&f);
	CU_ASSERT_EQUAL(ferry__fit_init(&f, 4, 0.05, 0, 0), 0);
	CU_ASSERT_EQUAL(f.interval_ns, FERRY__FIT_MIN_IV_NS);
	ferry__fit_free(&f);
	/* a short path is left to the kernel */
	CU_ASSERT_EQUAL(ferry__fit_init(&f, 2, 0.001, 0, 0), 0);
	CU_ASSERT_EQUAL(f.n, 0);
	CU_ASSERT_FALSE(ferry__fit_sample(&f, 10000 * MS, b));
	ferry__fit_free(&f);
	/* nothing before the interval is due */
	CU_ASSERT_EQUAL(ferry__fit_init(&f, 2, 0.3, 0, 0), 0);
	CU_ASSERT_FALSE(ferry__fit_sample(&f, 599 * MS, b));
	CU_ASSERT_TRUE(ferry__fit_sample(&f, 600 * MS, b));
	ferry__fit_free(&f);
}

/* Slow start is left to run (the sim's windows take no clamp before the
 * fit engages them); a stream is held once its rate stops multiplying, to
 * gain x rate x base RTT + extra. */
static void test_slow_start(void)
{
	struct ferry__fit f;
	struct sim s;
	unsigned steps = 0;

	sim_init(&f, &s, 1);
	while (!f.s[0].engaged && steps < 40) {
		step(&f, &s);
		steps++;
		if (!f.s[0].engaged)
			/* still growing: not yet at the bottleneck */
			CU_ASSERT_TRUE(s.rate[0] < CAP);
	}
	CU_ASSERT_TRUE(f.s[0].engaged);
	CU_ASSERT_EQUAL(f.engaged, 1);
	/* from ten segments to the bottleneck's BDP: about eight intervals
	 * of x4 */
	CU_ASSERT_TRUE(steps >= 6 && steps <= 10);
	for (int i = 0; i < 20; i++)
		step(&f, &s);
	/* alone, it fills the bottleneck and keeps about a quarter of its
	 * BDP queued, not the whole queue */
	CU_ASSERT_TRUE(s.rate[0] > 0.99 * CAP);
	CU_ASSERT_TRUE(s.rtt < R0 * (FERRY__FIT_GAIN + 0.1));
	CU_ASSERT_TRUE(f.s[0].clamp >
		       (uint64_t)(FERRY__FIT_GAIN * s.rate[0] * R0));
	ferry__fit_free(&f);
}

/* Two sessions of four streams, one with three times the other's windows
 * at the start, and a flow of one 2.8 MB window beside them: the sessions
 * end within 10% of each other, and the small flow keeps most of what it
 * carries alone (2.8 MB per 150 ms), where windows that never bind would
 * fill the queue and halve it. */
static void test_converge(void)
{
	struct ferry__fit f;
	struct sim s;
	double a = 0, b = 0, o = 0;

	sim_init(&f, &s, 8);
	for (unsigned i = 0; i < 8; i++) {
		s.win[i] = i < 4 ? 12e6 : 4e6;
		f.s[i].engaged = true; /* both past slow start */
		f.s[i].rate = s.win[i] / R0;
		f.s[i].clamp = (uint64_t)s.win[i];
	}
	f.engaged = 8;
	s.other_win = 2.8e6;
	for (int i = 0; i < 60; i++) { /* 18 s */
		step(&f, &s);
		if (i >= 33) { /* the last 8 s */
			a += sum_rate(&s, 0, 4);
			b += sum_rate(&s, 4, 8);
			o += s.other_rate;
		}
	}
	CU_ASSERT_TRUE(a < 1.1 * b && b < 1.1 * a);
	CU_ASSERT_TRUE(o / 27 > 0.6 * s.other_win / R0);
	CU_ASSERT_TRUE((a + b + o) / 27 > 0.98 * CAP);
	ferry__fit_free(&f);
}

/* A held stream grows into a path that frees up: at half the cap, then
 * the cap doubles; within eight intervals it carries 90% of the new cap. */
static void test_grow(void)
{
	struct ferry__fit f;
	struct sim s;
	int i;

	sim_init(&f, &s, 1);
	s.cap = CAP / 2;
	for (i = 0; i < 30; i++)
		step(&f, &s);
	CU_ASSERT_TRUE(f.s[0].engaged);
	CU_ASSERT_TRUE(s.rate[0] > 0.99 * CAP / 2);
	s.cap = CAP;
	for (i = 0; i < 8 && s.rate[0] < 0.9 * CAP; i++)
		step(&f, &s);
	CU_ASSERT_TRUE(s.rate[0] >= 0.9 * CAP);
	ferry__fit_free(&f);
}

/* A pause shorter than FERRY__FIT_DIPS intervals keeps the window; a
 * longer one lowers it to what the stream carries then. */
static void test_dip(void)
{
	struct ferry__fit f;
	struct sim s;
	uint64_t held;
	int i;

	sim_init(&f, &s, 1);
	for (i = 0; i < 30; i++)
		step(&f, &s);
	held = f.s[0].clamp;
	CU_ASSERT_TRUE(held > (uint64_t)(CAP * R0));
	/* two intervals of a tenth of the rate (a sender between files) */
	for (i = 0; i < FERRY__FIT_DIPS - 1; i++) {
		s.in[0].bytes += (uint64_t)(CAP / 10 * 0.3);
		s.now += f.interval_ns;
		ferry__fit_sample(&f, s.now, s.in);
		CU_ASSERT_EQUAL(f.s[0].clamp, held);
	}
	/* a third: the rate is what it is now */
	s.in[0].bytes += (uint64_t)(CAP / 10 * 0.3);
	s.now += f.interval_ns;
	ferry__fit_sample(&f, s.now, s.in);
	CU_ASSERT_TRUE(f.s[0].clamp < held / 2);
	/* an idle interval (no byte) changes nothing */
	held = f.s[0].clamp;
	s.now += f.interval_ns;
	ferry__fit_sample(&f, s.now, s.in);
	CU_ASSERT_EQUAL(f.s[0].clamp, held);
	ferry__fit_free(&f);
}

/* Loss: a held stream on a path that loses a packet every round trip
 * delivers half its window in order per round trip. Its window must not
 * shrink with that rate (1.25 x half a window each interval would take it
 * down to about 0.7 MB, a small part of what the path carries). */
static void test_loss(void)
{
	struct ferry__fit f;
	struct sim s;
	uint64_t before;
	int i;

	sim_init(&f, &s, 1);
	for (i = 0; i < 30; i++)
		step(&f, &s);
	CU_ASSERT_TRUE(f.s[0].engaged);
	before = f.s[0].clamp;
	s.lossy = true;
	CU_ASSERT_TRUE(s.rtt < FERRY__FIT_QUEUED * R0); /* loss, no queue */
	for (i = 0; i < 10; i++) {
		step(&f, &s);
		CU_ASSERT_TRUE(f.s[0].clamp >= before);
	}
	/* the loss ends: the window follows the rate again, and the stream
	 * carries what the path does */
	s.lossy = false;
	for (i = 0; i < 10; i++)
		step(&f, &s);
	CU_ASSERT_TRUE(s.rate[0] > 0.99 * s.cap);
	ferry__fit_free(&f);
}

/* Loss behind a full queue (the round trip well over the base) is
 * congestion: the window follows the rate down as without loss. */
static void test_loss_queued(void)
{
	struct ferry__fit f;
	struct sim s;
	uint64_t before;

	sim_init(&f, &s, 1);
	for (int i = 0; i < 30; i++)
		step(&f, &s);
	before = f.s[0].clamp;
	/* an interval at 0.6 of the rate, with loss and a 2 x base RTT */
	s.in[0].bytes += (uint64_t)(CAP * 0.6 * 0.3);
	s.in[0].ooo += 100;
	s.in[0].rtt_s = 2 * R0;
	s.now += f.interval_ns;
	ferry__fit_sample(&f, s.now, s.in);
	CU_ASSERT_TRUE(f.s[0].clamp < before);
	/* the same with the round trip at its base: not lowered */
	before = f.s[0].clamp;
	s.in[0].bytes += (uint64_t)(CAP / 4 * 0.3);
	s.in[0].ooo += 100;
	s.in[0].rtt_s = R0;
	s.now += f.interval_ns;
	ferry__fit_sample(&f, s.now, s.in);
	CU_ASSERT_EQUAL(f.s[0].clamp, before);
	ferry__fit_free(&f);
}

/* The clamp never goes past what the buffers hold. */
static void test_max(void)
{
	struct ferry__fit f;
	struct ferry__fit_in b[1] = { { 0 } };

	CU_ASSERT_EQUAL(ferry__fit_init(&f, 1, 0.1, 4u << 20, 0), 0);
	b[0].bytes = 100000000; /* 0.5 GB/s over 200 ms: a 62.5 MB window */
	ferry__fit_sample(&f, 200 * MS, b);
	b[0].bytes += 100000000;
	ferry__fit_sample(&f, 400 * MS, b);
	CU_ASSERT_TRUE(f.s[0].engaged);
	CU_ASSERT_EQUAL(f.s[0].clamp, 4u << 20);
	ferry__fit_free(&f);
}

/* Slow start in quarters of a round trip: n streams whose windows double
 * each round trip (up to BUF, and to the fit's clamp where it set one),
 * behind the bottleneck; the fit sampled each quarter, as the receiver's
 * loop does. bound: use the fit's clamps. Returns the largest queue seen;
 * *t90 gets the first time the streams together carried 90% of the cap. */
static double ss_run(unsigned n, bool bound, double *t90)
{
	struct ferry__fit f;
	struct ferry__fit_in in[MAXS];
	double win[MAXS], dt = R0 / 4, peak = 0;
	uint64_t now = 0;

	CU_ASSERT_EQUAL_FATAL(ferry__fit_init(&f, n, R0, 0, 0), 0);
	CU_ASSERT_EQUAL(f.ss_interval_ns, (uint64_t)(R0 * 1e9) / 4);
	memset(in, 0, sizeof(in));
	*t90 = -1;
	for (unsigned i = 0; i < n; i++)
		win[i] = IW;
	for (int k = 0; k < 4 * 30; k++) { /* 30 round trips */
		double sum = 0, q, rtt, scale = 1;

		for (unsigned i = 0; i < n; i++)
			sum += win[i];
		q = sum - CAP * R0;
		q = q < 0 ? 0 : q;
		if (q > peak)
			peak = q;
		rtt = R0 + (q < QMAX ? q : QMAX) / CAP;
		if (sum / rtt > CAP)
			scale = CAP / (sum / rtt);
		if (*t90 < 0 && sum / rtt * scale >= 0.9 * CAP)
			*t90 = k * dt;
		for (unsigned i = 0; i < n; i++) {
			in[i].bytes += (uint64_t)(win[i] / rtt * scale * dt);
			in[i].rtt_s = rtt;
		}
		now += f.ss_interval_ns;
		ferry__fit_sample(&f, now, in);
		for (unsigned i = 0; i < n; i++) {
			double next = win[i] * 1.189207; /* 2^(1/4) */

			if (next > BUF)
				next = BUF;
			if (bound && f.s[i].clamp && next > (double)f.s[i].clamp)
				next = (double)f.s[i].clamp;
			win[i] = next;
		}
	}
	ferry__fit_free(&f);
	return peak;
}

/* The bound on slow start: four streams reach 90% of the bottleneck no
 * more than a round trip later than unbounded ones, and queue at most a
 * BDP (and the fixed part) on the way, where unbounded ones queue several
 * BDPs: a queue of one BDP would drop the rest. */
static void test_slow_start_bound(void)
{
	double t_free, t_bound;
	double free_peak = ss_run(4, false, &t_free);
	double bound_peak = ss_run(4, true, &t_bound);

	CU_ASSERT_TRUE(t_free > 0 && t_bound > 0);
	CU_ASSERT_TRUE(t_bound <= t_free + R0);
	CU_ASSERT_TRUE(free_peak > 2 * QMAX);
	CU_ASSERT_TRUE(bound_peak <= QMAX + 4 * FERRY__FIT_EXTRA);
}

/* A path under two checks per round trip leaves slow start alone. */
static void test_slow_start_short(void)
{
	struct ferry__fit f;
	struct ferry__fit_in b[1] = { { 0 } };

	CU_ASSERT_EQUAL(ferry__fit_init(&f, 1, 0.03, 0, 0), 0);
	CU_ASSERT_EQUAL(f.ss_interval_ns, 0);
	b[0].bytes = 1000000;
	CU_ASSERT_FALSE(ferry__fit_sample(&f, 100 * MS, b));
	CU_ASSERT_EQUAL(f.s[0].clamp, 0);
	ferry__fit_free(&f);
	CU_ASSERT_EQUAL(ferry__fit_init(&f, 1, 0.08, 0, 0), 0);
	CU_ASSERT_EQUAL(f.ss_interval_ns, 20 * MS);
	ferry__fit_free(&f);
}

int main(void)
{
	CU_TestInfo tests[] = {
		{ "interval, short paths", test_init },
		{ "slow start is left alone", test_slow_start },
		{ "uneven sessions converge, a small flow keeps its share",
		  test_converge },
		{ "a held stream grows into a freed path", test_grow },
		{ "a short pause keeps the window", test_dip },
		{ "loss does not shrink a window", test_loss },
		{ "loss behind a full queue does", test_loss_queued },
		{ "the clamp stays within the buffers", test_max },
		{ "slow start: no overflow, no later", test_slow_start_bound },
		{ "slow start on a short path is the kernel's",
		  test_slow_start_short },
		CU_TEST_INFO_NULL,
	};

	return ferry_cu_run("fit", tests);
}
