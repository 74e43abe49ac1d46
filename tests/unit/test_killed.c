// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Unit tests for user/report/killed.c: which view of a killed invocation comes first, each set's
 * share of the RSS at its peak, the memory kind beside each RSS holder, and report.json's
 * "killed" (stacks named from no stack table: "[unknown stack]"). */
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "report/report.h"
#include "report/killed.h"

#define MiB (1024 * 1024)

static char *out_of(const struct pt_report *r, const struct pt_inv_record *ir, bool json)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	if (json)
		pt_killed_json(f, r);
	else
		pt_killed_text(f, r, ir);
	fclose(f);
	return out;
}

/* A Python handler's kill: 74 MiB of pymalloc pages against 5 MiB of heap blocks at the top. */
static void python_kill(struct pt_inv_record *ir)
{
	memset(ir, 0, sizeof(*ir));
	ir->seq = 2;
	ir->outcome = PT_OUT_KILLED;
	ir->exit_signal = 9;
	snprintf(ir->id, sizeof(ir->id), "req-2");
	ir->rss_peak = 100 * MiB;
	ir->heap_peak = 12 * MiB;
	ir->nrss_top = 2;
	ir->rss_top[0] = (struct pt_inv_stack){ .stack = 3, .bytes = 74 * MiB };
	ir->rss_top[1] = (struct pt_inv_stack){ .stack = 1, .bytes = 5 * MiB };
	ir->ntop = 2;
	ir->top[0] = (struct pt_inv_stack){ .stack = 1, .bytes = 5 * MiB, .count = 1000 };
	ir->top[1] = (struct pt_inv_stack){ .stack = 2, .bytes = 4 * MiB, .count = 3 };
}

int main(void)
{
	static struct pt_report r;
	struct pt_inv_list invs = { 0 };
	struct pt_inv_record ir;
	uint8_t kinds[4] = { PT_MK_UNKNOWN, PT_MK_HEAP_MAIN, PT_MK_HEAP_MMAPPED, PT_MK_PYMALLOC };
	char *t, *j, *pages, *blocks;

	python_kill(&ir);
	CHECK(pt_killed_rss_first(&ir), "the RSS holders first when their biggest is bigger");
	ir.top[0].bytes = 80 * MiB;
	CHECK(!pt_killed_rss_first(&ir), "the heap holders first when theirs is");
	ir.top[0].bytes = 74 * MiB;
	CHECK(pt_killed_rss_first(&ir), "the RSS holders first on a tie");
	ir.light = true;
	CHECK(pt_killed_rss_first(&ir), "--light: the RSS holders (no heap view)");

	python_kill(&ir);
	r.inv_stacks.stacks_fd = -1;
	r.inv_stacks.py_fd = -1;
	r.rss.kinds.read = true;
	r.rss.kinds.from_kept = true;
	r.rss.kinds.kept_ns = 1000000000ULL;
	r.rss.kinds.end_ns = 1031000000ULL;
	r.rss.kinds.kind = kinds;
	r.rss.kinds.n = 4;
	t = out_of(&r, &ir, false);
	pages = t ? strstr(t, "resident pages, by the stack whose fault made them resident: the 2 biggest "
				"hold 79.00 MiB, 79.0% of it") : NULL;
	blocks = t ? strstr(t, "heap blocks live at its heap peak, by the stack that allocated them: the 2 "
				"biggest hold 9.00 MiB, 9.0% of it") : NULL;
	CHECK(pages && blocks && pages < blocks, "text: the pages' set, then the blocks', each with its share");
	CHECK(t && strstr(t, "#1 74.00 MiB (74.0%) [CPython pymalloc arenas]") &&
	      strstr(t, "#2 5.00 MiB (5.0%) [malloc heap: main arena]"), "text: each RSS holder's kind");
	CHECK(t && strstr(t, "as last read while it ran (31 ms before the end"), "text: the kinds' maps said");
	CHECK(t && strstr(t, "#1 5.00 MiB (5.0%) in 1000 blocks"), "text: the heap holders' blocks");
	free(t);

	ir.top[0].bytes = 90 * MiB;
	t = out_of(&r, &ir, false);
	pages = t ? strstr(t, "resident pages, by the stack") : NULL;
	blocks = t ? strstr(t, "heap blocks live at its heap peak") : NULL;
	CHECK(pages && blocks && blocks < pages, "text: the blocks first when they hold more");
	free(t);

	r.rss.kinds.read = false;
	ir.top[0].bytes = 5 * MiB;
	t = out_of(&r, &ir, false);
	CHECK(t && strstr(t, "[not known]") && strstr(t, "memory kinds not known"), "text: kinds not read");
	free(t);

	r.rss.kinds.read = true;
	r.rss.kinds.from_kept = false;
	pt_inv_append(&invs, &ir);
	ir.seq = 3;
	ir.outcome = PT_OUT_RESPONSE;
	pt_inv_append(&invs, &ir);
	r.invs = &invs;
	j = out_of(&r, NULL, true);
	CHECK(j && strstr(j, "\"killed\": [\n    {\"seq\": 2, \"request_id\": \"req-2\", \"exit_signal\": 9, "
			  "\"rss_peak_bytes\": 104857600, \"first\": \"rss_holders\""),
	      "json: the killed invocation only, the RSS holders first");
	CHECK(j && strstr(j, "\"rss_holders\": {\"covered_bytes\": 82837504, \"covered_fraction\": 0.7900, "
			  "\"kinds_from\": \"maps_at_end\", \"stacks\": [{\"rss_bytes\": 77594624, "
			  "\"fraction\": 0.7400, \"kind\": \"CPython pymalloc arenas\", \"kind_key\": "
			  "\"pymalloc_arenas\", \"frames\": [{\"func\": \"[unknown stack]\""),
	      "json: the RSS holders with their share and kind");
	CHECK(j && strstr(j, "\"heap_holders\": {\"covered_bytes\": 9437184, \"covered_fraction\": 0.0900, "
			  "\"stacks\": [{\"bytes\": 5242880, \"count\": 1000, \"fraction\": 0.0500"),
	      "json: the heap holders with theirs");
	CHECK(j && !strstr(j, "\"seq\": 3"), "json: an invocation that responded is not there");
	free(j);
	r.invs = NULL;
	j = out_of(&r, NULL, true);
	CHECK_STR(j, "  \"killed\": [],\n", "json: none killed");
	free(j);
	pt_inv_list_free(&invs);
	return CHECK_DONE();
}
