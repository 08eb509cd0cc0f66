/* Control-channel codec: struct ferry_msg <-> frames (see msg.h).
 *
 * Each message's body layout is written once, as a table of fields
 * (LAYOUT below); one encoder and one decoder walk the tables with the
 * bounds-checked cursors of util/cursor.h. To add a type, add its enum
 * value, its union member, its LAYOUT and a row in codecs[]; framing,
 * length limits, value checks and the trailing-bytes check are shared.
 * tests/unit/test_codec_vectors.c holds every type's bytes as the first
 * release wrote them.
 */
#include <assert.h>
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "ctrl/msg.h"
#include "ferry/error.h"
#include "util/cursor.h"

/* The largest bodies fit a frame. */
static_assert(4 + 4 + 8 + 2 + (FERRY_DEST_MAX - 1) + 4 + FERRY_REQ_DATA_MAX <=
		      FERRY_CTRL_MAX_BODY,
	      "a REQ with the longest path and data fits a frame");
static_assert(4 + 4 + 8 + 4 + FERRY_REPLY_DATA_MAX <= FERRY_CTRL_MAX_BODY,
	      "a REPLY with the most data fits a frame");
static_assert(FERRY_DEST_MAX - 1 <= UINT16_MAX,
	      "a path's length fits its u16");
static_assert(FERRY_KEYNAME_MAX <= UINT8_MAX,
	      "a key name's length fits its u8");

static bool keyname_char_ok(unsigned char ch)
{
	return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
	       (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' ||
	       ch == ':' || ch == '-';
}

/* Here rather than in auth.c: the codec checks HELLO names, and the
 * fuzzer builds codec.c alone. */
bool ferry__ctrl_keyname_valid(const char *name)
{
	size_t n = strnlen(name, FERRY_KEYNAME_MAX + 1);

	if (n > FERRY_KEYNAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!keyname_char_ok((unsigned char)name[i]))
			return false;
	return true;
}

/* ---- the layouts ---------------------------------------------------------
 *
 * A body is a row of fields, written and read in table order. Each field
 * names a member of the type's union member; an integer travels
 * little-endian in as many bytes as the member has (an int32_t as its
 * two's complement bits), so the struct and the table cannot disagree on
 * a width.
 */
enum fkind {
	F_INT,   /* integer member; max: largest valid value (0: any) */
	F_BYTES, /* array member, all of it, as it is */
	F_STR,   /* char array: u16 length, bytes of ok; max: array size */
	F_NAME,  /* key name (HELLO): u8 length, bytes of keyname_char_ok */
	F_VAR,   /* integer length member then that many bytes of the array
		    member at off2; max: largest length */
	F_SUB,   /* a struct member laid out by another table */
};

struct field {
	enum fkind kind;
	unsigned size; /* the member's bytes (F_INT, F_BYTES; F_VAR: the
			  length member's) */
	size_t off, off2;
	uint64_t max;
	bool (*ok)(unsigned char); /* F_STR */
	const struct layout *sub;  /* F_SUB */
};

struct layout {
	const struct field *f;
	size_t n;
};

#define MEMBER_SIZE(T, m) sizeof(((T *)0)->m)
/* n, and a compile error where n exceeds array member m of T. */
#define FITS(T, m, n) ((n) + 0 * sizeof(char[(n) <= MEMBER_SIZE(T, m) ? 1 : -1]))

#define INT(T, m) { F_INT, MEMBER_SIZE(T, m), offsetof(T, m), 0, 0, NULL, NULL }
#define INT_MAX_(T, m, mx) \
	{ F_INT, MEMBER_SIZE(T, m), offsetof(T, m), 0, mx, NULL, NULL }
#define BYTES(T, m) { F_BYTES, MEMBER_SIZE(T, m), offsetof(T, m), 0, 0, NULL, NULL }
#define STR(T, m, ok) \
	{ F_STR, 0, offsetof(T, m), 0, MEMBER_SIZE(T, m), ok, NULL }
#define NAME(T, m) { F_NAME, 0, offsetof(T, m), 0, 0, NULL, NULL }
#define VAR(T, len, data, mx) \
	{ F_VAR, MEMBER_SIZE(T, len), offsetof(T, len), offsetof(T, data), \
	  FITS(T, data, mx), NULL, NULL }
#define SUB(T, m, lay) { F_SUB, 0, offsetof(T, m), 0, 0, NULL, &lay }
#define LAYOUT(name, ...)                                                  \
	static const struct field name##_f[] = { __VA_ARGS__ };            \
	static const struct layout name##_body = {                         \
		name##_f, FERRY__ARRAY_SIZE(name##_f)                      \
	}

