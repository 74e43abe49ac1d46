// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_frames: which frames --frames keeps (profile/frames.h), on hand-built frame arrays shaped
 * as a stripped CPython 3.11 and a node stack unwind them. */
#include <stdint.h>
#include <string.h>
#include "check.h"
#include "profile/frames.h"

#define PY "/usr/bin/python3.11"
#define LIBC "/usr/lib/x86_64-linux-gnu/libc.so.6"

/* Leaf first, as the demo's biggest peak stacks are. */
static struct pt_frame py_stack[] = {
	/* 0 */ { .addr = 0x5a7142, .offset = 0x5a7142, .func = "", .module = PY, .func_off = 0 },                    /* unnamed interpreter leaf */
	/* 1 */ { .addr = 0x599b48, .offset = 0x599b48, .func = "", .module = PY, .func_off = 0 },
	/* 2 */ { .addr = 0, .offset = 38, .func = "function:render:38", .module = "function.py", .func_off = 0 },     /* Python frames */
	/* 3 */ { .addr = 0, .offset = 49, .func = "function:handler:49", .module = "function.py", .func_off = 0 },
	/* 4 */ { .addr = 0x4fb51c, .offset = 0x4fb51c, .func = "PyEval_EvalCode", .module = PY, .func_off = 0xbb },  /* named: kept */
	/* 5 */ { .addr = 0x647d97, .offset = 0x647d97, .func = "", .module = PY, .func_off = 0 },
	/* 6 */ { .addr = 0x6456ef, .offset = 0x6456ef, .func = "[unknown]", .module = PY, .func_off = 0 },
	/* 7 */ { .addr = 0x651770, .offset = 0x651770, .func = "", .module = PY, .func_off = 0 },
	/* 8 */ { .addr = 0x7f0000001000, .offset = 0x27000, .func = "__libc_start_main", .module = LIBC, .func_off = 0x85 },
	/* 9 */ { .addr = 0x7f0000002000, .offset = 0x28000, .func = "", .module = LIBC, .func_off = 0 },              /* unnamed, not an interpreter */
};
#define NPY (sizeof(py_stack) / sizeof(py_stack[0]))

static uint32_t reduce(struct pt_frame *f, uint32_t n, enum pt_frames_mode m, struct pt_frame_item *out,
		       struct pt_frames_count *c)
{
	const struct pt_frame *fp[32];
	uint32_t i;

	for (i = 0; i < n; i++)
		fp[i] = &f[i];
	return pt_frames_reduce(fp, n, m, out, c);
}

static void test_names(void)
{
	char b[64];

	CHECK(pt_interp_name(PY, b, sizeof(b)) && !strcmp(b, "python3.11"), "interp: python3.11 (%s)", b);
	CHECK(pt_interp_name("/usr/lib/libpython3.12.so.1.0", b, sizeof(b)) && !strcmp(b, "python3.12"),
	      "interp: libpython3.12.so.1.0 is python3.12 (%s)", b);
	CHECK(pt_interp_name("/root/.nvm/versions/node/v20/bin/node", b, sizeof(b)) && !strcmp(b, "node"),
	      "interp: node");
	CHECK(pt_interp_name("/usr/lib/libnode.so.108", b, sizeof(b)) && !strcmp(b, "node"), "interp: libnode.so.108");
	CHECK(!pt_interp_name(LIBC, b, sizeof(b)), "interp: libc is not one");
	CHECK(!pt_interp_name("/usr/bin/python-argcomplete-check", b, sizeof(b)), "interp: python-foo is not one");
	CHECK(!pt_interp_name("/usr/lib/libnodejs-helper.so", b, sizeof(b)), "interp: libnodejs-helper is not one");
	CHECK(!pt_interp_name("", b, sizeof(b)) && !pt_interp_name("[vdso]", b, sizeof(b)), "interp: none for \"\" and [vdso]");
	CHECK(pt_frame_class(&py_stack[0]) == PT_FC_INTERP, "class: unnamed python3.11 frame is interpreter");
	CHECK(pt_frame_class(&py_stack[6]) == PT_FC_INTERP, "class: [unknown] python3.11 frame is interpreter");
	CHECK(pt_frame_class(&py_stack[2]) == PT_FC_LANG, "class: Python frame is language");
	CHECK(pt_frame_class(&py_stack[4]) == PT_FC_NATIVE, "class: named interpreter frame is native");
	CHECK(pt_frame_class(&py_stack[9]) == PT_FC_NATIVE, "class: unnamed libc frame is native");
	CHECK(pt_frame_class(&(struct pt_frame){ .addr = 0, .offset = 0, .func = "[python frames truncated]", .module = "", .func_off = 0 }) == PT_FC_LANG,
	      "class: the truncation marker is language");
	CHECK(pt_frame_class(&(struct pt_frame){ .addr = 0, .offset = 0, .func = "[unknown stack]", .module = "", .func_off = 0 }) == PT_FC_NATIVE,
	      "class: [unknown stack] is not language");
	CHECK(pt_frame_class(&(struct pt_frame){ .addr = 0x3e1000, .offset = 0x100, .func = "JS:*peaktraceJsAllocator /t/a.js:3", .module = "", .func_off = 0 }) == PT_FC_LANG,
	      "class: a perf-map JS frame in anonymous memory is language");
	CHECK(pt_frame_class(&(struct pt_frame){ .addr = 0x3e1000, .offset = 0x100, .func = "", .module = "", .func_off = 0 }) == PT_FC_NATIVE,
	      "class: unnamed anonymous code is not language");
}

