/* Control channel: messages, their wire codec, blocking socket I/O and the
 * authentication handshake (internal to libferry).
 *
 * Wire format of one frame (all integers little-endian, written byte by
 * byte, never by copying structs):
 *
 *   offset 0   u32 magic    0x59525246: the bytes 'F' 'R' 'R' 'Y'
 *   offset 4   u32 length   of the body, at most FERRY_CTRL_MAX_BODY
 *   offset 8   u16 version  FERRY_PROTO_VERSION
 *   offset 10  u16 type     enum ferry_msg_type
 *   offset 12  body         layout fixed by (version, type)
 *
 * The 12-byte header keeps this layout in every protocol version, so a peer
 * can always read a frame of another version and answer it with an ERROR.
 * A body must have exactly its type's length: no trailing bytes.
 */
#ifndef FERRY_CTRL_MSG_H
#define FERRY_CTRL_MSG_H

#include <stddef.h>
#include <stdint.h>

#include "ferry/key.h"
#include "ferry/xport.h" /* FERRY_EP_MAX */
#include "util/util.h"

#define FERRY_CTRL_MAGIC 0x59525246u
#define FERRY_PROTO_VERSION 1
#define FERRY_CTRL_HDR_LEN 12
#define FERRY_CTRL_MAX_BODY 65536
#define FERRY_CTRL_MAX_FRAME (FERRY_CTRL_HDR_LEN + FERRY_CTRL_MAX_BODY)

#define FERRY_NONCE_LEN 32
#define FERRY_MAC_LEN 32
#define FERRY_ERRTEXT_MAX 256 /* including the NUL */

enum ferry_msg_type {
	FERRY_MSG_HELLO = 1,
	FERRY_MSG_CHALLENGE = 2,
	FERRY_MSG_AUTH = 3,
	FERRY_MSG_PROPOSE = 4,
	FERRY_MSG_ACCEPT = 5,
	FERRY_MSG_ERROR = 6,
	FERRY_MSG_READY = 7,
	FERRY_MSG_FIN = 8,
	FERRY_MSG_RESULT = 9,
	FERRY_MSG_FILES = 10,     /* sender: a file session's destination */
	FERRY_MSG_MANIFEST = 11,  /* sender: a batch of manifest entries */
	FERRY_MSG_PLAN = 12,      /* receiver: per file, what to send */
	FERRY_MSG_FILE_SUM = 13,  /* sender: a file's whole checksums */
	FERRY_MSG_FILE_DONE = 14, /* receiver: a file published, or not */
};

/* HELLO and CHALLENGE flags. */
#define FERRY_HELLO_NOAUTH 1u

/* ferry_params.mode */
/* What a session moves: memory (bench), files, or OSU-style messages
 * (`ferry bench --osu`, lib/core/osu.h). */
enum { FERRY_MODE_BENCH = 1, FERRY_MODE_FILES = 2, FERRY_MODE_OSU = 3 };

/* ferry_params.transports: a bit mask. */
enum { FERRY_XPORT_TCP = 1, FERRY_XPORT_UROCE = 2, FERRY_XPORT_VERBS = 4 };

struct ferry_msg_hello {
	uint8_t nonce[FERRY_NONCE_LEN];
	uint32_t flags;
};

struct ferry_msg_challenge {
	uint8_t nonce[FERRY_NONCE_LEN];
	uint8_t mac[FERRY_MAC_LEN];
	uint32_t flags;
};

struct ferry_msg_auth {
	uint8_t mac[FERRY_MAC_LEN];
};

/* Session parameters: the client's PROPOSE, the server's ACCEPT. The codec
 * checks only the framing; the values are the negotiator's business. */
struct ferry_params {
	uint32_t mode;
	uint32_t transports;
	uint32_t streams;
	uint32_t slots;
	uint32_t depth;
	uint64_t chunk_size;
	uint32_t cksum;
	uint64_t total_bytes; /* 0: unbounded or unknown */
	uint64_t xfer_id;     /* ACCEPT: the session's transfer id (random) */
};

