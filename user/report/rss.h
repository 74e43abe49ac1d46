/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* rss.h — RSS attribution by page (bpf/rss.bpf.h) in the report: text, JSON, rss.folded/.svg. */
#ifndef PEAKTRACE_REPORT_RSS_H
#define PEAKTRACE_REPORT_RSS_H

#include <stdint.h>
#include <stdio.h>
#include "bpf/peaktrace.h"

struct pt_report;
struct pt_profile;

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

/* Moves up to want bytes out of *from (never below 0; nothing for want <= 0); returns what
 * is still wanted. The one step of both splits' "released pages taken from the buckets". */
int64_t pt_rss_take(int64_t *from, int64_t want);
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
void pt_rss_summary_text(FILE *f, const struct pt_report *r);
/* TOP STACKS HOLDING RSS AT THE PEAK. */
void pt_rss_text(FILE *f, const struct pt_report *r);
/* The "rss_attribution" member of report.json, with its trailing ",\n". */
void pt_rss_json(FILE *f, const struct pt_report *r);
/* DIR/rss.folded and DIR/rss.svg: 0 or -errno. */
int pt_rss_write_files(const char *dir, const struct pt_report *r);

#endif
