// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * wake.c — SIGCHLD as a file descriptor.
 *
 * Why: the launched command's ptrace stops (its exec stop, held while the probes of the new
 * image go in, and its exit stop) and its exit notify the tracer with SIGCHLD and nothing else.
 * A poll loop asleep in epoll_wait on the ring buffer alone saw them only at its timeout (up to
 * 100 ms): with no BPF event to wake it, the exec stop was held that long. A signalfd in the
 * same epoll set wakes it at once. signalfd needs the signal blocked in every thread (a thread
 * with it unblocked takes it, and SIGCHLD's default action discards it), hence the block at
 * the very start of main(); and since a blocked mask survives fork and exec, every child
 * peaktrace execs gets the mask peaktrace was started with back first.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "util/wake.h"

static sigset_t started_with;
static bool blocked;
static int sfd = -1;

void pt_sigchld_block(void)
{
	sigset_t chld;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &chld, &started_with) == 0)
		blocked = true;
}

void pt_sigmask_restore(void)
{
	if (blocked)
		sigprocmask(SIG_SETMASK, &started_with, NULL);
}

int pt_sigchld_fd(void)
{
	sigset_t chld;

	if (sfd >= 0 || !blocked)
		return blocked ? sfd : -EINVAL;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sfd = signalfd(-1, &chld, SFD_NONBLOCK | SFD_CLOEXEC);
	return sfd >= 0 ? sfd : -errno;
}

void pt_sigchld_drain(void)
{
	struct signalfd_siginfo si[8];

	while (sfd >= 0 && read(sfd, si, sizeof(si)) > 0)
		;
}

void pt_waiter_setup(struct pt_waiter *w, int ring_fd, bool child, pid_t pid)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int fd = child ? pt_sigchld_fd() : (int)syscall(SYS_pidfd_open, pid, 0);

	w->child = child;
	if (!child)
		w->pidfd = fd;
	w->ep = epoll_create1(EPOLL_CLOEXEC);
	if (w->ep < 0)
		return;
	ev.data.u32 = 0;
	if (epoll_ctl(w->ep, EPOLL_CTL_ADD, ring_fd, &ev))
		goto fail;
	ev.data.u32 = 1;
	if (fd >= 0 && epoll_ctl(w->ep, EPOLL_CTL_ADD, fd, &ev))
		goto fail;
	return;
fail:
	close(w->ep);
	w->ep = -1;
}

int pt_waiter_wait(struct pt_waiter *w, struct ring_buffer *rb, int timeout_ms)
{
	struct epoll_event ev[2];
	int n, i;

	if (w->ep < 0) {
		/* Records nobody was woken for make no epoll event: consume after the poll. */
		n = ring_buffer__poll(rb, timeout_ms);
		i = n < 0 ? n : ring_buffer__consume(rb);
		return n < 0 ? n : i < 0 ? i : n + i;
	}
	n = epoll_wait(w->ep, ev, 2, timeout_ms);
	if (n < 0)
		return -errno;
	for (i = 0; i < n; i++) {
		if (ev[i].data.u32 != 1)
			continue;
		if (w->child) {
			pt_sigchld_drain();   /* the child's changes are reaped by the caller, WNOHANG */
		} else {
			/* Readable for good once the process has exited, reaped or not (its parent
			 * may never reap it): out of the set, or the loop would spin. */
			epoll_ctl(w->ep, EPOLL_CTL_DEL, w->pidfd, NULL);
			w->exited = true;
		}
	}
	return ring_buffer__consume(rb);
}

void pt_waiter_close(struct pt_waiter *w)
{
	if (w->ep >= 0)
		close(w->ep);
	if (w->pidfd >= 0)
		close(w->pidfd);
	w->ep = w->pidfd = -1;
}
