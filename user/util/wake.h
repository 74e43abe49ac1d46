/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* wake.h — SIGCHLD as a file descriptor, so a poll loop wakes at once on a child's stops and
 * exit, and the signal mask a command peaktrace starts must get back (a leaf: includes nothing of
 * peaktrace). */
#ifndef PEAKTRACE_UTIL_WAKE_H
#define PEAKTRACE_UTIL_WAKE_H

/* First thing in main(), before any thread: SIGCHLD blocked (every thread inherits the mask,
 * so the signal stays pending for pt_sigchld_fd instead of being discarded by a thread that
 * has it unblocked), the mask peaktrace was started with kept. */
void pt_sigchld_block(void);
/* In a child peaktrace forked, before its exec: the mask peaktrace was started with, so a
 * command (and a peaktrace session) never inherits ours. Async-signal-safe. */
void pt_sigmask_restore(void);
/* A non-blocking signalfd for SIGCHLD, made once (shared by every caller); -errno when it
 * cannot be made (the caller's poll loop then wakes on its timeout alone, as before). */
int pt_sigchld_fd(void);
/* Read what is pending on it (the signals coalesce: the caller then reaps every child
 * state change with WNOHANG). */
void pt_sigchld_drain(void);

#endif
