// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* spare.c — a spare session's side of the --follow order (spare.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "spare.h"

void pt_spare_say(int ready_fd, char c)
{
	if (write(ready_fd, &c, 1) != 1)
		fprintf(stderr, "peaktrace: cannot tell the coordinator: %s\n", strerror(errno));
}

void pt_spare_ready(int ready_fd)
{
	/* A coordinator holds the process until now (--follow). */
	if (write(ready_fd, "1", 1) < 0)
		fprintf(stderr, "peaktrace: cannot tell the coordinator: %s\n", strerror(errno));
	close(ready_fd);
}

int pt_spare_order_read(int spare_fd, const struct pt_options *opt, struct pt_spare *sp)
{
	struct pt_spare_order o;
	size_t got = 0;

	while (got < sizeof(o)) {
		ssize_t n = read(spare_fd, (char *)&o + got, sizeof(o) - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	close(spare_fd);
	o.dir[sizeof(o.dir) - 1] = 0;
	sp->opt = *opt;
	sp->opt.pid = sp->opt.pids[0] = o.pid;
	sp->opt.npids = 1;
	sp->opt.sandbox_slot = o.slot;
	sp->opt.held = o.held != 0;
	memcpy(sp->dir, o.dir, sizeof(o.dir));
	sp->opt.outdir = sp->dir;
	return 0;
}
