// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * compare.c — --compare-env. Every run is a fresh peaktrace process (a run leaves nothing behind
 * in the kernel or in this process that could bias the next one); they run one after the other,
 * so the machine is the same for both but not at the same moment: the byte figures are what
 * the comparison is for, the times are indicative.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "util/fmt.h"
#include "util/wake.h"
#include "bpf/inv.h"
#include "report/compare.h"
#include "report/report.h"

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return (a > b) - (a < b);
}

int pt_summary_write(const char *path, const struct pt_report *r)
{
	const struct pt_global *g = &r->g;
	int64_t inv_peak = 0, inv_ret = 0, ninv = 0;
	double dur[64];
	int ndur = 0;
	FILE *f = fopen(path, "w");
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
	if (r->ar.collected && r->ar.memory_read) {
		fprintf(f, "arena_count\t%d\n", r->ar.nrows);
		fprintf(f, "arena_resident\t%" PRId64 "\n", r->ar.resident_bytes);
		fprintf(f, "arena_retained\t%" PRId64 "\n", r->ar.retained_bytes);
	}
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

int pt_summary_read(const char *path, struct pt_summary *s)
{
	char line[256], key[64];
	long long v;
	FILE *f = fopen(path, "r");

	memset(s, 0, sizeof(*s));
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%63s %lld", key, &v) != 2)
			continue;
#define KEY(name, field) if (!strcmp(key, name)) s->field = v
		KEY("exit_status", exit_status);
		KEY("rss_peak", rss_peak);
		KEY("vmhwm", vmhwm);
		KEY("rss_last", rss_last);
		KEY("heap_peak", heap_peak);
		KEY("live_end", live_end);
		KEY("alloc_count", alloc_count);
		KEY("mmap_count", mmap_count);
		KEY("munmap_count", munmap_count);
		KEY("arena_count", arena_count);
		KEY("arena_resident", arena_resident);
		KEY("arena_retained", arena_retained);
		KEY("invocations", invocations);
		KEY("inv_rss_peak_max", inv_rss_peak_max);
		KEY("inv_retained_last", inv_retained_last);
#undef KEY
		if (!strcmp(key, "inv_duration_p50_ns"))
			s->inv_p50_ms = (double)v / 1e6;
		if (!strcmp(key, "wall_ns"))
			s->wall_s = (double)v / 1e9;
		if (!strcmp(key, "arena_resident"))
			s->arenas = true;
	}
	fclose(f);
	s->ok = true;
	return 0;
}

enum { FMT_BYTES, FMT_COUNT, FMT_SECONDS };

static void cell(char *buf, size_t len, int fmt, double v)
{
	if (fmt == FMT_BYTES)
		pt_fmt_bytes(buf, len, v);
	else if (fmt == FMT_SECONDS)
		snprintf(buf, len, "%.3f s", v);
	else
		snprintf(buf, len, "%.0f", v);
}

void pt_compare_print(FILE *f, const char *const *labels, const struct pt_summary *s, int n)
{
	static const struct {
		const char *name;
		int fmt;
		size_t off;
		bool arena, inv;
	} rows[] = {
#define ROW(n, fmt, field, a, i) { n, fmt, offsetof(struct pt_summary, field), a, i }
		ROW("peak RSS", FMT_BYTES, rss_peak, false, false),
		ROW("VmHWM (high-water mark)", FMT_BYTES, vmhwm, false, false),
		ROW("RSS at the end", FMT_BYTES, rss_last, false, false),
		ROW("peak live heap", FMT_BYTES, heap_peak, false, false),
		ROW("live heap at the end", FMT_BYTES, live_end, false, false),
		ROW("arenas", FMT_COUNT, arena_count, true, false),
		ROW("arena resident at the end", FMT_BYTES, arena_resident, true, false),
		ROW("arena retained at the end", FMT_BYTES, arena_retained, true, false),
		ROW("invocations", FMT_COUNT, invocations, false, true),
		ROW("max invocation peak RSS", FMT_BYTES, inv_rss_peak_max, false, true),
		ROW("retained after the last one", FMT_BYTES, inv_retained_last, false, true),
		ROW("allocations", FMT_COUNT, alloc_count, false, false),
		ROW("mmap calls", FMT_COUNT, mmap_count, false, false),
		ROW("munmap calls", FMT_COUNT, munmap_count, false, false),
#undef ROW
	};
	char b[64];
	size_t r;
	int k;
	bool any_arena = false, any_inv = false;

	for (k = 0; k < n; k++) {
		any_arena |= s[k].arenas;
		any_inv |= s[k].invocations > 0;
	}
	fprintf(f, "\nCOMPARISON (the same command, one run per setting; change against the baseline)\n");
	fprintf(f, "  %-30s", "");
	for (k = 0; k < n; k++)
		fprintf(f, " %-30.30s", labels[k]);
	fputc('\n', f);
	for (r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		if ((rows[r].arena && !any_arena) || (rows[r].inv && !any_inv))
			continue;
		fprintf(f, "  %-30s", rows[r].name);
		for (k = 0; k < n; k++) {
			int64_t v = *(const int64_t *)((const char *)&s[k] + rows[r].off);
			int64_t base = *(const int64_t *)((const char *)&s[0] + rows[r].off);
			char c[128];

			if (!s[k].ok) {
				fprintf(f, " %-30s", "(no result)");
				continue;
			}
			cell(b, sizeof(b), rows[r].fmt, (double)v);
			if (k && s[0].ok && base)
				snprintf(c, sizeof(c), "%s (%+.1f%%)", b, 100.0 * ((double)v - (double)base) / (double)base);
			else if (k && s[0].ok && v != base)
				snprintf(c, sizeof(c), "%s (was 0)", b);
			else
				snprintf(c, sizeof(c), "%s", b);
			fprintf(f, " %-30s", c);
		}
		fputc('\n', f);
	}
	if (any_inv) {
		fprintf(f, "  %-30s", "invocation duration p50");
		for (k = 0; k < n; k++) {
			snprintf(b, sizeof(b), "%.1f ms", s[k].inv_p50_ms);
			fprintf(f, " %-30s", s[k].ok ? b : "(no result)");
		}
		fputc('\n', f);
	}
	fprintf(f, "  %-30s", "traced time (indicative)");
	for (k = 0; k < n; k++) {
		cell(b, sizeof(b), FMT_SECONDS, s[k].wall_s);
		fprintf(f, " %-30s", s[k].ok ? b : "(no result)");
	}
	fputc('\n', f);
	fprintf(f, "  %-30s", "exit status of the command");
	for (k = 0; k < n; k++) {
		snprintf(b, sizeof(b), "%d", s[k].exit_status);
		fprintf(f, " %-30s", s[k].ok ? b : "(no result)");
	}
	fputc('\n', f);
}

