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
#include "invocation/invocation.h"
#include "invocation/leaks.h"
#include "arenas/arenas.h"
#include "report/timeline.h"
#include "report/execs.h"
#include "report/perfmap.h"
#include "unwind/uwcache.h"
#include "kernel/features.h"

#define PT_VERSION "0.1.0"

/* --python-objects: what was done about CPython's object allocator (session.c, python/pyalloc.h). */
struct pt_pyobj_note {
	bool requested;          /* --python-objects given */
	bool found;              /* a CPython exporting PyObject_Malloc was found */
	char path[512];          /* that object (sanitized) */
	char pythonmalloc[32];   /* the interpreter's PYTHONMALLOC ("" unset; sanitized) */
	bool set_pythonmalloc;   /* peaktrace set PYTHONMALLOC=malloc in the launched command */
	bool via_malloc;         /* PYTHONMALLOC=malloc*: every object is a malloc block, probed there */
	bool probed;             /* the PyObject_* / PyMem_* probes are attached */
	uint32_t inlined_sites;  /* pymalloc copies inlined into callers, unseen by the probes */
	struct pt_probe_info probes[2 * 4];
	int nprobes;
	/* The live table (--max-live) holds every object: its size and why, what it takes, and
	 * (report time) what the probes cost, measured by the kernel's BPF run-time statistics. */
	uint32_t live_slots;
	uint64_t live_table_bytes;   /* kernel memory of the live maps (their fdinfo memlock) */
	char live_sized_from[192];
	bool stats;                  /* the kernel's BPF run-time statistics were on */
	uint64_t bpf_runs, bpf_ns;   /* the allocator programs' runs and time in them */
	bool cpu_read;               /* the target's CPU time while traced was read */
	uint64_t cpu_user_ns, cpu_sys_ns;   /* its user and system time while traced */
};

/* Pure, unit tested (pyobj.c): the --python-objects default of --max-live. The table may take
 * 1/128 of the machine's memory (mem_total bytes); attached (anon_bytes: the target's RssAnon),
 * twice the objects that memory could hold at 32 bytes each; launched, the 4M-slot default
 * (2M objects at half load). At least PT_DEF_LIVE_SLOTS, a power of two. why: the reason. */
uint32_t pt_pyobj_live_slots(uint64_t mem_total, uint64_t anon_bytes, char *why, size_t len);
/* The --max-live that would have held a run whose table was full: twice (the hashed buckets
 * spill into the small overflow map past half load) the objects it had to hold at once, at
 * most the tracked live count plus every allocation the table refused. A power of two. */
uint64_t pt_live_slots_to_fit(int64_t tracked_live, uint64_t refused);
/* Kernel memory of one live slot: a bucket's share and the overflow map's (1/16 of the slots). */
#define PT_LIVE_SLOT_BYTES 32

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
	struct pt_global g;
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
	struct pt_arenas ar;    /* ARENAS: glibc arenas (ar.collected when accounting ran) */
	bool attach_multi;      /* uprobe-multi links (else one perf-event uprobe per address) */
	/* The kernel (kernel/features.h): its release and the optional features it lacks, with
	 * what their absence cost this run. NULL: not probed (no "kernel" in the report). */
	const struct pt_kfeats *kernel;
	struct pt_kfeat_measured kernel_cost;
	const char *unwind;     /* stack unwinder: "dwarf", "fp" or "none" (--no-fp-walk) */
	/* invocations */
	const struct pt_inv_list *invs;
	const char *boundary;   /* --boundary mode */
	struct pt_stack_src src;   /* names per-invocation stacks (stacks_fd -1: none) */
	uint64_t max_peak;
	uint64_t sample_bytes;  /* --sample-bytes mean, 0 = every allocation's stack */
	struct pt_tl_summary tl;   /* memory over time (DIR/timeline.jsonl) */
	/* leaks across invocations (report/leaked.c): the live table by invocation of origin,
	 * the per-kernel-stack figures given to pt_collect, and where each kernel stack went */
	struct pt_leaks leaks;
	int64_t (*leaked)[2];
	uint32_t *leak_stack_of;
	uint32_t nleak_stacks;
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
	struct pt_outcap {
		uint64_t cap;           /* --max-output in bytes (0: none) */
		uint64_t used;          /* invocations.jsonl, emf.jsonl, invocation-N.* */
		uint64_t jsonl_cut, emf_cut;   /* lines not written */
		uint64_t graphs_cut;    /* per-invocation files not written */
	} out;
	uint64_t rb_lost[PT_RB_KINDS];
	uint64_t rb_inv_shed;
};

const char *pt_err_name(int e);
const char *pt_err_help(int e);

/* Writes report.txt-style text. */
void pt_report_text(FILE *f, const struct pt_report *r);
/* Writes report.json (docs/json-report.md). */
void pt_report_json(FILE *f, const struct pt_report *r);
/* Writes every file into dir. Returns 0 or -errno (first failure). */
int pt_report_write_dir(const char *dir, const struct pt_report *r);

void pt_report_free(struct pt_report *r);

/* The RSS sections' view of the report (rss/rss.h). */
struct pt_rss_view pt_report_rss_view(const struct pt_report *r);

/* report/light.c: what --light leaves out, said where the heap figures would be. */
void pt_light_text(FILE *f, const struct pt_report *r);
/* --python-objects (report/pyobj.c): "off", "probes", "partial", "malloc" or "none"; the first
 * screen's line, the TRACER lines, and report.json's allocator_families and python_objects. */
const char *pt_pyobj_traced(const struct pt_pyobj_note *n);
void pt_pyobj_text(FILE *f, const struct pt_report *r);
void pt_pyobj_text_tracer(FILE *f, const struct pt_report *r);
void pt_pyobj_json(FILE *f, const struct pt_report *r);

/* report/leaked.c: LEAKED ACROSS INVOCATIONS (text), the "leaked" object of report.json,
 * DIR/leaked.folded and DIR/leaked.svg; loader-initializer stacks kept out of leak candidates. */
void pt_leaked_text(FILE *f, const struct pt_report *r);
/* jidx: each profile stack's index in report.json's "stacks" (UINT32_MAX: left out), or NULL
 * when every stack is written. */
void pt_leaked_json(FILE *f, const struct pt_report *r, const uint32_t *jidx);
int pt_leaked_write_dir(const char *dir, const struct pt_report *r);
/* A stack allocated under the dynamic loader's initializers (_dl_init), before main. */
bool pt_stack_loader_init(const struct pt_profile *p, const struct pt_stack *s);
void pt_leaked_free(struct pt_report *r);

struct pt_collect_in;
/* --per-invocation: DIR/invocation-N.peak.folded/.svg (the heap held at each invocation's own
 * peak, its `all`) and invocation-N.rss.folded/.svg (the attributed anonymous RSS at its RSS
 * peak, its `rss_all`): all's stacks with those figures (report/invgraphs.c). */
/* Only for the invocations kept in memory; each file counted in out->used, none written once
 * that reaches out->cap (out->graphs_cut counts them). */
void pt_report_invocation_graphs(const char *dir, const struct pt_inv_list *invs,
				 const struct pt_collect_in *all, struct pt_symbolizer *sym,
				 const char *comm, struct pt_outcap *out);

#endif
