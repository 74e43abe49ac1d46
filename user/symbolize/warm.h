/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* warm.h — the symbol tables of everything a process maps, loaded ahead of need. */
#ifndef PEAKTRACE_SYMBOLIZE_WARM_H
#define PEAKTRACE_SYMBOLIZE_WARM_H

#include <sys/types.h>
#include "symbolize/symbolize.h"

/* Load the symbol tables of every executable file pid maps now, so that symbolizing the first
 * invocation's stacks does not stall event handling; between(arg) after each object (NULL:
 * nothing). Stops early once a stop is requested (util/stop.h): the rest load lazily. */
void pt_sym_warm(struct pt_symbolizer *sym, pid_t pid, void (*between)(void *arg), void *arg);

#endif
