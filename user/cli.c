// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * cli.c — the command line in the bcc manner: one options struct with each default beside its
 * flag, the argp table, --help's text (docs/usage.md quotes it, `make readme-help`: keep the two
 * in step) and the parsers.
 */
#include <argp.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bpf/peaktrace.h"
#include "bpf/sample.h"
#include "report/report.h"
#include "follow/sandbox.h"
#include "profile/frames.h"
#include "util/file.h"
#include "util/outdir.h"
#include "cli.h"

/* Every option's default, beside its flag; the others start as 0. */
static const struct pt_options defaults = {
	.duration = 0,                        /* -d: until exit or Ctrl-C */
	.interval = 1.0,                      /* -i */
	.timeline_ms = PT_TL_DEF_INTERVAL_MS, /* --timeline-interval */
	.top = 10,                            /* --top */
	.json_stacks = 1000,                  /* --json-stacks */
	.max_stacks = 0,                      /* --max-stacks: from this machine (pt_stacks_here) */
	.live_slots = PT_DEF_LIVE_SLOTS,      /* --max-live */
	.fp_stacks = true,                    /* --no-fp-walk */
	.dwarf = true,                        /* --unwind dwarf */
	.arenas = true,                       /* --no-arenas */
	.boundary = BOUNDARY_AUTO,            /* --boundary auto */
	.frames = PT_FRAMES_COLLAPSED,        /* --frames collapsed */
	.supervised = SUPERVISED_AUTO,        /* --supervised auto */
	.compare_untraced = 3,                /* --compare-untraced */
	.max_inv_kept = PT_INV_KEEP_DEFAULT,  /* --max-invocations-kept */
	.max_output = 256ull << 20,           /* --max-output 256M */
	.follow_hold_ms = PT_FOLLOW_HOLD_S * 1000, /* --follow-hold 5 */
	.sandbox_fd = -1,
	.ready_fd = -1,
	.spare_fd = -1,
};

const char *const pt_boundary_names[] = { "auto", "runtime-api", "none", "uprobe", "uprobe" };
static const char *const supervised_names[] = { "auto", "yes", "no" };   /* SUPERVISED_* */

const char *argp_program_version = "peaktrace " PT_VERSION;
const char *argp_program_bug_address = NULL;
static const char doc[] =
"Trace a process's memory: every allocation counted exactly, the live-heap\n"
"and RSS peaks, and who held the memory at the peak.\n"
"\n"
"USAGE: peaktrace -p PID[,PID...] [-d SECONDS] [-o DIR]\n"
"       peaktrace [-d SECONDS] [-o DIR] -- CMD [ARGS...]\n"
"       peaktrace --follow [-o DIR] {-p PID | -- CMD [ARGS...]}\n"
"       peaktrace diff [--max-growth SIZE] [-o OUTDIR] DIR_A DIR_B\n"
"       peaktrace --check-kernel"
"\v"
"EXAMPLES:\n"
"    peaktrace -p 1234              # attach until Ctrl-C or the target exits\n"
"    peaktrace -p 1234 -d 30 -o out # trace 30 s, write reports to out/\n"
"    peaktrace -o out -- ./server   # launch ./server, traced from 1st malloc\n"
"    peaktrace --top 20 -- python3 app.py\n"
"    aws-lambda-rie peaktrace -o out -- ./bootstrap # RIE starts it: cold start\n"
"    peaktrace --follow -o out -- aws-lambda-rie ./bootstrap # the runtime RIE\n"
"                                   # starts, its extensions, the sandbox\n"
"    peaktrace diff base/ new/      # compare two -o dirs (diff --help)\n"
"    peaktrace --check-kernel       # can peaktrace run on this kernel?\n"
"\n"
"Files written with -o: report.txt, report.json, {peak,live,alloc}.folded,\n"
"{peak,live,alloc}.svg, {peak,live,alloc}.speedscope.json, profile.pb.gz,\n"
"report.html (one self-contained page: open it from file://),\n"
"leaked.folded, leaked.svg (bytes allocated in one invocation, live after the\n"
"next), rss.folded, rss.svg, invocations.jsonl, timeline.jsonl, timeline.svg;\n"
"with --emf emf.jsonl; with --per-invocation invocation-N.peak.folded,\n"
"invocation-N.peak.svg, invocation-N.rss.folded and invocation-N.rss.svg for\n"
"each invocation N. With --light the heap files (the peak, live, alloc and\n"
"leaked views) are not written and the pprof profile has rss_peak_space only.\n"
"With --follow or several -p: sandbox.txt, sandbox.json and one proc-PID-COMM/\n"
"directory of the above per traced process image (default DIR:\n"
"peaktrace-sandbox).\n"
"\n"
"Exit codes: 0 ok, 1 other failure, 2 usage, 3 no such process, 4 not root,\n"
"5 unsupported target, 6 output directory not writable or refused (another\n"
"user's, or writable by others: --trust-output-dir), 7 BPF failure or a\n"
"kernel without a feature peaktrace needs (--check-kernel), 8 an invocation's\n"
"true peak exceeded --max-peak, 9 diff: the peak live heap grew by more than\n"
"--max-growth.\n";

