// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * frames.c — which frames of a stack are shown: the pure rule of frames.h.
 */
#include <stdio.h>
#include <string.h>
#include "profile/frames.h"

const char *pt_frames_mode_name(enum pt_frames_mode m)
{
	switch (m) {
	case PT_FRAMES_ALL: return "all";
	case PT_FRAMES_LANG: return "python";
	default: return "collapsed";
	}
}

int pt_interp_name(const char *module, char *buf, size_t len)
{
	static const char *const interps[] = { "python", "node" };
	const char *base, *so;
	size_t blen, k;

	if (!module || !*module || module[0] == '[')
		return 0;
	base = strrchr(module, '/');
	base = base ? base + 1 : module;
	if (strncmp(base, "lib", 3) == 0)
		base += 3;
	/* "python3.11", "libpython3.11.so.1.0", "node", "libnode.so.108" — not "nodejs-foo.so". */
	so = strstr(base, ".so");
	blen = so ? (size_t)(so - base) : strlen(base);
	for (k = 0; k < sizeof(interps) / sizeof(interps[0]); k++) {
		size_t il = strlen(interps[k]), j;

		if (blen < il || strncmp(base, interps[k], il))
			continue;
		/* After the name only a version: digits and dots (a debug build's "d" too). */
		for (j = il; j < blen; j++)
			if (!(base[j] >= '0' && base[j] <= '9') && base[j] != '.' &&
			    !(base[j] == 'd' && j == blen - 1))
				break;
		if (j < blen)
			continue;
		snprintf(buf, len, "%.*s", (int)blen, base);
		return 1;
	}
	return 0;
}

static int named(const char *f)
{
	return f && *f && strncmp(f, "[unknown", 8) != 0;
}

enum pt_frame_class pt_frame_class(const struct pt_frame *fr)
{
	const char *mod = fr->module ? fr->module : "";
	char name[64];

	/* Python frames are synthetic (no address); their markers are "[python ...]". */
	if (!fr->addr)
		return fr->func && *fr->func && (fr->func[0] != '[' || strncmp(fr->func, "[python", 7) == 0) ?
		       PT_FC_LANG : PT_FC_NATIVE;
	/* JIT code the runtime's perf map names lies in anonymous memory. */
	if (named(fr->func) && (!*mod || strncmp(mod, "[anon:", 6) == 0 || strncmp(mod, "/memfd:", 7) == 0))
		return PT_FC_LANG;
	if (!named(fr->func) && pt_interp_name(mod, name, sizeof(name)))
		return PT_FC_INTERP;
	return PT_FC_NATIVE;
}

static int same_module(const struct pt_frame *a, const struct pt_frame *b)
{
	return strcmp(a->module ? a->module : "", b->module ? b->module : "") == 0;
}

/* The run of PT_FC_INTERP frames in fr[i]'s module starting at i (fr[i] is one). */
static uint32_t interp_run(const struct pt_frame *const *fr, uint32_t n, uint32_t i)
{
	uint32_t j = i + 1;

	while (j < n && pt_frame_class(fr[j]) == PT_FC_INTERP && same_module(fr[i], fr[j]))
		j++;
	return j - i;
}

static uint32_t reduce_collapsed(const struct pt_frame *const *fr, uint32_t n,
				 struct pt_frame_item *out, struct pt_frames_count *c)
{
	uint32_t i = 0, k = 0;

	while (i < n) {
		if (pt_frame_class(fr[i]) != PT_FC_INTERP) {
			out[k++] = (struct pt_frame_item){ .i = i, .run = 0 };
			i++;
			continue;
		}
		out[k] = (struct pt_frame_item){ .i = i, .run = interp_run(fr, n, i) };
		c->collapsed_frames += out[k].run;
		c->collapsed_runs++;
		i += out[k++].run;
	}
	return k;
}

/* The allocating native frame: the innermost named native frame below the first language
 * frame (end), else the leaf (an unnamed interpreter leaf as its collapsed run). */
static struct pt_frame_item alloc_frame(const struct pt_frame *const *fr, uint32_t n, uint32_t end)
{
	uint32_t i;

	for (i = 0; i < end; i++)
		if (pt_frame_class(fr[i]) == PT_FC_NATIVE && named(fr[i]->func))
			return (struct pt_frame_item){ .i = i, .run = 0 };
	if (pt_frame_class(fr[0]) == PT_FC_INTERP)
		return (struct pt_frame_item){ .i = 0, .run = interp_run(fr, n, 0) };
	return (struct pt_frame_item){ .i = 0, .run = 0 };
}

static uint32_t reduce_lang(const struct pt_frame *const *fr, uint32_t n,
			    struct pt_frame_item *out, struct pt_frames_count *c)
{
	uint32_t i, k = 0, first = n, kept = 0;

	for (i = 0; i < n && first == n; i++)
		if (pt_frame_class(fr[i]) == PT_FC_LANG)
			first = i;
	/* A language frame that allocated itself (JIT code calling malloc) is its own site. */
	if (first > 0) {
		out[k] = alloc_frame(fr, n, first);
		if (out[k].run) {
			c->collapsed_frames += out[k].run;
			c->collapsed_runs++;
			kept += out[k].run;
		} else {
			kept++;
		}
		k++;
	}
	for (i = first; i < n; i++)
		if (pt_frame_class(fr[i]) == PT_FC_LANG) {
			out[k++] = (struct pt_frame_item){ .i = i, .run = 0 };
			kept++;
		}
	c->hidden_frames += n - kept;
	return k;
}

uint32_t pt_frames_reduce(const struct pt_frame *const *fr, uint32_t n, enum pt_frames_mode mode,
			  struct pt_frame_item *out, struct pt_frames_count *cnt)
{
	struct pt_frames_count c = { 0 };
	uint32_t i, k;

	if (mode == PT_FRAMES_ALL || n == 0) {
		for (i = 0; i < n; i++)
			out[i] = (struct pt_frame_item){ .i = i, .run = 0 };
		return n;
	}
	k = mode == PT_FRAMES_LANG ? reduce_lang(fr, n, out, &c) : reduce_collapsed(fr, n, out, &c);
	if (cnt) {
		cnt->collapsed_frames += c.collapsed_frames;
		cnt->collapsed_runs += c.collapsed_runs;
		cnt->hidden_frames += c.hidden_frames;
		cnt->stacks_changed += c.collapsed_frames || c.hidden_frames;
	}
	return k;
}
