/* The gfal2 plugin's entry point, URL checks, configuration and errors. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin.h"
#include "ferry/log.h"

GQuark fg_quark(void)
{
	return g_quark_from_static_string(GFAL2_QUARK_PLUGINS "::FERRY");
}

static const char *plugin_name(void)
{
	return FG_NAME;
}

static void plugin_delete(plugin_handle h)
{
	g_free(h);
}

bool fg_is_ferry(const char *url)
{
	return url && strncmp(url, FG_PREFIX, strlen(FG_PREFIX)) == 0;
}

bool fg_is_file(const char *url)
{
	return url && strncmp(url, "file://", 7) == 0 && url[7] == '/';
}

static gboolean check_url(plugin_handle h, const char *url, plugin_mode mode,
			  GError **err)
{
	(void)h;
	(void)err;
	switch (mode) {
	case GFAL_PLUGIN_STAT:
	case GFAL_PLUGIN_LSTAT:
	case GFAL_PLUGIN_MKDIR:
	case GFAL_PLUGIN_MKDIR_REC:
	case GFAL_PLUGIN_UNLINK:
	case GFAL_PLUGIN_RMDIR:
	case GFAL_PLUGIN_OPENDIR:
	case GFAL_PLUGIN_CHECKSUM:
		return fg_is_ferry(url);
	default:
		return FALSE;
	}
}

/* libferry's messages go to gfal2's log (gfal-* -v shows them). Errors
 * are logged as warnings: the error itself reaches the caller in a
 * GError, and glib's G_LOG_LEVEL_ERROR would abort the process. */
static void log_to_gfal(enum ferry_log_level level, const char *msg,
			void *arg)
{
	static const GLogLevelFlags map[] = {
		[FERRY_LOG_ERR] = G_LOG_LEVEL_WARNING,
		[FERRY_LOG_WARN] = G_LOG_LEVEL_WARNING,
		[FERRY_LOG_INFO] = G_LOG_LEVEL_INFO,
		[FERRY_LOG_DEBUG] = G_LOG_LEVEL_DEBUG,
	};

	(void)arg;
	gfal2_log(level <= FERRY_LOG_DEBUG ? map[level] : G_LOG_LEVEL_DEBUG,
		  "[ferry] %s", msg);
}

gfal_plugin_interface gfal_plugin_init(gfal2_context_t ctx, GError **err)
{
	gfal_plugin_interface pi;
	struct fg_plugin *p = g_new0(struct fg_plugin, 1);

	/* Nothing here may fail: an error from one plugin's init stops gfal2
	 * loading the others (file:// included). A bad key or config shows
	 * up in the operation that needs it. */
	(void)err;
	p->ctx = ctx;
	ferry_log_set(log_to_gfal, NULL, FERRY_LOG_DEBUG);

	memset(&pi, 0, sizeof(pi));
	pi.plugin_data = p;
	pi.getName = plugin_name;
	pi.plugin_delete = plugin_delete;
	pi.check_plugin_url = check_url;
	pi.statG = fg_stat;
	pi.lstatG = fg_stat; /* the daemon serves no symlinks */
	pi.mkdirpG = fg_mkdirp;
	pi.unlinkG = fg_unlink;
	pi.rmdirG = fg_rmdir;
	pi.opendirG = fg_opendir;
	pi.readdirG = fg_readdir;
	pi.readdirppG = fg_readdirpp;
	pi.closedirG = fg_closedir;
	pi.checksum_calcG = fg_checksum;
	pi.check_plugin_url_transfer = fg_copy_check;
	pi.copy_file = fg_copy;
	return pi;
}

/* ---- URLs ------------------------------------------------------------- */

/* Collapse repeated '/' and drop a trailing one ("//a//b/" -> "/a/b"). */
static void path_tidy(char *path)
{
	char *r = path, *w = path;

	while (*r) {
		*w++ = *r;
		if (*r == '/')
			while (*r == '/')
				r++;
		else
			r++;
	}
	*w = '\0';
	if (w - path > 1 && w[-1] == '/')
		w[-1] = '\0';
	if (!path[0])
		strcpy(path, "/");
}

int fg_url_parse(const char *url, struct fg_url *u, GError **err)
{
	char why[256] = "";
	int rc;

	rc = ferry_url_parse(url, u->host, sizeof(u->host), u->port,
			     sizeof(u->port), u->path, sizeof(u->path), why,
			     sizeof(why));
	if (rc == 1)
		return fg_failf(err, EINVAL, "%s is not a ferry:// URL", url);
	if (rc)
		return fg_fail(err, rc, why);
	path_tidy(u->path);
	return 0;
}

int fg_path_split(const char *path, char *dir, size_t dirlen, char *name,
		  size_t namelen, GError **err)
{
	const char *slash = strrchr(path, '/');
	size_t n;

	if (!slash || !slash[1])
		return fg_failf(err, EISDIR,
				"%s names a directory, not a file", path);
	n = (size_t)(slash - path);
	if (n == 0)
		n = 1; /* the root */
	if (n >= dirlen || strlen(slash + 1) >= namelen)
		return fg_failf(err, ENAMETOOLONG, "path too long: %s", path);
	memcpy(dir, path, n);
	dir[n] = '\0';
	strcpy(name, slash + 1);
	return 0;
}

/* ---- configuration ------------------------------------------------------ */

/* A [FERRY] string, or the environment variable env when it is set and not
 * empty (env may be NULL). "" when neither says anything. */
