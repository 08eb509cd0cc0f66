/* Namespace operations on ferry:// URLs: one connection per call. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin.h"

/* What every call starts with: the URL taken apart, the options, and a
 * connection to the daemon. On failure err is set and nothing is open. */
struct ns_call {
	struct fg_url u;
	struct fg_opts fo;
	struct ferry_remote *c;
	char why[512];
};

static struct ns_call *ns_open(plugin_handle h, const char *url, GError **err)
{
	struct ns_call *nc = g_new0(struct ns_call, 1);

	if (fg_url_parse(url, &nc->u, err) ||
	    fg_opts_load(h, &nc->fo, err) ||
	    fg_connect(&nc->u, &nc->fo, &nc->c, err)) {
		g_free(nc);
		return NULL;
	}
	return nc;
}

static void ns_close(struct ns_call *nc)
{
	ferry_remote_close(nc->c);
	g_free(nc);
}

/* rc from a ferry_remote_* call: 0, or -1 with err from its why. */
static int ns_result(struct ns_call *nc, int rc, GError **err)
{
	if (rc)
		fg_fail(err, rc, nc->why);
	ns_close(nc);
	return rc ? -1 : 0;
}

void fg_rstat_to_stat(const struct ferry_remote_stat *r, struct stat *st)
{
	int64_t s = r->mtime_ns / 1000000000, ns = r->mtime_ns % 1000000000;

	if (ns < 0) { /* before 1970: nanoseconds stay in [0, 1e9) */
		ns += 1000000000;
		s -= 1;
	}
	memset(st, 0, sizeof(*st));
	st->st_mode = r->mode & 07777;
	if (r->type == FERRY_REMOTE_FILE)
		st->st_mode |= S_IFREG;
	else if (r->type == FERRY_REMOTE_DIR)
		st->st_mode |= S_IFDIR;
	st->st_nlink = 1;
	st->st_size = (off_t)r->size;
	st->st_blksize = 4096;
	st->st_blocks = (blkcnt_t)((r->size + 511) / 512);
	st->st_mtim.tv_sec = (time_t)s;
	st->st_mtim.tv_nsec = (long)ns;
	st->st_atim = st->st_mtim;
	st->st_ctim = st->st_mtim;
}

int fg_stat(plugin_handle h, const char *url, struct stat *st, GError **err)
{
	struct ns_call *nc = ns_open(h, url, err);
	struct ferry_remote_stat r;
	int rc;

	if (!nc)
		return -1;
	rc = ferry_remote_stat(nc->c, nc->u.path, &r, nc->why,
			       sizeof(nc->why));
	if (!rc)
		fg_rstat_to_stat(&r, st);
	return ns_result(nc, rc, err);
}

int fg_mkdirp(plugin_handle h, const char *url, mode_t mode,
	      gboolean parents, GError **err)
{
	struct ns_call *nc = ns_open(h, url, err);
	int rc;

	if (!nc)
		return -1;
	rc = ferry_remote_mkdir(nc->c, nc->u.path, (uint32_t)(mode & 07777),
				parents, nc->why, sizeof(nc->why));
	return ns_result(nc, rc, err);
}

int fg_unlink(plugin_handle h, const char *url, GError **err)
{
	struct ns_call *nc = ns_open(h, url, err);
	int rc;

	if (!nc)
		return -1;
	rc = ferry_remote_unlink(nc->c, nc->u.path, nc->why,
				 sizeof(nc->why));
	return ns_result(nc, rc, err);
}

int fg_rmdir(plugin_handle h, const char *url, GError **err)
{
	struct ns_call *nc = ns_open(h, url, err);
	int rc;

	if (!nc)
		return -1;
	rc = ferry_remote_rmdir(nc->c, nc->u.path, nc->why, sizeof(nc->why));
	return ns_result(nc, rc, err);
}

/* ---- directories: listed once at opendir, handed out from memory ------ */

struct dir_ent {
	char *name;
	struct ferry_remote_stat st;
};

struct dir_list {
	struct dir_ent *e;
	size_t n, cap, next;
	struct dirent de;
};

static int dir_add(void *arg, const char *name,
		   const struct ferry_remote_stat *st)
{
	struct dir_list *d = arg;

	if (d->n == d->cap) {
		d->cap = d->cap ? 2 * d->cap : 64;
		d->e = g_renew(struct dir_ent, d->e, d->cap);
	}
	d->e[d->n].name = g_strdup(name);
	d->e[d->n].st = *st;
	d->n++;
	return 0;
}

