/* Per-stream credits: the sender's window, the receiver's landing order
 * and the credit message between them. */
#include <endian.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cu.h"
#include "ferry/error.h"
#include "pipe/credit.h"

/* A credit message built by hand, so malformed ones can be made too. */
static void make_msg(uint8_t *m, uint32_t type, uint64_t total)
{
	uint32_t t = htole32(type);
	uint64_t v = htole64(total);

	memset(m, 0, FERRY__CREDIT_MSG_LEN);
	memcpy(m, &t, 4);
	memcpy(m + 8, &v, 8);
}

static void test_tx_window(void)
{
	struct ferry_credit_tx tx;
	const uint32_t first = 24, depth = 8;

	ferry__credit_tx_init(&tx, first, depth);
	CU_ASSERT(ferry__credit_idle(&tx));
	for (uint32_t i = 0; i < depth; i++) {
		CU_ASSERT_FATAL(ferry__credit_can_post(&tx));
		CU_ASSERT_EQUAL(ferry__credit_next_slot(&tx), first + i);
		tx.sent++;
		CU_ASSERT_FALSE(ferry__credit_idle(&tx));
	}
	CU_ASSERT_FALSE(ferry__credit_can_post(&tx));
	/* the slot after a full window is the first one again */
	CU_ASSERT_EQUAL(ferry__credit_next_slot(&tx), first);

	/* slots cycle within [first, first + depth) over many wraps */
	ferry__credit_tx_init(&tx, first, depth);
	for (uint64_t n = 0; n < 10 * depth + 3; n++) {
		uint32_t s = ferry__credit_next_slot(&tx);
		CU_ASSERT(s >= first && s < first + depth);
		CU_ASSERT_EQUAL(s, first + (uint32_t)(n % depth));
		tx.sent++;
		tx.freed++;
	}

	/* depth 1: one slot, one write at a time */
	ferry__credit_tx_init(&tx, 5, 1);
	CU_ASSERT(ferry__credit_can_post(&tx));
	CU_ASSERT_EQUAL(ferry__credit_next_slot(&tx), 5);
	tx.sent++;
	CU_ASSERT_FALSE(ferry__credit_can_post(&tx));
	CU_ASSERT_EQUAL(ferry__credit_next_slot(&tx), 5);
}

static void test_tx_apply(void)
{
	struct ferry_credit_tx tx;
	struct ferry_credit_rx rx;
	uint8_t m[FERRY__CREDIT_MSG_LEN];
	const uint32_t depth = 4;

	ferry__credit_tx_init(&tx, 0, depth);
	ferry__credit_rx_init(&rx, 0, depth);
	for (uint32_t i = 0; i < depth; i++) {
		uint32_t slot = ferry__credit_next_slot(&tx);
		tx.sent++;
		CU_ASSERT_EQUAL_FATAL(ferry__credit_rx_land(&rx, slot), 0);
	}
	CU_ASSERT_FALSE(ferry__credit_can_post(&tx));

	/* the receiver releases two and says so: two credits come back */
	ferry__credit_rx_release(&rx);
	ferry__credit_rx_release(&rx);
	ferry__credit_rx_encode(&rx, m);
	CU_ASSERT_EQUAL(rx.announced, 2);
	CU_ASSERT_EQUAL(ferry__credit_tx_apply(&tx, m, sizeof(m)), 0);
	CU_ASSERT_EQUAL(tx.freed, 2);
	CU_ASSERT(ferry__credit_can_post(&tx));
	CU_ASSERT_FALSE(ferry__credit_idle(&tx));

	/* the message is idempotent: applying it again changes nothing */
	CU_ASSERT_EQUAL(ferry__credit_tx_apply(&tx, m, sizeof(m)), 0);
	CU_ASSERT_EQUAL(tx.freed, 2);

	/* the rest comes back: idle */
	ferry__credit_rx_release(&rx);
	ferry__credit_rx_release(&rx);
	ferry__credit_rx_encode(&rx, m);
	CU_ASSERT_EQUAL(ferry__credit_tx_apply(&tx, m, sizeof(m)), 0);
	CU_ASSERT_EQUAL(tx.freed, depth);
	CU_ASSERT(ferry__credit_idle(&tx));

	/* the encoded message is the documented one */
	uint8_t want[FERRY__CREDIT_MSG_LEN];
	make_msg(want, FERRY__CREDIT_MSG, depth);
	CU_ASSERT_EQUAL(memcmp(m, want, sizeof(m)), 0);
	CU_ASSERT_EQUAL(memcmp(m, "CRED", 4), 0);
}