static void opt_string(struct fg_plugin *p, const char *key, const char *env,
		       const char *def, char *out, size_t outlen)
{
	const char *e = env ? getenv(env) : NULL;
	gchar *s;

	if (e && *e) {
		g_strlcpy(out, e, outlen);
		return;
	}
	s = gfal2_get_opt_string_with_default(p->ctx, FG_GROUP, key, def);
	g_strlcpy(out, s ? g_strstrip(s) : def, outlen);
	g_free(s);
}

/* The key name from the key file's name: its basename without ".key". */
static void name_from_path(const char *path, char *name, size_t len)
{
	const char *base = strrchr(path, '/');
	size_t n;

	base = base ? base + 1 : path;
	n = strlen(base);
	if (n > 4 && strcmp(base + n - 4, ".key") == 0)
		n -= 4;
	if (n >= len)
		n = len - 1;
	memcpy(name, base, n);
	name[n] = '\0';
}

int fg_opts_load(struct fg_plugin *p, struct fg_opts *fo, GError **err)
{
	char why[512] = "";
	gint streams, timeout;
	int rc;

	memset(fo, 0, sizeof(*fo));
	ferry_opts_init(&fo->o);
	fo->o.interval = 0;

	opt_string(p, "TRANSPORT", NULL, "auto", fo->transport,
		   sizeof(fo->transport));
	fo->o.transport = fo->transport;

	streams = gfal2_get_opt_integer_with_default(p->ctx, FG_GROUP, "STREAMS",
						     FERRY_DEFAULT_STREAMS);
	if (streams < 1 || streams > FERRY_MAX_STREAMS)
		return fg_failf(err, EINVAL,
				"[" FG_GROUP "] STREAMS must be 1 to %d, not %d",
				FERRY_MAX_STREAMS, streams);
	fo->o.streams = (unsigned)streams;

	timeout = gfal2_get_opt_integer_with_default(
		p->ctx, FG_GROUP, "TIMEOUT", FERRY_DEFAULT_TIMEOUT_MS / 1000);
	if (timeout < 1 || timeout > 3600)
		return fg_failf(err, EINVAL,
				"[" FG_GROUP "] TIMEOUT must be 1 to 3600 seconds, not %d",
				timeout);
	fo->o.timeout_ms = timeout * 1000;

	fo->recheck = gfal2_get_opt_boolean_with_default(
		p->ctx, FG_GROUP, "CHECKSUM_RECHECK", FALSE);

	/* The environment wins over the configuration: it is the narrower
	 * scope (one shell, one job), and FERRY_KEY is the variable the
	 * ferry command reads too. */
	opt_string(p, "KEY", "FERRY_KEY", "", fo->key_path,
		   sizeof(fo->key_path));
	if (!fo->key_path[0])
		return 0; /* no-auth mode: loopback daemons only */
	rc = ferry_key_load(fo->key_path, &fo->key, why, sizeof(why));
	if (rc)
		return fg_fail(err, rc, why);
	fo->o.key = &fo->key;
	fo->o.key_path = fo->key_path;

	opt_string(p, "KEY_NAME", "FERRY_KEY_NAME", "", fo->key_name,
		   sizeof(fo->key_name));
	if (!fo->key_name[0])
		name_from_path(fo->key_path, fo->key_name,
			       sizeof(fo->key_name));
	fo->o.key_name = fo->key_name;
	return 0;
}

int fg_connect(const struct fg_url *u, const struct fg_opts *fo,
	       struct ferry_remote **c, GError **err)
{
	char why[512] = "";
	int rc;

	rc = ferry_remote_open(u->host, u->port, &fo->o, c, why, sizeof(why));
	if (rc)
		return fg_fail(err, rc, why);
	return 0;
}

/* ---- errors --------------------------------------------------------------- */

int fg_errno(int ferr)
{
	int e = ferr < 0 ? -ferr : ferr;

	if (e < FERRY_EAUTH)
		return e;
	switch (e) {
	case FERRY_ETIMEOUT:
		return ETIMEDOUT;
	case FERRY_EAUTH:
		return EACCES;  /* the daemon does not know this key */
	case FERRY_EKEY:
		return EINVAL;  /* our key file is unusable */
	case FERRY_ECRC:
	case FERRY_EBOUNDS:
		return EIO;     /* the data, not the conversation */
	default:
		return ECOMM;   /* protocol, version, peer, closed, transport */
	}
}

/* Every message is plain text (ferry_escape): the names in it, and a
 * daemon's words, go to FTS logs and terminals. */
int fg_fail(GError **err, int ferr, const char *why)
{
	char msg[1024];

	g_set_error(err, fg_quark(), fg_errno(ferr), "ferry: %s",
		    ferry_escape(why && *why ? why : ferry_strerror(ferr), msg,
				 sizeof(msg)));
	return -1;
}

int fg_failf(GError **err, int code, const char *fmt, ...)
{
	char raw[1024], msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	g_set_error(err, fg_quark(), code, "ferry: %s",
		    ferry_escape(raw, msg, sizeof(msg)));
	return -1;
}

enum ferry_cksum fg_cksum_kind(const char *type)
{
	if (!type)
		return FERRY_CKSUM_NONE;
	if (g_ascii_strcasecmp(type, "adler32") == 0)
		return FERRY_CKSUM_ADLER32;
	if (g_ascii_strcasecmp(type, "crc32c") == 0)
		return FERRY_CKSUM_CRC32C;
	return FERRY_CKSUM_NONE;
}
