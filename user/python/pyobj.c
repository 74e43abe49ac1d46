// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * pyobj.c — what the report says about --python-objects: whether Python objects are in the heap
 * figures, how (CPython's object allocator probed, or every object a malloc block under
 * PYTHONMALLOC=malloc), and what a build that inlines pymalloc leaves out.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "util/fmt.h"
#include "bpf/peaktrace.h"
#include "python/pyobj.h"

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

#define MiB (1024.0 * 1024.0)
#define LAUNCH_SLOTS (4u << 20)
#define MAX_SLOTS (1u << 28)        /* --max-live's own limit */

static uint64_t pow2_floor(uint64_t v)
{
	uint64_t p = 1;

	while (p <= v / 2)
		p <<= 1;
	return p;
}

static uint64_t pow2_ceil(uint64_t v)
{
	uint64_t p = 1;

	while (p < v && p < MAX_SLOTS)
		p <<= 1;
	return p;
}

uint32_t pt_pyobj_live_slots(uint64_t mem_total, uint64_t anon_bytes, char *why, size_t len)
{
	uint64_t cap = pow2_floor(mem_total / 128 / PT_LIVE_SLOT_BYTES), want;

	if (cap < PT_DEF_LIVE_SLOTS)
		cap = PT_DEF_LIVE_SLOTS;
	if (cap > MAX_SLOTS)
		cap = MAX_SLOTS;
	if (anon_bytes) {
		want = pow2_ceil(2 * (anon_bytes / 32));
		snprintf(why, len, "twice the objects the target's %.1f MiB of anonymous memory could hold "
			 "at 32 bytes each", (double)anon_bytes / MiB);
	} else {
		want = LAUNCH_SLOTS;
		snprintf(why, len, "the launch default: 2M objects at half load");
	}
	if (want < PT_DEF_LIVE_SLOTS)
		want = PT_DEF_LIVE_SLOTS;
	if (want > cap) {
		want = cap;
		snprintf(why + strlen(why), len - strlen(why), ", capped at 1/128 of this machine's %.1f GiB",
			 (double)mem_total / (MiB * 1024));
	}
	return (uint32_t)want;
}

uint64_t pt_live_slots_to_fit(int64_t tracked_live, uint64_t refused)
{
	uint64_t need = (tracked_live > 0 ? (uint64_t)tracked_live : 0) + refused;

	return pow2_ceil(2 * need);
}

/* Under PEAK, after the line on what the figures hold: the live table and the run's cost. */
/* The most blocks the live table held at once: at the heap peak, or at the end. */
static int64_t live_most(const struct pt_pyobj_view *v)
{
	return v->peak_count > v->live_count ? v->peak_count : v->live_count;
}

static void pyobj_table_text(FILE *f, const struct pt_pyobj_view *v)
{
	const struct pt_pyobj_note *n = v->note;
	uint64_t full = v->live_full;
	char b1[32], b2[32];

	if (!n->live_slots)
		return;
	fprintf(f, "  live table: %" PRIu32 " slots, %s of kernel memory (%s)\n", n->live_slots,
		pt_fmt_bytes(b1, sizeof(b1), (double)n->live_table_bytes), n->live_sized_from);
	if (full) {
		int64_t live = live_most(v);
		uint64_t fit = pt_live_slots_to_fit(live, full);

		/* Its memory scaled from this table's, as the kernel counted it. */
		fprintf(f, "  caveat: the live table was FULL: %" PRIu64 " allocations (%s) were counted but "
			   "not tracked as live, so the live and peak figures miss up to that much; "
			   "--max-live %" PRIu64 " would have held them (twice %" PRId64 " tracked + %" PRIu64
			   " refused), ~%s of kernel memory\n", full,
			pt_fmt_bytes(b1, sizeof(b1), (double)v->unheld_bytes), fit, live, full,
			pt_fmt_bytes(b2, sizeof(b2), (double)n->live_table_bytes / n->live_slots * (double)fit));
	}
	if (n->stats && n->bpf_runs)
		fprintf(f, "  cost, measured: %" PRIu64 " allocator calls probed, %.0f ns of BPF each (%.3f s "
			   "in all; the kernel's BPF run-time statistics)", n->bpf_runs,
			(double)n->bpf_ns / (double)n->bpf_runs, (double)n->bpf_ns / 1e9);
	else
		fprintf(f, "  cost: BPF time not measured (the kernel's BPF run-time statistics could not "
			   "be turned on)");
	if (n->cpu_read && n->bpf_runs)
		fprintf(f, "; the target's CPU time while traced: %.3f s user, %.3f s system, where each "
			   "call's uprobe trap and BPF run: at most %.1f us of system time per call",
			(double)n->cpu_user_ns / 1e9, (double)n->cpu_sys_ns / 1e9,
			(double)n->cpu_sys_ns / 1e3 / (double)n->bpf_runs);
	fprintf(f, "\n");
}

/* First screen, under PEAK: one line saying what the heap figures hold of Python's objects. */
void pt_pyobj_text(FILE *f, const struct pt_pyobj_view *v)
{
	const struct pt_pyobj_note *n = v->note;
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
	pyobj_table_text(f, v);
}

/* TRACER: the probed entry points. */
void pt_pyobj_text_tracer(FILE *f, const struct pt_pyobj_view *v)
{
	const struct pt_pyobj_note *n = v->note;
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
void pt_pyobj_json(FILE *f, const struct pt_pyobj_view *v)
{
	const struct pt_pyobj_note *n = v->note;
	const char *t = pt_pyobj_traced(n);
	bool in_heap = t[0] == 'm' || t[0] == 'p';
	int i;

	fprintf(f, "  \"allocator_families\": [%s%s],\n", v->light ? "" : "\"malloc\"",
		in_heap && !v->light ? ", \"python_objects\"" : "");
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
	fprintf(f, "], \"live_table\": {\"slots\": %" PRIu32 ", \"memory_bytes\": %" PRIu64 ", \"sized_from\": ",
		n->live_slots, n->live_table_bytes);
	pt_json_str(f, n->live_sized_from);
	fprintf(f, ", \"full_count\": %" PRIu64 ", \"untracked_bytes\": %" PRId64 ", \"max_live_to_fit\": ",
		(uint64_t)v->live_full, v->unheld_bytes);
	if (v->live_full)
		fprintf(f, "%" PRIu64, pt_live_slots_to_fit(live_most(v), v->live_full));
	else
		fprintf(f, "null");
	fprintf(f, "}, \"cost\": ");
	fprintf(f, "{\"calls\": %" PRIu64 ", \"bpf_ns\": ", n->bpf_runs);
	if (n->stats)
		fprintf(f, "%" PRIu64, n->bpf_ns);
	else
		fprintf(f, "null");
	if (n->cpu_read)
		fprintf(f, ", \"target_user_ns\": %" PRIu64 ", \"target_system_ns\": %" PRIu64 "}",
			n->cpu_user_ns, n->cpu_sys_ns);
	else
		fprintf(f, ", \"target_user_ns\": null, \"target_system_ns\": null}");
	fprintf(f, "},\n");
}
