/* ferry_send: the sending side of a file session. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "ferry/sum.h"
#include "files/files.h"
#include "io/fsx.h"
#include "metrics/metrics.h"
#include "pipe/session.h"
#include "util/util.h"

const char *ferry_cksum_name(enum ferry_cksum c)
{
	return c == FERRY_CKSUM_ADLER32 ? "adler32" :
	       c == FERRY_CKSUM_CRC32C ? "crc32c" : "none";
}

int ferry_cksum_parse(const char *name)
{
	if (!strcmp(name, "adler32"))
		return FERRY_CKSUM_ADLER32;
	if (!strcmp(name, "crc32c"))
		return FERRY_CKSUM_CRC32C;
	if (!strcmp(name, "none"))
		return FERRY_CKSUM_NONE;
	return -1;
}

struct tx_ctx {
	struct ferry__ftx *t;
	struct ferry__pipe *p;
	const struct ferry_send_spec *spec;
	struct ferry_report *rep;
	uint64_t start_ns;
	int first_err;
	char first_why[400];
	struct ferry__batch sums; /* FILE_SUMs not yet sent */
};

/* Set a file's reason (a formatted line; kept only for a file with a
 * status, so a million files that went well carry none). */
__attribute__((format(printf, 2, 3)))
static void file_why(struct ftx_file *f, const char *fmt, ...)
{
	va_list ap;
	char *w = NULL;

	va_start(ap, fmt);
	if (vasprintf(&w, fmt, ap) < 0)
		w = NULL;
	va_end(ap);
	free(f->why);
	f->why = w;
}

static void report_file(struct tx_ctx *c, uint32_t idx)
{
	struct ftx_file *f = &c->t->f[idx];
	const struct ferry_entry *e = &c->t->m.e[idx];
	struct ferry_file_result r = {
		.path = e->path,
		.size = e->size,
		.bytes_sent = f->bytes_sent,
		.seconds = (double)(ferry__now_ns() - c->start_ns) / 1e9,
		.cksum = c->spec->cksum,
		.value = c->spec->cksum == FERRY_CKSUM_CRC32C ? f->crc32c :
								f->adler32,
		.adler32 = f->adler32,
		.crc32c = f->crc32c,
		/* only a file that ended well was skipped or resumed */
		.skipped = f->skip && !f->status,
		.resumed = f->action == FERRY__PLAN_RESUME && !f->status,
		/* a range: published by this session or not; a whole file
		 * (or a range sent whole): when it landed */
		.range = f->range,
		.published = f->split ? f->published && !f->status :
					!f->status && !f->skip,
		.offset = f->offset,
		.length = f->length,
		.file_adler32 = f->split ? f->file_adler : f->adler32,
		.file_crc32c = f->split ? f->file_crc : f->crc32c,
		.status = f->status,
		.why = f->why ? f->why : "",
	};

	f->done = true;
	c->t->results++;
	if (f->status) {
		c->rep->files_failed++;
		if (!c->first_err) {
			c->first_err = f->status;
			snprintf(c->first_why, sizeof(c->first_why), "%.120s: %s",
				 e->path, f->why ? f->why : "");
		}
	} else if (f->skip) {
		c->rep->files_skipped++;
	} else {
		c->rep->files_done++;
		if (r.resumed)
			c->rep->files_resumed++;
	}
	if (c->spec->on_file)
		c->spec->on_file(&r, c->spec->arg);
}

/* The sums of what this session reads of a file: all of it, or its
 * range. */
static void file_sums(const struct ferry__ftx *t, struct ftx_file *f,
		      const struct ferry_entry *e)
{
	ferry__sums_combine(f->sums + f->first, f->count,
			    e->size - f->first * t->chunk, t->chunk,
			    &f->crc32c, &f->adler32);
}