enum { OPT_TOP = 1000, OPT_MAX_STACKS, OPT_MAX_LIVE, OPT_NO_FP, OPT_NO_ARENAS, OPT_PERF_UPROBES,
       OPT_BOUNDARY, OPT_MAX_PEAK, OPT_PER_INV, OPT_EMF, OPT_UNWIND, OPT_COMPARE_ENV,
       OPT_COMPARE_CHILD, OPT_SUMMARY, OPT_TARGET_ENV, OPT_SAMPLE_BYTES, OPT_FRAMES,
       OPT_TIMELINE, OPT_JSON_STACKS, OPT_LIGHT, OPT_SUPERVISED, OPT_FOLLOW, OPT_SANDBOX_FD,
       OPT_SANDBOX_SLOT, OPT_READY_FD, OPT_HELD, OPT_SPARE_FD, OPT_PY_OBJECTS,
       OPT_PERF_MAP_MAX,
       OPT_CACHE_DIR, OPT_NO_CACHE, OPT_FAST_START,
       OPT_PROBE_FLOOR, OPT_PROG_STATS, OPT_VERIFIER_STATS, OPT_PY_CHUNKS, OPT_LOAD_PARTS,
       OPT_CHECK_KERNEL, OPT_COMPARE_UNTRACED, OPT_MAX_INV_KEPT, OPT_MAX_OUTPUT, OPT_TRUST_OUTDIR,
       OPT_FOLLOW_HOLD };

