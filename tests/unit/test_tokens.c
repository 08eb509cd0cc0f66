/* One-time transfer tokens: issue, key, claim, check, drop; reuse,
 * expiry, every way a session could try to move other files, the cap. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cu.h"
#include "daemon/tokens.h"
#include "ferry/error.h"

#define MiB (1024ull * 1024)

static void add(struct ferry_manifest *m, const char *path, uint8_t type,
		uint64_t size)
{
	CU_ASSERT_EQUAL(ferry__manifest_add(m, path, NULL, type, 0644, size, 0),
			0);
}

/* The files most tests grant: a.dat (1 MiB) and sub/b.dat (5 bytes). */
static void two_files(struct ferry_manifest *m)
{
	ferry__manifest_init(m);
	add(m, "a.dat", FERRY_ENTRY_FILE, MiB);
	add(m, "sub/b.dat", FERRY_ENTRY_FILE, 5);
}

struct issued {
	char name[FERRY_KEYNAME_MAX + 1];
	struct ferry_key secret;
	uint64_t expiry;
};

static int issue(struct ferry__tokens *t, const char *dest, uint32_t flags,
		 unsigned ttl, struct issued *out)
{
	struct ferry_manifest m;
	char why[256] = "";
	int ret;

	two_files(&m);
	ret = ferry__tokens_issue(t, "atlas", dest, &m, flags, ttl, out->name,
				  &out->secret, &out->expiry, why, sizeof(why));
	ferry__manifest_free(&m);
	return ret;
}

static void test_lifecycle(void)
{
	struct ferry__tokens *t = ferry__tokens_new();
	struct issued a, b;
	struct ferry_manifest m;
	struct ferry_key key;
	char why[256] = "";
	uint64_t now = (uint64_t)time(NULL);

	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	CU_ASSERT_EQUAL_FATAL(issue(t, "/in/run1", 0, 0, &a), 0);
	CU_ASSERT_EQUAL_FATAL(issue(t, "/in/run1", 0, 0, &b), 0);
	/* names: "token:" + 32 lowercase hex digits, each its own */
	CU_ASSERT_EQUAL(strlen(a.name), 6 + 32);
	CU_ASSERT_EQUAL(strncmp(a.name, FERRY__TOKEN_PREFIX, 6), 0);
	CU_ASSERT_EQUAL(strspn(a.name + 6, "0123456789abcdef"), 32);
	CU_ASSERT_STRING_NOT_EQUAL(a.name, b.name);
	CU_ASSERT_NOT_EQUAL(memcmp(&a.secret, &b.secret, sizeof(a.secret)), 0);
	CU_ASSERT(a.expiry >= now + FERRY__TOKEN_TTL_DEFAULT &&
		  a.expiry <= now + FERRY__TOKEN_TTL_DEFAULT + 2);

	/* the handshake's lookup gives the secret, until it is claimed */
	CU_ASSERT_EQUAL(ferry__tokens_key(t, a.name, &key, why, sizeof(why)),
			0);
	CU_ASSERT_EQUAL(memcmp(&key, &a.secret, sizeof(key)), 0);
	CU_ASSERT_EQUAL(ferry__tokens_key(t, "token:0123", &key, why,
					  sizeof(why)),
			-FERRY_EAUTH);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "unknown token"));

	/* an unclaimed token opens no session */
	two_files(&m);
	CU_ASSERT_EQUAL(ferry__tokens_check(t, a.name, "in/run1", 0, &m, why,
					    sizeof(why)),
			-EACCES);
	CU_ASSERT_EQUAL(ferry__tokens_claim(t, a.name, why, sizeof(why)), 0);
	/* "/in/run1" and "in/run1" are one place; the order is free */
	CU_ASSERT_EQUAL(ferry__tokens_check(t, a.name, "in/run1", 0, &m, why,
					    sizeof(why)),
			0);
	ferry__manifest_free(&m);
	ferry__manifest_init(&m);
	add(&m, "sub/b.dat", FERRY_ENTRY_FILE, 5);
	add(&m, "a.dat", FERRY_ENTRY_FILE, MiB);
	CU_ASSERT_EQUAL(ferry__tokens_check(t, a.name, "/in/run1", 0, &m, why,
					    sizeof(why)),
			0);
	ferry__manifest_free(&m);

	/* claimed once: never again, by lookup or claim */
	CU_ASSERT_EQUAL(ferry__tokens_key(t, a.name, &key, why, sizeof(why)),
			-FERRY_EAUTH);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "already used"));
	CU_ASSERT_EQUAL(ferry__tokens_claim(t, a.name, why, sizeof(why)),
			-FERRY_EAUTH);
	/* dropped when its session ends: then unknown */
	ferry__tokens_drop(t, a.name);
	ferry__tokens_drop(t, a.name);
	ferry__tokens_drop(t, "token:nothing");
	CU_ASSERT_EQUAL(ferry__tokens_key(t, a.name, &key, why, sizeof(why)),
			-FERRY_EAUTH);
	/* b is untouched */
	CU_ASSERT_EQUAL(ferry__tokens_key(t, b.name, &key, why, sizeof(why)),
			0);
	ferry__tokens_free(t);
	ferry__tokens_free(NULL);
}

