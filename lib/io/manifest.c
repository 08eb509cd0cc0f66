/* File manifests (io/manifest.h): entries, path rules, wire batches.
 *
 * The walk that fills a manifest from the sender's arguments is in
 * manifest_walk.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ferry/error.h"
#include "io/manifest.h"
#include "util/cursor.h"

/* u16 path length, u8 type, u32 mode, u64 size, i64 mtime_ns */
#define ENTRY_FIXED (2 + 1 + 4 + 8 + 8)
_Static_assert(FERRY_MANIFEST_ENTRY_MAX == ENTRY_FIXED + FERRY_PATH_MAX - 1,
	       "FERRY_MANIFEST_ENTRY_MAX matches the encoding");
_Static_assert(FERRY_PATH_MAX - 1 <= UINT16_MAX,
	       "a path length fits the u16 length field");

void ferry__manifest_init(struct ferry_manifest *m)
{
	memset(m, 0, sizeof(*m));
}

/* path and src share one allocation (manifest_append): a million entries
 * save a million allocations and their headers. */
static void entry_free(struct ferry_entry *e)
{
	free(e->path);
}

/* Drop entries from n on, undoing their share of the totals. */
static void manifest_truncate(struct ferry_manifest *m, size_t n)
{
	while (m->n > n) {
		struct ferry_entry *e = &m->e[--m->n];

		if (e->type == FERRY_ENTRY_FILE) {
			m->n_files--;
			/* totals saturate, so only undo an exact sum */
			if (m->total_bytes != UINT64_MAX)
				m->total_bytes -= e->size;
		}
		entry_free(e);
	}
}

void ferry__manifest_free(struct ferry_manifest *m)
{
	manifest_truncate(m, 0);
	free(m->e);
	ferry__manifest_init(m);
}

static int manifest_grow(struct ferry_manifest *m)
{
	struct ferry_entry *e;
	size_t cap;

	if (m->n < m->cap)
		return 0;
	cap = m->cap ? 2 * m->cap : 64;
	if (cap > SIZE_MAX / sizeof(*e))
		return -ENOMEM;
	e = realloc(m->e, cap * sizeof(*e));
	if (!e)
		return -ENOMEM;
	m->e = e;
	m->cap = cap;
	return 0;
}

/* Append an entry from path bytes (plen of them, not NUL-terminated). */
static int manifest_append(struct ferry_manifest *m, const char *path,
			   size_t plen, const char *src, uint8_t type,
			   uint32_t mode, uint64_t size, int64_t mtime_ns)
{
	struct ferry_entry *e;
	size_t slen;
	int ret;

	ret = manifest_grow(m);
	if (ret)
		return ret;
	e = &m->e[m->n];
	memset(e, 0, sizeof(*e));
	slen = src ? strlen(src) + 1 : 0;
	e->path = malloc(plen + 1 + slen);
	if (!e->path)
		return -ENOMEM;
	memcpy(e->path, path, plen);
	e->path[plen] = '\0';
	if (src) {
		e->src = e->path + plen + 1;
		memcpy(e->src, src, slen);
	}
	e->type = type;
	e->mode = mode;
	e->size = type == FERRY_ENTRY_FILE ? size : 0;
	e->mtime_ns = mtime_ns;
	if (type == FERRY_ENTRY_FILE) {
		m->n_files++;
		m->total_bytes = e->size > UINT64_MAX - m->total_bytes ?
					 UINT64_MAX :
					 m->total_bytes + e->size;
	}
	m->n++;
	return 0;
}

static bool type_valid(uint8_t type)
{
	return type == FERRY_ENTRY_FILE || type == FERRY_ENTRY_DIR;
}

int ferry__manifest_add(struct ferry_manifest *m, const char *path,
			const char *src, uint8_t type, uint32_t mode,
			uint64_t size, int64_t mtime_ns)
{
	if (!ferry__path_valid(path) || !type_valid(type) || mode > 07777)
		return -EINVAL;
	return manifest_append(m, path, strlen(path), src, type, mode, size,
			       mtime_ns);
}

static size_t entry_wire_size(const struct ferry_entry *e)
{
	return ENTRY_FIXED + strlen(e->path);
}

size_t ferry__manifest_encode(const struct ferry_manifest *m, size_t *next,
			      uint8_t *buf, size_t cap)
{
	struct ferry__wcur c = { .p = buf, .cap = cap };

	while (*next < m->n) {
		const struct ferry_entry *e = &m->e[*next];
		size_t plen = strlen(e->path);

		if (entry_wire_size(e) > c.cap - c.off)
			break;
		ferry__put_u16(&c, (uint16_t)plen);
		ferry__put_bytes(&c, e->path, plen);
		ferry__put_u8(&c, e->type);
		ferry__put_u32(&c, e->mode);
		ferry__put_u64(&c, e->size);
		ferry__put_u64(&c, (uint64_t)e->mtime_ns);
		(*next)++;
	}
	return c.off;
}

static int64_t u64_to_i64(uint64_t u)
{
	/* two's complement without implementation-defined conversion */
	return u <= INT64_MAX ? (int64_t)u : -(int64_t)(~u) - 1;
}

struct wire_entry {
	const char *path;
	size_t plen;
	uint8_t type;
	uint32_t mode;
	uint64_t size;
	int64_t mtime_ns;
};

/* Read and check one entry. Returns 0 or -FERRY_EPROTO. */
static int entry_get(struct ferry__rcur *c, struct wire_entry *w)
{
	char path[FERRY_PATH_MAX];

	w->plen = ferry__get_u16(c);
	w->path = (const char *)ferry__get_take(c, w->plen);
	w->type = ferry__get_u8(c);
	w->mode = ferry__get_u32(c);
	w->size = ferry__get_u64(c);
	w->mtime_ns = u64_to_i64(ferry__get_u64(c));
	if (c->overrun || w->plen == 0 || w->plen >= FERRY_PATH_MAX ||
	    memchr(w->path, '\0', w->plen))
		return -FERRY_EPROTO;
	memcpy(path, w->path, w->plen);
	path[w->plen] = '\0';
	if (!ferry__path_valid(path) || !type_valid(w->type) ||
	    w->mode > 07777 || w->size > INT64_MAX ||
	    (w->type == FERRY_ENTRY_DIR && w->size != 0))
		return -FERRY_EPROTO;
	return 0;
}

int ferry__manifest_decode(struct ferry_manifest *m, const uint8_t *buf,
			   size_t len, size_t max_entries)
{
	struct ferry__rcur c = { .p = buf, .len = len };
	struct wire_entry w;
	size_t n0 = m->n, count = 0;
	int ret;

	/* First pass: the whole batch must be well formed. */
	while (ferry__get_left(&c)) {
		ret = entry_get(&c, &w);
		if (ret)
			return ret;
		count++;
	}
	if (count > max_entries || m->n > max_entries - count)
		return -FERRY_ETOOBIG;

	/* Second pass: append; on -ENOMEM leave m as it was. */
	c.off = 0;
	while (ferry__get_left(&c)) {
		entry_get(&c, &w);
		ret = manifest_append(m, w.path, w.plen, NULL, w.type, w.mode,
				      w.size, w.mtime_ns);
		if (ret) {
			manifest_truncate(m, n0);
			return ret;
		}
	}
	return 0;
}
