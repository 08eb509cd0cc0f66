/* The receiver's staging area: names no user name can hit, one writer per
 * target, part files that are ours alone, publishing, and refusing a
 * staging directory someone else prepared. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cu.h"
#include "io/stage.h"

static char root[64];
static int rootfd = -1;

static int rm_one(const char *p, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(p);
}

static void fresh_root(void)
{
	if (rootfd >= 0) {
		close(rootfd);
		nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	}
	snprintf(root, sizeof(root), "/tmp/ferry-stage.XXXXXX");
	CU_ASSERT_FATAL(mkdtemp(root) != NULL);
	rootfd = open(root, O_RDONLY | O_DIRECTORY);
	CU_ASSERT_FATAL(rootfd >= 0);
}

static bool exists_at(int dirfd, const char *rel)
{
	struct stat st;

	return fstatat(dirfd, rel, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

static void test_names(void)
{
	char a[FERRY__STAGE_NAME_LEN], b[FERRY__STAGE_NAME_LEN];
	char longname[NAME_MAX + 1];
	struct ferry__stage_key k1, k2;

	ferry__stage_key("dir/x.dat", &k1);
	ferry__stage_key("dir/x.dat", &k2);
	CU_ASSERT_EQUAL(memcmp(&k1, &k2, sizeof(k1)), 0);
	ferry__stage_name(&k1, FERRY__STAGE_PART, a);
	ferry__stage_name(&k1, FERRY__STAGE_JOURNAL, b);
	/* "ab/" + 32 hex digits + ".part" / ".jrnl" */
	CU_ASSERT_EQUAL(strlen(a), 3 + 32 + 5);
	CU_ASSERT_EQUAL(strlen(b), 3 + 32 + 5);
	CU_ASSERT_EQUAL(strncmp(a, b, 35), 0);
	CU_ASSERT_STRING_EQUAL(a + 35, ".part");
	CU_ASSERT_STRING_EQUAL(b + 35, ".jrnl");
	CU_ASSERT_EQUAL(a[2], '/');
	CU_ASSERT_EQUAL(strncmp(a, a + 3, 2), 0); /* fan-out = first byte */
	/* another path, another name; a 255-byte name still fits */
	ferry__stage_key("dir/x.dat2", &k2);
	CU_ASSERT_NOT_EQUAL(memcmp(&k1, &k2, sizeof(k1)), 0);
	memset(longname, 'n', NAME_MAX);
	longname[NAME_MAX] = '\0';
	ferry__stage_key(longname, &k2);
	ferry__stage_name(&k2, FERRY__STAGE_PART, a);
	CU_ASSERT_EQUAL(strlen(a), 40);

	/* one-chunk files: fanned out by index, apart by session */
	uint8_t n1[FERRY__STAGE_NONCE], n2[FERRY__STAGE_NONCE];
	memset(n1, 0x11, sizeof(n1));
	memset(n2, 0x22, sizeof(n2));
	ferry__stage_key_solo(n1, 0x0102a5, &k1);
	ferry__stage_name(&k1, FERRY__STAGE_PART, a);
	CU_ASSERT_STRING_EQUAL(a, "a5/a5020100111111111111111111111111.part");
	ferry__stage_key_solo(n1, 0x0102a6, &k2);
	CU_ASSERT_NOT_EQUAL(memcmp(&k1, &k2, sizeof(k1)), 0);
	ferry__stage_key_solo(n2, 0x0102a5, &k2);
	CU_ASSERT_NOT_EQUAL(memcmp(&k1, &k2, sizeof(k1)), 0);
}

