/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * jsonstacks.h — report.json's stacks: one frame table, stacks that name frames by index,
 * only the top --json-stacks N per figure, and what was left out summed (nothing lost silently).
 */
#ifndef PEAKTRACE_REPORT_JSONSTACKS_H
#define PEAKTRACE_REPORT_JSONSTACKS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "report/report.h"

struct pt_json_sel {
	bool *keep, *mkeep;     /* per p->stacks / r->mstacks: written to report.json */
	uint32_t *fmap;         /* p->frames index -> frame_table index (UINT32_MAX: unused) */
	uint32_t *forder;       /* frame_table index -> p->frames index */
	uint32_t *jidx;         /* p->stacks index -> index in "stacks" (UINT32_MAX: left out) */
	uint32_t nframes;       /* entries in frame_table */
};

/* Chooses the stacks and the frames they use; -ENOMEM on failure (sel is then empty). */
int pt_json_sel_init(struct pt_json_sel *sel, const struct pt_report *r);
void pt_json_sel_free(struct pt_json_sel *sel);

/* "frame_table": [...],\n  "stacks": [...],\n  "stacks_left_out": {...},\n */
void pt_json_heap_stacks(FILE *f, const struct pt_report *r, const struct pt_json_sel *sel);
/* "mmap_stacks": [...],\n  "mmap_stacks_left_out": {...} (no trailing comma) */
void pt_json_map_stacks(FILE *f, const struct pt_report *r, const struct pt_json_sel *sel);

#endif
