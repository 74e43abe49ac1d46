/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * report/perfmap.h — what the report says of the JIT's perf map: how much of it was read, and
 * what was cut (symbolize/perfmap.h), as errors.perf_map_cut's cause (report.txt's DATA LOSS,
 * report.json's caveats) and report.json's "perf_map".
 */
#ifndef PEAKTRACE_REPORT_PERFMAP_H
#define PEAKTRACE_REPORT_PERFMAP_H
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "symbolize/perfmap.h"

struct pt_symbolizer;

struct pt_perf_map_note {
	bool seen;              /* a perf map was there (and used) */
	uint64_t bytes;         /* its size at the last look */
	uint64_t limit_bytes;   /* the run's budget (--perf-map-max) */
	uint64_t limit_lines;
	struct pt_perfmap_cut cut;
	char note[512];         /* the cause, with the figures; "" when nothing was cut */
};

/* n from the symbolizer's readers (summed over its images); the bytes cut, errors.perf_map_cut. */
uint64_t pt_perf_map_note_fill(struct pt_perf_map_note *n, const struct pt_symbolizer *sym);
/* report.json's "perf_map": {...} or null, with its trailing ",\n". */
void pt_perf_map_json(FILE *f, const struct pt_perf_map_note *n);
#endif
