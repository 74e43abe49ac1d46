// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * uwcache.c — unwind tables kept on disk by build id (uwcache.h says what is checked and why).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "unwind/uwcache.h"

#define UWC_MAGIC "PTUWT\0\0\1"
/* Bumped whenever what cfi.c puts into a row changes meaning: older files are then rejected. */
#define UWC_VERSION 1u

struct uwc_hdr {
	char magic[8];
	uint32_t version;
	uint32_t row_size;      /* sizeof(struct pt_unwind_row) */
	uint32_t bid_len;
	uint32_t nrows;
	uint8_t bid[PT_UWCACHE_BID_MAX];
	uint64_t checksum;      /* FNV-1a 64 of the rows */
};
_Static_assert(sizeof(struct uwc_hdr) == 96, "uwc_hdr layout");

static uint64_t fnv1a(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* A directory only root can write into, or the cache is off. */
static int dir_ok(const char *dir, const char **why)
{
	struct stat st;

	if (lstat(dir, &st)) {
		*why = "cannot stat it";
		return -errno;
	}
	if (!S_ISDIR(st.st_mode)) {
		*why = "not a directory";
		return -ENOTDIR;
	}
	if (st.st_uid != 0 || (st.st_mode & 022)) {
		*why = "not owned by root, or writable by others";
		return -EPERM;
	}
	return 0;
}

static int mkdir_p(const char *dir)
{
	char tmp[4096], *p;

	snprintf(tmp, sizeof(tmp), "%s", dir);
	for (p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		mkdir(tmp, 0755);
		*p = '/';
	}
	return mkdir(tmp, 0700) && errno != EEXIST ? -errno : 0;
}

int pt_uwcache_init(struct pt_uwcache *c, const char *dir, bool off, const char **why)
{
	int err;

	memset(c, 0, sizeof(*c));
	*why = NULL;
	if (off)
		return 0;
	snprintf(c->dir, sizeof(c->dir), "%s", dir ? dir : PT_UWCACHE_DEFAULT_DIR);
	if ((err = mkdir_p(c->dir))) {
		*why = "cannot create it";
		return err;
	}
	if ((err = dir_ok(c->dir, why)))
		return err;
	c->on = true;
	return 0;
}

static void file_name(const struct pt_uwcache *c, const uint8_t *bid, size_t bidlen, char *out,
		      size_t outsz)
{
	int n = snprintf(out, outsz, "%s/", c->dir);

	for (size_t i = 0; i < bidlen && n > 0 && (size_t)n + 3 < outsz; i++)
		n += snprintf(out + n, outsz - n, "%02x", bid[i]);
	if (n > 0 && (size_t)n < outsz)
		snprintf(out + n, outsz - n, ".uwt");
}

/* The checks on rows a file brings: what the kernel's binary search and walk rely on. */
static bool rows_ok(const struct pt_unwind_row *r, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		if (r[i].cfa_reg >= PT_CFA_KINDS)
			return false;
		if (i && r[i].pc <= r[i - 1].pc)
			return false;
	}
	return true;
}

/* Read and check one file; 0 with t filled, -ENOENT, or -EBADMSG. */
static int read_table(int fd, const uint8_t *bid, size_t bidlen, struct pt_unwind_table *t)
{
	struct uwc_hdr h;
	struct stat st;
	size_t want;

	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != 0 || (st.st_mode & 022))
		return -EBADMSG;
	if (pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h))
		return -EBADMSG;
	if (memcmp(h.magic, UWC_MAGIC, 8) || h.version != UWC_VERSION ||
	    h.row_size != sizeof(struct pt_unwind_row) || h.bid_len != bidlen ||
	    h.bid_len > PT_UWCACHE_BID_MAX || memcmp(h.bid, bid, bidlen) || !h.nrows ||
	    h.nrows > PT_UNWIND_MAX_ROWS)
		return -EBADMSG;
	want = (size_t)h.nrows * sizeof(struct pt_unwind_row);
	if ((uint64_t)st.st_size != sizeof(h) + want)
		return -EBADMSG;
	t->rows = malloc(want);
	if (!t->rows)
		return -ENOMEM;
	if (pread(fd, t->rows, want, sizeof(h)) != (ssize_t)want ||
	    fnv1a(t->rows, want) != h.checksum || !rows_ok(t->rows, h.nrows)) {
		free(t->rows);
		t->rows = NULL;
		return -EBADMSG;
	}
	t->nrows = h.nrows;
	t->stats.rows = h.nrows;
	return 0;
}

