// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_uwcache: the unwind table cache (user/unwind/uwcache.h) on a real table, libc's, built
 * by cfi.c. What comes back must be the table that was built, row for row; every file that is
 * not exactly what the cache wrote for that build id (a flipped byte, a cut file, another build
 * id's file under this one's name, a file not owned by root, a symlink) is rejected, counted
 * and removed; another build id misses; at the directory's bound the least recently used file
 * makes room.
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

	CHECK(pt_uwcache_get(c, bid, n, &t) == -ENOENT, "empty cache: a miss");
	pt_uwcache_put(c, bid, n, built);
	path_of(bid, n, path, sizeof(path));
	CHECK(c->st.written == 1 && !stat(path, &st), "written as <build id>.uwt");
	CHECK(!stat(path, &st) && st.st_uid == 0 && (st.st_mode & 077) == 0,
	      "the file is root's, readable by root alone (mode %o)", st.st_mode & 0777);
	CHECK(pt_uwcache_get(c, bid, n, &t) == 0 && c->st.hits == 1, "read back: a hit");
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
	CHECK(pt_uwcache_get(c, bid, n, &t) == -EBADMSG && c->st.rejected == rej + 1,
	      "corrupt: rejected and counted");
	CHECK(access(path, F_OK) && errno == ENOENT, "corrupt: removed (the caller rebuilds it)");

	pt_uwcache_put(c, bid, n, built);
	CHECK(truncate(path, 96 + 8 * (built->nrows - 1)) == 0, "truncated: one row short");
	CHECK(pt_uwcache_get(c, bid, n, &t) == -EBADMSG && c->st.rejected == rej + 2,
	      "truncated: rejected and counted");

	pt_uwcache_put(c, bid, n, built);
	CHECK(flip(path, 8) == 0, "header: the format version changed");
	CHECK(pt_uwcache_get(c, bid, n, &t) == -EBADMSG && c->st.rejected == rej + 3,
	      "another format version: rejected");

	pt_uwcache_put(c, bid, n, built);
	CHECK(chown(path, 1, 1) == 0, "not root's: owner changed to uid 1");
	CHECK(pt_uwcache_get(c, bid, n, &t) == -EBADMSG && c->st.rejected == rej + 4,
	      "a file not owned by root: rejected");

	CHECK(symlink(LIBC, path) == 0, "a symlink where the table should be");
	CHECK(pt_uwcache_get(c, bid, n, &t) == -EBADMSG && c->st.rejected == rej + 5,
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
	CHECK(pt_uwcache_get(c, other, n, &t) == -ENOENT, "another build id (a changed binary): a miss");
	/* Another build id's table renamed to this one's name: its header says whose it is. */
	pt_uwcache_put(c, bid, n, built);
	path_of(bid, n, from, sizeof(from));
	path_of(other, n, to, sizeof(to));
	CHECK(rename(from, to) == 0, "foreign: libc's table under another build id's name");
	CHECK(pt_uwcache_get(c, other, n, &t) == -EBADMSG, "foreign: rejected (the build id inside differs)");
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
	pt_uwcache_put(c, bid, n, built);
	set_mtime(path, now - 5000);
	for (i = 0; i < PT_UWCACHE_MAX_FILES - 1; i++) {
		snprintf(filler, sizeof(filler), "%s/filler%03d.uwt", dir, i);
		fd = open(filler, O_WRONLY | O_CREAT, 0600);
		if (fd >= 0)
			close(fd);
		set_mtime(filler, now - 1000 + i);
	}
	CHECK(pt_uwcache_get(c, bid, n, &t) == 0, "full directory: a hit marks the table used");
	pt_cfi_free(&t);
	memcpy(bid2, bid, n);
	bid2[n - 1] ^= 0x80;
	path_of(bid2, n, path2, sizeof(path2));
	pt_uwcache_put(c, bid2, n, built);
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
	pt_elf_close(&e);
	CHECK(n > 0 && pt_cfi_build(LIBC, &built) == 0 && built.nrows > 1000,
	      "libc: build id and a table of %u rows", n > 0 ? built.nrows : 0);
	CHECK(pt_uwcache_init(&c, dir, false, &why) == 0 && c.on, "cache on in a root-owned directory");
	test_round_trip(&c, &built, bid, n);
	test_rejected(&c, &built, bid, n);
	test_foreign(&c, &built, bid, n);
	test_bounds(&c, &built, bid, n);
	pt_cfi_free(&built);
	{
		char cmd[300];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd))
			printf("# could not remove %s\n", dir);
	}
	return CHECK_DONE();
}
