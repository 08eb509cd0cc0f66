/* ferry's command line: the option table is whole (each command's rows
 * unique, in a section its --help prints, with a help line), --help is
 * made from it, parsing fills the attributes, and the app's JSON writer
 * lays out and escapes what it is given. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cu.h"
#include "opts_table.h"
#include "out.h"

static const struct cli_cmd *const cmds[] = {
	&cli_cmd_bench, &cli_cmd_recv, &cli_cmd_send, &cli_cmd_cp,
	&cli_cmd_doctor, &cli_cmd_rocedump, &cli_cmd_keygen, &cli_cmd_version,
};
#define N_CMDS (sizeof(cmds) / sizeof(cmds[0]))

static bool in_sections(const struct cli_cmd *c, enum cli_group g)
{
	for (size_t s = 0; s < CLI_SECTIONS && c->sections[s].group; s++)
		if (c->sections[s].group == g)
			return true;
	return false;
}

static void test_table(void)
{
	for (size_t k = 0; k < N_CMDS; k++) {
		const struct cli_cmd *c = cmds[k];
		bool help = false;

		for (size_t i = 0; i < cli_n_opts; i++) {
			const struct cli_opt *o = &cli_opts[i];

			if (!(o->cmds & c->id))
				continue;
			help |= !o->set;
			if (o->group == G_HIDDEN) {
				CU_ASSERT_PTR_NOT_NULL(o->set);
			} else if (!o->help || !in_sections(c, o->group)) {
				fprintf(stderr, "ferry %s --%s: not in its --help\n",
					c->name, o->name);
				CU_FAIL("an option --help does not print");
			}
			for (size_t j = i + 1; j < cli_n_opts; j++) {
				const struct cli_opt *p = &cli_opts[j];

				if (!(p->cmds & c->id))
					continue;
				if (!strcmp(o->name, p->name) ||
				    (o->letter && o->letter == p->letter)) {
					fprintf(stderr, "ferry %s: --%s twice\n",
						c->name, o->name);
					CU_FAIL("two rows of one command clash");
				}
			}
		}
		CU_ASSERT(help);
	}
}

/* cmd's --help, in a buffer the caller frees. */
static char *help_text(const struct cli_cmd *c, const char *as)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	cli_help(c, as, f);
	fclose(f);
	return buf;
}

