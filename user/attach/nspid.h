/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* nspid.h — a PID as peaktrace's /proc names it, as the BPF programs see it (the host's). */
#ifndef PEAKTRACE_NSPID_H
#define PEAKTRACE_NSPID_H

#include <stdbool.h>
#include <sys/types.h>

/* True when peaktrace itself runs in a PID namespace other than the kernel's initial one (a
 * container with its own /proc). */
bool pt_in_pid_namespace(void);
/* The host tgid of pid (a process of peaktrace's PID namespace) into *host: pid itself outside
 * a container, else read with the task iterator of bpf/nspid.bpf.c. 0, or a negative errno
 * (-ESRCH: not in peaktrace's namespace; a BPF failure). */
int pt_host_tgid(pid_t pid, pid_t *host);
/* The target's: pt_host_tgid, a failure said on stderr. */
int pt_host_tgid_target(pid_t pid, pid_t *host);

#endif
