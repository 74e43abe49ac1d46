/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * perfmap.h — the incremental, bounded reader of a JIT's perf map (/tmp/perf-PID.map, "START
 * SIZE name" in hex, one a line, appended as the runtime compiles).
 *
 * The file is the target's to write: it can be huge (a 1 GiB map took an unbounded reader to
 * 3.3 GB), sparse (2,000 bytes then a 20 GiB hole without a newline: re-read from its start at
 * every refresh, forever), or hold lines of any length. So every read has budgets: bytes and
 * time per call, bytes and lines over the run; a line longer than line_max is skipped to its
 * newline without being kept; a hole (found with SEEK_DATA, never read) or a NUL in a line
 * makes that line garbage. Each call goes on from where the last one stopped. Every byte it
 * passes is in exactly one of the counters below, so what was cut is counted, never lost.
 */
#ifndef PEAKTRACE_PERFMAP_H
#define PEAKTRACE_PERFMAP_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pt_perfmap_limits {
	uint64_t max_bytes;      /* read over the run (holes skipped unread are not counted) */
	uint64_t max_lines;      /* lines kept over the run */
	uint64_t call_bytes;     /* read per call (at least PT_PERFMAP_CHUNK) */
	uint64_t call_ns;        /* time per call */
	uint32_t line_max;       /* a longer line is skipped (below PT_PERFMAP_CHUNK) */
};

/* The defaults: a run's perf map up to 64 MiB (--perf-map-max) and 512k lines (a line per 128
 * bytes of it). Node's map for tools/functions/onnx after 20 invocations: 229 KB, 3,796 lines,
 * the longest 425 bytes. */
#define PT_PERFMAP_MAX_BYTES (64ULL << 20)
#define PT_PERFMAP_BYTES_PER_LINE 128
#define PT_PERFMAP_CALL_BYTES (16ULL << 20)
#define PT_PERFMAP_CALL_NS 250000000ULL
#define PT_PERFMAP_LINE_MAX 4096
#define PT_PERFMAP_CHUNK 65536

/* Where the bytes went. used + bad + long + garbage + dropped = every byte passed. */
struct pt_perfmap_cut {
	uint64_t used_bytes, used_lines;         /* kept */
	uint64_t bad_bytes, bad_lines;           /* not "START SIZE name" (or a size of 0) */
	uint64_t long_bytes, long_lines;         /* longer than line_max */
	uint64_t garbage_bytes, garbage_lines;   /* a NUL or a hole in them */
	uint64_t hole_bytes;                     /* of garbage_bytes, in holes (never read) */
	uint64_t dropped_bytes, dropped_lines;   /* well-formed, past max_lines (or no memory) */
	uint64_t unread_bytes;                   /* left unread at the last call: a budget */
	uint64_t rewrites;                       /* the file got shorter: read again from 0 */
	uint64_t budget_stops;                   /* calls ended by their time or byte budget */
	uint64_t stops;                          /* calls ended by a stop request */
	uint64_t full;                           /* 1: max_bytes or max_lines reached */
};

enum pt_perfmap_end {
	PT_PERFMAP_DONE = 0,   /* read to the end (a line still being written waits) */
	PT_PERFMAP_BUDGET,     /* this call's time or bytes ran out: the next one goes on */
	PT_PERFMAP_STOPPED,    /* a stop request (util/stop.h) arrived while it read */
	PT_PERFMAP_FULL,       /* max_bytes or max_lines reached: nothing more is read, ever */
};

struct pt_perfmap_reader {
	uint64_t off;          /* next byte to look at */
	uint64_t size;         /* the file's size at the last call */
	uint64_t taken;        /* bytes read and passed over the run (max_bytes) */
	int skip;              /* inside a line being skipped: 0, SKIP_LONG or SKIP_GARBAGE */
	bool full;
	enum pt_perfmap_end last;
	struct pt_perfmap_cut cut;
};

/* A well-formed line: 0 keeps it; nonzero drops it (counted in dropped_*). name is NUL-
 * terminated, name_len bytes (raw: the target's bytes, escaped by whoever prints it). */
typedef int (*pt_perfmap_line_fn)(void *ctx, uint64_t start, uint64_t size, const char *name,
				  size_t name_len);

/* Read what fd (a regular file) holds past r->off, within lim; start with r zeroed. */
enum pt_perfmap_end pt_perfmap_read(struct pt_perfmap_reader *r, int fd,
				    const struct pt_perfmap_limits *lim, pt_perfmap_line_fn fn, void *ctx);

/* One line of a perf map, newline already cut: "START SIZE name" with START and SIZE in hex.
 * 0 with *name pointing into line, or -1 when the line is not in that form or SIZE is 0. */
int pt_perfmap_parse_line(const char *line, uint64_t *start, uint64_t *size, const char **name);

/* lim with the defaults for a run's budget of max_bytes (0: PT_PERFMAP_MAX_BYTES). */
void pt_perfmap_limits_init(struct pt_perfmap_limits *lim, uint64_t max_bytes);

/* All the bytes cut (not kept, or not read because of a budget). */
static inline uint64_t pt_perfmap_cut_bytes(const struct pt_perfmap_cut *c)
{
	return c->bad_bytes + c->long_bytes + c->garbage_bytes + c->dropped_bytes + c->unread_bytes;
}

/* Sum b into a (several images' maps in one report). */
void pt_perfmap_cut_add(struct pt_perfmap_cut *a, const struct pt_perfmap_cut *b);
#endif
