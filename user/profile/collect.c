// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * collect.c — turn the kernel's per-stack tables into a symbolized pt_profile.
 *
 * Frames are interned by address. A frame-pointer walk through code built without frame
 * pointers yields garbage after the first frame; a stack is cut at the first return address
 * that lies in no executable mapping, and stacks that become identical are merged.
 *
 * Every name enters the profile here (ELF and demangled symbols, perf-map JIT names, Python
 * qualnames and file names, module paths), and here it is sanitized (util/fmt.h, pt_sanitize):
 * the target controls these bytes, and each writer — text, folded, JSON, SVG, pprof,
 * speedscope, the invocation reports — prints from the profile, so one rule at the one door
 * covers them all and no writer can forget it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "util/fmt.h"
#include "profile/collect.h"
#include "profile/frames.h"
#include "bpf/peak.h"
#include "python/python.h"

/* Frames of one merged stack: native frames plus the Python frames spliced into them. */
#define MAX_MERGED (PT_MAX_FRAMES + PT_MAX_PY_FRAMES)

struct intern {
	uint64_t *keys;     /* addr + 1 (0 = empty) */
	uint32_t *vals;
	uint32_t cap;
	/* Per frame of the profile: 0 not looked at yet, 1 an unnamed interpreter frame
	 * (PT_FC_INTERP), 2 any other; ncls entries. */
	uint8_t *cls;
	uint32_t ncls;
	/* The root frame of stacks the kernel kept cut (pt_stack_rec.cut), per tier; 0: not
	 * made yet (frame index + 1). */
	uint32_t cut_frame[PT_TIERS];
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
	bool oom = false;

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
		fr->func = pt_sanitize_dup(synthetic);
		fr->module = strdup("");
	} else {
		/* A return address points after the call; look up the call itself. */
		memset(&res, 0, sizeof(res));
		if (sym && pt_sym_resolve(sym, is_ret && addr ? addr - 1 : addr, &res) == 0) {
			fr->offset = res.offset + (is_ret && addr ? 1 : 0);
			fr->func_off = (uint32_t)(res.func_off + (is_ret && addr ? 1 : 0));
			fr->module = pt_sanitize_dup(res.module);
			fr->func = pt_sanitize_dup(res.func);
			/* Absent stays NULL: only an allocation that fails is an error. */
			fr->file = res.file ? pt_sanitize_dup(res.file) : NULL;
			fr->line = fr->file ? res.line : 0;
			fr->build_id = res.build_id ? strdup(res.build_id) : NULL;
			oom = (res.file && !fr->file) || (res.build_id && !fr->build_id);
		} else {
			fr->module = strdup("");
			fr->func = strdup("");
		}
	}
	if (oom || !fr->func || !fr->module) {
		free(fr->func);
		free(fr->module);
		free(fr->file);
		free(fr->build_id);
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

/* Merge table for stacks after truncation: one word a slot, the frame list's hash (its high
 * 32 bits; the low ones choose the slot) over the output stack's index + 1, 0 when free. One
 * word, not a key and a value in two arrays: every probe was two cache misses. A 32-bit key
 * that matches by chance costs a comparison of the frames. */
struct merge {
	uint64_t *slot;
	uint32_t cap;
};

#define MERGE_KEY(h) ((h) & 0xffffffff00000000ULL)

static uint64_t frames_hash(const uint32_t *fr, uint32_t n)
{
	uint64_t h = 0x9E3779B97F4A7C15ULL ^ n;
	uint32_t i;

	for (i = 0; i < n; i++)
		h = hash64(h ^ fr[i]);
	return h | 1;
}

/* Entry k's frames (their number in *n) of the stacks a merge table indexes (ctx). */
typedef const uint32_t *(*frames_of_fn)(const void *ctx, uint32_t k, uint32_t *n);

static int merge_find(struct merge *m, uint64_t h, const uint32_t *fr, uint32_t n,
		      uint32_t *out, frames_of_fn frames_of, const void *ctx)
{
	uint32_t i = (uint32_t)h & (m->cap - 1), kn;
	const uint32_t *kf;

	while (m->slot[i]) {
		uint32_t k = (uint32_t)m->slot[i] - 1;

		if (MERGE_KEY(m->slot[i]) == MERGE_KEY(h) && (kf = frames_of(ctx, k, &kn)) && kn == n &&
		    memcmp(kf, fr, n * sizeof(*fr)) == 0) {
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
	p->frames[fi].module = pt_sanitize_dup(file);
	if (!p->frames[fi].module)
		return -ENOMEM;
	p->frames[fi].offset = line > 0 ? (uint64_t)line : 0;
	/* The position as fields too, for pprof: its function is the code object, not the line. */
	if (rec && file && *file) {
		const char *fn;
		int first;

		if (pt_py_frame_func(py, rec, &fn, &first) == -ENOMEM)
			return -ENOMEM;
		if (fn) {
			p->frames[fi].func_name = pt_sanitize_dup(fn);
			p->frames[fi].file = pt_sanitize_dup(file);
			if (!p->frames[fi].func_name || !p->frames[fi].file)
				return -ENOMEM;
			p->frames[fi].line = line > 0 ? (uint32_t)line : 0;
			p->frames[fi].start_line = first > 0 ? (uint32_t)first : 0;
		}
	}
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

/* A stack the kernel kept cut (its table's part for whole stacks was full: pt_tier_start) ends
 * in a frame saying so, at the root, where its missing callers would be. */
static int cut_root(struct intern *t, struct pt_profile *p, uint32_t *fcap,
		   const struct pt_stack_rec *s, uint32_t *out, uint32_t *n)
{
	int fi;

	if (!s->cut || s->cut >= PT_TIERS || *n >= MAX_MERGED)
		return 0;
	if (!t->cut_frame[s->cut]) {
		fi = add_frame(p, fcap, NULL, 0, false, s->cut == PT_TIER_LEAF ?
			       "[stack table full: cut to the leaf]" :
			       "[stack table full: outer frames cut]");
		if (fi < 0)
			return fi;
		t->cut_frame[s->cut] = (uint32_t)fi + 1;
	}
	out[(*n)++] = t->cut_frame[s->cut] - 1;
	return 0;
}

/* Build the frame list of one kernel stack (leaf first), cut at the first non-code frame,
 * with its Python frames (if any) in place of the interpreter's eval frames. */
static int stack_frames_raw(struct intern *t, struct pt_profile *p, uint32_t *fcap,
			struct pt_symbolizer *sym, uint32_t idx, const struct pt_stack_rec *s,
			const struct pt_py_stack *pys, struct pt_py_resolver *py, uint32_t *out,
			uint32_t *n, struct pt_collect_stats *cs)
{
	uint32_t i, nr = s->nr > PT_MAX_FRAMES ? PT_MAX_FRAMES : s->nr, nn = 0, nw, nit, unmatched;
	uint32_t native[PT_MAX_FRAMES];
	bool is_eval[PT_MAX_FRAMES];
	struct pt_py_item items[MAX_MERGED];
	int fi;
	/* After an exec, a stack recorded in an earlier image is named against that image's
	 * mappings, each frame on its own (the interning is by address, which the images share). */
	struct pt_symbolizer *img = pt_sym_for_stack(sym, idx);
	bool unnamed = false;

	*n = 0;
	for (i = 0; i < nr; i++) {
		uint64_t pc = s->pcs[i];

		if (i > 0 && img && !pt_sym_is_code(img, pc))
			break;
		fi = img == sym ? intern_frame(t, p, fcap, sym, pc) : add_frame(p, fcap, img, pc, true, NULL);
		if (fi < 0)
			return fi;
		unnamed |= img != sym && !p->frames[fi].module[0];
		native[nn++] = (uint32_t)fi;
	}
	if (cs && unnamed)
		cs->exec_unnamed++;
	nw = s->py_nr > PT_MAX_PY_FRAMES ? PT_MAX_PY_FRAMES : s->py_nr;
	if (!pys || !nw) {
		memcpy(out, native, nn * sizeof(*out));
		*n = nn;
		return cut_root(t, p, fcap, s, out, n);
	}
	for (i = 0; i < nn; i++)
		is_eval[i] = is_eval_frame(p->frames[native[i]].func);
	nit = pt_py_splice(is_eval, nn, pys->w, nw, items, MAX_MERGED, &unmatched);
	/* A cut stack's Python frames outlive its native eval frames by design. */
	if (cs && unmatched && !s->cut)
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
	return cut_root(t, p, fcap, s, out, n);
}

/* --frames, for every stack of this process's profiles (pt_collect_set_frames). */
static enum pt_frames_mode frames_mode = PT_FRAMES_COLLAPSED;

void pt_collect_set_frames(int mode)
{
	frames_mode = (enum pt_frames_mode)mode;
}

/* The allocator's object, for pt_frame_kind (pt_collect_set_allocator); "" = not known. */
static char alloc_module[4096];

void pt_collect_set_allocator(const char *module)
{
	snprintf(alloc_module, sizeof(alloc_module), "%s", module ? module : "");
}

/* Each frame's kind, once every frame of the profile is in (collapsed ones included). */
static void set_kinds(struct pt_profile *p)
{
	uint32_t i;

	for (i = 0; i < p->nframes; i++)
		p->frames[i].kind = (uint8_t)pt_frame_kind(&p->frames[i], alloc_module);
}

/* The "[python3.11 internals]" frame standing for a run of unnamed frames in module mod,
 * interned by module: the key has bit 62 set (no native address or Python key has it). */
static int intern_collapsed(struct intern *t, struct pt_profile *p, uint32_t *cap, const char *mod)
{
	uint64_t key = 0x9E3779B97F4A7C15ULL;
	char name[64], label[96];
	const char *c;
	uint32_t h;
	int fi;

	for (c = mod; *c; c++)
		key = hash64(key ^ (unsigned char)*c);
	key = (1ULL << 62) | (key & ((1ULL << 62) - 1));
	h = (uint32_t)hash64(key) & (t->cap - 1);
	while (t->keys[h]) {
		if (t->keys[h] == key + 1 && !strcmp(p->frames[t->vals[h]].module, mod))
			return (int)t->vals[h];
		h = (h + 1) & (t->cap - 1);
	}
	if (!pt_interp_name(mod, name, sizeof(name)))
		snprintf(name, sizeof(name), "interpreter");
	snprintf(label, sizeof(label), "[%s internals]", name);
	fi = add_frame(p, cap, NULL, 0, false, label);
	if (fi < 0)
		return fi;
	free(p->frames[fi].module);
	if (!(p->frames[fi].module = strdup(mod)))
		return -ENOMEM;
	t->keys[h] = key + 1;
	t->vals[h] = (uint32_t)fi;
	return fi;
}

/* Whether any of the frames fr[0..n) is an unnamed interpreter frame, each frame's class
 * looked at once per profile: the reduction below asks for it for every frame of every stack
 * (2.6M times at 2^17 stacks, 13% of pt_collect), while a profile has few distinct frames. */
static bool has_interp(struct intern *t, const struct pt_profile *p, const uint32_t *fr, uint32_t n)
{
	bool any = false;
	uint32_t i;

	if (t->ncls < p->nframes) {
		uint32_t nc = p->nframes * 2;
		uint8_t *c = realloc(t->cls, nc);

		if (!c)
			return true;	/* ask the reduction itself */
		memset(c + t->ncls, 0, nc - t->ncls);
		t->cls = c;
		t->ncls = nc;
	}
	for (i = 0; i < n; i++) {
		uint8_t *c = &t->cls[fr[i]];

		if (!*c)
			*c = pt_frame_class(&p->frames[fr[i]]) == PT_FC_INTERP ? 1 : 2;
		any |= *c == 1;
	}
	return any;
}

/* stack_frames_raw, then the frames --frames shows (profile/frames.h), counted in fc. */
static int stack_frames(struct intern *t, struct pt_profile *p, uint32_t *fcap,
			struct pt_symbolizer *sym, uint32_t idx, const struct pt_stack_rec *s,
			const struct pt_py_stack *pys, struct pt_py_resolver *py, uint32_t *out,
			uint32_t *n, struct pt_collect_stats *cs, struct pt_frames_count *fc)
{
	const struct pt_frame *fp[MAX_MERGED];
	struct pt_frame_item items[MAX_MERGED];
	uint32_t raw[MAX_MERGED], i, nit;
	int err, fi;

	err = stack_frames_raw(t, p, fcap, sym, idx, s, pys, py, out, n, cs);
	if (err || frames_mode == PT_FRAMES_ALL)
		return err;
	if (frames_mode == PT_FRAMES_COLLAPSED && !has_interp(t, p, out, *n))
		return 0;	/* nothing to collapse: the reduction would keep every frame */
	memcpy(raw, out, *n * sizeof(*raw));
	for (i = 0; i < *n; i++)
		fp[i] = &p->frames[raw[i]];
	nit = pt_frames_reduce(fp, *n, frames_mode, items, fc);
	/* p->frames may move as collapsed frames are added: fp is not used past here. */
	for (i = 0; i < nit; i++) {
		if (!items[i].run) {
			out[i] = raw[items[i].i];
			continue;
		}
		fi = intern_collapsed(t, p, fcap, p->frames[raw[items[i].i]].module);
		if (fi < 0)
			return fi;
		out[i] = (uint32_t)fi;
	}
	*n = nit;
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
		err = stack_frames(&t, p, &fcap, sym, idx, s, pys, py, fr, n, NULL, NULL);
	set_kinds(p);
	free(t.keys);
	free(t.vals);
	free(t.cls);
	return err;
}

/* The state of one pt_collect: the frame intern table, the merge tables of heap and mmap/brk
 * stacks with the frame lists they compare, and the counts summed before rounding. */
#define STATS_CHUNK 256

struct collector {
	struct intern t;
	struct merge hm, mm;
	uint32_t fcap, scap, mcap;
	struct pt_map_stack *ms;
	uint32_t nms;
	/* The kernel's stats read through a window (in->stats NULL): never the whole table. */
	uint32_t sfirst, scount;
	uint32_t skeys[STATS_CHUNK];
	struct pt_stack_stats swin[STATS_CHUNK];
};

/* Stack idx's stats from the window, moved there if needed; NULL if the map read failed. */
static const struct pt_stack_stats *stats_at(struct collector *c, const struct pt_collect_in *in,
					     uint32_t idx)
{
	int got;

	if (idx >= c->sfirst && idx - c->sfirst < c->scount)
		return &c->swin[idx - c->sfirst];
	got = pt_map_read_range(in->stats_fd, idx,
				in->nstacks - idx < STATS_CHUNK ? in->nstacks - idx : STATS_CHUNK,
				c->skeys, c->swin, sizeof(c->swin[0]));
	if (got <= 0)
		return NULL;
	c->sfirst = idx;
	c->scount = (uint32_t)got;
	return &c->swin[0];
}

static int collector_init(struct collector *c, uint32_t nstacks)
{
	c->t.cap = pow2_at_least((uint64_t)nstacks * 4 + 64);
	/* At most two-thirds full, linear probing's comfort (pow2_at_least's doubling alone left
	 * it a quarter full at 2^17 stacks: 2 MiB more). */
	c->hm.cap = c->mm.cap = pow2_at_least(((uint64_t)nstacks + 16) * 3 / 4);
	c->t.keys = calloc(c->t.cap, sizeof(*c->t.keys));
	c->t.vals = calloc(c->t.cap, sizeof(*c->t.vals));
	c->hm.slot = calloc(c->hm.cap, sizeof(*c->hm.slot));
	c->mm.slot = calloc(c->mm.cap, sizeof(*c->mm.slot));
	if (!c->t.keys || !c->t.vals || !c->hm.slot || !c->mm.slot)
		return -ENOMEM;
	return 0;
}

/* Everything but the outputs (p's stacks, c->ms), which the caller owns. */
static void collector_free(struct collector *c)
{
	free(c->t.keys);
	free(c->t.vals);
	free(c->t.cls);
	free(c->hm.slot);
	free(c->mm.slot);
}

static const uint32_t *heap_frames(const void *ctx, uint32_t k, uint32_t *n)
{
	const struct pt_profile *p = ctx;

	*n = p->stacks[k].nframes;
	return p->stacks[k].frames;
}

static const uint32_t *map_frames(const void *ctx, uint32_t k, uint32_t *n)
{
	const struct collector *c = ctx;

	*n = c->ms[k].nframes;
	return c->ms[k].frames;
}

/* The output heap stack with frames fr[0..n), added if new: its index in *k. */
static int heap_stack(struct collector *c, struct pt_profile *p, const uint32_t *fr, uint32_t n,
		      uint32_t *k)
{
	uint64_t h = frames_hash(fr, n);
	struct pt_stack *o;
	uint32_t slot;

	if (merge_find(&c->hm, h, fr, n, &slot, heap_frames, p)) {
		*k = slot;
		return 0;
	}
	if (p->nstacks == c->scap) {
		uint32_t nc = c->scap ? c->scap * 2 : 256;
		void *a = realloc(p->stacks, nc * sizeof(*p->stacks));

		if (!a)
			return -ENOMEM;
		p->stacks = a;
		c->scap = nc;
	}
	o = &p->stacks[p->nstacks];
	memset(o, 0, sizeof(*o));
	o->frames = malloc(n * sizeof(*o->frames));
	if (!o->frames)
		return -ENOMEM;
	memcpy(o->frames, fr, n * sizeof(*fr));
	o->nframes = n;
	c->hm.slot[slot] = MERGE_KEY(h) | ++p->nstacks;
	*k = p->nstacks - 1;
	return 0;
}

/* The output mmap/brk stack with frames fr[0..n), added if new: its index in *k. */
static int map_stack(struct collector *c, const uint32_t *fr, uint32_t n, uint32_t *k)
{
	uint64_t h = frames_hash(fr, n);
	uint32_t slot;

	if (merge_find(&c->mm, h, fr, n, &slot, map_frames, c)) {
		*k = slot;
		return 0;
	}
	if (c->nms == c->mcap) {
		uint32_t nc = c->mcap ? c->mcap * 2 : 64;
		void *a = realloc(c->ms, nc * sizeof(*c->ms));

		if (!a)
			return -ENOMEM;
		c->ms = a;
		c->mcap = nc;
	}
	memset(&c->ms[c->nms], 0, sizeof(c->ms[c->nms]));
	c->ms[c->nms].frames = malloc(n * sizeof(*fr));
	if (!c->ms[c->nms].frames)
		return -ENOMEM;
	memcpy(c->ms[c->nms].frames, fr, n * sizeof(*fr));
	c->ms[c->nms].nframes = n;
	c->mm.slot[slot] = MERGE_KEY(h) | ++c->nms;
	*k = c->nms - 1;
	return 0;
}

/* One kernel stack's figures into the output stacks its frames fr[0..n) merged into. */
static int add_stack(struct collector *c, struct pt_profile *p, const struct pt_stack_stats *st,
		     uint64_t peak_seq, uint64_t rss_seq, const uint32_t *fr, uint32_t n,
		     const int64_t *leaked, uint32_t *out, uint8_t kind)
{
	int64_t rss_peak = st->rss_snap_seq == rss_seq ? st->rss_peak : st->rss_now;
	uint32_t k;

	p->unheld_bytes += st->unheld_bytes;

	if (st->alloc_count || st->free_count || st->rss_now > 0 || rss_peak > 0) {
		struct pt_stack *o;

		if (heap_stack(c, p, fr, n, &k))
			return -ENOMEM;
		o = &p->stacks[k];
		/* Fixed-point counts (sampling weights) are summed as they come, in two's
		 * complement, and rounded once at the end (pt_collect): in place, so no array of
		 * sums the size of the stack table (5 MiB at 2^17 stacks). */
		o->v[PT_ALLOC_COUNT] += st->alloc_count;
		o->v[PT_FREE_COUNT] += st->free_count;
		o->v[PT_LIVE_COUNT] += (uint64_t)(pt_live_count_of(st) > 0 ? pt_live_count_of(st) : 0);
		o->v[PT_PEAK_COUNT] += (uint64_t)pt_peak_count_of(st, peak_seq);
		o->v[PT_ALLOC_BYTES] += st->alloc_bytes;
		o->v[PT_FREE_BYTES] += st->free_bytes;
		o->v[PT_LIVE_BYTES] += pt_live_bytes_of(st) > 0 ? pt_live_bytes_of(st) : 0;
		o->v[PT_PEAK_BYTES] += (uint64_t)pt_peak_bytes_of(st, peak_seq);
		o->v[PT_RSS_PEAK_BYTES] += rss_peak > 0 ? (uint64_t)rss_peak : 0;
		o->v[PT_RSS_NOW_BYTES] += st->rss_now > 0 ? (uint64_t)st->rss_now : 0;
		if (kind && (rss_peak > 0 || st->rss_now > 0)) {
			if (!o->rss_kind)
				o->rss_kind = kind;
			else if (o->rss_kind != kind)
				p->rss_kind_mixed++;
		}
		if (leaked) {
			o->v[PT_LEAKED_BYTES] += leaked[0] > 0 ? (uint64_t)leaked[0] : 0;
			o->v[PT_LEAKED_COUNT] += leaked[1] > 0 ? (uint64_t)leaked[1] : 0;
		}
		if (out)
			*out = k;
	}
	if (st->mmap_count || st->munmap_count) {
		if (map_stack(c, fr, n, &k))
			return -ENOMEM;
		c->ms[k].mmap_count += st->mmap_count;
		c->ms[k].mmap_bytes += st->mmap_bytes;
		c->ms[k].munmap_count += st->munmap_count;
		c->ms[k].munmap_bytes += st->munmap_bytes;
	}
	return 0;
}

int pt_collect(const struct pt_collect_in *in, struct pt_symbolizer *sym, struct pt_profile *p,
	       struct pt_map_stack **mstacks, uint32_t *nmstacks)
{
	struct collector c = { 0 };
	struct pt_frames_count fc = { 0 };
	uint32_t idx, n, k, unknown_fi = UINT32_MAX;
	uint32_t fr[MAX_MERGED];
	struct pt_stack_rec rec;
	int err;

	memset(p, 0, sizeof(*p));
	for (idx = 0; in->stack_out && idx < in->nstacks; idx++)
		in->stack_out[idx] = UINT32_MAX;
	if ((err = collector_init(&c, in->nstacks)))
		goto out;
	for (idx = 0; idx < in->nstacks; idx++) {
		const struct pt_stack_stats *st = in->stats ? &in->stats[idx] : stats_at(&c, in, idx);

		if (!st) {
			err = -EIO;	/* the stats map could not be read: no partial profile */
			goto out;
		}

		/* rss_peak counts only when taken at the last RSS peak (an exec starts a new one). */
		if (!st->alloc_count && !st->free_count && !st->mmap_count && !st->munmap_count &&
		    !st->rss_now && !(st->rss_snap_seq == in->rss_peak_seq && st->rss_peak))
			continue;
		if (idx == PT_STACK_UNKNOWN || idx >= in->stacks->n ||
		    pt_stack_table_nr(in->stacks, idx) == 0) {
			if (unknown_fi == UINT32_MAX) {
				int fi = add_frame(p, &c.fcap, NULL, 0, false, "[unknown stack]");

				if (fi < 0) {
					err = -ENOMEM;
					goto out;
				}
				unknown_fi = (uint32_t)fi;
			}
			fr[0] = unknown_fi;
			n = 1;
		} else if (pt_stack_table_get(in->stacks, idx, &rec),
			   (err = stack_frames(&c.t, p, &c.fcap, sym, idx, &rec,
					       in->py ? in->py[idx] : NULL, in->py_res, fr, &n,
					       in->cstats, &fc))) {
			goto out;
		}
		if ((err = add_stack(&c, p, st, in->peak_seq, in->rss_peak_seq, fr, n,
				     in->leaked ? in->leaked[idx] : NULL,
				     in->stack_out ? &in->stack_out[idx] : NULL,
				     in->rss_kind ? in->rss_kind[idx] : 0)))
			goto out;
	}
	for (k = 0; k < p->nstacks; k++) {
		static const int m[5] = { PT_ALLOC_COUNT, PT_FREE_COUNT, PT_LIVE_COUNT, PT_PEAK_COUNT,
					  PT_LEAKED_COUNT };
		int64_t half = in->count_shift ? 1LL << (in->count_shift - 1) : 0;

		for (int j = 0; j < 5; j++)
			p->stacks[k].v[m[j]] = (uint64_t)(((int64_t)p->stacks[k].v[m[j]] + half) >>
							  in->count_shift);
	}
out:
	set_kinds(p);
	p->frames_mode = (int)frames_mode;
	p->collapsed_frames = fc.collapsed_frames;
	p->collapsed_runs = fc.collapsed_runs;
	p->hidden_frames = fc.hidden_frames;
	p->frames_stacks_changed = fc.stacks_changed;
	collector_free(&c);
	*mstacks = c.ms;
	*nmstacks = c.nms;
	return err;
}
