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

/* The names used beside a target NAME in its directory:
 *   ".NAME.ferry-part"     the data being written
 *   ".NAME.ferry-journal"  verified chunk ranges, for resume
 * buf must hold NAME_MAX+1 bytes; -ENAMETOOLONG if the name does not fit. */
int ferry__fs_part_name(const char *base, char *buf, size_t len);
int ferry__fs_journal_name(const char *base, char *buf, size_t len);

/* Open the part file (O_RDWR|O_CREAT, no truncation so resume keeps what
 * it has; mode 0600 until published) and size it to size with
 * ftruncate (sparse). Returns the fd or -errno. */
int ferry__fs_open_part(int parentfd, const char *base, uint64_t size);

/* Publish: fsync the part file, set mode and mtime, rename it over NAME
 * (refusing to replace an existing NAME unless replace: -EEXIST; uses
 * renameat2 RENAME_NOREPLACE), then fsync the directory. */
int ferry__fs_publish(int parentfd, int partfd, const char *base,
		      mode_t mode, int64_t mtime_ns, bool replace);

/* Free bytes available to this user on the file system of dirfd. */
int ferry__fs_free_bytes(int dirfd, uint64_t *out);

/* Open a source file for reading with O_DIRECT when the file system
 * allows it, else without; *direct says which. Returns fd or -errno. */
int ferry__fs_open_source(const char *path, bool *direct);

/* pread/pwrite exactly len bytes (looping on short I/O, EINTR). A short
 * read at end of file is -EIO (the file shrank). Return 0 or -errno. With
 * O_DIRECT fds, buf/off/len must be 4 KiB aligned: the caller reads an
 * unaligned tail through a second fd opened without O_DIRECT. */
int ferry__fs_pread_full(int fd, void *buf, size_t len, uint64_t off);
int ferry__fs_pwrite_full(int fd, const void *buf, size_t len, uint64_t off);

#endif
