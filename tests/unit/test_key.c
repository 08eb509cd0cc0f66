/* Key files: generate, load, permissions, bad content. */
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

static char dir[64];

static const char *path_in(const char *name)
{
	static char p[128];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return p;
}

/* Write a file with exactly this content and mode. */
static const char *put_file(const char *name, const char *text, mode_t mode)
{
	const char *p = path_in(name);
	int fd;

	unlink(p);
	fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0600);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	CU_ASSERT_EQUAL(fchmod(fd, mode), 0);
	close(fd);
	return p;
}

static void test_generate_load(void)
{
	const char *p = path_in("k1");
	struct ferry_key k1, k2;
	char why[512] = "", text[100];
	struct stat st;
	ssize_t n;
	int fd;

	CU_ASSERT_EQUAL_FATAL(ferry_key_generate(p, why, sizeof(why)), 0);
	CU_ASSERT_EQUAL(stat(p, &st), 0);
	CU_ASSERT_EQUAL(st.st_mode & 0777, 0600);
	fd = open(p, O_RDONLY);
	n = read(fd, text, sizeof(text));
	close(fd);
	CU_ASSERT_EQUAL(n, 65);
	CU_ASSERT_EQUAL(text[64], '\n');
	CU_ASSERT_EQUAL(strspn(text, "0123456789abcdef"), 64);
	CU_ASSERT_EQUAL(ferry_key_load(p, &k1, why, sizeof(why)), 0);

	/* Never overwrites. */
	CU_ASSERT_EQUAL(ferry_key_generate(p, why, sizeof(why)), -EEXIST);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "already exists"));
	CU_ASSERT_EQUAL(ferry_key_load(p, &k2, why, sizeof(why)), 0);
	CU_ASSERT_EQUAL(memcmp(&k1, &k2, sizeof(k1)), 0);

	/* Two keys differ. */
	CU_ASSERT_EQUAL(ferry_key_generate(path_in("k2"), why, sizeof(why)), 0);
	CU_ASSERT_EQUAL(ferry_key_load(path_in("k2"), &k2, why, sizeof(why)),
			0);
	CU_ASSERT_NOT_EQUAL(memcmp(&k1, &k2, sizeof(k1)), 0);
}

static void test_known_value(void)
{
	static const char hex[] =
		"000102030405060708090a0b0c0d0e0f"
		"F0F1F2F3F4F5F6F7F8F9FAFBFCFDFEFF";
	char text[80];
	struct ferry_key k;
	char why[512] = "";

	/* Trailing CR LF from an editor is accepted; upper case too. */
	snprintf(text, sizeof(text), "%s\r\n", hex);
	CU_ASSERT_EQUAL(ferry_key_load(put_file("known", text, 0600), &k, why,
				       sizeof(why)),
			0);
	for (int i = 0; i < 16; i++) {
		CU_ASSERT_EQUAL(k.bytes[i], i);
		CU_ASSERT_EQUAL(k.bytes[16 + i], 0xf0 + i);
	}
	/* No newline at all is fine too; a read-only file as well. */
	CU_ASSERT_EQUAL(ferry_key_load(put_file("known", hex, 0400), &k, why,
				       sizeof(why)),
			0);
}

static void test_permissions(void)
{
	static const mode_t bad[] = { 0640, 0604, 0660, 0620, 0601 };
	char want[256], why[512];
	struct ferry_key k;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *p = path_in("open");

		CU_ASSERT_EQUAL_FATAL(ferry_key_generate(p, why, sizeof(why)),
				      0);
		CU_ASSERT_EQUAL(chmod(p, bad[i]), 0);
		why[0] = '\0';
		CU_ASSERT_EQUAL(ferry_key_load(p, &k, why, sizeof(why)),
				-FERRY_EKEY);
		snprintf(want, sizeof(want), "`chmod 600 %s`", p);
		CU_ASSERT_PTR_NOT_NULL(strstr(why, want));
		unlink(p);
	}
}

static void test_bad_content(void)
{
	static const struct {
		const char *text, *why;
	} cases[] = {
		{ "", "found 0 characters" },
		{ "xyz\n", "character 1 is not a hex digit" },
		{ "0123456789abcdef0123456789abcdef"
		  "0123456789abcdef0123456789abcde\n", "found 63" },
		{ "0123456789abcdef0123456789abcdef"
		  "0123456789abcdef0123456789abcdef00\n", "found 66" },
		{ "012345678g abcdef0123456789abcdef"
		  "0123456789abcdef0123456789abcdef\n", "character 10 " },
		{ "0123456789abcdef0123456789abcdef"
		  "0123456789abcdef0123456789abcdef\n"
		  "0123456789abcdef0123456789abcdef"
		  "0123456789abcdef0123456789abcdef\n", "at least" },
	};
	struct ferry_key k;
	char why[512];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		why[0] = '\0';
		CU_ASSERT_EQUAL(ferry_key_load(put_file("bad", cases[i].text,
							0600),
					       &k, why, sizeof(why)),
				-FERRY_EKEY);
		if (!strstr(why, cases[i].why))
			fprintf(stderr, "case %zu: why = %s\n", i, why);
		CU_ASSERT_PTR_NOT_NULL(strstr(why, cases[i].why));
	}
	/* A directory is not a key file. */
	CU_ASSERT_EQUAL(ferry_key_load(dir, &k, why, sizeof(why)),
			-FERRY_EKEY);
}

static void test_missing(void)
{
	const char *p = path_in("nope");
	char want[512], why[512] = "";
	struct ferry_key k;

	CU_ASSERT_EQUAL(ferry_key_load(p, &k, why, sizeof(why)), -ENOENT);
	snprintf(want, sizeof(want),
		 "key file %s does not exist; create one with `ferry keygen "
		 "%s` and copy it to both hosts",
		 p, p);
	CU_ASSERT_STRING_EQUAL(why, want);
	/* A missing directory is an error, not a crash; NULL why is fine. */
	CU_ASSERT_EQUAL(ferry_key_generate("/nonexistent-dir/key", NULL, 0),
			-ENOENT);
}

int main(void)
{
	CU_TestInfo tests[] = {
		{ "generate and load", test_generate_load },
		{ "known value", test_known_value },
		{ "permissions open to others", test_permissions },
		{ "bad content", test_bad_content },
		{ "missing file", test_missing },
		CU_TEST_INFO_NULL,
	};
	char cmd[128];
	int ret;

	snprintf(dir, sizeof(dir), "%s", "/tmp/ferry-test-key-XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	ret = ferry_cu_run("key", tests);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	return ret;
}
