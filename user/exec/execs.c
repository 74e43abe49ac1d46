// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* execs.c — the target's execs in report.txt and report.json (execs.h). */
#include <inttypes.h>
#include <string.h>
#include "util/fmt.h"
#include "exec/execs.h"

void pt_execs_text(FILE *f, const struct pt_execs *e)
{
	uint32_t k;

	for (k = 0; k < e->count && k < PT_EXECS_MAX; k++) {
		const struct pt_exec_note *x = &e->n[k];

		fprintf(f, "exec: %s -> %s at +%" PRIu64 " ms", x->from, x->to, x->at_ns / 1000000);
		if (!strcmp(x->to, "?"))
			fprintf(f, " (it exited before the exec was handled: the new image's stacks "
				   "are not named)");
		else if (x->allocator_missing)
			fprintf(f, " (no allocator found in the new image: its allocations are not traced)");
		else if (x->held)
			fprintf(f, " (held %.1f ms at the exec until re-probed: no allocation missed)",
				x->held_ns / 1e6);
		else if (x->reprobed)
			fprintf(f, " (another allocator: its first %.1f ms ran unprobed, allocations "
				   "then are missed)", x->window_ns / 1e6);
		else
			fprintf(f, " (same allocator object: its probes stayed in place)");
		if (x->python)
			fprintf(f, ", CPython");
		fputc('\n', f);
		if (x->live_count)
			fprintf(f, "exec:   %" PRIu64 " bytes in %" PRIu64 " blocks the old image held stay "
				   "counted live after it (gone with its memory; not swept)\n",
				x->live_bytes, x->live_count);
	}
	if (e->count > PT_EXECS_MAX)
		fprintf(f, "exec: %" PRIu32 " more not shown\n", e->count - PT_EXECS_MAX);
	if (e->unnamed_stacks)
		fprintf(f, "exec: %" PRIu64 " stacks of an earlier image could not be named (it "
			   "exec'd before its mappings were read)\n", e->unnamed_stacks);
}

void pt_execs_json(FILE *f, const struct pt_execs *e)
{
	uint32_t k;

	fprintf(f, "  \"execs\": {\"count\": %" PRIu32 ", \"unnamed_stacks\": %" PRIu64 ", \"list\": [",
		e->count, e->unnamed_stacks);
	for (k = 0; k < e->count && k < PT_EXECS_MAX; k++) {
		const struct pt_exec_note *x = &e->n[k];

		fprintf(f, "%s{\"from\": ", k ? ", " : "");
		pt_json_str(f, x->from);
		fprintf(f, ", \"to\": ");
		pt_json_str(f, x->to);
		fprintf(f, ", \"at_ns\": %" PRIu64 ", \"first_stack\": %" PRIu32 ", \"held\": %s, "
			   "\"unprobed_ns\": %" PRIu64 ", \"held_ns\": %" PRIu64 ", \"reprobed\": %s, "
			   "\"allocator_missing\": %s, "
			   "\"python\": %s, \"live_bytes\": %" PRIu64 ", \"live_count\": %" PRIu64 "}",
			x->at_ns, x->first_stack, x->held ? "true" : "false", x->window_ns, x->held_ns,
			x->reprobed ? "true" : "false", x->allocator_missing ? "true" : "false",
			x->python ? "true" : "false", x->live_bytes, x->live_count);
	}
	fprintf(f, "]},\n");
}
