/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * pyobj.h — --python-objects in the report (pyobj.c): what was done about CPython's object
 * allocator, the live table's size for it, and the report's lines, which take their own view.
 */
#ifndef PEAKTRACE_PYOBJ_H
#define PEAKTRACE_PYOBJ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "attach/probes.h"

/* --python-objects: what was done about CPython's object allocator (session.c, pyalloc.h). */
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

/* What the --python-objects lines read besides the note. */
struct pt_pyobj_view {
	const struct pt_pyobj_note *note;
	uint64_t live_full;      /* allocations the live table refused (PT_ERR_LIVE_FULL) */
	int64_t peak_count, live_count;   /* blocks live at the heap peak and at the end */
	int64_t unheld_bytes;    /* the profile's bytes held by no stack kept (pt_profile) */
	bool light;              /* --light: no allocator probes */
};

/* --python-objects: "off", "probes", "partial", "malloc" or "none"; the first screen's line,
 * the TRACER lines, and report.json's allocator_families and python_objects. */
const char *pt_pyobj_traced(const struct pt_pyobj_note *n);
void pt_pyobj_text(FILE *f, const struct pt_pyobj_view *v);
void pt_pyobj_text_tracer(FILE *f, const struct pt_pyobj_view *v);
void pt_pyobj_json(FILE *f, const struct pt_pyobj_view *v);

#endif
