// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* links.c — the table of attached probes, detached in groups from parallel threads. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "attach/links.h"

static int keep(struct pt_links *t, struct bpf_link *l, int fd, int group)
{
	if (t->n == t->cap) {
		int cap = t->cap ? 2 * t->cap : 64;
		struct pt_link *nl = realloc(t->l, cap * sizeof(*nl));

		if (!nl) {
			if (l)
				bpf_link__destroy(l);
			else
				close(fd);
			return -ENOMEM;
		}
		t->l = nl;
		t->cap = cap;
	}
	t->l[t->n].link = l;
	t->l[t->n].fd = fd;
	t->l[t->n++].group = group;
	return 0;
}

int pt_links_add(struct pt_links *t, struct bpf_link *l, int group)
{
	return l ? keep(t, l, -1, group) : -errno;
}

int pt_links_add_fd(struct pt_links *t, int fd, int group)
{
	return fd < 0 ? fd : keep(t, NULL, fd, group);
}

int pt_links_take(struct pt_links *t, struct pt_links *from)
{
	int err = 0;

	for (int i = 0; i < from->n; i++) {
		int e = keep(t, from->l[i].link, from->l[i].fd, from->l[i].group);

		err = err ? err : e;
	}
	free(from->l);
	from->l = NULL;
	from->n = from->cap = 0;
	return err;
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
	pthread_t *th = calloc(t->n ? t->n : 1, sizeof(*th));
	int *started = calloc(t->n ? t->n : 1, sizeof(*started));
	int i, grp, maxg = 0;

	for (i = 0; i < t->n; i++)
		maxg = t->l[i].group > maxg ? t->l[i].group : maxg;
	for (grp = maxg; grp >= 0; grp--) {
		for (i = 0; i < t->n; i++) {
			if (started)
				started[i] = 0;
			if (t->l[i].group != grp)
				continue;
			/* Out of memory for the threads: one after the other, slower but all of them. */
			if (th && started && pthread_create(&th[i], NULL, destroy_link, &t->l[i]) == 0)
				started[i] = 1;
			else
				destroy_link(&t->l[i]);
		}
		for (i = 0; started && i < t->n; i++)
			if (started[i])
				pthread_join(th[i], NULL);
	}
	free(th);
	free(started);
	free(t->l);
	t->l = NULL;
	t->n = t->cap = 0;
}
