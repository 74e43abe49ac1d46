// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rsskind.c — the memory kind of each stack's anonymous RSS pages (rsskind.h).
 *
 * One address per kernel stack: the kernel keeps each stack's last attributed fault address
 * and the user sp then (bpf/rss.bpf.h rss_owner_where), so a stack whose pages are all gone by
 * the end (a thread's stack after its exit) still has a kind. A call site faults into one kind
 * of memory in practice; when kernel stacks of several kinds merge into one output stack, that
 * is counted (pt_profile.rss_kind_mixed). The kinds, first match:
 *   [heap]                               malloc heap: main arena
 *   [stack]                              main thread stack
 *   a file path                          private copy of a file mapping
 *   other "[...]"                        other
 *   the sp's mapping, addr within [sp - 64 KiB, sp + 8 MiB)   thread stack
 *   64 MiB-aligned, first word in its first page             malloc heap: thread arena
 *   a glibc mmapped chunk's header at a page start at or below addr (prev_size 0, IS_MMAPPED,
 *   page-multiple size reaching past addr, inside the mapping)  malloc heap: mmapped chunk
 *   else                                 anonymous mmap (CPython's pymalloc arenas are here:
 *                                        they are not told apart)
 *   no mapping at the end                unmapped by the end
 * The header scan reads the target's memory (/proc/PID/mem, 16 bytes a page, downwards from
 * addr until a header): at most SCAN_BUDGET reads in all, the stacks past it counted.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attach/mapread.h"
#include "target/procmaps.h"
#include "report/report.h"
#include "report/rsskind.h"
#include "util/fmt.h"

#define KIND_PAGE 4096ULL
#define ARENA_HEAP (64ULL << 20)
#define SCAN_BUDGET (1ULL << 20)   /* 4 GiB of address space scanned for chunk headers */
#define CHUNK 256

static const char *const names[PT_MK_COUNT] = {
	[PT_MK_UNKNOWN] = "not known",
	[PT_MK_HEAP_MAIN] = "malloc heap: main arena",
	[PT_MK_HEAP_ARENA] = "malloc heap: thread arena",
	[PT_MK_HEAP_MMAPPED] = "malloc heap: mmapped chunk",
	[PT_MK_MAIN_STACK] = "main thread stack",
	[PT_MK_THREAD_STACK] = "thread stack",
	[PT_MK_ANON] = "anonymous mmap",
	[PT_MK_FILE_PRIVATE] = "file mapping, private copy",
	[PT_MK_OTHER] = "other mapping",
	[PT_MK_GONE] = "unmapped by the end",
};

static const char *const keys[PT_MK_COUNT] = {
	[PT_MK_UNKNOWN] = "not_known",
	[PT_MK_HEAP_MAIN] = "malloc_heap_main_arena",
	[PT_MK_HEAP_ARENA] = "malloc_heap_thread_arena",
	[PT_MK_HEAP_MMAPPED] = "malloc_heap_mmapped_chunk",
	[PT_MK_MAIN_STACK] = "main_thread_stack",
	[PT_MK_THREAD_STACK] = "thread_stack",
	[PT_MK_ANON] = "anonymous_mmap",
	[PT_MK_FILE_PRIVATE] = "file_private",
	[PT_MK_OTHER] = "other_mapping",
	[PT_MK_GONE] = "unmapped_by_end",
};

const char *pt_mem_kind_name(enum pt_mem_kind k)
{
	return k < PT_MK_COUNT ? names[k] : "?";
}

const char *pt_mem_kind_key(enum pt_mem_kind k)
{
	return k < PT_MK_COUNT ? keys[k] : "unknown";
}

static int map_of(const struct pt_maps *m, uint64_t a)
{
	int lo = 0, hi = m->n;

	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;

		if (a < m->m[mid].start)
			hi = mid;
		else if (a >= m->m[mid].end)
			lo = mid + 1;
		else
			return mid;
	}
	return -1;
}

static bool anon_rw(const struct pt_mapping *mp)
{
	return (!mp->path || !mp->path[0]) && mp->perms[0] == 'r' && mp->perms[1] == 'w';
}

/* A glibc mmapped chunk holds addr (in mapping i): its header at a page start at or below it,
 * in the run of adjacent anonymous read-write mappings around i (madvise splits a chunk's
 * mapping: MADV_HUGEPAGE on its aligned part). */
