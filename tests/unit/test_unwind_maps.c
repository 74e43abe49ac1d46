// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_unwind_maps — user/unwind_maps.c: which rows each executable mapping gets, without BPF.
 *
 * The loader writes through a sink; here the sink is memory, and the tables it receives for
 * this very process are checked the way the BPF walker uses them:
 *  1. pt_unwind_bias on PIE, non-PIE and unaligned segment layouts;
 *  2. this process's maps: every executable file mapping published, sorted, each file built
 *     once; a second mapping of libc's code shares libc's rows; add_file() of a file already
 *     loaded costs nothing;
 *  3. a live unwind of f3 -> f2 -> f1 -> main -> libc -> _start through the published
 *     mappings and concatenated rows, with bpf/unwind.h's search and CFA arithmetic, checked
 *     against __builtin_return_address;
 *  4. a row table too small: files counted in rows_full, their mappings left unpublished.
 */
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"
#include "unwind/unwind_maps.h"

#define NOINLINE __attribute__((noinline))

/* ---- memory sink ---------------------------------------------------------------------------- */

struct mem_sink {
	struct pt_unwind_row *rows;
	uint32_t max_rows;
	uint32_t row_writes;
	struct pt_unwind_file_key keys[256];
	struct pt_unwind_file files[256];
	uint32_t nfiles;
	struct pt_unwind_map maps[PT_UNWIND_MAX_MAPS];
	uint32_t nmaps;
	uint32_t publishes;
};

static int mem_rows(void *arg, uint32_t first, const struct pt_unwind_row *rows, uint32_t n)
{
	struct mem_sink *s = arg;

	if (first + n > s->max_rows)
		return -E2BIG;
	memcpy(&s->rows[first], rows, n * sizeof(*rows));
	s->row_writes++;
	return 0;
}

static int mem_file(void *arg, const struct pt_unwind_file_key *k, const struct pt_unwind_file *f)
{
	struct mem_sink *s = arg;

	if (s->nfiles == 256)
		return -E2BIG;
	s->keys[s->nfiles] = *k;
	s->files[s->nfiles++] = *f;
	return 0;
}

static int mem_publish(void *arg, const struct pt_unwind_map *maps, uint32_t n)
{
	struct mem_sink *s = arg;

	memcpy(s->maps, maps, n * sizeof(*maps));
	s->nmaps = n;
	s->publishes++;
	return 0;
}

static struct pt_unwinder *mem_unwinder(struct mem_sink *s, uint32_t max_rows)
{
	struct pt_unwind_sink sink = {
		.max_rows = max_rows, .rows = mem_rows, .file = mem_file, .publish = mem_publish,
		.arg = s,
	};

	memset(s, 0, sizeof(*s));
	s->rows = calloc(max_rows, sizeof(*s->rows));
	s->max_rows = max_rows;
	return s->rows ? pt_unwinder_new(getpid(), &sink) : NULL;
}

/* The published mapping holding pc, as the BPF side finds it. */
static const struct pt_unwind_map *find_map(const struct mem_sink *s, uint64_t pc)
{
	uint32_t lo = 0, hi = s->nmaps;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (s->maps[mid].start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || pc >= s->maps[lo - 1].end)
		return NULL;
	return &s->maps[lo - 1];
}

/* ---- 1. bias ----------------------------------------------------------------------------------- */

static NOINLINE void test_bias(void)
{
	/* PIE, binutils -z separate-code: R at 0, R+X at 0x1000. */
	const struct pt_elf_load pie[] = {
		{ .off = 0, .vaddr = 0, .filesz = 0x500, .flags = 4 },
		{ .off = 0x1000, .vaddr = 0x1000, .filesz = 0x2345, .flags = 5 },
		{ .off = 0x4000, .vaddr = 0x4000, .filesz = 0x800, .flags = 4 },
	};
	/* Non-PIE executable at 0x400000. */
	const struct pt_elf_load exe[] = {
		{ .off = 0, .vaddr = 0x400000, .filesz = 0x500, .flags = 4 },
		{ .off = 0x1000, .vaddr = 0x401000, .filesz = 0x2000, .flags = 5 },
	};
	/* A text segment that does not start on a page (lld, some old binutils): p_offset
	 * 0x1234, p_vaddr 0x2234, mapped from page offset 0x1000. */
	const struct pt_elf_load odd[] = {
		{ .off = 0, .vaddr = 0, .filesz = 0x1234, .flags = 4 },
		{ .off = 0x1234, .vaddr = 0x2234, .filesz = 0x3000, .flags = 5 },
	};
	uint64_t bias = 0;

	CHECK(pt_unwind_bias(pie, 3, 0x7f0000001000, 0x1000, &bias) == 0 && bias == 0x7f0000000000,
	      "bias: PIE text at 0x7f0000001000 -> base 0x7f0000000000 (got %#" PRIx64 ")", bias);
	CHECK(pt_unwind_bias(exe, 2, 0x401000, 0x1000, &bias) == 0 && bias == 0,
	      "bias: non-PIE executable -> 0 (got %#" PRIx64 ")", bias);
	CHECK(pt_unwind_bias(odd, 2, 0x555555556000, 0x1000, &bias) == 0 &&
	      0x555555556000 + 0x234 - bias == 0x2234,
	      "bias: unaligned segment: the mapping's pc of file offset 0x1234 is vaddr 0x2234");
	CHECK(pt_unwind_bias(pie, 3, 0x7f0000009000, 0x9000, &bias) == -ENOENT,
	      "bias: an offset no segment holds -> -ENOENT");
}

