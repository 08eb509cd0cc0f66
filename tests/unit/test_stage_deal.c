/* ferry-stage's work list (apps/stage/deal.c): the walk, the cut into
 * ranges, the deal across ranks, the --map file and the packing. */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "deal.h"

#define MiB (UINT64_C(1) << 20)

static void add(struct stage_list *l, const char *name, uint64_t size)
{
	struct stage_item it = { .kind = STAGE_FILE, .size = size,
				 .file = l->entries++ };

	it.src = strdup(name);
	it.name = strdup(name);
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 16;
		l->v = realloc(l->v, l->cap * sizeof(*l->v));
	}
	l->v[l->n++] = it;
	l->files++;
	l->bytes += size;
}

static uint64_t load_of(const struct stage_list *l, unsigned rank)
{
	uint64_t b = 0;

	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].rank == rank)
			b += stage_item_len(&l->v[i]);
	return b;
}

/* Whole files: every byte dealt once, loads within one file of each
 * other, each file to its rank's destination. */
static void test_deal_balanced(void)
{
	struct stage_list l = { 0 };
	uint32_t rd[3] = { 0, 1, 0 };
	uint64_t sum = 0, lo = UINT64_MAX, hi = 0;

	for (int i = 0; i < 40; i++) {
		char n[16];
		snprintf(n, sizeof(n), "f%d", i);
		add(&l, n, (uint64_t)(i % 7 + 1) * MiB);
	}
	CU_ASSERT_EQUAL_FATAL(stage_deal(&l, 3, rd, 2, 0, 4 * MiB), 0);
	CU_ASSERT_EQUAL(l.n, 40);
	for (unsigned r = 0; r < 3; r++) {
		uint64_t b = load_of(&l, r);
		sum += b;
		lo = b < lo ? b : lo;
		hi = b > hi ? b : hi;
	}
	CU_ASSERT_EQUAL(sum, l.bytes);
	CU_ASSERT(hi - lo <= 7 * MiB);
	for (size_t i = 0; i < l.n; i++) {
		CU_ASSERT_EQUAL(l.v[i].split, 0);
		CU_ASSERT_EQUAL(l.v[i].dest, rd[l.v[i].rank]);
	}
	stage_list_free(&l);
}

/* A file over the threshold: one range per rank on chunk boundaries,
 * covering it exactly, on distinct ranks, all for one destination; the
 * next split file takes the next destination. */
static void test_deal_split(void)
{
	struct stage_list l = { 0 };
	uint32_t rd[4] = { 0, 1, 0, 1 };
	uint64_t next = 0;
	unsigned seen = 0, n = 0;

	add(&l, "big", 100 * MiB);
	add(&l, "small", 1 * MiB);
	add(&l, "big2", 65 * MiB);
	CU_ASSERT_EQUAL_FATAL(stage_deal(&l, 4, rd, 2, 64 * MiB, 4 * MiB), 0);
	CU_ASSERT_EQUAL(l.split, 2);
	CU_ASSERT_EQUAL(l.files, 3);
	for (size_t i = 0; i < l.n; i++) {
		const struct stage_item *it = &l.v[i];
		if (strcmp(it->name, "big"))
			continue;
		CU_ASSERT_EQUAL(it->split, 28 * MiB); /* 25 MiB up to 4 */
		CU_ASSERT_EQUAL(it->offset, next);
		CU_ASSERT_EQUAL(it->offset % (4 * MiB), 0);
		CU_ASSERT_EQUAL(it->dest, 0);
		CU_ASSERT_FALSE(seen & (1u << it->rank));
		seen |= 1u << it->rank;
		next += stage_item_len(it);
		n++;
	}
	CU_ASSERT_EQUAL(n, 4);
	CU_ASSERT_EQUAL(next, 100 * MiB);
	for (size_t i = 0; i < l.n; i++)
		if (!strcmp(l.v[i].name, "big2")) {
			CU_ASSERT_EQUAL(l.v[i].dest, 1);
			CU_ASSERT_EQUAL(l.v[i].split, 20 * MiB);
		}
	stage_list_free(&l);
}

/* The same list and arguments deal the same (a rerun resumes). */
static void test_deal_stable(void)
{
	struct stage_list a = { 0 }, b = { 0 };
	uint32_t rd[5] = { 0, 0, 0, 0, 0 };

	for (int i = 0; i < 100; i++) {
		char n[16];
		snprintf(n, sizeof(n), "f%d", i);
		add(&a, n, (uint64_t)(i * 7919 % 1000) * 1000);
		add(&b, n, (uint64_t)(i * 7919 % 1000) * 1000);
	}
	add(&a, "huge", 90 * MiB);
	add(&b, "huge", 90 * MiB);
	CU_ASSERT_EQUAL(stage_deal(&a, 5, rd, 1, 8 * MiB, 1 * MiB), 0);
	CU_ASSERT_EQUAL(stage_deal(&b, 5, rd, 1, 8 * MiB, 1 * MiB), 0);
	CU_ASSERT_EQUAL_FATAL(a.n, b.n);
	for (size_t i = 0; i < a.n; i++) {
		CU_ASSERT_STRING_EQUAL(a.v[i].name, b.v[i].name);
		CU_ASSERT_EQUAL(a.v[i].rank, b.v[i].rank);
		CU_ASSERT_EQUAL(a.v[i].offset, b.v[i].offset);
	}
	stage_list_free(&a);
	stage_list_free(&b);
}

