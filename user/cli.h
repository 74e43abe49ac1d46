/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* cli.h — the command line: options, their defaults (cli.c) and the exit codes. */
#ifndef PEAKTRACE_CLI_H
#define PEAKTRACE_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "compare/compare.h"
#include "diff/diff.h"
#include "invocation/boundary.h"
#include "target/launch.h"   /* --supervised: SUPERVISED_* */

/* Exit codes: distinct per failure class so scripts can tell them apart. */
enum pt_exit {
	EXIT_OK = 0,
	EXIT_FAIL = 1,       /* anything else */
	EXIT_USAGE = 2,
	EXIT_NO_PROCESS = 3,
	EXIT_PERM = 4,
	EXIT_UNSUPPORTED = 5,
	EXIT_OUTPUT = 6,
	EXIT_BPF = 7,        /* the BPF programs failed to load or attach, or the kernel lacks a
	                      * feature they need (said in one line before any load; --check-kernel) */
	EXIT_MAX_PEAK = 8,   /* an invocation's true peak exceeded --max-peak */
	EXIT_MAX_GROWTH = 9, /* diff: B's peak live heap exceeded A's by more than --max-growth */
};

/* --boundary modes; pt_boundary_names[] spells each as the report does. */
enum { BOUNDARY_AUTO = 0, BOUNDARY_RUNTIME_API, BOUNDARY_NONE, BOUNDARY_AWS, BOUNDARY_UPROBE };
extern const char *const pt_boundary_names[];

/* -p: processes given at once (comma-separated and/or repeated). */
#define PT_MAX_PIDS 32

struct pt_options {
	pid_t pid;               /* -p: attach to this process (the first one given) */
	pid_t pids[PT_MAX_PIDS]; /* -p A,B / -p A -p B: every one (a sandbox when more than one) */
	int npids;
	bool follow;             /* --follow: also every process the target(s) start */
	uint32_t follow_hold_ms; /* --follow-hold: a process held at its exec this long at most */
	int sandbox_fd;          /* (internal) the coordinator's sandbox map, -1: none */
	int sandbox_slot;        /* (internal) this process's slot in it */
	int ready_fd;            /* (internal) written once tracing, -1: none */
	bool held;               /* (internal) -p of a process held by the coordinator before its
				  * new image ran: traced from its first instruction */
	int spare_fd;            /* (internal) a spare session (--follow): loaded before its
				  * process is known, it reads which one from this fd */
	char **cmd;              /* -- CMD ARGS: launch */
	double duration;         /* -d: seconds, 0 = until exit or Ctrl-C */
	double interval;         /* -i: status line period, seconds */
	const char *outdir;      /* -o: write every format here */
	int top;                 /* --top: stacks per report section */
	uint32_t json_stacks;    /* --json-stacks: top N per figure in report.json, 0 = all */
	uint32_t max_stacks;     /* --max-stacks */
	bool max_stacks_auto;    /* max_stacks is pt_stacks_here's, not the user's */
	uint32_t live_slots;     /* --max-live */
	bool live_slots_set;     /* --max-live given (else --python-objects sizes it) */
	bool fp_stacks;          /* --no-fp-walk clears: frames past the caller */
	bool dwarf;              /* --unwind dwarf (default) or fp */
	bool arenas;             /* glibc arena accounting (off with --no-arenas) */
	bool perf_uprobes;       /* --perf-uprobes: no uprobe-multi links */
	const char *cache_dir;   /* --cache-dir: unwind tables by build id (NULL: the default) */
	bool no_cache;           /* --no-cache */
	bool fast_start;         /* --fast-start: tables the cache lacks built after the release */
	bool light;              /* --light: no allocator probes (RSS, syscalls, invocations) */
	bool python_objects;     /* --python-objects: CPython's object allocator probed too */
	int boundary;            /* --boundary: BOUNDARY_* */
	struct pt_boundary_spec boundary_spec;   /* --boundary start=..,end=.. */
	uint64_t max_peak;       /* --max-peak: bytes, 0 = off */
	uint64_t sample_bytes;   /* --sample-bytes: mean bytes between stack samples, 0 = off */
	uint64_t perf_map_max;   /* --perf-map-max: bytes of a JIT's perf map read, 0 = the default */
	int frames;              /* --frames: enum pt_frames_mode (profile/frames.h) */
	bool per_invocation;     /* --per-invocation: flame graphs of each invocation's peak */
	uint32_t max_inv_kept;   /* --max-invocations-kept: invocation records kept in memory */
	uint64_t max_output;     /* --max-output: bytes the growing files may write into -o DIR */
	bool emf;                /* --emf: CloudWatch EMF line per invocation */
	bool quiet;              /* -q: no text report on stdout */
	bool verbose;            /* -v: libbpf debug output */
	char *compare[PT_MAX_COMPARE]; /* --compare-env: settings to compare against a baseline */
	int ncompare;
	int compare_untraced;    /* --compare-untraced: untraced runs per setting */
	bool compare_child;      /* (internal) one run of a comparison */
	const char *summary;     /* (internal) --summary FILE for the comparing parent */
	bool probe_floor;        /* (internal) --probe-floor: every BPF program returns at once */
	const char *prog_stats;  /* (internal) --prog-stats FILE: each program's run count and ns */
	const char *verifier_stats; /* (internal) --verifier-stats FILE: each program's verifier cost */
	uint32_t py_chunks;      /* (internal) --py-chunks N: the Python words' pool (0: --max-stacks
				  * chunks); the tests fill a small one to reach the hash map after it */
	int load_parts;             /* (internal) --load-parts N: copies loading the programs; 0: the machine decides */
	char *target_env[PT_MAX_COMPARE]; /* (internal) --target-env: set in the launched command */
	int ntarget_env;
	unsigned timeline_ms;    /* --timeline-interval: memory sampled every MS, 0 = off */
	int supervised;          /* --supervised: SUPERVISED_* */
	bool check_kernel;       /* --check-kernel: the kernel's features, nothing traced */
};

/* Fill o from the defaults and argv. Bad usage prints one "peaktrace: " line and exits
 * EXIT_USAGE; --help and --version print and exit 0. */
void pt_cli_parse(int argc, char **argv, struct pt_options *o);

/* --max-stacks' default: the largest power of two of stack slots (PT_MIN_AUTO_STACKS ..
 * PT_MAX_AUTO_STACKS) whose kernel memory is within a sixteenth of avail (bytes available
 * on the machine) and an eighth of cg_room (left under our memory cgroup's limit; 0: none).
 * pt_stacks_here asks this machine. */
#define PT_MIN_AUTO_STACKS (1u << 14)
#define PT_MAX_AUTO_STACKS (1u << 18)
uint32_t pt_stacks_for_memory(uint64_t avail, uint64_t cg_room);
uint32_t pt_stacks_here(void);

/* `peaktrace diff [OPTIONS] DIR_A DIR_B`: argv[0] is "diff". The same conventions. */
void pt_cli_parse_diff(int argc, char **argv, struct pt_diff_options *o);

#endif
