// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * poison_lib.c — libpoison.so for the poison section (tests/sections/poison.py): the unwind
 * cache's key. Built twice with the same forged build id (-Wl,--build-id=0x...): honest, and
 * with -DLIAR, whose CFI says at the start of each function that the return address is
 * undefined (the outermost frame: an unwinder stops there), the code bytes unchanged. A cache
 * keyed by build id alone hands the liar's table to a program using the honest library, and
 * every stack through it ends in it.
 */
#include <stdlib.h>

#ifdef LIAR
#define LIE() __asm__ volatile(".cfi_undefined rip")
#else
#define LIE() do { } while (0)
#endif

/* Kept until the program frees it: the size the test finds the stack by. */
__attribute__((noinline)) void *poison_inner(size_t n)
{
	LIE();
	void *p = malloc(n);

	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

__attribute__((noinline)) void *poison_entry(size_t n)
{
	LIE();
	void *p = poison_inner(n);

	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}
