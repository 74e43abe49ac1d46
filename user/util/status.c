// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* status.c — the live status line (status.h). */
#include <inttypes.h>
#include <stdio.h>
#include <time.h>
#include "bpf/inv.h"
#include "util/fmt.h"
#include "util/status.h"

void pt_status_line(const struct pt_global *g, uint64_t *last_allocs, uint64_t *last_ns)
{
	struct timespec ts;
	uint64_t now, allocs = g->alloc_count;
	double rate;
	char b1[32], b2[32], b3[32];

	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = ts.tv_sec * 1000000000ULL + ts.tv_nsec;
	rate = (double)(allocs - *last_allocs) * 1e9 / (double)(now - *last_ns + 1);
	fprintf(stderr, "\r\033[Klive %s (%" PRId64 " blocks)  peak %s  rss %s  %.0f allocs/s",
		pt_fmt_bytes(b1, sizeof(b1), (double)g->live_bytes), (int64_t)g->live_count,
		pt_fmt_bytes(b2, sizeof(b2), (double)g->peak_bytes),
		pt_fmt_bytes(b3, sizeof(b3),
			     (double)pt_rss_total(g)),
		rate);
	*last_allocs = allocs;
	*last_ns = now;
}