/* ---- 2/3. this process ------------------------------------------------------------------------ */

int main(void);

static struct mem_sink live;
static uintptr_t ra_f1, ra_f2, ra_f3, ra_main;
static uint64_t walk_pcs[64];
static int walk_n, walk_end;

/* bpf/unwind.bpf.h's frame step, on our own stack, with the loader's mappings and rows. */
static NOINLINE void walk(uint64_t pc, uint64_t sp, uint64_t bp)
{
	walk_n = 0;
	walk_end = 0;
	walk_pcs[walk_n++] = pc;
	while (walk_n < 64) {
		uint64_t look = walk_n == 1 ? pc : pc - 1;
		const struct pt_unwind_map *m = find_map(&live, look);
		const struct pt_unwind_row *r;
		__u64 cfa;
		int i;

		if (!m || look - m->bias > UINT32_MAX)
			return;
		i = pt_unwind_search(live.rows + m->first, m->nrows, (uint32_t)(look - m->bias));
		if (i < 0)
			return;
		r = &live.rows[m->first + i];
		if (r->cfa_reg == PT_CFA_END) {
			walk_end = 1;
			return;
		}
		if (pt_unwind_cfa(r, look, sp, bp, &cfa) || cfa <= sp || cfa - sp > (1 << 20))
			return;
		if (r->rbp_off8)
			bp = *(const uint64_t *)(uintptr_t)(cfa + 8 * (int64_t)r->rbp_off8);
		pc = *(const uint64_t *)(uintptr_t)(cfa - 8);
		sp = cfa;
		walk_pcs[walk_n++] = pc;
	}
}

#define CHAIN __attribute__((noipa, optimize("omit-frame-pointer")))

static CHAIN int f3(int x)
{
	uint64_t pc, sp, bp;

	ra_f3 = (uintptr_t)__builtin_return_address(0);
	__asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
			 : "=r"(pc), "=r"(sp), "=r"(bp));
	walk(pc, sp, bp);
	return x + 1;
}

static CHAIN int f2(int n)
{
	volatile char buf[n];

	ra_f2 = (uintptr_t)__builtin_return_address(0);
	buf[0] = (char)n;
	buf[n - 1] = 1;
	return f3(buf[0] + buf[n - 1]) + 1;
}

static CHAIN int f1(int n)
{
	volatile long a = n, b = n * 2;

	ra_f1 = (uintptr_t)__builtin_return_address(0);
	return f2((int)(a + b) + 16) * 2 + (int)a;
}

