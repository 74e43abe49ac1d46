/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* invocation.h — per-invocation records (Lambda-style invocations found in the kernel). */
#ifndef PEAKTRACE_INVOCATION_H
#define PEAKTRACE_INVOCATION_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include "util/fmt.h"
#include "bpf/peaktrace.h"
#include "symbolize/symbolize.h"

#define PT_INV_TOP 5
/* Stacks kept per invocation for report.html without --per-invocation: the biggest at its peak,
 * the rest summed into other_* (so its total stays right). */
#define PT_INV_KEEP 64

/* An outcome only user space gives: the kernel ends an invocation the process died in as
 * PT_OUT_KILLED; pt_inv_exit_outcome() makes it this when the process exited by itself (exit or
 * exit_group, any status) rather than by a signal. Not in enum pt_inv_outcome: no BPF code sets it. */
#define PT_OUT_EXITED 16

struct pt_py_resolver;
struct pt_profile;

/* Where single stacks are read and named: the kernel's stack table, its Python words (py_fd -1
 * when the target runs no CPython) and the symbolizers (may be NULL: addresses only). */
struct pt_stack_src {
	int stacks_fd;
	int py_fd;
	int py_chunks_fd;
	struct pt_py_resolver *py;
	struct pt_symbolizer *sym;
};

struct pt_inv_stack {
	uint32_t stack;        /* kernel stack index */
	int64_t bytes;         /* held at the invocation's peak */
	int64_t count;
};

/* Characters of a request id kept in a record (sanitized): ids are UUIDs, but a runtime's may be
 * longer; BPF keeps PT_REQID_LEN bytes of the POST line's id, its length and hash, and the whole
 * id comes from the answer to "next" (invocation/stream.c inv_whole_id). */
#define PT_REQID_SHOW 512

struct pt_inv_record {
	uint64_t seq;          /* 0 = init phase (launch) or the time since attaching (attach) */
	bool attached;         /* seq 0 began when peaktrace attached, not at the process's start */
	bool light;            /* --light: no heap figures (written null, shown "-") */
	char id[PT_REQID_SHOW + 1];   /* sanitized (util/fmt.h) by pt_inv_append, cut there */
	uint32_t outcome;      /* enum pt_inv_outcome */
	uint64_t start_ns, end_ns;   /* CLOCK_MONOTONIC */
	uint64_t start_epoch, end_epoch;   /* pt_inv's: what a live block's ts compares to */
	int64_t rss_start, rss_peak, rss_end;
	int64_t heap_start, heap_peak, heap_peak_count, heap_end;
	uint64_t alloc_count, alloc_bytes, free_count, free_bytes;
	uint64_t vmhwm;        /* the process high-water mark when it ended: Lambda's figure */
	int exit_status;       /* with PT_OUT_EXITED: the status it exited with */
	int exit_signal;       /* with PT_OUT_KILLED: the signal that killed it (0: not known) */
	/* glibc arenas when it ended (arena_read false when not measured) */
	bool arena_read;
	int64_t arena_live, arena_resident, arena_retained, arena_retained_change;
	/* Resident memory by allocator when it ended, from its mappings (arenas/resident.h; also
	 * with --light; mem_read false when not measured): glibc's malloc heap (main arena, thread
	 * arenas) and CPython's pymalloc arenas, and anonymous bytes past the scan budget. */
	bool mem_read;
	/* Not read (neither the arenas nor the mappings) because the next invocation began
	 * next_gap_ns after this one ended, before the reading was due: reading /proc/PID/smaps
	 * then would slow that invocation (~1.5 ms of a 5 ms Node invocation here). */
	bool reading_skipped;
	uint64_t next_gap_ns;
	int64_t heap_main_resident, heap_thread_resident, pymalloc_resident, mem_unscanned;
	uint32_t pymalloc_pools;
	uint32_t ntop;
	struct pt_inv_stack top[PT_INV_TOP];
	bool overwritten;      /* the kernel reused its buffer before we read it */
	bool stacks_lost;      /* its stacks at the peak not read (figures whole): two newer starts
				* before user space got to them (PT_ERR_INV_STACKS_LOST) */
	uint32_t traj_n;       /* RSS trajectory (see struct pt_inv) */
	struct { uint64_t t_ns; int64_t rss; } traj[PT_TRAJ_MAX];
	/* Anonymous RSS at the invocation's RSS peak by the stack that faulted it in (rss.bpf.h;
	 * pt_inv_capture_rss, rss/rssinv.c), most first. */
	uint32_t nrss_top;
	struct pt_inv_stack rss_top[PT_INV_TOP];
	struct pt_inv_stack *rss_all;   /* every one of them (only with --per-invocation) */
	uint32_t nrss_all;
	/* The stacks that held memory at the peak: every one with --per-invocation, else the
	 * PT_INV_KEEP biggest, the rest summed in other_bytes/other_count over other_stacks. */
	struct pt_inv_stack *all;
	uint32_t nall;
	uint32_t other_stacks;
	int64_t other_bytes, other_count;
};

