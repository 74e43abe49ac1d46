/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * leaks.h — leaks across invocations: the blocks still live at the end of tracing, each placed
 * in the invocation that allocated it by its allocation epoch (pt_live_info.ts, pt_global.epoch)
 * against the invocation records' [start_epoch, end_epoch).
 *
 * A block counts as leaked by invocation N when it was allocated during N, is still live at the
 * end of tracing, and a later invocation has finished (so N's successor had its chance to free
 * it). Everything else live at the end is a named figure of its own: the init phase, invocations
 * no finished one followed yet ("pending"), the time between invocations, and blocks without an
 * allocation time. Rules in docs/json-report.md ("Leaks across invocations").
 */
#ifndef PEAKTRACE_LEAKS_H
#define PEAKTRACE_LEAKS_H

#include <stdint.h>
#include "invocation/invocation.h"

enum pt_leak_class {
	PT_LEAK_LEAKED = 0,  /* allocated in invocation N, a later one finished */
	PT_LEAK_INIT,        /* allocated in the init phase (or before the first invocation seen) */
	PT_LEAK_PENDING,     /* allocated in an invocation no finished invocation followed */
	PT_LEAK_BETWEEN,     /* allocated outside every invocation record */
	PT_LEAK_UNTIMED,     /* no allocation epoch (ts 0) */
	PT_LEAK_CLASSES,
};

/* One (kernel stack, invocation of origin) group of leaked blocks. */
struct pt_leak_row {
	uint32_t stack;      /* kernel stack index */
	uint64_t seq;        /* invocation that allocated them */
	uint64_t bytes;      /* stack weights (--sample-bytes: estimates; else exact) */
	int64_t wcount;      /* count in 2^-count_shift units */
	uint64_t blocks;     /* live blocks seen (sampled ones only with --sample-bytes) */
};

struct pt_leaks {
	bool read;           /* the live table was walked */
	int read_err;        /* -errno of a failed walk (0: none) */
	/* Every live block, by class: exact sizes (sampled or not). */
	uint64_t bytes[PT_LEAK_CLASSES], count[PT_LEAK_CLASSES];
	uint64_t unsampled_leaked_bytes, unsampled_leaked_count;  /* leaked, with no stack */
	uint64_t overflow_blocks;    /* live blocks found in the overflow hash map */
	uint64_t judged;             /* invocations a finished later one followed */
	struct pt_leak_row *rows;    /* sorted by (stack, seq) */
	uint32_t nrows;
	uint64_t last_finished;      /* the last invocation that finished (0: none) */
	bool last_known;
};

/* Which class a block allocated at epoch ts falls in (pure): *seq gets the invocation of origin for
 * PT_LEAK_LEAKED and PT_LEAK_PENDING. */
enum pt_leak_class pt_leak_origin(const struct pt_inv_list *invs, uint64_t ts, uint64_t *seq);
const char *pt_leak_class_name(enum pt_leak_class c);

/* One live block into lk (pure): size is the requested size, stack its kernel stack
 * (PT_STACK_UNSAMPLED: no stack), sample_bytes the --sample-bytes mean (0: none). */
int pt_leaks_add(struct pt_leaks *lk, const struct pt_inv_list *invs, uint64_t ts, uint64_t size,
		 uint32_t stack, uint64_t sample_bytes);
/* Sort and merge rows; count the judged invocations. */
void pt_leaks_finish(struct pt_leaks *lk, const struct pt_inv_list *invs);

/* Walk the live table (live_fd: nbuckets buckets) and its overflow hash map. Returns 0 or -errno
 * (also kept in lk->read_err). */
int pt_leaks_read(struct pt_leaks *lk, int live_fd, uint32_t nbuckets, int overflow_fd,
		  const struct pt_inv_list *invs, uint64_t sample_bytes);

/* Per kernel stack [0, nstacks): leaked bytes and count (2^-count_shift units), for pt_collect.
 * Returns a calloc'd array or NULL. */
int64_t (*pt_leaks_per_stack(const struct pt_leaks *lk, uint32_t nstacks))[2];

void pt_leaks_free(struct pt_leaks *lk);

#endif
