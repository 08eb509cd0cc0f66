/* Resume journals: which chunks of a part file are verified.
 *
 * On-disk format, version 1; every integer little-endian, encoded byte by
 * byte (no struct is ever written as it lies in memory):
 *
 *   header, 36 bytes at offset 0
 *     0  4  magic "FJNL"
 *     4  u32 version (1)
 *     8  u64 size of the source file
 *    16  i64 mtime_ns of the source file (two's complement)
 *    24  u64 chunk_size
 *    32  u32 crc32c of bytes 0..31
 *
 *   records, 20 bytes each, from offset 36
 *     0  u64 chunk index
 *     8  u32 crc32c of the chunk
 *    12  u32 adler32 of the chunk
 *    16  u32 crc32c of bytes 0..15 of this record
 *
 * A file shorter than the header, with another magic, version, header crc
 * or (size, mtime_ns, chunk_size) is not reused: it is truncated and a
 * fresh header written. Records are loaded in order until the first one
 * that is short (torn by a crash), fails its crc, or names an index
 * >= n_chunks; the file is truncated there so later records stay aligned.
 * The same index may appear more than once: the last record wins.
 *
 * Appends reserve their slot with an atomic add on j->end_ and pwrite
 * there, so concurrent adders never share a slot and need no lock. A
 * failed pwrite leaves a hole; on the next load the records from the hole
 * on are dropped, which costs only re-sending those chunks.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ferry/sum.h"
#include "io/fsx.h"
#include "io/journal.h"
#include "util/cursor.h"

#define JNL_VERSION 1u
#define JNL_HDR_LEN 36u
#define JNL_REC_LEN 20u
#define JNL_MAX_CHUNKS (UINT64_C(1) << 28)
#define JNL_READ_RECS 256u /* records per read while loading */

static const uint8_t jnl_magic[4] = { 'F', 'J', 'N', 'L' };

uint64_t ferry__journal_chunks(uint64_t size, uint64_t chunk_size)
{
	if (chunk_size == 0)
		return 0;
	return size / chunk_size + (size % chunk_size != 0);
}

/* Read up to len bytes at off, stopping early only at end of file.
 * Returns the byte count or -errno. */
static ssize_t pread_upto(int fd, uint8_t *buf, size_t len, uint64_t off)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = pread(fd, buf + got, len - got, (off_t)(off + got));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

static void encode_hdr(uint8_t *p, const struct ferry_journal_hdr *h)
{
	struct ferry__wcur c = { .p = p, .cap = JNL_HDR_LEN };

	ferry__put_bytes(&c, jnl_magic, 4);
	ferry__put_u32(&c, JNL_VERSION);
	ferry__put_u64(&c, h->size);
	ferry__put_u64(&c, (uint64_t)h->mtime_ns);
	ferry__put_u64(&c, h->chunk_size);
	ferry__put_u32(&c, ferry_crc32c(0, p, c.off));
}

/* Apply one record to j; false if it is not a valid record for j. */
static bool load_record(struct ferry_journal *j, const uint8_t *p,
			uint64_t *n_have)
{
	struct ferry__rcur c = { .p = p, .len = JNL_REC_LEN };
	uint64_t idx = ferry__get_u64(&c);
	uint32_t crc32c = ferry__get_u32(&c), adler32 = ferry__get_u32(&c);
	struct ferry_chunk_sum *s;

	if (ferry__get_u32(&c) != ferry_crc32c(0, p, 16) || idx >= j->n_chunks)
		return false;
	s = &j->sums[idx];
	if (!s->have)
		(*n_have)++;
	s->crc32c = crc32c;
	s->adler32 = adler32;
	s->have = true;
	return true;
}

/* Load the journal in fd if its header matches j->h. Returns 1 and sets
 * *end past the last good record, 0 if the file is not a journal for
 * j->h, or -errno. */
static int load(struct ferry_journal *j, int fd, uint64_t *end)
{
	uint8_t want[JNL_HDR_LEN], buf[JNL_REC_LEN * JNL_READ_RECS];
	uint64_t off = JNL_HDR_LEN, n_have = 0;
	ssize_t n;

	n = pread_upto(fd, buf, JNL_HDR_LEN, 0);
	if (n < 0)
		return (int)n;
	encode_hdr(want, &j->h);
	if ((size_t)n < JNL_HDR_LEN || memcmp(buf, want, JNL_HDR_LEN) != 0)
		return 0;
	for (;;) {
		size_t k;

		n = pread_upto(fd, buf, sizeof(buf), off);
		if (n < 0)
			return (int)n;
		for (k = 0; k + JNL_REC_LEN <= (size_t)n; k += JNL_REC_LEN) {
			if (!load_record(j, buf + k, &n_have))
				break;
			off += JNL_REC_LEN;
		}
		if (k < sizeof(buf))
			break; /* end of file, a torn record or a bad one */
	}
	atomic_store(&j->n_have, n_have);
	*end = off;
	return 1;
}

