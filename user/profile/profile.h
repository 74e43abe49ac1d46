/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * profile.h — the symbolized, aggregated profile that every output writer reads.
 *
 * The loader builds one pt_profile from the BPF maps after symbolization; writers
 * (folded, SVG flame graph, pprof, speedscope, JSON, text) never see BPF types.
 * Frames are interned: stacks hold indexes into profile->frames, leaf first.
 */
#ifndef PEAKTRACE_PROFILE_H
#define PEAKTRACE_PROFILE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* What kind of code a frame is, for the colours of the flame graph (and any writer that
 * groups frames by kind). Set once per frame where the profile is built (profile/collect.c,
 * by the pure rule pt_frame_kind() of profile/frames.h); 0 (native) in a profile built by hand
 * unless set. */
enum pt_frame_kind {
	PT_FK_NATIVE = 0,  /* compiled code: named, or "[module+0xOFF]" */
	PT_FK_PYTHON,      /* a Python function (a synthetic frame: addr 0, its .py file as module) */
	PT_FK_JIT,         /* JIT code a perf map names (node's "JS:*name"), in anonymous memory */
	PT_FK_ALLOC,       /* the allocator: its entry points, and all of a dedicated allocator library */
	PT_FK_OTHER,       /* markers: "[python3.11 internals]", "[unknown]", "[python frames truncated]" */
	PT_FK_MAX,
};

/* One distinct code location. */
struct pt_frame {
	uint64_t addr;     /* absolute address in the target (0 for synthetic frames) */
	uint64_t offset;   /* address relative to module load (file-relative vaddr) */
	char *func;        /* demangled function name, or "[unknown]" style text; never NULL */
	char *module;      /* path of the ELF object (as in /proc/PID/maps), or "" */
	uint32_t func_off; /* addr - function start, 0 if unknown */
	/* Source position, for pprof's Function/Line, the JSON "file"/"line" and the text
	 * report's "(file.c:42)"; the labels of folded and SVG output do not use them. Native
	 * frames: DWARF's file and line of the call (NULL/0 without debug info). Python
	 * frames: the .py path, the line, and the code object's co_firstlineno. */
	char *file;          /* NULL if unknown */
	uint32_t line;       /* 0 if unknown */
	uint32_t start_line; /* first line of the function, 0 if unknown */
	/* Python frames: "module:qualname", func without its ":line" (func keeps the label
	 * every other writer prints); NULL for native frames. */
	char *func_name;
	char *build_id;      /* the module's NT_GNU_BUILD_ID in hex, NULL if none */
	uint8_t kind;        /* enum pt_frame_kind */
};

/* Counters kept per stack. Indexes into pt_stack.v[]. */
enum pt_metric {
	PT_ALLOC_COUNT = 0, /* allocations made */
	PT_ALLOC_BYTES,     /* bytes allocated in total */
	PT_FREE_COUNT,
	PT_FREE_BYTES,
	PT_LIVE_COUNT,      /* still allocated at the end of tracing */
	PT_LIVE_BYTES,
	PT_PEAK_COUNT,      /* live at the moment of the live-heap peak */
	PT_PEAK_BYTES,
	PT_LEAKED_COUNT,    /* allocated in an invocation, live at the end after a later one finished
			     * (invocation/leaks.h; 0 without invocations). pprof keeps its six
			     * sample types (output/pprof.c lists them): adding two would change
			     * every profile.pb.gz and the tests and README that name them. */
	PT_LEAKED_BYTES,
	PT_RSS_PEAK_BYTES,  /* anonymous RSS this stack faulted in, held at the RSS peak */
	PT_RSS_NOW_BYTES,   /* ... and at the end of tracing */
	PT_METRIC_MAX,
};

struct pt_stack {
	uint32_t nframes;
	uint32_t *frames;   /* indexes into pt_profile.frames, frames[0] = leaf (allocation site) */
	uint64_t v[PT_METRIC_MAX];
	uint8_t rss_kind;   /* memory kind of its RSS pages (rss/rsskind.h), 0 = not known */
};

