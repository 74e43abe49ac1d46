/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * follow.h — the sandbox coordinator (--follow, several -p): one full session per traced
 * process image, each a child peaktrace attached to it, sharing one sandbox map; new processes
 * are held at their exec until their session traces them.
 */
#ifndef PEAKTRACE_FOLLOW_H
#define PEAKTRACE_FOLLOW_H

#include "cli.h"
#include "session.h"

/* Run the whole sandbox; returns the exit code. argv: peaktrace's own (the sessions get the
 * same options). */
int pt_follow_run(const struct pt_options *opt, int argc, char **argv);

/* A spare session's side of the order (session.h): the options it was started with, then the
 * order's process, slot and directory; preloaded once its BPF object is loaded without a target. */
struct pt_spare {
	struct pt_options opt;
	char dir[4096];
	bool preloaded;
};
/* One byte to the coordinator on the ready fd (PT_SPARE_LOADED, PT_SPARE_UNFIT). */
void pt_spare_say(int ready_fd, char c);
/* Wait for the order on spare_fd (closed once read): 0 with sp's options those of opt for the
 * order's process, slot and directory; -1 at end of file (the coordinator is done with us). */
int pt_spare_order_read(int spare_fd, const struct pt_options *opt, struct pt_spare *sp);

#endif
