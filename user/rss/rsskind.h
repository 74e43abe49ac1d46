/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rsskind.h — the memory kind of each stack's anonymous RSS pages (malloc heap, thread stack,
 * anonymous mmap, ...), decided from the address of the stack's last attributed fault and the
 * user sp then (pt_stack_stats.rss_addr, rss_sp) against the target's maps read at the end
 * (launch mode: at the exit stop, the mm still there).
 */
#ifndef PEAKTRACE_RSS_RSSKIND_H
#define PEAKTRACE_RSS_RSSKIND_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

enum pt_mem_kind {
	PT_MK_UNKNOWN = 0,       /* no fault address recorded */
	PT_MK_HEAP_MAIN,         /* [heap]: glibc's main arena (brk) */
	PT_MK_HEAP_ARENA,        /* a glibc thread arena's heap: a heap_info at the 64 MiB
	                          * boundary below (arenas.h pt_heap_info_ok) */
	PT_MK_HEAP_MMAPPED,      /* a glibc mmapped chunk (its header at a page start) */
	PT_MK_MAIN_STACK,        /* [stack] */
	PT_MK_THREAD_STACK,      /* the mapping the faulting thread's sp was in, near the sp */
	PT_MK_ANON,              /* other anonymous mmap (CPython's pymalloc arenas too) */
	PT_MK_FILE_PRIVATE,      /* private copies of a file mapping's pages (.data, .bss) */
	PT_MK_OTHER,             /* another special mapping ([vvar], ...) */
	PT_MK_GONE,              /* its mapping was unmapped by the end */
	PT_MK_PYMALLOC,          /* CPython's pymalloc arenas: a pool header at the page's 16 KiB
	                          * pool start (rsskind.c says why this test) */
	PT_MK_V8,                /* V8's heap: a V8 page header at a 256 KiB boundary at or below */
	PT_MK_COUNT
};

/* "malloc heap: main arena" ... (the root frame is "[kind: NAME]"). */
const char *pt_mem_kind_name(enum pt_mem_kind k);
/* "malloc_heap_main_arena" ... (report.json's keys, with "_bytes"). */
const char *pt_mem_kind_key(enum pt_mem_kind k);

struct pt_rss_kinds {
	bool read;               /* the maps were read */
	uint8_t *kind;           /* per kernel stack, enum pt_mem_kind */
	uint32_t n;
	uint64_t scan_reads;     /* chunk-header reads of the target's memory */
	uint64_t scan_capped;    /* stacks left as anonymous mmap: the read budget was spent */
	/* The heap (PT_MK_PYMALLOC, PT_MK_V8, PT_MK_HEAP_MMAPPED, else 0) the latest region of
	 * each stack's faults that was recognised as one was in, seen while the target ran
	 * (pt_rss_kinds_early): the kind when its pages' mapping is gone by the end (or, for the
	 * runtimes' heaps, plain anonymous memory). rsskind.c's EARLY_PLAIN: looked at, its page
	 * read, no heap there (what tells "anonymous mmap" when the kinds come from kept maps). */
	uint8_t *early;
	uint32_t nearly;
	uint64_t early_queued[1024][3];  /* (stack, address, ktime ns) not looked at yet */
	uint32_t nqueued;
	uint64_t early_dropped;  /* faults not looked at (queue full, maps or memory unreadable,
				  * or the looks' read budget spent before a heap was recognised) */
	uint64_t early_reads;    /* the looks' reads of the target's memory (their own budget) */
	/* The header reads of one look (one pt_rss_kinds_early call, or the classification at
	 * the end), by address: the scans of the stacks faulting in one region walk the same
	 * pages, each read once (a pread of /proc/PID/mem is ~5-10 us; the queue's scans held the
	 * poll loop long enough for the kernel to overwrite an invocation). */
	struct pt_kind_read *reads;
	uint32_t reads_gen;      /* the look they belong to (0: none yet) */
	uint64_t not_resident;   /* reads not made: the page was not resident (reading it would
				  * have made it so on kernels without a zero page for reads) */
	int pm_fd;               /* during a look: the target's pagemap, when pm_open */
	bool pm_open;
	/* The target's maps as last read while it ran (by a look, or pt_rss_kinds_keep when its
	 * mappings changed), with the glibc thread arenas' heaps found in them then: what the
	 * kinds are told against when the maps are gone by the end (a target killed while
	 * attached: "not known" before). kept_heaps: the 64 MiB boundaries decided then, a
	 * heap's with its low bit set (rsskind.c keep_verdict). */
	struct pt_maps *kept;
	uint64_t *kept_heaps;
	uint32_t nkept_heaps;
	uint64_t kept_ns;        /* when they were read (CLOCK_MONOTONIC ns) */
	uint64_t kept_gen;       /* the kernel's mapping generation then (rss_g.map_gen) */
	uint64_t kept_reads;     /* times they were read */
	bool from_kept;          /* the kinds were told against them, not the maps at the end */
	uint64_t kept_unlooked;  /* stacks then in an anonymous mapping never looked at while it
				  * ran: "not known" (the kept maps alone cannot tell a heap) */
	uint64_t end_ns;         /* when the kinds were told (CLOCK_MONOTONIC ns) */
};

