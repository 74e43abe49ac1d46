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

#define PT_MAX_UNTRACED 16       /* --compare-untraced */
#define PT_MAX_UNTRACED_INV 1024 /* invocation durations kept per setting */
#define PT_MAX_SUM_ADVICE 4

/* The untraced runs of one setting: the command alone, no tracer, so its times are its own. */
struct pt_untraced {
	int runs;                        /* runs finished */
	int failed;                      /* of which did not exit 0 (on their own) */
	int stopped;                     /* of which -d ended (SIGTERM) */
	double wall_s[PT_MAX_UNTRACED];  /* fork to reaped */
	double cpu_s[PT_MAX_UNTRACED];   /* user + system, the command and its reaped descendants */
	int64_t maxrss[PT_MAX_UNTRACED]; /* bytes: ru_maxrss, the largest of those processes */
	int ninv;                        /* Lambda REPORT lines in the command's output, all runs */
	double inv_ms[PT_MAX_UNTRACED_INV];   /* their Duration */
	int64_t max_mem_mb;              /* the largest Max Memory Used among them */
};

struct pt_summary {
	bool ok;                 /* the file was read */
	int exit_status;         /* the target's; 128 + signal when killed */
	double wall_s;           /* traced time */
	int64_t rss_peak, vmhwm, rss_last, heap_peak, live_end;
	int64_t alloc_count, mmap_count, munmap_count;
	bool arenas;             /* arena figures present */
	int64_t arena_count, arena_resident, arena_retained;
	int64_t invocations, inv_rss_peak_max, inv_retained_last;
	double inv_p50_ms;       /* median invocation duration (traced: distorted) */
	char advice[PT_MAX_SUM_ADVICE][64];   /* the run's advice that is a VAR=VALUE setting */
	int nadvice;
	struct pt_untraced u;    /* filled by the comparing parent, not from the file */
};

#define PT_MAX_COMPARE 4

/* The summary of a finished run (report/summary.c writes it). Returns 0 or -errno. */
int pt_summary_read(const char *path, struct pt_summary *s);

/* The side-by-side table: column 0 is the baseline; then each setting's cost as measured and
 * the baseline's advice with its measured cost. Pure, unit tested. */
void pt_compare_print(FILE *f, const char *const *labels, const struct pt_summary *s, int n);

/* Pure, unit tested: ------------------------------------------------------------------------ */

/* A Lambda REPORT line ("REPORT RequestId: ID\tDuration: 71.36 ms\t...Max Memory Used: 33 MB\t"):
 * its Duration and Max Memory Used (-1 if absent). False for any other line. */
bool pt_lambda_report_line(const char *line, double *dur_ms, int64_t *max_mem_mb);
/* A command that is the bundled Lambda host (`.../lambda-host ARGS -- RUNTIME ...`): the number of
 * its words before RUNTIME, else 0. Traced runs put peaktrace there, so the runtime is traced
 * under the host; untraced runs take each invocation's figures from the host's REPORT lines. */
int pt_compare_host_args(char *const *cmd, int ncmd);
/* Median, minimum and maximum of n values (n > 0; v is sorted in place). */
void pt_spread(double *v, int n, double *med, double *lo, double *hi);
/* What setting s costs against base, measured untraced: time per invocation (when both have
 * REPORT lines), wall and CPU time, peak RSS, each with its spread; and the arena retention
 * of the traced runs (bytes are exact under tracing). 0 if nothing was measured untraced. */
int pt_measured_cost(char *buf, size_t len, const struct pt_summary *base, const struct pt_summary *s);

/* Run `self [opts] --compare-child -o OUT/run-K [--target-env SETTING] -- cmd` for the baseline
 * and each setting, then `cmd` alone `untraced` times per setting (interleaved: base, setting,
 * base, ...; its output in OUT/run-K-SETTING/untraced-J.log, the figures in untraced.tsv), then print
 * the table (stdout and OUT/compare.txt); duration (-d, 0: none) ends each untraced run with
 * SIGTERM as it ends the traced ones. Returns an exit code. */
int pt_compare_run(const char *self, char **opts, int nopts, char **cmd, const char *outdir,
		   char **settings, int nsettings, int untraced, double duration);

#endif
