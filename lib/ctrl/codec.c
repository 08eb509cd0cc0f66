/* Control-channel codec: struct ferry_msg <-> frames (see msg.h).
 *
 * One table row per message type: a name, an encoder and a decoder working
 * on bounds-checked cursors (wire.h). To add a type, add its enum value,
 * its union member and a row here; framing, length limits and the
 * trailing-bytes check are shared.
 */
#include <assert.h>
#include <errno.h>
#include <string.h>

#include "ctrl/msg.h"
#include "ferry/error.h"
#include "util/cursor.h"

/* enc: write m's body; returns 0 or -EINVAL (overruns show in c).
 * dec: read a body into m; returns 0 or -FERRY_EPROTO (overruns and
 * trailing bytes are checked by the caller). NULL: empty body. */
struct msg_codec {
	const char *name;
	int (*enc)(struct ferry__wcur *c, const struct ferry_msg *m);
	int (*dec)(struct ferry__rcur *c, struct ferry_msg *m);
};

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

static int hello_enc(struct ferry__wcur *c, const struct ferry_msg *m)
{
	const char *name = m->u.hello.name;
	size_t n = strnlen(name, sizeof(m->u.hello.name));

	if (!ferry__ctrl_keyname_valid(name))
		return -EINVAL;
	ferry__put_bytes(c, m->u.hello.nonce, FERRY_NONCE_LEN);
	ferry__put_u32(c, m->u.hello.flags);
	ferry__put_u8(c, (uint8_t)n);
	ferry__put_bytes(c, name, n);
	return 0;
}

static int hello_dec(struct ferry__rcur *c, struct ferry_msg *m)
{
	char *name = m->u.hello.name;
	uint8_t n;

	ferry__get_bytes(c, m->u.hello.nonce, FERRY_NONCE_LEN);
	m->u.hello.flags = ferry__get_u32(c);
	n = ferry__get_u8(c);
	if (n > FERRY_KEYNAME_MAX)
		return -FERRY_EPROTO;
	ferry__get_bytes(c, name, n);
	name[n] = '\0';
	/* byte by byte: a NUL inside would hide what follows it */
	for (size_t i = 0; i < n; i++)
		if (!keyname_char_ok((unsigned char)name[i]))
			return -FERRY_EPROTO;
	return 0;
}

static int challenge_enc(struct ferry__wcur *c, const struct ferry_msg *m)
{
	ferry__put_bytes(c, m->u.challenge.nonce, FERRY_NONCE_LEN);
	ferry__put_bytes(c, m->u.challenge.mac, FERRY_MAC_LEN);
	ferry__put_u32(c, m->u.challenge.flags);
	return 0;
}

static int challenge_dec(struct ferry__rcur *c, struct ferry_msg *m)
{
	ferry__get_bytes(c, m->u.challenge.nonce, FERRY_NONCE_LEN);
	ferry__get_bytes(c, m->u.challenge.mac, FERRY_MAC_LEN);
	m->u.challenge.flags = ferry__get_u32(c);
	return 0;
}

static int auth_enc(struct ferry__wcur *c, const struct ferry_msg *m)
{
	ferry__put_bytes(c, m->u.auth.mac, FERRY_MAC_LEN);
	return 0;
}

static int auth_dec(struct ferry__rcur *c, struct ferry_msg *m)
{
	ferry__get_bytes(c, m->u.auth.mac, FERRY_MAC_LEN);
	return 0;
}

static void params_put(struct ferry__wcur *c, const struct ferry_params *p)
{
	ferry__put_u32(c, p->mode);
	ferry__put_u32(c, p->transports);
	ferry__put_u32(c, p->streams);
	ferry__put_u32(c, p->slots);
	ferry__put_u32(c, p->depth);
	ferry__put_u64(c, p->chunk_size);
	ferry__put_u32(c, p->cksum);
	ferry__put_u64(c, p->total_bytes);
	ferry__put_u64(c, p->xfer_id);
}

static void params_get(struct ferry__rcur *c, struct ferry_params *p)
{
	p->mode = ferry__get_u32(c);
	p->transports = ferry__get_u32(c);
	p->streams = ferry__get_u32(c);
	p->slots = ferry__get_u32(c);
	p->depth = ferry__get_u32(c);
	p->chunk_size = ferry__get_u64(c);
	p->cksum = ferry__get_u32(c);
	p->total_bytes = ferry__get_u64(c);
	p->xfer_id = ferry__get_u64(c);
}

