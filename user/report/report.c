// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * report.c — the text and JSON reports, and the output directory with every format.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "util/fmt.h"
#include "util/outdir.h"
#include "bpf/inv.h"
#include "report/report.h"
#include "rss/rss.h"
#include "report/perfmap.h"
#include "output/holder.h"
#include "profile/frames.h"

static const char *const err_names[PT_ERR_COUNT] = {
	[PT_ERR_LIVE_FULL] = "live_table_full",
	[PT_ERR_STACK_FULL] = "stack_table_full",
	[PT_ERR_STACK_COLLISION] = "stack_collision",
	[PT_ERR_MISSED_RETURN] = "missed_return",
	[PT_ERR_RINGBUF_LOST] = "ringbuf_lost",
	[PT_ERR_UNKNOWN_FREE] = "unknown_free",
	[PT_ERR_THREAD_STATE] = "thread_state_failed",
	[PT_ERR_STACK_READ] = "stack_read_failed",
	[PT_ERR_STALE_LIVE] = "stale_live",
	[PT_ERR_PTR_READ] = "result_read_failed",
	[PT_ERR_RAPI_FULL] = "runtime_api_table_full",
	[PT_ERR_RAPI_UNPARSED] = "runtime_api_unparsed",
	[PT_ERR_SRET_UNKNOWN] = "request_id_unknown",
	[PT_ERR_INV_LOST] = "invocations_overwritten",
	[PT_ERR_UNWIND_NO_CFI] = "unwind_no_cfi",
	[PT_ERR_UNWIND_UNSUPPORTED] = "unwind_unsupported",
	[PT_ERR_UNWIND_BAD_FRAME] = "unwind_bad_frame",
	[PT_ERR_UNWIND_READ] = "unwind_read_failed",
	[PT_ERR_UNWIND_DEPTH] = "unwind_too_deep",
	[PT_ERR_UNWIND_FP_FALLBACK] = "unwind_fp_fallback",
	[PT_ERR_UNWIND_PENDING] = "unwind_not_yet_covered",
	[PT_ERR_UNWIND_ROWS_FULL] = "unwind_rows_full",
	[PT_ERR_UNWIND_MAPS_FULL] = "unwind_maps_full",
	[PT_ERR_UNWIND_FILE] = "unwind_file_failed",
	[PT_ERR_ARENA_FULL] = "arena_table_full",
	[PT_ERR_CHUNK_READ] = "chunk_header_unreadable",
	[PT_ERR_CHUNK_SLACK] = "chunk_slack_saturated",
	[PT_ERR_PY_READ] = "python_read_failed",
	[PT_ERR_PY_DEPTH] = "python_too_deep",
	[PT_ERR_PY_STORE] = "python_store_failed",
	[PT_ERR_PY_CODE] = "python_code_unreadable",
	[PT_ERR_PY_UNMATCHED] = "python_unmatched",
	[PT_ERR_PY_LAYOUT] = "python_layout_failed",
	[PT_ERR_NODE_FLAGS] = "node_perf_flags_missing",
	[PT_ERR_STACK_CUT] = "stack_table_cut",
	[PT_ERR_INV_STACKS_LOST] = "invocation_stacks_lost",
	[PT_ERR_PERF_MAP_CUT] = "perf_map_cut",
};

static const char *const err_help[PT_ERR_COUNT] = {
	[PT_ERR_LIVE_FULL] = "allocations counted but not tracked as live (raise --max-live)",
	[PT_ERR_STACK_FULL] = "allocations counted under [unknown stack]: every part of the stack table was full, even for stacks cut to their leaf (raise --max-stacks)",
	[PT_ERR_STACK_COLLISION] = "stack hash collisions, counted under [unknown stack]",
	[PT_ERR_MISSED_RETURN] = "allocator calls whose return was never seen (not counted)",
	[PT_ERR_RINGBUF_LOST] = "rare events (exit, new code mappings) dropped",
	[PT_ERR_UNKNOWN_FREE] = "frees of blocks not seen allocated: allocated before tracing began (attach mode), held by no live-table slot (live_table_full), or freed by glibc internals (e.g. tcache teardown at thread exit)",
	[PT_ERR_THREAD_STATE] = "allocator calls not traced: per-thread state could not be created",
	[PT_ERR_STACK_READ] = "stacks whose user memory could not be read (counted under [unknown stack])",
	[PT_ERR_STALE_LIVE] = "pointers returned again while still live to us (a free was missed)",
	[PT_ERR_PTR_READ] = "posix_memalign results that could not be read (not counted)",
	[PT_ERR_RAPI_FULL] = "Runtime API sockets or streamed responses not tracked (table full): boundaries may be missed",
	[PT_ERR_RAPI_UNPARSED] = "Runtime API request lines not parsed (a POST .../invocation/ line over 512 bytes, or one written in pieces past that): their boundaries were missed",
	[PT_ERR_SRET_UNKNOWN] = "aws-lambda-cpp invocations started without their request id (arm64: get_next's result pointer is kept from its entry, whose probe was not set yet)",
	[PT_ERR_INV_LOST] = "invocations whose kernel record was reused before it was read (figures lost)",
	[PT_ERR_UNWIND_NO_CFI] = "stacks cut at code without CFI or frame pointer (JIT code, or a library not loaded yet)",
	[PT_ERR_UNWIND_UNSUPPORTED] = "stacks cut at a CFI rule the unwinder cannot follow (signal frame, realigned stack)",
	[PT_ERR_UNWIND_BAD_FRAME] = "stacks cut at an implausible frame (CFA or frame pointer not above the previous one)",
	[PT_ERR_UNWIND_READ] = "stacks cut where a saved return address could not be read",
	[PT_ERR_UNWIND_DEPTH] = "stacks deeper than the frames kept per stack (PT_MAX_FRAMES = 64), cut there",
	[PT_ERR_UNWIND_FP_FALLBACK] = "stacks with frames in code without CFI, unwound by frame pointer (may be wrong)",
	[PT_ERR_UNWIND_PENDING] = "stacks taken before their code's unwind tables were loaded (built while the target runs): frame pointers there, or cut",
	[PT_ERR_UNWIND_ROWS_FULL] = "executable files left without unwind tables: row table full",
	[PT_ERR_UNWIND_MAPS_FULL] = "executable mappings beyond the unwinder's mapping table",
	[PT_ERR_UNWIND_FILE] = "executable files whose .eh_frame could not be read (their frames use frame pointers)",
	[PT_ERR_ARENA_FULL] = "arena tables full: allocations counted under 'other arenas' (beyond 254 thread arenas) or a thread's second arena row (a third arena), and threads beyond 4094 counted together (tid 0)",
	[PT_ERR_CHUNK_READ] = "allocations whose glibc chunk header or heap_info was unreadable or implausible: not attributed to an arena",
	[PT_ERR_CHUNK_SLACK] = "blocks whose glibc chunk exceeds the request by more than 64 KiB: their arena's chunk bytes are short by the excess",
	[PT_ERR_PY_READ] = "Python frame chains cut where a thread state or frame could not be read",
	[PT_ERR_PY_DEPTH] = "Python stacks deeper than the words kept per stack (PT_MAX_PY_FRAMES = 128), cut there (\"[python frames truncated]\")",
	[PT_ERR_PY_STORE] = "new stacks whose Python frames could not be stored (native frames kept)",
	[PT_ERR_PY_CODE] = "Python code objects freed before their names were read (\"[python code 0x...]\")",
	[PT_ERR_PY_UNMATCHED] = "stacks with Python frames beyond the native interpreter frames (shown at the root)",
	[PT_ERR_PY_LAYOUT] = "CPython interpreters whose frames could not be read (unknown version, bad debug offsets, failed live check): their stacks have native frames only",
	[PT_ERR_NODE_FLAGS] = "node images started without --perf-basic-prof or --interpreted-frames-native-stack: their JavaScript frames are unnamed",
	[PT_ERR_STACK_CUT] = "new stacks kept cut to their innermost frames (\"[stack table full: outer frames cut]\") or to their leaf (\"[stack table full: cut to the leaf]\"): the table's part for whole stacks was full (raise --max-stacks)",
	[PT_ERR_INV_STACKS_LOST] = "invocations whose stacks at the peak were not read (two more had begun before peaktrace got to them: back-to-back short invocations); their figures are whole, their per-invocation stacks empty",
	[PT_ERR_PERF_MAP_CUT] = "bytes of the JIT's perf map (/tmp/perf-PID.map) not used: past its budget (--perf-map-max), in holes or NUL runs, or in over-long or malformed lines; JIT frames they named stay unnamed",
};

/*
 * Which printed figures each counter distorts, and how: a nonzero counter puts one caveat
 * line beside each of those figures (text) and one entry in "caveats" (JSON), so a figure is
 * never read without the loss that bends it. DATA LOSS AND DISTORTION keeps the full list.
 */
enum { AFF_HEAP = 1, AFF_STACKS = 2, AFF_INV = 4, AFF_ARENAS = 8 };
#define AFF_ALL (AFF_HEAP | AFF_STACKS | AFF_INV | AFF_ARENAS)

