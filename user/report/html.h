/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* html.h — DIR/report.html: one self-contained page (no network) with the data embedded once. */
#ifndef PEAKTRACE_REPORT_HTML_H
#define PEAKTRACE_REPORT_HTML_H

#include <stdio.h>

/* Stacks embedded per profile view (the biggest; the rest summed and said in the page). */
#define PT_HTML_MAX_STACKS 2000
/* Invocations whose own stacks are embedded (the first ones; every one is in the table). */
#define PT_HTML_MAX_INV_GRAPHS 1000

/* The JS and CSS, embedded at build time (tools/embed-assets.py, from user/report/html/). */
extern const char pt_html_js[];
extern const char pt_html_css[];


#endif
