#include <endian.h>
#include <string.h>

#include "ferry/chunk.h"
#include "ferry/error.h"
#include "ferry/sum.h"

static void put16(uint8_t *p, uint16_t v)
{
	v = htole16(v);
	memcpy(p, &v, 2);
}

static void put32(uint8_t *p, uint32_t v)
{
	v = htole32(v);
	memcpy(p, &v, 4);
}

static void put64(uint8_t *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, 8);
}

static uint16_t get16(const uint8_t *p)
{
	uint16_t v;
	memcpy(&v, p, 2);
	return le16toh(v);
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return le32toh(v);
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return le64toh(v);
}

void ferry_chunk_encode(const struct ferry_chunk_hdr *h, void *buf)
{
	uint8_t *b = buf;

	put32(b, FERRY_CHUNK_MAGIC);
	put16(b + 4, FERRY_CHUNK_VERSION);
	put16(b + 6, h->flags);
	put64(b + 8, h->xfer_id);
	put32(b + 16, h->file_idx);
	put32(b + 20, h->len);
	put64(b + 24, h->offset);
	put32(b + 32, h->crc);
	put32(b + 36, ferry_crc32c(0, b, 36));
}

int ferry_chunk_decode(const void *buf, struct ferry_chunk_hdr *h)
{
	const uint8_t *b = buf;

	if (get32(b) != FERRY_CHUNK_MAGIC ||
	    get16(b + 4) != FERRY_CHUNK_VERSION ||
	    get32(b + 36) != ferry_crc32c(0, b, 36))
		return -FERRY_EPROTO;
	h->flags = get16(b + 6);
	h->xfer_id = get64(b + 8);
	h->file_idx = get32(b + 16);
	h->len = get32(b + 20);
	h->offset = get64(b + 24);
	h->crc = get32(b + 32);
	return 0;
}

void ferry_chunk_seal(struct ferry_chunk_hdr *h, const void *payload)
{
	h->crc = ferry_crc32c(0, payload, h->len);
}

uint64_t ferry_chunk_data_bytes(const struct ferry_chunk_hdr *h)
{
	uint64_t recs = (h->flags & FERRY_CHUNK_PACK) ? h->offset : 0;

	return recs <= h->len / FERRY_PACK_REC_LEN ?
		       h->len - recs * FERRY_PACK_REC_LEN : 0;
}

int ferry_chunk_verify(const struct ferry_chunk_hdr *h, const void *payload)
{
	return ferry_crc32c(0, payload, h->len) == h->crc ? 0 : -FERRY_ECRC;
}
