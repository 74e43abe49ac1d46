// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_leaks: the rule of leaks across invocations (invocation/leaks.c): which class a live block
 * falls in by its allocation time, and the per-stack rows, against a hand-made list of records. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "invocation/leaks.h"
#include "bpf/sample.h"

static void rec(struct pt_inv_list *l, uint64_t seq, uint64_t start, uint64_t end, uint32_t outcome)
{
	struct pt_inv_record r;

	memset(&r, 0, sizeof(r));
	r.seq = seq;
	r.start_ns = r.start_epoch = start;
	r.end_ns = r.end_epoch = end;
	r.outcome = outcome;
	pt_inv_append(l, &r);
}

int main(void)
{
	struct pt_inv_list l = { 0 };
	struct pt_leaks lk = { 0 };
	int64_t (*per)[2];
	uint64_t seq;

	/* init [100, 200), gap, 1 [300, 400) response, 2 [400, 500) error, gap,
	 * 3 [600, 700) killed-less unfinished, 4 [700, 800) response, 5 [800, 900) unfinished */
	rec(&l, 0, 100, 200, PT_OUT_INIT);
	rec(&l, 1, 300, 400, PT_OUT_RESPONSE);
	rec(&l, 2, 400, 500, PT_OUT_ERROR);
	rec(&l, 3, 600, 700, PT_OUT_UNFINISHED);
	rec(&l, 4, 700, 800, PT_OUT_RESPONSE);
	rec(&l, 5, 800, 900, PT_OUT_UNFINISHED);

	CHECK_EQ_U64(pt_leak_origin(&l, 0, &seq), PT_LEAK_UNTIMED, "ts 0: untimed");
	CHECK_EQ_U64(pt_leak_origin(&l, 50, &seq), PT_LEAK_INIT, "before the first record: init");
	CHECK_EQ_U64(pt_leak_origin(&l, 150, &seq), PT_LEAK_INIT, "in the init row: init");
	CHECK_EQ_U64(pt_leak_origin(&l, 250, &seq), PT_LEAK_BETWEEN, "after init ended, before 1: between");
	CHECK_EQ_U64(pt_leak_origin(&l, 300, &seq), PT_LEAK_LEAKED, "at invocation 1's start: leaked");
	CHECK_EQ_U64(seq, 1, "... by invocation 1");
	CHECK_EQ_U64(pt_leak_origin(&l, 400, &seq), PT_LEAK_LEAKED, "at 1's end = 2's start: 2's");
	CHECK_EQ_U64(seq, 2, "... by invocation 2 (end is exclusive)");
	CHECK_EQ_U64(pt_leak_origin(&l, 550, &seq), PT_LEAK_BETWEEN, "between 2 and 3");
	CHECK_EQ_U64(pt_leak_origin(&l, 650, &seq), PT_LEAK_LEAKED, "3 (unfinished itself), 4 finished later: leaked");
	CHECK_EQ_U64(pt_leak_origin(&l, 750, &seq), PT_LEAK_PENDING, "4: only an unfinished one after it: pending");
	CHECK_EQ_U64(seq, 4, "... from invocation 4");
	CHECK_EQ_U64(pt_leak_origin(&l, 850, &seq), PT_LEAK_PENDING, "5, the last: pending");
	CHECK_EQ_U64(pt_leak_origin(&l, 950, &seq), PT_LEAK_BETWEEN, "after the last record ended: between");

	/* Rows: two blocks of stack 7 from 1, one from 3, stack 2 from 1, one unsampled leak. */
	pt_leaks_add(&lk, &l, 310, 1000, 7, 0);
	pt_leaks_add(&lk, &l, 620, 3000, 7, 0);
	pt_leaks_add(&lk, &l, 320, 500, 2, 0);
	pt_leaks_add(&lk, &l, 330, 24, 7, 0);
	pt_leaks_add(&lk, &l, 150, 99, 7, 0);       /* init */
	pt_leaks_add(&lk, &l, 810, 77, 7, 0);       /* pending */
	pt_leaks_add(&lk, &l, 320, 64, PT_STACK_UNSAMPLED, 0);
	pt_leaks_finish(&lk, &l);
	CHECK_EQ_U64(lk.bytes[PT_LEAK_LEAKED], 1000 + 3000 + 500 + 24 + 64, "leaked total: every leaked block, exact");
	CHECK_EQ_U64(lk.count[PT_LEAK_LEAKED], 5, "leaked count");
	CHECK_EQ_U64(lk.bytes[PT_LEAK_INIT], 99, "init bytes apart");
	CHECK_EQ_U64(lk.bytes[PT_LEAK_PENDING], 77, "pending bytes apart");
	CHECK_EQ_U64(lk.unsampled_leaked_bytes, 64, "a leaked block on no stack is counted");
	CHECK_EQ_U64(lk.judged, 3, "invocations 1, 2, 3 judged (4 finished after them)");
	CHECK_EQ_U64(lk.nrows, 3, "rows merged by (stack, invocation)");
	CHECK(lk.nrows == 3 && lk.rows[0].stack == 2 && lk.rows[1].stack == 7 && lk.rows[1].seq == 1 &&
	      lk.rows[1].bytes == 1024 && lk.rows[1].wcount == 2 && lk.rows[2].seq == 3 &&
	      lk.rows[2].bytes == 3000, "rows sorted by stack then invocation, with their sums");
	per = pt_leaks_per_stack(&lk, 8);
	CHECK(per && per[7][0] == 4024 && per[7][1] == 3 && per[2][0] == 500 && per[0][0] == 0,
	      "per kernel stack: leaked bytes and count");
	free(per);
	pt_leaks_free(&lk);

	/* --sample-bytes: a sampled leaked block counts its weight, the total its size. */
	memset(&lk, 0, sizeof(lk));
	pt_leaks_add(&lk, &l, 310, 100, 3, 4096);
	pt_leaks_finish(&lk, &l);
	{
		__u64 wb, wc;

		pt_sample_weights(4096, 100, &wb, &wc);
		CHECK(lk.nrows == 1 && lk.rows[0].bytes == wb && (uint64_t)lk.rows[0].wcount == wc &&
		      lk.bytes[PT_LEAK_LEAKED] == 100, "sampled: row weights, exact total");
	}
	pt_leaks_free(&lk);
	pt_inv_list_free(&l);
	return CHECK_DONE();
}
