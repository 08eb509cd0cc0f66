/* Walking the sender's arguments into a manifest (io/manifest.h).
 *
 * Path based (lstat, or stat when following symlinks) with one directory
 * stream open at a time: a directory's names are read and sorted, its
 * stream closed, then its children visited. The walk fills a manifest of
 * its own and hands it over only when every argument went through, so a
 * failed walk leaves the caller's manifest as it was.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ferry/error.h"
#include "io/manifest.h"
#include "util/util.h"

struct dir_id {
	dev_t dev;
	ino_t ino;
};

struct walk {
	struct ferry_manifest *m;
	bool follow;
	char *why;
	size_t whylen;
	char *src; /* the path being visited, as the user would name it */
	size_t src_cap;
	char rel[FERRY_PATH_MAX]; /* its manifest path */
	struct dir_id *anc;       /* directories on the current path */
	size_t n_anc, cap_anc;
	int (*open_source)(void *arg, const char *src, int flags);
	void *open_arg;
	uid_t euid; /* ours, asked once per walk rather than once per file */
};

/* The errors every step reports the same way. */
static int fail_errno(struct walk *w, const char *path, int err)
{
	if (err == ENOENT)
		ferry__why(w->why, w->whylen, "%s: no such file or directory",
			   path);
	else if (err == EACCES)
		ferry__why(w->why, w->whylen, "%s: permission denied", path);
	else
		ferry__why(w->why, w->whylen, "%s: %s", path,
			   ferry_strerror(-err));
	return -err;
}

static const char *special_kind(mode_t mode)
{
	if (S_ISFIFO(mode))
		return "fifo";
	if (S_ISSOCK(mode))
		return "socket";
	if (S_ISCHR(mode))
		return "character device";
	if (S_ISBLK(mode))
		return "block device";
	return "unknown type";
}

