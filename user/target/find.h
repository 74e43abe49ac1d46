/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * find.h — the target found, before anything runs: -p PID checked (a process, not a kernel
 * thread or a thread) and its allocator found; or -- CMD's objects and allocator found before
 * it is started. Each says why not on stderr; the caller turns the -errno into its exit code.
 * The comm and exe names written are sanitized (target-controlled).
 */
#ifndef PEAKTRACE_TARGET_FIND_H
#define PEAKTRACE_TARGET_FIND_H

#include <stddef.h>
#include <sys/types.h>
#include "target/procmaps.h"

/* -p PID: is it a process we can trace, and which allocator does it use. 0; -ESRCH: no such
 * process; -EPERM: its memory map cannot be read; -ENOTSUP: anything else (a kernel thread, a
 * thread, no malloc known). */
int pt_target_pid(pid_t pid, struct pt_allocator *alloc, char *comm, size_t comm_len,
		  char *exe_name, size_t exe_len);
/* -- CMD: the objects cmd will load (*exe, *paths, *npaths: pt_load_order, target/launch.h)
 * and the allocator among them; comm and exe_name from its path. 0; -ENOENT: no such
 * program; another -errno: it cannot be traced. */
int pt_target_command(const char *cmd, char **exe, char ***paths, int *npaths,
		      struct pt_allocator *alloc, char *comm, size_t comm_len, char *exe_name,
		      size_t exe_len);

#endif
