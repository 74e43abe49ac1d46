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
	/* 0 */ { 0x5a7142, 0x5a7142, "", PY, 0 },                    /* unnamed interpreter leaf */
	/* 1 */ { 0x599b48, 0x599b48, "", PY, 0 },
	/* 2 */ { 0, 38, "function:render:38", "function.py", 0 },     /* Python frames */
	/* 3 */ { 0, 49, "function:handler:49", "function.py", 0 },
	/* 4 */ { 0x4fb51c, 0x4fb51c, "PyEval_EvalCode", PY, 0xbb },  /* named: kept */
	/* 5 */ { 0x647d97, 0x647d97, "", PY, 0 },
	/* 6 */ { 0x6456ef, 0x6456ef, "[unknown]", PY, 0 },
	/* 7 */ { 0x651770, 0x651770, "", PY, 0 },
	/* 8 */ { 0x7f0000001000, 0x27000, "__libc_start_main", LIBC, 0x85 },
	/* 9 */ { 0x7f0000002000, 0x28000, "", LIBC, 0 },              /* unnamed, not an interpreter */
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
	CHECK(pt_frame_class(&(struct pt_frame){ 0, 0, "[python frames truncated]", "", 0 }) == PT_FC_LANG,
	      "class: the truncation marker is language");
	CHECK(pt_frame_class(&(struct pt_frame){ 0, 0, "[unknown stack]", "", 0 }) == PT_FC_NATIVE,
	      "class: [unknown stack] is not language");
	CHECK(pt_frame_class(&(struct pt_frame){ 0x3e1000, 0x100, "JS:*peaktraceJsAllocator /t/a.js:3", "", 0 }) == PT_FC_LANG,
	      "class: a perf-map JS frame in anonymous memory is language");
	CHECK(pt_frame_class(&(struct pt_frame){ 0x3e1000, 0x100, "", "", 0 }) == PT_FC_NATIVE,
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
		{ 0x1000, 0x1000, "", PY, 0 },
		{ 0x7f00, 0x7f00, "", "/usr/lib/libpython3.12.so.1.0", 0 },
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
		{ 0x4fb51c, 0x4fb51c, "", PY, 0 },
		{ 0x4fb600, 0x4fb600, "PyByteArray_Resize", PY, 0x1f2 },
		{ 0x5b91e4, 0x5b91e4, "", PY, 0 },
		{ 0, 265, "copy:_reconstruct:265", "copy.py", 0 },
		{ 0x51835f, 0x51835f, "PyObject_Call", PY, 0x1c4 },
		{ 0, 12, "app:main:12", "app.py", 0 },
		{ 0x1000, 0x1000, "_start", PY, 0 },
	};
	memset(&c, 0, sizeof(c));
	n = reduce(named, 7, PT_FRAMES_LANG, it, &c);
	CHECK(n == 3 && it[0].i == 1 && !it[0].run && it[1].i == 3 && it[2].i == 5,
	      "python: innermost named native frame, then every Python frame, native ones between dropped (%u items)", n);
	CHECK_EQ_U64(c.hidden_frames, 4, "python: four frames hidden");

	/* No language frame: the allocating frame alone. */
	struct pt_frame native[] = {
		{ 0x7f01, 0x7f01, "", LIBC, 0 },
		{ 0x401000, 0x1000, "scn_malloc", "/bin/wl", 0 },
		{ 0x401100, 0x1100, "main", "/bin/wl", 0 },
	};
	n = reduce(native, 3, PT_FRAMES_LANG, it, NULL);
	CHECK(n == 1 && it[0].i == 1 && !it[0].run, "python: a native-only stack keeps its allocating frame");

	/* JIT code that calls malloc itself is its own allocation site. */
	struct pt_frame js[] = {
		{ 0x3e1000, 0x100, "JS:*alloc /t/a.js:3", "", 0 },
		{ 0x3e2000, 0x200, "JS:~main /t/a.js:9", "", 0 },
		{ 0x1000, 0x1000, "node::Start", "/usr/bin/node", 0 },
	};
	n = reduce(js, 3, PT_FRAMES_LANG, it, NULL);
	CHECK(n == 2 && it[0].i == 0 && it[1].i == 1, "python: JS frames kept, no native frame under a JIT leaf");
}

int main(void)
{
	test_names();
	test_collapsed();
	test_lang();
	return CHECK_DONE();
}
