/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* links.h — the table of attached probes, detached in groups from parallel threads. */
#ifndef PEAKTRACE_LINKS_H
#define PEAKTRACE_LINKS_H

struct bpf_link;

/* One attached probe: a libbpf link, or a raw uprobe-multi link fd. */
struct pt_link {
	struct bpf_link *link;
	int fd;
	int group;          /* detach order: higher groups first */
};

/* Grows as links are added (perf-event uprobes on jemalloc: ~90); zero-initialized is empty. */
struct pt_links {
	struct pt_link *l;
	int n, cap;
};

/* Keep l (NULL: the attach failed, errno says why) in group. Returns 0 or -errno (-ENOMEM: the
 * link could not be kept, and was destroyed: never a probe that stays attached unseen). */
int pt_links_add(struct pt_links *t, struct bpf_link *l, int group);
/* Keep a raw link fd (negative: -errno of the failed attach). Returns 0 or that -errno. */
int pt_links_add_fd(struct pt_links *t, int fd, int group);
/* Move every link of from into t (from is empty afterwards). Returns 0 or -ENOMEM (the links
 * that could not be kept were destroyed). */
int pt_links_take(struct pt_links *t, struct pt_links *from);
/* Detach every link, highest group first; the table is empty (and freed) afterwards. */
void pt_links_detach(struct pt_links *t);

#endif
