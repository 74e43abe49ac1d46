// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* exec.c — the target became another program (exec.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include "util/fmt.h"
#include "target/proc.h"
#include "target/nodeflags.h"
#include "profile/collect.h"
#include "exec/exec.h"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static bool same_file(const char *a, const char *b)
{
	struct stat x, y;

	return a && b && !stat(a, &x) && !stat(b, &y) && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

/* The new image's allocator na (taken): probed unless it is the object already probed. */
static void use_allocator(const struct pt_exec_env *env, const struct pt_exec_image *img,
			  struct pt_allocator *na, struct pt_exec_note *x)
{
	struct pt_allocator *cur = img->alloc;

	if ((na->ino && na->ino == cur->ino && na->dev == cur->dev) ||
	    same_file(na->open_path, cur->open_path)) {
		pt_allocator_free(na);
		return;
	}
	/* The report lists the probes of the allocator the target ends with. */
	*img->nprobes = 0;
	if (pt_plan_probes(na, img->probes, img->nprobes) ||
	    pt_attach_allocator(env->skel, env->links, na, env->pid, img->probes, *img->nprobes,
				env->multi)) {
		x->allocator_missing = true;
		pt_allocator_free(na);
		return;
	}
	x->reprobed = true;
	pt_allocator_free(cur);
	*cur = *na;
	pt_collect_set_allocator(cur->path);
}

/* The new image's allocator: probes for it when it is another object (uprobes are per inode,
 * filtered by process: the same libc keeps its probes across the exec). */
static void exec_allocator(const struct pt_exec_env *env, const struct pt_exec_image *img,
			   char **paths, int npaths, struct pt_exec_note *x)
{
	struct pt_allocator na;

	if (env->light)
		return;
	memset(&na, 0, sizeof(na));
	na.open_fd = -1;
	if (pt_find_allocator_in((const char *const *)paths, npaths, &na)) {
		x->allocator_missing = true;
		pt_allocator_free(&na);
		return;
	}
	use_allocator(env, img, &na, x);
}

int pt_exec_settle(struct pt_exec *st, const struct pt_exec_env *env, const struct pt_exec_image *img)
{
	struct pt_exec_note spare, *x = &spare;
	struct pt_allocator na;
	uint64_t dt;

	if (!st->pending)
		return 0;
	memset(&na, 0, sizeof(na));
	na.open_fd = -1;
	if (pt_find_allocator(env->pid, &na)) {
		pt_allocator_free(&na);
		return -1;
	}
	memset(&spare, 0, sizeof(spare));
	if (st->pending_note < PT_EXECS_MAX)
		x = &img->notes->n[st->pending_note];
	x->allocator_missing = false;
	use_allocator(env, img, &na, x);
	env->python(env->ctx, NULL, 0, x);
	st->pending = false;
	if (x->held)   /* the libraries its loader mapped so far, before it goes on */
		pt_unwind_refresh_held(env->unw);
	dt = now_ns() - st->pending_ns;
	if (x->held)
		x->held_ns = dt;
	else
		x->window_ns = dt;
	return 1;
}

void pt_exec_unsettled(struct pt_exec *st, struct pt_execs *notes)
{
	if (!st->pending)
		return;
	if (st->pending_note < PT_EXECS_MAX)
		notes->n[st->pending_note].allocator_missing = true;
	st->pending = false;
}

/* The note's start: when, from which image to which (exe), what the earlier images still hold. */
static void note_start(struct pt_exec_note *x, const struct pt_exec_env *env,
		       const struct pt_exec_image *img, bool held, uint64_t exec_ns, uint32_t first_stack,
		       const char *exe)
{
	memset(x, 0, sizeof(*x));
	x->held = held;
	x->at_ns = exec_ns > env->start_ns ? exec_ns - env->start_ns : 0;
	x->first_stack = first_stack;
	x->live_bytes = (uint64_t)env->skel->bss->g.live_bytes;
	x->live_count = (uint64_t)env->skel->bss->g.live_count;
	snprintf(x->from, sizeof(x->from), "%.*s", (int)sizeof(x->from) - 1, img->exe_name);
	pt_sanitize(x->to, sizeof(x->to), exe);
}

/* The new image's objects and allocator: from its maps once its own loader has mapped them when
 * it runs in another root, else from its load order now. */
static void exec_image(struct pt_exec *st, const struct pt_exec_env *env, const struct pt_exec_image *img,
		       bool held, uint64_t exec_ns, const char *exe, struct pt_exec_note *x)
{
	char *nexe = NULL, **paths = NULL;
	int npaths = 0;

	if (exe[0] == '/' && !pt_target_same_root(env->pid)) {
		/* Another root (a chroot, a container's): the host's loader would list the host's
		 * libraries, so the allocator and CPython are read from the new image's maps once
		 * its own loader has mapped them (pt_exec_settle); held, the image is stepped to that
		 * point (target/launch.c), so nothing it allocates is missed either. */
		st->pending = true;
		st->pending_note = img->notes->count;
		st->pending_ns = exec_ns;
		if (held) {
			env->child->step = true;
			env->child->at_step = env->at_step;
		}
	} else if (exe[0] == '/' && pt_load_order(exe, &nexe, &paths, &npaths) == 0) {
		exec_allocator(env, img, paths, npaths, x);
		env->python(env->ctx, paths, npaths, x);
		if (*img->paths)
			pt_strv_free(*img->paths, *img->npaths);
		free(*img->exe);
		*img->paths = paths;
		*img->npaths = npaths;
		*img->exe = nexe;
	} else {
		x->allocator_missing = true;
	}
}

/* comm and exe are the target's to choose: sanitized like every name in the profile. */
static void image_names(const struct pt_exec_env *env, const struct pt_exec_image *img, const char *exe)
{
	char tmp[4096];

	pt_proc_comm(env->pid, img->comm, img->comm_len);
	snprintf(img->exe_name, img->exe_name_len, "%s", exe);
	snprintf(tmp, sizeof(tmp), "%s", img->comm);
	pt_sanitize(img->comm, img->comm_len, tmp);
	snprintf(tmp, sizeof(tmp), "%s", img->exe_name);
	pt_sanitize(img->exe_name, img->exe_name_len, tmp);
}

/* The per-image steps for the image the target is now: the symbolizer (stacks recorded before
 * first_stack keep the old image's mappings), the allocator's probes, CPython, the unwind
 * tables, comm and exe. held: stopped at the exec stop (launch mode). */
static void target_exec(struct pt_exec *st, const struct pt_exec_env *env, const struct pt_exec_image *img,
			bool held, uint64_t exec_ns, uint32_t first_stack)
{
	struct pt_execs *ex = img->notes;
	struct pt_exec_note x;
	char exe[4096], link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/exe", env->pid);
	n = readlink(link, exe, sizeof(exe) - 1);
	if (n <= 0)
		n = snprintf(exe, sizeof(exe), "?");   /* gone already: its stacks stay unnamed */
	exe[n] = 0;
	note_start(&x, env, img, held, exec_ns, first_stack, exe);
	if (env->sym)
		pt_sym_exec(env->sym, first_stack);
	exec_image(st, env, img, held, exec_ns, exe, &x);
	/* Held at the exec stop: with --fast-start only the tables the cache has; the poll loop
	 * builds the others once the target runs again (the exec event asked for that refresh),
	 * and until then their frames are counted as not yet covered. */
	if (held)
		pt_unwind_refresh_held(env->unw);
	else
		pt_unwind_refresh(env->unw);
	if (x.reprobed && !held && !st->pending)
		x.window_ns = now_ns() - exec_ns;
	if (held)
		x.held_ns = now_ns() - exec_ns;
	image_names(env, img, exe);
	if (!held)   /* launch mode checks at the exec stop (pt_exec_stop) */
		*img->node_flags_missing += pt_node_flags_warn(env->pid, img->node_note, img->node_note_len);
	if (ex->count < PT_EXECS_MAX)
		ex->n[ex->count] = x;
	ex->count++;
	if (env->verbose)
		fprintf(stderr, "peaktrace: exec: %s -> %s\n", x.from, x.to);
}

void pt_exec_event(struct pt_exec *st, const struct pt_exec_env *env, const struct pt_exec_image *img,
		   bool launched, uint64_t ts, uint32_t first_stack)
{
	if (!launched)
		target_exec(st, env, img, false, ts, first_stack);
	st->ev_ns = ts;
}

uint64_t pt_exec_stop(struct pt_exec *st, const struct pt_exec_env *env, const struct pt_exec_image *img,
		      bool first, uint32_t first_stack)
{
	uint64_t t = now_ns();

	/* The hold began at the stop, not when we saw it: the exec event (sent by the kernel just
	 * before the stop, so in the ring buffer already read) says when that was. */
	if (st->ev_ns && st->ev_ns <= t && t - st->ev_ns < 10000000000ULL)
		t = st->ev_ns;
	st->ev_ns = 0;
	if (!first)
		target_exec(st, env, img, true, t, first_stack);
	*img->node_flags_missing += pt_node_flags_warn(env->pid, img->node_note, img->node_note_len);
	return t;
}