static int propose_enc(struct ferry__wcur *c, const struct ferry_msg *m)
{
	params_put(c, &m->u.propose);
	return 0;
}

static int propose_dec(struct ferry__rcur *c, struct ferry_msg *m)
{
	params_get(c, &m->u.propose);
	return 0;
}

static int ready_enc(struct ferry__wcur *c, const struct ferry_msg *m)
{
	if (m->u.ready.len > FERRY_EP_MAX)
		return -EINVAL;
	ferry__put_u16(c, m->u.ready.len);
	ferry__put_bytes(c, m->u.ready.data, m->u.ready.len);
	return 0;
}

static int ready_dec(struct ferry__rcur *c, struct ferry_msg *m)
{
	m->u.ready.len = ferry__get_u16(c);
	if (m->u.ready.len > FERRY_EP_MAX)
		return -FERRY_EPROTO;
	ferry__get_bytes(c, m->u.ready.data, m->u.ready.len);
	return 0;
}

static int accept_enc(struct ferry__wcur *c, const struct ferry_msg *m)
{
	const struct ferry_msg_ep *ep = &m->u.accept.ep;

	if (ep->len > FERRY_EP_MAX)
		return -EINVAL;
	params_put(c, &m->u.accept.params);
	ferry__put_u16(c, ep->len);
	ferry__put_bytes(c, ep->data, ep->len);
	return 0;
}

static int accept_dec(struct ferry__rcur *c, struct ferry_msg *m)
{
	struct ferry_msg_ep *ep = &m->u.accept.ep;

	params_get(c, &m->u.accept.params);
	ep->len = ferry__get_u16(c);
	if (ep->len > FERRY_EP_MAX)
		return -FERRY_EPROTO;
	ferry__get_bytes(c, ep->data, ep->len);
	return 0;
}

/* ERROR text: printable, so a peer cannot drive our user's terminal. */
static bool text_char_ok(unsigned char ch)
{
	return ch == '\t' || ch == '\n' || (ch >= 0x20 && ch != 0x7f);
}

static int error_enc(struct ferry__wcur *c, const struct ferry_msg *m)
{
	ferry__put_i32(c, m->u.error.code);
	return ferry__put_str(c, m->u.error.text, FERRY_ERRTEXT_MAX,
			      text_char_ok);
}

static int error_dec(struct ferry__rcur *c, struct ferry_msg *m)
{
	m->u.error.code = ferry__get_i32(c);
	return ferry__get_str(c, m->u.error.text, FERRY_ERRTEXT_MAX,
			      text_char_ok);
}

static int fin_enc(struct ferry__wcur *c, const struct ferry_msg *m)
{
	ferry__put_u64(c, m->u.fin.bytes);
	ferry__put_u64(c, m->u.fin.chunks);
	return 0;
}

static int fin_dec(struct ferry__rcur *c, struct ferry_msg *m)
{
	m->u.fin.bytes = ferry__get_u64(c);
	m->u.fin.chunks = ferry__get_u64(c);
	return 0;
}

static int result_enc(struct ferry__wcur *c, const struct ferry_msg *m)
{
	const struct ferry_msg_result *r = &m->u.result;

	ferry__put_u64(c, r->bytes);
	ferry__put_u64(c, r->chunks);
	ferry__put_u64(c, r->crc_errors);
	ferry__put_u64(c, r->cpu_user_us);
	ferry__put_u64(c, r->cpu_sys_us);
	ferry__put_i32(c, r->status);
	return 0;
}

static int result_dec(struct ferry__rcur *c, struct ferry_msg *m)
{
	struct ferry_msg_result *r = &m->u.result;

	r->bytes = ferry__get_u64(c);
	r->chunks = ferry__get_u64(c);
	r->crc_errors = ferry__get_u64(c);
	r->cpu_user_us = ferry__get_u64(c);
	r->cpu_sys_us = ferry__get_u64(c);
	r->status = ferry__get_i32(c);
	return 0;
}

