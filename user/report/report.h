/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* report.h — everything a report shows, gathered once tracing stops. */
#ifndef PEAKTRACE_REPORT_H
#define PEAKTRACE_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include "bpf/peaktrace.h"
#include "profile/profile.h"
#include "output/output.h"
#include "target/procmaps.h"
#include "rss/rss.h"
#include "attach/probes.h"
#include "python/pyobj.h"
#include "invocation/invocation.h"
#include "invocation/leaks.h"
#include "invocation/leaked.h"
#include "invocation/invgraphs.h"
#include "arenas/arenas.h"
#include "timeline/timeline.h"
#include "exec/execs.h"
#include "report/perfmap.h"
#include "unwind/uwcache.h"
#include "kernel/features.h"

#define PT_VERSION "0.1.0"

/* What peaktrace's own start-up cost, step by step (session.c measures, CLOCK_MONOTONIC). In
 * launch mode everything before the command's exec, and every hold at an exec stop, delays the
 * target: under a supervisor that times the start (Lambda's Init Duration) it is inside that
 * figure. */
struct pt_startup {
	uint64_t bpf_load_ns;      /* BPF object opened, verified by the kernel, loaded */
	uint64_t unwind_ns;        /* unwind tables built and loaded before the target went on */
	uint64_t unwind_later_ns;  /* table work after that: at exec stops (inside held_ns) or while
	                            * the target ran (new code; --fast-start) */
	uint64_t attach_ns;        /* probes and tracepoints attached */
	uint64_t before_exec_ns;   /* launch: from peaktrace's start to the command's exec */
	uint32_t exec_stops;       /* launch: exec stops the command was held at */
	uint64_t held_ns;          /* launch: time held at them (per-image steps for new images) */
	bool cache_on;             /* the unwind table cache was used (unwind/uwcache.h) */
	struct pt_uwcache_stats cache;
};

struct pt_report {
	/* target */
	pid_t pid;
	char comm[64];
	char exe[4096];
	bool launched;
	bool exited;
	int exit_status;        /* valid when exited and exit_signal == 0 */
	int exit_signal;
	uint64_t duration_ns;
	/* allocator */
	const struct pt_allocator *alloc;
	struct pt_probe_info probes[PT_PROBES_MAX];
	int nprobes;
	/* figures from the kernel */
	struct pt_global totals;
	uint64_t errors[PT_ERR_COUNT];
	uint64_t vmhwm_bytes;   /* /proc/PID/status VmHWM (or the mm's hiwater at exit) */
	uint64_t tracer_vmhwm;  /* peaktrace's own VmHWM */
	uint64_t stacks_used;   /* distinct kernel stacks, the cut ones included */
	uint64_t stacks_cut[PT_TIERS]; /* stacks kept cut, per tier (pt_tier_start; [0] unused) */
	uint64_t max_stacks;
	uint64_t stack_table_bytes; /* kernel memory of the stack table's maps */
	uint64_t bpf_maps_bytes;    /* kernel memory of all of peaktrace's BPF maps */
	uint64_t tracer_mapped;     /* of tracer_vmhwm, BPF map pages mapped (pt_map_mapped_bytes) */
	/* symbolized */
	struct pt_profile prof;
	struct pt_map_stack *mstacks;
	uint32_t nmstacks;
	int top;
	uint32_t json_stacks;   /* report.json keeps the top N stacks per figure, 0 = all */
	struct pt_arenas arenas;   /* ARENAS: glibc arenas (arenas.collected when accounting ran) */
	bool attach_multi;      /* uprobe-multi links (else one perf-event uprobe per address) */
	/* The kernel (kernel/features.h): its release and the optional features it lacks, with
	 * what their absence cost this run. NULL: not probed (no "kernel" in the report). */
	const struct pt_kfeats *kernel;
	struct pt_kfeat_measured kernel_cost;
	const char *unwind;     /* stack unwinder: "dwarf", "fp" or "none" (--no-fp-walk) */
	/* invocations */
	const struct pt_inv_list *invs;
	const char *boundary;   /* --boundary mode */
	struct pt_stack_src inv_stacks;   /* names per-invocation stacks (stacks_fd -1: none) */
	uint64_t max_peak;
	uint64_t sample_bytes;  /* --sample-bytes mean, 0 = every allocation's stack */
	struct pt_tl_summary timeline;   /* memory over time (DIR/timeline.jsonl) */
	struct pt_leaked leaked;   /* leaks across invocations (invocation/leaked.h) */
	struct pt_execs execs;  /* the images the target exec'd into (execs.h) */
	struct pt_rss rss;      /* RSS attribution by page (rss/rss.h) */
	char node_flags_note[256];  /* node_perf_flags_missing's cause: which flags (session.c) */
	struct pt_perf_map_note perf_map;   /* the JIT's perf map: read and cut (report/perfmap.h) */
	bool light;             /* --light: no allocator probes, no heap figures (report/light.c) */
	bool compare_run;       /* one traced run of --compare-env: the parent prices the advice */
	struct pt_pyobj_note pyobj;   /* --python-objects */
	struct pt_startup startup; /* peaktrace's own start-up, step by step */
	/* Bounds on what a flood of invocations can take (session.c): the invocations the kernel
	 * started, what the files that grow with the run wrote into -o DIR under --max-output,
	 * and the ring buffer's losses by record kind. */
	uint64_t inv_seen;
	struct pt_outcap out;   /* --max-output's account (invocation/invgraphs.h) */
	uint64_t rb_lost[PT_RB_KINDS];
	uint64_t rb_inv_shed;
};

