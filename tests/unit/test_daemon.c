/* The daemon's namespace requests, served over a socketpair from a
 * temporary export root: what a client sees for stat, list, checksum,
 * mkdir, unlink, rmdir and token, with rights, symlinks and bad paths. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ctrl/req.h"
#include "cu.h"
#include "daemon/daemon.h"
#include "daemon/tokens.h"
#include "ferry/error.h"
#include "ferry/files.h"

#define IO_MS 5000
#define BIG_LEN (9u * 1024 * 1024 + 12345) /* crosses 4 MiB blocks */

static char base[64], root[128];
static struct ferry__daemon *d;
static int sv[2] = { -1, -1 };
static struct ferry_msg req_m, ans; /* large: not on the stack */
static char last_log[512];

static const struct ferry__who ops_who = { .name = "ops" };
static const struct ferry__who ro_who = { .name = "ro" };
static const struct ferry__who a_who = { .name = "a" };
static const struct ferry__who deep_who = { .name = "deep" };

/* ---- independent checksums (plain C, bit by bit) ----------------------- */

static uint32_t ref_adler32(const uint8_t *p, size_t n)
{
	uint32_t a = 1, b = 0;

	for (size_t i = 0; i < n; i++) {
		a = (a + p[i]) % 65521;
		b = (b + a) % 65521;
	}
	return b << 16 | a;
}

static uint32_t ref_crc32c(const uint8_t *p, size_t n)
{
	uint32_t c = 0xffffffffu;

	for (size_t i = 0; i < n; i++) {
		c ^= p[i];
		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0x82f63b78u : c >> 1;
	}
	return ~c;
}

/* ---- fixture ----------------------------------------------------------- */

/* Fixture helpers: 0 or -1 (setup runs outside any test, so they do
 * not assert themselves). */
static int put_file(const char *rel, const void *data, size_t len)
{
	char p[512];
	FILE *f;
	size_t n;

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	f = fopen(p, "w");
	if (!f)
		return -1;
	n = fwrite(data, 1, len, f);
	if (fclose(f) || n != len)
		return -1;
	return chmod(p, 0644);
}

static int make_dir(const char *rel)
{
	char p[512];

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	return mkdir(p, 0755);
}

static bool exists(const char *rel)
{
	char p[256];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	return lstat(p, &st) == 0;
}

static void capture_log(enum ferry_log_level level, const char *msg,
			void *arg)
{
	(void)level;
	(void)arg;
	snprintf(last_log, sizeof(last_log), "%s", msg);
	if (getenv("FERRY_TEST_VERBOSE"))
		fprintf(stderr, "log: %s\n", msg);
}

static int setup(void)
{
	char p[256], why[512] = "", conf[1024];
	static const char *keys[] = { "ops", "ro", "a", "deep" };
	uint8_t *big;
	FILE *f;
	int ret;

	snprintf(base, sizeof(base), "/tmp/ferry-daemon-XXXXXX");
	if (!mkdtemp(base))
		return 1;
	snprintf(root, sizeof(root), "%s/root", base);
	if (mkdir(root, 0755))
		return 1;
	for (size_t i = 0; i < FERRY__ARRAY_SIZE(keys); i++) {
		snprintf(p, sizeof(p), "%s/%s.key", base, keys[i]);
		if (ferry_key_generate(p, why, sizeof(why))) {
			fprintf(stderr, "keygen: %s\n", why);
			return 1;
		}
	}
	snprintf(conf, sizeof(conf),
		 "root %s\n"
		 "key ops ops.key rights all paths /\n"
		 "key ro  ro.key  rights read paths /\n"
		 "key a   a.key   rights read,write,delete paths /a\n"
		 "key deep deep.key rights write paths /deep/in\n",
		 root);
	snprintf(p, sizeof(p), "%s/exports.conf", base);
	f = fopen(p, "w");
	if (!f)
		return 1;
	fputs(conf, f);
	fclose(f);

	/* the tree: files, directories, symlinks in and out, a FIFO */
	if (put_file("f.txt", "hello, ferry\n", 13) || make_dir("dir") ||
	    put_file("dir/x", "abc", 3) || put_file("dir/y", "", 0) ||
	    make_dir("dir/sub") || make_dir("a") || make_dir("b") ||
	    put_file("b/f", "b", 1))
		return 1;
	big = malloc(BIG_LEN);
	if (!big)
		return 1;
	for (size_t i = 0; i < BIG_LEN; i++)
		big[i] = (uint8_t)(i * 2654435761u >> 13);
	ret = put_file("big.bin", big, BIG_LEN);
	free(big);
	if (ret)
		return 1;
	if (symlink(base, strcat(strcpy(p, root), "/out")) ||
	    symlink("f.txt", strcat(strcpy(p, root), "/in")) ||
	    symlink("dir", strcat(strcpy(p, root), "/lnkdir")) ||
	    mkfifo(strcat(strcpy(p, root), "/fifo"), 0644))
		return 1;

	snprintf(p, sizeof(p), "%s/exports.conf", base);
	ret = ferry__daemon_open(p, &d, why, sizeof(why));
	if (ret) {
		fprintf(stderr, "daemon_open: %s\n", why);
		return 1;
	}
	ferry_log_set(capture_log, NULL, FERRY_LOG_INFO);
	return socketpair(AF_UNIX, SOCK_STREAM, 0, sv) ? 1 : 0;
}