/* A transport's endpoint, opaque to the control channel. */
struct ferry_msg_ep {
	uint16_t len; /* <= FERRY_EP_MAX */
	uint8_t data[FERRY_EP_MAX];
};

struct ferry_msg_accept {
	struct ferry_params params;
	struct ferry_msg_ep ep;
};

/* text: NUL-terminated, no control characters other than tab and newline
 * (the receiver prints it). On the wire: u16 length, then the bytes. */
struct ferry_msg_error {
	int32_t code; /* a positive FERRY_E* value (or errno) */
	char text[FERRY_ERRTEXT_MAX];
};

struct ferry_msg_fin {
	uint64_t bytes;
	uint64_t chunks;
};

struct ferry_msg_result {
	uint64_t bytes;
	uint64_t chunks;
	uint64_t crc_errors;
	uint64_t cpu_user_us;
	uint64_t cpu_sys_us;
	int32_t status;
};

/* FILES flags */
#define FERRY_FILES_FORCE 1u         /* replace existing targets */
#define FERRY_FILES_SKIP_EXISTING 2u /* skip targets already identical */
#define FERRY_FILES_NO_RESUME 4u     /* discard journals, start over */

#define FERRY_DEST_MAX 4096

struct ferry_msg_files {
	uint32_t flags;
	uint32_t cksum;     /* FERRY_CKSUM_* (include/ferry/files.h) */
	uint64_t n_entries; /* manifest entries that follow */
	char dest[FERRY_DEST_MAX]; /* below the receiver's --dir; "" = top */
};

/* An opaque batch (manifest entries, plan entries): the io layer encodes
 * and validates the bytes. */
#define FERRY_BLOB_MAX (FERRY_CTRL_MAX_BODY - 16)
struct ferry_msg_blob {
	uint8_t last;  /* 1 on the final batch */
	uint32_t len;
	uint8_t data[FERRY_BLOB_MAX];
};

#define FERRY_FILE_SUM_SKIP 1u /* sender: not sending this file */

struct ferry_msg_file_sum {
	uint32_t idx; /* manifest index */
	uint32_t flags;
	uint32_t crc32c;
	uint32_t adler32;
};

struct ferry_msg_file_done {
	uint32_t idx;
	int32_t status; /* 0 published; else a positive FERRY_E* or errno */
	uint32_t crc32c;
	uint32_t adler32;
	char text[FERRY_ERRTEXT_MAX];
};

struct ferry_msg {
	uint16_t type;    /* enum ferry_msg_type */
	uint16_t version; /* set by decode; encode writes ours */
	union {
		struct ferry_msg_hello hello;
		struct ferry_msg_challenge challenge;
		struct ferry_msg_auth auth;
		struct ferry_params propose;
		struct ferry_msg_accept accept;
		struct ferry_msg_error error;
		struct ferry_msg_ep ready; /* the sender's endpoint blob */
		struct ferry_msg_fin fin;
		struct ferry_msg_result result;
		struct ferry_msg_files files;
		struct ferry_msg_blob blob; /* MANIFEST, PLAN */
		struct ferry_msg_file_sum file_sum;
		struct ferry_msg_file_done file_done;
	} u;
};

/* ---- codec (codec.c): pure, no I/O, no allocation ---------------------- */

/* Encode m as one frame into buf[0..cap). Writes FERRY_PROTO_VERSION
 * whatever m->version says. Returns 0 and the frame length in *len,
 * -FERRY_ETOOBIG if the frame does not fit in cap (or would exceed
 * FERRY_CTRL_MAX_BODY), or -EINVAL if m is not a valid message (unknown
 * type, ep.len > FERRY_EP_MAX, error text unterminated or with control
 * characters). */
int ferry__ctrl_encode(const struct ferry_msg *m, uint8_t *buf, size_t cap,
		       size_t *len);

