/* rocedump: decoded frames summed per flow, and the PSN sequence of each
 * flow's requests (what is counted: ferry/rocedump.h, struct
 * ferry_roce_flow).
 *
 * A flow is keyed by IP version, source and destination address,
 * destination QP and, for datagrams (a DETH), the source QP: on RC, UC
 * and XRC one QP talks to one peer QP, but many UD senders reach QP 1,
 * each with its own PSNs. Flows live in a growing array in the order they
 * were first seen, found through an open-addressing hash of indices kept
 * at most half full.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rocedump_int.h"

struct ferry__flow {
	struct ferry_roce_flow f;
	bool seen;      /* a request's PSN is known */
	uint32_t next;  /* the next request PSN due */
	uint32_t slack; /* PSNs past next that are in order too (READ) */
};

static bool same(const struct ferry_roce_flow *a,
		 const struct ferry_roce_flow *b)
{
	return a->ip_version == b->ip_version && a->dest_qp == b->dest_qp &&
	       a->src_qp == b->src_qp &&
	       !memcmp(a->src_ip, b->src_ip, sizeof(a->src_ip)) &&
	       !memcmp(a->dst_ip, b->dst_ip, sizeof(a->dst_ip));
}

/* FNV-1a over the key. */
static uint32_t hash(const struct ferry_roce_flow *k)
{
	uint32_t h = 2166136261u;
	uint8_t b[2 * 16 + 9];

	memcpy(b, k->src_ip, 16);
	memcpy(b + 16, k->dst_ip, 16);
	for (int i = 0; i < 4; i++) {
		b[32 + i] = (uint8_t)(k->dest_qp >> (8 * i));
		b[36 + i] = (uint8_t)(k->src_qp >> (8 * i));
	}
	b[40] = k->ip_version;
	for (size_t i = 0; i < sizeof(b); i++)
		h = (h ^ b[i]) * 16777619u;
	return h;
}

/* The slot holding key k, or the empty one where it would go. */
static uint32_t *find(const struct ferry__flows *t,
		      const struct ferry_roce_flow *k)
{
	size_t mask = t->nslot - 1, i = hash(k) & mask;

	while (t->slot[i] && !same(&t->v[t->slot[i] - 1].f, k))
		i = (i + 1) & mask;
	return &t->slot[i];
}

static int grow_slots(struct ferry__flows *t)
{
	size_t n = t->nslot ? 2 * t->nslot : 64;
	uint32_t *old = t->slot;
	size_t nold = t->nslot;

	t->slot = calloc(n, sizeof(*t->slot));
	if (!t->slot) {
		t->slot = old;
		return -ENOMEM;
	}
	t->nslot = n;
	for (size_t i = 0; i < nold; i++)
		if (old[i])
			*find(t, &t->v[old[i] - 1].f) = old[i];
	free(old);
	return 0;
}

/* A new flow for key k, indexed (the index grows as needed). */
static struct ferry__flow *insert(struct ferry__flows *t,
				  const struct ferry_roce_flow *k, int *rc)
{
	if (t->n == FERRY_ROCEDUMP_MAX_FLOWS) {
		*rc = -ENOSPC;
		return NULL;
	}
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 64;
		struct ferry__flow *v = realloc(t->v, cap * sizeof(*v));

		if (!v) {
			*rc = -ENOMEM;
			return NULL;
		}
		t->v = v;
		t->cap = cap;
	}
	if (2 * (t->n + 1) > t->nslot && (*rc = grow_slots(t)) != 0)
		return NULL;
	struct ferry__flow *fl = &t->v[t->n];
	memset(fl, 0, sizeof(*fl));
	fl->f = *k;
	*find(t, k) = (uint32_t)++t->n;
	return fl;
}

/* PSNs a request takes: 1, or for an RDMA READ request as many as its
 * responses, from len/4096 to len/256 rounded up (the path MTU is not in
 * the capture). */
static void psn_span(const struct ferry_roce_frame *f, uint32_t *lo,
		     uint32_t *hi)
{
	struct ferry__ibop op;
	const char *why;

	*lo = *hi = 1;
	if (!ferry__ibop(f->opcode, &op, &why) ||
	    !(op.flags & FERRY__IBOP_READ) || f->dma_len == 0)
		return;
	*lo = (uint32_t)(((uint64_t)f->dma_len + 4095) / 4096);
	*hi = (uint32_t)(((uint64_t)f->dma_len + 255) / 256);
}

static void request(struct ferry__flow *fl, const struct ferry_roce_frame *f)
{
	uint32_t lo, hi;
	int32_t d = 0;

	psn_span(f, &lo, &hi);
	if (fl->seen) {
		/* 24-bit distance, signed: [-2^23, 2^23) */
		d = (int32_t)((f->psn - fl->next) << 8) >> 8;
		if (d < 0) {
			fl->f.retransmits++;
			return;
		}
		if ((uint32_t)d > fl->slack)
			fl->f.psn_gaps++;
	}
	fl->seen = true;
	fl->next = (f->psn + lo) & 0xffffff;
	fl->slack = hi - lo;
}

static void count(struct ferry__flow *fl, const struct ferry_roce_frame *f)
{
	struct ferry__ibop op;
	const char *why;

	if (!fl->f.frames)
		fl->f.first_ns = f->ts_ns;
	fl->f.frames++;
	fl->f.last_ns = f->ts_ns;
	if (!ferry__ibop(f->opcode, &op, &why))
		return;
	if (op.flags & FERRY__IBOP_CNP) {
		fl->f.cnps++;
		return;
	}
	fl->f.payload_bytes += f->payload_len;
	if (op.flags & FERRY__IBOP_REQ)
		request(fl, f);
	if (f->hdrs & FERRY_ROCE_H_AETH && f->ack == FERRY_ROCE_NAK)
		fl->f.naks++;
	if (f->hdrs & FERRY_ROCE_H_AETH && f->ack == FERRY_ROCE_RNR_NAK)
		fl->f.rnr_naks++;
}

int ferry__flows_add(struct ferry__flows *t, const struct ferry_roce_frame *f)
{
	struct ferry_roce_flow k = {
		.ip_version = f->ip_version,
		.dest_qp = f->dest_qp,
		.src_qp = f->hdrs & FERRY_ROCE_H_DETH ? f->src_qp
						      : FERRY_ROCE_NO_QP,
	};
	struct ferry__flow *fl = NULL;
	int rc = 0;

	memcpy(k.src_ip, f->src_ip, sizeof(k.src_ip));
	memcpy(k.dst_ip, f->dst_ip, sizeof(k.dst_ip));
	if (t->nslot) {
		uint32_t *s = find(t, &k);

		if (*s)
			fl = &t->v[*s - 1];
	}
	if (!fl && !(fl = insert(t, &k, &rc)))
		return rc;
	count(fl, f);
	return 0;
}

const struct ferry_roce_flow *ferry__flows_get(const struct ferry__flows *t,
					       size_t i)
{
	return i < t->n ? &t->v[i].f : NULL;
}

void ferry__flows_free(struct ferry__flows *t)
{
	free(t->v);
	free(t->slot);
	memset(t, 0, sizeof(*t));
}
