/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * python.bpf.h — the allocating thread's CPython frames, read in the kernel.
 *
 * capture() in stack.bpf.h calls pt_py_walk() after the native unwind when the loader found a
 * CPython (3.11, 3.12, 3.13) in the target and set `python`. Offsets and the address of
 * _PyRuntime are in .bss py_off (user/python.c writes them; runtime stays 0 until the
 * interpreter is mapped, and the walk does nothing until then).
 *
 * Thread state: the interpreter's list of thread states (interpreters.head -> threads.head ->
 * next), searched for the one whose native_thread_id is the current thread's, and cached in
 * the task storage; each use re-checks the cached state's native_thread_id (one read), so a
 * freed and reused PyThreadState is never followed for another thread. Not the GIL holder
 * (3.11's gilstate.tstate_current): allocations made by C code without the GIL are attributed
 * to their own thread's Python frames too, and not the _Py_tss_tstate thread-local (3.12+):
 * its address needs the module's TLS block, which the kernel only knows through libc's
 * internals. In a container (the target in a pid namespace of its own) native_thread_id is
 * the thread's id there: the search compares it with bpf_get_ns_current_pid_tgid()'s id in
 * the target's namespace (py_off.ns_dev/ns_ino), not the host's. A thread with no Python state (a C thread) remembers the list head it searched:
 * while no thread state is added (new states are pushed at the head), it costs one read.
 *
 * Frames: 3.11/3.12 tstate->cframe->current_frame, 3.13 tstate->current_frame, then
 * `previous`; of each, the 72 bytes of its "specials" (code, previous, instruction pointer,
 * owner/is_entry). Not one user read per frame (~130 ns each, most of the walk's cost): the
 * frames of Python-to-Python calls lie contiguously in the thread's data stack, each caller
 * below its callee, so the walk copies up to PT_PY_WINDOW bytes ending just past a frame into
 * ta->pywin and takes every frame it holds from the copy, moving the window down when the
 * chain leaves it downward; a frame elsewhere (a generator's, on the heap; 3.12+'s shim frame,
 * on the C stack) gets its own read. The native stack shows one _PyEval_EvalFrameDefault per C-level
 * entry into the interpreter, and one such call runs several Python frames (3.11+ calls Python
 * from Python without recursing in C); the walk records where each call's frames end (3.11:
 * after the frame marked is_entry; 3.12+: at the shim frame owned by the C stack) so user
 * space can splice each run in place of its own native frame.
 *
 * Verifier: the per-frame step is a global function (verified once), called from a bounded
 * loop, as in unwind.bpf.h. Its reads use offsets from .bss: into the window, masked to
 * PT_PY_WINDOW (the window's length was checked first, so the masks change nothing); into a
 * frame read alone, variable offsets into a stack buffer whose bytes the probe read wrote.
 * Every frame's fields are the bytes a read of that frame alone would give: the thread is
 * stopped in our probe, so its data stack does not change during the walk; the window lives
 * for one walk only (a fresh one per capture).
 */
#ifndef PEAKTRACE_PYTHON_BPF_H
#define PEAKTRACE_PYTHON_BPF_H

#include "state.bpf.h"
#include "pyframe.h"

/* CPython layout and _PyRuntime's address (user/python.c; runtime is 0 until it is mapped). */
struct pt_py_offsets py_off = {};

/* Bytes of a frame used per step: the specials of every supported version end by byte 71. */
#define PY_FRAME_READ PT_PY_FRAME_READ
/* A frame this far below the window is still taken as the data stack's next stretch (the
 * window moves down to it); anything else outside the window is read alone, once. */
#define PY_REWINDOW_REACH (64ULL << 10)


static __always_inline bool py_emit(struct py_walk *w, struct thread_aux *ta, __u64 word)
{
	__u64 n = w->n;

	/* The last slot is kept for the truncation marker. */
	if (n >= PT_MAX_PY_FRAMES - 1)
		return false;
	ta->py[n & (PT_MAX_PY_FRAMES - 1)] = word;
	w->h = mix64(w->h, word);
	w->n = n + 1;
	return true;
}

static __always_inline bool py_in_win(struct py_walk *w, __u64 f)
{
	return f >= w->win_lo && f - w->win_lo <= w->win_len - PY_FRAME_READ &&
	       w->win_len >= PY_FRAME_READ && !((f - w->win_lo) & 7);
}

/*
 * Copy the data stack ending just past frame f, [lo, f + PY_FRAME_READ), into ta->pywin: one
 * read for the frame and the callers below it (Python-to-Python calls push their frames
 * upward, contiguously, in _PyThreadState_PushFrame). lo is as low as PT_PY_WINDOW allows but
 * not below f's own page: a probe read fails whole if one byte faults, and the page below
 * may be unmapped (a data-stack chunk starts its own mapping), while f's pages are readable
 * whenever f is.
 */
static __always_inline int py_rewindow(struct py_walk *w, struct thread_aux *ta, __u64 f)
{
	__u64 hi = f + PY_FRAME_READ, lo = f & ~4095ULL, len;

	if (hi - lo > PT_PY_WINDOW)
		lo = hi - PT_PY_WINDOW;
	len = hi - lo;
	/* Clamp after an opaque move, or clang hands the helper the unclamped copy. */
	asm volatile("" : "+r"(len));
	if (len > PT_PY_WINDOW || len < PY_FRAME_READ)
		len = PY_FRAME_READ;
	w->win_len = 0;
	if (bpf_probe_read_user(ta->pywin, len, (void *)lo))
		return -1;
	w->win_lo = lo;
	w->win_len = len;
	return 0;
}

/* One frame of the chain. 0, or 1 when the walk ends. */
__noinline int pt_py_frame(struct py_walk *w, struct thread_aux *ta)
{
	/* 64-bit: 6.1's verifier keeps the bounds of a 64-bit spill only, and these are
	 * checked before bpf_probe_read_user and used after it. */
	__u64 oc = py_off.fr_code, op = py_off.fr_previous, oi = py_off.fr_instr;
	__u64 oo = py_off.fr_owner, oe = py_off.fr_is_entry;
	__u64 code, prev, instr, f;
	__u8 owner, entry;
	bool hit;

	if (!w || !ta || !w->frame)
		return 1;
	if (w->n >= PT_MAX_PY_FRAMES - 1) {
		w->stop = PT_ERR_PY_DEPTH;
		return 1;
	}
	f = w->frame;
	hit = py_in_win(w, f);
	/* Outside the window: move it when the frame continues the data stack downward (or
	 * there is no window yet, or the frames read alone come in a row: an older data-stack
	 * chunk); a lone frame elsewhere (a generator's, 3.12+'s shim frame on the C stack) is
	 * read alone and the window kept for its caller. */
	if (!hit && (!w->win_len || w->misses ||
		     (f < w->win_lo && w->win_lo - f < PY_REWINDOW_REACH)))
		hit = py_rewindow(w, ta, f) == 0 && py_in_win(w, f);
	/* Checked before use: offsets come from .bss. */
	if (oc > PY_FRAME_READ - 8 || op > PY_FRAME_READ - 8 || oi > PY_FRAME_READ - 8 ||
	    oo >= PY_FRAME_READ || oe >= PY_FRAME_READ || (oc | op | oi) & 7) {
		w->stop = PT_ERR_PY_READ;
		return 1;
	}
	if (hit) {
		/* Only the fields used, straight from the window: the masks are no-ops (the frame
		 * lies inside the copy) that keep the verifier's offsets bounded. */
		__u64 base = f - w->win_lo;
		__u8 *b = (__u8 *)ta->pywin;

		w->misses = 0;
		code = ta->pywin[((base + oc) / 8) & (PT_PY_WINDOW / 8 - 1)];
		prev = ta->pywin[((base + op) / 8) & (PT_PY_WINDOW / 8 - 1)];
		instr = ta->pywin[((base + oi) / 8) & (PT_PY_WINDOW / 8 - 1)];
		owner = b[(base + oo) & (PT_PY_WINDOW - 1)];
		entry = oe ? b[(base + oe) & (PT_PY_WINDOW - 1)] : 0;
	} else {
		__u64 *fr = ta->pyfr;   /* not on the stack: see struct py_walk */

		w->misses++;
		if (bpf_probe_read_user(fr, PY_FRAME_READ, (void *)f)) {
			w->stop = PT_ERR_PY_READ;
			return 1;
		}
		/* The offsets were checked above, but the bounds do not reach here through a
		 * spill on every kernel (6.1: "unbounded memory access"): masked to the buffer
		 * (PT_PY_FRAME_BUF, a power of two above PY_FRAME_READ), the masks kept by the
		 * barrier (clang would drop them as no-ops). */
		asm volatile("" : "+r"(oc), "+r"(op), "+r"(oi), "+r"(oo), "+r"(oe));
		code = fr[(oc / 8) & (PT_PY_FRAME_BUF / 8 - 1)];
		prev = fr[(op / 8) & (PT_PY_FRAME_BUF / 8 - 1)];
		instr = fr[(oi / 8) & (PT_PY_FRAME_BUF / 8 - 1)];
		owner = ((__u8 *)fr)[oo & (PT_PY_FRAME_BUF - 1)];
		entry = oe ? ((__u8 *)fr)[oe & (PT_PY_FRAME_BUF - 1)] : 0;
	}
	w->frame = prev;
	if (owner == PT_PY_OWNED_BY_CSTACK && !oe) {
		/* 3.12+: the shim frame _PyEval_EvalFrameDefault pushes on entry. */
		if (!py_emit(w, ta, pt_py_boundary_word(PT_PY_B_ENTRY)))
			w->stop = PT_ERR_PY_DEPTH;
		return w->stop ? 1 : 0;
	}
	if (!code) {
		w->stop = PT_ERR_PY_READ;
		return 1;
	}
	if (!py_emit(w, ta, pt_py_frame_word(code, pt_py_instr_idx(instr, code + py_off.co_code_adaptive)))) {
		w->stop = PT_ERR_PY_DEPTH;
		return 1;
	}
	/* 3.11: the first frame of a native eval call. */
	if (entry && !py_emit(w, ta, pt_py_boundary_word(PT_PY_B_ENTRY))) {
		w->stop = PT_ERR_PY_DEPTH;
		return 1;
	}
	return 0;
}

static __always_inline int py_read(__u64 addr, __u64 *val)
{
	return bpf_probe_read_user(val, sizeof(*val), (void *)addr);
}

/* The current thread's PyThreadState, or 0. */
static __always_inline __u64 py_tstate(struct thread_state *ts, __u64 runtime)
{
	__u64 tid = (__u32)bpf_get_current_pid_tgid(), t = ts->py_tstate, v, interp, head;
	int i;

	/* A target in its own pid namespace (a container) knows its threads by that namespace's
	 * ids: native_thread_id is what gettid() said there. */
	if (py_off.ns_ino) {
		struct bpf_pidns_info ns = {};

		if (bpf_get_ns_current_pid_tgid(py_off.ns_dev, py_off.ns_ino, &ns, sizeof(ns)))
			return 0;
		tid = ns.pid;
	}

	if (t && py_read(t + py_off.ts_native_tid, &v) == 0 && v == tid)
		return t;
	ts->py_tstate = 0;
	if (py_read(runtime + py_off.interp_head, &interp) || !interp ||
	    py_read(interp + py_off.threads_head, &head) || !head)
		return 0;
	/* Searched this list before and we were not in it: no new thread state since. */
	if (head == ts->py_miss_head)
		return 0;
	t = head;
	for (i = 0; i < PT_PY_MAX_THREADS && t; i++) {
		if (py_read(t + py_off.ts_native_tid, &v))
			break;
		if (v == tid) {
			ts->py_tstate = t;
			return t;
		}
		if (py_read(t + py_off.ts_next, &t))
			break;
	}
	ts->py_miss_head = head;
	return 0;
}

/*
 * The Python words of the current thread into ta->py (leaf first); mixes them into *hash.
 * Returns the number of words (0: no Python frames).
 */
__noinline __u32 pt_py_walk(struct thread_state *ts, __u64 *hash)
{
	__u64 runtime = py_off.runtime, t, f = 0;
	struct thread_aux *ta;
	struct py_walk *w;
	__u32 i;

	if (!ts || !hash || !runtime)
		return 0;
	t = py_tstate(ts, runtime);
	if (!t)
		return 0;
	if (py_off.ts_cframe) {
		/* 3.11/3.12: tstate->cframe->current_frame */
		if (py_read(t + py_off.ts_cframe, &f) || !f ||
		    py_read(f + py_off.cframe_current, &f)) {
			count_err(PT_ERR_PY_READ);
			return 0;
		}
	} else if (py_read(t + py_off.cframe_current, &f)) {
		count_err(PT_ERR_PY_READ);
		return 0;
	}
	ta = thread_aux_get();
	if (!ta)
		return 0;
	w = &ta->pw;
	__builtin_memset(w, 0, sizeof(*w));
	w->frame = f;
	/* Each word is mixed into the hash as it is emitted: a second loop over ta->py was ~2K
	 * more instructions to verify in every program that captures a stack, and a re-read. */
	w->h = *hash;
	for (i = 0; i < PT_MAX_PY_FRAMES; i++)
		if (pt_py_frame(w, ta))
			break;
	if (w->stop == PT_ERR_PY_DEPTH && w->frame) {
		/* Frames beyond the cap: say so in the stack itself, not only in the counter. */
		ta->py[(PT_MAX_PY_FRAMES - 1) & (PT_MAX_PY_FRAMES - 1)] = pt_py_boundary_word(PT_PY_B_TRUNC);
		w->h = mix64(w->h, pt_py_boundary_word(PT_PY_B_TRUNC));
		w->n = PT_MAX_PY_FRAMES;
	}
	if (w->stop && (w->stop != PT_ERR_PY_DEPTH || w->frame))
		count_err(w->stop);
	*hash = mix64(w->h, w->n << 32);
	return (__u32)w->n;
}

#endif /* PEAKTRACE_PYTHON_BPF_H */
