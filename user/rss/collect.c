// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * collect.c — RSS attribution's steps in the session: the faults in new regions looked at
 * while the target runs, the file and shmem objects' names, the memory kinds at the end and
 * the objects' table once tracing stopped (rss.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "util/stop.h"
#include "arenas/resident.h"
#include "invocation/invocation.h"
#include "rss/rss.h"

/* The paths of the file and shmem objects holding RSS pages (rssobj.h): the maps are read
 * again whenever the kernel has made new objects since the last read (made: rss_g.sh_objs), so
 * a file mapped and unmapped while tracing, or a target gone by the end, keeps its name. */
static void obj_names(struct pt_rss *r, pid_t pid, uint64_t made, bool force)
{
	if (!force && made == r->objs_named)
		return;
	r->objs_named = made;
	pt_rss_names_add(&r->objs, pid);   /* gone: the names read so far stay */
}

void pt_rss_event(struct pt_rss *r, pid_t pid, uint32_t stack, uint64_t addr, uint64_t ts)
{
	pt_rss_kinds_queue(&r->kinds, stack, addr, ts);
	if (r->kinds.nqueued >= 1024)   /* full: the settled ones, else all, settled or not */
		pt_rss_kinds_early(&r->kinds, pid, pt_mono_ns());
	if (r->kinds.nqueued >= 1024)
		pt_rss_kinds_early(&r->kinds, pid, 0);
}

void pt_rss_poll(struct pt_rss *r, pid_t pid, const struct pt_rss_global *k, bool alive)
{
	obj_names(r, pid, k->sh_objs, false);
	pt_rss_kinds_early(&r->kinds, pid, pt_mono_ns());
	/* Its maps while it lives, should it die: attached, they are gone by the end. */
	if (alive)
		pt_rss_kinds_keep(&r->kinds, pid, k->map_gen, pt_mono_ns());
}

void pt_rss_kinds_end(struct pt_rss *r, pid_t pid, const struct pt_rss_global *k, int stats_fd,
		      uint32_t nstacks)
{
	int err;

	if (r->kinds.read)
		return;
	pt_rss_kinds_early(&r->kinds, pid, 0);
	err = pt_rss_kinds_capture(&r->kinds, pid, stats_fd, nstacks);
	if (err && err != -ESRCH)	/* exited (attach mode): the report says "not known" */
		fprintf(stderr, "peaktrace: cannot read the memory kinds of RSS pages: %s; they are "
				"shown as \"not known\"\n", strerror(-err));
	obj_names(r, pid, k->sh_objs, true);
}

const uint8_t *pt_rss_stack_kinds(const struct pt_rss *r, uint32_t nstacks)
{
	return r->kinds.read && r->kinds.n >= nstacks ? r->kinds.kind : NULL;
}

void pt_rss_collect(struct pt_rss *r, int objs_fd)
{
	int err = pt_rss_objs_read(&r->objs, objs_fd, r->kernel.peak_seq);

	if (err)
		fprintf(stderr, "peaktrace: cannot read the file and shmem objects holding RSS: %s\n",
			strerror(-err));
}

/* Malloc heap and pymalloc arenas resident at an invocation's end, from the target's mappings
 * (arenas/resident.h): no kernel tables, so --light has them too. User space, after the
 * boundary: the target runs on. */
void pt_rss_inv_resident(struct pt_inv_record *rec, pid_t pid, bool python)
{
	struct pt_mem_resident mr;

	if (pt_mem_resident_read(pid, python, &mr))
		return;
	rec->mem_read = true;
	rec->heap_main_resident = mr.heap_main_bytes;
	rec->heap_thread_resident = mr.heap_thread_bytes;
	rec->pymalloc_resident = mr.pymalloc_bytes;
	rec->pymalloc_pools = mr.pymalloc_pools;
	rec->mem_unscanned = mr.unscanned_bytes;
}

void pt_rss_free(struct pt_rss *r)
{
	pt_rss_kinds_free(&r->kinds);
	pt_rss_objs_free(&r->objs);
}