struct pt_maps;
/* The kind of the page at addr, faulted with the user sp sp, against maps m (sorted, as read);
 * fd: the target's /proc/PID/mem for the chunk-header and arena checks (-1: not made). Budget
 * and reads are counted in k; *capped set when the budget ran out. */
enum pt_mem_kind pt_mem_kind_of(struct pt_rss_kinds *k, const struct pt_maps *m, int fd,
				uint64_t addr, uint64_t sp, bool *capped);

/* A stack's fault in a new region at addr, at ts (PT_EV_RSS_STACK): queued for
 * pt_rss_kinds_early. */
void pt_rss_kinds_queue(struct pt_rss_kinds *k, uint32_t stack, uint64_t addr, uint64_t ts);
/* Look at the queued faults in the live target (pid), those older than PT_KIND_SETTLE_NS at
 * now (CLOCK_MONOTONIC ns; 0: all of them): pymalloc pools, V8 chunks, glibc mmapped chunks.
 * The event is sent from inside the fault: the allocator writes its header only after it. */
#define PT_KIND_SETTLE_NS 5000000ULL
void pt_rss_kinds_early(struct pt_rss_kinds *k, pid_t pid, uint64_t now);

/* Keep the target's maps now (k->kept) if its mappings changed since they were last kept
 * (gen: the kernel's rss_g.map_gen) and PT_KIND_KEEP_NS passed since (now: CLOCK_MONOTONIC ns). */
#define PT_KIND_KEEP_NS 50000000ULL
void pt_rss_kinds_keep(struct pt_rss_kinds *k, pid_t pid, uint64_t gen, uint64_t now);

/* The kind of a fault at addr (user sp then) told against the kept maps alone, nothing of the
 * target read (it is gone): a thread arena where kept_heaps has one, an address in none of them
 * PT_MK_UNKNOWN; an anonymous mapping PT_MK_ANON (the looks' kinds are laid over it later). */
enum pt_mem_kind pt_rss_kind_kept(struct pt_rss_kinds *k, uint64_t addr, uint64_t sp);

/* Read the target's maps and each stack's fault address from the stats map; when the maps are
 * gone (the target exited, attach mode), the kept ones (k->from_kept; kinds a header read
 * would tell come from the looks while it ran). 0 or -errno (-ESRCH: gone, none kept). */
int pt_rss_kinds_capture(struct pt_rss_kinds *k, pid_t pid, int stats_fd, uint32_t nstacks);
/* The kind of kernel stack idx's pages (PT_MK_UNKNOWN when the kinds were not read). */
enum pt_mem_kind pt_rss_kind_of_stack(const struct pt_rss_kinds *k, uint32_t idx);
/* How the kinds were told, for the report: "maps at the end", "maps kept while it ran"... */
const char *pt_rss_kinds_source(const struct pt_rss_kinds *k);
void pt_rss_kinds_free(struct pt_rss_kinds *k);

struct pt_profile;
/* Each of q's first nstacks stacks holding pages at the RSS peak gets a root frame of its kind
 * ("[kind: thread stack]"), added to q->frames (room for PT_MK_COUNT more); their frames move to
 * *pool (free it). 0 or -ENOMEM. */
int pt_rss_kind_frames(struct pt_profile *q, uint32_t nstacks, uint32_t **pool);

#endif
