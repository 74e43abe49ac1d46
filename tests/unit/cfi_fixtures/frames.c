// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * frames.c — CFI fixture for tests/unit/test_cfi.c, compiled by the test at run time into small
 * shared objects (-nostdlib, so only this file's CFI is in them) in several flavors:
 * .eh_frame, .debug_frame only, compressed .debug_frame, frame pointers, no CFI at all.
 * Each function exists to make the compiler emit one kind of rule; readelf is the judge.
 */
#define NOIPA __attribute__((noipa))

volatile long sink;

/* Leaf: no rule beyond the CIE's initial one (readelf prints no table for its FDE). */
NOIPA long leaf(long x)
{
	return x * 3 + 1;
}

/* Every callee-saved register live across calls: push r15..rbx, so rbp at CFA-N. */
NOIPA long many_saved(long a, long b, long c, long d)
{
	long x = leaf(a), y = leaf(b), z = leaf(c), w = leaf(d), v = leaf(a + b);

	sink = leaf(x + y);
	return x * y + z * w + v + leaf(z - w);
}

/* Variable-length array: rbp becomes the frame pointer, CFA = rbp + 16. */
NOIPA long vla(int n)
{
	volatile char buf[n];

	buf[0] = (char)n;
	buf[n - 1] = 2;
	return leaf(buf[0] + buf[n - 1]);
}

/* Several exits: GCC brackets each epilogue with remember_state/restore_state. */
NOIPA long exits(long a, long b)
{
	long r = leaf(a);

	if (r > 100)
		return leaf(r + b) + 1;
	if (r > 50)
		return leaf(r - b) + 2;
	sink = r;
	return leaf(b) + r;
}

/* Over-aligned local: stack realignment, CFA based on r10 then a DWARF expression, rbp saved
 * through an expression (all unsupported by the table format, by design). */
NOIPA long realign(long a)
{
	long __attribute__((aligned(64))) buf[8];

	buf[0] = a;
	sink = (long)buf;
	return leaf(buf[0]) + buf[0];
}

/* A frame larger than 32 KiB: CFA offset outside s16. */
NOIPA long big_frame(long a)
{
	volatile char buf[100000];

	buf[a & 0xffff] = (char)a;
	return leaf(buf[(a + 1) & 0xffff]);
}

NOIPA __attribute__((noreturn)) void die(long code)
{
	for (;;)
		sink = code;
}

/* A call to a noreturn function as the last instruction. */
NOIPA long ends_in_noreturn(long a)
{
	if (a == 42)
		die(leaf(a));
	return leaf(a + 1);
}

/* Over-aligned local and a variable-length array: GCC realigns through a dynamic realign
 * argument pointer (DRAP): CFA = r10, then DWARF expressions for the CFA and rbp. */
NOIPA long realign_vla(int n)
{
	long __attribute__((aligned(64))) buf[8];
	volatile char v[n];

	buf[0] = n;
	v[0] = 1;
	sink = (long)buf + v[0];
	return leaf(buf[0]);
}
