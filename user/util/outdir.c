// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* outdir.c — see outdir.h: the output directory held by fd, every output made relative to it. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "util/outdir.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define HELD_MAX 8
#define OUT_MODE 0644   /* outputs: 0644 at most, whatever the umask */
#define DIR_MODE 0700   /* directories peaktrace makes */
#define DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)

static struct held {
	char *path;     /* as given, trailing slashes dropped */
	size_t len;
	int fd;
} held[HELD_MAX];
static int nheld;
static bool trust;

void pt_outdir_set_trust(bool t)
{
	trust = t;
}

bool pt_outdir_trusted(void)
{
	return trust;
}

/* Root, the caller (real or effective uid), or under sudo the user who ran it: whoever they
 * are, they chose the path. Anyone else's directory may hold their links. */
static bool uid_ok(uid_t u)
{
	const char *s = getenv("SUDO_UID");
	char *end;
	unsigned long v;

	if (u == 0 || u == geteuid() || u == getuid())
		return true;
	if (!s || !*s || geteuid() != 0)
		return false;
	errno = 0;
	v = strtoul(s, &end, 10);
	return !errno && !*end && v == (unsigned long)u;
}

/* Group write that lets no one else in: under sudo, the invoking user's primary group
 * (SUDO_GID) on that user's directory: Debian's and Ubuntu's user private groups, whose umask
 * 002 makes every directory a user creates group-writable. (Not root's group: whoever is in it
 * is not root.) */
static bool group_own(const struct stat *st)
{
	const char *s = getenv("SUDO_GID");
	char *end;
	unsigned long v;

	if (!s || !*s || st->st_uid == 0 || !uid_ok(st->st_uid))
		return false;
	errno = 0;
	v = strtoul(s, &end, 10);
	return !errno && !*end && v == (unsigned long)st->st_gid;
}

/* Why the directory st is not safe to write in: NULL if it is (or the user trusts it). */
static const char *dir_unsafe(const struct stat *st, char *why, size_t n)
{
	if (!S_ISDIR(st->st_mode))
		return "not a directory";
	if (trust)
		return NULL;
	if (!uid_ok(st->st_uid)) {
		snprintf(why, n, "owned by uid %u, neither root nor the user running peaktrace",
			 (unsigned)st->st_uid);
		return why;
	}
	if ((st->st_mode & S_IWOTH) || ((st->st_mode & S_IWGRP) && !group_own(st))) {
		snprintf(why, n, "writable by %s (mode %04o)",
			 st->st_mode & S_IWOTH ? "others" : "its group", (unsigned)(st->st_mode & 07777));
		return why;
	}
	return NULL;
}

/* A fresh fd's file down to 0644 at most: open()'s mode already is under any umask, but a
 * default ACL on the directory can widen it. */
static int clamp_mode(int fd)
{
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	if ((st.st_mode & 07777) & ~OUT_MODE && fchmod(fd, st.st_mode & OUT_MODE))
		return -errno;
	return 0;
}

/* NAME in dfd as a new file: never opened through what is there (a symlink, a hard link to
 * someone's file), which is unlinked instead. The loop ends a race with whoever keeps
 * re-planting the name in a --trust-output-dir directory: three tries, then EEXIST. */
static int create_at(int dfd, const char *name)
{
	int fd, err;

	for (int tries = 0; tries < 3; tries++) {
		fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, OUT_MODE);
		if (fd >= 0) {
			if ((err = clamp_mode(fd))) {
				close(fd);
				unlinkat(dfd, name, 0);
				errno = -err;
				return -1;
			}
			return fd;
		}
		if (errno != EEXIST)
			return -1;
		if (unlinkat(dfd, name, 0) && errno != ENOENT)
			return -1;
	}
	errno = EEXIST;
	return -1;
}

static struct held *held_find(const char *path, const char **rest)
{
	struct held *best = NULL;

	for (int i = 0; i < nheld; i++) {
		const struct held *h = &held[i];

		if (strncmp(path, h->path, h->len) ||
		    (path[h->len] != '/' && !(h->len == 1 && h->path[0] == '/')))
			continue;
		if (!best || h->len > best->len)
			best = &held[i];
	}
	if (best) {
		*rest = path + best->len;
		while (**rest == '/')
			(*rest)++;
	}
	return best;
}

/* The directory holding path's last component, opened without following links from the held
 * directory down (each level checked as the held one was), and that component in name.
 * The fd is the caller's to close when *own. -errno when path is under no held directory
 * (EXDEV), climbs out of it (..), or a level is not safe (EPERM). */