/* Decode the frame at the start of buf[0..len). Returns
 *   0                 out filled, *consumed = the frame's length;
 *   -EAGAIN           a proper prefix of a frame: read more bytes;
 *   -FERRY_ETOOBIG    declared body length > FERRY_CTRL_MAX_BODY (known as
 *                     soon as the header is in: do not read the body);
 *   -FERRY_EVERSION   a complete frame of another version: out->type and
 *                     out->version say what it was (the rest is zero) and
 *                     *consumed = its length, so the caller can answer;
 *   -FERRY_EPROTO     bad magic (checked on the first byte), unknown type,
 *                     body not matching the type's layout, trailing
 *                     bytes, invalid ERROR text or endpoint length.
 * *consumed is 0 on the other errors; after them the stream cannot be
 * trusted. */
int ferry__ctrl_decode(const uint8_t *buf, size_t len, struct ferry_msg *out,
		       size_t *consumed);

/* "HELLO", "CHALLENGE", ... or "unknown". Never NULL. */
const char *ferry__ctrl_type_name(uint16_t type);

/* ---- blocking socket I/O (io.c) ---------------------------------------- */

/* timeout_ms bounds the whole call (< 0: wait forever). fd is a connected
 * stream socket, blocking or not; SIGPIPE is never raised. */

/* Returns 0, -FERRY_ETIMEOUT, -FERRY_ECLOSED (the peer closed), -EINVAL
 * (invalid m), -ENOMEM or -errno. */
int ferry__ctrl_send(int fd, const struct ferry_msg *m, int timeout_ms);

/* Receive one message into m. Returns 0, -FERRY_EPEER (the peer sent an
 * ERROR: m->u.error holds its code and text), -FERRY_ETIMEOUT,
 * -FERRY_ECLOSED, a decode error (-FERRY_EPROTO, -FERRY_ETOOBIG: the body
 * is not read; -FERRY_EVERSION: m->type and m->version are set), -ENOMEM
 * or -errno. */
int ferry__ctrl_recv(int fd, struct ferry_msg *m, int timeout_ms);

/* Send ERROR{code, text formatted from fmt}; code may be given negative
 * (-FERRY_EAUTH) and is sent positive. The text is cut to fit and control
 * characters become '?'. Waits at most FERRY_CTRL_ERROR_TIMEOUT_MS.
 * Returns like ferry__ctrl_send(). */
#define FERRY_CTRL_ERROR_TIMEOUT_MS 2000
int ferry__ctrl_send_error(int fd, int code, const char *fmt, ...)
	FERRY__PRINTF(3, 4);

/* ---- mutual authentication (auth.c) ------------------------------------ */

/* HMAC-SHA256 challenge-response over a connected control socket:
 *
 *   client -> HELLO     {nonce_c, flags}
 *   server -> CHALLENGE {nonce_s, HMAC(K, "ferry-v1 server" nonce_c nonce_s)}
 *   client -> AUTH      {HMAC(K, "ferry-v1 client" nonce_s nonce_c)}
 *
 * The server says nothing more on success: its next message is the next
 * protocol step. Either side that rejects the other sends ERROR first, so
 * both calls fail. key == NULL on both sides is the no-auth mode for
 * loopback tests (FERRY_HELLO_NOAUTH, zero MACs); a side with a key refuses
 * a peer without one.
 *
 * Return 0, -FERRY_EAUTH (the keys differ or one side has none),
 * -FERRY_EVERSION, -FERRY_EPEER (the peer sent another ERROR),
 * -FERRY_EPROTO (unexpected message), or an I/O error from
 * ferry__ctrl_recv()/ferry__ctrl_send(). On failure, why (may be NULL)
 * gets a sentence for the user. The client's timeout_ms bounds each
 * message; the server's bounds the whole handshake, from the first byte of
 * HELLO to the last of AUTH, so a peer that connects and says nothing, or
 * trickles bytes, is dropped after timeout_ms. A recorded handshake
 * replayed to the server fails: its CHALLENGE nonce is fresh (getrandom)
 * on every connection and the client's MAC covers it. */
#define FERRY_CTRL_HANDSHAKE_TIMEOUT_MS 10000 /* the receiver's cap */
int ferry__ctrl_auth_client(int fd, const struct ferry_key *key_or_null,
			    int timeout_ms, char *why, size_t whylen);
int ferry__ctrl_auth_server(int fd, const struct ferry_key *key_or_null,
			    int timeout_ms, char *why, size_t whylen);

#endif