static int teardown(void)
{
	char cmd[128];

	ferry_log_set(NULL, NULL, FERRY_LOG_INFO);
	ferry__daemon_close(d);
	close(sv[0]);
	close(sv[1]);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	return system(cmd) ? 1 : 0;
}

/* ---- the client's side ------------------------------------------------- */

/* Make a request as who and read the first answer into ans. Returns 0
 * for a REPLY, or the negative errno of an ERROR. */
static int ask_data(const struct ferry__who *who, uint32_t op,
		    const char *path, uint64_t arg, uint32_t flags,
		    const void *data, size_t len)
{
	struct ferry_msg_req *r = &req_m.u.req;
	int ret;

	memset(&req_m, 0, sizeof(req_m));
	req_m.type = FERRY_MSG_REQ;
	r->op = op;
	r->arg = arg;
	r->flags = flags;
	snprintf(r->path, sizeof(r->path), "%s", path);
	r->len = (uint32_t)len;
	if (len)
		memcpy(r->data, data, len);
	CU_ASSERT_EQUAL_FATAL(ferry__daemon_serve(d, who, sv[0], r, IO_MS), 0);
	ret = ferry__ctrl_recv(sv[1], &ans, IO_MS);
	if (ret == -FERRY_EPEER) {
		CU_ASSERT(ans.u.error.code > 0 && ans.u.error.text[0]);
		return -ans.u.error.code;
	}
	CU_ASSERT_EQUAL_FATAL(ret, 0);
	CU_ASSERT_EQUAL(ans.type, FERRY_MSG_REPLY);
	CU_ASSERT_EQUAL(ans.u.reply.op, op);
	return 0;
}

static int ask(const struct ferry__who *who, uint32_t op, const char *path,
	       uint64_t arg, uint32_t flags)
{
	return ask_data(who, op, path, arg, flags, NULL, 0);
}

static int do_stat(const struct ferry__who *who, const char *path,
		   struct ferry_rstat *st)
{
	int ret = ask(who, FERRY_REQ_STAT, path, 0, 0);

	if (!ret) {
		CU_ASSERT(ans.u.reply.flags & FERRY_REPLY_LAST);
		CU_ASSERT_EQUAL(ferry__rstat_decode(ans.u.reply.data,
						    ans.u.reply.len, st),
				0);
	}
	return ret;
}

/* LIST into m (every REPLY until LAST). */
static int do_list(const struct ferry__who *who, const char *path,
		   struct ferry_manifest *m)
{
	int ret = ask(who, FERRY_REQ_LIST, path, 0, 0);

	ferry__manifest_init(m);
	while (!ret) {
		CU_ASSERT_EQUAL(ferry__manifest_decode(m, ans.u.reply.data,
						       ans.u.reply.len, 100000),
				0);
		if (ans.u.reply.flags & FERRY_REPLY_LAST)
			break;
		ret = ferry__ctrl_recv(sv[1], &ans, IO_MS);
		CU_ASSERT_EQUAL_FATAL(ret, 0);
	}
	return ret;
}

static int do_sum(const struct ferry__who *who, const char *path,
		  uint64_t kind, uint32_t *value)
{
	int ret = ask(who, FERRY_REQ_CKSUM, path, kind, 0);

	*value = (uint32_t)ans.u.reply.arg;
	return ret;
}

/* ---- tests ------------------------------------------------------------- */

static void test_stat(void)
{
	struct ferry_rstat st;

	CU_ASSERT_EQUAL(do_stat(&ops_who, "/f.txt", &st), 0);
	CU_ASSERT_EQUAL(st.type, FERRY_ENTRY_FILE);
	CU_ASSERT_EQUAL(st.size, 13);
	CU_ASSERT_EQUAL(st.mode, 0644);
	CU_ASSERT(st.mtime_ns > (int64_t)(time(NULL) - 600) * 1000000000);
	CU_ASSERT_PTR_NOT_NULL(strstr(last_log, "key ops: stat /f.txt"));
	CU_ASSERT_EQUAL(do_stat(&ops_who, "dir", &st), 0);
	CU_ASSERT_EQUAL(st.type, FERRY_ENTRY_DIR);
	CU_ASSERT_EQUAL(do_stat(&ops_who, "/", &st), 0);
	CU_ASSERT_EQUAL(st.type, FERRY_ENTRY_DIR);
	CU_ASSERT_EQUAL(do_stat(&ops_who, "", &st), 0);
	CU_ASSERT_EQUAL(st.type, FERRY_ENTRY_DIR);
	CU_ASSERT_EQUAL(do_stat(&ops_who, "/fifo", &st), 0);
	CU_ASSERT_EQUAL(st.type, FERRY_RSTAT_OTHER);
	CU_ASSERT_EQUAL(do_stat(&ops_who, "/missing", &st), -ENOENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(ans.u.error.text, "/missing"));
	CU_ASSERT_EQUAL(do_stat(&ops_who, "/dir/missing/x", &st), -ENOENT);
	CU_ASSERT_EQUAL(do_stat(&ops_who, "/f.txt/x", &st), -ENOTDIR);
}