static const struct argp_option opts[] = {
	{ "pid", 'p', "PID[,PID...]", 0, "Attach to this running process; several (comma-separated or repeated -p, up to 32) are traced as one sandbox (DIR/sandbox.txt)", 0 },
	{ "follow", OPT_FOLLOW, NULL, 0, "Also trace every process the target starts from then on (fork, then exec), each from its first instruction with its own report in DIR/proc-PID-COMM/, and the sandbox: all of them together (the peak of their summed RSS, per invocation too, each one's share, Lambda extensions named; DIR/sandbox.txt, sandbox.json). Each process's tables default to --max-stacks 16384 --max-live 262144 (their BPF maps, ~36 MiB each, count against the memory cgroup peaktrace runs in)", 0 },
	{ "follow-hold", OPT_FOLLOW_HOLD, "SECONDS", 0, "With --follow: hold a new process at its exec at most SECONDS (default 5) for its session to be ready; past that it runs untraced, counted (not_traced.hold_limit). Sessions load at most two at once: many processes exec'ing together need a longer hold to all be traced", 0 },
	{ "sandbox-fd", OPT_SANDBOX_FD, "FD", OPTION_HIDDEN, "", 0 },
	{ "sandbox-slot", OPT_SANDBOX_SLOT, "N", OPTION_HIDDEN, "", 0 },
	{ "ready-fd", OPT_READY_FD, "FD", OPTION_HIDDEN, "", 0 },
	{ "held", OPT_HELD, NULL, OPTION_HIDDEN, "", 0 },
	{ "spare-fd", OPT_SPARE_FD, "FD", OPTION_HIDDEN, "", 0 },
	{ "duration", 'd', "SECONDS", 0, "Stop after SECONDS (default: target exit or Ctrl-C); a launched CMD still running is then sent SIGTERM, unless --supervised", 0 },
	{ "output", 'o', "DIR", 0, "Write every report format into DIR (created 0700 if needed). DIR must be owned by root or you and not writable by group or others, and no file in it is written through a link: each is created anew, 0644 at most", 0 },
	{ "trust-output-dir", OPT_TRUST_OUTDIR, NULL, 0, "Write into DIR even if another user owns it or others can write to it (files are still never written through links in it, nor DIR through another user's symlink)", 0 },
	{ "interval", 'i', "SECONDS", 0, "Status line period on a terminal (default 1)", 0 },
	{ "timeline-interval", OPT_TIMELINE, "MS", 0, "Sample RSS and the live heap every MS milliseconds for DIR/timeline.jsonl and timeline.svg, each sample with the maxima reached since the one before (default 10, 0: off)", 0 },
	{ "top", OPT_TOP, "N", 0, "Stacks shown per report section (default 10)", 0 },
	{ "json-stacks", OPT_JSON_STACKS, "N|all", 0, "Stacks kept in report.json: the top N by each of peak, live and allocated bytes (default 1000; what is left out is summed in stacks_left_out), or all", 0 },
	{ "max-stacks", OPT_MAX_STACKS, "N", 0, "Distinct stacks kept in the kernel (default: from this machine's available memory, a sixteenth of it at ~1 KiB a stack, and an eighth of the room under peaktrace's memory cgroup limit; 16384 to 262144). When the table's whole-stack part (seven eighths) is full, new stacks are kept cut to their innermost frames, then to their leaf", 0 },
	{ "max-live", OPT_MAX_LIVE, "N", 0, "Live allocations tracked (default 1048576; with --python-objects sized from the target and the machine, said at the start)", 0 },
	{ "unwind", OPT_UNWIND, "MODE", 0, "Stack unwinder: dwarf (default: .eh_frame tables in the kernel, frame pointers where code has no CFI) or fp (frame pointers only, cheaper)", 0 },
	{ "cache-dir", OPT_CACHE_DIR, "DIR", 0, "Keep compiled unwind tables by build id and unwind-section hash in DIR across runs, so a cold start does not wait for them (default /var/cache/peaktrace/unwind; DIR and its parents root-owned, checked on every read)", 0 },
	{ "no-cache", OPT_NO_CACHE, NULL, 0, "Neither read nor write the unwind table cache", 0 },
	{ "fast-start", OPT_FAST_START, NULL, 0, "Launch mode: do not hold the command while the unwind tables the cache lacks are built; they are built while it runs, and the stacks taken before are counted (unwind_not_yet_covered)", 0 },
	{ "no-fp-walk", OPT_NO_FP, NULL, 0, "Record only the allocation site, no unwinding (cheapest)", 0 },
	{ "frames", OPT_FRAMES, "MODE", 0, "Frames shown in every output: collapsed (default: each run of unnamed frames in an interpreter, python3.11 or node, becomes one \"[python3.11 internals]\" frame), all (every frame as unwound), or python (only the Python and JIT-named frames, e.g. JS, plus the native frame that allocated, as memray shows them)", 0 },
	{ "sample-bytes", OPT_SAMPLE_BYTES, "SIZE", 0, "Unwind only a Poisson sample of allocations, one per SIZE bytes on average (e.g. 512K); per-stack figures become unbiased estimates, totals and peaks stay exact (default 0: every allocation)", 0 },
	{ "perf-map-max", OPT_PERF_MAP_MAX, "SIZE", 0, "Read at most SIZE bytes of a JIT's perf map (/tmp/perf-PID.map, which names Node's and Python's JIT frames) and keep at most one line per 128 bytes of it (default 64M: Node's for an ONNX function is ~230 KB); what is cut, and lines over 4 KiB, holes and NUL runs, is counted (perf_map_cut)", 0 },
	{ "boundary", OPT_BOUNDARY, "MODE", 0, "Invocation boundaries: auto (default: runtime-api), runtime-api (Lambda Runtime API traffic), uprobe (aws-lambda-cpp's get_next/post_success/post_failure), none, or start=LIB:SYM[:entry|:return],end=LIB:SYM[:entry|:return] (uprobes on the runtime's own functions)", 0 },
	{ "max-peak", OPT_MAX_PEAK, "SIZE", 0, "Exit 8 if any invocation's true peak RSS exceeds SIZE (e.g. 256M, 1G)", 0 },
	{ "per-invocation", OPT_PER_INV, NULL, 0, "Also write folded stacks and a flame graph of each invocation's peak (with -o)", 0 },
	{ "max-invocations-kept", OPT_MAX_INV_KEPT, "N", 0, "Invocation records kept in memory for the report (default 1000, at least 16): past N, the first and last N/4 and the highest RSS peaks between are kept, the others only streamed to invocations.jsonl, and the report says how many were not kept", 0 },
	{ "max-output", OPT_MAX_OUTPUT, "SIZE", 0, "Bytes the files that grow with the run (invocations.jsonl, emf.jsonl, --per-invocation's graphs) may write into DIR (default 256M, 0: no limit); past it they stop growing and the report says how many records and files were not written", 0 },
	{ "emf", OPT_EMF, NULL, 0, "CloudWatch embedded-metric JSON per invocation (DIR/emf.jsonl, or stdout without -o)", 0 },
	{ "perf-uprobes", OPT_PERF_UPROBES, NULL, 0, "One perf-event uprobe per address, as on kernels before 6.6 (slower to detach)", 0 },
	{ "light", OPT_LIGHT, NULL, 0, "No allocator probes (for load tests): RSS attribution by page, memory syscalls, invocations and their RSS peaks, malloc heap and pymalloc arenas resident at each invocation's end, the timeline (RSS only) and the OOM post-mortem; no heap figures or heap stacks, the heap files (peak/live/alloc, leaked) are not written and profile.pb.gz has rss_peak_space only", 0 },
	{ "python-objects", OPT_PY_OBJECTS, NULL, 0, "Trace CPython's object allocator too (PyObject_Malloc/Calloc/Realloc/Free and PyMem_*), so Python objects are in the heap views with their Python stacks; the expensive mode (one probe per object). A CPython that inlines pymalloc into its callers (Debian's and most distributions' builds) cannot be probed whole: a launched command then runs with PYTHONMALLOC=malloc, unless PYTHONMALLOC is set", 0 },
	{ "no-arenas", OPT_NO_ARENAS, NULL, 0, "No glibc arena accounting (saves a chunk-header read per allocation)", 0 },
	{ "supervised", OPT_SUPERVISED, "WHEN", 0, "With -- CMD: auto (default), yes or no. Supervised (auto: when peaktrace leads its own process group, not its session, and no terminal's foreground group, as AWS's Runtime Interface Emulator starts its runtime), peaktrace leaves that group, so a kill of the group kills CMD alone (with --follow: CMD and what it starts) and the report is still written (with --follow: every process's and the sandbox's); at the end of -d, Ctrl-C or SIGTERM, CMD keeps running: the report is written, every probe detached, and peaktrace stays CMD's parent, passing signals to it, and exits as CMD does", 0 },
	{ "compare-env", OPT_COMPARE_ENV, "VAR=VALUE", 0, "With -- CMD: trace CMD again with VAR=VALUE in its environment (e.g. MALLOC_MMAP_THRESHOLD_=32768) and print both results side by side; repeatable (up to 4), reports in DIR/run-N-*/", 0 },
	{ "compare-untraced", OPT_COMPARE_UNTRACED, "N", 0, "With --compare-env: also run the command N times per setting untraced (default 3, 0: none; interleaved), for the times and peak RSS tracing would distort: wall and CPU time, peak RSS, and each invocation's Duration and Max Memory Used from Lambda REPORT lines in the command's output (DIR/run-N-*/untraced-K.log)", 0 },
	{ "compare-child", OPT_COMPARE_CHILD, NULL, OPTION_HIDDEN, "", 0 },
	{ "summary", OPT_SUMMARY, "FILE", OPTION_HIDDEN, "", 0 },
	{ "target-env", OPT_TARGET_ENV, "VAR=VALUE", OPTION_HIDDEN, "", 0 },
	/* The benchmark's probe floor (tools/bench/bench.sh): the same probes, empty programs. */
	{ "probe-floor", OPT_PROBE_FLOOR, NULL, OPTION_HIDDEN, "", 0 },
	{ "prog-stats", OPT_PROG_STATS, "FILE", OPTION_HIDDEN, "", 0 },
	{ "py-chunks", OPT_PY_CHUNKS, "N", OPTION_HIDDEN, "", 0 },
	/* What each program costs the verifier at load (the start-up's largest part). */
	{ "verifier-stats", OPT_VERIFIER_STATS, "FILE", OPTION_HIDDEN, "", 0 },
	/* Copies of the BPF object loading the programs, 1 or 2 (user/bpfload.h); by default the
	 * machine decides (a second core free): for the tests and benchmarks. */
	{ "load-parts", OPT_LOAD_PARTS, "N", OPTION_HIDDEN, "", 0 },
	{ "check-kernel", OPT_CHECK_KERNEL, NULL, 0, "Trace nothing: probe this kernel for every feature peaktrace's BPF programs use (BTF, uprobes, ring buffer, task storage, the helpers, tracepoints and links), print each with the version that brought it and what its absence costs, and say whether peaktrace can run here: exit 0 if it can, 7 if an essential feature is missing, 4 when not root (some probes load BPF programs)", 0 },
	{ "quiet", 'q', NULL, 0, "Do not print the text report on stdout", 0 },
	{ "verbose", 'v', NULL, 0, "Verbose libbpf output", 0 },
	{},
};

