/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* links.h — the table of attached probes, detached in groups from parallel threads, the slow
 * part in the background where nothing depends on it. */
#ifndef PEAKTRACE_LINKS_H
#define PEAKTRACE_LINKS_H
#include <pthread.h>
#include <stdbool.h>

struct bpf_link;

/* One attached probe: a libbpf link, or a raw uprobe-multi link fd; for a perf-event
 * tracepoint, a duplicate of its event's fd (event_fd, else -1), closed after the link. */
struct pt_link {
	struct bpf_link *link;
	int fd;
	int event_fd;
	int group;          /* detach order: higher groups first */
};

/* Grows as links are added (perf-event uprobes on jemalloc: ~90); zero-initialized is empty. */
struct pt_links {
	struct pt_link *l;
	int n, cap;
	bool stopped;            /* pt_links_stop was called */
	bool bg_running;         /* bg: what pt_links_stop left to the background */
	bool all_in_background;
	pthread_t bg;
};

/* Keep l (NULL: the attach failed, errno says why) in group. Returns 0 or -errno (-ENOMEM: the
 * link could not be kept, and was destroyed: never a probe that stays attached unseen). */
int pt_links_add(struct pt_links *t, struct bpf_link *l, int group);
/* Keep a raw link fd (negative: -errno of the failed attach). Returns 0 or that -errno. */
int pt_links_add_fd(struct pt_links *t, int fd, int group);
/* Move every link of from into t (from is empty afterwards). Returns 0 or -ENOMEM (the links
 * that could not be kept were destroyed). */
int pt_links_take(struct pt_links *t, struct pt_links *from);
/* Keep a perf-event tracepoint's link (not NULL) and a duplicate of its event's fd: the link's
 * release takes the program off the event at once, the event's close (the grace period) can
 * wait for the background (pt_links_stop). */
int pt_links_add_tp(struct pt_links *t, struct bpf_link *l, int event_fd, int group);
/* A running target's probes go here, in group order, and no program of the table runs once
 * this returns; the tracepoints' events are closed by a thread of its own meanwhile. With
 * target_gone (nothing of the target can hit a probe any more) every link goes in that
 * thread, in no order. */
void pt_links_stop(struct pt_links *t, bool target_gone);
/* Detach every link, highest group first (after pt_links_stop: wait for its background
 * thread); the table is empty (and freed) afterwards. */
void pt_links_detach(struct pt_links *t);

#endif
