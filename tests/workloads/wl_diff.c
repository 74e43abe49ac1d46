/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * wl_diff — two runs that differ by one allocation site, for `peaktrace diff` (tests/sections/diff.py).
 *
 * Usage: wl_diff [--wait] [extra]
 *
 * Both runs: scn_diff_leak leaks 7,000 bytes (live at the end), scn_diff_base holds 1,000,000
 * bytes at the peak and frees them after it, scn_diff_churn allocates and frees 50 x 2,000
 * bytes before the peak. With "extra", scn_diff_extra also holds 123,456 bytes at the peak
 * (allocated after scn_diff_base's block, freed before it): peak_live_bytes 1,007,000 without,
 * 1,130,456 with; the diff of the two is +123,456 bytes at the peak and in total allocated on
 * scn_diff_extra's stack alone, 0 live at the end, and 0 on every other stack.
 */
#include <stdlib.h>
#include <string.h>

#include "wl_common.h"

WL_SCENARIO void *scn_diff_leak(void)
{
	void *p = malloc(wl_opaque_size(7000));

	wl_sink(p);
	return p;
}

WL_SCENARIO void scn_diff_churn(void)
{
	for (int i = 0; i < 50; i++) {
		void *p = malloc(wl_opaque_size(2000));

		wl_sink(p);
		free(p);
	}
}

WL_SCENARIO void *scn_diff_base(void)
{
	void *p = malloc(wl_opaque_size(1000000));

	wl_sink(p);
	return p;
}

WL_SCENARIO void *scn_diff_extra(void)
{
	void *p = malloc(wl_opaque_size(123456));

	wl_sink(p);
	return p;
}

int main(int argc, char **argv)
{
	int i = wl_maybe_wait(argc, argv);
	int extra = i < argc && strcmp(argv[i], "extra") == 0;
	void *base, *more = NULL;

	scn_diff_leak();
	scn_diff_churn();
	base = scn_diff_base();
	if (extra)
		more = scn_diff_extra();
	/* The peak: base (and extra) live with the leak. */
	free(more);
	free(base);
	wl_say(1, "wl: done\n");
	return 0;
}
