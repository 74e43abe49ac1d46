// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Unit tests for user/rss/rssobj.c (file/shmem objects' labels and counter splits) and the
 * runtime heap kinds of user/rss/rsskind.c: CPython pymalloc pool headers and V8 chunk
 * headers written by the test into its own anonymous memory, and near misses of each. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "check.h"
#include "tests/unit/memkind.h"
#include "rss/rssobj.h"

static struct pt_rss_obj obj(const char *name, unsigned member, uint32_t dev, uint64_t ino)
{
	struct pt_rss_obj o;

	memset(&o, 0, sizeof(o));
	memcpy(o.name, name, strnlen(name, sizeof(o.name)));
	o.member = member;
	o.dev = dev;
	o.ino = ino;
	return o;
}

static void labels(void)
{
	struct pt_rss_name names[2] = {
		{ .dev = 8 << 20 | 1, .ino = 42, .path = (char *)"/usr/lib/libfoo.so" },
		{ .dev = 1, .ino = 7, .path = (char *)"/dev/shm/cache", .deleted = true },
	};
	/* name in the object, its member, dev, inode; the label wanted */
	static const struct {
		const char *name;
		unsigned member;
		uint32_t dev;
		uint64_t ino;
		const char *want, *what;
	} cases[] = {
		{ "libfoo.so", PT_RSS_FILE, 8 << 20 | 1, 42, "/usr/lib/libfoo.so", "a file: its maps path" },
		{ "libfoo.so", PT_RSS_FILE, 8 << 20 | 2, 42, ".../libfoo.so (path not seen in the maps)",
		  "same inode on another device: not that path" },
		{ "cache", PT_RSS_SHMEM, 1, 7, "/dev/shm/cache (deleted)", "a /dev/shm file, unlinked" },
		{ "memfd:buf", PT_RSS_SHMEM, 1, 9, "memfd:buf", "a memfd by its name" },
		{ "dev/zero", PT_RSS_SHMEM, 1, 10, "anonymous shared mapping",
		  "MAP_SHARED|MAP_ANONYMOUS (shmem_zero_setup's file)" },
		{ "SYSV0000beef", PT_RSS_SHMEM, 1, 11, "SysV segment key 0x0000beef", "a SysV segment" },
		{ "evil\033[2J\x7f", PT_RSS_FILE, 3, 12, ".../evil\\x1b[2J\\x7f (path not seen in the maps)",
		  "control bytes in a name are escaped" },
	};
	struct pt_rss_obj o;
	size_t i;
	char *l;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		o = obj(cases[i].name, cases[i].member, cases[i].dev, cases[i].ino);
		CHECK_STR(l = pt_rss_obj_label(&o, names, 2), cases[i].want, cases[i].what);
		free(l);
	}
	memset(o.name, 'A', sizeof(o.name));
	l = pt_rss_obj_label(&o, NULL, 0);
	CHECK(l && strlen(l) == strlen(".../") + PT_RSS_OBJ_NAME + strlen(" (path not seen in the maps)"), "a name filling its 48 bytes without a NUL is cut there");
	free(l);
}

static void split(void)
{
	struct pt_rss_sh_figures f = { .attributed = 100 << 12, .before = 5 << 12, .no_fault = 2 << 12,
				       .other_task = 1 << 12, .vma_busy = 1 << 12, .table_full = 0,
				       .released_unknown = 3 << 12, .reclaimed = 1 << 12 };
	struct pt_rss_sh_split s;

	pt_rss_sh_split_of(&f, (100 + 5 + 2 + 1 + 1 - 3 - 1) << 12, &s);
	CHECK_EQ_U64(s.mismatch, 0, "attributed + buckets - released elsewhere == the counter");
	CHECK_EQ_U64(s.over, 0, "released with no object known: taken from the buckets first");
	CHECK_EQ_U64(pt_rss_sh_bucket(&s, 0), 1 << 12, "bucket 0: resident before tracing, less them");
	f.released_unknown = 10 << 12;
	pt_rss_sh_split_of(&f, (100 + 5 + 2 + 1 + 1 - 10 - 1) << 12, &s);
	CHECK_EQ_U64(s.over, 2 << 12, "beyond every bucket: still on their objects");
	CHECK_EQ_U64(s.before + s.no_fault + s.other_task + s.vma_busy + s.table_full, 0,
		     "the buckets emptied first");
	CHECK_EQ_U64(s.mismatch, 0, "and the identity still holds");
	f.released_unknown = 3 << 12;
	CHECK_STR(pt_rss_sh_bucket_name(1, 3), "[shmem pages whose mapping was not looked up]",
		  "bucket names per counter");
	pt_rss_sh_split_of(&f, 1 << 20, &s);
	CHECK(s.mismatch != 0, "a counter the figures do not explain shows as unexplained");
}

