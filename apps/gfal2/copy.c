/* gfal2 file copies to, from and between ferry daemons.
 *
 *   file://  -> ferry://  push: this process sends (ferry_remote_push)
 *   ferry:// -> file://   pull: the daemon sends to a one-shot receiver
 *                         here (ferry_remote_pull)
 *   ferry:// -> ferry://  third-party: the source daemon sends straight to
 *                         the destination daemon (ferry_remote_tpc)
 *
 * gfal2's transfer parameters map as: streams -> ferry streams; timeout
 * -> ferry's connect/handshake/stall limit when it is the smaller one, and
 * the whole copy's deadline, checked at each progress report (as is
 * gfal2_cancel, which also stops a copy waiting between reports);
 * replace_existing_file -> force (without it an existing destination is
 * EEXIST before anything moves); create_parent_dir -> mkdir -p of the
 * destination's directory; the checksum mode and type -> the session's
 * whole-file checksum, whose value both sides have agreed on when the copy
 * returns, compared with the user's expected value when one was given.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "plugin.h"
#include "ferry/log.h"

enum copy_kind { COPY_PUSH, COPY_PULL, COPY_TPC };

/* One copy: its settings, and what the callbacks saw. */
struct copy {
	gfalt_params_t params;
	gfal2_context_t ctx;
	const char *src_url, *dst_url;
	enum copy_kind kind;
	struct fg_opts fo;
	struct fg_url src, dst;          /* the ferry:// sides */
	char local[PATH_MAX];            /* the file:// side */
	/* the destination's directory, the name there, and what the source
	 * calls the file */
	char dir[FERRY_URL_PATH_MAX + 1];
	char name[FERRY_URL_PATH_MAX + 1];
	char src_path[FERRY_URL_PATH_MAX + 1];
	uint64_t size;
	bool force, parent;
	bool strict;                     /* gfal2's strict copy: no checks */
	gfalt_checksum_mode_t ck_mode;
	enum ferry_cksum ck_kind;
	bool ck_expect;                  /* the user gave a value */
	uint32_t ck_value;
	/* results */
	struct _gfalt_transfer_status st;
	uint64_t bytes;                  /* push: sum of the intervals */
	gint64 t0;                       /* the transfer's start, in us */
	gint64 deadline;                 /* gfal2's timeout, monotonic us;
					    0: none */
	atomic_bool cancel;              /* gfal2_cancel, or past deadline */
	bool timed_out;
	bool have_result;
	int status;
	uint32_t adler32, crc32c;
	char file_why[512];
};

int fg_copy_check(plugin_handle h, gfal2_context_t ctx, const char *src,
		  const char *dst, gfal_url2_check check)
{
	(void)h;
	(void)ctx;
	if (check != GFAL_FILE_COPY)
		return FALSE;
	if (fg_is_ferry(src))
		return fg_is_ferry(dst) || fg_is_file(dst);
	return fg_is_file(src) && fg_is_ferry(dst);
}

static void event(struct copy *cp, gfal_event_side_t side, GQuark stage,
		  const char *fmt, ...) G_GNUC_PRINTF(4, 5);

static void event(struct copy *cp, gfal_event_side_t side, GQuark stage,
		  const char *fmt, ...)
{
	char raw[1024], msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	plugin_trigger_event(cp->params, fg_quark(), side, stage, "%s",
			     ferry_escape(raw, msg, sizeof(msg)));
}

/* ---- progress: markers (pull, tpc) and intervals (push) ---------------- */

static void monitor(struct copy *cp, uint64_t bytes, double elapsed,
		    uint64_t rate)
{
	/* the whole copy's timeout: stop at the next progress report */
	if (cp->deadline && g_get_monotonic_time() > cp->deadline) {
		cp->timed_out = true;
		atomic_store(&cp->cancel, true);
	}
	cp->st.status = 0;
	cp->st.bytes_transfered = (size_t)bytes;
	cp->st.transfer_time = (time_t)elapsed;
	cp->st.average_baudrate = elapsed > 0 ? (size_t)(bytes / elapsed) : 0;
	cp->st.instant_baudrate = (size_t)rate;
	plugin_trigger_monitor(cp->params, &cp->st, cp->src_url, cp->dst_url);
}

