/* The op-specific data of daemon requests and replies (req.h).
 *
 * Everything here reads bytes a remote peer chose: each decoder checks
 * every length against what is left, refuses trailing bytes and bytes a
 * field may not hold, and only then hands values on. Encoders refuse
 * (-EINVAL) what the decoders would refuse, so a round trip is exact and
 * the encoding canonical.
 */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ctrl/req.h"
#include "ferry/error.h"
#include "ferry/log.h"
#include "io/manifest.h" /* entry types; the arrow is ctrl -> io */
#include "util/cursor.h"
#include "util/path.h"

/* ---- strings: u16 length, bytes ---------------------------------------
 *
 * put_str/get_str: no control characters (hosts, ports, names of keys
 * and transports); put_path/get_path: any byte but NUL, as in a file
 * name. */

static int put_str(struct ferry__wcur *c, const char *t, size_t max)
{
	return ferry__put_str(c, t, max, ferry__char_plain);
}

static int get_str(struct ferry__rcur *c, char *t, size_t max)
{
	return ferry__get_str(c, t, max, ferry__char_plain);
}

static int put_path(struct ferry__wcur *c, const char *t, size_t max)
{
	return ferry__put_str(c, t, max, ferry__char_any);
}

static int get_path(struct ferry__rcur *c, char *t, size_t max)
{
	return ferry__get_str(c, t, max, ferry__char_any);
}

/* Read a path of fewer than max bytes into a new allocation. */
static int get_path_alloc(struct ferry__rcur *c, char **t, size_t max)
{
	size_t n;
	const char *q = ferry__get_str_view(c, max, ferry__char_any, &n);

	*t = NULL;
	if (!q)
		return -FERRY_EPROTO;
	*t = malloc(n + 1);
	if (!*t)
		return -ENOMEM;
	memcpy(*t, q, n);
	(*t)[n] = '\0';
	return 0;
}

/* A finished encoding: its length, or -FERRY_ETOOBIG. */
static int enc_done(const struct ferry__wcur *c, size_t *len)
{
	if (c->overrun)
		return -FERRY_ETOOBIG;
	*len = c->off;
	return 0;
}

/* A finished decoding: all of the buffer read, nothing past it. */
static bool dec_done(const struct ferry__rcur *c)
{
	return !c->overrun && c->off == c->len;
}

/* ---- STAT --------------------------------------------------------------- */

static bool rstat_valid(const struct ferry_rstat *st)
{
	return (st->type == FERRY_ENTRY_FILE || st->type == FERRY_ENTRY_DIR ||
		st->type == FERRY_RSTAT_OTHER) &&
	       st->mode <= 07777;
}

int ferry__rstat_encode(const struct ferry_rstat *st, uint8_t *buf,
			size_t cap, size_t *len)
{
	struct ferry__wcur c = { .p = buf, .cap = cap };

	if (!rstat_valid(st))
		return -EINVAL;
	ferry__put_u8(&c, st->type);
	ferry__put_u32(&c, st->mode);
	ferry__put_u64(&c, st->size);
	ferry__put_u64(&c, (uint64_t)st->mtime_ns);
	return enc_done(&c, len);
}

int ferry__rstat_decode(const uint8_t *buf, size_t len,
			struct ferry_rstat *st)
{
	struct ferry__rcur c = { .p = buf, .len = len };
	struct ferry_rstat r;

	memset(st, 0, sizeof(*st));
	r.type = ferry__get_u8(&c);
	r.mode = ferry__get_u32(&c);
	r.size = ferry__get_u64(&c);
	r.mtime_ns = ferry__get_i64(&c);
	if (!dec_done(&c) || !rstat_valid(&r))
		return -FERRY_EPROTO;
	*st = r;
	return 0;
}

/* ---- TOKEN -------------------------------------------------------------- */

int ferry__token_encode(const struct ferry_token_reply *t, uint8_t *buf,
			size_t cap, size_t *len)
{
	struct ferry__wcur c = { .p = buf, .cap = cap };
	int ret;

	if (!ferry__ctrl_keyname_valid(t->name))
		return -EINVAL;
	ret = put_str(&c, t->name, sizeof(t->name));
	if (ret)
		return ret;
	ferry__put_bytes(&c, t->secret, FERRY_KEY_LEN);
	return enc_done(&c, len);
}

int ferry__token_decode(const uint8_t *buf, size_t len,
			struct ferry_token_reply *t)
{
	struct ferry__rcur c = { .p = buf, .len = len };

