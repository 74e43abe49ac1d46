/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* symbolize.h — address -> function/module for a target process. */
#ifndef PEAKTRACE_SYMBOLIZE_H
#define PEAKTRACE_SYMBOLIZE_H
#include <stdint.h>
#include <sys/types.h>
#include "symbolize/perfmap.h"

struct pt_symbolizer;

struct pt_symres {
	const char *func;     /* demangled name; NULL if no symbol covers the address */
	const char *module;   /* mapping path ("" if anonymous); NULL if addr is in no known mapping */
	uint64_t offset;      /* ELF virtual address (file-relative) of addr; the file offset
	                       * if the ELF could not be read; for anonymous memory the
	                       * offset into the mapping */
	uint64_t func_off;    /* addr - symbol start */
	/* From the module's DWARF (the file itself or its build-id/debuglink debug file), read
	 * lazily on the module's first lookup: the source file and line of addr from the line
	 * table (in code inlined there, the inlined callee's line). NULL/0 without debug info. */
	const char *file;
	uint32_t line;
	const char *build_id; /* NT_GNU_BUILD_ID in hex, NULL if the module has none */
};

/* Creates a symbolizer that reads /proc/PID/maps now (NULL with errno set, e.g.
 * ESRCH). Mappings are cached: refresh adds new ones and keeps ones that disappeared,
 * so an exited target still symbolizes. ELF files are opened through /proc/PID/root
 * (or /proc/PID/map_files for deleted ones) and kept open. Not thread-safe: use one
 * symbolizer from one thread. */
struct pt_symbolizer *pt_sym_new(pid_t pid);
/* 0 or -errno (-ESRCH once the target is gone; the cache is kept either way). */
int pt_sym_refresh(struct pt_symbolizer *s);
/* Returns 0 when the address fell in a known mapping (res filled, strings owned by s),
 * -ENOENT (res->module == NULL) otherwise. */
int pt_sym_resolve(struct pt_symbolizer *s, uint64_t addr, struct pt_symres *res);
/* True if addr lies in an executable mapping ever seen, or in JIT code the perf map names. */
int pt_sym_is_code(struct pt_symbolizer *s, uint64_t addr);
void pt_sym_free(struct pt_symbolizer *s);
/* The target exec'd: what s knows is kept, frozen, for the stacks recorded before first_stack
 * (an earlier image's addresses must not be named against the new one's mappings), and s
 * starts over with the new image's maps. 0 or -errno (the refresh's; the old image is kept). */
int pt_sym_exec(struct pt_symbolizer *s, uint32_t first_stack);
/* The symbolizer of the image stack idx was recorded in (s itself without exec). */
struct pt_symbolizer *pt_sym_for_stack(struct pt_symbolizer *s, uint32_t idx);
/* Images seen: 1 + the execs. */
uint32_t pt_sym_images(const struct pt_symbolizer *s);
/* The JIT perf map's budget over a run (--perf-map-max), for every symbolizer made after: 0 is
 * the default, PT_PERFMAP_MAX_BYTES (perfmap.h). */
void pt_sym_perfmap_max(uint64_t max_bytes);
uint64_t pt_sym_perfmap_limit(void);
/* What was read of the perf map and what was cut (perfmap.h), summed over the images; *bytes
 * is the map's size at the last look (the largest over the images). */
void pt_sym_perfmap_stats(const struct pt_symbolizer *s, struct pt_perfmap_cut *cut, uint64_t *bytes);


/* Demangle a C++ (Itanium ABI) name; returns malloc'd string or NULL if not mangled. */
char *pt_demangle(const char *name);
#endif
