/* Exports: the daemon's access config, its errors, rights, prefixes, keys. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cu.h"
#include "ferry/error.h"
#include "ferry/key.h"
#include "io/exports.h"
#include "util/util.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static char dir[64];
static int n_loads;

/* A key derived from the file name, so each file has its own key; a file
 * "NAME-copy" holds NAME's key; a name containing "missing" does not
 * exist. */
static void fake_key(const char *path, struct ferry_key *key)
{
	size_t n = strlen(path);
	uint32_t h = 5381;

	if (n > 5 && !strcmp(path + n - 5, "-copy"))
		n -= 5;
	for (size_t i = 0; i < n; i++)
		h = h * 33 + (unsigned char)path[i];
	for (size_t i = 0; i < FERRY_KEY_LEN; i++)
		key->bytes[i] = (uint8_t)(h >> (8 * (i % 4))) ^ (uint8_t)i;
}

static int fake_load(void *arg, const char *path, struct ferry_key *key,
		     char *why, size_t whylen)
{
	(void)arg;
	n_loads++;
	if (strstr(path, "missing")) {
		snprintf(why, whylen, "key file %s does not exist", path);
		return -ENOENT;
	}
	fake_key(path, key);
	return 0;
}

static const char good[] =
	"# /etc/ferry/exports.conf\n"
	"root /srv/ferry/            # every path is below it\n"
	"\n"
	"key ops   /k/ops    rights all               paths /\n"
	"key atlas /k/atlas  rights read,write        paths /atlas /shared/in/\n"
	"\tkey mon /k/mon paths /atlas/summary rights read\r\n"
	"key up    /k/up     rights write delete      paths /incoming # w+d\n";

static struct ferry__exports *parse_good(void)
{
	struct ferry__exports *ex = NULL;
	char why[512] = "";
	int ret = ferry__exports_parse(good, "good.conf", fake_load, NULL, &ex,
				       why, sizeof(why));

	if (ret)
		fprintf(stderr, "parse: %s\n", why);
	CU_ASSERT_EQUAL(ret, 0);
	return ex;
}

static void test_good_file(void)
{
	struct ferry__exports *ex;
	char why[512] = "";

	n_loads = 0;
	ex = parse_good();
	CU_ASSERT_PTR_NOT_NULL_FATAL(ex);
	CU_ASSERT_EQUAL(n_loads, 4);
	CU_ASSERT_STRING_EQUAL(ferry__exports_root(ex), "/srv/ferry");
	CU_ASSERT_EQUAL(ferry__exports_allow(ex, "ops", FERRY__RIGHT_ALL,
					     "/any/where", why, sizeof(why)),
			0);
	CU_ASSERT_EQUAL(ferry__exports_allow(ex, "atlas", FERRY__RIGHT_WRITE,
					     "/shared/in/f", why, sizeof(why)),
			0);
	CU_ASSERT_EQUAL(ferry__exports_allow(ex, "mon", FERRY__RIGHT_READ,
					     "/atlas/summary/day1", why,
					     sizeof(why)),
			0);
	CU_ASSERT_EQUAL(ferry__exports_allow(ex, "up", FERRY__RIGHT_DELETE,
					     "/incoming/x", why, sizeof(why)),
			0);
	ferry__exports_free(ex);
	ferry__exports_free(NULL);

	/* the root alone may be "/" */
	CU_ASSERT_EQUAL(ferry__exports_parse("root /\nkey a k rights read "
					     "paths /\n",
					     NULL, fake_load, NULL, &ex, why,
					     sizeof(why)),
			0);
	CU_ASSERT_STRING_EQUAL(ferry__exports_root(ex), "/");
	ferry__exports_free(ex);
}

struct bad_case {
	const char *text;
	int err;
	const char *why; /* a substring of the reason */
};

