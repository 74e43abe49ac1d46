/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * wl_hostile — a target that names its code to attack the terminal, and holds many blocks.
 *
 * Usage: wl_hostile [--wait]     (--wait: block until SIGUSR1, see wl_common.h)
 *
 * The one allocating function's ELF symbol carries terminal escapes: ESC [31m (red), BEL and
 * ESC [2J (clear screen), as a hostile container's binary may. Every output of peaktrace must
 * show it escaped ("\x1b"), never raw (tests/sections/hostile.py). Its caller's name is markup
 * ("</script><svg onload=alert(1)>&amp;"), which report.html must never carry as markup.
 *
 * Figures (exact): WL_HOSTILE_N = 100,000 blocks of 40 bytes, all live at once, then all
 * freed: alloc 100,000 / 4,000,000 B, free 100,000 / 4,000,000 B, live at end 0, peak live
 * heap 100,000 blocks / 4,000,000 B. With --max-live 1000 the live table cannot hold them:
 * live_table_full counts the blocks it dropped, whose frees then count as unknown_free.
 */
#include <stdlib.h>
#include <sys/prctl.h>

#include "wl_common.h"

#define WL_HOSTILE_N 100000
#define WL_HOSTILE_SIZE 40

static void *blocks[WL_HOSTILE_N];

/* The symbol name, byte for byte: "evil" ESC "[31mRED" BEL ESC "[2J" — quoted for the
 * assembler, which takes any byte in a quoted symbol name. */
WL_SCENARIO void scn_hostile_alloc(int i) __asm__("\"evil\x1b[31mRED\x07\x1b" "[2J\"");
WL_SCENARIO void scn_hostile_alloc(int i)
{
	blocks[i] = malloc(wl_opaque_size(WL_HOSTILE_SIZE));
	wl_sink(blocks[i]);
}

/* The caller, named as markup; the call is not its last act, so it stays a frame of its own. */
WL_SCENARIO void scn_hostile_markup(int i) __asm__("\"</script><svg onload=alert(1)>&amp;\"");
WL_SCENARIO void scn_hostile_markup(int i)
{
	scn_hostile_alloc(i);
	wl_sink(0);
}

int main(int argc, char **argv)
{
	/* The comm too: what attach mode reads from /proc/PID/comm. */
	prctl(PR_SET_NAME, "wl\x1b[2Jhostile", 0, 0, 0);
	wl_maybe_wait(argc, argv);
	for (int i = 0; i < WL_HOSTILE_N; i++)
		scn_hostile_markup(i);
	for (int i = 0; i < WL_HOSTILE_N; i++)
		free(blocks[i]);
	wl_say(1, "wl_hostile: done\n");
	return 0;
}
