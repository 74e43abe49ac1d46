/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * wl_sleep — hold a few known blocks, then sleep until SIGTERM or SIGINT; exit 0.
 *
 * Usage: wl_sleep [--wait]     (--wait: block until SIGUSR1 first, see wl_common.h)
 *
 * For the duration (-d), SIGINT and "target left running" tests. SIGTERM and SIGINT
 * are blocked and consumed with sigwait(), so the exit status is 0 either way.
 * Once its blocks are allocated it writes WL_SLEEP_MARK to stdout (write(2)).
 *
 * Figures: scn_sleep_live   a3/37035 l3/37035 (3 x 12345, never freed)
 *          scn_sleep_churn  a1/54321 f1/54321
 * peak_live_bytes = 91356 = 37035 + 54321, reached once, when the churn block is
 * allocated (peak: scn_sleep_live p3/37035, scn_sleep_churn p1/54321).
 */
#define _GNU_SOURCE
#include <stdlib.h>

#include "wl_common.h"

#define WL_SLEEP_MARK "wl: sleeping\n"

/* a3/37035 l3/37035 */
WL_SCENARIO void scn_sleep_live(void)
{
	for (int i = 0; i < 3; i++)
		wl_sink(malloc(12345));
}

/* a1/54321 f1/54321 */
WL_SCENARIO void scn_sleep_churn(void)
{
	void *p = malloc(54321);
	wl_sink(p);
	free(p);
}

int main(int argc, char **argv)
{
	sigset_t set;
	int sig;

	/* Block the termination signals before anything else (and before --wait's
	 * SIGUSR1 wait) so a signal arriving early is still consumed by sigwait(). */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, NULL);

	wl_maybe_wait(argc, argv);

	scn_sleep_live();
	scn_sleep_churn();
	wl_say(1, WL_SLEEP_MARK);
	while (sigwait(&set, &sig) != 0)
		;
	return 0;
}
