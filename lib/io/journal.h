/* Resume journals (internal): which chunks of a part file are verified.
 *
 * Beside every part file the receiver keeps a journal: a header naming
 * the source (size, mtime, chunk size) and then one fixed-size record per
 * verified chunk (chunk index, crc32c, adler32, each record protected by
 * its own crc32c). Records are appended; a torn last record (the process
 * killed mid-write) is ignored on load. A journal whose header does not
 * match the sender's manifest entry is discarded.
 */
#ifndef FERRY_IO_JOURNAL_H
#define FERRY_IO_JOURNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ferry_journal_hdr {
	uint64_t size;
	int64_t mtime_ns;
	uint64_t chunk_size;
};

struct ferry_chunk_sum {
	uint32_t crc32c;
	uint32_t adler32;
	bool have;
};

struct ferry_journal {
	int fd;
	struct ferry_journal_hdr h;
	uint64_t n_chunks;            /* ceil(size / chunk_size), >= 0 */
	struct ferry_chunk_sum *sums; /* n_chunks entries */
	_Atomic uint64_t n_have;      /* chunks with have == true */
	_Atomic uint64_t end_;        /* private: offset of the next record */
};

/* Number of chunks of a file: ceil(size / chunk_size) (0 for size 0). */
uint64_t ferry__journal_chunks(uint64_t size, uint64_t chunk_size);

/* Open the journal NAME in parentfd for h. An existing journal with the
 * same header is loaded (sums[] filled from its records); one with another
 * header, or unreadable, is replaced by a fresh one (*reused = false).
 * Returns 0, -EINVAL (chunk_size 0), -EFBIG (more than 1 << 28 chunks),
 * -ESTALE (NAME has more than one link: not touched) or -errno. */
int ferry__journal_open(struct ferry_journal *j, int parentfd,
			const char *name, const struct ferry_journal_hdr *h,
			bool *reused);

/* Read the journal NAME in parentfd for h without changing it: 1 with
 * its records loaded into j (j->fd stays -1), 0 when it is missing, not
 * a regular file of one link, or for another header (j holds no chunk),
 * or -errno (as ferry__journal_open). Free j with ferry__journal_close,
 * whatever this returned. Used on journals other sessions write: a torn
 * last record is left out, as on load. */
int ferry__journal_peek(struct ferry_journal *j, int parentfd,
			const char *name, const struct ferry_journal_hdr *h);

/* Record that chunk idx is verified with these sums (appends a record;
 * not synced: call ferry__journal_sync after the part file's data is
 * synced). Thread-safe for distinct idx values. Adding an idx again with
 * the same sums is a no-op; with other sums it appends again and the last
 * record wins. Returns 0, -EINVAL for idx >= n_chunks, or -errno. */
int ferry__journal_add(struct ferry_journal *j, uint64_t idx, uint32_t crc32c,
		       uint32_t adler32);

/* Close the journal's file but keep its sums (to bound open files);
 * reopen NAME in parentfd before the next add. Reopen refuses (-ESTALE)
 * a file that is not a regular file with one link, or longer than what
 * this journal wrote. */
void ferry__journal_detach(struct ferry_journal *j);
int ferry__journal_reopen(struct ferry_journal *j, int parentfd,
			  const char *name);

/* fdatasync the journal. */
int ferry__journal_sync(struct ferry_journal *j);

/* Close; with remove, unlink NAME from parentfd too (after publishing).
 * Harmless after a failed open. */
void ferry__journal_close(struct ferry_journal *j, int parentfd,
			  const char *name, bool remove);

#endif
