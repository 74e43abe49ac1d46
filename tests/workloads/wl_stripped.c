// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * wl_stripped.c LIBDEEP — the first screen past a stripped library (tests/sections/case.py,
 * case/stripped): load_model() calls deep_entry() of the stripped LIBDEEP (lib_deep.c, built
 * as libdeep.so), which allocates STRIPPED_BLOCKS blocks of STRIPPED_BYTES each
 * STRIPPED_FRAMES unnamed frames below it; they are held to the end (the heap peak). Without
 * LIBDEEP (the build section's plain run of every workload) it does nothing.
 *   STRIPPED_FRAMES 12
 *   STRIPPED_BLOCKS 3
 *   STRIPPED_BYTES 8388608
 */
#include <dlfcn.h>
#include "wl_common.h"

#define STRIPPED_BLOCKS 3
#define STRIPPED_BYTES (8u << 20)

WL_SCENARIO static void load_model(void *(*entry)(size_t))
{
	for (int i = 0; i < STRIPPED_BLOCKS; i++)
		wl_sink(entry(wl_opaque_size(STRIPPED_BYTES)));
}

int main(int argc, char **argv)
{
	void *h;
	void *(*entry)(size_t);

	if (argc < 2)
		return 0;
	h = dlopen(argv[1], RTLD_NOW);
	if (!h) {
		wl_say(2, "wl_stripped: cannot dlopen the library\n");
		return 1;
	}
	entry = (void *(*)(size_t))dlsym(h, "deep_entry");
	if (!entry)
		return 1;
	load_model(entry);
	wl_say(1, "wl: done\n");
	return 0;
}
