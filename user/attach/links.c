// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * links.c — the table of attached probes, detached in groups from parallel threads, the slow
 * part in the background where nothing depends on it.
 *
 * What a detach waits for, here (kernel 6.18): each uprobe(-multi) link's release waits for an
 * RCU-tasks-trace/SRCU grace period; each perf-event tracepoint's last close runs
 * tracepoint_synchronize_unregister under the kernel's event_mutex (~35 ms each, one after the
 * other whatever the number of threads). A tracepoint's program is taken off its event by the
 * link's release alone, at once: the event itself (kept open by a duplicate of its fd,
 * pt_links_add_tp) is what costs the grace period, and nothing needs it closed before the
 * report is out.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "attach/links.h"

static int keep(struct pt_links *t, struct bpf_link *l, int fd, int event_fd, int group)
{
	if (t->n == t->cap) {
		int cap = t->cap ? 2 * t->cap : 64;
		struct pt_link *nl = realloc(t->l, cap * sizeof(*nl));

		if (!nl) {
			if (l)
				bpf_link__destroy(l);
			else
				close(fd);
			if (event_fd >= 0)
				close(event_fd);
			return -ENOMEM;
		}
		t->l = nl;
		t->cap = cap;
	}
	t->l[t->n].link = l;
	t->l[t->n].fd = fd;
	t->l[t->n].event_fd = event_fd;
	t->l[t->n++].group = group;
	return 0;
}

int pt_links_add(struct pt_links *t, struct bpf_link *l, int group)
{
	return l ? keep(t, l, -1, -1, group) : -errno;
}

int pt_links_add_fd(struct pt_links *t, int fd, int group)
{
	return fd < 0 ? fd : keep(t, NULL, fd, -1, group);
}

int pt_links_add_tp(struct pt_links *t, struct bpf_link *l, int event_fd, int group)
{
	return keep(t, l, -1, event_fd, group);
}

int pt_links_take(struct pt_links *t, struct pt_links *from)
{
	int err = 0;

	for (int i = 0; i < from->n; i++) {
		int e = keep(t, from->l[i].link, from->l[i].fd, from->l[i].event_fd, from->l[i].group);

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
	else if (e->fd >= 0)
		close(e->fd);
	e->link = NULL;
	e->fd = -1;
	return NULL;
}

/* Every link of the table from parallel threads: group by group, highest first, when ordered,
 * else all at once. */
static void destroy_links(struct pt_links *t, bool ordered)
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
			if (ordered && t->l[i].group != grp)
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
		if (!ordered)
			break;
	}
	free(th);
	free(started);
}

/* The tracepoints' events, one after the other: the kernel serializes their closes anyway. */
static void close_events(struct pt_links *t)
{
	for (int i = 0; i < t->n; i++)
		if (t->l[i].event_fd >= 0) {
			close(t->l[i].event_fd);
			t->l[i].event_fd = -1;
		}
}

static void *background(void *arg)
{
	struct pt_links *t = arg;

	if (t->all_in_background)
		destroy_links(t, false);
	close_events(t);
	return NULL;
}

static void start_background(struct pt_links *t, bool all)
{
	t->all_in_background = all;
	if (pthread_create(&t->bg, NULL, background, t) == 0) {
		t->bg_running = true;
		return;
	}
	background(t);   /* no thread: here and now */
}

void pt_links_stop(struct pt_links *t, bool target_gone)
{
	if (t->stopped)
		return;
	t->stopped = true;
	if (target_gone) {
		/* Nothing of the target can run a probe: no order to keep, nothing to wait for. */
		start_background(t, true);
		return;
	}
	/* The order a running target needs (pt_attach_allocator's, reversed); each
	 * tracepoint's program leaves its event here too, without the grace period. */
	destroy_links(t, true);
	start_background(t, false);
}

void pt_links_detach(struct pt_links *t)
{
	if (!t->stopped) {
		t->stopped = true;
		destroy_links(t, true);
	}
	if (t->bg_running) {
		pthread_join(t->bg, NULL);
		t->bg_running = false;
	}
	close_events(t);
	free(t->l);
	t->l = NULL;
	t->n = t->cap = 0;
	t->stopped = false;
}