int pt_uwcache_get(struct pt_uwcache *c, const uint8_t *bid, size_t bidlen, struct pt_unwind_table *t)
{
	char path[4200];
	int fd, err;

	memset(t, 0, sizeof(*t));
	if (!c || !c->on)
		return -ENOENT;
	if (!bidlen || bidlen > PT_UWCACHE_BID_MAX) {
		c->st.no_build_id++;
		return -ENOENT;
	}
	file_name(c, bid, bidlen, path, sizeof(path));
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		if (errno == ENOENT)
			return -ENOENT;
		err = -EBADMSG;     /* a symlink, a FIFO we may not open... */
	} else {
		err = read_table(fd, bid, bidlen, t);
		close(fd);
	}
	if (err == -ENOMEM)
		return -ENOENT;
	if (err) {
		c->st.rejected++;
		unlink(path);       /* rebuilt and written again by the caller */
		return -EBADMSG;
	}
	c->st.hits++;
	utimensat(AT_FDCWD, path, NULL, AT_SYMLINK_NOFOLLOW);   /* used now: evicted last */
	return 0;
}

struct uwc_ent {
	int64_t used;           /* mtime: set at each read (a hit), so the oldest is the least used */
	uint64_t size;
	char name[256];
};

static int by_use(const void *a, const void *b)
{
	const struct uwc_ent *x = a, *y = b;

	return x->used < y->used ? -1 : x->used > y->used;
}

/* Room for one more table of size bytes in the directory: the least recently used tables are
 * removed to make it (at most twice PT_UWCACHE_MAX_FILES entries are looked at). */
static bool room_for(struct pt_uwcache *c, uint64_t bytes)
{
	DIR *d = opendir(c->dir);
	struct uwc_ent *e = calloc(PT_UWCACHE_MAX_FILES * 2, sizeof(*e));
	uint64_t total = bytes;
	struct dirent *de;
	struct stat st;
	size_t n = 0, i = 0;
	bool ok;

	if (!d || !e) {
		if (d)
			closedir(d);
		free(e);
		return false;
	}
	while ((de = readdir(d)) && n < PT_UWCACHE_MAX_FILES * 2) {
		if (!strstr(de->d_name, ".uwt") || strlen(de->d_name) >= sizeof(e[n].name) ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW))
			continue;
		e[n].used = st.st_mtime;
		e[n].size = (uint64_t)st.st_size;
		snprintf(e[n].name, sizeof(e[n].name), "%s", de->d_name);
		total += e[n++].size;
	}
	qsort(e, n, sizeof(*e), by_use);
	while (i < n && (n - i + 1 > PT_UWCACHE_MAX_FILES || total > PT_UWCACHE_MAX_BYTES)) {
		if (unlinkat(dirfd(d), e[i].name, 0) == 0) {
			total -= e[i].size;
			c->st.evicted++;
		}
		i++;
	}
	ok = n - i + 1 <= PT_UWCACHE_MAX_FILES && total <= PT_UWCACHE_MAX_BYTES;
	closedir(d);
	free(e);
	return ok;
}

void pt_uwcache_put(struct pt_uwcache *c, const uint8_t *bid, size_t bidlen,
		    const struct pt_unwind_table *t)
{
	struct uwc_hdr h;
	char path[4200], tmp[4300];
	size_t n;
	int fd;
	bool ok;

	if (!c || !c->on || !bidlen || bidlen > PT_UWCACHE_BID_MAX || !t->nrows)
		return;
	n = (size_t)t->nrows * sizeof(*t->rows);
	if (sizeof(h) + n > PT_UWCACHE_MAX_BYTES || !room_for(c, sizeof(h) + n)) {
		c->st.not_written++;
		return;
	}
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, UWC_MAGIC, 8);
	h.version = UWC_VERSION;
	h.row_size = sizeof(*t->rows);
	h.bid_len = (uint32_t)bidlen;
	memcpy(h.bid, bid, bidlen);
	h.nrows = t->nrows;
	h.checksum = fnv1a(t->rows, n);
	file_name(c, bid, bidlen, path, sizeof(path));
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		c->st.not_written++;
		return;
	}
	ok = write(fd, &h, sizeof(h)) == (ssize_t)sizeof(h) && write(fd, t->rows, n) == (ssize_t)n;
	ok = !close(fd) && ok;
	if (!ok || rename(tmp, path)) {
		unlink(tmp);
		c->st.not_written++;
		return;
	}
	c->st.written++;
}
