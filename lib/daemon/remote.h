/* The client side of the daemon's roles (internal): namespace requests on
 * one authenticated connection, and the three ways to copy files, used by
 * `ferry cp` and the gfal2 plugin.
 *
 *   push  local files -> a daemon: a file session, as `ferry send`.
 *   pull  a daemon's files -> here: this process opens a one-shot
 *         receiver on the address it reaches the daemon from, with a
 *         fresh random key, and asks the daemon (PUSH request) to send
 *         there. The data connection goes from the daemon to us.
 *   tpc   daemon A -> daemon B: a one-time token from B (TOKEN), handed
 *         to A in a PUSH request; A authenticates to B with it and sends.
 *         The data never passes through this process; A's progress comes
 *         back as markers.
 *
 * Whole-file checksums are verified by the receiving side as in every
 * file session; the results carry both checksums.
 */
#ifndef FERRY_DAEMON_REMOTE_H
#define FERRY_DAEMON_REMOTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctrl/msg.h"
#include "ctrl/req.h"
#include "ferry/files.h"
#include "io/manifest.h"

/* One authenticated control connection to a daemon. */
struct ferry__conn {
	int fd;
	int timeout_ms;
	uint8_t wrap[FERRY_KEY_LEN];
	char host[FERRY_PUSH_HOST_MAX + 1]; /* as given */
	char port[FERRY_PUSH_PORT_MAX + 1];
	char peer[80];                      /* "addr:port" it reached */
};

/* Dial host:port and authenticate with o->key under o->key_name.
 * Returns 0 or a negative error with why. */
int ferry__remote_open(const char *host, const char *port,
		       const struct ferry_opts *o, struct ferry__conn *c,
		       char *why, size_t whylen);
void ferry__remote_close(struct ferry__conn *c);

/* Send one REQ and read the first answer into m: a REPLY to op (or, for
 * PUSH, a MARKER). An ERROR from the daemon returns ferry__peer_error's
 * code (-ENOENT, -EEXIST, -EACCES, ... or -FERRY_EPEER) with its text in
 * why. ferry__remote_answer reads a further answer. */
int ferry__remote_call(struct ferry__conn *c, uint32_t op, const char *path,
		       uint32_t flags, uint64_t arg, const void *data,
		       size_t len, struct ferry_msg *m, char *why,
		       size_t whylen);
int ferry__remote_answer(struct ferry__conn *c, uint32_t op,
			 struct ferry_msg *m, int timeout_ms, char *why,
			 size_t whylen);
/* The first half of ferry__remote_call: send the REQ (m is scratch). */
int ferry__remote_send(struct ferry__conn *c, uint32_t op, const char *path,
		       uint32_t flags, uint64_t arg, const void *data,
		       size_t len, struct ferry_msg *m, char *why,
		       size_t whylen);

/* A checksum request waits at least this long (the daemon reads the
 * whole file). */
#define FERRY__CKSUM_TIMEOUT_MS 1800000

/* Namespace requests. Paths are export-relative. A refusal returns the
 * daemon's code as -errno (-ENOENT, -EEXIST, -EACCES, ...) with its
 * sentence in why; a broken connection returns a FERRY_E* error. */
int ferry__remote_stat(struct ferry__conn *c, const char *path,
		       struct ferry_rstat *st, char *why, size_t whylen);
/* fn is called for each child (e->path is its name); a non-zero return
 * stops the listing early (the rest is read and dropped) and is returned. */
int ferry__remote_list(struct ferry__conn *c, const char *path,
		       int (*fn)(void *arg, const struct ferry_entry *e),
		       void *arg, char *why, size_t whylen);
/* Every file below dir on the daemon, depth first, names sorted: fn gets
 * its path relative to dir and its size; a non-zero return stops the walk
 * and is returned. The daemon lists no symlinks or special files, and a
 * directory without files shows nothing. */
int ferry__remote_walk(struct ferry__conn *c, const char *dir,
		       int (*fn)(void *arg, const char *rel, uint64_t size),
		       void *arg, char *why, size_t whylen);
