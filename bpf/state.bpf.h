/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * state.bpf.h — what every concern shares: the process-wide counters (.bss g), the state of the
 * allocator call in progress on each thread, the per-CPU error counters and the ring buffer of
 * rare events.
 */
#ifndef PEAKTRACE_STATE_BPF_H
#define PEAKTRACE_STATE_BPF_H

#include "config.bpf.h"

/* Process-wide counters; user space reads them through the skeleton's .bss (and seeds the few
 * fields listed at struct pt_global in peaktrace.h). */
struct pt_global g = {};

/* Launch mode, until the command's exec (set by user space, cleared by process.bpf.h): the
 * target is still peaktrace's own copy, whose code has no tables; unwind.bpf.h does not walk
 * its stacks (a copy-on-write fault of it was counted as unwind_not_yet_covered on 6.1). */
__u32 unw_pre_exec = 0;

/* unwind.bpf.h: this thread's last .eh_frame walk from an allocator entry (memo[0]) and from a
 * page fault (memo[1]): what it started from, every word of user memory it read (in order) and
 * what it found. The walk is a function of exactly these (the tables of one publication are
 * fixed), so when they are all equal again its result is reused instead of redone. */
#define PT_UNW_MEMO_READS 128           /* two reads a frame at most */
struct pt_unw_memo {
	__u64 sp, bp, pc0;      /* start: rsp, rbp (compared only if the walk used it), frame 0 */
	__u64 gen, sel, mm;     /* the publication of the tables, the address space */
	__u64 h;                /* the hash after the walk */
	__u32 n, nreads;        /* pcs found, words read */
	__u32 stop, flags;      /* the walk's cut reason (counted again on reuse), UNW_MEMO_* */
	__u32 vmaseq, pad;      /* mm_lock_seq of the walk (UNW_MEMO_VMA: frames in JIT code) */
	__u64 addr[PT_UNW_MEMO_READS], val[PT_UNW_MEMO_READS];
	__u64 pcs[PT_MAX_FRAMES];
};

/* rss.bpf.h: this thread's last page fault's stack and what shows a new fault's stack is the
 * same (its registers, the fault walk memo's hash, the Python frame chain word by word). */
#define PT_RSS_FM_PYF 32
struct pt_rss_fmemo {
	__u64 ip, sp, bp;       /* the fault's registers */
	__u64 nh;               /* hash of its native walk (memo[1].h) */
	__u64 py_t, py_f;       /* its PyThreadState and current frame (python only) */
	__u64 py_lo, py_len;    /* the data-stack span holding every frame of the chain */
	__u32 idx, flags;       /* the stack index; RSS_FM_* */
	__u32 py_n, pad;        /* frames in fr[] */
	__u64 fr[PT_RSS_FM_PYF][4];     /* per frame: address, code, previous, instr */
	__u64 fr_oe[PT_RSS_FM_PYF];     /* per frame: owner | is_entry << 8 */
};

/* unwind.bpf.h: the walk's registers and bookkeeping, in the thread's state (ts->uw), not on
 * pt_dwarf_walk's stack: the BPF stack of a whole call chain is 512 bytes on most kernels
 * (only some JITs give tracing programs a private stack), and the walk's 176 bytes there put
 * on_rss_stat -> pt_dwarf_walk -> pt_unw_frame at 544 (tools/check-stack.py). One walk per
 * thread at a time: BPF programs do not nest within a task. */
struct unw_walk {
	__u64 pc;               /* return address into the frame being unwound */
	__u64 sp, bp;           /* that frame's rsp (its callee's CFA) and rbp */
	__u64 sp0;              /* rsp at the allocator's entry: lower bound of the stack */
	__u64 win_lo, win_hi;   /* user addresses ts->win holds, [lo, hi) */
	__u64 h;                /* hash of the pcs so far */
	__u64 n;                /* pcs in ts->pcs */
	__u64 stop;             /* why the walk was cut: PT_ERR_UNWIND_*, 0 = complete */
	__u64 half, nmaps;      /* published mappings usable by this walk (nmaps 0: none) */
	__u64 gen;              /* their generation: tags frame-cache entries */
	__u64 fp_frames;        /* frames crossed with frame pointers */
	__u64 pending;          /* a frame in a file whose tables are not loaded yet */
	/* mapping of the previous frame: most frames stay in one file */
	__u64 m_start, m_end, m_bias, m_first, m_nrows;
	__u64 m_published;      /* it came from the published array (its rows may be cached) */
	__u64 memo;             /* UNW_MEMO_* bits of this walk, in bit 8 which memo, in bits
				 * 32.. the mm_lock_seq read at its start (unw_mm_seq) */
	__u64 nreads;           /* user words read (logged in the memo) */
	struct pt_unwind_map fm;/* pt_unw_file_map's answer (off pt_unw_frame's stack) */
	__u64 bp0;              /* rbp at the start (sp0 is rsp) */
	__u64 at_gen, at_sel, at_mm; /* the publication and address space at the start */
};