/* ERROR and FILE_DONE text: printable, so a peer cannot drive our user's
 * terminal. */
static bool text_char_ok(unsigned char ch)
{
	return ch == '\t' || ch == '\n' || (ch >= 0x20 && ch != 0x7f);
}

LAYOUT(hello, BYTES(struct ferry_msg_hello, nonce),
       INT(struct ferry_msg_hello, flags),
       NAME(struct ferry_msg_hello, name));
LAYOUT(challenge, BYTES(struct ferry_msg_challenge, nonce),
       BYTES(struct ferry_msg_challenge, mac),
       INT(struct ferry_msg_challenge, flags));
LAYOUT(auth, BYTES(struct ferry_msg_auth, mac));
LAYOUT(params, INT(struct ferry_params, mode),
       INT(struct ferry_params, transports),
       INT(struct ferry_params, streams), INT(struct ferry_params, slots),
       INT(struct ferry_params, depth),
       INT(struct ferry_params, chunk_size),
       INT(struct ferry_params, cksum),
       INT(struct ferry_params, total_bytes),
       INT(struct ferry_params, xfer_id));
LAYOUT(path, INT_MAX_(struct ferry_msg_path, fixed, FERRY_PATH_FIXED_ALL),
       INT(struct ferry_msg_path, rtt_us),
       INT(struct ferry_msg_path, rate_bps),
       INT(struct ferry_msg_path, mem_max),
       INT(struct ferry_msg_path, buf_tcp_max),
       INT(struct ferry_msg_path, buf_core_max),
       INT_MAX_(struct ferry_msg_path, buf_flags, FERRY_PATH_FORCE),
       INT(struct ferry_msg_path, sockbuf));
LAYOUT(tclass, INT_MAX_(struct ferry_msg_tclass, dscp, FERRY_DSCP_MAX));
LAYOUT(ep, VAR(struct ferry_msg_ep, len, data, FERRY_EP_MAX));
LAYOUT(accept, SUB(struct ferry_msg_accept, params, params_body),
       SUB(struct ferry_msg_accept, ep, ep_body));
LAYOUT(error, INT(struct ferry_msg_error, code),
       STR(struct ferry_msg_error, text, text_char_ok));
LAYOUT(fin, INT(struct ferry_msg_fin, bytes),
       INT(struct ferry_msg_fin, chunks));
LAYOUT(result, INT(struct ferry_msg_result, bytes),
       INT(struct ferry_msg_result, chunks),
       INT(struct ferry_msg_result, crc_errors),
       INT(struct ferry_msg_result, cpu_user_us),
       INT(struct ferry_msg_result, cpu_sys_us),
       INT(struct ferry_msg_result, status));
LAYOUT(files, INT(struct ferry_msg_files, flags),
       INT(struct ferry_msg_files, cksum),
       INT(struct ferry_msg_files, n_entries),
       STR(struct ferry_msg_files, dest, ferry__char_any));
LAYOUT(blob, INT_MAX_(struct ferry_msg_blob, last, 1),
       VAR(struct ferry_msg_blob, len, data, FERRY_BLOB_MAX));
