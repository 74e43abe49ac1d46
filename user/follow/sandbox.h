/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sandbox.h — the sandbox report (--follow, several -p): every traced process together, from
 * the kernel's summed RSS (struct pt_sandbox) and what the coordinator saw of each process.
 * DIR/sandbox.txt (also on stdout) and DIR/sandbox.json (docs/json-report.md).
 */
#ifndef PEAKTRACE_REPORT_SANDBOX_H
#define PEAKTRACE_REPORT_SANDBOX_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "bpf/peaktrace.h"

/* One traced image of a process: its own session and report directory (an exec starts another). */
struct pt_sbx_image {
	pid_t pid;
	int slot;                /* the process's slot in struct pt_sandbox */
	int image;               /* 1, then one more per exec */
	char comm[32];           /* sanitized */
	char dir[64];            /* proc-PID-COMM[-N], inside the output directory */
	bool traced;             /* its session started (else the process ran untraced) */
	bool held;               /* held at its exec until traced: from its first instruction */
	bool hold_limit;         /* not traced: let go after PT_FOLLOW_HOLD_S held, its session not ready */
	uint64_t held_ns;        /* how long it was held (what following cost it at start) */
	int spare;               /* its session: PT_SBX_SPARE_* */
	int session_rc;          /* its session's exit code; -1: killed or not known */
};

/* How long --follow holds a process at its exec, at most, for its session (follow.c). */
#define PT_FOLLOW_HOLD_S 5

/* Which session traced an image (--follow keeps spare sessions loaded ahead of need). */
enum {
	PT_SBX_SPARE_NONE = 0,   /* a session started for it: its hold includes a whole BPF load */
	PT_SBX_SPARE_LOADED,     /* a spare whose BPF programs were loaded when the image needed it */
	PT_SBX_SPARE_LOADING,    /* a spare still loading then: the hold includes the rest */
};
extern const char *const pt_sbx_spare_names[];

/* What could not be followed, and what following did. */
struct pt_sbx_counters {
	uint64_t processes;          /* new processes (fork, vfork, clone of a process) seen */
	uint64_t execs;              /* execs seen */
	uint64_t exited_without_exec;/* processes that ended before any exec: not traced */
	uint64_t slots_full;         /* processes past PT_SBX_SLOTS: not traced */
	uint64_t session_failed;     /* sessions that did not start (the process ran untraced) */
	uint64_t hold_limit;         /* processes let go untraced, their session not tracing them
	                              * PT_FOLLOW_HOLD_S after their exec (follow.c) */
	uint64_t alloc_not_found;    /* images let go before their allocator was mapped */
	uint64_t spares_started;     /* spare sessions started (each loads the BPF programs) */
	uint64_t spares_unfit;       /* images a spare could not take (an allocator other than
				      * glibc's needs other settings): a session started for them */
	uint64_t spares_failed;      /* spares that ended before serving (no more were started) */
};

struct pt_sbx_report {
	const char *outdir;
	const struct pt_sandbox *sb;
	const struct pt_sbx_image *img;
	int nimg;
	struct pt_sbx_counters c;
	int top;                 /* stacks shown per process */
	uint32_t hold_ms;        /* --follow-hold */
	uint64_t start_ns;       /* CLOCK_MONOTONIC when following began (times are from it) */
};

/* The role a process's traffic shows: "runtime", "extension" or "process". */
const char *pt_sbx_role(const struct pt_sandbox *sb, int slot);
/* Sum of each slot's share at the peak minus the peak: another CPU moved a slot during the
 * copy (0 when none did). */
int64_t pt_sbx_unexplained(const __s64 *at_peak, __s64 peak);
/* Write DIR/sandbox.txt and sandbox.json, and the text on stdout unless quiet. 0 or -errno. */
int pt_sbx_report_write(const struct pt_sbx_report *r, bool quiet);

#endif
