/* Manifests: walking a tree, path rules, batch encode/decode. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cu.h"
#include "ferry/error.h"
#include "ferry/log.h"
#include "io/manifest.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static char root[64];
static int n_warn;
static char last_warn[512];

static void on_log(enum ferry_log_level level, const char *msg, void *arg)
{
	(void)arg;
	if (level == FERRY_LOG_WARN) {
		n_warn++;
		snprintf(last_warn, sizeof(last_warn), "%s", msg);
	}
}

static const char *at(const char *rel)
{
	static char p[32][512];
	static int k;

	k = (k + 1) % 32;
	snprintf(p[k], sizeof(p[k]), "%s/%s", root, rel);
	return p[k];
}

static void put(const char *rel, const char *text, mode_t mode)
{
	int fd = open(at(rel), O_WRONLY | O_CREAT | O_TRUNC, mode);

	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	CU_ASSERT_EQUAL(fchmod(fd, mode), 0);
	close(fd);
}

static void mk(const char *rel)
{
	CU_ASSERT_EQUAL_FATAL(mkdir(at(rel), 0755), 0);
}

static const struct ferry_entry *find(const struct ferry_manifest *m,
				      const char *path)
{
	for (size_t i = 0; i < m->n; i++)
		if (!strcmp(m->e[i].path, path))
			return &m->e[i];
	return NULL;
}

/* root/src: nested dirs, an empty dir, a 0-byte file, names with spaces,
 * UTF-8 and a newline, symlinks (to a dir, a file, nothing). */
static void make_tree(void)
{
	struct timespec ts[2] = { { 0, UTIME_OMIT }, { 1234567890, 123456789 } };

	mk("src");
	mk("src/a");
	mk("src/a/b");
	mk("src/a/empty");
	put("src/a/b/deep.txt", "deep", 0640);
	CU_ASSERT_EQUAL(utimensat(AT_FDCWD, at("src/a/b/deep.txt"), ts, 0), 0);
	put("src/zero.bin", "", 0644);
	put("src/données é.bin", "0123456789", 0600);
	put("src/with space.txt", "sp", 0644);
	put("src/line\nbreak", "nl", 0644);
	CU_ASSERT_EQUAL(symlink("a", at("src/link")), 0);
	CU_ASSERT_EQUAL(symlink("zero.bin", at("src/flink")), 0);
	CU_ASSERT_EQUAL(symlink("nothing", at("src/dangling")), 0);
	put("single.dat", "single", 0644);
}

static void test_path_valid(void)
{
	char longp[FERRY_PATH_MAX + 1];

	CU_ASSERT_TRUE(ferry__path_valid("a"));
	CU_ASSERT_TRUE(ferry__path_valid("a/b/c.txt"));
	CU_ASSERT_TRUE(ferry__path_valid("données é.bin"));
	CU_ASSERT_TRUE(ferry__path_valid("line\nbreak"));
	CU_ASSERT_TRUE(ferry__path_valid("...") && ferry__path_valid(".a/..b"));
	CU_ASSERT_FALSE(ferry__path_valid(""));
	CU_ASSERT_FALSE(ferry__path_valid("/abs"));
	CU_ASSERT_FALSE(ferry__path_valid("a//b"));
	CU_ASSERT_FALSE(ferry__path_valid("a/"));
	CU_ASSERT_FALSE(ferry__path_valid("."));
	CU_ASSERT_FALSE(ferry__path_valid(".."));
	CU_ASSERT_FALSE(ferry__path_valid("../x"));
	CU_ASSERT_FALSE(ferry__path_valid("a/./b"));
	CU_ASSERT_FALSE(ferry__path_valid("a/.."));
	memset(longp, 'x', sizeof(longp));
	longp[FERRY_PATH_MAX - 1] = '\0';
	CU_ASSERT_TRUE(ferry__path_valid(longp));
	longp[FERRY_PATH_MAX - 1] = 'x';
	longp[FERRY_PATH_MAX] = '\0';
	CU_ASSERT_FALSE(ferry__path_valid(longp));
}