static void test_collapsed(void)
{
	struct pt_frame_item it[32];
	struct pt_frames_count c = { 0 };
	uint32_t n = reduce(py_stack, NPY, PT_FRAMES_COLLAPSED, it, &c);
	static const struct pt_frame_item want[] = {
		{ 0, 2 }, { 2, 0 }, { 3, 0 }, { 4, 0 }, { 5, 3 }, { 8, 0 }, { 9, 0 },
	};
	uint32_t i;
	int same = n == sizeof(want) / sizeof(want[0]);

	for (i = 0; same && i < n; i++)
		same = it[i].i == want[i].i && it[i].run == want[i].run;
	CHECK(same, "collapsed: two runs of unnamed python3.11 frames, one frame each, the rest kept (%u items)", n);
	CHECK_EQ_U64(c.collapsed_frames, 5, "collapsed: frames counted");
	CHECK_EQ_U64(c.collapsed_runs, 2, "collapsed: runs counted");
	CHECK_EQ_U64(c.hidden_frames, 0, "collapsed: nothing hidden");
	CHECK_EQ_U64(c.stacks_changed, 1, "collapsed: one stack changed");

	/* Runs do not span modules: python3.11 then libpython3.12 stay two runs. */
	struct pt_frame two[] = {
		{ .addr = 0x1000, .offset = 0x1000, .func = "", .module = PY, .func_off = 0 },
		{ .addr = 0x7f00, .offset = 0x7f00, .func = "", .module = "/usr/lib/libpython3.12.so.1.0", .func_off = 0 },
	};
	n = reduce(two, 2, PT_FRAMES_COLLAPSED, it, NULL);
	CHECK(n == 2 && it[0].run == 1 && it[1].run == 1, "collapsed: one run per module (%u items)", n);

	memset(&c, 0, sizeof(c));
	n = reduce(py_stack, NPY, PT_FRAMES_ALL, it, &c);
	CHECK(n == NPY && it[0].i == 0 && it[0].run == 0 && it[NPY - 1].i == NPY - 1, "all: every frame kept");
	CHECK_EQ_U64(c.collapsed_frames + c.hidden_frames + c.stacks_changed, 0, "all: nothing counted");
	CHECK_EQ_U64(reduce(py_stack, 0, PT_FRAMES_COLLAPSED, it, NULL), 0, "collapsed: empty stack stays empty");
}

