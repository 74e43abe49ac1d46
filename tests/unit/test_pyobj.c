// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_pyobj: --python-objects' live table (python/pyobj.c): its default size from the machine
 * and the target, the --max-live that would have held a run whose table was full, and what the
 * report says about both and about the cost. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "bpf/peaktrace.h"
#include "python/pyobj.h"

#define MiB (1ull << 20)
#define GiB (1ull << 30)

static void test_sizing(void)
{
	char why[192];

	/* 24 GiB: a cap of 24 GiB / 128 / 32 = 6M slots, 4M as a power of two. */
	CHECK_EQ_U64(pt_pyobj_live_slots(24 * GiB, 0, why, sizeof(why)), 4u << 20, "launched, 24 GiB: 4M slots");
	CHECK(strstr(why, "launch default") != NULL, "launched: the reason is the default (%s)", why);
	CHECK_EQ_U64(pt_pyobj_live_slots(4 * GiB, 0, why, sizeof(why)), 1u << 20,
		     "launched, 4 GiB: capped at 1M (4 GiB / 128 / 32)");
	CHECK(strstr(why, "capped at 1/128 of this machine's 4.0 GiB") != NULL, "the cap is said (%s)", why);
	CHECK_EQ_U64(pt_pyobj_live_slots(1 * GiB, 0, why, sizeof(why)), 1u << 20,
		     "never under the plain default (1M)");
	/* Attached to 24.4 MiB of anonymous memory: 800k objects of 32 B, twice that: 2M. */
	CHECK_EQ_U64(pt_pyobj_live_slots(24 * GiB, 24 * MiB + 400 * 1024, why, sizeof(why)), 2u << 20,
		     "attached, 24.4 MiB anon: 2M slots");
	CHECK(strstr(why, "24.4 MiB of anonymous memory") != NULL, "attached: the reason names it (%s)", why);
	CHECK_EQ_U64(pt_pyobj_live_slots(24 * GiB, 2 * MiB, why, sizeof(why)), 1u << 20,
		     "attached, small: the plain default");
	CHECK_EQ_U64(pt_pyobj_live_slots(24 * GiB, 4 * GiB, why, sizeof(why)), 4u << 20,
		     "attached, 4 GiB anon on 24 GiB: the machine's cap (4M, not 256M)");
}

static void test_fit(void)
{
	CHECK_EQ_U64(pt_live_slots_to_fit(9719, 202695), 524288, "twice 9719 + 202695, a power of two");
	CHECK_EQ_U64(pt_live_slots_to_fit(262144, 0), 524288, "an exact power stays");
	CHECK_EQ_U64(pt_live_slots_to_fit(-5, 3), 8, "a negative live count is none");
}

static void test_text(void)
{
	struct pt_pyobj_note *n = calloc(1, sizeof(*n));
	struct pt_pyobj_view v = { .note = n };
	char *out = NULL;
	size_t len = 0;
	FILE *f;

	if (!n)
		return;
	n->requested = n->found = n->via_malloc = true;
	snprintf(n->pythonmalloc, sizeof(n->pythonmalloc), "malloc");
	n->live_slots = 8192;
	n->live_table_bytes = 8192 * 50;
	snprintf(n->live_sized_from, sizeof(n->live_sized_from), "--max-live");
	v.live_full = 202695;
	v.unheld_bytes = 15 * MiB;
	v.peak_count = 9719;
	v.live_count = 100;
	n->stats = n->cpu_read = true;
	n->bpf_runs = 400000;
	n->bpf_ns = 600000000;
	n->cpu_user_ns = 500000000;
	n->cpu_sys_ns = 2800000000ull;
	f = open_memstream(&out, &len);
	pt_pyobj_text(f, &v);
	fclose(f);
	CHECK(strstr(out, "  live table: 8192 slots, 400.00 KiB of kernel memory (--max-live)\n") != NULL,
	      "the table's size, memory and reason");
	CHECK(strstr(out, "caveat: the live table was FULL: 202695 allocations (15.00 MiB)") != NULL,
	      "the refused allocations and their bytes");
	CHECK(strstr(out, "--max-live 524288 would have held them (twice 9719 tracked + 202695 refused), "
			  "~25.00 MiB of kernel memory") != NULL, "the --max-live that fits and its memory");
	CHECK(strstr(out, "400000 allocator calls probed, 1500 ns of BPF each (0.600 s in all") != NULL,
	      "BPF time per call");
	CHECK(strstr(out, "0.500 s user, 2.800 s system, where each call's uprobe trap and BPF run: at most "
			  "7.0 us of system time per call") != NULL, "the target's CPU time, per call");
	free(out);
	out = NULL;
	v.live_full = 0;
	n->stats = n->cpu_read = false;
	f = open_memstream(&out, &len);
	pt_pyobj_text(f, &v);
	fclose(f);
	CHECK(strstr(out, "FULL") == NULL, "a table that held everything: no caveat");
	CHECK(strstr(out, "cost: BPF time not measured") != NULL, "no statistics: not measured, said so");
	free(out);
	free(n);
}

int main(void)
{
	test_sizing();
	test_fit();
	test_text();
	return CHECK_DONE();
}
