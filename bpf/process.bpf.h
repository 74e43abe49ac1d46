/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * process.bpf.h — the target's lifetime: an exec starts a new image (its RSS and break are not
 * the old one's), the death of its thread group ends tracing and the invocation it died in.
 */
#ifndef PEAKTRACE_PROCESS_BPF_H
#define PEAKTRACE_PROCESS_BPF_H

#include "state.bpf.h"
#include "invocation.bpf.h"
#include "rss.bpf.h"
#include "sandbox.bpf.h"

static __always_inline int process_exec(void)
{
	if (!is_target())
		return 0;
	/* A new image: the pre-exec counters (in launch mode, a copy of peaktrace waiting to
	 * exec) are not the program's. */
	g.rss[0] = g.rss[1] = g.rss[2] = g.rss[3] = 0;
	g.rss_peak = 0;
	g.tl_rss_max = 0;
	g.mm_id = 0;
	g.brk_start = g.brk_cur = g.brk_max = 0;
	unw_pre_exec = 0;
	rss_exec();
	/* addr: the first stack index the new image can get (user space names the stacks
	 * before it against the old image's mappings). */
	emit_event(PT_EV_EXEC, g.next_stack + 1, 0);
	return 0;
}

/* has_group_dead: the kernel says group_dead (6.16+: sched_process_exit's second argument). */
static __always_inline int process_exit(bool has_group_dead, bool group_dead)
{
	struct task_struct *task;
	struct pt_event *e;
	struct mm_struct *mm;
	__u64 id = bpf_get_current_pid_tgid(), flags;

	if ((id >> 32) != targ_tgid)
		return 0;
	/* group_dead (kernel 6.16+) says the last thread is leaving; older kernels: the leader. */
	if (has_group_dead) {
		if (!group_dead)
			return 0;
	} else if ((__u32)id != targ_tgid) {
		return 0;
	}
	/* The mm is torn down next: RSS falls to zero, which is no figure of the program's. */
	g.exited = 1;
	sbx_exit();
	flags = ev_wake_flags();
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		rb_lost_count(PT_EV_EXIT);
		inv_end(PT_OUT_KILLED, NULL, 0, 0);
		return 0;
	}
	__builtin_memset(e, 0, sizeof(*e));
	task = bpf_get_current_task_btf();
	e->type = PT_EV_EXIT;
	e->pid = id >> 32;
	e->tid = (__u32)id;
	e->ts = bpf_ktime_get_ns();
	e->exit_code = BPF_CORE_READ(task, exit_code);
	/* The tracepoint runs before exit_mm() since 6.16, so the mm's high-water mark is
	 * still readable; it is what /proc/PID/status calls VmHWM (in pages). */
	mm = BPF_CORE_READ(task, mm);
	if (mm)
		e->hiwater_rss = BPF_CORE_READ(mm, hiwater_rss) * 4096;
	bpf_ringbuf_submit(e, flags);
	/* After the exit event, so user space knows the high-water mark when it reads the
	 * invocation the process died in. */
	inv_end(PT_OUT_KILLED, NULL, 0, 0);
	return 0;
}

#endif /* PEAKTRACE_PROCESS_BPF_H */
