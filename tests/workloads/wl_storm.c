/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * wl_storm — a fork/exec storm around a parent whose own allocations are known exactly
 * (tests/sections/fault.py, case fault/storm).
 *
 * Usage: wl_storm [--wait] ROUNDS CHILDREN     (--wait: block until SIGUSR1, see wl_common.h)
 *
 * Each round r (0..ROUNDS-1), in the parent:
 *   1. scn_storm_keep:   malloc(KEEP) kept until the end                 a1/2048 per round
 *   2. CHILDREN forks; child c mallocs and frees CHILD_OPS blocks of 3000 bytes
 *      (scn_storm_child), then execs /bin/true (even c) or _exit(0)s (odd c). The children
 *      are other processes: peaktrace traces one PID, so none of this is in the report.
 *   3. scn_storm_busy:   while the children run, PARENT_OPS x (malloc(BUSY) + free)
 *                                                                        a/f 40 x 4000 per round
 *   4. every child reaped with waitpid(); a child that did not exit 0 makes the parent
 *      exit 3 (peaktrace's probes must not harm them either).
 * At the end, scn_storm_release frees the first half (ROUNDS/2) of the kept blocks.
 *
 * Parent totals: alloc_count = R*(1+40), alloc_bytes = R*(2048+40*4000),
 * free_count = 40*R + R/2, free_bytes = 40*4000*R + (R/2)*2048, live = R - R/2 blocks of 2048.
 * Peak: the live heap only grows by kept blocks; its maximum is reached (last, R-1 kept +
 * one busy block) in the last round's busy loop: peak_live_bytes = R*2048 + 4000.
 * fork() and waitpid() allocate nothing in the parent (glibc's fork takes the malloc
 * locks, no memory); no stdio anywhere (wl_common.h).
 */
#include <stdlib.h>
#include <sys/types.h>
#include <sys/wait.h>

#include "wl_common.h"

#define KEEP 2048
#define BUSY 4000
#define CHILD_SIZE 3000
#define PARENT_OPS 40
#define CHILD_OPS 25
#define MAX_ROUNDS 256
#define MAX_CHILDREN 64

static void *kept[MAX_ROUNDS];

WL_SCENARIO void scn_storm_keep(int r)
{
	kept[r] = malloc(wl_opaque_size(KEEP));
	wl_sink(kept[r]);
}

WL_SCENARIO void scn_storm_busy(void)
{
	for (int k = 0; k < PARENT_OPS; k++) {
		void *p = malloc(wl_opaque_size(BUSY));
		wl_sink(p);
		free(p);
	}
}

WL_SCENARIO void scn_storm_child(void)
{
	for (int k = 0; k < CHILD_OPS; k++) {
		void *p = malloc(wl_opaque_size(CHILD_SIZE));
		wl_sink(p);
		free(p);
	}
}

WL_SCENARIO void scn_storm_release(int n)
{
	for (int r = 0; r < n; r++)
		free(kept[r]);
}

static int num(const char *s)
{
	int v = 0;
	while (*s >= '0' && *s <= '9')
		v = v * 10 + (*s++ - '0');
	return v;
}

int main(int argc, char **argv)
{
	static char *const true_argv[] = { "true", NULL };
	int i = wl_maybe_wait(argc, argv);
	int rounds, children;
	pid_t kids[MAX_CHILDREN];

	if (argc - i < 2)
		return 2;
	rounds = num(argv[i]);
	children = num(argv[i + 1]);
	if (rounds < 1 || rounds > MAX_ROUNDS || children < 1 || children > MAX_CHILDREN)
		return 2;
	for (int r = 0; r < rounds; r++) {
		scn_storm_keep(r);
		for (int c = 0; c < children; c++) {
			kids[c] = fork();
			if (kids[c] < 0)
				return 4;
			if (kids[c] == 0) {
				scn_storm_child();
				if (c % 2 == 0)
					execv("/bin/true", true_argv);
				_exit(0);
			}
		}
		scn_storm_busy();
		for (int c = 0; c < children; c++) {
			int st;
			if (waitpid(kids[c], &st, 0) != kids[c] || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
				return 3;
		}
	}
	scn_storm_release(rounds / 2);
	wl_say(1, "wl: storm done\n");
	return 0;
}
