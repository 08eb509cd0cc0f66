/* Receiver-side file system work (internal): opening below the destination
 * directory without escaping it, temporary files, publishing, space checks.
 */
#ifndef FERRY_IO_FSX_H
#define FERRY_IO_FSX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Open (and with create, make) the directories of relpath below dirfd,
 * never following a symlink in any component and never leaving dirfd
 * (absolute paths, "..", and symlinked parents are refused with -EXDEV
 * or -ELOOP). Returns an O_DIRECTORY fd of relpath's parent directory and
 * points *base at relpath's last component. create_mode is for new
 * directories. */
int ferry__fs_open_parent(int dirfd, const char *relpath, bool create,
			  mode_t create_mode, const char **base);

/* mkdir -p of relpath itself below dirfd, same rules. */
int ferry__fs_mkdirs(int dirfd, const char *relpath, mode_t mode);

/* A few directory fds below a root, by path, for the many files of one
 * directory: most lookups cost no system call. Control thread only. */
#define FERRY__DIRS_N 8
struct ferry__dirs {
	int rootfd; /* not owned */
	uint64_t clock;
	char *miss;     /* the last directory found missing (a new tree's
			   files all miss the same one) */
	size_t miss_len;
	struct {
		char *path; /* NULL: free */
		size_t len;
		int fd;
		uint64_t used;
	} e[FERRY__DIRS_N];
};

void ferry__dirs_init(struct ferry__dirs *d, int rootfd);
/* The parent directory of relpath below the root, as ferry__fs_open_parent
 * (with create: made as needed), and *base its last component. The fd is
 * the cache's: valid until the next call; do not close it. */
int ferry__dirs_parent(struct ferry__dirs *d, const char *relpath,
		       bool create, mode_t create_mode, const char **base);
void ferry__dirs_free(struct ferry__dirs *d);

/* The mount points strictly below the directory rootfd (from
 * /proc/self/mountinfo), as paths relative to it, longest first: *out is
 * an array of n strings (free each, then the array). Returns n (0: none,
 * or no /proc) or -ENOMEM. */
int ferry__fs_mounts_below(int rootfd, char ***out);

/* Set a finished file's mtime, and its mode with chmod (a file created
 * with its mode and untouched by the umask needs none). */
int ferry__fs_set_meta(int fd, mode_t mode, int64_t mtime_ns,
		       bool set_mode);

/* This process's umask, read without changing it (/proc/self/status;
 * 022 where that says nothing). */
mode_t ferry__umask(void);

/* Free bytes available to this user on the file system of dirfd. */
int ferry__fs_free_bytes(int dirfd, uint64_t *out);

/* Open a source file for reading, with O_DIRECT when *direct is true on
 * entry and the file system allows it; on return *direct says whether it
 * is on. Returns fd or -errno. */
int ferry__fs_open_source(const char *path, bool *direct);
/* The same through an opener (ferry_send_spec.open_source). */
int ferry__fs_open_source_with(int (*open_fn)(void *arg, const char *path,
					      int flags),
			       void *arg, const char *path, bool *direct);

/* pread/pwrite exactly len bytes (looping on short I/O, EINTR): the one
 * such loop in lib (part files, journals, key files). A short read at
 * end of file is -EIO (the file shrank). Return 0 or -errno. With
 * O_DIRECT fds, buf/off/len must be 4 KiB aligned: the caller reads an
 * unaligned tail through a second fd opened without O_DIRECT. */
int ferry__fs_pread_full(int fd, void *buf, size_t len, uint64_t off);
int ferry__fs_pwrite_full(int fd, const void *buf, size_t len, uint64_t off);

#endif
