/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * pyalloc.h — CPython's object allocator as allocator entry points (--python-objects):
 * PyObject_Malloc/Calloc/Realloc/Free and PyMem_Malloc/Calloc/Realloc/Free, probed with the
 * malloc programs (they behave as malloc, calloc, realloc and free), and whether this build
 * inlines pymalloc into its callers, where no entry probe can see it.
 */
#ifndef PEAKTRACE_PYALLOC_H
#define PEAKTRACE_PYALLOC_H
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "target/procmaps.h"

/* The two families CPython exports: objects (PyObject_*) and the "mem" domain (PyMem_*), which
 * also goes to pymalloc since 3.6. */
enum pt_pyalloc_family { PT_PYALLOC_OBJ = 0, PT_PYALLOC_MEM, PT_PYALLOC_FAMILIES };

struct pt_pyalloc {
	/* One pseudo-allocator per family: fn_offset[PT_FN_MALLOC] is PyObject_Malloc's file
	 * offset, and so on (0: not exported). Both name the same file; only obj owns the fd. */
	struct pt_allocator fam[PT_PYALLOC_FAMILIES];
	/*
	 * Copies of pymalloc inlined into other functions. An optimized build (LTO + PGO, as
	 * Debian's) turns PyObject_Malloc's indirect call into "if the allocator is still
	 * pymalloc, run pymalloc's fast path here", in every caller: those allocations and frees
	 * never enter an exported function. Counted as the compare instructions against the
	 * static allocator's address outside PyObject_Malloc itself; 0 when there is none.
	 */
	uint32_t inlined_sites;
	uint64_t guard_vaddr;    /* the static allocator the guards compare against (0: none) */
};

/* Look the entry points up in the CPython object at open_path (the executable or
 * libpython3.X.so; path: its name as the target sees it). 0 and *out filled (free with
 * pt_pyalloc_free), -ENOENT when it exports no PyObject_Malloc, or -errno. */
int pt_pyalloc_find(const char *path, const char *open_path, struct pt_pyalloc *out);
/* Same for the object mapped in PID with this inode: opened inside the target's root or through
 * map_files (target/proc.h), never by a path resolved again. */
int pt_pyalloc_find_pid(pid_t pid, const char *path, uint64_t inode, struct pt_pyalloc *out);
void pt_pyalloc_free(struct pt_pyalloc *p);

/* x86-64 code (A64's: arch/arm64.h pt_arm64_pyalloc_*, chosen by the file's e_machine).
 * Count guard sites in code (a text segment loaded at vaddr): "cmp $imm32, reg" and
 * "cmpq $imm32, disp32(%rip)" with imm32 == target, and "lea disp32(%rip), reg" naming target,
 * outside [skip_lo, skip_hi). Pure (unit-tested). */
uint32_t pt_pyalloc_count_guards(const uint8_t *code, size_t n, uint64_t vaddr, uint64_t target,
				 uint64_t skip_lo, uint64_t skip_hi);
/* The address PyObject_Malloc's first instructions (code, at vaddr) compare the allocator
 * pointer against: the first "cmp $imm32, reg" or "lea disp32(%rip), reg" target. 0: none. */
uint64_t pt_pyalloc_guard_target(const uint8_t *code, size_t n, uint64_t vaddr);
#endif
