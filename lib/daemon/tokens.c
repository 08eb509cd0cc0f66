/* One-time transfer tokens (daemon/tokens.h).
 *
 * A small table under one mutex: at most FERRY__TOKENS_MAX entries, each
 * searched linearly by name (a handshake or a session start is rare next
 * to the data it moves). Expired tokens are dropped lazily, when a token
 * is issued or an expired one is looked up. Each token keeps its files
 * sorted by path, so a session's manifest is checked by one merge walk.
 * Secrets are wiped with OPENSSL_cleanse, which the compiler cannot elide.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>

#include "daemon/tokens.h"
#include "ferry/error.h"
#include "util/util.h"

#define TOKEN_HEX 32 /* hex digits after the prefix */

struct tfile {
	char *path; /* below dest */
	uint64_t size;
};

struct token {
	char name[FERRY_KEYNAME_MAX + 1];
	struct ferry_key secret;
	char *dest;          /* relative form: no leading '/'; "" = the root */
	struct tfile *files; /* sorted by path */
	size_t n;
	uint32_t flags;      /* FERRY_FILES_FORCE or 0 */
	uint64_t expiry;     /* CLOCK_REALTIME s; live through this second */
	bool used;           /* claimed by a handshake */
};

struct ferry__tokens {
	pthread_mutex_t mu;
	struct token **t;
	size_t n;
};

static uint64_t now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec;
}

static void token_free(struct token *k)
{
	if (!k)
		return;
	for (size_t i = 0; i < k->n; i++)
		free(k->files[i].path);
	free(k->files);
	free(k->dest);
	OPENSSL_cleanse(k, sizeof(*k));
	free(k);
}

struct ferry__tokens *ferry__tokens_new(void)
{
	struct ferry__tokens *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->t = calloc(FERRY__TOKENS_MAX, sizeof(*t->t));
	if (!t->t || pthread_mutex_init(&t->mu, NULL)) {
		free(t->t);
		free(t);
		return NULL;
	}
	return t;
}

void ferry__tokens_free(struct ferry__tokens *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++)
		token_free(t->t[i]);
	free(t->t);
	pthread_mutex_destroy(&t->mu);
	free(t);
}

/* Remove entry i (order does not matter). Called with the lock held. */
static void remove_at(struct ferry__tokens *t, size_t i)
{
	token_free(t->t[i]);
	t->t[i] = t->t[--t->n];
	t->t[t->n] = NULL;
}

static void sweep(struct ferry__tokens *t, uint64_t now)
{
	for (size_t i = 0; i < t->n;)
		if (now > t->t[i]->expiry)
			remove_at(t, i);
		else
			i++;
}

static size_t find(const struct ferry__tokens *t, const char *name)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (!strcmp(t->t[i]->name, name))
			break;
	return i;
}

/* A request path's relative form: one leading '/' dropped ("/" is ""). */
static const char *rel(const char *path)
{
	return path[0] == '/' ? path + 1 : path;
}

static int cmp_tfile(const void *a, const void *b)
{
	return strcmp(((const struct tfile *)a)->path,
		      ((const struct tfile *)b)->path);
}

/* Copy the FILE entries of files into k, sorted. */
static int copy_files(struct token *k, const struct ferry_manifest *files,
		      char *why, size_t whylen)
{
	if (!files || !files->n) {
		ferry__why(why, whylen, "a token names at least one file");
		return -EINVAL;
	}
	k->files = calloc(files->n, sizeof(*k->files));
	if (!k->files)
		return -ENOMEM;
	for (size_t i = 0; i < files->n; i++) {
		const struct ferry_entry *e = &files->e[i];

		if (e->type != FERRY_ENTRY_FILE) {
			ferry__why(why, whylen, "a token names files, not "
				   "directories (%s)", e->path);
			return -EINVAL;
		}
		k->files[i].path = strdup(e->path);
		if (!k->files[i].path)
			return -ENOMEM;
		k->files[i].size = e->size;
		k->n++;
	}
	qsort(k->files, k->n, sizeof(*k->files), cmp_tfile);
	for (size_t i = 1; i < k->n; i++)
		if (!strcmp(k->files[i - 1].path, k->files[i].path)) {
			ferry__why(why, whylen, "%s is named twice",
				   k->files[i].path);
			return -EINVAL;
		}
	return 0;
}

static int new_name(char name[FERRY_KEYNAME_MAX + 1])
{
	uint8_t raw[TOKEN_HEX / 2];
	size_t off = strlen(FERRY__TOKEN_PREFIX);
	int ret = ferry__random(raw, sizeof(raw));

	if (ret)
		return ret;
	memcpy(name, FERRY__TOKEN_PREFIX, off);
	for (size_t i = 0; i < sizeof(raw); i++)
		snprintf(name + off + 2 * i, 3, "%02x", raw[i]);
	return 0;
}