static void die_usage(struct argp_state *st, const char *fmt, const char *arg)
{
	fprintf(stderr, "peaktrace: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, " (see --help)\n");
	exit(EXIT_USAGE);
}

static double parse_seconds(struct argp_state *st, const char *arg)
{
	char *end;
	double v = strtod(arg, &end);

	if (*end || v < 0)
		die_usage(st, "invalid number of seconds: %s", arg);
	return v;
}

static unsigned long parse_count(struct argp_state *st, const char *arg)
{
	char *end;
	unsigned long v = strtoul(arg, &end, 10);

	if (*end || !*arg || v == 0 || v > (1UL << 28))
		die_usage(st, "invalid count: %s", arg);
	return v;
}

/* SIZE with an optional K/M/G suffix (powers of 1024), "KiB"/"KB"/"K" alike. */
static uint64_t parse_size(struct argp_state *st, const char *arg, bool zero_ok)
{
	char *end;
	double x = strtod(arg, &end);

	if (end == arg || x < 0 || (x == 0 && !zero_ok))
		die_usage(st, "invalid size: %s", arg);
	switch (*end) {
	case 'k': case 'K': x *= 1024; end++; break;
	case 'm': case 'M': x *= 1024 * 1024; end++; break;
	case 'g': case 'G': x *= 1024.0 * 1024 * 1024; end++; break;
	}
	if (*end == 'i' || *end == 'B' || *end == 'b')
		end += (*end == 'i') ? 1 : 0;
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end || x >= 18446744073709551615.0)
		die_usage(st, "invalid size: %s", arg);
	return (uint64_t)x;
}

/* The start-up options (unwind table cache, --fast-start), --python-objects, --check-kernel
 * and the benchmark's hidden ones. Returns false for another key. */
