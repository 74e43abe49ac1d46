// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * holder.c — the first screen's frames of a top holder: the rule of holder.h.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "profile/frames.h"
#include "output/holder.h"

int pt_holder_named(const struct pt_frame *fr)
{
	return fr->func && fr->func[0] && fr->func[0] != '[';
}

/* Prefixes of names that only pass a call on, in the runtimes peaktrace names frames of. */
static const char *const call_machinery[] = {
	/* CPython: the evaluation loop and the generic call paths between a Python frame and the C
	 * function it called (PyByteArray_Resize, PyList_New: those are shown). */
	"_PyEval_EvalFrame", "_PyEval_Vector", "PyEval_EvalCode", "_PyFunction_Vectorcall",
	"_PyObject_MakeTpCall", "_PyObject_Call", "PyObject_Call", "_PyObject_Vectorcall",
	"PyObject_Vectorcall", "PyVectorcall_Call", "cfunction_call", "cfunction_vectorcall",
	"method_vectorcall", "slot_tp_call",
	/* V8: the trampolines and generic call/construct builtins between JS frames and from C++
	 * into JS (a named builtin doing work, such as Builtins_JsonParse, is shown). */
	"Builtins_JSEntry", "Builtins_JSRunMicrotasksEntry", "Builtins_InterpreterEntryTrampoline",
	"Builtins_InterpreterPushArgs", "Builtins_Call", "Builtins_Construct",
	"Builtins_JSConstructStub", "Builtins_JSBuiltinsConstructStub",
	"Builtins_ArgumentsAdaptorTrampoline", "v8::internal::Execution::",
	"v8::internal::(anonymous namespace)::Invoke",
};

/*
 * Allocator or runtime internal: frames that say how memory was allocated or a call was made,
 * never why, so the first screen counts them instead of showing them. Two kinds, kept few:
 *  - the allocator: its entry points and internals and any frame of a dedicated allocator
 *    library (malloc and glibc's _int_malloc, operator new, PyMem_* / PyObject_Malloc, jemalloc's
 *    *allocx, libjemalloc, ...): profile/frames.c's PT_FK_ALLOC, the flame graphs' "allocator";
 *  - the runtimes' call machinery (call_machinery above): CPython's eval loop and generic call
 *    paths, V8's entry trampolines and generic call builtins.
 * Everything else named is shown, runtime code that does the work included (PyList_New,
 * PyUnicode_New, v8::internal::Heap::AllocateRaw): it says what was allocated.
 */
int pt_holder_internal(const struct pt_frame *fr)
{
	size_t k;

	if (fr->kind == PT_FK_ALLOC || pt_frame_kind(fr, NULL) == PT_FK_ALLOC)
		return 1;
	if (!pt_holder_named(fr))
		return 0;
	for (k = 0; k < sizeof(call_machinery) / sizeof(call_machinery[0]); k++)
		if (strncmp(fr->func, call_machinery[k], strlen(call_machinery[k])) == 0)
			return 1;
	return 0;
}

/* Where the system's own objects live (distribution packages): not the program's code. */
static int system_path(const char *p)
{
	static const char *const dirs[] = { "/usr/", "/lib/", "/lib32/", "/lib64/", "/bin/",
					    "/sbin/" };
	size_t k;

	if (strncmp(p, "/usr/local/", 11) == 0)
		return 0;
	for (k = 0; k < sizeof(dirs) / sizeof(dirs[0]); k++)
		if (strncmp(p, dirs[k], strlen(dirs[k])) == 0)
			return 1;
	return 0;
}

int pt_holder_own(const struct pt_frame *fr)
{
	const char *mod = fr->module ? fr->module : "";
	char interp[64];

	if (!pt_holder_named(fr) || pt_holder_internal(fr))
		return 0;
	switch (pt_frame_kind(fr, NULL)) {
	case PT_FK_PYTHON:
		/* "<frozen importlib._bootstrap>:_find_and_load:1178": the import system */
		return strncmp(fr->func, "<frozen ", 8) != 0;
	case PT_FK_JIT:
		/* "JS:~emit node:events:517:28", "JS:~ node:internal/worker/io:1:1": Node's own */
		return strstr(fr->func, "node:") == NULL;
	case PT_FK_NATIVE:
		return mod[0] == '/' && !system_path(mod) && !pt_interp_name(mod, interp, sizeof(interp));
	default:
		return 0;
	}
}

