/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * python.h — CPython frames: finding the interpreter, naming its frames, merging them with
 * the native stack. The kernel side is bpf/python.bpf.h; the word format
 * and offsets are in bpf/pyframe.h.
 */
#ifndef PEAKTRACE_PYTHON_H
#define PEAKTRACE_PYTHON_H
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "bpf/peaktrace.h"

/* What user space reads from code objects, strings and types (per version: a table for
 * 3.11/3.12, the target's own _Py_DebugOffsets for 3.13). */
struct pt_py_user_off {
	uint32_t co_filename, co_name, co_qualname, co_linetable, co_firstlineno;
	uint32_t bytes_sval;       /* PyBytesObject.ob_sval */
	uint32_t ascii_size;       /* sizeof(PyASCIIObject): data of a compact ASCII str */
	uint32_t compact_size;     /* sizeof(PyCompactUnicodeObject): data of other compact strs */
	uint32_t str_length, str_state;   /* PyASCIIObject.length, .state */
	uint32_t tp_name;          /* PyTypeObject.tp_name */
};

/* Bytes of _Py_DebugOffsets that 3.13 defines (pt_py_debug_offsets reads no more). */
#define PT_PY_DEBUG_OFFSETS_313 584

/* A CPython found in the target: the ELF object defining _PyRuntime (the executable, or
 * libpython3.X.so) and its version. */
struct pt_py_info {
	char *path;               /* as named in maps / by the loader */
	uint32_t minor;           /* 3.minor */
	uint32_t hexversion;      /* Py_Version (PY_VERSION_HEX) */
	uint64_t runtime_vaddr;   /* _PyRuntime in the file (ELF vaddr) */
	bool pie;                 /* ET_DYN: add the load bias */
	uint64_t inode;           /* of the file, to find its mapping */
	struct pt_py_offsets off; /* for the BPF side; off.runtime set by pt_py_locate() */
	struct pt_py_user_off u;
	bool from_debug;          /* offsets read from the target's _Py_DebugOffsets (3.13+) */
	uint64_t code_type_vaddr; /* PyCode_Type, PyUnicode_Type in the file (0: not found) */
	uint64_t str_type_vaddr;
	int check;                /* pt_py_check_live's verdict: 0 not yet, 1 passed, -1 failed */
	uint64_t check_next_ns;   /* CLOCK_MONOTONIC: no new attempt before (0: now) */
	unsigned check_fails;     /* failed attempts in a row (PT_PY_CHECK_FAILS decide) */
	uint32_t lost;            /* 1: this interpreter's frames cannot be read (python_layout_failed) */
	char why[192];            /* why not (pt_py_warn prints it) */
};

/* Look for CPython among ELF files in load order (the executable and its libraries).
 * 0 and *out filled; -ENOENT when none defines _PyRuntime; -ENOTSUP when one does but its
 * frames cannot be read (3.10 and older, 3.14+, a bad or implausible _Py_DebugOffsets), with
 * out->path, out->minor and out->why set for pt_py_warn(). */
int pt_py_detect(const char *const *paths, int npaths, struct pt_py_info *out);
/* Same over the objects PID maps now. */
int pt_py_detect_pid(pid_t pid, struct pt_py_info *out);
/* The absolute address of _PyRuntime in PID (its object must be mapped): 0 and
 * out->off.runtime set, or -ENOENT (not mapped yet). */
int pt_py_locate(pid_t pid, struct pt_py_info *info);
void pt_py_info_free(struct pt_py_info *info);
/* Check the offsets against the live target (after pt_py_locate): a thread state of the
 * interpreter whose native_thread_id is one of the target's threads (in its pid namespace),
 * and the frames of one such thread whose code objects are PyCode_Type objects named by str
 * objects. 0 passed, -EAGAIN not decidable yet (interpreter not initialized, no frame yet),
 * -EPROTO failed (info->why says why). Sets info->check. */