static void test_list(void)
{
	struct ferry_manifest m;

	CU_ASSERT_EQUAL_FATAL(do_list(&ops_who, "/dir", &m), 0);
	CU_ASSERT_EQUAL_FATAL(m.n, 3);
	CU_ASSERT_STRING_EQUAL(m.e[0].path, "sub");
	CU_ASSERT_EQUAL(m.e[0].type, FERRY_ENTRY_DIR);
	CU_ASSERT_STRING_EQUAL(m.e[1].path, "x");
	CU_ASSERT_EQUAL(m.e[1].type, FERRY_ENTRY_FILE);
	CU_ASSERT_EQUAL(m.e[1].size, 3);
	CU_ASSERT_EQUAL(m.e[1].mode, 0644);
	CU_ASSERT_STRING_EQUAL(m.e[2].path, "y");
	CU_ASSERT_EQUAL(m.e[2].size, 0);
	ferry__manifest_free(&m);

	/* the root: sorted, symlinks and the FIFO left out (other tests add
	 * directories, so only these are checked) */
	CU_ASSERT_EQUAL_FATAL(do_list(&ops_who, "/", &m), 0);
	CU_ASSERT(m.n >= 5);
	for (size_t i = 0; i < m.n; i++) {
		const char *n = m.e[i].path;

		CU_ASSERT(i == 0 || strcmp(m.e[i - 1].path, n) < 0);
		CU_ASSERT(strcmp(n, "in") && strcmp(n, "out") &&
			  strcmp(n, "lnkdir") && strcmp(n, "fifo"));
		if (!strcmp(n, "big.bin"))
			CU_ASSERT_EQUAL(m.e[i].size, BIG_LEN);
		if (!strcmp(n, "f.txt"))
			CU_ASSERT_EQUAL(m.e[i].size, 13);
		if (!strcmp(n, "dir"))
			CU_ASSERT_EQUAL(m.e[i].type, FERRY_ENTRY_DIR);
	}
	ferry__manifest_free(&m);

	/* an empty directory: one empty LAST reply */
	CU_ASSERT_EQUAL(do_list(&ops_who, "dir/sub", &m), 0);
	CU_ASSERT_EQUAL(m.n, 0);
	ferry__manifest_free(&m);
	CU_ASSERT_EQUAL(do_list(&ops_who, "f.txt", &m), -ENOTDIR);
	ferry__manifest_free(&m);
	CU_ASSERT_EQUAL(do_list(&ops_who, "nothere", &m), -ENOENT);
	ferry__manifest_free(&m);
}

/* A directory too big for one REPLY comes in several. */
static void test_list_batches(void)
{
	struct ferry_manifest m;
	char rel[300];
	int replies = 0, ret;

	/* 400 entries of 223 bytes each: more than one REPLY holds */
	CU_ASSERT_EQUAL_FATAL(make_dir("many"), 0);
	for (int i = 0; i < 400; i++) {
		snprintf(rel, sizeof(rel), "many/%0200d", i);
		CU_ASSERT_EQUAL_FATAL(put_file(rel, "", 0), 0);
	}
	ret = ask(&ops_who, FERRY_REQ_LIST, "many", 0, 0);
	ferry__manifest_init(&m);
	while (!ret) {
		replies++;
		CU_ASSERT(ans.u.reply.len <= FERRY_REPLY_DATA_MAX);
		CU_ASSERT_EQUAL(ferry__manifest_decode(&m, ans.u.reply.data,
						       ans.u.reply.len, 100000),
				0);
		if (ans.u.reply.flags & FERRY_REPLY_LAST)
			break;
		ret = ferry__ctrl_recv(sv[1], &ans, IO_MS);
	}
	CU_ASSERT_EQUAL(ret, 0);
	CU_ASSERT(replies >= 2);
	CU_ASSERT_EQUAL(m.n, 400);
	for (size_t i = 1; i < m.n; i++)
		CU_ASSERT(strcmp(m.e[i - 1].path, m.e[i].path) < 0);
	ferry__manifest_free(&m);
}