static bool parse_start_opt(int key, char *arg, struct argp_state *st, struct pt_options *o)
{
	switch (key) {
	case OPT_CACHE_DIR:
		o->cache_dir = arg;
		return true;
	case OPT_NO_CACHE:
		o->no_cache = true;
		return true;
	case OPT_FAST_START:
		o->fast_start = true;
		return true;
	case OPT_PY_OBJECTS:
		o->python_objects = true;
		return true;
	case OPT_PROBE_FLOOR:
		o->probe_floor = true;
		return true;
	case OPT_PROG_STATS:
		o->prog_stats = arg;
		return true;
	case OPT_VERIFIER_STATS:
		o->verifier_stats = arg;
		return true;
	case OPT_CHECK_KERNEL:
		o->check_kernel = true;
		return true;
	case OPT_LOAD_PARTS:
		if (strcmp(arg, "1") && strcmp(arg, "2"))
			die_usage(st, "--load-parts: 1 or 2, not %s", arg);
		o->load_parts = arg[0] - '0';
		return true;
	}
	return false;
}

static int parse_supervised(struct argp_state *st, const char *arg)
{
	for (int v = SUPERVISED_AUTO; v <= SUPERVISED_NO; v++)
		if (strcmp(arg, supervised_names[v]) == 0)
			return v;
	die_usage(st, "invalid --supervised: %s (auto, yes or no)", arg);
	return SUPERVISED_AUTO;
}

/* -p (PID[,PID...], repeatable), --follow, and the sandbox's internal options. Returns
 * false for another key. */
static bool parse_follow(int key, char *arg, struct argp_state *st, struct pt_options *o)
{
	char *end;
	long v;

	switch (key) {
	case 'p':
		for (char *p = arg;; p = end + 1) {
			errno = 0;
			v = strtol(p, &end, 10);
			if (errno || end == p || (*end && *end != ',') || v <= 0 || v > INT_MAX)
				die_usage(st, "invalid PID: %s", arg);
			if (o->npids >= PT_MAX_PIDS)
				die_usage(st, "too many PIDs (at most 32): %s", arg);
			o->pids[o->npids++] = (pid_t)v;
			if (!*end)
				break;
		}
		o->pid = o->pids[0];
		return true;
	case OPT_FOLLOW:
		o->follow = true;
		return true;
	case OPT_FOLLOW_HOLD: {
		double s = parse_seconds(st, arg);

		if (s < 0.1 || s > 600)
			die_usage(st, "invalid --follow-hold (seconds, 0.1 to 600): %s", arg);
		o->follow_hold_ms = (uint32_t)(s * 1000 + 0.5);
		return true;
	}
	case OPT_HELD:
		o->held = true;
		return true;
	case OPT_SANDBOX_FD:
	case OPT_SANDBOX_SLOT:
	case OPT_READY_FD:
	case OPT_SPARE_FD:
		v = strtol(arg, &end, 10);
		if (*end || v < 0 || v > INT_MAX)
			die_usage(st, "invalid number: %s", arg);
		*(key == OPT_SANDBOX_FD ? &o->sandbox_fd : key == OPT_READY_FD ? &o->ready_fd :
		  key == OPT_SPARE_FD ? &o->spare_fd : &o->sandbox_slot) = (int)v;
		return true;
	}
	return false;
}

/* Once every option is read: the combinations that make no sense. */
static void check_options(struct argp_state *st, const struct pt_options *o)
{
	if (o->check_kernel && (o->pid || o->cmd))
		die_usage(st, "%s", "--check-kernel traces nothing: give it without -p or a command");
	if (o->check_kernel)
		return;
	if (o->pid && o->cmd)
		die_usage(st, "%s", "give either -p PID or -- CMD, not both");
	if (!o->pid && !o->cmd && o->spare_fd < 0)
		die_usage(st, "%s", "nothing to trace: give -p PID or -- CMD");
	if (o->spare_fd >= 0 && (o->pid || o->cmd || o->ready_fd < 0 || o->follow))
		die_usage(st, "%s", "--spare-fd is the --follow coordinator's: with --ready-fd, without -p or a command");
	if (o->supervised != SUPERVISED_AUTO && !o->cmd)
		die_usage(st, "%s", "--supervised is about a launched command: it needs -- CMD, not -p");
	if (o->follow && o->ncompare)
		die_usage(st, "%s", "--follow and --compare-env cannot be combined");
	if (o->light && o->python_objects)
		die_usage(st, "%s", "--python-objects probes the object allocator, --light no allocator at all: give one");
	if (o->ncompare && !o->cmd)
		die_usage(st, "%s", "--compare-env runs the command again: it needs -- CMD, not -p");
}