static const struct bad_case bad[] = {
	{ "root /srv\nfoo bar\n", -EINVAL,
	  "cfg:2: unknown word `foo` (a line starts with `root` or `key`)" },
	{ "root /srv\nkey a /k/a rights read paths /\n"
	  "key a /k/b rights read paths /\n",
	  -EINVAL, "cfg:3: duplicate key name a (first on line 2)" },
	{ "root /srv\n\nkey a /k/a rights read,exec paths /\n", -EINVAL,
	  "cfg:3: key a: unknown right `exec`" },
	{ "root /srv\nkey a /k/a rights read, paths /\n", -EINVAL,
	  "cfg:2: key a: unknown right ``" },
	{ "root /srv\nkey a /k/a rights read paths atlas\n", -EINVAL,
	  "cfg:2: key a: path prefix atlas is relative" },
	{ "root /srv\nkey a /k/a rights read paths /a/../b\n", -EINVAL,
	  "cfg:2: key a: path prefix /a/../b has a '..' component" },
	{ "root /srv\nkey a /k/a rights read paths /..\n", -EINVAL,
	  "cfg:2: key a: path prefix /.. has a '..' component" },
	{ "root /srv\nkey a /k/a rights read paths /a//b\n", -EINVAL,
	  "cfg:2: key a: path prefix /a//b has an empty or '.' component" },
	{ "root /srv\nkey a /k/a rights read paths /./a\n", -EINVAL,
	  "cfg:2: key a: path prefix /./a has an empty or '.' component" },
	{ "root /srv\nkey a /k/a rights read paths //\n", -EINVAL,
	  "cfg:2: key a: path prefix // has an empty component" },
	{ "key a /k/a rights read paths /\n", -EINVAL,
	  "cfg: no `root` line" },
	{ "root /srv\n# two\nroot /data\nkey a /k/a rights read paths /\n",
	  -EINVAL, "cfg:3: second `root` line (the first is line 1)" },
	{ "root srv\n", -EINVAL, "cfg:1: root srv is relative" },
	{ "root /srv/../etc\n", -EINVAL,
	  "cfg:1: root /srv/../etc has a '..' component" },
	{ "root /srv /data\n", -EINVAL, "cfg:1: `root` takes one directory" },
	{ "root\n", -EINVAL, "cfg:1: `root` needs a directory" },
	{ "root /srv\n", -EINVAL, "cfg: no `key` lines" },
	{ "root /srv\nkey a /k/missing rights read paths /\n", -ENOENT,
	  "cfg:2: key a: key file /k/missing does not exist" },
	{ "root /srv\nkey a /k/a rights read paths /\n"
	  "key b /k/a-copy rights read paths /\n",
	  -EINVAL,
	  "cfg:3: key b: its key file /k/a-copy holds the same key as key a "
	  "(line 2)" },
	{ "root /srv\nkey a /k/a paths /\n", -EINVAL,
	  "cfg:2: key a: no rights" },
	{ "root /srv\nkey a /k/a rights read\n", -EINVAL,
	  "cfg:2: key a: no paths" },
	{ "root /srv\nkey a rights read paths /\n", -EINVAL,
	  "cfg:2: key a: the key file is missing" },
	{ "root /srv\nkey\n", -EINVAL, "cfg:2: `key` needs a name" },
	{ "root /srv\nkey a/b /k/a rights read paths /\n", -EINVAL,
	  "cfg:2: key name `a/b` is not valid" },
	{ "root /srv\nkey a /k/a rights read paths / rights write\n", -EINVAL,
	  "cfg:2: key a: `rights` given twice" },
	{ "root /srv\nkey a /k/a read paths /\n", -EINVAL,
	  "cfg:2: key a: unknown word `read` (expected `rights` or `paths`)" },
};