/* Files read to the end: tell the receiver their sums, in batches. */
static int tx_work(void *ctx, int fd, char *why, size_t whylen)
{
	struct tx_ctx *c = ctx;
	struct ferry__ftx *t = c->t;
	uint32_t idx;
	int err = 0;

	ferry__fileq_ack(&t->q);
	/* a bounded slice, so the control loop reads the receiver's answers
	 * in between (client.c, read_msgs) */
	for (int n = 0; !err && n < 1024; n++) {
		if (!ferry__fileq_pop(&t->q, &idx))
			break;
		struct ftx_file *f = &t->f[idx];
		const struct ferry_entry *e = &t->m.e[idx];
		struct ferry_msg_file_sum s = { .idx = idx };

		file_sums(t, f, e);
		s.crc32c = f->crc32c;
		s.adler32 = f->adler32;
		err = ferry__batch_sum(&c->sums, fd, c->p->timeout_ms, &s);
		if (!err && n == 1023)
			ferry__fileq_kick(&t->q); /* more to send: come back */
	}
	if (!err)
		err = ferry__batch_send(&c->sums, fd, c->p->timeout_ms);
	if (err)
		ferry__why(why, whylen, "control channel: %s",
			   ferry_strerror(err));
	return err;
}

/* How one file ended on the receiver (a FILE_DONE, or an entry of a
 * FILE_DONES batch). */
static int one_done(void *arg, const struct ferry_msg *m)
{
	struct tx_ctx *c = arg;
	const struct ferry_msg_file_done *d = &m->u.file_done;
	struct ftx_file *f;

	if (d->idx >= c->t->m.n || c->t->m.e[d->idx].type != FERRY_ENTRY_FILE ||
	    c->t->f[d->idx].done)
		return -FERRY_EPROTO;
	f = &c->t->f[d->idx];
	f->status = d->status ? -d->status : 0;
	if (f->status) {
		file_why(f, "%s", d->text);
	} else {
		free(f->why);
		f->why = NULL;
	}
	if (!f->status && !f->skip &&
	    (d->crc32c != f->crc32c ||
	     (c->spec->cksum == FERRY_CKSUM_ADLER32 && d->adler32 != f->adler32))) {
		f->status = -FERRY_ECRC;
		file_why(f, "the receiver published different checksums");
	}
	report_file(c, d->idx);
	return 0;
}

/* A range of ours completed its file, which the receiver published;
 * the range's FILE_DONE follows. */
static int published(struct tx_ctx *c, const struct ferry_msg_published *p)
{
	struct ftx_file *f;

	if (p->idx >= c->t->m.n || !c->t->f[p->idx].split ||
	    c->t->f[p->idx].done)
		return -FERRY_EPROTO;
	f = &c->t->f[p->idx];
	f->published = true;
	f->file_crc = p->crc32c;
	f->file_adler = p->adler32;
	return 0;
}

static int tx_msg(void *ctx, int fd, const struct ferry_msg *m, char *why,
		  size_t whylen)
{
	int err = m->type == FERRY_MSG_FILE_DONE ? one_done(ctx, m) :
		  m->type == FERRY_MSG_FILE_DONES ?
			  ferry__batch_decode(m, one_done, ctx) :
		  m->type == FERRY_MSG_PUBLISHED ?
			  published(ctx, &m->u.published) :
			  -FERRY_EPROTO;

	(void)fd;
	if (err == -FERRY_EPROTO)
		ferry__why(why, whylen, "unexpected %s from the receiver",
			   ferry__ctrl_type_name(m->type));
	return err;
}

static bool tx_settled(void *ctx)
{
	struct tx_ctx *c = ctx;

	return c->t->results == c->t->m.n_files;
}

/* ---- plan ---------------------------------------------------------- */

struct plan_ctx {
	struct ferry__ftx *t;
	uint8_t **there; /* per file: chunks the receiver already has */
	uint32_t *exists_crc, *exists_adler;
	int err;
};

