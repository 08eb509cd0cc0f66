/* Shared keys for the control channel's mutual HMAC-SHA256 authentication.
 *
 * A key file holds 32 random bytes as 64 hex digits and a newline. It must
 * not be readable by group or others (like an ssh private key).
 */
#ifndef FERRY_KEY_H
#define FERRY_KEY_H

#include <stddef.h>
#include <stdint.h>

#define FERRY_KEY_LEN 32
/* A key's name (ferry_opts.key_name, the daemon's exports): 1 to
 * FERRY_KEY_NAME_MAX of [A-Za-z0-9._:-]. */
#define FERRY_KEY_NAME_MAX 64

struct ferry_key {
	uint8_t bytes[FERRY_KEY_LEN];
};

/* Write a new random key to path, created with mode 0600; refuses to
 * overwrite (-EEXIST). Returns 0 or -errno; why gets a reason. */
int ferry_key_generate(const char *path, char *why, size_t whylen);

/* Load a key. Returns 0, -errno (file missing, unreadable) or -FERRY_EKEY
 * (bad content or permissions open to others); why says which and how to
 * fix it. */
int ferry_key_load(const char *path, struct ferry_key *key, char *why,
		   size_t whylen);

#endif
