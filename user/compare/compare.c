// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * compare.c — --compare-env. Every run is a fresh peaktrace process (a run leaves nothing behind
 * in the kernel or in this process that could bias the next one); they run one after the other,
 * so the machine is the same for both but not at the same moment. The traced runs' byte figures
 * are exact (the probes add no memory to the target), their times are not: a uprobe on every
 * allocation makes a setting that changes the allocator's call pattern look cheaper or dearer
 * than it is (MALLOC_MMAP_THRESHOLD_ on an ONNX Runtime function: 1.4-3x slower per invocation
 * untraced, faster traced). So the times come from untraced runs of the command alone, several
 * per setting and interleaved, each row saying which kind of run it comes from.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>
#include "util/fmt.h"
#include "util/outdir.h"
#include "util/wake.h"
#include "bpf/inv.h"
#include "compare/compare.h"

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return (a > b) - (a < b);
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
		if (!strncmp(line, "advice\t", 7) && s->nadvice < PT_MAX_SUM_ADVICE) {
			line[strcspn(line, "\n")] = 0;
			snprintf(s->advice[s->nadvice++], sizeof(s->advice[0]), "%.63s", line + 7);
			continue;
		}
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

bool pt_lambda_report_line(const char *line, double *dur_ms, int64_t *max_mem_mb)
{
	const char *d, *m;

	if (strncmp(line, "REPORT RequestId: ", 18) || !(d = strstr(line, "\tDuration: ")))
		return false;
	*dur_ms = strtod(d + 11, NULL);
	m = strstr(line, "\tMax Memory Used: ");
	*max_mem_mb = m ? strtoll(m + 18, NULL, 10) : -1;
	return true;
}

void pt_spread(double *v, int n, double *med, double *lo, double *hi)
{
	qsort(v, n, sizeof(v[0]), cmp_double);
	*med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	*lo = v[0];
	*hi = v[n - 1];
}

/* "264 ms [250-410]" style: median and range of n values, in unit (scaled by mul). */
static void spread_text(char *buf, size_t len, const double *src, int n, double mul, const char *unit)
{
	double v[PT_MAX_UNTRACED_INV], med, lo, hi;

	memcpy(v, src, n * sizeof(v[0]));
	pt_spread(v, n, &med, &lo, &hi);
	if (n == 1)
		snprintf(buf, len, "%.*f %s", med * mul < 10 ? 3 : 1, med * mul, unit);
	else
		snprintf(buf, len, "%.*f %s [%.*f-%.*f]", med * mul < 10 ? 3 : 1, med * mul, unit,
			 lo * mul < 10 ? 3 : 1, lo * mul, hi * mul < 10 ? 3 : 1, hi * mul);
}

static double median_of(const double *src, int n)
{
	double v[PT_MAX_UNTRACED_INV], med, lo, hi;

	if (n <= 0)
		return 0;
	memcpy(v, src, n * sizeof(v[0]));
	pt_spread(v, n, &med, &lo, &hi);
	return med;
}

static void rss_as_double(const struct pt_untraced *u, double *out)
{
	for (int k = 0; k < u->runs; k++)
		out[k] = (double)u->maxrss[k];
}

static int change(char *buf, size_t len, double base, double v)
{
	if (base <= 0)
		return snprintf(buf, len, "%s", "");
	return snprintf(buf, len, " (%+.0f%%)", 100.0 * (v - base) / base);
}