/* The sizes of the tables and outputs: whether key was one. */
static bool parse_limit(int key, char *arg, struct argp_state *st, struct pt_options *o)
{
	switch (key) {
	case OPT_PY_CHUNKS:
		o->py_chunks = (uint32_t)parse_count(st, arg);
		break;
	case OPT_MAX_STACKS:
		o->max_stacks = (uint32_t)parse_count(st, arg);
		break;
	case OPT_MAX_INV_KEPT:
		o->max_inv_kept = (uint32_t)parse_count(st, arg);
		if (o->max_inv_kept < PT_INV_KEEP_MIN)
			die_usage(st, "invalid --max-invocations-kept: %s (at least 16)", arg);
		break;
	case OPT_MAX_OUTPUT:
		o->max_output = parse_size(st, arg, true);
		break;
	case OPT_MAX_LIVE:
		o->live_slots = (uint32_t)parse_count(st, arg);
		o->live_slots_set = true;
		break;
	case OPT_SAMPLE_BYTES:
		o->sample_bytes = parse_size(st, arg, true);
		/* The weights' fixed-point math (bpf/sample.h) holds up to 4 GiB. */
		if (o->sample_bytes > PT_SAMPLE_MAX_MEAN)
			die_usage(st, "--sample-bytes too large: %s (at most 4G)", arg);
		break;
	case OPT_PERF_MAP_MAX:
		o->perf_map_max = parse_size(st, arg, false);
		break;
	default:
		return false;
	}
	return true;
}

