/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * spare.h — the order between the --follow coordinator (follow.c) and a spare session
 * (session.c): both sides of the protocol, so neither includes the other.
 */
#ifndef PEAKTRACE_SPARE_H
#define PEAKTRACE_SPARE_H

#include <stdbool.h>
#include "cli.h"

/*
 * A spare session (--follow, user/follow.c): started with --spare-fd before the coordinator
 * knows which process it will trace, it opens and loads its BPF programs (their target and
 * sandbox slot left to be written after the load), writes PT_SPARE_LOADED on its --ready-fd and
 * waits for one order on the spare fd. Then it is an ordinary session of that process (-p PID
 * [--held] -o DIR --sandbox-slot SLOT): "1" on the ready fd once it traces. A process whose
 * allocator needs other BPF settings than the ones it loaded with (not glibc) gets
 * PT_SPARE_UNFIT and the spare exits without a report directory; so does a spare that reads
 * end of file (never used: exit 0).
 */
struct pt_spare_order {
	int pid;
	int slot;
	int held;
	char dir[4096];            /* the report directory, NUL-terminated */
};
#define PT_SPARE_LOADED 'L'
#define PT_SPARE_UNFIT 'U'

/* A spare session's side of the order: the options it was started with, then the
 * order's process, slot and directory; preloaded once its BPF object is loaded without a target. */
struct pt_spare {
	struct pt_options opt;
	char dir[4096];
	bool preloaded;
};
/* One byte to the coordinator on the ready fd (PT_SPARE_LOADED, PT_SPARE_UNFIT). */
void pt_spare_say(int ready_fd, char c);
/* Tracing: "1" to the coordinator (--follow), which holds the process until now; the fd closed. */
void pt_spare_ready(int ready_fd);
/* Wait for the order on spare_fd (closed once read): 0 with sp's options those of opt for the
 * order's process, slot and directory; -1 at end of file (the coordinator is done with us). */
int pt_spare_order_read(int spare_fd, const struct pt_options *opt, struct pt_spare *sp);

#endif