/*
 * The records in memory, in order of seq. With keep set (--max-invocations-kept) they are
 * bounded: pt_inv_list_trim lets go of records in the middle, keeping the first keep/4, the
 * last keep/4 and, of those between, the keep/4 to keep/2 highest RSS peaks (the rows the report
 * shows), so a flood of invocations (real or faked on any socket) cannot grow the tracer. What
 * the report sums over every record is kept whole below, as each is appended.
 */
struct pt_inv_list {
	struct pt_inv_record *r;
	uint32_t n, cap;
	uint32_t keep;           /* bound on n (0: none); at least PT_INV_KEEP_MIN */
	uint64_t max_peak;       /* --max-peak (bytes, 0: off): records over it are counted */
	uint64_t total;          /* records appended, kept or not */
	uint64_t total_inv;      /* of those, invocations (seq != 0) */
	uint64_t overwritten;    /* of those, overwritten (PT_ERR_INV_LOST) */
	uint64_t stacks_lost;    /* of those, stacks_lost and not overwritten */
	uint64_t dropped;        /* records let go of (not in r[]) */
	uint64_t dropped_inv;    /* of those, invocations (seq != 0) */
	uint64_t dropped_max_seq;        /* the highest seq let go of */
	uint64_t dropped_over_max_peak;  /* let go of, with an RSS peak over max_peak */
	uint64_t dropped_killed;         /* let go of, killed or exited (never: the last is kept) */
};

#define PT_INV_KEEP_DEFAULT 1000
#define PT_INV_KEEP_MIN 16

/* rec->rss_top from the stats map: each stack's rss_inv_peak[seq & 1] where its rss_inv_seq
 * equals rss_seq (rss_g.inv_peak_seq of that half), else its rss_now. 0 or -errno. */
int pt_inv_capture_rss(struct pt_inv_record *rec, uint64_t rss_seq, int stats_fd, uint32_t nstacks,
		       bool keep_all);

const char *pt_outcome_name(uint32_t outcome);
/* The outcome as printed and written: pt_outcome_name, except that the row since attaching ends
 * at the runtime's first GET .../next as "next" (it was not Lambda's init phase). */
const char *pt_inv_outcome(const struct pt_inv_record *r);
/* "init" (seq 0 from the process's start), "attached" (seq 0 from the attach) or "invocation". */
const char *pt_inv_phase(const struct pt_inv_record *r);
/* A record the process's end closed (PT_OUT_KILLED from the kernel), given the wait status the
 * kernel saw at exit (task->exit_code: signal in the low 7 bits, status in bits 8-15): killed by
 * that signal, or PT_OUT_EXITED with its status. Other records are left as they are. */
void pt_inv_exit_outcome(struct pt_inv_record *r, int wait_status);
/* The phase before the first START ended as an invocation does, with a request id: an invocation
 * already running when tracing began (its start was not seen; its figures start with tracing). */