static void test_cksum(void)
{
	uint8_t *big = malloc(BIG_LEN);
	uint32_t v;
	char p[256];
	FILE *f;

	CU_ASSERT_PTR_NOT_NULL_FATAL(big);
	snprintf(p, sizeof(p), "%s/big.bin", root);
	f = fopen(p, "r");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	CU_ASSERT_EQUAL(fread(big, 1, BIG_LEN, f), BIG_LEN);
	fclose(f);

	CU_ASSERT_EQUAL(do_sum(&ops_who, "/f.txt", FERRY_CKSUM_ADLER32, &v), 0);
	CU_ASSERT_EQUAL(v, ref_adler32((const uint8_t *)"hello, ferry\n", 13));
	CU_ASSERT_EQUAL(do_sum(&ops_who, "/f.txt", FERRY_CKSUM_CRC32C, &v), 0);
	CU_ASSERT_EQUAL(v, ref_crc32c((const uint8_t *)"hello, ferry\n", 13));
	CU_ASSERT_EQUAL(do_sum(&ro_who, "big.bin", FERRY_CKSUM_ADLER32, &v), 0);
	CU_ASSERT_EQUAL(v, ref_adler32(big, BIG_LEN));
	CU_ASSERT_EQUAL(do_sum(&ro_who, "big.bin", FERRY_CKSUM_CRC32C, &v), 0);
	CU_ASSERT_EQUAL(v, ref_crc32c(big, BIG_LEN));
	/* an empty file: the checksums' start values */
	CU_ASSERT_EQUAL(do_sum(&ops_who, "dir/y", FERRY_CKSUM_ADLER32, &v), 0);
	CU_ASSERT_EQUAL(v, 1);
	free(big);

	CU_ASSERT_EQUAL(do_sum(&ops_who, "/dir", FERRY_CKSUM_ADLER32, &v),
			-EISDIR);
	CU_ASSERT_EQUAL(do_sum(&ops_who, "/missing", FERRY_CKSUM_ADLER32, &v),
			-ENOENT);
	CU_ASSERT_EQUAL(do_sum(&ops_who, "/f.txt", FERRY_CKSUM_NONE, &v),
			-EINVAL);
	CU_ASSERT_EQUAL(do_sum(&ops_who, "/f.txt", 7, &v), -EINVAL);
	CU_ASSERT_EQUAL(do_sum(&ops_who, "/fifo", FERRY_CKSUM_CRC32C, &v),
			-EINVAL);
}

static void test_mkdir(void)
{
	struct ferry_rstat st;

	CU_ASSERT_EQUAL(ask(&ops_who, FERRY_REQ_MKDIR, "/new", 0, 0), 0);
	CU_ASSERT(ans.u.reply.flags & FERRY_REPLY_LAST);
	CU_ASSERT_EQUAL(do_stat(&ops_who, "/new", &st), 0);
	CU_ASSERT_EQUAL(st.type, FERRY_ENTRY_DIR);
	CU_ASSERT_EQUAL(ask(&ops_who, FERRY_REQ_MKDIR, "/new", 0, 0), -EEXIST);
	CU_ASSERT_EQUAL(ask(&ops_who, FERRY_REQ_MKDIR, "/f.txt", 0, 0),
			-EEXIST);
	CU_ASSERT_EQUAL(ask(&ops_who, FERRY_REQ_MKDIR, "/", 0, 0), -EEXIST);
	CU_ASSERT_EQUAL(ask(&ops_who, FERRY_REQ_MKDIR, "/", 0,
			    FERRY_REQ_PARENTS),
			0);
	/* a mode */
	CU_ASSERT_EQUAL(ask(&ops_who, FERRY_REQ_MKDIR, "/m700", 0700, 0), 0);
	CU_ASSERT_EQUAL(do_stat(&ops_who, "/m700", &st), 0);
	CU_ASSERT_EQUAL(st.mode, 0700);
	CU_ASSERT_EQUAL(ask(&ops_who, FERRY_REQ_MKDIR, "/bad", 010000, 0),
			-EINVAL);
	/* parents */
	CU_ASSERT_EQUAL(ask(&ops_who, FERRY_REQ_MKDIR, "p/q/r", 0, 0), -ENOENT);
	CU_ASSERT(!exists("p"));
	CU_ASSERT_EQUAL(ask(&ops_who, FERRY_REQ_MKDIR, "p/q/r", 0,
			    FERRY_REQ_PARENTS),
			0);
	CU_ASSERT(exists("p/q/r"));
	CU_ASSERT_EQUAL(ask(&ops_who, FERRY_REQ_MKDIR, "/p/q/r", 0,
			    FERRY_REQ_PARENTS),
			0);
	CU_ASSERT_EQUAL(ask(&ops_who, FERRY_REQ_MKDIR, "/p/q/r", 0, 0),
			-EEXIST);
	CU_ASSERT_EQUAL(ask(&ops_who, FERRY_REQ_MKDIR, "/f.txt", 0,
			    FERRY_REQ_PARENTS),
			-EEXIST);
	CU_ASSERT_EQUAL(ask(&ops_who, FERRY_REQ_MKDIR, "/f.txt/x", 0,
			    FERRY_REQ_PARENTS),
			-ENOTDIR);
	/* not through a symlink */
	CU_ASSERT_EQUAL(ask(&ops_who, FERRY_REQ_MKDIR, "/lnkdir/n", 0,
			    FERRY_REQ_PARENTS),
			-EACCES);
	CU_ASSERT(!exists("dir/n"));
}

