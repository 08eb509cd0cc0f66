/* Option parsing shared by the subcommands: values with units, and one
 * error line when a value is wrong. */
#ifndef FERRY_APP_CLI_H
#define FERRY_APP_CLI_H

#include <stdbool.h>
#include <stdint.h>

#include "ferry/key.h"
#include "ferry/session.h"

/* How messages name the command cmd: "ferry send"; "ferry-stage" for
 * stage, a program of its own (apps/stage). */
const char *cli_who(const char *cmd);

/* Each parser prints "ferry CMD: bad VALUE for OPT: REASON" and returns
 * false when the value is unusable. */
bool cli_size(const char *cmd, const char *opt, const char *s, uint64_t *out);
bool cli_uint(const char *cmd, const char *opt, const char *s, uint64_t min,
	      uint64_t max, unsigned *out);
bool cli_seconds(const char *cmd, const char *opt, const char *s, double min,
		 double max, double *out);

/* Split "HOST[:PORT]" ("[v6]:port" for IPv6) into host and port, port
 * defport when arg gives none. */
bool cli_hostport(const char *cmd, const char *arg, const char *defport,
		  char *host, size_t hlen, char *port, size_t plen);

/* Load the key named by --key or $FERRY_KEY into key; no_auth leaves it
 * NULL. Prints the reason and returns false when there is none to use. */
bool cli_key(const char *cmd, const char *path, bool no_auth,
	     struct ferry_key *key, const struct ferry_key **out);

/* What every command that talks to a peer reads from its options
 * (opts_table.c fills it). */
struct cli_common {
	struct ferry_opts o;
	const char *key_path;
	struct ferry_key key; /* what --key loaded (o.key points here) */
	char key_name[65];  /* --key-name, $FERRY_KEY_NAME or the key file's */
	bool no_auth, json, quiet, verbose;
};
void cli_common_init(struct cli_common *c);

/* The name a client gives a daemon for its key (c->o.key_name): --key-name,
 * else $FERRY_KEY_NAME, else the key file's name without a trailing ".key"
 * (/etc/ferry/atlas.key: "atlas") when that is a valid name; a daemon with
 * one key ignores it. Returns false (reported) for an invalid --key-name. */
bool cli_key_name(struct cli_common *c, const char *cmd);

/* Install a logger that prints libferry's messages to stderr, prefixed
 * with "ferry CMD: ". */
void cli_logger(const char *cmd, bool quiet, bool verbose);

void cli_die_usage(const char *cmd, const char *usage_hint);

/* A client's steps once its options are read: at least one slot per
 * stream, the options checked (unless check is false: --osu sets its
 * own geometry), its key loaded and named. Returns false after saying
 * why (a usage error). */
bool cli_client(struct cli_common *c, const char *cmd, bool check);

/* getopt_long without getopt's own message: an unknown or ambiguous
 * option, a missing value or a value given to an option that takes none
 * is said in one line ("ferry CMD: unknown option '--frobnicate' (see
 * `ferry CMD --help`)") and the command exits 2. Returns what
 * getopt_long returns otherwise. */
struct option;
int cli_getopt(const char *cmd, int argc, char **argv, const char *shortopts,
	       const struct option *longopts);

#endif
