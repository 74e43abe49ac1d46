// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * nspid.bpf.c — which host PID a process of peaktrace's own PID namespace has. The BPF programs
 * of peaktrace.bpf.c name processes as the kernel's initial namespace does
 * (bpf_get_current_pid_tgid), /proc in a container names them as the container does: run
 * inside a function container, peaktrace translates its target's PID with this task iterator
 * before it sets targ_tgid (user/attach/nspid.c). One line per thread-group leader whose
 * innermost PID namespace is ns_ino: "NS_PID HOST_TGID".
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

const volatile __u64 ns_ino = 0;   /* inode of /proc/self/ns/pid of the loader */

SEC("iter/task")
int nspid(struct bpf_iter__task *ctx)
{
	struct task_struct *t = ctx->task;
	struct pid *p;
	struct upid up;
	unsigned int level;
	__u64 inum;

	if (!t || BPF_CORE_READ(t, pid) != BPF_CORE_READ(t, tgid))
		return 0;
	p = BPF_CORE_READ(t, thread_pid);
	if (!p)
		return 0;
	level = BPF_CORE_READ(p, level);
	if (level > 32)
		return 0;
	if (bpf_core_read(&up, sizeof(up), (void *)p + bpf_core_field_offset(struct pid, numbers) +
					     level * bpf_core_type_size(struct upid)))
		return 0;
	inum = BPF_CORE_READ(up.ns, ns.inum);
	if (inum != ns_ino)
		return 0;
	BPF_SEQ_PRINTF(ctx->meta->seq, "%d %d\n", up.nr, BPF_CORE_READ(t, tgid));
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
