/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * stream.h — the invocation stream while tracing: each invocation (or the init phase) captured
 * as its end event arrives (its figures, its stacks at its peak), printed and streamed to
 * DIR/invocations.jsonl and the --emf output outside the event callback, its end reading (arenas,
 * resident memory) taken a moment later, the one still running at the stop closed, and
 * --max-peak's verdict at the end. The session holds it by value and calls these verbs.
 */
#ifndef PEAKTRACE_INVOCATION_STREAM_H
#define PEAKTRACE_INVOCATION_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include "bpf/peaktrace.h"
#include "bpf/rapi.h"
#include "invocation/invocation.h"
#include "peaktrace.skel.h"

/* The target as an invocation's record needs it when the invocation ends (the session's). */
struct pt_inv_target {
	bool exited;          /* its exit event came: the outcome says how it ended */
	int exit_code;        /* the task's exit code from that event */
	uint64_t hiwater;     /* its mm's high-water mark at exit */
	uint64_t *vmhwm;      /* the highest VmHWM read so far: raised to each record's */
};

/* The reading of an ended invocation a moment after its end (the session's: resident memory,
 * arenas): rec is list->r[idx], the records before it stay where they are meanwhile. */
typedef void (*pt_inv_reading_fn)(void *ctx, struct pt_inv_record *rec, uint32_t idx);

struct pt_inv_stream {
	struct pt_inv_list *list;     /* where the records go (the report reads them there) */
	struct peaktrace_bpf *skel;   /* the kernel's double buffer (g.inv), rss_g, the stats map */
	pid_t pid;
	uint32_t max_stacks;          /* -s: the stack table's size */
	bool per_invocation;          /* --per-invocation: every stack of each, not the top */
	bool sampled;                 /* --sample-bytes: counts kept in 2^-PT_SAMPLE_COUNT_SHIFT */
	bool attached;                /* seq 0 began at the attach (-p without --held) */
	bool light, quiet;
	/* From the ring buffer: each START's request id and time, by parity; the last
	 * PT_EV_INV_RECORD (its PT_EV_INV_END comes next), whose figures are those at its end
	 * whatever started since (ended.seq says whose). */
	char start_id[2][PT_RAPI_COPY + 1];
	uint64_t start_ts[2];
	struct pt_inv ended;
	bool ended_ok;
	/* The streams: DIR/invocations.jsonl, the --emf output (DIR/emf.jsonl or stdout) */
	FILE *jsonl;
	FILE *emf;
	char function_name[128];   /* AWS_LAMBDA_FUNCTION_NAME of the target, for EMF */
	uint32_t written;          /* records already printed and streamed */
	/* --max-output: its cap over the streams (0: none), their bytes, the lines cut */
	uint64_t out_cap, out_used, jsonl_cut, emf_cut;
	/* An ended record's reading is due READING_SETTLE_NS after its end, when the runtime has
	 * freed what it sent and waits for its next event: list->r[reading_rec]. */
	bool readings;             /* taken at all (arenas on, or --light's resident memory) */
	uint64_t reading_due;      /* 0: none pending */
	uint32_t reading_rec;
	pt_inv_reading_fn reading;
	void *reading_ctx;
};

/* Stack indexes to read: the whole stacks' part of the table as far as it was used, and the
 * cut stacks' parts (pt_tier_start) when they were used. */
uint32_t pt_stacks_span(const struct peaktrace_bpf *skel, uint32_t max_stacks);

/* The streams opened in outdir (NULL: --emf to stdout, no jsonl), function_name read for EMF.
 * Set st's other fields first. 0 or -1 after saying which file could not be written. */
int pt_inv_stream_open(struct pt_inv_stream *st, const char *outdir, bool emf, uint64_t max_output,
		       bool launched, const char *comm);
/* A ring buffer record of the invocations' (START, RECORD, END; others ignored). */
void pt_inv_event(struct pt_inv_stream *st, const void *data, size_t len, const struct pt_inv_target *t);
/* Print and stream the records captured since the last call (outside the event callback:
 * symbolizing can take a while), the due reading first; src names their stacks. */
void pt_inv_flush(struct pt_inv_stream *st, const struct pt_stack_src *src);
/* The pending reading, now (the target's exit stop, or the stop). */
void pt_inv_reading_now(struct pt_inv_stream *st);
/* The invocation (or init phase) still running when tracing stopped, closed and appended. */
void pt_inv_close_running(struct pt_inv_stream *st, const struct pt_inv_target *t);
/* --max-peak: one line per invocation over it; EXIT_MAX_PEAK's value max_peak_code if any,
 * else code. */
int pt_inv_max_peak(const struct pt_inv_list *l, uint64_t max_peak, int code, int max_peak_code);
/* What --max-output cut of the streams, into the reports' account (invocation/invgraphs.h). */
struct pt_outcap;
void pt_inv_stream_account(const struct pt_inv_stream *st, struct pt_outcap *out);
void pt_inv_stream_close(struct pt_inv_stream *st);

#endif
