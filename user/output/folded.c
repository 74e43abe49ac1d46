// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * folded.c — "folded stacks", the lingua franca of flame graph tools:
 *
 *	main;handle_request;malloc 4096
 *
 * Root first, ';' between frames, one space, an integer. flamegraph.pl splits each line
 * at its last space and each stack at ';', so ';' inside a name is rewritten to ':'
 * (C++ names never contain ';' legitimately, and ':' keeps them readable).
 * Lines are merged and sorted so the same profile always gives the same bytes.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile.h"
#include "output/output.h"
#include "util/fmt.h"

/* Stand-in for a stack the unwinder returned empty, so its bytes still show up. */
#define NO_STACK "[no stack]"

/*
 * The lines are sorted by their text without building it: a stack's text is its labels root
 * first, joined by ';' (NO_STACK when it has no frames), and the comparison walks two such
 * texts a character at a time, exactly as strcmp would on the joined strings. With 100k+
 * stacks the joined texts were the writer's largest allocation (tens of MB), for nothing:
 * each line is written straight from the labels.
 */
struct fold_ctx {
	const struct pt_profile *p;
	char *const *labels;
};

struct fold_cur {
	const struct pt_stack *s;
	uint32_t i;             /* frames left after the current label */
	const char *c;          /* the next character of the current label */
};

static void cur_init(struct fold_cur *k, const struct pt_stack *s, char *const *labels)
{
	k->s = s;
	if (!s->nframes) {
		k->i = 0;
		k->c = NO_STACK;
		return;
	}
	k->i = s->nframes - 1;
	k->c = labels[s->frames[k->i]];
}

/* The next character of the joined text: ';' between labels, 0 at the end. */
static unsigned char cur_next(struct fold_cur *k, char *const *labels)
{
	if (*k->c)
		return (unsigned char)*k->c++;
	if (!k->i)
		return 0;
	k->c = labels[k->s->frames[--k->i]];
	return ';';
}

/* Character by character: the rare stack without frames ("[no stack]") against any. */
static int fold_cmp_slow(const struct pt_stack *sa, const struct pt_stack *sb, char *const *labels)
{
	struct fold_cur ka, kb;
	unsigned char ca, cb;

	cur_init(&ka, sa, labels);
	cur_init(&kb, sb, labels);
	do {
		ca = cur_next(&ka, labels);
		cb = cur_next(&kb, labels);
	} while (ca && ca == cb);
	return ca < cb ? -1 : ca > cb;
}

/* Label by label, root first: a frame both stacks share is skipped without reading its
 * label; where two labels differ, the first differing character decides, and where one
 * label ends first, its next character is ';' (more frames) or the end. Labels hold no ';'. */
static int fold_cmp(const void *a, const void *b, void *arg)
{
	const struct fold_ctx *x = arg;
	const struct pt_stack *sa = &x->p->stacks[*(const uint32_t *)a];
	const struct pt_stack *sb = &x->p->stacks[*(const uint32_t *)b];
	uint32_t i = sa->nframes, j = sb->nframes;

	if (!i || !j)
		return fold_cmp_slow(sa, sb, x->labels);
	while (i && j) {
		uint32_t fa = sa->frames[--i], fb = sb->frames[--j];
		const unsigned char *pa, *pb;
		unsigned char ca, cb;

		if (fa == fb)
			continue;
		pa = (const unsigned char *)x->labels[fa];
		pb = (const unsigned char *)x->labels[fb];
		while (*pa && *pa == *pb)
			pa++, pb++;
		if (!*pa && !*pb)
			continue;	/* the same text at two addresses */
		ca = *pa ? *pa : i ? ';' : 0;
		cb = *pb ? *pb : j ? ';' : 0;
		return ca < cb ? -1 : 1;
	}
	/* One ran out of frames: the other goes on with ';'. */
	return i == j ? 0 : i ? 1 : -1;
}