static void test_errors(void)
{
	for (size_t i = 0; i < N(bad); i++) {
		struct ferry__exports *ex = (void *)1;
		char why[512] = "";
		int ret = ferry__exports_parse(bad[i].text, "cfg", fake_load,
					       NULL, &ex, why, sizeof(why));

		if (ret != bad[i].err || !strstr(why, bad[i].why))
			fprintf(stderr, "\ncase %zu: got %d \"%s\"\n", i, ret,
				why);
		CU_ASSERT_EQUAL(ret, bad[i].err);
		CU_ASSERT_PTR_NOT_NULL(strstr(why, bad[i].why));
		CU_ASSERT_PTR_NULL(ex);
	}
}

/* Key files are read only once the line parses. */
static void test_no_load_on_syntax_error(void)
{
	struct ferry__exports *ex;
	char why[512];

	n_loads = 0;
	CU_ASSERT_EQUAL(ferry__exports_parse("root /srv\nkey a /k/a rights "
					     "bogus paths /\n",
					     "cfg", fake_load, NULL, &ex, why,
					     sizeof(why)),
			-EINVAL);
	CU_ASSERT_EQUAL(n_loads, 0);
}

static int allow(const struct ferry__exports *ex, const char *key,
		 unsigned rights, const char *path)
{
	char why[512] = "";

	return ferry__exports_allow(ex, key, rights, path, why, sizeof(why));
}

static void test_prefixes(void)
{
	struct ferry__exports *ex = parse_good();
	const unsigned R = FERRY__RIGHT_READ;

	CU_ASSERT_PTR_NOT_NULL_FATAL(ex);
	/* component-wise: /atlas covers itself and below, not /atlasX */
	CU_ASSERT_EQUAL(allow(ex, "atlas", R, "/atlas"), 0);
	CU_ASSERT_EQUAL(allow(ex, "atlas", R, "/atlas/x"), 0);
	CU_ASSERT_EQUAL(allow(ex, "atlas", R, "/atlas/x/y/z"), 0);
	CU_ASSERT_EQUAL(allow(ex, "atlas", R, "atlas/x"), 0);
	CU_ASSERT_EQUAL(allow(ex, "atlas", R, "/atlasX"), -EACCES);
	CU_ASSERT_EQUAL(allow(ex, "atlas", R, "/atlasX/y"), -EACCES);
	CU_ASSERT_EQUAL(allow(ex, "atlas", R, "/atla"), -EACCES);
	CU_ASSERT_EQUAL(allow(ex, "atlas", R, "/"), -EACCES);
	CU_ASSERT_EQUAL(allow(ex, "atlas", R, ""), -EACCES);
	CU_ASSERT_EQUAL(allow(ex, "atlas", R, "/cms/atlas"), -EACCES);
	/* a deeper prefix, written with a trailing '/' in the config */
	CU_ASSERT_EQUAL(allow(ex, "atlas", R, "/shared/in"), 0);
	CU_ASSERT_EQUAL(allow(ex, "atlas", R, "/shared/in/f"), 0);
	CU_ASSERT_EQUAL(allow(ex, "atlas", R, "/shared/inbox"), -EACCES);
	CU_ASSERT_EQUAL(allow(ex, "atlas", R, "/shared"), -EACCES);
	CU_ASSERT_EQUAL(allow(ex, "mon", R, "/atlas/summary"), 0);
	CU_ASSERT_EQUAL(allow(ex, "mon", R, "/atlas/summary2"), -EACCES);
	CU_ASSERT_EQUAL(allow(ex, "mon", R, "/atlas"), -EACCES);
	/* "/" covers everything, the root itself too */
	CU_ASSERT_EQUAL(allow(ex, "ops", R, "/"), 0);
	CU_ASSERT_EQUAL(allow(ex, "ops", R, ""), 0);
	CU_ASSERT_EQUAL(allow(ex, "ops", R, "/a/b/c"), 0);
	/* request paths are clean: no '..', '.', empty or trailing '/' */
	CU_ASSERT_EQUAL(allow(ex, "ops", R, "/atlas/../etc"), -EINVAL);
	CU_ASSERT_EQUAL(allow(ex, "ops", R, ".."), -EINVAL);
	CU_ASSERT_EQUAL(allow(ex, "ops", R, "/./a"), -EINVAL);
	CU_ASSERT_EQUAL(allow(ex, "ops", R, "//a"), -EINVAL);
	CU_ASSERT_EQUAL(allow(ex, "ops", R, "/a//b"), -EINVAL);
	CU_ASSERT_EQUAL(allow(ex, "atlas", R, "/atlas/"), -EINVAL);
	CU_ASSERT_EQUAL(allow(ex, "ops", R, "//"), -EINVAL);
	CU_ASSERT_EQUAL(allow(ex, "ops", R, NULL), -EINVAL);
	ferry__exports_free(ex);
}

