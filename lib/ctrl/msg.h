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

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ferry/key.h"
#include "ferry/session.h" /* FERRY_FIXED_* */
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
	FERRY_MSG_REQ = 15,       /* client: a daemon request (below) */
	FERRY_MSG_REPLY = 16,     /* daemon: a request's answer, or a part */
	FERRY_MSG_MARKER = 17,    /* daemon: progress of a push it runs */
	FERRY_MSG_FILE_SUMS = 18, /* sender: FILE_SUMs, a batch (blob) */
	FERRY_MSG_FILE_DONES = 19, /* receiver: FILE_DONEs, a batch (blob) */
	FERRY_MSG_PATH = 20,      /* each side's view of the path, right
				     before PROPOSE and before ACCEPT */
	FERRY_MSG_TCLASS = 21,    /* sender: the session's DSCP, before
				     PATH; only when it has one */
	FERRY_MSG_RANGES = 22,    /* sender: which manifest files are ranges
				     of a split file (blob, after MANIFEST,
				     with FERRY_FILES_RANGES only) */
	FERRY_MSG_PUBLISHED = 23, /* receiver: a range completed its file,
				     which this session published */
};

/* HELLO and CHALLENGE flags. */
#define FERRY_HELLO_NOAUTH 1u

/* ferry_params.mode */
/* What a session moves: memory (bench), files, or OSU-style messages
 * (`ferry bench --osu`, lib/osu/osu.h). */
enum { FERRY_MODE_BENCH = 1, FERRY_MODE_FILES = 2, FERRY_MODE_OSU = 3 };

/* A key's name: 1 to FERRY_KEYNAME_MAX of [A-Za-z0-9._:-] (the exports
 * names, and "token:" + 32 hex digits for a transfer token), or "" when
 * the client does not say (a daemon with one key takes any name). */
#define FERRY_KEYNAME_MAX 64

