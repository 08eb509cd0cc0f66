/* range_send: send one range of a file with ferry_send
 * (tests/integration/files_ranges.sh), and print each file's result as
 * one line.
 *
 * usage: range_send [-k KEYFILE] [-c CHUNK] [-r RATE_BPS] [-P STREAMS]
 *                   [-d DEST] [-t TIMEOUT_MS] [-f]
 *                   HOST PORT SRC NAME OFFSET SPLIT
 *   SPLIT 0 sends SRC whole. Without -k: no authentication (loopback).
 * Prints, per file:
 *   result path=P range=0|1 offset=O length=L status=S published=0|1
 *          skipped=0|1 resumed=0|1 sent=B adler32=X crc32c=X
 *          file_adler32=X file_crc32c=X why=TEXT
 * and exits 0 when ferry_send did, 1 otherwise (its reason on stderr),
 * 2 on bad usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ferry/files.h"
#include "ferry/key.h"

static void on_file(const struct ferry_file_result *r, void *arg)
{
	(void)arg;
	printf("result path=%s range=%d offset=%llu length=%llu status=%d "
	       "published=%d skipped=%d resumed=%d sent=%llu adler32=%08x "
	       "crc32c=%08x file_adler32=%08x file_crc32c=%08x why=%s\n",
	       r->path, r->range, (unsigned long long)r->offset,
	       (unsigned long long)r->length, r->status, r->published,
	       r->skipped, r->resumed, (unsigned long long)r->bytes_sent,
	       r->adler32, r->crc32c, r->file_adler32, r->file_crc32c,
	       r->why ? r->why : "");
	fflush(stdout);
}

static int usage(void)
{
	fprintf(stderr, "usage: range_send [-k KEYFILE] [-c CHUNK] [-r RATE_BPS] [-P STREAMS] [-d DEST] [-t TIMEOUT_MS] [-f] HOST PORT SRC NAME OFFSET SPLIT\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct ferry_send_spec spec = { .cksum = FERRY_CKSUM_ADLER32,
					.files = 1, .on_file = on_file,
					.n_paths = 1 };
	struct ferry_send_range range;
	struct ferry_report rep;
	struct ferry_opts o;
	struct ferry_key key;
	char why[512] = "", *paths[1], *names[1];
	int c, err;

	ferry_opts_init(&o);
	o.streams = 2;
	while ((c = getopt(argc, argv, "k:c:r:P:d:t:f")) != -1) {
		switch (c) {
		case 'k':
			if (ferry_key_load(optarg, &key, why, sizeof(why))) {
				fprintf(stderr, "range_send: %s\n", why);
				return 2;
			}
			o.key = &key;
			break;
		case 'c': o.chunk_size = strtoull(optarg, NULL, 0); break;
		case 'r': o.rate_bps = strtoull(optarg, NULL, 0); break;
		case 'P': o.streams = (unsigned)atoi(optarg); break;
		case 'd': spec.dest = optarg; break;
		case 't': o.timeout_ms = atoi(optarg); break;
		case 'f': spec.force = true; break;
		default: return usage();
		}
	}
	if (argc - optind != 6)
		return usage();
	paths[0] = argv[optind + 2];
	names[0] = argv[optind + 3];
	range.offset = strtoull(argv[optind + 4], NULL, 0);
	range.split = strtoull(argv[optind + 5], NULL, 0);
	spec.paths = paths;
	spec.names = names;
	spec.ranges = &range;
	err = ferry_send(argv[optind], argv[optind + 1], &o, &spec, &rep, why,
			 sizeof(why));
	if (err) {
		fprintf(stderr, "range_send: %s\n", why);
		return 1;
	}
	return 0;
}
