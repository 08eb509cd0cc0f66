/* Talking to ferry daemons (`ferry serve`): namespace requests on an
 * authenticated connection, ferry:// URLs, and the three ways to copy
 * files.
 *
 *   push  local files -> a daemon: a file session, as `ferry send`.
 *   pull  a daemon's files -> here: this process opens a one-shot
 *         receiver on the address it reaches the daemon from, with a
 *         fresh random key, and asks the daemon to send there. The data
 *         connection goes from the daemon to this process.
 *   tpc   daemon A -> daemon B: a one-time token from B, handed to A;
 *         A authenticates to B with it and sends. The data never passes
 *         through this process; A's progress comes back as markers.
 *
 * Paths on a daemon are export-relative ("/atlas/in/f", "atlas/in/f";
 * "/" is the export root). A refusal from a daemon returns its errno
 * negated (-ENOENT, -EEXIST, -EACCES, -ENOTDIR, -ENOTEMPTY, -ENOSPC ...)
 * with the daemon's sentence in why; a broken connection returns a
 * -FERRY_E* code (ferry/error.h). Whole-file checksums are verified by
 * the receiving side as in every file session.
 */
#ifndef FERRY_REMOTE_H
#define FERRY_REMOTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ferry/files.h"
#include "ferry/session.h"

/* Longest host and port of a daemon, and longest export-relative path
 * (each without its NUL). */
#define FERRY_URL_HOST_MAX 255
#define FERRY_URL_PORT_MAX 15
#define FERRY_URL_PATH_MAX 4095
/* Longest transport name a daemon passes on for a copy ("verbs"). */
#define FERRY_REMOTE_XPORT_MAX 15

/* Parse "ferry://HOST[:PORT]/PATH" (HOST may be [v6], the scheme in any
 * case): fills host, port (FERRY_DEFAULT_PORT when absent; else 1 to
 * 65535) and path (export-relative, starting with '/'). Returns 0, or
 * -EINVAL with why. A string without the "ferry://" prefix returns 1 (a
 * local path) and fills nothing. */
int ferry_url_parse(const char *url, char *host, size_t hostlen, char *port,
		    size_t portlen, char *path, size_t pathlen, char *why,
		    size_t whylen);

/* One authenticated control connection to a daemon. */
struct ferry_remote;

/* Dial host:port and authenticate with o->key under o->key_name (within
 * o->timeout_ms). Returns 0 and *out, or a negative error with why. */
int ferry_remote_open(const char *host, const char *port,
		      const struct ferry_opts *o, struct ferry_remote **out,
		      char *why, size_t whylen);
/* Close the connection and free r (NULL: nothing). */
void ferry_remote_close(struct ferry_remote *r);

enum ferry_remote_type {
	FERRY_REMOTE_FILE = 1,
	FERRY_REMOTE_DIR = 2,
	FERRY_REMOTE_OTHER = 3, /* neither (the daemon lists none of them) */
};

struct ferry_remote_stat {
	enum ferry_remote_type type;
	uint32_t mode;    /* permission bits (07777) */
	uint64_t size;    /* bytes */
	int64_t mtime_ns; /* modification time, ns since the epoch */
};

/* Namespace requests. Each returns 0 or a negative error with why (see
 * the top of this file). */
int ferry_remote_stat(struct ferry_remote *r, const char *path,
		      struct ferry_remote_stat *st, char *why, size_t whylen);
/* fn is called for each child of the directory path with its name; a
 * non-zero return stops the listing early and is returned. */
typedef int (*ferry_remote_list_fn)(void *arg, const char *name,
				    const struct ferry_remote_stat *st);
int ferry_remote_list(struct ferry_remote *r, const char *path,
		      ferry_remote_list_fn fn, void *arg, char *why,
		      size_t whylen);
/* Every file below dir, depth first, names sorted: fn gets its path
 * relative to dir and its size; a non-zero return stops the walk and is
 * returned. The daemon lists no symlinks or special files, and a
 * directory without files shows nothing. */
typedef int (*ferry_remote_walk_fn)(void *arg, const char *rel,
				    uint64_t size);
int ferry_remote_walk(struct ferry_remote *r, const char *dir,
		      ferry_remote_walk_fn fn, void *arg, char *why,
		      size_t whylen);
/* The file's whole checksum of kind, computed by the daemon (it reads the
 * whole file: the call waits for it up to 30 minutes). */
int ferry_remote_cksum(struct ferry_remote *r, const char *path,
		       enum ferry_cksum kind, uint32_t *value, char *why,
		       size_t whylen);
/* mode: permission bits; parents: make missing parents, and an existing
 * directory is no error (mkdir -p). */
int ferry_remote_mkdir(struct ferry_remote *r, const char *path,
		       uint32_t mode, bool parents, char *why, size_t whylen);
int ferry_remote_unlink(struct ferry_remote *r, const char *path, char *why,
			size_t whylen);
int ferry_remote_rmdir(struct ferry_remote *r, const char *path, char *why,
		       size_t whylen);

/* A performance marker from the sending daemon (pull, tpc). */
struct ferry_marker {
	uint64_t bytes, total, rate; /* rate: bytes per second */
	double elapsed;              /* seconds */
	uint32_t files_done, files_total;
};
typedef void (*ferry_marker_fn)(const struct ferry_marker *mk, void *arg);

/* What to copy. Each src[i] lands as names[i] below dest. */
struct ferry_copy {
	size_t n;
	char *const *src;      /* push: local paths; pull, tpc: files on
				  the source daemon (export-relative) */
	char *const *names;    /* relative paths below dest */
	const char *dest;      /* push, tpc: export-relative directory on the
				  destination daemon; pull: a local
				  directory */
	enum ferry_cksum cksum;
	bool force;            /* replace existing targets */
	bool skip_existing;    /* skip targets of the same size and checksum */
	bool follow_symlinks;  /* push: send what symlinks point to */
	unsigned marker_ms;    /* pull, tpc: between markers; 0: 2000 */
	ferry_file_fn on_file; /* each file's result */
	ferry_marker_fn on_marker;
	void *arg;             /* for on_file and on_marker */
};

/* o: the client's options (key, key_name, transport, streams, timeout;
 * push: o->on_interval for progress). rep (push) may be NULL. o->cancel
 * stops any of them: a push at once, a pull or third-party copy when the
 * source daemon sends its next marker (it sees the client gone).
 * Each returns 0 when every file arrived verified, else a negative error
 * with why (the first failure; every file's result also reaches
 * cp->on_file). */
int ferry_remote_push(const char *host, const char *port,
		      const struct ferry_opts *o, const struct ferry_copy *cp,
		      struct ferry_report *rep, char *why, size_t whylen);
int ferry_remote_pull(const char *host, const char *port,
		      const struct ferry_opts *o, const struct ferry_copy *cp,
		      char *why, size_t whylen);
int ferry_remote_tpc(const char *src_host, const char *src_port,
		     const char *dst_host, const char *dst_port,
		     const struct ferry_opts *o, const struct ferry_copy *cp,
		     char *why, size_t whylen);

#endif
