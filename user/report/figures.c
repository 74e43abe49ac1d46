// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* figures.c — the report's figures that need no symbolizing: the target, the kernel's totals and
 * counters (report.h, pt_report_figures). */
#include <string.h>
#include <sys/wait.h>
#include <bpf/libbpf.h>
#include "util/file.h"
#include "maps/mapread.h"
#include "report/report.h"
#include "peaktrace.skel.h"

/* The stack table's use: whole stacks, and those kept cut per tier (pt_tier_start); and what
 * the tables cost in kernel memory. */
static void stacks_used(struct pt_report *rep, const struct peaktrace_bpf *k, uint32_t max,
			uint64_t bpf_maps_bytes)
{
	uint32_t inner = pt_tier_start(max, PT_TIER_INNER);
	uint32_t leaf = pt_tier_start(max, PT_TIER_LEAF);
	uint64_t in = k->bss->tier_next[PT_TIER_INNER], lf = k->bss->tier_next[PT_TIER_LEAF];

	rep->stacks_cut[PT_TIER_INNER] = in < leaf - inner ? in : leaf - inner;
	rep->stacks_cut[PT_TIER_LEAF] = lf < max - leaf ? lf : max - leaf;
	rep->stacks_used = (rep->totals.next_stack < inner - 1 ? rep->totals.next_stack : inner - 1) +
			   rep->stacks_cut[PT_TIER_INNER] + rep->stacks_cut[PT_TIER_LEAF];
	rep->max_stacks = max;
	rep->stack_table_bytes = pt_map_memlock(bpf_map__fd(k->maps.stack_ids)) +
				 pt_map_memlock(bpf_map__fd(k->maps.stacks)) +
				 pt_map_memlock(bpf_map__fd(k->maps.stats)) +
				 pt_map_memlock(bpf_map__fd(k->maps.py_chunks));
	rep->bpf_maps_bytes = bpf_maps_bytes;
	rep->tracer_mapped = pt_map_mapped_bytes();
}

void pt_report_figures(struct pt_report *rep, const struct pt_report_from *f)
{
	const struct peaktrace_bpf *k = f->skel;

	rep->pid = f->pid;
	rep->launched = f->launched;
	rep->totals = k->bss->g;
	rep->rss.kernel = k->bss->rss_g;
	rep->top = f->top;
	rep->json_stacks = f->json_stacks;
	rep->attach_multi = f->multi;
	rep->kernel = pt_kfeats();
	rep->kernel_cost.attach_ns = rep->startup.attach_ns;
	rep->light = f->light;
	rep->compare_run = f->compare_run;
	rep->unwind = f->unwind;
	rep->invs = f->invs;
	rep->boundary = f->boundary;
	/* Said where the invocations are printed too, not only on stderr. */
	if (f->aws_pending)
		rep->boundary = "uprobe (aws-lambda-cpp never mapped: no boundaries)";
	rep->inv_stacks = f->inv_src;
	rep->max_peak = f->max_peak;
	rep->sample_bytes = f->sample_bytes;
	rep->startup.unwind_later_ns = f->unwind_later_ns;
	rep->startup.cache_on = f->unwind_cache->on;
	rep->startup.cache = f->unwind_cache->st;
	rep->arenas = *f->arenas;
	memset(f->arenas, 0, sizeof(*f->arenas));
	rep->arenas.allocator = pt_allocator_kind_name(f->alloc_kind);
	pt_read_errors(f->skel, rep->errors);
	rep->errors[PT_ERR_RAPI_FULL] += rep->totals.rapi_full;
	/* Over every record, kept in memory or not. */
	rep->errors[PT_ERR_INV_LOST] += f->invs->overwritten;
	rep->errors[PT_ERR_INV_STACKS_LOST] += f->invs->stacks_lost;
	rep->inv_seen = rep->totals.inv_seq;
	memcpy(rep->rb_lost, k->bss->rb_lost, sizeof(rep->rb_lost));
	rep->rb_inv_shed = k->bss->rb_inv_shed;
	rep->errors[PT_ERR_RINGBUF_LOST] += rep->rb_inv_shed;   /* counted apart in BPF */
	rep->errors[PT_ERR_RAPI_UNPARSED] += rep->totals.rapi_unparsed;
	rep->exited = f->exited || (f->launched && f->child_exited);
	if (f->launched && f->child_exited) {
		if (WIFSIGNALED(f->child_status))
			rep->exit_signal = WTERMSIG(f->child_status);
		else
			rep->exit_status = WEXITSTATUS(f->child_status);
	} else if (f->exited) {
		if (f->exit_code & 0x7f)
			rep->exit_signal = f->exit_code & 0x7f;
		else
			rep->exit_status = (f->exit_code >> 8) & 0xff;
	}
	rep->vmhwm_bytes = f->vmhwm > f->hiwater ? f->vmhwm : f->hiwater;
	stacks_used(rep, k, f->max_stacks, f->bpf_maps_bytes);
	pt_tl_summarize(f->timeline, f->invs, &rep->timeline);
}