static void test_walk(void)
{
	static const char *const want[] = {
		"src", "src/a", "src/a/b", "src/a/b/deep.txt", "src/a/empty",
		"src/données é.bin", "src/line\nbreak", "src/with space.txt",
		"src/zero.bin", "single.dat",
	};
	char *args[] = { (char *)at("src/"), (char *)at("single.dat") };
	struct ferry_manifest m;
	const struct ferry_entry *e;
	char why[512] = "";

	ferry__manifest_init(&m);
	n_warn = 0;
	CU_ASSERT_EQUAL_FATAL(ferry__manifest_walk(&m, args, 2, NULL, why,
						   sizeof(why)), 0);
	CU_ASSERT_EQUAL_FATAL(m.n, N(want));
	for (size_t i = 0; i < m.n; i++)
		CU_ASSERT_STRING_EQUAL(m.e[i].path, want[i]);
	CU_ASSERT_EQUAL(n_warn, 3); /* link, flink, dangling */
	CU_ASSERT_PTR_NOT_NULL(strstr(last_warn, "symbolic link"));

	e = find(&m, "src/a/b/deep.txt");
	CU_ASSERT_FATAL(e != NULL);
	CU_ASSERT_EQUAL(e->type, FERRY_ENTRY_FILE);
	CU_ASSERT_EQUAL(e->size, 4);
	CU_ASSERT_EQUAL(e->mode, 0640);
	CU_ASSERT_EQUAL(e->mtime_ns, 1234567890123456789LL);
	CU_ASSERT_STRING_EQUAL(e->src, at("src/a/b/deep.txt"));
	e = find(&m, "src/a/empty");
	CU_ASSERT_EQUAL(e->type, FERRY_ENTRY_DIR);
	CU_ASSERT_EQUAL(e->size, 0);
	CU_ASSERT_EQUAL(e->mode, 0755);
	e = find(&m, "src/zero.bin");
	CU_ASSERT_EQUAL(e->type, FERRY_ENTRY_FILE);
	CU_ASSERT_EQUAL(e->size, 0);
	CU_ASSERT_EQUAL(find(&m, "src/données é.bin")->size, 10);
	CU_ASSERT_EQUAL(find(&m, "src/données é.bin")->mode, 0600);
	CU_ASSERT_EQUAL(m.n_files, 6);
	CU_ASSERT_EQUAL(m.total_bytes, 4 + 0 + 10 + 2 + 2 + 6);

	/* the same walk again gives the same manifest */
	struct ferry_manifest m2;
	ferry__manifest_init(&m2);
	CU_ASSERT_EQUAL(ferry__manifest_walk(&m2, args, 2, NULL, why,
					     sizeof(why)), 0);
	CU_ASSERT_EQUAL(m2.n, m.n);
	for (size_t i = 0; i < m.n && i < m2.n; i++)
		CU_ASSERT_STRING_EQUAL(m2.e[i].path, m.e[i].path);
	ferry__manifest_free(&m2);
	ferry__manifest_free(&m);
	CU_ASSERT_EQUAL(m.n, 0);
	CU_ASSERT_PTR_NULL(m.e);
}

/* Which entry each argument became, after what was there: a ranged
 * send finds its file's entry so. */
static void test_walk_arg_entry(void)
{
	char *args[] = { (char *)at("src/"), (char *)at("src/flink"),
			 (char *)at("single.dat") };
	size_t ent[3] = { 7, 7, 7 };
	struct ferry_walk_opts o = { .arg_entry = ent };
	struct ferry_manifest m;
	char why[512] = "";

	ferry__manifest_init(&m);
	CU_ASSERT_EQUAL_FATAL(ferry__manifest_add(&m, "before", NULL,
						  FERRY_ENTRY_FILE, 0644, 1,
						  0), 0);
	CU_ASSERT_EQUAL_FATAL(ferry__manifest_walk(&m, args, 3, &o, why,
						   sizeof(why)), 0);
	CU_ASSERT_EQUAL(ent[0], 1);
	CU_ASSERT_STRING_EQUAL(m.e[ent[0]].path, "src");
	CU_ASSERT_EQUAL(ent[1], SIZE_MAX); /* a symlink, skipped */
	CU_ASSERT_EQUAL_FATAL(ent[2], m.n - 1);
	CU_ASSERT_STRING_EQUAL(m.e[ent[2]].path, "single.dat");
	ferry__manifest_free(&m);
}

