/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * killed.h — the post-mortem of an invocation the process died in (report.txt's KILLED section,
 * report.json's "killed"): its RSS trajectory and who held its memory at its RSS peak, which is
 * where a memory limit kills it: the stacks holding resident pages (by the page faults that made
 * them resident, with their memory kind) beside the stacks holding heap blocks, the set with the
 * bigger holder first, each with the share of that RSS it covers.
 */
#ifndef PEAKTRACE_REPORT_KILLED_H
#define PEAKTRACE_REPORT_KILLED_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct pt_inv_record;

/* The RSS holders come first: their biggest holds at least the heap's biggest (--light: no
 * heap view). Pure. */
bool pt_killed_rss_first(const struct pt_inv_record *ir);


#endif
