/* ferry-stage's work list: walk, cut, deal, pack (deal.h). */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "deal.h"
#include "ferry/error.h"

#define WALK_DEPTH 256     /* deeper than this is a symlink loop (-L) */
#define FILE_WEIGHT 65536u /* what a file costs beyond its bytes */

static int why_set(char *why, size_t whylen, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
	return err;
}

void stage_list_free(struct stage_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].src);
		free(l->v[i].name);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* Append it, taking its strings (NULL ones: -ENOMEM, as the strdup that
 * made them failed); they are freed on failure. */
static int append(struct stage_list *l, struct stage_item *it)
{
	if (!it->src || !it->name)
		goto nomem;
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 256;
		struct stage_item *v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			goto nomem;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = *it;
	return 0;
nomem:
	free(it->src);
	free(it->name);
	return -ENOMEM;
}

/* Append a copy of it (its strings copied too). */
static int push(struct stage_list *l, const struct stage_item *it)
{
	struct stage_item c = *it;

	c.src = strdup(it->src);
	c.name = strdup(it->name);
	return append(l, &c);
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static int walk(struct stage_list *l, const char *src, const char *name,
		bool follow, int depth, char *why, size_t whylen);

/* Everything below the directory src, which lands as name. */
static int walk_dir(struct stage_list *l, const char *src, const char *name,
		    bool follow, int depth, char *why, size_t whylen)
{
	struct dirent **ents;
	size_t before = l->n;
	int n = scandir(src, &ents, NULL, by_name), err = 0;

	if (n < 0)
		return why_set(why, whylen, -errno, "%s: %s", src,
			       strerror(errno));
	for (int i = 0; i < n; i++) {
		const char *d = ents[i]->d_name;
		char *s = NULL, *m = NULL;

		if (!err && strcmp(d, ".") && strcmp(d, "..")) {
			if (asprintf(&s, "%s/%s", src, d) < 0)
				s = NULL;
			if (asprintf(&m, "%s/%s", name, d) < 0)
				m = NULL;
			err = s && m ? walk(l, s, m, follow, depth + 1, why,
					    whylen) :
				       -ENOMEM;
		}
		free(s);
		free(m);
		free(ents[i]);
	}
	free(ents);
	if (!err && l->n == before) {
		struct stage_item it = { .src = (char *)src,
					 .name = (char *)name,
					 .kind = STAGE_DIR,
					 .file = l->entries };
		err = push(l, &it);
		l->entries++;
	}
	return err;
}

static int walk(struct stage_list *l, const char *src, const char *name,
		bool follow, int depth, char *why, size_t whylen)
{
	struct stat st;

	if (depth > WALK_DEPTH)
		return why_set(why, whylen, -ELOOP,
			       "%s: more than %d directories deep (a symlink loop?)",
			       src, WALK_DEPTH);
	if (lstat(src, &st))
		return why_set(why, whylen, -errno, "%s: %s", src,
			       strerror(errno));
	if (S_ISLNK(st.st_mode)) {
		if (!follow) {
			fprintf(stderr,
				"ferry-stage: warning: %s: a symlink, skipped (-L sends what it points to)\n",
				src);
			return 0;
		}
		if (stat(src, &st))
			return why_set(why, whylen, -errno,
				       "%s: a symlink to nothing usable: %s",
				       src, strerror(errno));
	}
	if (S_ISDIR(st.st_mode))
		return walk_dir(l, src, name, follow, depth, why, whylen);
	if (!S_ISREG(st.st_mode))
		return why_set(why, whylen, -EINVAL,
			       "%s: not a regular file or directory (devices, FIFOs and sockets are not sent)",
			       src);
	struct stage_item it = { .src = (char *)src, .name = (char *)name,
				 .size = (uint64_t)st.st_size,
				 .kind = STAGE_FILE, .file = l->entries };
	l->entries++;
	l->files++;
	l->bytes += it.size;
	return push(l, &it);
}

/* The name a SRC argument lands under: its last component. */
static int arg_name(const char *src, char *buf, size_t len)
{
	char tmp[PATH_MAX], real[PATH_MAX];
	size_t n = strlen(src);

	while (n > 1 && src[n - 1] == '/')
		n--;
	if (n >= sizeof(tmp))
		return -ENAMETOOLONG;
	memcpy(tmp, src, n);
	tmp[n] = '\0';
	const char *b = strrchr(tmp, '/');
	b = b ? b + 1 : tmp;
	if (!strcmp(b, ".") || !strcmp(b, "..") || !strcmp(tmp, "/")) {
		if (!realpath(tmp, real))
			return -errno;
		b = strrchr(real, '/');
		b = b && b[1] ? b + 1 : NULL;
		if (!b)
			return -EINVAL;
	}
	if (strlen(b) >= len)
		return -ENAMETOOLONG;
	stage_copy(buf, len, b);
	return 0;
}

int stage_walk(struct stage_list *l, char *const *srcs, size_t n,
	       bool follow, char *why, size_t whylen)
{
	char name[NAME_MAX + 1];
	int err = 0;

	for (size_t i = 0; i < n && !err; i++) {
		err = arg_name(srcs[i], name, sizeof(name));
		if (err)
			return why_set(why, whylen, err,
				       "%s: cannot tell what name it lands under (%s)",
				       srcs[i], strerror(-err));
		for (size_t j = 0; j < i; j++) {
			char other[NAME_MAX + 1];
			if (!arg_name(srcs[j], other, sizeof(other)) &&
			    !strcmp(other, name))
				return why_set(why, whylen, -EEXIST,
					       "%s and %s would both land as '%s'",
					       srcs[j], srcs[i], name);
		}
		err = walk(l, srcs[i], name, follow, 0, why, whylen);
	}
	return err;
}

/* ---- the deal ---- */

static uint64_t cost(const struct stage_item *it)
{
	return stage_item_len(it) + FILE_WEIGHT;
}

static const struct stage_item *sort_base;

/* Ranges first, file by file (largest file first, then by offset), then
 * everything else, largest first. */
static int by_cost(const void *a, const void *b)
{
	const struct stage_item *x = &sort_base[*(const size_t *)a];
	const struct stage_item *y = &sort_base[*(const size_t *)b];
	uint64_t cx = x->split ? x->size : cost(x);
	uint64_t cy = y->split ? y->size : cost(y);

	if (!x->split != !y->split)
		return x->split ? -1 : 1;
	if (cx != cy)
		return cx > cy ? -1 : 1;
	if (x->split && x->file != y->file)
		return x->file < y->file ? -1 : 1;
	if (x->split && x->offset != y->offset)
		return x->offset < y->offset ? -1 : 1;
	return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

/* Replace each file above split by its ranges. */
static int cut(struct stage_list *l, unsigned ranks, unsigned n_dest,
	       uint64_t split, uint64_t chunk)
{
	struct stage_list out = { 0 };
	uint32_t nth = 0;
	int err = 0;

	out.bytes = l->bytes;
	out.files = l->files;
	out.entries = l->entries;
	for (size_t i = 0; i < l->n && !err; i++) {
		struct stage_item it = l->v[i];
		uint64_t r = 0;

		if (it.kind == STAGE_FILE && split && ranks > 1 &&
		    it.size > split) {
			r = (it.size + ranks - 1) / ranks;
			r = (r + chunk - 1) / chunk * chunk;
		}
		l->v[i].src = l->v[i].name = NULL; /* moved to out */
		if (!r || r >= it.size) {
			err = append(&out, &it);
			continue;
		}
		it.split = r;
		it.dest = nth++ % n_dest;
		/* in order; every range but the last gets copies of the
		 * strings, the last takes them */
		for (it.offset = 0; it.offset + r < it.size && !err;
		     it.offset += r)
			err = push(&out, &it);
		if (!err) {
			err = append(&out, &it);
		} else {
			free(it.src);
			free(it.name);
		}
		out.split++;
	}
	stage_list_free(l);
	if (err) {
		stage_list_free(&out);
		return err;
	}
	*l = out;
	return 0;
}

int stage_deal(struct stage_list *l, unsigned ranks,
	       const uint32_t *rank_dest, unsigned n_dest, uint64_t split,
	       uint64_t chunk)
{
	uint64_t *load = calloc(ranks, sizeof(*load));
	uint32_t *held = calloc(ranks, sizeof(*held)); /* file + 1 */
	size_t *order;
	int err = load && held ? cut(l, ranks, n_dest, split, chunk) : -ENOMEM;

	order = err ? NULL : malloc((l->n + 1) * sizeof(*order));
	if (!order) {
		free(load);
		free(held);
		return err ? err : -ENOMEM;
	}
	for (size_t i = 0; i < l->n; i++)
		order[i] = i;
	sort_base = l->v;
	qsort(order, l->n, sizeof(*order), by_cost);
	for (size_t k = 0; k < l->n; k++) {
		struct stage_item *it = &l->v[order[k]];
		unsigned best = ranks;

		/* a file's ranges on distinct ranks (it has at most one
		 * per rank), so that one large file uses them all */
		for (unsigned r = 0; r < ranks; r++)
			if ((!it->split || held[r] != it->file + 1) &&
			    (best == ranks || load[r] < load[best]))
				best = r;
		if (best == ranks)
			best = 0;
		if (it->split)
			held[best] = it->file + 1;
		it->rank = best;
		load[best] += cost(it);
		if (!it->split)
			it->dest = rank_dest[best];
	}
	free(order);
	free(load);
	free(held);
	return 0;
}

int stage_map(const char *path, unsigned ranks, unsigned n_dest,
	      uint32_t *rank_dest, char *why, size_t whylen)
{
	char line[256];
	unsigned lineno = 0;
	FILE *f;

	for (unsigned r = 0; r < ranks; r++)
		rank_dest[r] = r % n_dest;
	if (!path)
		return 0;
	f = fopen(path, "r");
	if (!f)
		return why_set(why, whylen, -errno, "--map %s: %s", path,
			       strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		unsigned long rank, n;
		char *p = line, *end;

		lineno++;
		line[strcspn(line, "#\n")] = '\0';
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			continue;
		errno = 0;
		rank = strtoul(p, &end, 10);
		if (end == p || errno)
			goto bad;
		p = end;
		n = strtoul(p, &end, 10);
		if (end == p || errno)
			goto bad;
		while (*end == ' ' || *end == '\t')
			end++;
		if (*end || n < 1 || n > n_dest) {
bad:
			fclose(f);
			return why_set(why, whylen, -EINVAL,
				       "--map %s, line %u: want \"RANK N\", N from 1 to %u (the ferry:// destinations in the order given)",
				       path, lineno, n_dest);
		}
		if (rank < ranks)
			rank_dest[rank] = (uint32_t)(n - 1);
	}
	fclose(f);
	return 0;
}

/* ---- packing: u8 kind, u32 dest, u32 file, u64 size, offset, split,
 * u32 + bytes src, u32 + bytes name (this host's byte order: the ranks
 * of one job) ---- */

#define PUT(p, v) (memcpy((p), &(v), sizeof(v)), (p) += sizeof(v))

static size_t packed_len(const struct stage_item *it)
{
	return 1 + 4 + 4 + 3 * 8 + 8 + strlen(it->src) + strlen(it->name);
}

uint8_t *stage_pack(const struct stage_list *l, unsigned ranks,
		    size_t *lens)
{
	size_t total = 0, *at = calloc(ranks + 1, sizeof(*at));
	uint8_t *buf;

	if (!at)
		return NULL;
	memset(lens, 0, ranks * sizeof(*lens));
	for (size_t i = 0; i < l->n; i++)
		lens[l->v[i].rank] += packed_len(&l->v[i]);
	for (unsigned r = 0; r < ranks; r++) {
		at[r] = total;
		total += lens[r];
	}
	buf = malloc(total + 1);
	for (size_t i = 0; buf && i < l->n; i++) {
		const struct stage_item *it = &l->v[i];
		uint8_t *p = buf + at[it->rank];
		uint32_t ls = (uint32_t)strlen(it->src);
		uint32_t ln = (uint32_t)strlen(it->name);

		PUT(p, it->kind);
		PUT(p, it->dest);
		PUT(p, it->file);
		PUT(p, it->size);
		PUT(p, it->offset);
		PUT(p, it->split);
		PUT(p, ls);
		memcpy(p, it->src, ls);
		p += ls;
		PUT(p, ln);
		memcpy(p, it->name, ln);
		p += ln;
		at[it->rank] = (size_t)(p - buf);
	}
	free(at);
	return buf;
}

#define GET(p, end, v)                                                 \
	((size_t)((end) - (p)) >= sizeof(v) ?                           \
		 (memcpy(&(v), (p), sizeof(v)), (p) += sizeof(v), true) : \
		 false)

static char *get_str(const uint8_t **p, const uint8_t *end)
{
	uint32_t n;
	char *s;

	if (!GET(*p, end, n) || (size_t)(end - *p) < n)
		return NULL;
	s = malloc((size_t)n + 1);
	if (!s)
		return NULL;
	memcpy(s, *p, n);
	s[n] = '\0';
	*p += n;
	return s;
}

int stage_unpack(struct stage_list *l, const uint8_t *buf, size_t len)
{
	const uint8_t *p = buf, *end = buf + len;
	int err = 0;

	while (p < end && !err) {
		struct stage_item it = { 0 };

		if (!GET(p, end, it.kind) || !GET(p, end, it.dest) ||
		    !GET(p, end, it.file) || !GET(p, end, it.size) ||
		    !GET(p, end, it.offset) || !GET(p, end, it.split))
			return -EPROTO;
		it.src = get_str(&p, end);
		it.name = it.src ? get_str(&p, end) : NULL;
		if (!it.name) {
			free(it.src);
			return -EPROTO;
		}
		err = append(l, &it);
		if (!err && it.kind == STAGE_FILE &&
		    (!it.split || !it.offset)) {
			l->files++;
			l->bytes += it.size;
		}
	}
	return err;
}
