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

/* A split file: its names, shared and range claims, the part file all
 * its ranges share, its range journals and what the last one out sweeps. */
static void test_split_names_claims(void)
{
	char a[FERRY__STAGE_NAME_LEN], b[FERRY__STAGE_NAME_LEN];
	struct ferry__stage_key k, r0, r1, r0b, pub;
	struct ferry__stage s1, s2;

	ferry__stage_key("big.dat", &k);
	ferry__stage_name(&k, FERRY__STAGE_PART, a);
	ferry__stage_split_name(&k, 0xa00000, FERRY__STAGE_PART, 0, b);
	/* beside the whole file's, in its fan-out directory */
	CU_ASSERT_EQUAL(strncmp(a, b, 35), 0);
	CU_ASSERT_STRING_EQUAL(b + 35, ".0000000000a00000.part");
	ferry__stage_split_name(&k, 0xa00000, FERRY__STAGE_JOURNAL, 0x1400000,
				b);
	CU_ASSERT_STRING_EQUAL(b + 35,
			       ".0000000000a00000.0000000001400000.jrnl");
	CU_ASSERT_EQUAL(strlen(b), 3 + 32 + 17 + 17 + 5);
	CU_ASSERT(strlen(b) < FERRY__STAGE_NAME_LEN);

	/* a key per range, per split, and one to publish with */
	ferry__stage_key_range(&k, 0xa00000, 0, &r0);
	ferry__stage_key_range(&k, 0xa00000, 0xa00000, &r1);
	ferry__stage_key_range(&k, 0x1400000, 0, &r0b);
	ferry__stage_key_range(&k, 0xa00000, FERRY__STAGE_PUBLISH, &pub);
	CU_ASSERT_NOT_EQUAL(memcmp(&r0, &r1, sizeof(r0)), 0);
	CU_ASSERT_NOT_EQUAL(memcmp(&r0, &r0b, sizeof(r0)), 0);
	CU_ASSERT_NOT_EQUAL(memcmp(&r0, &pub, sizeof(r0)), 0);
	CU_ASSERT_NOT_EQUAL(memcmp(&r0, &k, sizeof(r0)), 0);

	fresh_root();
	CU_ASSERT_EQUAL_FATAL(ferry__stage_open(&s1, rootfd, true, NULL, 0), 0);
	CU_ASSERT_EQUAL_FATAL(ferry__stage_open(&s2, rootfd, true, NULL, 0), 0);
	/* range sessions share the target; a whole-file session cannot
	 * have it meanwhile, nor take it from them */
	CU_ASSERT_EQUAL(ferry__stage_claim_shared(&s1, &k), 0);
	CU_ASSERT_EQUAL(ferry__stage_claim_shared(&s2, &k), 0);
	CU_ASSERT_EQUAL(ferry__stage_claim(&s1, &k), -EBUSY); /* not alone */
	CU_ASSERT_EQUAL(ferry__stage_claim(&s1, &r0), 0);
	CU_ASSERT_EQUAL(ferry__stage_claim(&s2, &r0), -EBUSY); /* one writer */
	CU_ASSERT_EQUAL(ferry__stage_claim(&s2, &r1), 0);
	ferry__stage_release(&s2, &k);
	/* alone: shared turns exclusive, and back */
	CU_ASSERT_EQUAL(ferry__stage_claim(&s1, &k), 0);
	CU_ASSERT_EQUAL(ferry__stage_claim_shared(&s2, &k), -EBUSY);
	CU_ASSERT_EQUAL(ferry__stage_claim_shared(&s1, &k), 0);
	CU_ASSERT_EQUAL(ferry__stage_claim_shared(&s2, &k), 0);
	/* one publisher at a time: the second waits, then gives up */
	CU_ASSERT_EQUAL(ferry__stage_claim_wait(&s1, &pub, 1000), 0);
	CU_ASSERT_EQUAL(ferry__stage_claim_wait(&s2, &pub, 30), -EBUSY);
	ferry__stage_release(&s1, &pub);
	CU_ASSERT_EQUAL(ferry__stage_claim_wait(&s2, &pub, 30), 0);
	ferry__stage_close(&s2);
	ferry__stage_close(&s1);
}

static int count_journal(void *arg, uint64_t offset, const char *name)
{
	uint64_t *seen = arg;

	(void)name;
	*seen |= offset;
	seen[1]++;
	return 0;
}