static void test_remove(void)
{
	CU_ASSERT_EQUAL_FATAL(put_file("gone", "x", 1), 0);
	CU_ASSERT_EQUAL(ask(&ops_who, FERRY_REQ_UNLINK, "/gone", 0, 0), 0);
	CU_ASSERT(!exists("gone"));
	CU_ASSERT_EQUAL(ask(&ops_who, FERRY_REQ_UNLINK, "/gone", 0, 0),
			-ENOENT);
	CU_ASSERT_EQUAL(ask(&ops_who, FERRY_REQ_UNLINK, "/dir/sub", 0, 0),
			-EISDIR);
	CU_ASSERT_EQUAL(ask(&ops_who, FERRY_REQ_RMDIR, "/dir", 0, 0),
			-ENOTEMPTY);
	CU_ASSERT(exists("dir/x"));
	CU_ASSERT_EQUAL(ask(&ops_who, FERRY_REQ_RMDIR, "/f.txt", 0, 0),
			-ENOTDIR);
	CU_ASSERT_EQUAL_FATAL(make_dir("empty"), 0);
	CU_ASSERT_EQUAL(ask(&ops_who, FERRY_REQ_RMDIR, "empty", 0, 0), 0);
	CU_ASSERT(!exists("empty"));
	CU_ASSERT_EQUAL(ask(&ops_who, FERRY_REQ_RMDIR, "/", 0, 0), -EBUSY);
	CU_ASSERT_EQUAL(ask(&ops_who, FERRY_REQ_UNLINK, "", 0, 0), -EBUSY);
	/* not through a symlinked directory */
	CU_ASSERT_EQUAL(ask(&ops_who, FERRY_REQ_UNLINK, "/lnkdir/x", 0, 0),
			-EACCES);
	CU_ASSERT(exists("dir/x"));
}

static void test_rights(void)
{
	struct ferry_rstat st;
	struct ferry_manifest m;
	uint32_t v;

	/* read only */
	CU_ASSERT_EQUAL(do_stat(&ro_who, "/f.txt", &st), 0);
	CU_ASSERT_EQUAL(ask(&ro_who, FERRY_REQ_MKDIR, "/ro", 0, 0), -EACCES);
	CU_ASSERT_PTR_NOT_NULL(strstr(ans.u.error.text, "key ro"));
	CU_ASSERT(!exists("ro"));
	CU_ASSERT_EQUAL(ask(&ro_who, FERRY_REQ_UNLINK, "/b/f", 0, 0), -EACCES);
	CU_ASSERT_EQUAL(ask(&ro_who, FERRY_REQ_RMDIR, "/a", 0, 0), -EACCES);
	CU_ASSERT(exists("b/f"));
	CU_ASSERT_PTR_NOT_NULL(strstr(last_log, "refused"));

	/* paths /a: not /b, not the root, not a prefix of the name */
	CU_ASSERT_EQUAL(ask(&a_who, FERRY_REQ_MKDIR, "/a/x", 0, 0), 0);
	CU_ASSERT_EQUAL(do_stat(&a_who, "/a/x", &st), 0);
	CU_ASSERT_EQUAL(ask(&a_who, FERRY_REQ_RMDIR, "/a/x", 0, 0), 0);
	CU_ASSERT_EQUAL(do_stat(&a_who, "/b", &st), -EACCES);
	CU_ASSERT_EQUAL(do_stat(&a_who, "/b/nothing", &st), -EACCES);
	CU_ASSERT_EQUAL(do_list(&a_who, "/", &m), -EACCES);
	ferry__manifest_free(&m);
	CU_ASSERT_EQUAL(do_sum(&a_who, "/b/f", FERRY_CKSUM_ADLER32, &v),
			-EACCES);
	CU_ASSERT_EQUAL(ask(&a_who, FERRY_REQ_UNLINK, "/b/f", 0, 0), -EACCES);
	CU_ASSERT_EQUAL(ask(&a_who, FERRY_REQ_MKDIR, "/ab", 0, 0), -EACCES);
	CU_ASSERT(exists("b/f") && !exists("ab"));
	/* mkdir -p may not create parents outside the key's paths */
	CU_ASSERT_EQUAL(ask(&a_who, FERRY_REQ_MKDIR, "/a/p/q", 0,
			    FERRY_REQ_PARENTS),
			0);
	CU_ASSERT(exists("a/p/q"));
	CU_ASSERT_EQUAL(ask(&deep_who, FERRY_REQ_MKDIR, "/deep/in/x", 0,
			    FERRY_REQ_PARENTS),
			-EACCES);
	CU_ASSERT_PTR_NOT_NULL(strstr(ans.u.error.text, "/deep"));
	CU_ASSERT(!exists("deep"));
	CU_ASSERT_EQUAL_FATAL(make_dir("deep"), 0);
	CU_ASSERT_EQUAL(ask(&deep_who, FERRY_REQ_MKDIR, "/deep/in/x", 0,
			    FERRY_REQ_PARENTS),
			0);
	CU_ASSERT(exists("deep/in/x"));

	/* an unknown key name is refused like a missing right */
	{
		struct ferry__who ghost = { .name = "ghost" };

		CU_ASSERT_EQUAL(do_stat(&ghost, "/f.txt", &st), -EACCES);
	}
	/* a token may make no requests at all */
	{
		struct ferry__who tok = { .name = "token:0123456789abcdef"
						  "0123456789abcdef",
					  .token = true };

		CU_ASSERT_EQUAL(do_stat(&tok, "/f.txt", &st), -EACCES);
		CU_ASSERT_EQUAL(ask(&tok, FERRY_REQ_MKDIR, "/t", 0, 0),
				-EACCES);
		CU_ASSERT(!exists("t"));
	}
	/* ops the daemon does not serve here */
	CU_ASSERT_EQUAL(ask(&ops_who, FERRY_REQ_PUSH, "/", 0, 0), -EOPNOTSUPP);
	CU_ASSERT_EQUAL(ask(&ops_who, 99, "/", 0, 0), -EOPNOTSUPP);
}