static void on_marker(const struct ferry_marker *mk, void *arg)
{
	monitor(arg, mk->bytes, mk->elapsed, mk->rate);
}

static void on_interval(const struct ferry_report *r,
			const struct ferry_interval *iv, void *arg)
{
	struct copy *cp = arg;
	double dt = iv->end - iv->start;

	(void)r;
	cp->bytes += iv->bytes;
	monitor(cp, cp->bytes, iv->end,
		dt > 0 ? (uint64_t)(iv->bytes / dt) : 0);
}

static void on_file(const struct ferry_file_result *r, void *arg)
{
	struct copy *cp = arg;

	cp->have_result = true;
	cp->status = r->status;
	cp->adler32 = r->adler32;
	cp->crc32c = r->crc32c;
	g_strlcpy(cp->file_why, r->why ? r->why : "", sizeof(cp->file_why));
}

/* ---- preparation ------------------------------------------------------- */

/* The transfer parameters gfal2 was given. */
static int read_params(struct copy *cp, GError **err)
{
	char type[64] = "", value[512] = "";
	guint streams = gfalt_get_nbstreams(cp->params, NULL);
	guint64 timeout = gfalt_get_timeout(cp->params, NULL);
	char *end;

	if (streams > 0) { /* the copy's own (gfal-copy -n): kept */
		cp->fo.o.streams = streams < FERRY_MAX_STREAMS ? streams :
							       FERRY_MAX_STREAMS;
		cp->fo.o.fixed |= FERRY_FIXED_STREAMS;
	}
	if (timeout > 0 && timeout * 1000 < (guint64)cp->fo.o.timeout_ms)
		cp->fo.o.timeout_ms = (int)(timeout * 1000);
	if (timeout > 0)
		cp->deadline = g_get_monotonic_time() + (gint64)timeout * 1000000;
	cp->force = gfalt_get_replace_existing_file(cp->params, NULL);
	cp->parent = gfalt_get_create_parent_dir(cp->params, NULL);
	cp->strict = gfalt_get_strict_copy_mode(cp->params, NULL);
	if (cp->strict)
		return 0;

	cp->ck_mode = gfalt_get_checksum(cp->params, type, sizeof(type), value,
					 sizeof(value), NULL);
	cp->ck_kind = FERRY_CKSUM_NONE;
	if (cp->ck_mode == GFALT_CHECKSUM_NONE)
		return 0;
	cp->ck_kind = type[0] ? fg_cksum_kind(type) : FERRY_CKSUM_ADLER32;
	if (cp->ck_kind == FERRY_CKSUM_NONE)
		return fg_failf(err, ENOTSUP,
				"checksum type %s is not supported (adler32, crc32c)",
				type);
	if (!value[0])
		return 0;
	errno = 0;
	cp->ck_value = (uint32_t)strtoul(value, &end, 16);
	if (errno || *end || strlen(value) > 8)
		return fg_failf(err, EINVAL,
				"expected checksum %s is not a 32-bit hexadecimal value",
				value);
	cp->ck_expect = true;
	return 0;
}

