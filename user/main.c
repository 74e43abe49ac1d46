// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * peaktrace — who holds the memory, and when was the peak.
 *
 * main(): parse args -> check target -> open -> configure -> load -> attach -> loop -> report,
 * with one cleanup path.
 */
#include <argp.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include "util/fmt.h"
#include "target/proc.h"
#include "bpf/peaktrace.h"
#include "bpf/sample.h"
#include "bpf/inv.h"
#include "peaktrace.skel.h"
#include "profile/collect.h"
#include "target/launch.h"
#include "report/report.h"
#include "symbolize/symbolize.h"
#include "attach/umulti.h"
#include "invocation/invocation.h"
#include "unwind/unwind_maps.h"
#include "invocation/boundary.h"
#include "report/compare.h"
#include "python/python.h"

/* Exit codes: distinct per failure class so scripts can tell them apart. */
enum {
	EXIT_OK = 0,
	EXIT_FAIL = 1,       /* anything else */
	EXIT_USAGE = 2,
	EXIT_NO_PROCESS = 3,
	EXIT_PERM = 4,
	EXIT_UNSUPPORTED = 5,
	EXIT_OUTPUT = 6,
	EXIT_BPF = 7,
	EXIT_MAX_PEAK = 8,   /* an invocation's true peak exceeded --max-peak */
};

static struct options {
	pid_t pid;               /* -p: attach to this process */
	char **cmd;              /* -- CMD ARGS: launch */
	double duration;         /* -d: seconds, 0 = until exit or Ctrl-C */
	double interval;         /* -i: status line period, seconds */
	const char *outdir;      /* -o: write every format here */
	int top;                 /* --top: stacks per report section */
	uint32_t max_stacks;     /* --max-stacks */
	uint32_t live_slots;     /* --max-live */
	bool fp_stacks;          /* --no-fp-walk clears: frames past the caller */
	bool dwarf;              /* --unwind dwarf (default) or fp */
	bool arenas;             /* glibc arena accounting (off with --no-arenas) */
	bool perf_uprobes;       /* --perf-uprobes: no uprobe-multi links */
	int boundary;            /* --boundary: BOUNDARY_* */
	uint64_t max_peak;       /* --max-peak: bytes, 0 = off */
	uint64_t sample_bytes;   /* --sample-bytes: mean bytes between stack samples, 0 = off */
	bool per_invocation;     /* --per-invocation: flame graphs of each invocation's peak */
	bool emf;                /* --emf: CloudWatch EMF line per invocation */
	bool quiet;              /* -q: no text report on stdout */
	bool verbose;            /* -v: libbpf debug output */
	char *compare[PT_MAX_COMPARE]; /* --compare-env: settings to compare against a baseline */
	int ncompare;
	bool compare_child;      /* (internal) one run of a comparison */
	const char *summary;     /* (internal) --summary FILE for the comparing parent */
	char *target_env[PT_MAX_COMPARE]; /* (internal) --target-env: set in the launched command */
	int ntarget_env;
} env = {
	.duration = 0,
	.interval = 1.0,
	.top = 10,
	.max_stacks = PT_DEF_MAX_STACKS,
	.live_slots = PT_DEF_LIVE_SLOTS,
	.fp_stacks = true,
	.dwarf = true,
	.arenas = true,
	.boundary = 0,
};

enum { BOUNDARY_AUTO = 0, BOUNDARY_RUNTIME_API, BOUNDARY_NONE, BOUNDARY_AWS, BOUNDARY_UPROBE };
static const char *const boundary_names[] = { "auto", "runtime-api", "none", "uprobe", "uprobe" };
static struct pt_boundary_spec boundary_spec;   /* --boundary start=..,end=.. */

const char *argp_program_version = "peaktrace " PT_VERSION;
const char *argp_program_bug_address = NULL;
static const char doc[] =
"Trace a process's memory: every allocation counted exactly, the live-heap\n"
"and RSS peaks, and who held the memory at the peak.\n"
"\n"
"USAGE: peaktrace -p PID [-d SECONDS] [-o DIR]\n"
"       peaktrace [-d SECONDS] [-o DIR] -- CMD [ARGS...]"
"\v"
"EXAMPLES:\n"
"    peaktrace -p 1234              # attach until Ctrl-C or the target exits\n"
"    peaktrace -p 1234 -d 30 -o out # trace 30 s, write reports to out/\n"
"    peaktrace -o out -- ./server   # launch ./server, traced from 1st malloc\n"
"    peaktrace --top 20 -- python3 app.py\n"
"\n"
"Files written with -o: report.txt, report.json, {peak,live,alloc}.folded,\n"
"{peak,live,alloc}.svg, {peak,live,alloc}.speedscope.json, profile.pb.gz.\n"
"\n"
"Exit codes: 0 ok, 1 other failure, 2 usage, 3 no such process, 4 not root,\n"
"5 unsupported target, 6 output directory not writable, 7 BPF failure,\n"
"8 an invocation's true peak exceeded --max-peak.\n";

enum { OPT_TOP = 1000, OPT_MAX_STACKS, OPT_MAX_LIVE, OPT_NO_FP, OPT_NO_ARENAS, OPT_PERF_UPROBES,
       OPT_BOUNDARY, OPT_MAX_PEAK, OPT_PER_INV, OPT_EMF, OPT_UNWIND, OPT_COMPARE_ENV,
       OPT_COMPARE_CHILD, OPT_SUMMARY, OPT_TARGET_ENV, OPT_SAMPLE_BYTES };