/* Symlinks inside the root, to outside or inside, are refused; so are
 * ".." paths, before any lookup. */
static void test_symlinks_and_paths(void)
{
	static const char *const links[] = { "/out", "/out/root/f.txt", "in",
					     "/lnkdir", "/lnkdir/x" };
	static const char *const bad[] = { "..", "/..", "../x", "dir/../f.txt",
					   "dir/./x", "dir//x", "dir/",
					   "//dir" };
	struct ferry_manifest m;
	struct ferry_rstat st;
	uint32_t v;

	for (size_t i = 0; i < FERRY__ARRAY_SIZE(links); i++) {
		CU_ASSERT_EQUAL(do_stat(&ops_who, links[i], &st), -EACCES);
		CU_ASSERT_EQUAL(do_sum(&ops_who, links[i], FERRY_CKSUM_ADLER32,
				       &v),
				-EACCES);
		CU_ASSERT_EQUAL(do_list(&ops_who, links[i], &m), -EACCES);
		ferry__manifest_free(&m);
	}
	for (size_t i = 0; i < FERRY__ARRAY_SIZE(bad); i++) {
		CU_ASSERT_EQUAL(do_stat(&ops_who, bad[i], &st), -EINVAL);
		CU_ASSERT_EQUAL(ask(&ops_who, FERRY_REQ_MKDIR, bad[i], 0,
				    FERRY_REQ_PARENTS),
				-EINVAL);
		CU_ASSERT_EQUAL(ferry__daemon_open_path(d, bad[i], O_PATH, 0),
				-EINVAL);
	}
	CU_ASSERT_EQUAL(ferry__daemon_open_path(d, "/out/root", O_PATH, 0),
			-EACCES);
}

