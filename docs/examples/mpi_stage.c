/* mpi_stage: staging a job's output from inside the MPI job, with libferry.
 *
 * Each rank writes its part of the result (here: OUTDIR/part-RANK.dat,
 * 1 MiB plus RANK bytes of a pattern), then sends that file itself to a
 * ferry receiver with ferry_send, verified end to end; rank 0 gathers
 * what every rank moved and says whether the whole output landed.
 *
 *   mpicc -o mpi_stage mpi_stage.c $(pkg-config --cflags --libs libferry)
 *   FERRY_KEY=/etc/ferry/key mpirun -n 8 ./mpi_stage OUTDIR ferry://dtn1/job42
 *
 * The receiver is `ferry recv --dir DIR --key KEY` (or a `ferry serve`
 * daemon); the parts land in DIR/job42. $FERRY_TRANSPORT picks the
 * transport (default auto). Exit status 0 when every rank's part was
 * published (or was already there, identical).
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ferry/error.h>
#include <ferry/files.h>
#include <ferry/key.h>
#include <ferry/remote.h>

/* The job's output for this rank: a file of 1 MiB + rank bytes. */
static int write_part(const char *dir, int rank, char *path, size_t len)
{
	FILE *f;

	snprintf(path, len, "%s/part-%d.dat", dir, rank);
	f = fopen(path, "wb");
	if (!f)
		return -errno;
	for (uint32_t i = 0; i < (1u << 20) + (uint32_t)rank; i++)
		fputc((int)((i * 2654435761u + (uint32_t)rank) >> 24), f);
	return fclose(f) ? -errno : 0;
}

int main(int argc, char **argv)
{
	char host[FERRY_URL_HOST_MAX + 1], port[FERRY_URL_PORT_MAX + 1];
	char dest[FERRY_URL_PATH_MAX + 1], path[4096], why[512] = "";
	struct ferry_key key;
	struct ferry_opts o;
	struct ferry_send_spec spec = { 0 };
	struct ferry_report *rep = calloc(1, sizeof(*rep));
	const char *kp = getenv("FERRY_KEY");
	int rank, ranks, err;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &ranks);
	if (argc != 3 || !rep) {
		if (!rank)
			fprintf(stderr, "usage: mpirun -n N mpi_stage OUTDIR ferry://HOST[:PORT]/DEST (key in $FERRY_KEY)\n");
		MPI_Finalize();
		return 2;
	}
	err = ferry_url_parse(argv[2], host, sizeof(host), port, sizeof(port),
			      dest, sizeof(dest), why, sizeof(why));
	if (err == 1)
		snprintf(why, sizeof(why), "%s: not a ferry:// URL", argv[2]);
	if (!err && (!kp || !*kp))
		snprintf(why, sizeof(why), "no key: set FERRY_KEY");
	else if (!err)
		err = ferry_key_load(kp, &key, why, sizeof(why));
	if (!err && !why[0])
		err = write_part(argv[1], rank, path, sizeof(path));
	if (!err && !why[0]) {
		char *paths[1] = { path };

		ferry_opts_init(&o);
		o.key = &key;
		o.key_path = kp;
		if (getenv("FERRY_TRANSPORT"))
			o.transport = getenv("FERRY_TRANSPORT");
		spec.paths = paths;
		spec.n_paths = 1;
		spec.dest = dest;
		spec.cksum = FERRY_CKSUM_ADLER32;
		spec.files = 1;
		err = ferry_send(host, port, &o, &spec, rep, why, sizeof(why));
	}
	if (why[0] && !err)
		err = -EINVAL;
	if (err)
		fprintf(stderr, "mpi_stage: rank %d: %s\n", rank,
			why[0] ? why : ferry_strerror(err));

	/* rank 0 adds up: parts landed, bytes moved */
	long long mine[2] = { err ? 0 : 1, err ? 0 : (long long)rep->bytes };
	long long all[2] = { 0, 0 };
	MPI_Reduce(mine, all, 2, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	int ok = all[0] == ranks;
	if (!rank)
		printf("mpi_stage: %lld of %d parts staged to %s, %lld bytes moved\n",
		       all[0], ranks, argv[2], all[1]);
	MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
	free(rep);
	MPI_Finalize();
	return ok ? 0 : 1;
}
