/* Exports (io/exports.h): the daemon's access configuration.
 *
 * Parsed line by line from text in memory; key files come through a
 * callback so the parser is testable (and fuzzable) without files.
 * Prefixes are kept relative ("atlas/x"; "" is the whole export) so a
 * check is one component-wise prefix comparison per prefix.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "ferry/error.h"
#include "io/exports.h"
#include "io/stage.h"
#include "io/manifest.h"
#include "util/util.h"

#define EXPORTS_FILE_MAX (1u << 20)

struct grant {
	char name[FERRY__EXPORTS_NAME_MAX + 1];
	struct ferry_key key;
	unsigned rights;
	unsigned line;
	char **prefix; /* relative form; "" covers the whole export */
	size_t n_prefix;
};

struct ferry__exports {
	char *root;
	unsigned root_line;
	struct grant *g;
	size_t n, cap;
};

struct parser {
	const char *origin;
	unsigned line;
	ferry__exports_key_fn load_key;
	void *arg;
	struct ferry__exports *ex;
	char *why;
	size_t whylen;
};

static const struct {
	const char *name;
	unsigned bits;
} rights_tab[] = {
	{ "read", FERRY__RIGHT_READ },
	{ "write", FERRY__RIGHT_WRITE },
	{ "delete", FERRY__RIGHT_DELETE },
	{ "all", FERRY__RIGHT_ALL },
};

/* Fill why with "origin:line: message" and return err. */
FERRY__PRINTF(3, 4)
static int fail(struct parser *p, int err, const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (p->line)
		ferry__why(p->why, p->whylen, "%s:%u: %s", p->origin, p->line,
			   msg);
	else
		ferry__why(p->why, p->whylen, "%s: %s", p->origin, msg);
	return err;
}

static void grant_free(struct grant *g)
{
	for (size_t i = 0; i < g->n_prefix; i++)
		free(g->prefix[i]);
	free(g->prefix);
	OPENSSL_cleanse(&g->key, sizeof(g->key));
}

void ferry__exports_free(struct ferry__exports *ex)
{
	if (!ex)
		return;
	for (size_t i = 0; i < ex->n; i++)
		grant_free(&ex->g[i]);
	free(ex->g);
	free(ex->root);
	free(ex);
}

const char *ferry__exports_root(const struct ferry__exports *ex)
{
	return ex->root;
}

const char *ferry__exports_rights_str(unsigned rights, char *buf, size_t len)
{
	size_t off = 0;

	if (!len)
		return buf;
	buf[0] = '\0';
	for (size_t i = 0; i < 3; i++) {
		if (!(rights & rights_tab[i].bits))
			continue;
		int n = snprintf(buf + off, len - off, "%s%s", off ? "," : "",
				 rights_tab[i].name);
		if (n < 0 || (size_t)n >= len - off)
			return buf;
		off += (size_t)n;
	}
	if (!off)
		snprintf(buf, len, "none");
	return buf;
}

/* Next whitespace-separated word of the line at *cur (NUL-terminated in
 * place), or NULL at the end of the line or at a word starting with '#'. */
static char *next_word(char **cur)
{
	char *s = *cur, *w;

	s += strspn(s, " \t\r");
	if (!*s || *s == '#')
		return NULL;
	w = s;
	s += strcspn(s, " \t\r");
	if (*s)
		*s++ = '\0';
	*cur = s;
	return w;
}

/* Why the relative path s (of length n, not NUL-terminated) is not
 * clean, or NULL when it is (empty is clean: the export root). */
static const char *path_problem(const char *s, size_t n)
{
	char buf[FERRY_PATH_MAX];

	if (n == 0)
		return NULL;
	if (n >= sizeof(buf))
		return "is too long";
	memcpy(buf, s, n);
	buf[n] = '\0';
	if (ferry__path_valid(buf))
		return NULL;
	for (const char *c = buf; (c = strstr(c, "..")); c += 2)
		if ((c == buf || c[-1] == '/') && (c[2] == '/' || !c[2]))
			return "has a '..' component";
	return "has an empty or '.' component";
}

/* An absolute config path ("/a/b", "/a/b/", "/") to its relative form
 * ("a/b"; "" for "/") in a new string. Returns 0, -EINVAL with *bad set,
 * or -ENOMEM. */