static void test_rights(void)
{
	struct ferry__exports *ex = parse_good();
	char why[512] = "", buf[32];

	CU_ASSERT_PTR_NOT_NULL_FATAL(ex);
	CU_ASSERT_EQUAL(allow(ex, "mon", FERRY__RIGHT_READ, "/atlas/summary"),
			0);
	CU_ASSERT_EQUAL(ferry__exports_allow(ex, "mon", FERRY__RIGHT_WRITE,
					     "/atlas/summary/x", why,
					     sizeof(why)),
			-EACCES);
	CU_ASSERT_STRING_EQUAL(why, "key mon may not write /atlas/summary/x: "
				    "its rights are read");
	/* several rights at once: all are needed; the reason names the
	 * missing one */
	CU_ASSERT_EQUAL(allow(ex, "atlas",
			      FERRY__RIGHT_READ | FERRY__RIGHT_WRITE,
			      "/atlas/x"),
			0);
	CU_ASSERT_EQUAL(ferry__exports_allow(ex, "atlas",
					     FERRY__RIGHT_WRITE |
						     FERRY__RIGHT_DELETE,
					     "/atlas/x", why, sizeof(why)),
			-EACCES);
	CU_ASSERT_STRING_EQUAL(why, "key atlas may not delete /atlas/x: its "
				    "rights are read,write");
	/* rights and paths both must hold */
	CU_ASSERT_EQUAL(ferry__exports_allow(ex, "atlas", FERRY__RIGHT_READ,
					     "/cms/f", why, sizeof(why)),
			-EACCES);
	CU_ASSERT_STRING_EQUAL(why, "key atlas may not read /cms/f: it is "
				    "outside the key's paths (/atlas "
				    "/shared/in)");
	/* a client's control characters never reach the log line raw */
	CU_ASSERT_EQUAL(ferry__exports_allow(ex, "atlas", FERRY__RIGHT_READ,
					     "/cms/a\nb\x1b", why, sizeof(why)),
			-EACCES);
	CU_ASSERT_STRING_EQUAL(why, "key atlas may not read /cms/a\\nb\\x1b: "
				    "it is outside the key's paths (/atlas "
				    "/shared/in)");
	/* write and delete without read */
	CU_ASSERT_EQUAL(allow(ex, "up", FERRY__RIGHT_READ, "/incoming/x"),
			-EACCES);
	CU_ASSERT_EQUAL(allow(ex, "up",
			      FERRY__RIGHT_WRITE | FERRY__RIGHT_DELETE,
			      "/incoming/x"),
			0);
	/* all = read, write and delete */
	CU_ASSERT_EQUAL(allow(ex, "ops", FERRY__RIGHT_ALL, "/x"), 0);
	/* the staging area at the root is no client's, whatever its rights;
	 * names that merely start like it are ordinary */
	CU_ASSERT_EQUAL(ferry__exports_allow(ex, "ops", FERRY__RIGHT_READ,
					     "/.ferry/ab/x.part", why,
					     sizeof(why)),
			-EACCES);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "staging area"));
	CU_ASSERT_EQUAL(allow(ex, "ops", FERRY__RIGHT_READ, "/.ferry"), -EACCES);
	CU_ASSERT_EQUAL(allow(ex, "ops", FERRY__RIGHT_WRITE, ".ferry/lock"),
			-EACCES);
	CU_ASSERT_EQUAL(allow(ex, "ops", FERRY__RIGHT_READ, "/.ferryx"), 0);
	CU_ASSERT_EQUAL(allow(ex, "ops", FERRY__RIGHT_READ, "/a/.ferry"), 0);
	/* unknown key, no key, bad masks */
	CU_ASSERT_EQUAL(ferry__exports_allow(ex, "cms", FERRY__RIGHT_READ,
					     "/atlas", why, sizeof(why)),
			-EACCES);
	CU_ASSERT_STRING_EQUAL(why, "key cms may not read /atlas: it is not "
				    "in the exports");
	CU_ASSERT_EQUAL(allow(ex, NULL, FERRY__RIGHT_READ, "/atlas"), -EACCES);
	CU_ASSERT_EQUAL(allow(ex, "ops", 0, "/x"), -EINVAL);
	CU_ASSERT_EQUAL(allow(ex, "ops", 8, "/x"), -EINVAL);
	/* NULL why is fine */
	CU_ASSERT_EQUAL(ferry__exports_allow(ex, "mon", FERRY__RIGHT_DELETE,
					     "/x", NULL, 0),
			-EACCES);
	CU_ASSERT_STRING_EQUAL(ferry__exports_rights_str(5, buf, sizeof(buf)),
			       "read,delete");
	CU_ASSERT_STRING_EQUAL(ferry__exports_rights_str(0, buf, sizeof(buf)),
			       "none");
	ferry__exports_free(ex);
}

