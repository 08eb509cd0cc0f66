/* The gfal2 plugin for ferry:// URLs (libgfal_plugin_ferry.so): what its
 * files share.
 *
 *   plugin.c  gfal_plugin_init, URL checks, the [FERRY] configuration,
 *             errors
 *   ns.c      stat, mkdir, unlink, rmdir, directory listing, checksums
 *   copy.c    file copies: push (file -> ferry), pull (ferry -> file) and
 *             third-party copy (ferry -> ferry)
 *
 * Every operation opens its own authenticated connection to the daemon
 * (ferry/remote.h) and closes it before it returns; the plugin keeps no
 * connection and no key between calls, so a changed key file or
 * environment takes effect on the next call.
 *
 * Every failure sets a GError in the plugin's domain whose code is an errno
 * (what the daemon refused with, or the closest one for a ferry error) and
 * whose message starts with "ferry: ".
 */
#ifndef FERRY_GFAL2_PLUGIN_H
#define FERRY_GFAL2_PLUGIN_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include <gfal_plugins_api.h>

#include "ferry/error.h"
#include "ferry/files.h"
#include "ferry/key.h"
#include "ferry/remote.h"
#include "ferry/session.h"

#define FG_NAME "ferry"
#define FG_GROUP "FERRY" /* the gfal2 configuration section */
#define FG_PREFIX "ferry://"

/* gfal2 finds the plugin by this symbol (dlsym); the only one exported. */
gfal_plugin_interface gfal_plugin_init(gfal2_context_t ctx, GError **err);

/* The plugin's handle (plugin_data). */
struct fg_plugin {
	gfal2_context_t ctx;
};

/* A ferry:// URL taken apart. path is export-relative: it starts with
 * '/', has no repeated '/' and no trailing '/' (except "/" itself). */
struct fg_url {
	char host[FERRY_URL_HOST_MAX + 1];
	char port[FERRY_URL_PORT_MAX + 1];
	char path[FERRY_URL_PATH_MAX + 1];
};

/* The client's options for one operation: the [FERRY] section of the
 * gfal2 configuration, then the environment. o.key points into this
 * struct, so it is filled in place and never copied. */
struct fg_opts {
	struct ferry_opts o;
	struct ferry_key key;
	char key_path[PATH_MAX];
	char key_name[FERRY_KEY_NAME_MAX + 1];
	char transport[FERRY_REMOTE_XPORT_MAX + 1];
	bool recheck; /* CHECKSUM_RECHECK: ask the destination afterwards */
};

GQuark fg_quark(void);

/* true for "ferry://..." (any case of the scheme) and "file://...". */
bool fg_is_ferry(const char *url);
bool fg_is_file(const char *url);

/* Parse url into u. Returns 0 or -1 with err (EINVAL). */
int fg_url_parse(const char *url, struct fg_url *u, GError **err);

/* Split an export-relative path into its directory and last component
 * ("/a/b" -> "/a" and "b"; "/b" -> "/" and "b"). Returns 0 or -1 with err
 * (EISDIR for "/"). */
int fg_path_split(const char *path, char *dir, size_t dirlen, char *name,
		  size_t namelen, GError **err);

/* Fill fo from the configuration and the environment (see
 * ferry_plugin.conf). Returns 0 or -1 with err (a key file that cannot be
 * loaded, a bad value). */
int fg_opts_load(struct fg_plugin *p, struct fg_opts *fo, GError **err);

/* Open an authenticated connection to u's daemon with fo's key. Returns 0
 * or -1 with err. */
int fg_connect(const struct fg_url *u, const struct fg_opts *fo,
	       struct ferry_remote **c, GError **err);

/* The errno gfal2 should see for ferr (0, -errno or -FERRY_E*). */
int fg_errno(int ferr);

/* Set err from a ferry error: code fg_errno(ferr), message "ferry: " and
 * why (or ferry's description of ferr when why is empty). Returns -1. */
int fg_fail(GError **err, int ferr, const char *why);

/* Set err with code (a positive errno) and "ferry: " + the message.
 * Returns -1. */
int fg_failf(GError **err, int code, const char *fmt, ...)
	G_GNUC_PRINTF(3, 4);

/* The checksum kind gfal2 names type ("adler32", "ADLER32", "crc32c", any
 * case); FERRY_CKSUM_NONE when unknown. */
enum ferry_cksum fg_cksum_kind(const char *type);

/* Namespace operations (ns.c), with the signatures of
 * gfal_plugin_interface. */
int fg_stat(plugin_handle h, const char *url, struct stat *st, GError **err);
int fg_mkdirp(plugin_handle h, const char *url, mode_t mode,
	      gboolean parents, GError **err);
int fg_unlink(plugin_handle h, const char *url, GError **err);
int fg_rmdir(plugin_handle h, const char *url, GError **err);
gfal_file_handle fg_opendir(plugin_handle h, const char *url, GError **err);
struct dirent *fg_readdir(plugin_handle h, gfal_file_handle fh,
			  GError **err);
struct dirent *fg_readdirpp(plugin_handle h, gfal_file_handle fh,
			    struct stat *st, GError **err);
int fg_closedir(plugin_handle h, gfal_file_handle fh, GError **err);
int fg_checksum(plugin_handle h, const char *url, const char *type,
		char *buf, size_t buflen, off_t start, size_t length,
		GError **err);

/* Fill st from a daemon's answer. */
void fg_rstat_to_stat(const struct ferry_remote_stat *r, struct stat *st);

/* Copies (copy.c). */
int fg_copy_check(plugin_handle h, gfal2_context_t ctx, const char *src,
		  const char *dst, gfal_url2_check check);
int fg_copy(plugin_handle h, gfal2_context_t ctx, gfalt_params_t params,
	    const char *src, const char *dst, GError **err);

#endif
