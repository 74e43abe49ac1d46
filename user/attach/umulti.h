/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* umulti.h — uprobe-multi links (kernel 6.6+) through the bpf() syscall: Debian 12's libbpf 1.1
 * predates them. */
#ifndef PEAKTRACE_UMULTI_H
#define PEAKTRACE_UMULTI_H
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* BPF_TRACE_UPROBE_MULTI in enum bpf_attach_type (kernel 6.6). */
#define PT_BPF_TRACE_UPROBE_MULTI 48
#define PT_BPF_F_UPROBE_MULTI_RETURN 1u

/* Does this kernel load a program for uprobe-multi attachment? */
bool pt_umulti_supported(void);
/* One link putting prog on every offsets[i] of path (cookie cookies[i]), entry or return,
 * for process pid only. Returns the link fd or -errno. */
int pt_umulti_attach(int prog_fd, const char *path, const uint64_t *offsets,
		     const uint64_t *cookies, uint32_t cnt, bool retprobe, pid_t pid);
#endif