/* The URLs: which kind of copy, and the paths on each side. */
static int read_urls(struct copy *cp, GError **err)
{
	if (fg_is_ferry(cp->src_url) &&
	    fg_url_parse(cp->src_url, &cp->src, err))
		return -1;
	if (fg_is_ferry(cp->dst_url) &&
	    fg_url_parse(cp->dst_url, &cp->dst, err))
		return -1;
	if (fg_is_file(cp->src_url)) {
		cp->kind = COPY_PUSH;
		g_strlcpy(cp->local, cp->src_url + 7, sizeof(cp->local));
		g_strlcpy(cp->src_path, cp->local, sizeof(cp->src_path));
		return fg_path_split(cp->dst.path, cp->dir, sizeof(cp->dir),
				     cp->name, sizeof(cp->name), err);
	}
	g_strlcpy(cp->src_path, cp->src.path, sizeof(cp->src_path));
	if (fg_is_file(cp->dst_url)) {
		cp->kind = COPY_PULL;
		g_strlcpy(cp->local, cp->dst_url + 7, sizeof(cp->local));
		return fg_path_split(cp->local, cp->dir, sizeof(cp->dir),
				     cp->name, sizeof(cp->name), err);
	}
	cp->kind = COPY_TPC;
	return fg_path_split(cp->dst.path, cp->dir, sizeof(cp->dir), cp->name,
			     sizeof(cp->name), err);
}

/* The source: a regular file; its size for the progress. */
static int check_source(struct copy *cp, GError **err)
{
	struct ferry_remote *c;
	struct ferry_remote_stat r;
	char why[512] = "";
	struct stat st;
	int rc;

	if (cp->kind == COPY_PUSH) {
		if (stat(cp->local, &st))
			return fg_failf(err, errno, "source %s: %s", cp->local,
					strerror(errno));
		if (!S_ISREG(st.st_mode))
			return fg_failf(err, EISDIR,
					"source %s is not a regular file",
					cp->local);
		cp->size = (uint64_t)st.st_size;
		return 0;
	}
	if (fg_connect(&cp->src, &cp->fo, &c, err))
		return -1;
	rc = ferry_remote_stat(c, cp->src.path, &r, why, sizeof(why));
	ferry_remote_close(c);
	if (rc)
		return fg_fail(err, rc, why);
	if (r.type != FERRY_REMOTE_FILE)
		return fg_failf(err, EISDIR, "source %s is not a regular file",
				cp->src_url);
	cp->size = r.size;
	return 0;
}

static int exists(struct copy *cp, bool is_dir, GError **err)
{
	if (is_dir)
		return fg_failf(err, EISDIR,
				"destination %s is a directory", cp->dst_url);
	if (!cp->force)
		return fg_failf(err, EEXIST,
				"destination %s exists and overwrite is not set (gfal-copy -f replaces it)",
				cp->dst_url);
	event(cp, GFAL_EVENT_DESTINATION, GFAL_EVENT_OVERWRITE_DESTINATION,
	      "%s", cp->dst_url);
	return 0;
}

/* A local destination: not there (or -f), its directory made with -p. */
static int check_local_dest(struct copy *cp, GError **err)
{
	struct stat st;

	if (stat(cp->local, &st) == 0)
		return exists(cp, S_ISDIR(st.st_mode), err);
	if (errno != ENOENT)
		return fg_failf(err, errno, "destination %s: %s", cp->local,
				strerror(errno));
	if (cp->parent && g_mkdir_with_parents(cp->dir, 0755))
		return fg_failf(err, errno, "cannot create %s: %s", cp->dir,
				strerror(errno));
	return 0;
}

/* A daemon's destination. A key that may write but not read cannot stat,
 * nor can anyone ask a plain receiver (`ferry recv` without --exports,
 * ENOTSUP): then the copy's own overwrite policy (force or not) decides. */
static int check_remote_dest(struct copy *cp, GError **err)
{
	struct ferry_remote *c;
	struct ferry_remote_stat r;
	char why[512] = "";
	int rc;

	if (fg_connect(&cp->dst, &cp->fo, &c, err))
		return -1;
	rc = ferry_remote_stat(c, cp->dst.path, &r, why, sizeof(why));
	if (rc == 0) {
		ferry_remote_close(c);
		return exists(cp, r.type == FERRY_REMOTE_DIR, err);
	}
	if (rc != -ENOENT && rc != -EACCES && rc != -ENOTSUP) {
		ferry_remote_close(c);
		return fg_fail(err, rc, why);
	}
	rc = 0;
	if (cp->parent && strcmp(cp->dir, "/") != 0) {
		rc = ferry_remote_mkdir(c, cp->dir, 0755, true, why,
					sizeof(why));
		if (rc == -EEXIST)
			rc = 0;
	}
	ferry_remote_close(c);
	return rc ? fg_fail(err, rc, why) : 0;
}

