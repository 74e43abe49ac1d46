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
#include <sys/signalfd.h>
#include <unistd.h>
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
