/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * wl_alloc_c_api.h — the C allocation API scenario of wl_allocators.cpp (glibc, jemalloc, tcmalloc,
 * mimalloc) and wl_allocators_c.c (built with musl-gcc too), so both check the same figures.
 *
 * scn_c_api: malloc(1000) free; calloc(10, 30) kept; malloc(500) -> realloc 5000 kept;
 *   posix_memalign(64, 700) kept; aligned_alloc(256, 1024) free; memalign(128, 300) kept;
 *   valloc(100) free.
 *   a8 / 8924 bytes (1000 + 300 + 500 + 5000 + 700 + 1024 + 300 + 100), f4 / 2624 (1000 + 500 by
 *   the realloc + 1024 + 100), live 4 / 6300 (300 + 5000 + 700 + 300).
 *   No reallocarray or pvalloc: jemalloc and tcmalloc do not define them (nor does jemalloc
 *   pvalloc), so glibc's would run on a block of the preloaded allocator.
 */
#ifndef PEAKTRACE_WL_ALLOC_C_API_H
#define PEAKTRACE_WL_ALLOC_C_API_H
#include <malloc.h>
#include <stdlib.h>
#include "wl_common.h"

#ifdef __cplusplus
extern "C" {
#endif
static WL_SCENARIO void scn_c_api(void)
{
	void *p;

	p = malloc(wl_opaque_size(1000));
	wl_sink(p);
	free(p);
	wl_sink(calloc(wl_opaque_size(10), wl_opaque_size(30)));
	p = malloc(wl_opaque_size(500));
	wl_sink(p);
	p = realloc(p, wl_opaque_size(5000));
	wl_sink(p);
	if (posix_memalign(&p, wl_opaque_size(64), wl_opaque_size(700)) == 0)
		wl_sink(p);
	p = aligned_alloc(wl_opaque_size(256), wl_opaque_size(1024));
	wl_sink(p);
	free(p);
	wl_sink(memalign(wl_opaque_size(128), wl_opaque_size(300)));
	p = valloc(wl_opaque_size(100));
	wl_sink(p);
	free(p);
}

#ifdef __cplusplus
}
#endif
#endif