/* ---- the copy and its checks --------------------------------------------- */

static int run(struct copy *cp, char *why, size_t whylen)
{
	char *srcv[1] = { cp->src_path };
	char *namev[1] = { cp->name };
	struct ferry_copy fc = {
		.n = 1,
		.src = srcv,
		.names = namev,
		.dest = cp->dir,
		.cksum = cp->ck_kind,
		.force = cp->force,
		.on_file = on_file,
		.on_marker = on_marker,
		.arg = cp,
	};
	struct ferry_report *rep;
	int rc;

	switch (cp->kind) {
	case COPY_PUSH:
		rep = g_new0(struct ferry_report, 1);
		cp->fo.o.interval = 1.0;
		cp->fo.o.on_interval = on_interval;
		cp->fo.o.arg = cp;
		rc = ferry_remote_push(cp->dst.host, cp->dst.port, &cp->fo.o,
				       &fc, rep, why, whylen);
		g_free(rep);
		return rc;
	case COPY_PULL:
		return ferry_remote_pull(cp->src.host, cp->src.port, &cp->fo.o,
					 &fc, why, whylen);
	default:
		return ferry_remote_tpc(cp->src.host, cp->src.port,
					cp->dst.host, cp->dst.port, &cp->fo.o,
					&fc, why, whylen);
	}
}

/* Remove what the copy wrote (after a checksum the user rejects). */
static void remove_dest(struct copy *cp)
{
	struct ferry_remote *c;
	char why[256];

	if (cp->kind == COPY_PULL) {
		unlink(cp->local);
		return;
	}
	if (fg_connect(&cp->dst, &cp->fo, &c, NULL) == 0) {
		ferry_remote_unlink(c, cp->dst.path, why, sizeof(why));
		ferry_remote_close(c);
	}
}

/* The destination's checksum, read back from its daemon (RECHECK). */
static int recheck(struct copy *cp, uint32_t want, GError **err)
{
	struct ferry_remote *c;
	char why[512] = "";
	uint32_t got;
	int rc;

	if (fg_connect(&cp->dst, &cp->fo, &c, err))
		return -1;
	rc = ferry_remote_cksum(c, cp->dst.path, cp->ck_kind, &got, why,
				sizeof(why));
	ferry_remote_close(c);
	if (rc)
		return fg_fail(err, rc, why);
	if (got != want)
		return fg_failf(err, EIO,
				"checksum mismatch: the destination reads back %s %08x, the source sent %08x",
				ferry_cksum_name(cp->ck_kind), got, want);
	return 0;
}

static int verify(struct copy *cp, GError **err)
{
	const char *kname = ferry_cksum_name(cp->ck_kind);
	gfal_event_side_t side = cp->ck_mode == GFALT_CHECKSUM_SOURCE ?
					 GFAL_EVENT_SOURCE :
					 GFAL_EVENT_DESTINATION;
	uint32_t got;

	if (cp->ck_mode == GFALT_CHECKSUM_NONE)
		return 0;
	event(cp, side, GFAL_EVENT_CHECKSUM_ENTER, "%s", kname);
	if (!cp->have_result)
		return fg_failf(err, EIO, "the copy reported no %s for %s",
				kname, cp->dst_url);
	got = cp->ck_kind == FERRY_CKSUM_CRC32C ? cp->crc32c : cp->adler32;
	if (cp->ck_expect && got != cp->ck_value) {
		remove_dest(cp);
		return fg_failf(err, EIO,
				"checksum mismatch: %s of %s is %08x, expected %08x (the destination was removed)",
				kname, cp->src_url, got, cp->ck_value);
	}
	if (cp->fo.recheck && cp->kind != COPY_PULL &&
	    (cp->ck_mode & GFALT_CHECKSUM_TARGET) && recheck(cp, got, err))
		return -1;
	event(cp, side, GFAL_EVENT_CHECKSUM_EXIT, "%s %08x", kname, got);
	return 0;
}