static void test_walk_follow(void)
{
	struct ferry_walk_opts o = { .follow_symlinks = true };
	char *args[] = { (char *)at("src") };
	char *flink[] = { (char *)at("src/flink") };
	char *linkdir[] = { (char *)at("src/link//") };
	struct ferry_manifest m;
	const struct ferry_entry *e;
	char why[512] = "";

	ferry__manifest_init(&m);
	n_warn = 0;
	CU_ASSERT_EQUAL_FATAL(ferry__manifest_walk(&m, args, 1, &o, why,
						   sizeof(why)), 0);
	CU_ASSERT_EQUAL(n_warn, 1); /* only the dangling one */
	e = find(&m, "src/flink");
	CU_ASSERT_FATAL(e != NULL);
	CU_ASSERT_EQUAL(e->type, FERRY_ENTRY_FILE);
	CU_ASSERT_EQUAL(find(&m, "src/link")->type, FERRY_ENTRY_DIR);
	CU_ASSERT_EQUAL(find(&m, "src/link/b/deep.txt")->size, 4);
	CU_ASSERT_PTR_NOT_NULL(find(&m, "src/link/empty"));
	CU_ASSERT_PTR_NULL(find(&m, "src/dangling"));
	ferry__manifest_free(&m);

	/* a symlink argument: skipped, or followed */
	n_warn = 0;
	CU_ASSERT_EQUAL(ferry__manifest_walk(&m, flink, 1, NULL, why,
					     sizeof(why)), 0);
	CU_ASSERT_EQUAL(m.n, 0);
	CU_ASSERT_EQUAL(n_warn, 1);
	CU_ASSERT_EQUAL(ferry__manifest_walk(&m, flink, 1, &o, why,
					     sizeof(why)), 0);
	CU_ASSERT_EQUAL_FATAL(m.n, 1);
	CU_ASSERT_STRING_EQUAL(m.e[0].path, "flink");
	ferry__manifest_free(&m);

	/* "link/" names the directory behind the link, even by default */
	CU_ASSERT_EQUAL(ferry__manifest_walk(&m, linkdir, 1, NULL, why,
					     sizeof(why)), 0);
	CU_ASSERT_EQUAL_FATAL(m.n, 4);
	CU_ASSERT_STRING_EQUAL(m.e[0].path, "link");
	CU_ASSERT_STRING_EQUAL(m.e[2].path, "link/b/deep.txt");
	CU_ASSERT_STRING_EQUAL(m.e[2].src, at("src/link/b/deep.txt"));
	ferry__manifest_free(&m);
}

static void test_walk_loop(void)
{
	struct ferry_walk_opts o = { .follow_symlinks = true };
	char *args[] = { (char *)at("loop") };
	struct ferry_manifest m;
	char why[512] = "";

	mk("loop");
	mk("loop/in");
	CU_ASSERT_EQUAL(symlink("..", at("loop/in/up")), 0);
	ferry__manifest_init(&m);
	CU_ASSERT_EQUAL(ferry__manifest_walk(&m, args, 1, &o, why,
					     sizeof(why)), -ELOOP);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "loop/in/up"));
	CU_ASSERT_EQUAL(m.n, 0);
	/* without following, the link is just skipped */
	CU_ASSERT_EQUAL(ferry__manifest_walk(&m, args, 1, NULL, why,
					     sizeof(why)), 0);
	CU_ASSERT_EQUAL(m.n, 2);
	ferry__manifest_free(&m);
}

