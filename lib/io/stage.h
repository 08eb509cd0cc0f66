/* The receiver's staging area (internal): where files are written before
 * they are published, and who may write which target.
 *
 * Every root a receiver writes below (--dir, an export root) has one
 * private directory ROOT/.ferry (mode 0700, owned by the receiver's user).
 * A target's part file and resume journal live there under names derived
 * from a hash of the target's path below the root:
 *
 *   ROOT/.ferry/ab/<32 hex digits>.part    the data being written
 *   ROOT/.ferry/ab/<32 hex digits>.jrnl    verified chunks, for resume
 *
 * so no user name can hit them, whatever its length, and none of them
 * is longer than NAME_MAX. The first two digits fan the files out over
 * 256 directories.
 *
 * One writer per target: a session claims a target with a write lock on
 * one byte of one of ROOT/.ferry/lock.*, at an offset taken from the same hash
 * (an open-file-description lock: sessions of one process exclude each
 * other as well as other processes, and a killed session's locks go with
 * it). Every session holds a shared flock on ROOT/.ferry; the last one
 * out removes the area when nothing is staged in it.
 *
 * A file of one chunk is staged without a claim, under a key no other
 * session can name (the session's random nonce and the file's index):
 * it is written and sealed in one go and never resumed, so there is
 * nothing to guard, and two sessions sending one target each publish a
 * whole file (the second finds the name taken). A part file without a
 * journal is never resumed; the last session out removes any left by a
 * session that died.
 *
 * Split files. A file whose ranges (ferry_send_range) several sessions
 * send at once, from any processes, is staged as one part file that all
 * of them write, and one journal per range:
 *
 *   ROOT/.ferry/ab/<32 hex>.<16 hex split>.part
 *   ROOT/.ferry/ab/<32 hex>.<16 hex split>.<16 hex offset>.jrnl
 *
 * named by the target's key, the split and the range's offset. A range
 * journal is an ordinary journal (io/journal.h) whose records are chunk
 * indexes of the whole file, and holds only its range's chunks. The
 * split is in the names, so sessions that cut one file differently stage
 * it apart and never write into each other's part file. A split part
 * file is created by whichever range lands first and is never replaced
 * or truncated while any range of it is claimed.
 *
 * Claims of a split file: a range session holds the target's byte
 * *shared* (a whole-file session takes it exclusive, so the two kinds
 * exclude each other while range sessions of one file run together) and
 * its range's own byte (ferry__stage_key_range) exclusive, so each range
 * has one writer. The session whose range completes the file publishes
 * it: it waits for the split file's publish byte (one publisher at a
 * time), takes every other range's byte (one still held is being
 * written, or its session publishes when it is done: then this one
 * leaves it), checks that every range journal is complete, combines
 * their sums, seals and renames the part file, and removes the journals.
 * A publisher lets go of the range bytes before the publish byte, so the
 * next one in line finds them free. Every chunk of a range is journaled
 * only after the chunk is written, and its last only after the part
 * file's data is synced, so a complete range journal means its data is
 * on disk: the publisher trusts journals it did not write.
 *
 * The last session out removes, besides part files without a journal,
 * range journals without their part file (an earlier split file's, whose
 * data is gone: trusted, they would publish a file with holes). A split
 * part file with journals stays until its ranges are in, or until a
 * range session finds the file already published and no other session
 * of the target at work (lib/files/files_range.c).
 */
#ifndef FERRY_IO_STAGE_H
#define FERRY_IO_STAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define FERRY__STAGE_DIR ".ferry"

/* Claims are spread over this many lock files (ROOT/.ferry/lock.0 to
 * lock.f, by the key's last byte): the kernel walks every lock of a file
 * on each claim, and a session holds up to 512 claims at once. */
#define FERRY__STAGE_LOCKS 16

struct ferry__stage {
	int topfd;  /* the root (not owned) */
	int dirfd;  /* ROOT/.ferry, with a shared flock */
	int lockfd[FERRY__STAGE_LOCKS]; /* this session's claims */
};

/* A target's identity in the area: the first 16 bytes of
 * SHA-256("ferry-stage-1" NUL relpath), relpath below the root. */
struct ferry__stage_key {
	uint8_t b[16];
};

void ferry__stage_key(const char *relpath, struct ferry__stage_key *k);

/* The claim key of the range at offset of target k split every split
 * bytes; offset FERRY__STAGE_PUBLISH: the split file's publish key. */
#define FERRY__STAGE_PUBLISH UINT64_MAX
void ferry__stage_key_range(const struct ferry__stage_key *k, uint64_t split,
			    uint64_t offset, struct ferry__stage_key *out);

/* The key of a one-chunk file's part file: file index idx of the session
 * whose random nonce this is (see above). */
#define FERRY__STAGE_NONCE 12
void ferry__stage_key_solo(const uint8_t nonce[FERRY__STAGE_NONCE],
			   uint32_t idx, struct ferry__stage_key *k);