static const struct argp_option opts[] = {
	{ "pid", 'p', "PID", 0, "Attach to this running process", 0 },
	{ "duration", 'd', "SECONDS", 0, "Stop after SECONDS (default: target exit or Ctrl-C)", 0 },
	{ "output", 'o', "DIR", 0, "Write every report format into DIR (created if needed)", 0 },
	{ "interval", 'i', "SECONDS", 0, "Status line period on a terminal (default 1)", 0 },
	{ "top", OPT_TOP, "N", 0, "Stacks shown per report section (default 10)", 0 },
	{ "max-stacks", OPT_MAX_STACKS, "N", 0, "Distinct stacks kept in the kernel (default 65536)", 0 },
	{ "max-live", OPT_MAX_LIVE, "N", 0, "Live allocations tracked (default 1048576)", 0 },
	{ "unwind", OPT_UNWIND, "MODE", 0, "Stack unwinder: dwarf (default: .eh_frame tables in the kernel, frame pointers where code has no CFI) or fp (frame pointers only, cheaper)", 0 },
	{ "no-fp-walk", OPT_NO_FP, NULL, 0, "Record only the allocation site, no unwinding (cheapest)", 0 },
	{ "sample-bytes", OPT_SAMPLE_BYTES, "SIZE", 0, "Unwind only a Poisson sample of allocations, one per SIZE bytes on average (e.g. 512K); per-stack figures become unbiased estimates, totals and peaks stay exact (default 0: every allocation)", 0 },
	{ "boundary", OPT_BOUNDARY, "MODE", 0, "Invocation boundaries: auto (default: runtime-api), runtime-api (Lambda Runtime API traffic), uprobe (aws-lambda-cpp's get_next/post_success/post_failure), none, or start=LIB:SYM[:entry|:return],end=LIB:SYM[:entry|:return] (uprobes on the runtime's own functions)", 0 },
	{ "max-peak", OPT_MAX_PEAK, "SIZE", 0, "Exit 8 if any invocation's true peak RSS exceeds SIZE (e.g. 256M, 1G)", 0 },
	{ "per-invocation", OPT_PER_INV, NULL, 0, "Also write folded stacks and a flame graph of each invocation's peak (with -o)", 0 },
	{ "emf", OPT_EMF, NULL, 0, "CloudWatch embedded-metric JSON per invocation (DIR/emf.jsonl, or stdout without -o)", 0 },
	{ "perf-uprobes", OPT_PERF_UPROBES, NULL, 0, "One perf-event uprobe per address, as on kernels before 6.6 (slower to detach)", 0 },
	{ "no-arenas", OPT_NO_ARENAS, NULL, 0, "No glibc arena accounting (saves a chunk-header read per allocation)", 0 },
	{ "compare-env", OPT_COMPARE_ENV, "VAR=VALUE", 0, "With -- CMD: trace CMD again with VAR=VALUE in its environment (e.g. MALLOC_MMAP_THRESHOLD_=32768) and print both results side by side; repeatable (up to 4), reports in DIR/run-N-*/", 0 },
	{ "compare-child", OPT_COMPARE_CHILD, NULL, OPTION_HIDDEN, "", 0 },
	{ "summary", OPT_SUMMARY, "FILE", OPTION_HIDDEN, "", 0 },
	{ "target-env", OPT_TARGET_ENV, "VAR=VALUE", OPTION_HIDDEN, "", 0 },
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

static error_t parse_arg(int key, char *arg, struct argp_state *st)
{
	char *end;
	long v;

	switch (key) {
	case 'p':
		errno = 0;
		v = strtol(arg, &end, 10);
		if (errno || *end || v <= 0 || v > INT_MAX)
			die_usage(st, "invalid PID: %s", arg);
		env.pid = (pid_t)v;
		break;
	case 'd':
		env.duration = parse_seconds(st, arg);
		break;
	case 'i':
		env.interval = parse_seconds(st, arg);
		break;
	case 'o':
		env.outdir = arg;
		break;
	case OPT_TOP:
		env.top = (int)parse_count(st, arg);
		break;
	case OPT_MAX_STACKS:
		env.max_stacks = (uint32_t)parse_count(st, arg);
		break;
	case OPT_MAX_LIVE:
		env.live_slots = (uint32_t)parse_count(st, arg);
		break;
	case OPT_NO_FP:
		env.fp_stacks = false;
		break;
	case OPT_UNWIND:
		if (strcmp(arg, "dwarf") && strcmp(arg, "fp"))
			die_usage(st, "invalid --unwind mode: %s (dwarf or fp)", arg);
		env.dwarf = strcmp(arg, "dwarf") == 0;
		break;
	case OPT_NO_ARENAS:
		env.arenas = false;
		break;
	case OPT_PERF_UPROBES:
		env.perf_uprobes = true;
		break;
	case OPT_PER_INV:
		env.per_invocation = true;
		break;
	case OPT_EMF:
		env.emf = true;
		break;
	case OPT_BOUNDARY:
		if (strncmp(arg, "start=", 6) == 0 || strncmp(arg, "end=", 4) == 0) {
			if (pt_boundary_parse(arg, &boundary_spec))
				die_usage(st, "invalid --boundary: %s (start=LIB:SYM[:entry|:return],end=LIB:SYM[:entry|:return])", arg);
			env.boundary = BOUNDARY_UPROBE;
			break;
		}
		for (v = 0; v < 4; v++)
			if (strcmp(arg, boundary_names[v]) == 0)
				break;
		if (v == 4)
			die_usage(st, "invalid --boundary mode: %s (auto, runtime-api, uprobe, none, or start=LIB:SYM,end=LIB:SYM)", arg);
		env.boundary = (int)v;
		break;
	case OPT_MAX_PEAK:
		env.max_peak = parse_size(st, arg, false);
		break;
	case OPT_SAMPLE_BYTES:
		env.sample_bytes = parse_size(st, arg, true);
		/* The weights' fixed-point math (bpf/sample.h) holds up to 4 GiB. */
		if (env.sample_bytes > PT_SAMPLE_MAX_MEAN)
			die_usage(st, "--sample-bytes too large: %s (at most 4G)", arg);
		break;
	case 'q':
		env.quiet = true;
		break;
	case 'v':
		env.verbose = true;
		break;
	case OPT_COMPARE_ENV:
	case OPT_TARGET_ENV:
		if (!strchr(arg, '=') || arg[0] == '=')
			die_usage(st, "expected VAR=VALUE, got: %s", arg);
		if (key == OPT_COMPARE_ENV) {
			if (env.ncompare >= PT_MAX_COMPARE)
				die_usage(st, "%s", "at most 4 --compare-env settings");
			env.compare[env.ncompare++] = arg;
		} else {
			if (env.ntarget_env >= PT_MAX_COMPARE)
				die_usage(st, "%s", "at most 4 --target-env settings");
			env.target_env[env.ntarget_env++] = arg;
		}
		break;
	case OPT_COMPARE_CHILD:
		env.compare_child = true;
		break;
	case OPT_SUMMARY:
		env.summary = arg;
		break;
	case ARGP_KEY_ARG:
		/* Everything after "--" (or the first non-option) is the command. */
		env.cmd = &st->argv[st->next - 1];
		st->next = st->argc;
		break;
	case ARGP_KEY_END:
		if (env.pid && env.cmd)
			die_usage(st, "%s", "give either -p PID or -- CMD, not both");
		if (!env.pid && !env.cmd)
			die_usage(st, "%s", "nothing to trace: give -p PID or -- CMD");
		if (env.ncompare && !env.cmd)
			die_usage(st, "%s", "--compare-env runs the command again: it needs -- CMD, not -p");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	if (level == LIBBPF_DEBUG && !env.verbose)
		return 0;
	if (level == LIBBPF_WARN && !env.verbose)
		return 0;
	return vfprintf(stderr, fmt, args);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* ---- target checks ------------------------------------------------------------------------ */

#define PF_KTHREAD 0x00200000

static int check_pid(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long flags = 0;
	int fd, i;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "peaktrace: no such process: %d\n", pid);
		return EXIT_NO_PROCESS;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0) {
		fprintf(stderr, "peaktrace: no such process: %d\n", pid);
		return EXIT_NO_PROCESS;
	}
	buf[n] = 0;
	/* Field 9 (flags) counted after the ")" that ends comm, which may contain spaces. */
	p = strrchr(buf, ')');
	for (i = 0; p && i < 7; i++)
		p = strchr(p + 1, ' ');
	if (p)
		flags = strtoul(p + 1, NULL, 10);
	if (flags & PF_KTHREAD) {
		fprintf(stderr, "peaktrace: PID %d is a kernel thread: it has no user-space heap to trace\n",
			pid);
		return EXIT_UNSUPPORTED;
	}
	snprintf(path, sizeof(path), "/proc/%d/task/%d", pid, pid);
	if (access(path, F_OK)) {
		fprintf(stderr, "peaktrace: %d is a thread, not a process: use its process ID\n", pid);
		return EXIT_UNSUPPORTED;
	}
	return EXIT_OK;
}

static int check_outdir(const char *dir)
{
	char probe[4096], *p, tmp[4096];
	int fd;

	snprintf(tmp, sizeof(tmp), "%s", dir);
	/* mkdir -p */
	for (p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		mkdir(tmp, 0755);
		*p = '/';
	}
	if (mkdir(tmp, 0755) && errno != EEXIST) {
		fprintf(stderr, "peaktrace: cannot create output directory %s: %s\n", dir, strerror(errno));
		return EXIT_OUTPUT;
	}
	snprintf(probe, sizeof(probe), "%s/.peaktrace-write-test", dir);
	fd = open(probe, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "peaktrace: output directory %s is not writable: %s\n", dir, strerror(errno));
		return EXIT_OUTPUT;
	}
	close(fd);
	unlink(probe);
	return EXIT_OK;
}

static void read_comm(pid_t pid, char *buf, size_t len)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	f = fopen(path, "r");
	if (f && fgets(buf, (int)len, f))
		buf[strcspn(buf, "\n")] = 0;
	if (f)
		fclose(f);
}

static uint64_t read_vmhwm(pid_t pid)
{
	return pt_proc_status_bytes(pid, "VmHWM");
}

/* ---- probes ------------------------------------------------------------------------------- */

#define MAX_LINKS 64
/* Attached probes: libbpf links, or raw uprobe-multi link fds. */
static struct {
	struct bpf_link *link;
	int fd;
	int group;          /* detach order: higher groups first */
} links[MAX_LINKS];
static int nlinks, cur_group;

static int add_link(struct bpf_link *l)
{
	if (!l)
		return -errno;
	if (nlinks < MAX_LINKS) {
		links[nlinks].link = l;
		links[nlinks].fd = -1;
		links[nlinks++].group = cur_group;
	}
	return 0;
}

static int add_link_fd(int fd)
{
	if (fd < 0)
		return fd;
	if (nlinks < MAX_LINKS) {
		links[nlinks].link = NULL;
		links[nlinks].fd = fd;
		links[nlinks++].group = cur_group;
	}
	return 0;
}

static void *destroy_link(void *arg)
{
	int i = (int)(long)arg;

	if (links[i].link)
		bpf_link__destroy(links[i].link);
	else
		close(links[i].fd);
	return NULL;
}

/*
 * Each uprobe detach waits for an RCU-tasks grace period (~100 ms here). Links of one group go
 * from parallel threads; groups go in order: entry probes, then return probes, then free and the
 * tracepoints (the reverse of attach_allocator()'s order, for the same reasons).
 */
static void detach_all(void)
{
	pthread_t th[MAX_LINKS];
	int started[MAX_LINKS], i, grp, maxg = 0;

	for (i = 0; i < nlinks; i++)
		maxg = links[i].group > maxg ? links[i].group : maxg;
	for (grp = maxg; grp >= 0; grp--) {
		for (i = 0; i < nlinks; i++) {
			started[i] = 0;
			if (links[i].group != grp)
				continue;
			if (pthread_create(&th[i], NULL, destroy_link, (void *)(long)i) == 0)
				started[i] = 1;
			else
				destroy_link((void *)(long)i);
		}
		for (i = 0; i < nlinks; i++)
			if (started[i])
				pthread_join(th[i], NULL);
	}
	nlinks = 0;
}

/* A one-instruction forwarding thunk: `jmp rel32` / `jmp rel8`, after an optional endbr64. Such an
 * extra entry point (jemalloc's operator delete: jmp free@plt) ends in another entry point that is
 * probed; probing it too would count its frees twice. */
