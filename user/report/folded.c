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

/* Stand-in for a stack the unwinder returned empty, so its bytes still show up. */
#define NO_STACK "[no stack]"

struct fline {
	char *text;
	uint64_t value;
};

static int fline_cmp(const void *a, const void *b)
{
	const struct fline *x = a, *y = b;

	return strcmp(x->text, y->text);
}

static char *fold_stack(const struct pt_stack *s, char *const *labels)
{
	size_t len = 0, o = 0;
	uint32_t i;
	char *out;

	if (!s->nframes)
		return strdup(NO_STACK);
	for (i = 0; i < s->nframes; i++)
		len += strlen(labels[s->frames[i]]) + 1;
	out = malloc(len);
	if (!out)
		return NULL;
	/* frames[0] is the leaf; folded format wants the root first. */
	for (i = s->nframes; i-- > 0;) {
		const char *l = labels[s->frames[i]];
		size_t n = strlen(l);

		memcpy(out + o, l, n);
		o += n;
		out[o++] = i ? ';' : '\0';
	}
	return out;
}

int pt_write_folded(FILE *f, const struct pt_profile *p, enum pt_metric m)
{
	struct fline *lines = NULL;
	char **labels = NULL;
	uint32_t i, n = 0;
	char *c;
	int err;

	err = pt_writer_prepare(p, m, &labels);
	if (err)
		return err;
	/* Labels are already free of newlines (pt_clean_text); only ';' is special here. */
	for (i = 0; i < p->nframes; i++)
		for (c = labels[i]; (c = strchr(c, ';')); c++)
			*c = ':';

	lines = calloc(p->nstacks ? p->nstacks : 1, sizeof(*lines));
	if (!lines) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < p->nstacks; i++) {
		if (!p->stacks[i].v[m])
			continue;
		lines[n].text = fold_stack(&p->stacks[i], labels);
		if (!lines[n].text) {
			err = -ENOMEM;
			goto out;
		}
		lines[n++].value = p->stacks[i].v[m];
	}

	/* Distinct stacks can fold to the same text (two addresses in one function);
	 * sorting puts them next to each other so they merge into one line. */
	qsort(lines, n, sizeof(*lines), fline_cmp);
	for (i = 0; i < n; i++) {
		uint64_t v = lines[i].value;

		while (i + 1 < n && strcmp(lines[i].text, lines[i + 1].text) == 0)
			v += lines[++i].value;
		if (fprintf(f, "%s %" PRIu64 "\n", lines[i].text, v) < 0)
			break;	/* pt_stream_result() reports why */
	}
	err = pt_stream_result(f);
out:
	for (i = 0; lines && i < n; i++)
		free(lines[i].text);
	free(lines);
	pt_labels_free(labels, p->nframes);
	return err;
}
