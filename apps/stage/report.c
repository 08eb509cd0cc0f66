/* ferry-stage's report (report.h). */
#include <errno.h>
#include <inttypes.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../ferry/opts_table.h"
#include "ferry/log.h"
#include "ferry/stats.h"
#include "ferry/sum.h"
#include "report.h"

/* Failure lines the text summary prints at most (--json: all). */
#define STAGE_FAILS_SAID 20

/* What became of one split file, from its ranges. */
struct split_file {
	const struct stage_item *item; /* its first range in the deal */
	unsigned n, published, skipped, failed;
	uint32_t adler32, crc32c;      /* combined from its ranges */
	bool sums_ok;                  /* they match the receiver's */
	bool have_file_sums;
	uint32_t file_adler32, file_crc32c;
	enum { SF_PUBLISHED, SF_SKIPPED, SF_FAILED } status;
	const char *why;
};

struct totals {
	uint64_t files, published, skipped, failed;
	uint64_t bytes, moved, split;
	double seconds;
};

static int by_offset(const void *a, const void *b)
{
	const struct stage_range *x = a, *y = b;

	if (x->file != y->file)
		return x->file < y->file ? -1 : 1;
	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* The first range item of file in the deal. */
static const struct stage_item *split_item(const struct stage_list *all,
					   uint32_t file)
{
	for (size_t i = 0; i < all->n; i++)
		if (all->v[i].split && all->v[i].file == file &&
		    !all->v[i].offset)
			return &all->v[i];
	return NULL;
}

/* Judge every split file from its ranges (sorted by file, offset). */
static size_t judge(struct stage_range *rg, size_t n, const struct stage_list *all,
		    struct split_file *out)
{
	size_t k = 0;

	for (size_t i = 0; i < n;) {
		struct split_file *f = &out[k++];
		size_t j = i;

		memset(f, 0, sizeof(*f));
		f->item = split_item(all, rg[i].file);
		f->adler32 = 1;
		f->crc32c = 0;
		bool sums = true;
		for (; j < n && rg[j].file == rg[i].file; j++) {
			const struct stage_range *r = &rg[j];
			f->n++;
			switch (r->outcome) {
			case STAGE_R_PUBLISHED:
				f->published++;
				f->have_file_sums = true;
				f->file_adler32 = r->file_adler32;
				f->file_crc32c = r->file_crc32c;
				break;
			case STAGE_R_LANDED:
				break;
			case STAGE_R_SKIPPED:
				f->skipped++;
				break;
			default:
				f->failed++;
				sums = false;
			}
			f->adler32 = ferry_adler32_combine(f->adler32,
							   r->adler32,
							   r->length);
			f->crc32c = ferry_crc32c_combine(f->crc32c, r->crc32c,
							 r->length);
		}
		/* every range was dealt: one missing means a rank lost it */
		uint64_t want = f->item && f->item->split ?
			(f->item->size + f->item->split - 1) / f->item->split : 0;
		if (f->n != want) {
			f->failed += f->n < want ? (unsigned)(want - f->n) : 0;
			sums = false;
		}
		f->sums_ok = sums && f->have_file_sums &&
			     f->adler32 == f->file_adler32 &&
			     f->crc32c == f->file_crc32c;
		if (f->failed) {
			f->status = SF_FAILED;
			f->why = "a range failed (listed)";
		} else if (f->published == 1 && f->sums_ok) {
			f->status = SF_PUBLISHED;
		} else if (f->published) {
			f->status = SF_FAILED;
			f->why = f->published > 1 ?
				"published by more than one session" :
				"the receiver's whole-file checksums differ from those combined from the ranges";
		} else if (f->skipped == f->n) {
			f->status = SF_SKIPPED;
		} else {
			f->status = SF_FAILED;
			f->why = "every range is in, but no session published the file";
		}
		i = j;
	}
	return k;
}

/* The next "NAME\0WHY\0" record of fails[0..len) at *at (advanced past
 * it): false at the end, or at a record cut short. */
static bool next_fail(const char *fails, size_t len, size_t *at,
		      const char **name, const char **why)
{
	size_t n, w;

	if (*at >= len)
		return false;
	n = strnlen(fails + *at, len - *at);
	if (*at + n + 1 >= len)
		return false;
	w = strnlen(fails + *at + n + 1, len - *at - n - 1);
	if (*at + n + 1 + w >= len)
		return false;
	*name = fails + *at;
	*why = *name + n + 1;
	*at += n + 1 + w + 1;
	return true;
}

static void human(char *buf, size_t len, uint64_t b)
{
	static const char *const u[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = (double)b;
	int i = 0;

	while (v >= 1024 && i < 4) {
		v /= 1024;
		i++;
	}
	snprintf(buf, len, i ? "%.1f %s" : "%.0f %s", v, u[i]);
}

static void hex(FILE *out, uint32_t v)
{
	fprintf(out, "\"%08" PRIx32 "\"", v);
}

static void print_json(FILE *out, const struct totals *t,
		       const struct cli_args *a, const struct stage_rank *recs,
		       int ranks,
		       const struct split_file *sf, size_t n_sf,
		       const char *fails, size_t fails_len, unsigned n_dest,
		       const char *const *dests)
{
	fprintf(out, "{\n  \"ranks\": %d,\n  \"destinations\": [", ranks);
	for (unsigned d = 0; d < n_dest; d++) {
		fputs(d ? ", " : "", out);
		ferry_json_str(out, dests[d]);
	}
	fprintf(out, "],\n  \"dscp\": %d,\n  \"rate_cap_bps\": %" PRIu64,
		a->c.o.dscp, a->c.o.rate_bps * (uint64_t)ranks);
	fprintf(out,
		",\n  \"files\": %" PRIu64 ",\n  \"split_files\": %" PRIu64
		",\n  \"published\": %" PRIu64 ",\n  \"skipped\": %" PRIu64
		",\n  \"failed\": %" PRIu64 ",\n  \"bytes_total\": %" PRIu64
		",\n  \"bytes_moved\": %" PRIu64
		",\n  \"seconds\": %.3f,\n  \"gbps\": %.3f,\n  \"per_rank\": [",
		t->files, t->split, t->published, t->skipped, t->failed,
		t->bytes, t->moved, t->seconds,
		ferry_gbps(t->moved, t->seconds));
	for (int r = 0; r < ranks; r++) {
		const struct stage_rank *x = &recs[r];
		fprintf(out, "%s\n    {\"rank\": %" PRIu32 ", \"host\": ",
			r ? "," : "", x->rank);
		ferry_json_str(out, x->host);
		fputs(", \"transport\": ", out);
		ferry_json_str(out, x->transport);
		fprintf(out,
			", \"sessions\": %" PRIu32 ", \"files\": %" PRIu64
			", \"ranges\": %" PRIu64 ", \"bytes\": %" PRIu64
			", \"bytes_moved\": %" PRIu64 ", \"published\": %" PRIu64
			", \"skipped\": %" PRIu64 ", \"failed\": %" PRIu64
			", \"seconds\": %.3f, \"gbps\": %.3f, \"error\": ",
			x->sessions, x->files, x->ranges, x->bytes,
			x->bytes_moved, x->published, x->skipped,
			x->failed + x->ranges_failed, x->seconds,
			ferry_gbps(x->bytes_moved, x->seconds));
		if (x->status)
			ferry_json_str(out, x->why);
		else
			fputs("null", out);
		fputc('}', out);
	}
	fputs("\n  ],\n  \"split\": [", out);
	for (size_t i = 0; i < n_sf; i++) {
		const struct split_file *f = &sf[i];
		fputs(i ? ",\n    {\"path\": " : "\n    {\"path\": ", out);
		ferry_json_str(out, f->item ? f->item->name : "?");
		fprintf(out, ", \"size\": %" PRIu64 ", \"ranges\": %u, \"destination\": ",
			f->item ? f->item->size : 0, f->n);
		ferry_json_str(out, f->item ? dests[f->item->dest] : "?");
		fputs(", \"status\": ", out);
		ferry_json_str(out, (const char *const[]){ "published",
			"skipped", "failed" }[f->status]);
		fputs(", \"adler32\": ", out);
		hex(out, f->adler32);
		fputs(", \"crc32c\": ", out);
		hex(out, f->crc32c);
		fputc('}', out);
	}
	fputs("\n  ],\n  \"failures\": [", out);
	const char *name, *why;
	bool any = false;
	for (size_t at = 0; next_fail(fails, fails_len, &at, &name, &why);) {
		fputs(any ? ",\n    {\"path\": " : "\n    {\"path\": ", out);
		ferry_json_str(out, name);
		fputs(", \"why\": ", out);
		ferry_json_str(out, why);
		fputc('}', out);
		any = true;
	}
	for (size_t i = 0; i < n_sf; i++) {
		if (!sf[i].why || sf[i].failed)
			continue;
		fputs(any ? ",\n    {\"path\": " : "\n    {\"path\": ", out);
		ferry_json_str(out, sf[i].item ? sf[i].item->name : "?");
		fputs(", \"why\": ", out);
		ferry_json_str(out, sf[i].why);
		fputc('}', out);
		any = true;
	}
	fputs("\n  ]\n}\n", out);
}

static void print_text(FILE *out, const struct totals *t,
		       const struct cli_args *a, const struct stage_rank *recs,
		       int ranks,
		       const struct split_file *sf, size_t n_sf,
		       const char *fails, size_t fails_len, unsigned n_dest)
{
	char b1[32], b2[32];

	char extra[96] = "";
	int k = 0;

	if (a->c.o.rate_bps)
		k = snprintf(extra, sizeof(extra), "; capped at %.3g Gb/s",
			     (double)(a->c.o.rate_bps * (uint64_t)ranks) / 1e9);
	if (a->c.o.dscp >= 0 && k >= 0 && (size_t)k < sizeof(extra))
		snprintf(extra + k, sizeof(extra) - (size_t)k, "; DSCP %d",
			 a->c.o.dscp);
	human(b1, sizeof(b1), t->bytes);
	fprintf(out,
		"ferry-stage: %d ranks, %u destination%s: %" PRIu64
		" files (%" PRIu64 " split into ranges), %s%s\n",
		ranks, n_dest, n_dest == 1 ? "" : "s", t->files, t->split, b1,
		extra);
	fprintf(out, "%5s  %-16s %-9s %6s %6s %10s %10s %8s %7s %6s\n",
		"rank", "host", "transport", "files", "ranges", "dealt",
		"moved", "seconds", "Gb/s", "failed");
	for (int r = 0; r < ranks; r++) {
		const struct stage_rank *x = &recs[r];
		human(b1, sizeof(b1), x->bytes);
		human(b2, sizeof(b2), x->bytes_moved);
		fprintf(out,
			"%5" PRIu32 "  %-16.16s %-9s %6" PRIu64 " %6" PRIu64
			" %10s %10s %8.2f %7.2f %6" PRIu64 "\n",
			x->rank, x->host, x->transport, x->files, x->ranges, b1,
			b2, x->seconds, ferry_gbps(x->bytes_moved, x->seconds),
			x->failed + x->ranges_failed);
	}
	const char *name, *why;
	unsigned said = 0, more = 0;
	for (size_t at = 0; next_fail(fails, fails_len, &at, &name, &why);) {
		char esc[1024];
		if (said == STAGE_FAILS_SAID) {
			more++;
			continue;
		}
		said++;
		fprintf(stderr, "ferry-stage: failed: %s: %s\n",
			ferry_escape(name, esc, sizeof(esc)), why);
	}
	if (more)
		fprintf(stderr, "ferry-stage: ... and %u more failures (--json lists each)\n",
			more);
	for (size_t i = 0; i < n_sf; i++) {
		char esc[1024];
		if (sf[i].why && !sf[i].failed)
			fprintf(stderr, "ferry-stage: failed: %s: %s\n",
				ferry_escape(sf[i].item ? sf[i].item->name : "?",
					     esc, sizeof(esc)),
				sf[i].why);
	}
	human(b1, sizeof(b1), t->moved);
	fprintf(out,
		"%" PRIu64 " of %" PRIu64 " files published, %" PRIu64
		" skipped, %" PRIu64 " failed; %s moved in %.2f s (%.2f Gb/s)\n",
		t->published, t->files, t->skipped, t->failed, b1, t->seconds,
		ferry_gbps(t->moved, t->seconds));
}

int stage_report(const struct stage_rank *rec, const struct stage_range *rg,
		 size_t n_rg, const char *fails, size_t fails_len,
		 const struct stage_list *all, int ranks, unsigned n_dest,
		 const char *const *dests, const struct cli_args *a)
{
	int me, status = 0, nr = (int)(n_rg * sizeof(*rg)), nf = (int)fails_len;
	struct stage_rank *recs = NULL;
	struct stage_range *rgs = NULL;
	char *fl = NULL;
	int *cr = NULL, *dr = NULL, *cf = NULL, *df = NULL;

	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	stage_idle_barrier(); /* the ranks still sending keep their CPUs */
	if (!me) {
		recs = calloc((size_t)ranks, sizeof(*recs));
		cr = calloc((size_t)ranks, sizeof(int));
		dr = calloc((size_t)ranks, sizeof(int));
		cf = calloc((size_t)ranks, sizeof(int));
		df = calloc((size_t)ranks, sizeof(int));
		if (!recs || !cr || !dr || !cf || !df)
			MPI_Abort(MPI_COMM_WORLD, 1);
	}
	MPI_Gather(rec, (int)sizeof(*rec), MPI_BYTE, recs, (int)sizeof(*rec),
		   MPI_BYTE, 0, MPI_COMM_WORLD);
	MPI_Gather(&nr, 1, MPI_INT, cr, 1, MPI_INT, 0, MPI_COMM_WORLD);
	MPI_Gather(&nf, 1, MPI_INT, cf, 1, MPI_INT, 0, MPI_COMM_WORLD);
	size_t tr = 0, tf = 0;
	if (!me) {
		for (int r = 0; r < ranks; r++) {
			dr[r] = (int)tr;
			df[r] = (int)tf;
			tr += (size_t)cr[r];
			tf += (size_t)cf[r];
		}
		rgs = malloc(tr + 1);
		fl = malloc(tf + 1);
		if (!rgs || !fl)
			MPI_Abort(MPI_COMM_WORLD, 1);
	}
	MPI_Gatherv(rg, nr, MPI_BYTE, rgs, cr, dr, MPI_BYTE, 0, MPI_COMM_WORLD);
	MPI_Gatherv(fails, nf, MPI_BYTE, fl, cf, df, MPI_BYTE, 0,
		    MPI_COMM_WORLD);
	if (!me) {
		size_t n = tr / sizeof(*rgs);
		struct split_file *sf = calloc(n + 1, sizeof(*sf));
		struct totals t = { .files = all->files, .bytes = all->bytes,
				    .split = all->split };

		if (!sf)
			MPI_Abort(MPI_COMM_WORLD, 1);
		qsort(rgs, n, sizeof(*rgs), by_offset);
		size_t n_sf = judge(rgs, n, all, sf);
		for (int r = 0; r < ranks; r++) {
			t.published += recs[r].published;
			t.skipped += recs[r].skipped;
			t.failed += recs[r].failed;
			t.moved += recs[r].bytes_moved;
			if (recs[r].seconds > t.seconds)
				t.seconds = recs[r].seconds;
		}
		/* split files a rank never reported (its session died
		 * before any range): judge counts ranges, not files */
		uint64_t seen = n_sf;
		for (size_t i = 0; i < n_sf; i++) {
			t.published += sf[i].status == SF_PUBLISHED;
			t.skipped += sf[i].status == SF_SKIPPED;
			t.failed += sf[i].status == SF_FAILED;
		}
		if (all->split > seen)
			t.failed += all->split - seen;
		if (a->c.json)
			print_json(stdout, &t, a, recs, ranks, sf, n_sf, fl, tf,
				   n_dest, dests);
		else
			print_text(stdout, &t, a, recs, ranks, sf, n_sf, fl, tf,
				   n_dest);
		fflush(stdout);
		status = t.failed ||
				 t.published + t.skipped != t.files ? 1 : 0;
		free(sf);
	}
	MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
	free(recs);
	free(rgs);
	free(fl);
	free(cr);
	free(dr);
	free(cf);
	free(df);
	return status;
}
