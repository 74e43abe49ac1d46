// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * pyobj.c — what the report says about --python-objects: whether Python objects are in the heap
 * figures, how (CPython's object allocator probed, or every object a malloc block under
 * PYTHONMALLOC=malloc), and what a build that inlines pymalloc leaves out.
 */
#include <inttypes.h>
#include <stdio.h>
#include "util/fmt.h"
#include "report/report.h"

const char *pt_pyobj_traced(const struct pt_pyobj_note *n)
{
	if (!n->requested)
		return "off";
	if (n->via_malloc)
		return "malloc";
	if (!n->probed)
		return "none";
	return n->inlined_sites ? "partial" : "probes";
}

/* First screen, under PEAK: one line saying what the heap figures hold of Python's objects. */
void pt_pyobj_text(FILE *f, const struct pt_report *r)
{
	const struct pt_pyobj_note *n = &r->pyobj;
	const char *t = pt_pyobj_traced(n);

	if (!n->requested)
		return;
	if (t[0] == 'm')
		fprintf(f, "  Python objects (--python-objects): in the heap figures, each a malloc block at "
			   "its requested size: the interpreter ran with PYTHONMALLOC=%s%s, so its RSS "
			   "is glibc's heap, not pymalloc's arenas\n", n->pythonmalloc,
			n->set_pythonmalloc ? " (set by peaktrace)" : "");
	else if (t[0] == 'p' && t[1] == 'r')
		fprintf(f, "  Python objects (--python-objects): in the heap figures (CPython's object "
			   "allocator probed in %s; pymalloc's arenas are not counted, their objects are)\n",
			n->path);
	else if (t[0] == 'p')
		fprintf(f, "  caveat: Python objects PARTLY traced (--python-objects): %s inlines pymalloc "
			   "into %" PRIu32 " call sites no probe sees; the objects allocated there are "
			   "missing from the heap figures (run it with PYTHONMALLOC=malloc: peaktrace sets "
			   "it for a command it launches, unless PYTHONMALLOC is set)\n", n->path, n->inlined_sites);
	else if (n->set_pythonmalloc)
		fprintf(f, "  caveat: Python objects not seen (--python-objects): the command ran with "
			   "PYTHONMALLOC=malloc (set by peaktrace), but no CPython 3.11-3.13 was found in "
			   "it; objects of another Python it ran are malloc blocks, without Python frames\n");
	else
		fprintf(f, "  caveat: Python objects NOT traced (--python-objects): %s\n",
			n->found ? "their probes could not be attached" :
				   "no CPython 3.11-3.13 exporting PyObject_Malloc was found in the target");
}

/* TRACER: the probed entry points. */
void pt_pyobj_text_tracer(FILE *f, const struct pt_report *r)
{
	const struct pt_pyobj_note *n = &r->pyobj;
	int i;

	if (!n->requested)
		return;
	fprintf(f, "python objects: %s%s%s\n", pt_pyobj_traced(n), n->found ? " " : "",
		n->found ? n->path : "");
	for (i = 0; i < n->nprobes && n->probed; i++) {
		const struct pt_probe_info *pi = &n->probes[i];

		if (pi->shared_with >= 0) {
			fprintf(f, "  %-16s same address as %s\n", pi->symbol, pi->shared_symbol);
			continue;
		}
		fprintf(f, "  %-16s +%u (file offset 0x%" PRIx64 ")%s: %s, %s\n", pi->symbol, pi->place.skip,
			pi->offset, pi->return_probe ? " +return" : "", pi->place.insn,
			pi->place.emulated ? "emulated" : "single-stepped");
	}
}

/* report.json: allocator_families and python_objects (docs/json-report.md). */
void pt_pyobj_json(FILE *f, const struct pt_report *r)
{
	const struct pt_pyobj_note *n = &r->pyobj;
	const char *t = pt_pyobj_traced(n);
	bool in_heap = t[0] == 'm' || t[0] == 'p';
	int i;

	fprintf(f, "  \"allocator_families\": [%s%s],\n", r->light ? "" : "\"malloc\"",
		in_heap && !r->light ? ", \"python_objects\"" : "");
	if (!n->requested) {
		fprintf(f, "  \"python_objects\": null,\n");
		return;
	}
	fprintf(f, "  \"python_objects\": {\"traced\": \"%s\", \"python\": ", t);
	if (n->found)
		pt_json_str(f, n->path);
	else
		fprintf(f, "null");
	fprintf(f, ", \"pythonmalloc\": ");
	if (n->pythonmalloc[0])
		pt_json_str(f, n->pythonmalloc);
	else
		fprintf(f, "null");
	fprintf(f, ", \"pythonmalloc_set_by_peaktrace\": %s, \"inlined_sites\": %" PRIu32 ", \"probes\": [",
		n->set_pythonmalloc ? "true" : "false", n->inlined_sites);
	for (i = 0; i < n->nprobes && n->probed; i++) {
		const struct pt_probe_info *pi = &n->probes[i];

		fprintf(f, "%s{\"symbol\": ", i ? ", " : "");
		pt_json_str(f, pi->symbol);
		fprintf(f, ", \"as\": \"%s\", \"offset\": \"0x%" PRIx64 "\", \"emulated\": %s}",
			pt_alloc_fn_name(pi->fn), pi->offset, pi->place.emulated ? "true" : "false");
	}
	fprintf(f, "]},\n");
}
