// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * poison_main.c — the programs of the poison section (tests/sections/poison.py), built twice:
 * LEVEL names the function between main and libpoison.so (attacker_level in the program that
 * uses the lying library, victim_level in the one that uses the honest one), so the two are
 * different programs. Allocates SIZE bytes through libpoison.so (poison_entry -> poison_inner
 * -> malloc), holds them, frees them, exits: the whole stack is main -> LEVEL -> poison_entry
 * -> poison_inner -> malloc.
 */
#include <stdio.h>
#include <stdlib.h>

#define SIZE 3333333

void *poison_entry(size_t n);

__attribute__((noinline)) void *LEVEL(void)
{
	void *p = poison_entry(SIZE);

	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

int main(void)
{
	void *p = LEVEL();

	printf("allocated %d bytes at %p\n", SIZE, p);
	free(p);
	return 0;
}