/* python.bpf.h: a Python frame chain's walk, in the thread's task storage (ta->pw) like the
 * native walk's (struct unw_walk), and with the frame read alone outside the window (ta->pyfr): on the
 * stack they put the Python chain of a fault's capture (on_rss_stat -> pt_py_walk ->
 * pt_py_frame) at the 448-byte budget of tools/check-stack.py. */
#define PT_PY_FRAME_READ 72
#define PT_PY_FRAME_BUF 128     /* ta->pyfr: PT_PY_FRAME_READ rounded up to a power of two */
struct py_walk {
	__u64 frame;        /* next _PyInterpreterFrame to read (0: the chain ended) */
	__u64 n;            /* words in ta->py */
	__u64 stop;         /* PT_ERR_PY_* that cut the chain, 0 = complete */
	__u64 win_lo;       /* ta->pywin holds user bytes [win_lo, win_lo + win_len) ... */
	__u64 win_len;      /* ... of this walk (0: none yet) */
	__u64 misses;       /* frames read alone in a row since the window last served one */
	__u64 h;            /* the stack's hash with the words so far mixed in (py_emit) */
};

/* Per-thread state for the allocator call in progress. Task storage, not a per-CPU scratch:
 * a thread can migrate between the entry probe and the return probe, and a uprobe program
 * may be preempted, so anything that must survive (and the stack scratch) belongs to the task. */
struct thread_state {
	__u64 sp;        /* rsp at the outermost allocator entry */
	__u64 ra;        /* return address at that entry */
	__u64 size;      /* requested bytes */
	__u64 arg;       /* realloc: old pointer; posix_memalign: memptr */
	__u32 depth;     /* allocator calls in progress on this thread (outermost counted only) */
	__u32 fn;
	__u32 stack;     /* stack index of the outermost call */
	__u32 sc_nr;     /* syscall in progress (for the exit tracepoint) */
	__u64 heap_base; /* the thread arena heap of this thread's last allocation ... */
	__u32 heap_arena;/* ... and that arena's index (0: none cached) */
	__u32 tslot;     /* this thread's row in thread_slots (0: none yet) */
	/* --sample-bytes: bytes until this thread's next sample point; never 0 once drawn
	 * (gaps are >= 1 and a countdown stops above 0), so 0 means "not drawn yet". */
	__u64 sample_left;
	__u64 last_free; /* free_checks_thread: pointer the last free probe took */
	__u64 sc_arg0, sc_arg1, sc_arg2, sc_arg3;
	__u64 pf_addr;   /* rss.bpf.h: address of this thread's page fault in progress (0: none) */
#ifdef PT_ARCH_FAULT_FENTRY
	__u32 pf_flags;  /* rss.bpf.h rss_mm_fault: the flags of this thread's last handle_mm_fault */
	__u32 pf_pad;
#endif
	__u64 rss_err[8];/* rss.bpf.h: this CPU's stack-cut counters before a fault's unwind */
	__u64 sh_addr;   /* rss.bpf.h: the fault address a file/shmem growth was charged by, for
			  * the same fault's further events (fault-around maps folio by folio) */
	__u64 sh_obj;    /* ... and the object it was charged to, */
	__u64 sh_lo, sh_hi, sh_gen; /* whose mapping spans [sh_lo, sh_hi) while the target's
			  * mapping generation (pt_rss_global.map_gen) is sh_gen */
	__u64 rm_obj;    /* rss.bpf.h: the file/shmem object a removal syscall in progress spans */
	__u64 rm_nr;     /* ... and that syscall's number (PT_ARCH_SYSNR): valid only inside it */
	__u64 win[PT_STACK_WINDOW / 8];  /* copy of the user stack from rsp */
	__u64 pcs[PT_MAX_FRAMES];
	/* CPython (python.bpf.h): this thread's PyThreadState (re-checked at each use), the thread
	 * list head last searched in vain, the Python words of the stack being captured, and the
	 * walk's window on the data stack (valid during one walk only). */
	__u64 py_tstate;
	__u64 py_miss_head;
	struct pt_unw_memo memo[2];      /* unwind.bpf.h: the last walks, to reuse */
	struct unw_walk uw;              /* unwind.bpf.h: the walk in progress */
	__u64 unw_anon_lo, unw_anon_hi;  /* unwind.bpf.h: the anonymous VMA (JIT code) a walk met
					  * last, valid in address space unw_anon_mm while its
					  * mm_lock_seq is unw_anon_seq */
	__u64 unw_anon_mm;
	__u32 unw_anon_seq, unw_anon_pad;
	/* stack.bpf.h: the last stack index found, for an allocator entry [0] and a fault [1],
	 * with what identifies its stack there (hash, depth | Python words << 16, frame 0). */
	__u64 last_h[2], last_pc0[2];
	__u32 last_n[2], last_idx[2];
	__u64 uw_lr;     /* unwind.bpf.h, arm64: x30 at a fault, for the first frame's rule
			  * (PT_ARCH_KEEP_LR; never written on x86-64) ... */
	__u64 uw_ra_at;  /* ... and where the frame being unwound saved its return address
			  * (PT_ARCH_ROW_RA_KEEP) */
};

