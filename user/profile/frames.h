/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * frames.h — which frames of a symbolized stack are shown (--frames).
 *
 * A Python stack unwound natively is mostly the interpreter's own code, and a stripped
 * interpreter (Debian's /usr/bin/python3.11) names none of it: "0x5a7142 (python3.11+0x5a7142)"
 * tells a reader nothing. By default each run of consecutive unnamed frames in one interpreter
 * binary (python*, libpython*, node, libnode*) becomes one frame "[python3.11 internals]", as
 * memray hides the interpreter by default; PT_FRAMES_LANG keeps only the language frames
 * (Python frames, JIT frames a perf map names: JS) and the native frame that allocated;
 * PT_FRAMES_ALL keeps every frame as unwound. The rule is pure (no profile state) so a unit
 * test can hold it to a frame array; collect.c applies it to every stack once, where the
 * profile is built, so every writer shows the same frames, and counts what it took away.
 */
#ifndef PEAKTRACE_FRAMES_H
#define PEAKTRACE_FRAMES_H

#include <stddef.h>
#include <stdint.h>
#include "profile/profile.h"

enum pt_frames_mode {
	PT_FRAMES_COLLAPSED = 0,  /* default: unnamed interpreter runs collapsed */
	PT_FRAMES_ALL,            /* every frame as unwound */
	PT_FRAMES_LANG,           /* language frames plus the allocating native frame */
};

/* "collapsed", "all", "python": as --frames spells them. */
const char *pt_frames_mode_name(enum pt_frames_mode m);

enum pt_frame_class {
	PT_FC_NATIVE = 0,   /* any other frame (named or not) */
	PT_FC_INTERP,       /* unnamed, in an interpreter binary or library */
	PT_FC_LANG,         /* a Python frame (or its truncation marker), or named JIT code */
};

/* The interpreter a module path is ("python3.11" for /usr/bin/python3.11 and
 * .../libpython3.11.so.1.0, "node" for node and libnode.so.108) into buf: 1, else 0. */
int pt_interp_name(const char *module, char *buf, size_t len);

enum pt_frame_class pt_frame_class(const struct pt_frame *fr);

/*
 * The kind of a frame (enum pt_frame_kind, profile/profile.h), from its fields alone:
 *   - addr 0 (synthetic): "[... internals]", "[unknown ...]", "[python frames truncated]" and
 *     any other "[...]" marker are PT_FK_OTHER; the rest are Python frames ("[python]", a
 *     frame whose code object was unreadable, included);
 *   - unnamed ("" or "[unknown...]"): PT_FK_ALLOC in an allocator module, PT_FK_OTHER with no
 *     module, else PT_FK_NATIVE (it prints as "[libfoo.so+0x1234]");
 *   - named, in anonymous memory (no module, "[anon:...]", "/memfd:..."), or "JS:..." from a
 *     perf map: PT_FK_JIT;
 *   - PT_FK_ALLOC: an allocation entry point by name in any module (malloc and its family with
 *     glibc's internals, C++ operator new/delete, jemalloc's *allocx, the je_/tc_/mi_ spellings,
 *     CPython's PyMem_* and PyObject_Malloc family), or any frame of a dedicated allocator
 *     library (libjemalloc*, libtcmalloc*, libmimalloc*, ..., or alloc_module, the object
 *     peaktrace probed for malloc, when it is a library other than libc/musl's loader);
 *   - else PT_FK_NATIVE.
 * alloc_module may be NULL or "". */
enum pt_frame_kind pt_frame_kind(const struct pt_frame *fr, const char *alloc_module);

/* "Python", "JS/JIT", "native", "allocator", "other": the flame graph legend's words. */
const char *pt_frame_kind_name(enum pt_frame_kind k);

/* One frame of a reduced stack: frames in[i] kept (run 0), or in[i .. i+run) collapsed
 * into one "[NAME internals]" frame (run >= 1; all PT_FC_INTERP in one module). */
struct pt_frame_item {
	uint32_t i;
	uint32_t run;
};

/* What a reduction took away (summed over stacks by the caller). */
struct pt_frames_count {
	uint64_t collapsed_frames;   /* frames replaced by "[... internals]" frames */
	uint64_t collapsed_runs;     /* "[... internals]" frames put in their place */
	uint64_t hidden_frames;      /* frames dropped by PT_FRAMES_LANG */
	uint64_t stacks_changed;     /* stacks with at least one frame collapsed or dropped */
};

/* Reduce the stack fr[0..n) (leaf first) under mode into out (room for n items), leaf first:
 * returns the number of items. cnt (may be NULL) is added to. */
uint32_t pt_frames_reduce(const struct pt_frame *const *fr, uint32_t n, enum pt_frames_mode mode,
			  struct pt_frame_item *out, struct pt_frames_count *cnt);

#endif
