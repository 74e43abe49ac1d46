// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * lib_deep.c — libdeep.so for wl_stripped.c: a stripped library that allocates DEEP_FRAMES
 * frames below its one exported function, as a stripped native library (libonnxruntime.so.1)
 * does below its API. Built by the build section (tests/sections/build.py) with -g, then
 * `strip --strip-all`: .dynsym keeps deep_entry's name, the static down() is left without one,
 * and .eh_frame stays, so the frames unwind but print as addresses.
 */
#include <stdlib.h>

#define DEEP_FRAMES 12  /* wl_stripped.c's STRIPPED_FRAMES: the test reads it there */

static volatile int deep_sink;

/* One frame per level; the call is not in tail position (deep_sink after it), so each level
 * keeps its frame; noipa: no clone, no inlining, no splitting. */
static __attribute__((noipa)) void *down(int d, size_t n)
{
	void *p = d > 1 ? down(d - 1, n) : malloc(n);

	deep_sink++;
	return p;
}

__attribute__((visibility("default"), noipa)) void *deep_entry(size_t n)
{
	void *p = down(DEEP_FRAMES, n);

	deep_sink++;
	return p;
}