static void test_expiry(void)
{
	struct ferry__tokens *t = ferry__tokens_new();
	struct ferry_key key;
	struct issued a, b, c;
	char why[256] = "";

	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	/* a full table whose last two tokens live 1 s */
	for (int i = 2; i < FERRY__TOKENS_MAX; i++)
		if (issue(t, "in", 0, 0, &c)) {
			CU_FAIL("issue below the cap");
			break;
		}
	CU_ASSERT_EQUAL_FATAL(issue(t, "in", 0, 1, &a), 0);
	CU_ASSERT_EQUAL_FATAL(issue(t, "in", 0, 1, &b), 0);
	CU_ASSERT_EQUAL(ferry__tokens_key(t, a.name, &key, why, sizeof(why)),
			0);
	CU_ASSERT_EQUAL(issue(t, "in", 0, 0, &c), -EBUSY);
	sleep(3);
	CU_ASSERT_EQUAL(ferry__tokens_key(t, a.name, &key, why, sizeof(why)),
			-FERRY_EAUTH);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "expired"));
	CU_ASSERT_EQUAL(ferry__tokens_claim(t, b.name, why, sizeof(why)),
			-FERRY_EAUTH);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "expired"));
	/* expired tokens make room for new ones */
	CU_ASSERT_EQUAL(issue(t, "in", 0, 0, &c), 0);
	CU_ASSERT_EQUAL(issue(t, "in", 0, 0, &c), 0);
	CU_ASSERT_EQUAL(issue(t, "in", 0, 0, &c), -EBUSY);
	ferry__tokens_drop(t, c.name);

	/* lifetimes: the maximum is fine, above it is not */
	CU_ASSERT_EQUAL(issue(t, "in", 0, FERRY__TOKEN_TTL_MAX, &a), 0);
	CU_ASSERT(a.expiry >= (uint64_t)time(NULL) + FERRY__TOKEN_TTL_MAX - 1);
	CU_ASSERT_EQUAL(issue(t, "in", 0, FERRY__TOKEN_TTL_MAX + 1, &a),
			-EINVAL);
	ferry__tokens_free(t);
}

/* What a session sends, and the part of why that names the mismatch. */
struct retarget {
	const char *what;
	const char *dest;
	uint32_t flags;
	const char *paths[4];
	uint8_t types[4];
	uint64_t sizes[4];
	const char *why;
};

static const struct retarget retargets[] = {
	{ "other dest", "in/run2", 0, { "a.dat", "sub/b.dat" },
	  { 1, 1 }, { MiB, 5 }, "for files in /in/run1, not in /in/run2" },
	{ "dest root", "/", 0, { "a.dat", "sub/b.dat" },
	  { 1, 1 }, { MiB, 5 }, "not in /" },
	{ "other name", "in/run1", 0, { "a.dat", "sub/c.dat" },
	  { 1, 1 }, { MiB, 5 }, "is for /in/run1/sub/b.dat (5 bytes), not "
				"/in/run1/sub/c.dat" },
	{ "other size", "in/run1", 0, { "a.dat", "sub/b.dat" },
	  { 1, 1 }, { MiB + 1, 5 },
	  "is for /in/run1/a.dat of 1048576 bytes, not 1048577 bytes" },
	{ "extra file", "in/run1", 0, { "a.dat", "sub/b.dat", "z" },
	  { 1, 1, 1 }, { MiB, 5, 1 }, "not for /in/run1/z" },
	{ "missing file", "in/run1", 0, { "a.dat" },
	  { 1 }, { MiB }, "also for /in/run1/sub/b.dat (5 bytes)" },
	{ "no file", "in/run1", 0, { NULL }, { 0 }, { 0 }, "also for" },
	{ "a dir entry", "in/run1", 0, { "sub", "a.dat", "sub/b.dat" },
	  { 2, 1, 1 }, { 0, MiB, 5 }, "not the directory /in/run1/sub" },
	{ "force", "in/run1", FERRY_FILES_FORCE, { "a.dat", "sub/b.dat" },
	  { 1, 1 }, { MiB, 5 }, "without force" },
};