static int abs_to_rel(const char *word, char **out, const char **bad)
{
	const char *s = word + 1;
	size_t n;

	if (word[0] != '/') {
		*bad = "is relative; write it from the export root, "
		       "starting with '/'";
		return -EINVAL;
	}
	n = strlen(s);
	if (n && s[n - 1] == '/')
		n--; /* one trailing '/' is fine: "/atlas/" is "/atlas" */
	if (n == 0 && s[0] == '/') {
		*bad = "has an empty component";
		return -EINVAL;
	}
	*bad = path_problem(s, n);
	if (*bad)
		return -EINVAL;
	*out = strndup(s, n);
	return *out ? 0 : -ENOMEM;
}

static int parse_root(struct parser *p, char *cur)
{
	struct ferry__exports *ex = p->ex;
	char *word = next_word(&cur), *rel;
	const char *bad;
	int ret;

	if (ex->root)
		return fail(p, -EINVAL, "second `root` line (the first is "
			    "line %u); an exports file has one root",
			    ex->root_line);
	if (!word)
		return fail(p, -EINVAL, "`root` needs a directory");
	if (next_word(&cur))
		return fail(p, -EINVAL, "`root` takes one directory (no "
			    "spaces in it)");
	ret = abs_to_rel(word, &rel, &bad);
	if (ret == -ENOMEM)
		return fail(p, ret, "out of memory");
	if (ret)
		return fail(p, ret, "root %s %s", word,
			    word[0] == '/' ? bad : "is relative; the root "
			    "must be an absolute directory");
	ex->root = malloc(strlen(rel) + 2);
	if (ex->root)
		sprintf(ex->root, "/%s", rel);
	free(rel);
	if (!ex->root)
		return fail(p, -ENOMEM, "out of memory");
	ex->root_line = p->line;
	return 0;
}

static bool name_valid(const char *s)
{
	size_t n = strlen(s);

	return n >= 1 && n <= FERRY__EXPORTS_NAME_MAX &&
	       strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			 "0123456789._-") == n;
}

static const struct grant *find(const struct ferry__exports *ex,
				const char *name)
{
	for (size_t i = 0; i < ex->n; i++)
		if (!strcmp(ex->g[i].name, name))
			return &ex->g[i];
	return NULL;
}

/* "read,write" or "read write" (several words) into g->rights. */
static int add_rights(struct parser *p, struct grant *g, char *word)
{
	for (char *item = word;;) {
		size_t n = strcspn(item, ",");
		size_t i;

		for (i = 0; i < FERRY__ARRAY_SIZE(rights_tab); i++)
			if (strlen(rights_tab[i].name) == n &&
			    !strncmp(item, rights_tab[i].name, n))
				break;
		if (i == FERRY__ARRAY_SIZE(rights_tab))
			return fail(p, -EINVAL, "key %s: unknown right `%.*s` "
				    "(rights are read, write, delete or all, "
				    "separated by commas)",
				    g->name, (int)n, item);
		g->rights |= rights_tab[i].bits;
		if (!item[n])
			return 0;
		item += n + 1;
	}
}

static int add_prefix(struct parser *p, struct grant *g, const char *word)
{
	const char *bad;
	char **v, *rel;
	int ret;

	ret = abs_to_rel(word, &rel, &bad);
	if (ret == -EINVAL)
		return fail(p, ret, "key %s: path prefix %s %s", g->name, word,
			    bad);
	if (ret)
		return fail(p, ret, "out of memory");
	v = realloc(g->prefix, (g->n_prefix + 1) * sizeof(*v));
	if (!v) {
		free(rel);
		return fail(p, -ENOMEM, "out of memory");
	}
	g->prefix = v;
	g->prefix[g->n_prefix++] = rel;
	return 0;
}

