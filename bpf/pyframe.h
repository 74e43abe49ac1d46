/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * pyframe.h — CPython frames in the kernel/user contract.
 *
 * The BPF side (bpf/python.bpf.h) walks the allocating thread's chain of _PyInterpreterFrame
 * and records one 64-bit word per Python frame, leaf first, in a stack's Python words
 * (py_stacks map); user space (user/python.c) turns a word back into `module:function:line`
 * by reading the code object through /proc/PID/mem, and splices the Python frames in place of
 * the native _PyEval_EvalFrameDefault frame that ran them (user/collect.c).
 *
 * A word (bit 63 set: never a user-space return address, so a word cannot be mistaken for a
 * PC even if the two arrays were mixed up):
 *   frame:     1 | 0 | idx:62-C | code >> 3 : C
 *              code: the code object (8-byte aligned, below 2^PT_ARCH_USER_VA_BITS: C is 44
 *              on x86-64, 45 on arm64, whose heap addresses have bit 47 set, arch/uva.h);
 *              idx: instruction index in code units + 1, 0 = unknown, saturated at the
 *              field's maximum (the line is then the one of the last indexable unit).
 *   boundary:  1 | 1 | 0...0 | kind:2
 *              kind PT_PY_B_ENTRY: the frames since the previous boundary (or the leaf) were
 *              run by one native _PyEval_EvalFrameDefault call: 3.11 marks the first frame of
 *              such a call with is_entry, 3.12+ pushes a shim frame owned by the C stack.
 *              kind PT_PY_B_TRUNC: the chain went on beyond PT_MAX_PY_FRAMES words.
 *
 * Pure functions only, compiled for BPF and for the host unit tests (tests/unit/test_python.c).
 */
#ifndef PEAKTRACE_PYFRAME_H
#define PEAKTRACE_PYFRAME_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif
#include "arch/uva.h"

/* Python words kept per stack (frames and boundaries). A 3.11+ interpreter runs Python-to-
 * Python calls in the same native eval frame, so a deep Python stack is a short native one:
 * the Python words get their own cap, larger than PT_MAX_FRAMES. */
#define PT_MAX_PY_FRAMES 128
/* Bytes of the thread's data stack copied at once by the BPF walk (bpf/python.bpf.h): frames
 * of Python-to-Python calls are contiguous there, so one copy serves several. A power of two
 * (offsets into the copy are masked with it), at most a page (a window never spans more than
 * the two pages its newest frame touches). */
#define PT_PY_WINDOW 4096
/* Threads of an interpreter searched for the allocating thread's state (a miss is cached). */
#define PT_PY_MAX_THREADS 64

#define PT_PY_TAG (1ULL << 63)
#define PT_PY_BOUNDARY (1ULL << 62)
/* A code object's address without its 3 alignment bits, then the index above it. */
#define PT_PY_CODE_BITS (PT_ARCH_USER_VA_BITS - 3)
#define PT_PY_IDX_SHIFT PT_PY_CODE_BITS
#define PT_PY_IDX_MAX ((1U << (62 - PT_PY_CODE_BITS)) - 1)
#define PT_PY_CODE_MASK ((1ULL << PT_PY_CODE_BITS) - 1)

enum { PT_PY_B_ENTRY = 1, PT_PY_B_TRUNC = 2 };

/* The per-version layout the BPF walk needs (user/python.c fills it; 0 = field absent). */
struct pt_py_offsets {
	__u64 runtime;            /* address of _PyRuntime in the target (0: not known yet) */
	__u32 interp_head;        /* _PyRuntimeState.interpreters.head */
	__u32 threads_head;       /* PyInterpreterState.threads.head */
	__u32 ts_next;            /* PyThreadState.next */
	__u32 ts_native_tid;      /* PyThreadState.native_thread_id */
	__u32 ts_cframe;          /* 3.11/3.12: PyThreadState.cframe (0 in 3.13+) */
	__u32 cframe_current;     /* 3.11/3.12: _PyCFrame.current_frame; 3.13+:
	                           * PyThreadState.current_frame */
	__u32 fr_code;            /* _PyInterpreterFrame.f_code / f_executable */
	__u32 fr_previous;
	__u32 fr_instr;           /* prev_instr (3.11/3.12) / instr_ptr (3.13+) */
	__u32 fr_owner;
	__u32 fr_is_entry;        /* 3.11 only (0: entries are shim frames owned by the C stack) */
	__u32 co_code_adaptive;   /* first code unit, inside the code object */
	__u32 minor;              /* 3.minor */
	__u32 pad;
	/* The target's pid namespace (nsfs st_dev as the kernel encodes it, and inode), when it
	 * is not ours: native_thread_id is the thread's id in that namespace (a container's),
	 * not the host's. 0: the host's ids. */
	__u64 ns_dev;
	__u64 ns_ino;
};

/* _PyInterpreterFrame.owner values (stable 3.11 .. 3.13). */
#define PT_PY_OWNED_BY_CSTACK 3

static inline __u64 pt_py_frame_word(__u64 code, __u64 idx)
{
	if (idx > PT_PY_IDX_MAX)
		idx = PT_PY_IDX_MAX;
	return PT_PY_TAG | (idx << PT_PY_IDX_SHIFT) | ((code >> 3) & PT_PY_CODE_MASK);
}

static inline __u64 pt_py_boundary_word(__u32 kind)
{
	return PT_PY_TAG | PT_PY_BOUNDARY | kind;
}

static inline int pt_py_is_boundary(__u64 w)
{
	return (w & (PT_PY_TAG | PT_PY_BOUNDARY)) == (PT_PY_TAG | PT_PY_BOUNDARY);
}

static inline __u64 pt_py_word_code(__u64 w)
{
	return (w & PT_PY_CODE_MASK) << 3;
}

/* Instruction index + 1 (0 = unknown). */
static inline __u32 pt_py_word_idx(__u64 w)
{
	return (__u32)((w >> PT_PY_IDX_SHIFT) & PT_PY_IDX_MAX);
}

/* The instruction index field of a frame: (instr - first code unit) / 2 + 1, 0 when instr is
 * before the code (a frame being set up, which CPython's tracebacks skip too). 3.11/3.12 keep
 * the unit before the next one (the instruction running, for a call); 3.13 the one running. */
static inline __u64 pt_py_instr_idx(__u64 instr, __u64 first_unit)
{
	if (instr < first_unit)
		return 0;
	return (instr - first_unit) / 2 + 1;
}

#endif /* PEAKTRACE_PYFRAME_H */
