/* ferry error codes.
 *
 * Every action in libferry returns 0 on success or a negative number on
 * failure: -errno for system errors, or -FERRY_E* from the table below for
 * conditions errno cannot name. ferry_strerror() describes both.
 */
#ifndef FERRY_ERROR_H
#define FERRY_ERROR_H

/* X(name, value, text): values start well above any errno. */
#define FERRY_ERRORS(X)                                                      \
	X(FERRY_EAUTH, 4001, "authentication failed (the peers' keys differ)")  \
	X(FERRY_EVERSION, 4002, "protocol version mismatch")                     \
	X(FERRY_EPROTO, 4003, "malformed message from the peer")                 \
	X(FERRY_ETOOBIG, 4004, "message larger than the protocol allows")       \
	X(FERRY_ECRC, 4005, "checksum mismatch")                                 \
	X(FERRY_EPEER, 4006, "the peer reported an error")                       \
	X(FERRY_ENOXPORT, 4007, "transport not available on this host")          \
	X(FERRY_ENEGOTIATE, 4008, "the peers could not agree on parameters")     \
	X(FERRY_EBOUNDS, 4009, "remote access outside the registered region")   \
	X(FERRY_ECLOSED, 4010, "the peer closed the connection")                 \
	X(FERRY_ETIMEOUT, 4011, "the peer did not answer in time")               \
	X(FERRY_EKEY, 4012, "unusable key file")

enum ferry_error {
#define FERRY__ERR_ENUM(name, value, text) name = value,
	FERRY_ERRORS(FERRY__ERR_ENUM)
#undef FERRY__ERR_ENUM
};

/* Describe err (0, -errno or -FERRY_E*). Never returns NULL. Thread-safe. */
const char *ferry_strerror(int err);

#endif
