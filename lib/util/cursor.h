/* Bounds-checked byte cursors: the one place bytes are packed into and
 * read out of wire and on-disk formats (control frames, manifest batches,
 * daemon request data, transport endpoint blobs and frame headers).
 *
 * A cursor's error is sticky: a put or get that would run past the end
 * does nothing (a get yields zeroes) and sets ->overrun, so a codec writes
 * its fields in a row and checks once at the end.
 *
 * Integers are little-endian (ferry__put_u32, ...) unless the format says
 * network order (ferry__put_be16, ...). Strings travel as a u16 length and
 * their bytes (no NUL); which bytes a field allows is its codec's choice,
 * a predicate such as ferry__char_plain.
 *
 * In lib/util so that every layer may use it: lib/ctrl, lib/io and the
 * transports include this, and it includes nothing of theirs.
 */
#ifndef FERRY_UTIL_CURSOR_H
#define FERRY_UTIL_CURSOR_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ferry/error.h"

struct ferry__wcur {
	uint8_t *p;
	size_t cap;
	size_t off;
	bool overrun;
};

struct ferry__rcur {
	const uint8_t *p;
	size_t len;
	size_t off;
	bool overrun;
};

/* Reserve n bytes for writing; NULL (and overrun) if they do not fit. */
static inline uint8_t *ferry__put_reserve(struct ferry__wcur *c, size_t n)
{
	uint8_t *q;

	if (c->overrun || n > c->cap - c->off) {
		c->overrun = true;
		return NULL;
	}
	q = c->p + c->off;
	c->off += n;
	return q;
}

/* n bytes of v, least significant first (le) or last. */
static inline void ferry__put_int(struct ferry__wcur *c, uint64_t v, size_t n,
				  bool le)
{
	uint8_t *q = ferry__put_reserve(c, n);

	if (!q)
		return;
	for (size_t i = 0; i < n; i++)
		q[i] = (uint8_t)(v >> (8 * (le ? i : n - 1 - i)));
}

static inline void ferry__put_le(struct ferry__wcur *c, uint64_t v, size_t n)
{
	ferry__put_int(c, v, n, true);
}

/* Network order (big-endian), for formats that say so. */
static inline void ferry__put_be(struct ferry__wcur *c, uint64_t v, size_t n)
{
	ferry__put_int(c, v, n, false);
}

static inline void ferry__put_u8(struct ferry__wcur *c, uint8_t v)
{
	ferry__put_le(c, v, 1);
}

static inline void ferry__put_u16(struct ferry__wcur *c, uint16_t v)
{
	ferry__put_le(c, v, 2);
}

static inline void ferry__put_u32(struct ferry__wcur *c, uint32_t v)
{
	ferry__put_le(c, v, 4);
}

static inline void ferry__put_u64(struct ferry__wcur *c, uint64_t v)
{
	ferry__put_le(c, v, 8);
}

static inline void ferry__put_i32(struct ferry__wcur *c, int32_t v)
{
	ferry__put_le(c, (uint32_t)v, 4);
}

static inline void ferry__put_be16(struct ferry__wcur *c, uint16_t v)
{
	ferry__put_be(c, v, 2);
}

static inline void ferry__put_be32(struct ferry__wcur *c, uint32_t v)
{
	ferry__put_be(c, v, 4);
}

static inline void ferry__put_bytes(struct ferry__wcur *c, const void *src,
				    size_t n)
{
	uint8_t *q = ferry__put_reserve(c, n);

	if (q && n)
		memcpy(q, src, n);
}

/* No control characters at all: host names, ports, transport names. */
static inline bool ferry__char_plain(unsigned char ch)
{
	return ch >= 0x20 && ch != 0x7f;
}

/* Any byte (a string never holds NUL): paths, which may hold whatever a
 * file system accepts. Whoever prints one escapes it (ferry_escape). */
static inline bool ferry__char_any(unsigned char ch)
{
	(void)ch;
	return true;
}

/* Write t, which must be shorter than max and made of bytes ok accepts:
 * 0, or -EINVAL (nothing written) if it is not. */
static inline int ferry__put_str(struct ferry__wcur *c, const char *t,
				 size_t max, bool (*ok)(unsigned char))
{
	size_t n = strnlen(t, max);

	if (n == max || n > UINT16_MAX)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!ok((unsigned char)t[i]))
			return -EINVAL;
	ferry__put_u16(c, (uint16_t)n);
	ferry__put_bytes(c, t, n);
	return 0;
}