/* report/figures.c: the report's figures that need no symbolizing, taken once tracing stopped
 * from what the session holds (report/ knows no session: it fills this). */
struct peaktrace_bpf;
struct pt_report_from {
	pid_t pid;
	bool launched;
	bool multi;                  /* uprobe-multi links */
	bool exited;                 /* the target group died (exit event or wait) */
	int exit_code;               /* the exit event's task exit code */
	bool child_exited;           /* launch mode: the command was reaped, with child_status */
	int child_status;
	uint64_t vmhwm, hiwater;     /* /proc's VmHWM last read; the mm's hiwater at exit */
	struct peaktrace_bpf *skel;  /* its .bss (totals, errors, tiers) and maps (their memory) */
	uint64_t bpf_maps_bytes;     /* every map's kernel memory (bpfload.h pt_maps_memlock) */
	const struct pt_inv_list *invs;
	struct pt_stack_src inv_src;
	bool aws_pending;            /* --boundary uprobe: aws-lambda-cpp never mapped */
	uint64_t unwind_later_ns;
	const struct pt_uwcache *unwind_cache;
	struct pt_arenas *arenas;    /* moved into the report (zeroed) */
	enum pt_allocator_kind alloc_kind;
	const struct pt_timeline *timeline;
	/* the options it shows */
	int top;
	uint32_t json_stacks, max_stacks;
	bool light, compare_run;
	const char *unwind, *boundary;
	uint64_t max_peak, sample_bytes;
};
void pt_report_figures(struct pt_report *rep, const struct pt_report_from *f);

const char *pt_err_name(int e);
const char *pt_err_help(int e);

/* Writes report.txt-style text. */
void pt_report_text(FILE *f, const struct pt_report *r);
/* Writes report.json (docs/json-report.md). */
void pt_report_json(FILE *f, const struct pt_report *r);
/* Writes every file into dir. Returns 0 or -errno (first failure). */
int pt_report_write_dir(const char *dir, const struct pt_report *r);

void pt_report_free(struct pt_report *r);
/* --compare-env: the summary of a finished run (key<TAB>value lines) its parent reads back
 * (compare/compare.h pt_summary_read). Returns 0 or -errno (report/summary.c). */
int pt_summary_write(const char *path, const struct pt_report *r);

/* The RSS sections' view of the report (rss/rss.h). */
struct pt_rss_view pt_report_rss_view(const struct pt_report *r);

/* report/light.c: what --light leaves out, said where the heap figures would be. */
void pt_light_text(FILE *f, const struct pt_report *r);



/* ---- the report's parts, each in its own file of report/ ---- */

/* report/html.c: */
/* DIR/report.html. 0 or -errno. */
int pt_write_html(FILE *f, const char *dir, const struct pt_report *r);

/* report/killed.c: */
/* The KILLED section of report.txt for ir. */
void pt_killed_text(FILE *f, const struct pt_report *r, const struct pt_inv_record *ir);
/* report.json's "killed" member, one object per killed invocation, with its trailing ",\n". */
void pt_killed_json(FILE *f, const struct pt_report *r);

/* report/jsonstacks.c: report.json's stacks: one frame table, stacks that name frames by index,
 * only the top --json-stacks N per figure, and what was left out summed (nothing lost silently). */
struct pt_json_sel {
	bool *keep, *mkeep;     /* per p->stacks / r->mstacks: written to report.json */
	uint32_t *fmap;         /* p->frames index -> frame_table index (UINT32_MAX: unused) */
	uint32_t *forder;       /* frame_table index -> p->frames index */
	uint32_t *jidx;         /* p->stacks index -> index in "stacks" (UINT32_MAX: left out) */
	uint32_t nframes;       /* entries in frame_table */
};

/* Chooses the stacks and the frames they use; -ENOMEM on failure (sel is then empty). */
int pt_json_sel_init(struct pt_json_sel *sel, const struct pt_report *r);
void pt_json_sel_free(struct pt_json_sel *sel);

/* "frame_table": [...],\n  "stacks": [...],\n  "stacks_left_out": {...},\n */
void pt_json_heap_stacks(FILE *f, const struct pt_report *r, const struct pt_json_sel *sel);
/* "mmap_stacks": [...],\n  "mmap_stacks_left_out": {...} (no trailing comma) */
void pt_json_map_stacks(FILE *f, const struct pt_report *r, const struct pt_json_sel *sel);

#endif
