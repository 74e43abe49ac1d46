/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* html.h — DIR/report.html: one self-contained page (no network) with the data embedded once. */
#ifndef PEAKTRACE_REPORT_HTML_H
#define PEAKTRACE_REPORT_HTML_H

#include <stdio.h>
#include "report/report.h"

/* Stacks embedded per profile view (the biggest; the rest summed and said in the page). */
#define PT_HTML_MAX_STACKS 2000
/* Invocations whose own stacks are embedded (the first ones; every one is in the table). */
#define PT_HTML_MAX_INV_GRAPHS 1000
/* Points of the memory-over-time chart (samples beyond are merged, keeping each bucket's max). */
#define PT_HTML_MAX_POINTS 4000
/* Lines of DIR/timeline.jsonl read at most, and the longest line. */
#define PT_HTML_MAX_TL_LINES 4000000
#define PT_HTML_MAX_TL_LINE 1024

/* The JS and CSS, embedded at build time (tools/embed-assets.py, from user/report/html/). */
extern const char pt_html_js[];
extern const char pt_html_css[];

/* The "timeline" member (no leading comma): DIR/timeline.jsonl when there, else the invocation
 * records' RSS trajectories, else {"source": null, "reason": "..."}. */
void pt_html_timeline(FILE *f, const char *dir, const struct pt_inv_list *invs);

/* DIR/report.html. 0 or -errno. */
int pt_write_html(FILE *f, const char *dir, const struct pt_report *r);

#endif
