/* Per-file results in batches: FILE_SUMS and FILE_DONES (files/files.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ferry/error.h"
#include "files/files.h"
#include "util/cursor.h"

int ferry__batch_init(struct ferry__batch *b, uint16_t type)
{
	b->type = type;
	b->len = 0;
	b->buf = malloc(FERRY_BLOB_MAX);
	return b->buf ? 0 : -ENOMEM;
}

void ferry__batch_free(struct ferry__batch *b)
{
	free(b->buf);
	b->buf = NULL;
}

int ferry__batch_send(struct ferry__batch *b, int fd, int timeout_ms)
{
	struct ferry_msg *m;
	int err;

	if (!b->len)
		return 0;
	m = malloc(sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->type = b->type;
	m->u.blob.last = 1;
	m->u.blob.len = (uint32_t)b->len;
	memcpy(m->u.blob.data, b->buf, b->len);
	err = ferry__ctrl_send(fd, m, timeout_ms);
	free(m);
	b->len = 0;
	return err;
}

/* Room for need more bytes, sending what is there first if not. */
static int batch_room(struct ferry__batch *b, int fd, int timeout_ms,
		      size_t need)
{
	return b->len + need > FERRY_BLOB_MAX ?
		       ferry__batch_send(b, fd, timeout_ms) : 0;
}

int ferry__batch_sum(struct ferry__batch *b, int fd, int timeout_ms,
		     const struct ferry_msg_file_sum *s)
{
	int err = batch_room(b, fd, timeout_ms, 16);
	struct ferry__wcur c;

	if (err)
		return err;
	c = (struct ferry__wcur){ .p = b->buf + b->len, .cap = 16 };
	ferry__put_u32(&c, s->idx);
	ferry__put_u32(&c, s->flags);
	ferry__put_u32(&c, s->crc32c);
	ferry__put_u32(&c, s->adler32);
	b->len += c.off;
	return 0;
}

int ferry__batch_done(struct ferry__batch *b, int fd, int timeout_ms,
		      uint32_t idx, int status, uint32_t crc, uint32_t adler,
		      const char *text)
{
	size_t tl = text ? strnlen(text, FERRY_ERRTEXT_MAX - 1) : 0;
	struct ferry__wcur c;
	int err;

	if (tl > 255)
		tl = 255;
	err = batch_room(b, fd, timeout_ms, 17 + tl);
	if (err)
		return err;
	c = (struct ferry__wcur){ .p = b->buf + b->len, .cap = 17 + tl };
	ferry__put_u32(&c, idx);
	ferry__put_u32(&c, (uint32_t)(status < 0 ? -status : status));
	ferry__put_u32(&c, crc);
	ferry__put_u32(&c, adler);
	ferry__put_u8(&c, (uint8_t)tl);
	ferry__put_bytes(&c, text, tl);
	b->len += c.off;
	return 0;
}

int ferry__batch_decode(const struct ferry_msg *m,
			int (*fn)(void *arg, const struct ferry_msg *one),
			void *arg)
{
	struct ferry__rcur c = { .p = m->u.blob.data, .len = m->u.blob.len };
	struct ferry_msg *one = calloc(1, sizeof(*one));
	int err = 0;

	if (!one)
		return -ENOMEM;
	while (!err && ferry__get_left(&c)) {
		if (m->type == FERRY_MSG_FILE_SUMS) {
			one->type = FERRY_MSG_FILE_SUM;
			one->u.file_sum.idx = ferry__get_u32(&c);
			one->u.file_sum.flags = ferry__get_u32(&c);
			one->u.file_sum.crc32c = ferry__get_u32(&c);
			one->u.file_sum.adler32 = ferry__get_u32(&c);
		} else if (m->type == FERRY_MSG_FILE_DONES) {
			uint8_t tl;
			one->type = FERRY_MSG_FILE_DONE;
			one->u.file_done.idx = ferry__get_u32(&c);
			one->u.file_done.status =
				(int32_t)(ferry__get_u32(&c) & 0x7fffffff);
			one->u.file_done.crc32c = ferry__get_u32(&c);
			one->u.file_done.adler32 = ferry__get_u32(&c);
			tl = ferry__get_u8(&c);
			ferry__get_bytes(&c, one->u.file_done.text, tl);
			one->u.file_done.text[tl] = '\0';
		} else {
			err = -FERRY_EPROTO;
			break;
		}
		err = c.overrun ? -FERRY_EPROTO : fn(arg, one);
	}
	free(one);
	return err;
}
