// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * profile.c — metric names and the frame-naming helpers every writer shares.
 *
 * All writers name frames through pt_frame_label() so a function reads the same in
 * the folded file, the SVG, pprof and speedscope, and so unresolved frames stay
 * distinguishable ("[libfoo.so+0x1234]") instead of collapsing into one "[unknown]".
 */
#include <errno.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/fmt.h"
#include "profile/profile.h"

/* pprof's conventional names: "objects"/"space", with "inuse" for what is still live. */
static const struct {
	const char *name;
	const char *unit;
} metrics[PT_METRIC_MAX] = {
	[PT_ALLOC_COUNT] = { "alloc_objects", "count" },
	[PT_ALLOC_BYTES] = { "alloc_space", "bytes" },
	[PT_FREE_COUNT] = { "free_objects", "count" },
	[PT_FREE_BYTES] = { "free_space", "bytes" },
	[PT_LIVE_COUNT] = { "inuse_objects", "count" },
	[PT_LIVE_BYTES] = { "inuse_space", "bytes" },
	[PT_PEAK_COUNT] = { "peak_objects", "count" },
	[PT_PEAK_BYTES] = { "peak_space", "bytes" },
	[PT_LEAKED_COUNT] = { "leaked_objects", "count" },
	[PT_LEAKED_BYTES] = { "leaked_space", "bytes" },
	[PT_RSS_PEAK_BYTES] = { "rss_peak_space", "bytes" },
	[PT_RSS_NOW_BYTES] = { "rss_space", "bytes" },
};

const char *pt_metric_name(enum pt_metric m)
{
	/* Never NULL: writers print this straight into files. */
	return (unsigned)m < PT_METRIC_MAX ? metrics[m].name : "unknown";
}

const char *pt_metric_unit(enum pt_metric m)
{
	return (unsigned)m < PT_METRIC_MAX ? metrics[m].unit : "count";
}

void pt_profile_free(struct pt_profile *p)
{
	uint32_t i;

	if (!p)
		return;
	for (i = 0; p->frames && i < p->nframes; i++) {
		free(p->frames[i].func);
		free(p->frames[i].module);
		free(p->frames[i].file);
		free(p->frames[i].func_name);
		free(p->frames[i].build_id);
	}
	for (i = 0; p->stacks && i < p->nstacks; i++)
		free(p->stacks[i].frames);
	free(p->frames);
	free(p->stacks);
	/* The struct itself usually lives on the caller's stack; leave it reusable. */
	memset(p, 0, sizeof(*p));
}

char *pt_clean_text(const char *s)
{
	const unsigned char *in = (const unsigned char *)(s ? s : "");
	size_t len = strlen((const char *)in), i = 0, o = 0, n;
	char *out = malloc(len + 1);

	if (!out)
		return NULL;
	/* Symbol names come from arbitrary ELF files; XML and JSON both reject invalid
	 * UTF-8 and raw control characters, and one bad byte would spoil the whole file. */
	while (i < len) {
		if (in[i] < 0x20 || in[i] == 0x7f) {
			out[o++] = ' ';
			i++;
		} else if ((n = pt_utf8_len(in + i)) > 0) {
			memcpy(out + o, in + i, n);
			o += n;
			i += n;
		} else {
			out[o++] = '?';
			i++;
		}
	}
	out[o] = '\0';
	return out;
}

static int func_unknown(const char *f)
{
	return !f || !*f || strncmp(f, "[unknown", 8) == 0;
}

char *pt_frame_label(const struct pt_frame *fr)
{
	const char *mod = fr->module ? fr->module : "";
	char *raw = NULL, *out;
	int ret;

	if (!func_unknown(fr->func))
		return pt_clean_text(fr->func);

	if (*mod) {
		const char *base = strrchr(mod, '/');
		size_t blen;

		base = base && base[1] ? base + 1 : mod;
		blen = strlen(base);
		/* "[vdso]" and friends already carry brackets: "[vdso+0x9a0]", not "[[vdso]+…]". */
		if (blen >= 2 && base[0] == '[' && base[blen - 1] == ']') {
			base++;
			blen -= 2;
		}
		ret = asprintf(&raw, "[%.*s+0x%" PRIx64 "]", (int)blen, base, fr->offset);
	} else if (fr->addr) {
		ret = asprintf(&raw, "[0x%" PRIx64 "]", fr->addr);
	} else {
		return pt_clean_text(fr->func && *fr->func ? fr->func : "[unknown]");
	}
	if (ret < 0)
		return NULL;
	out = pt_clean_text(raw);
	free(raw);
	return out;
}

int pt_profile_check(const struct pt_profile *p)
{
	uint32_t i, j;

	if (!p || (p->nframes && !p->frames) || (p->nstacks && !p->stacks))
		return -EINVAL;
	for (i = 0; i < p->nframes; i++)
		if (!p->frames[i].func)
			return -EINVAL;
	for (i = 0; i < p->nstacks; i++) {
		const struct pt_stack *s = &p->stacks[i];

		if (s->nframes && !s->frames)
			return -EINVAL;
		for (j = 0; j < s->nframes; j++)
			if (s->frames[j] >= p->nframes)
				return -EINVAL;
	}
	return 0;
}