	memset(t, 0, sizeof(*t));
	if (get_str(&c, t->name, sizeof(t->name)) ||
	    !ferry__ctrl_keyname_valid(t->name))
		goto bad;
	ferry__get_bytes(&c, t->secret, FERRY_KEY_LEN);
	if (!dec_done(&c))
		goto bad;
	return 0;

bad:
	memset(t, 0, sizeof(*t));
	return -FERRY_EPROTO;
}

/* ---- PUSH spec ---------------------------------------------------------- */

/* A push item's src: a manifest path, or one with a single leading '/'
 * (the export root, spelled out). */
static bool push_src_valid(const char *src)
{
	return ferry__path_valid(src[0] == '/' ? src + 1 : src);
}

/* The longest src on the wire: '/' and a path. */
#define SRC_MAX (FERRY_PATH_MAX + 1)

int ferry__push_encode(const struct ferry_push_spec *p, uint8_t *buf,
		       size_t cap, size_t *len)
{
	struct ferry__wcur c = { .p = buf, .cap = cap };
	int ret;

	if (p->n > FERRY_PUSH_MAX_ITEMS || (p->n && !p->items) ||
	    !ferry__ctrl_keyname_valid(p->token))
		return -EINVAL;
	if ((ret = put_str(&c, p->host, sizeof(p->host))) ||
	    (ret = put_str(&c, p->port, sizeof(p->port))) ||
	    (ret = put_str(&c, p->transport, sizeof(p->transport))) ||
	    (ret = put_str(&c, p->token, sizeof(p->token))))
		return ret;
	ferry__put_bytes(&c, p->secret, FERRY_KEY_LEN);
	ret = put_path(&c, p->dest, sizeof(p->dest));
	if (ret)
		return ret;
	ferry__put_u32(&c, p->cksum);
	ferry__put_u32(&c, p->streams);
	ferry__put_u32(&c, p->flags);
	ferry__put_u32(&c, p->marker_ms);
	ferry__put_u32(&c, p->n);
	for (uint32_t i = 0; i < p->n; i++) {
		const struct ferry_push_item *it = &p->items[i];

		if (!it->src || !it->name || !push_src_valid(it->src) ||
		    !ferry__path_valid(it->name))
			return -EINVAL;
		if ((ret = put_path(&c, it->src, SRC_MAX)) ||
		    (ret = put_path(&c, it->name, FERRY_PATH_MAX)))
			return ret;
	}
	return enc_done(&c, len);
}

/* The fixed part, before the items. */
static int push_head_dec(struct ferry__rcur *c, struct ferry_push_spec *p)
{
	if (get_str(c, p->host, sizeof(p->host)) ||
	    get_str(c, p->port, sizeof(p->port)) ||
	    get_str(c, p->transport, sizeof(p->transport)) ||
	    get_str(c, p->token, sizeof(p->token)) ||
	    !ferry__ctrl_keyname_valid(p->token))
		return -FERRY_EPROTO;
	ferry__get_bytes(c, p->secret, FERRY_KEY_LEN);
	if (get_path(c, p->dest, sizeof(p->dest)))
		return -FERRY_EPROTO;
	p->cksum = ferry__get_u32(c);
	p->streams = ferry__get_u32(c);
	p->flags = ferry__get_u32(c);
	p->marker_ms = ferry__get_u32(c);
	p->n = ferry__get_u32(c);
	/* each item takes at least two length fields */
	if (c->overrun || p->n > FERRY_PUSH_MAX_ITEMS ||
	    p->n > ferry__get_left(c) / 4)
		return -FERRY_EPROTO;
	return 0;
}

int ferry__push_decode(const uint8_t *buf, size_t len,
		       struct ferry_push_spec *p)
{
	struct ferry__rcur c = { .p = buf, .len = len };
	uint32_t n;
	int ret;

	memset(p, 0, sizeof(*p));
	ret = push_head_dec(&c, p);
	if (ret)
		goto fail;
	n = p->n;
	p->n = 0; /* counts the items filled, for ferry__push_free */
	if (n) {
		p->items = calloc(n, sizeof(*p->items));
		if (!p->items) {
			ret = -ENOMEM;
			goto fail;
		}
	}
	for (uint32_t i = 0; i < n; i++) {
		struct ferry_push_item *it = &p->items[i];

		p->n = i + 1;
		if ((ret = get_path_alloc(&c, &it->src, SRC_MAX)) ||
		    (ret = get_path_alloc(&c, &it->name, FERRY_PATH_MAX)))
			goto fail;
		if (!push_src_valid(it->src) || !ferry__path_valid(it->name)) {
			ret = -FERRY_EPROTO;
			goto fail;
		}
	}
	if (!dec_done(&c)) {
		ret = -FERRY_EPROTO;
		goto fail;
	}
	return 0;

fail:
	ferry__push_free(p);
	return ret;
}