static void test_walk_refusals(void)
{
	char *fifo_arg[] = { (char *)at("single.dat"), (char *)at("sp") };
	char *missing[] = { (char *)at("single.dat"), (char *)at("nope") };
	char *dup[] = { (char *)at("d1/same"), (char *)at("d2/same") };
	char *dup2[] = { (char *)at("single.dat"), (char *)at("single.dat") };
	char *rootarg[] = { (char *)"/" };
	struct ferry_manifest m;
	char why[512] = "", want[600];

	ferry__manifest_init(&m);
	mk("sp");
	CU_ASSERT_EQUAL(mkfifo(at("sp/pipe"), 0644), 0);
	CU_ASSERT_EQUAL(ferry__manifest_walk(&m, fifo_arg, 2, NULL, why,
					     sizeof(why)), -EINVAL);
	snprintf(want, sizeof(want),
		 "%s is a special file (fifo); ferry moves regular files and "
		 "directories", at("sp/pipe"));
	CU_ASSERT_STRING_EQUAL(why, want);
	CU_ASSERT_EQUAL(m.n, 0); /* nothing from a failed walk */

	CU_ASSERT_EQUAL(ferry__manifest_walk(&m, missing, 2, NULL, why,
					     sizeof(why)), -ENOENT);
	snprintf(want, sizeof(want), "%s: no such file or directory",
		 at("nope"));
	CU_ASSERT_STRING_EQUAL(why, want);
	CU_ASSERT_EQUAL(m.n, 0);

	mk("d1");
	mk("d2");
	put("d1/same", "1", 0644);
	mk("d2/same");
	CU_ASSERT_EQUAL(ferry__manifest_walk(&m, dup, 2, NULL, why,
					     sizeof(why)), -EEXIST);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "'same'"));
	CU_ASSERT_EQUAL(ferry__manifest_walk(&m, dup2, 2, NULL, why,
					     sizeof(why)), -EEXIST);
	CU_ASSERT_EQUAL(ferry__manifest_walk(&m, rootarg, 1, NULL, why,
					     sizeof(why)), -EINVAL);
	CU_ASSERT_EQUAL(m.n, 0);
}

/* "." arrives under the real name of the directory. */
static void test_walk_dot(void)
{
	char *args[] = { (char *)"." };
	struct ferry_manifest m;
	char why[512] = "", cwd[512];
	int ret;

	CU_ASSERT_FATAL(getcwd(cwd, sizeof(cwd)) != NULL);
	CU_ASSERT_EQUAL_FATAL(chdir(at("src/a")), 0);
	ferry__manifest_init(&m);
	ret = ferry__manifest_walk(&m, args, 1, NULL, why, sizeof(why));
	CU_ASSERT_EQUAL(chdir(cwd), 0);
	CU_ASSERT_EQUAL_FATAL(ret, 0);
	CU_ASSERT_EQUAL_FATAL(m.n, 4);
	CU_ASSERT_STRING_EQUAL(m.e[0].path, "a");
	CU_ASSERT_STRING_EQUAL(m.e[2].path, "a/b/deep.txt");
	CU_ASSERT_STRING_EQUAL(m.e[2].src, "./b/deep.txt");
	ferry__manifest_free(&m);
}

/* An unreadable file: -EACCES (as an unprivileged user: root reads all). */
static void test_walk_unreadable(void)
{
	char *args[] = { (char *)at("secret") };
	char why[512] = "", want[600];
	struct ferry_manifest m;
	pid_t pid;
	int status;

	put("secret", "s", 0000);
	snprintf(want, sizeof(want), "%s: permission denied", at("secret"));
	pid = fork();
	CU_ASSERT_FATAL(pid >= 0);
	if (pid == 0) {
		if (geteuid() == 0 && (setgid(65534) || setuid(65534)))
			_exit(77);
		ferry__manifest_init(&m);
		if (ferry__manifest_walk(&m, args, 1, NULL, why,
					 sizeof(why)) != -EACCES)
			_exit(1);
		_exit(strcmp(why, want) ? 2 : 0);
	}
	CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
	CU_ASSERT_TRUE(WIFEXITED(status));
	if (WEXITSTATUS(status) == 77)
		fprintf(stderr, "(cannot drop root: EACCES not checked) ");
	else
		CU_ASSERT_EQUAL(WEXITSTATUS(status), 0);
}

