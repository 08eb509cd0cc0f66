/* The option table at work: getopt tables and --help texts made from it
 * (opts_table.h). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "ferry/xport.h"
#include "opts_table.h"

/* Rows one command takes: more than any command has. */
#define MAX_ROWS 64
/* getopt_long's value of a row without a letter: FIRST_VAL + its index. */
#define FIRST_VAL 256
/* --help's text column, and the width it wraps at. */
#define TEXT_COL 24
#define WIDTH 79

const char *cli_group_title(enum cli_group g)
{
	static const char *const titles[] = {
		[G_WHAT] = "What to send",
		[G_FILES] = "Files",
		[G_LISTEN] = "Listening",
		[G_PIPELINE] = "Pipeline",
		[G_OSU] = "Message benchmarks",
		[G_CHECKS] = "Options",
		[G_CAPTURE] = "Options",
		[G_SECURITY] = "Security",
		[G_OUTPUT] = "Output",
		[G_NONE] = "",
		[G_HIDDEN] = "",
	};

	return titles[g];
}

const char *cli_opt_label(const struct cli_opt *o, char *buf, size_t len)
{
	if (o->letter)
		snprintf(buf, len, "-%c", o->letter);
	else
		snprintf(buf, len, "--%s", o->name);
	return buf;
}

/* The rows cmd takes, in table order. Returns how many. */
static size_t rows_of(const struct cli_cmd *cmd, const struct cli_opt **row)
{
	size_t n = 0;

	for (size_t i = 0; i < cli_n_opts && n < MAX_ROWS; i++)
		if (cli_opts[i].cmds & cmd->id)
			row[n++] = &cli_opts[i];
	return n;
}

int cli_parse(const struct cli_cmd *cmd, int argc, char **argv,
	      struct cli_args *a)
{
	const struct cli_opt *row[MAX_ROWS], *o;
	struct option lo[2 * MAX_ROWS + 1];
	char so[2 * MAX_ROWS + 1];
	size_t n = rows_of(cmd, row), ns = 0, nl = 0;
	int opt;

	cli_args_init(a, argv[0]);

	for (size_t i = 0; i < n; i++) {
		o = row[i];
		struct option l = { o->name,
				    o->arg ? required_argument : no_argument,
				    NULL,
				    o->letter ? o->letter : FIRST_VAL + (int)i };
		lo[nl++] = l;
		if (o->alias) {
			l.name = o->alias;
			lo[nl++] = l;
		}
		if (o->letter) {
			so[ns++] = o->letter;
			if (o->arg)
				so[ns++] = ':';
		}
	}
	lo[nl] = (struct option){ 0 };
	so[ns] = '\0';
	while ((opt = cli_getopt(a->cmd, argc, argv, so, lo)) != -1) {
		o = NULL;
		if (opt >= FIRST_VAL)
			o = row[opt - FIRST_VAL];
		for (size_t i = 0; !o && i < n; i++)
			if (row[i]->letter == opt)
				o = row[i];
		if (!o->set) {
			cli_help(cmd, a->cmd, stdout);
			a->exit = 0;
			return -1;
		}
		if (!o->set(a, o, optarg)) {
			a->exit = 2;
			return -1;
		}
		a->marks |= o->mark;
	}
	if (argc - optind < cmd->min_operands ||
	    (cmd->max_operands >= 0 && argc - optind > cmd->max_operands))
		cli_die_usage(a->cmd, cmd->operands_hint);
	return optind;
}

/* The length of the word at w: up to a space, a `code span` whole (the
 * man page sets it in bold, line by line). */
static size_t word_len(const char *w)
{
	bool code = false;
	size_t len;

	for (len = 0; w[len] && (code || w[len] != ' '); len++)
		if (w[len] == '`')
			code = !code;
	return len;
}

/* text, one paragraph, in lines from column TEXT_COL up to WIDTH; the
 * first line goes after what is already on it (col characters). */
