/* Minimal unit-test helper: one binary per tests/unit/test_*.c.
 * Each CHECK prints "ok - ..." or "not ok - ..."; the binary exits 1 if any failed.
 * tests/run.py counts the ok/not ok lines. */
#ifndef PEAKTRACE_CHECK_H
#define PEAKTRACE_CHECK_H
#include <stdio.h>
#include <string.h>
#include <inttypes.h>

static int check_failed;
static int check_count;

#define CHECK(cond, ...) do { \
	check_count++; \
	if (cond) { printf("ok - "); printf(__VA_ARGS__); printf("\n"); } \
	else { check_failed++; printf("not ok - "); printf(__VA_ARGS__); \
	       printf("  [%s:%d: %s]\n", __FILE__, __LINE__, #cond); } \
} while (0)

#define CHECK_EQ_U64(a, b, name) do { uint64_t _a = (a), _b = (b); \
	CHECK(_a == _b, "%s (got %" PRIu64 ", want %" PRIu64 ")", name, _a, _b); } while (0)

#define CHECK_STR(a, b, name) do { const char *_a = (a), *_b = (b); \
	CHECK(_a && _b && strcmp(_a, _b) == 0, "%s (got \"%s\", want \"%s\")", name, _a ? _a : "(null)", _b ? _b : "(null)"); } while (0)

#define CHECK_DONE() (check_failed ? 1 : 0)
#endif