LAYOUT(file_sum, INT(struct ferry_msg_file_sum, idx),
       INT(struct ferry_msg_file_sum, flags),
       INT(struct ferry_msg_file_sum, crc32c),
       INT(struct ferry_msg_file_sum, adler32));
LAYOUT(file_done, INT(struct ferry_msg_file_done, idx),
       INT(struct ferry_msg_file_done, status),
       INT(struct ferry_msg_file_done, crc32c),
       INT(struct ferry_msg_file_done, adler32),
       STR(struct ferry_msg_file_done, text, text_char_ok));
LAYOUT(published, INT(struct ferry_msg_published, idx),
       INT(struct ferry_msg_published, crc32c),
       INT(struct ferry_msg_published, adler32));
LAYOUT(req, INT(struct ferry_msg_req, op), INT(struct ferry_msg_req, flags),
       INT(struct ferry_msg_req, arg),
       STR(struct ferry_msg_req, path, ferry__char_any),
       VAR(struct ferry_msg_req, len, data, FERRY_REQ_DATA_MAX));
LAYOUT(reply, INT(struct ferry_msg_reply, op),
       INT(struct ferry_msg_reply, flags), INT(struct ferry_msg_reply, arg),
       VAR(struct ferry_msg_reply, len, data, FERRY_REPLY_DATA_MAX));
LAYOUT(marker, INT(struct ferry_msg_marker, bytes),
       INT(struct ferry_msg_marker, total),
       INT(struct ferry_msg_marker, rate),
       INT(struct ferry_msg_marker, elapsed_ms),
       INT(struct ferry_msg_marker, files_done),
       INT(struct ferry_msg_marker, files_total));

struct msg_codec {
	const char *name;
	const struct layout *body;
};

static const struct msg_codec codecs[] = {
	[FERRY_MSG_HELLO] = { "HELLO", &hello_body },
	[FERRY_MSG_CHALLENGE] = { "CHALLENGE", &challenge_body },
	[FERRY_MSG_AUTH] = { "AUTH", &auth_body },
	[FERRY_MSG_PROPOSE] = { "PROPOSE", &params_body },
	[FERRY_MSG_ACCEPT] = { "ACCEPT", &accept_body },
	[FERRY_MSG_ERROR] = { "ERROR", &error_body },
	[FERRY_MSG_READY] = { "READY", &ep_body },
	[FERRY_MSG_FIN] = { "FIN", &fin_body },
	[FERRY_MSG_RESULT] = { "RESULT", &result_body },
	[FERRY_MSG_FILES] = { "FILES", &files_body },
	[FERRY_MSG_MANIFEST] = { "MANIFEST", &blob_body },
	[FERRY_MSG_PLAN] = { "PLAN", &blob_body },
	[FERRY_MSG_FILE_SUM] = { "FILE_SUM", &file_sum_body },
	[FERRY_MSG_FILE_DONE] = { "FILE_DONE", &file_done_body },
	[FERRY_MSG_REQ] = { "REQ", &req_body },
	[FERRY_MSG_REPLY] = { "REPLY", &reply_body },
	[FERRY_MSG_MARKER] = { "MARKER", &marker_body },
	[FERRY_MSG_FILE_SUMS] = { "FILE_SUMS", &blob_body },
	[FERRY_MSG_FILE_DONES] = { "FILE_DONES", &blob_body },
	[FERRY_MSG_PATH] = { "PATH", &path_body },
	[FERRY_MSG_TCLASS] = { "TCLASS", &tclass_body },
	[FERRY_MSG_RANGES] = { "RANGES", &blob_body },
	[FERRY_MSG_PUBLISHED] = { "PUBLISHED", &published_body },
};

/* ---- one encoder and one decoder, driven by a layout -------------------- */

