// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* invend.c — the arenas read at an invocation's end (invend.h). */
#include "arenas/arenas.h"
#include "arenas/invend.h"

int pt_arenas_inv_end(struct pt_inv_record *rec, const struct pt_inv_record *before, uint32_t nbefore,
		      pid_t pid, int arenas_fd, const struct pt_global *g)
{
	int err = pt_arenas_totals(pid, arenas_fd, g, &rec->arena_live, &rec->arena_resident,
				   &rec->arena_retained);

	if (err)
		return err;
	rec->arena_read = true;
	/* Against the last invocation that was measured. */
	for (uint32_t k = nbefore; k-- > 0;) {
		if (before[k].arena_read) {
			rec->arena_retained_change = rec->arena_retained - before[k].arena_retained;
			break;
		}
	}
	return 0;
}
