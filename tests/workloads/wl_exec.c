/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * wl_exec — a process that execs another program, with known allocations in each image
 * (tests/sections/exec.py):
 *
 *   wl_exec [--wait] first NEXT   image one: EXEC_ONE_N blocks of EXEC_ONE_SIZE bytes from
 *                                 exec_stage_one (kept), then execv(NEXT, {NEXT, "second"}),
 *                                 with --wait: {NEXT, "--wait", "second"} (it waits again)
 *   wl_exec second                image two: EXEC_TWO_N blocks of EXEC_TWO_SIZE bytes from
 *                                 exec_stage_two (kept), then exits 0
 *
 * NEXT is another build of this file (wl_exec_nofp, or a static one): a different image, its
 * own addresses. The sizes are distinct from anything the C runtime allocates.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "wl_common.h"

#define EXEC_ONE_N 5
#define EXEC_ONE_SIZE 300001
#define EXEC_TWO_N 7
#define EXEC_TWO_SIZE 200003

static void *kept[16];

static WL_SCENARIO void exec_stage_one(void)
{
	for (int i = 0; i < EXEC_ONE_N; i++) {
		kept[i] = malloc(wl_opaque_size(EXEC_ONE_SIZE));
		memset(kept[i], 1, EXEC_ONE_SIZE);
		wl_sink(kept[i]);
	}
}

static WL_SCENARIO void exec_stage_two(void)
{
	for (int i = 0; i < EXEC_TWO_N; i++) {
		kept[i] = malloc(wl_opaque_size(EXEC_TWO_SIZE));
		memset(kept[i], 2, EXEC_TWO_SIZE);
		wl_sink(kept[i]);
	}
}

int main(int argc, char **argv)
{
	int i = wl_maybe_wait(argc, argv);

	if (i < argc && !strcmp(argv[i], "second")) {
		exec_stage_two();
		wl_say(1, "wl: second done\n");
		return 0;
	}
	if (i + 1 < argc && !strcmp(argv[i], "first")) {
		/* Waiting again in the new image (attach mode): the tracer handles the exec while
		 * the new image is still there to be read. */
		char *next[] = { argv[i + 1], i > 1 ? "--wait" : "second", "second", NULL };

		exec_stage_one();
		wl_say(1, "wl: first done, exec\n");
		execv(next[0], next);
		wl_say(2, "wl: exec failed\n");
		return 1;
	}
	wl_say(2, "usage: wl_exec [--wait] first NEXT | second\n");
	return 2;
}
