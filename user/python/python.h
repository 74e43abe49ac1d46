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
};

/* Look for CPython among ELF files in load order (the executable and its libraries).
 * 0 and *out filled; -ENOENT when none defines _PyRuntime; -ENOTSUP for a version without
 * an offset table (3.10 and older, 3.14+), with out->minor set for the message. */
int pt_py_detect(const char *const *paths, int npaths, struct pt_py_info *out);
/* Same over the objects PID maps now. */
int pt_py_detect_pid(pid_t pid, struct pt_py_info *out);
/* The absolute address of _PyRuntime in PID (its object must be mapped): 0 and
 * out->off.runtime set, or -ENOENT (not mapped yet). */
int pt_py_locate(pid_t pid, struct pt_py_info *info);
void pt_py_info_free(struct pt_py_info *info);

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
