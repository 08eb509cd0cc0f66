/* The commands' JSON: one small writer, and the documents the app
 * writes itself (send's files, doctor's checks). Strings go through
 * ferry_json_str, the library's one escaper. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ferry/error.h"
#include "out.h"

static void push(struct out_json *j, char close, bool one_line)
{
	if (j->depth < OUT_JSON_DEPTH) {
		j->at[j->depth].close = close;
		j->at[j->depth].first = true;
		j->at[j->depth].line = one_line;
	}
	j->depth++;
}

void out_json_begin(struct out_json *j, FILE *f)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
	fputc('{', f);
	push(j, '}', false);
}

void out_json_resume(struct out_json *j, FILE *f, int depth)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
	for (int d = 0; d < depth; d++)
		push(j, '}', false);
	j->at[depth - 1].first = false;
}

/* What goes before a member: its separator and line, then its key. */
static void member(struct out_json *j, const char *key)
{
	int d = j->depth - 1;

	if (j->at[d].line)
		fputs(j->at[d].first ? "" : ", ", j->f);
	else
		fprintf(j->f, "%s\n%*s", j->at[d].first ? "" : ",",
			2 * j->depth, "");
	j->at[d].first = false;
	if (key) {
		ferry_json_str(j->f, key);
		fputs(": ", j->f);
	}
}

void out_json_obj(struct out_json *j, const char *key, bool one_line)
{
	member(j, key);
	fputc('{', j->f);
	push(j, '}', one_line);
}

void out_json_arr(struct out_json *j, const char *key, bool one_line)
{
	member(j, key);
	fputc('[', j->f);
	push(j, ']', one_line);
}

void out_json_end(struct out_json *j)
{
	int d = --j->depth;

	if (!j->at[d].line)
		fprintf(j->f, "\n%*s", 2 * d, "");
	fputc(j->at[d].close, j->f);
	if (d == 0)
		fputc('\n', j->f);
}

void out_json_str(struct out_json *j, const char *key, const char *s)
{
	member(j, key);
	if (s)
		ferry_json_str(j->f, s);
	else
		fputs("null", j->f);
}

void out_json_strf(struct out_json *j, const char *key, const char *fmt, ...)
{
	char buf[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	out_json_str(j, key, buf);
}

void out_json_u64(struct out_json *j, const char *key, uint64_t v)
{
	member(j, key);
	fprintf(j->f, "%llu", (unsigned long long)v);
}

void out_json_num(struct out_json *j, const char *key, const char *fmt,
		  double v)
{
	member(j, key);
	if (v != v || v > 1e300 || v < -1e300)
		fputs("null", j->f);
	else
		fprintf(j->f, fmt, v);
}

void out_json_bool(struct out_json *j, const char *key, bool v)
{
	member(j, key);
	fputs(v ? "true" : "false", j->f);
}

void out_json_null(struct out_json *j, const char *key)
{
	member(j, key);
	fputs("null", j->f);
}

int out_files_add(struct out_files *fs, const struct ferry_file_result *r)
{
	struct ferry_file_result *v = fs->v, *e;

	if (fs->n == fs->cap) {
		size_t cap = fs->cap ? 2 * fs->cap : 64;

		v = realloc(fs->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		fs->v = v;
		fs->cap = cap;
	}
	e = &v[fs->n];
	*e = *r;
	e->path = strdup(r->path);
	e->why = r->why ? strdup(r->why) : NULL;
	if (!e->path || (r->why && !e->why)) {
		free((char *)e->path);
		free((char *)e->why);
		return -ENOMEM;
	}
	fs->n++;
	return 0;
}

void out_files_free(struct out_files *fs)
{
	for (size_t i = 0; i < fs->n; i++) {
		free((char *)fs->v[i].path);
		free((char *)fs->v[i].why);
	}
	free(fs->v);
	memset(fs, 0, sizeof(*fs));
}

static void file_json(struct out_json *j, const struct ferry_file_result *r)
{
	out_json_obj(j, NULL, true);
	out_json_str(j, "path", r->path);
	out_json_u64(j, "bytes", r->size);
	out_json_u64(j, "sent", r->bytes_sent);
	out_json_num(j, "seconds", "%.3f", r->seconds);
	out_json_strf(j, "checksum", "%s:%08x", ferry_cksum_name(r->cksum),
		      r->value);
	out_json_strf(j, "crc32c", "%08x", r->crc32c);
	if (r->cksum == FERRY_CKSUM_ADLER32 || r->skipped)
		out_json_strf(j, "adler32", "%08x", r->adler32);
	else
		out_json_null(j, "adler32");
	out_json_bool(j, "skipped", r->skipped);
	out_json_bool(j, "resumed", r->resumed);
	out_json_bool(j, "ok", !r->status);
	if (r->status)
		out_json_str(j, "error", ferry_strerror(r->status));
	out_json_end(j);
}

struct send_extra {
	const struct out_files *fs;
	const char *error;
};

/* ferry_report_json_ex's extra: the "files" member, and "error". */
static void files_json(FILE *f, void *arg)
{
	const struct send_extra *x = arg;
	struct out_json j;

	out_json_resume(&j, f, 1);
	out_json_arr(&j, "files", false);
	for (size_t i = 0; i < x->fs->n; i++)
		file_json(&j, &x->fs->v[i]);
	out_json_end(&j);
	if (x->error)
		out_json_str(&j, "error", x->error);
}

void out_sink_file(struct out_sink *s, const char *cmd,
		   const struct ferry_file_result *r)
{
	if (!s->json)
		out_file(cmd, r, s->tty, s->target);
	else if (out_files_add(&s->files, r))
		s->err = -ENOMEM;
}

void out_send_json(FILE *f, const struct ferry_report *r,
		   const struct out_files *fs, const char *error)
{
	struct send_extra x = { fs, error };

	ferry_report_json_ex(r, f, files_json, &x);
}

void out_checks_json(FILE *f, const struct ferry_check *c, size_t n,
		     const unsigned *count, bool complete)
{
	struct out_json j;

	out_json_begin(&j, f);
	out_json_arr(&j, "checks", false);
	for (size_t i = 0; i < n; i++) {
		out_json_obj(&j, NULL, true);
		out_json_str(&j, "name", c[i].name);
		out_json_str(&j, "status", ferry_check_status_name(c[i].status));
		out_json_str(&j, "value", c[i].value);
		out_json_str(&j, "fix", c[i].fix);
		out_json_end(&j);
	}
	out_json_end(&j);
	out_json_obj(&j, "summary", true);
	out_json_u64(&j, "pass", count[FERRY_CHECK_PASS]);
	out_json_u64(&j, "warn", count[FERRY_CHECK_WARN]);
	out_json_u64(&j, "fail", count[FERRY_CHECK_FAIL]);
	out_json_u64(&j, "info", count[FERRY_CHECK_INFO]);
	out_json_end(&j);
	out_json_bool(&j, "complete", complete);
	out_json_end(&j);
}
