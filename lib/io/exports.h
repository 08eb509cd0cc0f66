/* Exports: which keys may do what, where, on a ferry daemon (internal).
 *
 * A small config file (docs/exports.md) names one export root and, per
 * key, its key file, its rights (read, write, delete) and the path
 * prefixes it may use below the root. The daemon authenticates a client
 * by its key, maps the key to its name (ferry__exports_name_by_key) and
 * asks ferry__exports_allow before every operation.
 *
 * Request paths are relative to the export root, with or without one
 * leading '/': "/atlas/x" and "atlas/x" are the same path; "/" (or "") is
 * the root itself. Apart from that leading '/', a path follows the
 * manifest rules (ferry__path_valid): no empty, "." or ".." components,
 * no trailing '/', shorter than FERRY_PATH_MAX.
 */
#ifndef FERRY_IO_EXPORTS_H
#define FERRY_IO_EXPORTS_H

#include <stdbool.h>
#include <stddef.h>

#include "ferry/key.h"

/* Rights, a bit mask: a check may ask for several at once. */
enum {
	FERRY__RIGHT_READ = 1u << 0,   /* pull, stat, list, checksum */
	FERRY__RIGHT_WRITE = 1u << 1,  /* push, mkdir */
	FERRY__RIGHT_DELETE = 1u << 2, /* unlink */
	FERRY__RIGHT_ALL = (1u << 3) - 1,
};

/* Longest key name, without the NUL. */
#define FERRY__EXPORTS_NAME_MAX 64

struct ferry__exports;

/* Load the key file a "key" line names into *key. path is as written in
 * the config. Returns 0 or -errno / -FERRY_E* with why filled (the
 * parser prefixes it with the file and line). */
typedef int (*ferry__exports_key_fn)(void *arg, const char *path,
				     struct ferry_key *key, char *why,
				     size_t whylen);

/* Parse a config held in memory. origin names it in messages ("file:line:
 * ..."; NULL reads "exports"). load_key reads each key file; NULL means
 * ferry_key_load on the path as written (relative to the cwd).
 * Returns 0 and *out (free with ferry__exports_free), or an error with
 * *out NULL and why naming the line and what is wrong: -EINVAL for the
 * text itself (unknown word, duplicate root or key name, bad name, right
 * or prefix, missing root, no key lines, two names for one key), -ENOMEM,
 * or whatever load_key returned. */
int ferry__exports_parse(const char *text, const char *origin,
			 ferry__exports_key_fn load_key, void *arg,
			 struct ferry__exports **out, char *why,
			 size_t whylen);

/* Read path and parse it; relative key file paths are taken relative to
 * the config file's directory, and key files are read with
 * ferry_key_load (so its permission checks apply). Returns as
 * ferry__exports_parse, plus -errno when path cannot be read and -EFBIG
 * for a file over 1 MiB. */
int ferry__exports_load(const char *path, struct ferry__exports **out,
			char *why, size_t whylen);

/* Free an exports object and wipe its keys; NULL is fine. */
void ferry__exports_free(struct ferry__exports *ex);

/* The export root, as written (trailing '/' removed). */
const char *ferry__exports_root(const struct ferry__exports *ex);

/* May key_name do every right in rights (a FERRY__RIGHT_* mask) on path?
 * A key covers path when one of its prefixes equals path or is a whole
 * leading run of its components ("/atlas" covers "/atlas/x", not
 * "/atlasX"); prefix "/" covers everything. Returns 0; -EACCES when the
 * key is unknown, lacks a right or covers no prefix of path; -EINVAL when
 * path is not a valid request path or rights is 0 or unknown. why names
 * the key, the right and the path. */
int ferry__exports_allow(const struct ferry__exports *ex,
			 const char *key_name, unsigned rights,
			 const char *path, char *why, size_t whylen);

/* The name of the key whose material equals key (compared in constant
 * time), or NULL. Names are unique and so is key material. */
const char *ferry__exports_name_by_key(const struct ferry__exports *ex,
				       const struct ferry_key *key);

/* The key named name, or NULL. */
const struct ferry_key *
ferry__exports_key_by_name(const struct ferry__exports *ex, const char *name);

/* "read,write" for a mask into buf (always NUL-terminated); "none" for 0.
 * Returns buf. */
const char *ferry__exports_rights_str(unsigned rights, char *buf,
				      size_t len);

#endif