void ferry__push_free(struct ferry_push_spec *p)
{
	for (uint32_t i = 0; p->items && i < p->n; i++) {
		free(p->items[i].src);
		free(p->items[i].name);
	}
	free(p->items);
	memset(p, 0, sizeof(*p));
}

/* ---- PUSH results ------------------------------------------------------- */

static_assert(FERRY_PUSH_RESULT_MAX ==
		      2 + sizeof(((struct ferry_push_result *)0)->name) - 1 +
			      4 + 4 + 4 + 8 + 8 + 1 + 2 +
			      sizeof(((struct ferry_push_result *)0)->why) - 1,
	      "FERRY_PUSH_RESULT_MAX is the longest result");

/* The encoder cannot fail (req.h), so it writes what the decoder accepts:
 * a name cut to fit its field (only an unterminated one is cut: a name
 * of a manifest is shorter). */
static void put_name(struct ferry__wcur *c, const char *t, size_t max)
{
	size_t n = strnlen(t, max - 1);

	ferry__put_u16(c, (uint16_t)n);
	ferry__put_bytes(c, t, n);
}

/* A result's why is text to print: written escaped (ferry_escape), cut
 * to its field; the decoder takes only text that escaping leaves as it
 * is, so what it accepts encodes back to the same bytes. */
static void put_text(struct ferry__wcur *c, const char *t)
{
	char e[FERRY_ERRTEXT_MAX];
	size_t n = strlen(ferry_escape(t, e, sizeof(e)));

	ferry__put_u16(c, (uint16_t)n);
	ferry__put_bytes(c, e, n);
}

static bool text_escaped(const char *t)
{
	char e[FERRY_ERRTEXT_MAX];

	return !strcmp(ferry_escape(t, e, sizeof(e)), t);
}

static size_t result_size(const struct ferry_push_result *r)
{
	char e[FERRY_ERRTEXT_MAX];

	return 2 + strnlen(r->name, sizeof(r->name) - 1) + 4 + 4 + 4 + 8 +
	       8 + 1 + 2 + strlen(ferry_escape(r->why, e, sizeof(e)));
}

size_t ferry__results_encode(const struct ferry_push_result *r, size_t n,
			     size_t *next, uint8_t *buf, size_t cap)
{
	struct ferry__wcur c = { .p = buf, .cap = cap };

	for (; *next < n; ++*next) {
		const struct ferry_push_result *x = &r[*next];

		if (result_size(x) > cap - c.off)
			break;
		put_name(&c, x->name, sizeof(x->name));
		ferry__put_i32(&c, x->status);
		ferry__put_u32(&c, x->adler32);
		ferry__put_u32(&c, x->crc32c);
		ferry__put_u64(&c, x->size);
		ferry__put_u64(&c, x->bytes_sent);
		ferry__put_u8(&c, x->skipped ? 1 : 0);
		put_text(&c, x->why);
	}
	return c.off;
}

static int result_dec(struct ferry__rcur *c, struct ferry_push_result *r)
{
	if (get_path(c, r->name, sizeof(r->name)))
		return -FERRY_EPROTO;
	r->status = ferry__get_i32(c);
	r->adler32 = ferry__get_u32(c);
	r->crc32c = ferry__get_u32(c);
	r->size = ferry__get_u64(c);
	r->bytes_sent = ferry__get_u64(c);
	r->skipped = ferry__get_u8(c);
	if (c->overrun || r->skipped > 1 ||
	    get_str(c, r->why, sizeof(r->why)) || !text_escaped(r->why))
		return -FERRY_EPROTO;
	return 0;
}

int ferry__results_decode(const uint8_t *buf, size_t len,
			  int (*fn)(void *arg,
				    const struct ferry_push_result *r),
			  void *arg)
{
	struct ferry_push_result r;
	struct ferry__rcur c;
	int ret;

	/* The whole batch is checked before fn sees any of it. */
	c = (struct ferry__rcur){ .p = buf, .len = len };
	while (ferry__get_left(&c))
		if (result_dec(&c, &r))
			return -FERRY_EPROTO;
	if (c.overrun)
		return -FERRY_EPROTO;

	c = (struct ferry__rcur){ .p = buf, .len = len };
	while (ferry__get_left(&c)) {
		memset(&r, 0, sizeof(r));
		(void)result_dec(&c, &r);
		ret = fn(arg, &r);
		if (ret)
			return ret;
	}
	return 0;
}