static void test_open_close_removes(void)
{
	struct ferry__stage s;
	struct ferry__stage_key k;
	struct stat st;
	int fd;

	fresh_root();
	/* without create, no area is no area: nothing made */
	CU_ASSERT_EQUAL(ferry__stage_open(&s, rootfd, false, NULL, 0), -ENOENT);
	CU_ASSERT_FALSE(ferry__stage_is_open(&s));
	CU_ASSERT_FALSE(exists_at(rootfd, ".ferry"));
	ferry__stage_close(&s);
	CU_ASSERT_EQUAL_FATAL(ferry__stage_open(&s, rootfd, true, NULL, 0), 0);
	CU_ASSERT_EQUAL(fstat(rootfd, &st), 0);
	CU_ASSERT_EQUAL(fstatat(rootfd, ".ferry", &st, AT_SYMLINK_NOFOLLOW), 0);
	CU_ASSERT_TRUE(S_ISDIR(st.st_mode));
	CU_ASSERT_EQUAL(st.st_mode & 07777, 0700);
	ferry__stage_close(&s);
	/* nothing staged, no one else: the area goes */
	CU_ASSERT_FALSE(exists_at(rootfd, ".ferry"));

	/* a part file alone is never resumed: the last one out removes it
	 * (what a session that died before journaling leaves, and every
	 * one-chunk file's) */
	CU_ASSERT_EQUAL_FATAL(ferry__stage_open(&s, rootfd, true, NULL, 0), 0);
	ferry__stage_key("a", &k);
	fd = ferry__stage_open_part(&s, &k, true, 0600);
	CU_ASSERT_FATAL(fd >= 0);
	close(fd);
	ferry__stage_close(&s);
	CU_ASSERT_FALSE(exists_at(rootfd, ".ferry"));

	/* something resumable staged: it stays, with what is in it */
	char name[FERRY__STAGE_NAME_LEN + 8];
	CU_ASSERT_EQUAL_FATAL(ferry__stage_open(&s, rootfd, true, NULL, 0), 0);
	fd = ferry__stage_open_part(&s, &k, true, 0600);
	CU_ASSERT_FATAL(fd >= 0);
	close(fd);
	memcpy(name, ".ferry/", 7);
	ferry__stage_name(&k, FERRY__STAGE_JOURNAL, name + 7);
	fd = openat(rootfd, name, O_WRONLY | O_CREAT | O_EXCL, 0600);
	CU_ASSERT_FATAL(fd >= 0);
	close(fd);
	ferry__stage_close(&s);
	CU_ASSERT_TRUE(exists_at(rootfd, ".ferry"));
	CU_ASSERT_EQUAL_FATAL(ferry__stage_open(&s, rootfd, false, NULL, 0), 0);
	CU_ASSERT_TRUE(ferry__stage_has(&s, &k, FERRY__STAGE_PART));
	CU_ASSERT_TRUE(ferry__stage_has(&s, &k, FERRY__STAGE_JOURNAL));
	ferry__stage_drop(&s, &k, true, true);
	CU_ASSERT_FALSE(ferry__stage_has(&s, &k, FERRY__STAGE_PART));
	CU_ASSERT_FALSE(ferry__stage_has(&s, &k, FERRY__STAGE_JOURNAL));
	ferry__stage_close(&s);
	CU_ASSERT_FALSE(exists_at(rootfd, ".ferry"));

	/* while another session is inside, the area stays */
	struct ferry__stage s2;
	CU_ASSERT_EQUAL_FATAL(ferry__stage_open(&s, rootfd, true, NULL, 0), 0);
	CU_ASSERT_EQUAL_FATAL(ferry__stage_open(&s2, rootfd, true, NULL, 0), 0);
	ferry__stage_close(&s);
	CU_ASSERT_TRUE(exists_at(rootfd, ".ferry"));
	ferry__stage_close(&s2);
	CU_ASSERT_FALSE(exists_at(rootfd, ".ferry"));
}

static void test_claims(void)
{
	struct ferry__stage a, b;
	struct ferry__stage_key k1, k2;
	pid_t pid;
	int status;

	fresh_root();
	CU_ASSERT_EQUAL_FATAL(ferry__stage_open(&a, rootfd, true, NULL, 0), 0);
	CU_ASSERT_EQUAL_FATAL(ferry__stage_open(&b, rootfd, true, NULL, 0), 0);
	ferry__stage_key("t/one", &k1);
	ferry__stage_key("t/two", &k2);
	CU_ASSERT_EQUAL(ferry__stage_claim(&a, &k1), 0);
	/* another session of the same process is refused */
	CU_ASSERT_EQUAL(ferry__stage_claim(&b, &k1), -EBUSY);
	CU_ASSERT_EQUAL(ferry__stage_claim(&b, &k2), 0);
	CU_ASSERT_EQUAL(ferry__stage_claim(&a, &k2), -EBUSY);
	/* and so is another process */
	pid = fork();
	if (pid == 0) {
		struct ferry__stage c;
		int rc = ferry__stage_open(&c, rootfd, true, NULL, 0) ||
			 ferry__stage_claim(&c, &k1) != -EBUSY;
		_exit(rc);
	}
	CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
	CU_ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* released: the other may take it */
	ferry__stage_release(&a, &k1);
	CU_ASSERT_EQUAL(ferry__stage_claim(&b, &k1), 0);
	/* a session that ends (or dies) lets go of everything */
	ferry__stage_close(&b);
	CU_ASSERT_EQUAL(ferry__stage_claim(&a, &k1), 0);
	CU_ASSERT_EQUAL(ferry__stage_claim(&a, &k2), 0);
	ferry__stage_close(&a);
}

