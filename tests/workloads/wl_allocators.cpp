/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * wl_allocators — the same known allocations through every entry point an allocator offers, to be
 * run under glibc and under LD_PRELOAD=libjemalloc.so.2 / libtcmalloc_minimal.so.4 /
 * libmimalloc.so.2 (the probes must see them all, whatever the allocator).
 *
 * Usage: wl_allocators [--wait]     (--wait: block until SIGUSR1, see wl_common.h)
 *
 * Before the scenarios it prints one line "wl: allocx SYMBOLS" naming the jemalloc extension
 * functions found with dlsym (mallocx rallocx sdallocx dallocx, or "none"): scn_jemalloc_x runs
 * only when all four exist. Each scenario is checked through the stacks that contain its frame
 * (frames[0] is the scenario itself when the allocator's own operator new is probed, and
 * libstdc++'s operator new under glibc, which calls malloc).
 *
 * scn_c_api (wl_alloc_c_api.h, shared with wl_allocators_c.c, the musl build):
 *   a8 / 8924 bytes, f4 / 2624, live 4 / 6300.
 * scn_cxx: new S (200) + delete (sized: _ZdlPvm); new char[3000] + delete[] (_ZdaPv); new S kept;
 *   new A (alignas(64), 128 bytes: _ZnwmSt11align_val_t) + delete (_ZdlPvmSt11align_val_t);
 *   new (nothrow) char[77] kept; new D[3] (D has a destructor: 3 x 8 + an 8-byte array cookie =
 *   32 bytes) + delete[] (_ZdaPvm).
 *   a6 / 3637 bytes (200 + 3000 + 200 + 128 + 77 + 32), f4 / 3360 (200 + 3000 + 128 + 32),
 *   live 2 / 277.
 * scn_jemalloc_x: mallocx(4000) -> rallocx 8000 -> sdallocx; mallocx(600) -> dallocx;
 *   mallocx(900) kept.
 *   a4 / 13500 (4000 + 8000 + 600 + 900), f3 / 12600 (4000 by rallocx + 8000 + 600), live 1 / 900.
 */
#include <dlfcn.h>
#include <malloc.h>
#include <new>
#include <stdlib.h>

#include "wl_common.h"
#include "wl_alloc_c_api.h"

struct S {
	char b[200];
};

struct alignas(64) A {
	char b[100];
};

struct D {
	long v;
	~D() { __asm__ volatile("" : : "r"(v)); }
};

typedef void *(*mallocx_fn)(size_t, int);
typedef void *(*rallocx_fn)(void *, size_t, int);
typedef void (*sdallocx_fn)(void *, size_t, int);
typedef void (*dallocx_fn)(void *, int);

static mallocx_fn p_mallocx;
static rallocx_fn p_rallocx;
static sdallocx_fn p_sdallocx;
static dallocx_fn p_dallocx;

extern "C" {

WL_SCENARIO void scn_cxx(void)
{
	S *s = new S;
	wl_sink(s);
	delete s;

	char *c = new char[wl_opaque_size(3000)];
	wl_sink(c);
	delete[] c;

	wl_sink(new S);

	A *a = new A;
	wl_sink(a);
	delete a;

	wl_sink(new (std::nothrow) char[wl_opaque_size(77)]);

	D *d = new D[wl_opaque_size(3)];
	wl_sink(d);
	delete[] d;
}

WL_SCENARIO void scn_jemalloc_x(void)
{
	void *p = p_mallocx(wl_opaque_size(4000), 0);

	wl_sink(p);
	p = p_rallocx(p, wl_opaque_size(8000), 0);
	wl_sink(p);
	p_sdallocx(p, wl_opaque_size(8000), 0);
	p = p_mallocx(wl_opaque_size(600), 0);
	wl_sink(p);
	p_dallocx(p, 0);
	wl_sink(p_mallocx(wl_opaque_size(900), 0));
}

}

int main(int argc, char **argv)
{
	wl_maybe_wait(argc, argv);

	p_mallocx = (mallocx_fn)dlsym(RTLD_DEFAULT, "mallocx");
	p_rallocx = (rallocx_fn)dlsym(RTLD_DEFAULT, "rallocx");
	p_sdallocx = (sdallocx_fn)dlsym(RTLD_DEFAULT, "sdallocx");
	p_dallocx = (dallocx_fn)dlsym(RTLD_DEFAULT, "dallocx");
	bool x = p_mallocx && p_rallocx && p_sdallocx && p_dallocx;
	wl_say(1, x ? "wl: allocx mallocx rallocx sdallocx dallocx\n" : "wl: allocx none\n");

	scn_c_api();
	scn_cxx();
	if (x)
		scn_jemalloc_x();
	return 0;
}
