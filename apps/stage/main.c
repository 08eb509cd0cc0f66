/* ferry-stage: stage a dataset from the ranks of an MPI job (mpirun,
 * srun) to ferry receivers. Rank 0 walks and deals (deal.c); every rank
 * runs its libferry sessions; rank 0 gathers what each rank saw and
 * prints one summary. */
#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <mpi.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "../ferry/cli.h"
#include "../ferry/opts_table.h"
#include "deal.h"
#include "ferry/error.h"
#include "ferry/files.h"
#include "ferry/log.h"
#include "ferry/remote.h"
#include "report.h"

static int g_rank;

static void log_rank(enum ferry_log_level level, const char *msg, void *arg)
{
	static const char *const names[] = { "error", "warning", "info",
					     "debug" };
	(void)arg;
	fprintf(stderr, "ferry-stage[%d]: %s: %s\n", g_rank, names[level],
		msg);
}

struct dest {
	char host[FERRY_URL_HOST_MAX + 1];
	char port[FERRY_URL_PORT_MAX + 1];
	char path[FERRY_URL_PATH_MAX + 1];
	const char *url;
};

/* What one rank saw, for rank 0's report. */
struct rank_state {
	pthread_mutex_t lock;       /* results come from every session's
				       thread */
	struct stage_rank rec;
	struct stage_range *ranges; /* this rank's ranges, in item order */
	const char **range_names;   /* their names, to match results */
	size_t n_ranges;
	char *fails;                /* "NAME\0WHY\0" records */
	size_t fails_len, fails_cap;
};

/* One session: this rank's items for one destination, on a thread of its
 * own, so that a rank feeding two receivers (its files to one, a range of
 * a split file to another) runs both at once, and a rate cap is shared
 * between them by bytes: they end together. */
struct session {
	struct rank_state *s;
	const struct dest *dst;
	struct ferry_opts o;
	struct ferry_send_spec spec;
	char **paths, **names;
	struct ferry_send_range *rg;
	size_t rbase, rend;         /* its ranges in s->ranges */
	uint64_t bytes, whole;      /* its items' bytes; whole files */
	uint64_t said;              /* results of whole files */
	int err;
	char why[512];
	char transport[12];
	pthread_t tid;
	bool started;
};

/* A failure for rank 0's list: "NAME\0WHY\0" (a name may hold any byte
 * but NUL: tabs and newlines too). */
static void add_fail(struct rank_state *s, const char *name, uint64_t off,
		     uint64_t len, bool range, const char *why)
{
	char tail[64] = "";
	size_t n;

	if (range)
		snprintf(tail, sizeof(tail), " [bytes %" PRIu64 "-%" PRIu64 "]",
			 off, off + len);
	n = strlen(name) + strlen(tail) + 1 + strlen(why) + 1;
	if (s->fails_len + n > STAGE_FAILS_MAX)
		return; /* counted all the same */
	if (s->fails_len + n > s->fails_cap) {
		size_t cap = s->fails_cap ? 2 * s->fails_cap : 4096;
		while (cap < s->fails_len + n)
			cap *= 2;
		char *p = realloc(s->fails, cap);
		if (!p)
			return;
		s->fails = p;
		s->fails_cap = cap;
	}
	char *p = s->fails + s->fails_len;
	p = stpcpy(stpcpy(p, name), tail) + 1;
	strcpy(p, why);
	s->fails_len += n;
}

static void on_range(struct session *ss, const struct ferry_file_result *r,
		     const char *why)
{
	struct rank_state *s = ss->s;
	struct stage_range *g = NULL;

	for (size_t i = ss->rbase; i < ss->rend && !g; i++)
		if (s->ranges[i].offset == r->offset &&
		    s->ranges[i].outcome == STAGE_R_NONE &&
		    !strcmp(s->range_names[i], r->path))
			g = &s->ranges[i];
	if (r->status) {
		s->rec.ranges_failed++;
		add_fail(s, r->path, r->offset, r->length, true, why);
	}
	if (!g)
		return;
	g->adler32 = r->adler32;
	g->crc32c = r->crc32c;
	g->file_adler32 = r->file_adler32;
	g->file_crc32c = r->file_crc32c;
	g->outcome = r->status ? STAGE_R_FAILED :
		     r->skipped ? STAGE_R_SKIPPED :
		     r->published ? STAGE_R_PUBLISHED : STAGE_R_LANDED;
}