int pt_measured_cost(char *buf, size_t len, const struct pt_summary *base, const struct pt_summary *s)
{
	const struct pt_untraced *ub = &base->u, *us = &s->u;
	double rb[PT_MAX_UNTRACED], rs[PT_MAX_UNTRACED];
	char a[96], b[96], c[32], x[32], y[32];
	size_t n = 0;

	if (!ub->runs || !us->runs)
		return 0;
	buf[0] = 0;
#define PUT(...) do { if (n < len) n += snprintf(buf + n, len - n, __VA_ARGS__); } while (0)
	if (ub->ninv && us->ninv) {
		spread_text(a, sizeof(a), ub->inv_ms, ub->ninv, 1, "ms");
		spread_text(b, sizeof(b), us->inv_ms, us->ninv, 1, "ms");
		change(c, sizeof(c), median_of(ub->inv_ms, ub->ninv), median_of(us->inv_ms, us->ninv));
		PUT("time per invocation %s -> %s%s (median [range] of %d and %d invocations), ",
		    a, b, c, ub->ninv, us->ninv);
	}
	spread_text(a, sizeof(a), ub->wall_s, ub->runs, 1, "s");
	spread_text(b, sizeof(b), us->wall_s, us->runs, 1, "s");
	change(c, sizeof(c), median_of(ub->wall_s, ub->runs), median_of(us->wall_s, us->runs));
	PUT("wall time %s -> %s%s, ", a, b, c);
	spread_text(a, sizeof(a), ub->cpu_s, ub->runs, 1, "s");
	spread_text(b, sizeof(b), us->cpu_s, us->runs, 1, "s");
	change(c, sizeof(c), median_of(ub->cpu_s, ub->runs), median_of(us->cpu_s, us->runs));
	PUT("CPU time %s -> %s%s, ", a, b, c);
	rss_as_double(ub, rb);
	rss_as_double(us, rs);
	change(c, sizeof(c), median_of(rb, ub->runs), median_of(rs, us->runs));
	PUT("peak RSS %s -> %s%s (untraced, %d and %d runs)",
	    pt_fmt_bytes(x, sizeof(x), median_of(rb, ub->runs)), pt_fmt_bytes(y, sizeof(y), median_of(rs, us->runs)),
	    c, ub->runs, us->runs);
	if (base->ok && s->ok && base->arenas && s->arenas) {
		change(c, sizeof(c), (double)base->arena_retained, (double)s->arena_retained);
		PUT("; arena retained at the end %s -> %s%s (traced: bytes are exact)",
		    pt_fmt_bytes(x, sizeof(x), (double)base->arena_retained),
		    pt_fmt_bytes(y, sizeof(y), (double)s->arena_retained), c);
	}
#undef PUT
	return (int)n;
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

/* The untraced rows: the command alone, median [range] over its runs. */
static void untraced_rows(FILE *f, const char *const *labels, const struct pt_summary *s, int n)
{
	static const char *names[] = { "wall time", "CPU time (user+sys)", "peak RSS (largest process)",
				       "invocation Duration (REPORT)", "Max Memory Used (REPORT)" };
	bool any_inv = false;
	int k, r;

	for (k = 0; k < n; k++)
		any_inv |= s[k].u.ninv > 0;
	fprintf(f, "  untraced: the command alone, %d run%s per setting, interleaved; median [range]\n",
		s[0].u.runs, s[0].u.runs == 1 ? "" : "s");
	for (r = 0; r < 5; r++) {
		if (r >= 3 && !any_inv)
			continue;
		fprintf(f, "  %-30s", names[r]);
		for (k = 0; k < n; k++) {
			const struct pt_untraced *u = &s[k].u;
			double rss[PT_MAX_UNTRACED];
			char b[96] = "(no result)";

			if (r == 0 && u->runs)
				spread_text(b, sizeof(b), u->wall_s, u->runs, 1, "s");
			else if (r == 1 && u->runs)
				spread_text(b, sizeof(b), u->cpu_s, u->runs, 1, "s");
			else if (r == 2 && u->runs) {
				rss_as_double(u, rss);
				spread_text(b, sizeof(b), rss, u->runs, 1.0 / (1 << 20), "MiB");
			} else if (r == 3 && u->ninv)
				spread_text(b, sizeof(b), u->inv_ms, u->ninv, 1, "ms");
			else if (r == 4 && u->ninv && u->max_mem_mb >= 0)
				snprintf(b, sizeof(b), "%" PRId64 " MB (max)", u->max_mem_mb);
			else if (r >= 3)
				snprintf(b, sizeof(b), "(no REPORT lines)");
			fprintf(f, " %-30s", b);
		}
		fputc('\n', f);
	}
	for (k = 0; k < n; k++) {
		if (s[k].u.failed)
			fprintf(f, "  (%s: %d of %d untraced runs did not exit 0)\n", labels[k], s[k].u.failed, s[k].u.runs);
		if (s[k].u.stopped)
			fprintf(f, "  (%s: %d of %d untraced runs ended by -d)\n", labels[k], s[k].u.stopped, s[k].u.runs);
	}
}

/* Each setting's cost as measured, and the baseline's advice priced when it was compared. */
static void measured_lines(FILE *f, const char *const *labels, const struct pt_summary *s, int n)
{
	char buf[1024];
	int k, a;

	for (k = 1; k < n; k++)
		if (pt_measured_cost(buf, sizeof(buf), &s[0], &s[k]))
			fprintf(f, "  %s, measured: %s\n", labels[k], buf);
	for (a = 0; s[0].ok && a < s[0].nadvice; a++) {
		for (k = 1; k < n; k++)
			if (!strcmp(labels[k], s[0].advice[a]) && pt_measured_cost(buf, sizeof(buf), &s[0], &s[k]))
				break;
		if (k < n)
			fprintf(f, "ADVICE: %s, its cost as measured: %s\n", s[0].advice[a], buf);
		else
			fprintf(f, "ADVICE: %s: its cost not measured here (--compare-env %s%s)\n", s[0].advice[a],
				s[0].advice[a], s[0].u.runs ? "" : " with --compare-untraced 3");
	}
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
	bool any_arena = false, any_inv = false, any_untraced = false;

	for (k = 0; k < n; k++) {
		any_arena |= s[k].arenas;
		any_inv |= s[k].invocations > 0;
		any_untraced |= s[k].u.runs > 0;
	}
	fprintf(f, "\nCOMPARISON (the same command, one run per setting; change against the baseline)\n");
	fprintf(f, "  %-30s", "");
	for (k = 0; k < n; k++)
		fprintf(f, " %-30.30s", labels[k]);
	fputc('\n', f);
	if (any_untraced)
		untraced_rows(f, labels, s, n);
	fprintf(f, "  traced: bytes and counts exact (tracing adds no memory to the command but its uprobes' one page)\n");
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
	fprintf(f, "  %-30s", "exit status of the command");
	for (k = 0; k < n; k++) {
		snprintf(b, sizeof(b), "%d", s[k].exit_status);
		fprintf(f, " %-30s", s[k].ok ? b : "(no result)");
	}
	fputc('\n', f);
	fprintf(f, "  traced (distorted by tracing: do not use for time)\n");
	if (any_inv) {
		fprintf(f, "  %-30s", "invocation duration p50");
		for (k = 0; k < n; k++) {
			snprintf(b, sizeof(b), "%.1f ms", s[k].inv_p50_ms);
			fprintf(f, " %-30s", s[k].ok ? b : "(no result)");
		}
		fputc('\n', f);
	}
	fprintf(f, "  %-30s", "traced time");
	for (k = 0; k < n; k++) {
		cell(b, sizeof(b), FMT_SECONDS, s[k].wall_s);
		fprintf(f, " %-30s", s[k].ok ? b : "(no result)");
	}
	fputc('\n', f);
	measured_lines(f, labels, s, n);
}

/* One untraced run: the command alone with the setting, its output in log; wall and CPU time
 * and peak RSS from wait4, its Lambda REPORT lines (a command that is a Lambda host, e.g.
 * `lambda-host -E events.jsonl -- RUNTIME`) from the log. */
static int run_untraced(char **cmd, const char *setting, const char *log, double duration,
			struct pt_untraced *u)
{
	struct timespec t0, t1;
	struct rusage ru;
	char line[1024];
	int status, fd;
	pid_t pid;
	FILE *f;

	fd = pt_out_open(log);
	if (fd < 0)
		return -errno;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid = fork();
	if (pid == 0) {
		pt_sigmask_restore();
		dup2(fd, 1);
		dup2(fd, 2);
		if (setting)
			putenv((char *)setting);
		execvp(cmd[0], cmd);
		fprintf(stderr, "peaktrace: cannot run %s: %s\n", cmd[0], strerror(errno));
		_exit(127);
	}
	close(fd);
	if (pid < 0)
		return -errno;
	/* -d bounds each run as it bounds the traced ones: SIGTERM at its end. */
	bool termed = false;

	for (;;) {
		pid_t r = wait4(pid, &status, duration > 0 && !termed ? WNOHANG : 0, &ru);
		struct timespec now, tick = { 0, 10 * 1000 * 1000 };

		if (r == pid)
			break;
		if (r < 0 && errno != EINTR)
			return -errno;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (!termed && (double)(now.tv_sec - t0.tv_sec) + (double)(now.tv_nsec - t0.tv_nsec) / 1e9 >= duration) {
			kill(pid, SIGTERM);
			termed = true;
		} else if (!termed) {
			nanosleep(&tick, NULL);
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (u->runs >= PT_MAX_UNTRACED)
		return 0;
	u->wall_s[u->runs] = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	u->cpu_s[u->runs] = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
			    (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
	u->maxrss[u->runs] = (int64_t)ru.ru_maxrss * 1024;
	u->runs++;
	if (termed)
		u->stopped++;
	else if (!WIFEXITED(status) || WEXITSTATUS(status))
		u->failed++;
	if (!u->ninv)
		u->max_mem_mb = -1;
	if (!(f = fopen(log, "r")))
		return 0;
	while (fgets(line, sizeof(line), f)) {
		double ms;
		int64_t mb;

		if (!pt_lambda_report_line(line, &ms, &mb) || u->ninv >= PT_MAX_UNTRACED_INV)
			continue;
		u->inv_ms[u->ninv++] = ms;
		if (mb > u->max_mem_mb)
			u->max_mem_mb = mb;
	}
	fclose(f);
	return 0;
}

/* DIR/run-K-SETTING/untraced.tsv: each untraced run's figures, then each invocation's Duration. */
static void untraced_write(const char *dir, const struct pt_untraced *u)
{
	char path[4200];
	FILE *f;
	int k;

	snprintf(path, sizeof(path), "%.4096s/untraced.tsv", dir);
	if (!(f = pt_out_fopen(path)))
		return;
	for (k = 0; k < u->runs; k++)
		fprintf(f, "run\t%d\twall_ns\t%.0f\tcpu_ns\t%.0f\tmaxrss\t%" PRId64 "\n", k + 1,
			u->wall_s[k] * 1e9, u->cpu_s[k] * 1e9, u->maxrss[k]);
	for (k = 0; k < u->ninv; k++)
		fprintf(f, "invocation_ms\t%.2f\n", u->inv_ms[k]);
	fclose(f);
}

int pt_compare_host_args(char *const *cmd, int ncmd)
{
	const char *base = strrchr(cmd[0], '/');
	int i;

	base = base ? base + 1 : cmd[0];
	if (strcmp(base, "lambda-host"))
		return 0;
	for (i = 1; i < ncmd - 1; i++)
		if (!strcmp(cmd[i], "--"))
			return i + 1;
	return 0;
}

static int run_traced(const char *self, char **opts, int nopts, char **cmd, int ncmd, int host,
		      const char *dir, const char *setting, const char *label, int k, int nruns)
{
	char **argv = calloc(nopts + ncmd + 16, sizeof(*argv));  /* 12 of ours */
	char sumpath[4200];
	int n = 0, i, status;
	pid_t pid;

	if (!argv)
		return 1;
	snprintf(sumpath, sizeof(sumpath), "%s/summary.tsv", dir);
	/* Under a Lambda host, peaktrace runs as the host's runtime and launches the runtime itself
	 * (as in `lambda-host -- peaktrace -- RUNTIME`): the runtime is what is traced. */
	for (i = 0; i < host; i++) {
		argv[n++] = cmd[i];
		/* Not in the host's cgroup: its memory would count against the function's limit,
		 * and at its shutdown the host kills everything there, the runtime before peaktrace
		 * has read its arenas. */
		if (!i)
			argv[n++] = "--no-cgroup";
	}
	argv[n++] = (char *)self;
	for (i = 0; i < nopts; i++)
		argv[n++] = opts[i];
	argv[n++] = "--compare-child";
	argv[n++] = "-q";
	argv[n++] = "-o";
	argv[n++] = (char *)dir;
	argv[n++] = "--summary";
	argv[n++] = sumpath;
	if (setting) {
		argv[n++] = "--target-env";
		argv[n++] = (char *)setting;
	}
	argv[n++] = "--";
	for (i = host; i < ncmd; i++)
		argv[n++] = cmd[i];
	argv[n] = NULL;
	fprintf(stderr, "peaktrace: run %d of %d (traced): %s%s\n", k + 1, nruns, setting ? "with " : "", label);
	pid = fork();
	if (pid == 0) {
		pt_sigmask_restore();
		if (host)
			execvp(argv[0], argv);
		else
			execv(self, argv);
		fprintf(stderr, "peaktrace: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(1);
	}
	free(argv);
	if (pid < 0 || waitpid(pid, &status, 0) < 0) {
		fprintf(stderr, "peaktrace: cannot run the comparison: %s\n", strerror(errno));
		return -1;
	}
	if (!WIFEXITED(status) || (WEXITSTATUS(status) != 0 && WEXITSTATUS(status) != 8)) {
		fprintf(stderr, "peaktrace: run %d (%s) failed (status %d)\n", k + 1, label,
			WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
		return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
	}
	return 0;
}

int pt_compare_run(const char *self, char **opts, int nopts, char **cmd, const char *outdir,
		   char **settings, int nsettings, int untraced, double duration)
{
	static struct pt_summary sum[PT_MAX_COMPARE + 1];
	const char *labels[PT_MAX_COMPARE + 1] = { 0 };
	char dirs[PT_MAX_COMPARE + 1][4096];
	int ncmd = 0, k, j, code = 0, host;
	static char selfpath[4096];

	if (pt_outdir_prepare(outdir))   /* made, checked and held: said why not */
		return 6;
	while (cmd[ncmd])
		ncmd++;
	host = pt_compare_host_args(cmd, ncmd);
	/* Started by the host, /proc/self/exe would be the host: the file itself, then. */
	if (host) {
		ssize_t n = readlink(self, selfpath, sizeof(selfpath) - 1);

		if (n <= 0) {
			fprintf(stderr, "peaktrace: cannot read %s: %s\n", self, strerror(errno));
			return 1;
		}
		selfpath[n] = 0;
		self = selfpath;
	}
	for (k = 0; k <= nsettings; k++) {
		char sumpath[4200];
		int rc;

		labels[k] = k ? settings[k - 1] : "baseline";
		snprintf(dirs[k], sizeof(dirs[k]), "%s/run-%d-%s", outdir, k, k ? "setting" : "baseline");
		rc = run_traced(self, opts, nopts, cmd, ncmd, host, dirs[k], k ? settings[k - 1] : NULL,
				labels[k], k, nsettings + 1);
		if (rc < 0)
			return 1;
		if (rc)
			code = rc;
		snprintf(sumpath, sizeof(sumpath), "%s/summary.tsv", dirs[k]);
		pt_summary_read(sumpath, &sum[k]);
		memset(&sum[k].u, 0, sizeof(sum[k].u));
	}
	/* Interleaved (A B A B ...), so that a machine getting busier or quieter moves every
	 * setting alike. */
	for (j = 0; j < untraced; j++) {
		for (k = 0; k <= nsettings; k++) {
			char log[4200];
			int err;

			pt_out_mkdir(dirs[k]);
			snprintf(log, sizeof(log), "%s/untraced-%d.log", dirs[k], j + 1);
			fprintf(stderr, "peaktrace: untraced run %d of %d: %s%s\n", j + 1, untraced,
				k ? "with " : "", labels[k]);
			if ((err = run_untraced(cmd, k ? settings[k - 1] : NULL, log, duration, &sum[k].u)) < 0)
				fprintf(stderr, "peaktrace: cannot run %s untraced: %s\n", cmd[0], strerror(-err));
		}
	}
	for (k = 0; untraced && k <= nsettings; k++)
		untraced_write(dirs[k], &sum[k].u);
	pt_compare_print(stdout, labels, sum, nsettings + 1);
	{
		char path[4200];
		FILE *f;

		snprintf(path, sizeof(path), "%s/compare.txt", outdir);
		f = pt_out_fopen(path);
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