static int apply_plan(void *arg, const struct ferry__plan_entry *e)
{
	struct plan_ctx *pc = arg;
	struct ferry__ftx *t = pc->t;
	struct ftx_file *f;

	if (e->idx >= t->m.n || t->m.e[e->idx].type != FERRY_ENTRY_FILE)
		return -FERRY_EPROTO;
	f = &t->f[e->idx];
	f->action = e->action;
	if (e->action == FERRY__PLAN_EXISTS) {
		pc->exists_crc[e->idx] = e->crc32c;
		pc->exists_adler[e->idx] = e->adler32;
	} else if (e->action == FERRY__PLAN_FAIL) {
		/* this file alone cannot land; the receiver said why */
		f->skip = true;
		f->status = e->status ? -(int)e->status : -EIO;
		file_why(f, "%s", e->text ? e->text : "refused by the receiver");
	} else if (e->action == FERRY__PLAN_RESUME) {
		uint8_t *th = calloc(f->n_chunks ? f->n_chunks : 1, 1);
		if (!th)
			return -ENOMEM;
		free(pc->there[e->idx]);
		pc->there[e->idx] = th;
		for (uint32_t i = 0; i < e->n_ranges; i++) {
			const struct ferry__range *r = &e->ranges[i];
			/* within what this session reads */
			if (r->first < f->first ||
			    r->first > f->first + f->count ||
			    r->count > f->first + f->count - r->first)
				return -FERRY_EPROTO;
			memset(th + r->first, 1, r->count);
		}
	}
	return 0;
}

/* Read what this session sends of a file (the whole file, or its range)
 * for its sums: skip-existing, and a rerun. */
static int sum_file(struct ferry__ftx *t, uint32_t idx, uint8_t *buf)
{
	const struct ferry_entry *e = &t->m.e[idx];
	struct ftx_file *f = &t->f[idx];
	bool direct = true;
	int fd = ferry__ftx_open(t, e->src, &direct), err = 0;

	if (fd < 0)
		return fd;
	for (uint64_t k = f->first; k < f->first + f->count && !err; k++) {
		uint64_t off = k * t->chunk;
		uint64_t len = e->size - off < t->chunk ? e->size - off : t->chunk;
		if (direct)
			err = pread(fd, buf, (len + 4095) & ~4095ull, (off_t)off) <
					      (ssize_t)len ? -EIO : 0;
		else
			err = ferry__fs_pread_full(fd, buf, len, off);
		f->sums[k].crc32c = ferry_crc32c(0, buf, len);
		f->sums[k].adler32 = ferry_adler32(1, buf, len);
	}
	close(fd);
	file_sums(t, f, e);
	return err;
}

/* A file with chunks to read this session. */
static bool has_units(const struct ferry__ftx *t, size_t i)
{
	return t->m.e[i].type == FERRY_ENTRY_FILE && !t->f[i].skip &&
	       t->f[i].count;
}

/* A file that may travel in a pack: small, one chunk, to be sent, not a
 * range of a split file. */
static bool packable(const struct ferry__ftx *t, uint8_t **there, size_t i)
{
	return has_units(t, i) && t->f[i].n_chunks == 1 && !t->f[i].split &&
	       !(there[i] && there[i][0]) &&
	       t->m.e[i].size <= FTX_PACK_FILE_MAX &&
	       t->m.e[i].size + FERRY_PACK_REC_LEN <= t->chunk;
}

/* Lay out unit u as a pack of the packable files from *next_file on, as
 * many as fit; *next_file moves past them. */
static void build_pack(struct ferry__ftx *t, uint8_t **there, size_t u,
		       uint64_t *next_file, size_t *n_packed)
{
	uint64_t bytes = 0, i = *next_file;
	uint16_t n = 0;

	t->u[u] = (struct ftx_unit){ .file = (uint32_t)*n_packed, .send = 1 };
	for (; i < t->m.n && n < FTX_PACK_FILES; i++) {
		if (!has_units(t, i))
			continue; /* no chunk of its own: not a unit either */
		uint64_t rec = FERRY_PACK_REC_LEN + t->m.e[i].size;
		if (!packable(t, there, i) || bytes + rec > t->chunk)
			break;
		bytes += rec;
		t->packed[(*n_packed)++] = (uint32_t)i;
		t->f[i].bytes_sent = t->m.e[i].size;
		n++;
	}
	t->u[u].n_pack = n;
	*next_file = i;
}

/* Decide each file and lay out the chunks: up to spec->files files in
 * flight, each lane taking the next file when its current one is done;
 * a run of small files is one pack, which a lane takes as one chunk. */
