/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Unit tests for target/nodeflags.c: node's perf-map flags in argv and NODE_OPTIONS. */
#include "check.h"

#include <string.h>

#include "target/nodeflags.h"

#define ARGV(s) (s), sizeof(s) - 1   /* a literal with embedded NULs, the last one included */
#define B PT_NODE_PERF_BASIC_PROF
#define I PT_NODE_INTERP_NATIVE_STACK
#define T(cond) CHECK(cond, "%s", #cond)

int main(void)
{
	T(pt_node_flags_parse(ARGV("node\0app.js\0"), NULL) == 0);
	T(pt_node_flags_parse(ARGV("node\0--perf-basic-prof\0app.js\0"), NULL) == B);
	T(pt_node_flags_parse(ARGV("node\0--perf-basic-prof\0--interpreted-frames-native-stack\0app.js\0"),
				  NULL) == (B | I));
	/* after the script: the script's own arguments */
	T(pt_node_flags_parse(ARGV("node\0app.js\0--perf-basic-prof\0"), NULL) == 0);
	T(pt_node_flags_parse(ARGV("node\0--\0--perf-basic-prof\0"), NULL) == 0);
	/* V8's underscore spelling, the only-functions variant, a negation that comes later */
	T(pt_node_flags_parse(ARGV("node\0--perf_basic_prof\0--interpreted_frames_native_stack\0a\0"),
				  NULL) == (B | I));
	T(pt_node_flags_parse(ARGV("node\0--perf-basic-prof-only-functions\0a\0"), NULL) == B);
	T(pt_node_flags_parse(ARGV("node\0--perf-basic-prof\0--no-perf-basic-prof\0a\0"), NULL) == 0);
	/* an option's value is not the script */
	T(pt_node_flags_parse(ARGV("node\0-r\0x.js\0--perf-basic-prof\0a\0"), NULL) == B);
	T(pt_node_flags_parse(ARGV("node\0--require=x.js\0--perf-basic-prof\0a\0"), NULL) == B);
	/* NODE_OPTIONS, and the command line over it */
	T(pt_node_flags_parse(ARGV("node\0a\0"), " --perf-basic-prof  --interpreted-frames-native-stack") ==
	      (B | I));
	T(pt_node_flags_parse(ARGV("node\0--no-interpreted-frames-native-stack\0a\0"),
				  "--interpreted-frames-native-stack") == 0);
	/* truncated, empty, argv[0] only */
	T(pt_node_flags_parse("node\0--perf-basic-prof", 22, NULL) == B);
	T(pt_node_flags_parse("", 0, NULL) == 0);
	T(pt_node_flags_parse(NULL, 0, "--perf-basic-prof") == B);
	T(pt_node_flags_parse(ARGV("node\0"), NULL) == 0);

	T(pt_node_is_node("/usr/bin/node"));
	T(pt_node_is_node("/usr/bin/nodejs"));
	T(!pt_node_is_node("/usr/bin/python3"));
	T(!pt_node_is_node("/opt/node/bin/nodemon"));
	T(!strcmp(pt_node_flags_text(B | I), "--perf-basic-prof and --interpreted-frames-native-stack"));
	T(!strcmp(pt_node_flags_text(I), "--interpreted-frames-native-stack"));
	return CHECK_DONE();
}
