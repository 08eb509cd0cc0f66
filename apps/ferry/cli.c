#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ferry/error.h"
#include "ferry/log.h"
#include "ferry/xport.h"

const char *cli_who(const char *cmd)
{
	static _Thread_local char buf[80];

	if (!strcmp(cmd, "stage"))
		return "ferry-stage";
	snprintf(buf, sizeof(buf), "ferry %s", cmd);
	return buf;
}

static void bad(const char *cmd, const char *opt, const char *s,
		const char *reason)
{
	fprintf(stderr, "%s: bad value '%s' for %s: %s\n", cli_who(cmd), s, opt,
		reason);
}

bool cli_size(const char *cmd, const char *opt, const char *s, uint64_t *out)
{
	char *end;
	double v;
	uint64_t mul = 1;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || errno || v < 0) {
		bad(cmd, opt, s, "want a size such as 4M, 64K or 1G");
		return false;
	}
	switch (toupper((unsigned char)*end)) {
	case 0:
		break;
	case 'K':
		mul = 1ull << 10;
		break;
	case 'M':
		mul = 1ull << 20;
		break;
	case 'G':
		mul = 1ull << 30;
		break;
	case 'T':
		mul = 1ull << 40;
		break;
	default:
		bad(cmd, opt, s, "unknown unit (use K, M, G or T, powers of 2)");
		return false;
	}
	if (*end) {
		end++;
		if (*end == 'i' || *end == 'I')
			end++;
		if (*end == 'B' || *end == 'b')
			end++;
		if (*end) {
			bad(cmd, opt, s, "want a size such as 4M, 64K or 1G");
			return false;
		}
	}
	if (v * (double)mul > 9e18) {
		bad(cmd, opt, s, "too large");
		return false;
	}
	*out = (uint64_t)(v * (double)mul);
	return true;
}

bool cli_uint(const char *cmd, const char *opt, const char *s, uint64_t min,
	      uint64_t max, unsigned *out)
{
	char *end, reason[96];
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (end == s || *end || errno || v < (long long)min ||
	    (unsigned long long)v > max) {
		snprintf(reason, sizeof(reason), "want a whole number from %llu to %llu",
			 (unsigned long long)min, (unsigned long long)max);
		bad(cmd, opt, s, reason);
		return false;
	}
	*out = (unsigned)v;
	return true;
}

bool cli_seconds(const char *cmd, const char *opt, const char *s, double min,
		 double max, double *out)
{
	char *end, reason[96];
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || *end || errno || !(v >= min && v <= max)) {
		snprintf(reason, sizeof(reason), "want seconds from %g to %g",
			 min, max);
		bad(cmd, opt, s, reason);
		return false;
	}
	*out = v;
	return true;
}

bool cli_hostport(const char *cmd, const char *arg, const char *defport,
		  char *host, size_t hlen, char *port, size_t plen)
{
	const char *colon;
	size_t n;

	if (arg[0] == '[') {
		const char *rb = strchr(arg, ']');
		if (!rb)
			goto bad;
		n = (size_t)(rb - arg - 1);
		colon = rb[1] == ':' ? rb + 1 : NULL;
		if (rb[1] && !colon)
			goto bad;
		arg++;
	} else {
		colon = strrchr(arg, ':');
		if (colon && strchr(arg, ':') != colon)
			colon = NULL; /* bare IPv6 address, no port */
		n = colon ? (size_t)(colon - arg) : strlen(arg);
	}
	if (n == 0 || n >= hlen)
		goto bad;
	memcpy(host, arg, n);
	host[n] = 0;
	snprintf(port, plen, "%s", colon ? colon + 1 : defport);
	if (colon) {
		char *end;
		long p = strtol(colon + 1, &end, 10);
		if (*end || p < 1 || p > 65535)
			goto bad;
	}
	return true;
bad:
	fprintf(stderr,
		"%s: bad address '%s': want HOST or HOST:PORT ([IPv6]:PORT)\n",
		cli_who(cmd), arg);
	return false;
}

bool cli_key(const char *cmd, const char *path, bool no_auth,
	     struct ferry_key *key, const struct ferry_key **out)
{
	char why[256];
	int err;

	*out = NULL;
	if (no_auth)
		return true;
	if (!path)
		path = getenv("FERRY_KEY");
	if (!path || !*path) {
		fprintf(stderr,
			"%s: no key: give --key FILE (or set FERRY_KEY); make one with `ferry keygen FILE` and copy it to both hosts\n",
			cli_who(cmd));
		return false;
	}
	err = ferry_key_load(path, key, why, sizeof(why));
	if (err) {
		fprintf(stderr, "%s: %s\n", cli_who(cmd), why);
		return false;
	}
	*out = key;
	return true;
}

static bool name_ok(const char *s)
{
	size_t n = strlen(s);

	return n >= 1 && n <= 64 &&
	       strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			 "0123456789._-") == n;
}

