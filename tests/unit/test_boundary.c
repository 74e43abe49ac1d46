// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_boundary: --boundary start=LIB:SYM,end=LIB:SYM parsing (user/invocation/boundary.c), and
 * the end figures an invocation records (bpf/inv.h, the rule both sides close invocations by). */
#include <string.h>
#include "check.h"
#include "invocation/boundary.h"
#include "bpf/inv.h"

static void test_inv_close(void)
{
	struct pt_global g;
	struct pt_inv inv;

	memset(&g, 0, sizeof(g));
	memset(&inv, 0, sizeof(inv));
	g.rss[PT_RSS_FILE] = 4096;
	g.rss[PT_RSS_ANON] = 3 * 4096;
	g.rss[PT_RSS_SHMEM] = 8192;
	g.rss[PT_RSS_SWAP] = 1 << 20;           /* swapped out: not resident */
	CHECK(pt_rss_total(&g) == 6 * 4096, "RSS total is file + anon + shmem, not swap");
	inv.alloc_count0 = 10;
	inv.alloc_bytes0 = 1000;
	inv.free_count0 = 4;
	inv.free_bytes0 = 400;
	g.alloc_count = 15;
	g.alloc_bytes = 1500;
	g.live_count = 6;       /* frees are derived: 15 - 6 = 9 blocks, 1500 - 400 = 1100 bytes */
	g.live_bytes = 400;
	inv.state = PT_INV_RUNNING;
	pt_inv_close(&inv, &g, 123456789, PT_OUT_UNFINISHED);
	CHECK(inv.end_ns == 123456789, "end time");
	CHECK(inv.rss_end == 6 * 4096, "RSS at end");
	CHECK(inv.heap_end == 400, "live heap at end");
	CHECK(inv.alloc_count == 5 && inv.alloc_bytes == 500, "allocations since the start");
	CHECK(inv.free_count == 5 && inv.free_bytes == 700, "frees since the start");
	CHECK(inv.outcome == PT_OUT_UNFINISHED, "outcome");
	CHECK(inv.state == PT_INV_RUNNING, "state is left to the caller");
}

int main(void)
{
	struct pt_boundary_spec b;

	CHECK(pt_boundary_parse("start=oom:handle:entry,end=oom:handle:return", &b) == 0, "entry/return spec parses");
	CHECK_STR(b.start.lib, "oom", "start lib");
	CHECK_STR(b.start.sym, "handle", "start sym");
	CHECK(!b.start.at_return && b.end.at_return, "explicit :entry and :return");
	CHECK(pt_boundary_parse("start=libaws-lambda-runtime.so:aws::lambda_runtime::runtime::get_next,"
				"end=libaws-lambda-runtime.so:aws::lambda_runtime::runtime::post_success", &b) == 0,
	      "C++ names with :: parse");
	CHECK_STR(b.start.sym, "aws::lambda_runtime::runtime::get_next", "C++ start sym kept whole");
	CHECK_STR(b.end.lib, "libaws-lambda-runtime.so", "end lib");
	CHECK(b.start.at_return && !b.end.at_return, "defaults: start at return, end at entry");
	CHECK(pt_boundary_parse("end=a:b,start=c:d", &b) == 0, "either order");
	CHECK_STR(b.start.lib, "c", "start lib in either order");
	CHECK(pt_boundary_parse("start=/usr/lib/x.so:f,end=/usr/lib/x.so:g:entry", &b) == 0, "paths");
	CHECK_STR(b.end.sym, "g", "sym after a path");
	CHECK(pt_boundary_parse("start=oom:handle", &b) != 0, "end missing");
	CHECK(pt_boundary_parse("start=oom,end=oom:g", &b) != 0, "no symbol");
	CHECK(pt_boundary_parse("start=:f,end=a:g", &b) != 0, "empty library");
	CHECK(pt_boundary_parse("begin=a:f,end=a:g", &b) != 0, "unknown key");
	CHECK(pt_boundary_parse("", &b) != 0, "empty");
	test_inv_close();
	return CHECK_DONE();
}