static void test_tx_apply_malformed(void)
{
	struct ferry_credit_tx tx;
	uint8_t m[FERRY__CREDIT_MSG_LEN + 8];

	ferry__credit_tx_init(&tx, 0, 16);
	tx.sent = 10;
	tx.freed = 4;

	make_msg(m, FERRY__CREDIT_MSG, 6);
	CU_ASSERT_EQUAL(ferry__credit_tx_apply(&tx, m, 0), -FERRY_EPROTO);
	CU_ASSERT_EQUAL(ferry__credit_tx_apply(&tx, m, FERRY__CREDIT_MSG_LEN - 1),
			-FERRY_EPROTO);
	CU_ASSERT_EQUAL(ferry__credit_tx_apply(&tx, m, FERRY__CREDIT_MSG_LEN + 1),
			-FERRY_EPROTO);
	CU_ASSERT_EQUAL(ferry__credit_tx_apply(&tx, m, sizeof(m)),
			-FERRY_EPROTO);
	CU_ASSERT_EQUAL(tx.freed, 4);

	/* wrong type: byte-swapped, off by one, zero */
	make_msg(m, __builtin_bswap32(FERRY__CREDIT_MSG), 6);
	CU_ASSERT_EQUAL(ferry__credit_tx_apply(&tx, m, FERRY__CREDIT_MSG_LEN),
			-FERRY_EPROTO);
	make_msg(m, FERRY__CREDIT_MSG + 1, 6);
	CU_ASSERT_EQUAL(ferry__credit_tx_apply(&tx, m, FERRY__CREDIT_MSG_LEN),
			-FERRY_EPROTO);
	make_msg(m, 0, 6);
	CU_ASSERT_EQUAL(ferry__credit_tx_apply(&tx, m, FERRY__CREDIT_MSG_LEN),
			-FERRY_EPROTO);
	CU_ASSERT_EQUAL(tx.freed, 4);

	/* releasing slots never sent */
	make_msg(m, FERRY__CREDIT_MSG, 11);
	CU_ASSERT_EQUAL(ferry__credit_tx_apply(&tx, m, FERRY__CREDIT_MSG_LEN),
			-FERRY_EPROTO);
	make_msg(m, FERRY__CREDIT_MSG, UINT64_MAX);
	CU_ASSERT_EQUAL(ferry__credit_tx_apply(&tx, m, FERRY__CREDIT_MSG_LEN),
			-FERRY_EPROTO);
	CU_ASSERT_EQUAL(tx.freed, 4);

	/* an older (smaller) total is harmless and ignored */
	make_msg(m, FERRY__CREDIT_MSG, 2);
	CU_ASSERT_EQUAL(ferry__credit_tx_apply(&tx, m, FERRY__CREDIT_MSG_LEN), 0);
	CU_ASSERT_EQUAL(tx.freed, 4);
	make_msg(m, FERRY__CREDIT_MSG, 0);
	CU_ASSERT_EQUAL(ferry__credit_tx_apply(&tx, m, FERRY__CREDIT_MSG_LEN), 0);
	CU_ASSERT_EQUAL(tx.freed, 4);
	make_msg(m, FERRY__CREDIT_MSG, 4);
	CU_ASSERT_EQUAL(ferry__credit_tx_apply(&tx, m, FERRY__CREDIT_MSG_LEN), 0);
	CU_ASSERT_EQUAL(tx.freed, 4);

	/* exactly everything sent is fine */
	make_msg(m, FERRY__CREDIT_MSG, 10);
	CU_ASSERT_EQUAL(ferry__credit_tx_apply(&tx, m, FERRY__CREDIT_MSG_LEN), 0);
	CU_ASSERT_EQUAL(tx.freed, 10);
	CU_ASSERT(ferry__credit_idle(&tx));
}