/* Open the area below topfd; with create, make it if needed, otherwise
 * -ENOENT when there is none (nothing is staged: s stays closed, and
 * ferry__stage_has says no). Refused, with why saying what to do, when
 * ROOT/.ferry is not a directory this user owns and no one else may
 * write (a symlink, another owner, group or world write). Returns 0 or -errno. */
int ferry__stage_open(struct ferry__stage *s, int topfd, bool create,
		      char *why, size_t whylen);
static inline bool ferry__stage_is_open(const struct ferry__stage *s)
{
	return s->dirfd >= 0;
}

/* Drop every claim; remove the area if no other session uses it and
 * nothing is staged in it. Harmless on a stage that failed to open. */
void ferry__stage_close(struct ferry__stage *s);

/* Claim a target for this session: 0, or -EBUSY while another session
 * holds it. Release gives it back (publish or give up). */
int ferry__stage_claim(struct ferry__stage *s,
		       const struct ferry__stage_key *k);
void ferry__stage_release(struct ferry__stage *s,
			  const struct ferry__stage_key *k);
/* A shared claim (range sessions of one split file hold their target's
 * so): 0, or -EBUSY while another session holds it exclusive. Claiming a
 * key this session holds shared turns it exclusive (-EBUSY while another
 * holds it too), and shared again. */
int ferry__stage_claim_shared(struct ferry__stage *s,
			      const struct ferry__stage_key *k);
/* ferry__stage_claim, waiting up to timeout_ms (-EBUSY after that). */
int ferry__stage_claim_wait(struct ferry__stage *s,
			    const struct ferry__stage_key *k, int timeout_ms);

enum ferry__stage_kind { FERRY__STAGE_PART, FERRY__STAGE_JOURNAL };

/* "ab/<hex>.part" or ".jrnl", relative to s->dirfd. */
#define FERRY__STAGE_NAME_LEN 80
void ferry__stage_name(const struct ferry__stage_key *k,
		       enum ferry__stage_kind kind,
		       char buf[FERRY__STAGE_NAME_LEN]);
/* A split file's part ("ab/<hex>.<split>.part") or the journal of its
 * range at offset ("ab/<hex>.<split>.<offset>.jrnl"; offset is ignored
 * for the part). */
void ferry__stage_split_name(const struct ferry__stage_key *k, uint64_t split,
			     enum ferry__stage_kind kind, uint64_t offset,
			     char buf[FERRY__STAGE_NAME_LEN]);

/* Does the target have a staged part / journal? */
bool ferry__stage_has(const struct ferry__stage *s,
		      const struct ferry__stage_key *k,
		      enum ferry__stage_kind kind);

/* Open the part file for writing. create: a new, empty one of mode (as
 * open(2) takes it: the umask applies), with O_EXCL; a stale one in its
 * place is removed first: the caller holds the claim. (The area itself is
 * 0700: a part file's mode is for after its publish.) Otherwise the
 * existing one, refused (-ESTALE) unless it is a regular file of this
 * user with one link. Returns the fd or -errno. */
int ferry__stage_open_part(const struct ferry__stage *s,
			   const struct ferry__stage_key *k, bool create,
			   mode_t mode);

/* Open a split file's part file for writing, made (mode 0600, empty)
 * when create and it is missing; an existing one is kept as it is, and
 * refused (-ESTALE) unless it is a regular file of this user with one
 * link. Returns the fd or -errno (-ENOENT: missing, without create). */
int ferry__stage_open_split(const struct ferry__stage *s,
			    const struct ferry__stage_key *k, uint64_t split,
			    bool create);

/* Call fn(arg, offset, name) for each range journal of a split file
 * there is (name as ferry__stage_split_name writes it), until fn returns
 * non-zero, which this returns (else 0). */
int ferry__stage_split_journals(const struct ferry__stage *s,
				const struct ferry__stage_key *k,
				uint64_t split,
				int (*fn)(void *arg, uint64_t offset,
					  const char *name),
				void *arg);

/* Remove every range journal of a split file and, with part, its part
 * file. The caller holds every claim that guards them. */
void ferry__stage_drop_split(const struct ferry__stage *s,
			     const struct ferry__stage_key *k, uint64_t split,
			     bool part);

/* Remove a target's staged files (kind, or both with both). */
void ferry__stage_drop(const struct ferry__stage *s,
		       const struct ferry__stage_key *k, bool part,
		       bool journal);

/* Publish: rename the part file to base in parentfd, refusing to replace
 * an existing name unless replace (-EEXIST). -EXDEV when parentfd is on
 * another file system than the area. */
int ferry__stage_publish(const struct ferry__stage *s,
			 const struct ferry__stage_key *k, int parentfd,
			 const char *base, bool replace);
/* The same for a split file's part file. */
int ferry__stage_publish_split(const struct ferry__stage *s,
			       const struct ferry__stage_key *k,
			       uint64_t split, int parentfd, const char *base,
			       bool replace);

#endif
