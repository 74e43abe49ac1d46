/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * execs.h — the target's execs: each new image the traced process became (a wrapper script
 * that execs the interpreter, sh -> env -> python3), noted for the report, and what the exec
 * cost the figures (stacks of an earlier image that cannot be named, allocations made while
 * the new image ran unprobed).
 */
#ifndef PEAKTRACE_EXECS_H
#define PEAKTRACE_EXECS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define PT_EXECS_MAX 16

struct pt_exec_note {
	char from[512], to[512];   /* exe paths, sanitized */
	uint64_t at_ns;            /* since tracing began */
	uint32_t first_stack;      /* stacks from this index on were recorded in the new image */
	bool held;                 /* launch mode: stopped at the exec until re-resolved */
	uint64_t window_ns;        /* attach mode: the exec until its probes were in place */
	uint64_t held_ns;          /* launch mode: how long the exec stop held the new image */
	bool reprobed;             /* another allocator object: probes attached for it */
	bool allocator_missing;    /* the new image has no allocator peaktrace knows: untraced */
	bool python;               /* CPython detected in the new image */
	/* The earlier images' heap still counted live at the exec: those blocks went with the
	 * old memory but stay in the live figures (the kernel's live table is not swept). */
	uint64_t live_bytes, live_count;
};

struct pt_execs {
	struct pt_exec_note n[PT_EXECS_MAX];
	uint32_t count;            /* every exec; n[] holds the first PT_EXECS_MAX */
	uint64_t unnamed_stacks;   /* stacks of an earlier image with a frame it never showed us */
};

/* One "exec: FROM -> TO at +N ms (...)" line per exec (none without), and the lines' losses. */
void pt_execs_text(FILE *f, const struct pt_execs *e);
/* The report.json "execs" object (docs/json-report.md). */
void pt_execs_json(FILE *f, const struct pt_execs *e);

#endif
