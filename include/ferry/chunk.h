/* The chunk: the unit the pipeline moves, one per ring slot.
 *
 * A slot holds a header block of FERRY_CHUNK_HDR_SPACE bytes, then the
 * payload, so payload always starts 4 KiB-aligned and both ends can do
 * O_DIRECT I/O straight from registered memory. The header is encoded
 * little-endian, field by field:
 *
 *   off size field
 *     0    4 magic     "FCHK"
 *     4    2 version   1
 *     6    2 flags     FERRY_CHUNK_*
 *     8    8 xfer_id   transfer (session) id
 *    16    4 file_idx  index in the manifest (0 in bench mode)
 *    20    4 len       payload bytes
 *    24    8 offset    payload offset in the file (or byte stream)
 *    32    4 crc       crc32c of the payload
 *    36    4 hdr_crc   crc32c of bytes 0..35
 */
#ifndef FERRY_CHUNK_H
#define FERRY_CHUNK_H

#include <stddef.h>
#include <stdint.h>

#define FERRY_CHUNK_HDR_SPACE 4096u
#define FERRY_CHUNK_HDR_LEN 40u
#define FERRY_CHUNK_MAGIC 0x4b484346u /* "FCHK" little-endian */
#define FERRY_CHUNK_VERSION 1u

#define FERRY_CHUNK_LAST 1u /* last chunk of its file */
/* A pack: the payload holds several whole small files, each a record
 *   u32 file_idx, u32 len, u32 crc32c (of the file), then len bytes
 * one after another, little-endian; in the header file_idx is the first
 * record's, offset the number of records, crc the crc32c of the record
 * headers in order (each file's bytes are covered by the crc32c in its
 * record, which both ends compute anyway: the payload is summed once). A
 * file session uses packs only when the sender said so in FILES. */
#define FERRY_CHUNK_PACK 2u
#define FERRY_PACK_REC_LEN 12u

struct ferry_chunk_hdr {
	uint16_t flags;
	uint64_t xfer_id;
	uint32_t file_idx;
	uint32_t len;
	uint64_t offset;
	uint32_t crc;
};

/* Encode h into buf (at least FERRY_CHUNK_HDR_LEN bytes). */
void ferry_chunk_encode(const struct ferry_chunk_hdr *h, void *buf);

/* Decode and check magic, version and hdr_crc. Returns 0 or -FERRY_EPROTO.
 * The payload crc is checked separately (ferry_chunk_verify). */
int ferry_chunk_decode(const void *buf, struct ferry_chunk_hdr *h);

/* crc32c the payload and store it in h->crc. */
void ferry_chunk_seal(struct ferry_chunk_hdr *h, const void *payload);

/* The bytes of data h's payload carries: its length, less a pack's
 * record headers. */
uint64_t ferry_chunk_data_bytes(const struct ferry_chunk_hdr *h);

/* 0 when the payload's crc32c matches h->crc, else -FERRY_ECRC. */
int ferry_chunk_verify(const struct ferry_chunk_hdr *h, const void *payload);

#endif