static bool in_mmapped_chunk(struct pt_rss_kinds *k, int fd, const struct pt_maps *m, int i,
			     uint64_t addr, bool *capped)
{
	uint64_t pg = addr & ~(KIND_PAGE - 1), hdr[2], size;
	struct pt_mapping run = m->m[i];
	const struct pt_mapping *mp = &run;
	int lo = i, hi = i;

	while (lo > 0 && m->m[lo - 1].end == m->m[lo].start && anon_rw(&m->m[lo - 1]))
		lo--;
	while (hi + 1 < m->n && m->m[hi + 1].start == m->m[hi].end && anon_rw(&m->m[hi + 1]))
		hi++;
	run.start = m->m[lo].start;
	run.end = m->m[hi].end;

	for (;; pg -= KIND_PAGE) {
		if (k->scan_reads >= SCAN_BUDGET) {
			*capped = true;
			return false;
		}
		k->scan_reads++;
		if (pread(fd, hdr, sizeof(hdr), (off_t)pg) != (ssize_t)sizeof(hdr))
			return false;
		size = hdr[1] & ~7ULL;
		if (hdr[0] == 0 && (hdr[1] & 7) == 2 && size && !(size & (KIND_PAGE - 1)) &&
		    size <= mp->end - pg)
			return pg + size > addr;
		if (pg <= mp->start)
			return false;
	}
}

enum pt_mem_kind pt_mem_kind_of(struct pt_rss_kinds *k, const struct pt_maps *m, int fd,
				uint64_t addr, uint64_t sp, bool *capped)
{
	int i = map_of(m, addr);
	const struct pt_mapping *mp;
	uint64_t w;

	if (!addr)
		return PT_MK_UNKNOWN;
	if (i < 0)
		return PT_MK_GONE;
	mp = &m->m[i];
	if (mp->path && !strcmp(mp->path, "[heap]"))
		return PT_MK_HEAP_MAIN;
	if (mp->path && !strcmp(mp->path, "[stack]"))
		return PT_MK_MAIN_STACK;
	if (mp->path && mp->path[0] == '/')
		return PT_MK_FILE_PRIVATE;
	if (mp->path && mp->path[0])
		return PT_MK_OTHER;
	if (map_of(m, sp) == i && addr + (64 << 10) >= sp && addr < sp + (8ULL << 20))
		return PT_MK_THREAD_STACK;
	if (fd < 0)
		return PT_MK_ANON;
	if (!(mp->start & (ARENA_HEAP - 1)) && pread(fd, &w, 8, (off_t)mp->start) == 8 &&
	    w >= mp->start && w < mp->start + KIND_PAGE)
		return PT_MK_HEAP_ARENA;
	if (in_mmapped_chunk(k, fd, m, i, addr, capped))
		return PT_MK_HEAP_MMAPPED;
	return PT_MK_ANON;
}

int pt_rss_kinds_capture(struct pt_rss_kinds *k, pid_t pid, int stats_fd, uint32_t nstacks)
{
	struct pt_stack_stats *st = NULL;
	struct pt_maps m = { 0 };
	uint32_t *kk = NULL, i, j;
	char path[64];
	int err, fd = -1, got;

	if (k->read)
		return 0;
	err = pt_maps_read(pid, &m);
	if (err)
		return err;
	if (!m.n)
		return -ESRCH;	/* exited: its mm is gone */
	k->kind = calloc(nstacks ? nstacks : 1, 1);
	st = calloc(CHUNK, sizeof(*st));
	kk = calloc(CHUNK, sizeof(*kk));
	if (!k->kind || !st || !kk) {
		err = -ENOMEM;
		goto out;
	}
	k->n = nstacks;
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	for (i = 0; i < nstacks; i += CHUNK) {
		got = pt_map_read_range(stats_fd, i, nstacks - i < CHUNK ? nstacks - i : CHUNK, kk, st,
					sizeof(*st));
		if (got <= 0) {
			err = got < 0 ? got : -EIO;
			goto out;
		}
		for (j = 0; j < (uint32_t)got; j++) {
			bool capped = false;

			if (st[j].rss_now <= 0 && st[j].rss_peak <= 0)
				continue;
			k->kind[i + j] = pt_mem_kind_of(k, &m, fd, st[j].rss_addr, st[j].rss_sp, &capped);
			k->scan_capped += capped;
		}
	}
	k->read = true;
out:
	if (fd >= 0)
		close(fd);
	free(st);
	free(kk);
	pt_maps_free(&m);
	return err;
}

