/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rss.h — RSS attribution by page (bpf/rss.bpf.h), end to end: its state (struct pt_rss, held
 * by value in the report), what collects it while the target is traced and at the end
 * (collect.c, rsskind.c, rssobj.c, rssinv.c), and its report sections (text, report.json's
 * "rss_attribution", DIR/rss.folded and rss.svg), which take their own view (pt_rss_view).
 */
#ifndef PEAKTRACE_RSS_H
#define PEAKTRACE_RSS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include "bpf/peaktrace.h"
#include "rss/rsskind.h"
#include "rss/rssobj.h"

struct pt_profile;
struct pt_inv_record;

/* Everything RSS attribution knows, held by value (pt_report.rss). */
struct pt_rss {
	struct pt_rss_global kernel;   /* the kernel's figures (bpf/rss.bpf.h rss_g), at the end */
	struct pt_rss_kinds kinds;     /* the memory kind of each kernel stack's pages (rsskind.h) */
	struct pt_rss_objs objs;       /* file and shmem RSS by object (rssobj.h) */
	uint64_t objs_named;           /* rss_g.sh_objs when the maps were last read for names */
};

/* ---- while the target is traced, and at its end (collect.c) ---- */

/* PT_EV_RSS_STACK: stack's fault in a new region at addr, at ts (ns): queued for a look at
 * the live target pid, the looks made at once when the queue is full. */
void pt_rss_event(struct pt_rss *r, pid_t pid, uint32_t stack, uint64_t addr, uint64_t ts);
/* A turn of the poll loop, k the kernel's figures live: the names
 * of new file and shmem objects, the looks settled by now, and (alive: the target still runs)
 * its maps kept should they be gone by the end. */
void pt_rss_poll(struct pt_rss *r, pid_t pid, const struct pt_rss_global *k, bool alive);
/* Looks are queued: the poll loop sleeps less. */
static inline bool pt_rss_pending(const struct pt_rss *r)
{
	return r->kinds.nqueued != 0;
}
/* The memory kinds of the stacks' pages from the target's maps now, once (the launched
 * child's exit stop, else the collect step); the objects' names too. k: the kernel's figures,
 * live; stats_fd: the stats map; nstacks: the kernel stacks made. Says on stderr
 * when the kinds cannot be read (they are "not known" then). */
void pt_rss_kinds_end(struct pt_rss *r, pid_t pid, const struct pt_rss_global *k, int stats_fd,
		      uint32_t nstacks);
/* The kinds per kernel stack for the collect step (pt_collect_in.rss_kind), NULL when not read
 * for all nstacks. */
const uint8_t *pt_rss_stack_kinds(const struct pt_rss *r, uint32_t nstacks);
/* Tracing stopped: the file and shmem objects' table (map objs_fd) read against the kernel's
 * RSS peak (r->kernel, read before); says on stderr when it cannot be. */
void pt_rss_collect(struct pt_rss *r, int objs_fd);
/* The malloc heap and pymalloc arenas resident at an invocation's end (arenas/resident.h,
 * python: a Python was found) into rec (rec->mem_read when read). */
void pt_rss_inv_resident(struct pt_inv_record *rec, pid_t pid, bool python);
void pt_rss_free(struct pt_rss *r);

/* ---- the report's sections (rss.c, rsskind.c, rssobj.c) ---- */

/* What the sections read: the slice's state and the report's figures beside it. */
struct pt_rss_view {
	const struct pt_rss *rss;
	const struct pt_profile *prof;    /* the stacks, with PT_RSS_PEAK_BYTES, PT_RSS_NOW_BYTES */
	const struct pt_global *totals;   /* rss[] at the end, rss_peak, the heap's peak_bytes */
	int top;                          /* -t: stacks shown */
	bool light;                       /* --light: no heap figures */
	bool python_traced;               /* --python-objects' probes see every Python object */
	pid_t pid;
	const char *comm;
};

/* The anonymous RSS of one moment split by where it came from. The buckets that add pages
 * (before, no_fault, other_task, table_full) are net of freed_unowned (taken from them in that
 * order of likelihood: no_fault, other_task, before, table_full; less the pages later faulted
 * again while still attributed, which were attributed ones), so
 *   anon == attributed + before + no_fault + other_task + table_full + raced - over
 * where over (pages the kernel released, or a syscall is still releasing, that are still on
 * their stacks) makes the attributed sum exceed the truth. */
