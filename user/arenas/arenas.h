/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * arenas.h — glibc arenas: what each one holds live (counted in the kernel per block, from the
 * chunk header), what memory it has (its heaps, found in the target's mappings, and their
 * resident pages from /proc/PID/smaps), what it retains, and what setting would release it.
 */
#ifndef PEAKTRACE_ARENAS_H
#define PEAKTRACE_ARENAS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include "bpf/peaktrace.h"

struct pt_arena_row {
	bool main;               /* the main arena (brk heap) */
	bool traced;             /* in the kernel's table (else found only in memory) */
	uint32_t idx;            /* kernel arena index when traced */
	uint64_t addr;           /* malloc_state address; 0 for the main arena */
	struct pt_arena_stats st;
	int32_t *threads;        /* allocating threads, ascending */
	int nthreads;
	int heaps;               /* its heaps found in the mappings ([heap] for the main arena) */
	uint64_t mapped_bytes;   /* read-write bytes of those heaps */
	uint64_t resident_bytes; /* their resident bytes (smaps Rss) */
	int64_t retained_bytes;  /* resident - live chunk bytes, at least 0 */
};

struct pt_thread_row {
	int32_t tid;
	uint32_t arena;          /* kernel arena index, PT_ARENA_MMAPPED or PT_ARENA_UNKNOWN */
	uint64_t arena_addr;     /* 0 for the main arena / mmapped / unknown */
	/* The kernel keeps two thread-arena sub-rows per thread: allocations from a third thread
	 * arena or more are counted in the second one (bpf/peaktrace.h pt_thread_slot.extra); this
	 * many of st's allocations are such (only in a PT_TS_ARENA1 row). */
	uint64_t other_arenas_count;
	/* Its blocks are also in its arena's own row (bpf/chunk.h pt_arena_counts_itself), so its
	 * counts are not added to that row's. */
	bool arena_counted;
	struct pt_thread_arena st;
};

/* One thread: all its rows summed, named by the arena it allocated from most. */
struct pt_thread_sum {
	int32_t tid;
	uint32_t arena;          /* its main arena index, or PT_ARENA_MMAPPED / PT_ARENA_UNKNOWN */
	uint64_t arena_addr;
	int narenas;             /* arenas (not mmapped, not unknown) it allocated from */
	uint64_t other_arenas_count;     /* allocations counted under another arena's row (see above) */
	struct pt_thread_arena st;       /* all its blocks */
	struct pt_thread_arena mmapped;  /* of which mmapped chunks */
};

enum pt_advice_kind { PT_ADV_MMAP_THRESHOLD, PT_ADV_ARENA_MAX, PT_ADV_TRIM, PT_ADV_TRIM_THRESHOLD };

struct pt_advice {
	enum pt_advice_kind kind;
	char setting[64];        /* "MALLOC_MMAP_THRESHOLD_=32768" */
	int64_t addresses_bytes; /* retained bytes the setting would address (an estimate) */
	char why[512];
	char cost[640];          /* what it costs: "not measured: ..." unless measured */
};

#define PT_MAX_ADVICE 4

struct pt_arenas {
	bool collected;          /* glibc arena accounting ran */
	bool memory_read;        /* the target's mappings were readable (it was alive) */
	bool from_start;         /* traced from the start (launch): every live block is known */
	int64_t attach_resident; /* attach mode: arena memory resident when tracing began, -1 unknown */
	int64_t retained_floor;  /* retained less what may be blocks from before the attach (>= 0) */
	const char *allocator;   /* allocator name */
	int ncpu;                /* CPUs glibc sees */
	int limit;               /* glibc's arena limit */
	const char *limit_from;  /* "8 x cores", "MALLOC_ARENA_MAX", "glibc.malloc.arena_max" */
	bool mmap_threshold_set; /* MALLOC_MMAP_THRESHOLD_ or glibc.malloc.mmap_threshold in env */
	bool arena_max_set;
	struct pt_arena_row *rows;
	int nrows;
	struct pt_thread_row *threads;   /* (thread, arena) rows */
	int nthreads;
	struct pt_thread_sum *tsum;      /* per thread */
	int ntsum;
	int64_t mmapped_count, mmapped_bytes, mmapped_chunk_bytes;
	int64_t unknown_count, unknown_bytes;
	uint64_t rss_bytes;      /* VmRSS when the mappings were read */
	int64_t live_chunk_bytes, resident_bytes, retained_bytes, large_peak_bytes;
	uint64_t large_count;
	uint64_t invocations;    /* invocations seen (seq > 0), for the advice's per-invocation counts */
	struct pt_advice advice[PT_MAX_ADVICE];
	int nadvice;
};

