/* File sessions inside the pipeline (internal): the sender's and the
 * receiver's per-file state, the plan that travels between them, and the
 * datapath ops that read and write files. */
#ifndef FERRY_CORE_FILES_H
#define FERRY_CORE_FILES_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/pipe.h"
#include "ferry/files.h"
#include "io/journal.h"
#include "io/manifest.h"

/* ---- the plan: one entry per manifest FILE, receiver -> sender -------- */
enum {
	FERRY__PLAN_SEND = 1,   /* send every chunk */
	FERRY__PLAN_RESUME = 2, /* the listed chunk ranges are already there */
	FERRY__PLAN_EXISTS = 3, /* target exists with this size (skip-existing) */
};

struct ferry__range {
	uint64_t first, count;
};

struct ferry__plan_entry {
	uint32_t idx;
	uint8_t action;
	uint32_t crc32c, adler32;  /* EXISTS: the target's checksums */
	uint32_t n_ranges;         /* RESUME */
	struct ferry__range *ranges;
};

/* Encode entries [*next, n) into buf; returns bytes used, advances *next. */
size_t ferry__plan_encode(const struct ferry__plan_entry *e, size_t n,
			  size_t *next, uint8_t *buf, size_t cap);
/* Decode one batch, calling fn for each entry (ranges valid during the
 * call). Returns 0 or -FERRY_EPROTO. */
int ferry__plan_decode(const uint8_t *buf, size_t len,
		       int (*fn)(void *arg, const struct ferry__plan_entry *e),
		       void *arg);

/* Whole-file crc32c and adler32 from the per-chunk sums of a file of size
 * bytes in chunks of chunk bytes, in order (both sides use it). */
void ferry__sums_combine(const struct ferry_chunk_sum *s, uint64_t n,
			 uint64_t size, uint64_t chunk, uint32_t *crc,
			 uint32_t *adler);

/* A queue of file indexes from workers to the control thread, with an
 * eventfd the control thread polls. Pushed once per file, not per chunk. */
struct ferry__fileq {
	pthread_mutex_t lock;
	uint32_t *v;
	size_t head, tail, cap;
	int efd;
};
int ferry__fileq_init(struct ferry__fileq *q, size_t cap);
void ferry__fileq_push(struct ferry__fileq *q, uint32_t idx);
bool ferry__fileq_pop(struct ferry__fileq *q, uint32_t *idx);
/* Clear the eventfd; call before popping everything, so a push racing
 * with the pops signals again. */
void ferry__fileq_ack(struct ferry__fileq *q);
void ferry__fileq_free(struct ferry__fileq *q);

/* ---- sender ------------------------------------------------------------ */
struct ftx_file {
	pthread_mutex_t lock;  /* taken to open the file, once */
	int fd;
	bool direct;
	uint64_t n_chunks;
	uint64_t to_read;      /* chunks read this session (sent or summed) */
	_Atomic uint64_t read_done;
	struct ferry_journal_hdr jh;
	struct ferry_chunk_sum *sums;
	uint8_t action;
	bool send;             /* chunks go on the wire */
	bool skip;             /* identical target: nothing to do */
	uint64_t bytes_sent;
	uint64_t t_first_ns;
	/* result */
	bool done;
	int status;
	char why[256];
	uint32_t crc32c, adler32;
};

struct ftx_unit {
	uint32_t file;
	uint32_t send; /* 1: on the wire, 0: read for its checksum only */
	uint64_t chunk;
};

struct ferry__ftx {
	struct ferry_manifest m;
	struct ftx_file *f;     /* by manifest index */
	struct ftx_unit *u;
	uint64_t n_units;
	_Atomic uint64_t next_unit;
	struct ferry__fileq q;  /* files read to the end */
	uint64_t chunk;
	uint64_t results;       /* files with a final result */
	const struct ferry_send_spec *spec;
};

extern const struct ferry__dp_ops ferry__files_tx_dp;

/* ---- receiver ---------------------------------------------------------- */
struct frx_file {
	pthread_mutex_t lock;  /* taken to open the part file, once, and
				  around each write to it (files_rx_dp.c) */
	int parentfd, partfd;
	const char *base;      /* last path component (points into m) */
	uint64_t n_chunks;
	_Atomic uint64_t landed; /* chunks verified, journal ones included */
	struct ferry_journal j;
	bool jopen;
	bool expect;           /* a FILE we may receive */
	bool have_sum, skip, done, queued;
	uint32_t s_crc, s_adler; /* the sender's */
};

struct ferry__frx {
	struct ferry_manifest m;
	struct frx_file *f;
	int topfd;              /* the receiver's --dir */
	char dest[4096];        /* below it, where this session lands */
	int dirfd;              /* topfd/dest, once created */
	uint32_t flags, cksum;
	uint64_t chunk;
	struct ferry__fileq q;  /* files whose last chunk landed */
	uint64_t pending;       /* files not yet done */
	uint64_t published, failed, skipped, resumed;
};

extern const struct ferry__dp_ops ferry__files_rx_dp;

struct ferry_msg;
/* A daemon's say over a push session: may this client write these files
 * below dest (FILES.dest, without leading '/') with these FILES flags?
 * 0, or a negative errno (-EACCES) with why. */
struct ferry__frx_check {
	int (*fn)(void *arg, const char *dest, uint32_t flags,
		  const struct ferry_manifest *m, char *why, size_t whylen);
	void *arg;
};

/* Receive FILES and the manifest on fd, check them with check (NULL:
 * none), check and plan every file below o->dir, answer with the plan.
 * On refusal the sender is told why. */
int ferry__frx_open(struct ferry__frx *r, int fd, const struct ferry_opts *o,
		    uint64_t chunk, const struct ferry__frx_check *check,
		    char *why, size_t whylen);
int ferry__frx_plan(struct ferry__frx *r, struct ferry__plan_entry **plan,
		    size_t *n_plan, char *why, size_t whylen);
/* Control-loop hooks (struct ferry__hooks). */
int ferry__frx_work(void *ctx, int fd, char *why, size_t whylen);
int ferry__frx_msg(void *ctx, int fd, const struct ferry_msg *m, char *why,
		   size_t whylen);
/* Close everything; unfinished files keep their part and journal. */
void ferry__frx_close(struct ferry__frx *r, bool ok);

#endif