static int resolve(const char *path, char *name, size_t nname, bool *own)
{
	const char *rest, *slash;
	struct held *h = held_find(path, &rest);
	int dfd, next;

	*own = false;
	if (!h || !*rest)
		return -EXDEV;
	dfd = h->fd;
	while ((slash = strchr(rest, '/'))) {
		size_t n = (size_t)(slash - rest);
		struct stat st;
		char why[128];

		if (n >= nname)
			return -ENAMETOOLONG;
		memcpy(name, rest, n);
		name[n] = 0;
		rest = slash;
		while (*rest == '/')
			rest++;
		if (!n || !strcmp(name, "."))
			continue;
		if (!strcmp(name, ".."))
			next = -EXDEV;
		else if ((next = openat(dfd, name, DIR_FLAGS)) < 0)
			next = -errno;
		else if (fstat(next, &st) || dir_unsafe(&st, why, sizeof(why))) {
			close(next);
			next = -EPERM;
		}
		if (*own)
			close(dfd);
		if (next < 0)
			return next;
		dfd = next;
		*own = true;
	}
	if (!*rest || !strcmp(rest, ".") || !strcmp(rest, "..") || strlen(rest) >= nname) {
		if (*own)
			close(dfd);
		return !*rest || rest[0] == '.' ? -EXDEV : -ENAMETOOLONG;
	}
	strcpy(name, rest);
	return dfd;
}

int pt_out_open(const char *path)
{
	char name[NAME_MAX + 1];
	bool own;
	int dfd = resolve(path, name, sizeof(name), &own), fd, err;

	if (dfd < 0) {
		errno = -dfd;
		return -1;
	}
	fd = create_at(dfd, name);
	err = errno;
	if (own)
		close(dfd);
	errno = err;
	return fd;
}

static FILE *fd_stream(int fd)
{
	FILE *f;
	int err;

	if (fd < 0)
		return NULL;
	if (!(f = fdopen(fd, "w"))) {
		err = errno;
		close(fd);
		errno = err;
	}
	return f;
}

FILE *pt_out_fopen(const char *path)
{
	return fd_stream(pt_out_open(path));
}

int pt_out_mkdir(const char *path)
{
	char name[NAME_MAX + 1], why[128];
	struct stat st;
	bool own;
	int dfd = resolve(path, name, sizeof(name), &own), fd, err = 0;

	if (dfd < 0)
		return dfd;
	if (mkdirat(dfd, name, DIR_MODE) && errno != EEXIST)
		err = -errno;
	else if ((fd = openat(dfd, name, DIR_FLAGS)) < 0)
		err = -errno;
	else {
		if (fstat(fd, &st))
			err = -errno;
		else if (dir_unsafe(&st, why, sizeof(why)))
			err = -EPERM;
		close(fd);
	}
	if (own)
		close(dfd);
	return err;
}

int pt_out_unlink(const char *path)
{
	char name[NAME_MAX + 1];
	bool own;
	int dfd = resolve(path, name, sizeof(name), &own), err = 0;

	if (dfd < 0)
		return dfd;
	if (unlinkat(dfd, name, 0))
		err = -errno;
	if (own)
		close(dfd);
	return err;
}

int pt_user_open(const char *path)
{
	const char *rest;
	int fd, err;

	if (held_find(path, &rest))
		return pt_out_open(path);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, OUT_MODE);
	if (fd >= 0 && (err = clamp_mode(fd))) {
		close(fd);
		errno = -err;
		return -1;
	}
	return fd;
}

FILE *pt_user_fopen(const char *path)
{
	return fd_stream(pt_user_open(path));
}

/* ---- preparing the directory ------------------------------------------------------------ */

/* Can a file be made here (a read-only mount, a full quota...)? Without a name, so nothing to
 * follow and nothing left behind: O_TMPFILE; where the filesystem lacks it, a name of our own
 * made with O_EXCL|O_NOFOLLOW, then removed. */