static void test_rx_land(void)
{
	struct ferry_credit_rx rx;
	const uint32_t first = 100, depth = 4;

	ferry__credit_rx_init(&rx, first, depth);
	/* not the expected slot: before, after, outside the range */
	CU_ASSERT_EQUAL(ferry__credit_rx_land(&rx, first + 1), -FERRY_EPROTO);
	CU_ASSERT_EQUAL(ferry__credit_rx_land(&rx, first - 1), -FERRY_EPROTO);
	CU_ASSERT_EQUAL(ferry__credit_rx_land(&rx, first + depth),
			-FERRY_EPROTO);
	CU_ASSERT_EQUAL(ferry__credit_rx_land(&rx, 0), -FERRY_EPROTO);
	CU_ASSERT_EQUAL(rx.landed, 0);

	for (uint32_t i = 0; i < depth; i++)
		CU_ASSERT_EQUAL(ferry__credit_rx_land(&rx, first + i), 0);
	CU_ASSERT_EQUAL(rx.landed, depth);
	/* the window is full: the next (wrapped) slot had no credit */
	CU_ASSERT_EQUAL(ferry__credit_rx_land(&rx, first), -FERRY_EPROTO);
	CU_ASSERT_EQUAL(rx.landed, depth);
	/* a repeat of the last slot is out of order */
	CU_ASSERT_EQUAL(ferry__credit_rx_land(&rx, first + depth - 1),
			-FERRY_EPROTO);

	ferry__credit_rx_release(&rx);
	CU_ASSERT_EQUAL(ferry__credit_rx_land(&rx, first + 1), -FERRY_EPROTO);
	CU_ASSERT_EQUAL(ferry__credit_rx_land(&rx, first), 0);
	CU_ASSERT_EQUAL(ferry__credit_rx_land(&rx, first + 1), -FERRY_EPROTO);

	/* depth 1: land, release, land the same slot again */
	ferry__credit_rx_init(&rx, 7, 1);
	for (int i = 0; i < 5; i++) {
		CU_ASSERT_EQUAL(ferry__credit_rx_land(&rx, 7), 0);
		CU_ASSERT_EQUAL(ferry__credit_rx_land(&rx, 7), -FERRY_EPROTO);
		CU_ASSERT_EQUAL(ferry__credit_rx_land(&rx, 8), -FERRY_EPROTO);
		ferry__credit_rx_release(&rx);
	}
	CU_ASSERT_EQUAL(rx.landed, 5);
}

