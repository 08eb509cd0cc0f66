/* What the ferry commands print, in one place: interval and progress
 * lines, summaries and tables as text, and JSON through one small writer
 * (out_json.c). The library's own renderers (ferry_report_json, the
 * ferry_osu_* tables) are public API; the app calls them from here. */
#ifndef FERRY_APP_OUT_H
#define FERRY_APP_OUT_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ferry/doctor.h"
#include "ferry/files.h"
#include "ferry/log.h"
#include "ferry/session.h"
#include "ferry/stats.h"

/* ---- text ---- */

/* ferry_interval_fn printing one line per interval to the FILE in arg. */
void out_interval(const struct ferry_report *r, const struct ferry_interval *iv,
		  void *arg);

/* The human summary of a finished (or failed) session. */
void out_summary(FILE *f, const char *prefix, const struct ferry_report *r);

/* "1.50 GiB" style sizes. */
const char *out_bytes(char *buf, size_t len, double bytes);

/* A bench or recv session's report: JSON (the library's document, with
 * "error" when error is not NULL) or the summary. */
void out_report(FILE *f, const char *prefix, const struct ferry_report *r,
		bool json, const char *error);

/* A report as one line of JSON (JSON Lines: `ferry recv --json` writes
 * one per session), with an "error" member when error is not NULL. */
void out_json_line(FILE *f, const struct ferry_report *r, const char *error);

/* An --osu result as JSON (with "error" when error is not NULL), CSV or
 * the table. */
void out_osu(FILE *f, const struct ferry_osu_result *r, bool json, bool csv,
	     const char *error);

/* One file's result, as send and cp print it on stdout. To a terminal,
 * for people: "adler32:1a2b3c4d  NAME (SIZE)", with " skipped:
 * identical" or " resumed", after clearing the progress line. Otherwise
 * the line `xrdcp -C adler32:print` writes, field for field, so that
 * scripts reading xrdcp's lines read ferry's: "adler32: 1a2b3c4d
 * TARGET SIZE" (the value in hex without leading zeros, TARGET the
 * prefix target then the file's path, SIZE in bytes); nothing with
 * --cksum none. A failure goes to stderr with its reason ("ferry CMD:
 * NAME: WHY"). Names are escaped (the JSON carries them exactly). */
void out_file(const char *cmd, const struct ferry_file_result *r, bool tty,
	      const char *target);

/* The progress line of a transfer: "DONE of TOTAL  files D/T  R Gb/s
 * TAIL", redrawn in place on a tty, else one line each. */
void out_progress(bool tty, uint64_t done, uint64_t total, uint64_t files_done,
		  uint64_t files_total, double gbps, const char *tail);

/* A sender's progress line after interval iv of r: out_progress with
 * the files and bytes done so far, and an ETA from iv's rate. */
void out_send_progress(const struct ferry_report *r,
		       const struct ferry_interval *iv, bool tty);

/* "P of T files published, S skipped, F failed; SIZE in SEC s, R Gb/s" */
void out_files_total(FILE *f, uint64_t published, uint64_t total,
		     uint64_t skipped, uint64_t failed, uint64_t bytes,
		     double seconds);

/* doctor's checks: a line each and its fix, then the counts. */
void out_checks(FILE *f, const struct ferry_check *c, size_t n,
		const unsigned *count);

/* ---- JSON ---- */

/* A JSON writer: members of an object one per line, or all on one line;
 * strings through ferry_json_str (the one escaper); numbers that JSON
 * cannot hold (NaN, infinities) as null. */
#define OUT_JSON_DEPTH 8
struct out_json {
	FILE *f;
	int depth;                    /* containers open */
	struct {
		char close;           /* '}' or ']' */
		bool first;           /* nothing in it yet */
		bool line;            /* its members on one line */
	} at[OUT_JSON_DEPTH];
};

/* Open the document's object (members one per line). */
void out_json_begin(struct out_json *j, FILE *f);
/* Go on inside an object someone else opened at depth, which has
 * members already (ferry_report_json_ex's extra). */
void out_json_resume(struct out_json *j, FILE *f, int depth);
/* An object or array member (key NULL inside an array); one_line: its
 * members on one line. */
void out_json_obj(struct out_json *j, const char *key, bool one_line);
void out_json_arr(struct out_json *j, const char *key, bool one_line);
/* Close the innermost; closing the document ends its line. */
void out_json_end(struct out_json *j);
void out_json_str(struct out_json *j, const char *key, const char *s);
void out_json_strf(struct out_json *j, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void out_json_u64(struct out_json *j, const char *key, uint64_t v);
void out_json_num(struct out_json *j, const char *key, const char *fmt,
		  double v);
void out_json_bool(struct out_json *j, const char *key, bool v);
void out_json_null(struct out_json *j, const char *key);

/* send --json: the file results kept until the document is written. */
struct out_files {
	struct ferry_file_result *v; /* path and why owned */
	size_t n, cap;
};
/* Keep a copy of r. Returns 0 or -ENOMEM. */
int out_files_add(struct out_files *fs, const struct ferry_file_result *r);
void out_files_free(struct out_files *fs);

/* Where send's and cp's file results go: a line each (out_file), or
 * with --json kept for the document. */
struct out_sink {
	bool json;
	bool tty;       /* file and progress lines for people */
	char target[FERRY_ESCAPED_MAX(PATH_MAX + 320)]; /* out_file's */
	struct out_files files;
	int err;        /* -ENOMEM when a result could not be kept */
};

/* s->target, where the files land: ferry://HOST:PORT/DIR/ (DIR below
 * the receiver's root), or with host NULL the local directory dir made
 * absolute; escaped for printing. */
void out_sink_target(struct out_sink *s, const char *host, const char *port,
		     const char *dir);

/* One file's result into s (cmd: "send" or "cp", for an error line). */
void out_sink_file(struct out_sink *s, const char *cmd,
		   const struct ferry_file_result *r);

/* ferry_interval_fn for a sender: out_send_progress; arg: the sink. */
void out_sink_interval(const struct ferry_report *r,
		       const struct ferry_interval *iv, void *arg);

/* The reason to report for err: NULL when there is no error, else why
 * (the library's words) or err's name. */
const char *out_error_text(int err, const char *why);

/* send's document: the session report with "files", one per result,
 * and "error" when error is not NULL. */
void out_send_json(FILE *f, const struct ferry_report *r,
		   const struct out_files *fs, const char *error);

/* doctor's document: checks, summary counts, complete. */
void out_checks_json(FILE *f, const struct ferry_check *c, size_t n,
		     const unsigned *count, bool complete);

#endif
