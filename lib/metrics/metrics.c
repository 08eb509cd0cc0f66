/* The process-wide metrics registry: live pipelines, retired totals,
 * session and file outcomes, the families transports count, goodput
 * samples. One mutex; every call is control path (per session, pipeline
 * or scrape).
 *
 * Goodput is what moves now, so it reads 0 whenever nothing can be
 * moving it: once the last live pipeline of a transport and direction is
 * detached (and its last sample is forgotten, so the bytes the pipeline
 * moved after that sample never show as a rate), and when the last sample
 * is older than FERRY__M_STALE_NS (nobody samples). */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ferry/error.h"
#include "metrics/metrics.h"
#include "util/util.h"

struct live {
	struct live *next;
	const void *ctx;
	unsigned xi; /* index into reg.x */
	enum ferry__m_dir dir;
	ferry__m_read_fn read;
};

struct sample {
	uint64_t t_ns, bytes;
};

static struct {
	pthread_mutex_t lock;
	struct live *live;
	struct ferry__m_snap s;       /* retired totals and the rest */
	struct sample last[FERRY__M_MAX_XPORT][2];
	uint64_t sampled_ns;          /* the last sample, 0: none */
} reg = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* The transport's slot, made when new. Caller holds the lock. */
static int xport_index(const char *name)
{
	for (unsigned i = 0; i < reg.s.n_xport; i++)
		if (strcmp(reg.s.x[i].name, name) == 0)
			return (int)i;
	if (reg.s.n_xport == FERRY__M_MAX_XPORT)
		return -ENOSPC;
	snprintf(reg.s.x[reg.s.n_xport].name, sizeof(reg.s.x[0].name), "%s",
		 name);
	return (int)reg.s.n_xport++;
}

static void add_pipe(struct ferry__m_pipe *to, const struct ferry__m_pipe *v)
{
	to->bytes += v->bytes;
	to->chunks += v->chunks;
	to->stalls += v->stalls;
	to->crc_errors += v->crc_errors;
	to->streams += v->streams;
}

int ferry__metrics_attach(const void *ctx, const char *transport,
			  enum ferry__m_dir dir, ferry__m_read_fn read)
{
	struct live *l = calloc(1, sizeof(*l));
	int xi;

	if (!l)
		return -ENOMEM;
	pthread_mutex_lock(&reg.lock);
	xi = xport_index(transport && transport[0] ? transport : "none");
	if (xi < 0) {
		pthread_mutex_unlock(&reg.lock);
		free(l);
		return xi;
	}
	*l = (struct live){ .next = reg.live, .ctx = ctx, .xi = (unsigned)xi,
			    .dir = dir, .read = read };
	reg.s.x[xi].used[dir] = true;
	reg.live = l;
	pthread_mutex_unlock(&reg.lock);
	return 0;
}

/* Is a pipeline of transport xi in direction dir still live? Caller
 * holds the lock. */
static bool any_live(unsigned xi, enum ferry__m_dir dir)
{
	for (struct live *l = reg.live; l; l = l->next)
		if (l->xi == xi && l->dir == dir)
			return true;
	return false;
}

void ferry__metrics_detach(const void *ctx)
{
	struct live **pp, *l = NULL;
	struct ferry__m_pipe v = { 0 };

	pthread_mutex_lock(&reg.lock);
	for (pp = &reg.live; *pp; pp = &(*pp)->next)
		if ((*pp)->ctx == ctx) {
			l = *pp;
			*pp = l->next;
			break;
		}
	if (l) {
		l->read(l->ctx, &v);
		v.streams = 0; /* a retired pipeline runs none */
		add_pipe(&reg.s.x[l->xi].v[l->dir], &v);
		if (!any_live(l->xi, l->dir)) {
			reg.s.x[l->xi].goodput[l->dir] = 0;
			reg.last[l->xi][l->dir] = (struct sample){ 0 };
		}
	}
	pthread_mutex_unlock(&reg.lock);
	free(l);
}

void ferry__metrics_session_begin(enum ferry__m_role role)
{
	pthread_mutex_lock(&reg.lock);
	reg.s.sessions_active[role]++;
	pthread_mutex_unlock(&reg.lock);
}

void ferry__metrics_session_end(enum ferry__m_role role, int err)
{
	pthread_mutex_lock(&reg.lock);
	if (reg.s.sessions_active[role])
		reg.s.sessions_active[role]--;
	if (err) {
		reg.s.sessions_err[role]++;
		reg.s.errors[role][ferry__metrics_err_class(err)]++;
	} else {
		reg.s.sessions_ok[role]++;
	}
	pthread_mutex_unlock(&reg.lock);
}