static void test_rx_due(void)
{
	struct { uint32_t depth, batch; } cases[] = {
		{ 1, 1 }, { 2, 1 }, { 3, 1 }, { 4, 1 }, { 7, 1 },
		{ 8, 2 }, { 15, 3 }, { 16, 4 }, { 1024, 256 },
	};
	uint8_t m[FERRY__CREDIT_MSG_LEN];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ferry_credit_rx rx;
		uint32_t d = cases[i].depth, b = cases[i].batch;

		ferry__credit_rx_init(&rx, 3, d);
		CU_ASSERT_EQUAL(rx.batch, b);
		/* nothing owed: never due, idle or not */
		CU_ASSERT_FALSE(ferry__credit_rx_due(&rx, false));
		CU_ASSERT_FALSE(ferry__credit_rx_due(&rx, true));
		for (uint32_t k = 0; k < d; k++)
			CU_ASSERT_EQUAL_FATAL(ferry__credit_rx_land(&rx, 3 + k), 0);
		/* below a batch: due only when idle */
		for (uint32_t k = 1; k < b; k++) {
			ferry__credit_rx_release(&rx);
			CU_ASSERT_FALSE(ferry__credit_rx_due(&rx, false));
			CU_ASSERT(ferry__credit_rx_due(&rx, true));
		}
		ferry__credit_rx_release(&rx);
		CU_ASSERT(ferry__credit_rx_due(&rx, false));
		CU_ASSERT(ferry__credit_rx_due(&rx, true));
		ferry__credit_rx_encode(&rx, m);
		CU_ASSERT_EQUAL(rx.announced, b);
		CU_ASSERT_FALSE(ferry__credit_rx_due(&rx, false));
		CU_ASSERT_FALSE(ferry__credit_rx_due(&rx, true));
		/* more than a batch owed is due too */
		while (rx.released < rx.landed)
			ferry__credit_rx_release(&rx);
		CU_ASSERT_EQUAL(ferry__credit_rx_due(&rx, false), d - b >= b);
		if (d > b)
			CU_ASSERT(ferry__credit_rx_due(&rx, true));
		ferry__credit_rx_encode(&rx, m);
		CU_ASSERT_EQUAL(rx.announced, d);
		CU_ASSERT_FALSE(ferry__credit_rx_due(&rx, true));
	}
}

/* A sender and a receiver run against each other for a long time, the
 * writes and credit messages in flight in FIFOs, each side acting at
 * random moments. Credit messages are sometimes duplicated, or overtaken
 * by a newer one, which the protocol tolerates. Invariants: the sender
 * never has more than depth slots outstanding, every land is the next
 * slot in cyclic order and accepted, every credit message applies, and
 * the run finishes (nothing starves). */
struct sim_fifo {
	uint64_t *v;
	size_t cap, head, n;
};

static void fifo_push(struct sim_fifo *f, uint64_t x)
{
	CU_ASSERT_FATAL(f->n < f->cap);
	f->v[(f->head + f->n) % f->cap] = x;
	f->n++;
}

static uint64_t fifo_pop(struct sim_fifo *f)
{
	uint64_t x = f->v[f->head];

	f->head = (f->head + 1) % f->cap;
	f->n--;
	return x;
}

