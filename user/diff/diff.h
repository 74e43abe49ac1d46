/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * diff.h — `peaktrace diff DIR_A DIR_B`: two runs' output directories compared. The folded
 * files ({peak,live,alloc}.folded: every stack, exact bytes) give the per-stack deltas,
 * report.json the totals, RSS and per-invocation peaks; a differential flame graph of the peak
 * goes to OUTDIR, and --max-growth turns the peak's growth into a CI gate.
 */
#ifndef PEAKTRACE_DIFF_H
#define PEAKTRACE_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define PT_DIFF_DEFAULT_OUT "peaktrace-diff"
/* --max-input: the bytes of both directories' four files together (report.json and the three
 * folded files each) that diff reads at most; more is refused before anything is read, with
 * one line and exit 2. Memory is about that much again (diff.c), so the default keeps a diff
 * of two hostile directories near 1 GiB. */
#define PT_DIFF_DEFAULT_MAX_INPUT (512ull << 20)
/* Frames kept per folded line: a deeper stack keeps its innermost PT_FOLD_MAX_FRAMES - 1
 * under one PT_FOLD_CUT_FRAME root (counted: pt_fold.cut), so that a line of a million ";"
 * cannot become a million flame-graph frames. peaktrace's own stacks are far shallower. */
#define PT_FOLD_MAX_FRAMES 512
#define PT_FOLD_CUT_FRAME "[outer frames cut]"

struct pt_diff_options {
	const char *dir_a, *dir_b;  /* the two runs' -o directories: A the baseline */
	const char *outdir;         /* -o: diff.peak.folded, diff.peak.svg, diff.txt */
	int top;                    /* --top: stacks listed per direction and metric */
	bool gate;                  /* --max-growth given */
	uint64_t max_growth;        /* --max-growth: bytes B's peak live heap may exceed A's by */
	bool quiet;                 /* -q: no report on stdout (the gate's line still goes out) */
	uint64_t max_input;         /* --max-input: bytes read from both directories at most */
};

/* What a diff ended with; main() maps each to an exit code (cli.h). */
enum pt_diff_result {
	PT_DIFF_OK = 0,
	PT_DIFF_BAD_INPUT,   /* a directory missing, not a peaktrace output, unreadable */
	PT_DIFF_OUTPUT,      /* OUTDIR could not be written */
	PT_DIFF_GREW,        /* the peak grew by more than --max-growth */
	PT_DIFF_FAIL,        /* out of memory */
};

/*
 * The pure core, unit tested (tests/unit/test_diff.c).
 */

/* One folded line: "root;...;leaf BYTES". */
struct pt_fold_line {
	const char *stack;  /* points into the parsed text */
	uint64_t v;
};

struct pt_fold {
	struct pt_fold_line *lines;  /* sorted by stack (strcmp), each stack once */
	size_t n;
	uint64_t cut;                /* lines deeper than PT_FOLD_MAX_FRAMES, cut */
	char **owned;                /* the cut lines' stacks (the others point into the text) */
	size_t nowned;
};

/* Parse folded text in place (its newlines and last spaces become NULs): one line per stack,
 * "STACK VALUE" with VALUE an unsigned decimal; blank lines are skipped, a trailing "\r"
 * ignored, repeated stacks summed, a stack of more than PT_FOLD_MAX_FRAMES frames cut to
 * PT_FOLD_CUT_FRAME and its innermost PT_FOLD_MAX_FRAMES - 1 (counted in out->cut). 0,
 * -EINVAL with *bad_line (1-based) for a line that is not folded (no space, no stack, not a
 * number, a NUL byte), -ENOMEM. */
int pt_fold_parse(char *text, size_t len, struct pt_fold *out, size_t *bad_line);
void pt_fold_free(struct pt_fold *f);

/* One stack in either profile: a = its bytes in A, b in B (0 where absent). */
struct pt_diff_row {
	const char *stack;
	uint64_t a, b;
};

static inline int64_t pt_diff_delta(const struct pt_diff_row *r)
{
	return (int64_t)(r->b - r->a);
}

/* Every stack of a or b once, sorted by stack: 0 or -ENOMEM (*rows NULL when n is 0). */
int pt_fold_diff(const struct pt_fold *a, const struct pt_fold *b, struct pt_diff_row **rows,
		 size_t *n);
/* Folded stacks in call-tree pre-order: frame by frame, a frame's callees right after it and
 * before its next sibling (";" sorts below every other byte), siblings by strcmp. */
int pt_fold_frame_cmp(const char *a, const char *b);
/* Rows sorted by delta, biggest growth first and so biggest shrink last; ties by stack. */
void pt_diff_sort(struct pt_diff_row *rows, size_t n);

/* "leaf < caller < caller's caller < ..." from a folded (root-first) stack: at most maxframes
 * frames, then " < ..."; sanitized for a terminal. malloc'd, NULL when out of memory. */
char *pt_diff_short_stack(const char *stack, int maxframes);

/* The differential flame graph colour of a frame whose bytes changed by delta, of the most
 * any frame could change (scale > 0): red for growth, blue for shrink, deeper the larger
 * |delta| / scale; light grey for no change. */
void pt_diff_color(char *buf, size_t len, int64_t delta, uint64_t scale);

/* diff.peak.svg: B's stacks at the peak (width), coloured by their change since A (stacks gone
 * in B have no width but still count in their callers' colour); rows in stack (strcmp) order
 * as pt_fold_diff gives them. Only what the flame graph can draw is handed to its writer
 * (diff.c says how), so the picture is byte for byte the one all rows would give
 * (tests/unit/test_diff.c checks that). 0 or -errno. */
int pt_diff_write_svg(FILE *f, const struct pt_diff_row *rows, size_t n, const char *sub);

/* The whole subcommand: read both directories, print the report (stdout and OUTDIR/diff.txt),
 * write OUTDIR/diff.peak.folded and diff.peak.svg, apply --max-growth. Errors are one
 * "peaktrace: " line on stderr. */
enum pt_diff_result pt_diff_run(const struct pt_diff_options *o);

#endif
