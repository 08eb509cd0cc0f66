/* File manifests: what a file session moves (internal).
 *
 * The sender walks its PATH arguments into a manifest of entries (relative
 * path, type, size, mode, mtime); the manifest crosses the control channel
 * in batches; the receiver validates every path before anything is
 * created. Paths follow util/path.h (ferry__path_valid).
 *
 * Includes: lib/io uses lib/util (cursor, path rules) and nothing of
 * lib/ctrl; lib/ctrl may include this header (LIST and TOKEN data are
 * manifest-encoded, STAT types are entry types). The arrow goes one way:
 * ctrl -> io -> util.
 */
#ifndef FERRY_IO_MANIFEST_H
#define FERRY_IO_MANIFEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/path.h" /* FERRY_PATH_MAX, ferry__path_valid */

enum ferry_entry_type {
	FERRY_ENTRY_FILE = 1,
	FERRY_ENTRY_DIR = 2,
};

struct ferry_entry {
	char *path;        /* relative, validated; owned by the manifest */
	uint8_t type;      /* enum ferry_entry_type */
	uint32_t mode;     /* permission bits (07777) */
	uint64_t size;     /* bytes (0 for directories) */
	int64_t mtime_ns;  /* modification time, ns since the epoch */
	/* sender only: where to read it (absolute or cwd-relative), in
	 * path's allocation */
	char *src;
};

struct ferry_manifest {
	struct ferry_entry *e;
	size_t n, cap;
	uint64_t total_bytes; /* sum of file sizes */
	uint64_t n_files;
};

void ferry__manifest_init(struct ferry_manifest *m);
void ferry__manifest_free(struct ferry_manifest *m);

/* Add one entry (copies path and src; src may be NULL). Returns 0,
 * -EINVAL (path not valid, type not FILE or DIR, mode above 07777) or
 * -ENOMEM. The size of a DIR entry is stored as 0. */
int ferry__manifest_add(struct ferry_manifest *m, const char *path,
			const char *src, uint8_t type, uint32_t mode,
			uint64_t size, int64_t mtime_ns);

struct ferry_walk_opts {
	bool follow_symlinks; /* follow symlinks (default: refuse them) */
	char *const *names;   /* NULL, or each argument's name in place of
				 its basename: a relative path */
	/* NULL, or how to open an argument (an fd or -errno): then every
	 * argument must be a file, and nothing else is opened by path */
	int (*open_source)(void *arg, const char *src, int flags);
	void *open_arg;
	/* NULL, or one slot per argument: the index in the manifest of the
	 * entry the argument became (SIZE_MAX: none, a skipped symlink) */
	size_t *arg_entry;
};

/* Walk the sender's arguments. A file argument becomes an entry named by
 * its basename (or by o->names[i]); a directory argument "a/b/dir" becomes "dir" plus every
 * entry below it ("dir/x/y"), depth first, directories before their
 * contents, names sorted so the order is stable. Symlinks are skipped with
 * a reason unless follow_symlinks; devices, FIFOs and sockets are refused.
 * Returns 0, or -errno with why naming the path and what to do (missing
 * source, unreadable file, special file, symlink, two arguments with the
 * same name). A failed walk leaves m as it was. */
int ferry__manifest_walk(struct ferry_manifest *m, char *const *paths,
			 size_t n_paths, const struct ferry_walk_opts *o,
			 char *why, size_t whylen);

/* Encoded size of the longest entry: a batch buffer of at least this many
 * bytes always makes progress. */
#define FERRY_MANIFEST_ENTRY_MAX (2 + 1 + 4 + 8 + 8 + FERRY_PATH_MAX - 1)

/* Encode entries starting at *next into buf[0..cap) (little-endian; per
 * entry: u16 path length, path bytes, u8 type, u32 mode, u64 size,
 * i64 mtime_ns); advances *next past what fitted and returns the bytes
 * used (0 only if *next == m->n, given cap >= FERRY_MANIFEST_ENTRY_MAX;
 * with a smaller cap, 0 also means the next entry does not fit alone).
 * Sender side: src is not encoded. */
size_t ferry__manifest_encode(const struct ferry_manifest *m, size_t *next,
			      uint8_t *buf, size_t cap);

/* Decode a batch and append its entries to m, validating every path
 * (ferry__path_valid), type, mode (<= 07777) and size (<= INT64_MAX, 0
 * for a directory). Returns 0, -FERRY_EPROTO on malformed input (nothing
 * appended from a bad batch), or -ENOMEM. Also refuses more than
 * max_entries entries in total (-FERRY_ETOOBIG). */
int ferry__manifest_decode(struct ferry_manifest *m, const uint8_t *buf,
			   size_t len, size_t max_entries);

#endif
