/* ferry-stage's report: every rank's counts gathered at rank 0, printed
 * as one summary (or one JSON document), and the job's exit status
 * agreed by all. */
#ifndef FERRY_STAGE_REPORT_H
#define FERRY_STAGE_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "deal.h"

struct cli_args;

/* One rank, as it travels to rank 0 (fixed size, plain bytes). */
struct stage_rank {
	uint32_t rank, sessions;
	uint64_t files, ranges;          /* dealt to it */
	uint64_t bytes;                  /* of them */
	uint64_t bytes_moved;            /* on the wire, as the sessions say */
	uint64_t published, skipped, failed; /* whole files */
	uint64_t ranges_failed;
	double seconds;
	int32_t status;                  /* the first failed session's */
	char host[64];
	char transport[12];
	char why[400];
};

enum stage_outcome {
	STAGE_R_NONE = 0,  /* not reported: its session failed */
	STAGE_R_LANDED,    /* in and checked; another range publishes */
	STAGE_R_PUBLISHED, /* in, and the file published by its session */
	STAGE_R_SKIPPED,   /* already there */
	STAGE_R_FAILED,
};

/* One range of a split file, as it travels to rank 0. */
struct stage_range {
	uint32_t file, rank, outcome, dest;
	uint64_t offset, length, size;
	uint32_t adler32, crc32c;           /* the range's */
	uint32_t file_adler32, file_crc32c; /* published: the file's */
};

/* A barrier that sleeps instead of polling (main.c). */
void stage_idle_barrier(void);

/* Failure records a rank sends at most, in bytes ("NAME\0WHY\0" each). */
#define STAGE_FAILS_MAX (1u << 20)

/* Gather every rank's rec, ranges and failure lines at rank 0, which
 * prints the summary (all: the dealt list, rank 0's only; dests: the
 * destination URLs) and decides the job's status; every rank returns it
 * (0, or 1 when anything failed). */
int stage_report(const struct stage_rank *rec, const struct stage_range *rg,
		 size_t n_rg, const char *fails, size_t fails_len,
		 const struct stage_list *all, int ranks, unsigned n_dest,
		 const char *const *dests, const struct cli_args *a);

#endif
