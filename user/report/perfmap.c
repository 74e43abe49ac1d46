// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* report/perfmap.c — the perf map's figures in the report (report/perfmap.h). */
#include <inttypes.h>
#include <string.h>
#include "util/fmt.h"
#include "symbolize/symbolize.h"
#include "report/perfmap.h"

/* ", N in WHAT" to the note when n is not 0. */
static void part(char *buf, size_t sz, size_t *len, uint64_t n, const char *what)
{
	int w;

	if (!n || *len >= sz)
		return;
	w = snprintf(buf + *len, sz - *len, "%s%" PRIu64 " %s", *len ? ", " : "", n, what);
	if (w > 0)
		*len += (size_t)w;
}

uint64_t pt_perf_map_note_fill(struct pt_perf_map_note *n, const struct pt_symbolizer *sym)
{
	const struct pt_perfmap_cut *c = &n->cut;
	char parts[384], what[96], b1[32];
	struct pt_perfmap_limits lim;
	size_t len = 0;
	uint64_t cut;

	memset(n, 0, sizeof(*n));
	pt_perfmap_limits_init(&lim, pt_sym_perfmap_limit());
	n->limit_bytes = lim.max_bytes;
	n->limit_lines = lim.max_lines;
	if (!sym)
		return 0;
	pt_sym_perfmap_stats(sym, &n->cut, &n->bytes);
	n->seen = n->bytes || c->used_lines;
	cut = pt_perfmap_cut_bytes(c);
	if (!cut)
		return 0;
	parts[0] = 0;
	snprintf(what, sizeof(what), "unread (%s)", c->full ?
		 "its budget was reached: --perf-map-max" : "a read's time budget ran out at the stop");
	part(parts, sizeof(parts), &len, c->unread_bytes, what);
	part(parts, sizeof(parts), &len, c->hole_bytes, "in holes");
	part(parts, sizeof(parts), &len, c->garbage_bytes - c->hole_bytes, "in lines with NUL bytes");
	snprintf(what, sizeof(what), "in %" PRIu64 " lines over %d bytes", c->long_lines, PT_PERFMAP_LINE_MAX);
	part(parts, sizeof(parts), &len, c->long_bytes, what);
	snprintf(what, sizeof(what), "in %" PRIu64 " malformed lines", c->bad_lines);
	part(parts, sizeof(parts), &len, c->bad_bytes, what);
	snprintf(what, sizeof(what), "in %" PRIu64 " lines past the budget of %" PRIu64 " lines",
		 c->dropped_lines, lim.max_lines);
	part(parts, sizeof(parts), &len, c->dropped_bytes, what);
	snprintf(n->note, sizeof(n->note), "bytes of the JIT's perf map (/tmp/perf-PID.map, %s; budget "
		 "%s, --perf-map-max) not used: %s; JIT frames they named stay unnamed",
		 pt_fmt_bytes(b1, sizeof(b1), (double)n->bytes), pt_fmt_bytes(what, sizeof(what),
		 (double)lim.max_bytes), parts);
	return cut;
}

void pt_perf_map_json(FILE *f, const struct pt_perf_map_note *n)
{
	const struct pt_perfmap_cut *c = &n->cut;

	fprintf(f, "  \"perf_map\": ");
	if (!n->seen) {
		fputs("null,\n", f);
		return;
	}
	fprintf(f, "{\"bytes\": %" PRIu64 ", \"limit_bytes\": %" PRIu64 ", \"limit_lines\": %" PRIu64
		   ", \"used_lines\": %" PRIu64 ", \"used_bytes\": %" PRIu64 ", \"cut_bytes\": %" PRIu64
		   ",\n               \"cut\": {\"unread_bytes\": %" PRIu64 ", \"budget_reached\": %s"
		   ", \"hole_bytes\": %" PRIu64 ", \"garbage_lines\": %" PRIu64 ", \"garbage_bytes\": %" PRIu64
		   ", \"long_lines\": %" PRIu64 ", \"long_bytes\": %" PRIu64 ", \"bad_lines\": %" PRIu64
		   ", \"bad_bytes\": %" PRIu64 ", \"dropped_lines\": %" PRIu64 ", \"dropped_bytes\": %" PRIu64
		   "},\n               \"rewrites\": %" PRIu64 ", \"budget_stops\": %" PRIu64
		   ", \"stop_requests\": %" PRIu64 "},\n",
		n->bytes, n->limit_bytes, n->limit_lines, c->used_lines, c->used_bytes, pt_perfmap_cut_bytes(c),
		c->unread_bytes, c->full ? "true" : "false", c->hole_bytes, c->garbage_lines, c->garbage_bytes,
		c->long_lines, c->long_bytes, c->bad_lines, c->bad_bytes, c->dropped_lines, c->dropped_bytes,
		c->rewrites, c->budget_stops, c->stops);
}
