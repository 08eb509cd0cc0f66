/* lib/files: file sessions over lib/pipe, both ends: the walk and the
 * manifest, the plan, reading and writing chunks, staging, publishing and
 * resume. ferry_send is here; the receiver's side is run by
 * daemon/server.c.
 *
 * File sessions inside the pipeline (internal): the sender's and the
 * receiver's per-file state, the plan that travels between them, and the
 * datapath ops that read and write files. */
#ifndef FERRY_FILES_FILES_H
#define FERRY_FILES_FILES_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "ctrl/msg.h"
#include "ferry/files.h"
#include "io/fsx.h"
#include "io/journal.h"
#include "io/manifest.h"
#include "io/stage.h"
#include "pipe/pipe.h"

/* ---- the plan: one entry per manifest FILE, receiver -> sender -------- */
enum {
	FERRY__PLAN_SEND = 1,   /* send every chunk */
	FERRY__PLAN_RESUME = 2, /* the listed chunk ranges are already there */
	FERRY__PLAN_EXISTS = 3, /* target exists with this size (skip-existing) */
	FERRY__PLAN_FAIL = 4,   /* this file alone cannot land: status, text */
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
	uint32_t status;           /* FAIL: a positive errno */
	char *text;                /* FAIL: why, for the sender's report
				      (owned by the entry; at most 255 bytes
				      cross the wire) */
};

/* Encode entries [*next, n) into buf; returns bytes used, advances *next. */
size_t ferry__plan_encode(const struct ferry__plan_entry *e, size_t n,
			  size_t *next, uint8_t *buf, size_t cap);
/* Decode one batch, calling fn for each entry (ranges valid during the
 * call). Returns 0 or -FERRY_EPROTO. */
int ferry__plan_decode(const uint8_t *buf, size_t len,
		       int (*fn)(void *arg, const struct ferry__plan_entry *e),
		       void *arg);

/* ---- split files: a range per session (ferry_send_range) ------------- */
/* One range of a file: bytes [off, off + len), which are its chunks
 * [first, first + count) of the whole file (chunk indexes, as in its
 * journal). */
struct ferry__span {
	uint64_t off, len;
	uint64_t first, count;
};
/* The range at offset of a file of size bytes cut every split bytes, in
 * chunks of chunk bytes: 0 with *s, or -EINVAL (split 0 or not a multiple
 * of chunk, offset not a multiple of split or not before size). */
int ferry__span_of(uint64_t size, uint64_t offset, uint64_t split,
		   uint64_t chunk, struct ferry__span *s);
/* How many ranges a file of size bytes has, cut every split bytes. */
static inline uint64_t ferry__span_count(uint64_t size, uint64_t split)
{
	return split ? size / split + (size % split != 0) : 0;
}

/* RANGES (sender -> receiver, after the manifest, with FERRY_FILES_RANGES):
 * which manifest files are a range, in batches.
 *   entry: u32 idx, u64 offset, u64 split */
struct ferry__file_range {
	uint32_t idx;
	uint64_t offset, split;
};
#define FERRY__RANGE_ENTRY_LEN 20
/* Encode entries [*next, n) into buf; returns bytes used, advances *next. */
size_t ferry__ranges_encode(const struct ferry__file_range *e, size_t n,
			    size_t *next, uint8_t *buf, size_t cap);
/* Decode one batch, calling fn for each entry. 0, -FERRY_EPROTO (not a
 * whole number of entries) or fn's error. */
int ferry__ranges_decode(const uint8_t *buf, size_t len,
			 int (*fn)(void *arg, const struct ferry__file_range *e),
			 void *arg);

/* Per-file results travel in batches (FILE_SUMS, FILE_DONES: a million
 * empty files are a million of each): entries appended to a blob, the
 * blob sent when full or when the control thread is done for now.
 *   FILE_SUMS entry:  u32 idx, u32 flags, u32 crc32c, u32 adler32
 *   FILE_DONES entry: u32 idx, u32 status, u32 crc32c, u32 adler32,
 *                     u8 text length, text */
