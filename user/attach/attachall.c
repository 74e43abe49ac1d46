// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* attachall.c — the allocator's probes and the tracepoints, attached together (attachall.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>
#include <pthread.h>
#include "attach/attachall.h"

struct tp_attach {
	struct peaktrace_bpf *skel;
	struct pt_links links;
	bool boundaries;
	int err;
};

static void *attach_tracepoints(void *arg)
{
	struct tp_attach *t = arg;

	t->err = pt_attach_tracepoints(t->skel, &t->links, t->boundaries);
	return NULL;
}

static int attach_allocator(struct peaktrace_bpf *skel, struct pt_links *links,
			    const struct pt_allocator *a, pid_t pid, struct pt_probe_info *probes,
			    int nprobes, bool multi, uint32_t *uprobe_links)
{
	int n = links->n, err = pt_attach_allocator(skel, links, a, pid, probes, nprobes, multi);

	*uprobe_links = (uint32_t)(links->n - n);
	return err;
}

int pt_attach_all(struct peaktrace_bpf *skel, struct pt_links *links, const struct pt_allocator *a,
		  pid_t pid, struct pt_probe_info *probes, int nprobes, bool multi, bool boundaries,
		  bool parallel, uint32_t *uprobe_links)
{
	struct tp_attach t = { .skel = skel, .boundaries = boundaries };
	pthread_t th;
	int err;

	if (!parallel || pthread_create(&th, NULL, attach_tracepoints, &t))
		return attach_allocator(skel, links, a, pid, probes, nprobes, multi, uprobe_links) ||
		       pt_attach_tracepoints(skel, links, boundaries);
	err = attach_allocator(skel, links, a, pid, probes, nprobes, multi, uprobe_links);
	pthread_join(th, NULL);
	if (pt_links_take(links, &t.links) && !err)
		err = -ENOMEM;
	return err || t.err;
}

void pt_tracefs_mount(void)
{
	if (access("/sys/kernel/tracing/events", F_OK) && access("/sys/kernel/debug/tracing/events", F_OK) &&
	    mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL))
		fprintf(stderr, "peaktrace: warning: cannot mount tracefs on /sys/kernel/tracing: %s\n",
			strerror(errno));
}
