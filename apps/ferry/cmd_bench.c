/* ferry bench: memory-to-memory transfer against a `ferry recv`. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "cmds.h"
#include "ferry/error.h"
#include "metrics.h"
#include "opts_table.h"
#include "out.h"

/* The OSU message benchmark, printed as --json, --csv or the table. */
static int run_osu(const char *host, const char *port, struct cli_args *a,
		   char *why, size_t whylen)
{
	struct ferry_osu_result *res;
	int err;

	if (a->marks & CLI_M_BULK)
		cli_die_usage("bench", "-t, -n, -P, -l and --slots do not go with --osu");
	if (!a->osu_sizes)
		ferry_osu_default_sizes(&a->osu);
	res = calloc(1, sizeof(*res));
	if (!res)
		return -ENOMEM;
	err = ferry_osu(host, port, &a->c.o, &a->osu, res, why, whylen);
	if (!err || res->n_rows || a->c.json)
		out_osu(stdout, res, a->c.json, a->csv,
			out_error_text(err, why));
	free(res);
	return err;
}

/* The bulk transfer: interval lines and the summary, or --json. */
static int run_bulk(const char *host, const char *port, struct cli_args *a,
		    char *why, size_t whylen)
{
	struct ferry_report *rep;
	int err;

	if (!a->c.json && !a->c.quiet) {
		a->c.o.on_interval = out_interval;
		a->c.o.arg = stdout;
	}
	rep = malloc(sizeof(*rep));
	if (!rep)
		return -ENOMEM;
	err = ferry_bench(host, port, &a->c.o, &a->bench, rep, why, whylen);
	if (a->c.json || !err)
		out_report(stdout, "", rep, a->c.json,
			   out_error_text(err, why));
	free(rep);
	return err;
}

int cmd_bench(int argc, char **argv)
{
	struct app_metrics *metrics = NULL;
	struct cli_args a;
	char host[256], port[8], why[512] = "";
	int i, err;

	i = cli_parse(&cli_cmd_bench, argc, argv, &a);
	if (i < 0)
		return a.exit;
	if (!cli_hostport("bench", argv[i], a.port, host, sizeof(host), port,
			  sizeof(port)))
		return 2;
	if ((a.marks & CLI_M_OSU) && !a.osu.mode)
		cli_die_usage("bench", "--sizes, --iters, --warmup, --window and --csv need --osu");
	/* --osu sets its own geometry, and checks the options then */
	if (!cli_client(&a.c, "bench", !a.osu.mode))
		return 2;
	cli_logger("bench", a.c.quiet || a.c.json, a.c.verbose);
	if (a.metrics_at) {
		err = app_metrics_start("bench", a.metrics_at, a.metrics_host,
					a.c.quiet || a.c.json, &metrics);
		if (err)
			return app_metrics_exit(err);
	}
	err = a.osu.mode ? run_osu(host, port, &a, why, sizeof(why)) :
			   run_bulk(host, port, &a, why, sizeof(why));
	if (err)
		fprintf(stderr, "ferry bench: %s\n", why[0] ? why :
			ferry_strerror(err));
	app_metrics_stop(metrics);
	return err ? 1 : 0;
}
