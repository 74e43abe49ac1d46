/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * timeline.h — memory over time: a sampler thread reads the kernel's current figures (.bss g:
 * RSS by member, live heap) and swaps out its interval maxima (g.tl_rss_max, g.tl_heap_max) every
 * interval_ms, into a bounded buffer; at the end DIR/timeline.jsonl (docs/json-report.md,
 * "timeline.jsonl") and the chart DIR/timeline.svg are written with the invocations' edges.
 *
 * Nothing is added to the allocator path but BPF's compare-and-store of the interval maximum.
 * A sample equal to the one before is kept back and written only when the next change comes
 * (or at the end), so a plateau costs two lines and the chart's lines stay right.
 */
#ifndef PEAKTRACE_REPORT_TIMELINE_H
#define PEAKTRACE_REPORT_TIMELINE_H
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "bpf/peaktrace.h"
#include "invocation/invocation.h"

#define PT_TL_DEF_INTERVAL_MS 10
/* Sample lines kept in memory: 2^18 (16 MiB, 64 bytes each) is 43 minutes of a figure changing
 * at every 10 ms tick; a process at rest adds nothing. Samples past it are dropped and counted. */
#define PT_TL_MAX_SAMPLES (1u << 18)

struct pt_tl_sample {
	uint64_t t_ns;          /* CLOCK_MONOTONIC */
	int64_t rss, anon, file, shmem, heap;
	int64_t rss_max, heap_max;   /* maxima since the previous sample (>= rss, heap) */
};

struct pt_timeline {
	unsigned interval_ms;   /* 0: off */
	pid_t pid;
	struct pt_global *g;    /* the skeleton's .bss: read, and the tl_* maxima swapped */
	struct pt_tl_sample *s; /* sample lines kept, in time order */
	uint32_t n, cap, max;
	struct pt_tl_sample held;   /* the last sample taken, when equal to s[n-1] and not kept */
	bool have_held;
	uint64_t t0_ns;         /* the first sample's time */
	uint64_t taken;         /* ticks sampled */
	uint64_t dropped;       /* sample lines not kept: buffer full */
	uint64_t missed;        /* ticks that passed while the sampler was late */
	pthread_t thread;
	bool running;
	volatile int stop;
	bool light;             /* --light: no heap figures (written null, not drawn) */
};

/* What the reports say of it (report.json "timeline", one text line). */
struct pt_tl_summary {
	bool on;
	bool light;             /* --light: heap_peak not measured */
	unsigned interval_ms;
	uint64_t samples, taken, dropped, missed;
	int64_t rss_peak;       /* the largest rss_max, and when (ms since t0) */
	double rss_peak_ms;
	int64_t heap_peak;
	double heap_peak_ms;
	double span_ms;         /* last sample's time */
	int inv_seq;            /* invocation the RSS peak fell in, -1: none */
};

/* Start sampling g every interval_ms (0: do nothing). 0 or -errno. */
int pt_timeline_start(struct pt_timeline *tl, struct pt_global *g, pid_t pid, unsigned interval_ms);
/* Take a last sample and stop the thread (idempotent). */
void pt_timeline_stop(struct pt_timeline *tl);
/* Stopped (pt_timeline_stop), then DIR/timeline.jsonl and .svg written (dir NULL: no -o),
 * complete and closed before any report is written (report.html reads them). 0 or -errno
 * (said on stderr). */
int pt_timeline_finish(struct pt_timeline *tl, const char *dir, const struct pt_inv_list *invs);
void pt_timeline_free(struct pt_timeline *tl);

/* ---- pure parts (unit tested) ---- */
/* One sample taken: kept, held back (equal to the last kept) or dropped (buffer full). */
void pt_tl_add(struct pt_timeline *tl, const struct pt_tl_sample *x);
/* The held sample, if any, kept (at the end: the last level's end). */
void pt_tl_flush(struct pt_timeline *tl);
/* The next tick after a sample taken at now, for ticks due at next: next + interval, or, when
 * now is already past that, the first tick after now, adding the ticks skipped to *missed. */
uint64_t pt_tl_next_tick(uint64_t next, uint64_t now, uint64_t interval_ns, uint64_t *missed);
void pt_tl_summarize(const struct pt_timeline *tl, const struct pt_inv_list *invs,
		     struct pt_tl_summary *out);
/* A chart axis: a "nice" step (1, 2 or 5 times a power of ten) giving at most max_ticks ticks
 * over [0, span]. */
double pt_tl_axis_step(double span, int max_ticks);

/* The text report's line or two, and report.json's "timeline" object (null when off). */
void pt_tl_text(FILE *f, const struct pt_tl_summary *t);
void pt_tl_json(FILE *f, const struct pt_tl_summary *t);

/* DIR/timeline.jsonl and DIR/timeline.svg; 0 or -errno (the first failure). */
int pt_timeline_write_jsonl(FILE *f, const struct pt_timeline *tl, const struct pt_inv_list *invs);
int pt_timeline_write_svg(FILE *f, const struct pt_timeline *tl, const struct pt_inv_list *invs);
int pt_timeline_write_dir(const char *dir, const struct pt_timeline *tl,
			  const struct pt_inv_list *invs);

/* ---- report.html's memory-over-time chart (htmltl.c) ---- */

/* Points of the memory-over-time chart (samples beyond are merged, keeping each bucket's max). */
#define PT_HTML_MAX_POINTS 4000
/* Lines of DIR/timeline.jsonl read at most, and the longest line. */
#define PT_HTML_MAX_TL_LINES 4000000
#define PT_HTML_MAX_TL_LINE 1024
/* The "timeline" member (no leading comma): DIR/timeline.jsonl when there, else the invocation
 * records' RSS trajectories, else {"source": null, "reason": "..."}. */
void pt_html_timeline(FILE *f, const char *dir, const struct pt_inv_list *invs);

#endif
