// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* stop.c — the stop request (stop.h). */
#include <signal.h>
#include <time.h>
#include "util/stop.h"

static volatile sig_atomic_t stop_sig;

void pt_stop_request(int sig)
{
	if (!stop_sig)
		stop_sig = sig;
}

int pt_stop_requested(void)
{
	return stop_sig;
}

uint64_t pt_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}