static void on_file(const struct ferry_file_result *r, void *arg)
{
	struct session *ss = arg;
	struct rank_state *s = ss->s;
	const char *why = r->why && r->why[0] ? r->why :
			  r->status ? ferry_strerror(r->status) : "";

	pthread_mutex_lock(&s->lock);
	s->rec.bytes_moved += r->bytes_sent;
	if (r->range) {
		on_range(ss, r, why);
	} else {
		ss->said++;
		if (r->status) {
			s->rec.failed++;
			add_fail(s, r->path, 0, 0, false, why);
		} else if (r->skipped) {
			s->rec.skipped++;
		} else {
			s->rec.published++;
		}
	}
	pthread_mutex_unlock(&s->lock);
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* This rank's items for destination d: its session's lists. Returns
 * false when it has none. */
static bool prepare(struct session *ss, struct rank_state *s,
		    const struct stage_list *l, unsigned d,
		    const struct dest *dst, const struct cli_args *a)
{
	size_t n = 0, k = 0;
	bool ranged = false;

	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].dest == d) {
			n++;
			ranged |= l->v[i].split != 0;
		}
	if (!n)
		return false;
	memset(ss, 0, sizeof(*ss));
	ss->s = s;
	ss->dst = dst;
	ss->o = a->c.o;
	ss->spec = a->send;
	ss->paths = calloc(n, sizeof(*ss->paths));
	ss->names = calloc(n, sizeof(*ss->names));
	ss->rg = ranged ? calloc(n, sizeof(*ss->rg)) : NULL;
	if (!ss->paths || !ss->names || (ranged && !ss->rg)) {
		ss->err = -ENOMEM;
		snprintf(ss->why, sizeof(ss->why), "out of memory");
	}
	ss->rbase = s->n_ranges;
	for (size_t i = 0; i < l->n; i++) {
		const struct stage_item *it = &l->v[i];
		if (it->dest != d)
			continue;
		if (it->split) {
			struct stage_range *g = &s->ranges[s->n_ranges];
			g->file = it->file;
			g->rank = s->rec.rank;
			g->dest = d;
			g->offset = it->offset;
			g->length = stage_item_len(it);
			g->size = it->size;
			s->range_names[s->n_ranges++] = it->name;
			s->rec.ranges++;
		} else if (it->kind == STAGE_FILE) {
			s->rec.files++;
			ss->whole++;
		}
		ss->bytes += stage_item_len(it);
		if (ss->err)
			continue;
		ss->paths[k] = it->src;
		ss->names[k] = it->name;
		if (ss->rg)
			ss->rg[k] = (struct ferry_send_range){ it->offset,
							       it->split };
		k++;
	}
	ss->rend = s->n_ranges;
	s->rec.bytes += ss->bytes;
	ss->spec.paths = ss->paths;
	ss->spec.names = ss->names;
	ss->spec.n_paths = n;
	ss->spec.ranges = ss->rg;
	ss->spec.dest = dst->path;
	ss->spec.on_file = on_file;
	ss->spec.arg = ss;
	return true;
}

static void *run(void *arg)
{
	struct session *ss = arg;
	struct ferry_report *rep = calloc(1, sizeof(*rep));

	if (!rep) {
		ss->err = -ENOMEM;
		return NULL;
	}
	ss->err = ferry_send(ss->dst->host, ss->dst->port, &ss->o, &ss->spec,
			     rep, ss->why, sizeof(ss->why));
	stage_copy(ss->transport, sizeof(ss->transport), rep->transport);
	free(rep);
	return NULL;
}

/* After the session: what it did not report has failed with it. */
static void settle(struct session *ss)
{
	struct rank_state *s = ss->s;
	bool lost = false;

	if (ss->started)
		s->rec.sessions++;
	if (ss->transport[0])
		stage_copy(s->rec.transport, sizeof(s->rec.transport),
			   ss->transport);
	if (ss->err) {
		/* a session that reported every file failed only by them */
		if (ss->whole > ss->said) {
			s->rec.failed += ss->whole - ss->said;
			lost = true;
		}
		for (size_t i = ss->rbase; i < ss->rend; i++)
			if (s->ranges[i].outcome == STAGE_R_NONE) {
				s->ranges[i].outcome = STAGE_R_FAILED;
				s->rec.ranges_failed++;
				lost = true;
			}
		char line[700];
		snprintf(line, sizeof(line), "%s: %s", ss->dst->url,
			 ss->why[0] ? ss->why : ferry_strerror(ss->err));
		if (!s->rec.status) {
			s->rec.status = ss->err;
			stage_copy(s->rec.why, sizeof(s->rec.why), line);
		}
		if (lost) {
			char who[32];
			snprintf(who, sizeof(who), "(rank %" PRIu32 "'s session)",
				 s->rec.rank);
			add_fail(s, who, 0, 0, false, line);
		}
	}
	free(ss->paths);
	free(ss->names);
	free(ss->rg);
}

