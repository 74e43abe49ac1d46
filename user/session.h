/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * session.h — one tracing session, step by step: find the target, open/configure/load the BPF
 * object, attach, start, poll, stop, collect, report. Each step returns an exit code (EXIT_OK:
 * go on); pt_session_free() is the one cleanup path, whatever step was reached.
 */
#ifndef PEAKTRACE_SESSION_H
#define PEAKTRACE_SESSION_H

#include "cli.h"

struct pt_session;

/* Before anything: root, and a writable output directory (created). */
int pt_preflight(const struct pt_options *opt);

/* NULL when out of memory. opt must outlive the session. */
struct pt_session *pt_session_new(const struct pt_options *opt);
/* Attach mode: check the process and find its allocator. Launch mode: find the command's
 * allocator and start it, held before exec. Then CPython detection and tracefs. */
int pt_session_find_target(struct pt_session *s);
/* Open the BPF object, configure it (rodata, map sizes, probe plan), load it. */
int pt_session_load(struct pt_session *s);
/* Seed the kernel's globals, open the streaming outputs, attach every probe, the ring buffer. */
int pt_session_attach(struct pt_session *s);
/* Let a launched command exec (or check the attached one still lives); say "tracing". */
int pt_session_start(struct pt_session *s);
/* Handle events until a signal, -d, or the target's exit. */
void pt_session_poll(struct pt_session *s);
/* Final state of the target, detach, and the invocation still running. */
void pt_session_stop(struct pt_session *s);
/* Read the kernel's tables and build the report. */
int pt_session_collect(struct pt_session *s);
/* Print and write the reports; EXIT_OUTPUT or EXIT_MAX_PEAK when they say so. */
int pt_session_report(struct pt_session *s);
/* Detach and free everything; a launched command that still runs is left running. */
void pt_session_free(struct pt_session *s);
/* The end, whatever step was reached: pt_session_free, then code; under a supervisor, once the
 * command ran, stay its parent until it exits and end as it ended (target/launch.h). */
int pt_session_end(struct pt_session *s, int code);

#endif