static int build_units(struct ferry__ftx *t, uint8_t **there, unsigned lanes)
{
	uint64_t n = 0, next_file = 0, *cur, *ck;
	size_t u = 0, n_packed = 0;

	for (size_t i = 0; i < t->m.n; i++)
		if (has_units(t, i))
			n += t->f[i].count;
	t->u = calloc(n ? n : 1, sizeof(*t->u));
	t->packed = calloc(t->m.n ? t->m.n : 1, sizeof(*t->packed));
	cur = calloc(lanes, sizeof(*cur));
	ck = calloc(lanes, sizeof(*ck));
	if (!t->u || !t->packed || !cur || !ck) {
		free(cur);
		free(ck);
		return -ENOMEM;
	}
	for (unsigned l = 0; l < lanes; l++)
		cur[l] = UINT64_MAX;
	for (bool progress = true; progress;) {
		progress = false;
		for (unsigned l = 0; l < lanes; l++) {
			bool packed = false;
			while (cur[l] == UINT64_MAX && next_file < t->m.n) {
				if (packable(t, there, next_file)) {
					build_pack(t, there, u++, &next_file,
						   &n_packed);
					packed = true;
					break;
				}
				if (has_units(t, next_file)) {
					cur[l] = next_file;
					ck[l] = t->f[next_file].first;
				}
				next_file++;
			}
			if (packed)
				progress = true;
			if (cur[l] == UINT64_MAX)
				continue;
			struct ftx_file *f = &t->f[cur[l]];
			uint8_t *th = there[cur[l]];
			t->u[u].file = (uint32_t)cur[l];
			t->u[u].chunk = ck[l];
			t->u[u].send = !(th && th[ck[l]]);
			if (t->u[u].send)
				f->bytes_sent += ck[l] + 1 == f->n_chunks ?
					t->m.e[cur[l]].size - ck[l] * t->chunk :
					t->chunk;
			u++;
			if (++ck[l] == f->first + f->count)
				cur[l] = UINT64_MAX;
			progress = true;
		}
	}
	t->n_units = u;
	free(cur);
	free(ck);
	return 0;
}

/* Files in flight: --files, as far as the open-files limit leaves room
 * (each open source is a descriptor; keep 64 for sockets and the rest). */
static unsigned lanes(const struct ferry_send_spec *spec)
{
	unsigned want = spec->files ? spec->files : 1;
	struct rlimit rl;
	long room;

	/* a receiver holds a bounded number of targets at once
	 * (FRX_MAX_CLAIMED): more lanes than that cannot all make progress */
	if (want > FERRY_MAX_FILES)
		want = FERRY_MAX_FILES;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur == RLIM_INFINITY)
		return want;
	room = (long)rl.rlim_cur - ferry__fds_in_use() - 64;
	if (room < (long)want) {
		unsigned got = room > 1 ? (unsigned)room : 1;
		ferry__log(FERRY_LOG_WARN,
			   "%u files in flight instead of %u: the open-files limit (%llu) leaves room for no more",
			   got, want, (unsigned long long)rl.rlim_cur);
		return got;
	}
	return want;
}

