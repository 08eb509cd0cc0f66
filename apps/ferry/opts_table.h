/* The command line in one table: every option once, with the commands
 * that take it, its help group and line, and where its value goes. The
 * getopt tables, every --help text and so the man pages (tools/mkman.py
 * reads `ferry CMD --help`) are made from it (opts.c), and each cmd_*
 * reads its values from one struct cli_args.
 *
 * An option has more than one row only where it means something else to
 * another command (recv's -p is the control port, rocedump's the RoCEv2
 * port); the rows of one long name never share a command. */
#ifndef FERRY_APP_OPTS_TABLE_H
#define FERRY_APP_OPTS_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cli.h"
#include "ferry/doctor.h"
#include "ferry/files.h"
#include "ferry/session.h"

/* The commands, as bits of cli_opt.cmds. */
enum cli_cmd_id {
	CLI_BENCH = 1u << 0,
	CLI_RECV = 1u << 1, /* and serve, the same command */
	CLI_SEND = 1u << 2,
	CLI_CP = 1u << 3,
	CLI_DOCTOR = 1u << 4,
	CLI_ROCEDUMP = 1u << 5,
	CLI_KEYGEN = 1u << 6,
	CLI_VERSION = 1u << 7,
	CLI_STAGE = 1u << 8, /* ferry-stage, an MPI program (apps/stage) */
};

/* Help groups: the sections of a --help text (and of the man page's
 * OPTIONS) that options belong to. */
enum cli_group {
	G_NONE,      /* ends a command's list of sections */
	G_WHAT,      /* bench: what to send */
	G_FILES,     /* send, cp, recv: what happens to files */
	G_LISTEN,    /* recv */
	G_PIPELINE,  /* streams, chunks, transport, placement */
	G_OSU,       /* bench --osu */
	G_CHECKS,    /* doctor: what to check against */
	G_CAPTURE,   /* rocedump: how to read the capture */
	G_SECURITY,  /* keys */
	G_OUTPUT,    /* what is printed, and --help */
	G_HIDDEN,    /* accepted to be refused with a reason, not in --help */
};

/* What the command line said: the attributes of every command. Each
 * command reads its own (cli_args_init gives the defaults). */
struct cli_args {
	const char *cmd;           /* as typed: "recv" or "serve" */
	int exit;                  /* when cli_parse returns -1: 0 after
				      --help, 2 after a bad value */
	struct cli_common c;       /* ferry_opts, key, --json, -q, -v */
	const char *metrics_at;    /* --metrics ADDR:PORT */
	bool metrics_host;         /* --metrics-host */
	unsigned marks;            /* CLI_M_* of the options given */
	/* bench */
	struct ferry_bench_spec bench;
	struct ferry_osu_spec osu;
	bool csv, osu_sizes;
	/* send and cp */
	struct ferry_send_spec send; /* cksum, force, skip, resume, -L, files */
	unsigned marker_ms;
	/* recv */
	const char *port, *bind;
	bool once;
	unsigned max_sessions;
	/* doctor */
	struct ferry_doctor_attr doctor;
	/* rocedump */
	unsigned roce_port;
	/* stage */
	uint64_t split;            /* --split: files above it are cut */
	const char *map;           /* --map FILE */
};

/* cli_opt.mark: what a command checks was given. */
enum {
	CLI_M_BULK = 1u << 0, /* bench: -t, -n, -P, -l, --slots (not --osu) */
	CLI_M_OSU = 1u << 1,  /* bench: an option that needs --osu */
	CLI_M_SHAPE = 1u << 2, /* cp: -b, -l, --slots (a push's own) */
};

struct cli_opt;
/* Store arg (NULL for a flag). Returns false when it is unusable, after
 * printing one line that says why. */
typedef bool cli_set_fn(struct cli_args *a, const struct cli_opt *o,
			const char *arg);

struct cli_opt {
	const char *name;   /* long name, without "--" */
	const char *alias;  /* a second long name that means the same (the
			       one iperf3 or xrdcp users type), or NULL */
	char letter;        /* short letter, 0 for none */
	const char *arg;    /* the argument's name in --help; NULL: a flag */
	unsigned cmds;      /* CLI_* of the commands that take it */
	enum cli_group group;
	unsigned mark;      /* CLI_M_* */
	cli_set_fn *set;    /* NULL: --help */
	size_t off;         /* where set stores: offsetof(struct cli_args, ...) */
	double min, max;    /* the range set checks, where it has one */
	const char *help;   /* one paragraph; --help wraps it */
	const char *like;   /* the options of iperf3 and xrdcp that mean
			       the same: "iperf3 -P, --parallel; xrdcp -S,
			       --streams" (--help prints it; the README's
			       table is made from that) */
};

/* In a help text: replaced by this build's transports when printed. */
#define CLI_XPORTS "@transports@"

extern const struct cli_opt cli_opts[];
extern const size_t cli_n_opts;

/* A section of a command's --help: a group's options under a title. */
struct cli_section {
	enum cli_group group;
	const char *title; /* NULL: the group's own ("Pipeline") */
	const char *note;  /* printed after the options, as written */
};

#define CLI_SECTIONS 6

/* A command: its usage, what it does, its sections, then the rest
 * (notes, exit status, examples), as --help prints them. */
struct cli_cmd {
	const char *name;
	unsigned id;           /* CLI_* */
	const char *usage;     /* after "usage: ferry NAME "; a line break
				  continues it under the first word */
	const char *about;     /* after a blank line */
	int min_operands, max_operands; /* max -1: any number */
	const char *operands_hint; /* said when their count is wrong */
	struct cli_section sections[CLI_SECTIONS]; /* G_NONE ends them */
	const char *epilogue;
	const char *like;      /* the iperf3 or xrdcp command it replaces */
};

extern const struct cli_cmd cli_cmd_bench, cli_cmd_recv, cli_cmd_send,
	cli_cmd_cp, cli_cmd_doctor, cli_cmd_rocedump, cli_cmd_keygen,
	cli_cmd_version, cli_cmd_stage;

/* The title --help gives a group. */
const char *cli_group_title(enum cli_group g);

/* Defaults of every command's attributes into a; cmd as typed. */
void cli_args_init(struct cli_args *a, const char *cmd);

/* Parse argv (argv[0] the command as typed) against the rows of cmd
 * into a, from the defaults (cli_args_init). Returns the index of the
 * first operand, or -1 with a->exit set after printing --help to stdout
 * (0) or saying why a value is bad (2). A mistake getopt finds (an
 * unknown option, a missing value) or a wrong number of operands is
 * said in one line and exits 2. */
int cli_parse(const struct cli_cmd *cmd, int argc, char **argv,
	      struct cli_args *a);

/* Print cmd's --help text, usage naming the command as typed. */
void cli_help(const struct cli_cmd *cmd, const char *as, FILE *f);

/* "-P" for an option with a letter, else "--slots": how messages name it. */
const char *cli_opt_label(const struct cli_opt *o, char *buf, size_t len);

#endif