int ferry__remote_cksum(struct ferry__conn *c, const char *path,
			enum ferry_cksum kind, uint32_t *value, char *why,
			size_t whylen);
int ferry__remote_mkdir(struct ferry__conn *c, const char *path,
			uint32_t mode, bool parents, char *why,
			size_t whylen);
int ferry__remote_unlink(struct ferry__conn *c, const char *path, char *why,
			 size_t whylen);
int ferry__remote_rmdir(struct ferry__conn *c, const char *path, char *why,
			size_t whylen);

/* A performance marker, as the client sees it. */
struct ferry__marker {
	uint64_t bytes, total, rate; /* rate: bytes per second */
	double elapsed;              /* seconds */
	uint32_t files_done, files_total;
};
typedef void (*ferry__marker_fn)(const struct ferry__marker *mk, void *arg);

/* What to copy. Each src[i] lands as names[i] below dest. */
struct ferry__copy {
	size_t n;
	char *const *src;      /* push: local paths; pull, tpc: files on
				  the source daemon (export-relative) */
	char *const *names;    /* relative paths below dest */
	const char *dest;      /* push, tpc: export-relative directory on the
				  destination daemon; pull: a local
				  directory */
	enum ferry_cksum cksum;
	bool force;            /* replace existing targets */
	unsigned marker_ms;    /* pull, tpc: between markers; 0: 2000 */
	ferry_file_fn on_file; /* each file's result */
	ferry__marker_fn on_marker;
	void *arg;
};

/* o: the client's options (key, key_name, transport, streams, timeout;
 * push: o->on_interval for progress). rep (push) may be NULL. o->cancel
 * stops any of them: a push at once, a pull or third-party copy when the
 * source daemon sends its next marker (it sees the client gone).
 * Return 0 when every file arrived verified, else a negative error with
 * why (the first failure; every file's result also reaches on_file). */
int ferry__remote_push(const char *host, const char *port,
		       const struct ferry_opts *o, const struct ferry__copy *cp,
		       struct ferry_report *rep, char *why, size_t whylen);
int ferry__remote_pull(const char *host, const char *port,
		       const struct ferry_opts *o, const struct ferry__copy *cp,
		       char *why, size_t whylen);
int ferry__remote_tpc(const char *src_host, const char *src_port,
		      const char *dst_host, const char *dst_port,
		      const struct ferry_opts *o, const struct ferry__copy *cp,
		      char *why, size_t whylen);

/* Third-party copy in its steps, for tools and tests:
 * ferry__remote_token asks dst for a token for cp->names below cp->dest
 * with sizes[i] (ttl_s 0: the daemon's default) and unwraps its secret;
 * ferry__remote_push_req asks src to send cp->src to dst_host:dst_port
 * with that token and waits for the end (markers and results reach cp's
 * callbacks). */
int ferry__remote_token(struct ferry__conn *dst, const struct ferry__copy *cp,
			const uint64_t *sizes, unsigned ttl_s,
			char name[FERRY_KEYNAME_MAX + 1],
			struct ferry_key *secret, uint64_t *expiry, char *why,
			size_t whylen);
int ferry__remote_push_req(struct ferry__conn *src, const char *dst_host,
			   const char *dst_port, const struct ferry_opts *o,
			   const char *token, const struct ferry_key *secret,
			   const struct ferry__copy *cp, char *why,
			   size_t whylen);

/* Parse "ferry://HOST[:PORT]/PATH" (HOST may be [v6], the scheme in any
 * case): fills host, port (FERRY_DEFAULT_PORT when absent; else 1 to
 * 65535) and path (export-relative, starting with '/'). Returns 0, or
 * -EINVAL with why. A string without the "ferry://" prefix returns 1 (a
 * local path). */
int ferry__url_parse(const char *url, char *host, size_t hostlen, char *port,
		     size_t portlen, char *path, size_t pathlen, char *why,
		     size_t whylen);

#endif
