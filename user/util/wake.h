/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* wake.h — SIGCHLD as a file descriptor, so a poll loop wakes at once on a child's stops and
 * exit, and the signal mask a command peaktrace starts must get back (a leaf: includes nothing of
 * peaktrace). */
#ifndef PEAKTRACE_UTIL_WAKE_H
#define PEAKTRACE_UTIL_WAKE_H

#include <stdbool.h>
#include <sys/types.h>

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

/*
 * What a poll loop sleeps on: an epoll set of the ring buffer's epoll fd (ring_fd) and what
 * wakes on the target's state changes: SIGCHLD's signalfd for a launched command (child: its
 * ptrace stops and exit), a pidfd for an attached one (its exit). Not libbpf's own epoll fd with
 * ours added to it: libbpf reads each event's data as the index of one of its rings. Without it
 * (no epoll, no signalfd) the loop wakes on the ring buffer and its timeout alone.
 */
struct ring_buffer;
struct pt_waiter {
	int ep;          /* -1 until set up, or when it could not be */
	int pidfd;       /* attached: the target's (-1: none) */
	bool child;
	bool exited;     /* the pidfd said so: every thread has exited (a zombie, maybe) */
};
/* ep and pidfd -1 first (the caller's initialization). */
void pt_waiter_setup(struct pt_waiter *w, int ring_fd, bool child, pid_t pid);
/* Sleep until an event, a state change of the target, or timeout_ms; then rb's events. Returns
 * ring_buffer__consume's count or -errno. */
int pt_waiter_wait(struct pt_waiter *w, struct ring_buffer *rb, int timeout_ms);
void pt_waiter_close(struct pt_waiter *w);

#endif