static void test_key_lookup(void)
{
	static const char *const names[] = { "ops", "atlas", "mon", "up" };
	struct ferry__exports *ex = parse_good();
	struct ferry_key k;

	CU_ASSERT_PTR_NOT_NULL_FATAL(ex);
	for (size_t i = 0; i < N(names); i++) {
		char path[32];
		const char *name;

		snprintf(path, sizeof(path), "/k/%s", names[i]);
		fake_key(path, &k);
		name = ferry__exports_name_by_key(ex, &k);
		CU_ASSERT_PTR_NOT_NULL(name);
		if (name)
			CU_ASSERT_STRING_EQUAL(name, names[i]);
		CU_ASSERT_PTR_NOT_NULL(ferry__exports_key_by_name(ex,
								  names[i]));
		CU_ASSERT_EQUAL(memcmp(ferry__exports_key_by_name(ex, names[i]),
				       &k, sizeof(k)),
				0);
	}
	fake_key("/k/cms", &k);
	CU_ASSERT_PTR_NULL(ferry__exports_name_by_key(ex, &k));
	k.bytes[0] ^= 1;
	CU_ASSERT_PTR_NULL(ferry__exports_name_by_key(ex, &k));
	CU_ASSERT_PTR_NULL(ferry__exports_key_by_name(ex, "cms"));
	ferry__exports_free(ex);
}

static const char *path_in(const char *name)
{
	static char p[128];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return p;
}

static void put_file(const char *name, const char *text)
{
	FILE *f = fopen(path_in(name), "w");

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs(text, f);
	fclose(f);
	CU_ASSERT_EQUAL(chmod(path_in(name), 0644), 0); /* whatever umask */
}

/* From files: real key files through ferry_key_load, relative key paths
 * next to the config, the loader's permission check. */
