// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * wl_unwind — allocations through a known call chain, for the .eh_frame unwinder.
 *
 * Usage: wl_unwind [--wait]     (--wait: block until SIGUSR1, see wl_common.h)
 *
 * Every allocation happens in main -> level1 -> level2 -> site_*, and tests/cases/unwind.json
 * checks that each site's stack holds its site function, level2, level1 and main, in that
 * order. Built -fomit-frame-pointer (the _nofp flavor), a frame-pointer walk loses everything
 * past frames[0]; only CFI unwinding through the program, glibc and libstdc++ finds the chain.
 * level1 keeps a variable-length array, so its CFA is rbp-based (CFA = rbp + 16) while every
 * other function's is rsp-based: the unwinder must carry rbp up through the frames below it.
 *
 * Sites (a/A f/F = alloc and free counts/bytes; sizes distinctive so stacks are recognisable):
 *   site_malloc   malloc(1111) x 2, free 1                 a2/2222  f1/1111
 *   site_strdup   strdup of a 2221-character string        a1/2222  f0
 *                 (frames[0] is glibc's strdup)
 *   site_new      new Big (3333 B) x 2, delete 1           a2/6666  f1/3333
 *                 (frames[0] is libstdc++'s operator new)
 *   site_vector   std::vector<E44> push_back x 5: capacities 1, 2, 4, 8
 *                 -> 44 + 88 + 176 + 352                   a4/660   f4/660
 *                 (through the vector's _M_realloc_insert)
 *   site_string   std::string(5555, 'x'): 5556 B           a1/5556  f1/5556
 *                 (through libstdc++'s basic_string::_M_construct)
 *   site_fopen    fopen("/dev/null") + fclose: glibc's FILE  a1/472 f1/472
 *                 (frames[0] is glibc's fopen internals)
 *   site_deep     malloc(7777) at the bottom of 41 recursive calls of recurse(): a stack of
 *                 ~48 frames, deeper than the 32 peaktrace kept before      a1/7777 f0
 *   site_peak     malloc(250000), free: the unique live-heap peak  a1/250000 f1/250000
 *   site_twins    50 times twin_a then twin_b, each calling twin_leaf, which mallocs and frees
 *                 123 (from twin_a) or 321 (from twin_b) bytes: both reach malloc with the same
 *                 rsp and the same return address, and differ only in twin_leaf's caller, so a
 *                 walk reused from the other twin's call would put the block on the wrong
 *                 stack                              a50/6150 f50/6150, a50/16050 f50/16050
 */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "wl_common.h"

struct Big {
	char b[3333];
};

struct E44 {
	char b[44];
};

static char strdup_src[2222];

extern "C" WL_SCENARIO void site_malloc(void)
{
	void *a = std::malloc(wl_opaque_size(1111));
	wl_sink(a);
	void *b = std::malloc(wl_opaque_size(1111));
	wl_sink(b);
	std::free(a);
}

extern "C" WL_SCENARIO void site_strdup(void)
{
	std::memset(strdup_src, 's', sizeof(strdup_src) - 1);
	wl_sink(strdup(static_cast<char *>(wl_opaque_ptr(strdup_src))));
}

extern "C" WL_SCENARIO void site_new(void)
{
	Big *a = new Big;
	wl_sink(a);
	Big *b = new Big;
	wl_sink(b);
	delete a;
}

extern "C" WL_SCENARIO void site_vector(void)
{
	std::vector<E44> v;
	for (int i = 0; i < 5; i++) {
		v.push_back(E44());
		wl_sink(v.data());
	}
}

extern "C" WL_SCENARIO void site_string(void)
{
	std::string s(wl_opaque_size(5555), 'x');
	wl_sink(&s[0]);
}

extern "C" WL_SCENARIO void site_fopen(void)
{
	FILE *f = std::fopen(static_cast<const char *>(wl_opaque_ptr((void *)"/dev/null")), "r");
	wl_sink(f);
	if (f)
		std::fclose(f);
}

extern "C" WL_SCENARIO void site_deep(void)
{
	wl_sink(std::malloc(wl_opaque_size(7777)));
}

extern "C" WL_SCENARIO void recurse(int n)
{
	volatile char pad[48];

	pad[0] = (char)n;
	if (n > 0)
		recurse(n - 1);
	else
		site_deep();
	wl_sink((void *)pad);
}

extern "C" WL_SCENARIO void site_peak(void)
{
	void *p = std::malloc(wl_opaque_size(250000));
	wl_sink(p);
	std::free(p);
}

extern "C" WL_SCENARIO void twin_leaf(size_t n)
{
	void *p = std::malloc(wl_opaque_size(n));

	wl_sink(p);
	std::free(p);
}

/* Same frame size, same call site into twin_leaf; the wl_sink after the call keeps the call a
 * real call (no tail jump, which would drop the twin's frame). */
extern "C" WL_SCENARIO void twin_a(void)
{
	twin_leaf(123);
	wl_sink(nullptr);
}

extern "C" WL_SCENARIO void twin_b(void)
{
	twin_leaf(321);
	wl_sink(nullptr);
}

extern "C" WL_SCENARIO void site_twins(void)
{
	for (int i = 0; i < 50; i++) {
		twin_a();
		twin_b();
	}
}

extern "C" WL_SCENARIO void level2(int which)
{
	volatile long spill[6] = { which };

	switch (which) {
	case 0: site_malloc(); break;
	case 1: site_strdup(); break;
	case 2: site_new(); break;
	case 3: site_vector(); break;
	case 4: site_string(); break;
	case 5: site_fopen(); break;
	case 6: recurse(40); break;
	case 7: site_peak(); break;
	case 8: site_twins(); break;
	}
	wl_sink((void *)spill);
}

/* A variable-length array: GCC keeps rbp as the frame pointer here even with
 * -fomit-frame-pointer, so level1's CFA is rbp + 16. */
extern "C" WL_SCENARIO void level1(int which, int n)
{
	volatile char vla[n];

	vla[0] = (char)which;
	vla[n - 1] = 1;
	level2(vla[0]);
	wl_sink((void *)vla);
}

int main(int argc, char **argv)
{
	wl_maybe_wait(argc, argv);

	for (int which = 0; which < 9; which++)
		level1(which, 64 + which);
	return 0;
}