static void test_retarget(void)
{
	struct ferry__tokens *t = ferry__tokens_new();
	struct ferry_manifest m;
	char why[256];
	struct issued a;

	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	CU_ASSERT_EQUAL_FATAL(issue(t, "/in/run1", 0, 0, &a), 0);
	CU_ASSERT_EQUAL_FATAL(ferry__tokens_claim(t, a.name, why, sizeof(why)),
			      0);
	for (size_t i = 0; i < FERRY__ARRAY_SIZE(retargets); i++) {
		const struct retarget *r = &retargets[i];

		ferry__manifest_init(&m);
		for (size_t j = 0; j < 4 && r->paths[j]; j++)
			add(&m, r->paths[j], r->types[j], r->sizes[j]);
		why[0] = '\0';
		CU_ASSERT_EQUAL(ferry__tokens_check(t, a.name, r->dest,
						    r->flags, &m, why,
						    sizeof(why)),
				-EACCES);
		if (!strstr(why, r->why)) {
			fprintf(stderr, "%s: why \"%s\", expected \"%s\"\n",
				r->what, why, r->why);
			CU_FAIL("why does not name the difference");
		}
		ferry__manifest_free(&m);
	}
	/* flags other than force are the session's business */
	two_files(&m);
	CU_ASSERT_EQUAL(ferry__tokens_check(t, a.name, "in/run1",
					    FERRY_FILES_NO_RESUME, &m, why,
					    sizeof(why)),
			0);
	ferry__manifest_free(&m);

	/* a token issued with force allows it */
	CU_ASSERT_EQUAL_FATAL(issue(t, "", FERRY_FILES_FORCE, 0, &a), 0);
	CU_ASSERT_EQUAL_FATAL(ferry__tokens_claim(t, a.name, why, sizeof(why)),
			      0);
	two_files(&m);
	CU_ASSERT_EQUAL(ferry__tokens_check(t, a.name, "/", FERRY_FILES_FORCE,
					    &m, why, sizeof(why)),
			0);
	CU_ASSERT_EQUAL(ferry__tokens_check(t, a.name, "", 0, &m, why,
					    sizeof(why)),
			0);
	ferry__manifest_free(&m);
	ferry__tokens_free(t);
}

static void test_issue_refused(void)
{
	struct ferry__tokens *t = ferry__tokens_new();
	struct ferry_manifest m;
	struct issued a;
	char why[256];

	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	/* a directory entry, no files, a file twice, a bad destination */
	ferry__manifest_init(&m);
	add(&m, "d", FERRY_ENTRY_DIR, 0);
	CU_ASSERT_EQUAL(ferry__tokens_issue(t, "k", "in", &m, 0, 0, a.name,
					    &a.secret, &a.expiry, why,
					    sizeof(why)),
			-EINVAL);
	ferry__manifest_free(&m);
	ferry__manifest_init(&m);
	CU_ASSERT_EQUAL(ferry__tokens_issue(t, "k", "in", &m, 0, 0, a.name,
					    &a.secret, &a.expiry, why,
					    sizeof(why)),
			-EINVAL);
	add(&m, "x", FERRY_ENTRY_FILE, 1);
	add(&m, "x", FERRY_ENTRY_FILE, 1);
	CU_ASSERT_EQUAL(ferry__tokens_issue(t, "k", "in", &m, 0, 0, a.name,
					    &a.secret, &a.expiry, why,
					    sizeof(why)),
			-EINVAL);
	ferry__manifest_free(&m);
	two_files(&m);
	CU_ASSERT_EQUAL(ferry__tokens_issue(t, "k", "in/../etc", &m, 0, 0,
					    a.name, &a.secret, &a.expiry, why,
					    sizeof(why)),
			-EINVAL);
	ferry__manifest_free(&m);
	ferry__tokens_free(t);
}

static void test_cap(void)
{
	struct ferry__tokens *t = ferry__tokens_new();
	struct issued a;

	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	for (int i = 0; i < FERRY__TOKENS_MAX; i++)
		if (issue(t, "in", 0, 0, &a)) {
			CU_FAIL("issue below the cap");
			break;
		}
	CU_ASSERT_EQUAL(issue(t, "in", 0, 0, &a), -EBUSY);
	/* one dropped: room for one more */
	ferry__tokens_drop(t, a.name);
	CU_ASSERT_EQUAL(issue(t, "in", 0, 0, &a), 0);
	CU_ASSERT_EQUAL(issue(t, "in", 0, 0, &a), -EBUSY);
	ferry__tokens_free(t);
}

int main(void)
{
	CU_TestInfo tests[] = {
		{ "issue, key, claim, check, drop", test_lifecycle },
		{ "expiry", test_expiry },
		{ "retargeted sessions are refused", test_retarget },
		{ "bad requests issue nothing", test_issue_refused },
		{ "at most FERRY__TOKENS_MAX live", test_cap },
		CU_TEST_INFO_NULL,
	};

	return ferry_cu_run("tokens", tests);
}