/* An unsigned integer member of n bytes, and back. */
static uint64_t load_uint(const uint8_t *p, unsigned n)
{
	uint8_t u8;
	uint16_t u16;
	uint32_t u32;
	uint64_t u64;

	switch (n) {
	case 1: memcpy(&u8, p, 1); return u8;
	case 2: memcpy(&u16, p, 2); return u16;
	case 4: memcpy(&u32, p, 4); return u32;
	default: memcpy(&u64, p, 8); return u64;
	}
}

static void store_uint(uint8_t *p, unsigned n, uint64_t v)
{
	uint8_t u8 = (uint8_t)v;
	uint16_t u16 = (uint16_t)v;
	uint32_t u32 = (uint32_t)v;

	switch (n) {
	case 1: memcpy(p, &u8, 1); break;
	case 2: memcpy(p, &u16, 2); break;
	case 4: memcpy(p, &u32, 4); break;
	default: memcpy(p, &v, 8); break;
	}
}

/* Write the fields of lay from base; returns 0 or -EINVAL (a value its
 * field does not allow). Overruns show in c: every field is still
 * checked, so an invalid message is -EINVAL whatever the room. */
static int enc_layout(struct ferry__wcur *c, const struct layout *lay,
		      const uint8_t *base)
{
	for (size_t i = 0; i < lay->n; i++) {
		const struct field *f = &lay->f[i];
		const uint8_t *p = base + f->off;
		uint64_t v;
		int ret = 0;

		switch (f->kind) {
		case F_INT:
			v = load_uint(p, f->size);
			if (f->max && v > f->max)
				return -EINVAL;
			ferry__put_le(c, v, f->size);
			break;
		case F_BYTES:
			ferry__put_bytes(c, p, f->size);
			break;
		case F_STR:
			ret = ferry__put_str(c, (const char *)p, f->max, f->ok);
			break;
		case F_NAME:
			if (!ferry__ctrl_keyname_valid((const char *)p))
				return -EINVAL;
			v = strlen((const char *)p);
			ferry__put_u8(c, (uint8_t)v);
			ferry__put_bytes(c, p, v);
			break;
		case F_VAR:
			v = load_uint(p, f->size);
			if (v > f->max)
				return -EINVAL;
			ferry__put_le(c, v, f->size);
			ferry__put_bytes(c, base + f->off2, v);
			break;
		case F_SUB:
			ret = enc_layout(c, f->sub, p);
			break;
		}
		if (ret)
			return ret;
	}
	return 0;
}

/* Read the fields of lay into base; returns 0 or -FERRY_EPROTO (a value
 * its field does not allow). Overruns and trailing bytes are the
 * caller's to check. */
static int dec_layout(struct ferry__rcur *c, const struct layout *lay,
		      uint8_t *base)
{
	for (size_t i = 0; i < lay->n; i++) {
		const struct field *f = &lay->f[i];
		uint8_t *p = base + f->off;
		uint64_t v;
		int ret = 0;

		switch (f->kind) {
		case F_INT:
			v = ferry__get_le(c, f->size);
			if (f->max && v > f->max)
				return -FERRY_EPROTO;
			store_uint(p, f->size, v);
			break;
		case F_BYTES:
			ferry__get_bytes(c, p, f->size);
			break;
		case F_STR:
			ret = ferry__get_str(c, (char *)p, f->max, f->ok);
			break;
		case F_NAME:
			v = ferry__get_u8(c);
			if (v > FERRY_KEYNAME_MAX)
				return -FERRY_EPROTO;
			ferry__get_bytes(c, p, v);
			p[v] = '\0';
			/* byte by byte: a NUL inside would hide what follows */
			for (size_t k = 0; k < v; k++)
				if (!keyname_char_ok(p[k]))
					return -FERRY_EPROTO;
			break;
		case F_VAR:
			v = ferry__get_le(c, f->size);
			if (v > f->max)
				return -FERRY_EPROTO;
			store_uint(p, f->size, v);
			ferry__get_bytes(c, base + f->off2, v);
			break;
		case F_SUB:
			ret = dec_layout(c, f->sub, p);
			break;
		}
		if (ret)
			return ret;
	}
	return 0;
}