static int files_enc(struct ferry__wcur *c, const struct ferry_msg *m)
{
	ferry__put_u32(c, m->u.files.flags);
	ferry__put_u32(c, m->u.files.cksum);
	ferry__put_u64(c, m->u.files.n_entries);
	return ferry__put_str(c, m->u.files.dest, FERRY_DEST_MAX, ferry__char_any);
}

static int files_dec(struct ferry__rcur *c, struct ferry_msg *m)
{
	m->u.files.flags = ferry__get_u32(c);
	m->u.files.cksum = ferry__get_u32(c);
	m->u.files.n_entries = ferry__get_u64(c);
	return ferry__get_str(c, m->u.files.dest, FERRY_DEST_MAX, ferry__char_any);
}

static int blob_enc(struct ferry__wcur *c, const struct ferry_msg *m)
{
	if (m->u.blob.len > FERRY_BLOB_MAX || m->u.blob.last > 1)
		return -EINVAL;
	ferry__put_u8(c, m->u.blob.last);
	ferry__put_u32(c, m->u.blob.len);
	ferry__put_bytes(c, m->u.blob.data, m->u.blob.len);
	return 0;
}

static int blob_dec(struct ferry__rcur *c, struct ferry_msg *m)
{
	m->u.blob.last = ferry__get_u8(c);
	m->u.blob.len = ferry__get_u32(c);
	if (m->u.blob.last > 1 || m->u.blob.len > FERRY_BLOB_MAX)
		return -FERRY_EPROTO;
	ferry__get_bytes(c, m->u.blob.data, m->u.blob.len);
	return 0;
}

static int file_sum_enc(struct ferry__wcur *c, const struct ferry_msg *m)
{
	ferry__put_u32(c, m->u.file_sum.idx);
	ferry__put_u32(c, m->u.file_sum.flags);
	ferry__put_u32(c, m->u.file_sum.crc32c);
	ferry__put_u32(c, m->u.file_sum.adler32);
	return 0;
}

static int file_sum_dec(struct ferry__rcur *c, struct ferry_msg *m)
{
	m->u.file_sum.idx = ferry__get_u32(c);
	m->u.file_sum.flags = ferry__get_u32(c);
	m->u.file_sum.crc32c = ferry__get_u32(c);
	m->u.file_sum.adler32 = ferry__get_u32(c);
	return 0;
}

static int file_done_enc(struct ferry__wcur *c, const struct ferry_msg *m)
{
	ferry__put_u32(c, m->u.file_done.idx);
	ferry__put_i32(c, m->u.file_done.status);
	ferry__put_u32(c, m->u.file_done.crc32c);
	ferry__put_u32(c, m->u.file_done.adler32);
	return ferry__put_str(c, m->u.file_done.text, FERRY_ERRTEXT_MAX,
		       text_char_ok);
}

static int file_done_dec(struct ferry__rcur *c, struct ferry_msg *m)
{
	m->u.file_done.idx = ferry__get_u32(c);
	m->u.file_done.status = ferry__get_i32(c);
	m->u.file_done.crc32c = ferry__get_u32(c);
	m->u.file_done.adler32 = ferry__get_u32(c);
	return ferry__get_str(c, m->u.file_done.text, FERRY_ERRTEXT_MAX,
		       text_char_ok);
}

static int req_enc(struct ferry__wcur *c, const struct ferry_msg *m)
{
	const struct ferry_msg_req *r = &m->u.req;
	int ret;

	if (r->len > FERRY_REQ_DATA_MAX)
		return -EINVAL;
	ferry__put_u32(c, r->op);
	ferry__put_u32(c, r->flags);
	ferry__put_u64(c, r->arg);
	ret = ferry__put_str(c, r->path, FERRY_DEST_MAX, ferry__char_any);
	if (ret)
		return ret;
	ferry__put_u32(c, r->len);
	ferry__put_bytes(c, r->data, r->len);
	return 0;
}

static int req_dec(struct ferry__rcur *c, struct ferry_msg *m)
{
	struct ferry_msg_req *r = &m->u.req;
	int ret;

	r->op = ferry__get_u32(c);
	r->flags = ferry__get_u32(c);
	r->arg = ferry__get_u64(c);
	ret = ferry__get_str(c, r->path, FERRY_DEST_MAX, ferry__char_any);
	if (ret)
		return ret;
	r->len = ferry__get_u32(c);
	if (r->len > FERRY_REQ_DATA_MAX)
		return -FERRY_EPROTO;
	ferry__get_bytes(c, r->data, r->len);
	return 0;
}

