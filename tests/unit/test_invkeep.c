// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_invkeep: the bounded invocation list (invocation.c pt_inv_list_trim, --max-invocations-kept):
 * never more than keep records, the first and last keep/4 and the highest RSS peaks between kept
 * in order of seq, what the report sums over every record counted, and the leaks of an invocation
 * let go of still placed in it (invocation/leaks.c) by its epochs. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "invocation/leaks.h"

#define N 1000
#define KEEP 40

/* A peak no two invocations share, in no order: seq * 7919 mod 10007 (a prime). */
static int64_t peak_of(uint64_t seq)
{
	return (int64_t)((seq * 7919) % 10007) * 4096;
}

static int cmp_desc(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? 1 : x > y ? -1 : 0;
}

int main(void)
{
	struct pt_inv_list l = { .keep = KEEP, .max_peak = 9000 * 4096ull };
	struct pt_leaks lk = { 0 };
	uint32_t max_n = 0, k, over_kept = 0, over_all = 0, in_order = 1, first_ok = 1, last_ok = 1;
	int64_t mid[N], top_min;
	uint64_t seq, appended_with_stacks = 0;
	int top_found = 0;

	for (seq = 0; seq < N; seq++) {
		struct pt_inv_record r;

		memset(&r, 0, sizeof(r));
		r.seq = seq;
		r.outcome = seq ? PT_OUT_RESPONSE : PT_OUT_INIT;
		r.start_epoch = 2 * seq + 1;
		r.end_epoch = 2 * seq + 2;
		r.rss_peak = peak_of(seq);
		r.overwritten = seq % 100 == 7;
		r.stacks_lost = seq % 100 == 8;
		/* Every record owns a stack array (freed when let go of: run under ASan/valgrind). */
		r.all = calloc(4, sizeof(*r.all));
		r.nall = r.all ? 4 : 0;
		appended_with_stacks += r.all != NULL;
		over_all += seq && (uint64_t)r.rss_peak > l.max_peak;
		/* As session.c does: trim before each append, everything written. */
		pt_inv_list_trim(&l, l.n);
		pt_inv_append(&l, &r);
		if (l.n > max_n)
			max_n = l.n;
	}
	CHECK(max_n <= KEEP, "never more than keep records in memory (max %u, keep %u)", max_n, KEEP);
	CHECK_EQ_U64(l.total, N, "every record counted as appended");
	CHECK_EQ_U64(l.total_inv, N - 1, "every invocation counted (seq != 0)");
	CHECK_EQ_U64(l.dropped + l.n, N, "kept + let go of = appended");
	CHECK_EQ_U64(l.overwritten, N / 100, "overwritten counted over every record");
	CHECK_EQ_U64(l.stacks_lost, N / 100, "stacks_lost counted over every record");
	for (k = 0; k < l.n; k++) {
		in_order &= k == 0 || l.r[k].seq > l.r[k - 1].seq;
		over_kept += l.r[k].seq && (uint64_t)l.r[k].rss_peak > l.max_peak;
	}
	CHECK(in_order, "kept records in order of seq");
	CHECK_EQ_U64(over_kept + l.dropped_over_max_peak, over_all,
		     "over --max-peak: kept ones + counted ones = all over it");
	for (k = 0; k < KEEP / 4; k++)
		first_ok &= l.r[k].seq == k;
	CHECK(first_ok, "the first keep/4 records kept");
	for (k = 0; k < KEEP / 4; k++)
		last_ok &= l.r[l.n - 1 - k].seq == N - 1 - k;
	CHECK(last_ok, "the last keep/4 records kept");
	/* The highest peaks of those that left the last quarter's window: at least keep/4 of them,
	 * each kept (an independent sort of every middle peak). */
	for (k = 0; k < N - 2 * (KEEP / 4); k++)
		mid[k] = peak_of(KEEP / 4 + k);
	qsort(mid, N - 2 * (KEEP / 4), sizeof(mid[0]), cmp_desc);
	top_min = mid[KEEP / 4 - 1];
	for (k = 0; k < l.n; k++)
		top_found += l.r[k].seq >= KEEP / 4 && l.r[k].seq < N - KEEP / 4 && l.r[k].rss_peak >= top_min;
	CHECK(top_found == KEEP / 4, "the %d highest peaks between are kept (found %d)", KEEP / 4, top_found);
	CHECK(l.dropped_max_seq < N - KEEP / 4, "none let go of from the last quarter");
	CHECK_EQ_U64(appended_with_stacks, N, "every record had stacks to free");

	/* Leaks: a block from an invocation let go of still belongs to it (epoch 2 * seq + 1). */
	for (seq = KEEP / 4; seq < N - KEEP / 4; seq++) {
		for (k = 0; k < l.n && l.r[k].seq != seq; k++)
			;
		if (k == l.n)
			break;   /* the first one let go of */
	}
	CHECK(seq < N - KEEP / 4, "some middle invocation was let go of (%" PRIu64 ")", seq);
	{
		uint64_t s2 = 0;

		CHECK_EQ_U64(pt_leak_origin(&l, 2 * seq + 1, &s2), PT_LEAK_LEAKED,
			     "block of an invocation let go of: leaked");
		CHECK_EQ_U64(s2, seq, "... by that invocation");
		CHECK_EQ_U64(pt_leak_origin(&l, 2 * seq + 2, &s2), PT_LEAK_BETWEEN,
			     "block after its end (even epoch): between");
		CHECK_EQ_U64(pt_leak_origin(&l, 2 * (N - 1) + 1, &s2), PT_LEAK_PENDING,
			     "the last invocation's: pending");
	}
	pt_leaks_add(&lk, &l, 2 * seq + 1, 100, 3, 0);
	pt_leaks_finish(&lk, &l);
	CHECK_EQ_U64(lk.judged, N - 2, "judged: every invocation before the last finished, kept or not");
	CHECK_EQ_U64(lk.nrows, 1, "one leak row");
	CHECK_EQ_U64(lk.nrows ? lk.rows[0].seq : 0, seq, "... from the invocation let go of");
	pt_leaks_free(&lk);

	/* No bound: nothing let go of. */
	{
		struct pt_inv_list u = { 0 };
		struct pt_inv_record r;

		memset(&r, 0, sizeof(r));
		for (k = 0; k < 100; k++) {
			r.seq = k;
			pt_inv_append(&u, &r);
			pt_inv_list_trim(&u, u.n);
		}
		CHECK_EQ_U64(u.n, 100, "keep 0: every record kept");
		pt_inv_list_free(&u);
	}
	pt_inv_list_free(&l);
	return CHECK_DONE();
}