struct pt_rss_split {
	int64_t anon, attributed;
	int64_t before, no_fault, other_task, table_full, raced;
	int64_t over;        /* reclaimed + pending + what freed left, less refaults */
	int64_t unattributed;   /* anon - attributed */
	int64_t mismatch;    /* anon - (the sum above): 0 unless a figure raced (two CPUs) */
};

void pt_rss_split_of(const struct pt_rss_figures *fig, int64_t anon, struct pt_rss_split *s);

/* The RSS holders go on the first screen too when the heap is a small part of the RSS: the live
 * heap at its peak under half the peak RSS (a Python program's pymalloc arenas, V8's heap,
 * mmap'd buffers: what the heap stacks cannot show). */
static inline int pt_rss_first_screen(int64_t heap_peak, int64_t rss_peak)
{
	return rss_peak > 0 && heap_peak < rss_peak - heap_peak;
}
/* Stacks holding anonymous RSS at the peak, most first: p->nstacks + 1 indexes (free it), *n
 * of them used; NULL when out of memory. */
uint32_t *pt_rss_ranked(const struct pt_profile *p, uint32_t *n);
/* WHO HELD THE RSS, the first screen's block, when pt_rss_first_screen or --light (else nothing). */
void pt_rss_summary_text(FILE *f, const struct pt_rss_view *v);
/* TOP STACKS HOLDING RSS AT THE PEAK. */
void pt_rss_text(FILE *f, const struct pt_rss_view *v);
/* The "rss_attribution" member of report.json, with its trailing ",\n". */
void pt_rss_json(FILE *f, const struct pt_rss_view *v);
/* DIR/rss.folded and DIR/rss.svg: 0 or -errno. */
int pt_rss_write_files(const char *dir, const struct pt_rss_view *v);

/* ---- their memory-kind and file/shmem parts (sections.c) ---- */

/* The by-kind line of TOP STACKS HOLDING RSS AT THE PEAK. */
void pt_rss_kinds_text(FILE *f, const struct pt_rss_view *v);
/* Bytes at the RSS peak of the stacks of kind k (0 when the kinds were not read). */
uint64_t pt_rss_kind_bytes(const struct pt_rss_view *v, enum pt_mem_kind k);
/* Python objects outside the heap view: when pymalloc arenas held more than
 * PT_PY_OUTSIDE_MIN at the RSS peak and --python-objects was not given, one line saying how
 * much, pointing to rss.svg and --python-objects (with lead: for the first screen). */
#define PT_PY_OUTSIDE_MIN (4ULL << 20)
void pt_rss_python_note(FILE *f, const struct pt_rss_view *v, bool lead);
/* The bytes that note names, 0 when it is not shown (report.html's summary). */
uint64_t pt_rss_python_outside(const struct pt_rss_view *v);
/* report.json rss_attribution's "python_objects_outside_heap" member (no separator). */
void pt_rss_python_note_json(FILE *f, const struct pt_rss_view *v);
/* report.json rss_attribution's kinds_read, by_kind_at_peak, kind_stacks_mixed,
 * kind_scan_capped members (no separator around them). */
void pt_rss_kinds_json(FILE *f, const struct pt_rss_view *v);
/* Counter i (0 file, 1 shmem) of the report at the RSS peak or at the end. */
void pt_rss_sh_split_at(const struct pt_rss_view *v, int i, bool peak, struct pt_rss_sh_split *s);
/* The file/shmem part of TOP STACKS HOLDING RSS AT THE PEAK. */
void pt_rss_objs_text(FILE *f, const struct pt_rss_view *v);
/* rss_attribution's "file_shmem" member (no separator around it). */
void pt_rss_objs_json(FILE *f, const struct pt_rss_view *v);
/* Frames and stacks this adds to rss.folded (room to make in q beforehand). */
uint32_t pt_rss_obj_extra(const struct pt_rss_view *v);
/* Append one stack per object and per non-empty bucket (a root frame each, value at the peak)
 * to q; fidx: room for pt_rss_obj_extra(r) indexes, kept while q is used. */
void pt_rss_obj_frames(const struct pt_rss_view *v, struct pt_profile *q, uint32_t *fidx);

#endif