/* Send FILES and the manifest; read the plan; decide every file. */
static int exchange_plan(struct tx_ctx *c, int fd, const struct ferry_opts *o,
			 char *why, size_t whylen)
{
	struct ferry__ftx *t = c->t;
	struct plan_ctx pc = { .t = t };
	struct ferry_msg *m = malloc(sizeof(*m));
	uint8_t *buf = NULL;
	size_t next = 0;
	int err = -ENOMEM;

	pc.there = calloc(t->m.n + 1, sizeof(*pc.there));
	pc.exists_crc = calloc(t->m.n + 1, sizeof(uint32_t));
	pc.exists_adler = calloc(t->m.n + 1, sizeof(uint32_t));
	if (!m || !pc.there || !pc.exists_crc || !pc.exists_adler)
		goto out;
	memset(m, 0, sizeof(*m));
	m->type = FERRY_MSG_FILES;
	m->u.files.flags = FERRY_FILES_PACKS |
			   (c->spec->force ? FERRY_FILES_FORCE : 0) |
			   (c->spec->skip_existing ? FERRY_FILES_SKIP_EXISTING : 0) |
			   (c->spec->no_resume ? FERRY_FILES_NO_RESUME : 0) |
			   (t->n_split ? FERRY_FILES_RANGES : 0);
	m->u.files.cksum = c->spec->cksum;
	m->u.files.n_entries = t->m.n;
	snprintf(m->u.files.dest, sizeof(m->u.files.dest), "%s",
		 c->spec->dest ? c->spec->dest : "");
	err = ferry__ctrl_send(fd, m, o->timeout_ms);
	do {
		if (err)
			goto io;
		m->type = FERRY_MSG_MANIFEST;
		m->u.blob.len = (uint32_t)ferry__manifest_encode(
			&t->m, &next, m->u.blob.data, FERRY_BLOB_MAX);
		m->u.blob.last = next == t->m.n;
		err = ferry__ctrl_send(fd, m, o->timeout_ms);
	} while (!m->u.blob.last);
	if (!err && t->n_split)
		err = ferry__ftx_send_ranges(t, fd, m, o->timeout_ms);
	if (err)
		goto io;
	do {
		err = ferry__ctrl_recv(fd, m, o->timeout_ms);
		if (err == -FERRY_EPEER) {
			err = ferry__peer_error(m, "receiver", why, whylen);
			goto out;
		}
		if (err)
			goto io;
		if (m->type != FERRY_MSG_PLAN) {
			err = -FERRY_EPROTO;
			goto io;
		}
		err = ferry__plan_decode(m->u.blob.data, m->u.blob.len,
					 apply_plan, &pc);
		if (err)
			goto io;
	} while (!m->u.blob.last);

	/* skip-existing: compare whole-file sums now, before any data */
	for (size_t i = 0; i < t->m.n; i++) {
		struct ftx_file *f = &t->f[i];
		if (t->m.e[i].type == FERRY_ENTRY_FILE &&
		    f->action == FERRY__PLAN_FAIL)
			report_file(c, (uint32_t)i);
		if (t->m.e[i].type != FERRY_ENTRY_FILE ||
		    f->action != FERRY__PLAN_EXISTS)
			continue;
		if (!buf && !(buf = aligned_alloc(4096, t->chunk + 4096))) {
			err = -ENOMEM;
			goto out;
		}
		err = sum_file(t, (uint32_t)i, buf);
		if (err) {
			ferry__why(why, whylen, "%s: %s", t->m.e[i].src,
				   ferry_strerror(err));
			goto out;
		}
		if (f->crc32c == pc.exists_crc[i] &&
		    f->adler32 == pc.exists_adler[i]) {
			f->skip = true;
		} else if (!c->spec->force) {
			f->skip = true;
			f->status = -EEXIST;
			file_why(f, "the target exists with other contents; use --force to replace it");
		} else {
			f->action = FERRY__PLAN_SEND;
		}
		if (f->skip)
			report_file(c, (uint32_t)i); /* told after READY */
	}
	err = build_units(t, pc.there, lanes(c->spec));
	/* empty files have no chunks: their sums go out with the rest */
	for (size_t i = 0; !err && i < t->m.n; i++)
		if (t->m.e[i].type == FERRY_ENTRY_FILE && !t->f[i].skip &&
		    t->f[i].count == 0)
			ferry__fileq_push(&t->q, (uint32_t)i);
	goto out;
io:
	/* a receiver that refused has said why before hanging up */
	if (err != -FERRY_EPEER && ferry__ctrl_recv(fd, m, 1000) == -FERRY_EPEER)
		err = ferry__peer_error(m, "receiver", why, whylen);
	else
		ferry__why(why, whylen, "exchanging the file list: %s",
			   ferry_strerror(err));
out:
	for (size_t i = 0; pc.there && i < t->m.n; i++)
		free(pc.there[i]);
	free(pc.there);
	free(pc.exists_crc);
	free(pc.exists_adler);
	free(buf);
	free(m);
	return err;
}