static void test_token(void)
{
	struct ferry__who who = { .name = "ops" };
	struct ferry_token_reply tr;
	struct ferry_manifest files, m;
	struct ferry_key secret, key;
	uint8_t buf[4096];
	size_t next = 0, len;
	uint64_t now = (uint64_t)time(NULL);
	char why[256];

	for (size_t i = 0; i < sizeof(who.wrap); i++)
		who.wrap[i] = (uint8_t)(7 * i + 1);
	ferry__manifest_init(&files);
	CU_ASSERT_EQUAL(ferry__manifest_add(&files, "a.dat", NULL,
					    FERRY_ENTRY_FILE, 0644, 10, 0), 0);
	CU_ASSERT_EQUAL(ferry__manifest_add(&files, "s/b.dat", NULL,
					    FERRY_ENTRY_FILE, 0644, 20, 0), 0);
	len = ferry__manifest_encode(&files, &next, buf, sizeof(buf));
	CU_ASSERT_EQUAL_FATAL(next, files.n);

	CU_ASSERT_EQUAL_FATAL(ask_data(&who, FERRY_REQ_TOKEN, "/a/in", 60, 0,
				       buf, len),
			      0);
	CU_ASSERT(ans.u.reply.arg >= now + 59 && ans.u.reply.arg <= now + 62);
	CU_ASSERT_EQUAL_FATAL(ferry__token_decode(ans.u.reply.data,
						  ans.u.reply.len, &tr),
			      0);
	CU_ASSERT_EQUAL(strncmp(tr.name, FERRY__TOKEN_PREFIX, 6), 0);
	/* the secret travels wrapped; unwrapped it is the token's key */
	CU_ASSERT_EQUAL(ferry__ctrl_wrap(who.wrap, tr.name, tr.secret,
					 secret.bytes),
			0);
	CU_ASSERT_EQUAL(ferry__tokens_key(d->tokens, tr.name, &key, why,
					  sizeof(why)),
			0);
	CU_ASSERT_EQUAL(memcmp(&key, &secret, sizeof(key)), 0);
	CU_ASSERT_NOT_EQUAL(memcmp(&key, tr.secret, sizeof(key)), 0);
	CU_ASSERT_EQUAL(ferry__daemon_lookup(d, tr.name, &key, why,
					     sizeof(why)),
			0);
	CU_ASSERT_EQUAL(memcmp(&key, &secret, sizeof(key)), 0);
	/* bound to what was asked */
	CU_ASSERT_EQUAL(ferry__tokens_claim(d->tokens, tr.name, why,
					    sizeof(why)),
			0);
	CU_ASSERT_EQUAL(ferry__tokens_check(d->tokens, tr.name, "a/in", 0,
					    &files, why, sizeof(why)),
			0);
	CU_ASSERT_EQUAL(ferry__tokens_check(d->tokens, tr.name, "a/in",
					    FERRY_FILES_FORCE, &files, why,
					    sizeof(why)),
			-EACCES);
	CU_ASSERT_EQUAL(ferry__daemon_lookup(d, tr.name, &key, why,
					     sizeof(why)),
			-FERRY_EAUTH);
	ferry__tokens_drop(d->tokens, tr.name);

	/* write on every file: not for a read-only key, not outside /a */
	CU_ASSERT_EQUAL(ask_data(&ro_who, FERRY_REQ_TOKEN, "/a/in", 60, 0, buf,
				 len),
			-EACCES);
	CU_ASSERT_EQUAL(ask_data(&a_who, FERRY_REQ_TOKEN, "/b", 60, 0, buf,
				 len),
			-EACCES);
	CU_ASSERT_EQUAL(ask_data(&a_who, FERRY_REQ_TOKEN, "/a", 60,
				 FERRY_FILES_FORCE, buf, len),
			0);
	CU_ASSERT_EQUAL(ask_data(&ops_who, FERRY_REQ_TOKEN, "/a", 0, 0, buf,
				 len),
			0);
	CU_ASSERT(ans.u.reply.arg >= now + FERRY__TOKEN_TTL_DEFAULT - 1);
	/* bad lifetimes, lists and paths */
	CU_ASSERT_EQUAL(ask_data(&ops_who, FERRY_REQ_TOKEN, "/a", 1u << 31, 0,
				 buf, len),
			-EINVAL);
	CU_ASSERT_EQUAL(ask_data(&ops_who, FERRY_REQ_TOKEN, "/a", 60, 0, buf,
				 len - 1),
			-EINVAL);
	CU_ASSERT_EQUAL(ask_data(&ops_who, FERRY_REQ_TOKEN, "/a", 60, 0, NULL,
				 0),
			-EINVAL);
	CU_ASSERT_EQUAL(ask_data(&ops_who, FERRY_REQ_TOKEN, "/a/../b", 60, 0,
				 buf, len),
			-EINVAL);
	ferry__manifest_init(&m);
	CU_ASSERT_EQUAL(ferry__manifest_add(&m, "d", NULL, FERRY_ENTRY_DIR,
					    0755, 0, 0), 0);
	next = 0;
	len = ferry__manifest_encode(&m, &next, buf, sizeof(buf));
	CU_ASSERT_EQUAL(ask_data(&ops_who, FERRY_REQ_TOKEN, "/a", 60, 0, buf,
				 len),
			-EINVAL);
	ferry__manifest_free(&m);
	ferry__manifest_free(&files);
}

static void test_lookup_and_abs(void)
{
	struct ferry_key key, want;
	char why[256] = "", p[256];

	CU_ASSERT_EQUAL(ferry__daemon_lookup(d, "", &key, why, sizeof(why)),
			-FERRY_EAUTH);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "--key-name"));
	CU_ASSERT_EQUAL(ferry__daemon_lookup(d, "nobody", &key, why,
					     sizeof(why)),
			-FERRY_EAUTH);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "nobody"));
	CU_ASSERT_EQUAL(ferry__daemon_lookup(d, "token:00", &key, why,
					     sizeof(why)),
			-FERRY_EAUTH);
	snprintf(p, sizeof(p), "%s/ro.key", base);
	CU_ASSERT_EQUAL_FATAL(ferry_key_load(p, &want, why, sizeof(why)), 0);
	CU_ASSERT_EQUAL(ferry__daemon_lookup(d, "ro", &key, why, sizeof(why)),
			0);
	CU_ASSERT_EQUAL(memcmp(&key, &want, sizeof(key)), 0);

	CU_ASSERT_EQUAL(ferry__daemon_abs(d, "/dir/x", p, sizeof(p)), 0);
	CU_ASSERT_EQUAL(strncmp(p, root, strlen(root)), 0);
	CU_ASSERT_STRING_EQUAL(p + strlen(root), "/dir/x");
	CU_ASSERT_EQUAL(ferry__daemon_abs(d, "dir", p, sizeof(p)), 0);
	CU_ASSERT_STRING_EQUAL(p + strlen(root), "/dir");
	CU_ASSERT_EQUAL(ferry__daemon_abs(d, "/", p, sizeof(p)), 0);
	CU_ASSERT_STRING_EQUAL(p, root);
	CU_ASSERT_EQUAL(ferry__daemon_abs(d, "../x", p, sizeof(p)), -EINVAL);
	CU_ASSERT_EQUAL(ferry__daemon_abs(d, "dir", p, 8), -ENAMETOOLONG);
}