static void dir_free(struct dir_list *d)
{
	size_t i;

	for (i = 0; i < d->n; i++)
		g_free(d->e[i].name);
	g_free(d->e);
	g_free(d);
}

gfal_file_handle fg_opendir(plugin_handle h, const char *url, GError **err)
{
	struct ns_call *nc = ns_open(h, url, err);
	struct dir_list *d;
	int rc;

	if (!nc)
		return NULL;
	d = g_new0(struct dir_list, 1);
	rc = ferry_remote_list(nc->c, nc->u.path, dir_add, d, nc->why,
			       sizeof(nc->why));
	if (ns_result(nc, rc, err)) {
		dir_free(d);
		return NULL;
	}
	return gfal_file_handle_new2(FG_NAME, d, NULL, url);
}

/* The next entry, or NULL at the end (err untouched) or on error. */
static struct dir_ent *dir_next(gfal_file_handle fh, struct dirent **out,
				GError **err)
{
	struct dir_list *d = gfal_file_handle_get_fdesc(fh);
	struct dir_ent *e;

	*out = NULL;
	if (d->next >= d->n)
		return NULL;
	e = &d->e[d->next];
	if (strlen(e->name) >= sizeof(d->de.d_name)) {
		fg_failf(err, ENAMETOOLONG, "entry name longer than %zu bytes: %.64s...",
			 sizeof(d->de.d_name) - 1, e->name);
		return NULL;
	}
	memset(&d->de, 0, sizeof(d->de));
	d->de.d_ino = d->next + 1;
	d->de.d_off = (off_t)(d->next + 1);
	d->de.d_reclen = sizeof(d->de);
	d->de.d_type = e->st.type == FERRY_REMOTE_FILE ? DT_REG :
		       e->st.type == FERRY_REMOTE_DIR ? DT_DIR : DT_UNKNOWN;
	strcpy(d->de.d_name, e->name);
	d->next++;
	*out = &d->de;
	return e;
}

struct dirent *fg_readdir(plugin_handle h, gfal_file_handle fh, GError **err)
{
	struct dirent *de;

	(void)h;
	dir_next(fh, &de, err);
	return de;
}

struct dirent *fg_readdirpp(plugin_handle h, gfal_file_handle fh,
			    struct stat *st, GError **err)
{
	struct dirent *de;
	struct dir_ent *e;

	(void)h;
	e = dir_next(fh, &de, err);
	if (e)
		fg_rstat_to_stat(&e->st, st);
	return de;
}

int fg_closedir(plugin_handle h, gfal_file_handle fh, GError **err)
{
	(void)h;
	(void)err;
	dir_free(gfal_file_handle_get_fdesc(fh));
	gfal_file_handle_delete(fh);
	return 0;
}

/* ---- checksums ------------------------------------------------------------ */

int fg_checksum(plugin_handle h, const char *url, const char *type,
		char *buf, size_t buflen, off_t start, size_t length,
		GError **err)
{
	enum ferry_cksum kind = fg_cksum_kind(type);
	struct ferry_remote_stat r;
	struct ns_call *nc;
	uint32_t value;
	int rc;

	if (kind == FERRY_CKSUM_NONE)
		return fg_failf(err, ENOTSUP,
				"checksum type %s is not supported (adler32, crc32c)",
				type ? type : "(none)");
	if (buflen < 9)
		return fg_failf(err, ENOBUFS,
				"checksum buffer of %zu bytes, 9 needed", buflen);
	if (start != 0)
		return fg_failf(err, ENOTSUP,
				"checksums of part of a file are not supported (offset %lld)",
				(long long)start);
	nc = ns_open(h, url, err);
	if (!nc)
		return -1;
	if (length != 0) { /* a length is fine if it is the whole file */
		rc = ferry_remote_stat(nc->c, nc->u.path, &r, nc->why,
				       sizeof(nc->why));
		if (rc)
			return ns_result(nc, rc, err);
		if (r.size != length) {
			ns_close(nc);
			return fg_failf(err, ENOTSUP,
					"checksums of part of a file are not supported (%zu of %llu bytes)",
					length, (unsigned long long)r.size);
		}
	}
	rc = ferry_remote_cksum(nc->c, nc->u.path, kind, &value, nc->why,
				sizeof(nc->why));
	if (!rc)
		snprintf(buf, buflen, "%08x", value);
	return ns_result(nc, rc, err);
}