/* A path longer than FERRY_PATH_MAX - 1 below the argument is refused. */
static void test_walk_too_long(void)
{
	char name[201], *args[] = { (char *)at("deep") };
	struct ferry_manifest m;
	char why[512] = "";
	int fd, next;

	memset(name, 'n', 200);
	name[200] = '\0';
	mk("deep");
	fd = open(at("deep"), O_RDONLY | O_DIRECTORY);
	CU_ASSERT_FATAL(fd >= 0);
	/* "deep" + 19 * "/nnn..." = 3823 bytes: fine */
	for (int i = 0; i < 19; i++) {
		CU_ASSERT_EQUAL_FATAL(mkdirat(fd, name, 0755), 0);
		next = openat(fd, name, O_RDONLY | O_DIRECTORY);
		close(fd);
		CU_ASSERT_FATAL(next >= 0);
		fd = next;
	}
	ferry__manifest_init(&m);
	CU_ASSERT_EQUAL(ferry__manifest_walk(&m, args, 1, NULL, why,
					     sizeof(why)), 0);
	CU_ASSERT_EQUAL(m.n, 20);
	ferry__manifest_free(&m);
	/* two more levels: 4024 bytes, then 4225 */
	CU_ASSERT_EQUAL_FATAL(mkdirat(fd, name, 0755), 0);
	next = openat(fd, name, O_RDONLY | O_DIRECTORY);
	CU_ASSERT_FATAL(next >= 0);
	CU_ASSERT_EQUAL(mkdirat(next, name, 0755), 0);
	CU_ASSERT_EQUAL(ferry__manifest_walk(&m, args, 1, NULL, why,
					     sizeof(why)), -ENAMETOOLONG);
	/* too deep for nftw to remove */
	CU_ASSERT_EQUAL(unlinkat(next, name, AT_REMOVEDIR), 0);
	close(next);
	CU_ASSERT_EQUAL(unlinkat(fd, name, AT_REMOVEDIR), 0);
	close(fd);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "path longer than"));
	CU_ASSERT_EQUAL(m.n, 0);
}

static void test_add(void)
{
	struct ferry_manifest m;

	ferry__manifest_init(&m);
	CU_ASSERT_EQUAL(ferry__manifest_add(&m, "a", NULL, FERRY_ENTRY_DIR,
					    0755, 99, 1), 0);
	CU_ASSERT_EQUAL(m.e[0].size, 0);
	CU_ASSERT_EQUAL(ferry__manifest_add(&m, "a/f", "/x/f",
					    FERRY_ENTRY_FILE, 0644, 5, 2), 0);
	CU_ASSERT_STRING_EQUAL(m.e[1].src, "/x/f");
	CU_ASSERT_EQUAL(m.total_bytes, 5);
	CU_ASSERT_EQUAL(m.n_files, 1);
	CU_ASSERT_EQUAL(ferry__manifest_add(&m, "../f", NULL,
					    FERRY_ENTRY_FILE, 0644, 5, 2),
			-EINVAL);
	CU_ASSERT_EQUAL(ferry__manifest_add(&m, "g", NULL, 3, 0644, 5, 2),
			-EINVAL);
	CU_ASSERT_EQUAL(ferry__manifest_add(&m, "g", NULL, FERRY_ENTRY_FILE,
					    010000, 5, 2), -EINVAL);
	CU_ASSERT_EQUAL(m.n, 2);
	ferry__manifest_free(&m);
}

/* Many entries with paths of many lengths and extreme values. */
static void fill(struct ferry_manifest *m, size_t n)
{
	char path[64];

	ferry__manifest_init(m);
	for (size_t i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "d%zu/%.*s é%zu", i % 7,
			 (int)(i % 23), "abcdefghijklmnopqrstuvwxyz", i);
		CU_ASSERT_EQUAL_FATAL(ferry__manifest_add(m, path, "src",
			i % 5 ? FERRY_ENTRY_FILE : FERRY_ENTRY_DIR,
			(uint32_t)(i * 37) & 07777,
			i == 3 ? (uint64_t)INT64_MAX : i * 1000003,
			i == 1 ? INT64_MIN : (int64_t)i * -987654321), 0);
	}
}

