/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* links.h — the table of attached probes, detached in groups from parallel threads. */
#ifndef PEAKTRACE_LINKS_H
#define PEAKTRACE_LINKS_H

struct bpf_link;

#define PT_MAX_LINKS 64

/* One attached probe: a libbpf link, or a raw uprobe-multi link fd. */
struct pt_link {
	struct bpf_link *link;
	int fd;
	int group;          /* detach order: higher groups first */
};

struct pt_links {
	struct pt_link l[PT_MAX_LINKS];
	int n;
};

/* Keep l (NULL: the attach failed, errno says why) in group. Returns 0 or -errno. */
int pt_links_add(struct pt_links *t, struct bpf_link *l, int group);
/* Keep a raw link fd (negative: -errno of the failed attach). Returns 0 or that -errno. */
int pt_links_add_fd(struct pt_links *t, int fd, int group);
/* Detach every link, highest group first; the table is empty afterwards. */
void pt_links_detach(struct pt_links *t);

#endif