struct pt_profile {
	struct pt_frame *frames;
	uint32_t nframes;
	struct pt_stack *stacks;
	uint32_t nstacks;
	uint64_t duration_ns;   /* tracing duration, for pprof duration_nanos */
	uint64_t time_ns;       /* wall-clock start (ns since epoch), for pprof time_nanos */
	/* What --frames took out of the stacks (profile/frames.h), counted over the distinct
	 * stacks as recorded: frames_mode is an enum pt_frames_mode. */
	int frames_mode;
	uint64_t collapsed_frames;       /* unnamed interpreter frames collapsed ... */
	uint64_t collapsed_runs;         /* ... into this many "[python3.11 internals]" frames */
	uint64_t hidden_frames;          /* frames dropped by --frames python */
	uint64_t frames_stacks_changed;  /* stacks that lost or collapsed a frame */
	/* Stacks whose kernel stacks' RSS pages were of more than one memory kind (merged by
	 * their symbolized frames): labelled by the first kind seen, counted here. */
	uint64_t rss_kind_mixed;
	/* Bytes allocated that the full live table could not hold (live_table_full), all stacks. */
	int64_t unheld_bytes;
};

/* Name and unit of each metric, for writers ("alloc_space", "bytes"). */
const char *pt_metric_name(enum pt_metric m);
const char *pt_metric_unit(enum pt_metric m);

/* Release everything a profile owns (frames' strings, stacks' frame arrays). */
void pt_profile_free(struct pt_profile *p);

/*
 * Helpers shared by the writers (profile.c), so every format names a frame the same way.
 */

/* Display name of a frame: func if it is a real name; else "[basename(module)+0xOFF]"
 * when the module is known; else "[0xADDR]"; else func or "[unknown]". func counts as
 * unknown when empty or "[unknown]...". The result is clean text (see pt_clean_text).
 * Returns a malloc'd string or NULL (out of memory). */
char *pt_frame_label(const struct pt_frame *fr);

/* Copy of s safe for any text format: control characters (newlines, tabs) become ' ',
 * bytes that are not valid UTF-8 become '?'. Returns a malloc'd string or NULL. */
char *pt_clean_text(const char *s);

/* -EINVAL if a stack refers to a frame index >= nframes (or a count is inconsistent). */
int pt_profile_check(const struct pt_profile *p);

/* pt_frame_label() of every frame, in frame order. Returns 0 or -errno. */
int pt_profile_labels(const struct pt_profile *p, char ***labels);
/* Metric in range, profile consistent (pt_profile_check), labels built: 0 or -errno. */
int pt_writer_prepare(const struct pt_profile *p, enum pt_metric m, char ***labels);
void pt_labels_free(char **labels, uint32_t n);

/* Rank of each frame in the sorted list of distinct labels (with_module: distinct
 * (label, module) pairs). Frames that share a name share a rank, and rank order is
 * strcmp() order, so writers merge and sort by comparing integers.
 * rank[] has p->nframes entries; *nranks gets the number of distinct ranks. */
int pt_frame_ranks(const struct pt_profile *p, char *const *labels, int with_module,
		   uint32_t *rank, uint32_t *nranks);

/* Reorders the stack indexes idx[0..n) so that the first k are, in order, the first k of
 * idx sorted by metric m, most first, ties by lower index (what a full sort by that rule gives);
 * the others follow in their order. For "the top k, the rest summed": O(n log k), not a sort of
 * all (n 131k, k 10: each full sort cost ~25 ms). 0 or -ENOMEM (idx then unchanged). */
int pt_stacks_top(const struct pt_profile *p, enum pt_metric m, uint32_t *idx, uint32_t n,
		  uint32_t k);

/* Flush f and report whether any write to it failed: 0 or -errno (-EIO if unknown). */
int pt_stream_result(FILE *f);

/* A stack of mmap/munmap/brk calls. */
struct pt_map_stack {
	uint32_t nframes;
	uint32_t *frames;       /* into profile.frames */
	uint64_t mmap_count, mmap_bytes, munmap_count, munmap_bytes;
};

#endif
