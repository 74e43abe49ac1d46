/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * exec.h — the target became another program (an exec): the per-image steps again for the image
 * it is now (the symbolizer, the allocator's probes, CPython, the unwind tables, comm and exe),
 * each exec noted for the report (struct pt_exec_note). Launched, the target is held at its exec
 * stop so no allocation of the new image is missed; attached, the time until its probes were in
 * place is noted. An exec into another root (a chroot, a container's) is settled once its own
 * loader has mapped its allocator. The session holds struct pt_exec by value and passes what an
 * exec changes (struct pt_exec_image) and what it uses (struct pt_exec_env) at each call.
 */
#ifndef PEAKTRACE_EXEC_H
#define PEAKTRACE_EXEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "attach/links.h"
#include "attach/probes.h"
#include "target/launch.h"
#include "target/procmaps.h"
#include "symbolize/symbolize.h"
#include "unwind/unwind_maps.h"
#include "exec/execs.h"
#include "peaktrace.skel.h"

/* What an exec replaces: the session's image state, which it updates. */
struct pt_exec_image {
	struct pt_allocator *alloc;         /* the probed allocator */
	struct pt_probe_info *probes;       /* its probes, as the report lists them */
	int *nprobes;
	char ***paths;                      /* the program and the libraries it loads */
	int *npaths;
	char **exe;
	char *exe_name;                     /* the report's exe and comm (sanitized) */
	size_t exe_name_len;
	char *comm;
	size_t comm_len;
	char *node_note;                    /* the report's note of Node images without perf maps */
	size_t node_note_len;
	uint64_t *node_flags_missing;
	struct pt_execs *notes;             /* the report's notes of each exec */
};

/* What an exec uses: the target, the BPF side, the tools that follow the image. */
struct pt_exec_env {
	pid_t pid;
	bool light, verbose, multi;
	uint64_t start_ns;                  /* tracing's start: notes say when, from it */
	struct peaktrace_bpf *skel;
	struct pt_links *links;
	struct pt_symbolizer *sym;
	struct pt_unwinder *unw;
	struct pt_child *child;             /* launch mode: stepped to its loader's end (another root) */
	bool (*at_step)(void *arg);         /* child->at_step for that: arg is the child's at_arg */
	/* CPython (and --python-objects) looked for in the new image: paths its objects, or NULL
	 * (read from the process's maps); x->python set when found. The session's (python/). */
	void (*python)(void *ctx, char **paths, int npaths, struct pt_exec_note *x);
	void *ctx;
};

struct pt_exec {
	/* An exec into another root: its allocator and CPython are read from its maps once its
	 * loader has mapped them (pt_exec_settle); the note it fills. */
	bool pending;
	uint32_t pending_note;
	uint64_t pending_ns;
	uint64_t ev_ns;          /* kernel time of the last exec event not yet matched to its stop */
};

/* PT_EV_EXEC (kernel time ts): attached, the per-image steps now (before an exit in the same
 * batch of events takes the new image's maps away); launched, at the exec stop (pt_exec_stop). */
void pt_exec_event(struct pt_exec *st, const struct pt_exec_env *env, const struct pt_exec_image *img,
		   bool launched, uint64_t ts, uint32_t first_stack);
/* Launch mode, stopped at an exec (the first is the command's own: nothing to redo): the per-image
 * steps. Returns when the hold began (the exec event's time when it is known). */
uint64_t pt_exec_stop(struct pt_exec *st, const struct pt_exec_env *env, const struct pt_exec_image *img,
		      bool first, uint32_t first_stack);
/* An exec into another root: 1 once the new image's allocator is mapped and probed (or is the one
 * already probed), with CPython looked for in its maps too (the caller refreshes its maps then);
 * 0 when nothing is pending; -1 not yet. */
int pt_exec_settle(struct pt_exec *st, const struct pt_exec_env *env, const struct pt_exec_image *img);
/* The new image never mapped an allocator we know (stepped to the end, or given up on): said as
 * for any image without one. */
void pt_exec_unsettled(struct pt_exec *st, struct pt_execs *notes);

#endif
