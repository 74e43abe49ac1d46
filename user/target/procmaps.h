/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* procmaps.h — /proc/PID/maps parsing and allocator discovery. */
#ifndef PEAKTRACE_PROCMAPS_H
#define PEAKTRACE_PROCMAPS_H
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "bpf/peaktrace.h"

struct pt_mapping {
	uint64_t start, end;   /* virtual address range [start, end) */
	uint64_t pgoff;        /* file offset of start */
	uint64_t inode;
	uint32_t dev_major, dev_minor;
	char perms[5];         /* "r-xp" */
	char *path;            /* as printed in maps ("/usr/lib/...", "[heap]", "" for anon),
	                        * minus a trailing " (deleted)" on file paths, which sets: */
	int deleted;           /* file was unlinked/replaced; open it via /proc/PID/map_files */
};

struct pt_maps {
	struct pt_mapping *m;
	int n;
};

/* Parse /proc/PID/maps (or any file in that format when pid <= 0 and path given).
 * Returns 0 or -errno: -ESRCH if the process does not exist, -EINVAL on a line
 * not in maps format. A kernel thread has empty maps: 0 with n == 0. */
int pt_maps_read(pid_t pid, struct pt_maps *out);
int pt_maps_parse_file(const char *maps_path, struct pt_maps *out);
void pt_maps_free(struct pt_maps *m);

/* Allocator entry points peaktrace probes: enum pt_alloc_fn (bpf/peaktrace.h, the attach cookie
 * of the entry program). */
const char *pt_alloc_fn_name(enum pt_alloc_fn fn);

/*
 * Further entry points jemalloc, tcmalloc and mimalloc define themselves: the C++ operators
 * new/delete (theirs never call the probed malloc/free, or only through a tail jump) and
 * jemalloc's *allocx API. Each behaves, for the BPF programs, like one C function
 * (pt_extra_fn_as): size in rdi -> malloc, (ptr, size) -> realloc, ptr in rdi -> free.
 * Looked up only in objects classified as one of those three allocators: glibc's operator new is
 * libstdc++'s, which calls malloc.
 */
#define PT_EXTRA_FN_MAX 26
const char *pt_extra_fn_name(int i);
enum pt_alloc_fn pt_extra_fn_as(int i);

enum pt_allocator_kind { PT_ALLOC_GLIBC = 0, PT_ALLOC_JEMALLOC, PT_ALLOC_TCMALLOC,
			 PT_ALLOC_MIMALLOC, PT_ALLOC_MUSL, PT_ALLOC_OTHER };
const char *pt_allocator_kind_name(enum pt_allocator_kind k);

struct pt_allocator {
	enum pt_allocator_kind kind;
	char *path;        /* path as in maps */
	/* Path to open/attach from here: names the inode that was read, never the target's path
	 * resolved again ("/proc/self/fd/N" of open_fd, a map_files link; the path itself in
	 * launch mode). */
	char *open_path;
	int open_fd;       /* behind open_path when own_fd; pt_allocator_free closes it */
	/* The inode that was read (fstat when found): the same allocator object across an exec,
	 * whatever its open_path (a map_files link of the old image's mapping is gone after it). */
	uint64_t dev, ino;
	bool own_fd;
	/* Per entry point: file offset for the uprobe (0 = not defined in this object),
	 * and the symbol name found (e.g. "malloc", "je_malloc"). */
	uint64_t fn_offset[PT_FN_MAX];
	uint64_t fn_vaddr[PT_FN_MAX];
	char *fn_symbol[PT_FN_MAX];
	/* The same for the extra entry points (pt_extra_fn_name(i)); 0 = not defined here. */
	uint64_t extra_offset[PT_EXTRA_FN_MAX];
	uint64_t extra_vaddr[PT_EXTRA_FN_MAX];
	/* Or'ed into every attach cookie (PT_FN_PYOBJ: CPython's object allocator). */
	uint32_t cookie_flags;
};

/* Walk the target's maps in load order (executable, preloaded libs, libc, ...) and
 * pick the first ELF object that defines malloc. Returns 0, -ENOENT if no mapped
 * object defines malloc (static binary without symbols, unsupported allocator),
 * -ESRCH if the process is gone, -EINVAL for a kernel thread (empty maps),
 * or another -errno. Load order is ld.so's symbol search order (exe, LD_PRELOAD,
 * /etc/ld.so.preload, DT_NEEDED breadth first), not address order. */
int pt_find_allocator(pid_t pid, struct pt_allocator *out);
/* Same from a list of ELF paths in load order (used for launch mode before exec). */
int pt_find_allocator_in(const char *const *paths, int npaths, struct pt_allocator *out);
void pt_allocator_free(struct pt_allocator *a);
#endif