static const unsigned char err_affects[PT_ERR_COUNT] = {
	[PT_ERR_LIVE_FULL] = AFF_ALL,
	[PT_ERR_STACK_FULL] = AFF_STACKS,
	[PT_ERR_STACK_COLLISION] = AFF_STACKS,
	[PT_ERR_MISSED_RETURN] = AFF_ALL,
	[PT_ERR_RINGBUF_LOST] = AFF_STACKS | AFF_INV,
	[PT_ERR_UNKNOWN_FREE] = AFF_HEAP,
	[PT_ERR_THREAD_STATE] = AFF_ALL,
	[PT_ERR_STACK_READ] = AFF_STACKS,
	[PT_ERR_STALE_LIVE] = AFF_ALL,
	[PT_ERR_PTR_READ] = AFF_ALL,
	[PT_ERR_RAPI_FULL] = AFF_INV,
	[PT_ERR_RAPI_UNPARSED] = AFF_INV,
	[PT_ERR_SRET_UNKNOWN] = AFF_INV,
	[PT_ERR_INV_LOST] = AFF_INV,
	[PT_ERR_UNWIND_NO_CFI] = AFF_STACKS,
	[PT_ERR_UNWIND_UNSUPPORTED] = AFF_STACKS,
	[PT_ERR_UNWIND_BAD_FRAME] = AFF_STACKS,
	[PT_ERR_UNWIND_READ] = AFF_STACKS,
	[PT_ERR_UNWIND_DEPTH] = AFF_STACKS,
	[PT_ERR_UNWIND_FP_FALLBACK] = AFF_STACKS,
	[PT_ERR_UNWIND_PENDING] = AFF_STACKS,
	[PT_ERR_UNWIND_ROWS_FULL] = AFF_STACKS,
	[PT_ERR_UNWIND_MAPS_FULL] = AFF_STACKS,
	[PT_ERR_UNWIND_FILE] = AFF_STACKS,
	[PT_ERR_ARENA_FULL] = AFF_ARENAS,
	[PT_ERR_CHUNK_READ] = AFF_ARENAS,
	[PT_ERR_CHUNK_SLACK] = AFF_ARENAS,
	[PT_ERR_PY_READ] = AFF_STACKS,
	[PT_ERR_PY_DEPTH] = AFF_STACKS,
	[PT_ERR_PY_STORE] = AFF_STACKS,
	[PT_ERR_PY_CODE] = AFF_STACKS,
	[PT_ERR_PY_UNMATCHED] = AFF_STACKS,
	[PT_ERR_PY_LAYOUT] = AFF_STACKS,
	[PT_ERR_NODE_FLAGS] = AFF_STACKS,
	[PT_ERR_STACK_CUT] = AFF_STACKS,
	[PT_ERR_INV_STACKS_LOST] = AFF_INV,
	[PT_ERR_PERF_MAP_CUT] = AFF_STACKS,
};

/* What is wrong with the figures, for the counters that bend totals (the others' help says it). */
static const char *const err_effect[PT_ERR_COUNT] = {
	[PT_ERR_LIVE_FULL] = "frees, live and peak figures are too low: blocks not tracked as live because the live table was full (raise --max-live); their frees count as unknown_free",
	[PT_ERR_MISSED_RETURN] = "allocations too low: allocator calls whose return was never seen are not counted",
	[PT_ERR_THREAD_STATE] = "figures too low: allocator calls not traced (per-thread state could not be created)",
	[PT_ERR_STALE_LIVE] = "live and peak figures were too high until a block's address came back: its free was missed",
	[PT_ERR_PTR_READ] = "allocations too low: posix_memalign results whose pointer could not be read are not counted",
};

static const char *const aff_names[] = { "heap", "stacks", "invocations", "arenas" };

/* The cause of unknown frees depends on how tracing began (and on the live table). */
static const char *unknown_free_cause(const struct pt_report *r)
{
	if (r->errors[PT_ERR_LIVE_FULL])
		return r->launched ?
			"frees of blocks the live table could not hold (live_table_full; raise --max-live): not in the frees figures" :
			"frees of blocks the live table could not hold (live_table_full; raise --max-live) or allocated before tracing began: not in the frees figures";
	if (r->launched)
		return "frees of blocks never seen allocated (launch mode: nothing was allocated before tracing; glibc internals, e.g. tcache teardown at thread exit, or an entry point not probed): not in the frees figures";
	return "frees of blocks allocated before tracing began (or by glibc internals, e.g. tcache teardown at thread exit): not in the frees figures";
}

/* What each kind of lost ring buffer record blinded (enum pt_event_type; rb_lost). */
static const char *const rb_kind_names[PT_RB_KINDS] = {
	[PT_EV_EXIT] = "exit", [PT_EV_EXEC_MAP] = "code_mapping", [PT_EV_EXEC] = "exec",
	[PT_EV_INV_START] = "invocation_start", [PT_EV_INV_END] = "invocation_end",
	[PT_EV_PY_STACK] = "python_stack", [PT_EV_RSS_OBJ] = "rss_object", [PT_EV_RSS_STACK] = "rss_stack",
	[PT_EV_INV_RECORD] = "invocation_record",
};
static const char *const rb_kind_effect[PT_RB_KINDS] = {
	[PT_EV_EXIT] = "the target's exit not heard from the kernel: its exit status and high-water mark at exit may be missing",
	[PT_EV_EXEC_MAP] = "code mapped then not read: frames in those libraries may be unnamed",
	[PT_EV_EXEC] = "an exec not heard: the new image's frames may be named from the old one",
	[PT_EV_INV_START] = "those invocations' request ids and start times from their end only",
	[PT_EV_INV_END] = "those invocations not recorded at all",
	[PT_EV_PY_STACK] = "those stacks' Python code objects resolved late or not at all (\"[python code 0x...]\")",
	[PT_EV_RSS_OBJ] = "file or shmem objects holding RSS not named by path",
	[PT_EV_RSS_STACK] = "faults in new regions not classified by memory kind while mapped",
	[PT_EV_INV_RECORD] = "those invocations' figures read late from the kernel's two-slot buffer (overwritten when two more began first)",
};

/* ringbuf_lost's cause: which kinds were lost and what each distorts. */
static const char *ringbuf_cause(const struct pt_report *r)
{
	static char buf[2048];
	size_t o;
	int k, n = 0;

	o = (size_t)snprintf(buf, sizeof(buf), "%s", "ring buffer full, records dropped:");
	for (k = 1; k < PT_RB_KINDS && o < sizeof(buf); k++) {
		if (!r->rb_lost[k] || !rb_kind_names[k])
			continue;
		o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s %s %" PRIu64 " (%s)", n++ ? ";" : "",
				      rb_kind_names[k], r->rb_lost[k], rb_kind_effect[k]);
	}
	if (!n && o < sizeof(buf))
		o += (size_t)snprintf(buf + o, sizeof(buf) - o, " %s", err_help[PT_ERR_RINGBUF_LOST]);
	if (r->rb_inv_shed && o < sizeof(buf))
		snprintf(buf + o, sizeof(buf) - o, "; %" PRIu64 " of them invocation records refused with the "
			 "ring three quarters full, so exits and code mappings kept the last quarter", r->rb_inv_shed);
	return buf;
}

/* The one-line cause of counter e in this report. */
static const char *err_cause(const struct pt_report *r, int e)
{
	if (e == PT_ERR_UNKNOWN_FREE)
		return unknown_free_cause(r);
	if (e == PT_ERR_RINGBUF_LOST)
		return ringbuf_cause(r);
	if (e == PT_ERR_NODE_FLAGS && r->node_flags_note[0])
		return r->node_flags_note;
	if (e == PT_ERR_PERF_MAP_CUT && r->perf_map.note[0])
		return r->perf_map.note;
	if (e >= 0 && e < PT_ERR_COUNT && err_effect[e])
		return err_effect[e];
	return pt_err_help(e);
}

/* One "caveat:" line per nonzero counter that distorts the figures of section aff. With
 * brief, the names only (a section that repeats an earlier one's caveats). */
static void text_caveats(FILE *f, const struct pt_report *r, unsigned aff, bool brief)
{
	int e, n = 0;

	for (e = 0; e < PT_ERR_COUNT; e++) {
		if (!r->errors[e] || !(err_affects[e] & aff))
			continue;
		if (brief)
			fprintf(f, "%s%s", n++ ? ", " : "  caveats (as above): ", pt_err_name(e));
		else
			fprintf(f, "  caveat: %s %" PRIu64 ": %s\n", pt_err_name(e), r->errors[e],
				err_cause(r, e));
	}
	if (brief && n)
		fputc('\n', f);
}

const char *pt_err_name(int e)
{
	return e >= 0 && e < PT_ERR_COUNT ? err_names[e] : "?";
}

const char *pt_err_help(int e)
{
	return e >= 0 && e < PT_ERR_COUNT ? err_help[e] : "?";
}

static bool has_invocations(const struct pt_report *r)
{
	uint32_t k;

	for (k = 0; r->invs && k < r->invs->n; k++)
		if (r->invs->r[k].seq)
			return true;
	return false;
}

/* The leaks' sections' view of the report (invocation/leaked.h). */
static struct pt_leaked_view leaked_view(const struct pt_report *r)
{
	return (struct pt_leaked_view){
		.leaked = &r->leaked,
		.prof = &r->prof,
		.invs = r->invs,
		.sample_bytes = r->sample_bytes,
		.top = r->top,
		.pid = r->pid,
		.comm = r->comm,
	};
}

/* The --python-objects lines' view of the report (python/pyobj.h). */
static struct pt_pyobj_view pyobj_view(const struct pt_report *r)
{
	return (struct pt_pyobj_view){
		.note = &r->pyobj,
		.live_full = r->errors[PT_ERR_LIVE_FULL],
		.peak_count = r->totals.peak_count,
		.live_count = r->totals.live_count,
		.unheld_bytes = r->prof.unheld_bytes,
		.light = r->light,
	};
}

