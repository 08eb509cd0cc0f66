/* The op-specific data of daemon requests and replies (REQ.data and
 * REPLY.data, see msg.h): pure encoders and decoders, no I/O.
 *
 * All integers little-endian; a string is u16 length then its bytes (no
 * NUL on the wire). Paths and names may hold any other byte, as file
 * names do; host, port, transport and token names no control character.
 * Decoders check every length against the buffer, refuse trailing bytes,
 * bytes a string may not hold and strings that do not fit their field,
 * and return -FERRY_EPROTO for any of it.
 * Encoders return -FERRY_ETOOBIG when the result does not fit cap.
 * Manifest-encoded lists (LIST replies, TOKEN requests) use
 * ferry__manifest_encode/decode (io/manifest.h) as they are.
 *
 * Includes: lib/ctrl may include lib/io's manifest.h, never the other
 * way round; both take their byte cursor (util/cursor.h) and path rules
 * (util/path.h) from lib/util.
 */
#ifndef FERRY_CTRL_REQ_H
#define FERRY_CTRL_REQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctrl/msg.h"

/* STAT reply: u8 type (enum ferry_entry_type, or FERRY_RSTAT_OTHER),
 * u32 mode (07777 bits), u64 size, i64 mtime_ns. 21 bytes. */
#define FERRY_RSTAT_OTHER 3 /* neither a file nor a directory */
struct ferry_rstat {
	uint8_t type;
	uint32_t mode;
	uint64_t size;
	int64_t mtime_ns;
};
#define FERRY_RSTAT_LEN 21
/* -EINVAL for an unknown type or a mode above 07777. */
int ferry__rstat_encode(const struct ferry_rstat *st, uint8_t *buf,
			size_t cap, size_t *len);
int ferry__rstat_decode(const uint8_t *buf, size_t len,
			struct ferry_rstat *st);

/* TOKEN reply: string name, then FERRY_KEY_LEN bytes of wrapped secret. */
struct ferry_token_reply {
	char name[FERRY_KEYNAME_MAX + 1];
	uint8_t secret[FERRY_KEY_LEN]; /* wrapped, as it travels */
};
int ferry__token_encode(const struct ferry_token_reply *t, uint8_t *buf,
			size_t cap, size_t *len);
/* The name must be a valid key name (ferry__ctrl_keyname_valid). */
int ferry__token_decode(const uint8_t *buf, size_t len,
			struct ferry_token_reply *t);

/* PUSH request: "send these files of yours to that daemon, with this
 * token". On the wire: string host, string port, string transport,
 * string token, FERRY_KEY_LEN bytes secret (wrapped), string dest,
 * u32 cksum, u32 streams, u32 flags, u32 marker_ms, u32 n, then n times
 * (string src, string name). */
#define FERRY_PUSH_HOST_MAX 255
#define FERRY_PUSH_PORT_MAX 15
#define FERRY_PUSH_XPORT_MAX 15
#define FERRY_PUSH_MAX_ITEMS 1024
struct ferry_push_item {
	char *src;  /* on the source: export-relative path of a file */
	char *name; /* on the destination: its path below dest */
};
struct ferry_push_spec {
	char host[FERRY_PUSH_HOST_MAX + 1];  /* the destination daemon */
	char port[FERRY_PUSH_PORT_MAX + 1];
	char transport[FERRY_PUSH_XPORT_MAX + 1]; /* "" = auto */
	char token[FERRY_KEYNAME_MAX + 1];   /* key name to give in HELLO */
	uint8_t secret[FERRY_KEY_LEN];       /* its key, wrapped */
	char dest[FERRY_DEST_MAX];           /* directory on the destination */
	uint32_t cksum;     /* enum ferry_cksum */
	uint32_t streams;   /* 0: the source's default */
	uint32_t flags;     /* FERRY_FILES_* */
	uint32_t marker_ms; /* between MARKERs; 0: the default */
	uint32_t n;
	struct ferry_push_item *items;
};
int ferry__push_encode(const struct ferry_push_spec *p, uint8_t *buf,
		       size_t cap, size_t *len);
/* Fills p; p->items (and their strings) are allocated: free with
 * ferry__push_free. n is at most FERRY_PUSH_MAX_ITEMS; src and name must
 * be valid relative paths (util/path.h; src may start with '/').
 * Returns 0, -FERRY_EPROTO or -ENOMEM. */
int ferry__push_decode(const uint8_t *buf, size_t len,
		       struct ferry_push_spec *p);
void ferry__push_free(struct ferry_push_spec *p);

/* PUSH reply: per-file results, several to a REPLY: string name,
 * i32 status (0 or a positive errno / FERRY_E*), u32 adler32, u32 crc32c,
 * u64 size, u64 bytes_sent, u8 skipped, string why. */
struct ferry_push_result {
	char name[4096];
	int32_t status;
	uint32_t adler32, crc32c;
	uint64_t size, bytes_sent;
	uint8_t skipped;
	char why[FERRY_ERRTEXT_MAX];
};
/* Encode results [*next, n) that fit into buf; advances *next and
 * returns the bytes used (0 only when *next == n or one result does not
 * fit a buffer of cap >= FERRY_PUSH_RESULT_MAX). It cannot fail: strings
 * are cut to fit their field, a name travels exactly (any byte but NUL),
 * and the why is escaped (ferry_escape); the decoder refuses a why that
 * escaping would change. */
#define FERRY_PUSH_RESULT_MAX (2 + 4095 + 4 + 4 + 4 + 8 + 8 + 1 + 2 + 255)
size_t ferry__results_encode(const struct ferry_push_result *r, size_t n,
			     size_t *next, uint8_t *buf, size_t cap);
/* Decode one batch, calling fn for each result. Returns 0, fn's non-zero
 * return, or -FERRY_EPROTO. */
int ferry__results_decode(const uint8_t *buf, size_t len,
			  int (*fn)(void *arg,
				    const struct ferry_push_result *r),
			  void *arg);

#endif