static void put_staged(const char *name, const char *text)
{
	char path[FERRY__STAGE_NAME_LEN + 8] = ".ferry/";
	int fd;

	strcat(path, name);
	fd = openat(rootfd, path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static void test_split_files(void)
{
	char name[FERRY__STAGE_NAME_LEN], j0[FERRY__STAGE_NAME_LEN];
	char j1[FERRY__STAGE_NAME_LEN], other[FERRY__STAGE_NAME_LEN];
	struct ferry__stage_key k;
	struct ferry__stage s;
	uint64_t seen[2] = { 0, 0 };
	char buf[16] = "";
	int fd, fd2;

	fresh_root();
	CU_ASSERT_EQUAL_FATAL(ferry__stage_open(&s, rootfd, true, NULL, 0), 0);
	ferry__stage_key("big.dat", &k);
	ferry__stage_split_name(&k, 4096, FERRY__STAGE_PART, 0, name);
	ferry__stage_split_name(&k, 4096, FERRY__STAGE_JOURNAL, 0, j0);
	ferry__stage_split_name(&k, 4096, FERRY__STAGE_JOURNAL, 8192, j1);
	ferry__stage_split_name(&k, 8192, FERRY__STAGE_JOURNAL, 8192, other);
	/* made by the first range, kept as it is by the next */
	CU_ASSERT_EQUAL(ferry__stage_open_split(&s, &k, 4096, false), -ENOENT);
	fd = ferry__stage_open_split(&s, &k, 4096, true);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(pwrite(fd, "range1", 6, 4096), 6);
	fd2 = ferry__stage_open_split(&s, &k, 4096, true);
	CU_ASSERT_FATAL(fd2 >= 0);
	CU_ASSERT_EQUAL(pwrite(fd2, "range0", 6, 0), 6);
	CU_ASSERT_EQUAL(pread(fd, buf, 6, 4096), 6);
	CU_ASSERT_EQUAL(memcmp(buf, "range1", 6), 0);
	close(fd2);
	close(fd);
	/* its range journals, and none of another split's */
	put_staged(j0, "j");
	put_staged(j1, "j");
	put_staged(other, "j");
	CU_ASSERT_EQUAL(ferry__stage_split_journals(&s, &k, 4096,
						    count_journal, seen), 0);
	CU_ASSERT_EQUAL(seen[0], 8192);
	CU_ASSERT_EQUAL(seen[1], 2);
	/* what is staged stays when the last one leaves; a journal of a
	 * split file whose part file is gone does not */
	ferry__stage_close(&s);
	CU_ASSERT_TRUE(exists_at(rootfd, ".ferry"));
	CU_ASSERT_EQUAL_FATAL(ferry__stage_open(&s, rootfd, false, NULL, 0), 0);
	CU_ASSERT_EQUAL(ferry__stage_split_journals(&s, &k, 8192,
						    count_journal, seen), 0);
	CU_ASSERT_EQUAL(seen[1], 2);
	fd = ferry__stage_open_split(&s, &k, 4096, false);
	CU_ASSERT(fd >= 0);
	close(fd);
	/* published: the journals go after it, and so does the area */
	CU_ASSERT_EQUAL(ferry__stage_publish_split(&s, &k, 4096, rootfd,
						   "big.dat", false), 0);
	CU_ASSERT_EQUAL(ferry__stage_open_split(&s, &k, 4096, false), -ENOENT);
	ferry__stage_drop_split(&s, &k, 4096, true);
	seen[1] = 0;
	CU_ASSERT_EQUAL(ferry__stage_split_journals(&s, &k, 4096,
						    count_journal, seen), 0);
	CU_ASSERT_EQUAL(seen[1], 0);
	ferry__stage_close(&s);
	CU_ASSERT_FALSE(exists_at(rootfd, ".ferry"));
	fd = openat(rootfd, "big.dat", O_RDONLY);
	CU_ASSERT_EQUAL(pread(fd, buf, 6, 4096), 6);
	CU_ASSERT_EQUAL(memcmp(buf, "range1", 6), 0);
	close(fd);

	/* a part file without any range journal is never resumed: swept */
	CU_ASSERT_EQUAL_FATAL(ferry__stage_open(&s, rootfd, true, NULL, 0), 0);
	fd = ferry__stage_open_split(&s, &k, 4096, true);
	CU_ASSERT(fd >= 0);
	close(fd);
	ferry__stage_close(&s);
	CU_ASSERT_FALSE(exists_at(rootfd, ".ferry"));

	/* a planted second link is refused, not written through */
	CU_ASSERT_EQUAL_FATAL(ferry__stage_open(&s, rootfd, true, NULL, 0), 0);
	fd = ferry__stage_open_split(&s, &k, 4096, true);
	close(fd);
	put_staged(j0, "j");
	CU_ASSERT_EQUAL(mkdirat(rootfd, "o", 0700), 0);
	char path[FERRY__STAGE_NAME_LEN + 8] = ".ferry/";
	strcat(path, name);
	CU_ASSERT_EQUAL(linkat(rootfd, path, rootfd, "o/second", 0), 0);
	CU_ASSERT_EQUAL(ferry__stage_open_split(&s, &k, 4096, true), -ESTALE);
	ferry__stage_drop_split(&s, &k, 4096, true);
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
		{ "split files: names and claims", test_split_names_claims },
		{ "split files: part, journals, sweep", test_split_files },
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