/* The words after "key NAME FILE": `rights` and `paths` clauses. */
static int parse_clauses(struct parser *p, struct grant *g, char *cur)
{
	enum { NONE, RIGHTS, PATHS } mode = NONE;
	bool seen_rights = false, seen_paths = false;
	char *word;
	int ret;

	while ((word = next_word(&cur))) {
		if (!strcmp(word, "rights") || !strcmp(word, "paths")) {
			bool r = word[0] == 'r';
			bool *seen = r ? &seen_rights : &seen_paths;

			if (*seen)
				return fail(p, -EINVAL, "key %s: `%s` given "
					    "twice", g->name, word);
			*seen = true;
			mode = r ? RIGHTS : PATHS;
			continue;
		}
		if (mode == NONE)
			return fail(p, -EINVAL, "key %s: unknown word `%s` "
				    "(expected `rights` or `paths`)",
				    g->name, word);
		ret = mode == RIGHTS ? add_rights(p, g, word)
				     : add_prefix(p, g, word);
		if (ret)
			return ret;
	}
	if (!g->rights)
		return fail(p, -EINVAL, "key %s: no rights (add `rights "
			    "read`, `rights read,write` ...)", g->name);
	if (!g->n_prefix)
		return fail(p, -EINVAL, "key %s: no paths (add `paths /` for "
			    "the whole export, or `paths /DIR ...`)", g->name);
	return 0;
}

static int grant_load_key(struct parser *p, struct grant *g, const char *file)
{
	char kwhy[512] = "";
	int ret;

	if (p->load_key)
		ret = p->load_key(p->arg, file, &g->key, kwhy, sizeof(kwhy));
	else
		ret = ferry_key_load(file, &g->key, kwhy, sizeof(kwhy));
	if (ret)
		return fail(p, ret, "key %s: %s", g->name,
			    kwhy[0] ? kwhy : ferry_strerror(ret));
	for (size_t i = 0; i < p->ex->n; i++)
		if (!CRYPTO_memcmp(&p->ex->g[i].key, &g->key,
				   sizeof(g->key)))
			return fail(p, -EINVAL, "key %s: its key file %s holds "
				    "the same key as key %s (line %u); each "
				    "name needs its own key, since a client "
				    "is known by its key",
				    g->name, file, p->ex->g[i].name,
				    p->ex->g[i].line);
	return 0;
}

static int parse_key(struct parser *p, char *cur)
{
	struct ferry__exports *ex = p->ex;
	char *name = next_word(&cur), *file;
	const struct grant *dup;
	struct grant g = { .line = p->line };
	int ret;

	if (!name)
		return fail(p, -EINVAL, "`key` needs a name, a key file, "
			    "rights and paths");
	if (!name_valid(name))
		return fail(p, -EINVAL, "key name `%s` is not valid (1 to %d "
			    "letters, digits, '.', '_' or '-')",
			    name, FERRY__EXPORTS_NAME_MAX);
	dup = find(ex, name);
	if (dup)
		return fail(p, -EINVAL, "duplicate key name %s (first on "
			    "line %u)", name, dup->line);
	snprintf(g.name, sizeof(g.name), "%s", name);
	file = next_word(&cur);
	if (!file || !strcmp(file, "rights") || !strcmp(file, "paths"))
		return fail(p, -EINVAL, "key %s: the key file is missing "
			    "(key NAME FILE rights ... paths ...)", name);
	ret = parse_clauses(p, &g, cur);
	if (!ret)
		ret = grant_load_key(p, &g, file);
	if (!ret && ex->n == ex->cap) {
		size_t cap = ex->cap ? 2 * ex->cap : 8;
		struct grant *v = realloc(ex->g, cap * sizeof(*v));

		if (!v)
			ret = fail(p, -ENOMEM, "out of memory");
		else {
			ex->g = v;
			ex->cap = cap;
		}
	}
	if (ret) {
		grant_free(&g);
		return ret;
	}
	ex->g[ex->n++] = g;
	return 0;
}

static int parse_line(struct parser *p, char *cur)
{
	char *word = next_word(&cur);

	if (!word)
		return 0; /* blank or comment */
	if (!strcmp(word, "root"))
		return parse_root(p, cur);
	if (!strcmp(word, "key"))
		return parse_key(p, cur);
	return fail(p, -EINVAL, "unknown word `%s` (a line starts with "
		    "`root` or `key`)", word);
}