static void test_encode_decode(void)
{
	struct ferry_manifest m, d;
	uint8_t buf[200];
	size_t next = 0, used, batches = 0;

	fill(&m, 300);
	ferry__manifest_init(&d);
	while ((used = ferry__manifest_encode(&m, &next, buf, sizeof(buf)))) {
		CU_ASSERT(used <= sizeof(buf));
		CU_ASSERT_EQUAL_FATAL(ferry__manifest_decode(&d, buf, used,
							     1000), 0);
		batches++;
	}
	CU_ASSERT_EQUAL(next, m.n);
	CU_ASSERT(batches > 20);
	CU_ASSERT_EQUAL_FATAL(d.n, m.n);
	for (size_t i = 0; i < m.n; i++) {
		CU_ASSERT_STRING_EQUAL(d.e[i].path, m.e[i].path);
		CU_ASSERT_EQUAL(d.e[i].type, m.e[i].type);
		CU_ASSERT_EQUAL(d.e[i].mode, m.e[i].mode);
		CU_ASSERT_EQUAL(d.e[i].size, m.e[i].size);
		CU_ASSERT_EQUAL(d.e[i].mtime_ns, m.e[i].mtime_ns);
		CU_ASSERT_PTR_NULL(d.e[i].src);
	}
	CU_ASSERT_EQUAL(d.total_bytes, m.total_bytes);
	CU_ASSERT_EQUAL(d.n_files, m.n_files);

	/* an entry that cannot fit alone: nothing, and no progress */
	next = 0;
	CU_ASSERT_EQUAL(ferry__manifest_encode(&m, &next, buf, 10), 0);
	CU_ASSERT_EQUAL(next, 0);
	ferry__manifest_free(&m);
	ferry__manifest_free(&d);
}

/* One raw entry, as the peer might send it. */
static size_t raw(uint8_t *p, const char *path, size_t plen, uint8_t type,
		  uint32_t mode, uint64_t size)
{
	size_t o = 0;

	p[o++] = (uint8_t)plen;
	p[o++] = (uint8_t)(plen >> 8);
	memcpy(p + o, path, plen);
	o += plen;
	p[o++] = type;
	for (int i = 0; i < 4; i++)
		p[o++] = (uint8_t)(mode >> (8 * i));
	for (int i = 0; i < 8; i++)
		p[o++] = (uint8_t)(size >> (8 * i));
	memset(p + o, 0x11, 8);
	return o + 8;
}

static void test_decode_rejects(void)
{
	static const char *const bad[] = { "../x", "/abs", "a//b", "a/./b",
					   "a/", "", ".", "a/.." };
	struct ferry_manifest m;
	uint8_t buf[256];
	size_t len, ends[3];

	ferry__manifest_init(&m);
	CU_ASSERT_EQUAL(ferry__manifest_add(&m, "keep", NULL, FERRY_ENTRY_DIR,
					    0755, 0, 0), 0);
	for (size_t i = 0; i < N(bad); i++) {
		len = raw(buf, "ok", 2, FERRY_ENTRY_FILE, 0644, 1);
		len += raw(buf + len, bad[i], strlen(bad[i]),
			   FERRY_ENTRY_FILE, 0644, 1);
		CU_ASSERT_EQUAL(ferry__manifest_decode(&m, buf, len, 100),
				-FERRY_EPROTO);
	}
	len = raw(buf, "a\0b", 3, FERRY_ENTRY_FILE, 0644, 1);
	CU_ASSERT_EQUAL(ferry__manifest_decode(&m, buf, len, 100),
			-FERRY_EPROTO);
	len = raw(buf, "t", 1, 0, 0644, 1);
	CU_ASSERT_EQUAL(ferry__manifest_decode(&m, buf, len, 100),
			-FERRY_EPROTO);
	len = raw(buf, "t", 1, 3, 0644, 1);
	CU_ASSERT_EQUAL(ferry__manifest_decode(&m, buf, len, 100),
			-FERRY_EPROTO);
	len = raw(buf, "t", 1, FERRY_ENTRY_FILE, 010000, 1);
	CU_ASSERT_EQUAL(ferry__manifest_decode(&m, buf, len, 100),
			-FERRY_EPROTO);
	len = raw(buf, "t", 1, FERRY_ENTRY_DIR, 0755, 1);
	CU_ASSERT_EQUAL(ferry__manifest_decode(&m, buf, len, 100),
			-FERRY_EPROTO);
	len = raw(buf, "t", 1, FERRY_ENTRY_FILE, 0644, UINT64_MAX);
	CU_ASSERT_EQUAL(ferry__manifest_decode(&m, buf, len, 100),
			-FERRY_EPROTO);
	CU_ASSERT_EQUAL(m.n, 1);

	/* truncated anywhere but at an entry boundary: refused whole */
	ends[0] = raw(buf, "x", 1, FERRY_ENTRY_DIR, 0755, 0);
	ends[1] = ends[0] + raw(buf + ends[0], "x/y", 3, FERRY_ENTRY_FILE,
				0644, 7);
	ends[2] = ends[1] + raw(buf + ends[1], "x/données", 10,
				FERRY_ENTRY_FILE, 0600, 9);
	for (size_t l = 0; l <= ends[2]; l++) {
		size_t k = 0, n0 = m.n;
		int ret = ferry__manifest_decode(&m, buf, l, 100);

		while (k < 3 && ends[k] < l)
			k++;
		if (l == 0 || (k < 3 && ends[k] == l)) {
			CU_ASSERT_EQUAL(ret, 0);
			CU_ASSERT_EQUAL(m.n, n0 + (l ? k + 1 : 0));
		} else {
			CU_ASSERT_EQUAL(ret, -FERRY_EPROTO);
			CU_ASSERT_EQUAL(m.n, n0);
		}
	}
	ferry__manifest_free(&m);
}

