/* ferry-stage's work list: rank 0 walks the sources, cuts large files
 * into ranges and deals everything out across the ranks; each rank gets
 * its part as one packed buffer. No MPI here (unit-tested alone). */
#ifndef FERRY_STAGE_DEAL_H
#define FERRY_STAGE_DEAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum stage_kind {
	STAGE_FILE = 1, /* a regular file, or one range of it */
	STAGE_DIR = 2,  /* a directory with nothing dealt below it */
};

struct stage_item {
	char *src;       /* where rank 0 found it */
	char *name;      /* where it lands, below the destination */
	uint64_t size;   /* the whole file's bytes */
	uint64_t offset; /* a range: its first byte */
	uint64_t split;  /* a range: the file's range size; 0: whole */
	uint32_t file;   /* which walked entry it is (ranges share it) */
	uint32_t dest;   /* destination index, from 0 */
	uint32_t rank;
	uint8_t kind;    /* enum stage_kind */
};

struct stage_list {
	struct stage_item *v;
	size_t n, cap;
	uint64_t bytes;   /* of every file */
	uint64_t files;   /* files walked (a split file once) */
	uint64_t split;   /* files cut into ranges */
	uint32_t entries; /* walked entries (files and directories) */
};

void stage_list_free(struct stage_list *l);

/* Copy src into dst[size], cut to fit. */
static inline void stage_copy(char *dst, size_t size, const char *src)
{
	size_t n = strlen(src);

	if (n >= size)
		n = size - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* The bytes a range (or a whole file) covers. */
static inline uint64_t stage_item_len(const struct stage_item *it)
{
	if (!it->split)
		return it->size;
	return it->size - it->offset < it->split ? it->size - it->offset :
						   it->split;
}

/* Walk srcs as `ferry send` does: a file lands under its name, a
 * directory as itself and everything below it (names sorted). Symlinks
 * are skipped with a warning on stderr unless follow; devices, FIFOs and
 * sockets are refused. A directory with nothing below it to send is an
 * item of its own (so that it is made). Returns 0, or -errno with why. */
int stage_walk(struct stage_list *l, char *const *srcs, size_t n,
	       bool follow, char *why, size_t whylen);

/* Cut every file larger than split (0: none) into ranges of
 * ceil(size / ranks) rounded up to chunk, the ranges of a file all for
 * one destination (split files take the destinations in turn). Then deal:
 * the ranges first, largest file first, each range to the least loaded
 * rank that holds no other range of its file (so one large file uses
 * every rank); then every other item, largest first, to the least loaded
 * rank (a file counts 64 KiB more than its bytes, so many small files
 * spread too); ties go to the lower rank. A whole file or directory goes
 * to its rank's destination, rank_dest[rank]. The result depends on the
 * list and the arguments only: a rerun deals the same. Returns 0 or
 * -ENOMEM. */
int stage_deal(struct stage_list *l, unsigned ranks,
	       const uint32_t *rank_dest, unsigned n_dest, uint64_t split,
	       uint64_t chunk);

/* Which destination each rank sends its whole files to: round robin
 * (rank r: r mod n_dest), then the "RANK N" lines of the --map file at
 * path (NULL: none), N from 1. Returns 0, or -EINVAL / -errno with why
 * naming the file and line. */
int stage_map(const char *path, unsigned ranks, unsigned n_dest,
	      uint32_t *rank_dest, char *why, size_t whylen);

/* Every rank's items in one buffer (malloc'd), rank 0's first, then rank
 * 1's...: lens[r] bytes for rank r (lens holds ranks entries); NULL when
 * out of memory. And back: one rank's part, its items appended to l. */
uint8_t *stage_pack(const struct stage_list *l, unsigned ranks,
		    size_t *lens);
int stage_unpack(struct stage_list *l, const uint8_t *buf, size_t len);

#endif
