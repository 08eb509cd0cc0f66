/* File sessions: move files and directories, verified end to end.
 *
 * The sender walks its paths into a manifest; the receiver checks every
 * path against its --dir, the free space and its overwrite policy, and
 * answers with a plan (send, skip, or resume from the verified chunks in
 * a journal). Chunks land with pwrite in a part file beside the target;
 * when the last chunk of a file is in and its whole-file checksums match
 * the sender's, the part file is synced and renamed over the target, and
 * the directory synced. Nothing partial is ever visible under a final
 * name.
 */
#ifndef FERRY_FILES_H
#define FERRY_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ferry/session.h"

enum ferry_cksum {
	FERRY_CKSUM_NONE = 0,    /* chunks are still crc32c-checked */
	FERRY_CKSUM_ADLER32 = 1, /* what FTS, Rucio and XRootD record */
	FERRY_CKSUM_CRC32C = 2,
};

/* "adler32", "crc32c", "none"; and back (-1 when unknown). */
const char *ferry_cksum_name(enum ferry_cksum c);
int ferry_cksum_parse(const char *name);

/* The outcome of one file, as the sender reports it. */
struct ferry_file_result {
	const char *path;     /* relative path as sent */
	uint64_t size;
	uint64_t bytes_sent;  /* less than size when resumed */
	double seconds;       /* from the session's start to its result */
	enum ferry_cksum cksum;
	uint32_t value;       /* the chosen checksum's value */
	uint32_t adler32, crc32c;
	bool skipped;         /* already there and identical */
	bool resumed;         /* some chunks came from an earlier attempt */
	/* A range of a split file (ferry_send_spec.ranges): offset and
	 * length are the range's bytes, value, adler32 and crc32c its own
	 * checksums (verified by the receiver), and published says whether
	 * this range completed the file: the receiver then checked the
	 * whole file, combined from every range, and published it; its
	 * checksums are in file_adler32 and file_crc32c. A range that
	 * landed verified before the others (status 0, published false)
	 * waits in the receiver's staging area for them. A range the
	 * target already held (a rerun once the file is published): status
	 * 0, skipped, nothing sent, published false, file_* 0. A range's
	 * adler32, and the whole file's, are computed whatever cksum says.
	 * A whole file (and a range that covers its whole file, which is
	 * sent whole but reported with range true): offset 0, length size,
	 * published when status is 0 and it was not skipped, file_adler32
	 * and file_crc32c its own sums. */
	bool range;
	bool published;
	uint64_t offset, length;
	uint32_t file_adler32, file_crc32c;
	int status;           /* 0, or a negative error: why it was not
				 published */
	const char *why;
};

/* Called from the session's control thread as each file ends. */
typedef void (*ferry_file_fn)(const struct ferry_file_result *r, void *arg);

/* One range of a file split across sessions (ferry_send_spec.ranges).
 * The file is cut into ranges of split bytes each (the last one
 * shorter): range k is [k * split, min((k + 1) * split, size)). split
 * must be a multiple of the session's chunk size (ferry_opts.chunk_size):
 * ferry_send refuses it otherwise (-EINVAL, why naming both), as it
 * does an offset that is not a range's start. Send every range of a
 * file with the same split and chunk size: the receiver publishes the
 * file once every range of one cut is in (sessions that cut it
 * differently stage it apart, and do not complete each other's).
 * Sessions from any processes may send the ranges of one file to one
 * receiver at the same time, each range at most once at a time; every
 * chunk is checked as it lands, each range's checksums when the range
 * is in, and the file is published, whole and checked, by the session
 * whose range completes it. A range that is already in (an earlier
 * attempt, or the file already published with the same size and
 * mtime) moves nothing again; one cut short (its sender killed) moves
 * only its missing chunks when sent again. A second session sending a
 * range in flight, a whole-file send of a target whose ranges are in
 * flight, or a range of a target sent whole meanwhile: that file fails
 * with -EBUSY ("another transfer is writing it now"). */
struct ferry_send_range {
	uint64_t offset; /* a multiple of split */
	uint64_t split;  /* 0: the whole file (offset must be 0) */
};

struct ferry_send_spec {
	char *const *paths;    /* files and directories to send */
	size_t n_paths;
	char *const *names;    /* NULL, or a name for each path: it lands as
				  names[i] (a relative path; missing
				  directories are made) below dest instead
				  of under its own basename */
	const char *dest;      /* directory below the receiver's --dir */
	enum ferry_cksum cksum;
	bool force;            /* replace existing targets */
	bool skip_existing;    /* skip targets of equal size and checksum */
	bool no_resume;        /* ignore journals of earlier attempts */
	bool follow_symlinks;
	unsigned files;        /* files in flight at once (1 to
				  FERRY_MAX_FILES) */
	ferry_file_fn on_file;
	void *arg;
	/* NULL: paths are opened with open(2). Otherwise every path is a
	 * file that this opens (with open(2) flags; returns an fd or
	 * -errno), when the file list is made and again when the file is
	 * read: a daemon serving files below a root passes its resolver.
	 * Called from the session's threads, for one file at a time each. */
	int (*open_source)(void *arg, const char *path, int flags);
	void *open_arg;
	/* NULL, or one range for each path (names[i] should then be set):
	 * ranges[i].split != 0 makes paths[i], which must be a regular
	 * file, send only that range. A path whose split is 0 is sent
	 * whole, as without ranges. */
	const struct ferry_send_range *ranges;
};

#define FERRY_DEFAULT_FILES 4
#define FERRY_MAX_FILES 256     /* files in flight, at most */

/* Send files to the receiver at host:port. Returns 0 when every file was
 * published or skipped; otherwise a negative error with why (the first
 * failure; the others reach on_file). */
int ferry_send(const char *host, const char *port, const struct ferry_opts *o,
	       const struct ferry_send_spec *spec, struct ferry_report *rep,
	       char *why, size_t whylen);

#endif
