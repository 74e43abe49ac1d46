/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tracing.h — CPython in the traced target, while it is traced: found before the load (the
 * session's py_found), located once its object is mapped (the runtime's address handed to BPF,
 * which walks its frames from then on), its offsets checked on the live interpreter, each new
 * stack's code objects read while the target still holds them, and at the end each stack's
 * Python words. The session holds it by value; the BPF side is passed as its .bss offsets and
 * map fds.
 */
#ifndef PEAKTRACE_PYTHON_TRACING_H
#define PEAKTRACE_PYTHON_TRACING_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "bpf/peaktrace.h"
#include "python/python.h"
#include "maps/mapread.h"

struct pt_python {
	struct pt_py_info info;       /* what was detected (python.h) */
	struct pt_py_resolver *res;   /* frame names, read as new stacks appear */
	struct pt_py_stack **words;   /* at the end: stack k's Python words, or NULL */
	uint32_t nwords;
};

/* The BPF side of the walk: its offsets (.bss py_off) and the maps of its words. */
struct pt_python_bpf {
	struct pt_py_offsets *off;
	int stacks_fd, py_stacks_fd, py_chunks_fd;
};

/* Tell BPF where _PyRuntime is, once the object defining it is mapped (after exec in launch
 * mode), and start reading code objects from the current image. found: CPython was found (and
 * stacks are captured). */
void pt_python_locate(struct pt_python *p, bool found, pid_t pid, const struct pt_python_bpf *b,
		      bool verbose);
/* Until the offsets have been checked on the live target (launch mode: the interpreter
 * initializes after the probes are set), check again; a failure stops the walk, said once. */
void pt_python_check(struct pt_python *p, bool found, pid_t pid, const struct pt_python_bpf *b,
		     bool verbose);
/* PT_EV_PY_STACK: stack idx has Python frames: its code objects read while the target holds them. */
void pt_python_event(struct pt_python *p, const struct pt_python_bpf *b, uint32_t idx);
/* An exec: CPython in the new image (paths: its objects, else read from pid's maps), for the walk
 * (stopped until it is located). True when the new image runs one: p then describes it. */
bool pt_python_exec(struct pt_python *p, bool fp_stacks, char **paths, int npaths, pid_t pid,
		    const struct pt_python_bpf *b);
/* At the end: each of the table's stacks' Python words (only stacks that have some are in the
 * map). The array, or NULL when out of memory. */
const struct pt_py_stack *const *pt_python_collect(struct pt_python *p, const struct pt_stack_table *t,
						   uint32_t nstacks, const struct pt_python_bpf *b);
void pt_python_free(struct pt_python *p);

#endif