/* ---- text ----------------------------------------------------------------------------------- */

struct sort_ctx {
	const struct pt_profile *p;
	int m;
};
static struct sort_ctx g_sort;

static int cmp_stack_desc(const void *a, const void *b)
{
	uint64_t va = g_sort.p->stacks[*(const uint32_t *)a].v[g_sort.m];
	uint64_t vb = g_sort.p->stacks[*(const uint32_t *)b].v[g_sort.m];

	if (va != vb)
		return va < vb ? 1 : -1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/* What --frames did to the stacks, one line (none when every frame is shown as unwound). */
static void text_frames_note(FILE *f, const struct pt_profile *p)
{
	if (p->collapsed_runs && p->frames_mode != PT_FRAMES_LANG)
		fprintf(f, "  frames: %" PRIu64 " unnamed interpreter frames shown as %" PRIu64
			   " \"[... internals]\" frames in %" PRIu64 " stacks (--frames all shows them)\n",
			p->collapsed_frames, p->collapsed_runs, p->frames_stacks_changed);
	if (p->frames_mode == PT_FRAMES_LANG)
		fprintf(f, "  frames: --frames python: language frames and the allocating native frame only; "
			   "%" PRIu64 " frames hidden, %" PRIu64 " collapsed, in %" PRIu64 " stacks (--frames all shows them)\n",
			p->hidden_frames, p->collapsed_frames, p->frames_stacks_changed);
}

/* The stacks with any of metric m, indexes into p->stacks: *n of them, the first k (< 0: none)
 * largest first, as a sort of all would place them; the others after, in no set order (the
 * lists show the top k and sum the rest). Loader-initializer stacks are left out when asked:
 * their count, bytes and blocks in ld[3]. */
static uint32_t *ranked_stacks(const struct pt_profile *p, int m_bytes, int m_count, int k,
			       uint64_t *ld, uint32_t *n)
{
	uint32_t *idx = calloc(p->nstacks + 1, sizeof(*idx)), i;

	*n = 0;
	if (!idx)
		return NULL;
	for (i = 0; i < p->nstacks; i++) {
		const struct pt_stack *s = &p->stacks[i];

		if (!s->v[m_bytes] && !s->v[m_count])
			continue;
		if (ld && pt_stack_loader_init(p, s)) {
			ld[0]++;
			ld[1] += s->v[m_bytes];
			ld[2] += s->v[m_count];
			continue;
		}
		idx[(*n)++] = i;
	}
	if (k > 0 && pt_stacks_top(p, m_bytes, idx, *n, (uint32_t)k)) {
		g_sort.p = p;   /* no room for the selection: the whole sort */
		g_sort.m = m_bytes;
		qsort(idx, *n, sizeof(*idx), cmp_stack_desc);
	}
	return idx;
}

static void top_stacks(FILE *f, const struct pt_report *r, int m_bytes, int m_count,
		       const char *title, uint64_t total, bool first)
{
	const struct pt_profile *p = &r->prof;
	uint32_t *idx, n = 0, i, j, shown = 0, ld_n;
	uint64_t ld_bytes, ld_blocks, rest = 0, ld[3] = { 0 };
	char b1[32], b2[32];

	fprintf(f, "\n%s (%s)\n", title, pt_fmt_bytes(b1, sizeof(b1), (double)total));
	text_caveats(f, r, AFF_STACKS, !first);
	if (first)
		text_frames_note(f, p);
	/* Leak candidates: what the loader's initializers keep (libstdc++'s emergency pool) was
	 * allocated before main, once, and is no leak: counted apart below. */
	idx = ranked_stacks(p, m_bytes, m_count, r->top, m_bytes == PT_LIVE_BYTES ? ld : NULL, &n);
	if (!idx)
		return;
	ld_n = (uint32_t)ld[0];
	ld_bytes = ld[1];
	ld_blocks = ld[2];
	if (n + ld_n == 0)
		fprintf(f, "  (none)\n");
	for (i = 0; i < n; i++) {
		const struct pt_stack *s = &p->stacks[idx[i]];
		double pct = total ? 100.0 * s->v[m_bytes] / total : 0;

		if ((int)shown >= r->top) {
			shown++;
			rest += s->v[m_bytes];
			continue;
		}
		fprintf(f, "  #%-2u %s (%.1f%%) in %" PRIu64 " block%s; allocated %s in %" PRIu64
			   " call%s\n",
			++shown, pt_fmt_bytes(b1, sizeof(b1), (double)s->v[m_bytes]), pct, s->v[m_count],
			s->v[m_count] == 1 ? "" : "s",
			pt_fmt_bytes(b2, sizeof(b2), (double)s->v[PT_ALLOC_BYTES]),
			s->v[PT_ALLOC_COUNT], s->v[PT_ALLOC_COUNT] == 1 ? "" : "s");
		for (j = 0; j < s->nframes && j < 16; j++)
			pt_frame_text(f, p, s->frames[j]);
		if (s->nframes > 16)
			fprintf(f, "        ... %u more frames\n", s->nframes - 16);
	}
	if (shown > (uint32_t)r->top)
		fprintf(f, "  ... %u more stacks holding %s (report.json keeps the top --json-stacks of each figure; the folded files and flame graphs every one)\n",
			shown - (uint32_t)r->top, pt_fmt_bytes(b1, sizeof(b1), (double)rest));
	if (ld_n)
		fprintf(f, "  not listed: %s in %" PRIu64 " block%s from %u stack%s allocated by the dynamic "
			   "loader's initializers (_dl_init) before main: start-up state, not leaks\n",
			pt_fmt_bytes(b1, sizeof(b1), (double)ld_bytes), ld_blocks, ld_blocks == 1 ? "" : "s",
			ld_n, ld_n == 1 ? "" : "s");
	free(idx);
}

static int cmp_mstack_desc(const void *a, const void *b)
{
	const struct pt_map_stack *x = a, *y = b;

	if (x->mmap_bytes != y->mmap_bytes)
		return x->mmap_bytes < y->mmap_bytes ? 1 : -1;
	if (x->munmap_bytes != y->munmap_bytes)
		return x->munmap_bytes < y->munmap_bytes ? 1 : -1;
	return 0;
}

/* The first line: what was traced, for how long, how it ended. */
/* One line: what peaktrace's own start-up cost and how much of it the target waited for. */
static void text_startup(FILE *f, const struct pt_report *r)
{
	const struct pt_startup *st = &r->startup;

	fprintf(f, "start-up: BPF programs loaded in %.3f s, unwind tables %.3f s (and %.3f s later), "
		   "probes attached in %.3f s", st->bpf_load_ns / 1e9,
		st->unwind_ns / 1e9, st->unwind_later_ns / 1e9, st->attach_ns / 1e9);
	if (r->launched)
		fprintf(f, "; the command waited %.3f s before its exec and %.3f s at %u exec stop%s\n",
			st->before_exec_ns / 1e9, st->held_ns / 1e9, st->exec_stops,
			st->exec_stops == 1 ? "" : "s");
	else
		fputs(" (the target ran meanwhile)\n", f);
	if (!st->cache_on) {
		if (!strcmp(r->unwind ? r->unwind : "", "dwarf"))
			fputs("unwind table cache: off (tables built at every start)\n", f);
		return;
	}
	fprintf(f, "unwind table cache: %" PRIu64 " tables read, %" PRIu64 " built (%" PRIu64
		   " written), %" PRIu64 " rejected as corrupt or foreign", st->cache.hits,
		st->cache.misses, st->cache.written, st->cache.rejected);
	if (st->cache.evicted)
		fprintf(f, ", %" PRIu64 " least recently used removed to make room", st->cache.evicted);
	if (st->cache.not_written)
		fprintf(f, ", %" PRIu64 " not written (cache unwritable)", st->cache.not_written);
	if (st->cache.no_build_id)
		fprintf(f, ", %" PRIu64 " files without a build id (not cached)", st->cache.no_build_id);
	if (st->cache.mismatched)
		fprintf(f, ", %" PRIu64 " built again: their build id's table came from other unwind "
			   "sections (a forged or reused build id)", st->cache.mismatched);
	if (st->cache.uncacheable)
		fprintf(f, ", %" PRIu64 " not cacheable (CFI reading words outside its section)",
			st->cache.uncacheable);
	fputc('\n', f);
}

/* The kernel, and each optional feature it lacks with what that cost this run (kernel/). */
static void text_kernel(FILE *f, const struct pt_report *r)
{
	const struct pt_kfeats *k = r->kernel;
	char since[64], cost[512];
	int n;

	if (!k)
		return;
	n = pt_kfeat_count(k, PT_KF_MISSING, false);
	fprintf(f, "kernel: %s", k->release);
	if (!n) {
		fputs(", every feature peaktrace can use\n", f);
		return;
	}
	fprintf(f, ", without %d optional feature%s:\n", n, n == 1 ? "" : "s");
	for (int id = 0; id < PT_KF_COUNT; id++) {
		if (k->state[id] != PT_KF_MISSING || pt_kfeat_defs[id].need != PT_NEED_OPTIONAL)
			continue;
		pt_kfeat_cost(id, &r->kernel_cost, cost, sizeof(cost));
		fprintf(f, "  %s %s%s: %s\n", pt_kfeat_defs[id].label, pt_kfeat_since_text(id, since, sizeof(since)),
			k->pretended[id] ? " [pretended: PEAKTRACE_PRETEND_MISSING]" : "", cost);
	}
}

static void text_header(FILE *f, const struct pt_report *r)
{
	fprintf(f, "peaktrace %s: PID %d (%s) %s, traced %.2f s", PT_VERSION, r->pid, r->comm,
		r->launched ? "launched" : "attached", r->duration_ns / 1e9);
	if (r->exited) {
		if (r->exit_signal)
			fprintf(f, ", killed by signal %d", r->exit_signal);
		else
			fprintf(f, ", exited with status %d", r->exit_status);
	}
	fputc('\n', f);
	pt_execs_text(f, &r->execs);
	text_startup(f, r);
	text_kernel(f, r);
}

/* TRACER (at the end): the allocator, the unwinder and where each entry point was probed. */
static void text_tracer(FILE *f, const struct pt_report *r)
{
	struct pt_pyobj_view pv = pyobj_view(r);
	char b1[512];
	int i;

	pt_sanitize(b1, sizeof(b1), r->alloc->path);
	fprintf(f, "\nTRACER\nallocator: %s %s\n", pt_allocator_kind_name(r->alloc->kind), b1);
	fprintf(f, "unwinder: %s\n", !r->unwind ? "?" :
		!strcmp(r->unwind, "dwarf") ? "dwarf (.eh_frame tables in the kernel, frame pointers where code has no CFI)" :
		!strcmp(r->unwind, "fp") ? "fp (frame pointers)" : "none (allocation site only)");
	fprintf(f, "probes (%s):\n", r->attach_multi ? "uprobe-multi links" : "perf-event uprobes");
	for (i = 0; i < r->nprobes; i++) {
		const struct pt_probe_info *pi = &r->probes[i];

		/* An extra entry point reads "free as _ZdlPvm": probed as free. */
		char name[64];

		if (strcmp(pi->symbol, pt_alloc_fn_name(pi->fn)))
			snprintf(name, sizeof(name), "%s as %s", pt_alloc_fn_name(pi->fn), pi->symbol);
		else
			snprintf(name, sizeof(name), "%s", pi->symbol);
		if (pi->forwards) {
			fprintf(f, "  %-15s jumps to another entry point (not probed)\n", name);
			continue;
		}
		if (pi->shared_with >= 0) {
			fprintf(f, "  %-15s same address as %s\n", name, pi->shared_symbol);
			continue;
		}
		fprintf(f, "  %-15s %s+%u (file offset 0x%" PRIx64 ")%s: %s, %s", name,
			pi->symbol, pi->place.skip, pi->offset, pi->return_probe ? " +return" : "",
			pi->place.insn, pi->place.emulated ? "emulated" : "single-stepped");
		if (pi->place.skip)
			fprintf(f, " (skipped %s)", pi->place.skipped);
		fputc('\n', f);
	}
	pt_pyobj_text_tracer(f, &pv);
}

/* HEAP, RSS and MEMORY SYSCALLS: the kernel's totals. */
static void text_totals(FILE *f, const struct pt_report *r)
{
	const struct pt_global *g = &r->totals;
	char b1[32], b2[32], b3[32], b4[32], b5[32];

	if (r->light)
		fprintf(f, "\nHEAP\n  not traced (--light: no allocator probes)\n");
	else {
	fprintf(f, "\nHEAP (requested bytes, outermost allocator calls)\n");
	fprintf(f, "  allocations      %12" PRIu64 "   %s\n", (uint64_t)g->alloc_count,
		pt_fmt_bytes(b1, sizeof(b1), (double)g->alloc_bytes));
	fprintf(f, "  frees            %12" PRIu64 "   %s\n", (uint64_t)pt_free_count(g),
		pt_fmt_bytes(b1, sizeof(b1), (double)pt_free_bytes(g)));
	fprintf(f, "  live at end      %12" PRId64 "   %s\n", (int64_t)g->live_count,
		pt_fmt_bytes(b1, sizeof(b1), (double)g->live_bytes));
	fprintf(f, "  peak live heap   %12" PRId64 "   %s\n", (int64_t)g->peak_count,
		pt_fmt_bytes(b1, sizeof(b1), (double)g->peak_bytes));
	text_caveats(f, r, AFF_HEAP, false);
	if (r->sample_bytes) {
		/* Say it where the figures are read: the stacks below are estimates. */
		fprintf(f, "  SAMPLED: stacks are unbiased estimates from Poisson sampling by bytes, mean %s"
			   " (--sample-bytes); the totals and peaks above and all RSS figures are exact\n",
			pt_fmt_bytes(b1, sizeof(b1), (double)r->sample_bytes));
		fprintf(f, "  stacks unwound   %12" PRIu64 "   %s (%.2f%% of allocations)\n",
			(uint64_t)g->sampled_count, pt_fmt_bytes(b1, sizeof(b1), (double)g->sampled_bytes),
			g->alloc_count ? 100.0 * (double)g->sampled_count / (double)g->alloc_count : 0.0);
		fprintf(f, "  [unsampled]      %12" PRIu64 "   %s (no stack; in the totals only)\n",
			(uint64_t)(g->alloc_count - g->sampled_count),
			pt_fmt_bytes(b1, sizeof(b1), (double)(g->alloc_bytes - g->sampled_bytes)));
	}
	}
	fprintf(f, "\nRSS\n");
	fprintf(f, "  peak RSS (kmem:rss_stat)   %s   last: %s (file %s, anon %s, shmem %s)\n",
		pt_fmt_bytes(b1, sizeof(b1), (double)g->rss_peak),
		pt_fmt_bytes(b2, sizeof(b2),
			     (double)pt_rss_total(g)),
		pt_fmt_bytes(b3, sizeof(b3), (double)g->rss[PT_RSS_FILE]),
		pt_fmt_bytes(b4, sizeof(b4), (double)g->rss[PT_RSS_ANON]),
		pt_fmt_bytes(b5, sizeof(b5), (double)g->rss[PT_RSS_SHMEM]));
	fprintf(f, "  VmHWM (process high-water mark, what Lambda-style tools report)   %s\n",
		r->vmhwm_bytes ? pt_fmt_bytes(b1, sizeof(b1), (double)r->vmhwm_bytes) : "unknown");
	pt_tl_text(f, &r->timeline);   /* where the peak was in time; samples dropped or missed */
	fprintf(f, "\nMEMORY SYSCALLS\n");
	fprintf(f, "  mmap %" PRIu64 " (%s)   munmap %" PRIu64 " (%s)   mremap %" PRIu64
		   "   brk %" PRIu64 " (heap grew %s)   madvise DONTNEED/FREE %" PRIu64 " (%s)\n",
		(uint64_t)g->mmap_count, pt_fmt_bytes(b1, sizeof(b1), (double)g->mmap_bytes), (uint64_t)g->munmap_count,
		pt_fmt_bytes(b2, sizeof(b2), (double)g->munmap_bytes), (uint64_t)g->mremap_count, (uint64_t)g->brk_count,
		pt_fmt_bytes(b3, sizeof(b3),
			     (double)((uint64_t)g->brk_max > (uint64_t)g->brk_start ? (uint64_t)g->brk_max - (uint64_t)g->brk_start : 0)),
		(uint64_t)g->madv_count, pt_fmt_bytes(b4, sizeof(b4), (double)g->madv_bytes));
}

/*
 * Which rows the first screen shows: every one up to INV_SCREEN_ALL; past that the first and
 * last INV_SCREEN_ENDS, the INV_SCREEN_PEAKS highest peak RSS and every killed one or one over
 * --max-peak, so ten thousand warm invocations do not push the rest of the report off the
 * screen. The others are counted where they are left out; invocations.jsonl has every one.
 */
#define INV_SCREEN_ALL		40
#define INV_SCREEN_ENDS		10
#define INV_SCREEN_PEAKS	10

static bool *inv_rows_shown(const struct pt_report *r)
{
	uint32_t n = r->invs->n, k, j, best;
	bool *show = calloc(n + 1, sizeof(*show)), *taken;

	if (!show || n <= INV_SCREEN_ALL) {
		for (k = 0; show && k < n; k++)
			show[k] = true;
		return show;
	}
	for (k = 0; k < n; k++) {
		const struct pt_inv_record *ir = &r->invs->r[k];

		show[k] = k < INV_SCREEN_ENDS || k >= n - INV_SCREEN_ENDS ||
			  ir->outcome == PT_OUT_KILLED ||
			  (r->max_peak && (uint64_t)ir->rss_peak > r->max_peak);
	}
	taken = calloc(n, sizeof(*taken));
	for (j = 0; taken && j < INV_SCREEN_PEAKS; j++) {
		for (best = n, k = 0; k < n; k++)
			if (!taken[k] && (best == n || r->invs->r[k].rss_peak > r->invs->r[best].rss_peak))
				best = k;
		if (best < n)
			taken[best] = show[best] = true;
	}
	free(taken);
	return show;
}

/* Under INVOCATIONS: what glibc's malloc heap and CPython's pymalloc arenas held resident when
 * each shown invocation ended (arenas/resident.h), with or without --light. */
static void text_inv_resident(FILE *f, const struct pt_report *r, const bool *show)
{
	char b1[32], b2[32], b3[32], b4[32], num[24];
	uint32_t k, skipped = 0;
	bool any = false;

	for (k = 0; k < r->invs->n; k++) {
		any = any || (r->invs->r[k].mem_read && (!show || show[k]));
		skipped += r->invs->r[k].reading_skipped && (!show || show[k]);
	}
	if (!any && !skipped)
		return;
	if (skipped)
		fprintf(f, "  resident at the end not read after %u invocation%s: the next began before the "
			   "reading was due (50 ms after the end); reading the mappings then would slow it "
			   "(report.json end_reading_skipped_gap_ns)\n", skipped, skipped == 1 ? "" : "s");
	if (!any)
		return;
	fprintf(f, "  resident at each end (read from the mappings after it; malloc heap = glibc's main "
		   "arena [heap] + thread arenas' heaps, pymalloc arenas = CPython's object pools):\n");
	for (k = 0; k < r->invs->n; k++) {
		const struct pt_inv_record *ir = &r->invs->r[k];

		if (!ir->mem_read || (show && !show[k]))
			continue;
		snprintf(num, sizeof(num), "%" PRIu64, ir->seq);
		/* The row's number as the table above gives it. */
		fprintf(f, "  %4s  malloc heap %s (main arena %s, thread arenas %s), pymalloc arenas %s "
			   "(%u pools)", ir->seq ? num : pt_inv_started_before(ir) ? "0" : r->launched ? "init" : "-",
			pt_fmt_bytes(b1, sizeof(b1), (double)(ir->heap_main_resident + ir->heap_thread_resident)),
			pt_fmt_bytes(b2, sizeof(b2), (double)ir->heap_main_resident),
			pt_fmt_bytes(b3, sizeof(b3), (double)ir->heap_thread_resident),
			pt_fmt_bytes(b4, sizeof(b4), (double)ir->pymalloc_resident), ir->pymalloc_pools);
		if (ir->mem_unscanned)
			fprintf(f, "; %s of anonymous memory past the scan budget, not classified",
				pt_fmt_bytes(b1, sizeof(b1), (double)ir->mem_unscanned));
		fputc('\n', f);
	}
}

/* What bounded the invocations' records: those the kernel started but the ring buffer did not
 * bring, those not kept in memory (--max-invocations-kept), lines not written (--max-output). */
static void text_inv_bounds(FILE *f, const struct pt_report *r)
{
	const struct pt_inv_list *l = r->invs;
	char b[32];

	if (r->inv_seen > l->total_inv)
		fprintf(f, "  %" PRIu64 " of the %" PRIu64 " invocations the kernel saw start not recorded: their "
			   "end did not come through the ring buffer (ringbuf_lost)\n",
			r->inv_seen - l->total_inv, r->inv_seen);
	if (l->dropped)
		fprintf(f, "  %" PRIu64 " of %" PRIu64 " records not kept in memory (--max-invocations-kept %u: "
			   "the first and last %u and the highest peak RSS between are); not in this report, "
			   "report.json or the graphs, but in invocations.jsonl as they ended (up to --max-output)\n",
			l->dropped, l->total, l->keep, l->keep / 4);
	if (r->out.jsonl_cut || r->out.emf_cut || r->out.graphs_cut)
		fprintf(f, "  --max-output %s reached: %" PRIu64 " invocations.jsonl lines, %" PRIu64
			   " emf.jsonl lines and %" PRIu64 " per-invocation files not written\n",
			pt_fmt_bytes(b, sizeof(b), (double)r->out.cap), r->out.jsonl_cut, r->out.emf_cut,
			r->out.graphs_cut);
}

/* INVOCATIONS: one line per invocation (or the phase before the first). */
static void text_invocations(FILE *f, const struct pt_report *r)
{
	char b1[32], b2[32], b3[32], b4[32];
	bool *show = inv_rows_shown(r);
	uint32_t k, gap = 0, hidden = 0;

	fprintf(f, "\nINVOCATIONS (boundaries: %s; peaks reset at every start)\n", r->boundary);
	fprintf(f, "  %4s  %-36s  %10s  %-10s  %10s  %10s  %10s  %10s  %10s%s\n", "#", "request id",
		"duration", "outcome", "peak RSS", "peak heap", "heap grow", "allocs",
		"HWM (Lambda)", r->arenas.collected ? "  arena retained (change)" : "");
	for (k = 0; k < r->invs->n; k++) {
		const struct pt_inv_record *ir = &r->invs->r[k];
		double ms = ir->end_ns > ir->start_ns ? (ir->end_ns - ir->start_ns) / 1e6 : 0;

		char num[24], nallocs[24];

		if (show && !show[k]) {
			gap++;
			hidden++;
			continue;
		}
		if (gap)
			fprintf(f, "  %4s  (%u invocation%s not shown)\n", "...", gap, gap == 1 ? "" : "s");
		gap = 0;
		snprintf(num, sizeof(num), "%" PRIu64, ir->seq);
		snprintf(nallocs, sizeof(nallocs), "%" PRIu64, ir->alloc_count);
		fprintf(f, "  %4s  %-36s  %8.1fms  %-10s  %10s  %10s  %10s  %10s  %10s",
			ir->seq ? num : pt_inv_started_before(ir) ? "0" : r->launched ? "init" : "-",
			ir->seq || pt_inv_started_before(ir) ? ir->id :
			ir->attached ? "(attached, before invocation 1)" : "(init phase)", ms,
			pt_inv_outcome(ir),
			pt_fmt_bytes(b1, sizeof(b1), (double)ir->rss_peak),
			ir->light ? "-" : pt_fmt_bytes(b2, sizeof(b2), (double)ir->heap_peak),
			ir->light ? "-" : pt_fmt_bytes(b3, sizeof(b3), (double)(ir->heap_end - ir->heap_start)),
			ir->light ? "-" : nallocs, pt_fmt_bytes(b4, sizeof(b4), (double)ir->vmhwm));
		if (ir->arena_read) {
			fprintf(f, "  %10s (%s%s)", pt_fmt_bytes(b1, sizeof(b1), (double)ir->arena_retained),
				ir->arena_retained_change >= 0 ? "+" : "-",
				pt_fmt_bytes(b2, sizeof(b2), fabs((double)ir->arena_retained_change)));
		}
		fputc('\n', f);
	}
	if (gap)
		fprintf(f, "  %4s  (%u invocation%s not shown)\n", "...", gap, gap == 1 ? "" : "s");
	if (!hidden)
		text_inv_bounds(f, r);
	if (hidden)
		fprintf(f, "  %u of %u rows shown (the first and last %d, the %d highest peak RSS, every one killed or over --max-peak); "
			   "%s (with -o DIR)\n",
			r->invs->n - hidden, r->invs->n, INV_SCREEN_ENDS, INV_SCREEN_PEAKS,
			r->invs->dropped ? "every row kept in memory is in report.json's \"invocations\", every one "
					   "recorded in invocations.jsonl (up to --max-output)" :
					   "every row is in invocations.jsonl and report.json's \"invocations\"");
	text_inv_bounds(f, r);
	text_inv_resident(f, r, show);
	free(show);
	if (r->invs->n && pt_inv_started_before(&r->invs->r[0]))
		fprintf(f, "  0: already running when tracing began (its start was not seen; figures from then on)\n");
	if (r->max_peak)
		fprintf(f, "  --max-peak %s\n", pt_fmt_bytes(b1, sizeof(b1), (double)r->max_peak));
	text_caveats(f, r, AFF_INV, false);
}

/* The first screen: what the peak was, who held it (three stacks, by the frames a reader can act
 * on: output/holder.h), the RSS holders when the heap is a small part of the RSS, the
 * invocations, one line of advice, and the caveats that bend those figures. Everything else
 * follows. */
#define SUMMARY_STACKS 3

static void text_summary_stacks(FILE *f, const struct pt_report *r)
{
	struct pt_rss_view rv = pt_report_rss_view(r);
	const struct pt_profile *p = &r->prof;
	uint64_t total = r->totals.peak_bytes > 0 ? (uint64_t)r->totals.peak_bytes : 0;
	uint32_t *idx, n, i;
	char b1[32];

	idx = ranked_stacks(p, PT_PEAK_BYTES, PT_PEAK_COUNT,
			    r->top < SUMMARY_STACKS ? r->top : SUMMARY_STACKS, NULL, &n);
	if (!idx)
		return;
	fprintf(f, "\nWHO HELD IT (top %u of %u stacks live at the heap peak, by their first named frames "
		   "and the program's own code; whole stacks in TOP STACKS below)\n",
		n < SUMMARY_STACKS ? n : SUMMARY_STACKS, n);
	if (!n)
		fprintf(f, "  (none)\n");
	for (i = 0; i < n && i < SUMMARY_STACKS && (int)i < r->top; i++) {
		const struct pt_stack *s = &p->stacks[idx[i]];

		fprintf(f, "  #%-2u %s (%.1f%%) in %" PRIu64 " block%s\n", i + 1,
			pt_fmt_bytes(b1, sizeof(b1), (double)s->v[PT_PEAK_BYTES]),
			total ? 100.0 * s->v[PT_PEAK_BYTES] / total : 0, s->v[PT_PEAK_COUNT],
			s->v[PT_PEAK_COUNT] == 1 ? "" : "s");
		pt_holder_text(f, p, s);
	}
	free(idx);
	pt_rss_summary_text(f, &rv);
}

static void text_summary(FILE *f, const struct pt_report *r)
{
	struct pt_pyobj_view pv = pyobj_view(r);
	struct pt_rss_view rv = pt_report_rss_view(r);
	const struct pt_global *g = &r->totals;
	char b1[32], b2[32], b3[32];

	if (r->light) {
		pt_light_text(f, r);
		pt_rss_python_note(f, &rv, true);
		pt_rss_summary_text(f, &rv);
		if (has_invocations(r))
			text_invocations(f, r);
		return;
	}
	fprintf(f, "\nPEAK: live heap %s (%" PRId64 " bytes) in %" PRId64 " blocks; peak RSS %s, VmHWM %s\n",
		pt_fmt_bytes(b1, sizeof(b1), (double)g->peak_bytes), (int64_t)g->peak_bytes,
		(int64_t)g->peak_count, pt_fmt_bytes(b2, sizeof(b2), (double)g->rss_peak),
		r->vmhwm_bytes ? pt_fmt_bytes(b3, sizeof(b3), (double)r->vmhwm_bytes) : "unknown");
	text_caveats(f, r, AFF_ALL, false);
	pt_pyobj_text(f, &pv);
	pt_rss_python_note(f, &rv, true);
	if (r->sample_bytes)
		fprintf(f, "  sampled (--sample-bytes %s): the stacks' figures are estimates, the totals exact\n",
			pt_fmt_bytes(b1, sizeof(b1), (double)r->sample_bytes));
	text_summary_stacks(f, r);
	if (has_invocations(r))
		text_invocations(f, r);
	if (r->arenas.collected && r->arenas.nadvice)
		pt_arenas_advice_line(f, &r->arenas, r->compare_run);
}

/* DATA LOSS AND DISTORTION: every error counter that is not zero. */
static void text_losses(FILE *f, const struct pt_report *r)
{
	char b1[32], b2[32], b3[32];
	uint64_t lost = 0;
	int i;

	fprintf(f, "\nDATA LOSS AND DISTORTION\n");
	for (i = 0; i < PT_ERR_COUNT; i++) {
		if (!r->errors[i])
			continue;
		lost++;
		fprintf(f, "  %-20s %10" PRIu64 "  %s\n", pt_err_name(i), r->errors[i], err_cause(r, i));
	}
	if (!lost)
		fprintf(f, "  none: every allocator call and syscall was accounted\n");
	if (r->startup.cache_on && r->startup.cache.mismatched)
		fprintf(f, "  unwind cache: %" PRIu64 " table%s under a build id another file's unwind "
			   "sections had claimed: not used, rebuilt from the file itself\n",
			r->startup.cache.mismatched, r->startup.cache.mismatched == 1 ? "" : "s");
	fprintf(f, "  stacks: %" PRIu64 " distinct of %" PRIu64 " table slots", r->stacks_used, r->max_stacks);
	if (r->stacks_cut[PT_TIER_INNER] || r->stacks_cut[PT_TIER_LEAF])
		fprintf(f, " (the whole stacks' part full: %" PRIu64 " kept cut to their innermost "
			   "frames, %" PRIu64 " to their leaf; raise --max-stacks)",
			r->stacks_cut[PT_TIER_INNER], r->stacks_cut[PT_TIER_LEAF]);
	fprintf(f, "\n  tracer memory: RSS peak %s", pt_fmt_bytes(b1, sizeof(b1), (double)r->tracer_vmhwm));
	if (r->tracer_mapped)
		fprintf(f, " (of which %s the stack counters, mapped from the kernel: the same pages as "
			   "below)", pt_fmt_bytes(b1, sizeof(b1), (double)r->tracer_mapped));
	fprintf(f, "; BPF maps %s in the kernel, the stack table %s of it\n",
		pt_fmt_bytes(b2, sizeof(b2), (double)r->bpf_maps_bytes),
		pt_fmt_bytes(b3, sizeof(b3), (double)r->stack_table_bytes));
}

/* TOP MMAP/BRK STACKS, by address space mapped. */
static void text_map_stacks(FILE *f, const struct pt_report *r)
{
	struct pt_map_stack *ms = malloc(r->nmstacks * sizeof(*ms));
	char b1[32], b2[32];
	uint32_t k, j;

	if (!ms)
		return;
	memcpy(ms, r->mstacks, r->nmstacks * sizeof(*ms));
	qsort(ms, r->nmstacks, sizeof(*ms), cmp_mstack_desc);
	fprintf(f, "\nTOP MMAP/BRK STACKS (address space mapped / unmapped)\n");
	for (k = 0; k < r->nmstacks && (int)k < r->top; k++) {
		fprintf(f, "  #%-2u mapped %s in %" PRIu64 " call%s, unmapped %s in %" PRIu64
			   " call%s\n",
			k + 1, pt_fmt_bytes(b1, sizeof(b1), (double)ms[k].mmap_bytes),
			ms[k].mmap_count, ms[k].mmap_count == 1 ? "" : "s",
			pt_fmt_bytes(b2, sizeof(b2), (double)ms[k].munmap_bytes),
			ms[k].munmap_count, ms[k].munmap_count == 1 ? "" : "s");
		for (j = 0; j < ms[k].nframes && j < 12; j++)
			pt_frame_text(f, &r->prof, ms[k].frames[j]);
	}
	if (r->nmstacks > (uint32_t)r->top) {
		uint64_t mapped = 0, unmapped = 0;

		for (k = (uint32_t)r->top; k < r->nmstacks; k++) {
			mapped += ms[k].mmap_bytes;
			unmapped += ms[k].munmap_bytes;
		}
		fprintf(f, "  ... %u more stacks: mapped %s, unmapped %s (report.json: mmap_stacks)\n",
			r->nmstacks - (uint32_t)r->top, pt_fmt_bytes(b1, sizeof(b1), (double)mapped),
			pt_fmt_bytes(b2, sizeof(b2), (double)unmapped));
	}
	free(ms);
}

void pt_report_text(FILE *f, const struct pt_report *r)
{
	struct pt_leaked_view lv = leaked_view(r);
	struct pt_rss_view rv = pt_report_rss_view(r);
	const struct pt_global *g = &r->totals;
	uint32_t k;

	/* The first screen answers what peaked and who held it; the details follow, the tracer's
	 * own internals (probe placement, unwinder, per-thread arena rows) last. */
	text_header(f, r);
	text_summary(f, r);
	if (has_invocations(r))
		for (k = 0; k < r->invs->n; k++)
			if (r->invs->r[k].outcome == PT_OUT_KILLED)
				pt_killed_text(f, r, &r->invs->r[k]);
	if (!r->light) {
		top_stacks(f, r, PT_PEAK_BYTES, PT_PEAK_COUNT, "TOP STACKS LIVE AT THE HEAP PEAK",
			   (uint64_t)g->peak_bytes, true);
		pt_leaked_text(f, &lv);
	}
	pt_rss_text(f, &rv);
	text_totals(f, r);
	text_losses(f, r);
	if (!r->light) {
		top_stacks(f, r, PT_LIVE_BYTES, PT_LIVE_COUNT, "TOP STACKS LIVE AT END (leak candidates)",
			   (uint64_t)((uint64_t)g->live_bytes > 0 ? (uint64_t)g->live_bytes : 0), false);
		top_stacks(f, r, PT_ALLOC_BYTES, PT_ALLOC_COUNT, "TOP STACKS BY TOTAL ALLOCATED",
			   (uint64_t)g->alloc_bytes, false);
	}

	if (r->nmstacks)
		text_map_stacks(f, r);
	if (r->arenas.collected) {
		pt_arenas_text(f, &r->arenas);
		text_caveats(f, r, AFF_ARENAS, false);
	} else if (r->arenas.allocator && strcmp(r->arenas.allocator, "glibc"))
		fprintf(f, "\nARENAS\n  not covered: arena accounting covers glibc malloc only, and this process "
			   "uses %s (its allocations are traced as usual)\n", r->arenas.allocator);
	text_tracer(f, r);
}

/* ---- JSON ----------------------------------------------------------------------------------- */

/* "caveats": one entry per nonzero counter that distorts printed figures (docs/json-report.md). */
static void json_caveats(FILE *f, const struct pt_report *r)
{
	int e, n = 0;
	unsigned a;

	for (e = 0; e < PT_ERR_COUNT; e++) {
		if (!r->errors[e] || !err_affects[e])
			continue;
		fprintf(f, "%s\n    {\"counter\": \"%s\", \"count\": %" PRIu64 ", \"affects\": [",
			n++ ? "," : "", pt_err_name(e), r->errors[e]);
		for (a = 0; a < 4; a++)
			if (err_affects[e] & (1u << a))
				fprintf(f, "%s\"%s\"", (err_affects[e] & ((1u << a) - 1)) ? ", " : "",
					aff_names[a]);
		fprintf(f, "], \"cause\": ");
		pt_json_str(f, err_cause(r, e));
		fputc('}', f);
	}
	if (n)
		fprintf(f, "\n  ");
}

/* "kernel": the release and the optional features missing (docs/json-report.md). */
static void json_kernel(FILE *f, const struct pt_report *r)
{
	const struct pt_kfeats *k = r->kernel;
	char cost[512];
	int n = 0;

	fprintf(f, "  \"kernel\": ");
	if (!k) {
		fputs("null,\n", f);
		return;
	}
	fprintf(f, "{\"release\": ");
	pt_json_str(f, k->release);
	if (k->major)
		fprintf(f, ", \"version\": \"%d.%d\"", k->major, k->minor);
	else
		fputs(", \"version\": null", f);
	fprintf(f, ", \"check_ns\": %" PRIu64 ", \"missing\": [", k->probe_ns);
	for (int id = 0; id < PT_KF_COUNT; id++) {
		const struct pt_kfeat_def *d = &pt_kfeat_defs[id];

		if (k->state[id] != PT_KF_MISSING || d->need != PT_NEED_OPTIONAL)
			continue;
		pt_kfeat_cost(id, &r->kernel_cost, cost, sizeof(cost));
		fprintf(f, "%s\n    {\"feature\": \"%s\", \"what\": ", n++ ? "," : "", d->name);
		pt_json_str(f, d->label);
		fprintf(f, ", \"since\": \"%s\", \"pretended\": %s, \"cost\": ", d->since,
			k->pretended[id] ? "true" : "false");
		pt_json_str(f, cost);
		if (id == PT_KF_UPROBE_MULTI)
			fprintf(f, ", \"measured\": {\"uprobe_links\": %u, \"attach_ns\": %" PRIu64 "}}",
				r->kernel_cost.uprobe_links, r->kernel_cost.attach_ns);
		else
			fputs(", \"measured\": null}", f);
	}
	fprintf(f, "%s]},\n", n ? "\n  " : "");
}

/* "ringbuf_lost_by_kind" and "invocation_bounds" (docs/json-report.md). */
static void json_bounds(FILE *f, const struct pt_report *r)
{
	const struct pt_inv_list *l = r->invs;
	int k, n = 0;

	fprintf(f, "  \"ringbuf_lost_by_kind\": {");
	for (k = 1; k < PT_RB_KINDS; k++)
		if (rb_kind_names[k])
			fprintf(f, "%s\"%s\": %" PRIu64, n++ ? ", " : "", rb_kind_names[k], r->rb_lost[k]);
	fprintf(f, ", \"invocations_refused_ring_full\": %" PRIu64 "},\n", r->rb_inv_shed);
	fprintf(f, "  \"invocation_bounds\": {\"seen_by_kernel\": %" PRIu64 ", \"recorded\": %" PRIu64
		   ", \"records\": %" PRIu64 ", \"kept\": %u, \"not_kept\": %" PRIu64
		   ", \"max_kept\": %u, \"max_output_bytes\": %" PRIu64 ", \"output_bytes\": %" PRIu64
		   ", \"jsonl_lines_not_written\": %" PRIu64 ", \"emf_lines_not_written\": %" PRIu64
		   ", \"invocation_files_not_written\": %" PRIu64 "},\n",
		r->inv_seen, l ? l->total_inv : 0, l ? l->total : 0, l ? l->n : 0, l ? l->dropped : 0,
		l ? l->keep : 0, r->out.cap, r->out.used, r->out.jsonl_cut, r->out.emf_cut, r->out.graphs_cut);
}

/* report.json's counters, their caveats, the stack table's use and the tracer's memory. */
static void json_losses(FILE *f, const struct pt_report *r)
{
	int k;

	fprintf(f, "  \"errors\": {");
	for (k = 0; k < PT_ERR_COUNT; k++)
		fprintf(f, "%s\"%s\": %" PRIu64, k ? ", " : "", pt_err_name(k), r->errors[k]);
	fprintf(f, "},\n  \"caveats\": [");
	json_caveats(f, r);
	fprintf(f, "],\n  \"stack_table\": {\"used\": %" PRIu64 ", \"size\": %" PRIu64
		   ", \"cut_inner\": %" PRIu64 ", \"cut_leaf\": %" PRIu64 ", \"kernel_bytes\": %" PRIu64 "},\n",
		r->stacks_used, r->max_stacks, r->stacks_cut[PT_TIER_INNER], r->stacks_cut[PT_TIER_LEAF],
		r->stack_table_bytes);
	fprintf(f, "  \"tracer\": {\"vmhwm_bytes\": %" PRIu64 ", \"mapped_bytes\": %" PRIu64
		   ", \"bpf_maps_bytes\": %" PRIu64 "},\n", r->tracer_vmhwm, r->tracer_mapped, r->bpf_maps_bytes);
	json_bounds(f, r);
	pt_perf_map_json(f, &r->perf_map);
}

void pt_report_json(FILE *f, const struct pt_report *r)
{
	struct pt_leaked_view lv = leaked_view(r);
	struct pt_pyobj_view pv = pyobj_view(r);
	struct pt_rss_view rv = pt_report_rss_view(r);
	const struct pt_global *g = &r->totals;
	struct pt_json_sel sel;
	uint32_t i;
	int k;

	fprintf(f, "{\n  \"version\": 1,\n  \"tool\": \"peaktrace %s\",\n", PT_VERSION);
	fprintf(f, "  \"mode\": \"%s\",\n", r->light ? "light" : "full");
	/* What --light leaves out, said where a reader of the JSON looks, not only in the docs. */
	if (r->light)
		fprintf(f, "  \"light_mode\": {\"measured\": [\"rss\", \"rss_attribution\", \"syscalls\", "
			   "\"invocations\", \"resident_at_end\", \"timeline_rss\", \"oom\"], "
			   "\"not_measured\": [\"heap_totals\", \"heap_peak\", \"heap_stacks\", "
			   "\"leaked\", \"arenas\"], \"why\": \"no allocator probes: per-allocation heap "
			   "views need them; what is not measured is null, not zero\"},\n");
	else
		fprintf(f, "  \"light_mode\": null,\n");
	fprintf(f, "  \"target\": {\"pid\": %d, \"comm\": ", r->pid);
	pt_json_str(f, r->comm);
	fprintf(f, ", \"exe\": ");
	pt_json_str(f, r->exe);
	fprintf(f, ", \"mode\": \"%s\", \"exited\": %s, \"exit_status\": ",
		r->launched ? "launch" : "attach", r->exited ? "true" : "false");
	if (r->exited && !r->exit_signal)
		fprintf(f, "%d", r->exit_status);
	else
		fprintf(f, "null");
	fprintf(f, ", \"exit_signal\": ");
	if (r->exited && r->exit_signal)
		fprintf(f, "%d", r->exit_signal);
	else
		fprintf(f, "null");
	fprintf(f, "},\n  \"duration_ns\": %" PRIu64 ",\n", r->duration_ns);
	pt_execs_json(f, &r->execs);
	fprintf(f, "  \"allocator\": {\"kind\": \"%s\", \"path\": ", pt_allocator_kind_name(r->alloc->kind));
	pt_json_str(f, r->alloc->path);
	fprintf(f, "},\n  \"attach\": \"%s\",\n  \"unwind\": \"%s\",\n  \"probes\": [",
		r->attach_multi ? "uprobe_multi" : "perf_event", r->unwind ? r->unwind : "fp");
	for (k = 0; k < r->nprobes; k++) {
		const struct pt_probe_info *pi = &r->probes[k];

		fprintf(f, "%s\n    {\"function\": \"%s\", \"symbol\": ", k ? "," : "",
			pt_alloc_fn_name(pi->fn));
		pt_json_str(f, pi->symbol);
		fprintf(f, ", \"offset\": \"0x%" PRIx64 "\", \"skip\": %u, \"emulated\": %s, "
			   "\"return_probe\": %s, \"instruction\": ",
			pi->offset, pi->place.skip, pi->place.emulated ? "true" : "false",
			pi->return_probe ? "true" : "false");
		pt_json_str(f, pi->place.insn);
		fprintf(f, ", \"skipped\": ");
		pt_json_str(f, pi->place.skipped);
		fprintf(f, ", \"shared_with\": ");
		if (pi->shared_with >= 0)
			fprintf(f, "\"%s\"", pi->shared_symbol);
		else
			fprintf(f, "null");
		fprintf(f, ", \"forwards\": %s}", pi->forwards ? "true" : "false");
	}
	fprintf(f, "\n  ],\n");
	pt_pyobj_json(f, &pv);
	if (r->light)
		fprintf(f, "  \"totals\": null,\n");
	else
	fprintf(f, "  \"totals\": {\"alloc_count\": %" PRIu64 ", \"alloc_bytes\": %" PRIu64
		   ", \"free_count\": %" PRIu64 ", \"free_bytes\": %" PRIu64 ", \"live_count\": %" PRId64
		   ", \"live_bytes\": %" PRId64 ", \"peak_live_count\": %" PRId64
		   ", \"peak_live_bytes\": %" PRId64 "},\n",
		(uint64_t)g->alloc_count, (uint64_t)g->alloc_bytes, (uint64_t)pt_free_count(g), (uint64_t)pt_free_bytes(g), (int64_t)g->live_count,
		(int64_t)g->live_bytes, (int64_t)g->peak_count, (int64_t)g->peak_bytes);
	/* null: every allocation's stack is in "stacks", whose figures add up to the totals. */
	if (r->sample_bytes)
		fprintf(f, "  \"sampling\": {\"mean_bytes\": %" PRIu64 ", \"stacks\": \"estimates\", "
			   "\"totals\": \"exact\", \"sampled_count\": %" PRIu64 ", \"sampled_bytes\": %" PRIu64
			   ", \"unsampled_count\": %" PRIu64 ", \"unsampled_bytes\": %" PRIu64 "},\n",
			r->sample_bytes, (uint64_t)g->sampled_count, (uint64_t)g->sampled_bytes,
			(uint64_t)(g->alloc_count - g->sampled_count),
			(uint64_t)(g->alloc_bytes - g->sampled_bytes));
	else
		fprintf(f, "  \"sampling\": null,\n");
	fprintf(f, "  \"rss\": {\"peak_bytes\": %" PRId64 ", \"last_bytes\": %" PRId64
		   ", \"file_bytes\": %" PRId64 ", \"anon_bytes\": %" PRId64 ", \"shmem_bytes\": %" PRId64
		   ", \"swap_bytes\": %" PRId64 ", \"vmhwm_bytes\": %" PRIu64 "},\n",
		(int64_t)g->rss_peak,
		(int64_t)pt_rss_total(g),
		(int64_t)g->rss[PT_RSS_FILE], (int64_t)g->rss[PT_RSS_ANON],
		(int64_t)g->rss[PT_RSS_SHMEM], (int64_t)g->rss[PT_RSS_SWAP], r->vmhwm_bytes);
	pt_rss_json(f, &rv);
	fprintf(f, "  \"syscalls\": {\"mmap_count\": %" PRIu64 ", \"mmap_bytes\": %" PRIu64
		   ", \"munmap_count\": %" PRIu64 ", \"munmap_bytes\": %" PRIu64
		   ", \"mremap_count\": %" PRIu64 ", \"brk_count\": %" PRIu64
		   ", \"brk_growth_bytes\": %" PRIu64 ", \"madvise_dontneed_count\": %" PRIu64
		   ", \"madvise_dontneed_bytes\": %" PRIu64 "},\n",
		(uint64_t)g->mmap_count, (uint64_t)g->mmap_bytes, (uint64_t)g->munmap_count, (uint64_t)g->munmap_bytes, (uint64_t)g->mremap_count,
		(uint64_t)g->brk_count, (uint64_t)g->brk_max > (uint64_t)g->brk_start ? (uint64_t)g->brk_max - (uint64_t)g->brk_start : 0,
		(uint64_t)g->madv_count, (uint64_t)g->madv_bytes);
	fprintf(f, "  \"arenas\": ");
	pt_arenas_json(f, &r->arenas);
	fprintf(f, ",\n");
	json_losses(f, r);
	fprintf(f, "  \"startup\": {\"bpf_load_ns\": %" PRIu64 ", \"unwind_ns\": %" PRIu64
		   ", \"unwind_later_ns\": %" PRIu64 ", \"attach_ns\": %" PRIu64
		   ", \"before_exec_ns\": %" PRIu64 ", \"exec_stops\": %u, \"held_ns\": %" PRIu64
		   ", \"unwind_cache\": ", r->startup.bpf_load_ns, r->startup.unwind_ns,
		r->startup.unwind_later_ns, r->startup.attach_ns, r->startup.before_exec_ns, r->startup.exec_stops, r->startup.held_ns);
	if (!r->startup.cache_on)
		fputs("null},\n", f);
	else
		fprintf(f, "{\"hits\": %" PRIu64 ", \"misses\": %" PRIu64 ", \"rejected\": %" PRIu64
			   ", \"written\": %" PRIu64 ", \"not_written\": %" PRIu64 ", \"evicted\": %" PRIu64
			   ", \"no_build_id\": %" PRIu64 ", \"mismatched\": %" PRIu64
			   ", \"uncacheable\": %" PRIu64 "}},\n", r->startup.cache.hits, r->startup.cache.misses,
			r->startup.cache.rejected, r->startup.cache.written, r->startup.cache.not_written,
			r->startup.cache.evicted, r->startup.cache.no_build_id, r->startup.cache.mismatched,
			r->startup.cache.uncacheable);
	json_kernel(f, r);
	fprintf(f, "  \"timeline\": ");
	pt_tl_json(f, &r->timeline);
	fprintf(f, ",\n");
	fprintf(f, "  \"frames\": {\"mode\": \"%s\", \"collapsed_frames\": %" PRIu64
		   ", \"collapsed_runs\": %" PRIu64 ", \"hidden_frames\": %" PRIu64
		   ", \"stacks_changed\": %" PRIu64 "},\n",
		pt_frames_mode_name((enum pt_frames_mode)r->prof.frames_mode), r->prof.collapsed_frames,
		r->prof.collapsed_runs, r->prof.hidden_frames, r->prof.frames_stacks_changed);
	pt_json_sel_init(&sel, r);
	if (r->light)   /* absent, not zero: no allocation was seen */
		fprintf(f, "  \"stacks\": null,\n  \"stacks_left_out\": null,\n  \"leaked\": null");
	else {
		pt_json_heap_stacks(f, r, &sel);
		fprintf(f, "  \"leaked\": ");
		pt_leaked_json(f, &lv, sel.jidx);
	}
	fprintf(f, ",\n  \"boundary\": ");
	pt_json_str(f, r->boundary ? r->boundary : "none");
	fprintf(f, ",\n  \"invocations\": [");
	for (i = 0; r->invs && i < r->invs->n; i++) {
		fprintf(f, "%s\n    ", i ? "," : "");
		pt_inv_json(f, &r->invs->r[i], &r->inv_stacks);
	}
	fprintf(f, "\n  ],\n");
	pt_killed_json(f, r);
	pt_json_map_stacks(f, r, &sel);
	pt_json_sel_free(&sel);
	fprintf(f, "\n}\n");
}

/* ---- output directory ----------------------------------------------------------------------- */

static int write_file(const char *dir, const char *name, int (*fn)(FILE *, const struct pt_report *, int),
		      const struct pt_report *r, int arg)
{
	char path[4096];
	FILE *f;
	int err;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = pt_output_fopen(path);
	if (!f)
		return -errno;
	err = fn(f, r, arg);
	if (fclose(f) && !err)
		err = -errno;
	return err;
}

static int w_text(FILE *f, const struct pt_report *r, int a)
{
	pt_report_text(f, r);
	return ferror(f) ? -EIO : 0;
}

static int w_json(FILE *f, const struct pt_report *r, int a)
{
	pt_report_json(f, r);
	return ferror(f) ? -EIO : 0;
}

/* The heap files' line order, sorted once for the three of them (NULL: each sorts its own). */
static const uint32_t *fold_order;

static int w_folded(FILE *f, const struct pt_report *r, int m)
{
	return fold_order ? pt_write_folded_order(f, &r->prof, m, fold_order)
			  : pt_write_folded(f, &r->prof, m);
}

static const char *metric_title(int m)
{
	switch (m) {
	case PT_PEAK_BYTES: return "Heap live at the peak";
	case PT_LIVE_BYTES: return "Heap live at end of trace";
	default: return "Heap allocated in total";
	}
}

static int w_svg(FILE *f, const struct pt_report *r, int m)
{
	char sub[256], b[32];
	uint64_t total = m == PT_PEAK_BYTES ? (uint64_t)r->totals.peak_bytes :
			 m == PT_LIVE_BYTES ? (uint64_t)(r->totals.live_bytes > 0 ? r->totals.live_bytes : 0) :
			 r->totals.alloc_bytes;

	snprintf(sub, sizeof(sub), "PID %d (%s): %s", r->pid, r->comm,
		 pt_fmt_bytes(b, sizeof(b), (double)total));
	return pt_write_flamegraph(f, &r->prof, m, metric_title(m), sub);
}

static const char *html_dir;

static int w_html(FILE *f, const struct pt_report *r, int a)
{
	return pt_write_html(f, html_dir, r);
}

static int w_speedscope(FILE *f, const struct pt_report *r, int m)
{
	return pt_write_speedscope(f, &r->prof, m, metric_title(m));
}

int pt_report_write_dir(const char *dir, const struct pt_report *r)
{
	struct pt_leaked_view lv = leaked_view(r);
	struct pt_rss_view rv = pt_report_rss_view(r);
	static const struct { const char *name; int metric; } views[] = {
		{ "peak", PT_PEAK_BYTES }, { "live", PT_LIVE_BYTES }, { "alloc", PT_ALLOC_BYTES },
	};
	char name[64], path[4096];
	uint32_t *order = NULL;
	int err = 0, e;
	size_t i;

	if ((e = write_file(dir, "report.txt", w_text, r, 0)) && !err)
		err = e;
	if ((e = write_file(dir, "report.json", w_json, r, 0)) && !err)
		err = e;
	if (!r->light && pt_folded_order(&r->prof, &order) == 0)
		fold_order = order;
	/* --light: no heap files (their stacks are absent, not empty). */
	for (i = 0; !r->light && i < sizeof(views) / sizeof(views[0]); i++) {
		snprintf(name, sizeof(name), "%s.folded", views[i].name);
		if ((e = write_file(dir, name, w_folded, r, views[i].metric)) && !err)
			err = e;
		snprintf(name, sizeof(name), "%s.svg", views[i].name);
		if ((e = write_file(dir, name, w_svg, r, views[i].metric)) && !err)
			err = e;
		snprintf(name, sizeof(name), "%s.speedscope.json", views[i].name);
		if ((e = write_file(dir, name, w_speedscope, r, views[i].metric)) && !err)
			err = e;
	}
	fold_order = NULL;
	free(order);
	if ((e = pt_rss_write_files(dir, &rv)) && !err)
		err = e;
	if (!r->light && (e = pt_leaked_write_dir(dir, &lv)) && !err)
		err = e;
	html_dir = dir;
	if ((e = write_file(dir, "report.html", w_html, r, 0)) && !err)
		err = e;
	snprintf(path, sizeof(path), "%s/profile.pb.gz", dir);
	/* --light: rss_peak_space only (the heap types would be zeros, not absent). */
	if ((e = pt_write_pprof_mode(path, &r->prof, r->light)) && !err)
		err = e;
	return err;
}

void pt_report_free(struct pt_report *r)
{
	uint32_t i;

	for (i = 0; i < r->nmstacks; i++)
		free(r->mstacks[i].frames);
	free(r->mstacks);
	r->mstacks = NULL;
	r->nmstacks = 0;
	pt_profile_free(&r->prof);
	pt_arenas_free(&r->arenas);
	pt_rss_free(&r->rss);
	pt_leaked_free(&r->leaked);
}

struct pt_rss_view pt_report_rss_view(const struct pt_report *r)
{
	return (struct pt_rss_view){
		.rss = &r->rss,
		.prof = &r->prof,
		.totals = &r->totals,
		.top = r->top,
		.light = r->light,
		.python_traced = strcmp(pt_pyobj_traced(&r->pyobj), "probes") == 0,
		.pid = r->pid,
		.comm = r->comm,
	};
}
