/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * holder.h — the frames of a top holder worth a line on the first screen (WHO HELD IT, WHO HELD
 * THE RSS, report.html's summary).
 *
 * The innermost frames are often what a reader cannot act on: a stripped library's addresses
 * ("libonnxruntime.so.1+0x1408f85", a dozen deep), the allocator, the interpreter's call
 * machinery. The frame that can be acted on (a named native function with its library, the
 * user's Python or JS function) was 11-20 frames deeper on the ONNX Runtime function of issue
 * 21. So a holder shows its first few *named* frames, each run of frames between them said in one
 * line ("... 12 unnamed frames (libonnxruntime.so.1)"), and the first frame of the program's
 * own code when that is deeper still. The whole stack stays in TOP STACKS.
 *
 * The rule is pure (the frames' fields only) so a unit test holds it to frame arrays.
 */
#ifndef PEAKTRACE_HOLDER_H
#define PEAKTRACE_HOLDER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "profile/profile.h"
#include "output/output.h"

/* Named frames shown per holder (the innermost ones), not counting the own-code frame. */
#define PT_HOLDER_NAMED 3
/* Frames between an own Python or JS frame shown last and its own caller, at most (holder.c). */
#define PT_HOLDER_CALLER_GAP 4
/* Lines a holder can take: each named frame with a run before it, the gap and the own-code
 * frame, the gap and its caller, the run or the rest after the last. */
#define PT_HOLDER_MAX_LINES (2 * PT_HOLDER_NAMED + 5)

enum pt_holder_what {
	PT_HL_FRAME = 0,  /* frame i (a named one, or a lone hidden one between them) */
	PT_HL_SKIP,       /* frames [i, i + n) (n >= 2) not named or internal, said in one line */
	PT_HL_GAP,        /* frames [i, i + n) (any) between the named frames and the own code */
	PT_HL_OWN,        /* frame i: the first of the program's own code, after a gap */
	PT_HL_REST,       /* frames [i, i + n): the rest of the stack, counted */
};

struct pt_holder_line {
	uint8_t what;     /* enum pt_holder_what */
	uint32_t i, n;
};

/* Not named: no function name ("", "[unknown]") or a marker such as "[python3.11 internals]"
 * (a collapsed run of unnamed interpreter frames). */
int pt_holder_named(const struct pt_frame *fr);
/* Allocator or runtime internal (the list and why: holder.c). */
int pt_holder_internal(const struct pt_frame *fr);
/* The program's own code: a Python frame (not importlib's frozen bootstrap), a JS frame (not
 * Node's own "node:..." modules), or a named native frame outside the system's directories and
 * the interpreters. */
int pt_holder_own(const struct pt_frame *fr);
/* A dependency's code, not the program's own: a Python frame of the standard library or of an
 * installed package (site-packages, dist-packages), a JS frame under node_modules. The first
 * screen prefers an own frame that is not one (holder.c own_frame). */
int pt_holder_dep(const struct pt_frame *fr);

/* The lines for the stack fr[0..n) (leaf first) into out (PT_HOLDER_MAX_LINES): their number.
 * The own-code frame is added after a gap when none of the named frames shown is one; a stack
 * with Python or JS frames of the program's own wants one of those (holder.c own_frame).
 * A stack with no named frame that is not internal keeps its first PT_HOLDER_NAMED + 1 frames as
 * they are (there is nothing better to show), then the rest. */
uint32_t pt_holder_lines(const struct pt_frame *const *fr, uint32_t n, struct pt_holder_line *out);

/* The text of a PT_HL_SKIP, PT_HL_GAP or PT_HL_REST line, without indent, into buf:
 * "... 12 unnamed frames (libonnxruntime.so.1)", "... 2 allocator/runtime frames (operator new,
 * _PyObject_MakeTpCall)", "... 3 frames: 2 unnamed (python3.11), 1 allocator/runtime
 * (_PyObject_MakeTpCall)", "... 9 frames down to the program's own code", "... 5 more frames". */
void pt_holder_line_text(char *buf, size_t len, const struct pt_frame *const *fr,
			 const struct pt_holder_line *l);

/* A holder's frame lines in the text report's frame style (pt_frame_text), for stack s. */
void pt_holder_text(FILE *f, const struct pt_profile *p, const struct pt_stack *s);
#endif