int pt_compare_run(const char *self, char **opts, int nopts, char **cmd, const char *outdir,
		   char **settings, int nsettings)
{
	struct pt_summary sum[PT_MAX_COMPARE + 1] = { 0 };
	const char *labels[PT_MAX_COMPARE + 1] = { 0 };
	char dirs[PT_MAX_COMPARE + 1][4096];
	int ncmd = 0, k, i, code = 0;

	if (mkdir(outdir, 0755) && errno != EEXIST) {
		fprintf(stderr, "peaktrace: cannot create %s: %s\n", outdir, strerror(errno));
		return 6;
	}
	while (cmd[ncmd])
		ncmd++;
	for (k = 0; k <= nsettings; k++) {
		char **argv = calloc(nopts + ncmd + 16, sizeof(*argv));  /* 11 of ours */
		char sumpath[4200];
		int n = 0, status;
		pid_t pid;

		if (!argv)
			return 1;
		labels[k] = k ? settings[k - 1] : "baseline";
		snprintf(dirs[k], sizeof(dirs[k]), "%s/run-%d-%s", outdir, k, k ? "setting" : "baseline");
		snprintf(sumpath, sizeof(sumpath), "%s/summary.tsv", dirs[k]);
		argv[n++] = (char *)self;
		for (i = 0; i < nopts; i++)
			argv[n++] = opts[i];
		argv[n++] = "--compare-child";
		argv[n++] = "-q";
		argv[n++] = "-o";
		argv[n++] = dirs[k];
		argv[n++] = "--summary";
		argv[n++] = sumpath;
		if (k) {
			argv[n++] = "--target-env";
			argv[n++] = settings[k - 1];
		}
		argv[n++] = "--";
		for (i = 0; i < ncmd; i++)
			argv[n++] = cmd[i];
		argv[n] = NULL;
		fprintf(stderr, "peaktrace: run %d of %d: %s%s\n", k + 1, nsettings + 1,
			k ? "with " : "", labels[k]);
		pid = fork();
		if (pid == 0) {
			pt_sigmask_restore();
			execv(self, argv);
			fprintf(stderr, "peaktrace: cannot run %s: %s\n", self, strerror(errno));
			_exit(1);
		}
		free(argv);
		if (pid < 0 || waitpid(pid, &status, 0) < 0) {
			fprintf(stderr, "peaktrace: cannot run the comparison: %s\n", strerror(errno));
			return 1;
		}
		if (!WIFEXITED(status) || (WEXITSTATUS(status) != 0 && WEXITSTATUS(status) != 8)) {
			fprintf(stderr, "peaktrace: run %d (%s) failed (status %d)\n", k + 1, labels[k],
				WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
			code = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
		}
		pt_summary_read(sumpath, &sum[k]);
	}
	pt_compare_print(stdout, labels, sum, nsettings + 1);
	{
		char path[4200];
		FILE *f;

		snprintf(path, sizeof(path), "%s/compare.txt", outdir);
		f = fopen(path, "w");
		if (f) {
			pt_compare_print(f, labels, sum, nsettings + 1);
			for (k = 0; k <= nsettings; k++)
				fprintf(f, "  %s: %s/\n", labels[k], dirs[k]);
			fclose(f);
		}
		for (k = 0; k <= nsettings; k++)
			printf("  %s: reports in %s/\n", labels[k], dirs[k]);
	}
	return code;
}