int ferry__exports_parse(const char *text, const char *origin,
			 ferry__exports_key_fn load_key, void *arg,
			 struct ferry__exports **out, char *why,
			 size_t whylen)
{
	struct parser p = {
		.origin = origin ? origin : "exports",
		.load_key = load_key,
		.arg = arg,
		.why = why,
		.whylen = whylen,
	};
	char *copy, *line;
	int ret = 0;

	*out = NULL;
	copy = strdup(text);
	p.ex = calloc(1, sizeof(*p.ex));
	if (!copy || !p.ex) {
		ret = fail(&p, -ENOMEM, "out of memory");
		goto out_free;
	}
	for (line = copy; line && !ret;) {
		char *nl = strchr(line, '\n');

		if (nl)
			*nl = '\0';
		p.line++;
		ret = parse_line(&p, line);
		line = nl ? nl + 1 : NULL;
	}
	p.line = 0;
	if (!ret && !p.ex->root)
		ret = fail(&p, -EINVAL, "no `root` line: name the directory "
			   "the daemon exports (root /srv/ferry)");
	if (!ret && !p.ex->n)
		ret = fail(&p, -EINVAL, "no `key` lines: no client could use "
			   "this export");
	if (!ret) {
		*out = p.ex;
		p.ex = NULL;
	}
out_free:
	ferry__exports_free(p.ex);
	free(copy);
	return ret;
}

/* ---- loading from a file ------------------------------------------------ */

/* Key files named relative to the config are found next to it. */
static int load_key_near(void *arg, const char *path, struct ferry_key *key,
			 char *why, size_t whylen)
{
	const char *dir = arg;
	char full[FERRY_PATH_MAX];

	if (path[0] == '/' || !dir)
		return ferry_key_load(path, key, why, whylen);
	if ((size_t)snprintf(full, sizeof(full), "%s/%s", dir, path) >=
	    sizeof(full)) {
		ferry__why(why, whylen, "key file path %s/%s is too long", dir,
			   path);
		return -ENAMETOOLONG;
	}
	return ferry_key_load(full, key, why, whylen);
}

/* Read all of path (at most EXPORTS_FILE_MAX bytes) into a new string. */
static int read_text(const char *path, char **text, char *why,
		     size_t whylen)
{
	size_t len = 0;
	struct stat st;
	char *buf;
	int fd, ret = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		ferry__why(why, whylen, "cannot open exports file %s: %s", path,
			   ferry_strerror(ret));
		return ret;
	}
	/* whoever may write it may grant any key every right: the same
	 * rule as for key files, for writing */
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		ferry__why(why, whylen, "cannot stat exports file %s: %s", path,
			   ferry_strerror(ret));
		goto out_close;
	}
	if (!S_ISREG(st.st_mode)) {
		ret = -EINVAL;
		ferry__why(why, whylen, "exports file %s is not a regular file",
			   path);
		goto out_close;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		ret = -EPERM;
		ferry__why(why, whylen, "exports file %s is writable by group "
			   "or others (mode %04o); run `chmod go-w %s`", path,
			   (unsigned)(st.st_mode & 07777), path);
		goto out_close;
	}
	buf = malloc(EXPORTS_FILE_MAX + 1);
	if (!buf) {
		ret = -ENOMEM;
		goto out_close;
	}
	while (len <= EXPORTS_FILE_MAX) {
		ssize_t n = read(fd, buf + len, EXPORTS_FILE_MAX + 1 - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			ferry__why(why, whylen, "cannot read exports file %s: "
				   "%s", path, ferry_strerror(ret));
			goto out_free;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (len > EXPORTS_FILE_MAX) {
		ret = -EFBIG;
		ferry__why(why, whylen, "exports file %s is larger than %u "
			   "bytes", path, EXPORTS_FILE_MAX);
		goto out_free;
	}
	if (memchr(buf, '\0', len)) {
		ret = -EINVAL;
		ferry__why(why, whylen, "exports file %s holds a NUL byte; "
			   "it must be text", path);
		goto out_free;
	}
	buf[len] = '\0';
	*text = buf;
	buf = NULL;
out_free:
	free(buf);
out_close:
	close(fd);
	return ret;
}

int ferry__exports_load(const char *path, struct ferry__exports **out,
			char *why, size_t whylen)
{
	const char *slash = strrchr(path, '/');
	char *text = NULL, *dir = NULL;
	int ret;

	*out = NULL;
	if (slash) {
		dir = strndup(path, slash == path ? 1 : (size_t)(slash - path));
		if (!dir)
			return -ENOMEM;
	}
	ret = read_text(path, &text, why, whylen);
	if (!ret)
		ret = ferry__exports_parse(text, path, load_key_near, dir, out,
					   why, whylen);
	free(text);
	free(dir);
	return ret;
}

/* ---- checks -------------------------------------------------------------- */

/* Point *rel at a request path's relative form (the leading '/'
 * skipped); false when the path is not valid. */
static bool request_rel(const char *path, const char **rel)
{
	if (path[0] == '/')
		path++;
	*rel = path;
	return !path[0] || ferry__path_valid(path);
}

static bool covers(const char *prefix, const char *rel)
{
	size_t n = strlen(prefix);

	return n == 0 || (!strncmp(prefix, rel, n) &&
			  (rel[n] == '\0' || rel[n] == '/'));
}

/* "/atlas /shared/in" into buf, "..." when it does not fit. */
static void prefixes_str(const struct grant *g, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < g->n_prefix; i++) {
		int n = snprintf(buf + off, len - off, "%s/%s",
				 i ? " " : "", g->prefix[i]);

		if (n < 0 || (size_t)n >= len - off) {
			if (len > 4)
				strcpy(buf + len - 4, "...");
			return;
		}
		off += (size_t)n;
	}
}