static int ftx_init(struct ferry__ftx *t, const struct ferry_send_spec *spec,
		    uint64_t chunk, char *why, size_t whylen)
{
	struct ferry_walk_opts wo = { .follow_symlinks = spec->follow_symlinks,
				      .names = spec->names,
				      .open_source = spec->open_source,
				      .open_arg = spec->open_arg };
	size_t *ent = NULL;
	int err;

	ferry__manifest_init(&t->m);
	t->spec = spec;
	t->chunk = chunk;
	if (spec->ranges && !(wo.arg_entry = ent = calloc(spec->n_paths + 1,
							  sizeof(*ent))))
		return -ENOMEM;
	err = ferry__manifest_walk(&t->m, spec->paths, spec->n_paths, &wo, why,
				   whylen);
	t->f = err ? NULL : calloc(t->m.n + 1, sizeof(*t->f));
	t->open_lock = err ? NULL : calloc(FTX_OPEN_LOCKS,
					   sizeof(*t->open_lock));
	if (!err && (!t->f || !t->open_lock))
		err = -ENOMEM;
	for (size_t i = 0; t->open_lock && i < FTX_OPEN_LOCKS; i++)
		pthread_mutex_init(&t->open_lock[i], NULL);
	for (size_t i = 0; t->f && i < t->m.n; i++) {
		t->f[i].fd = -1;
		t->f[i].action = FERRY__PLAN_SEND;
		t->f[i].sums = &t->f[i].one;
	}
	for (size_t i = 0; !err && i < t->m.n; i++) {
		struct ftx_file *f = &t->f[i];
		const struct ferry_entry *e = &t->m.e[i];

		if (e->type != FERRY_ENTRY_FILE)
			continue;
		f->n_chunks = ferry__journal_chunks(e->size, chunk);
		f->count = f->to_read = f->n_chunks;
		f->length = e->size;
		if (f->n_chunks > 1 &&
		    !(f->sums = calloc(f->n_chunks, sizeof(*f->sums)))) {
			f->sums = &f->one;
			err = -ENOMEM;
		}
	}
	if (!err)
		err = ferry__ftx_ranges(t, spec, ent, why, whylen);
	for (size_t i = 0; !err && i < t->m.n; i++) /* saturating */
		t->bytes = t->f[i].length > UINT64_MAX - t->bytes ?
				   UINT64_MAX : t->bytes + t->f[i].length;
	free(ent);
	return err ? err : ferry__fileq_init(&t->q, t->m.n);
}

static void ftx_free(struct ferry__ftx *t)
{
	for (size_t i = 0; t->f && i < t->m.n; i++) {
		if (t->f[i].fd >= 0)
			close(t->f[i].fd);
		if (t->f[i].sums != &t->f[i].one)
			free(t->f[i].sums);
		free(t->f[i].why);
	}
	for (size_t i = 0; t->open_lock && i < FTX_OPEN_LOCKS; i++)
		pthread_mutex_destroy(&t->open_lock[i]);
	free(t->open_lock);
	free(t->f);
	free(t->u);
	free(t->packed);
	ferry__fileq_free(&t->q);
	ferry__manifest_free(&t->m);
}

/* No bigger a chunk than the largest file needs (rounded up to 64 KiB),
 * and no smaller than FTX_PACK_CHUNK: 100,000 files of 4 KiB do not need
 * 4 MiB slots, whose ring is a quarter of a gigabyte to zero and pin on
 * each side, but their packs want room for a few dozen files each. Every
 * file of one chunk at --chunk-size stays one chunk at this size. */
#define FTX_PACK_CHUNK (256u << 10)
static uint64_t chunk_for(const struct ferry_opts *o,
			  const struct ferry_manifest *m)
{
	uint64_t big = 0, c;

	for (size_t i = 0; i < m->n; i++)
		if (m->e[i].type == FERRY_ENTRY_FILE && m->e[i].size > big)
			big = m->e[i].size;
	c = (big + (64u << 10) - 1) & ~(uint64_t)((64u << 10) - 1);
	if (c < FTX_PACK_CHUNK)
		c = FTX_PACK_CHUNK;
	return c < o->chunk_size ? c : o->chunk_size;
}