struct ferry__batch {
	uint16_t type;          /* FERRY_MSG_FILE_SUMS or _DONES */
	size_t len;
	uint8_t *buf;           /* FERRY_BLOB_MAX bytes */
};
int ferry__batch_init(struct ferry__batch *b, uint16_t type);
void ferry__batch_free(struct ferry__batch *b);
/* Append one entry, sending the batch first when it is full. */
int ferry__batch_sum(struct ferry__batch *b, int fd, int timeout_ms,
		     const struct ferry_msg_file_sum *s);
int ferry__batch_done(struct ferry__batch *b, int fd, int timeout_ms,
		      uint32_t idx, int status, uint32_t crc, uint32_t adler,
		      const char *text);
/* Send what is there (nothing: 0). */
int ferry__batch_send(struct ferry__batch *b, int fd, int timeout_ms);
/* Decode a FILE_SUMS or FILE_DONES blob, calling fn for each entry as the
 * single message it stands for. 0, -FERRY_EPROTO, or fn's error. */
int ferry__batch_decode(const struct ferry_msg *m,
			int (*fn)(void *arg, const struct ferry_msg *one),
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
/* Several at once, with one signal: a pack's files are pushed together
 * when the pack is done, not one by one, so the control thread wakes
 * once per pack instead of every few files. */
void ferry__fileq_push_n(struct ferry__fileq *q, const uint32_t *idx,
			 size_t n);
bool ferry__fileq_pop(struct ferry__fileq *q, uint32_t *idx);
/* Clear the eventfd; call before popping everything, so a push racing
 * with the pops signals again. */
void ferry__fileq_ack(struct ferry__fileq *q);
/* Signal again: the consumer stopped with items left. */
void ferry__fileq_kick(struct ferry__fileq *q);
void ferry__fileq_free(struct ferry__fileq *q);

/* ---- sender ------------------------------------------------------------ */
struct ftx_file {
	int fd;                /* opened once, under ftx.open_lock[] */
	bool direct;
	uint64_t n_chunks;     /* the whole file's */
	uint64_t first, count; /* the chunks this session reads: all of
				  them, or a range's */
	uint64_t split;        /* != 0: a range of a split file, sent as
				  one (ferry_send_range) */
	uint64_t offset, length; /* what is reported: the range's bytes, or
				  the whole file's */
	bool range;            /* reported as a range (one that covers the
				  whole file is sent whole: split 0) */
	bool published;        /* the receiver published the file (PUBLISHED) */
	uint32_t file_crc, file_adler; /* then: the whole file's sums */
	uint64_t to_read;      /* chunks read this session (sent or summed) */
	_Atomic uint64_t read_done;
	struct ferry_journal_hdr jh;
	struct ferry_chunk_sum *sums; /* by chunk: &one, or allocated */
	struct ferry_chunk_sum one;   /* a file of one chunk (or none) */
	uint8_t action;
	bool send;             /* chunks go on the wire */
	bool skip;             /* identical target: nothing to do */
	uint64_t bytes_sent;
	uint64_t t_first_ns;
	/* result */
	bool done;
	int status;
	char *why;             /* with a status: the reason, or NULL */
	uint32_t crc32c, adler32;
};

/* Files share these locks by index (a million files need no million
 * mutexes): taken only to open a file the first time. */
#define FTX_OPEN_LOCKS 64

/* One chunk: chunk k of a file, or a pack of whole small files. */
struct ftx_unit {
	uint32_t file;   /* a pack: where its files start in ftx.packed */
	uint16_t send;   /* 1: on the wire, 0: read for its checksum only */
	uint16_t n_pack; /* 0: one chunk of file; else a pack of n_pack files */
	uint64_t chunk;
};

/* Packs (FERRY_CHUNK_PACK): a file of one chunk and at most
 * FTX_PACK_FILE_MAX bytes travels with its neighbours, up to
 * FTX_PACK_FILES of them in one slot. The per-chunk costs (a slot, a
 * send, a completion, a credit, the 4 KiB header block) are paid once
 * per pack instead of once per file. */
#define FTX_PACK_FILE_MAX (64u << 10)
#define FTX_PACK_FILES 256u

struct ferry__ftx {
	struct ferry_manifest m;
	struct ftx_file *f;     /* by manifest index */
	pthread_mutex_t *open_lock; /* FTX_OPEN_LOCKS of them */
	struct ftx_unit *u;
	uint32_t *packed;       /* the files of the packs, in pack order */
	uint64_t n_units;
	_Atomic uint64_t next_unit;
	struct ferry__fileq q;  /* files read to the end */
	uint64_t chunk;
	uint64_t results;       /* files with a final result */
	uint64_t n_split;       /* files sent as ranges */
	uint64_t bytes;         /* what the files are: whole, or a range's */
	const struct ferry_send_spec *spec;
};

extern const struct ferry__dp_ops ferry__files_tx_dp;

/* A pack's next record at *at (advanced past it) in payload[0..len):
 * 1 with *idx, *flen, *crc and *data set, 0 at the end, -FERRY_EPROTO
 * when a record runs past the payload (files_pack.c). */
int ferry__pack_next(const uint8_t *payload, uint32_t len, uint32_t *at,
		     uint32_t *idx, uint32_t *flen, uint32_t *crc,
		     const uint8_t **data);
/* Write a record's header at p. */
void ferry__pack_put(uint8_t *p, uint32_t idx, uint32_t flen, uint32_t crc);
/* Walk every record of payload[0..len): 0 with *n records and *crc the
 * crc32c of their headers (what a pack's chunk header carries), or
 * -FERRY_EPROTO when one runs past the payload. */
int ferry__pack_headers(const uint8_t *payload, uint32_t len, uint64_t *n,
			uint32_t *crc);

/* Split files, the sender's side (files_tx_range.c): make the paths
 * that spec->ranges cut (ent: the manifest entry of each path, SIZE_MAX
 * for none) ranges of their files, refusing with why a range that is
 * not one (a split not in whole chunks, an offset not at a range's
 * start, not a regular file). 0 or -EINVAL. */
int ferry__ftx_ranges(struct ferry__ftx *t, const struct ferry_send_spec *spec,
		      const size_t *ent, char *why, size_t whylen);
/* Send RANGES, in batches, for the files that are ranges. */
int ferry__ftx_send_ranges(const struct ferry__ftx *t, int fd,
			   struct ferry_msg *m, int timeout_ms);

/* Open a source for reading, through spec->open_source when set
 * (files_tx_dp.c). */
int ferry__ftx_open(const struct ferry__ftx *t, const char *src,
		    bool *direct);

/* ---- receiver ---------------------------------------------------------- */
/* A file with chunks on the way: made at its first chunk (or when a
 * journal is resumed), freed when the file is finalized. At most
 * max_open of them have their files open at once; the least recently
 * used ones are closed to make room (io is reopened on the next chunk). */
struct frx_live {
	pthread_mutex_t lock;    /* around each write, journal append, open
				    and close of the files below */
	_Atomic unsigned refs;   /* datapath users (the control thread frees
				    a retired entry once this is 0) */
	_Atomic uint64_t used;   /* last use, for eviction */
	struct ferry__stage_key key;
	struct ferry__stage *st; /* the staging area of its file system */
	int partfd;              /* -1 when closed */
	bool created;            /* the part file exists: reopen it */
	bool claimed;            /* this session holds the target */
	bool jopen;              /* j holds the sums (multi-chunk files) */
	bool listed;             /* on the open list */
	bool solo;               /* one chunk: opened, written and closed
				    by one call, never on the open list */
	bool sealed;             /* complete: mode and mtime set, closed */
	bool made_here;          /* created by this session with its mode */
	bool ranged;             /* a range of a split file: key is the
				    target's, the part file and journal are
				    the split file's (io/stage.h), claimed
				    with the target shared and the range's
				    own key (ferry__stage_key_range) */
	uint64_t split, roff;
	struct ferry_journal j;
	struct ferry_chunk_sum one; /* the sums of a one-chunk file */
	struct frx_live *prev, *next; /* open list (frx.open_lock) */
};

struct frx_file {
	struct frx_live *_Atomic live;
	_Atomic uint64_t landed; /* chunks verified (or discarded, once the
				    file failed), journal ones included */
	_Atomic int fail;        /* the datapath gave this file up: -errno */
	uint64_t n_chunks;       /* chunks this session takes: all, or its
				    range's */
	uint64_t first;          /* the index of the first of them */
	uint64_t split, roff;    /* split != 0: a range of a split file, at
				    offset roff (RANGES) */
	uint32_t s_crc, s_adler; /* the sender's */
	uint8_t stage;           /* index into frx.stage */
	bool expect;             /* a FILE we may receive */
	bool have_sum, skip, done, queued;
};

/* Verified files waiting for their batch to be published. */
struct frx_pub {
	uint32_t idx;
	struct ferry__stage_key key;
	uint32_t crc, adler;
	struct ferry__stage *st;
	bool claimed;            /* released once published */
};

/* A file system below the root and its staging area: the root's own,
 * and one at the top of each other file system mounted below it that a
 * target lands on (a part file is renamed, so it must be staged on the
 * target's file system). */
#define FRX_STAGES 8
struct frx_fs {
	dev_t dev;
	char *rel;              /* its top below the root ("" for the root) */
	int fd;                 /* that directory (the root's: not owned) */
	uint64_t need;          /* bytes this session will write there */
	bool used;              /* a file lands there: its area is made */
	struct ferry__stage st;
};

#define FRX_STRIPES 64
#define FRX_MAX_OPEN 512  /* targets open at once, at most */
#define FRX_BATCH_FILES 256
#define FRX_BATCH_BYTES (UINT64_C(256) << 20)
#define FRX_BATCH_NS (UINT64_C(200) * 1000000)
/* Targets claimed and not yet published, at most: a worker about to
 * claim one more waits for the control thread to catch up. The kernel
 * walks every lock of the lock file on each claim, so an unbounded
 * backlog makes claims quadratic. Above the batch and the files in
 * flight (ferry send --files: 256 at most), so waiting here never holds
 * up what would drain it. */
#define FRX_MAX_CLAIMED (FRX_BATCH_FILES + FERRY_MAX_FILES)

struct ferry__frx {
	struct ferry_manifest m;
	struct frx_file *f;
	int topfd;              /* the receiver's --dir (or export root) */
	char dest[4096];        /* below it, where this session lands */
	int dirfd;              /* topfd/dest, once created */
	struct frx_fs stage[FRX_STAGES]; /* [0]: the root's */
	unsigned n_stage;
	char **mounts;          /* mount points below the root (relative) */
	int n_mounts;
	int *mstage;            /* per mount: its stage, once opened; -1 */
	struct ferry__dirs dirs; /* control thread's directory fds */
	uint32_t flags, cksum;
	int fsync_mode;         /* enum ferry_fsync */
	bool keep_setid;
	mode_t umask;           /* this process's (what open(2) takes away) */
	uint64_t chunk;
	struct ferry__fileq q;  /* files whose last chunk landed */
	pthread_mutex_t stripe[FRX_STRIPES]; /* frx_file.live, by index */
	pthread_mutex_t open_lock;
	struct frx_live *open_head; /* lives with open files */
	unsigned n_open, max_open;
	struct frx_pub batch[FRX_BATCH_FILES]; /* verified, not yet published */
	size_t n_batch;
	uint64_t batch_bytes, batch_t0;
	int ctrl_fd;            /* the session's control connection */
	struct ferry__batch dones; /* FILE_DONEs not yet sent */
	bool locks;             /* the mutexes above are initialised */
	_Atomic unsigned n_claimed; /* targets this session holds whole
				       (FRX_MAX_CLAIMED; a split file's
				       claims are taken at plan time, one
				       pair per range file, and not counted:
				       a worker waiting for room must not
				       wait on ranges queued behind it) */
	uint8_t nonce[FERRY__STAGE_NONCE]; /* names its one-chunk files */
	uint64_t pending;       /* files not yet done */
	uint64_t published, failed, skipped, resumed;
	uint64_t ranges_landed; /* ranges in that published nothing */
	int timeout_ms;         /* a publisher waits this long for its turn */
};

extern const struct ferry__dp_ops ferry__files_rx_dp;

/* Claim / release a target (ferry__stage_claim, counted). */
int ferry__frx_claim(struct ferry__frx *r, struct ferry__stage *st,
		     const struct ferry__stage_key *k);
void ferry__frx_release(struct ferry__frx *r, struct ferry__stage *st,
			const struct ferry__stage_key *k);

/* Datapath helpers the control side shares (files_rx_dp.c). */
struct frx_live *ferry__frx_live_new(struct ferry__stage *st,
				     const struct ferry__stage_key *k);
/* The mode a file lands with (setid and sticky bits only with
 * keep_setid), and whether a file created with it needs a chmod all the
 * same (the umask took bits, or bits open(2) may not set). */
mode_t ferry__frx_mode(const struct ferry__frx *r, const struct ferry_entry *e);
bool ferry__frx_chmod_needed(const struct ferry__frx *r, mode_t mode);

/* Take f's live entry out of the datapath's reach and free it (waiting
 * for a straggling duplicate chunk to let go). */
void ferry__frx_live_retire(struct ferry__frx *r, struct frx_file *f);
/* Set the part file's mode and mtime (and sync it when asked), close
 * both its files: the file is complete. Under live->lock. */
int ferry__frx_live_seal(struct ferry__frx *r, struct frx_live *l,
			 const struct ferry_entry *e);

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
void ferry__frx_plan_free(struct ferry__plan_entry *pe, size_t n);
/* crc32c and adler32 of the len bytes at from of base in parentfd. */
int ferry__frx_sum_target(int parentfd, const char *base, uint64_t from,
			  uint64_t len, uint64_t chunk, uint32_t *crc,
			  uint32_t *adler);
/* Re-read the chunks of [first, first + count) that j holds from the part
 * file fd and check their crc32c (and adler32, with adler): a journal may
 * claim data that never reached the disk (files_range.c). */
bool ferry__frx_verify(const struct ferry__frx *r, int fd,
		       const struct ferry_entry *e,
		       const struct ferry_journal *j, uint64_t first,
		       uint64_t count, bool adler);

/* ---- split files, the receiver's side (files_range.c) ---------------- */
/* At plan time, for file idx (a range: f->split), target rel below the
 * root: claim the target shared and the range exclusive, make the file's
 * live entry, resume the range from its journal. Returns the range's
 * chunks already there, -EBUSY (a whole-file session holds the target,
 * another session this range, or an earlier split file's leftovers need
 * clearing while others work), or another -errno with why. */
int64_t ferry__frx_range_open(struct ferry__frx *r, uint32_t idx,
			      const char *rel, char *why, size_t whylen);

/* At plan time, for a range whose target already holds this very file
 * (size and mtime: a rerun after the publish): what its split file left
 * staged (journals a publish did not get to remove, or a split file a
 * whole-file send overtook) goes, unless a session of the target is at
 * work. */
void ferry__frx_range_there(struct ferry__frx *r, uint32_t idx,
			    const char *rel);

/* A range that is in, on its way to publishing its file. */
struct frx_range_pub {
	struct ferry__stage *st;
	struct ferry__stage_key key; /* the target's */
	uint64_t split, roff, size;
	uint32_t crc, adler;         /* the whole file's, once ready */
};
/* Release the range's claim and/or the target's (shared). */
void ferry__frx_range_release(const struct frx_range_pub *p, bool range,
			      bool target);
/* Drop the range's journal (its data did not check). */
void ferry__frx_range_drop(const struct frx_range_pub *p);
/* Does the range complete its file? 1: every range is in; p has the
 * whole file's sums and its part file is sealed (size, mode, mtime,
 * synced as --fsync says); the publish key and every range claim are
 * held: rename it, then call ferry__frx_range_end. 0: not this session's
 * to publish (a range is missing, or still claimed by a session that
 * publishes once it is done), or -errno: the range's claim is released
 * (the target's is the caller's). */
int ferry__frx_range_ready(struct ferry__frx *r, uint32_t idx,
			   struct frx_range_pub *p);
/* After ready: remove the range journals when the part file is gone
 * (published), and let go of every range claim, then the publish key. */
void ferry__frx_range_end(const struct frx_range_pub *p, bool gone);

/* Control-loop hooks (struct ferry__hooks). */
int ferry__frx_work(void *ctx, int fd, char *why, size_t whylen);
int ferry__frx_msg(void *ctx, int fd, const struct ferry_msg *m, char *why,
		   size_t whylen);
int ferry__frx_tick(void *ctx, int fd, char *why, size_t whylen);
/* Publish what is verified, close everything; unfinished files keep
 * their part and journal in the staging area. */
void ferry__frx_close(struct ferry__frx *r, bool ok);

#endif