static NOINLINE void test_self(struct pt_unwinder *u)
{
	const struct pt_unwind_stats *st = pt_unwinder_stats(u);
	const struct pt_unwind_map *m_main, *m_libc;
	uint32_t i, sorted = 1, files_before, rows_before;
	Dl_info di;
	void *text;
	int fd, err;

	CHECK(live.publishes == 1, "self: one publication per refresh");
	CHECK(live.nmaps >= 3, "self: %u executable mappings published (exe, libc, ld.so at least)",
	      live.nmaps);
	for (i = 1; i < live.nmaps; i++)
		if (live.maps[i].start < live.maps[i - 1].end)
			sorted = 0;
	CHECK(sorted, "self: mappings sorted by address, not overlapping");
	CHECK(st->files == live.nfiles && st->files >= 3, "self: %u files built, each given to the "
	      "by-file fallback once", st->files);
	CHECK_EQ_U64(st->rows_full + st->maps_full + st->file_failed, 0, "self: nothing left out");

	/* main's mapping: pc - bias is main's ELF address (this test is a PIE: load base +
	 * vaddr; dladdr gives the base, main need not be an exported symbol). */
	m_main = find_map(&live, (uint64_t)(uintptr_t)&main);
	CHECK(m_main && dladdr((void *)&main, &di) &&
	      (uint64_t)(uintptr_t)&main - m_main->bias == (uint64_t)((uintptr_t)&main - (uintptr_t)di.dli_fbase),
	      "self: main's pc - bias is its ELF vaddr");
	m_libc = find_map(&live, (uint64_t)(uintptr_t)&malloc);
	CHECK(m_libc && m_libc != m_main && m_libc->nrows > 1000,
	      "self: libc's code has its own rows (%u)", m_libc ? m_libc->nrows : 0);

	/* Map libc's code a second time: same file, its rows must be shared. */
	files_before = st->files;
	rows_before = st->rows;
	text = MAP_FAILED;
	fd = open("/lib/x86_64-linux-gnu/libc.so.6", O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && m_libc) {
		/* The same file offset as libc's text mapping: from /proc/self/maps via bias. */
		FILE *f = fopen("/proc/self/maps", "r");
		char line[512];
		unsigned long long s0, e0, off = 0;

		while (f && fgets(line, sizeof(line), f))
			if (sscanf(line, "%llx-%llx %*s %llx", &s0, &e0, &off) == 3 &&
			    s0 == m_libc->start)
				break;
		if (f)
			fclose(f);
		text = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, (off_t)off);
		close(fd);
	}
	CHECK(text != MAP_FAILED, "self: libc's code mapped a second time");
	if (text != MAP_FAILED && m_libc) {
		/* Copies: the refresh rewrites the published array. */
		struct pt_unwind_map libc = *m_libc;
		const struct pt_unwind_map *m2;
		uint64_t t = (uint64_t)(uintptr_t)text;

		err = pt_unwinder_refresh(u);
		m2 = find_map(&live, t);
		CHECK(err == 0 && live.publishes == 2, "self: refreshed");
		CHECK(m2 && m2->first == libc.first && m2->nrows == libc.nrows,
		      "self: the second mapping shares libc's rows");
		/* Same file offset at another address: bias moves with the address. */
		CHECK(m2 && m2->bias == t - libc.start + libc.bias, "self: ... with its own bias");
		CHECK(st->files == files_before && st->rows == rows_before,
		      "self: no file built twice (%u files, %u rows)", st->files, st->rows);
		munmap(text, 4096);
	}
	err = pt_unwinder_add_file(u, "/lib/x86_64-linux-gnu/libc.so.6");
	CHECK(err == 0 && st->files == files_before, "self: add_file of a loaded file is a no-op");

	/* 3. The live walk from f3. */
	CHECK(walk_n >= 6 && walk_end, "live: %d frames, ending at the outermost (END) row", walk_n);
	CHECK(walk_n > 4 && walk_pcs[1] == ra_f3 && walk_pcs[2] == ra_f2 && walk_pcs[3] == ra_f1 &&
	      walk_pcs[4] == ra_main, "live: frames 1-4 are the return addresses of f3, f2, f1, main");
	CHECK(walk_n > 5 && find_map(&live, walk_pcs[walk_n - 1] - 1) == m_main,
	      "live: the outermost frame is in the executable (_start)");
}

/* ---- 4. a full row table ---------------------------------------------------------------------- */

static NOINLINE void test_full(void)
{
	struct mem_sink *s = calloc(1, sizeof(*s));
	struct pt_unwinder *u = s ? mem_unwinder(s, 3000) : NULL;
	const struct pt_unwind_stats *st;
	uint32_t i, ok = 1;

	CHECK(u != NULL, "full: unwinder with 3000 rows");
	if (!u)
		return;
	CHECK(pt_unwinder_refresh(u) == 0, "full: refresh");
	st = pt_unwinder_stats(u);
	CHECK(st->rows_full >= 1, "full: %u files counted in rows_full (libc alone needs more)",
	      st->rows_full);
	CHECK(st->rows <= 3000, "full: %u rows loaded, within the table", st->rows);
	for (i = 0; i < s->nmaps; i++)
		if (s->maps[i].first + s->maps[i].nrows > 3000)
			ok = 0;
	CHECK(ok, "full: %u mappings published, all with rows inside the table", s->nmaps);
	CHECK(find_map(s, (uint64_t)(uintptr_t)&malloc) == NULL, "full: libc's code not published");
	pt_unwinder_free(u);
	free(s->rows);
	free(s);
}

int main(void)
{
	struct pt_unwinder *u;

	ra_main = (uintptr_t)__builtin_return_address(0);
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_bias();
	u = mem_unwinder(&live, PT_DEF_UNWIND_ROWS);
	CHECK(u != NULL, "self: unwinder");
	if (u) {
		CHECK(pt_unwinder_refresh(u) == 0, "self: refresh");
		printf("# %u files, %u rows, %u mappings, %.1f ms\n", pt_unwinder_stats(u)->files,
		       pt_unwinder_stats(u)->rows, live.nmaps, pt_unwinder_stats(u)->build_ms);
		f1(3);
		test_self(u);
		pt_unwinder_free(u);
	}
	free(live.rows);
	test_full();
	return CHECK_DONE();
}
