/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* collect.h — kernel per-stack tables -> symbolized profile. */
#ifndef PEAKTRACE_COLLECT_H
#define PEAKTRACE_COLLECT_H
#include <stdbool.h>
#include "profile/profile.h"
#include "bpf/peaktrace.h"
#include "symbolize/symbolize.h"
#include "maps/mapread.h"

struct pt_py_stack;
struct pt_py_resolver;

/* What collecting found wrong, for the report's error counters (may be NULL). */
struct pt_collect_stats {
	uint64_t py_unmatched;   /* stacks with Python frames left without a native eval frame */
	uint64_t py_unreadable;  /* Python frame names whose code object could not be read */
	uint64_t exec_unnamed;   /* stacks of an image before an exec with a frame in none of its
	                          * mappings as last read (it exec'd before they were) */
};

struct pt_collect_in {
	const struct pt_stack_table *stacks;     /* by stack index (maps/mapread.h) */
	const struct pt_stack_stats *stats;      /* by stack index; NULL: read from stats_fd */
	int stats_fd;                            /* the kernel's stats map, read by batches */
	uint32_t nstacks;                    /* indexes [0, nstacks) are valid */
	uint64_t peak_seq;                   /* g.peak_seq at the end of tracing */
	uint64_t rss_peak_seq;               /* rss_g.peak_seq at the end (bpf/rss.bpf.h) */
	unsigned count_shift;                /* stats counts are in 2^-count_shift units
					      * (--sample-bytes weights), 0 = whole */
	/* CPython: each stack's Python words (NULL: none), and their names. May be NULL. */
	const struct pt_py_stack *const *py;
	struct pt_py_resolver *py_res;
	struct pt_collect_stats *cstats;
	/* Leaks across invocations (invocation/leaks.h): per kernel stack, leaked bytes and count
	 * (count in 2^-count_shift units), summed into PT_LEAKED_*. May be NULL. */
	const int64_t (*leaked)[2];
	/* If not NULL (nstacks entries): the output stack each kernel stack went to, UINT32_MAX
	 * for none. */
	uint32_t *stack_out;
	/* If not NULL (nstacks entries): each kernel stack's memory kind of its RSS pages
	 * (rss/rsskind.h, 0 = not known), set into pt_stack.rss_kind. */
	const uint8_t *rss_kind;
};

/* Most frames of one stack once Python frames are spliced in. */
#define PT_MAX_MERGED (PT_MAX_FRAMES + PT_MAX_PY_FRAMES)

/* The frames of one kernel stack (leaf first), symbolized and with its Python frames spliced in
 * exactly as pt_collect does, for the outputs that show single stacks (invocations): fr[0..*n)
 * index p->frames; fr holds PT_MAX_MERGED. pys and py may be NULL. Free p with pt_profile_free. */
int pt_stack_one(struct pt_symbolizer *sym, uint32_t idx, const struct pt_stack_rec *s,
		 const struct pt_py_stack *pys, struct pt_py_resolver *py, struct pt_profile *p,
		 uint32_t *fr, uint32_t *n);

/* The frames every later pt_collect and pt_stack_one keeps (--frames): an enum
 * pt_frames_mode (profile/frames.h); PT_FRAMES_COLLAPSED until set. */
void pt_collect_set_frames(int mode);

/* The object peaktrace probes for malloc (as in /proc/PID/maps), for every later pt_collect and
 * pt_stack_one: each frame's kind (pt_frame_kind, profile/frames.h) is set with it. */
void pt_collect_set_allocator(const char *module);

/* Fills p (frames interned, stacks merged after truncation) and the mmap/brk stacks.
 * sym may be NULL (addresses only). Returns 0 or -errno; on error the partial profile is
 * still owned by p (free with pt_profile_free). */
int pt_collect(const struct pt_collect_in *in, struct pt_symbolizer *sym, struct pt_profile *p,
	       struct pt_map_stack **mstacks, uint32_t *nmstacks);
#endif
