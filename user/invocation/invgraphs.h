/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* invgraphs.h — --per-invocation's files (invgraphs.c), and --max-output's account of them. */
#ifndef PEAKTRACE_INVGRAPHS_H
#define PEAKTRACE_INVGRAPHS_H

#include <stdint.h>
#include "invocation/invocation.h"

/* What the files that grow with the run wrote into -o DIR under --max-output. */
struct pt_outcap {
	uint64_t cap;           /* --max-output in bytes (0: none) */
	uint64_t used;          /* invocations.jsonl, emf.jsonl, invocation-N.* */
	uint64_t jsonl_cut, emf_cut;   /* lines not written */
	uint64_t graphs_cut;    /* per-invocation files not written */
};

struct pt_collect_in;
struct pt_symbolizer;
/* --per-invocation: DIR/invocation-N.peak.folded/.svg (the heap held at each invocation's own
 * peak, its `all`) and invocation-N.rss.folded/.svg (the attributed anonymous RSS at its RSS
 * peak, its `rss_all`): all's stacks with those figures. Only for the invocations kept in
 * memory; each file counted in out->used, none written once that reaches out->cap
 * (out->graphs_cut counts them). */
void pt_inv_graphs_write(const char *dir, const struct pt_inv_list *invs,
				 const struct pt_collect_in *all, struct pt_symbolizer *sym,
				 const char *comm, struct pt_outcap *out);

#endif