/* Take n bytes for reading; NULL (and overrun) if fewer are left. */
static inline const uint8_t *ferry__get_take(struct ferry__rcur *c, size_t n)
{
	const uint8_t *q;

	if (c->overrun || n > c->len - c->off) {
		c->overrun = true;
		return NULL;
	}
	q = c->p + c->off;
	c->off += n;
	return q;
}

/* n bytes, least significant first (le) or last; 0 past the end. */
static inline uint64_t ferry__get_int(struct ferry__rcur *c, size_t n, bool le)
{
	const uint8_t *q = ferry__get_take(c, n);
	uint64_t v = 0;

	if (!q)
		return 0;
	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)q[i] << (8 * (le ? i : n - 1 - i));
	return v;
}

static inline uint64_t ferry__get_le(struct ferry__rcur *c, size_t n)
{
	return ferry__get_int(c, n, true);
}

static inline uint64_t ferry__get_be(struct ferry__rcur *c, size_t n)
{
	return ferry__get_int(c, n, false);
}

static inline uint8_t ferry__get_u8(struct ferry__rcur *c)
{
	return (uint8_t)ferry__get_le(c, 1);
}

static inline uint16_t ferry__get_u16(struct ferry__rcur *c)
{
	return (uint16_t)ferry__get_le(c, 2);
}

static inline uint32_t ferry__get_u32(struct ferry__rcur *c)
{
	return (uint32_t)ferry__get_le(c, 4);
}

static inline uint64_t ferry__get_u64(struct ferry__rcur *c)
{
	return ferry__get_le(c, 8);
}

static inline uint16_t ferry__get_be16(struct ferry__rcur *c)
{
	return (uint16_t)ferry__get_be(c, 2);
}

static inline uint32_t ferry__get_be32(struct ferry__rcur *c)
{
	return (uint32_t)ferry__get_be(c, 4);
}

static inline int32_t ferry__get_i32(struct ferry__rcur *c)
{
	uint32_t u = ferry__get_u32(c);

	/* Two's complement without implementation-defined conversion (and
	 * so in ferry__get_i64). */
	return u <= INT32_MAX ? (int32_t)u : -(int32_t)(~u) - 1;
}

static inline int64_t ferry__get_i64(struct ferry__rcur *c)
{
	uint64_t u = ferry__get_u64(c);

	return u <= INT64_MAX ? (int64_t)u : -(int64_t)(~u) - 1;
}

static inline void ferry__get_bytes(struct ferry__rcur *c, void *dst, size_t n)
{
	const uint8_t *q = ferry__get_take(c, n);

	if (q && n)
		memcpy(dst, q, n);
	else if (n)
		memset(dst, 0, n);
}

/* Take a string of fewer than max bytes, none NUL and each accepted by
 * ok: its bytes (not NUL-terminated) and *n its length, or NULL if it is
 * too long, holds a byte ok refuses, or runs past the end. */
static inline const char *ferry__get_str_view(struct ferry__rcur *c,
					      size_t max,
					      bool (*ok)(unsigned char),
					      size_t *n)
{
	const uint8_t *q;

	*n = ferry__get_u16(c);
	if (*n >= max)
		return NULL;
	q = ferry__get_take(c, *n);
	if (!q)
		return NULL;
	for (size_t i = 0; i < *n; i++)
		if (!q[i] || !ok(q[i]))
			return NULL;
	return (const char *)q;
}

/* Read a string (ferry__get_str_view) into t[0..max), NUL-terminated:
 * 0, or -FERRY_EPROTO with t left as it was. */
static inline int ferry__get_str(struct ferry__rcur *c, char *t, size_t max,
				 bool (*ok)(unsigned char))
{
	size_t n;
	const char *q = ferry__get_str_view(c, max, ok, &n);

	if (!q)
		return -FERRY_EPROTO;
	memcpy(t, q, n);
	t[n] = '\0';
	return 0;
}

/* Bytes not yet read. */
static inline size_t ferry__get_left(const struct ferry__rcur *c)
{
	return c->overrun ? 0 : c->len - c->off;
}

#endif