int pt_holder_dep(const struct pt_frame *fr)
{
	static const char *const py[] = { "/site-packages/", "/dist-packages/", "/lib/python" };
	const char *mod = fr->module ? fr->module : "";
	size_t k;

	switch (pt_frame_kind(fr, NULL)) {
	case PT_FK_PYTHON:
		/* "/var/lang/lib/python3.12/copy.py", "/usr/lib/python3/dist-packages/...": the
		 * standard library's directory holds the installed packages too */
		for (k = 0; k < sizeof(py) / sizeof(py[0]); k++)
			if (strstr(mod, py[k]))
				return 1;
		return 0;
	case PT_FK_JIT:
		/* "JS:~create /var/task/node_modules/onnxruntime-node/dist/backend.js:95:24" */
		return strstr(fr->func, "/node_modules/") != NULL;
	default:
		return 0;
	}
}

static bool hidden(const struct pt_frame *fr)
{
	return !pt_holder_named(fr) || pt_holder_internal(fr);
}

static uint32_t put(struct pt_holder_line *out, uint32_t k, uint8_t what, uint32_t i, uint32_t n)
{
	out[k].what = what;
	out[k].i = i;
	out[k].n = n;
	return k + 1;
}

static bool is_lang(const struct pt_frame *fr)
{
	enum pt_frame_kind k = pt_frame_kind(fr, NULL);

	return k == PT_FK_PYTHON || k == PT_FK_JIT;
}

/* The own-code frame a holder needs on the first screen: in a program with Python or JS code of
 * its own, one of those (a native extension it calls, such as onnxruntime_binding.node, is
 * someone else's library); else any own frame (a C or C++ program's, or its own library's).
 * With app set (the stack has own code outside the installed packages and the standard
 * library), only such a frame: onnxruntime-node's backend.js is not where the reader acts. */
static bool own_frame(const struct pt_frame *fr, bool lang, bool app)
{
	return pt_holder_own(fr) && (!lang || is_lang(fr)) && (!app || !pt_holder_dep(fr));
}

/* The run of hidden frames ending before i: one line saying what they are, or the frame itself
 * when it is one (its own line says more, in as little room). */
static uint32_t flush(struct pt_holder_line *out, uint32_t k, uint32_t i, uint32_t run)
{
	if (run == 1)
		return put(out, k, PT_HL_FRAME, i - 1, 0);
	return run ? put(out, k, PT_HL_SKIP, i - run, run) : k;
}

uint32_t pt_holder_lines(const struct pt_frame *const *fr, uint32_t n, struct pt_holder_line *out)
{
	uint32_t i, j, k = 0, shown = 0, run = 0, nown = 0;
	bool any = false, lang = false, app = false;

	for (i = 0; i < n; i++) {
		any = any || !hidden(fr[i]);
		lang = lang || (pt_holder_own(fr[i]) && is_lang(fr[i]));
	}
	for (i = 0; i < n && !app; i++)
		app = own_frame(fr[i], lang, false) && !pt_holder_dep(fr[i]);
	if (!any) {
		uint32_t m = n < PT_HOLDER_NAMED + 1 ? n : PT_HOLDER_NAMED + 1;

		for (i = 0; i < m; i++)
			k = put(out, k, PT_HL_FRAME, i, 0);
		return n > m ? put(out, k, PT_HL_REST, m, n - m) : k;
	}
	for (i = 0; i < n && shown < PT_HOLDER_NAMED; i++) {
		if (hidden(fr[i])) {
			run++;
			continue;
		}
		k = flush(out, k, i, run);
		run = 0;
		k = put(out, k, PT_HL_FRAME, i, 0);
		nown += own_frame(fr[i], lang, app);
		shown++;
	}
	if (run)	/* the stack ended in hidden frames (i == n) */
		return flush(out, k, i, run);
	if (!nown) {
		for (j = i; j < n && !own_frame(fr[j], lang, app); j++)
			;
		if (j < n) {
			if (j > i)
				k = put(out, k, PT_HL_GAP, i, j - i);
			k = put(out, k, PT_HL_OWN, j, 0);
			i = j + 1;
			nown = 1;
		}
	}
	/* Python or JS whose one own frame shown is the last line: its caller too when that is own
	 * code a few frames out. A generator's strings are held by the loop that drains it
	 * (fake_llm_stream's by buffer_completion), a callback's result by who called it. */
	if (lang && nown == 1 && i > 0 && i < n && own_frame(fr[i - 1], lang, app)) {
		for (j = i; j < n && j - i < PT_HOLDER_CALLER_GAP && !own_frame(fr[j], lang, app); j++)
			;
		if (j < n && own_frame(fr[j], lang, app)) {
			if (j == i + 1)	/* one frame: itself, in as little room */
				k = put(out, k, PT_HL_FRAME, i, 0);
			else if (j > i)
				k = put(out, k, PT_HL_GAP, i, j - i);
			k = put(out, k, PT_HL_OWN, j, 0);
			i = j + 1;
		}
	}
	return i < n ? put(out, k, PT_HL_REST, i, n - i) : k;
}

