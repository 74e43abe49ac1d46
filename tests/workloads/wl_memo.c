/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * wl_memo — two call paths whose page faults look alike from the registers, for the light
 * section's memo case (tests/sections/light.py). fill_a and fill_b are the same code but for a
 * constant, called from the same loop in main: each calls touch(), which writes one byte of a
 * new page. So every fault happens at the same instruction, with the same rsp and rbp, in
 * touch; only the return address in the caller's frame (fill_a or fill_b) tells them apart, and
 * the faults alternate between the two. A stack memo keyed on the registers alone would give
 * fill_b's pages to fill_a (or the reverse); a full unwind gives each its own.
 *
 * Usage: wl_memo [--wait] LOG
 *   prctl(PR_SET_THP_DISABLE) (one 4 KiB page per fault), then A = 3 MiB and B = 5 MiB mapped
 *   (not touched); pages k = 0, 1, ... of A through fill_a and of B through fill_b, alternating.
 *   Logs "fill_a BYTES" and "fill_b BYTES" (the pages each wrote, counted here: the truth),
 *   "grew BYTES" (RssAnon's growth over the loop, which must equal their sum), and exits 0
 *   with both regions still mapped.
 * No stdio (wl_common.h): numbers are formatted by hand.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>

#include "wl_common.h"

#define PAGE 4096UL
#define A_PAGES 768UL    /* 3 MiB */
#define B_PAGES 1280UL   /* 5 MiB */

static int log_fd = -1;
static volatile long sink;

/* The faulting frame both paths share: one byte of a new page. */
static WL_SCENARIO int touch(char *p, char c)
{
	*(volatile char *)p = c;
	return c;
}

/* The two callers: the same frame layout (noipa: neither merged nor specialised); the add after
 * the call keeps it a call, not a tail jump, so each stays on the stack under touch. */
static WL_SCENARIO void fill_a(char *p)
{
	sink += touch(p, 'a');
}

static WL_SCENARIO void fill_b(char *p)
{
	sink += touch(p, 'b');
}

static char *map_anon(size_t len)
{
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		exit(2);
	return p;
}

int main(int argc, char **argv)
{
	int a = wl_maybe_wait(argc, argv);
	char *ra, *rb;
	long before, na = 0, nb = 0;
	unsigned long k;

	if (argc - a < 1)
		return 2;
	log_fd = open(argv[a], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (log_fd < 0)
		return 2;
	prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
	ra = map_anon(A_PAGES * PAGE);
	rb = map_anon(B_PAGES * PAGE);
	wl_rss_anon();
	before = wl_rss_anon();
	for (k = 0; k < A_PAGES || k < B_PAGES; k++) {
		if (k < A_PAGES) {
			fill_a(ra + k * PAGE);
			na++;
		}
		if (k < B_PAGES) {
			fill_b(rb + k * PAGE);
			nb++;
		}
	}
	wl_say_val(log_fd, "grew", wl_rss_anon() - before);
	wl_say_val(log_fd, "fill_a", na * (long)PAGE);
	wl_say_val(log_fd, "fill_b", nb * (long)PAGE);
	return 0;
}