int ferry__exports_allow(const struct ferry__exports *ex,
			 const char *key_name, unsigned rights,
			 const char *path, char *why, size_t whylen)
{
	char want[32], have[32], list[256];
	const struct grant *g;
	const char *rel;

	if (!rights || (rights & ~(unsigned)FERRY__RIGHT_ALL)) {
		ferry__why(why, whylen, "no such right (mask %#x)", rights);
		return -EINVAL;
	}
	ferry__exports_rights_str(rights, want, sizeof(want));
	if (!path || !request_rel(path, &rel)) {
		ferry__why(why, whylen, "cannot %s %.200s: not a valid path in "
			   "the export (no '..', '.' or empty components)",
			   want, path ? path : "(none)");
		return -EINVAL;
	}
	if (!strncmp(rel, FERRY__STAGE_DIR, strlen(FERRY__STAGE_DIR)) &&
	    (!rel[strlen(FERRY__STAGE_DIR)] || rel[strlen(FERRY__STAGE_DIR)] == '/')) {
		ferry__why(why, whylen, "cannot %s /%.200s: /%s is the daemon's staging area, not served",
			   want, rel, FERRY__STAGE_DIR);
		return -EACCES;
	}
	g = key_name ? find(ex, key_name) : NULL;
	if (!g) {
		ferry__why(why, whylen, "key %.64s may not %s /%.200s: it is "
			   "not in the exports", key_name ? key_name : "(none)",
			   want, rel);
		return -EACCES;
	}
	if (rights & ~g->rights) {
		ferry__exports_rights_str(rights & ~g->rights, want,
					  sizeof(want));
		ferry__exports_rights_str(g->rights, have, sizeof(have));
		ferry__why(why, whylen, "key %s may not %s /%.200s: its rights "
			   "are %s", g->name, want, rel, have);
		return -EACCES;
	}
	for (size_t i = 0; i < g->n_prefix; i++)
		if (covers(g->prefix[i], rel))
			return 0;
	prefixes_str(g, list, sizeof(list));
	ferry__why(why, whylen, "key %s may not %s /%.200s: it is outside "
		   "the key's paths (%s)", g->name, want, rel, list);
	return -EACCES;
}

const char *ferry__exports_name_by_key(const struct ferry__exports *ex,
				       const struct ferry_key *key)
{
	const char *name = NULL;

	/* every key is compared, so the time does not say which matched */
	for (size_t i = 0; i < ex->n; i++)
		if (!CRYPTO_memcmp(&ex->g[i].key, key, sizeof(*key)))
			name = ex->g[i].name;
	return name;
}

const struct ferry_key *
ferry__exports_key_by_name(const struct ferry__exports *ex, const char *name)
{
	const struct grant *g = find(ex, name);

	return g ? &g->key : NULL;
}
