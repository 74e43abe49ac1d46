// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_pyalloc: finding the pymalloc guard in PyObject_Malloc and counting its inlined copies
 * (python/pyalloc.c), on instruction bytes as Debian's python3.11 and a PIE build encode them. */
#include <stdint.h>
#include <string.h>
#include "check.h"
#include "python/pyalloc.h"

/* Debian python3.11's PyObject_Malloc at 0x4fb350: push %rbx; test %rdi,%rdi; js ...;
 * mov _PyObject.malloc(%rip),%rax; mov %rdi,%rbx; mov ctx(%rip),%rdi; cmp $0x4fb450,%rax */
static const uint8_t deb_entry[] = {
	0x53, 0x48, 0x85, 0xff, 0x0f, 0x88, 0x65, 0xad, 0xf2, 0xff,
	0x48, 0x8b, 0x05, 0xe7, 0xeb, 0x45, 0x00, 0x48, 0x89, 0xfb,
	0x48, 0x8b, 0x3d, 0xd5, 0xeb, 0x45, 0x00, 0x48, 0x3d, 0x50, 0xb4, 0x4f, 0x00,
	0x0f, 0x85, 0xc3, 0x00, 0x00, 0x00,
};

int main(void)
{
	uint8_t text[256];
	uint64_t base = 0x400000, g;
	size_t i = 0;

	CHECK_EQ_U64(pt_pyalloc_guard_target(deb_entry, sizeof(deb_entry), 0x4fb350), 0x4fb450,
		     "guard: cmp $imm32,%rax in Debian's PyObject_Malloc");
	CHECK_EQ_U64(pt_pyalloc_guard_target(deb_entry, 20, 0x4fb350), 0,
		     "guard: none in the bytes before it");

	/* A text segment: one guard in each form, one compare against another address, and one
	 * guard inside PyObject_Malloc itself (not counted). */
	memset(text, 0x90, sizeof(text));
	/* cmp $0x4fb450,%rdx: 48 81 fa imm32 */
	memcpy(text + i, "\x48\x81\xfa\x50\xb4\x4f\x00", 7), i += 7;
	/* cmp $0x4fb450,%r8: 49 81 f8 imm32 */
	memcpy(text + i, "\x49\x81\xf8\x50\xb4\x4f\x00", 7), i += 7;
	/* cmp $0x4fb450,%rax: 48 3d imm32 */
	memcpy(text + i, "\x48\x3d\x50\xb4\x4f\x00", 6), i += 6;
	/* cmpq $0x4fb450,disp32(%rip): 48 81 3d disp32 imm32 */
	memcpy(text + i, "\x48\x81\x3d\xf6\x93\x4e\x00\x50\xb4\x4f\x00", 11), i += 11;
	/* cmp $0x4fb460,%rax: another address */
	memcpy(text + i, "\x48\x3d\x60\xb4\x4f\x00", 6), i += 6;
	/* inside [0x400080, 0x400090): skipped */
	memcpy(text + 0x80, "\x48\x3d\x50\xb4\x4f\x00", 6);
	CHECK_EQ_U64(pt_pyalloc_count_guards(text, sizeof(text), base, 0x4fb450, base + 0x80, base + 0x90), 4,
		     "count: four forms, another address and PyObject_Malloc's own left out");
	CHECK_EQ_U64(pt_pyalloc_count_guards(text, sizeof(text), base, 0, 0, 0), 0, "count: no target, none");

	/* Position-independent: lea disp32(%rip),%rdx naming the static allocator. */
	memset(text, 0x90, sizeof(text));
	g = base + 0x100;
	{
		int32_t d = (int32_t)(g - (base + 0x10 + 7));

		memcpy(text + 0x10, "\x48\x8d\x15", 3);
		memcpy(text + 0x13, &d, 4);
		d = (int32_t)(g - (base + 0x40 + 7));
		memcpy(text + 0x40, "\x48\x8d\x05", 3);
		memcpy(text + 0x43, &d, 4);
	}
	CHECK_EQ_U64(pt_pyalloc_guard_target(text + 0x10, 16, base + 0x10), g, "guard: lea rip-relative (PIE)");
	CHECK_EQ_U64(pt_pyalloc_count_guards(text, sizeof(text), base, g, base + 0x10, base + 0x20), 1,
		     "count: lea rip-relative outside PyObject_Malloc");
	return CHECK_DONE();
}