static enum pt_mem_kind kind_of(int fd, uint64_t addr)
{
	bool capped;

	/* sp far from addr: not a thread stack */
	return kind_here(fd, addr, 8, &capped);
}

/* A pymalloc pool header (3.10-3.13): arenaindex, szidx, nextoffset, maxnextoffset at byte 32. */
static void pool_header(char *pool, uint32_t szidx, uint32_t next, uint32_t maxnext)
{
	uint32_t w[4] = { 3, szidx, next, maxnext };

	memset(pool, 0, 48);
	memcpy(pool + 32, w, sizeof(w));
}

static void heaps(int fd)
{
	size_t len = 8 << 20;
	char *raw = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *pool, *c;
	uint64_t w[5];

	CHECK(raw != MAP_FAILED, "mmap");
	memset(raw, 0x5a, len);
	pool = (char *)(((uintptr_t)raw + (1 << 20)) & ~(uintptr_t)16383);
	pool_header(pool, 3, 48 + 64 * 5, 16384 - 64);
	CHECK_EQ_U64(kind_of(fd, (uint64_t)(uintptr_t)pool + 12000), PT_MK_PYMALLOC,
		     "a page in a pool of 64-byte blocks: CPython pymalloc arenas");
	pool_header(pool, 3, 48 + 64 * 5 + 8, 16384 - 64);
	CHECK_EQ_U64(kind_of(fd, (uint64_t)(uintptr_t)pool + 12000), PT_MK_ANON,
		     "nextoffset not a whole number of blocks: not a pool");
	pool_header(pool, 3, 48 + 64 * 5, 16384 - 48);
	CHECK_EQ_U64(kind_of(fd, (uint64_t)(uintptr_t)pool + 12000), PT_MK_ANON,
		     "maxnextoffset of another size class: not a pool");
	pool_header(pool, 40, 48, 16384 - 41 * 16);
	CHECK_EQ_U64(kind_of(fd, (uint64_t)(uintptr_t)pool + 12000), PT_MK_ANON,
		     "szidx past the 32 size classes: not a pool");
	memset(pool, 0x5a, 48);

	c = (char *)(((uintptr_t)raw + (4 << 20)) & ~(uintptr_t)((256 << 10) - 1));
	w[0] = 256 << 10;
	w[1] = 4;
	w[2] = (uint64_t)(uintptr_t)raw + 64;       /* the Heap*: any 8-aligned pointer */
	w[3] = (uint64_t)(uintptr_t)c + 0x1148;
	w[4] = (uint64_t)(uintptr_t)c + (256 << 10);
	memcpy(c, w, sizeof(w));
	CHECK_EQ_U64(kind_of(fd, (uint64_t)(uintptr_t)c + (200 << 10)), PT_MK_V8,
		     "a page in a 256 KiB V8 chunk: V8 heap");
	w[0] = 1 << 20;
	w[4] = (uint64_t)(uintptr_t)c + (1 << 20);
	memcpy(c, w, sizeof(w));
	CHECK_EQ_U64(kind_of(fd, (uint64_t)(uintptr_t)c + (900 << 10)), PT_MK_V8,
		     "900 KiB into a 1 MiB large-object chunk: V8 heap (header found below)");
	w[0] = 256 << 10;
	w[4] = (uint64_t)(uintptr_t)c + (256 << 10);
	memcpy(c, w, sizeof(w));
	CHECK_EQ_U64(kind_of(fd, (uint64_t)(uintptr_t)c + (300 << 10)), PT_MK_ANON,
		     "past the chunk's size: not it");
	w[3] = (uint64_t)(uintptr_t)c + (64 << 10);
	memcpy(c, w, sizeof(w));
	CHECK_EQ_U64(kind_of(fd, (uint64_t)(uintptr_t)c + (200 << 10)), PT_MK_ANON,
		     "area_start 64 KiB in: not a chunk header");
	munmap(raw, len);
}

int main(void)
{
	int fd = open("/proc/self/mem", O_RDONLY | O_CLOEXEC);

	labels();
	split();
	CHECK(fd >= 0, "open /proc/self/mem");
	heaps(fd);
	close(fd);
	return CHECK_DONE();
}