static error_t parse_arg(int key, char *arg, struct argp_state *st)
{
	struct pt_options *o = st->input;
	long v;

	switch (key) {
	case 'd':
		o->duration = parse_seconds(st, arg);
		break;
	case 'i':
		o->interval = parse_seconds(st, arg);
		break;
	case 'o':
		o->outdir = arg;
		break;
	case OPT_TRUST_OUTDIR:
		pt_outdir_set_trust(true);   /* util/outdir.h: read where DIR is checked */
		break;
	case OPT_TIMELINE: {
		char *end;
		long v;

		errno = 0;
		v = strtol(arg, &end, 10);
		if (errno || *end || end == arg || v < 0 || v > 60000)
			die_usage(st, "invalid --timeline-interval (milliseconds, 0 to 60000): %s", arg);
		o->timeline_ms = (unsigned)v;
		break;
	}
	case OPT_TOP:
		o->top = (int)parse_count(st, arg);
		break;
	case OPT_JSON_STACKS:
		o->json_stacks = strcmp(arg, "all") ? (uint32_t)parse_count(st, arg) : 0;
		break;
	case OPT_NO_FP:
		o->fp_stacks = false;
		break;
	case OPT_UNWIND:
		if (strcmp(arg, "dwarf") && strcmp(arg, "fp"))
			die_usage(st, "invalid --unwind mode: %s (dwarf or fp)", arg);
		o->dwarf = strcmp(arg, "dwarf") == 0;
		break;
	case OPT_FRAMES:
		for (v = PT_FRAMES_COLLAPSED; v <= PT_FRAMES_LANG; v++)
			if (strcmp(arg, pt_frames_mode_name((enum pt_frames_mode)v)) == 0)
				break;
		if (v > PT_FRAMES_LANG)
			die_usage(st, "invalid --frames mode: %s (collapsed, all or python)", arg);
		o->frames = (int)v;
		break;
	case OPT_NO_ARENAS:
		o->arenas = false;
		break;
	case OPT_LIGHT:
		o->light = true;
		break;
	case OPT_SUPERVISED:
		o->supervised = parse_supervised(st, arg);
		break;
	case OPT_PERF_UPROBES:
		o->perf_uprobes = true;
		break;
	case OPT_PER_INV:
		o->per_invocation = true;
		break;
	case OPT_EMF:
		o->emf = true;
		break;
	case OPT_BOUNDARY:
		if (strncmp(arg, "start=", 6) == 0 || strncmp(arg, "end=", 4) == 0) {
			if (pt_boundary_parse(arg, &o->boundary_spec))
				die_usage(st, "invalid --boundary: %s (start=LIB:SYM[:entry|:return],end=LIB:SYM[:entry|:return])", arg);
			o->boundary = BOUNDARY_UPROBE;
			break;
		}
		for (v = 0; v < 4; v++)
			if (strcmp(arg, pt_boundary_names[v]) == 0)
				break;
		if (v == 4)
			die_usage(st, "invalid --boundary mode: %s (auto, runtime-api, uprobe, none, or start=LIB:SYM,end=LIB:SYM)", arg);
		o->boundary = (int)v;
		break;
	case OPT_MAX_PEAK:
		o->max_peak = parse_size(st, arg, false);
		break;
	case 'q':
		o->quiet = true;
		break;
	case 'v':
		o->verbose = true;
		break;
	case OPT_COMPARE_ENV:
	case OPT_TARGET_ENV:
		if (!strchr(arg, '=') || arg[0] == '=')
			die_usage(st, "expected VAR=VALUE, got: %s", arg);
		if (key == OPT_COMPARE_ENV) {
			if (o->ncompare >= PT_MAX_COMPARE)
				die_usage(st, "%s", "at most 4 --compare-env settings");
			o->compare[o->ncompare++] = arg;
		} else {
			if (o->ntarget_env >= PT_MAX_COMPARE)
				die_usage(st, "%s", "at most 4 --target-env settings");
			o->target_env[o->ntarget_env++] = arg;
		}
		break;
	case OPT_COMPARE_CHILD:
		o->compare_child = true;
		break;
	case OPT_COMPARE_UNTRACED:
		if (!strcmp(arg, "0"))
			o->compare_untraced = 0;
		else if ((o->compare_untraced = (int)parse_count(st, arg)) > PT_MAX_UNTRACED)
			die_usage(st, "at most 16 untraced runs per setting (PT_MAX_UNTRACED): %s", arg);
		break;
	case OPT_SUMMARY:
		o->summary = arg;
		break;
	case ARGP_KEY_ARG:
		/* Everything after "--" (or the first non-option) is the command. */
		o->cmd = &st->argv[st->next - 1];
		st->next = st->argc;
		break;
	case ARGP_KEY_END:
		check_options(st, o);
		break;
	default:
		return parse_start_opt(key, arg, st, o) || parse_follow(key, arg, st, o) ||
		       parse_limit(key, arg, st, o) ? 0 : ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* Kernel bytes one slot of the stack table costs: its record, counters and Python chunk, and
 * its id's element in the hash map (htab_elem, key, value and bucket: ~96 bytes). Measured:
 * 242 MiB for 262144 slots (fdinfo memlock of the four maps), 968 bytes a slot. */
#define STACK_SLOT_BYTES (sizeof(struct pt_stack_rec) + sizeof(struct pt_stack_stats) + \
			  sizeof(struct pt_py_chunk) + 96)

uint32_t pt_stacks_for_memory(uint64_t avail, uint64_t cg_room)
{
	uint64_t budget = avail / 16, n = PT_MIN_AUTO_STACKS;

	if (cg_room && cg_room / 8 < budget)
		budget = cg_room / 8;
	while (n < PT_MAX_AUTO_STACKS && 2 * n * STACK_SLOT_BYTES <= budget)
		n *= 2;
	return (uint32_t)n;
}

/* A number after "KEY:" in text, in kB units when the line says so; 0 when absent. */
static uint64_t meminfo_bytes(const char *text, const char *key)
{
	const char *p = text ? strstr(text, key) : NULL;

	return p ? strtoull(p + strlen(key), NULL, 10) * 1024 : 0;
}

/* Room left under a cgroup's limit, given its limit and use files' text; 0 when unlimited or
 * unreadable, 1 when at or over it. */
static uint64_t room_of(const char *dir, const char *limit_file, const char *use_file)
{
	char path[4400], *lim, *use;
	uint64_t room = 0, l, u;

	snprintf(path, sizeof(path), "%s/%s", dir, limit_file);
	lim = pt_read_file(path, 64, NULL);
	snprintf(path, sizeof(path), "%s/%s", dir, use_file);
	use = pt_read_file(path, 64, NULL);
	/* v2 says "max", v1 a number near 2^63 for no limit. */
	if (lim && use && sscanf(lim, "%" SCNu64, &l) == 1 && sscanf(use, "%" SCNu64, &u) == 1 &&
	    l < (1ULL << 60))
		room = l > u ? l - u : 1;
	free(lim);
	free(use);
	return room;
}

/* Room left under our memory cgroup's limit, the tightest of it and its ancestors' (cgroup v2
 * memory.max - memory.current; v1 memory.limit_in_bytes - memory.usage_in_bytes), 0 when there
 * is no limit or it cannot be read. The BPF maps' memory is charged to it: a runtime's own
 * limit when peaktrace is the function's command. */
static uint64_t cgroup_room(void)
{
	char *cg = pt_read_file("/proc/self/cgroup", 4096, NULL), *line, *save = NULL, dir[4300];
	uint64_t best = 0, r;

	for (line = cg ? strtok_r(cg, "\n", &save) : NULL; line; line = strtok_r(NULL, "\n", &save)) {
		char *ctl = strchr(line, ':'), *path = ctl ? strchr(ctl + 1, ':') : NULL, *slash;
		bool v2;

		if (!path)
			continue;
		*path++ = 0;
		ctl++;
		v2 = !*ctl;
		if (!v2 && strcmp(ctl, "memory"))
			continue;
		/* The cgroup, then each ancestor up to the root. */
		for (;;) {
			snprintf(dir, sizeof(dir), v2 ? "/sys/fs/cgroup%s" : "/sys/fs/cgroup/memory%s", path);
			r = v2 ? room_of(dir, "memory.max", "memory.current") :
				 room_of(dir, "memory.limit_in_bytes", "memory.usage_in_bytes");
			if (r && (!best || r < best))
				best = r;
			slash = strrchr(path, '/');
			if (!slash || slash == path)
				break;
			*slash = 0;
		}
	}
	free(cg);
	return best;
}

uint32_t pt_stacks_here(void)
{
	char *mi = pt_read_file("/proc/meminfo", 65536, NULL);
	uint64_t avail = meminfo_bytes(mi, "MemAvailable:");

	free(mi);
	return pt_stacks_for_memory(avail, cgroup_room());
}

void pt_cli_parse(int argc, char **argv, struct pt_options *o)
{
	static const struct argp argp = { .options = opts, .parser = parse_arg, .doc = doc,
					  .args_doc = "[-- CMD [ARGS...]]" };

	*o = defaults;
	/* Bad input is EXIT_USAGE (argp's default is 64) on a "peaktrace: " line (argp names the
	 * program by argv[0]: "./build/peaktrace: unrecognized option" otherwise). */
	argp_err_exit_status = EXIT_USAGE;
	if (argc > 0)
		argv[0] = (char *)"peaktrace";
	argp_parse(&argp, argc, argv, ARGP_IN_ORDER, NULL, o);
	o->max_stacks_auto = !o->max_stacks;
	if (o->max_stacks_auto)
		o->max_stacks = pt_stacks_here();
}

/*
 * peaktrace diff: its own argp table, so its --help shows only what it takes.
 */
static const char diff_doc[] =
"Compare two peaktrace -o directories, A (the baseline) and B: the peak live\n"
"heap, RSS and totals of each with the change, every stack's change at the\n"
"peak, live at the end and allocated in total (from the folded files, so every\n"
"stack counts, exactly), each invocation's peaks matched by seq, and a\n"
"differential flame graph of the peak.\n"
"\n"
"USAGE: peaktrace diff [--max-growth SIZE] [--max-input SIZE] [-o OUTDIR] DIR_A DIR_B"
"\v"
"EXAMPLES:\n"
"    peaktrace diff base/ new/                 # what changed from base to new\n"
"    peaktrace diff --max-growth 512K base/ new/ || echo regression\n"
"\n"
"Files written to OUTDIR (default ./" PT_DIFF_DEFAULT_OUT "): diff.txt (the report),\n"
"diff.peak.folded (each stack's signed change at the peak, in bytes) and\n"
"diff.peak.svg (width: B's bytes at the peak; red grew, blue shrank since A).\n"
"\n"
"Inputs: report.json, peak.folded, live.folded and alloc.folded of each\n"
"directory, regular files only (a symbolic link inside a directory is refused,\n"
"never followed), together at most --max-input (default 512M): more is refused\n"
"before anything is read. A folded line deeper than 512 frames keeps its\n"
"innermost 511 under \"[outer frames cut]\" (counted in the report).\n"
"\n"
"Exit codes: 0 ok, 1 other failure, 2 usage or unreadable input (also: over\n"
"--max-input), 6 OUTDIR not writable or refused, 9 the peak live heap grew by more than\n"
"--max-growth.\n";

enum { OPT_MAX_GROWTH = 1100, OPT_MAX_INPUT };

static const struct argp_option diff_opts[] = {
	{ "max-growth", OPT_MAX_GROWTH, "SIZE", 0, "Exit 9 if B's peak live heap exceeds A's by more than SIZE (e.g. 100000, 512K, 1M)", 0 },
	{ "output", 'o', "OUTDIR", 0, "Write diff.txt, diff.peak.folded and diff.peak.svg into OUTDIR (default ./" PT_DIFF_DEFAULT_OUT "; created 0700 if needed, refused if another user owns it or others can write to it)", 0 },
	{ "max-input", OPT_MAX_INPUT, "SIZE", 0, "Read at most SIZE bytes of both directories' files together; more is refused, exit 2 (default 512M)", 0 },
	{ "trust-output-dir", OPT_TRUST_OUTDIR, NULL, 0, "Write into OUTDIR even if another user owns it or others can write to it (files are still never written through links in it)", 0 },
	{ "top", OPT_TOP, "N", 0, "Stacks listed per direction and figure (default 10)", 0 },
	{ "quiet", 'q', NULL, 0, "Do not print the report on stdout", 0 },
	{},
};

static error_t parse_diff_arg(int key, char *arg, struct argp_state *st)
{
	struct pt_diff_options *o = st->input;

	switch (key) {
	case OPT_MAX_GROWTH:
		o->max_growth = parse_size(st, arg, true);
		o->gate = true;
		break;
	case OPT_MAX_INPUT:
		o->max_input = parse_size(st, arg, false);
		break;
	case 'o':
		o->outdir = arg;
		break;
	case OPT_TRUST_OUTDIR:
		pt_outdir_set_trust(true);
		break;
	case OPT_TOP:
		o->top = (int)parse_count(st, arg);
		break;
	case 'q':
		o->quiet = true;
		break;
	case ARGP_KEY_ARG:
		if (!o->dir_a)
			o->dir_a = arg;
		else if (!o->dir_b)
			o->dir_b = arg;
		else
			die_usage(st, "diff takes two directories, got a third: %s", arg);
		break;
	case ARGP_KEY_END:
		if (!o->dir_b)
			die_usage(st, "%s", "diff needs two directories: peaktrace diff DIR_A DIR_B");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

void pt_cli_parse_diff(int argc, char **argv, struct pt_diff_options *o)
{
	static const struct argp argp = { .options = diff_opts, .parser = parse_diff_arg,
					  .doc = diff_doc, .args_doc = "DIR_A DIR_B" };

	*o = (struct pt_diff_options){
		.outdir = PT_DIFF_DEFAULT_OUT,   /* -o */
		.top = 10,                       /* --top */
		.max_input = PT_DIFF_DEFAULT_MAX_INPUT, /* --max-input */
	};
	argp_err_exit_status = EXIT_USAGE;
	argp_parse(&argp, argc, argv, 0, NULL, o);
}
