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
/* Bumped whenever what cfi.c puts into a row changes meaning, or the header changes: older
 * files are then rejected. 2: the source digest in the header. */
#define UWC_VERSION 2u

struct uwc_hdr {
	char magic[8];
	uint32_t version;
	uint32_t row_size;      /* sizeof(struct pt_unwind_row) */
	uint32_t bid_len;
	uint32_t nrows;
	uint8_t bid[PT_UWCACHE_BID_MAX];
	uint8_t src[PT_SHA256_LEN]; /* pt_cfi_elf_digest of the file the rows were built from */
	uint64_t checksum;      /* FNV-1a 64 of the rows (against a torn or flipped file: only
	                         * root writes here, so no adversary to collide it) */
};
_Static_assert(sizeof(struct uwc_hdr) == 128, "uwc_hdr layout");

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

const char *pt_uwcache_dir_refusal(uint32_t uid, uint32_t mode, bool last, uint32_t euid)
{
	if (!S_ISDIR(mode))
		return "not a directory";
	if (last)
		return uid != 0 || (mode & 022) ? "not owned by root, or writable by others" : NULL;
	/* A parent: its owner could rename the cache directory away and put another in its place,
	 * so only root (or peaktrace's own user) may own one; one others can write into only with
	 * the sticky bit (as /tmp), where they cannot rename what is root's. */
	if (uid != 0 && uid != euid)
		return "a parent directory is owned by another user";
	if ((mode & 022) && !(mode & S_ISVTX))
		return "a parent directory is writable by others (and not sticky)";
	return NULL;
}

/* Opens (creating if missing) and checks one component under parent: the new fd, or -errno. */
static int open_component(int parent, const char *name, bool last, const char **why)
{
	struct stat st;
	int fd, err;

	fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		if (mkdirat(parent, name, last ? 0700 : 0755) && errno != EEXIST) {
			*why = "cannot create it";
			return -errno;
		}
		fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd < 0) {
		err = -errno;
		*why = errno == ELOOP || errno == ENOTDIR ? "a symlink or not a directory in its path"
							   : "cannot open it";
		return err;
	}
	if (fstat(fd, &st)) {
		err = -errno;
		close(fd);
		*why = "cannot stat it";
		return err;
	}
	if ((*why = pt_uwcache_dir_refusal(st.st_uid, st.st_mode, last, geteuid()))) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

/* The directory, walked from / one component at a time without following links, each checked
 * by pt_uwcache_dir_refusal: its fd, or -errno. */
static int open_dir(const char *dir, const char **why)
{
	char path[4096], *save = NULL, *comp, *next;
	struct stat st;
	int fd, nfd;

	if (dir[0] == '/') {
		snprintf(path, sizeof(path), "%s", dir);
	} else {
		char cwd[4096];

		if (!getcwd(cwd, sizeof(cwd)) || snprintf(path, sizeof(path), "%s/%s", cwd, dir) >= (int)sizeof(path)) {
			*why = "cannot resolve it";
			return -ENAMETOOLONG;
		}
	}
	fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		*why = "cannot open /";
		if (fd >= 0)
			close(fd);
		return -EIO;
	}
	if ((*why = pt_uwcache_dir_refusal(st.st_uid, st.st_mode, false, geteuid()))) {
		close(fd);
		return -EPERM;
	}
	comp = strtok_r(path, "/", &save);
	if (!comp) {
		close(fd);
		*why = "not a directory under /";
		return -EINVAL;
	}
	for (; comp; comp = next) {
		next = strtok_r(NULL, "/", &save);
		if (!strcmp(comp, ".") && next)
			continue;
		if (!strcmp(comp, "..") || !strcmp(comp, ".")) {
			close(fd);
			*why = "\"..\" or \".\" in its path: give the real path";
			return -EINVAL;
		}
		nfd = open_component(fd, comp, !next, why);
		close(fd);
		if (nfd < 0)
			return nfd;
		fd = nfd;
	}
	return fd;
}

int pt_uwcache_init(struct pt_uwcache *c, const char *dir, bool off, const char **why)
{
	int fd;

	memset(c, 0, sizeof(*c));
	c->dfd = -1;
	*why = NULL;
	if (off)
		return 0;
	snprintf(c->dir, sizeof(c->dir), "%s", dir ? dir : PT_UWCACHE_DEFAULT_DIR);
	fd = open_dir(c->dir, why);
	if (fd < 0)
		return fd;
	c->dfd = fd;
	c->on = true;
	return 0;
}

