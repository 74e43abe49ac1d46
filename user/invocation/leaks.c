// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * leaks.c — leaks across invocations (leaks.h): the live table walked once tracing stops, each
 * block placed by its allocation epoch in the invocation that made it.
 *
 * Every live slot carries pt_global.epoch at its allocation, a counter the BPF side bumps at every
 * invocation start and end (cheaper than a clock read on every allocation, and exact where two
 * clock reads could tie); the records' start_epoch and end_epoch are the values those edges took.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "invocation/leaks.h"
#include "bpf/chunk.h"
#include "bpf/sample.h"

const char *pt_leak_class_name(enum pt_leak_class c)
{
	static const char *const names[PT_LEAK_CLASSES] = {
		"leaked", "init", "pending", "between", "untimed",
	};

	return (unsigned)c < PT_LEAK_CLASSES ? names[c] : "?";
}

/* An invocation that ended by answering: the one after N had its chance to free N's blocks. */
static bool finished(const struct pt_inv_record *r)
{
	return r->seq && (r->outcome == PT_OUT_RESPONSE || r->outcome == PT_OUT_ERROR);
}

static uint64_t last_finished_seq(const struct pt_inv_list *invs)
{
	uint64_t m = 0;

	for (uint32_t k = 0; invs && k < invs->n; k++)
		if (finished(&invs->r[k]) && invs->r[k].seq > m)
			m = invs->r[k].seq;
	return m;
}

static enum pt_leak_class origin(const struct pt_inv_list *invs, uint64_t last, uint64_t ts,
				 uint64_t *seq)
{
	const struct pt_inv_record *hit = NULL;
	uint32_t lo = 0, hi = invs ? invs->n : 0;

	*seq = 0;
	if (!ts)
		return PT_LEAK_UNTIMED;
	if (!hi)
		return PT_LEAK_BETWEEN;
	/* Records are appended in order of their start: the last one starting at or before ts. */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (invs->r[mid].start_epoch <= ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0) {
		/* Before the first record began (it starts when tracing did): the init phase's. */
		return PT_LEAK_INIT;
	}
	hit = &invs->r[lo - 1];
	if (hit->end_epoch && ts >= hit->end_epoch) {
		/* Between two kept records with some let go of (--max-invocations-kept): every
		 * invocation takes one epoch at its start and one at its end (bpf/invocation.bpf.h),
		 * so seq's own epoch is 2 * seq + 1 and the even ones are between invocations. */
		if (lo < invs->n && invs->r[lo].seq > hit->seq + 1 && (ts & 1) &&
		    (ts - 1) / 2 > hit->seq && (ts - 1) / 2 < invs->r[lo].seq) {
			*seq = (ts - 1) / 2;
			return *seq < last ? PT_LEAK_LEAKED : PT_LEAK_PENDING;
		}
		return PT_LEAK_BETWEEN;
	}
	if (hit->seq == 0)
		return PT_LEAK_INIT;
	*seq = hit->seq;
	return hit->seq < last ? PT_LEAK_LEAKED : PT_LEAK_PENDING;
}

enum pt_leak_class pt_leak_origin(const struct pt_inv_list *invs, uint64_t ts, uint64_t *seq)
{
	return origin(invs, last_finished_seq(invs), ts, seq);
}

static int row_add(struct pt_leaks *lk, uint32_t stack, uint64_t seq, uint64_t bytes, int64_t wc,
		   uint32_t *cap)
{
	struct pt_leak_row *r;

	if (lk->nrows && lk->rows[lk->nrows - 1].stack == stack && lk->rows[lk->nrows - 1].seq == seq) {
		r = &lk->rows[lk->nrows - 1];
	} else {
		if (lk->nrows == *cap) {
			uint32_t nc = *cap ? *cap * 2 : 256;
			void *n = realloc(lk->rows, nc * sizeof(*lk->rows));

			if (!n)
				return -ENOMEM;
			lk->rows = n;
			*cap = nc;
		}
		r = &lk->rows[lk->nrows++];
		memset(r, 0, sizeof(*r));
		r->stack = stack;
		r->seq = seq;
	}
	r->bytes += bytes;
	r->wcount += wc;
	r->blocks++;
	return 0;
}

/* Row capacity of the one walk in progress (rows grow as leaked blocks are met). */
static uint32_t rows_cap;

int pt_leaks_add(struct pt_leaks *lk, const struct pt_inv_list *invs, uint64_t ts, uint64_t size,
		 uint32_t stack, uint64_t sample_bytes)
{
	uint64_t seq;
	__u64 wb, wc;
	enum pt_leak_class c;

	if (!lk->nrows && !lk->rows)
		rows_cap = 0;
	if (!lk->last_known) {
		lk->last_finished = last_finished_seq(invs);
		lk->last_known = true;
	}
	c = origin(invs, lk->last_finished, ts, &seq);
	lk->bytes[c] += size;
	lk->count[c]++;
	if (c != PT_LEAK_LEAKED)
		return 0;
	if (stack == PT_STACK_UNSAMPLED) {
		/* --sample-bytes: no stack; the sampled blocks' weights stand for it. */
		lk->unsampled_leaked_bytes += size;
		lk->unsampled_leaked_count++;
		return 0;
	}
	if (sample_bytes) {
		pt_sample_weights(sample_bytes, size, &wb, &wc);
	} else {
		wb = size;
		wc = 1;
	}
	return row_add(lk, stack, seq, wb, (int64_t)wc, &rows_cap);
}