static bool is_jmp_thunk(const uint8_t *code, ssize_t n)
{
	static const uint8_t endbr64[4] = { 0xf3, 0x0f, 0x1e, 0xfa };
	ssize_t i = 0;

	if (n >= 4 && memcmp(code, endbr64, 4) == 0)
		i = 4;
	return i < n && (code[i] == 0xe9 || code[i] == 0xeb);
}

/* Where each allocator entry point is probed (decided before load, attached after): the C entry
 * points, then the extra ones (C++ operators, jemalloc *allocx) of jemalloc/tcmalloc/mimalloc. */
static int plan_probes(const struct pt_allocator *a, struct pt_report *r)
{
	uint8_t code[32];
	int fd, slot, k, err;

	fd = open(a->open_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		fprintf(stderr, "peaktrace: cannot open allocator %s: %s\n", a->open_path, strerror(errno));
		return err;
	}
	for (slot = 0; slot < PT_PROBES_MAX; slot++) {
		bool extra = slot >= PT_FN_MAX;
		int fn = extra ? (int)pt_extra_fn_as(slot - PT_FN_MAX) : slot;
		uint64_t entry = extra ? a->extra_offset[slot - PT_FN_MAX] : a->fn_offset[slot];
		struct pt_probe_info *pi;
		bool ret = fn != PT_FN_FREE;
		ssize_t n;

		if (!entry)
			continue;
		pi = &r->probes[r->nprobes++];
		memset(pi, 0, sizeof(*pi));
		pi->fn = fn;
		pi->symbol = extra ? pt_extra_fn_name(slot - PT_FN_MAX) : a->fn_symbol[fn];
		pi->entry = entry;
		pi->shared_with = -1;
		pi->return_probe = ret;
		/* Several names share one address in glibc (aligned_alloc == memalign): one probe. */
		for (k = 0; k < r->nprobes - 1; k++) {
			if (!r->probes[k].forwards && r->probes[k].entry == entry) {
				pi->shared_with = r->probes[k].fn;
				pi->shared_symbol = r->probes[k].symbol;
				pi->offset = r->probes[k].offset;
				pi->place = r->probes[k].place;
				break;
			}
		}
		if (pi->shared_with >= 0)
			continue;
		n = pread(fd, code, sizeof(code), (off_t)entry);
		/* Only free-like thunks are skipped: free_enter has no nesting check, while an
		 * allocating thunk (mimalloc: _ZnwmRKSt9nothrow_t -> mi_new_nothrow, not an entry
		 * point) is probed, a tail jump into a probed function counting as nesting. */
		if (extra && fn == PT_FN_FREE && is_jmp_thunk(code, n)) {
			pi->forwards = true;
			pi->return_probe = false;
			continue;
		}
		/* Only free may move off its entry: the others also get a uretprobe, which needs
		 * the return address at [rsp], i.e. the entry. */
		pt_probe_place_x86(code, n > 0 ? (size_t)n : 0, !ret, &pi->place);
		pi->offset = entry + pi->place.skip;
	}
	close(fd);
	return 0;
}

/*
 * Attach order matters when the target is already running: free first (a block allocated while
 * free was not yet probed would look live forever), then every return probe (a return whose
 * entry was not seen is ignored), and the entry probes last (an entry whose return probe is
 * missing would leave a thread "inside" malloc). The entry program learns which function it is
 * in from the attach cookie.
 */
static int attach_allocator(struct peaktrace_bpf *skel, const struct pt_allocator *a, pid_t pid,
			    struct pt_report *r, bool multi)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uo);
	uint64_t ent_off[PT_PROBES_MAX], ret_off[PT_PROBES_MAX], cookie[PT_PROBES_MAX];
	uint32_t n = 0;
	int k, err = 0, pass;

	for (k = 0; k < r->nprobes; k++) {
		const struct pt_probe_info *pi = &r->probes[k];

		if (pi->shared_with >= 0 || pi->forwards || pi->fn == PT_FN_FREE)
			continue;
		ent_off[n] = pi->offset;
		ret_off[n] = pi->entry;
		cookie[n++] = (uint64_t)pi->fn;
	}
	for (pass = 0; pass < 3 && !err; pass++) {
		cur_group = pass;
		if (multi) {
			if (pass == 1 || pass == 2) {
				if (!n)
					continue;
				err = add_link_fd(pt_umulti_attach(
					bpf_program__fd(pass == 1 ? skel->progs.alloc_return :
								    skel->progs.alloc_enter_prog),
					a->open_path, pass == 1 ? ret_off : ent_off, cookie, n, pass == 1, pid));
				continue;
			}
			for (k = 0; k < r->nprobes && !err; k++) {
				uint64_t off = r->probes[k].offset, c = PT_FN_FREE;

				if (r->probes[k].fn == PT_FN_FREE && r->probes[k].shared_with < 0 &&
				    !r->probes[k].forwards)
					err = add_link_fd(pt_umulti_attach(bpf_program__fd(skel->progs.free_enter),
									   a->open_path, &off, &c, 1, false, pid));
			}
			continue;
		}
		for (k = 0; k < r->nprobes && !err; k++) {
			struct pt_probe_info *pi = &r->probes[k];
			bool is_free = pi->fn == PT_FN_FREE;

			if (pi->shared_with >= 0 || pi->forwards)
				continue;
			uo.retprobe = pass == 1;
			uo.bpf_cookie = (uint64_t)pi->fn;
			if (pass == 0 && is_free)
				err = add_link(bpf_program__attach_uprobe_opts(skel->progs.free_enter, pid,
									       a->open_path, pi->offset, &uo));
			else if (pass == 1 && !is_free)
				err = add_link(bpf_program__attach_uprobe_opts(skel->progs.alloc_return, pid,
									       a->open_path, pi->entry, &uo));
			else if (pass == 2 && !is_free)
				err = add_link(bpf_program__attach_uprobe_opts(skel->progs.alloc_enter_prog, pid,
									       a->open_path, pi->offset, &uo));
		}
	}
	if (err) {
		fprintf(stderr, "peaktrace: failed to attach %s to the allocator in %s: %s\n",
			pass - 1 == 1 ? "uretprobes" : "uprobes", a->path, strerror(-err));
		return err;
	}
	for (k = 0; k < r->nprobes; k++)
		r->probes[k].attached = !r->probes[k].forwards;
	return 0;
}

static int attach_tracepoints(struct peaktrace_bpf *skel, bool boundaries)
{
	struct bpf_program *rapi[] = {
		skel->progs.on_write_enter, skel->progs.on_sendto_enter, skel->progs.on_writev_enter,
		skel->progs.on_read_exit, skel->progs.on_recvfrom_exit,
	};
	struct bpf_program *tps[] = {
		skel->progs.on_mmap_enter, skel->progs.on_mmap_exit, skel->progs.on_munmap_enter,
		skel->progs.on_mremap_enter, skel->progs.on_brk_enter, skel->progs.on_brk_exit,
		skel->progs.on_madvise_enter, skel->progs.on_rss_stat, skel->progs.on_exec,
		skel->progs.on_exit,
	};
	size_t i;
	int err;

	cur_group = 0;   /* detached last, with free */
	for (i = 0; i < sizeof(tps) / sizeof(tps[0]); i++) {
		err = add_link(bpf_program__attach(tps[i]));
		if (err) {
			fprintf(stderr, "peaktrace: failed to attach %s: %s\n",
				bpf_program__section_name(tps[i]), strerror(-err));
			return err;
		}
	}
	for (i = 0; boundaries && i < sizeof(rapi) / sizeof(rapi[0]); i++) {
		err = add_link(bpf_program__attach(rapi[i]));
		if (err) {
			fprintf(stderr, "peaktrace: failed to attach %s: %s\n",
				bpf_program__section_name(rapi[i]), strerror(-err));
			return err;
		}
	}
	return 0;
}

_Static_assert((int)PT_FN_MAX == (int)PT_FN_COUNT && (int)PT_FN_FREE == (int)PT_FREE &&
	       (int)PT_FN_PVALLOC == (int)PT_PVALLOC, "enum pt_alloc_fn and enum pt_fn must agree");