/* A token for the request, with a fresh name and secret (no lock). */
static int token_make(const char *dest, const struct ferry_manifest *files,
		      uint32_t flags, uint64_t expiry, struct token **out,
		      char *why, size_t whylen)
{
	struct token *k = calloc(1, sizeof(*k));
	int ret;

	if (!k)
		return -ENOMEM;
	k->flags = flags & FERRY_FILES_FORCE;
	k->expiry = expiry;
	k->dest = strdup(rel(dest));
	ret = k->dest ? copy_files(k, files, why, whylen) : -ENOMEM;
	if (!ret)
		ret = new_name(k->name);
	if (!ret)
		ret = ferry__random(k->secret.bytes, sizeof(k->secret.bytes));
	if (ret) {
		if (ret == -ENOMEM)
			ferry__why(why, whylen, "out of memory");
		else if (ret != -EINVAL)
			ferry__why(why, whylen, "getrandom: %s",
				   ferry_strerror(ret));
		token_free(k);
		return ret;
	}
	*out = k;
	return 0;
}

int ferry__tokens_issue(struct ferry__tokens *t, const char *issuer,
			const char *dest, const struct ferry_manifest *files,
			uint32_t flags, unsigned ttl_s,
			char name[FERRY_KEYNAME_MAX + 1],
			struct ferry_key *secret, uint64_t *expiry, char *why,
			size_t whylen)
{
	uint64_t now = now_s();
	struct token *k;
	int ret;

	if (ttl_s > FERRY__TOKEN_TTL_MAX) {
		ferry__why(why, whylen, "a token lives at most %d s, not %u s",
			   FERRY__TOKEN_TTL_MAX, ttl_s);
		return -EINVAL;
	}
	if (!dest || (rel(dest)[0] && !ferry__path_valid(rel(dest)))) {
		ferry__why(why, whylen, "the token's destination is not a "
			   "valid path in the export");
		return -EINVAL;
	}
	ret = token_make(dest, files, flags,
			 now + (ttl_s ? ttl_s : FERRY__TOKEN_TTL_DEFAULT), &k,
			 why, whylen);
	if (ret)
		return ret;
	pthread_mutex_lock(&t->mu);
	sweep(t, now);
	if (t->n == FERRY__TOKENS_MAX) {
		pthread_mutex_unlock(&t->mu);
		token_free(k);
		ferry__why(why, whylen, "%d tokens are live already; try again "
			   "when some have been used or expired",
			   FERRY__TOKENS_MAX);
		return -EBUSY;
	}
	t->t[t->n++] = k;
	memcpy(name, k->name, sizeof(k->name));
	*secret = k->secret;
	*expiry = k->expiry;
	pthread_mutex_unlock(&t->mu);
	ferry__log(FERRY_LOG_INFO, "key %s: issued %s for %zu file(s) in /%s, "
		   "expires in %u s", issuer ? issuer : "(none)", name,
		   files->n, rel(dest),
		   ttl_s ? ttl_s : FERRY__TOKEN_TTL_DEFAULT);
	return 0;
}

/* The live token called name, or NULL with why (and an expired one
 * dropped). Called with the lock held. */
static struct token *live(struct ferry__tokens *t, const char *name,
			  uint64_t now, char *why, size_t whylen)
{
	size_t i = find(t, name);

	if (i == t->n) {
		ferry__why(why, whylen, "unknown token %.64s (never issued "
			   "here, or already used and forgotten)", name);
		return NULL;
	}
	if (now > t->t[i]->expiry) {
		ferry__why(why, whylen, "token %s expired %llu s ago", name,
			   (unsigned long long)(now - t->t[i]->expiry));
		remove_at(t, i);
		return NULL;
	}
	if (t->t[i]->used) {
		ferry__why(why, whylen, "token %s was already used: a token "
			   "opens one session", name);
		return NULL;
	}
	return t->t[i];
}

int ferry__tokens_key(struct ferry__tokens *t, const char *name,
		      struct ferry_key *key, char *why, size_t whylen)
{
	struct token *k;

	pthread_mutex_lock(&t->mu);
	k = live(t, name, now_s(), why, whylen);
	if (k)
		*key = k->secret;
	pthread_mutex_unlock(&t->mu);
	return k ? 0 : -FERRY_EAUTH;
}

int ferry__tokens_claim(struct ferry__tokens *t, const char *name, char *why,
			size_t whylen)
{
	struct token *k;

	pthread_mutex_lock(&t->mu);
	k = live(t, name, now_s(), why, whylen);
	if (k)
		k->used = true;
	pthread_mutex_unlock(&t->mu);
	return k ? 0 : -FERRY_EAUTH;
}