static void wrap(FILE *f, const char *text, size_t col)
{
	const char *w = text;

	while (*w) {
		size_t len = word_len(w);

		if (col > TEXT_COL && col + 1 + len > WIDTH) {
			fprintf(f, "\n%*s", TEXT_COL, "");
			col = TEXT_COL;
		} else if (col > TEXT_COL) {
			fputc(' ', f);
			col++;
		}
		fwrite(w, 1, len, f);
		col += len;
		w += len;
		w += strspn(w, " ");
	}
	fputc('\n', f);
}

/* A help text with its CLI_XPORTS mark replaced by this build's
 * transports, in the order auto prefers them ("verbs, uroce or tcp"). */
static const char *with_xports(const char *help, char *buf, size_t len)
{
	const struct ferry_xport_ops *const *l = ferry_xport_list();
	const char *mark = strstr(help, CLI_XPORTS);
	size_t n = 0, at;

	if (!mark)
		return help;
	at = (size_t)snprintf(buf, len, "%.*s", (int)(mark - help), help);
	while (l[n])
		n++;
	for (size_t i = 0; i < n && at < len; i++)
		at += (size_t)snprintf(buf + at, len - at, "%s%s",
				       i == 0 ? "" : i + 1 == n ? " or " : ", ",
				       l[i]->name);
	if (at < len)
		snprintf(buf + at, len - at, "%s", mark + strlen(CLI_XPORTS));
	return buf;
}

/* "  -P, --streams N       parallel streams ..." */
static void print_opt(FILE *f, const struct cli_opt *o)
{
	char buf[512];
	int col = fprintf(f, "  %c%c%c --%s%s%s", o->letter ? '-' : ' ',
			  o->letter ? o->letter : ' ', o->letter ? ',' : ' ',
			  o->name, o->arg ? " " : "", o->arg ? o->arg : "");

	if (col > TEXT_COL - 2) {
		fputc('\n', f);
		col = 0;
	}
	fprintf(f, "%*s", TEXT_COL - col, "");
	/* the help, then its alias and what it is in iperf3's or xrdcp's
	 * words: "(iperf3 -P, --parallel; xrdcp -S, --streams)" */
	char text[768];
	int n = snprintf(text, sizeof(text), "%s",
			 with_xports(o->help, buf, sizeof(buf)));
	if (o->alias && n < (int)sizeof(text))
		n += snprintf(text + n, sizeof(text) - (size_t)n,
			      "; --%s is the same", o->alias);
	if (o->like && n < (int)sizeof(text))
		snprintf(text + n, sizeof(text) - (size_t)n, " (%s)", o->like);
	wrap(f, text, TEXT_COL);
}

void cli_help(const struct cli_cmd *cmd, const char *as, FILE *f)
{
	const struct cli_opt *row[MAX_ROWS];
	size_t n = rows_of(cmd, row);
	const char *who = cli_who(as);
	int indent = (int)strlen("usage: ") + (int)strlen(who) + 1;

	fprintf(f, "usage: %s%s", who, cmd->usage[0] ? " " : "");
	for (const char *u = cmd->usage; *u; u++) {
		fputc(*u, f);
		if (*u == '\n')
			fprintf(f, "%*s", indent, "");
	}
	fprintf(f, "\n\n%s", cmd->about);
	if (cmd->like)
		fprintf(f, "\nInstead of: %s.\n", cmd->like);
	for (size_t s = 0; s < CLI_SECTIONS && cmd->sections[s].group; s++) {
		const struct cli_section *sec = &cmd->sections[s];

		fprintf(f, "\n%s:\n", sec->title ? sec->title :
			cli_group_title(sec->group));
		for (size_t i = 0; i < n; i++)
			if (row[i]->group == sec->group)
				print_opt(f, row[i]);
		if (sec->note)
			fputs(sec->note, f);
	}
	for (size_t i = 0; i < n; i++) {
		if (row[i]->arg && !strcmp(row[i]->arg, "SIZE")) {
			fputs("\nA SIZE is bytes, or a number with K, M, G or T: binary "
			      "units (1K = 1024\nbytes, 1M = 1048576).\n", f);
			break;
		}
	}
	if (cmd->epilogue)
		fprintf(f, "\n%s", cmd->epilogue);
}
