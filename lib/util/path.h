/* Relative path rules shared by the manifest, daemon requests and the
 * receiver (internal).
 *
 * A valid relative path is '/'-separated, with no empty, "." or ".."
 * components, 1 to FERRY_PATH_MAX - 1 bytes, no NUL. These rules only
 * check a path's shape; opening below a root without escaping it is
 * io/fsx.h's work.
 *
 * In lib/util so that lib/ctrl (request data) and lib/io (manifests,
 * exports) share one rule without including each other.
 */
#ifndef FERRY_UTIL_PATH_H
#define FERRY_UTIL_PATH_H

#include <stdbool.h>

#define FERRY_PATH_MAX 4096

/* true when path is a valid relative path (see above). */
bool ferry__path_valid(const char *path);

#endif