/* Uprobes on the runtime's own functions mark invocation boundaries (--boundary start=..). */
static int attach_boundaries(struct peaktrace_bpf *skel, pid_t pid, const char *const *paths,
			     int npaths, bool launched)
{
	const struct pt_boundary_point *pts[2] = { &boundary_spec.start, &boundary_spec.end };
	int k, err;

	for (k = 0; k < 2; k++) {
		LIBBPF_OPTS(bpf_uprobe_opts, uo);
		char *path = NULL;
		uint64_t off;

		err = pt_boundary_resolve(launched ? 0 : pid, paths, npaths, pts[k], &path, &off);
		if (err) {
			fprintf(stderr, "peaktrace: --boundary %s: no function %s in an object matching %s%s\n",
				k ? "end" : "start", pts[k]->sym, pts[k]->lib,
				launched ? " (launch mode sees the program and the libraries it links)" : "");
			return err;
		}
		uo.retprobe = pts[k]->at_return;
		uo.bpf_cookie = k ? 2 : 1;
		if (env.verbose)
			fprintf(stderr, "peaktrace: %s boundary: %s at %s+0x%" PRIx64 " (%s)\n", k ? "end" : "start",
				pts[k]->sym, path, off, pts[k]->at_return ? "return" : "entry");
		cur_group = 2;
		err = add_link(bpf_program__attach_uprobe_opts(skel->progs.boundary_hit, pid, path, off, &uo));
		if (err) {
			fprintf(stderr, "peaktrace: failed to attach the %s boundary to %s in %s: %s\n",
				k ? "end" : "start", pts[k]->sym, path, strerror(-err));
			free(path);
			return err;
		}
		free(path);
	}
	return 0;
}

/*
 * aws-lambda-cpp (inside the official Node.js and Python runtime interface clients): get_next()
 * returning starts an invocation, post_success()/post_failure() end it; the request id comes
 * from their arguments. LOCAL symbols, found in .symtab of whichever mapped object has them.
 */
static int attach_aws_boundaries(struct peaktrace_bpf *skel, pid_t pid, const char *const *paths,
				 int npaths, bool launched)
{
	static const struct { const char *sym; bool ret; uint64_t cookie; } fns[] = {
		{ "_ZN3aws14lambda_runtime7runtime8get_nextEv", true, 3 },
		{ "_ZN3aws14lambda_runtime7runtime12post_successERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEERKNS0_19invocation_responseE", false, 4 },
		{ "_ZN3aws14lambda_runtime7runtime12post_failureERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEERKNS0_19invocation_responseE", false, 5 },
	};
	size_t k;
	int err;

	for (k = 0; k < sizeof(fns) / sizeof(fns[0]); k++) {
		LIBBPF_OPTS(bpf_uprobe_opts, uo);
		struct pt_boundary_point pt = { .lib = "", .at_return = fns[k].ret };
		char *path = NULL;
		uint64_t off;

		snprintf(pt.sym, sizeof(pt.sym), "%s", fns[k].sym);
		err = pt_boundary_resolve(launched ? 0 : pid, paths, npaths, &pt, &path, &off);
		if (err) {
			fprintf(stderr, "peaktrace: --boundary uprobe: no aws-lambda-cpp runtime (%s) in the "
					"objects %s maps%s\n", k == 0 ? "runtime::get_next" : k == 1 ?
					"runtime::post_success" : "runtime::post_failure",
				launched ? "the program" : "the process",
				launched ? " before it runs (a runtime that dlopens it: use -p)" : "");
			return err;
		}
		uo.retprobe = fns[k].ret;
		uo.bpf_cookie = fns[k].cookie;
		cur_group = 2;
		err = add_link(bpf_program__attach_uprobe_opts(skel->progs.boundary_hit, pid, path, off, &uo));
		if (err) {
			fprintf(stderr, "peaktrace: failed to attach to aws-lambda-cpp in %s: %s\n", path,
				strerror(-err));
			free(path);
			return err;
		}
		free(path);
	}
	return 0;
}

/* ---- runtime ------------------------------------------------------------------------------ */

struct run {
	struct peaktrace_bpf *skel;
	struct pt_symbolizer *sym;
	struct pt_child child;
	pid_t pid;
	bool exited;             /* target group died (event or wait) */
	int exit_code;           /* task exit code from the exit event */
	uint64_t hiwater;        /* from the exit event */
	uint64_t vmhwm;
	bool need_refresh;
	bool multi;              /* uprobe-multi links */
	/* invocations */
	struct pt_inv_list invs;
	char start_id[2][PT_REQID_LEN + 1];  /* request id read from each START, by parity */
	FILE *jsonl;             /* DIR/invocations.jsonl, one line per finished invocation */
	FILE *emf;               /* --emf output */
	char function_name[128]; /* AWS_LAMBDA_FUNCTION_NAME of the target, for EMF */
	/* CPython in the target (python.h): found before load; located (runtime address known to
	 * BPF) once its object is mapped; frame names read as new stacks appear. */
	bool py_found;
	struct pt_py_info py;
	struct pt_py_resolver *py_res;
	bool quiet;
	uint32_t written;        /* invocations already printed and streamed */
	/* glibc arenas */
	bool arenas;             /* accounting on */
	bool launched;
	struct pt_arenas ar;     /* read at the target's exit stop (launch mode), else at the end */
	/* The arenas are read a moment after an invocation ends (ARENA_SETTLE_NS), when the
	 * runtime has freed what it sent and waits for its next event: invs.r[arena_rec]. */
	uint64_t arena_due;      /* 0: no reading pending */
	uint32_t arena_rec;
};

#define ARENA_SETTLE_NS 50000000ULL

/* The pending invocation's arena figures, now (its record then may be printed). */
static void arena_reading(struct run *run)
{
	struct pt_inv_record *rec;

	if (!run->arena_due)
		return;
	run->arena_due = 0;
	if (run->arena_rec >= run->invs.n)
		return;
	rec = &run->invs.r[run->arena_rec];
	if (pt_arenas_totals(run->pid, bpf_map__fd(run->skel->maps.arenas), &run->skel->bss->g,
			     &rec->arena_live, &rec->arena_resident, &rec->arena_retained))
		return;
	rec->arena_read = true;
	/* Against the last invocation that was measured. */
	for (uint32_t k = run->arena_rec; k-- > 0;) {
		if (run->invs.r[k].arena_read) {
			rec->arena_retained_change = rec->arena_retained - run->invs.r[k].arena_retained;
			break;
		}
	}
}

static void collect_arenas(struct run *run)
{
	if (!run->arenas || run->ar.collected)
		return;
	run->ar.from_start = run->launched;
	pt_arenas_collect(&run->ar, run->pid, bpf_map__fd(run->skel->maps.arenas),
			  bpf_map__fd(run->skel->maps.thread_slots), &run->skel->bss->g);
}

/* An invocation (or the init phase) ended: read its half of the double buffer now. */
static void invocation_ended(struct run *run, uint64_t seq)
{
	const struct pt_inv *inv = &run->skel->bss->g.inv[seq & 1];
	uint32_t nstk = (uint32_t)run->skel->bss->g.next_stack + 1;
	struct pt_inv_record rec;

	if (nstk > env.max_stacks)
		nstk = env.max_stacks;
	pt_inv_capture(&rec, inv, bpf_map__fd(run->skel->maps.stats), nstk, env.per_invocation,
		       env.sample_bytes ? PT_SAMPLE_COUNT_SHIFT : 0);
	/* Two more invocations began before we got here: the buffer holds a newer one. */
	if (inv->seq != seq) {
		memset(&rec, 0, sizeof(rec));
		rec.seq = seq;
		rec.overwritten = true;
	}
	if (!rec.id[0] && seq)
		snprintf(rec.id, sizeof(rec.id), "%s", run->start_id[seq & 1]);
	rec.vmhwm = read_vmhwm(run->pid);
	if (rec.vmhwm < run->hiwater)
		rec.vmhwm = run->hiwater;   /* the process is gone: its mm's mark at exit */
	if (rec.vmhwm < (uint64_t)rec.rss_end)
		rec.vmhwm = rec.rss_end;    /* VmHWM is never below the RSS of the moment */
	if (rec.vmhwm < run->vmhwm)
		rec.vmhwm = run->vmhwm;
	else
		run->vmhwm = rec.vmhwm;
	arena_reading(run);   /* the previous one, if still pending */
	if (pt_inv_append(&run->invs, &rec) == 0 && run->arenas) {
		run->arena_rec = run->invs.n - 1;
		run->arena_due = now_ns() + ARENA_SETTLE_NS;
	}
}

/* Where per-invocation stacks are named: with the target's Python frames when it runs CPython. */
static struct pt_stack_src inv_src(struct run *run)
{
	struct pt_stack_src src = {
		.stacks_fd = bpf_map__fd(run->skel->maps.stacks),
		.py_fd = run->py_found ? bpf_map__fd(run->skel->maps.py_stacks) : -1,
		.py = run->py_res,
		.sym = run->sym,
	};

	return src;
}

/*
 * Print and stream the invocations captured since the last call. Kept out of the event callback:
 * symbolizing can take a while (a large binary's first lookup), and the kernel keeps only two
 * invocations, so every pending end is captured first and written afterwards.
 */