/* Every session of this rank, at once; the rank's rate cap shared
 * between them by bytes. */
static void run_all(struct rank_state *s, const struct stage_list *l,
		    const struct dest *dsts, unsigned n_dest,
		    const struct cli_args *a)
{
	struct session *ss = calloc(n_dest + 1, sizeof(*ss));
	uint64_t total = 0;
	unsigned n = 0;

	if (!ss)
		MPI_Abort(MPI_COMM_WORLD, 1);
	for (unsigned d = 0; d < n_dest; d++)
		if (prepare(&ss[n], s, l, d, &dsts[d], a))
			total += ss[n++].bytes;
	for (unsigned i = 0; i < n; i++) {
		if (a->c.o.rate_bps && total) {
			double share = (double)a->c.o.rate_bps *
				       (double)ss[i].bytes / (double)total;
			ss[i].o.rate_bps = share >= 1000 ? (uint64_t)share : 1000;
		}
		if (!ss[i].err)
			ss[i].started = !pthread_create(&ss[i].tid, NULL, run,
							&ss[i]);
		if (!ss[i].err && !ss[i].started) {
			ss[i].err = -EAGAIN;
			snprintf(ss[i].why, sizeof(ss[i].why),
				 "cannot start a thread for this session");
		}
	}
	for (unsigned i = 0; i < n; i++) {
		if (ss[i].started)
			pthread_join(ss[i].tid, NULL);
		settle(&ss[i]);
	}
	free(ss);
}

/* Rank 0: walk, map and deal; then every rank's share, packed in one
 * buffer for MPI_Scatterv (counts and displacements by rank). Returns 0
 * or an error with why (every rank hears it). */
static int plan(struct cli_args *a, char *const *srcs, size_t n_srcs,
		unsigned n_dest, int ranks, struct stage_list *l,
		uint8_t **flat, int *counts, int *displs, char *why,
		size_t whylen)
{
	uint32_t *rd = calloc((size_t)ranks, sizeof(*rd));
	size_t *lens = calloc((size_t)ranks, sizeof(*lens)), total = 0;
	int err = rd && lens ? 0 : -ENOMEM;

	if (!err)
		err = stage_map(a->map, (unsigned)ranks, n_dest, rd, why,
				whylen);
	if (!err)
		err = stage_walk(l, srcs, n_srcs, a->send.follow_symlinks, why,
				 whylen);
	if (!err)
		err = stage_deal(l, (unsigned)ranks, rd, n_dest, a->split,
				 a->c.o.chunk_size);
	if (!err && !(*flat = stage_pack(l, (unsigned)ranks, lens)))
		err = -ENOMEM;
	for (int r = 0; !err && r < ranks; r++) {
		counts[r] = (int)lens[r];
		displs[r] = (int)total;
		total += lens[r];
		if (total > INT_MAX) {
			snprintf(why, whylen,
				 "the file list is over 2 GiB packed; run with more ranks or stage the tree in parts");
			err = -E2BIG;
		}
	}
	free(rd);
	free(lens);
	if (err && !why[0])
		snprintf(why, whylen, "%s", ferry_strerror(err));
	return err;
}

/* Split the operands: SRCs, then one or more ferry:// destinations. */
static int operands(int argc, char **argv, int first, struct dest **dsts,
		    unsigned *n_dest, int *n_srcs)
{
	int i = argc;
	char why[256];

	while (i > first && !strncasecmp(argv[i - 1], "ferry://", 8))
		i--;
	*n_srcs = i - first;
	*n_dest = (unsigned)(argc - i);
	if (*n_srcs < 1 || *n_dest < 1) {
		fprintf(stderr,
			"ferry-stage: give one or more SRCs, then one or more ferry://HOST[:PORT]/DEST (see `ferry-stage --help`)\n");
		return 2;
	}
	for (int j = first; j < i; j++)
		if (!strncasecmp(argv[j], "ferry://", 8)) {
			fprintf(stderr,
				"ferry-stage: %s: the destinations come last, after every SRC\n",
				argv[j]);
			return 2;
		}
	*dsts = calloc(*n_dest, sizeof(**dsts));
	if (!*dsts)
		return 1;
	for (unsigned d = 0; d < *n_dest; d++) {
		struct dest *x = &(*dsts)[d];
		x->url = argv[i + (int)d];
		if (ferry_url_parse(x->url, x->host, sizeof(x->host), x->port,
				    sizeof(x->port), x->path, sizeof(x->path),
				    why, sizeof(why))) {
			fprintf(stderr, "ferry-stage: %s: %s\n", x->url, why);
			return 2;
		}
	}
	return 0;
}