/* What only the Python walks and the page-fault memo use, beside struct thread_state: one value
 * of task storage must stay under 8 KiB with the kernel's own header. From 7.x (Debian's 7.2
 * and 7.3 measured) a task's storage is allocated with kmalloc_nolock(), which serves at most
 * KMALLOC_MAX_CACHE_SIZE (two pages): the map is created, but every thread's value of the
 * 14,000 bytes both once were failed (thread_state_failed on every call, nothing recorded).
 * Checked at build time below. */
struct thread_aux {
	__u64 py[PT_MAX_PY_FRAMES];      /* python.bpf.h: the Python words of the stack captured */
	__u64 pywin[PT_PY_WINDOW / 8];   /* copy of the Python data stack below a frame */
	__u64 pyfr[PT_PY_FRAME_BUF / 8]; /* a frame read outside the window */
	struct py_walk pw;               /* the Python walk in progress */
	struct pt_rss_fmemo fmemo;       /* rss.bpf.h: the last fault's stack, to reuse */
};

/* The budget of one task-storage value: 8 KiB less the kernel's element header (struct
 * bpf_local_storage_elem, ~100 bytes on x86-64 and arm64 in 6.x/7.x) and a margin. */
#define PT_TASK_STORAGE_MAX 7680
_Static_assert(sizeof(struct thread_state) <= PT_TASK_STORAGE_MAX,
	       "struct thread_state over one task-storage value (see struct thread_aux)");
_Static_assert(sizeof(struct thread_aux) <= PT_TASK_STORAGE_MAX,
	       "struct thread_aux over one task-storage value");

/* key: the task; value: its allocator call in progress. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct thread_state);
} threads SEC(".maps");

/* key: the task; value: its struct thread_aux (made by the first Python walk or page fault). */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct thread_aux);
} threads_aux SEC(".maps");

/* key: enum pt_err; value: count. Per CPU so counting never contends. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PT_ERR_COUNT);
	__type(key, __u32);
	__type(value, __u64);
} errors SEC(".maps");

/* Rare events only: exit, exec, new code mappings, invocation edges, new Python stacks
 * (struct pt_event, struct pt_inv_event). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	/* 1 MiB: a burst of new Python stacks (a CPython import: one every few microseconds,
	 * woken for once a millisecond) outran the reader of 64 KiB under load
	 * (ringbuf_lost ~270 on a test's workload at load 4). */
	__uint(max_entries, 1024 * 1024);
} events SEC(".maps");

static __always_inline void count_err(__u32 e)
{
	__u64 *v = bpf_map_lookup_elem(&errors, &e);

	if (v)
		*v += 1;
}

/* Ring buffer records not sent, by enum pt_event_type (written by BPF only): with the
 * errors map's ringbuf_lost total, the report names which kinds were lost. */