static void test_decode_limit(void)
{
	struct ferry_manifest m;
	uint8_t buf[128];
	size_t len;

	ferry__manifest_init(&m);
	len = raw(buf, "a", 1, FERRY_ENTRY_FILE, 0644, 1);
	len += raw(buf + len, "b", 1, FERRY_ENTRY_FILE, 0644, 1);
	len += raw(buf + len, "c", 1, FERRY_ENTRY_FILE, 0644, 1);
	CU_ASSERT_EQUAL(ferry__manifest_decode(&m, buf, len, 2),
			-FERRY_ETOOBIG);
	CU_ASSERT_EQUAL(m.n, 0);
	CU_ASSERT_EQUAL(ferry__manifest_decode(&m, buf, len, 3), 0);
	CU_ASSERT_EQUAL(ferry__manifest_decode(&m, buf, len, 5),
			-FERRY_ETOOBIG);
	CU_ASSERT_EQUAL(m.n, 3);
	CU_ASSERT_EQUAL(ferry__manifest_decode(&m, buf, len, 6), 0);
	CU_ASSERT_EQUAL(m.n, 6);
	CU_ASSERT_EQUAL(m.total_bytes, 6);
	ferry__manifest_free(&m);
}

static int rm_entry(const char *p, const struct stat *st, int flag,
		    struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return flag == FTW_DP ? rmdir(p) : unlink(p);
}

int main(void)
{
	CU_TestInfo tests[] = {
		{ "make a tree", make_tree },
		{ "path rules", test_path_valid },
		{ "walk a tree", test_walk },
		{ "walk: the entry of each argument", test_walk_arg_entry },
		{ "walk following symlinks", test_walk_follow },
		{ "walk refuses a symlink loop", test_walk_loop },
		{ "walk refusals", test_walk_refusals },
		{ "walk '.'", test_walk_dot },
		{ "walk an unreadable file", test_walk_unreadable },
		{ "walk a too-long path", test_walk_too_long },
		{ "add", test_add },
		{ "encode/decode round trip", test_encode_decode },
		{ "decode rejects", test_decode_rejects },
		{ "decode entry limit", test_decode_limit },
		CU_TEST_INFO_NULL,
	};
	int ret;

	snprintf(root, sizeof(root), "/tmp/ferry-manifest-XXXXXX");
	if (!mkdtemp(root) || chmod(root, 0755)) {
		perror("mkdtemp");
		return 2;
	}
	ferry_log_set(on_log, NULL, FERRY_LOG_DEBUG);
	ret = ferry_cu_run("manifest", tests);
	nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	return ret;
}
