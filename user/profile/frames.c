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

const char *pt_frame_kind_name(enum pt_frame_kind k)
{
	switch (k) {
	case PT_FK_PYTHON: return "Python";
	case PT_FK_JIT: return "JS/JIT";
	case PT_FK_ALLOC: return "allocator";
	case PT_FK_OTHER: return "other";
	default: return "native";
	}
}

static const char *basename_of(const char *path)
{
	const char *b = strrchr(path, '/');

	return b ? b + 1 : path;
}

/* A library that is an allocator and nothing else: every frame in it is the allocator's. */
static int allocator_library(const char *mod, const char *alloc_module)
{
	static const char *const libs[] = { "libjemalloc", "libtcmalloc", "libmimalloc",
					    "libhoard", "libtbbmalloc", "libsnmallocshim", "librpmalloc" };
	const char *b = basename_of(mod);
	size_t k;

	for (k = 0; k < sizeof(libs) / sizeof(libs[0]); k++)
		if (strncmp(b, libs[k], strlen(libs[k])) == 0)
			return 1;
	/* The object that defined malloc, when it is a library of its own (LD_PRELOAD=libfoo.so):
	 * not libc or musl's loader, which hold much else, nor the executable. By file name: in
	 * launch mode its path is the loader's search result, not the maps' spelling. */
	if (!alloc_module || !*alloc_module || strcmp(b, basename_of(alloc_module)) != 0)
		return 0;
	return strncmp(b, "lib", 3) == 0 && strstr(b, ".so") && strncmp(b, "libc.", 5) != 0 &&
	       strncmp(b, "libc-", 5) != 0;
}

/* An allocation entry point by name, in whatever module defines it. */
static int allocator_function(const char *f)
{
	static const char *const fns[] = {
		"malloc", "calloc", "realloc", "reallocarray", "free", "cfree", "memalign",
		"posix_memalign", "aligned_alloc", "valloc", "pvalloc", "malloc_usable_size",
		/* glibc's own names and internals, as its symbols name them */
		"__libc_malloc", "__libc_calloc", "__libc_realloc", "__libc_free", "__libc_memalign",
		"__libc_valloc", "__libc_pvalloc", "__posix_memalign", "_int_malloc", "_int_free",
		"_int_realloc", "_int_memalign", "_mid_memalign", "sysmalloc", "malloc_consolidate",
		"tcache_init", "_libc_malloc",
		/* jemalloc's non-standard API */
		"mallocx", "rallocx", "xallocx", "sallocx", "dallocx", "sdallocx", "nallocx",
		/* CPython's allocator API (pymalloc behind PyObject_Malloc) */
		"PyMem_Malloc", "PyMem_Calloc", "PyMem_Realloc", "PyMem_Free", "PyMem_RawMalloc",
		"PyMem_RawCalloc", "PyMem_RawRealloc", "PyMem_RawFree", "PyObject_Malloc",
		"PyObject_Calloc", "PyObject_Realloc", "PyObject_Free", "_PyObject_Malloc",
		"_PyObject_Calloc", "_PyObject_Realloc", "_PyObject_Free", "_PyMem_RawMalloc",
		"_PyMem_RawCalloc", "_PyMem_RawRealloc", "_PyMem_RawFree", "pymalloc_alloc",
		"pymalloc_free", "pymalloc_realloc",
	};
	size_t k;

	/* C++: "operator new(unsigned long)", "operator delete[](void*, unsigned long)" */
	if (strncmp(f, "operator new", 12) == 0 || strncmp(f, "operator delete", 15) == 0) {
		char c = f[f[9] == 'n' ? 12 : 15];

		return c == '\0' || c == '(' || c == '[';
	}
	if (strncmp(f, "je_", 3) == 0 || strncmp(f, "tc_", 3) == 0 || strncmp(f, "mi_", 3) == 0)
		f += 3;
	for (k = 0; k < sizeof(fns) / sizeof(fns[0]); k++)
		if (strcmp(f, fns[k]) == 0)
			return 1;
	return 0;
}

enum pt_frame_kind pt_frame_kind(const struct pt_frame *fr, const char *alloc_module)
{
	const char *mod = fr->module ? fr->module : "";
	const char *f = fr->func ? fr->func : "";

	if (!fr->addr) {
		if (strcmp(f, "[python]") == 0)
			return PT_FK_PYTHON;
		return !*f || f[0] == '[' ? PT_FK_OTHER : PT_FK_PYTHON;
	}
	if (!named(f)) {
		if (*mod && allocator_library(mod, alloc_module))
			return PT_FK_ALLOC;
		return *mod && mod[0] != '[' ? PT_FK_NATIVE : PT_FK_OTHER;
	}
	if (strncmp(f, "JS:", 3) == 0 || !*mod || strncmp(mod, "[anon:", 6) == 0 ||
	    strncmp(mod, "/memfd:", 7) == 0)
		return PT_FK_JIT;
	if (allocator_function(f) || allocator_library(mod, alloc_module))
		return PT_FK_ALLOC;
	return PT_FK_NATIVE;
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