static const char *base_of(const char *path)
{
	const char *b = path ? strrchr(path, '/') : NULL;

	return b ? b + 1 : path ? path : "";
}

/* Up to two distinct words of a run into buf ("a, b", "a, b, ..."): module base names of the
 * unnamed frames, or the names of the internal ones (without their argument lists). */
static void words(char *buf, size_t len, const struct pt_frame *const *fr,
		  const struct pt_holder_line *l, bool internal)
{
	const char *w[2];
	size_t wl[2];
	uint32_t nw = 0, i;
	bool more = false;
	int o = 0;

	buf[0] = 0;
	for (i = l->i; i < l->i + l->n; i++) {
		const char *s;
		size_t sl, k;

		if ((pt_holder_internal(fr[i]) != 0) != internal)
			continue;
		if (internal) {
			const char *par = strrchr(fr[i]->func, '(');

			s = fr[i]->func;
			sl = par && par > s && s[strlen(s) - 1] == ')' ? (size_t)(par - s) : strlen(s);
		} else {
			s = base_of(fr[i]->module);
			sl = strlen(s);
		}
		if (!sl)
			continue;
		for (k = 0; k < nw && !(wl[k] == sl && !strncmp(w[k], s, sl)); k++)
			;
		if (k < nw)
			continue;
		if (nw == 2) {
			more = true;
			break;
		}
		w[nw] = s;
		wl[nw++] = sl;
	}
	for (i = 0; i < nw && o >= 0 && (size_t)o < len; i++)
		o += snprintf(buf + o, len - o, "%s%.*s", i ? ", " : "", (int)wl[i], w[i]);
	if (more && o >= 0 && (size_t)o < len)
		snprintf(buf + o, len - o, ", ...");
}

void pt_holder_line_text(char *buf, size_t len, const struct pt_frame *const *fr,
			 const struct pt_holder_line *l)
{
	char wu[160], wi[160];
	uint32_t i, ni = 0, nu;

	if (l->what == PT_HL_GAP) {
		snprintf(buf, len, "... %u frame%s down to the program's own code", l->n,
			 l->n == 1 ? "" : "s");
		return;
	}
	if (l->what != PT_HL_SKIP) {
		snprintf(buf, len, "... %u more frame%s", l->n, l->n == 1 ? "" : "s");
		return;
	}
	for (i = l->i; i < l->i + l->n; i++)
		ni += pt_holder_internal(fr[i]) != 0;
	nu = l->n - ni;
	words(wu, sizeof(wu), fr, l, false);
	words(wi, sizeof(wi), fr, l, true);
	if (!ni)
		snprintf(buf, len, "... %u unnamed frame%s%s%s%s", nu, nu == 1 ? "" : "s",
			 wu[0] ? " (" : "", wu, wu[0] ? ")" : "");
	else if (!nu)
		snprintf(buf, len, "... %u allocator/runtime frame%s (%s)", ni, ni == 1 ? "" : "s", wi);
	else
		snprintf(buf, len, "... %u frames: %u unnamed%s%s%s, %u allocator/runtime (%s)", l->n, nu,
			 wu[0] ? " (" : "", wu, wu[0] ? ")" : "", ni, wi);
}

void pt_holder_text(FILE *f, const struct pt_profile *p, const struct pt_stack *s)
{
	const struct pt_frame **fr = malloc((s->nframes + 1) * sizeof(*fr));
	struct pt_holder_line l[PT_HOLDER_MAX_LINES];
	char buf[512];
	uint32_t i, n;

	if (!fr)
		return;
	for (i = 0; i < s->nframes; i++)
		fr[i] = &p->frames[s->frames[i]];
	n = pt_holder_lines(fr, s->nframes, l);
	for (i = 0; i < n; i++) {
		if (l[i].what == PT_HL_FRAME || l[i].what == PT_HL_OWN) {
			pt_frame_text(f, p, s->frames[l[i].i]);
			continue;
		}
		pt_holder_line_text(buf, sizeof(buf), fr, &l[i]);
		fprintf(f, "        %s\n", buf);
	}
	free(fr);
}
