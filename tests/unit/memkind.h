/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The memory kind of an address in this very process, as user/rss/rsskind.c finds it for a
 * fault at sp: this process's maps read now, its memory through fd (/proc/self/mem, or -1).
 * *capped is set when the scan's budget ran out. Shared by test_rsskind.c and test_rssobj.c. */
#ifndef PT_TEST_MEMKIND_H
#define PT_TEST_MEMKIND_H

#include <stdbool.h>
#include <stdint.h>
#include <unistd.h>
#include "target/procmaps.h"
#include "rss/rsskind.h"

static inline enum pt_mem_kind kind_here(int fd, uint64_t addr, uint64_t sp, bool *capped)
{
	struct pt_rss_kinds k = { 0 };
	struct pt_maps m = { 0 };
	enum pt_mem_kind r;

	*capped = false;
	if (pt_maps_read(getpid(), &m))
		return PT_MK_COUNT;
	r = pt_mem_kind_of(&k, &m, fd, addr, sp, capped);
	pt_maps_free(&m);
	return r;
}

#endif