/* Read the kernel's arena tables (maps "arenas" and "thread_slots") and, when pid is alive,
 * the arenas' heaps from its mappings. */
int pt_arenas_collect(struct pt_arenas *a, pid_t pid, int arenas_fd, int thread_slots_fd,
		      const struct pt_global *g);
/* Arena memory resident now, from the mappings alone (no kernel tables): the main heap and every
 * thread-arena heap. -1 when unreadable. For the attach-time baseline. */
int64_t pt_arenas_resident_in_memory(pid_t pid);
/* Only the totals (for an invocation's end): live chunk, resident and retained bytes. */
int pt_arenas_totals(pid_t pid, int arenas_fd, const struct pt_global *g, int64_t *live,
		     int64_t *resident, int64_t *retained);
void pt_arenas_free(struct pt_arenas *a);

/* Pure, unit tested: ---------------------------------------------------------------------- */

/* One mapping of /proc/PID/smaps as far as arenas care. */
struct pt_smap {
	uint64_t start, end;
	bool rw;                 /* readable and writable */
	bool anon;               /* no file ("[heap]" counts as anonymous and sets heap) */
	bool heap;               /* "[heap]" */
	uint64_t rss;            /* bytes */
};
/* Parse smaps text. Returns the number of mappings stored in out (at most max), or -1. */
int pt_smaps_parse(const char *text, struct pt_smap *out, int max);
/* A thread-arena heap could be here: read-write, anonymous, not [heap], 64 MiB-aligned. */
bool pt_smap_heap_candidate(const struct pt_smap *m);
/* glibc's heap_info at the 64 MiB boundary h, its first four words w (ar_ptr, prev, size,
 * mprotect_size: malloc/arena.c): a thread arena's heap. An arena's first heap has no prev and
 * its arena (malloc_state) right after the heap_info, in h's first page; a later heap has a
 * 64 MiB-aligned prev and its arena in another boundary's first page. size and mprotect_size
 * are whole pages, 0 < size <= mprotect_size <= 64 MiB. Unrelated memory would have to satisfy
 * all of it at a 64 MiB boundary. */
bool pt_heap_info_ok(const uint64_t w[4], uint64_t h);
/* Mappings longer than this are looked into for heaps at their start only, not at their inner
 * 64 MiB boundaries (1,024: as many full heaps merged in a row): such a mapping is a runtime's
 * reservation or a sanitizer's shadow, and a read per boundary would cost more than the rest
 * of the maps (arenas.c, rsskind.c). */
#define PT_HEAP_SCAN_SPAN (64ULL << 30)
/* The target's mappings (/proc/PID/smaps, bounded, non-blocking) and the first word of every
 * heap candidate (0 if unread or not a heap_info: pt_heap_info_ok), both malloc'd. A thread
 * arena's heap the kernel merged with an adjacent mapping of the same flags (an anonymous
 * mapping just below it, or the next heap above a full one: one line in the maps) is split
 * off as its own entry at its 64 MiB boundary, the pieces' rss counted from pagemap. Returns
 * the number of mappings or -errno. */
int pt_smaps_read(pid_t pid, struct pt_smap **m, uint64_t **first_word);
/* Attribute heaps to arenas: the main arena gets "[heap]"; a read-write anonymous mapping that
 * starts on a 64 MiB boundary and whose first word (first_word[i], 0 if unread) is the address of
 * a row's arena belongs to that row. Sets heaps, mapped, resident and retained of every row. */
void pt_arenas_attribute(struct pt_arena_row *rows, int nrows, const struct pt_smap *m, int nm,
			 const uint64_t *first_word);
/* Fill a->advice from the rows and totals. */
void pt_arenas_advise(struct pt_arenas *a);

void pt_arenas_text(FILE *f, const struct pt_arenas *a);
/* The report's first-screen ADVICE line (a->nadvice > 0): the first advice and where its cost
 * is, or how to measure it (compare_run: a traced run of --compare-env). */
void pt_arenas_advice_line(FILE *f, const struct pt_arenas *a, bool compare_run);
void pt_arenas_json(FILE *f, const struct pt_arenas *a);

#endif