static void test_help(void)
{
	for (size_t k = 0; k < N_CMDS; k++) {
		char *t = help_text(cmds[k], cmds[k]->name), *l, *save = NULL;
		char want[64];

		snprintf(want, sizeof(want), "usage: ferry %s", cmds[k]->name);
		CU_ASSERT_EQUAL(strncmp(t, want, strlen(want)), 0);
		CU_ASSERT_PTR_NOT_NULL(strstr(t, "  -h, --help            this text\n"));
		CU_ASSERT_PTR_NOT_NULL(strstr(t, "Exit status: "));
		for (l = strtok_r(t, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
			if (strlen(l) > 79) {
				fprintf(stderr, "ferry %s --help: %s\n",
					cmds[k]->name, l);
				CU_FAIL("a --help line is wider than 79");
			}
		free(t);
	}
}

static void test_help_groups(void)
{
	char *serve = help_text(&cli_cmd_recv, "serve");
	char *send = help_text(&cli_cmd_send, "send");

	CU_ASSERT_EQUAL(strncmp(serve, "usage: ferry serve [options]\n", 29), 0);
	CU_ASSERT_PTR_NULL(strstr(serve, "      --slots N"));
	CU_ASSERT_PTR_NOT_NULL(strstr(send, "\nPipeline:\n  -P, --streams N "));
	CU_ASSERT_PTR_NOT_NULL(strstr(send, "\nSecurity:\n      --key FILE "));
	/* an option whose name and argument pass the text column */
	CU_ASSERT_PTR_NOT_NULL(strstr(send, "      --metrics ADDR:PORT\n"
					    "                        serve "));
	free(serve);
	free(send);
}

static int parse(const struct cli_cmd *c, struct cli_args *a, char **argv)
{
	int argc = 0;

	while (argv[argc])
		argc++;
	optind = 1;
	return cli_parse(c, argc, argv, a);
}

static void test_parse(void)
{
	char *bench[] = { "bench", "-P", "8", "--slots=16", "-t", "2.5",
			  "--json", "-l", "1M", "--key-name", "atlas", "h",
			  NULL };
	char *send[] = { "send", "--no-resume", "--resume", "-L", "--files",
			 "9", "--cksum", "crc32c", "--timeout", "1.5", "a",
			 "h", NULL };
	char *osu[] = { "bench", "--osu", "lat", "--warmup", "0", "h", NULL };
	char *doctor[] = { "doctor", "--rtt", "120", "--root", "/x", NULL };
	char *bad[] = { "bench", "--slots", "0", "h", NULL };
	struct cli_args a;

	CU_ASSERT_EQUAL(parse(&cli_cmd_bench, &a, bench), 11);
	CU_ASSERT_EQUAL(a.c.o.streams, 8);
	CU_ASSERT_EQUAL(a.c.o.slots, 16);
	CU_ASSERT_DOUBLE_EQUAL(a.bench.seconds, 2.5, 1e-9);
	CU_ASSERT_EQUAL(a.c.o.chunk_size, 1 << 20);
	CU_ASSERT(a.c.json);
	CU_ASSERT_STRING_EQUAL(a.c.key_name, "atlas");
	CU_ASSERT(a.marks & CLI_M_BULK);
	CU_ASSERT(!(a.marks & CLI_M_OSU));

	CU_ASSERT_EQUAL(parse(&cli_cmd_send, &a, send), 10);
	CU_ASSERT(!a.send.no_resume);
	CU_ASSERT(a.send.follow_symlinks);
	CU_ASSERT_EQUAL(a.send.files, 9);
	CU_ASSERT_EQUAL(a.send.cksum, FERRY_CKSUM_CRC32C);
	CU_ASSERT_EQUAL(a.c.o.timeout_ms, 1500);

	CU_ASSERT_EQUAL(parse(&cli_cmd_bench, &a, osu), 5);
	CU_ASSERT_NOT_EQUAL(a.osu.mode, 0);
	CU_ASSERT_EQUAL(a.osu.warmup, FERRY_OSU_NO_WARMUP);
	CU_ASSERT_EQUAL(a.marks, CLI_M_OSU);

	CU_ASSERT_EQUAL(parse(&cli_cmd_doctor, &a, doctor), 5);
	CU_ASSERT_DOUBLE_EQUAL(a.doctor.rtt_ms, 120, 1e-9);
	CU_ASSERT_STRING_EQUAL(a.doctor.root, "/x");

	CU_ASSERT_EQUAL(parse(&cli_cmd_bench, &a, bad), -1);
	CU_ASSERT_EQUAL(a.exit, 2);
}

/* --dscp and --tclass set ferry_opts.dscp (--tclass's top six bits);
 * values out of range are refused; without either the session is
 * unmarked (-1). The summary line names the class only when there is
 * one. */
static void test_dscp(void)
{
	char *none[] = { "bench", "h", NULL };
	char *send[] = { "send", "--dscp", "10", "a", "h", NULL };
	char *recv[] = { "recv", "--dscp", "46", NULL };
	char *hex[] = { "bench", "--tclass", "0x2b", "h", NULL };
	char *dec[] = { "cp", "--tclass", "184", "a", "h", NULL };
	char *bad[][5] = {
		{ "send", "--dscp", "64", "h", NULL },
		{ "send", "--dscp", "-1", "h", NULL },
		{ "bench", "--tclass", "256", "h", NULL },
		{ "bench", "--tclass", "0x", "h", NULL },
		{ "bench", "--tclass", "0x100", "h", NULL },
		{ "bench", "--tclass", "-4", "h", NULL },
	};
	struct ferry_report r = { .role = "sender", .transport = "tcp",
				  .transport_why = "tcp as asked",
				  .poll = "event", .streams = 4 };
	struct cli_args a;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	CU_ASSERT_EQUAL(parse(&cli_cmd_bench, &a, none), 1);
	CU_ASSERT_EQUAL(a.c.o.dscp, -1);
	CU_ASSERT_EQUAL(parse(&cli_cmd_send, &a, send), 3);
	CU_ASSERT_EQUAL(a.c.o.dscp, 10);
	CU_ASSERT_EQUAL(parse(&cli_cmd_recv, &a, recv), 3);
	CU_ASSERT_EQUAL(a.c.o.dscp, 46);
	CU_ASSERT_EQUAL(parse(&cli_cmd_bench, &a, hex), 3);
	CU_ASSERT_EQUAL(a.c.o.dscp, 10); /* 0x2b: DSCP 10, ECN bits 3 */
	CU_ASSERT_EQUAL(parse(&cli_cmd_cp, &a, dec), 3);
	CU_ASSERT_EQUAL(a.c.o.dscp, 46);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CU_ASSERT_EQUAL(parse(!strcmp(bad[i][0], "send") ?
				      &cli_cmd_send : &cli_cmd_bench, &a,
				      bad[i]), -1);
		CU_ASSERT_EQUAL(a.exit, 2);
	}

	f = open_memstream(&buf, &len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	r.dscp = 10;
	out_summary(f, "", &r);
	r.dscp = -1;
	out_summary(f, "", &r);
	fclose(f);
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "(tcp as asked; event polling; DSCP 10): 4 stream(s)"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "(tcp as asked; event polling): 4 stream(s)"));
	free(buf);
}

static void test_json(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct out_json j;

	out_json_begin(&j, f);
	out_json_arr(&j, "rows", false);
	out_json_obj(&j, NULL, true);
	out_json_str(&j, "name", "a\"b\\c\n\x01");
	out_json_u64(&j, "n", 7);
	out_json_end(&j);
	out_json_obj(&j, NULL, true);
	out_json_num(&j, "x", "%.3f", 0.0 / 0.0);
	out_json_str(&j, "none", NULL);
	out_json_end(&j);
	out_json_end(&j);
	out_json_obj(&j, "sum", true);
	out_json_bool(&j, "ok", true);
	out_json_end(&j);
	out_json_arr(&j, "empty", false);
	out_json_end(&j);
	out_json_end(&j);
	fclose(f);
	CU_ASSERT_STRING_EQUAL(buf,
		"{\n"
		"  \"rows\": [\n"
		"    {\"name\": \"a\\\"b\\\\c\\u000a\\u0001\", \"n\": 7},\n"
		"    {\"x\": null, \"none\": null}\n"
		"  ],\n"
		"  \"sum\": {\"ok\": true},\n"
		"  \"empty\": [\n"
		"  ]\n"
		"}\n");
	free(buf);
}

int main(void)
{
	CU_TestInfo tests[] = {
		{ "each command's rows are unique and printed", test_table },
		{ "--help: usage, -h, exit status, 79 columns", test_help },
		{ "--help: groups from the table, serve's name", test_help_groups },
		{ "parsing fills the attributes", test_parse },
		{ "--dscp, --tclass and the summary's DSCP", test_dscp },
		{ "the JSON writer's layout and escapes", test_json },
		CU_TEST_INFO_NULL,
	};
	return ferry_cu_run("cli", tests);
}
