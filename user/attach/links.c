// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* links.c — the table of attached probes, detached in groups from parallel threads. */
#include <errno.h>
#include <pthread.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "attach/links.h"

int pt_links_add(struct pt_links *t, struct bpf_link *l, int group)
{
	if (!l)
		return -errno;
	if (t->n < PT_MAX_LINKS) {
		t->l[t->n].link = l;
		t->l[t->n].fd = -1;
		t->l[t->n++].group = group;
	}
	return 0;
}

int pt_links_add_fd(struct pt_links *t, int fd, int group)
{
	if (fd < 0)
		return fd;
	if (t->n < PT_MAX_LINKS) {
		t->l[t->n].link = NULL;
		t->l[t->n].fd = fd;
		t->l[t->n++].group = group;
	}
	return 0;
}

static void *destroy_link(void *arg)
{
	struct pt_link *e = arg;

	if (e->link)
		bpf_link__destroy(e->link);
	else
		close(e->fd);
	return NULL;
}

/*
 * Each uprobe detach waits for an RCU-tasks grace period (~100 ms here). Links of one group go
 * from parallel threads; groups go in order: entry probes, then return probes, then free and the
 * tracepoints (the reverse of pt_attach_allocator()'s order, for the same reasons).
 */
void pt_links_detach(struct pt_links *t)
{
	pthread_t th[PT_MAX_LINKS];
	int started[PT_MAX_LINKS], i, grp, maxg = 0;

	for (i = 0; i < t->n; i++)
		maxg = t->l[i].group > maxg ? t->l[i].group : maxg;
	for (grp = maxg; grp >= 0; grp--) {
		for (i = 0; i < t->n; i++) {
			started[i] = 0;
			if (t->l[i].group != grp)
				continue;
			if (pthread_create(&th[i], NULL, destroy_link, &t->l[i]) == 0)
				started[i] = 1;
			else
				destroy_link(&t->l[i]);
		}
		for (i = 0; i < t->n; i++)
			if (started[i])
				pthread_join(th[i], NULL);
	}
	t->n = 0;
}