static void test_pack(void)
{
	struct stage_list l = { 0 }, got = { 0 };
	uint32_t rd[2] = { 0, 1 };
	size_t lens[2], at = 0, k = 0;

	add(&l, "a b\tc", 3);
	add(&l, "big", 40 * MiB);
	CU_ASSERT_EQUAL_FATAL(stage_deal(&l, 2, rd, 2, MiB, MiB), 0);
	uint8_t *buf = stage_pack(&l, 2, lens);
	CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
	for (unsigned r = 0; r < 2; r++) {
		CU_ASSERT_EQUAL(stage_unpack(&got, buf + at, lens[r]), 0);
		/* a cut buffer is refused, not read past its end */
		struct stage_list bad = { 0 };
		if (lens[r])
			CU_ASSERT_EQUAL(stage_unpack(&bad, buf + at,
						     lens[r] - 1),
					-EPROTO);
		stage_list_free(&bad);
		at += lens[r];
	}
	free(buf);
	CU_ASSERT_EQUAL_FATAL(got.n, l.n);
	for (unsigned r = 0; r < 2; r++)
		for (size_t i = 0; i < l.n; i++) {
			if (l.v[i].rank != r)
				continue;
			CU_ASSERT_STRING_EQUAL(got.v[k].name, l.v[i].name);
			CU_ASSERT_EQUAL(got.v[k].offset, l.v[i].offset);
			CU_ASSERT_EQUAL(got.v[k].split, l.v[i].split);
			CU_ASSERT_EQUAL(got.v[k].size, l.v[i].size);
			CU_ASSERT_EQUAL(got.v[k].dest, l.v[i].dest);
			k++;
		}
	CU_ASSERT_EQUAL(got.bytes, l.bytes);
	CU_ASSERT_EQUAL(got.files, 2);
	stage_list_free(&l);
	stage_list_free(&got);
}

static void test_map(void)
{
	char path[] = "/tmp/ferry-map.XXXXXX", why[256] = "";
	uint32_t rd[4];
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");

	fputs("# rank destination\n2 1\n 3\t2  # comment\n\n9 1\n", f);
	fclose(f);
	CU_ASSERT_EQUAL(stage_map(path, 4, 2, rd, why, sizeof(why)), 0);
	CU_ASSERT_EQUAL(rd[0], 0);
	CU_ASSERT_EQUAL(rd[1], 1);
	CU_ASSERT_EQUAL(rd[2], 0);
	CU_ASSERT_EQUAL(rd[3], 1);
	f = fopen(path, "w");
	fputs("0 1\n1 3\n", f);
	fclose(f);
	CU_ASSERT_EQUAL(stage_map(path, 4, 2, rd, why, sizeof(why)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "line 2"));
	unlink(path);
	CU_ASSERT(stage_map("/nonexistent/map", 4, 2, rd, why, sizeof(why)) < 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "/nonexistent/map"));
}

static void test_walk(void)
{
	char dir[] = "/tmp/ferry-walk.XXXXXX", p[512], why[256] = "";
	struct stage_list l = { 0 };

	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	snprintf(p, sizeof(p), "%s/run/", dir);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/run/empty", dir);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/run/b", dir);
	FILE *f = fopen(p, "w");
	fputs("hello", f);
	fclose(f);
	snprintf(p, sizeof(p), "%s/run/a", dir);
	f = fopen(p, "w");
	fclose(f);
	snprintf(p, sizeof(p), "%s/run/link", dir);
	CU_ASSERT_EQUAL(symlink("b", p), 0);
	snprintf(p, sizeof(p), "%s/run/", dir);
	char *srcs[] = { p };
	CU_ASSERT_EQUAL_FATAL(stage_walk(&l, srcs, 1, false, why, sizeof(why)), 0);
	CU_ASSERT_EQUAL_FATAL(l.n, 3); /* a, b, empty/: the symlink skipped */
	CU_ASSERT_STRING_EQUAL(l.v[0].name, "run/a");
	CU_ASSERT_STRING_EQUAL(l.v[1].name, "run/b");
	CU_ASSERT_EQUAL(l.v[1].size, 5);
	CU_ASSERT_STRING_EQUAL(l.v[2].name, "run/empty");
	CU_ASSERT_EQUAL(l.v[2].kind, STAGE_DIR);
	CU_ASSERT_EQUAL(l.files, 2);
	stage_list_free(&l);
	/* -L: the symlink is its target's bytes */
	CU_ASSERT_EQUAL(stage_walk(&l, srcs, 1, true, why, sizeof(why)), 0);
	CU_ASSERT_EQUAL(l.files, 3);
	stage_list_free(&l);
	/* two arguments landing under one name */
	char q[512];
	snprintf(q, sizeof(q), "%s/run", dir);
	char *two[] = { p, q };
	CU_ASSERT_EQUAL(stage_walk(&l, two, 2, false, why, sizeof(why)), -EEXIST);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "'run'"));
	stage_list_free(&l);
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CU_ASSERT_EQUAL(system(cmd), 0);
}

int main(void)
{
	CU_pSuite s;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("stage_deal", NULL, NULL);
	CU_add_test(s, "deal balanced", test_deal_balanced);
	CU_add_test(s, "deal split", test_deal_split);
	CU_add_test(s, "deal stable", test_deal_stable);
	CU_add_test(s, "pack", test_pack);
	CU_add_test(s, "map", test_map);
	CU_add_test(s, "walk", test_walk);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	unsigned fails = CU_get_number_of_failures();
	CU_cleanup_registry();
	return fails ? 1 : 0;
}