static inline bool pt_inv_started_before(const struct pt_inv_record *r)
{
	return r->seq == 0 && r->id[0] &&
	       (r->outcome == PT_OUT_RESPONSE || r->outcome == PT_OUT_ERROR || r->outcome == PT_OUT_KILLED ||
		r->outcome == PT_OUT_EXITED);
}

/* Find "Lambda-Runtime-Aws-Request-Id:" (case-insensitive) in HTTP response bytes and copy its
 * value. Returns the value's length, 0 when absent. Pure, unit tested. */
size_t pt_rapi_request_id(const char *buf, size_t len, char *out, size_t outlen);

/* The target's sockets connected to its Runtime API (AWS_LAMBDA_RUNTIME_API in its
 * environment), so a request sent before attaching is recognized. Returns the number of fds
 * stored (0 if the process is no Lambda runtime). */
int pt_rapi_sockets(pid_t pid, int *fds, int max);
/* Mark those sockets connected in the rapi_fds map (its fd), before attaching; key_pid is pid
 * as the BPF programs see it (the host's, attach/nspid.h). */
void pt_rapi_seed(int rapi_fds_fd, pid_t pid, pid_t key_pid);

/* Fill rec from the kernel's record and the stats of stacks [0, nstacks) (read through
 * stats_fd): the top stacks held at the invocation's peak. Stack counts are kept in units of
 * 2^-count_shift allocation (--sample-bytes; 0 otherwise) and returned in allocations. */
int pt_inv_capture(struct pt_inv_record *rec, const struct pt_inv *inv, int stats_fd,
		   uint32_t nstacks, bool keep_all, unsigned count_shift);

/* Keep the max biggest stacks of rec->all (by bytes, then stack index), the rest summed into
 * other_bytes/other_count/other_stacks, so the kept plus the rest is what all held. Pure. */
void pt_inv_keep_biggest(struct pt_inv_record *rec, uint32_t max);

int pt_inv_append(struct pt_inv_list *l, const struct pt_inv_record *rec);
/* With l->keep set and n at it: let go of records in r[keep/4, min(n - keep/4, hi)) (hi: the
 * first index the caller still needs by position) but for the highest RSS peaks among them, so
 * n falls by a quarter of keep or more. Returns how many were let go of: every index at or past
 * the trimmed span moves down by that much. Pure. */
uint32_t pt_inv_list_trim(struct pt_inv_list *l, uint32_t hi);
void pt_inv_list_free(struct pt_inv_list *l);

/* Lambda-style one-line summary, with the true peak beside the high-water mark. */
void pt_inv_line(FILE *f, const struct pt_inv_record *rec);
/* One JSON object (no newline); frames named through src (Python frames spliced in). */
void pt_inv_json(FILE *f, const struct pt_inv_record *rec, const struct pt_stack_src *src);

/* Kernel stack idx as frames (leaf first, Python frames spliced in) into a new profile p:
 * fr[0..*n) index p->frames (fr holds PT_MAX_MERGED). 0, or -1 when unknown (p then empty). */
int pt_inv_stack_frames(const struct pt_stack_src *src, uint32_t idx, struct pt_profile *p,
			uint32_t *fr, uint32_t *n);

/* The frames of kernel stack idx as a JSON array (leaf first: func, module, addr). */
void pt_inv_json_frames(FILE *f, const struct pt_stack_src *src, uint32_t idx);

/* CloudWatch embedded metric format: one JSON object (no newline) for an invocation. */
void pt_inv_emf(FILE *f, const struct pt_inv_record *rec, const char *function_name,
		uint64_t wall_ms);
/* The EMF function name: AWS_LAMBDA_FUNCTION_NAME of the target (attach) or ours (launch), else
 * comm. */
void pt_emf_function_name(pid_t pid, bool launched, const char *comm, char *out, size_t outlen);

#endif
