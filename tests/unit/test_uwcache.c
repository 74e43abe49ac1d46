// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_uwcache: the unwind table cache (user/unwind/uwcache.h) on a real table, libc's, built
 * by cfi.c. What comes back must be the table that was built, row for row; every file that is
 * not exactly what the cache wrote for that build id (a flipped byte, a cut file, another build
 * id's file under this one's name, a file not owned by root, a symlink) is rejected, counted
 * and removed; another build id misses; at the directory's bound the least recently used file
 * makes room. A file of the same build id built from other CFI bytes (a forged build id) is
 * told apart (-ESTALE, counted as mismatched) and replaced by the next put; a table that read
 * words outside its section is never written. The directory: each parent must be root's and
 * not writable by others (unless sticky), no symlink in the path, and every operation goes
 * through the descriptor held from that check (a directory renamed afterwards still gets the
 * files; the new one at its old name none).
 * Run as root (the cache trusts only root's files); skipped otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "check.h"
#include "unwind/cfi.h"
#include "unwind/uwcache.h"
#include "util/elfutil.h"

#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"

static char dir[256];
static uint8_t src[PT_SHA256_LEN];    /* libc's pt_cfi_elf_digest */

static void path_of(const uint8_t *bid, int n, char *out, size_t sz)
{
	int k = snprintf(out, sz, "%s/", dir);

	for (int i = 0; i < n; i++)
		k += snprintf(out + k, sz - k, "%02x", bid[i]);
	snprintf(out + k, sz - k, ".uwt");
}

static bool same_table(const struct pt_unwind_table *a, const struct pt_unwind_table *b)
{
	return a->nrows == b->nrows && a->nrows &&
	       !memcmp(a->rows, b->rows, a->nrows * sizeof(*a->rows));
}

/* Flip one byte of the file at off (from its end when off < 0). */
static int flip(const char *path, long off)
{
	int fd = open(path, O_RDWR);
	struct stat st;
	unsigned char b;
	int ok;

	if (fd < 0 || fstat(fd, &st))
		return -1;
	if (off < 0)
		off += st.st_size;
	ok = pread(fd, &b, 1, off) == 1;
	b ^= 0x5a;
	ok = ok && pwrite(fd, &b, 1, off) == 1;
	close(fd);
	return ok ? 0 : -1;
}

static void test_round_trip(struct pt_uwcache *c, const struct pt_unwind_table *built,
			    const uint8_t *bid, int n)
{
	struct pt_unwind_table t;
	char path[512];
	struct stat st;

	CHECK(pt_uwcache_get(c, bid, n, src, &t) == -ENOENT, "empty cache: a miss");
	pt_uwcache_put(c, bid, n, src, built);
	path_of(bid, n, path, sizeof(path));
	CHECK(c->st.written == 1 && !stat(path, &st), "written as <build id>.uwt");
	CHECK(!stat(path, &st) && st.st_uid == 0 && (st.st_mode & 077) == 0,
	      "the file is root's, readable by root alone (mode %o)", st.st_mode & 0777);
	CHECK(pt_uwcache_get(c, bid, n, src, &t) == 0 && c->st.hits == 1, "read back: a hit");
	CHECK(same_table(&t, built), "... the same %u rows, byte for byte", built->nrows);
	pt_cfi_free(&t);
}

static void test_rejected(struct pt_uwcache *c, const struct pt_unwind_table *built,
			  const uint8_t *bid, int n)
{
	struct pt_unwind_table t;
	char path[512];
	uint64_t rej = c->st.rejected;

	path_of(bid, n, path, sizeof(path));
	/* A row byte: the checksum catches it. */
	CHECK(flip(path, -5) == 0, "corrupt: a byte of a row flipped");
	CHECK(pt_uwcache_get(c, bid, n, src, &t) == -EBADMSG && c->st.rejected == rej + 1,
	      "corrupt: rejected and counted");
	CHECK(access(path, F_OK) && errno == ENOENT, "corrupt: removed (the caller rebuilds it)");

	pt_uwcache_put(c, bid, n, src, built);
	CHECK(truncate(path, 128 + 8 * (built->nrows - 1)) == 0, "truncated: one row short");
	CHECK(pt_uwcache_get(c, bid, n, src, &t) == -EBADMSG && c->st.rejected == rej + 2,
	      "truncated: rejected and counted");

	pt_uwcache_put(c, bid, n, src, built);
	CHECK(flip(path, 8) == 0, "header: the format version changed");
	CHECK(pt_uwcache_get(c, bid, n, src, &t) == -EBADMSG && c->st.rejected == rej + 3,
	      "another format version: rejected");

	pt_uwcache_put(c, bid, n, src, built);
	CHECK(chown(path, 1, 1) == 0, "not root's: owner changed to uid 1");
	CHECK(pt_uwcache_get(c, bid, n, src, &t) == -EBADMSG && c->st.rejected == rej + 4,
	      "a file not owned by root: rejected");

	CHECK(symlink(LIBC, path) == 0, "a symlink where the table should be");
	CHECK(pt_uwcache_get(c, bid, n, src, &t) == -EBADMSG && c->st.rejected == rej + 5,
	      "a symlink: rejected, not followed");
	CHECK(access(path, F_OK) && errno == ENOENT, "... and removed");
}

static void test_foreign(struct pt_uwcache *c, const struct pt_unwind_table *built,
			 const uint8_t *bid, int n)
{
	struct pt_unwind_table t;
	uint8_t other[PT_UWCACHE_BID_MAX];
	char from[512], to[512];

	memcpy(other, bid, n);
	other[0] ^= 1;
	CHECK(pt_uwcache_get(c, other, n, src, &t) == -ENOENT, "another build id (a changed binary): a miss");
	/* Another build id's table renamed to this one's name: its header says whose it is. */
	pt_uwcache_put(c, bid, n, src, built);
	path_of(bid, n, from, sizeof(from));
	path_of(other, n, to, sizeof(to));
	CHECK(rename(from, to) == 0, "foreign: libc's table under another build id's name");
	CHECK(pt_uwcache_get(c, other, n, src, &t) == -EBADMSG, "foreign: rejected (the build id inside differs)");
}

static void set_mtime(const char *path, time_t t)
{
	struct timespec ts[2] = { { t, 0 }, { t, 0 } };

	utimensat(AT_FDCWD, path, ts, AT_SYMLINK_NOFOLLOW);
}

static void test_bounds(struct pt_uwcache *c, const struct pt_unwind_table *built, const uint8_t *bid,
			int n)
{
	struct pt_unwind_table t;
	struct pt_uwcache bad;
	uint8_t bid2[PT_UWCACHE_BID_MAX];
	const char *why;
	char path[512], path2[512], filler[512];
	time_t now = time(NULL);
	uint64_t ev = c->st.evicted;
	int i, fd;

	/* The directory at its file bound: this table (written long ago, then read: a hit marks
	 * it used) and fillers, the oldest first. */
	for (i = 0; i < PT_UWCACHE_MAX_FILES; i++) {
		snprintf(filler, sizeof(filler), "%s/filler%03d.uwt", dir, i);
		unlink(filler);
	}
	path_of(bid, n, path, sizeof(path));
	unlink(path);
	pt_uwcache_put(c, bid, n, src, built);
	set_mtime(path, now - 5000);
	for (i = 0; i < PT_UWCACHE_MAX_FILES - 1; i++) {
		snprintf(filler, sizeof(filler), "%s/filler%03d.uwt", dir, i);
		fd = open(filler, O_WRONLY | O_CREAT, 0600);
		if (fd >= 0)
			close(fd);
		set_mtime(filler, now - 1000 + i);
	}
	CHECK(pt_uwcache_get(c, bid, n, src, &t) == 0, "full directory: a hit marks the table used");
	pt_cfi_free(&t);
	memcpy(bid2, bid, n);
	bid2[n - 1] ^= 0x80;
	path_of(bid2, n, path2, sizeof(path2));
	pt_uwcache_put(c, bid2, n, src, built);
	snprintf(filler, sizeof(filler), "%s/filler000.uwt", dir);
	CHECK(c->st.evicted == ev + 1 && access(filler, F_OK) && !access(path2, F_OK),
	      "full directory: the least recently used file removed (counted), the new table written");
	CHECK(!access(path, F_OK), "... the table just read kept");
	/* A directory others can write into is not used. */
	CHECK(chmod(dir, 0777) == 0, "directory made world-writable");
	CHECK(pt_uwcache_init(&bad, dir, false, &why) == -EPERM && !bad.on,
	      "a directory others can write: cache off (%s)", why ? why : "?");
	chmod(dir, 0700);
	CHECK(pt_uwcache_init(&bad, dir, true, &why) == 0 && !bad.on, "--no-cache: off");
}

/* The same build id, another file's CFI: what a forged --build-id=0x... brings. */
static void test_mismatch(struct pt_uwcache *c, const struct pt_unwind_table *built, const uint8_t *bid,
			  int n)
{
	struct pt_unwind_table t, lie = *built;
	uint8_t other[PT_SHA256_LEN];
	uint64_t mm = c->st.mismatched, unc = c->st.uncacheable, rej = c->st.rejected, wr;

	memcpy(other, src, sizeof(other));
	other[31] ^= 1;
	lie.nrows = 1;      /* the liar's one-row table */
	pt_uwcache_put(c, bid, n, other, &lie);
	CHECK(pt_uwcache_get(c, bid, n, src, &t) == -ESTALE && !t.rows && c->st.rejected == rej,
	      "a table of this build id from other CFI bytes: not used (-ESTALE, not counted as corrupt)");
	pt_uwcache_put(c, bid, n, src, built);
	CHECK(pt_uwcache_get(c, bid, n, src, &t) == 0 && same_table(&t, built),
	      "... the rebuilt table replaces it: a hit, the %u honest rows", built->nrows);
	pt_cfi_free(&t);
	CHECK(pt_uwcache_get(c, bid, n, other, &t) == -ESTALE && c->st.mismatched == mm,
	      "... and the liar's digest now misses in turn (the caller counts mismatched when it rebuilds)");
	wr = c->st.written;
	lie = *built;
	lie.stats.derefs = 1;
	pt_uwcache_put(c, bid, n, src, &lie);
	CHECK(c->st.written == wr && c->st.uncacheable == unc + 1,
	      "a table that read words outside its section (DW_EH_PE_indirect): not written, counted");
}

/* The parents rule, pure, then on real directories. */
static void test_parents(const struct pt_unwind_table *built, const uint8_t *bid, int n)
{
	struct pt_uwcache c;
	struct stat st;
	const char *why;
	char p[512], q[512], name[512];
	int i;

	CHECK(!pt_uwcache_dir_refusal(0, S_IFDIR | 0755, false, 0), "rule: a root-owned 0755 parent: fine");
	CHECK(!pt_uwcache_dir_refusal(0, S_IFDIR | 01777, false, 0), "rule: /tmp (root's, 1777, sticky): fine");
	CHECK(pt_uwcache_dir_refusal(0, S_IFDIR | 0777, false, 0) != NULL,
	      "rule: a parent writable by others, not sticky: refused");
	CHECK(pt_uwcache_dir_refusal(0, S_IFDIR | 0775, false, 0) != NULL,
	      "rule: a group-writable parent, not sticky: refused");
	CHECK(pt_uwcache_dir_refusal(1000, S_IFDIR | 0755, false, 0) != NULL,
	      "rule: a parent owned by another user (0755): refused");
	CHECK(pt_uwcache_dir_refusal(1000, S_IFDIR | 01777, false, 0) != NULL,
	      "rule: a sticky parent owned by another user: refused (its owner may rename anything)");
	CHECK(!pt_uwcache_dir_refusal(1000, S_IFDIR | 0755, false, 1000),
	      "rule: a parent owned by peaktrace's own user: fine");
	CHECK(pt_uwcache_dir_refusal(0, S_IFDIR | 01777, true, 0) != NULL,
	      "rule: the cache directory itself writable by others: refused, sticky or not");
	CHECK(pt_uwcache_dir_refusal(0, S_IFREG | 0600, false, 0) != NULL, "rule: a file: refused");

	/* DIR/user (uid 1's) / cache (root's 0700): the user could swap cache for another. */
	snprintf(p, sizeof(p), "%s/user", dir);
	snprintf(q, sizeof(q), "%s/user/cache", dir);
	CHECK(mkdir(p, 0755) == 0 && mkdir(q, 0700) == 0 && chown(p, 1, 1) == 0,
	      "a parent owned by uid 1, the cache directory root's");
	CHECK(pt_uwcache_init(&c, q, false, &why) == -EPERM && !c.on,
	      "... cache off (%s)", why ? why : "?");
	/* A symlink in the path, even to a good directory. */
	snprintf(p, sizeof(p), "%s/link", dir);
	snprintf(q, sizeof(q), "%s/link/sub", dir);
	CHECK(symlink(dir, p) == 0 && pt_uwcache_init(&c, q, false, &why) < 0 && !c.on,
	      "a symlink in the path: cache off (%s)", why ? why : "?");
	CHECK(access(q, F_OK) != 0, "... and nothing created through it");
	/* Created when missing: 0700 for the directory, its parents 0755. */
	snprintf(p, sizeof(p), "%s/new/a", dir);
	snprintf(q, sizeof(q), "%s/new/a/cache", dir);
	CHECK(pt_uwcache_init(&c, q, false, &why) == 0 && c.on && !stat(q, &st) && (st.st_mode & 0777) == 0700 &&
	      !stat(p, &st) && (st.st_mode & 0777) == 0755, "missing: created, 0700 (parents 0755)");
	/* Renamed after the check, another directory put at its name: the files still go to the
	 * directory that was checked. */
	snprintf(name, sizeof(name), "%s/new/a/moved", dir);
	CHECK(rename(q, name) == 0 && mkdir(q, 0700) == 0, "the checked directory renamed, another in its place");
	pt_uwcache_put(&c, bid, n, src, built);
	for (i = 0, p[0] = 0; i < n; i++)
		snprintf(p + 2 * i, sizeof(p) - 2 * i, "%02x", bid[i]);
	snprintf(q, sizeof(q), "%s/new/a/moved/%s.uwt", dir, p);
	CHECK(c.st.written == 1 && !access(q, F_OK), "... the table written into the checked one");
	snprintf(q, sizeof(q), "%s/new/a/cache/%s.uwt", dir, p);
	CHECK(access(q, F_OK) != 0, "... nothing into the one put in its place");
	pt_uwcache_close(&c);
}

int main(void)
{
	struct pt_unwind_table built;
	struct pt_uwcache c;
	struct pt_elf e;
	uint8_t bid[PT_UWCACHE_BID_MAX];
	const char *why;
	int n;

	if (geteuid() != 0) {
		printf("ok - skipped: not root (the cache trusts root's files only)\n");
		return 0;
	}
	snprintf(dir, sizeof(dir), "/tmp/pt-uwcache-XXXXXX");
	if (!mkdtemp(dir) || pt_elf_open(LIBC, &e)) {
		CHECK(0, "setup: a temporary directory and %s", LIBC);
		return CHECK_DONE();
	}
	n = pt_elf_build_id(&e, bid, sizeof(bid));
	CHECK(pt_cfi_elf_digest(&e, src) == 0, "libc: the digest of its CFI");
	pt_elf_close(&e);
	CHECK(n > 0 && pt_cfi_build(LIBC, &built) == 0 && built.nrows > 1000,
	      "libc: build id and a table of %u rows", n > 0 ? built.nrows : 0);
	CHECK(pt_uwcache_init(&c, dir, false, &why) == 0 && c.on, "cache on in a root-owned directory");
	test_round_trip(&c, &built, bid, n);
	test_rejected(&c, &built, bid, n);
	test_foreign(&c, &built, bid, n);
	test_bounds(&c, &built, bid, n);
	test_mismatch(&c, &built, bid, n);
	test_parents(&built, bid, n);
	pt_uwcache_close(&c);
	pt_cfi_free(&built);
	{
		char cmd[300];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd))
			printf("# could not remove %s\n", dir);
	}
	return CHECK_DONE();
}