static const struct msg_codec *codec_of(uint16_t type)
{
	if (type >= FERRY__ARRAY_SIZE(codecs) || !codecs[type].name)
		return NULL;
	return &codecs[type];
}

const char *ferry__ctrl_type_name(uint16_t type)
{
	const struct msg_codec *k = codec_of(type);

	return k ? k->name : "unknown";
}

static void put_header(uint8_t *buf, uint32_t body_len, uint16_t type)
{
	struct ferry__wcur c = { .p = buf, .cap = FERRY_CTRL_HDR_LEN };

	ferry__put_u32(&c, FERRY_CTRL_MAGIC);
	ferry__put_u32(&c, body_len);
	ferry__put_u16(&c, FERRY_PROTO_VERSION);
	ferry__put_u16(&c, type);
}

int ferry__ctrl_encode(const struct ferry_msg *m, uint8_t *buf, size_t cap,
		       size_t *len)
{
	const struct msg_codec *k = codec_of(m->type);
	struct ferry__wcur c;
	int ret;

	if (!k)
		return -EINVAL;
	if (cap < FERRY_CTRL_HDR_LEN)
		return -FERRY_ETOOBIG;
	c = (struct ferry__wcur){ .p = buf + FERRY_CTRL_HDR_LEN,
				  .cap = cap - FERRY_CTRL_HDR_LEN };
	if (c.cap > FERRY_CTRL_MAX_BODY)
		c.cap = FERRY_CTRL_MAX_BODY;
	ret = enc_layout(&c, k->body, (const uint8_t *)&m->u);
	if (ret)
		return ret;
	if (c.overrun)
		return -FERRY_ETOOBIG;
	put_header(buf, (uint32_t)c.off, m->type);
	*len = FERRY_CTRL_HDR_LEN + c.off;
	return 0;
}

/* Does buf[0..len) start like the magic? Lets garbage (an HTTP request, a
 * port scanner) be refused on its first byte. */
static bool magic_prefix_ok(const uint8_t *buf, size_t len)
{
	for (size_t i = 0; i < len && i < 4; i++)
		if (buf[i] != (uint8_t)(FERRY_CTRL_MAGIC >> (8 * i)))
			return false;
	return true;
}

int ferry__ctrl_decode(const uint8_t *buf, size_t len, struct ferry_msg *out,
		       size_t *consumed)
{
	struct ferry__rcur c = { .p = buf, .len = len };
	const struct msg_codec *k;
	uint32_t body_len;
	int ret;

	*consumed = 0;
	memset(out, 0, sizeof(*out));
	if (!magic_prefix_ok(buf, len))
		return -FERRY_EPROTO;
	if (len < FERRY_CTRL_HDR_LEN)
		return -EAGAIN;
	(void)ferry__get_u32(&c); /* magic, checked above */
	body_len = ferry__get_u32(&c);
	if (body_len > FERRY_CTRL_MAX_BODY)
		return -FERRY_ETOOBIG;
	if (len - FERRY_CTRL_HDR_LEN < body_len)
		return -EAGAIN;
	out->version = ferry__get_u16(&c);
	out->type = ferry__get_u16(&c);
	if (out->version != FERRY_PROTO_VERSION) {
		*consumed = FERRY_CTRL_HDR_LEN + body_len;
		return -FERRY_EVERSION;
	}
	k = codec_of(out->type);
	if (!k)
		return -FERRY_EPROTO;

	c = (struct ferry__rcur){ .p = buf + FERRY_CTRL_HDR_LEN,
				  .len = body_len };
	ret = dec_layout(&c, k->body, (uint8_t *)&out->u);
	if (ret)
		return ret;
	if (c.overrun || ferry__get_left(&c))
		return -FERRY_EPROTO;
	*consumed = FERRY_CTRL_HDR_LEN + body_len;
	return 0;
}
