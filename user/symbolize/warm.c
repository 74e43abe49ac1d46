// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* warm.c — the symbol tables of everything a process maps, loaded ahead of need (warm.h). */
#include <string.h>
#include "util/stop.h"
#include "target/procmaps.h"
#include "symbolize/warm.h"

void pt_sym_warm(struct pt_symbolizer *sym, pid_t pid, void (*between)(void *arg), void *arg)
{
	struct pt_maps maps = { 0 };
	struct pt_symres res;
	int k;

	if (pt_maps_read(pid, &maps))
		return;
	for (k = 0; k < maps.n; k++) {
		if (!strchr(maps.m[k].perms, 'x') || !maps.m[k].path || maps.m[k].path[0] != '/')
			continue;
		if (pt_stop_requested())
			break;   /* the rest load lazily, for the report (util/stop.h) */
		pt_sym_resolve(sym, maps.m[k].start, &res);
		if (between)
			between(arg);
	}
	pt_maps_free(&maps);
}