static void test_parts(void)
{
	struct ferry__stage s;
	struct ferry__stage_key k;
	char name[FERRY__STAGE_NAME_LEN], buf[8] = "";
	int fd, sfd, out;
	struct stat st;

	fresh_root();
	CU_ASSERT_EQUAL_FATAL(ferry__stage_open(&s, rootfd, true, NULL, 0), 0);
	ferry__stage_key("p", &k);
	ferry__stage_name(&k, FERRY__STAGE_PART, name);
	/* no part yet: reopening fails, creating makes one, 0600 */
	CU_ASSERT_EQUAL(ferry__stage_open_part(&s, &k, false, 0600), -ENOENT);
	fd = ferry__stage_open_part(&s, &k, true, 0600);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(fstat(fd, &st), 0);
	CU_ASSERT_EQUAL(st.st_mode & 07777, 0600);
	CU_ASSERT_EQUAL(write(fd, "resume", 6), 6);
	close(fd);
	/* reopening keeps what is there */
	fd = ferry__stage_open_part(&s, &k, false, 0600);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(pread(fd, buf, 6, 0), 6);
	CU_ASSERT_EQUAL(memcmp(buf, "resume", 6), 0);
	close(fd);
	/* creating again replaces a stale one with an empty file */
	fd = ferry__stage_open_part(&s, &k, true, 0600);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(fstat(fd, &st), 0);
	CU_ASSERT_EQUAL(st.st_size, 0);
	close(fd);

	/* a part file with a second link (planted, or left by anyone) is
	 * never written through: reuse refuses it, create replaces it */
	out = openat(rootfd, "outside", O_RDWR | O_CREAT, 0644);
	CU_ASSERT_FATAL(out >= 0);
	CU_ASSERT_EQUAL(write(out, "keep", 4), 4);
	sfd = openat(rootfd, ".ferry", O_RDONLY | O_DIRECTORY);
	CU_ASSERT_EQUAL(unlinkat(sfd, name, 0), 0);
	CU_ASSERT_EQUAL(linkat(rootfd, "outside", sfd, name, 0), 0);
	CU_ASSERT_EQUAL(ferry__stage_open_part(&s, &k, false, 0600), -ESTALE);
	fd = ferry__stage_open_part(&s, &k, true, 0600);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(write(fd, "XXXXXXXX", 8), 8);
	close(fd);
	CU_ASSERT_EQUAL(pread(out, buf, 8, 0), 4);
	CU_ASSERT_EQUAL(memcmp(buf, "keep", 4), 0);
	CU_ASSERT_EQUAL(fstat(out, &st), 0);
	CU_ASSERT_EQUAL(st.st_nlink, 1);
	CU_ASSERT_EQUAL(st.st_mode & 07777, 0644);
	/* a symlink in its place is not followed either */
	CU_ASSERT_EQUAL(unlinkat(sfd, name, 0), 0);
	CU_ASSERT_EQUAL(symlinkat("../outside", sfd, name), 0);
	CU_ASSERT_EQUAL(ferry__stage_open_part(&s, &k, false, 0600), -ELOOP);
	close(sfd);
	close(out);
	ferry__stage_drop(&s, &k, true, true);
	ferry__stage_close(&s);
}

