/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * stop.h — the stop request, for long loops to check cheaply (a leaf: includes nothing of
 * peaktrace). The first SIGINT/SIGTERM/SIGHUP asks for the orderly stop (target/launch.c's
 * handler calls pt_stop_request); a loop that reads what the target controls (its perf map,
 * its ELF files) while tracing checks pt_stop_requested between bounded steps and returns
 * with what it has, so the poll loop ends, the probes are detached and the report is written
 * within a second whatever was being read. Readers that run after the stop (for the report)
 * cannot bail on it (every Ctrl-C report would lose its names): they have budgets of their
 * own; a second signal exits at once.
 */
#ifndef PEAKTRACE_UTIL_STOP_H
#define PEAKTRACE_UTIL_STOP_H
#include <stdint.h>

/* Async-signal-safe: records sig (the first one kept). */
void pt_stop_request(int sig);
/* The signal that asked for the stop, 0 if none did. */
int pt_stop_requested(void);

/* CLOCK_MONOTONIC in ns, for the readers' time budgets. */
uint64_t pt_mono_ns(void);

/*
 * A bounded step's budget: a deadline, and whether a stop request that arrives while it runs
 * ends it (one asked before it began does not: that step is part of the orderly stop).
 */
struct pt_budget {
	uint64_t deadline_ns;
	int stop_at_start;
};

static inline void pt_budget_start(struct pt_budget *b, uint64_t ns)
{
	b->deadline_ns = pt_mono_ns() + ns;
	b->stop_at_start = pt_stop_requested();
}

/* 1 when the step must end now: its time is up (2) or a stop was asked since it began (1). */
static inline int pt_budget_over(const struct pt_budget *b)
{
	if (!b->stop_at_start && pt_stop_requested())
		return 1;
	return pt_mono_ns() >= b->deadline_ns ? 2 : 0;
}
#endif
