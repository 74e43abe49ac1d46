// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * summary.c — a finished run's summary (key<TAB>value lines) for --compare-env's parent,
 * which reads it back (compare/compare.h pt_summary_read) and prices each setting.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "util/outdir.h"
#include "bpf/inv.h"
#include "report/report.h"

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return (a > b) - (a < b);
}

int pt_summary_write(const char *path, const struct pt_report *r)
{
	const struct pt_global *g = &r->totals;
	int64_t inv_peak = 0, inv_ret = 0, ninv = 0;
	double dur[64];
	int ndur = 0;
	FILE *f = pt_user_fopen(path);
	uint32_t k;

	if (!f)
		return -errno;
	for (k = 0; r->invs && k < r->invs->n; k++) {
		const struct pt_inv_record *ir = &r->invs->r[k];

		if (!ir->seq)
			continue;
		ninv++;
		if (ndur < 64 && ir->end_ns > ir->start_ns)
			dur[ndur++] = (double)(ir->end_ns - ir->start_ns);
		if (ir->rss_peak > inv_peak)
			inv_peak = ir->rss_peak;
		if (ir->arena_read)
			inv_ret = ir->arena_retained;
	}
	fprintf(f, "exit_status\t%d\n", r->exit_signal ? 128 + r->exit_signal : r->exit_status);
	fprintf(f, "wall_ns\t%" PRIu64 "\n", r->duration_ns);
	fprintf(f, "rss_peak\t%" PRId64 "\n", (int64_t)g->rss_peak);
	fprintf(f, "vmhwm\t%" PRIu64 "\n", r->vmhwm_bytes);
	fprintf(f, "rss_last\t%" PRId64 "\n",
		(int64_t)pt_rss_total(g));
	fprintf(f, "heap_peak\t%" PRId64 "\n", (int64_t)g->peak_bytes);
	fprintf(f, "live_end\t%" PRId64 "\n", (int64_t)g->live_bytes);
	fprintf(f, "alloc_count\t%" PRIu64 "\n", (uint64_t)g->alloc_count);
	fprintf(f, "mmap_count\t%" PRIu64 "\n", (uint64_t)g->mmap_count);
	fprintf(f, "munmap_count\t%" PRIu64 "\n", (uint64_t)g->munmap_count);
	if (r->arenas.collected && r->arenas.memory_read) {
		fprintf(f, "arena_count\t%d\n", r->arenas.nrows);
		fprintf(f, "arena_resident\t%" PRId64 "\n", r->arenas.resident_bytes);
		fprintf(f, "arena_retained\t%" PRId64 "\n", r->arenas.retained_bytes);
	}
	/* The advice that is an environment setting: the comparing parent prices it. */
	for (k = 0; r->arenas.collected && k < (uint32_t)r->arenas.nadvice; k++)
		if (strchr(r->arenas.advice[k].setting, '=') && !strchr(r->arenas.advice[k].setting, ' '))
			fprintf(f, "advice\t%s\n", r->arenas.advice[k].setting);
	if (ninv) {
		fprintf(f, "invocations\t%" PRId64 "\n", ninv);
		fprintf(f, "inv_rss_peak_max\t%" PRId64 "\n", inv_peak);
		fprintf(f, "inv_retained_last\t%" PRId64 "\n", inv_ret);
		if (ndur) {
			qsort(dur, ndur, sizeof(dur[0]), cmp_double);
			fprintf(f, "inv_duration_p50_ns\t%.0f\n", dur[ndur / 2]);
		}
	}
	return fclose(f) ? -errno : 0;
}
