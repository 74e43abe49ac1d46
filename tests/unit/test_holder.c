// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_holder — which frames of a top holder the first screen shows (output/holder.h): the named
 * ones past runs of stripped addresses and allocator/runtime frames, each run said in one line,
 * and the program's own frame when it is deeper; and when the RSS holders join them. */
#include <stdlib.h>

#include "check.h"
#include "profile/frames.h"
#include "output/holder.h"
#include "rss/rss.h"

#define MAXF 64

struct stk {
	struct pt_frame f[MAXF];
	const struct pt_frame *p[MAXF];
	uint32_t n;
};

/* A native frame: func "" for a stripped address. */
static void nat(struct stk *s, const char *func, const char *mod)
{
	struct pt_frame *f = &s->f[s->n];

	memset(f, 0, sizeof(*f));
	f->addr = 0x400000 + s->n * 16;
	f->func = (char *)func;
	f->module = (char *)mod;
	f->kind = (uint8_t)pt_frame_kind(f, NULL);
	s->p[s->n] = f;
	s->n++;
}

/* A synthetic frame (addr 0): a Python frame "mod:func:line" or a marker "[python3.11 internals]". */
static void syn(struct stk *s, const char *func, const char *mod)
{
	nat(s, func, mod);
	s->f[s->n - 1].addr = 0;
	s->f[s->n - 1].kind = (uint8_t)pt_frame_kind(&s->f[s->n - 1], NULL);
}

/* The lines as one string: frames by name, runs by their text, joined by " | ". */
static char *render(struct stk *s, char *out, size_t len)
{
	struct pt_holder_line l[PT_HOLDER_MAX_LINES];
	uint32_t n = pt_holder_lines(s->p, s->n, l), i;
	char buf[256];
	int o = 0;

	CHECK(n <= PT_HOLDER_MAX_LINES, "at most PT_HOLDER_MAX_LINES lines (%u)", n);
	out[0] = 0;
	for (i = 0; i < n && o >= 0 && (size_t)o < len; i++) {
		const char *t = buf;

		if (l[i].what == PT_HL_FRAME || l[i].what == PT_HL_OWN) {
			const struct pt_frame *f = s->p[l[i].i];

			snprintf(buf, sizeof(buf), "%s%s", l[i].what == PT_HL_OWN ? "OWN " : "",
				 f->func[0] ? f->func : "0x");
		} else {
			pt_holder_line_text(buf, sizeof(buf), s->p, &l[i]);
		}
		o += snprintf(out + o, len - o, "%s%s", i ? " | " : "", t);
	}
	return out;
}

#define ORT "/var/task/node_modules/onnxruntime-node/bin/napi-v3/linux/x64/libonnxruntime.so.1"
#define BINDING "/var/task/node_modules/onnxruntime-node/bin/napi-v3/linux/x64/onnxruntime_binding.node"
#define NODE "/var/lang/bin/node"
#define LIBC "/usr/lib/x86_64-linux-gnu/libc.so.6"
#define PY "/usr/bin/python3.11"

/* The ONNX Runtime function of issue 21: operator new, 12 stripped frames of libonnxruntime,
 * the binding's named C++ (a library in the task, not the program's JS), V8's entry into C++,
 * node's frames, and the handler's JS frame 20 frames from the leaf. */
