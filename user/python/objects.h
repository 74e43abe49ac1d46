/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * objects.h — --python-objects while tracing: CPython's object allocator probed like malloc
 * (python/pyalloc.h), unless the interpreter runs with PYTHONMALLOC=malloc, where every object
 * already is a malloc block the malloc probes see; the PYTHONMALLOC a launched command starts
 * with; the live table's cost and the probes' (the kernel's BPF run-time statistics); the
 * target's CPU time while traced. What was done goes into the report's note (struct
 * pt_pyobj_note, python/pyobj.h); the session holds struct pt_pyobjects by value.
 */
#ifndef PEAKTRACE_PYTHON_OBJECTS_H
#define PEAKTRACE_PYTHON_OBJECTS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "attach/links.h"
#include "attach/probes.h"
#include "python/pyalloc.h"
#include "python/pyobj.h"
#include "peaktrace.skel.h"

struct pt_pyobjects {
	struct pt_pyalloc pyalloc;   /* the probed CPython's entry points */
	char launch_pymalloc[32];    /* the PYTHONMALLOC a launched command starts with */
	int stats_fd;                /* BPF run-time statistics on while open (-1: off) */
};

/* A launched command's PYTHONMALLOC (user: the one it gets from the user, NULL if none):
 * returns true when peaktrace should set PYTHONMALLOC=malloc, said on stderr, because no probe
 * could see every object otherwise: its CPython (among paths) inlines pymalloc into its callers
 * (Debian's), or it is no CPython itself (a script or shim that may exec one). exe: its path,
 * for the message. */
bool pt_pyobj_launch_env(struct pt_pyobjects *po, struct pt_pyobj_note *n, const char *user,
			 char *const *paths, int npaths, const char *exe);
/* The launched command's environment (env: room for ntarget_env + 1): --target-env's settings,
 * and when on (--python-objects) PYTHONMALLOC=malloc if pt_pyobj_launch_env says so. Returns
 * how many. */
int pt_pyobj_command_env(struct pt_pyobjects *po, struct pt_pyobj_note *n, char **env,
			 char *const *target_env, int ntarget_env, bool on, char *const *paths,
			 int npaths, const char *exe);
/* --python-objects' live table slots: given when --max-live was (given_set), else sized from
 * the machine and (attached) pid's anonymous memory; said in n. */
uint32_t pt_pyobj_table_slots(struct pt_pyobj_note *n, uint32_t given, bool given_set, bool launched,
			      pid_t pid);
/* The probes planned for CPython's object allocator in py_path (launched: that file; else the
 * one pid maps, py_inode), attached when attach (the programs are loaded: an exec). start: the
 * command's first image in launch mode, whose environment peaktrace chose. */
void pt_pyobj_setup(struct pt_pyobjects *po, struct pt_pyobj_note *n, bool launched, pid_t pid,
		    const char *py_path, uint64_t py_inode, bool start);
/* The planned PyObject_* / PyMem_* probes attached (both families are in one file). */
void pt_pyobj_attach(struct pt_pyobjects *po, struct pt_pyobj_note *n, struct peaktrace_bpf *skel,
		     struct pt_links *links, pid_t pid, bool multi);
/* The target's CPU time at the start, and (end) what it took while traced. */
void pt_pyobj_cpu(struct pt_pyobj_note *n, pid_t pid, bool end);
/* What the live table takes, said before tracing starts; the kernel's BPF run-time statistics on,
 * so the report can state what the probes cost (two clock reads to each program run: ~40 ns). */
void pt_pyobj_table_start(struct pt_pyobjects *po, struct pt_pyobj_note *n, pid_t pid,
			  struct peaktrace_bpf *skel);
/* The allocator programs' runs and time (BPF run-time statistics, since pt_pyobj_table_start). */
void pt_pyobj_cost(struct pt_pyobj_note *n, struct peaktrace_bpf *skel);
void pt_pyobjects_free(struct pt_pyobjects *po);

#endif
