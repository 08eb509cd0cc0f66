/* The sending side of split files: which paths are a range of a file
 * (ferry_send_spec.ranges), checked against the file and the session's
 * chunk size, and the RANGES batches that tell the receiver so. */
#include <errno.h>
#include <stdlib.h>

#include "files/files.h"
#include "util/util.h"

/* Path arg (manifest entry i, SIZE_MAX for none) is sent as range rg:
 * check it and read only its chunks. A range that covers the whole file
 * is sent whole (there is nothing to share), and reported as a range. */
static int set_range(struct ferry__ftx *t, size_t i, const char *arg,
		     const struct ferry_send_range *rg, char *why,
		     size_t whylen)
{
	const struct ferry_entry *e = i < t->m.n ? &t->m.e[i] : NULL;
	struct ferry__span sp;
	struct ftx_file *f;

	if (!e || e->type != FERRY_ENTRY_FILE) {
		ferry__why(why, whylen, "%s: only a regular file can be sent in ranges",
			   arg);
		return -EINVAL;
	}
	f = &t->f[i];
	if (rg->split % t->chunk) {
		ferry__why(why, whylen,
			   "%s: a range's split (%llu bytes) must be a multiple of the chunk size (%llu bytes)",
			   arg, (unsigned long long)rg->split,
			   (unsigned long long)t->chunk);
		return -EINVAL;
	}
	if (rg->offset % rg->split || (rg->offset && rg->offset >= e->size)) {
		ferry__why(why, whylen,
			   "%s: no range at offset %llu: ranges start at multiples of the split (%llu bytes) below the size (%llu bytes)",
			   arg, (unsigned long long)rg->offset,
			   (unsigned long long)rg->split,
			   (unsigned long long)e->size);
		return -EINVAL;
	}
	f->range = true;
	if (rg->split >= e->size)
		return 0; /* the one range: the whole file */
	ferry__span_of(e->size, rg->offset, rg->split, t->chunk, &sp);
	f->split = rg->split;
	f->offset = sp.off;
	f->length = sp.len;
	f->first = sp.first;
	f->count = f->to_read = sp.count;
	t->n_split++;
	return 0;
}

/* Which manifest entries spec->ranges make ranges. */
int ferry__ftx_ranges(struct ferry__ftx *t, const struct ferry_send_spec *spec,
		      const size_t *ent, char *why, size_t whylen)
{
	int err = 0;

	for (size_t i = 0; spec->ranges && i < spec->n_paths && !err; i++) {
		const struct ferry_send_range *rg = &spec->ranges[i];
		if (!rg->split && rg->offset) {
			ferry__why(why, whylen,
				   "%s: a range at offset %llu needs a split",
				   spec->paths[i],
				   (unsigned long long)rg->offset);
			err = -EINVAL;
		} else if (rg->split) {
			err = set_range(t, ent[i], spec->paths[i], rg, why,
					whylen);
		}
	}
	return err;
}

/* RANGES: the files sent as ranges of a split file, after the manifest. */
int ferry__ftx_send_ranges(const struct ferry__ftx *t, int fd,
			   struct ferry_msg *m, int timeout_ms)
{
	struct ferry__file_range *e = calloc(t->n_split, sizeof(*e));
	size_t n = 0, next = 0;
	int err = 0;

	if (!e)
		return -ENOMEM;
	for (size_t i = 0; i < t->m.n; i++)
		if (t->f[i].split)
			e[n++] = (struct ferry__file_range){
				(uint32_t)i, t->f[i].offset, t->f[i].split };
	do {
		m->type = FERRY_MSG_RANGES;
		m->u.blob.len = (uint32_t)ferry__ranges_encode(
			e, n, &next, m->u.blob.data, FERRY_BLOB_MAX);
		m->u.blob.last = next == n;
		err = ferry__ctrl_send(fd, m, timeout_ms);
	} while (!err && !m->u.blob.last);
	free(e);
	return err;
}
