/* ferry doctor: check this host for bulk transfer, print what to fix. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd_doctor.h"
#include "ferry/doctor.h"
#include "ferry/error.h"
#include "opts_table.h"
#include "out.h"

int cmd_doctor(int argc, char **argv)
{
	unsigned count[4] = { 0 };
	struct ferry_check *c;
	struct cli_args a;
	int i, err;
	size_t n;

	i = cli_parse(&cli_cmd_doctor, argc, argv, &a);
	if (i < 0)
		return a.exit;
	c = calloc(FERRY_DOCTOR_MAX_CHECKS, sizeof(*c));
	if (!c) {
		fprintf(stderr, "ferry doctor: out of memory\n");
		return 1;
	}
	err = ferry_doctor_run(&a.doctor, c, FERRY_DOCTOR_MAX_CHECKS, &n);
	if (err && err != -ENOSPC) {
		if (err == -EINVAL)
			fprintf(stderr, "ferry doctor: bad value '%s' for --netdev: not an interface name\n",
				a.doctor.netdev);
		else if (err == -ENOENT)
			fprintf(stderr, "ferry doctor: %s has neither sys/ nor proc/ to read\n",
				a.doctor.root);
		else
			fprintf(stderr, "ferry doctor: %s\n", ferry_strerror(err));
		free(c);
		return err == -EINVAL || err == -ENOENT ? 2 : 1;
	}
	if (err)
		fprintf(stderr, "ferry doctor: more checks than fit; showing the first %zu\n",
			n);
	for (size_t k = 0; k < n; k++)
		if ((unsigned)c[k].status < 4)
			count[c[k].status]++;
	if (a.c.json)
		out_checks_json(stdout, c, n, count, !err);
	else
		out_checks(stdout, c, n, count);
	free(c);
	return count[FERRY_CHECK_FAIL] ? 1 : 0;
}