/* No bigger a ring than the files can fill: a 10 MB file does not need
 * 64 slots of 4 MiB on each side (allocating and pinning them costs more
 * than sending it). At least one slot per stream, a multiple of streams. */
static unsigned ring_slots(const struct ferry_opts *o, uint64_t total)
{
	uint64_t need = (total + o->chunk_size - 1) / o->chunk_size;

	if (need < o->streams)
		need = o->streams;
	need = (need + o->streams - 1) / o->streams * o->streams;
	return need < o->slots ? (unsigned)need : o->slots;
}

int ferry_send(const char *host, const char *port, const struct ferry_opts *o,
	       const struct ferry_send_spec *spec, struct ferry_report *rep,
	       char *why, size_t whylen)
{
	struct ferry__ftx t = { 0 };
	struct ferry__pipe p = { .role = FERRY__SENDER,
				 .timeout_ms = o->timeout_ms,
				 .dp = &ferry__files_tx_dp,
				 .dp_ctx = &t };
	struct tx_ctx c = { .t = &t, .p = &p, .spec = spec, .rep = rep };
	struct ferry__hooks h = { .work = tx_work, .msg = tx_msg,
				  .settled = tx_settled, .ctx = &c };
	struct ferry_xport_attr xa = { 0 };
	struct ferry__xscan xs = { 0 };
	struct ferry_opts so;
	int fd = -1, err;

	memset(rep, 0, sizeof(*rep));
	rep->peer_cpu_user = rep->peer_cpu_sys = -1;
	rep->numa_node = -1;
	rep->dscp = -1;
	if (why && whylen)
		why[0] = 0;
	t.q.efd = -1;
	err = ferry__opts_check(o, &xs, why, whylen);
	if (err)
		return err;
	ferry__metrics_session_begin(FERRY__M_SENDER);
	err = ferry__batch_init(&c.sums, FERRY_MSG_FILE_SUMS);
	if (!err)
		err = ftx_init(&t, spec, o->chunk_size, why, whylen);
	if (err)
		goto out;
	so = *o;
	so.chunk_size = chunk_for(o, &t.m);
	t.chunk = so.chunk_size; /* the session's, which packs fill */
	so.slots = ring_slots(&so, t.bytes);
	o = &so;
	rep->files_total = t.m.n_files;
	rep->bytes_total = rep->test_bytes = t.bytes;
	h.wake_fd = t.q.efd;
	err = ferry__client_open(host, port, o, &fd, &xa, rep, why, whylen);
	if (err)
		goto out;
	c.start_ns = ferry__now_ns();
	err = ferry__client_propose(fd, o, &xa, &xs, FERRY_MODE_FILES,
				    t.bytes, why, whylen);
	if (!err)
		err = exchange_plan(&c, fd, o, why, whylen);
	if (!err)
		err = ferry__client_connect(&p, fd, o, &xa, &xs, rep, why,
					    whylen);
	/* files not sent: the receiver may close them now */
	for (size_t i = 0; !err && i < t.m.n; i++) {
		struct ferry_msg_file_sum s = { (uint32_t)i, FERRY_FILE_SUM_SKIP,
						t.f[i].crc32c, t.f[i].adler32 };
		if (t.f[i].skip && t.f[i].action != FERRY__PLAN_FAIL)
			err = ferry__batch_sum(&c.sums, fd, o->timeout_ms, &s);
	}
	if (!err)
		err = ferry__batch_send(&c.sums, fd, o->timeout_ms);
	if (!err)
		err = ferry__client_run(&p, fd, o, &h, rep, why, whylen);
	if (!err && c.first_err) {
		err = c.first_err;
		ferry__why(why, whylen, "%s", c.first_why);
	}
out:
	ferry__pipe_free(&p);
	if (fd >= 0)
		close(fd);
	ftx_free(&t);
	ferry__batch_free(&c.sums);
	ferry__metrics_files(FERRY__M_SENDER, rep);
	ferry__metrics_session_end(FERRY__M_SENDER, err);
	return err;
}
