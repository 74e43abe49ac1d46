/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* invend.h — the arenas read at an invocation's end (the session takes the reading a moment
 * after the end, invocation/stream.h). */
#ifndef PEAKTRACE_ARENAS_INVEND_H
#define PEAKTRACE_ARENAS_INVEND_H

#include <stdint.h>
#include <sys/types.h>
#include "bpf/peaktrace.h"
#include "invocation/invocation.h"

/* rec's arena figures now (arena_live, arena_resident, arena_retained; arena_read), and the change
 * in what is retained against the last record measured among before[0..nbefore). 0 or -errno
 * (rec untouched). */
int pt_arenas_inv_end(struct pt_inv_record *rec, const struct pt_inv_record *before, uint32_t nbefore,
		      pid_t pid, int arenas_fd, const struct pt_global *g);

#endif
