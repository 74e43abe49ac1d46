/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* status.h — the live status line on a terminal (-i SECONDS): the kernel's running figures. */
#ifndef PEAKTRACE_UTIL_STATUS_H
#define PEAKTRACE_UTIL_STATUS_H

#include <stdint.h>
#include "bpf/peaktrace.h"

/* One line on stderr, over the previous one: live and peak heap, RSS, the allocation rate since
 * the last line (*last_allocs at *last_ns, both updated). */
void pt_status_line(const struct pt_global *g, uint64_t *last_allocs, uint64_t *last_ns);

#endif
