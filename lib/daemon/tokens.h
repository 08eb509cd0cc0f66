/* One-time transfer tokens (internal), for third-party copy.
 *
 * The destination daemon issues a token to a client that may write there
 * (TOKEN request): a name ("token:" + 32 hex digits), a random 32-byte
 * secret, and what it is for: one destination directory, the exact list
 * of files (name below it and size), whether they may replace existing
 * ones, and an expiry. The client hands name and secret to the source
 * daemon (wrapped, msg.h), which authenticates to the destination with
 * them as its key. The token is claimed by the first handshake that
 * proves the secret and can never be used again; the session it opens
 * may move only what the token names.
 */
#ifndef FERRY_DAEMON_TOKENS_H
#define FERRY_DAEMON_TOKENS_H

#include <stddef.h>
#include <stdint.h>

#include "ctrl/msg.h"
#include "io/manifest.h"

#define FERRY__TOKEN_TTL_DEFAULT 600 /* seconds */
#define FERRY__TOKEN_TTL_MAX 3600
#define FERRY__TOKENS_MAX 4096       /* live tokens at once */
#define FERRY__TOKEN_PREFIX "token:"

struct ferry__tokens;

struct ferry__tokens *ferry__tokens_new(void);
void ferry__tokens_free(struct ferry__tokens *t); /* wipes the secrets */

/* Issue a token for the FILE entries of files (paths below dest, sizes;
 * DIR entries, no entries or one path twice are refused with -EINVAL; dest
 * follows the exports path rules, "/" or "" being the root), flags
 * (FERRY_FILES_FORCE or 0: other bits grant nothing and are ignored) and
 * a lifetime of ttl_s seconds (0: the default; over the maximum:
 * -EINVAL). issuer names the key that asked (for the log). Fills name,
 * secret and expiry (CLOCK_REALTIME seconds; the token is live through
 * that second). -EBUSY when FERRY__TOKENS_MAX tokens are live (expired
 * ones are dropped first). */
int ferry__tokens_issue(struct ferry__tokens *t, const char *issuer,
			const char *dest, const struct ferry_manifest *files,
			uint32_t flags, unsigned ttl_s,
			char name[FERRY_KEYNAME_MAX + 1],
			struct ferry_key *secret, uint64_t *expiry, char *why,
			size_t whylen);

/* For the handshake: the secret of a live token not used yet. Returns 0,
 * or -FERRY_EAUTH with why: "unknown token", "token ... expired N s ago",
 * "token ... was already used". */
int ferry__tokens_key(struct ferry__tokens *t, const char *name,
		      struct ferry_key *key, char *why, size_t whylen);

/* After a handshake proved the secret: mark the token used. Returns 0, or
 * -FERRY_EAUTH when another connection claimed it first or it expired
 * since the lookup. */
int ferry__tokens_claim(struct ferry__tokens *t, const char *name, char *why,
			size_t whylen);

/* A session opened with a claimed token: its FILES (dest, flags) and
 * manifest m must be exactly what the token names: the same dest (one
 * leading '/' ignored on both sides), the same set of file paths with the
 * same sizes in any order, no other entries (no DIR entries at all), and
 * FERRY_FILES_FORCE only when granted. Returns 0, or -EACCES with why
 * naming the first difference ("the token is for /dir/a.dat (1048576
 * bytes), not /dir/b.dat"); a token not claimed, or gone (dropped, or
 * expired and swept), is -EACCES too. Expiry is not checked here: the
 * claim was in time. */
int ferry__tokens_check(struct ferry__tokens *t, const char *name,
			const char *dest, uint32_t flags,
			const struct ferry_manifest *m, char *why,
			size_t whylen);

/* Forget a token (the session it opened ended) and wipe its secret.
 * Unknown names are fine. A claimed token not dropped is forgotten once
 * it expires. */
void ferry__tokens_drop(struct ferry__tokens *t, const char *name);

#endif