static void test_lang(void)
{
	struct pt_frame_item it[32];
	struct pt_frames_count c = { 0 };
	uint32_t n;

	/* Unnamed interpreter leaf: the allocating frame is its run, collapsed. */
	n = reduce(py_stack, NPY, PT_FRAMES_LANG, it, &c);
	CHECK(n == 3 && it[0].i == 0 && it[0].run == 2 && it[1].i == 2 && it[1].run == 0 &&
	      it[2].i == 3 && it[2].run == 0, "python: the allocating run and the two Python frames (%u items)", n);
	CHECK_EQ_U64(c.hidden_frames, NPY - 4, "python: the other frames counted hidden");
	CHECK_EQ_U64(c.collapsed_frames, 2, "python: the allocating run counted collapsed");

	/* A named native frame below the Python ones is the allocating frame. */
	struct pt_frame named[] = {
		{ .addr = 0x4fb51c, .offset = 0x4fb51c, .func = "", .module = PY, .func_off = 0 },
		{ .addr = 0x4fb600, .offset = 0x4fb600, .func = "PyByteArray_Resize", .module = PY, .func_off = 0x1f2 },
		{ .addr = 0x5b91e4, .offset = 0x5b91e4, .func = "", .module = PY, .func_off = 0 },
		{ .addr = 0, .offset = 265, .func = "copy:_reconstruct:265", .module = "copy.py", .func_off = 0 },
		{ .addr = 0x51835f, .offset = 0x51835f, .func = "PyObject_Call", .module = PY, .func_off = 0x1c4 },
		{ .addr = 0, .offset = 12, .func = "app:main:12", .module = "app.py", .func_off = 0 },
		{ .addr = 0x1000, .offset = 0x1000, .func = "_start", .module = PY, .func_off = 0 },
	};
	memset(&c, 0, sizeof(c));
	n = reduce(named, 7, PT_FRAMES_LANG, it, &c);
	CHECK(n == 3 && it[0].i == 1 && !it[0].run && it[1].i == 3 && it[2].i == 5,
	      "python: innermost named native frame, then every Python frame, native ones between dropped (%u items)", n);
	CHECK_EQ_U64(c.hidden_frames, 4, "python: four frames hidden");

	/* No language frame: the allocating frame alone. */
	struct pt_frame native[] = {
		{ .addr = 0x7f01, .offset = 0x7f01, .func = "", .module = LIBC, .func_off = 0 },
		{ .addr = 0x401000, .offset = 0x1000, .func = "scn_malloc", .module = "/bin/wl", .func_off = 0 },
		{ .addr = 0x401100, .offset = 0x1100, .func = "main", .module = "/bin/wl", .func_off = 0 },
	};
	n = reduce(native, 3, PT_FRAMES_LANG, it, NULL);
	CHECK(n == 1 && it[0].i == 1 && !it[0].run, "python: a native-only stack keeps its allocating frame");

	/* JIT code that calls malloc itself is its own allocation site. */
	struct pt_frame js[] = {
		{ .addr = 0x3e1000, .offset = 0x100, .func = "JS:*alloc /t/a.js:3", .module = "", .func_off = 0 },
		{ .addr = 0x3e2000, .offset = 0x200, .func = "JS:~main /t/a.js:9", .module = "", .func_off = 0 },
		{ .addr = 0x1000, .offset = 0x1000, .func = "node::Start", .module = "/usr/bin/node", .func_off = 0 },
	};
	n = reduce(js, 3, PT_FRAMES_LANG, it, NULL);
	CHECK(n == 2 && it[0].i == 0 && it[1].i == 1, "python: JS frames kept, no native frame under a JIT leaf");
}

/* The frame's kind (pt_frame_kind), as the flame graph colours it. */
static enum pt_frame_kind kind_of(uint64_t addr, const char *func, const char *module, const char *alloc)
{
	struct pt_frame fr = { .addr = addr, .offset = addr, .func = (char *)func, .module = (char *)module };

	return pt_frame_kind(&fr, alloc);
}

