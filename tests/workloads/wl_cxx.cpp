// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * wl_cxx — C++ allocations: new/delete, new[]/delete[], std::vector growth.
 *
 * Usage: wl_cxx [--wait]     (--wait: block until SIGUSR1, see wl_common.h)
 *
 * libstdc++'s operator new calls malloc (operator new[] tail-jumps to operator new),
 * and peaktrace probes malloc, so frames[0] of every new-expression's allocation is
 * "operator new(unsigned long)", not the scenario function: the scenarios cannot be
 * told apart by frames[0]. tests/cases/cxx.json therefore checks the sum over all
 * operator-new stacks, and uses a plain malloc in a namespaced function to check
 * C++ demangling of frames[0] ("wl::scn_cxx_malloc(int)").
 *
 * Figures (a/A f/F l/L = alloc, free, live counts/bytes):
 *   scn_new          3 x new Obj (136 B), delete 2      a3/408   f2/272  l1/136
 *   scn_new_array    2 x new char[1717], delete[] 1     a2/3434  f1/1717 l1/1717
 *   scn_vector       vector<int> push_back x 1000: libstdc++ grows capacity
 *                    0 -> 1 -> 2 -> 4 ... -> 1024 (new_cap = size + max(size, 1)),
 *                    so 11 blocks of 4*2^k bytes, k = 0..10: a11/8188 f11/8188 l0
 *   scn_vector_reserve  reserve(333) then 333 push_backs: a1/1332 f1/1332
 *   scn_cxx_peak     new char[500000], delete[]        a1/500000 f1/500000 (the peak)
 *   wl::scn_cxx_malloc(int)  malloc(2345), live          a1/2345 l1/2345
 * Operator-new total: a18/513362 f16/511509 l2/1853.
 *
 * Launch mode additionally sees libstdc++'s emergency exception-handling pool,
 * allocated with malloc by a static constructor before main (72,704 bytes with
 * GCC 12's libstdc++, never freed); attach mode (--wait) starts after it.
 */
#include <cstdlib>
#include <new>
#include <vector>

#include "wl_common.h"

struct Obj {
	char payload[136];
};

extern "C" WL_SCENARIO void scn_new(void)
{
	Obj *o[3];
	for (int i = 0; i < 3; i++) {
		o[i] = new Obj;
		wl_sink(o[i]);
	}
	delete o[0];
	delete o[1];
}

extern "C" WL_SCENARIO void scn_new_array(void)
{
	char *a = new char[1717];
	wl_sink(a);
	char *b = new char[1717];
	wl_sink(b);
	delete[] a;
}

extern "C" WL_SCENARIO void scn_vector(void)
{
	std::vector<int> v;
	for (int i = 0; i < 1000; i++) {
		v.push_back(i);
		wl_sink(v.data());
	}
}

extern "C" WL_SCENARIO void scn_vector_reserve(void)
{
	std::vector<int> v;
	v.reserve(333);
	for (int i = 0; i < 333; i++)
		v.push_back(i);
	wl_sink(v.data());
}

extern "C" WL_SCENARIO void scn_cxx_peak(void)
{
	char *p = new char[500000];
	wl_sink(p);
	delete[] p;
}

namespace wl {
/* a1/2345 l1/2345 — frames[0].func must be the demangled "wl::scn_cxx_malloc(int)". */
WL_SCENARIO void scn_cxx_malloc(int n)
{
	wl_sink(std::malloc(static_cast<size_t>(n)));
}
} // namespace wl

int main(int argc, char **argv)
{
	wl_maybe_wait(argc, argv);

	scn_new();
	scn_new_array();
	scn_vector();
	scn_vector_reserve();
	wl::scn_cxx_malloc(2345);
	scn_cxx_peak();
	return 0;
}