bool cli_key_name(struct cli_common *c, const char *cmd)
{
	const char *path = c->key_path ? c->key_path : getenv("FERRY_KEY");
	const char *env = getenv("FERRY_KEY_NAME");

	if (c->key_name[0]) {
		if (!name_ok(c->key_name)) {
			fprintf(stderr,
				"%s: bad --key-name '%s': 1 to 64 letters, digits, '.', '_' or '-'\n",
				cli_who(cmd), c->key_name);
			return false;
		}
	} else if (env && *env) {
		snprintf(c->key_name, sizeof(c->key_name), "%s", env);
		if (!name_ok(c->key_name)) {
			fprintf(stderr,
				"%s: bad FERRY_KEY_NAME '%s': 1 to 64 letters, digits, '.', '_' or '-'\n",
				cli_who(cmd), env);
			return false;
		}
	} else if (path && *path) {
		const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 :
							path;
		size_t n = strlen(base);

		if (n > 4 && strcmp(base + n - 4, ".key") == 0)
			n -= 4;
		if (n < sizeof(c->key_name)) {
			memcpy(c->key_name, base, n);
			c->key_name[n] = '\0';
		}
		if (!name_ok(c->key_name))
			c->key_name[0] = '\0';
	}
	c->o.key_name = c->key_name[0] ? c->key_name : NULL;
	return true;
}

bool cli_client(struct cli_common *c, const char *cmd, bool check)
{
	char why[512];

	if (c->o.streams > c->o.slots)
		c->o.slots = c->o.streams; /* at least one slot per stream */
	if (check && ferry_opts_check(&c->o, why, sizeof(why))) {
		fprintf(stderr, "%s: %s\n", cli_who(cmd), why);
		return false;
	}
	return cli_key(cmd, c->key_path, c->no_auth, &c->key, &c->o.key) &&
	       cli_key_name(c, cmd);
}

void cli_common_init(struct cli_common *c)
{
	memset(c, 0, sizeof(*c));
	ferry_opts_init(&c->o);
}

static const char *log_cmd;

static void log_stderr(enum ferry_log_level level, const char *msg, void *arg)
{
	static const char *const names[] = { "error", "warning", "info",
					     "debug" };
	(void)arg;
	fprintf(stderr, "%s: %s: %s\n", cli_who(log_cmd), names[level], msg);
}

void cli_logger(const char *cmd, bool quiet, bool verbose)
{
	log_cmd = cmd;
	/* -v asks for the log on stderr even beside --json (which is
	 * quiet otherwise, so that stderr holds only what went wrong) */
	ferry_log_set(log_stderr, NULL,
		      verbose ? FERRY_LOG_DEBUG :
		      quiet ? FERRY_LOG_WARN : FERRY_LOG_INFO);
	/* every command that moves data gets here once its options are
	 * read: as many descriptors as the host allows (said when raised) */
	ferry_nofile_raise();
}

void cli_die_usage(const char *cmd, const char *hint)
{
	fprintf(stderr, "%s: %s (see `%s --help`)\n", cli_who(cmd), hint,
		cli_who(cmd));
	exit(2);
}

/* How many long options "--text" (up to '=') may mean: 1 for an exact
 * name; otherwise the names it abbreviates, listed in buf. */
static int long_matches(const char *text, const struct option *longopts,
			char *buf, size_t len)
{
	size_t n = strcspn(text, "=");
	int matches = 0;

	buf[0] = '\0';
	for (const struct option *o = longopts; o && o->name; o++) {
		if (strncmp(o->name, text, n))
			continue;
		if (strlen(o->name) == n)
			return 1;
		snprintf(buf + strlen(buf), len - strlen(buf), "%s--%s",
			 matches++ ? ", " : "", o->name);
	}
	return matches;
}

int cli_getopt(const char *cmd, int argc, char **argv, const char *shortopts,
	       const struct option *longopts)
{
	char opts[64], what[160], names[256];
	const char *arg;
	bool is_long;
	int opt;

	snprintf(opts, sizeof(opts), ":%s", shortopts);
	opterr = 0; /* one line of ours per mistake, not getopt's */
	opt = getopt_long(argc, argv, opts, longopts, NULL);
	if (opt != '?' && opt != ':')
		return opt;
	/* A long option's mistake ends its word, argv[optind - 1]; a short
	 * one is optopt (its word may hold more: "-vz"). */
	arg = argv[optind - 1];
	is_long = strncmp(arg, "--", 2) == 0 &&
		  (opt == ':' || !optopt || strchr(arg, '='));
	if (is_long)
		snprintf(what, sizeof(what), "%.*s", (int)strcspn(arg, "="),
			 arg);
	else
		snprintf(what, sizeof(what), "-%c", optopt);
	if (opt == ':')
		fprintf(stderr, "%s: option '%s' needs a value", cli_who(cmd), what);
	else if (is_long && optopt)
		fprintf(stderr, "%s: option '%s' takes no value", cli_who(cmd),
			what);
	else if (is_long && long_matches(what + 2, longopts, names,
					 sizeof(names)) > 1)
		fprintf(stderr, "%s: option '%s' is ambiguous (%s)", cli_who(cmd),
			what, names);
	else
		fprintf(stderr, "%s: unknown option '%s'", cli_who(cmd), what);
	fprintf(stderr, " (see `%s --help`)\n", cli_who(cmd));
	exit(2);
}