static void put_folded(FILE *f, const struct pt_stack *s, char *const *labels)
{
	uint32_t i;

	if (!s->nframes) {
		fputs(NO_STACK, f);
		return;
	}
	/* frames[0] is the leaf; folded format wants the root first. */
	for (i = s->nframes; i-- > 0;) {
		fputs(labels[s->frames[i]], f);
		if (i)
			putc(';', f);
	}
}

/* The labels as the folded text shows them: a ';' inside a name is written ':'. */
static int fold_labels(const struct pt_profile *p, enum pt_metric m, char ***labels)
{
	uint32_t i;
	char *c;
	int err = pt_writer_prepare(p, m, labels);

	if (err)
		return err;
	/* Labels are already free of newlines (pt_clean_text); only ';' is special here. */
	for (i = 0; i < p->nframes; i++)
		for (c = (*labels)[i]; (c = strchr(c, ';')); c++)
			*c = ':';
	return 0;
}

/* The lines of metric m from idx[0..n), sorted by text: stacks of value 0 are skipped, and
 * stacks with the same text (distinct stacks can fold to the same text: two addresses in one
 * function) are next to each other, so they merge into one line. */
static int fold_write(FILE *f, const struct pt_profile *p, enum pt_metric m, struct fold_ctx *ctx,
		      const uint32_t *idx, uint32_t n)
{
	uint32_t i, j;

	for (i = 0; i < n; i = j) {
		uint64_t v = p->stacks[idx[i]].v[m], w;

		j = i + 1;
		if (!v)
			continue;
		/* A stack of value 0 adds nothing whatever its text: no comparison needed. */
		for (; j < n; j++) {
			w = p->stacks[idx[j]].v[m];
			if (w && fold_cmp(&idx[i], &idx[j], ctx) != 0)
				break;
			v += w;
		}
		put_folded(f, &p->stacks[idx[i]], ctx->labels);
		putc(' ', f);
		pt_put_u64(f, v);
		if (putc('\n', f) == EOF)
			break;	/* pt_stream_result() reports why */
	}
	return pt_stream_result(f);
}

int pt_write_folded(FILE *f, const struct pt_profile *p, enum pt_metric m)
{
	struct fold_ctx ctx = { p, NULL };
	uint32_t *idx = NULL, i, n = 0;
	char **labels = NULL;
	int err;

	err = fold_labels(p, m, &labels);
	if (err)
		return err;
	ctx.labels = labels;
	idx = malloc((p->nstacks ? p->nstacks : 1) * sizeof(*idx));
	if (!idx) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < p->nstacks; i++)
		if (p->stacks[i].v[m])
			idx[n++] = i;
	qsort_r(idx, n, sizeof(*idx), fold_cmp, &ctx);
	err = fold_write(f, p, m, &ctx, idx, n);
out:
	free(idx);
	pt_labels_free(labels, p->nframes);
	return err;
}

int pt_folded_order(const struct pt_profile *p, uint32_t **order)
{
	struct fold_ctx ctx = { p, NULL };
	char **labels = NULL;
	uint32_t i;
	int err;

	*order = NULL;
	err = fold_labels(p, PT_ALLOC_BYTES, &labels);
	if (err)
		return err;
	ctx.labels = labels;
	*order = malloc((p->nstacks ? p->nstacks : 1) * sizeof(**order));
	if (*order) {
		for (i = 0; i < p->nstacks; i++)
			(*order)[i] = i;
		qsort_r(*order, p->nstacks, sizeof(**order), fold_cmp, &ctx);
	}
	pt_labels_free(labels, p->nframes);
	return *order ? 0 : -ENOMEM;
}

int pt_write_folded_order(FILE *f, const struct pt_profile *p, enum pt_metric m,
			  const uint32_t *order)
{
	struct fold_ctx ctx = { p, NULL };
	char **labels = NULL;
	int err;

	err = fold_labels(p, m, &labels);
	if (err)
		return err;
	ctx.labels = labels;
	err = fold_write(f, p, m, &ctx, order, p->nstacks);
	pt_labels_free(labels, p->nframes);
	return err;
}