void pt_labels_free(char **labels, uint32_t n)
{
	uint32_t i;

	if (!labels)
		return;
	for (i = 0; i < n; i++)
		free(labels[i]);
	free(labels);
}

/* The common start of every writer: a known metric, a consistent profile, and its labels. */
int pt_writer_prepare(const struct pt_profile *p, enum pt_metric m, char ***labels)
{
	int err;

	if ((unsigned)m >= PT_METRIC_MAX)
		return -EINVAL;
	err = pt_profile_check(p);
	if (err)
		return err;
	return pt_profile_labels(p, labels);
}

int pt_profile_labels(const struct pt_profile *p, char ***labels)
{
	char **l;
	uint32_t i;

	*labels = NULL;
	/* calloc(0) may return NULL; always ask for at least one slot. */
	l = calloc(p->nframes ? p->nframes : 1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	for (i = 0; i < p->nframes; i++) {
		l[i] = pt_frame_label(&p->frames[i]);
		if (!l[i]) {
			pt_labels_free(l, i);
			return -ENOMEM;
		}
	}
	*labels = l;
	return 0;
}

struct rank_ent {
	const char *label;
	const char *module;
	uint32_t idx;
};

static int rank_cmp(const void *a, const void *b)
{
	const struct rank_ent *x = a, *y = b;
	int c = strcmp(x->label, y->label);

	return c ? c : strcmp(x->module, y->module);
}

int pt_frame_ranks(const struct pt_profile *p, char *const *labels, int with_module,
		   uint32_t *rank, uint32_t *nranks)
{
	struct rank_ent *e;
	uint32_t i, r = 0;

	*nranks = 0;
	if (!p->nframes)
		return 0;
	e = malloc(p->nframes * sizeof(*e));
	if (!e)
		return -ENOMEM;
	for (i = 0; i < p->nframes; i++) {
		e[i].label = labels[i];
		/* Without modules every entry compares equal on the second key. */
		e[i].module = with_module && p->frames[i].module ? p->frames[i].module : "";
		e[i].idx = i;
	}
	qsort(e, p->nframes, sizeof(*e), rank_cmp);
	for (i = 0; i < p->nframes; i++) {
		if (i && rank_cmp(&e[i - 1], &e[i]))
			r++;
		rank[e[i].idx] = r;
	}
	*nranks = r + 1;
	free(e);
	return 0;
}

/* Stack a before stack b: more of the metric, then the lower index. */
static inline bool top_before(const struct pt_profile *p, enum pt_metric m, uint32_t a, uint32_t b)
{
	uint64_t va = p->stacks[a].v[m], vb = p->stacks[b].v[m];

	return va != vb ? va > vb : a < b;
}

struct top_ctx {
	const struct pt_profile *p;
	enum pt_metric m;
};

static int top_cmp(const void *x, const void *y, void *arg)
{
	const struct top_ctx *c = arg;
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;

	return a == b ? 0 : top_before(c->p, c->m, a, b) ? -1 : 1;
}

/* Sift the heap h[0..k) (the last of the best k so far at the root) down from i. */
static void top_sift(const struct pt_profile *p, enum pt_metric m, uint32_t *h, uint32_t k,
		     uint32_t i)
{
	for (;;) {
		uint32_t l = 2 * i + 1, w = i, t;

		if (l < k && top_before(p, m, h[w], h[l]))
			w = l;
		if (l + 1 < k && top_before(p, m, h[w], h[l + 1]))
			w = l + 1;
		if (w == i)
			return;
		t = h[i];
		h[i] = h[w];
		h[w] = t;
		i = w;
	}
}

int pt_stacks_top(const struct pt_profile *p, enum pt_metric m, uint32_t *idx, uint32_t n,
		  uint32_t k)
{
	struct top_ctx c = { p, m };
	uint32_t *h, i, o;
	uint8_t *in;

	if (k > n)
		k = n;
	if (!k)
		return 0;
	h = malloc(k * sizeof(*h));
	in = calloc(p->nstacks ? p->nstacks : 1, 1);
	if (!h || !in) {
		free(h);
		free(in);
		return -ENOMEM;
	}
	memcpy(h, idx, k * sizeof(*h));
	for (i = k / 2; i-- > 0;)
		top_sift(p, m, h, k, i);
	for (i = k; i < n; i++) {
		if (top_before(p, m, idx[i], h[0])) {
			h[0] = idx[i];
			top_sift(p, m, h, k, 0);
		}
	}
	qsort_r(h, k, sizeof(*h), top_cmp, &c);
	for (i = 0; i < k; i++)
		in[h[i]] = 1;
	/* The rest keep their order behind the top k (an index appears once in idx). */
	for (i = o = 0; i < n; i++)
		if (!in[idx[i]])
			idx[o++] = idx[i];
	memmove(idx + k, idx, o * sizeof(*idx));
	memcpy(idx, h, k * sizeof(*h));
	free(h);
	free(in);
	return 0;
}

int pt_stream_result(FILE *f)
{
	/* stdio keeps only a sticky error flag; the flush retries whatever is still
	 * buffered, which usually fails again and leaves the real reason in errno. */
	errno = 0;
	if (fflush(f) == EOF || ferror(f))
		return errno ? -errno : -EIO;
	return 0;
}
