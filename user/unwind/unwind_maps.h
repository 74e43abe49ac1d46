/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * unwind_maps.h — the target's .eh_frame tables in BPF maps, for the in-kernel unwinder
 * (bpf/unwind.bpf.h; row and mapping formats in bpf/unwind.h).
 *
 * Every executable file-backed mapping of the target gets its file's table (user/cfi.h),
 * built once per file (device, inode) however many times it is mapped, and appended to one
 * array of rows; a sorted array of mappings tells the BPF side where each one's rows are.
 * New code (dlopen) is picked up by pt_unwind_refresh(), which the session's poll loop calls
 * when the target maps executable memory.
 */
#ifndef PEAKTRACE_UNWIND_MAPS_H
#define PEAKTRACE_UNWIND_MAPS_H
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "bpf/unwind.h"
#include "util/elfutil.h"

struct peaktrace_bpf;
struct pt_unwinder;

/* Where tables go: the BPF maps (pt_unwind_load), or memory (tests). Each returns 0 or -errno. */
struct pt_unwind_sink {
	uint32_t max_rows;
	/* rows[0, n) at row index first (first + n <= max_rows) */
	int (*rows)(void *arg, uint32_t first, const struct pt_unwind_row *rows, uint32_t n);
	/* a file's rows, for the by-file fallback (optional) */
	int (*file)(void *arg, const struct pt_unwind_file_key *key, const struct pt_unwind_file *f);
	/* replace the published mappings: n of them, sorted by start, n <= PT_UNWIND_MAX_MAPS */
	int (*publish)(void *arg, const struct pt_unwind_map *maps, uint32_t n);
	/* the key the kernel-side fallback gives the file this process mapped at addr (optional;
	 * asked for files on overlayfs only): 0 with *k set, or -1 */
	int (*kernel_key)(void *arg, uint64_t addr, struct pt_unwind_file_key *k);
	void *arg;
};

struct pt_unwind_stats {
	uint32_t files;         /* files with rows loaded */
	uint32_t rows;          /* rows loaded (of sink.max_rows) */
	uint32_t maps;          /* executable mappings published by the last refresh */
	uint32_t rows_full;     /* files left without rows: the row table was full */
	uint32_t maps_full;     /* executable mappings the last refresh could not publish */
	uint32_t file_failed;   /* files whose CFI could not be read (no file, no .eh_frame) */
	double build_ms;        /* time spent building and loading tables */
};

/* ---- core (no BPF) ------------------------------------------------------------------------ */

struct pt_unwinder *pt_unwinder_new(pid_t pid, const struct pt_unwind_sink *sink);
/* Load a file's table ahead of its mapping (launch mode, before exec). 0 or -errno. */
int pt_unwinder_add_file(struct pt_unwinder *u, const char *path);
/* Re-read /proc/PID/maps, load tables of files not seen yet, publish the mappings. 0 or -errno
 * (-ESRCH once the process is gone). Files that fail are counted, not errors. */
int pt_unwinder_refresh(struct pt_unwinder *u);
const struct pt_unwind_stats *pt_unwinder_stats(const struct pt_unwinder *u);
void pt_unwinder_free(struct pt_unwinder *u);

/* pc - bias = ELF vaddr for a mapping of file offset pgoff at start, given the file's PT_LOAD
 * segments: its executable segment's p_vaddr - p_offset. 0, or -ENOENT if no segment holds
 * pgoff. */
int pt_unwind_bias(const struct pt_elf_load *loads, int nloads, uint64_t start, uint64_t pgoff,
		   uint64_t *bias);

/* ---- the skeleton's maps ----------------------------------------------------------------- */

/* Between open and load: the BPF switch and the map sizes (row table rows, at most
 * PT_UNWIND_MAX_ROWS; 0 = PT_DEF_UNWIND_ROWS). Tables are one entry each when dwarf is off. */
void pt_unwind_configure(struct peaktrace_bpf *skel, bool dwarf, uint32_t rows);
/*
 * After load, before attach: tables for the target, from the cache (uwcache.h; NULL: none) or
 * built (and then cached). Attach mode (files == NULL): every executable mapping of pid.
 * Launch mode: the objects the program will load (pid has not exec'd yet), while the command
 * waits. With defer, only those the cache has: the first refresh after the exec builds the
 * others while the program runs, and stacks walked through a file before its table is in are
 * counted (PT_ERR_UNWIND_PENDING). NULL when dwarf is off or nothing could be set up (one
 * warning on stderr); the other calls accept NULL.
 */
struct pt_uwcache;
struct pt_unwinder *pt_unwind_load(struct peaktrace_bpf *skel, pid_t pid, char *const *files,
				   int nfiles, struct pt_uwcache *cache, bool defer);
/* Time spent building and loading tables so far, ms (0 for NULL). */
double pt_unwind_build_ms(const struct pt_unwinder *u);
/* The target mapped new code: load it. Also updates the user-space error counters. */
void pt_unwind_refresh(struct pt_unwinder *u);
/* The same while the target is held (an exec stop): with defer, tables from the cache only;
 * the files it does not have wait for the next pt_unwind_refresh. */
void pt_unwind_refresh_held(struct pt_unwinder *u);
void pt_unwind_free(struct pt_unwinder *u);
#endif