static int cmp_entry_ptr(const void *a, const void *b)
{
	return strcmp((*(const struct ferry_entry *const *)a)->path,
		      (*(const struct ferry_entry *const *)b)->path);
}

/* "dir/name" (or "name" when dest is the root) into buf. */
static const char *joined(const char *dest, const char *name, char *buf,
			  size_t len)
{
	snprintf(buf, len, "%s%s%s", dest, dest[0] ? "/" : "", name);
	return buf;
}

/* Merge-walk the token's sorted files against the session's sorted
 * entries; describe the first difference. */
static int match_files(const struct token *k,
		       const struct ferry_entry *const *v, size_t n,
		       char *why, size_t whylen)
{
	char a[512], b[512];
	size_t i = 0;

	for (; i < k->n && i < n; i++) {
		const struct tfile *f = &k->files[i];

		if (strcmp(f->path, v[i]->path)) {
			ferry__why(why, whylen, "the token is for /%s (%llu "
				   "bytes), not /%s",
				   joined(k->dest, f->path, a, sizeof(a)),
				   (unsigned long long)f->size,
				   joined(k->dest, v[i]->path, b, sizeof(b)));
			return -EACCES;
		}
		if (f->size != v[i]->size) {
			ferry__why(why, whylen, "the token is for /%s of %llu "
				   "bytes, not %llu bytes",
				   joined(k->dest, f->path, a, sizeof(a)),
				   (unsigned long long)f->size,
				   (unsigned long long)v[i]->size);
			return -EACCES;
		}
	}
	if (i < n) {
		ferry__why(why, whylen, "the token is not for /%s (it names "
			   "%zu file(s))",
			   joined(k->dest, v[i]->path, a, sizeof(a)), k->n);
		return -EACCES;
	}
	if (i < k->n) {
		ferry__why(why, whylen, "the token is also for /%s (%llu "
			   "bytes), which the session leaves out",
			   joined(k->dest, k->files[i].path, a, sizeof(a)),
			   (unsigned long long)k->files[i].size);
		return -EACCES;
	}
	return 0;
}

/* The whole comparison of check, on a claimed token (lock held). */
static int check_token(const struct token *k, const char *dest,
		       uint32_t flags, const struct ferry_manifest *m,
		       char *why, size_t whylen)
{
	const struct ferry_entry **v;
	char a[512];
	int ret;

	if (strcmp(k->dest, rel(dest))) {
		ferry__why(why, whylen, "the token is for files in /%s, not "
			   "in /%.400s", k->dest, rel(dest));
		return -EACCES;
	}
	if ((flags & FERRY_FILES_FORCE) && !(k->flags & FERRY_FILES_FORCE)) {
		ferry__why(why, whylen, "the token does not allow replacing "
			   "existing files (it was issued without force)");
		return -EACCES;
	}
	for (size_t i = 0; i < m->n; i++)
		if (m->e[i].type != FERRY_ENTRY_FILE) {
			ferry__why(why, whylen, "the token is for files only, "
				   "not the directory /%s",
				   joined(k->dest, m->e[i].path, a,
					  sizeof(a)));
			return -EACCES;
		}
	v = malloc((m->n ? m->n : 1) * sizeof(*v));
	if (!v) {
		ferry__why(why, whylen, "out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->n; i++)
		v[i] = &m->e[i];
	qsort(v, m->n, sizeof(*v), cmp_entry_ptr);
	ret = match_files(k, v, m->n, why, whylen);
	free(v);
	return ret;
}

int ferry__tokens_check(struct ferry__tokens *t, const char *name,
			const char *dest, uint32_t flags,
			const struct ferry_manifest *m, char *why,
			size_t whylen)
{
	size_t i;
	int ret;

	pthread_mutex_lock(&t->mu);
	i = find(t, name);
	if (i == t->n || !t->t[i]->used) {
		ferry__why(why, whylen, "token %.64s %s", name,
			   i == t->n ? "is not known here (expired?)"
				     : "was not claimed by a handshake");
		ret = -EACCES;
	} else {
		ret = check_token(t->t[i], dest ? dest : "", flags, m, why,
				  whylen);
	}
	pthread_mutex_unlock(&t->mu);
	return ret;
}

void ferry__tokens_drop(struct ferry__tokens *t, const char *name)
{
	size_t i;

	pthread_mutex_lock(&t->mu);
	i = find(t, name);
	if (i < t->n)
		remove_at(t, i);
	pthread_mutex_unlock(&t->mu);
}