static void flush_invocations(struct run *run)
{
	if (run->arena_due && now_ns() >= run->arena_due)
		arena_reading(run);
	for (; run->written < run->invs.n && !(run->arena_due && run->written >= run->arena_rec);
	     run->written++) {
		const struct pt_inv_record *rec = &run->invs.r[run->written];

		if (rec->seq && !run->quiet) {
			fputs("peaktrace: ", stderr);
			pt_inv_line(stderr, rec);
		}
		if (run->jsonl) {
			{
				struct pt_stack_src src = inv_src(run);

				pt_inv_json(run->jsonl, rec, &src);
			}
			fputc('\n', run->jsonl);
			fflush(run->jsonl);
		}
		if (run->emf && rec->seq) {
			struct timespec now;

			clock_gettime(CLOCK_REALTIME, &now);
			pt_inv_emf(run->emf, rec, run->function_name,
				   (uint64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000);
			fputc('\n', run->emf);
			fflush(run->emf);
		}
	}
}

/* Tell BPF where _PyRuntime is, once the object defining it is mapped (after exec in launch
 * mode), and start reading code objects from the current image. */
static void python_locate(struct run *run)
{
	struct pt_py_offsets *o = &run->skel->bss->py_off;

	if (!run->py_found || o->runtime || pt_py_locate(run->pid, &run->py))
		return;
	run->py_res = pt_py_resolver_new(run->pid, &run->py);
	/* Offsets first, the address last: the walk starts when it sees a runtime. */
	*o = run->py.off;
	o->runtime = 0;
	__atomic_store_n(&o->runtime, run->py.off.runtime, __ATOMIC_RELEASE);
	if (env.verbose)
		fprintf(stderr, "peaktrace: CPython 3.%u in %s: _PyRuntime at 0x%" PRIx64 "\n",
			run->py.minor, run->py.path, (uint64_t)run->py.off.runtime);
}

/* A new stack with Python frames: read its code objects while the target holds them. */
static void python_new_stack(struct run *run, uint32_t idx)
{
	struct pt_py_stack ps;
	struct pt_stack_rec rec;

	if (!run->py_res || bpf_map_lookup_elem(bpf_map__fd(run->skel->maps.stacks), &idx, &rec) ||
	    bpf_map_lookup_elem(bpf_map__fd(run->skel->maps.py_stacks), &idx, &ps))
		return;
	pt_py_resolve_stack(run->py_res, idx, ps.w, rec.py_nr);
}

/* Load the symbol tables of everything the target maps now, so that symbolizing the first
 * invocation's stacks does not stall event handling. */
static void warm_symbolizer(struct run *run)
{
	struct pt_maps maps = { 0 };
	struct pt_symres res;
	int k;

	if (!run->sym || pt_maps_read(run->pid, &maps))
		return;
	for (k = 0; k < maps.n; k++)
		if (strchr(maps.m[k].perms, 'x') && maps.m[k].path && maps.m[k].path[0] == '/')
			pt_sym_resolve(run->sym, maps.m[k].start, &res);
	pt_maps_free(&maps);
}

static int on_event(void *ctx, void *data, size_t len)
{
	struct run *run = ctx;
	const struct pt_event *e = data;

	if (len < sizeof(__u32))
		return 0;
	switch (e->type) {
	case PT_EV_EXIT:
		if (len < sizeof(*e))
			return 0;
		run->exited = true;
		run->exit_code = e->exit_code;
		if (e->hiwater_rss > run->hiwater)
			run->hiwater = e->hiwater_rss;
		break;
	case PT_EV_EXEC:
	case PT_EV_EXEC_MAP:
		run->need_refresh = true;
		break;
	case PT_EV_PY_STACK:
		if (len >= sizeof(*e))
			python_new_stack(run, (uint32_t)e->addr);
		break;
	case PT_EV_INV_START: {
		const struct pt_inv_event *ie = data;

		if (len < sizeof(*ie))
			return 0;
		pt_rapi_request_id(ie->data, ie->len < PT_RAPI_COPY ? ie->len : PT_RAPI_COPY,
				   run->start_id[ie->seq & 1], sizeof(run->start_id[0]));
		arena_reading(run);   /* the next invocation began: what the last one left, now */
		break;
	}
	case PT_EV_INV_END: {
		const struct pt_inv_event *ie = data;

		if (len < sizeof(*ie))
			return 0;
		invocation_ended(run, ie->seq);
		break;
	}
	}
	return 0;
}

/* Launch mode: the child stopped at exit with its mm intact. */
static void at_child_exit(void *arg)
{
	struct run *run = arg;
	uint64_t hwm = read_vmhwm(run->pid);

	if (run->sym)
		pt_sym_refresh(run->sym);
	if (hwm > run->vmhwm)
		run->vmhwm = hwm;
	arena_reading(run);
	collect_arenas(run);
}

static void status_line(struct run *run, uint64_t *last_allocs, uint64_t *last_ns)
{
	const struct pt_global *g = &run->skel->bss->g;
	uint64_t now = now_ns(), allocs = g->alloc_count;
	double rate = (double)(allocs - *last_allocs) * 1e9 / (double)(now - *last_ns + 1);
	char b1[32], b2[32], b3[32];

	fprintf(stderr, "\r\033[Klive %s (%" PRId64 " blocks)  peak %s  rss %s  %.0f allocs/s",
		pt_fmt_bytes(b1, sizeof(b1), (double)g->live_bytes), (int64_t)g->live_count,
		pt_fmt_bytes(b2, sizeof(b2), (double)g->peak_bytes),
		pt_fmt_bytes(b3, sizeof(b3),
			     (double)pt_rss_total(g)),
		rate);
	*last_allocs = allocs;
	*last_ns = now;
}

static void read_errors(struct peaktrace_bpf *skel, uint64_t *out)
{
	int ncpu = libbpf_num_possible_cpus(), fd = bpf_map__fd(skel->maps.errors);
	uint64_t *vals;
	uint32_t k;
	int c;

	if (ncpu <= 0)
		return;
	vals = calloc(ncpu, sizeof(*vals));
	if (!vals)
		return;
	for (k = 0; k < PT_ERR_COUNT; k++) {
		out[k] = 0;
		if (bpf_map_lookup_elem(fd, &k, vals))
			continue;
		for (c = 0; c < ncpu; c++)
			out[k] += vals[c];
	}
	free(vals);
}

/*
 * Copy entries [0, n) of an array map. Not mmap: mapping a BPF array inserts every page of it at
 * once, which would count the whole table (26 MiB at the default sizes) in the tracer's RSS.
 */
static void *map_copy(struct bpf_map *m, uint32_t n)
{
	size_t vsz = bpf_map__value_size(m);
	char *buf = calloc(n ? n : 1, vsz);
	int fd = bpf_map__fd(m);
	uint32_t k;

	if (!buf)
		return NULL;
	for (k = 0; k < n; k++) {
		if (bpf_map_lookup_elem(fd, &k, buf + (size_t)k * vsz)) {
			free(buf);
			return NULL;
		}
	}
	return buf;
}

/* DIR/invocation-N.peak.folded and .svg: the stacks held at each invocation's own peak. */
static void write_invocation_graphs(const char *dir, const struct pt_inv_list *invs,
				    const struct pt_collect_in *all, struct pt_symbolizer *sym,
				    const char *comm)
{
	uint32_t nstk = all->nstacks, k, i;
	struct pt_stack_stats *st = calloc(nstk ? nstk : 1, sizeof(*st));

	if (!st)
		return;
	for (k = 0; k < invs->n; k++) {
		const struct pt_inv_record *ir = &invs->r[k];
		/* The same stacks, Python words and names; stats of this invocation's peak only,
		 * in whole counts (the weights are already applied). */
		struct pt_collect_in cin = *all;

		struct pt_profile prof;
		struct pt_map_stack *ms = NULL;
		uint32_t nms = 0;
		char path[4096], title[128], sub[256], b[32];
		FILE *f;

		if (!ir->nall)
			continue;
		cin.stats = st;
		cin.peak_seq = 1;
		cin.count_shift = 0;
		cin.cstats = NULL;
		memset(st, 0, nstk * sizeof(*st));
		/* A stats table that holds only this invocation's peak, in the fields the
		 * collector reads for "at the peak". */
		for (i = 0; i < ir->nall; i++) {
			if (ir->all[i].stack >= nstk)
				continue;
			st[ir->all[i].stack].alloc_count = 1;
			st[ir->all[i].stack].peak_bytes = ir->all[i].bytes;
			st[ir->all[i].stack].peak_count = ir->all[i].count;
			st[ir->all[i].stack].snap_seq = 1;
		}
		if (pt_collect(&cin, sym, &prof, &ms, &nms) == 0) {
			snprintf(path, sizeof(path), "%s/invocation-%" PRIu64 ".peak.folded", dir, ir->seq);
			if ((f = fopen(path, "w"))) {
				pt_write_folded(f, &prof, PT_PEAK_BYTES);
				fclose(f);
			}
			snprintf(path, sizeof(path), "%s/invocation-%" PRIu64 ".peak.svg", dir, ir->seq);
			snprintf(title, sizeof(title), "%s %" PRIu64 ": heap live at its peak",
				 ir->seq ? "Invocation" : "Init phase", ir->seq);
			snprintf(sub, sizeof(sub), "%s %s: peak heap %s", comm, ir->id,
				 pt_fmt_bytes(b, sizeof(b), (double)ir->heap_peak));
			if ((f = fopen(path, "w"))) {
				pt_write_flamegraph(f, &prof, PT_PEAK_BYTES, title, sub);
				fclose(f);
			}
		}
		for (i = 0; i < nms; i++)
			free(ms[i].frames);
		free(ms);
		pt_profile_free(&prof);
	}
	free(st);
}

/* A streaming output file in the output directory; NULL after saying why. */
static FILE *open_out(const char *dir, const char *name)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		fprintf(stderr, "peaktrace: cannot write %s: %s\n", path, strerror(errno));
	return f;
}

