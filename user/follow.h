/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * follow.h — the sandbox coordinator (--follow, several -p): one full session per traced
 * process image, each a child peaktrace attached to it, sharing one sandbox map; new processes
 * are held at their exec until their session traces them.
 */
#ifndef PEAKTRACE_FOLLOW_H
#define PEAKTRACE_FOLLOW_H

#include "cli.h"

/* Run the whole sandbox; returns the exit code. argv: peaktrace's own (the sessions get the
 * same options). */
int pt_follow_run(const struct pt_options *opt, int argc, char **argv);

#endif