__u64 rb_lost[PT_RB_KINDS] = {};
/* Invocation records (start, end, whole record) not sent because the ring was three quarters
 * full: a flood of boundaries (1M fake Runtime API exchanges filled it and dropped 974k events,
 * exits and new code mappings among them) leaves the last quarter to the rare events. In
 * rb_lost too. */
__u64 rb_inv_shed = 0;

static __always_inline void rb_lost_count(__u32 type)
{
	count_err(PT_ERR_RINGBUF_LOST);
	__sync_fetch_and_add(&rb_lost[type & (PT_RB_KINDS - 1)], 1);
}

static __always_inline bool is_target(void)
{
	return (bpf_get_current_pid_tgid() >> 32) == targ_tgid;
}

static __always_inline struct thread_state *thread_get(bool create)
{
	return bpf_task_storage_get(&threads, bpf_get_current_task_btf(), 0,
				    create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
}

/* This thread's struct thread_aux, made if absent; NULL counted as thread_state_failed. */
static __always_inline struct thread_aux *thread_aux_get(void)
{
	struct thread_aux *ta = bpf_task_storage_get(&threads_aux, bpf_get_current_task_btf(), 0,
						     BPF_LOCAL_STORAGE_GET_F_CREATE);

	if (!ta)
		count_err(PT_ERR_THREAD_STATE);
	return ta;
}

/* One step of the stack hash (stack.bpf.h, unwind.bpf.h, python.bpf.h). */
static __always_inline __u64 mix64(__u64 h, __u64 v)
{
	h ^= v;
	h *= 0x9E3779B97F4A7C15ULL;
	return h ^ (h >> 29);
}

/*
 * Waking the reader. A submit that wakes user space costs the producing thread ~3.7 µs here
 * (irq_work: a self-IPI in this virtualized guest, then the wake-up of the reader, inside the
 * probe; a forced one while the reader is busy, up to ~13 µs), and the kernel wakes the reader
 * for every record that finds it caught up: during a CPython import, one new Python stack
 * every few microseconds was ~20 ms of a 28 ms import's ~70 ms of BPF time. So the events that
 * come in bursts (PT_EV_PY_STACK, PT_EV_RSS_STACK) wake the reader at most once per
 * EV_WAKE_NS, or when the ring is filling; the ones in between wait for the next wake-up or the
 * reader's short poll after a batch of them (user/session.c, poll loop). A record that does
 * not wake leaves the reader behind, and the kernel then wakes it for no later record: the
 * other events (rare, and urgent: exec, exit, new code, invocation edges) force the wake-up
 * when records are pending.
 */
#define EV_WAKE_NS 1000000ULL
/* The last burst event submitted with a wake-up (written by BPF only). */
__u64 ev_wake_ns = 0;

static __always_inline bool ev_bursty(__u32 type)
{
	return type == PT_EV_PY_STACK || type == PT_EV_RSS_STACK;
}

/* Flags for a rare event's submit, asked before its reserve: records pending (not woken for)
 * need a forced wake-up; none, the kernel's own rule wakes a reader that is waiting. */
static __always_inline __u64 ev_wake_flags(void)
{
	return bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) ? BPF_RB_FORCE_WAKEUP : 0;
}

/* Flags for a burst event: a wake-up once per EV_WAKE_NS, or when the ring is a quarter full. */
static __always_inline __u64 ev_burst_wake_flags(__u64 now)
{
	if (now - ev_wake_ns < EV_WAKE_NS &&
	    bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) < 16 * 1024)
		return BPF_RB_NO_WAKEUP;
	ev_wake_ns = now;
	return BPF_RB_FORCE_WAKEUP;
}

static __always_inline void emit_event(__u32 type, __u64 addr, __u64 len)
{
	__u64 flags = ev_bursty(type) ? 0 : ev_wake_flags();
	struct pt_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	__u64 id = bpf_get_current_pid_tgid();

	if (!e) {
		rb_lost_count(type);
		return;
	}
	__builtin_memset(e, 0, sizeof(*e));
	e->type = type;
	e->pid = id >> 32;
	e->tid = (__u32)id;
	e->ts = bpf_ktime_get_ns();
	e->addr = addr;
	e->len = len;
	if (ev_bursty(type))
		flags = ev_burst_wake_flags(e->ts);
	bpf_ringbuf_submit(e, flags);
}

#endif /* PEAKTRACE_STATE_BPF_H */