void ferry__metrics_files(enum ferry__m_role role,
			  const struct ferry_report *rep)
{
	pthread_mutex_lock(&reg.lock);
	reg.s.files_published[role] += rep->files_done;
	reg.s.files_skipped[role] += rep->files_skipped;
	reg.s.files_failed[role] += rep->files_failed;
	reg.s.files_resumed[role] += rep->files_resumed;
	pthread_mutex_unlock(&reg.lock);
}

void ferry__metrics_file_cksum_fail(void)
{
	pthread_mutex_lock(&reg.lock);
	reg.s.file_cksum_fail++;
	pthread_mutex_unlock(&reg.lock);
}

/* f's index, the family made when new. Caller holds the lock. */
static int family_index(const struct ferry__m_family *f)
{
	struct ferry__m_families *s = &reg.s.fam;

	for (unsigned i = 0; i < s->n_family; i++)
		if (s->family[i] == f || strcmp(s->family[i]->name, f->name) == 0)
			return (int)i;
	if (s->n_family == FERRY__M_MAX_FAMILIES)
		return -ENOSPC;
	s->family[s->n_family] = f;
	return (int)s->n_family++;
}

/* The series of family fi with values, made when new. Caller holds the
 * lock. */
static struct ferry__m_series *series(unsigned fi, const char *const *values,
				      unsigned n_labels)
{
	struct ferry__m_families *s = &reg.s.fam;
	struct ferry__m_series *t;

	for (unsigned i = 0; i < s->n_series; i++) {
		unsigned k = 0;

		t = &s->series[i];
		while (t->family == fi && k < n_labels &&
		       strcmp(t->values[k], values[k]) == 0)
			k++;
		if (t->family == fi && k == n_labels)
			return t;
	}
	if (s->n_series == FERRY__M_MAX_SERIES)
		return NULL;
	t = &s->series[s->n_series++];
	*t = (struct ferry__m_series){ .family = fi };
	for (unsigned k = 0; k < n_labels; k++)
		snprintf(t->values[k], sizeof(t->values[k]), "%s", values[k]);
	return t;
}

/* Caller holds the lock. */
static int add(const struct ferry__m_family *f, const char *const *values,
	       uint64_t n)
{
	struct ferry__m_series *t;
	unsigned n_labels = 0;
	int fi;

	if (!f->name || !f->name[0])
		return -EINVAL;
	while (n_labels < FERRY__M_MAX_LABELS && f->labels[n_labels]) {
		if (!values || !values[n_labels] ||
		    strlen(values[n_labels]) >= FERRY__M_VALUE_MAX)
			return -EINVAL;
		n_labels++;
	}
	fi = family_index(f);
	if (fi < 0)
		return fi;
	t = series((unsigned)fi, values, n_labels);
	if (!t)
		return -ENOSPC;
	t->v += n;
	return 0;
}

int ferry__metrics_add(const struct ferry__m_family *f,
		       const char *const *values, uint64_t n)
{
	int err;

	pthread_mutex_lock(&reg.lock);
	err = add(f, values, n);
	pthread_mutex_unlock(&reg.lock);
	return err;
}

int ferry__metrics_add_set(const struct ferry_metric_set *set,
			   const void *from)
{
	int err = 0;

	pthread_mutex_lock(&reg.lock);
	for (unsigned i = 0; i < set->n; i++) {
		const struct ferry__m_counter *c = &set->c[i];
		uint64_t n = 0;
		int e;

		if (from)
			memcpy(&n, (const char *)from + c->off, sizeof(n));
		e = add(c->family, c->values, n);
		if (!err)
			err = e;
	}
	pthread_mutex_unlock(&reg.lock);
	return err;
}

void ferry__metrics_netdev(const char *ifname)
{
	pthread_mutex_lock(&reg.lock);
	for (unsigned i = 0; i < reg.s.n_netdev; i++)
		if (strcmp(reg.s.netdev[i], ifname) == 0)
			goto out;
	if (reg.s.n_netdev < FERRY__M_MAX_NETDEV && ifname[0] &&
	    strlen(ifname) < sizeof(reg.s.netdev[0]))
		snprintf(reg.s.netdev[reg.s.n_netdev++],
			 sizeof(reg.s.netdev[0]), "%s", ifname);
out:
	pthread_mutex_unlock(&reg.lock);
}