static int write_fresh(const struct ferry_journal *j, int fd)
{
	uint8_t hdr[JNL_HDR_LEN];

	if (ftruncate(fd, 0) != 0)
		return -errno;
	encode_hdr(hdr, &j->h);
	return ferry__fs_pwrite_full(fd, hdr, sizeof(hdr), 0);
}

/* An empty journal for h, in memory. 0, -EINVAL, -EFBIG or -ENOMEM. */
static int init(struct ferry_journal *j, const struct ferry_journal_hdr *h)
{
	uint64_t n;

	j->fd = -1;
	j->h = *h;
	j->n_chunks = 0;
	j->sums = NULL;
	atomic_init(&j->n_have, 0);
	atomic_init(&j->end_, 0);
	if (h->chunk_size == 0)
		return -EINVAL;
	n = ferry__journal_chunks(h->size, h->chunk_size);
	if (n > JNL_MAX_CHUNKS)
		return -EFBIG;
	j->sums = calloc(n ? (size_t)n : 1, sizeof(*j->sums));
	if (!j->sums)
		return -ENOMEM;
	j->n_chunks = n;
	return 0;
}

int ferry__journal_peek(struct ferry_journal *j, int parentfd,
			const char *name, const struct ferry_journal_hdr *h)
{
	struct stat st;
	uint64_t end;
	int fd, rc = init(j, h);

	if (rc)
		return rc;
	fd = openat(parentfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	rc = fstat(fd, &st) ? -errno :
	     S_ISREG(st.st_mode) && st.st_nlink == 1 ? load(j, fd, &end) : 0;
	close(fd);
	return rc;
}

int ferry__journal_open(struct ferry_journal *j, int parentfd,
			const char *name, const struct ferry_journal_hdr *h,
			bool *reused)
{
	struct stat st;
	uint64_t end = JNL_HDR_LEN;
	int fd, rc;

	if (reused)
		*reused = false;
	rc = init(j, h);
	if (rc)
		return rc;

	fd = openat(parentfd, name,
		    O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		rc = -errno;
		goto free_sums;
	}
	if (fstat(fd, &st) != 0) {
		rc = -errno;
		goto close_fd;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = -EINVAL;
		goto close_fd;
	}
	if (st.st_nlink != 1) {
		rc = -ESTALE; /* a second name would take our writes elsewhere */
		goto close_fd;
	}
	rc = load(j, fd, &end);
	if (rc < 0)
		goto close_fd;
	if (rc == 0) {
		rc = write_fresh(j, fd);
		if (rc)
			goto close_fd;
	} else if ((uint64_t)st.st_size != end && ftruncate(fd, (off_t)end)) {
		rc = -errno;
		goto close_fd;
	}
	if (reused)
		*reused = rc == 1;
	atomic_store(&j->end_, end);
	j->fd = fd;
	return 0;

close_fd:
	close(fd);
free_sums:
	free(j->sums);
	j->sums = NULL;
	j->n_chunks = 0;
	atomic_store(&j->n_have, 0);
	if (reused)
		*reused = false;
	return rc;
}

int ferry__journal_add(struct ferry_journal *j, uint64_t idx, uint32_t crc32c,
		       uint32_t adler32)
{
	uint8_t rec[JNL_REC_LEN];
	struct ferry__wcur c = { .p = rec, .cap = sizeof(rec) };
	struct ferry_chunk_sum *s;
	uint64_t off;
	int rc;

	if (idx >= j->n_chunks)
		return -EINVAL;
	s = &j->sums[idx];
	if (s->have && s->crc32c == crc32c && s->adler32 == adler32)
		return 0;
	ferry__put_u64(&c, idx);
	ferry__put_u32(&c, crc32c);
	ferry__put_u32(&c, adler32);
	ferry__put_u32(&c, ferry_crc32c(0, rec, c.off));
	off = atomic_fetch_add(&j->end_, JNL_REC_LEN);
	rc = ferry__fs_pwrite_full(j->fd, rec, sizeof(rec), off);
	if (rc)
		return rc;
	if (!s->have)
		atomic_fetch_add(&j->n_have, 1);
	s->crc32c = crc32c;
	s->adler32 = adler32;
	s->have = true;
	return 0;
}

void ferry__journal_detach(struct ferry_journal *j)
{
	if (j->fd >= 0)
		close(j->fd);
	j->fd = -1;
}

int ferry__journal_reopen(struct ferry_journal *j, int parentfd,
			  const char *name)
{
	struct stat st;
	int fd;

	if (j->fd >= 0)
		return 0;
	fd = openat(parentfd, name, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_nlink != 1 ||
	    (uint64_t)st.st_size > atomic_load(&j->end_)) {
		close(fd);
		return -ESTALE;
	}
	j->fd = fd;
	return 0;
}

int ferry__journal_sync(struct ferry_journal *j)
{
	return fdatasync(j->fd) != 0 ? -errno : 0;
}

void ferry__journal_close(struct ferry_journal *j, int parentfd,
			  const char *name, bool remove)
{
	if (j->fd >= 0)
		close(j->fd);
	j->fd = -1;
	free(j->sums);
	j->sums = NULL;
	j->n_chunks = 0;
	if (remove && name)
		unlinkat(parentfd, name, 0);
}
