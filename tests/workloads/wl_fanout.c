/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * wl_fanout — a recursion fanning out to 2^17 paths, each path allocating once: exactly
 * 131,072 distinct allocation stacks, for the scale tests and the benchmark.
 *
 * Usage: wl_fanout [--wait]     (--wait: block until SIGUSR1 first, see wl_common.h)
 *
 * main calls fan_0(1, 0) and fan_1(1, 0); fan_B(d, p) appends bit B to the path p and,
 * below depth FAN_DEPTH, calls fan_0 and fan_1 again; at depth FAN_DEPTH it calls
 * scn_fan_leaf(p). A stack, root first, reads main;fan_B1;...;fan_B17;scn_fan_leaf, and
 * the path p (0 .. 2^17-1) is the bits B1..B17, B1 the most significant: the folded
 * stack alone tells which block it allocated.
 *
 * Figures: path p allocates FAN_SIZE(p) = 24 + (p % 1000) bytes once (malloc in
 * scn_fan_leaf); every block stays live until all 2^17 are allocated (the heap peak:
 * every stack holds its block), then scn_fan_release frees the blocks of odd p.
 * alloc_count 131072, alloc_bytes = sum FAN_SIZE(p); live at end: the even p.
 */
#define _GNU_SOURCE
#include <stdlib.h>

#include "wl_common.h"

#define FAN_DEPTH 17
#define FAN_PATHS (1u << FAN_DEPTH)
#define FAN_SIZE(p) (24 + (p) % 1000)

static void *fan_blocks[FAN_PATHS];

WL_SCENARIO void scn_fan_leaf(unsigned p)
{
	void *b = malloc(wl_opaque_size(FAN_SIZE(p)));

	wl_sink(b);
	fan_blocks[p] = b;
}

static WL_SCENARIO void fan_1(int d, unsigned p);

/* The empty asm after each call keeps it out of tail position: every level keeps its frame. */
static WL_SCENARIO void fan_0(int d, unsigned p)
{
	p <<= 1;
	if (d == FAN_DEPTH) {
		scn_fan_leaf(p);
		__asm__ volatile("" ::: "memory");
		return;
	}
	fan_0(d + 1, p);
	fan_1(d + 1, p);
	__asm__ volatile("" ::: "memory");
}

static WL_SCENARIO void fan_1(int d, unsigned p)
{
	p = (p << 1) | 1;
	if (d == FAN_DEPTH) {
		scn_fan_leaf(p);
		__asm__ volatile("" ::: "memory");
		return;
	}
	fan_0(d + 1, p);
	fan_1(d + 1, p);
	__asm__ volatile("" ::: "memory");
}

WL_SCENARIO void scn_fan_release(void)
{
	for (unsigned p = 1; p < FAN_PATHS; p += 2)
		free(fan_blocks[p]);
}

int main(int argc, char **argv)
{
	wl_maybe_wait(argc, argv);
	fan_0(1, 0);
	fan_1(1, 0);
	scn_fan_release();
	return 0;
}