static void test_publish(void)
{
	struct ferry__stage s;
	struct ferry__stage_key k;
	char buf[16] = "";
	int fd, t;

	fresh_root();
	CU_ASSERT_EQUAL_FATAL(ferry__stage_open(&s, rootfd, true, NULL, 0), 0);
	ferry__stage_key("pub.txt", &k);
	fd = ferry__stage_open_part(&s, &k, true, 0600);
	CU_ASSERT_EQUAL(write(fd, "first", 5), 5);
	close(fd);
	CU_ASSERT_EQUAL(ferry__stage_publish(&s, &k, rootfd, "pub.txt", false),
			0);
	CU_ASSERT_FALSE(ferry__stage_has(&s, &k, FERRY__STAGE_PART));
	/* no replacing without replace: the part stays */
	fd = ferry__stage_open_part(&s, &k, true, 0600);
	CU_ASSERT_EQUAL(write(fd, "second", 6), 6);
	close(fd);
	CU_ASSERT_EQUAL(ferry__stage_publish(&s, &k, rootfd, "pub.txt", false),
			-EEXIST);
	CU_ASSERT_TRUE(ferry__stage_has(&s, &k, FERRY__STAGE_PART));
	t = openat(rootfd, "pub.txt", O_RDONLY);
	CU_ASSERT_EQUAL(read(t, buf, sizeof(buf)), 5);
	close(t);
	CU_ASSERT_EQUAL(ferry__stage_publish(&s, &k, rootfd, "pub.txt", true), 0);
	t = openat(rootfd, "pub.txt", O_RDONLY);
	CU_ASSERT_EQUAL(read(t, buf, sizeof(buf)), 6);
	CU_ASSERT_EQUAL(memcmp(buf, "second", 6), 0);
	close(t);
	/* a hard-linked target is replaced, not written through */
	CU_ASSERT_EQUAL(linkat(rootfd, "pub.txt", rootfd, "other", 0), 0);
	fd = ferry__stage_open_part(&s, &k, true, 0600);
	CU_ASSERT_EQUAL(write(fd, "third", 5), 5);
	close(fd);
	CU_ASSERT_EQUAL(ferry__stage_publish(&s, &k, rootfd, "pub.txt", true), 0);
	t = openat(rootfd, "other", O_RDONLY);
	CU_ASSERT_EQUAL(read(t, buf, sizeof(buf)), 6);
	close(t);
	ferry__stage_close(&s);
	CU_ASSERT_FALSE(exists_at(rootfd, ".ferry"));
}

static void test_hostile_area(void)
{
	struct ferry__stage s;
	char why[256] = "";

	/* a symlink named .ferry is not followed */
	fresh_root();
	CU_ASSERT_EQUAL(mkdirat(rootfd, "elsewhere", 0700), 0);
	CU_ASSERT_EQUAL(symlinkat("elsewhere", rootfd, ".ferry"), 0);
	CU_ASSERT(ferry__stage_open(&s, rootfd, true, why, sizeof(why)) < 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, ".ferry"));
	CU_ASSERT_FALSE(exists_at(rootfd, "elsewhere/lock.0"));

	/* a file in its place */
	fresh_root();
	close(openat(rootfd, ".ferry", O_WRONLY | O_CREAT, 0600));
	CU_ASSERT(ferry__stage_open(&s, rootfd, true, why, sizeof(why)) < 0);

	/* a directory open to others */
	fresh_root();
	CU_ASSERT_EQUAL(mkdirat(rootfd, ".ferry", 0700), 0);
	CU_ASSERT_EQUAL(fchmodat(rootfd, ".ferry", 0777, 0), 0);
	why[0] = '\0';
	CU_ASSERT_EQUAL(ferry__stage_open(&s, rootfd, true, why, sizeof(why)),
			-EACCES);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "writable by others"));
	CU_ASSERT_FALSE(exists_at(rootfd, ".ferry/lock.0"));
}

int main(void)
{
	CU_TestInfo tests[] = {
		{ "names", test_names },
		{ "open, close, removal when idle", test_open_close_removes },
		{ "one writer per target", test_claims },
		{ "part files are ours alone", test_parts },
		{ "publish", test_publish },
		{ "a hostile .ferry is refused", test_hostile_area },
		CU_TEST_INFO_NULL,
	};
	int rc = ferry_cu_run("stage", tests);

	if (rootfd >= 0) {
		close(rootfd);
		nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	}
	return rc;
}
