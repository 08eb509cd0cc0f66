/* The records of a pack (FERRY_CHUNK_PACK, include/ferry/chunk.h). */
#include "ferry/sum.h"
#include "files/files.h"
#include "util/cursor.h"

void ferry__pack_put(uint8_t *p, uint32_t idx, uint32_t flen, uint32_t crc)
{
	struct ferry__wcur c = { .p = p, .cap = FERRY_PACK_REC_LEN };

	ferry__put_u32(&c, idx);
	ferry__put_u32(&c, flen);
	ferry__put_u32(&c, crc);
}

int ferry__pack_next(const uint8_t *payload, uint32_t len, uint32_t *at,
		     uint32_t *idx, uint32_t *flen, uint32_t *crc,
		     const uint8_t **data)
{
	struct ferry__rcur c = { .p = payload, .len = len, .off = *at };

	if (*at >= len)
		return 0;
	*idx = ferry__get_u32(&c);
	*flen = ferry__get_u32(&c);
	*crc = ferry__get_u32(&c);
	if (c.overrun || *flen > len - c.off)
		return -FERRY_EPROTO;
	*data = payload + c.off;
	*at = (uint32_t)c.off + *flen;
	return 1;
}

int ferry__pack_headers(const uint8_t *payload, uint32_t len, uint64_t *n,
			uint32_t *crc)
{
	const uint8_t *data;
	uint32_t at = 0, idx, flen, fcrc;
	int ret;

	*n = 0;
	*crc = 0;
	while ((ret = ferry__pack_next(payload, len, &at, &idx, &flen, &fcrc,
				       &data)) > 0) {
		*crc = ferry_crc32c(*crc, data - FERRY_PACK_REC_LEN,
				    FERRY_PACK_REC_LEN);
		(*n)++;
	}
	return ret;
}