enum ferry__m_class ferry__metrics_err_class(int err)
{
	switch (-err) {
	case FERRY_EAUTH:
	case FERRY_EKEY:
		return FERRY__M_AUTH;
	case FERRY_ETIMEOUT:
	case ETIMEDOUT:
		return FERRY__M_TIMEOUT;
	case FERRY_EPEER:
	case FERRY_ECLOSED:
	case ECONNRESET:
	case ECONNABORTED:
	case EPIPE:
		return FERRY__M_PEER;
	case ECONNREFUSED:
	case EHOSTUNREACH:
	case ENETUNREACH:
	case ENETDOWN:
	case EADDRNOTAVAIL:
	case EADDRINUSE:
		return FERRY__M_NETWORK;
	case FERRY_EPROTO:
	case FERRY_EVERSION:
	case FERRY_ETOOBIG:
	case FERRY_EBOUNDS:
		return FERRY__M_PROTOCOL;
	case FERRY_ENEGOTIATE:
	case FERRY_ENOXPORT:
	case ENOTSUP:
		return FERRY__M_NEGOTIATE;
	case FERRY_ECRC:
		return FERRY__M_CHECKSUM;
	case EIO:
	case ENOSPC:
	case EDQUOT:
	case EFBIG:
	case EROFS:
	case EACCES:
	case EPERM:
	case ENOENT:
	case EEXIST:
	case EISDIR:
	case ENOTDIR:
	case ESTALE:
		return FERRY__M_IO;
	case ENOMEM:
	case EMFILE:
	case ENFILE:
	case EAGAIN:
		return FERRY__M_RESOURCE;
	case ECANCELED:
	case EINTR:
		return FERRY__M_CANCELLED;
	default:
		return FERRY__M_OTHER;
	}
}

const char *const ferry__m_class_names[FERRY__M_CLASSES] = {
	[FERRY__M_AUTH] = "auth",
	[FERRY__M_TIMEOUT] = "timeout",
	[FERRY__M_PEER] = "peer",
	[FERRY__M_NETWORK] = "network",
	[FERRY__M_PROTOCOL] = "protocol",
	[FERRY__M_NEGOTIATE] = "negotiate",
	[FERRY__M_CHECKSUM] = "checksum",
	[FERRY__M_IO] = "io",
	[FERRY__M_RESOURCE] = "resource",
	[FERRY__M_CANCELLED] = "cancelled",
	[FERRY__M_OTHER] = "other",
};

const char *ferry__metrics_err_name(enum ferry__m_class c)
{
	return c < FERRY__M_CLASSES ? ferry__m_class_names[c] : "other";
}

/* Retired totals plus every live pipeline. Caller holds the lock. */
static void current(struct ferry__m_snap *s)
{
	*s = reg.s;
	for (struct live *l = reg.live; l; l = l->next) {
		struct ferry__m_pipe v = { 0 };

		l->read(l->ctx, &v);
		add_pipe(&s->x[l->xi].v[l->dir], &v);
	}
}

void ferry__metrics_snapshot(struct ferry__m_snap *s)
{
	uint64_t now = ferry__now_ns();

	pthread_mutex_lock(&reg.lock);
	current(s);
	if (!reg.sampled_ns || now > reg.sampled_ns + FERRY__M_STALE_NS)
		for (unsigned i = 0; i < s->n_xport; i++)
			s->x[i].goodput[0] = s->x[i].goodput[1] = 0;
	pthread_mutex_unlock(&reg.lock);
	s->chunk_cksum_fail = 0;
	for (unsigned i = 0; i < s->n_xport; i++)
		s->chunk_cksum_fail += s->x[i].v[0].crc_errors +
				       s->x[i].v[1].crc_errors;
}

void ferry__metrics_sample_at(uint64_t now_ns)
{
	struct ferry__m_snap *s = malloc(sizeof(*s));

	if (!s)
		return;
	pthread_mutex_lock(&reg.lock);
	current(s);
	for (unsigned i = 0; i < s->n_xport; i++)
		for (unsigned d = 0; d < 2; d++) {
			struct sample *l = &reg.last[i][d];
			uint64_t b = s->x[i].v[d].bytes;

			if (l->t_ns && now_ns > l->t_ns)
				reg.s.x[i].goodput[d] =
					(double)(b - l->bytes) * 1e9 /
					(double)(now_ns - l->t_ns);
			if (!l->t_ns || now_ns > l->t_ns)
				*l = (struct sample){ now_ns, b };
		}
	if (now_ns > reg.sampled_ns)
		reg.sampled_ns = now_ns;
	pthread_mutex_unlock(&reg.lock);
	free(s);
}

void ferry_metrics_sample(void)
{
	ferry__metrics_sample_at(ferry__now_ns());
}

void ferry__metrics_reset(void)
{
	struct ferry__m_families fam; /* named: they stay, at 0 */

	pthread_mutex_lock(&reg.lock);
	while (reg.live) {
		struct live *l = reg.live;

		reg.live = l->next;
		free(l);
	}
	fam = reg.s.fam;
	memset(&reg.s, 0, sizeof(reg.s));
	memset(reg.last, 0, sizeof(reg.last));
	reg.sampled_ns = 0;
	reg.s.fam = fam;
	for (unsigned i = 0; i < fam.n_series; i++)
		reg.s.fam.series[i].v = 0;
	pthread_mutex_unlock(&reg.lock);
}