static void test_open_errors(void)
{
	struct ferry__daemon *d2 = NULL;
	char p[256], why[512] = "";
	FILE *f;

	snprintf(p, sizeof(p), "%s/none.conf", base);
	CU_ASSERT_EQUAL(ferry__daemon_open(p, &d2, why, sizeof(why)), -ENOENT);
	CU_ASSERT_PTR_NULL(d2);
	f = fopen(p, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fprintf(f, "root %s/nothere\nkey ops ops.key rights all paths /\n",
		base);
	fclose(f);
	CU_ASSERT_EQUAL(ferry__daemon_open(p, &d2, why, sizeof(why)), -ENOENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "no such directory"));
	f = fopen(p, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fprintf(f, "root %s/f.txt\nkey ops ops.key rights all paths /\n",
		root);
	fclose(f);
	CU_ASSERT_EQUAL(ferry__daemon_open(p, &d2, why, sizeof(why)), -ENOTDIR);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "not a directory"));
	ferry__daemon_close(NULL);
}

/* A connection that is gone: serve says so (the caller closes it). */
static void test_closed(void)
{
	struct ferry_msg_req *r = &req_m.u.req;
	int s[2];

	CU_ASSERT_EQUAL_FATAL(socketpair(AF_UNIX, SOCK_STREAM, 0, s), 0);
	close(s[1]);
	memset(&req_m, 0, sizeof(req_m));
	r->op = FERRY_REQ_STAT;
	snprintf(r->path, sizeof(r->path), "/f.txt");
	CU_ASSERT(ferry__daemon_serve(d, &ops_who, s[0], r, IO_MS) < 0);
	snprintf(r->path, sizeof(r->path), "/missing");
	CU_ASSERT(ferry__daemon_serve(d, &ops_who, s[0], r, IO_MS) < 0);
	close(s[0]);
}

/* The walk used where the kernel has no openat2 keeps the same rules:
 * the read-only tests again, through it. */
static void test_without_openat2(void)
{
	bool had = d->no_openat2;
	struct ferry_rstat st;
	int fd;

	d->no_openat2 = true;
	test_stat();
	test_list();
	test_cksum();
	test_symlinks_and_paths();
	/* a file or a symlink on the way, a symlink at the end */
	CU_ASSERT_EQUAL(do_stat(&ops_who, "/f.txt/x/y", &st), -ENOTDIR);
	CU_ASSERT_EQUAL(ferry__daemon_open_path(d, "/lnkdir", O_RDONLY |
						O_DIRECTORY, 0),
			-EACCES);
	CU_ASSERT_EQUAL(ferry__daemon_open_path(d, "/in", O_RDONLY, 0),
			-EACCES);
	fd = ferry__daemon_open_path(d, "dir/sub", O_PATH | O_DIRECTORY, 0);
	CU_ASSERT(fd >= 0);
	if (fd >= 0)
		close(fd);
	d->no_openat2 = had;
}

int main(void)
{
	CU_TestInfo tests[] = {
		{ "stat", test_stat },
		{ "list", test_list },
		{ "list in several replies", test_list_batches },
		{ "checksums", test_cksum },
		{ "mkdir", test_mkdir },
		{ "unlink and rmdir", test_remove },
		{ "rights", test_rights },
		{ "symlinks and bad paths", test_symlinks_and_paths },
		{ "token", test_token },
		{ "lookup and abs", test_lookup_and_abs },
		{ "open errors", test_open_errors },
		{ "closed connection", test_closed },
		{ "the same without openat2", test_without_openat2 },
		CU_TEST_INFO_NULL,
	};
	CU_SuiteInfo suites[] = {
		{ "daemon", setup, teardown, NULL, NULL, tests },
		CU_SUITE_INFO_NULL,
	};
	unsigned failed;

	/* cu.h's runner has no suite setup: the export root is built once */
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 2;
	if (CU_register_suites(suites) != CUE_SUCCESS) {
		CU_cleanup_registry();
		return 2;
	}
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failed = CU_get_number_of_failures() + CU_get_number_of_tests_failed() +
		 CU_get_number_of_suites_failed();
	CU_cleanup_registry();
	return failed ? 1 : 0;
}