/* In gfal2's strict copy mode (gfal-copy --just-copy) the destination is
 * not looked at, no parent is made and no checksum is compared: the copy's
 * own overwrite policy still refuses an existing target without force. */
static int prepare(struct copy *cp, GError **err)
{
	if (read_urls(cp, err) || read_params(cp, err) ||
	    check_source(cp, err))
		return -1;
	if (cp->strict)
		return 0;
	if (cp->kind == COPY_PULL)
		return check_local_dest(cp, err);
	return check_remote_dest(cp, err);
}

/* gfal2_cancel from another thread: the copy stops (a push at once, a
 * pull or third-party copy at the source's next marker). */
static void on_cancel(gfal2_context_t ctx, void *arg)
{
	struct copy *cp = arg;

	(void)ctx;
	atomic_store(&cp->cancel, true);
}

int fg_copy(plugin_handle h, gfal2_context_t ctx, gfalt_params_t params,
	    const char *src, const char *dst, GError **err)
{
	static const char *const kinds[] = {
		[COPY_PUSH] = "push",
		[COPY_PULL] = "pull",
		[COPY_TPC] = "third-party copy",
	};
	struct copy *cp = g_new0(struct copy, 1);
	gfal_cancel_token_t tok;
	char why[512] = "";
	int rc = -1;

	cp->params = params;
	cp->ctx = ctx;
	cp->src_url = src;
	cp->dst_url = dst;
	event(cp, GFAL_EVENT_NONE, GFAL_EVENT_PREPARE_ENTER, "%s => %s", src,
	      dst);
	if (fg_opts_load(h, &cp->fo, err) || prepare(cp, err))
		goto out;
	event(cp, GFAL_EVENT_NONE, GFAL_EVENT_PREPARE_EXIT, "%s", kinds[cp->kind]);
	if (gfal2_is_canceled(ctx)) {
		fg_failf(err, ECANCELED, "copy canceled");
		goto out;
	}
	event(cp, GFAL_EVENT_NONE, GFAL_EVENT_TRANSFER_TYPE, "%s",
	      cp->kind == COPY_TPC ? GFAL_TRANSFER_TYPE_PUSH :
				     GFAL_TRANSFER_TYPE_STREAMED);
	event(cp, GFAL_EVENT_NONE, GFAL_EVENT_TRANSFER_ENTER,
	      "%s => %s (%s, %u streams)", src, dst, kinds[cp->kind],
	      cp->fo.o.streams);
	cp->t0 = g_get_monotonic_time();
	cp->fo.o.cancel = &cp->cancel;
	tok = gfal2_register_cancel_callback(ctx, on_cancel, cp);
	rc = run(cp, why, sizeof(why));
	gfal2_remove_cancel_callback(ctx, tok);
	if (rc == -ECANCELED && cp->timed_out) {
		rc = -ETIMEDOUT;
		snprintf(why, sizeof(why),
			 "the copy took longer than its timeout (%llu s)",
			 (unsigned long long)gfalt_get_timeout(params, NULL));
	}
	if (rc == 0 && cp->have_result && cp->status)
		rc = cp->status > 0 ? -cp->status : cp->status;
	if (rc) {
		event(cp, GFAL_EVENT_NONE, GFAL_EVENT_TRANSFER_EXIT, "failed");
		fg_fail(err, rc, why[0] ? why : cp->file_why);
		rc = -1;
		goto out;
	}
	monitor(cp, cp->size, (double)(g_get_monotonic_time() - cp->t0) / 1e6,
		cp->st.instant_baudrate);
	event(cp, GFAL_EVENT_NONE, GFAL_EVENT_TRANSFER_EXIT, "%llu bytes",
	      (unsigned long long)cp->size);
	rc = verify(cp, err);
out:
	g_free(cp);
	return rc;
}
