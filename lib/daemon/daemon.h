/* lib/daemon: the receiver and what serves on it, the top layer. It owns
 * ferry_server (server.c: accepting, the handshake gate, dispatching each
 * session to bench, files or OSU), the daemon's requests, tokens and
 * PUSH, and the client side of them (remote*.c, include/ferry/remote.h).
 *
 * The data-transfer-node daemon's roles (internal): an export root, keys
 * with rights and path prefixes (io/exports.h), one-time transfer tokens
 * (daemon/tokens.h), and the namespace requests of msg.h (STAT, LIST,
 * CKSUM, MKDIR, UNLINK, RMDIR, TOKEN). Push sessions (PROPOSE) and PUSH
 * requests are run by daemon/server.c with the same checks.
 *
 * Every path a client names is resolved below the export root with
 * openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS):
 * a symlink anywhere under the root, or a path that would leave it, is
 * refused by the kernel, not by string checks that a rename could race.
 * Where the kernel has no openat2 (before Linux 5.6, e.g. EL8's 4.18;
 * or under a valgrind that does not know it), the same rules hold by a
 * walk from the root's fd, one component at a time with O_NOFOLLOW: as
 * race-free, since a valid path has no ".." and no step follows a link.
 */
#ifndef FERRY_DAEMON_DAEMON_H
#define FERRY_DAEMON_DAEMON_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "ctrl/msg.h"
#include "ferry/session.h"
#include "io/exports.h"
#include "io/manifest.h"

struct ferry__tokens;

struct ferry__daemon {
	struct ferry__exports *ex;    /* owned */
	char *exports_path;           /* for messages */
	int rootfd;                   /* the export root (O_PATH|O_DIRECTORY) */
	struct ferry__tokens *tokens; /* owned */
	bool no_openat2;              /* the kernel lacks it: open_path walks
					 the path with O_NOFOLLOW instead */
};

/* Who is on the other end of a connection, after the handshake. */
struct ferry__who {
	char name[FERRY_KEYNAME_MAX + 1]; /* the exports key name, or the
					     token's name */
	bool token;                       /* authenticated by a token */
	uint8_t wrap[FERRY_KEY_LEN];      /* the connection's wrapping key */
};

/* Load the exports file and open its root (which must exist and be a
 * directory). Returns 0 and *out, or an error with why ("exports.conf:3:
 * ...", "export root /srv/ferry: no such directory"). */
int ferry__daemon_open(const char *exports_path, struct ferry__daemon **out,
		       char *why, size_t whylen);
void ferry__daemon_close(struct ferry__daemon *d);

/* The handshake's ferry__key_lookup_fn (arg: the daemon): an exports key
 * by its name, or a live, unused token by its name. "" (no name) is
 * refused with a sentence telling the client to give its key name. */
int ferry__daemon_lookup(void *arg, const char *name, struct ferry_key *key,
			 char *why, size_t whylen);

/* Serve one REQ other than PUSH for who (daemon_serve.c): check the rights its op needs
 * (msg.h's table), do it below the root and answer on fd with REPLY(s),
 * or with an ERROR whose code is a positive errno: ENOENT, EEXIST,
 * EACCES (rights, or a symlink / escape refused by the resolver),
 * ENOTDIR, EISDIR, ENOTEMPTY, EINVAL (a bad path or argument), ENOSPC.
 * A token-authenticated peer may make no requests (EACCES). Returns 0
 * when the request was answered (even with an ERROR), or a negative
 * error when fd failed (the caller closes it). */
int ferry__daemon_serve(struct ferry__daemon *d, const struct ferry__who *who,
			int fd, const struct ferry_msg_req *req,
			int timeout_ms);

/* Does path follow the exports rules ("/a/b", "a/b", "/" or ""; no "..",
 * "." or empty components)? */
bool ferry__daemon_path_valid(const char *path);

/* Open an export-relative path (exports rules: "/a/b", "a/b", "/" or "")
 * below the root, following no symlinks and never leaving the root;
 * flags and mode as for openat (O_PATH, O_RDONLY, O_DIRECTORY, O_CREAT
 * ...). Returns an fd or -errno (-EINVAL for a path that is not valid;
 * -EACCES when the path crosses a symlink or would leave the root, where
 * openat2 says ELOOP or EXDEV). */
int ferry__daemon_open_path(const struct ferry__daemon *d, const char *path,
			    int flags, mode_t mode);

/* May key_name replace path with --force? Replacing a file destroys its
 * old content, so where path is a regular file the key needs the delete
 * right as well as write (which the caller checks). Returns 0 (nothing
 * there, not a file, or the key may delete it), or -EACCES with why
 * naming the key, the right and the path. */
int ferry__daemon_may_replace(const struct ferry__daemon *d,
			      const char *key_name, const char *path,
			      char *why, size_t whylen);

/* Map an export-relative path to the absolute path on this host
 * (root + "/" + path without its leading '/') into buf. Returns 0 or
 * -ENAMETOOLONG / -EINVAL. */
int ferry__daemon_abs(const struct ferry__daemon *d, const char *path,
		      char *buf, size_t len);

/* Serve a PUSH request (push.c) (msg.h) for who on fd: send the named
 * files of the export to the receiver the request names, with its token,
 * sending MARKERs to fd while it runs, then the per-file results (REPLY)
 * and a final REPLY LAST or ERROR. o: the daemon's options (timeouts,
 * cpus). Returns 0 when the request was answered (even with an ERROR),
 * or a negative error when fd failed. */
int ferry__push_serve(struct ferry__daemon *d, const struct ferry__who *who,
		      const struct ferry_opts *o, int fd,
		      const struct ferry_msg_req *req, char *why,
		      size_t whylen);

/* ---- daemon_ops.c, for ferry__daemon_serve only ----------------------
 *
 * Do req (any op but PUSH) below the root for who, whose rights for the
 * op's path serve has already checked (TOKEN checks write on each of its
 * files itself, and MKDIR -p on each parent it creates). Fills r->arg,
 * r->len and r->data for a one-REPLY answer; for LIST fills list (which
 * serve initialized and frees) instead. No I/O on the connection.
 * Returns 0, or a negative errno with why (a sentence for the client). */
int ferry__daemon_do(struct ferry__daemon *d, const struct ferry__who *who,
		     const struct ferry_msg_req *req,
		     struct ferry_msg_reply *r, struct ferry_manifest *list,
		     char *why, size_t whylen);

#endif