static int cmp_row(const void *a, const void *b)
{
	const struct pt_leak_row *x = a, *y = b;

	if (x->stack != y->stack)
		return x->stack < y->stack ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void pt_leaks_finish(struct pt_leaks *lk, const struct pt_inv_list *invs)
{
	uint64_t last = last_finished_seq(invs);
	uint32_t i, o = 0;

	if (lk->nrows)
		qsort(lk->rows, lk->nrows, sizeof(*lk->rows), cmp_row);
	for (i = 0; i < lk->nrows; i++) {
		if (o && lk->rows[o - 1].stack == lk->rows[i].stack && lk->rows[o - 1].seq == lk->rows[i].seq) {
			lk->rows[o - 1].bytes += lk->rows[i].bytes;
			lk->rows[o - 1].wcount += lk->rows[i].wcount;
			lk->rows[o - 1].blocks += lk->rows[i].blocks;
		} else {
			lk->rows[o++] = lk->rows[i];
		}
	}
	lk->nrows = o;
	lk->judged = 0;
	for (i = 0; invs && i < invs->n; i++)
		if (invs->r[i].seq && invs->r[i].seq < last)
			lk->judged++;
	/* Those let go of (--max-invocations-kept) came before the kept last ones. */
	if (invs && invs->dropped_inv && invs->dropped_max_seq < last)
		lk->judged += invs->dropped_inv;
	lk->read = true;
}

/* One bucket's blocks into lk. */
static int add_bucket(struct pt_leaks *lk, const struct pt_live_bucket *bk,
		      const struct pt_inv_list *invs, uint64_t sample_bytes)
{
	int err = 0;

	for (int i = 0; i < PT_BUCKET_SLOTS && !err; i++)
		if (bk->ptr[i])
			err = pt_leaks_add(lk, invs, bk->v[i].ts, pt_size_req(bk->v[i].size),
					   bk->v[i].stack, sample_bytes);
	return err;
}

/* The buckets, BATCH at a time (one syscall each, ~25x fewer than a lookup per bucket); one
 * lookup per bucket where the kernel has no batch operation for arrays. */
#define BATCH 2048
static int walk_buckets(struct pt_leaks *lk, int live_fd, uint32_t nbuckets,
			const struct pt_inv_list *invs, uint64_t sample_bytes)
{
	struct pt_live_bucket *bk = malloc(BATCH * sizeof(*bk));
	__u32 *keys = malloc(BATCH * sizeof(*keys)), in = 0, out = 0, b = 0;
	bool batch = true;
	int err = bk && keys ? 0 : -ENOMEM;

	while (!err && b < nbuckets) {
		__u32 n = nbuckets - b < BATCH ? nbuckets - b : BATCH;
		int e = -1;

		if (batch) {
			LIBBPF_OPTS(bpf_map_batch_opts, o);

			e = bpf_map_lookup_batch(live_fd, b ? &in : NULL, &out, keys, bk, &n, &o);
			if (e && errno != ENOENT) {
				batch = false;   /* not supported: one lookup per bucket from here */
				continue;
			}
			in = out;
		} else {
			n = 1;
			if (bpf_map_lookup_elem(live_fd, &b, bk)) {
				err = -errno;
				break;
			}
		}
		for (__u32 i = 0; i < n && !err; i++)
			err = add_bucket(lk, &bk[i], invs, sample_bytes);
		b += n;
		if (batch && e)
			break;   /* ENOENT: that was the last batch */
	}
	free(bk);
	free(keys);
	return err;
}

int pt_leaks_read(struct pt_leaks *lk, int live_fd, uint32_t nbuckets, int overflow_fd,
		  const struct pt_inv_list *invs, uint64_t sample_bytes)
{
	struct pt_live_info info;
	__u64 key, next, *prev = NULL;
	int err;

	err = walk_buckets(lk, live_fd, nbuckets, invs, sample_bytes);
	while (!err && overflow_fd >= 0 && bpf_map_get_next_key(overflow_fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(overflow_fd, &key, &info))
			continue;   /* freed while we walked (a live target) */
		lk->overflow_blocks++;
		err = pt_leaks_add(lk, invs, info.ts, pt_size_req(info.size), info.stack, sample_bytes);
	}
	pt_leaks_finish(lk, invs);
	lk->read_err = err;
	return err;
}

int64_t (*pt_leaks_per_stack(const struct pt_leaks *lk, uint32_t nstacks))[2]
{
	int64_t (*v)[2] = calloc(nstacks ? nstacks : 1, sizeof(*v));

	for (uint32_t i = 0; v && i < lk->nrows; i++) {
		if (lk->rows[i].stack >= nstacks)
			continue;
		v[lk->rows[i].stack][0] += (int64_t)lk->rows[i].bytes;
		v[lk->rows[i].stack][1] += lk->rows[i].wcount;
	}
	return v;
}

void pt_leaks_free(struct pt_leaks *lk)
{
	free(lk->rows);
	memset(lk, 0, sizeof(*lk));
}
