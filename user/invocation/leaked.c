// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * leaked.c — leaks across invocations in the reports: the LEAKED ACROSS INVOCATIONS section of
 * the text report, the "leaked" object of report.json, DIR/leaked.folded and DIR/leaked.svg
 * (PT_LEAKED_BYTES through the usual writers), and the rule that keeps what the dynamic
 * loader's initializers allocated before main out of the leak candidates.
 *
 * The figures come from invocation/leaks.c (the live table by invocation of origin); which
 * output stack each kernel stack merged into comes from pt_collect (stack_of).
 */
#include <errno.h>
#include <stdio.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "util/fmt.h"
#include "output/output.h"
#include "invocation/leaked.h"
#include "bpf/sample.h"

#define LEAK_STACKS 5   /* the text section is short: the JSON has every stack */
#define LEAK_FRAMES 8

bool pt_stack_loader_init(const struct pt_profile *p, const struct pt_stack *s)
{
	static const char dl[] = "_dl_init";

	for (uint32_t j = 0; j < s->nframes; j++) {
		const char *fn = p->frames[s->frames[j]].func;

		if (fn && !strncmp(fn, dl, sizeof(dl) - 1) &&
		    (fn[sizeof(dl) - 1] == 0 || fn[sizeof(dl) - 1] == '.'))
			return true;
	}
	return false;
}

/* The invocations of origin of output stack k, ascending and distinct: count returned, seqs
 * in *out (malloc'd), with their bytes and counts (whole allocations). */
static uint32_t origins(const struct pt_leaked_view *v, uint32_t k, uint64_t **seq, uint64_t **bytes,
			uint64_t **count)
{
	const struct pt_leaks *lk = &v->leaked->leaks;
	unsigned shift = v->sample_bytes ? PT_SAMPLE_COUNT_SHIFT : 0;
	int64_t (*wc) = NULL;
	uint32_t n = 0, i, j;

	*seq = malloc((lk->nrows ? lk->nrows : 1) * sizeof(**seq));
	*bytes = calloc(lk->nrows ? lk->nrows : 1, sizeof(**bytes));
	*count = calloc(lk->nrows ? lk->nrows : 1, sizeof(**count));
	wc = calloc(lk->nrows ? lk->nrows : 1, sizeof(*wc));
	if (!*seq || !*bytes || !*count || !wc) {
		free(wc);
		return 0;
	}
	for (i = 0; i < lk->nrows; i++) {
		const struct pt_leak_row *row = &lk->rows[i];

		if (row->stack >= v->leaked->nstacks || v->leaked->stack_of[row->stack] != k)
			continue;
		for (j = 0; j < n && (*seq)[j] != row->seq; j++)
			;
		if (j == n)
			(*seq)[n++] = row->seq;
		(*bytes)[j] += row->bytes;
		wc[j] += row->wcount;
	}
	/* Rows are sorted by (kernel stack, seq); several kernel stacks may merge into one. */
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && (*seq)[j - 1] > (*seq)[j]; j--) {
			uint64_t t = (*seq)[j]; (*seq)[j] = (*seq)[j - 1]; (*seq)[j - 1] = t;
			t = (*bytes)[j]; (*bytes)[j] = (*bytes)[j - 1]; (*bytes)[j - 1] = t;
			int64_t w = wc[j]; wc[j] = wc[j - 1]; wc[j - 1] = w;
		}
	for (i = 0; i < n; i++)
		(*count)[i] = (uint64_t)((wc[i] + (shift ? 1LL << (shift - 1) : 0)) >> shift);
	free(wc);
	return n;
}

/* "2-9" or "1, 3, 5-7" */
static void print_ranges(FILE *f, const uint64_t *seq, uint32_t n)
{
	uint32_t i = 0, j;

	while (i < n) {
		for (j = i; j + 1 < n && seq[j + 1] == seq[j] + 1; j++)
			;
		fprintf(f, "%s%" PRIu64, i ? ", " : "", seq[i]);
		if (j > i)
			fprintf(f, "-%" PRIu64, seq[j]);
		i = j + 1;
	}
}

static struct { const struct pt_profile *p; } g_rank;

