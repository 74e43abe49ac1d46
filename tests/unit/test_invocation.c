// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Unit tests for user/invocation/invocation.c's writers: the INVOCATION line (units, no negative
 * zero), the phase and outcome of a record in JSON and EMF, and how the process's end names it. */
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "invocation/invocation.h"

#define MiB (1024 * 1024)

static char *line_of(const struct pt_inv_record *r)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	pt_inv_line(f, r);
	fclose(f);
	return out;
}

static char *json_of(const struct pt_inv_record *r)
{
	struct pt_stack_src src = { .stacks_fd = -1, .py_fd = -1 };
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	pt_inv_json(f, r, &src);
	fclose(f);
	return out;
}

static char *emf_of(const struct pt_inv_record *r)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	pt_inv_emf(f, r, "fn", 0);
	fclose(f);
	return out;
}

/* The demo's invocations 2-5: 8 KiB less live heap at the end, MiB figures. */
static void test_line_units(void)
{
	struct pt_inv_record r = { .seq = 2, .outcome = PT_OUT_RESPONSE, .start_ns = 0, .end_ns = 1000000,
				   .rss_peak = 118 * (int64_t)MiB, .heap_start = 8224, .heap_end = 0,
				   .heap_peak = 98 * (int64_t)MiB, .vmhwm = 118ULL * MiB, .arena_read = true,
				   .arena_retained = 7 * (int64_t)MiB, .arena_retained_change = -1000 };
	char *l;

	strcpy(r.id, "abc");
	l = line_of(&r);
	CHECK(strstr(l, "Peak RSS: 118.0 MiB\t") != NULL, "Peak RSS in MiB: %s", l);
	CHECK(strstr(l, "Peak Heap: 98.0 MiB\t") != NULL, "Peak Heap in MiB");
	CHECK(strstr(l, "Max Memory Used (high-water mark): 118 MiB") != NULL, "the high-water mark in MiB");
	CHECK(strstr(l, " MB") == NULL, "no MB for MiB values");
	CHECK(strstr(l, "-0.0") == NULL, "no negative zero");
	CHECK(strstr(l, "Heap Growth: +0.0 MiB\t") != NULL, "a growth of -8 KiB is +0.0 MiB");
	CHECK(strstr(l, "Arena Retained: 7.0 MiB (+0.0 MiB)") != NULL, "a retained change of -1000 B is +0.0 MiB");
	free(l);
	r.heap_end = r.heap_start - 3 * MiB / 2;
	l = line_of(&r);
	CHECK(strstr(l, "Heap Growth: -1.5 MiB\t") != NULL, "a real decrease keeps its sign: %s", l);
	free(l);
	/* --light measures no heap: the line says so instead of 0.0 MiB and 0 allocations. */
	r.light = true;
	r.heap_peak = r.heap_start = r.heap_end = 0;
	r.alloc_count = 0;
	l = line_of(&r);
	CHECK(strstr(l, "Peak Heap: not traced (--light)\t") != NULL, "--light: the heap not traced: %s", l);
	CHECK(strstr(l, "Heap Growth") == NULL && strstr(l, "Allocations") == NULL,
	      "--light: no heap growth, no allocation count: %s", l);
	CHECK(strstr(l, "Peak RSS: 118.0 MiB\t") != NULL &&
	      strstr(l, "Max Memory Used (high-water mark): 118 MiB") != NULL, "--light: RSS figures kept: %s", l);
	free(l);
}

/* A record the kernel overwrote before user space read it says so, not "running". */
static void test_overwritten_outcome(void)
{
	struct pt_inv_record r = { .seq = 4, .overwritten = true };

	CHECK_STR(pt_inv_outcome(&r), "overwritten", "an overwritten record's outcome");
	r.overwritten = false;
	CHECK_STR(pt_inv_outcome(&r), "running", "... and without the flag, its kernel outcome");
}

/* The process's end: the kernel says killed; the wait status says which. */
static void test_exit_outcome(void)
{
	struct pt_inv_record r = { .seq = 0, .outcome = PT_OUT_KILLED };
	char *j, *e;

	pt_inv_exit_outcome(&r, 0);
	CHECK_STR(pt_inv_outcome(&r), "exited", "exit(0) is exited, not killed");
	CHECK_EQ_U64(r.exit_status, 0, "... with status 0");
	j = json_of(&r);
	CHECK(strstr(j, "\"outcome\": \"exited\", \"exit_status\": 0, \"exit_signal\": null") != NULL,
	      "JSON: exited, exit_status 0: %s", j);
	free(j);

	r = (struct pt_inv_record){ .seq = 3, .outcome = PT_OUT_KILLED };
	pt_inv_exit_outcome(&r, 3 << 8);
	CHECK_STR(pt_inv_outcome(&r), "exited", "exit(3) is exited");
	CHECK_EQ_U64(r.exit_status, 3, "... with status 3");

	r = (struct pt_inv_record){ .seq = 3, .outcome = PT_OUT_KILLED };
	pt_inv_exit_outcome(&r, 9);
	CHECK_STR(pt_inv_outcome(&r), "killed", "SIGKILL is killed");
	CHECK_EQ_U64(r.exit_signal, 9, "... by signal 9");
	j = json_of(&r);
	CHECK(strstr(j, "\"outcome\": \"killed\", \"exit_status\": null, \"exit_signal\": 9") != NULL,
	      "JSON: killed, exit_signal 9: %s", j);
	free(j);
	e = emf_of(&r);
	CHECK(strstr(e, "\"Outcome\": \"killed\"") != NULL, "EMF: killed");
	free(e);

	r = (struct pt_inv_record){ .seq = 3, .outcome = PT_OUT_RESPONSE };
	pt_inv_exit_outcome(&r, 9);
	CHECK_STR(pt_inv_outcome(&r), "response", "an invocation that had responded stays response");
}

/* The row before the first invocation: Lambda's init phase only when traced from the start. */
static void test_phase(void)
{
	struct pt_inv_record r = { .seq = 0, .outcome = PT_OUT_INIT };
	char *j;

	CHECK_STR(pt_inv_phase(&r), "init", "launch mode: seq 0 is the init phase");
	CHECK_STR(pt_inv_outcome(&r), "init", "... ended by the first GET next: init");
	r.attached = true;
	CHECK_STR(pt_inv_phase(&r), "attached", "attach mode: seq 0 is the time since attaching");
	CHECK_STR(pt_inv_outcome(&r), "next", "... ended by the runtime's GET next: next, not init");
	j = json_of(&r);
	CHECK(strstr(j, "\"phase\": \"attached\"") != NULL && strstr(j, "\"outcome\": \"next\"") != NULL &&
	      strstr(j, "\"init\"") == NULL, "JSON: no init in attach mode: %s", j);
	free(j);
	r.outcome = PT_OUT_RESPONSE;
	strcpy(r.id, "req-0");
	CHECK_STR(pt_inv_phase(&r), "invocation", "attach mode: one already running is an invocation");
	r = (struct pt_inv_record){ .seq = 4, .attached = true, .outcome = PT_OUT_UNFINISHED };
	CHECK_STR(pt_inv_phase(&r), "invocation", "seq 4 is an invocation");
	CHECK_STR(pt_inv_outcome(&r), "unfinished", "... unfinished");
}

int main(void)
{
	test_line_units();
	test_exit_outcome();
	test_overwritten_outcome();
	test_phase();
	return CHECK_DONE();
}
