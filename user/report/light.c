// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * light.c — --light's first screen: no allocator probes, so the heap figures are absent (not
 * zero); what is still measured is said beside what is not.
 */
#include <inttypes.h>
#include <stdio.h>
#include "util/fmt.h"
#include "report/report.h"

void pt_light_text(FILE *f, const struct pt_report *r)
{
	const struct pt_global *g = &r->totals;
	char b1[32], b2[32];

	fprintf(f, "\nPEAK: peak RSS %s, VmHWM %s\n", pt_fmt_bytes(b1, sizeof(b1), (double)g->rss_peak),
		r->vmhwm_bytes ? pt_fmt_bytes(b2, sizeof(b2), (double)r->vmhwm_bytes) : "unknown");
	fprintf(f, "  LIGHT MODE (--light): no allocator probes. Measured: RSS and its attribution by "
		   "page, memory syscalls, invocations and their RSS peaks, malloc heap and pymalloc arenas "
		   "resident at each invocation's end, the timeline (RSS only), the OOM post-mortem.\n"
		   "  Not measured (absent, not zero): the live heap, its peak, and the "
		   "peak/live/allocated/leaked heap stacks (per-allocation views); the heap files are not "
		   "written and profile.pb.gz has rss_peak_space only.\n");
}
