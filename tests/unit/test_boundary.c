// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_boundary: --boundary start=LIB:SYM,end=LIB:SYM parsing (user/boundary.c). */
#include "check.h"
#include "invocation/boundary.h"

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
	return CHECK_DONE();
}