static void test_load_files(void)
{
	struct ferry__exports *ex = NULL;
	struct ferry_key k;
	char why[512] = "", conf[128];

	CU_ASSERT_EQUAL_FATAL(mkdir(path_in("keys"), 0700), 0);
	CU_ASSERT_EQUAL_FATAL(ferry_key_generate(path_in("keys/a.key"), why,
						 sizeof(why)),
			      0);
	CU_ASSERT_EQUAL_FATAL(ferry_key_generate(path_in("keys/b.key"), why,
						 sizeof(why)),
			      0);
	put_file("exports.conf", "root /srv\n"
				 "key a keys/a.key rights read paths /a\n"
				 "key b keys/b.key rights all paths /\n");
	snprintf(conf, sizeof(conf), "%s", path_in("exports.conf"));
	CU_ASSERT_EQUAL(ferry__exports_load(conf, &ex, why, sizeof(why)), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ex);
	CU_ASSERT_EQUAL(ferry_key_load(path_in("keys/a.key"), &k, why,
				       sizeof(why)),
			0);
	CU_ASSERT_PTR_NOT_NULL(ferry__exports_name_by_key(ex, &k));
	CU_ASSERT_STRING_EQUAL(ferry__exports_name_by_key(ex, &k), "a");
	ferry__exports_free(ex);

	/* a key file open to others is refused, with the config's line */
	CU_ASSERT_EQUAL(chmod(path_in("keys/b.key"), 0644), 0);
	CU_ASSERT_EQUAL(ferry__exports_load(conf, &ex, why, sizeof(why)),
			-FERRY_EKEY);
	CU_ASSERT_PTR_NULL(ex);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "exports.conf:3: key b: key file"));
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "chmod 600"));

	CU_ASSERT_EQUAL(chmod(path_in("keys/b.key"), 0600), 0);

	/* a config that group or others may write is refused, as a key
	 * file others may read is: whoever writes it grants any right */
	static const mode_t loose[] = { 0666, 0664, 0646, 0620, 0602 };
	for (size_t i = 0; i < FERRY__ARRAY_SIZE(loose); i++) {
		char want[64];

		CU_ASSERT_EQUAL(chmod(conf, loose[i]), 0);
		CU_ASSERT_EQUAL(ferry__exports_load(conf, &ex, why,
						    sizeof(why)),
				-EPERM);
		CU_ASSERT_PTR_NULL(ex);
		snprintf(want, sizeof(want), "(mode %04o); run `chmod go-w ",
			 (unsigned)loose[i]);
		CU_ASSERT_PTR_NOT_NULL(strstr(why, "is writable by group or "
						   "others"));
		CU_ASSERT_PTR_NOT_NULL(strstr(why, want));
	}
	/* readable by all is fine: it holds no secret */
	CU_ASSERT_EQUAL(chmod(conf, 0644), 0);
	CU_ASSERT_EQUAL(ferry__exports_load(conf, &ex, why, sizeof(why)), 0);
	ferry__exports_free(ex);
	ex = NULL;
	/* not a file at all */
	CU_ASSERT_EQUAL(ferry__exports_load(path_in("keys"), &ex, why,
					    sizeof(why)),
			-EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "is not a regular file"));

	/* a missing key file */
	put_file("exports.conf", "root /srv\n"
				 "key a keys/none.key rights read paths /a\n");
	CU_ASSERT_EQUAL(ferry__exports_load(conf, &ex, why, sizeof(why)),
			-ENOENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "exports.conf:2: key a: key file"));

	/* a missing config */
	CU_ASSERT_EQUAL(ferry__exports_load(path_in("nope.conf"), &ex, why,
					    sizeof(why)),
			-ENOENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "nope.conf"));
	CU_ASSERT_PTR_NULL(ex);
}

int main(void)
{
	CU_TestInfo tests[] = {
		{ "good file", test_good_file },
		{ "errors name the line", test_errors },
		{ "no key file read on a syntax error",
		  test_no_load_on_syntax_error },
		{ "prefix matching", test_prefixes },
		{ "rights", test_rights },
		{ "key lookup", test_key_lookup },
		{ "load from files", test_load_files },
		CU_TEST_INFO_NULL,
	};
	char cmd[128];
	int ret;

	snprintf(dir, sizeof(dir), "%s", "/tmp/ferry-test-exports-XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	ret = ferry_cu_run("exports", tests);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	return ret;
}
