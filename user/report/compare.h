/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * compare.h — --compare-env: the same launched command traced again with a setting in its
 * environment (MALLOC_MMAP_THRESHOLD_=32768, MALLOC_ARENA_MAX=2, ...), both results side by side.
 * Each run is a child peaktrace writing its usual reports plus a small summary file.
 */
#ifndef PEAKTRACE_COMPARE_H
#define PEAKTRACE_COMPARE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct pt_report;

struct pt_summary {
	bool ok;                 /* the file was read */
	int exit_status;         /* the target's; 128 + signal when killed */
	double wall_s;           /* traced time */
	int64_t rss_peak, vmhwm, rss_last, heap_peak, live_end;
	int64_t alloc_count, mmap_count, munmap_count;
	bool arenas;             /* arena figures present */
	int64_t arena_count, arena_resident, arena_retained;
	int64_t invocations, inv_rss_peak_max, inv_retained_last;
	double inv_p50_ms;       /* median invocation duration (traced: indicative) */
};

#define PT_MAX_COMPARE 4

/* The summary of a finished run (key<TAB>value lines). Returns 0 or -errno. */
int pt_summary_write(const char *path, const struct pt_report *r);
int pt_summary_read(const char *path, struct pt_summary *s);

/* The side-by-side table: column 0 is the baseline. Pure, unit tested. */
void pt_compare_print(FILE *f, const char *const *labels, const struct pt_summary *s, int n);

/* Run `self [opts] --compare-child -o OUT/run-K [--target-env SETTING] -- cmd` for the baseline
 * and each setting, then print the table (stdout and OUT/compare.txt). Returns an exit code. */
int pt_compare_run(const char *self, char **opts, int nopts, char **cmd, const char *outdir,
		   char **settings, int nsettings);

#endif
