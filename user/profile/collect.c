// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * collect.c — turn the kernel's per-stack tables into a symbolized pt_profile.
 *
 * Frames are interned by address. A frame-pointer walk through code built without frame
 * pointers yields garbage after the first frame; a stack is cut at the first return address
 * that lies in no executable mapping, and stacks that become identical are merged.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "profile/collect.h"
#include "bpf/peak.h"
#include "python/python.h"

/* Frames of one merged stack: native frames plus the Python frames spliced into them. */
#define MAX_MERGED (PT_MAX_FRAMES + PT_MAX_PY_FRAMES)

struct intern {
	uint64_t *keys;     /* addr + 1 (0 = empty) */
	uint32_t *vals;
	uint32_t cap;
};

static uint64_t hash64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

static int add_frame(struct pt_profile *p, uint32_t *cap, struct pt_symbolizer *sym, uint64_t addr,
		     bool is_ret, const char *synthetic)
{
	struct pt_frame *fr;
	struct pt_symres res;

	if (p->nframes == *cap) {
		uint32_t ncap = *cap ? *cap * 2 : 256;
		struct pt_frame *n = realloc(p->frames, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		p->frames = n;
		*cap = ncap;
	}
	fr = &p->frames[p->nframes];
	memset(fr, 0, sizeof(*fr));
	fr->addr = addr;
	if (synthetic) {
		fr->func = strdup(synthetic);
		fr->module = strdup("");
	} else {
		/* A return address points after the call; look up the call itself. */
		memset(&res, 0, sizeof(res));
		if (sym && pt_sym_resolve(sym, is_ret && addr ? addr - 1 : addr, &res) == 0) {
			fr->offset = res.offset + (is_ret && addr ? 1 : 0);
			fr->func_off = (uint32_t)(res.func_off + (is_ret && addr ? 1 : 0));
			fr->module = strdup(res.module ? res.module : "");
			fr->func = strdup(res.func ? res.func : "");
		} else {
			fr->module = strdup("");
			fr->func = strdup("");
		}
	}
	if (!fr->func || !fr->module) {
		free(fr->func);
		free(fr->module);
		return -ENOMEM;
	}
	return (int)p->nframes++;
}

static int intern_frame(struct intern *t, struct pt_profile *p, uint32_t *cap,
			struct pt_symbolizer *sym, uint64_t addr)
{
	uint32_t h = (uint32_t)hash64(addr) & (t->cap - 1);
	int fi;

	while (t->keys[h]) {
		if (t->keys[h] == addr + 1)
			return (int)t->vals[h];
		h = (h + 1) & (t->cap - 1);
	}
	fi = add_frame(p, cap, sym, addr, true, NULL);
	if (fi < 0)
		return fi;
	t->keys[h] = addr + 1;
	t->vals[h] = (uint32_t)fi;
	return fi;
}

/* Merge table for stacks after truncation: key = hash of the frame list. */
struct merge {
	uint64_t *keys;
	uint32_t *vals;     /* index into the output array + 1 */
	uint32_t cap;
};

static uint64_t frames_hash(const uint32_t *fr, uint32_t n)
{
	uint64_t h = 0x9E3779B97F4A7C15ULL ^ n;
	uint32_t i;

	for (i = 0; i < n; i++)
		h = hash64(h ^ fr[i]);
	return h | 1;
}

static int merge_find(struct merge *m, uint64_t h, const uint32_t *fr, uint32_t n,
		      uint32_t *out, const uint32_t *const *frames_of, const uint32_t *nframes_of)
{
	uint32_t i = (uint32_t)h & (m->cap - 1);

	while (m->keys[i]) {
		uint32_t k = m->vals[i] - 1;

		if (m->keys[i] == h && nframes_of[k] == n &&
		    memcmp(frames_of[k], fr, n * sizeof(*fr)) == 0) {
			*out = k;
			return 1;
		}
		i = (i + 1) & (m->cap - 1);
	}
	*out = i;   /* free slot */
	return 0;
}

static uint32_t pow2_at_least(uint64_t n)
{
	uint32_t c = 1024;

	while (c < n * 2)
		c <<= 1;
	return c;
}

/* A Python frame, interned by (code object, line): the instruction index is finer than the
 * name, and stacks that differ only there must merge. The key has bit 63 set, which no native
 * address has. */
static int intern_py(struct intern *t, struct pt_profile *p, uint32_t *cap,
		     struct pt_py_resolver *py, uint32_t idx, uint32_t k, uint64_t word,
		     uint64_t *unreadable)
{
	const char *name = NULL, *file = NULL;
	uint32_t h, rec = 0;
	uint64_t key;
	int line, fi, err;

	if (pt_py_is_boundary(word)) {
		key = word;         /* the truncation marker */
		name = "[python frames truncated]";
		line = 0;
		file = "";
	} else {
		err = pt_py_frame_name(py, idx, k, word, &name, &file, &line, &rec);
		if (err == -ENOMEM)
			return err;
		if (err)
			(*unreadable)++;
		/* Interned by (code object record, line); bit 63 set, which no native address has. */
		key = PT_PY_TAG | ((uint64_t)((line < 0 ? 0 : line + 1) & PT_PY_IDX_MAX) << PT_PY_IDX_SHIFT) |
		      (rec & PT_PY_CODE_MASK);
	}
	h = (uint32_t)hash64(key) & (t->cap - 1);
	while (t->keys[h]) {
		if (t->keys[h] == key + 1)
			return (int)t->vals[h];
		h = (h + 1) & (t->cap - 1);
	}
	fi = add_frame(p, cap, NULL, 0, false, name ? name : "[python]");
	if (fi < 0)
		return fi;
	free(p->frames[fi].module);
	p->frames[fi].module = strdup(file ? file : "");
	if (!p->frames[fi].module)
		return -ENOMEM;
	p->frames[fi].offset = line > 0 ? (uint64_t)line : 0;
	t->keys[h] = key + 1;
	t->vals[h] = (uint32_t)fi;
	return fi;
}

static bool is_eval_frame(const char *func)
{
	static const char eval[] = "_PyEval_EvalFrameDefault";

	/* Also its split-off cold part ("_PyEval_EvalFrameDefault.cold"). */
	return func && strncmp(func, eval, sizeof(eval) - 1) == 0 &&
	       (func[sizeof(eval) - 1] == 0 || func[sizeof(eval) - 1] == '.');
}

/* Build the frame list of one kernel stack (leaf first), cut at the first non-code frame,
 * with its Python frames (if any) in place of the interpreter's eval frames. */
static int stack_frames(struct intern *t, struct pt_profile *p, uint32_t *fcap,
			struct pt_symbolizer *sym, uint32_t idx, const struct pt_stack_rec *s,
			const struct pt_py_stack *pys, struct pt_py_resolver *py, uint32_t *out,
			uint32_t *n, struct pt_collect_stats *cs)
{
	uint32_t i, nr = s->nr > PT_MAX_FRAMES ? PT_MAX_FRAMES : s->nr, nn = 0, nw, nit, unmatched;
	uint32_t native[PT_MAX_FRAMES];
	bool is_eval[PT_MAX_FRAMES];
	struct pt_py_item items[MAX_MERGED];
	int fi;

	*n = 0;
	for (i = 0; i < nr; i++) {
		uint64_t pc = s->pcs[i];

		if (i > 0 && sym && !pt_sym_is_code(sym, pc))
			break;
		fi = intern_frame(t, p, fcap, sym, pc);
		if (fi < 0)
			return fi;
		native[nn++] = (uint32_t)fi;
	}
	nw = s->py_nr > PT_MAX_PY_FRAMES ? PT_MAX_PY_FRAMES : s->py_nr;
	if (!pys || !nw) {
		memcpy(out, native, nn * sizeof(*out));
		*n = nn;
		return 0;
	}
	for (i = 0; i < nn; i++)
		is_eval[i] = is_eval_frame(p->frames[native[i]].func);
	nit = pt_py_splice(is_eval, nn, pys->w, nw, items, MAX_MERGED, &unmatched);
	if (cs && unmatched)
		cs->py_unmatched++;
	for (i = 0; i < nit; i++) {
		if (items[i].kind == PT_PY_ITEM_NATIVE) {
			out[(*n)++] = native[items[i].i];
			continue;
		}
		fi = intern_py(t, p, fcap, py, idx, items[i].i, items[i].kind == PT_PY_ITEM_TRUNC ?
			       pt_py_boundary_word(PT_PY_B_TRUNC) : pys->w[items[i].i],
			       cs ? &cs->py_unreadable : &(uint64_t){ 0 });
		if (fi < 0)
			return fi;
		out[(*n)++] = (uint32_t)fi;
	}
	return 0;
}

int pt_stack_one(struct pt_symbolizer *sym, uint32_t idx, const struct pt_stack_rec *s,
		 const struct pt_py_stack *pys, struct pt_py_resolver *py, struct pt_profile *p,
		 uint32_t *fr, uint32_t *n)
{
	struct intern t = { .cap = 1024 };
	uint32_t fcap = 0;
	int err = -ENOMEM;

	memset(p, 0, sizeof(*p));
	*n = 0;
	t.keys = calloc(t.cap, sizeof(*t.keys));
	t.vals = calloc(t.cap, sizeof(*t.vals));
	if (t.keys && t.vals)
		err = stack_frames(&t, p, &fcap, sym, idx, s, pys, py, fr, n, NULL);
	free(t.keys);
	free(t.vals);
	return err;
}

int pt_collect(const struct pt_collect_in *in, struct pt_symbolizer *sym, struct pt_profile *p,
	       struct pt_map_stack **mstacks, uint32_t *nmstacks)
{
	struct intern t = { 0 };
	struct merge hm = { 0 }, mm = { 0 };
	uint32_t fcap = 0, scap = 0, mcap = 0, idx, n, k, slot, unknown_fi = UINT32_MAX;
	uint32_t **sfr = NULL, *snf = NULL, **mfr = NULL, *mnf = NULL;
	uint32_t fr[MAX_MERGED];
	struct pt_map_stack *ms = NULL;
	uint32_t nms = 0;
	int err = -ENOMEM;
	int64_t (*cnt)[4] = NULL;   /* per output stack: alloc, free, live, peak counts */

	memset(p, 0, sizeof(*p));
	t.cap = pow2_at_least((uint64_t)in->nstacks * 4 + 64);
	hm.cap = mm.cap = pow2_at_least(in->nstacks + 16);
	t.keys = calloc(t.cap, sizeof(*t.keys));
	t.vals = calloc(t.cap, sizeof(*t.vals));
	hm.keys = calloc(hm.cap, sizeof(*hm.keys));
	hm.vals = calloc(hm.cap, sizeof(*hm.vals));
	mm.keys = calloc(mm.cap, sizeof(*mm.keys));
	mm.vals = calloc(mm.cap, sizeof(*mm.vals));
	if (!t.keys || !t.vals || !hm.keys || !hm.vals || !mm.keys || !mm.vals)
		goto out;
	/* Fixed-point counts (sampling weights) are summed first and rounded once, below. */
	cnt = calloc(in->nstacks ? in->nstacks : 1, sizeof(*cnt));
	if (!cnt)
		goto out;

	for (idx = 0; idx < in->nstacks; idx++) {
		const struct pt_stack_stats *st = &in->stats[idx];
		bool heap = st->alloc_count || st->free_count;
		bool maps = st->mmap_count || st->munmap_count;

		if (!heap && !maps)
			continue;
		if (idx == PT_STACK_UNKNOWN || in->stacks[idx].nr == 0) {
			if (unknown_fi == UINT32_MAX) {
				int fi = add_frame(p, &fcap, NULL, 0, false, "[unknown stack]");

				if (fi < 0)
					goto out;
				unknown_fi = (uint32_t)fi;
			}
			fr[0] = unknown_fi;
			n = 1;
		} else if ((err = stack_frames(&t, p, &fcap, sym, idx, &in->stacks[idx],
					       in->py ? in->py[idx] : NULL, in->py_res, fr, &n,
					       in->cstats))) {
			goto out;
		}
		err = -ENOMEM;

		if (heap) {
			uint64_t h = frames_hash(fr, n);
			struct pt_stack *o;

			if (!merge_find(&hm, h, fr, n, &slot, (const uint32_t *const *)sfr, snf)) {
				if (p->nstacks == scap) {
					uint32_t nc = scap ? scap * 2 : 256;
					void *a = realloc(p->stacks, nc * sizeof(*p->stacks));
					void *b = realloc(sfr, nc * sizeof(*sfr));
					void *c = realloc(snf, nc * sizeof(*snf));

					if (a) p->stacks = a;
					if (b) sfr = b;
					if (c) snf = c;
					if (!a || !b || !c)
						goto out;
					scap = nc;
				}
				o = &p->stacks[p->nstacks];
				memset(o, 0, sizeof(*o));
				o->frames = malloc(n * sizeof(*o->frames));
				if (!o->frames)
					goto out;
				memcpy(o->frames, fr, n * sizeof(*fr));
				o->nframes = n;
				sfr[p->nstacks] = o->frames;
				snf[p->nstacks] = n;
				hm.keys[slot] = h;
				hm.vals[slot] = ++p->nstacks;
				k = p->nstacks - 1;
			} else {
				k = slot;
			}
			o = &p->stacks[k];
			cnt[k][0] += st->alloc_count;
			cnt[k][1] += st->free_count;
			cnt[k][2] += st->live_count > 0 ? st->live_count : 0;
			cnt[k][3] += pt_peak_count_of(st, in->peak_seq);
			o->v[PT_ALLOC_BYTES] += st->alloc_bytes;
			o->v[PT_FREE_BYTES] += st->free_bytes;
			o->v[PT_LIVE_BYTES] += st->live_bytes > 0 ? st->live_bytes : 0;
			o->v[PT_PEAK_BYTES] += (uint64_t)pt_peak_bytes_of(st, in->peak_seq);
		}
		if (maps) {
			uint64_t h = frames_hash(fr, n);

			if (!merge_find(&mm, h, fr, n, &slot, (const uint32_t *const *)mfr, mnf)) {
				if (nms == mcap) {
					uint32_t nc = mcap ? mcap * 2 : 64;
					void *a = realloc(ms, nc * sizeof(*ms));
					void *b = realloc(mfr, nc * sizeof(*mfr));
					void *c = realloc(mnf, nc * sizeof(*mnf));

					if (a) ms = a;
					if (b) mfr = b;
					if (c) mnf = c;
					if (!a || !b || !c)
						goto out;
					mcap = nc;
				}
				memset(&ms[nms], 0, sizeof(ms[nms]));
				ms[nms].frames = malloc(n * sizeof(*fr));
				if (!ms[nms].frames)
					goto out;
				memcpy(ms[nms].frames, fr, n * sizeof(*fr));
				ms[nms].nframes = n;
				mfr[nms] = ms[nms].frames;
				mnf[nms] = n;
				mm.keys[slot] = h;
				mm.vals[slot] = ++nms;
				k = nms - 1;
			} else {
				k = slot;
			}
			ms[k].mmap_count += st->mmap_count;
			ms[k].mmap_bytes += st->mmap_bytes;
			ms[k].munmap_count += st->munmap_count;
			ms[k].munmap_bytes += st->munmap_bytes;
		}
	}
	for (k = 0; k < p->nstacks; k++) {
		static const int m[4] = { PT_ALLOC_COUNT, PT_FREE_COUNT, PT_LIVE_COUNT, PT_PEAK_COUNT };
		int64_t half = in->count_shift ? 1LL << (in->count_shift - 1) : 0;

		for (int j = 0; j < 4; j++)
			p->stacks[k].v[m[j]] = (uint64_t)((cnt[k][j] + half) >> in->count_shift);
	}
	err = 0;
out:
	free(cnt);
	free(t.keys);
	free(t.vals);
	free(hm.keys);
	free(hm.vals);
	free(mm.keys);
	free(mm.vals);
	free(sfr);
	free(snf);
	free(mfr);
	free(mnf);
	*mstacks = ms;
	*nmstacks = nms;
	return err;
}