static void test_onnx(void)
{
	struct stk s = { .n = 0 };
	char out[2048];
	int i;

	nat(&s, "operator new(unsigned long)", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6.0.30");
	for (i = 0; i < 12; i++)
		nat(&s, "", ORT);
	nat(&s, "InferenceSessionWrap::LoadModel(Napi::CallbackInfo const&)", BINDING);
	nat(&s, "Napi::InstanceWrap<InferenceSessionWrap>::InstanceMethodCallbackWrapper", BINDING);
	nat(&s, "", BINDING);
	nat(&s, "v8impl::(anonymous namespace)::FunctionCallbackWrapper::Invoke", NODE);
	nat(&s, "Builtins_CallApiCallback", NODE);
	nat(&s, "Builtins_InterpreterEntryTrampoline", NODE);
	nat(&s, "JS:~ node:internal/worker/io:1:1", "");
	nat(&s, "JS:~create /var/task/node_modules/onnxruntime-node/dist/backend.js:95:24", "");
	nat(&s, "JS:*loadSession /var/task/index.js:12:3", "");
	nat(&s, "JS:*handler /var/task/index.js:30:9", "");
	nat(&s, "Builtins_JSEntryTrampoline", NODE);
	nat(&s, "v8::internal::Execution::Call(v8::internal::Isolate*)", NODE);
	nat(&s, "main", NODE);
	CHECK_STR(render(&s, out, sizeof(out)),
		  "... 13 frames: 12 unnamed (libonnxruntime.so.1), 1 allocator/runtime (operator new)"
		  " | InferenceSessionWrap::LoadModel(Napi::CallbackInfo const&)"
		  " | Napi::InstanceWrap<InferenceSessionWrap>::InstanceMethodCallbackWrapper"
		  " | 0x"
		  " | v8impl::(anonymous namespace)::FunctionCallbackWrapper::Invoke"
		  " | ... 4 frames down to the program's own code"
		  " | OWN JS:*loadSession /var/task/index.js:12:3"
		  " | OWN JS:*handler /var/task/index.js:30:9"
		  " | ... 3 more frames",
		  "ONNX: the stripped run in one line, the binding's named frames, the handler's JS frame "
		  "after a gap (Node's own io module and onnxruntime-node's backend.js are not the "
		  "program's)");

	/* Without the handler's frame (cut by the depth limit), the package's JS is the best there is. */
	s.n -= 5;
	CHECK_STR(render(&s, out, sizeof(out)),
		  "... 13 frames: 12 unnamed (libonnxruntime.so.1), 1 allocator/runtime (operator new)"
		  " | InferenceSessionWrap::LoadModel(Napi::CallbackInfo const&)"
		  " | Napi::InstanceWrap<InferenceSessionWrap>::InstanceMethodCallbackWrapper"
		  " | 0x"
		  " | v8impl::(anonymous namespace)::FunctionCallbackWrapper::Invoke"
		  " | ... 3 frames down to the program's own code"
		  " | OWN JS:~create /var/task/node_modules/onnxruntime-node/dist/backend.js:95:24",
		  "ONNX cut above the handler: the package's JS frame stands in for own code");
}

/* Debian's python3 (stripped interpreter, its unnamed runs collapsed into one marker frame). */
static void test_python(void)
{
	struct stk s = { .n = 0 };
	char out[2048];

	syn(&s, "[python3.11 internals]", PY);
	nat(&s, "PyByteArray_Resize", PY);
	syn(&s, "[python3.11 internals]", PY);
	nat(&s, "_PyObject_MakeTpCall", PY);
	syn(&s, "wl_rss:build_buffer:27", "wl_rss.py");
	syn(&s, "wl_rss:main:37", "wl_rss.py");
	syn(&s, "wl_rss:<module>:45", "wl_rss.py");
	nat(&s, "PyEval_EvalCode", PY);
	nat(&s, "Py_BytesMain", PY);
	CHECK_STR(render(&s, out, sizeof(out)),
		  "[python3.11 internals] | PyByteArray_Resize"
		  " | ... 2 frames: 1 unnamed (python3.11), 1 allocator/runtime (_PyObject_MakeTpCall)"
		  " | wl_rss:build_buffer:27 | wl_rss:main:37 | ... 3 more frames",
		  "Python: a lone marker shown as itself, the call machinery skipped, the Python frames");

	/* The allocating C function deep in the interpreter: the own Python frame after a gap;
	 * importlib's frozen frames are not the program's. */
	s.n = 0;
	nat(&s, "PyMem_Malloc", PY);
	nat(&s, "PyUnicode_New", PY);
	nat(&s, "PyUnicode_Format", PY);
	nat(&s, "PyNumber_Remainder", PY);
	nat(&s, "_PyEval_EvalFrameDefault", PY);
	syn(&s, "<frozen importlib._bootstrap>:_find_and_load:1178", "<frozen importlib._bootstrap>");
	syn(&s, "app:load:3", "app.py");
	CHECK_STR(render(&s, out, sizeof(out)),
		  "PyMem_Malloc | PyUnicode_New | PyUnicode_Format | PyNumber_Remainder"
		  " | ... 2 frames down to the program's own code | OWN app:load:3",
		  "Python: PyMem_Malloc alone shown as itself; the frozen import frame is not own code");

	/* The standard library's copy.deepcopy under the handler: the handler is the own frame. */
	s.n = 0;
	nat(&s, "PyObject_Malloc", PY);
	nat(&s, "PyList_New", PY);
	nat(&s, "list_copy", PY);
	nat(&s, "PyDict_Copy", PY);
	nat(&s, "_PyEval_EvalFrameDefault", PY);
	syn(&s, "copy:_deepcopy_list:136", "/usr/lib/python3.11/copy.py");
	syn(&s, "copy:deepcopy:146", "/usr/lib/python3.11/copy.py");
	syn(&s, "requests.models:json:971", "/var/task/lib/python3.11/site-packages/requests/models.py");
	syn(&s, "handler:remember:40", "/var/task/handler.py");
	CHECK_STR(render(&s, out, sizeof(out)),
		  "PyObject_Malloc | PyList_New | list_copy | PyDict_Copy"
		  " | ... 4 frames down to the program's own code | OWN handler:remember:40",
		  "Python: the standard library and an installed package are not the handler's code");

	/* A generator's strings held by the loop draining it: the generator, then that loop. */
	s.n = 0;
	syn(&s, "[python3.11 internals]", PY);
	nat(&s, "_PyUnicodeWriter_PrepareInternal", PY);
	nat(&s, "PyUnicode_Format", PY);
	nat(&s, "PyNumber_Remainder", PY);
	syn(&s, "llm_handler:fake_llm_stream:74", "/var/task/llm_handler.py");
	syn(&s, "[python3.11 internals]", PY);
	syn(&s, "llm_handler:buffer_completion:79", "/var/task/llm_handler.py");
	syn(&s, "llm_handler:handler:97", "/var/task/llm_handler.py");
	CHECK_STR(render(&s, out, sizeof(out)),
		  "[python3.11 internals] | _PyUnicodeWriter_PrepareInternal | PyUnicode_Format"
		  " | PyNumber_Remainder | OWN llm_handler:fake_llm_stream:74"
		  " | [python3.11 internals] | OWN llm_handler:buffer_completion:79"
		  " | ... 1 more frame",
		  "Python generator: its own caller, the loop that holds what it made, after it");

	/* The caller further than PT_HOLDER_CALLER_GAP frames out: not added. */
	s.n = 5;
	for (int g = 0; g < PT_HOLDER_CALLER_GAP + 1; g++)
		nat(&s, "", PY);
	syn(&s, "llm_handler:buffer_completion:79", "/var/task/llm_handler.py");
	CHECK_STR(render(&s, out, sizeof(out)),
		  "[python3.11 internals] | _PyUnicodeWriter_PrepareInternal | PyUnicode_Format"
		  " | PyNumber_Remainder | OWN llm_handler:fake_llm_stream:74 | ... 6 more frames",
		  "Python: a caller beyond the gap is left to the rest line");
}

/* A C program: its own named frames first, nothing else added; the rest counted. */
static void test_c(void)
{
	struct stk s = { .n = 0 };
	char out[2048];
	int i;

	nat(&s, "scn_peak", "/work/build/tests/workloads/wl_basic_fp");
	nat(&s, "main", "/work/build/tests/workloads/wl_basic_fp");
	nat(&s, "__libc_start_call_main", LIBC);
	nat(&s, "__libc_start_main", LIBC);
	nat(&s, "_start", "/work/build/tests/workloads/wl_basic_fp");
	CHECK_STR(render(&s, out, sizeof(out)), "scn_peak | main | __libc_start_call_main | ... 2 more frames",
		  "C: the first three named frames");

	/* A stripped library of the program's own, reached from its main executable. */
	s.n = 0;
	for (i = 0; i < 12; i++)
		nat(&s, "", "/opt/app/lib/libdeep.so");
	nat(&s, "deep_entry", "/opt/app/lib/libdeep.so");
	nat(&s, "g_log", "/usr/lib/x86_64-linux-gnu/libglib-2.0.so.0");
	nat(&s, "g_main", "/usr/lib/x86_64-linux-gnu/libglib-2.0.so.0");
	nat(&s, "g_loop", "/usr/lib/x86_64-linux-gnu/libglib-2.0.so.0");
	nat(&s, "load_model", "/opt/app/bin/app");
	CHECK_STR(render(&s, out, sizeof(out)),
		  "... 12 unnamed frames (libdeep.so) | deep_entry | g_log | g_main | ... 2 more frames",
		  "C: a named frame of the program's own library counts as its own code");

	/* The same with the named frames in system libraries: the program's frame after a gap. */
	s.f[12].module = (char *)"/usr/lib/x86_64-linux-gnu/libdeep.so";
	CHECK_STR(render(&s, out, sizeof(out)),
		  "... 12 unnamed frames (libdeep.so) | deep_entry | g_log | g_main"
		  " | ... 1 frame down to the program's own code | OWN load_model",
		  "C: the main executable's frame added after the named ones");
	/* Right after the last named frame: no gap line. */
	s.f[15] = s.f[16];
	s.n = 16;
	CHECK_STR(render(&s, out, sizeof(out)),
		  "... 12 unnamed frames (libdeep.so) | deep_entry | g_log | g_main | OWN load_model",
		  "C: the own frame right after the last named one: no gap line");

	/* Nothing named at all: the first frames as they are. */
	s.n = 0;
	for (i = 0; i < 7; i++)
		nat(&s, "", i < 5 ? "/opt/x/liba.so" : "/opt/x/libb.so");
	CHECK_STR(render(&s, out, sizeof(out)), "0x | 0x | 0x | 0x | ... 3 more frames",
		  "nothing named: the first four frames as before");

	/* A stack that ends in a hidden run; a run over three modules names two. */
	s.n = 0;
	nat(&s, "work", "/opt/x/app");
	nat(&s, "", "/opt/x/liba.so");
	nat(&s, "", "/opt/x/libb.so");
	nat(&s, "", "/opt/x/libb.so");
	nat(&s, "", "/opt/x/libc2.so");
	CHECK_STR(render(&s, out, sizeof(out)), "work | ... 4 unnamed frames (liba.so, libb.so, ...)",
		  "a trailing run said in one line, two modules and \"...\"");
	s.n = 0;
	CHECK(pt_holder_lines(s.p, 0, NULL) == 0, "an empty stack: no lines");
}

static void test_classes(void)
{
	struct stk s = { .n = 0 };
	static const struct { const char *func, *mod; int internal, own; bool syn; } c[] = {
		{ "malloc", LIBC, 1, 0, false },
		{ "operator new[](unsigned long)", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6", 1, 0, false },
		{ "PyObject_Malloc", PY, 1, 0, false },
		{ "_PyEval_EvalFrameDefault", PY, 1, 0, false },
		{ "PyObject_CallOneArg", PY, 1, 0, false },
		{ "PyList_New", PY, 0, 0, false },
		{ "Builtins_InterpreterEntryTrampoline", NODE, 1, 0, false },
		{ "Builtins_JsonParse", NODE, 0, 0, false },
		{ "v8::internal::Heap::AllocateRaw", NODE, 0, 0, false },
		{ "je_malloc", "/opt/app/lib/libjemalloc.so.2", 1, 0, false },
		{ "arena_alloc", "/opt/app/lib/libjemalloc.so.2", 1, 0, false },
		{ "scn_peak", "/tmp/x/wl_basic_fp", 0, 1, false },
		{ "run", "/usr/local/bin/app", 0, 1, false },
		{ "Py_BytesMain", "/opt/python/bin/python3.12", 0, 0, false },
		{ "node::Start", "/home/u/.nvm/bin/node", 0, 0, false },
		{ "JS:*loadSession /var/task/index.js:12:3", "", 0, 1, false },
		{ "JS:~emit node:events:517:28", "", 0, 0, false },
		{ "JS:~create /var/task/node_modules/ort/dist/backend.js:95:24", "", 0, 1, false },
		{ "app:load:3", "app.py", 0, 1, true },
		{ "<frozen importlib._bootstrap>:_load:690", "<frozen importlib._bootstrap>", 0, 0, true },
		{ "", "/opt/app/lib/libdeep.so", 0, 0, false },
	};
	size_t k;

	for (k = 0; k < sizeof(c) / sizeof(c[0]); k++) {
		s.n = 0;
		if (c[k].syn)
			syn(&s, c[k].func, c[k].mod);
		else
			nat(&s, c[k].func, c[k].mod);
		CHECK(!!pt_holder_internal(s.p[0]) == c[k].internal && !!pt_holder_own(s.p[0]) == c[k].own,
		      "%s in %s: %s, %s", c[k].func[0] ? c[k].func : "(unnamed)", c[k].mod,
		      c[k].internal ? "allocator/runtime" : "not internal", c[k].own ? "own code" : "not own");
	}
}

static void test_rss_rule(void)
{
	CHECK(pt_rss_first_screen(48 << 20, 106 << 20), "heap 48 of RSS 106 MiB: the RSS holders shown");
	CHECK(!pt_rss_first_screen(53 << 20, 106 << 20), "heap exactly half the RSS: not shown");
	CHECK(!pt_rss_first_screen(90 << 20, 106 << 20), "heap 90 of RSS 106 MiB: not shown");
	CHECK(pt_rss_first_screen(0, 4096), "no heap at all: shown");
	CHECK(!pt_rss_first_screen(0, 0), "no RSS figure: not shown");
}

int main(void)
{
	test_onnx();
	test_python();
	test_c();
	test_classes();
	test_rss_rule();
	return CHECK_DONE();
}