struct ferry_msg_hello {
	uint8_t nonce[FERRY_NONCE_LEN];
	uint32_t flags;
	char name[FERRY_KEYNAME_MAX + 1]; /* on the wire: u8 length, bytes */
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

/* What one end knows of the path and its own limits (PATH). The sender
 * sends its PATH just before PROPOSE; a receiver that got one answers
 * with its own just before ACCEPT, where it has planned the streams and
 * slots that fixed leaves open (lib/pipe/path.h). A sender's PATH: its
 * RTT sample, its target rate (its rate cap, else its route's NIC speed),
 * its ring limit, its send-buffer limits, its --sockbuf. A receiver's:
 * the RTT it measured, the target it planned for, its ring limit, its
 * receive-buffer limits, and the socket buffer both ends should ask for
 * (0: leave it to autotuning). */
#define FERRY_PATH_FIXED_ALL (FERRY_FIXED_STREAMS | FERRY_FIXED_SLOTS)
#define FERRY_PATH_FORCE 1u         /* buf_flags: may exceed the core
				       limits (CAP_NET_ADMIN) */
struct ferry_msg_path {
	uint32_t fixed;        /* FERRY_FIXED_* (ferry/session.h) */
	uint32_t rtt_us;       /* 0: no sample */
	uint64_t rate_bps;     /* 0: unknown */
	uint64_t mem_max;      /* largest ring this end allocates */
	uint64_t buf_tcp_max;  /* tcp_wmem (sender) / tcp_rmem (receiver)
				  maximum */
	uint64_t buf_core_max; /* wmem_max / rmem_max */
	uint32_t buf_flags;
	uint64_t sockbuf;
};

/* The session's traffic class (TCLASS): the DSCP the sender marks its
 * packets with, which the receiver then marks its own with (the control
 * connection's, and its transport's credits and ACKs). Sent first after
 * the handshake, and only by a sender given one (ferry_opts.dscp), so a
 * session without it has the bytes of earlier versions; a receiver of an
 * earlier version refuses it as an unknown message. */
struct ferry_msg_tclass {
	uint8_t dscp; /* 0 .. FERRY_DSCP_MAX */
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
#define FERRY_FILES_PACKS 8u         /* small files may come in packs
					(FERRY_CHUNK_PACK) */
#define FERRY_FILES_RANGES 16u       /* RANGES follows the manifest: some
					files are ranges of a split file
					(ferry_send_range) */
#define FERRY_FILES_KNOWN 31u        /* the flags this version knows */

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

/* A range whose landing completed its file: this session checked the
 * whole file and published it. Sent just before the range's FILE_DONE
 * (whose sums are the range's); the sums here are the whole file's. */
struct ferry_msg_published {
	uint32_t idx; /* manifest index of the range's file */
	uint32_t crc32c;
	uint32_t adler32;
};

/* ---- daemon requests (REQ / REPLY / MARKER) ---------------------------
 *
 * After the handshake a client may send any number of REQs instead of a
 * PROPOSE; each is answered by one or more REPLYs (the last one has
 * FERRY_REPLY_LAST) or by an ERROR whose code is a positive errno
 * (ENOENT, EEXIST, EACCES, ENOTDIR, EISDIR, ENOTEMPTY, ...) or FERRY_E*.
 * An ERROR ends the request, not the connection. Paths are relative to
 * the daemon's export root (io/exports.h rules). The op-specific data
 * (REQ.data, REPLY.data) is encoded by ctrl/req.h.
 *
 *   op      REQ                               REPLY (LAST unless said)
 *   STAT    path                              data: rstat
 *   LIST    path (a directory)                data: manifest-encoded
 *                                             children, by name; several
 *                                             REPLYs, the last has LAST
 *   CKSUM   path, arg = enum ferry_cksum      arg = the value
 *   MKDIR   path, arg = mode, flags PARENTS   -
 *   UNLINK  path (not a directory)            -
 *   RMDIR   path (an empty directory)         -
 *   TOKEN   path = destination directory,     arg = expiry (unix s),
 *           data = manifest-encoded files     data: token (name and the
 *           (names below path, sizes),        secret, wrapped under the
 *           flags FERRY_FILES_FORCE,          connection's key)
 *           arg = lifetime in seconds
 *   PUSH    data: push spec (where to send,   MARKERs while it runs, then
 *           which token, which files)         data: per-file results,
 *                                             arg = 0 or a positive error
 *
 * Rights (io/exports.h): STAT, LIST, CKSUM and PUSH need read on the
 * path(s); MKDIR and TOKEN need write; UNLINK and RMDIR need delete.
 */
enum ferry_req_op {
	FERRY_REQ_STAT = 1,
	FERRY_REQ_LIST = 2,
	FERRY_REQ_CKSUM = 3,
	FERRY_REQ_MKDIR = 4,
	FERRY_REQ_UNLINK = 5,
	FERRY_REQ_RMDIR = 6,
	FERRY_REQ_TOKEN = 7,
	FERRY_REQ_PUSH = 8,
};

#define FERRY_REQ_PARENTS 1u /* MKDIR: create missing parents, like -p */
#define FERRY_REPLY_LAST 1u

#define FERRY_REQ_DATA_MAX 32768
#define FERRY_REPLY_DATA_MAX (FERRY_CTRL_MAX_BODY - 64)

struct ferry_msg_req {
	uint32_t op;   /* enum ferry_req_op */
	uint32_t flags;
	uint64_t arg;
	char path[FERRY_DEST_MAX]; /* on the wire: u16 length, bytes */
	uint32_t len;
	uint8_t data[FERRY_REQ_DATA_MAX];
};

struct ferry_msg_reply {
	uint32_t op;
	uint32_t flags; /* FERRY_REPLY_LAST */
	uint64_t arg;
	uint32_t len;
	uint8_t data[FERRY_REPLY_DATA_MAX];
};

/* A performance marker, in the spirit of HTTP-TPC's: sent by a daemon
 * running a PUSH every few seconds, and once at the end. */
struct ferry_msg_marker {
	uint64_t bytes;      /* moved so far */
	uint64_t total;      /* to move (0: unknown) */
	uint64_t rate;       /* bytes per second over the last interval */
	uint64_t elapsed_ms; /* since the push started */
	uint32_t files_done, files_total;
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
		struct ferry_msg_path path;
		struct ferry_msg_tclass tclass;
		struct ferry_msg_error error;
		struct ferry_msg_ep ready; /* the sender's endpoint blob */
		struct ferry_msg_fin fin;
		struct ferry_msg_result result;
		struct ferry_msg_files files;
		struct ferry_msg_blob blob; /* MANIFEST, PLAN, FILE_SUMS,
					       FILE_DONES, RANGES */
		struct ferry_msg_file_sum file_sum;
		struct ferry_msg_file_done file_done;
		struct ferry_msg_published published;
		struct ferry_msg_req req;
		struct ferry_msg_reply reply;
		struct ferry_msg_marker marker;
	} u;
};

/* ---- codec (codec.c): pure, no I/O, no allocation ---------------------- */

/* Encode m as one frame into buf[0..cap). Writes FERRY_PROTO_VERSION
 * whatever m->version says. Returns 0 and the frame length in *len,
 * -FERRY_ETOOBIG if the frame does not fit in cap (or would exceed
 * FERRY_CTRL_MAX_BODY), or -EINVAL if m is not a valid message (unknown
 * type, ep.len > FERRY_EP_MAX, error text unterminated or with control
 * characters, a HELLO name that is not valid, a REQ path unterminated,
 * REQ or REPLY data over its maximum). A REQ path, like a file name, may
 * hold any byte but NUL. */
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
 *                     bytes, invalid ERROR text, endpoint length, HELLO
 *                     name, REQ path or data length.
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
 * (-FERRY_EAUTH) and is sent positive. The text is escaped (ferry_escape)
 * and cut to fit. Waits at most FERRY_CTRL_ERROR_TIMEOUT_MS.
 * Returns like ferry__ctrl_send(). */
#define FERRY_CTRL_ERROR_TIMEOUT_MS 2000
int ferry__ctrl_send_error(int fd, int code, const char *fmt, ...)
	FERRY__PRINTF(3, 4);

/* ---- mutual authentication (auth.c) ------------------------------------ */

/* HMAC-SHA256 challenge-response over a connected control socket:
 *
 *   client -> HELLO     {nonce_c, flags, name}
 *   server -> CHALLENGE {nonce_s, HMAC(K, "ferry-v1 server" nonce_c nonce_s)}
 *   client -> AUTH      {HMAC(K, "ferry-v1 client" nonce_s nonce_c)}
 *
 * name says which key the client holds ("" for none: see below); a server
 * with one key ignores it.
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
 * message; the server's bounds the whole handshake, to the last byte of
 * AUTH from the call (or from cfg->t0_ns: a receiver counts from before
 * it waits for the first byte), so a peer that connects and says
 * nothing, or trickles bytes, is dropped after timeout_ms. A recorded handshake
 * replayed to the server fails: its CHALLENGE nonce is fresh (getrandom)
 * on every connection and the client's MAC covers it. */
#define FERRY_CTRL_HANDSHAKE_TIMEOUT_MS 10000 /* the receiver's cap */
/* A receiver waits this long (or its timeout, if shorter) for a client's
 * first byte: a ferry client sends HELLO as soon as it is connected. */
#define FERRY_CTRL_FIRST_BYTE_MS 3000
int ferry__ctrl_auth_client(int fd, const struct ferry_key *key_or_null,
			    int timeout_ms, char *why, size_t whylen);
int ferry__ctrl_auth_server(int fd, const struct ferry_key *key_or_null,
			    int timeout_ms, char *why, size_t whylen);

/* ---- several keys, key names and the connection's wrapping key --------
 *
 * A daemon with an exports file has one key per client name, and issues
 * one-time transfer tokens ("token:" + 32 hex digits) whose secret is a
 * key too. The client says in HELLO which key it holds (HELLO.name); the
 * server looks the name up before it answers the CHALLENGE. Both sides
 * then derive the connection's wrapping key
 *
 *   wrap = HMAC-SHA256(K, "ferry-v1 wrap" || nonce_c || nonce_s)
 *
 * which no eavesdropper knows; a token secret crosses the control channel
 * only wrapped under it (ferry__ctrl_wrap). In no-auth mode wrap is all
 * zeros (and wrapping protects nothing: no-auth is loopback only). */

/* Server: the key for the name a client gave ("" when it gave none).
 * Returns 0 with *key filled, or -FERRY_EAUTH with why for the client
 * ("unknown key name atlas2", "token ... expired"): the client gets
 * "authentication failed: " and that sentence in an ERROR. Called between
 * HELLO and CHALLENGE, inside the handshake's deadline. */
typedef int (*ferry__key_lookup_fn)(void *arg, const char *name,
				    struct ferry_key *key, char *why,
				    size_t whylen);

struct ferry__auth_cfg {
	const struct ferry_key *key; /* one key for every name */
	ferry__key_lookup_fn lookup; /* or: a key per name (wins over key) */
	void *arg;
	/* key and lookup both NULL: no-auth mode */
	uint64_t t0_ns; /* when the handshake's bound began (ferry__now_ns;
			   0: at the call) */
};

/* What the handshake established. */
struct ferry__authed {
	char name[FERRY_KEYNAME_MAX + 1]; /* the client's HELLO.name */
	uint8_t wrap[FERRY_KEY_LEN];
};

/* As ferry__ctrl_auth_server, with a key per name; out may be NULL.
 * ferry__ctrl_auth_server(fd, key, ...) is cfg = { .key = key }. */
int ferry__ctrl_auth_server_ex(int fd, const struct ferry__auth_cfg *cfg,
			       int timeout_ms, struct ferry__authed *out,
			       char *why, size_t whylen);

/* As ferry__ctrl_auth_client, saying which key it holds (name NULL or ""
 * for none; a name that is not valid is -EINVAL) and returning the
 * wrapping key in wrap (may be NULL). */
int ferry__ctrl_auth_client_ex(int fd, const struct ferry_key *key_or_null,
			       const char *name, int timeout_ms,
			       uint8_t wrap[FERRY_KEY_LEN], char *why,
			       size_t whylen);

/* true when name is a valid HELLO name (see FERRY_KEYNAME_MAX); "" is.
 * (In codec.c, which checks HELLO names.) */
bool ferry__ctrl_keyname_valid(const char *name);

/* out = in XOR HMAC-SHA256(wrap, "ferry-v1 token" || token_name): wraps
 * and unwraps a token secret (in and out may be the same). Every token has
 * its own name, so no pad is used twice on one connection. Returns 0,
 * -EINVAL (token_name is not a valid key name) or -EIO. */
int ferry__ctrl_wrap(const uint8_t wrap[FERRY_KEY_LEN], const char *token_name,
		     const uint8_t in[FERRY_KEY_LEN],
		     uint8_t out[FERRY_KEY_LEN]);

#endif
