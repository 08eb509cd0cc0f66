/* rocedump: a decoder with its counters and flows, fed frame by frame or
 * from a capture file (the reader: lib/xport/roce/pcap.c). */
#include <errno.h>
#include <stdlib.h>

#include "rocedump_int.h"
#include "xport/roce/pcap.h"

struct ferry_rocedump {
	uint16_t port;
	struct ferry_rocedump_totals t;
	struct ferry__flows flows;
};

int ferry_rocedump_new(uint16_t port, struct ferry_rocedump **out)
{
	struct ferry_rocedump *d;

	if (!out)
		return -EINVAL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->port = port ? port : FERRY_ROCEDUMP_PORT;
	*out = d;
	return 0;
}

void ferry_rocedump_free(struct ferry_rocedump *d)
{
	if (!d)
		return;
	ferry__flows_free(&d->flows);
	free(d);
}

static void count(struct ferry_rocedump *d, const struct ferry_roce_frame *f)
{
	struct ferry_rocedump_totals *t = &d->t;

	if (f->verdict == FERRY_ROCE_OTHER)
		return;
	t->roce++;
	if (f->verdict == FERRY_ROCE_UNDECODABLE) {
		t->undecodable++;
		return;
	}
	t->decoded++;
	if (f->icrc == FERRY_ROCE_ICRC_OK)
		t->icrc_ok++;
	else if (f->icrc == FERRY_ROCE_ICRC_BAD)
		t->icrc_bad++;
	else
		t->icrc_unchecked++;
}

int ferry_rocedump_add(struct ferry_rocedump *d, const uint8_t *frame,
		       size_t caplen, size_t len, uint64_t ts_ns,
		       struct ferry_roce_frame *out)
{
	int rc;

	if (!d)
		return -EINVAL;
	rc = ferry_rocedump_decode(frame, caplen, len, d->port, out);
	if (rc)
		return rc;
	out->index = ++d->t.frames;
	out->ts_ns = ts_ns;
	count(d, out);
	if (out->verdict != FERRY_ROCE_DECODED)
		return 0;
	rc = ferry__flows_add(&d->flows, out);
	if (rc == -ENOSPC)
		d->t.untracked++;
	else if (rc)
		return rc;
	d->t.flows = d->flows.n;
	return 0;
}

struct reading {
	struct ferry_rocedump *d;
	ferry_rocedump_fn fn;
	void *arg;
};

static int on_frame(const struct ferry_pcap_frame *pf, void *arg)
{
	struct reading *r = arg;
	struct ferry_roce_frame f;
	int rc;

	rc = ferry_rocedump_add(r->d, pf->data, pf->caplen, pf->len,
				pf->ts_ns, &f);
	if (rc || !r->fn)
		return rc;
	return r->fn(&f, pf->data, r->arg);
}

int ferry_rocedump_read(struct ferry_rocedump *d, FILE *f,
			ferry_rocedump_fn fn, void *arg, char *why,
			size_t why_len)
{
	struct reading r = { .d = d, .fn = fn, .arg = arg };

	if (!d || !f)
		return -EINVAL;
	return ferry__pcap_read(f, on_frame, &r, why, why_len);
}

void ferry_rocedump_totals(const struct ferry_rocedump *d,
			   struct ferry_rocedump_totals *t)
{
	*t = d->t;
}

const struct ferry_roce_flow *ferry_rocedump_flow(const struct ferry_rocedump *d,
						  size_t i)
{
	return ferry__flows_get(&d->flows, i);
}