static int write_test(int dfd)
{
	char probe[64];
	int fd = openat(dfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
		return -errno;
	snprintf(probe, sizeof(probe), ".peaktrace-write-test.%d", (int)getpid());
	fd = openat(dfd, probe, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	close(fd);
	unlinkat(dfd, probe, 0);
	return 0;
}

/* `mkdir -p` of dir's parents (0755, errors left to the open that follows), then dir, 0700. */
static int make_dirs(char *p)
{
	for (char *q = p + 1; *q; q++) {
		if (*q != '/')
			continue;
		*q = 0;
		mkdir(p, 0755);
		*q = '/';
	}
	return mkdir(p, DIR_MODE) && errno != EEXIST ? -errno : 0;
}

/* The last component of p opened as a directory. The path up to it is the user's as typed
 * (symlinks there included); the last component is followed only when it is a symlink of
 * root's or the caller's own: a link another user planted where the directory should be is not
 * the user's choice, --trust-output-dir or not (that option trusts a directory's owner and mode,
 * never a link: under it a compare run's or a --follow process's sub-directory, made by its own
 * peaktrace with this path, is still never a link planted in the trusted DIR). */
static int open_last(const char *dir, const char *parent, const char *last)
{
	int pfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC), fd, err;
	struct stat lst;

	if (pfd < 0) {
		err = -errno;
		fprintf(stderr, "peaktrace: cannot open output directory %s: %s\n", dir, strerror(errno));
		return err;
	}
	fd = openat(pfd, last, DIR_FLAGS);
	if (fd < 0 && (errno == ELOOP || errno == ENOTDIR) &&
	    !fstatat(pfd, last, &lst, AT_SYMLINK_NOFOLLOW) && S_ISLNK(lst.st_mode)) {
		if (!uid_ok(lst.st_uid)) {
			fprintf(stderr, "peaktrace: refusing output directory %s: it is a symbolic link "
					"owned by uid %u, not by root or the user running peaktrace (name "
					"the directory it points to if that is the one meant)\n", dir,
				(unsigned)lst.st_uid);
			close(pfd);
			return -EPERM;
		}
		fd = openat(pfd, last, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	}
	err = -errno;
	if (fd < 0)
		fprintf(stderr, "peaktrace: cannot open output directory %s: %s\n", dir, strerror(errno));
	close(pfd);
	return fd < 0 ? err : fd;
}

static int hold(const char *dir, size_t len, int fd)
{
	if (nheld == HELD_MAX || !(held[nheld].path = strndup(dir, len))) {
		close(fd);
		fprintf(stderr, "peaktrace: cannot hold output directory %s: %s\n", dir,
			strerror(nheld == HELD_MAX ? EMFILE : ENOMEM));
		return nheld == HELD_MAX ? -EMFILE : -ENOMEM;
	}
	held[nheld].len = len;
	held[nheld++].fd = fd;
	return 0;
}

int pt_outdir_prepare(const char *dir)
{
	char p[PATH_MAX], why[128], *slash;
	const char *parent = ".", *last, *bad;
	size_t len = strlen(dir);
	struct stat st;
	int fd, err;

	while (len > 1 && dir[len - 1] == '/')
		len--;
	for (int i = 0; i < nheld; i++)
		if (held[i].len == len && !strncmp(held[i].path, dir, len))
			return 0;
	if (!len || len >= sizeof(p)) {
		fprintf(stderr, "peaktrace: cannot create output directory %s: %s\n", dir,
			strerror(len ? ENAMETOOLONG : ENOENT));
		return len ? -ENAMETOOLONG : -ENOENT;
	}
	memcpy(p, dir, len);
	p[len] = 0;
	if ((err = make_dirs(p))) {
		fprintf(stderr, "peaktrace: cannot create output directory %s: %s\n", dir, strerror(-err));
		return err;
	}
	last = p;
	if ((slash = strrchr(p, '/'))) {
		*slash = 0;
		parent = slash == p ? "/" : p;
		last = slash[1] ? slash + 1 : ".";
	}
	if ((fd = open_last(dir, parent, last)) < 0)
		return fd;
	if (fstat(fd, &st))
		bad = strerror(errno);
	else
		bad = dir_unsafe(&st, why, sizeof(why));
	if (bad) {
		fprintf(stderr, "peaktrace: refusing output directory %s: %s; links planted in it could "
				"redirect the reports (--trust-output-dir to write there anyway)\n", dir, bad);
		close(fd);
		return -EPERM;
	}
	if ((err = write_test(fd))) {
		fprintf(stderr, "peaktrace: output directory %s is not writable: %s\n", dir, strerror(-err));
		close(fd);
		return err;
	}
	return hold(dir, len, fd);
}

void pt_outdir_release(void)
{
	for (int i = 0; i < nheld; i++) {
		close(held[i].fd);
		free(held[i].path);
	}
	nheld = 0;
}