static int64_t mtime_ns(const struct stat *st)
{
	return (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
}

/* Stat path (the entry itself, not a symlink's target unless following).
 * Returns 1 when the entry is to be skipped (a symlink, or with
 * follow_symlinks a dangling one), 0 with *st filled, or -errno. */
static int walk_stat(struct walk *w, const char *path, struct stat *st)
{
	if (w->open_source) {
		/* the caller's opener decides what path names: files only */
		int fd = w->open_source(w->open_arg, path,
					O_RDONLY | O_NOCTTY | O_NONBLOCK |
						O_CLOEXEC);
		int err = fd < 0 ? -fd : fstat(fd, st) ? errno : 0;

		if (fd >= 0)
			close(fd);
		if (err)
			return fail_errno(w, path, err);
		if (S_ISDIR(st->st_mode)) {
			ferry__why(w->why, w->whylen,
				   "%s is a directory: only files are sent here",
				   path);
			return -EISDIR;
		}
		return 0;
	}
	if (lstat(path, st))
		return fail_errno(w, path, errno);
	if (!S_ISLNK(st->st_mode))
		return 0;
	if (!w->follow) {
		ferry__log(FERRY_LOG_WARN,
			   "%s: skipped: symbolic link (follow symlinks to "
			   "send what it points to)", path);
		return 1;
	}
	if (stat(path, st) == 0)
		return 0;
	if (errno == ENOENT) {
		ferry__log(FERRY_LOG_WARN,
			   "%s: skipped: symbolic link to nothing", path);
		return 1;
	}
	if (errno == ELOOP) {
		ferry__why(w->why, w->whylen,
			   "%s: symbolic link loop; ferry does not follow it",
			   path);
		return -ELOOP;
	}
	return fail_errno(w, path, errno);
}

static int src_reserve(struct walk *w, size_t need)
{
	char *p;
	size_t cap;

	if (need <= w->src_cap)
		return 0;
	cap = w->src_cap ? w->src_cap : 256;
	while (cap < need)
		cap *= 2;
	p = realloc(w->src, cap);
	if (!p)
		return -ENOMEM;
	w->src = p;
	w->src_cap = cap;
	return 0;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void names_free(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* Read the names in directory w->src, sorted. Returns 0 or -errno. */
static int read_names(struct walk *w, char ***out, size_t *n_out)
{
	int flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC |
		    (w->follow ? 0 : O_NOFOLLOW);
	char **names = NULL, **grown;
	size_t n = 0, cap = 0;
	struct dirent *de;
	DIR *d;
	int fd, ret;

	fd = open(w->src, flags);
	if (fd < 0)
		return fail_errno(w, w->src, errno);
	d = fdopendir(fd);
	if (!d) {
		ret = fail_errno(w, w->src, errno);
		close(fd);
		return ret;
	}
	for (;;) {
		errno = 0;
		de = readdir(d);
		if (!de) {
			if (errno) {
				ret = fail_errno(w, w->src, errno);
				goto err_names;
			}
			break;
		}
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 32;
			grown = realloc(names, cap * sizeof(*names));
			if (!grown) {
				ret = -ENOMEM;
				goto err_names;
			}
			names = grown;
		}
		names[n] = strdup(de->d_name);
		if (!names[n]) {
			ret = -ENOMEM;
			goto err_names;
		}
		n++;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), cmp_names);
	*out = names;
	*n_out = n;
	return 0;

err_names:
	names_free(names, n);
	closedir(d);
	return ret;
}

static int walk_entry(struct walk *w, size_t slen, size_t rlen,
		      const struct stat *st);

/* Visit name inside the directory at w->src / w->rel. */
static int walk_child(struct walk *w, size_t slen, size_t rlen,
		      const char *name)
{
	size_t nlen = strlen(name);
	size_t sep = slen && w->src[slen - 1] == '/' ? 0 : 1;
	struct stat st;
	int ret;

	if (rlen + 1 + nlen >= FERRY_PATH_MAX) {
		/* reason first: the path itself may not fit in why */
		ferry__why(w->why, w->whylen,
			   "path longer than %d bytes below the argument; "
			   "ferry cannot send %s/%s",
			   FERRY_PATH_MAX - 1, w->src, name);
		return -ENAMETOOLONG;
	}
	ret = src_reserve(w, slen + sep + nlen + 1);
	if (ret)
		return ret;
	if (sep)
		w->src[slen] = '/';
	memcpy(w->src + slen + sep, name, nlen + 1);
	w->rel[rlen] = '/';
	memcpy(w->rel + rlen + 1, name, nlen + 1);

	ret = walk_stat(w, w->src, &st);
	if (ret == 0)
		ret = walk_entry(w, slen + sep + nlen, rlen + 1 + nlen, &st);
	w->src[slen] = '\0';
	w->rel[rlen] = '\0';
	return ret < 0 ? ret : 0;
}

static int anc_push(struct walk *w, const struct stat *st)
{
	struct dir_id *grown;

	for (size_t i = 0; i < w->n_anc; i++) {
		if (w->anc[i].dev == st->st_dev && w->anc[i].ino == st->st_ino) {
			ferry__why(w->why, w->whylen,
				   "%s: directory loop (it leads back to a "
				   "directory above it); ferry does not "
				   "follow it", w->src);
			return -ELOOP;
		}
	}
	if (w->n_anc == w->cap_anc) {
		size_t cap = w->cap_anc ? 2 * w->cap_anc : 16;

		grown = realloc(w->anc, cap * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		w->anc = grown;
		w->cap_anc = cap;
	}
	w->anc[w->n_anc].dev = st->st_dev;
	w->anc[w->n_anc].ino = st->st_ino;
	w->n_anc++;
	return 0;
}

static int walk_dir(struct walk *w, size_t slen, size_t rlen,
		    const struct stat *st)
{
	char **names = NULL;
	size_t n = 0;
	int ret;

	ret = anc_push(w, st);
	if (ret)
		return ret;
	ret = ferry__manifest_add(w->m, w->rel, w->src, FERRY_ENTRY_DIR,
				  st->st_mode & 07777, 0, mtime_ns(st));
	if (ret)
		goto out_anc;
	ret = read_names(w, &names, &n);
	if (ret)
		goto out_anc;
	for (size_t i = 0; i < n && !ret; i++)
		ret = walk_child(w, slen, rlen, names[i]);
	names_free(names, n);
out_anc:
	w->n_anc--;
	return ret;
}

/* Readable by us for certain, from its stat alone: root (which reads
 * past the mode bits), or the owner with the owner's read bit (an ACL
 * never narrows the owner's class). Anything else asks faccessat. */
static bool surely_readable(const struct walk *w, const struct stat *st)
{
	uid_t me = w->euid;

	return me == 0 || (st->st_uid == me && (st->st_mode & S_IRUSR));
}

/* Add what w->src is (st: already resolved, never a symlink). */
static int walk_entry(struct walk *w, size_t slen, size_t rlen,
		      const struct stat *st)
{
	if (S_ISDIR(st->st_mode))
		return walk_dir(w, slen, rlen, st);
	if (!S_ISREG(st->st_mode)) {
		ferry__why(w->why, w->whylen,
			   "%s is a special file (%s); ferry moves regular "
			   "files and directories",
			   w->src, special_kind(st->st_mode));
		return -EINVAL;
	}
	/* Better to learn now than after the session has started (the
	 * caller's opener, when there is one, already did). The stat
	 * answers for the usual cases; the kernel is asked only for the
	 * rest (groups, ACLs), not once per file of a million. */
	if (!w->open_source && !surely_readable(w, st) &&
	    faccessat(AT_FDCWD, w->src, R_OK,
		      AT_EACCESS | (w->follow ? 0 : AT_SYMLINK_NOFOLLOW)))
		return fail_errno(w, w->src, errno);
	return ferry__manifest_add(w->m, w->rel, w->src, FERRY_ENTRY_FILE,
				   st->st_mode & 07777, (uint64_t)st->st_size,
				   mtime_ns(st));
}

/* The name an argument arrives under: its last component, or for ".",
 * ".." and the like the last component of its real path. Sets *name (to
 * free) or returns -errno with why. */
static int arg_name(const char *arg, char **name, char *why, size_t whylen)
{
	size_t len = strlen(arg);
	const char *base;
	char *real = NULL;
	size_t blen;

	while (len > 1 && arg[len - 1] == '/')
		len--;
	base = arg + len;
	while (base > arg && base[-1] != '/')
		base--;
	blen = (size_t)(arg + len - base);
	if (len == 0) {
		ferry__why(why, whylen, "'': no such file or directory");
		return -ENOENT;
	}
	if (blen == 0 || (blen == 1 && base[0] == '.') ||
	    (blen == 2 && base[0] == '.' && base[1] == '.')) {
		real = realpath(arg, NULL);
		if (!real) {
			int err = errno;

			ferry__why(why, whylen, "%s: %s", arg,
				   ferry_strerror(-err));
			return -err;
		}
		base = strrchr(real, '/');
		base = base ? base + 1 : real;
		blen = strlen(base);
		if (blen == 0) {
			ferry__why(why, whylen,
				   "%s: ferry does not send the root "
				   "directory; name the directories below it",
				   arg);
			free(real);
			return -EINVAL;
		}
	}
	if (blen >= FERRY_PATH_MAX)
		blen = FERRY_PATH_MAX; /* refused by the walk */
	*name = strndup(base, blen);
	free(real);
	return *name ? 0 : -ENOMEM;
}

struct arg_slot {
	char *name;
	size_t idx;
};

static int cmp_slots(const void *a, const void *b)
{
	const struct arg_slot *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	if (c)
		return c;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* A name the caller chose for an argument: a valid relative path (the
 * receiver makes its directories). */
static int given_name(const char *arg, const char *name, char **out,
		      char *why, size_t whylen)
{
	if (!ferry__path_valid(name)) {
		ferry__why(why, whylen,
			   "%s: cannot arrive as '%s': a name is a relative "
			   "path without empty, '.' or '..' components", arg,
			   name);
		return -EINVAL;
	}
	*out = strdup(name);
	return *out ? 0 : -ENOMEM;
}

/* Name every argument and refuse two that would arrive as one. */
static int name_args(struct arg_slot *slots, char *const *paths,
		     char *const *names, size_t n, char *why, size_t whylen)
{
	struct arg_slot *sorted;
	int ret;

	for (size_t i = 0; i < n; i++) {
		slots[i].idx = i;
		ret = names ? given_name(paths[i], names[i], &slots[i].name,
					 why, whylen) :
			      arg_name(paths[i], &slots[i].name, why, whylen);
		if (ret)
			return ret;
	}
	sorted = malloc(n * sizeof(*sorted));
	if (!sorted)
		return -ENOMEM;
	memcpy(sorted, slots, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), cmp_slots);
	ret = 0;
	for (size_t i = 1; i < n && !ret; i++) {
		if (strcmp(sorted[i - 1].name, sorted[i].name))
			continue;
		ferry__why(why, whylen,
			   "%s and %s would both arrive as '%s'; send them "
			   "in separate sessions or rename one",
			   paths[sorted[i - 1].idx], paths[sorted[i].idx],
			   sorted[i].name);
		ret = -EEXIST;
	}
	free(sorted);
	return ret;
}

/* Walk one argument under its manifest name. */
static int walk_arg(struct walk *w, const char *arg, const char *name)
{
	size_t slen = strlen(arg), rlen = strlen(name);
	struct stat st;
	int ret;

	if (rlen >= FERRY_PATH_MAX) {
		ferry__why(w->why, w->whylen, "%s: name longer than %d bytes",
			   arg, FERRY_PATH_MAX - 1);
		return -ENAMETOOLONG;
	}
	/* The argument as given: "link/" names the directory behind it. */
	ret = walk_stat(w, arg, &st);
	if (ret)
		return ret < 0 ? ret : 0;
	/* Keep one trailing '/' so that "link/" still opens as the
	 * directory behind the link. */
	while (slen > 1 && arg[slen - 1] == '/' && arg[slen - 2] == '/')
		slen--;
	ret = src_reserve(w, slen + 1);
	if (ret)
		return ret;
	memcpy(w->src, arg, slen);
	w->src[slen] = '\0';
	memcpy(w->rel, name, rlen + 1);
	return walk_entry(w, slen, rlen, &st);
}

/* Hand the walked entries t to m; on failure m is as it was. */
static int manifest_take(struct ferry_manifest *m, struct ferry_manifest *t)
{
	struct ferry_manifest both;
	int ret = 0;

	if (m->n == 0) {
		free(m->e);
		*m = *t;
		ferry__manifest_init(t);
		return 0;
	}
	ferry__manifest_init(&both);
	for (size_t k = 0; k < 2 && !ret; k++) {
		const struct ferry_manifest *from = k ? t : m;

		for (size_t i = 0; i < from->n && !ret; i++) {
			const struct ferry_entry *e = &from->e[i];

			ret = ferry__manifest_add(&both, e->path, e->src,
						  e->type, e->mode, e->size,
						  e->mtime_ns);
		}
	}
	if (ret) {
		ferry__manifest_free(&both);
		return ret;
	}
	ferry__manifest_free(m);
	*m = both;
	return 0;
}

int ferry__manifest_walk(struct ferry_manifest *m, char *const *paths,
			 size_t n_paths, const struct ferry_walk_opts *o,
			 char *why, size_t whylen)
{
	struct walk w = {
		.follow = o && o->follow_symlinks,
		.why = why,
		.whylen = whylen,
		.open_source = o ? o->open_source : NULL,
		.open_arg = o ? o->open_arg : NULL,
		.euid = geteuid(),
	};
	struct ferry_manifest t;
	struct arg_slot *slots;
	int ret;

	if (n_paths == 0)
		return 0;
	ferry__manifest_init(&t);
	w.m = &t;
	slots = calloc(n_paths, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	ret = name_args(slots, paths, o ? o->names : NULL, n_paths, why,
			whylen);
	for (size_t i = 0; i < n_paths && !ret; i++) {
		size_t before = t.n;
		ret = walk_arg(&w, paths[i], slots[i].name);
		if (o && o->arg_entry)
			o->arg_entry[i] = t.n > before ? m->n + before : SIZE_MAX;
	}
	if (!ret)
		ret = manifest_take(m, &t);
	for (size_t i = 0; i < n_paths; i++)
		free(slots[i].name);
	free(slots);
	free(w.src);
	free(w.anc);
	ferry__manifest_free(&t);
	return ret;
}
