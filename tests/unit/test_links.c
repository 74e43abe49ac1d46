// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_links: the table of attached probes (user/attach/links.c) keeps every link, however many,
 * and detaches them all: raw link fds stand in for uprobe-multi links here. */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include "check.h"
#include "attach/links.h"

#define N 150   /* more than the 64 the table once held: perf-event uprobes on jemalloc take ~90 */

int main(void)
{
	struct pt_links t = { 0 };
	int fds[N], i, kept = 0, open_after = 0;

	for (i = 0; i < N; i++) {
		fds[i] = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (pt_links_add_fd(&t, fds[i], i % 3) == 0)
			kept++;
	}
	CHECK(kept == N && t.n == N, "every link kept (%d of %d)", kept, N);
	CHECK(pt_links_add_fd(&t, -EPERM, 0) == -EPERM && t.n == N, "a failed attach is its error, not a link");
	errno = ENOENT;
	CHECK(pt_links_add(&t, NULL, 0) == -ENOENT && t.n == N, "a failed libbpf attach returns errno");
	pt_links_detach(&t);
	for (i = 0; i < N; i++)
		open_after += fcntl(fds[i], F_GETFD) != -1;
	CHECK(open_after == 0, "every link detached (%d still open)", open_after);
	CHECK(t.n == 0 && t.l == NULL, "the table is empty afterwards");
	pt_links_detach(&t);
	CHECK(t.n == 0, "detaching an empty table is harmless");
	return CHECK_DONE();
}