static int reply_enc(struct ferry__wcur *c, const struct ferry_msg *m)
{
	const struct ferry_msg_reply *r = &m->u.reply;

	if (r->len > FERRY_REPLY_DATA_MAX)
		return -EINVAL;
	ferry__put_u32(c, r->op);
	ferry__put_u32(c, r->flags);
	ferry__put_u64(c, r->arg);
	ferry__put_u32(c, r->len);
	ferry__put_bytes(c, r->data, r->len);
	return 0;
}

static int reply_dec(struct ferry__rcur *c, struct ferry_msg *m)
{
	struct ferry_msg_reply *r = &m->u.reply;

	r->op = ferry__get_u32(c);
	r->flags = ferry__get_u32(c);
	r->arg = ferry__get_u64(c);
	r->len = ferry__get_u32(c);
	if (r->len > FERRY_REPLY_DATA_MAX)
		return -FERRY_EPROTO;
	ferry__get_bytes(c, r->data, r->len);
	return 0;
}

static int marker_enc(struct ferry__wcur *c, const struct ferry_msg *m)
{
	const struct ferry_msg_marker *k = &m->u.marker;

	ferry__put_u64(c, k->bytes);
	ferry__put_u64(c, k->total);
	ferry__put_u64(c, k->rate);
	ferry__put_u64(c, k->elapsed_ms);
	ferry__put_u32(c, k->files_done);
	ferry__put_u32(c, k->files_total);
	return 0;
}

static int marker_dec(struct ferry__rcur *c, struct ferry_msg *m)
{
	struct ferry_msg_marker *k = &m->u.marker;

	k->bytes = ferry__get_u64(c);
	k->total = ferry__get_u64(c);
	k->rate = ferry__get_u64(c);
	k->elapsed_ms = ferry__get_u64(c);
	k->files_done = ferry__get_u32(c);
	k->files_total = ferry__get_u32(c);
	return 0;
}

static const struct msg_codec codecs[] = {
	[FERRY_MSG_HELLO] = { "HELLO", hello_enc, hello_dec },
	[FERRY_MSG_CHALLENGE] = { "CHALLENGE", challenge_enc, challenge_dec },
	[FERRY_MSG_AUTH] = { "AUTH", auth_enc, auth_dec },
	[FERRY_MSG_PROPOSE] = { "PROPOSE", propose_enc, propose_dec },
	[FERRY_MSG_ACCEPT] = { "ACCEPT", accept_enc, accept_dec },
	[FERRY_MSG_ERROR] = { "ERROR", error_enc, error_dec },
	[FERRY_MSG_READY] = { "READY", ready_enc, ready_dec },
	[FERRY_MSG_FIN] = { "FIN", fin_enc, fin_dec },
	[FERRY_MSG_RESULT] = { "RESULT", result_enc, result_dec },
	[FERRY_MSG_FILES] = { "FILES", files_enc, files_dec },
	[FERRY_MSG_MANIFEST] = { "MANIFEST", blob_enc, blob_dec },
	[FERRY_MSG_PLAN] = { "PLAN", blob_enc, blob_dec },
	[FERRY_MSG_FILE_SUM] = { "FILE_SUM", file_sum_enc, file_sum_dec },
	[FERRY_MSG_FILE_DONE] = { "FILE_DONE", file_done_enc, file_done_dec },
	[FERRY_MSG_REQ] = { "REQ", req_enc, req_dec },
	[FERRY_MSG_REPLY] = { "REPLY", reply_enc, reply_dec },
	[FERRY_MSG_MARKER] = { "MARKER", marker_enc, marker_dec },
	[FERRY_MSG_FILE_SUMS] = { "FILE_SUMS", blob_enc, blob_dec },
	[FERRY_MSG_FILE_DONES] = { "FILE_DONES", blob_enc, blob_dec },
};

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
	if (k->enc) {
		ret = k->enc(&c, m);
		if (ret)
			return ret;
	}
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
	if (k->dec) {
		ret = k->dec(&c, out);
		if (ret)
			return ret;
	}
	if (c.overrun || ferry__get_left(&c))
		return -FERRY_EPROTO;
	*consumed = FERRY_CTRL_HDR_LEN + body_len;
	return 0;
}