int main(int argc, char **argv)
{
	static const struct argp argp = { .options = opts, .parser = parse_arg, .doc = doc,
					  .args_doc = "[-- CMD [ARGS...]]" };
	struct pt_allocator alloc = { 0 };
	struct pt_report rep = { 0 };
	struct run run = { 0 };
	struct ring_buffer *rb = NULL;
	struct pt_collect_in cin;
	struct pt_collect_stats cstats = { 0 };
	struct pt_py_stack **py_words = NULL;
	struct peaktrace_bpf *skel = NULL;
	struct pt_unwinder *unw = NULL;
	void *stacks_map = NULL, *stats_map = NULL;
	uint64_t start_ns, last_status, last_allocs = 0, last_refresh;
	char **paths = NULL, *exe = NULL;
	int npaths = 0, err, code = EXIT_FAIL;
	bool launched = false, tty;
	uint32_t buckets, nstk = 0;

	argp_parse(&argp, argc, argv, ARGP_IN_ORDER, NULL, NULL);
	run.child.go_fd = run.child.report_fd = -1;
	rep.src.stacks_fd = rep.src.py_fd = -1;
	libbpf_set_print(libbpf_print);

	if (geteuid() != 0) {
		fprintf(stderr, "peaktrace: must be run as root (loading BPF programs and uprobes needs "
				"CAP_BPF, CAP_PERFMON and CAP_SYS_ADMIN)\n");
		return EXIT_PERM;
	}
	if (env.outdir && (code = check_outdir(env.outdir)) != EXIT_OK)
		return code;
	if (env.ncompare && !env.compare_child) {
		/* Each run is a child peaktrace with the same options (but these) before the command. */
		char **opts = calloc(argc, sizeof(*opts));
		int nopts = 0, i, cmd_at = (int)(env.cmd - argv);

		if (!opts)
			return EXIT_FAIL;
		for (i = 1; i < cmd_at; i++) {
			if (!strcmp(argv[i], "--"))
				continue;
			if (!strcmp(argv[i], "--compare-env")) {
				i++;
				continue;
			}
			if (!strncmp(argv[i], "--compare-env=", 14))
				continue;
			opts[nopts++] = argv[i];
		}
		code = pt_compare_run("/proc/self/exe", opts, nopts, env.cmd,
				      env.outdir ? env.outdir : "peaktrace-compare", env.compare, env.ncompare);
		free(opts);
		return code;
	}

	/* Which allocator, before anything runs. */
	if (env.pid) {
		if ((code = check_pid(env.pid)) != EXIT_OK)
			return code;
		err = pt_find_allocator(env.pid, &alloc);
		if (err == -ESRCH) {
			fprintf(stderr, "peaktrace: no such process: %d\n", env.pid);
			return EXIT_NO_PROCESS;
		}
		if (err == -EINVAL) {
			fprintf(stderr, "peaktrace: PID %d has no user-space memory map (a kernel thread "
					"or a process that is exiting)\n", env.pid);
			return EXIT_UNSUPPORTED;
		}
		if (err == -EACCES || err == -EPERM) {
			fprintf(stderr, "peaktrace: cannot read the memory map of PID %d: %s\n", env.pid,
				strerror(-err));
			return EXIT_PERM;
		}
		if (err) {
			fprintf(stderr, "peaktrace: no malloc found in the objects PID %d has mapped (a "
					"static binary without symbols, or an allocator peaktrace does not "
					"know)\n", env.pid);
			return EXIT_UNSUPPORTED;
		}
		run.pid = env.pid;
		{
			/* Probe the file the process really maps. Its path is the stable name (it
			 * survives an exec between here and the attach); only when the path now holds
			 * another file (a library upgraded on disk while the process runs) or none
			 * (deleted) does /proc/PID/map_files/, which names the mapped inode, take over. */
			struct pt_maps maps = { 0 };
			int k;

			if (pt_maps_read(env.pid, &maps) == 0) {
				for (k = 0; k < maps.n; k++) {
					char mf[128];

					if (!maps.m[k].path || strcmp(maps.m[k].path, alloc.path) ||
					    !strchr(maps.m[k].perms, 'x'))
						continue;
					struct stat pst;

					if (stat(alloc.open_path, &pst) == 0 && pst.st_ino == maps.m[k].inode)
						break;
					snprintf(mf, sizeof(mf), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, env.pid,
						 maps.m[k].start, maps.m[k].end);
					if (access(mf, R_OK) == 0) {
						char *dup = strdup(mf);

						if (dup) {
							free(alloc.open_path);
							alloc.open_path = dup;
						}
					}
					break;
				}
				pt_maps_free(&maps);
			}
		}
		read_comm(env.pid, rep.comm, sizeof(rep.comm));
		{
			char l[64];
			ssize_t n;

			snprintf(l, sizeof(l), "/proc/%d/exe", env.pid);
			n = readlink(l, rep.exe, sizeof(rep.exe) - 1);
			if (n > 0)
				rep.exe[n] = 0;
		}
	} else {
		err = pt_load_order(env.cmd[0], &exe, &paths, &npaths);
		if (err) {
			fprintf(stderr, "peaktrace: cannot execute %s: %s\n", env.cmd[0], strerror(-err));
			return err == -ENOENT ? EXIT_NO_PROCESS : EXIT_UNSUPPORTED;
		}
		err = pt_find_allocator_in((const char *const *)paths, npaths, &alloc);
		if (err) {
			fprintf(stderr, "peaktrace: no malloc found in %s or the libraries it loads (a "
					"static binary without symbols, or an allocator peaktrace does not "
					"know)\n", exe);
			code = EXIT_UNSUPPORTED;
			goto cleanup;
		}
		snprintf(rep.exe, sizeof(rep.exe), "%s", exe);
		{
			const char *b = strrchr(exe, '/');

			snprintf(rep.comm, sizeof(rep.comm), "%.15s", b ? b + 1 : exe);
		}
		err = pt_launch(env.cmd, env.target_env, env.ntarget_env, &run.child);
		if (err) {
			fprintf(stderr, "peaktrace: cannot start %s: %s\n", env.cmd[0], strerror(-err));
			goto cleanup;
		}
		launched = true;
		run.pid = run.child.pid;
	}

	/* CPython in the target: its frames are read in the kernel (python.bpf.h). */
	err = launched ? pt_py_detect((const char *const *)paths, npaths, &run.py)
		       : pt_py_detect_pid(run.pid, &run.py);
	if (err == 0)
		run.py_found = env.fp_stacks;
	else if (err == -ENOTSUP)
		fprintf(stderr, "peaktrace: note: CPython %s found: Python frames are read for 3.11, 3.12 "
				"and 3.13 only; native frames only\n", run.py.minor ? "3.x" : "(older than 3.11)");

	/* Tracepoints are attached by their tracefs ids: a fresh system may not have it mounted. */
	if (access("/sys/kernel/tracing/events", F_OK) && access("/sys/kernel/debug/tracing/events", F_OK) &&
	    mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL))
		fprintf(stderr, "peaktrace: warning: cannot mount tracefs on /sys/kernel/tracing: %s\n",
			strerror(errno));

	/* Open, configure, load. */
	skel = peaktrace_bpf__open();
	if (!skel) {
		fprintf(stderr, "peaktrace: failed to open BPF object: %s\n", strerror(errno));
		code = EXIT_BPF;
		goto cleanup;
	}
	buckets = 1;
	while (buckets * PT_BUCKET_SLOTS < env.live_slots)
		buckets <<= 1;
	skel->rodata->targ_tgid = (uint32_t)run.pid;
	skel->rodata->live_bucket_mask = buckets - 1;
	skel->rodata->max_stacks = env.max_stacks;
	skel->rodata->capture_stacks = env.fp_stacks;
	skel->rodata->sample_bytes = env.sample_bytes;
	pt_unwind_configure(skel, env.dwarf && env.fp_stacks, 0);
	skel->rodata->glibc_arenas = env.arenas && alloc.kind == PT_ALLOC_GLIBC;
	skel->rodata->free_checks_thread = alloc.kind == PT_ALLOC_JEMALLOC ||
					   alloc.kind == PT_ALLOC_TCMALLOC || alloc.kind == PT_ALLOC_MIMALLOC;
	skel->rodata->rapi_boundaries = env.boundary == BOUNDARY_AUTO || env.boundary == BOUNDARY_RUNTIME_API;
	bpf_map__set_max_entries(skel->maps.live, buckets);
	bpf_map__set_max_entries(skel->maps.stack_ids, env.max_stacks);
	bpf_map__set_max_entries(skel->maps.stacks, env.max_stacks);
	bpf_map__set_max_entries(skel->maps.stats, env.max_stacks);
	skel->rodata->python = run.py_found;
	bpf_map__set_max_entries(skel->maps.py_stacks, run.py_found ? env.max_stacks : 1);
	bpf_map__set_max_entries(skel->maps.live_overflow, buckets * PT_BUCKET_SLOTS / 16 + 1024);

	rep.alloc = &alloc;
	if (plan_probes(&alloc, &rep)) {
		code = EXIT_UNSUPPORTED;
		goto cleanup;
	}
	/* Uprobe-multi links (6.6+) when the kernel has them; perf-event uprobes otherwise. */
	run.multi = !env.perf_uprobes && pt_umulti_supported();
	if (run.multi) {
		bpf_program__set_expected_attach_type(skel->progs.alloc_enter_prog, PT_BPF_TRACE_UPROBE_MULTI);
		bpf_program__set_expected_attach_type(skel->progs.alloc_return, PT_BPF_TRACE_UPROBE_MULTI);
		bpf_program__set_expected_attach_type(skel->progs.free_enter, PT_BPF_TRACE_UPROBE_MULTI);
	}
	err = peaktrace_bpf__load(skel);
	if (err) {
		fprintf(stderr, "peaktrace: failed to load BPF programs: %s%s\n", strerror(-err),
			err == -EPERM ? " (need root)" : " (needs a kernel with BTF, uprobes and task storage; -v shows the verifier log)");
		code = err == -EPERM ? EXIT_PERM : EXIT_BPF;
		goto cleanup;
	}
	run.skel = skel;
	run.arenas = skel->rodata->glibc_arenas;
	run.launched = launched;
	run.quiet = env.quiet;
	/* .eh_frame tables: the target's code now (attach), or what it will load (launch). */
	unw = pt_unwind_load(skel, run.pid, launched ? paths : NULL, npaths);
	/* The init phase (seq 0) runs from now until the runtime first asks for work. */
	skel->bss->g.inv[0].state = PT_INV_RUNNING;
	skel->bss->g.inv[0].start_ns = now_ns();
	skel->bss->g.inv[0].peak_seq = 1;
	skel->bss->g.inv_peak_counter = 1;
	if (env.outdir) {
		if (!(run.jsonl = open_out(env.outdir, "invocations.jsonl")) ||
		    (env.emf && !(run.emf = open_out(env.outdir, "emf.jsonl")))) {
			code = EXIT_OUTPUT;
			goto cleanup;
		}
	} else if (env.emf) {
		run.emf = stdout;
	}
	if (env.emf) {
		/* The function's name, from its environment (attach) or ours (launch: inherited). */
		const char *fnm = getenv("AWS_LAMBDA_FUNCTION_NAME");
		char path[64], buf[65536];
		FILE *f;
		size_t n, i;

		snprintf(run.function_name, sizeof(run.function_name), "%s", fnm ? fnm : rep.comm);
		snprintf(path, sizeof(path), "/proc/%d/environ", run.pid);
		f = launched ? NULL : fopen(path, "r");
		n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
		if (f)
			fclose(f);
		buf[n] = 0;
		for (i = 0; i < n; i += strlen(buf + i) + 1)
			if (strncmp(buf + i, "AWS_LAMBDA_FUNCTION_NAME=", 25) == 0)
				snprintf(run.function_name, sizeof(run.function_name), "%.100s", buf + i + 25);
	}

	if (!launched) {
		/* RSS so far: kmem:rss_stat only reports a counter when it changes. */
		char path[64], line[256];
		long long kb;
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/status", run.pid);
		f = fopen(path, "r");
		while (f && fgets(line, sizeof(line), f)) {
			if (sscanf(line, "RssAnon: %lld kB", &kb) == 1)
				skel->bss->g.rss[PT_RSS_ANON] = kb * 1024;
			else if (sscanf(line, "RssFile: %lld kB", &kb) == 1)
				skel->bss->g.rss[PT_RSS_FILE] = kb * 1024;
			else if (sscanf(line, "RssShmem: %lld kB", &kb) == 1)
				skel->bss->g.rss[PT_RSS_SHMEM] = kb * 1024;
		}
		if (f)
			fclose(f);
		skel->bss->g.rss_peak = skel->bss->g.rss[PT_RSS_ANON] + skel->bss->g.rss[PT_RSS_FILE] +
					skel->bss->g.rss[PT_RSS_SHMEM];
		skel->bss->g.inv[0].rss_start = skel->bss->g.inv[0].rss_peak = skel->bss->g.rss_peak;
	}
	if (skel->rodata->rapi_boundaries && !launched) {
		/* Attaching to a runtime that may already be waiting for its next invocation. */
		int fds[16], n = pt_rapi_sockets(run.pid, fds, 16), k;
		uint32_t connected = 2;

		for (k = 0; k < n; k++) {
			uint64_t key = ((uint64_t)run.pid << 32) | (uint32_t)fds[k];

			bpf_map_update_elem(bpf_map__fd(skel->maps.rapi_fds), &key, &connected, BPF_ANY);
		}
	}
	if (attach_allocator(skel, &alloc, run.pid, &rep, run.multi) ||
	    attach_tracepoints(skel, skel->rodata->rapi_boundaries) ||
	    (env.boundary == BOUNDARY_UPROBE &&
	     attach_boundaries(skel, run.pid, (const char *const *)paths, npaths, launched)) ||
	    (env.boundary == BOUNDARY_AWS &&
	     attach_aws_boundaries(skel, run.pid, (const char *const *)paths, npaths, launched))) {
		code = EXIT_BPF;
		goto cleanup;
	}
	rb = ring_buffer__new(bpf_map__fd(skel->maps.events), on_event, &run, NULL);
	if (!rb) {
		fprintf(stderr, "peaktrace: failed to create ring buffer: %s\n", strerror(errno));
		code = EXIT_BPF;
		goto cleanup;
	}

	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	start_ns = now_ns();
	if (launched) {
		err = pt_launch_go(&run.child);
		if (err) {
			fprintf(stderr, "peaktrace: cannot execute %s: %s\n", env.cmd[0], strerror(-err));
			code = err == -ENOENT ? EXIT_NO_PROCESS : EXIT_FAIL;
			goto cleanup;
		}
	} else if (kill(run.pid, 0) && errno == ESRCH) {
		fprintf(stderr, "peaktrace: no such process: %d (it exited while probes were attached)\n",
			run.pid);
		code = EXIT_NO_PROCESS;
		goto cleanup;
	}
	run.sym = pt_sym_new(run.pid);
	run.ar.attach_resident = -1;
	if (!launched && run.arenas)
		run.ar.attach_resident = pt_arenas_resident_in_memory(run.pid);
	if (!launched) {
		warm_symbolizer(&run);
		python_locate(&run);
	}
	fprintf(stderr, "peaktrace: tracing PID %d (%s) with %s allocator %s; %s\n", run.pid, rep.comm,
		pt_allocator_kind_name(alloc.kind), alloc.path,
		env.duration > 0 ? "stops at the end of -d or Ctrl-C" : "Ctrl-C to stop");

	tty = isatty(STDERR_FILENO) && env.interval > 0;
	last_status = last_refresh = now_ns();
	while (!stop_signal) {
		uint64_t now;

		err = ring_buffer__poll(rb, run.arena_due ? 20 : 100);
		if (err < 0 && err != -EINTR) {
			fprintf(stderr, "peaktrace: ring buffer poll failed: %s\n", strerror(-err));
			break;
		}
		flush_invocations(&run);
		now = now_ns();
		if (launched && pt_child_poll(&run.child, at_child_exit, &run))
			run.exited = true;
		if (run.need_refresh && run.sym && !run.exited) {
			pt_sym_refresh(run.sym);
			pt_unwind_refresh(unw);
			python_locate(&run);
			run.need_refresh = false;
			last_refresh = now;
		}
		if (run.exited)
			break;
		if (!launched && kill(run.pid, 0) && errno == ESRCH) {
			run.exited = true;
			break;
		}
		if (now - last_refresh > 2000000000ULL && run.sym) {
			/* Periodic refresh also keeps VmHWM: after exit /proc has neither. */
			uint64_t hwm = read_vmhwm(run.pid);

			pt_sym_refresh(run.sym);
			if (hwm > run.vmhwm)
				run.vmhwm = hwm;
			last_refresh = now;
		}
		if (tty && now - last_status >= (uint64_t)(env.interval * 1e9))
			status_line(&run, &last_allocs, &last_status);
		if (env.duration > 0 && now - start_ns >= (uint64_t)(env.duration * 1e9))
			break;
	}
	if (tty)
		fprintf(stderr, "\r\033[K");

	/* Stop: final state of a still-running target first, then freeze the counters. */
	rep.duration_ns = now_ns() - start_ns;
	if (run.exited && run.sym) {
		/* A JIT runtime's perf map has grown since the last refresh (up to 2 s ago): the
		 * code a short-lived node script compiled last is often what allocated. The file
		 * outlives the process (/tmp/perf-PID.map); the mappings stay cached. */
		pt_sym_refresh(run.sym);
	}
	if (!run.exited) {
		uint64_t hwm = read_vmhwm(run.pid);

		if (run.sym)
			pt_sym_refresh(run.sym);
		if (hwm > run.vmhwm)
			run.vmhwm = hwm;
	}
	/* A live target stops paying for the probes now. For one that has exited nothing more can
	 * arrive: detaching (~100 ms of grace period per uprobe) waits until the report is out. */
	if (!run.exited)
		detach_all();
	ring_buffer__poll(rb, 0);
	if (launched) {
		pt_child_release(&run.child);
		pt_child_poll(&run.child, at_child_exit, &run);
	}

	/* The invocation (or init phase) still running when tracing stopped. */
	arena_reading(&run);
	{
		struct pt_inv cur = skel->bss->g.inv[skel->bss->g.inv_seq & 1];
		const struct pt_global *gg = &skel->bss->g;
		struct pt_inv_record rec;
		uint32_t n = (uint32_t)gg->next_stack + 1;

		if (cur.state == PT_INV_RUNNING) {
			/* Closed by the rule the BPF side uses at a boundary (bpf/inv.h). */
			pt_inv_close(&cur, gg, now_ns(), PT_OUT_UNFINISHED);
			pt_inv_capture(&rec, &cur, bpf_map__fd(skel->maps.stats),
				       n < env.max_stacks ? n : env.max_stacks, env.per_invocation,
				       env.sample_bytes ? PT_SAMPLE_COUNT_SHIFT : 0);
			if (!rec.id[0] && rec.seq)
				snprintf(rec.id, sizeof(rec.id), "%s", run.start_id[rec.seq & 1]);
			rec.vmhwm = run.vmhwm > run.hiwater ? run.vmhwm : run.hiwater;
			pt_inv_append(&run.invs, &rec);
		}
		flush_invocations(&run);
	}

	/* Collect. */
	rep.pid = run.pid;
	rep.launched = launched;
	rep.g = skel->bss->g;
	rep.top = env.top;
	rep.attach_multi = run.multi;
	rep.unwind = !env.fp_stacks ? "none" : env.dwarf ? "dwarf" : "fp";
	rep.invs = &run.invs;
	rep.boundary = env.boundary == BOUNDARY_AUTO ? "runtime-api (auto)" : boundary_names[env.boundary];
	rep.src = inv_src(&run);
	rep.max_peak = env.max_peak;
	rep.sample_bytes = env.sample_bytes;
	rep.launched = launched;
	collect_arenas(&run);
	rep.ar = run.ar;
	memset(&run.ar, 0, sizeof(run.ar));
	rep.ar.allocator = pt_allocator_kind_name(alloc.kind);
	read_errors(skel, rep.errors);
	rep.errors[PT_ERR_RAPI_FULL] += rep.g.rapi_full;
	for (uint32_t k = 0; k < run.invs.n; k++)
		rep.errors[PT_ERR_INV_LOST] += run.invs.r[k].overwritten;
	rep.exited = run.exited || (launched && run.child.exited);
	if (launched && run.child.exited) {
		if (WIFSIGNALED(run.child.status))
			rep.exit_signal = WTERMSIG(run.child.status);
		else
			rep.exit_status = WEXITSTATUS(run.child.status);
	} else if (run.exited) {
		if (run.exit_code & 0x7f)
			rep.exit_signal = run.exit_code & 0x7f;
		else
			rep.exit_status = (run.exit_code >> 8) & 0xff;
	}
	rep.vmhwm_bytes = run.vmhwm > run.hiwater ? run.vmhwm : run.hiwater;
	if ((uint64_t)rep.g.rss_peak > rep.vmhwm_bytes && rep.exited && !rep.vmhwm_bytes)
		rep.vmhwm_bytes = 0;
	nstk = rep.g.next_stack + 1 < env.max_stacks ? (uint32_t)rep.g.next_stack + 1 : env.max_stacks;
	rep.stacks_used = rep.g.next_stack < env.max_stacks ? rep.g.next_stack : env.max_stacks;
	rep.max_stacks = env.max_stacks;
	stacks_map = map_copy(skel->maps.stacks, nstk);
	stats_map = map_copy(skel->maps.stats, nstk);
	if (!stacks_map || !stats_map) {
		fprintf(stderr, "peaktrace: cannot read stack tables: %s\n", strerror(errno));
		goto cleanup;
	}
	cin.stacks = stacks_map;
	cin.stats = stats_map;
	cin.nstacks = nstk;
	cin.peak_seq = rep.g.peak_seq;
	cin.count_shift = env.sample_bytes ? PT_SAMPLE_COUNT_SHIFT : 0;
	cin.py = NULL;
	cin.py_res = run.py_res;
	cin.cstats = &cstats;
	if (run.py_found) {
		/* Each stack's Python words: only stacks that have some are in the map. */
		const struct pt_stack_rec *sr = stacks_map;

		py_words = calloc(nstk ? nstk : 1, sizeof(*py_words));
		for (uint32_t k = 0; py_words && k < nstk; k++) {
			if (!sr[k].py_nr || !(py_words[k] = malloc(sizeof(*py_words[k]))))
				continue;
			if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.py_stacks), &k, py_words[k])) {
				free(py_words[k]);
				py_words[k] = NULL;
			}
		}
		cin.py = (const struct pt_py_stack *const *)py_words;
	}
	err = pt_collect(&cin, run.sym, &rep.prof, &rep.mstacks, &rep.nmstacks);
	rep.errors[PT_ERR_PY_UNMATCHED] += cstats.py_unmatched;
	rep.errors[PT_ERR_PY_CODE] += pt_py_unreadable(run.py_res);
	if (err) {
		fprintf(stderr, "peaktrace: cannot build the profile: %s\n", strerror(-err));
		goto cleanup;
	}
	rep.prof.duration_ns = rep.duration_ns;
	/* The tracer's own footprint, for the report (its peak is reached by now). */
	rep.tracer_vmhwm = read_vmhwm(getpid());
	rep.prof.time_ns = (uint64_t)time(NULL) * 1000000000ULL - rep.duration_ns;

	if (!env.quiet)
		pt_report_text(stdout, &rep);
	code = EXIT_OK;
	if (env.outdir) {
		err = pt_report_write_dir(env.outdir, &rep);
		if (err) {
			fprintf(stderr, "peaktrace: failed to write reports to %s: %s\n", env.outdir,
				strerror(-err));
			code = EXIT_OUTPUT;
		} else {
			fprintf(stderr, "peaktrace: reports written to %s/\n", env.outdir);
		}
	}
	if (env.summary && (err = pt_summary_write(env.summary, &rep)))
		fprintf(stderr, "peaktrace: cannot write %s: %s\n", env.summary, strerror(-err));
	if (env.outdir && env.per_invocation)
		write_invocation_graphs(env.outdir, &run.invs, &cin, run.sym, rep.comm);
	if (env.max_peak) {
		uint32_t k;

		for (k = 0; k < run.invs.n; k++) {
			const struct pt_inv_record *ir = &run.invs.r[k];
			char b1[32], b2[32];

			if (ir->seq == 0 || (uint64_t)ir->rss_peak <= env.max_peak)
				continue;
			fprintf(stderr, "peaktrace: invocation %" PRIu64 " (RequestId %s) peaked at %s RSS, over "
					"--max-peak %s; top stacks at its peak in the report\n",
				ir->seq, ir->id[0] ? ir->id : "?",
				pt_fmt_bytes(b1, sizeof(b1), (double)ir->rss_peak),
				pt_fmt_bytes(b2, sizeof(b2), (double)env.max_peak));
			code = EXIT_MAX_PEAK;
		}
	}
	if (launched && !run.child.exited && env.duration > 0) {
		/* -d on a launched command: it was started for tracing only. */
		kill(run.child.pid, SIGTERM);
	}

cleanup:
	/* A launched command that still runs is left running, detached (like a target of -p). */
	if (launched && run.child.go_fd >= 0)
		pt_launch_abort(&run.child);
	detach_all();
	ring_buffer__free(rb);
	if (py_words) {
		for (uint32_t k = 0; k < nstk; k++)
			free(py_words[k]);
		free(py_words);
	}
	pt_py_resolver_free(run.py_res);
	pt_py_info_free(&run.py);
	free(stacks_map);
	free(stats_map);
	pt_unwind_free(unw);
	peaktrace_bpf__destroy(skel);
	if (run.sym)
		pt_sym_free(run.sym);
	pt_report_free(&rep);
	if (run.jsonl)
		fclose(run.jsonl);
	if (run.emf && run.emf != stdout)
		fclose(run.emf);
	pt_inv_list_free(&run.invs);
	pt_allocator_free(&alloc);
	if (paths)
		pt_strv_free(paths, npaths);
	free(exe);
	return code;
}