static int cmp_leaked(const void *a, const void *b)
{
	const struct pt_stack *x = &g_rank.p->stacks[*(const uint32_t *)a];
	const struct pt_stack *y = &g_rank.p->stacks[*(const uint32_t *)b];

	if (x->v[PT_LEAKED_BYTES] != y->v[PT_LEAKED_BYTES])
		return x->v[PT_LEAKED_BYTES] < y->v[PT_LEAKED_BYTES] ? 1 : -1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/* Output stacks that leaked, most bytes first. */
static uint32_t *ranked(const struct pt_profile *p, uint32_t *n)
{
	uint32_t *idx = malloc((p->nstacks ? p->nstacks : 1) * sizeof(*idx));

	*n = 0;
	for (uint32_t k = 0; idx && k < p->nstacks; k++)
		if (p->stacks[k].v[PT_LEAKED_BYTES])
			idx[(*n)++] = k;
	g_rank.p = p;
	if (idx && *n)
		qsort(idx, *n, sizeof(*idx), cmp_leaked);
	return idx;
}

static void text_apart(FILE *f, const struct pt_leaks *lk)
{
	static const char *const what[PT_LEAK_CLASSES] = {
		[PT_LEAK_INIT] = "init phase",
		[PT_LEAK_PENDING] = "invocations no finished one followed yet",
		[PT_LEAK_BETWEEN] = "between invocations",
		[PT_LEAK_UNTIMED] = "without an allocation time",
	};
	char b[32];

	fprintf(f, "  also live at the end, not counted as leaked:");
	for (int c = PT_LEAK_INIT; c < PT_LEAK_CLASSES; c++)
		fprintf(f, "%s %s %s in %" PRIu64 " block%s", c == PT_LEAK_INIT ? "" : ";", what[c],
			pt_fmt_bytes(b, sizeof(b), (double)lk->bytes[c]), lk->count[c],
			lk->count[c] == 1 ? "" : "s");
	fputc('\n', f);
}

static void text_stack(FILE *f, const struct pt_leaked_view *v, uint32_t rank, uint32_t k)
{
	const struct pt_stack *s = &v->prof->stacks[k];
	uint64_t *seq, *bytes, *count;
	uint32_t n = origins(v, k, &seq, &bytes, &count), j;
	char b1[32], b2[32];

	fprintf(f, "  #%-2u keeps %s per invocation (%s in %" PRIu64 " block%s), allocated in "
		   "invocation%s ", rank,
		pt_fmt_bytes(b1, sizeof(b1), n ? (double)s->v[PT_LEAKED_BYTES] / n : 0),
		pt_fmt_bytes(b2, sizeof(b2), (double)s->v[PT_LEAKED_BYTES]), s->v[PT_LEAKED_COUNT],
		s->v[PT_LEAKED_COUNT] == 1 ? "" : "s", n == 1 ? "" : "s");
	print_ranges(f, seq, n);
	fputc('\n', f);
	for (j = 0; j < s->nframes && j < LEAK_FRAMES; j++)
		pt_frame_text(f, v->prof, s->frames[j]);
	if (s->nframes > LEAK_FRAMES)
		fprintf(f, "        ... %u more frames\n", s->nframes - LEAK_FRAMES);
	free(seq);
	free(bytes);
	free(count);
}

void pt_leaked_text(FILE *f, const struct pt_leaked_view *v)
{
	const struct pt_leaks *lk = &v->leaked->leaks;
	uint32_t *idx, n, i;
	char b1[32];

	bool any = false;

	/* A program that never asked for work has only its init row: nothing to say. */
	for (i = 0; v->invs && i < v->invs->n; i++)
		any |= v->invs->r[i].seq != 0;
	if (!lk->read || !any)
		return;
	fprintf(f, "\nLEAKED ACROSS INVOCATIONS (%s in %" PRIu64 " blocks allocated during an invocation "
		   "and still live at the end, after a later invocation finished; %" PRIu64
		   " invocation%s judged)\n",
		pt_fmt_bytes(b1, sizeof(b1), (double)lk->bytes[PT_LEAK_LEAKED]), lk->count[PT_LEAK_LEAKED],
		lk->judged, lk->judged == 1 ? "" : "s");
	if (lk->read_err)
		fprintf(f, "  incomplete: the live table could not be read to the end (%s)\n",
			strerror(-lk->read_err));
	text_apart(f, lk);
	if (v->sample_bytes)
		fprintf(f, "  sampled: the stacks' figures are estimates; %s in %" PRIu64 " leaked blocks "
			   "were not sampled (in the total above, on no stack)\n",
			pt_fmt_bytes(b1, sizeof(b1), (double)lk->unsampled_leaked_bytes),
			lk->unsampled_leaked_count);
	idx = ranked(v->prof, &n);
	if (!idx)
		return;
	if (!n)
		fprintf(f, "  (none)\n");
	for (i = 0; i < n && i < LEAK_STACKS && (int)i < v->top; i++)
		text_stack(f, v, i + 1, idx[i]);
	if (n > i)
		fprintf(f, "  ... %u more stacks (report.json \"leaked\", leaked.svg)\n", n - i);
	free(idx);
}

static void json_stack(FILE *f, const struct pt_leaked_view *v, uint32_t k, const uint32_t *jidx, bool first)
{
	const struct pt_stack *s = &v->prof->stacks[k];
	uint64_t *seq, *bytes, *count;
	uint32_t n = origins(v, k, &seq, &bytes, &count), j;

	fprintf(f, "%s\n      {\"stack\": ", first ? "" : ",");
	if (jidx && jidx[k] == UINT32_MAX)
		fprintf(f, "null");
	else
		fprintf(f, "%u", jidx ? jidx[k] : k);
	fprintf(f, ", \"bytes\": %" PRIu64 ", \"count\": %" PRIu64
		   ", \"per_invocation_bytes\": %" PRIu64 ", \"invocations\": [",
		s->v[PT_LEAKED_BYTES], s->v[PT_LEAKED_COUNT],
		n ? s->v[PT_LEAKED_BYTES] / n : 0);
	for (j = 0; j < n; j++)
		fprintf(f, "%s{\"seq\": %" PRIu64 ", \"bytes\": %" PRIu64 ", \"count\": %" PRIu64 "}",
			j ? ", " : "", seq[j], bytes[j], count[j]);
	fprintf(f, "]}");
	free(seq);
	free(bytes);
	free(count);
}

void pt_leaked_json(FILE *f, const struct pt_leaked_view *v, const uint32_t *jidx)
{
	const struct pt_leaks *lk = &v->leaked->leaks;
	uint32_t *idx, n, i;

	if (!lk->read) {
		fprintf(f, "null");
		return;
	}
	fprintf(f, "{\"invocations_judged\": %" PRIu64 ", \"bytes\": %" PRIu64 ", \"count\": %" PRIu64,
		lk->judged, lk->bytes[PT_LEAK_LEAKED], lk->count[PT_LEAK_LEAKED]);
	for (int c = PT_LEAK_INIT; c < PT_LEAK_CLASSES; c++)
		fprintf(f, ", \"%s_bytes\": %" PRIu64 ", \"%s_count\": %" PRIu64,
			pt_leak_class_name(c), lk->bytes[c], pt_leak_class_name(c), lk->count[c]);
	fprintf(f, ", \"unsampled_bytes\": %" PRIu64 ", \"unsampled_count\": %" PRIu64
		   ", \"overflow_blocks\": %" PRIu64 ", \"read_error\": ",
		lk->unsampled_leaked_bytes, lk->unsampled_leaked_count, lk->overflow_blocks);
	if (lk->read_err)
		pt_json_str(f, strerror(-lk->read_err));
	else
		fprintf(f, "null");
	fprintf(f, ", \"stacks\": [");
	idx = ranked(v->prof, &n);
	for (i = 0; idx && i < n; i++)
		json_stack(f, v, idx[i], jidx, i == 0);
	free(idx);
	fprintf(f, "%s]}", n ? "\n    " : "");
}

int pt_leaked_write_dir(const char *dir, const struct pt_leaked_view *v)
{
	char path[4096], sub[256], b[32];
	int err = 0, e;
	FILE *f;

	snprintf(path, sizeof(path), "%s/leaked.folded", dir);
	if (!(f = pt_output_fopen(path)))
		return -errno;
	err = pt_write_folded(f, v->prof, PT_LEAKED_BYTES);
	if (fclose(f) && !err)
		err = -errno;
	snprintf(path, sizeof(path), "%s/leaked.svg", dir);
	if (!(f = pt_output_fopen(path)))
		return err ? err : -errno;
	snprintf(sub, sizeof(sub), "PID %d (%s): %s leaked across %" PRIu64 " invocations", v->pid,
		 v->comm, pt_fmt_bytes(b, sizeof(b), (double)v->leaked->leaks.bytes[PT_LEAK_LEAKED]),
		 v->leaked->leaks.judged);
	e = pt_write_flamegraph(f, v->prof, PT_LEAKED_BYTES,
				"Heap leaked across invocations (allocated in one, live after the next)", sub);
	if (fclose(f) && !e)
		e = -errno;
	return err ? err : e;
}

void pt_leaked_free(struct pt_leaked *lk)
{
	pt_leaks_free(&lk->leaks);
	free(lk->by_stack);
	free(lk->stack_of);
	lk->by_stack = NULL;
	lk->stack_of = NULL;
	lk->nstacks = 0;
}

void pt_leaked_read(struct pt_leaked *l, int live_fd, uint32_t live_max, int overflow_fd,
		    const struct pt_inv_list *invs, uint64_t sample_bytes, uint32_t nstacks)
{
	if (pt_leaks_read(&l->leaks, live_fd, live_max, overflow_fd, invs, sample_bytes))
		fprintf(stderr, "peaktrace: cannot read the live table: %s; leaks across invocations "
				"are incomplete\n", strerror(-l->leaks.read_err));
	l->by_stack = pt_leaks_per_stack(&l->leaks, nstacks);
	l->stack_of = calloc(nstacks ? nstacks : 1, sizeof(*l->stack_of));
	l->nstacks = l->stack_of ? nstacks : 0;
}