void pt_rss_kinds_free(struct pt_rss_kinds *k)
{
	free(k->kind);
	memset(k, 0, sizeof(*k));
}

/* ---- in the report ---------------------------------------------------------------------- */

static char frame_names[PT_MK_COUNT][64];

int pt_rss_kind_frames(struct pt_profile *q, uint32_t nstacks, uint32_t **pool)
{
	uint32_t fi[PT_MK_COUNT], i, j, used = 0, *out;
	size_t need = 0;

	for (i = 0; i < PT_MK_COUNT; i++)
		fi[i] = UINT32_MAX;
	for (i = 0; i < nstacks; i++)
		if (q->stacks[i].v[PT_RSS_PEAK_BYTES])
			need += q->stacks[i].nframes + 1;
	out = *pool = malloc((need ? need : 1) * sizeof(*out));
	if (!out)
		return -ENOMEM;
	for (i = 0; i < nstacks; i++) {
		struct pt_stack *st = &q->stacks[i];
		unsigned k = st->rss_kind < PT_MK_COUNT ? st->rss_kind : PT_MK_UNKNOWN;

		if (!st->v[PT_RSS_PEAK_BYTES])
			continue;
		if (fi[k] == UINT32_MAX) {
			struct pt_frame *fr = &q->frames[q->nframes];

			snprintf(frame_names[k], sizeof(frame_names[k]), "[kind: %s]", names[k]);
			memset(fr, 0, sizeof(*fr));
			fr->func = frame_names[k];
			fr->module = (char *)"";
			fr->kind = PT_FK_OTHER;
			fi[k] = q->nframes++;
		}
		for (j = 0; j < st->nframes; j++)
			out[used + j] = st->frames[j];
		out[used + st->nframes] = fi[k];
		st->frames = &out[used];
		used += ++st->nframes;
	}
	return 0;
}

static void sum_kinds(const struct pt_report *r, uint64_t v[PT_MK_COUNT])
{
	uint32_t i;

	memset(v, 0, PT_MK_COUNT * sizeof(*v));
	for (i = 0; i < r->prof.nstacks; i++) {
		const struct pt_stack *st = &r->prof.stacks[i];

		v[st->rss_kind < PT_MK_COUNT ? st->rss_kind : 0] += st->v[PT_RSS_PEAK_BYTES];
	}
}

void pt_rss_kinds_text(FILE *f, const struct pt_report *r)
{
	uint64_t v[PT_MK_COUNT];
	char b[32];
	int i, n = 0;

	if (!r->rk.read) {
		fprintf(f, "  by memory kind: not known (the target's maps could not be read at the end: "
			   "in attach mode a target that exited has none)\n");
		return;
	}
	sum_kinds(r, v);
	fprintf(f, "  by memory kind at the RSS peak (attributed pages, by each stack's last fault):");
	for (i = 0; i < PT_MK_COUNT; i++)
		if (v[i])
			fprintf(f, "%s %s %s", n++ ? ";" : "", names[i],
				pt_fmt_bytes(b, sizeof(b), (double)v[i]));
	if (!n)
		fprintf(f, " none");
	if (r->prof.rss_kind_mixed)
		fprintf(f, "; %" PRIu64 " stacks merged from pages of several kinds (labelled by the first)",
			r->prof.rss_kind_mixed);
	if (r->rk.scan_capped)
		fprintf(f, "; %" PRIu64 " stacks not scanned for malloc chunks (read budget spent: "
			   "shown as anonymous mmap)", r->rk.scan_capped);
	fputc('\n', f);
}

void pt_rss_kinds_json(FILE *f, const struct pt_report *r)
{
	uint64_t v[PT_MK_COUNT];
	int i;

	sum_kinds(r, v);
	fprintf(f, "\"kinds_read\": %s, \"by_kind_at_peak\": {", r->rk.read ? "true" : "false");
	for (i = 0; i < PT_MK_COUNT; i++)
		fprintf(f, "%s\"%s_bytes\": %" PRIu64, i ? ", " : "", keys[i], v[i]);
	fprintf(f, "}, \"kind_stacks_mixed\": %" PRIu64 ", \"kind_scan_reads\": %" PRIu64
		   ", \"kind_scan_capped\": %" PRIu64,
		r->prof.rss_kind_mixed, r->rk.scan_reads, r->rk.scan_capped);
}