/* Wait for every rank without spinning: MPI's own waits poll, and a rank
 * that is done (or waiting for rank 0's walk) would take a CPU from the
 * ranks still at work on a node that has fewer CPUs than threads. */
void stage_idle_barrier(void)
{
	MPI_Request rq;
	int done = 0;

	MPI_Ibarrier(MPI_COMM_WORLD, &rq);
	while (MPI_Test(&rq, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS &&
	       !done) {
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
	}
}

/* Rank 0 warns when the launcher bound each rank to one CPU and left
 * CPUs of a node idle: a rank's streams and checksums then share one
 * CPU (mpirun binds to cores when it starts two ranks or fewer).
 * Returns how many ranks share this one's node. */
static int check_binding(void)
{
	MPI_Comm node;
	cpu_set_t set;
	int local = 1, cpus, idle, any = 0;
	long online = sysconf(_SC_NPROCESSORS_ONLN);

	MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0,
			    MPI_INFO_NULL, &node);
	MPI_Comm_size(node, &local);
	MPI_Comm_free(&node);
	cpus = sched_getaffinity(0, sizeof(set), &set) ? 0 : CPU_COUNT(&set);
	idle = cpus == 1 && online > 0 && (long)local < online;
	MPI_Reduce(&idle, &any, 1, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
	if (!g_rank && any)
		fprintf(stderr,
			"ferry-stage: warning: the launcher bound each rank to one CPU while CPUs of its node stay idle; each rank's streams share that CPU: start it with `mpirun --bind-to none` or `srun --cpu-bind=none`\n");
	return local;
}

/* The ranks of a node share its memory and CPUs, and so do the receivers
 * they feed when those are on the same node: without --slots, each
 * rank's ring floor is the default's share of the node (at least
 * STAGE_MIN_SLOTS). The path plan still grows a ring to hold a long
 * path's bandwidth-delay product. Four ranks with 64 slots of 4 MiB
 * each, on one 2-vCPU node feeding two receivers there, staged the
 * benchmark's set at 0.47-0.72 of the hand split; with 16, 0.91-0.94
 * (bench/stage_scaling.sh, docs/benchmarks.md). */
#define STAGE_MIN_SLOTS 16u
static void share_ring(struct ferry_opts *o, int local)
{
	unsigned s;

	if ((o->fixed & FERRY_FIXED_SLOTS) || local <= 1)
		return;
	s = o->slots / (unsigned)local;
	o->slots = s > STAGE_MIN_SLOTS ? s : STAGE_MIN_SLOTS;
	if (o->slots < o->streams)
		o->slots = o->streams;
}

/* Open MPI, every rank on one node (mpirun says so in the environment of
 * each rank): ob1 over shared memory is the messaging layer it picks
 * there, and naming it skips probing the others (cm, ucx), 0.2 s of a
 * job's start on the development VM. Across nodes, or where the user
 * named a layer, Open MPI chooses as it always does. */
static void mpi_defaults(void)
{
	const char *world = getenv("OMPI_COMM_WORLD_SIZE");
	const char *local = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");

	if (world && local && strcmp(world, local) == 0 &&
	    !getenv("OMPI_MCA_pml"))
		setenv("OMPI_MCA_pml", "ob1", 0);
}

/* Everyone leaves with status; rank 0 has said why. */
static int finish(int status)
{
	MPI_Finalize();
	return status;
}

int main(int argc, char **argv)
{
	struct cli_args a;
	struct stage_list mine = { 0 }, all = { 0 };
	struct dest *dsts = NULL;
	struct rank_state s = { 0 };
	uint8_t *flat = NULL;
	int *counts = NULL, *displs = NULL;
	unsigned n_dest = 0;
	int ranks, first, n_srcs = 0, prov, status = 0;
	char why[1024] = "";

	mpi_defaults();
	MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &prov);
	MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
	MPI_Comm_size(MPI_COMM_WORLD, &ranks);

	/* every rank reads the same command line; rank 0 alone says what
	 * is wrong with it (or prints --help) */
	int saved[2] = { -1, -1 };
	if (g_rank) {
		int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
		fflush(NULL);
		for (int fd = 1; null >= 0 && fd <= 2; fd++) {
			saved[fd - 1] = dup(fd);
			dup2(null, fd);
		}
		if (null >= 0)
			close(null);
	}
	argv[0] = "stage";
	first = cli_parse(&cli_cmd_stage, argc, argv, &a);
	if (first < 0)
		return finish(a.exit);
	status = operands(argc, argv, first, &dsts, &n_dest, &n_srcs);
	if (!status && !cli_client(&a.c, "stage", true))
		status = 2;
	fflush(NULL);
	for (int fd = 1; fd <= 2; fd++)
		if (saved[fd - 1] >= 0) {
			dup2(saved[fd - 1], fd);
			close(saved[fd - 1]);
		}
	if (status)
		return finish(status);
	ferry_log_set(log_rank, NULL,
		      a.c.quiet ? FERRY_LOG_ERR :
		      a.c.verbose ? FERRY_LOG_DEBUG : FERRY_LOG_WARN);
	if (a.c.o.rate_bps) /* the job's cap, shared by its ranks */
		a.c.o.rate_bps = a.c.o.rate_bps / (uint64_t)ranks ?
			a.c.o.rate_bps / (uint64_t)ranks : 1;

	share_ring(&a.c.o, check_binding());
	/* rank 0 deals; everyone hears whether that worked */
	int err = 0, len = 0;
	if (!g_rank) {
		counts = calloc((size_t)ranks, sizeof(*counts));
		displs = calloc((size_t)ranks, sizeof(*displs));
		err = counts && displs ?
			plan(&a, argv + first, (size_t)n_srcs, n_dest, ranks,
			     &all, &flat, counts, displs, why, sizeof(why)) :
			-ENOMEM;
		if (err)
			fprintf(stderr, "ferry-stage: %s\n",
				why[0] ? why : ferry_strerror(err));
	}
	stage_idle_barrier();
	MPI_Bcast(&err, 1, MPI_INT, 0, MPI_COMM_WORLD);
	if (err)
		return finish(1);
	MPI_Scatter(counts, 1, MPI_INT, &len, 1, MPI_INT, 0, MPI_COMM_WORLD);
	uint8_t *buf = malloc((size_t)len + 1);
	if (!buf)
		MPI_Abort(MPI_COMM_WORLD, 1);
	MPI_Scatterv(flat, counts, displs, MPI_BYTE, buf, len, MPI_BYTE, 0,
		     MPI_COMM_WORLD);
	free(flat);
	free(counts);
	free(displs);
	if (stage_unpack(&mine, buf, (size_t)len))
		MPI_Abort(MPI_COMM_WORLD, 1);
	free(buf);

	/* this rank's sessions, one per destination it has items for */
	s.rec.rank = (uint32_t)g_rank;
	int hl = 0;
	char host[MPI_MAX_PROCESSOR_NAME];
	MPI_Get_processor_name(host, &hl);
	stage_copy(s.rec.host, sizeof(s.rec.host), host);
	snprintf(s.rec.transport, sizeof(s.rec.transport), "-");
	size_t n_rg = 0;
	for (size_t i = 0; i < mine.n; i++)
		n_rg += mine.v[i].split != 0;
	s.ranges = calloc(n_rg + 1, sizeof(*s.ranges));
	s.range_names = calloc(n_rg + 1, sizeof(*s.range_names));
	if (!s.ranges || !s.range_names)
		MPI_Abort(MPI_COMM_WORLD, 1);
	MPI_Barrier(MPI_COMM_WORLD);
	double t0 = now();
	pthread_mutex_init(&s.lock, NULL);
	run_all(&s, &mine, dsts, n_dest, &a);
	pthread_mutex_destroy(&s.lock);
	s.rec.seconds = now() - t0;
	stage_list_free(&mine);

	status = stage_report(&s.rec, s.ranges, s.n_ranges, s.fails,
			      s.fails_len, &all, ranks, n_dest,
			      (const char *const *)argv + first + n_srcs, &a);
	free(s.ranges);
	free(s.range_names);
	free(s.fails);
	stage_list_free(&all);
	free(dsts);
	return finish(status);
}
