/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * wl_faults — targets for the fault tests (tests/sections/fault.py).
 *
 * Usage: wl_faults spin
 *   An endless malloc(64) + free loop (scn_spin: at most one block live at any time).
 *   About every 50 ms it writes "ops N T\n" to stdout: N operations (malloc + free pairs) so
 *   far, T = CLOCK_MONOTONIC in ns, so the test measures the loop's rate without a clock of
 *   its own. SIGTERM ends it: "wl: spin done" and exit status 0.
 *
 * Usage: wl_faults phases
 *   Three phases, each started by one SIGUSR1 (blocked first, consumed with sigwait; before
 *   each phase the workload writes "wl: phase K ready\n", after it "wl: phase K done\n"):
 *     phase 1 (scn_phase1): 10 x malloc(1500), frees 5 of them       a10/15000 f5/7500
 *     phase 2 (scn_phase2): 10 x malloc(2500), frees 5 of them       a10/25000 f5/12500
 *     phase 3 (scn_phase3): 10 x malloc(3500), frees 5 of them, then frees the 5 blocks
 *                           left by phase 1 and the 5 left by phase 2
 *                                          a10/35000 f(5+5+5)/(17500+7500+12500)
 *   then exits 0. A tracer that saw phase 1 knows phase 1's blocks; one attached later
 *   sees their frees in phase 3 as frees of unknown pointers (errors.unknown_free = 5).
 *
 * No stdio anywhere (see wl_common.h): the output is write(2) of hand-formatted numbers.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdlib.h>
#include <time.h>

#include "wl_common.h"

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static char *fmt_u64(char *p, unsigned long long v)
{
	char tmp[24];
	int n = 0;

	do
		tmp[n++] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	while (n)
		*p++ = tmp[--n];
	return p;
}

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

WL_SCENARIO void scn_spin(void)
{
	void *p = malloc(wl_opaque_size(64));
	wl_sink(p);
	free(p);
}

static int spin(void)
{
	struct sigaction sa;
	unsigned long long ops = 0, last = now_ns();

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term;
	sigaction(SIGTERM, &sa, NULL);
	while (!stop) {
		scn_spin();
		if ((++ops & 255) == 0) {
			unsigned long long t = now_ns();
			if (t - last >= 50000000ull) {
				char line[64], *p = line;

				last = t;
				memcpy(p, "ops ", 4);
				p = fmt_u64(p + 4, ops);
				*p++ = ' ';
				p = fmt_u64(p, t);
				*p++ = '\n';
				*p = 0;
				wl_say(1, line);
			}
		}
	}
	wl_say(1, "wl: spin done\n");
	return 0;
}

static void *held[3][10];

static inline __attribute__((always_inline)) void phase_body(int k, size_t size)
{
	for (int j = 0; j < 10; j++) {
		held[k][j] = malloc(wl_opaque_size(size));
		wl_sink(held[k][j]);
	}
	for (int j = 5; j < 10; j++)
		free(held[k][j]);
}

WL_SCENARIO void scn_phase1(void) { phase_body(0, 1500); }
WL_SCENARIO void scn_phase2(void) { phase_body(1, 2500); }

WL_SCENARIO void scn_phase3(void)
{
	phase_body(2, 3500);
	for (int k = 0; k < 2; k++)
		for (int j = 0; j < 5; j++)
			free(held[k][j]);
}

static int phases(void)
{
	static void (*const fn[3])(void) = { scn_phase1, scn_phase2, scn_phase3 };
	static const char *const ready[3] = { "wl: phase 1 ready\n", "wl: phase 2 ready\n",
					      "wl: phase 3 ready\n" };
	static const char *const done[3] = { "wl: phase 1 done\n", "wl: phase 2 done\n",
					     "wl: phase 3 done\n" };
	sigset_t set;
	int sig;

	wl_block_signal(&set, SIGUSR1);
	for (int k = 0; k < 3; k++) {
		wl_say(1, ready[k]);
		while (sigwait(&set, &sig) != 0 || sig != SIGUSR1)
			;
		fn[k]();
		wl_say(1, done[k]);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "spin") == 0)
		return spin();
	if (argc == 2 && strcmp(argv[1], "phases") == 0)
		return phases();
	wl_say(2, "usage: wl_faults spin | phases\n");
	return 2;
}