static void test_kind(void)
{
	static const char JE[] = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2";
	static const char MY[] = "/opt/lib/libmyalloc.so";
	static const char STDCXX[] = "/usr/lib/x86_64-linux-gnu/libstdc++.so.6";

	/* Python */
	CHECK(pt_frame_kind(&py_stack[2], LIBC) == PT_FK_PYTHON, "kind: a Python frame is Python");
	CHECK(kind_of(0, "[python]", "", LIBC) == PT_FK_PYTHON, "kind: an unreadable Python frame is Python");
	CHECK(kind_of(0, "<frozen importlib._bootstrap>:_find_and_load:1178", "<frozen importlib._bootstrap>", LIBC) == PT_FK_PYTHON,
	      "kind: a frozen module's frame is Python");
	/* JS / JIT */
	CHECK(kind_of(0x3e1000, "JS:*peaktraceJsAllocator /t/a.js:3", "", LIBC) == PT_FK_JIT,
	      "kind: a perf-map JS frame in anonymous memory is JS/JIT");
	CHECK(kind_of(0x3e1000, "LazyCompile:~f", "[anon:v8]", LIBC) == PT_FK_JIT, "kind: named code in [anon:...] is JS/JIT");
	CHECK(kind_of(0x3e1000, "JS:~g", "/usr/bin/node", LIBC) == PT_FK_JIT, "kind: a JS: name is JS/JIT in any module");
	/* native */
	CHECK(pt_frame_kind(&py_stack[4], LIBC) == PT_FK_NATIVE, "kind: a named interpreter frame is native");
	CHECK(pt_frame_kind(&py_stack[8], LIBC) == PT_FK_NATIVE, "kind: __libc_start_main is native (libc is not all allocator)");
	CHECK(kind_of(0x7f0000002000, "", "/usr/lib/libfoo.so", LIBC) == PT_FK_NATIVE,
	      "kind: an unnamed frame of a known module is native");
	CHECK(kind_of(0x401000, "malloc_stats_report", "/usr/local/bin/app", LIBC) == PT_FK_NATIVE,
	      "kind: a name that starts like malloc is native");
	CHECK(kind_of(0x401000, "operator newline", "/usr/local/bin/app", LIBC) == PT_FK_NATIVE,
	      "kind: \"operator newline\" is no operator new");
	CHECK(kind_of(0x401000, "main", "/usr/local/bin/app", "/usr/local/bin/app") == PT_FK_NATIVE,
	      "kind: an executable defining malloc is not all allocator");
	/* allocator */
	CHECK(kind_of(0x7f0000003000, "malloc", LIBC, LIBC) == PT_FK_ALLOC, "kind: libc malloc is allocator");
	CHECK(kind_of(0x7f0000003000, "_int_malloc", LIBC, LIBC) == PT_FK_ALLOC, "kind: glibc _int_malloc is allocator");
	CHECK(kind_of(0x7f0000003000, "realloc", LIBC, NULL) == PT_FK_ALLOC, "kind: realloc is allocator without an allocator module");
	CHECK(kind_of(0x7f0000004000, "operator new(unsigned long)", STDCXX, LIBC) == PT_FK_ALLOC,
	      "kind: operator new is allocator");
	CHECK(kind_of(0x7f0000004000, "operator delete[](void*, unsigned long)", STDCXX, LIBC) == PT_FK_ALLOC,
	      "kind: operator delete[] is allocator");
	CHECK(kind_of(0x7f0000005000, "arena_malloc_hard", JE, JE) == PT_FK_ALLOC, "kind: any frame of libjemalloc is allocator");
	CHECK(kind_of(0x7f0000005000, "", JE, LIBC) == PT_FK_ALLOC, "kind: an unnamed libjemalloc frame is allocator");
	CHECK(kind_of(0x7f0000005000, "je_mallocx", "/usr/local/bin/app", LIBC) == PT_FK_ALLOC,
	      "kind: je_mallocx linked statically is allocator");
	CHECK(kind_of(0x7f0000006000, "my_pool_grow", MY, MY) == PT_FK_ALLOC,
	      "kind: a frame of the allocator library peaktrace probed is allocator");
	CHECK(kind_of(0x7f0000006000, "my_pool_grow", MY, LIBC) == PT_FK_NATIVE,
	      "kind: the same library is native when it is not the allocator");
	CHECK(kind_of(0x5a0000, "PyMem_Malloc", PY, LIBC) == PT_FK_ALLOC, "kind: CPython's PyMem_Malloc is allocator");
	CHECK(kind_of(0x5a0000, "_PyObject_Malloc", PY, LIBC) == PT_FK_ALLOC, "kind: CPython's _PyObject_Malloc is allocator");
	/* other */
	CHECK(kind_of(0, "[python3.11 internals]", PY, LIBC) == PT_FK_OTHER, "kind: collapsed internals are other");
	CHECK(kind_of(0, "[python frames truncated]", "", LIBC) == PT_FK_OTHER, "kind: the truncation marker is other");
	CHECK(kind_of(0, "[unknown stack]", "", LIBC) == PT_FK_OTHER, "kind: [unknown stack] is other");
	CHECK(kind_of(0x7f00dead, "[unknown]", "", LIBC) == PT_FK_OTHER, "kind: [unknown] with no module is other");
	CHECK(kind_of(0x3e1000, "", "[anon:v8]", LIBC) == PT_FK_OTHER, "kind: unnamed anonymous code is other");
	/* names */
	CHECK(!strcmp(pt_frame_kind_name(PT_FK_PYTHON), "Python") && !strcmp(pt_frame_kind_name(PT_FK_JIT), "JS/JIT") &&
	      !strcmp(pt_frame_kind_name(PT_FK_NATIVE), "native") && !strcmp(pt_frame_kind_name(PT_FK_ALLOC), "allocator") &&
	      !strcmp(pt_frame_kind_name(PT_FK_OTHER), "other"), "kind: legend names");
}

int main(void)
{
	test_names();
	test_collapsed();
	test_lang();
	test_kind();
	return CHECK_DONE();
}