static void simulate(uint32_t first, uint32_t depth, uint64_t total,
		     unsigned seed)
{
	struct ferry_credit_tx tx;
	struct ferry_credit_rx rx;
	/* writes in flight never exceed depth; credit messages in flight are
	 * at most one per release plus duplicates */
	struct sim_fifo wire = { calloc(depth + 1, 8), depth + 1, 0, 0 };
	size_t ccap = 4 * (size_t)depth + 64;
	struct sim_fifo back = { calloc(ccap, 8), ccap, 0, 0 };
	uint64_t steps = 0, max_out = 0, msgs = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(wire.v);
	CU_ASSERT_PTR_NOT_NULL_FATAL(back.v);
	srand(seed);
	ferry__credit_tx_init(&tx, first, depth);
	ferry__credit_rx_init(&rx, first, depth);

	while (!(tx.sent == total && ferry__credit_idle(&tx))) {
		int r = rand() % 100;

		CU_ASSERT_FATAL(++steps < 100 * total + 100000);
		if (r < 35) {
			/* sender posts a burst while it has credits */
			int burst = 1 + rand() % 4;
			while (burst-- && tx.sent < total &&
			       ferry__credit_can_post(&tx)) {
				uint32_t slot = ferry__credit_next_slot(&tx);
				CU_ASSERT(slot >= first && slot < first + depth);
				fifo_push(&wire, slot);
				tx.sent++;
				CU_ASSERT_FATAL(tx.sent - tx.freed <= depth);
				if (tx.sent - tx.freed > max_out)
					max_out = tx.sent - tx.freed;
			}
		} else if (r < 60) {
			/* writes land, in order */
			int burst = 1 + rand() % 4;
			while (burst-- && wire.n) {
				uint32_t slot = (uint32_t)fifo_pop(&wire);
				CU_ASSERT_EQUAL(slot,
						first + (uint32_t)(rx.landed % depth));
				CU_ASSERT_EQUAL_FATAL(
					ferry__credit_rx_land(&rx, slot), 0);
				CU_ASSERT_FATAL(rx.landed - rx.released <= depth);
			}
		} else if (r < 80) {
			/* the consumer releases some landed slots */
			int burst = 1 + rand() % 3;
			while (burst-- && rx.released < rx.landed)
				ferry__credit_rx_release(&rx);
		} else if (r < 90) {
			/* the receiver sends credits when due; idle when no
			 * write is waiting to land */
			if (ferry__credit_rx_due(&rx, wire.n == 0) &&
			    back.n + 2 < back.cap) {
				uint8_t m[FERRY__CREDIT_MSG_LEN];
				uint64_t t;
				ferry__credit_rx_encode(&rx, m);
				memcpy(&t, m + 8, 8);
				CU_ASSERT_EQUAL(le64toh(t), rx.released);
				CU_ASSERT(rx.released <= tx.sent);
				fifo_push(&back, rx.released);
				if (rand() % 8 == 0)
					fifo_push(&back, rx.released);
				msgs++;
			}
		} else {
			/* credit messages arrive; now and then a newer one
			 * overtakes an older one */
			if (back.n >= 2 && rand() % 6 == 0) {
				size_t a = back.head, b = (back.head + 1) % back.cap;
				uint64_t t = back.v[a];
				back.v[a] = back.v[b];
				back.v[b] = t;
			}
			int burst = 1 + rand() % 3;
			while (burst-- && back.n) {
				uint8_t m[FERRY__CREDIT_MSG_LEN];
				uint64_t before = tx.freed, t = fifo_pop(&back);
				make_msg(m, FERRY__CREDIT_MSG, t);
				CU_ASSERT_EQUAL_FATAL(
					ferry__credit_tx_apply(&tx, m, sizeof(m)),
					0);
				CU_ASSERT(tx.freed >= before);
				CU_ASSERT(tx.freed == (t > before ? t : before));
			}
		}
		/* the sender's view never runs ahead of the receiver's */
		CU_ASSERT_FATAL(tx.freed <= rx.released);
		CU_ASSERT_FATAL(rx.released <= rx.landed);
		CU_ASSERT_FATAL(rx.landed <= tx.sent);
	}
	CU_ASSERT_EQUAL(rx.landed, total);
	CU_ASSERT_EQUAL(rx.released, total);
	CU_ASSERT_EQUAL(tx.freed, total);
	CU_ASSERT(max_out <= depth);
	/* the whole window was used at some point, and credits were batched */
	CU_ASSERT_EQUAL(max_out, depth);
	CU_ASSERT(msgs > 0);
	free(wire.v);
	free(back.v);
}

static void test_long_run(void)
{
	const struct { uint32_t first, depth; } cases[] = {
		{ 0, 1 }, { 9, 1 }, { 0, 2 }, { 2, 3 }, { 0, 4 },
		{ 40, 5 }, { 16, 16 }, { 1000, 64 }, { 0, 257 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		/* at least 200 wraps of the stream's slots */
		uint64_t total = 200ull * cases[i].depth + 1000;
		simulate(cases[i].first, cases[i].depth, total,
			 (unsigned)(i + 1) * 7919u);
	}
}

int main(void)
{
	CU_TestInfo tests[] = {
		{ "tx window and slot order", test_tx_window },
		{ "tx applies credit messages", test_tx_apply },
		{ "tx rejects malformed messages", test_tx_apply_malformed },
		{ "rx landing order and window", test_rx_land },
		{ "rx batching and idle flush", test_rx_due },
		{ "long run, sender against receiver", test_long_run },
		CU_TEST_INFO_NULL,
	};
	return ferry_cu_run("credit", tests);
}
