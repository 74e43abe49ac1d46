/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * leaked.h — leaks across invocations in the report (leaked.c): LEAKED ACROSS INVOCATIONS
 * (text), the "leaked" object of report.json, DIR/leaked.folded and DIR/leaked.svg;
 * loader-initializer stacks kept out of leak candidates. The sections take their own view.
 */
#ifndef PEAKTRACE_LEAKED_H
#define PEAKTRACE_LEAKED_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include "profile/profile.h"
#include "invocation/invocation.h"
#include "invocation/leaks.h"

/* The live table by invocation of origin, the per-kernel-stack figures given to pt_collect,
 * and where each kernel stack went (held by value: pt_report.leaked). */
struct pt_leaked {
	struct pt_leaks leaks;
	int64_t (*by_stack)[2];  /* per kernel stack: leaked bytes and count (pt_leaks_per_stack) */
	uint32_t *stack_of;      /* per kernel stack: the profile stack it merged into */
	uint32_t nstacks;
};

/* What the sections read besides the leaks. */
struct pt_leaked_view {
	const struct pt_leaked *leaked;
	const struct pt_profile *prof;    /* with PT_LEAKED_BYTES, PT_LEAKED_COUNT */
	const struct pt_inv_list *invs;   /* NULL: none */
	uint64_t sample_bytes;            /* --sample-bytes (0: every allocation) */
	int top;                          /* -t */
	pid_t pid;
	const char *comm;
};

void pt_leaked_text(FILE *f, const struct pt_leaked_view *v);
/* jidx: each profile stack's index in report.json's "stacks" (UINT32_MAX: left out), or NULL
 * when every stack is written. */
void pt_leaked_json(FILE *f, const struct pt_leaked_view *v, const uint32_t *jidx);
int pt_leaked_write_dir(const char *dir, const struct pt_leaked_view *v);
/* A stack allocated under the dynamic loader's initializers (_dl_init), before main. */
bool pt_stack_loader_init(const struct pt_profile *p, const struct pt_stack *s);
void pt_leaked_free(struct pt_leaked *lk);

/* Leaks across invocations read once tracing stopped: the live table (live_fd, live_max buckets,
 * and its overflow map) by invocation of origin, and per kernel stack [0, nstacks) for the
 * profile (by_stack; stack_of room for where each merged). A table not read whole is said on
 * stderr (leaks.read_err). */
void pt_leaked_read(struct pt_leaked *l, int live_fd, uint32_t live_max, int overflow_fd,
		    const struct pt_inv_list *invs, uint64_t sample_bytes, uint32_t nstacks);

#endif