int pt_py_check_live(pid_t pid, struct pt_py_info *info);
/* The one stderr line for an interpreter whose frames cannot be read: its path
 * (sanitized), version and info->why. Sets info->lost. */
void pt_py_warn(struct pt_py_info *info);

/* Parse the _Py_DebugOffsets at the start of _PyRuntime (3.13+; buf: its first len bytes,
 * hexversion: the object's Py_Version). 0 and *k (runtime left 0) and *u filled; -EPROTO
 * (bad cookie, version mismatch, an offset outside its structure or beyond what the BPF walk
 * reads) or -ENOTSUP (a layout this build does not know: 3.14+, free-threaded) with why. */
int pt_py_debug_offsets(const uint8_t *buf, size_t len, uint32_t hexversion,
			struct pt_py_offsets *k, struct pt_py_user_off *u, char *why, size_t wsize);

/* Names of Python frames, read from the target's code objects through /proc/PID/mem and
 * cached per code object: resolve early (code objects of finished modules, lambdas and the
 * target itself at exit go away). */
struct pt_py_resolver;
struct pt_py_resolver *pt_py_resolver_new(pid_t pid, const struct pt_py_info *info);
void pt_py_resolver_free(struct pt_py_resolver *r);
/* Read the code objects of stack idx's words now (once per stack: call it when the kernel
 * announces the stack). 0 or -errno. */
int pt_py_resolve_stack(struct pt_py_resolver *r, uint32_t idx, const __u64 *w, uint32_t n);
/* The frame of word k of stack idx: "module:function:line" in *name, the file in *file (both
 * owned by r, valid until it is freed), and the code object's record in *rec_id (frames with
 * the same record and line are the same frame). -ENOENT if the code object could not be read
 * (*name is then "[python code 0x...]"), -ENOMEM. */
int pt_py_frame_name(struct pt_py_resolver *r, uint32_t idx, uint32_t k, uint64_t word,
		     const char **name, const char **file, int *line, uint32_t *rec_id);
/* The function of a frame's record (rec_id from pt_py_frame_name): "module:qualname", the
 * name without its line, in *func (owned by r) and co_firstlineno in *first. -ENOENT for a
 * code object that could not be read, -ENOMEM. */
int pt_py_frame_func(struct pt_py_resolver *r, uint32_t rec_id, const char **func, int *first);
/* Code objects that could not be read (freed before we got to them). */
uint64_t pt_py_unreadable(const struct pt_py_resolver *r);

/*
 * Pure helpers (unit-tested).
 */

/* Line of code unit idx (0-based) from a 3.11+ location table (co_linetable) and
 * co_firstlineno; -1 when the table says "no line" or idx lies beyond it. */
int pt_py_line(const uint8_t *table, size_t len, int firstlineno, uint32_t idx);

/* "module:function:line": module is the file's base name without ".py". Writes at most
 * size bytes (always terminated). */
void pt_py_format(char *buf, size_t size, const char *filename, const char *func, int line);

/* One entry of a merged stack, leaf first. */
enum { PT_PY_ITEM_NATIVE = 0, PT_PY_ITEM_PY = 1, PT_PY_ITEM_TRUNC = 2 };
struct pt_py_item {
	uint32_t kind;   /* PT_PY_ITEM_* */
	uint32_t i;      /* native frame index, or Python word index */
};
/*
 * Merge a native stack (is_eval[k]: frame k is a _PyEval_EvalFrameDefault) with its Python
 * words: the k-th run of Python frames (runs end at PT_PY_B_ENTRY boundaries) replaces the
 * k-th eval frame counted from the leaf. A run left over (the native stack was cut) goes at
 * the root end and is counted in *unmatched; a truncated chain adds one PT_PY_ITEM_TRUNC where
 * the next run would have gone. Returns the number of items written (at most max).
 */
uint32_t pt_py_splice(const bool *is_eval, uint32_t nnative, const __u64 *w, uint32_t nw,
		      struct pt_py_item *out, uint32_t max, uint32_t *unmatched);
#endif
