/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * output.h — the format writers, below every capability: they take a profile's stacks and
 * frames (profile/profile.h) and write folded stacks, SVG flame graphs, pprof, speedscope, the
 * text report's frame lines; and the output files they are written into.
 */
#ifndef PEAKTRACE_OUTPUT_H
#define PEAKTRACE_OUTPUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "profile/profile.h"

/* Folded stacks (flamegraph.pl / speedscope / Pyroscope): root first, frames joined
 * by ';', a space, the metric value. Stacks whose value is 0 are skipped.
 * Identical folded lines are merged. Returns 0 or -errno. */
int pt_write_folded(FILE *f, const struct pt_profile *p, enum pt_metric m);
/* The same for several metrics of one profile with one sort: pt_folded_order gives every
 * stack's index in the order the lines are written (*order: p->nstacks entries, free it), and
 * pt_write_folded_order writes metric m from it, byte for byte what pt_write_folded writes. */
int pt_folded_order(const struct pt_profile *p, uint32_t **order);
int pt_write_folded_order(FILE *f, const struct pt_profile *p, enum pt_metric m,
			  const uint32_t *order);

/* Self-contained interactive SVG flame graph (search, zoom, no network). */
int pt_write_flamegraph(FILE *f, const struct pt_profile *p, enum pt_metric m,
			const char *title, const char *subtitle);

/* The same with a style hook (differential flame graphs, diff/diff.c): aux, if not NULL,
 * holds one signed figure per stack of p, summed per frame like the metric; color writes a
 * frame's fill (an SVG colour) from its label, value and aux sum, note text appended to its
 * tooltip after the share (", +123 bytes"). A NULL hook keeps the default. */
struct pt_flame_style {
	const int64_t *aux;
	void (*color)(FILE *f, const char *label, uint64_t value, int64_t aux, void *ctx);
	void (*note)(FILE *f, uint64_t value, int64_t aux, void *ctx);
	void *ctx;
};
int pt_write_flamegraph_styled(FILE *f, const struct pt_profile *p, enum pt_metric m,
			       const char *title, const char *subtitle,
			       const struct pt_flame_style *st);

/* pprof profile.proto, gzip-compressed. Sample types, in order:
 * alloc_objects/count, alloc_space/bytes, inuse_objects/count, inuse_space/bytes,
 * peak_objects/count, peak_space/bytes, rss_peak_space/bytes. default_sample_type = peak_space.
 * pt_write_pprof_mode(light true): rss_peak_space alone, the default (--light). */
int pt_write_pprof(const char *path, const struct pt_profile *p);
int pt_write_pprof_mode(const char *path, const struct pt_profile *p, bool light);

/* speedscope JSON file format, one profile per metric given. */
int pt_write_speedscope(FILE *f, const struct pt_profile *p, enum pt_metric m, const char *name);

/* An output file opened for writing by the thread that writes it all (fopen's NULL and errno
 * on failure): a large buffer, and no stdio lock taken at each putc (output/file.c). */
FILE *pt_output_fopen(const char *path);
/* One frame as the text report prints it (indented, module base name). */
void pt_frame_text(FILE *f, const struct pt_profile *p, uint32_t fi);

#endif