/* Only a cache that is on holds a descriptor (a never-initialized one is all zeros). */
void pt_uwcache_close(struct pt_uwcache *c)
{
	if (!c || !c->on)
		return;
	close(c->dfd);
	c->dfd = -1;
	c->on = false;
}

/* "<hex build id>.uwt", relative to the directory's fd. */
static void file_name(const uint8_t *bid, size_t bidlen, char *out, size_t outsz)
{
	size_t n = 0;

	for (size_t i = 0; i < bidlen && n + 3 < outsz; i++)
		n += (size_t)snprintf(out + n, outsz - n, "%02x", bid[i]);
	snprintf(out + n, outsz - n, ".uwt");
}

/* The checks on rows a file brings: what the kernel's binary search and walk rely on. */
static bool rows_ok(const struct pt_unwind_row *r, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		/* The kind: AArch64 rows keep the return address's rule above it (unwind.h). */
		if ((r[i].cfa_reg & PT_CFA_KIND_MASK) >= PT_CFA_KINDS)
			return false;
		if (i && r[i].pc <= r[i - 1].pc)
			return false;
	}
	return true;
}

/* Read and check one file; 0 with t filled, -ENOENT, or -EBADMSG. */
static int read_table(int fd, const uint8_t *bid, size_t bidlen, const uint8_t *src,
		      struct pt_unwind_table *t)
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
	/* A well-formed file of this build id, built from other bytes: someone's build id is
	 * forged (or reused by a different build). Not corrupt: told apart and counted. */
	if (memcmp(h.src, src, PT_SHA256_LEN))
		return -ESTALE;
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

int pt_uwcache_get(struct pt_uwcache *c, const uint8_t *bid, size_t bidlen,
		   const uint8_t src[PT_SHA256_LEN], struct pt_unwind_table *t)
{
	char name[PT_UWCACHE_BID_MAX * 2 + 8];
	int fd, err;

	memset(t, 0, sizeof(*t));
	if (!c || !c->on)
		return -ENOENT;
	if (!bidlen || bidlen > PT_UWCACHE_BID_MAX) {
		c->st.no_build_id++;
		return -ENOENT;
	}
	file_name(bid, bidlen, name, sizeof(name));
	fd = openat(c->dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		if (errno == ENOENT)
			return -ENOENT;
		err = -EBADMSG;     /* a symlink, a FIFO we may not open... */
	} else {
		err = read_table(fd, bid, bidlen, src, t);
		if (!err)
			futimens(fd, NULL);     /* used now: evicted last */
		close(fd);
	}
	if (err == -ENOMEM)
		return -ENOENT;
	if (err == -ESTALE)
		return -ESTALE;     /* counted by the caller when it rebuilds (as misses); the
		                     * rebuilt table's put replaces the file */
	if (err) {
		c->st.rejected++;
		unlinkat(c->dfd, name, 0);  /* rebuilt and written again by the caller */
		return -EBADMSG;
	}
	c->st.hits++;
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
	int dfd = openat(c->dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	struct uwc_ent *e = calloc(PT_UWCACHE_MAX_FILES * 2, sizeof(*e));
	uint64_t total = bytes;
	struct dirent *de;
	struct stat st;
	size_t n = 0, i = 0;
	bool ok;

	if (!d || !e) {
		if (d)
			closedir(d);
		else if (dfd >= 0)
			close(dfd);
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
		    const uint8_t src[PT_SHA256_LEN], const struct pt_unwind_table *t)
{
	char name[PT_UWCACHE_BID_MAX * 2 + 8], tmp[PT_UWCACHE_BID_MAX * 2 + 32];
	struct uwc_hdr h;
	size_t n;
	int fd;
	bool ok;

	if (!c || !c->on || !bidlen || bidlen > PT_UWCACHE_BID_MAX || !t->nrows)
		return;
	if (t->stats.derefs) {
		/* Rows that depend on words outside the hashed section: never kept. */
		c->st.uncacheable++;
		return;
	}
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
	memcpy(h.src, src, PT_SHA256_LEN);
	h.nrows = t->nrows;
	h.checksum = fnv1a(t->rows, n);
	file_name(bid, bidlen, name, sizeof(name));
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", name, (int)getpid());
	fd = openat(c->dfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		c->st.not_written++;
		return;
	}
	ok = write(fd, &h, sizeof(h)) == (ssize_t)sizeof(h) && write(fd, t->rows, n) == (ssize_t)n;
	ok = !close(fd) && ok;
	if (!ok || renameat(c->dfd, tmp, c->dfd, name)) {
		unlinkat(c->dfd, tmp, 0);
		c->st.not_written++;
		return;
	}
	c->st.written++;
}
