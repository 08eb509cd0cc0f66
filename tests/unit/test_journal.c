#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cu.h"
#include "io/journal.h"

#define NAME ".f.ferry-journal"

static char dir[] = "/tmp/ferry-test-journal-XXXXXX";
static int dirfd_ = -1;

static int rm_entry(const char *path, const struct stat *sb, int flag,
		    struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static int setup(void)
{
	if (!mkdtemp(dir))
		return -1;
	dirfd_ = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return dirfd_ < 0 ? -1 : 0;
}

static int teardown(void)
{
	if (dirfd_ >= 0)
		close(dirfd_);
	return nftw(dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

/* A fixed but idx-dependent pair of sums. */
static uint32_t crc_of(uint64_t i)
{
	return (uint32_t)(0x9e3779b9u * (i + 1));
}

static uint32_t adler_of(uint64_t i)
{
	return (uint32_t)(0x85ebca6bu ^ (i * 7));
}

static const struct ferry_journal_hdr hdr3g = {
	.size = 3ull << 30, .mtime_ns = 1700000000123456789ll,
	.chunk_size = 4u << 20,
};

static off_t file_size(void)
{
	struct stat st;

	if (fstatat(dirfd_, NAME, &st, 0) != 0)
		return -1;
	return st.st_size;
}

static void truncate_to(off_t len)
{
	int fd = openat(dirfd_, NAME, O_WRONLY | O_CLOEXEC);

	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(ftruncate(fd, len), 0);
	close(fd);
}

static void fresh_journal(struct ferry_journal *j,
			  const struct ferry_journal_hdr *h)
{
	bool reused = true;

	unlinkat(dirfd_, NAME, 0);
	CU_ASSERT_EQUAL_FATAL(ferry__journal_open(j, dirfd_, NAME, h, &reused),
			      0);
	CU_ASSERT_FALSE(reused);
}

/* Reopen with h; check reused and that exactly the chunks in want[] (and
 * no others) are present with their sums. */
static void check_reopen(const struct ferry_journal_hdr *h, bool reuse,
			 const uint64_t *want, size_t n_want)
{
	struct ferry_journal j;
	bool reused = !reuse;

	CU_ASSERT_EQUAL_FATAL(ferry__journal_open(&j, dirfd_, NAME, h,
						  &reused), 0);
	CU_ASSERT_EQUAL(reused, reuse);
	CU_ASSERT_EQUAL(j.n_have, n_want);
	for (size_t i = 0; i < n_want; i++) {
		struct ferry_chunk_sum *s = &j.sums[want[i]];
		CU_ASSERT_TRUE(s->have);
		CU_ASSERT_EQUAL(s->crc32c, crc_of(want[i]));
		CU_ASSERT_EQUAL(s->adler32, adler_of(want[i]));
	}
	uint64_t have = 0;
	for (uint64_t i = 0; i < j.n_chunks; i++)
		have += j.sums[i].have;
	CU_ASSERT_EQUAL(have, n_want);
	ferry__journal_close(&j, dirfd_, NAME, false);
}

static void add_all(struct ferry_journal *j, const uint64_t *idx, size_t n)
{
	for (size_t i = 0; i < n; i++)
		CU_ASSERT_EQUAL(ferry__journal_add(j, idx[i], crc_of(idx[i]),
						   adler_of(idx[i])), 0);
}

static void test_chunks(void)
{
	CU_ASSERT_EQUAL(ferry__journal_chunks(0, 4096), 0);
	CU_ASSERT_EQUAL(ferry__journal_chunks(1, 4096), 1);
	CU_ASSERT_EQUAL(ferry__journal_chunks(4096, 4096), 1);
	CU_ASSERT_EQUAL(ferry__journal_chunks(4097, 4096), 2);
	CU_ASSERT_EQUAL(ferry__journal_chunks(3ull << 30, 4u << 20), 768);
	CU_ASSERT_EQUAL(ferry__journal_chunks((3ull << 30) + 1, 4u << 20), 769);
	CU_ASSERT_EQUAL(ferry__journal_chunks(10000000000000ull, 65536),
			152587891);
	CU_ASSERT_EQUAL(ferry__journal_chunks(UINT64_MAX, 1), UINT64_MAX);
	CU_ASSERT_EQUAL(ferry__journal_chunks(UINT64_MAX, 2),
			(UINT64_MAX >> 1) + 1);
	CU_ASSERT_EQUAL(ferry__journal_chunks(12345, 0), 0);
}

static void test_reuse(void)
{
	static const uint64_t idx[] = { 0, 5, 767, 100, 6 };
	struct ferry_journal j;

	fresh_journal(&j, &hdr3g);
	CU_ASSERT_EQUAL(j.n_chunks, 768);
	CU_ASSERT_EQUAL(j.n_have, 0);
	add_all(&j, idx, 5);
	CU_ASSERT_EQUAL(j.n_have, 5);
	/* the same sums again: harmless, nothing appended */
	off_t len = file_size();
	CU_ASSERT_EQUAL(ferry__journal_add(&j, 5, crc_of(5), adler_of(5)), 0);
	CU_ASSERT_EQUAL(file_size(), len);
	CU_ASSERT_EQUAL(j.n_have, 5);
	CU_ASSERT_EQUAL(ferry__journal_sync(&j), 0);
	ferry__journal_close(&j, dirfd_, NAME, false);
	check_reopen(&hdr3g, true, idx, 5);
	check_reopen(&hdr3g, true, idx, 5); /* loading changes nothing */
}

static void test_last_wins(void)
{
	struct ferry_journal j;
	bool reused;

	fresh_journal(&j, &hdr3g);
	CU_ASSERT_EQUAL(ferry__journal_add(&j, 9, 1, 2), 0);
	CU_ASSERT_EQUAL(ferry__journal_add(&j, 9, 3, 4), 0);
	CU_ASSERT_EQUAL(j.n_have, 1);
	CU_ASSERT_EQUAL(j.sums[9].crc32c, 3);
	ferry__journal_close(&j, dirfd_, NAME, false);
	CU_ASSERT_EQUAL_FATAL(ferry__journal_open(&j, dirfd_, NAME, &hdr3g,
						  &reused), 0);
	CU_ASSERT_TRUE(reused);
	CU_ASSERT_EQUAL(j.n_have, 1);
	CU_ASSERT_EQUAL(j.sums[9].crc32c, 3);
	CU_ASSERT_EQUAL(j.sums[9].adler32, 4);
	ferry__journal_close(&j, dirfd_, NAME, false);
}

static void test_mismatch(void)
{
	static const uint64_t idx[] = { 1, 2, 3 };
	struct ferry_journal_hdr h = hdr3g;
	struct ferry_journal j;

	fresh_journal(&j, &hdr3g);
	add_all(&j, idx, 3);
	ferry__journal_close(&j, dirfd_, NAME, false);
	h.size++;
	check_reopen(&h, false, NULL, 0);
	/* the mismatch replaced the journal: the old header is gone too */
	check_reopen(&hdr3g, false, NULL, 0);

	fresh_journal(&j, &hdr3g);
	add_all(&j, idx, 3);
	ferry__journal_close(&j, dirfd_, NAME, false);
	h = hdr3g;
	h.mtime_ns--;
	check_reopen(&h, false, NULL, 0);

	fresh_journal(&j, &hdr3g);
	add_all(&j, idx, 3);
	ferry__journal_close(&j, dirfd_, NAME, false);
	h = hdr3g;
	h.chunk_size = 1u << 20;
	check_reopen(&h, false, NULL, 0);
	check_reopen(&h, true, NULL, 0);
}

static void test_torn(void)
{
	static const uint64_t idx[] = { 10, 11, 12, 13, 14, 15, 16 };
	struct ferry_journal j;
	off_t hdr_len, rec_len;

	fresh_journal(&j, &hdr3g);
	hdr_len = file_size();
	add_all(&j, idx, 1);
	rec_len = file_size() - hdr_len;
	CU_ASSERT_FATAL(hdr_len > 0 && rec_len > 1);
	add_all(&j, idx + 1, 4);
	ferry__journal_close(&j, dirfd_, NAME, false);
	CU_ASSERT_EQUAL(file_size(), hdr_len + 5 * rec_len);

	/* killed mid-record: the three complete ones load */
	truncate_to(hdr_len + 3 * rec_len + rec_len / 2);
	check_reopen(&hdr3g, true, idx, 3);
	CU_ASSERT_EQUAL(file_size(), hdr_len + 3 * rec_len);

	/* appends after the cut stay aligned */
	CU_ASSERT_EQUAL_FATAL(ferry__journal_open(&j, dirfd_, NAME, &hdr3g,
						  NULL), 0);
	add_all(&j, idx + 3, 4);
	ferry__journal_close(&j, dirfd_, NAME, false);
	check_reopen(&hdr3g, true, idx, 7);

	/* a torn header: fresh */
	truncate_to(hdr_len - 1);
	check_reopen(&hdr3g, false, NULL, 0);
	CU_ASSERT_EQUAL(file_size(), hdr_len);
}

static void test_bad_record(void)
{
	static const uint64_t idx[] = { 20, 21, 22, 23 };
	struct ferry_journal j;
	off_t hdr_len, rec_len;
	unsigned char c;
	int fd;

	fresh_journal(&j, &hdr3g);
	hdr_len = file_size();
	add_all(&j, idx, 4);
	ferry__journal_close(&j, dirfd_, NAME, false);
	rec_len = (file_size() - hdr_len) / 4;

	/* flip a bit in the third record: the first two load, the rest go */
	fd = openat(dirfd_, NAME, O_RDWR | O_CLOEXEC);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(pread(fd, &c, 1, hdr_len + 2 * rec_len + 9), 1);
	c ^= 0x10;
	CU_ASSERT_EQUAL(pwrite(fd, &c, 1, hdr_len + 2 * rec_len + 9), 1);
	close(fd);
	check_reopen(&hdr3g, true, idx, 2);
	CU_ASSERT_EQUAL(file_size(), hdr_len + 2 * rec_len);

	/* a valid record of a bigger file has an idx out of range here:
	 * splice idx 20 of hdr3g's journal behind a one-chunk journal */
	struct ferry_journal_hdr small = hdr3g;
	char rec[256];
	small.size = 4u << 20;
	fresh_journal(&j, &hdr3g);
	add_all(&j, idx, 1);
	ferry__journal_close(&j, dirfd_, NAME, false);
	CU_ASSERT_FATAL(rec_len <= (off_t)sizeof(rec));
	fd = openat(dirfd_, NAME, O_RDONLY | O_CLOEXEC);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(pread(fd, rec, (size_t)rec_len, hdr_len), rec_len);
	close(fd);
	fresh_journal(&j, &small);
	CU_ASSERT_EQUAL(ferry__journal_add(&j, 0, crc_of(0), adler_of(0)), 0);
	ferry__journal_close(&j, dirfd_, NAME, false);
	fd = openat(dirfd_, NAME, O_WRONLY | O_CLOEXEC);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(pwrite(fd, rec, (size_t)rec_len, hdr_len + rec_len),
			rec_len);
	close(fd);
	static const uint64_t zero[] = { 0 };
	check_reopen(&small, true, zero, 1);
	CU_ASSERT_EQUAL(file_size(), hdr_len + rec_len);
}

static void test_garbage(void)
{
	unsigned char buf[1000];
	int fd;

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)(i * 37 + 11);
	memcpy(buf, "FJNL", 4); /* right magic, wrong everything else */
	unlinkat(dirfd_, NAME, 0);
	fd = openat(dirfd_, NAME, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(write(fd, buf, sizeof(buf)), (ssize_t)sizeof(buf));
	close(fd);
	check_reopen(&hdr3g, false, NULL, 0);
	CU_ASSERT(file_size() < 100);
	check_reopen(&hdr3g, true, NULL, 0);

	/* an empty file too */
	truncate_to(0);
	check_reopen(&hdr3g, false, NULL, 0);
}

struct adder {
	struct ferry_journal *j;
	uint64_t first, step, n;
	int rc;
};

static void *add_thread(void *arg)
{
	struct adder *a = arg;

	for (uint64_t i = a->first; i < a->n && !a->rc; i += a->step)
		a->rc = ferry__journal_add(a->j, i, crc_of(i), adler_of(i));
	return NULL;
}

static void test_threads(void)
{
	enum { T = 4 };
	struct ferry_journal_hdr h = { .size = 4000ull * 65536 + 1,
				       .mtime_ns = -5, .chunk_size = 65536 };
	struct ferry_journal j;
	struct adder a[T];
	pthread_t th[T];
	uint64_t n = ferry__journal_chunks(h.size, h.chunk_size);
	uint64_t *all = malloc(n * sizeof(*all));

	CU_ASSERT_FATAL(n == 4001 && all != NULL);
	fresh_journal(&j, &h);
	for (int t = 0; t < T; t++) {
		a[t] = (struct adder){ .j = &j, .first = (uint64_t)t,
				       .step = T, .n = n };
		CU_ASSERT_EQUAL_FATAL(pthread_create(&th[t], NULL, add_thread,
						     &a[t]), 0);
	}
	for (int t = 0; t < T; t++) {
		pthread_join(th[t], NULL);
		CU_ASSERT_EQUAL(a[t].rc, 0);
	}
	CU_ASSERT_EQUAL(j.n_have, n);
	CU_ASSERT_EQUAL(ferry__journal_sync(&j), 0);
	ferry__journal_close(&j, dirfd_, NAME, false);
	for (uint64_t i = 0; i < n; i++)
		all[i] = i;
	check_reopen(&h, true, all, n);
	free(all);
}

static void test_range_and_empty(void)
{
	struct ferry_journal_hdr h = { .size = 0, .mtime_ns = 0,
				       .chunk_size = 4096 };
	struct ferry_journal j;

	fresh_journal(&j, &hdr3g);
	CU_ASSERT_EQUAL(ferry__journal_add(&j, 768, 1, 1), -EINVAL);
	CU_ASSERT_EQUAL(ferry__journal_add(&j, UINT64_MAX, 1, 1), -EINVAL);
	CU_ASSERT_EQUAL(j.n_have, 0);
	ferry__journal_close(&j, dirfd_, NAME, false);

	fresh_journal(&j, &h);
	CU_ASSERT_EQUAL(j.n_chunks, 0);
	CU_ASSERT_EQUAL(j.n_have, 0);
	CU_ASSERT_EQUAL(ferry__journal_add(&j, 0, 1, 1), -EINVAL);
	CU_ASSERT_EQUAL(ferry__journal_sync(&j), 0);
	ferry__journal_close(&j, dirfd_, NAME, false);
	check_reopen(&h, true, NULL, 0);
}

static void test_bad_args(void)
{
	struct ferry_journal_hdr h = hdr3g;
	struct ferry_journal j;
	bool reused = true;

	h.chunk_size = 0;
	CU_ASSERT_EQUAL(ferry__journal_open(&j, dirfd_, NAME, &h, &reused),
			-EINVAL);
	CU_ASSERT_FALSE(reused);
	ferry__journal_close(&j, dirfd_, NAME, false); /* harmless */

	h.chunk_size = 1;
	h.size = (1ull << 28) + 1;
	CU_ASSERT_EQUAL(ferry__journal_open(&j, dirfd_, NAME, &h, NULL),
			-EFBIG);
	h.size = 20000000000000ull; /* 20 TB at 64 KiB: 305M chunks */
	h.chunk_size = 65536;
	CU_ASSERT_EQUAL(ferry__journal_open(&j, dirfd_, NAME, &h, NULL),
			-EFBIG);

	CU_ASSERT_EQUAL(ferry__journal_open(&j, dirfd_, "no/such/dir", &hdr3g,
					    NULL), -ENOENT);
	ferry__journal_close(&j, dirfd_, NULL, false);

	/* a symlink in the journal's place is not followed */
	unlinkat(dirfd_, NAME, 0);
	CU_ASSERT_EQUAL_FATAL(symlinkat("target", dirfd_, NAME), 0);
	CU_ASSERT_EQUAL(ferry__journal_open(&j, dirfd_, NAME, &hdr3g, NULL),
			-ELOOP);
	CU_ASSERT_EQUAL(faccessat(dirfd_, "target", F_OK, AT_SYMLINK_NOFOLLOW),
			-1);
	unlinkat(dirfd_, NAME, 0);
}

/* Peek reads another session's journal as it is: records loaded, the
 * file untouched; another header, a missing file or a second link read
 * as nothing. */
static void test_peek(void)
{
	static const uint64_t idx[] = { 3, 4, 700 };
	struct ferry_journal_hdr other = hdr3g;
	struct ferry_journal j, p;
	off_t before;

	fresh_journal(&j, &hdr3g);
	add_all(&j, idx, 3);
	before = file_size();
	CU_ASSERT_EQUAL(ferry__journal_peek(&p, dirfd_, NAME, &hdr3g), 1);
	CU_ASSERT_EQUAL(p.fd, -1);
	CU_ASSERT_EQUAL(p.n_have, 3);
	CU_ASSERT_TRUE(p.sums[700].have);
	CU_ASSERT_EQUAL(p.sums[700].crc32c, crc_of(700));
	CU_ASSERT_FALSE(p.sums[5].have);
	ferry__journal_close(&p, -1, NULL, false);
	/* a torn record being appended is left out */
	CU_ASSERT_EQUAL(pwrite(j.fd, "torn", 4, before), 4);
	CU_ASSERT_EQUAL(ferry__journal_peek(&p, dirfd_, NAME, &hdr3g), 1);
	CU_ASSERT_EQUAL(p.n_have, 3);
	ferry__journal_close(&p, -1, NULL, false);
	CU_ASSERT_EQUAL(file_size(), before + 4);
	/* for another source: nothing, and nothing rewritten */
	other.mtime_ns++;
	CU_ASSERT_EQUAL(ferry__journal_peek(&p, dirfd_, NAME, &other), 0);
	CU_ASSERT_EQUAL(p.n_have, 0);
	ferry__journal_close(&p, -1, NULL, false);
	CU_ASSERT_EQUAL(file_size(), before + 4);
	CU_ASSERT_EQUAL(linkat(dirfd_, NAME, dirfd_, "second", 0), 0);
	CU_ASSERT_EQUAL(ferry__journal_peek(&p, dirfd_, NAME, &hdr3g), 0);
	ferry__journal_close(&p, -1, NULL, false);
	unlinkat(dirfd_, "second", 0);
	ferry__journal_close(&j, dirfd_, NAME, true);
	CU_ASSERT_EQUAL(ferry__journal_peek(&p, dirfd_, NAME, &hdr3g), 0);
	ferry__journal_close(&p, -1, NULL, false);
}

static void test_remove(void)
{
	struct ferry_journal j;

	fresh_journal(&j, &hdr3g);
	CU_ASSERT_EQUAL(faccessat(dirfd_, NAME, F_OK, 0), 0);
	ferry__journal_close(&j, dirfd_, NAME, true);
	CU_ASSERT_EQUAL(faccessat(dirfd_, NAME, F_OK, 0), -1);
	CU_ASSERT_EQUAL(errno, ENOENT);
}

int main(void)
{
	CU_TestInfo tests[] = {
		{ "chunk arithmetic", test_chunks },
		{ "reopen reuses", test_reuse },
		{ "same idx twice: last wins", test_last_wins },
		{ "header mismatch starts fresh", test_mismatch },
		{ "torn trailing record", test_torn },
		{ "bad record stops the load", test_bad_record },
		{ "garbage file starts fresh", test_garbage },
		{ "concurrent adds", test_threads },
		{ "idx range and empty file", test_range_and_empty },
		{ "bad arguments", test_bad_args },
		{ "close with remove", test_remove },
		{ "peek leaves the journal as it is", test_peek },
		CU_TEST_INFO_NULL,
	};
	int rc;

	if (setup() != 0) {
		perror("journal test directory");
		return 2;
	}
	rc = ferry_cu_run("journal", tests);
	if (teardown() != 0)
		perror("removing the journal test directory");
	return rc;
}
