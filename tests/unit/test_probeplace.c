// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_probeplace — entry-probe placement on x86-64 machine code. */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "attach/probeplace.h"
#include "arch/arch.h"
#include "target/procmaps.h"

#define PLACE(bytes, may_skip, out) \
	pt_probe_place_x86((const uint8_t *)(bytes), sizeof(bytes) - 1, (may_skip), (out))

static void test_glibc_vectors(void)
{
	struct pt_probe_place p;

	/* free: test %rdi,%rdi; je rel32 -> probe the je. */
	PLACE("\x48\x85\xff\x0f\x84\xbf\x00\x00\x00", 1, &p);
	CHECK_EQ_U64(p.skip, 3, "free: skip test");
	CHECK(p.emulated, "free: probed insn emulated");
	CHECK_STR(p.insn, "je rel32", "free: probed insn");
	CHECK_STR(p.skipped, "test %rdi,%rdi", "free: skipped insn");

	/* Same bytes, uretprobe also attached: must stay at entry. */
	PLACE("\x48\x85\xff\x0f\x84\xbf\x00\x00\x00", 0, &p);
	CHECK_EQ_U64(p.skip, 0, "free, may_skip=0: at entry");
	CHECK(!p.emulated, "free, may_skip=0: test is single-stepped");
	CHECK_STR(p.skipped, "", "free, may_skip=0: nothing skipped");

	/* malloc: push %r12 is emulated at entry. */
	PLACE("\x41\x54\x55\x53", 1, &p);
	CHECK_EQ_U64(p.skip, 0, "malloc: at entry");
	CHECK(p.emulated, "malloc: push emulated");
	CHECK_STR(p.insn, "push %r12", "malloc: insn");

	/* posix_memalign: cmpb $0x0,disp(%rip); push %r12. */
	PLACE("\x80\x3d\x01\x02\x14\x00\x00\x41\x54", 1, &p);
	CHECK_EQ_U64(p.skip, 7, "posix_memalign: skip cmpb rip");
	CHECK(p.emulated, "posix_memalign: push emulated");
	CHECK_STR(p.insn, "push %r12", "posix_memalign: insn");
	CHECK_STR(p.skipped, "cmpb $0x0,0x140201(%rip)", "posix_memalign: skipped");

	/* memalign: cmpb $0x0,disp(%rip); je rel8; jmp rel32. */
	PLACE("\x80\x3d\x71\x0e\x14\x00\x00\x74\x07\xe9\x32\xf6\xff\xff", 1, &p);
	CHECK_EQ_U64(p.skip, 7, "memalign: skip cmpb rip");
	CHECK_STR(p.insn, "je rel8", "memalign: insn");
	PLACE("\x80\x3d\x71\x0e\x14\x00\x00\x74\x07\xe9\x32\xf6\xff\xff", 0, &p);
	CHECK_EQ_U64(p.skip, 0, "memalign, may_skip=0: at entry");
	CHECK(!p.emulated, "memalign, may_skip=0: cmpb single-stepped");
}

static void test_other_forms(void)
{
	struct pt_probe_place p;

	/* endbr64; push %rbp */
	PLACE("\xf3\x0f\x1e\xfa\x55\x48\x89\xe5", 1, &p);
	CHECK_EQ_U64(p.skip, 4, "endbr64; push: skip endbr64");
	CHECK_STR(p.insn, "push %rbp", "endbr64; push: insn");

	/* endbr64; test %rdi,%rdi; je rel8: two read-only instructions skipped. */
	PLACE("\xf3\x0f\x1e\xfa\x48\x85\xff\x74\x10", 1, &p);
	CHECK_EQ_U64(p.skip, 7, "endbr64; test; je: skip both");
	CHECK_STR(p.skipped, "endbr64; test %rdi,%rdi", "endbr64; test; je: skipped");

	/* cmp %rsi,%rdi (48 39 f7); jne rel8 */
	PLACE("\x48\x39\xf7\x75\x05", 1, &p);
	CHECK_EQ_U64(p.skip, 3, "cmp reg,reg; jne: skip 3");
	CHECK_STR(p.skipped, "cmp %rsi,%rdi", "cmp reg,reg: described");

	/* cmp $0x10,%rdi (48 83 ff 10); ja rel32 */
	PLACE("\x48\x83\xff\x10\x0f\x87\x00\x01\x00\x00", 1, &p);
	CHECK_EQ_U64(p.skip, 4, "cmp imm8: skip 4");
	CHECK_STR(p.insn, "ja rel32", "cmp imm8; ja rel32: insn");

	/* test %edi,%edi (85 ff); jmp rel32 */
	PLACE("\x85\xff\xe9\x00\x00\x00\x00", 1, &p);
	CHECK_EQ_U64(p.skip, 2, "test r32 without REX: skip 2");

	/* mov %rdi,%rbx writes a register: never skipped. */
	PLACE("\x48\x89\xfb\x55", 1, &p);
	CHECK_EQ_U64(p.skip, 0, "mov: not skipped");
	CHECK(!p.emulated, "mov: single-stepped");

	/* sub $0x10,%rsp (83 /5) has the cmp encoding's shape but writes. */
	PLACE("\x48\x83\xec\x10\x55", 1, &p);
	CHECK_EQ_U64(p.skip, 0, "sub imm8: not skipped");

	/* test; followed by a non-emulated instruction: stay at entry. */
	PLACE("\x48\x85\xff\x48\x89\xfb", 1, &p);
	CHECK_EQ_U64(p.skip, 0, "test; mov: nothing to gain, at entry");
	CHECK(!p.emulated, "test; mov: single-stepped");

	/* Emulated forms at entry. */
	PLACE("\x90", 1, &p);
	CHECK(p.emulated && p.skip == 0, "nop emulated");
	PLACE("\x66\x90", 1, &p);
	CHECK(p.emulated, "66 90 emulated");
	PLACE("\x0f\x1f\x44\x00\x00", 1, &p);
	CHECK(p.emulated, "5-byte kernel nop emulated");
	PLACE("\xe8\x00\x00\x00\x00", 1, &p);
	CHECK(p.emulated, "call rel32 emulated");
	PLACE("\xeb\x05", 1, &p);
	CHECK(p.emulated, "jmp rel8 emulated");
	PLACE("\xf2\xe9\x00\x00\x00\x00", 1, &p);
	CHECK(p.emulated, "bnd jmp emulated");
	PLACE("\x66\xe8\x00\x00", 1, &p);
	CHECK(!p.emulated, "callw (66 prefix) rejected like the kernel does");
	PLACE("\x48\x50", 1, &p);
	CHECK(!p.emulated, "push with REX.W not emulated");
	PLACE("\x41\x57", 1, &p);
	CHECK(p.emulated, "push %%r15 emulated");

	/* Long nop that is not in the kernel table: single-stepped, skippable. */
	PLACE("\x66\x2e\x0f\x1f\x84\x00\x00\x00\x00\x00\x55", 1, &p);
	CHECK_EQ_U64(p.skip, 10, "10-byte nop skipped");

	/* Truncated and empty input never read past len. */
	PLACE("\x48\x85", 1, &p);
	CHECK(p.skip == 0 && !p.emulated, "truncated test: at entry");
	PLACE("\x48\x85\xff", 1, &p);
	CHECK(p.skip == 0, "test with no following byte: at entry");
	PLACE("\x0f\x84\x00", 1, &p);
	CHECK(!p.emulated, "truncated je rel32 not claimed");
	PLACE("\x80\x3d\x01\x02", 1, &p);
	CHECK(p.skip == 0, "truncated cmpb rip: at entry");
	pt_probe_place_x86(NULL, 0, 1, &p);
	CHECK(p.skip == 0 && !p.emulated, "no code: at entry");
	pt_probe_place_x86((const uint8_t *)"", 0, 1, &p);
	CHECK(p.skip == 0, "len 0: at entry");
}

/* Every 1- and 2-byte input, and a stride through 3-byte ones, in exact-size heap
 * buffers so valgrind flags any read past len. */
static void test_fuzz_short(void)
{
	struct pt_probe_place p;
	uint8_t *buf;
	int bad = 0;
	uint32_t v;
	size_t len;

	for (len = 1; len <= 3; len++) {
		uint32_t lim = len == 3 ? (1u << 24) : (1u << (8 * len));
		uint32_t step = len == 3 ? 61 : 1;

		for (v = 0; v < lim; v += step) {
			buf = malloc(len);
			if (!buf)
				break;
			memcpy(buf, &v, len);
			pt_probe_place_x86(buf, len, 1, &p);
			if (p.skip >= len)
				bad++;
			free(buf);
		}
	}
	CHECK(bad == 0, "short inputs: skip always inside the input");
}

static void test_real_libc(void)
{
	static const char *const libc = "/lib/x86_64-linux-gnu/libc.so.6";
	const char *paths[] = { libc };
	struct pt_allocator a;
	struct pt_probe_place p;
	uint8_t code[16];
	ssize_t n;
	int fd, err;

	err = pt_find_allocator_in(paths, 1, &a);
	if (err) {
		printf("ok - skipped: %s not usable (%d)\n", libc, err);
		return;
	}
	fd = open(a.open_path, O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? pread(fd, code, sizeof(code), (off_t)a.fn_offset[PT_FN_FREE]) : -1;
	if (n != (ssize_t)sizeof(code) || memcmp(code, "\x48\x85\xff", 3) != 0) {
		printf("ok - skipped: free in %s does not start with test %%rdi,%%rdi\n", libc);
	} else {
		pt_probe_place_x86(code, sizeof(code), 1, &p);
		CHECK_EQ_U64(p.skip, 3, "real libc free: probe at free+3");
		CHECK(p.emulated, "real libc free: probed insn emulated (%s)", p.insn);
	}
	/* Informational: what every entry point would get. */
	for (int i = 0; fd >= 0 && i < PT_FN_MAX; i++) {
		if (!a.fn_offset[i])
			continue;
		if (pread(fd, code, sizeof(code), (off_t)a.fn_offset[i]) != (ssize_t)sizeof(code))
			continue;
		pt_probe_place_x86(code, sizeof(code), 1, &p);
		printf("# %-15s +%u %s%s [%s]\n", pt_alloc_fn_name(i), p.skip,
		       p.emulated ? "emulated " : "stepped ", p.insn, p.skipped);
	}
	if (fd >= 0)
		close(fd);
	pt_allocator_free(&a);
}

/* The dispatcher: by the instruction set, the same bytes read as what they are. */
static void test_by_isa(void)
{
	/* trixie's arm64 free: bti c; cbz x0. */
	static const uint8_t a64_free[] = { 0x5f, 0x24, 0x03, 0xd5, 0xa0, 0x0e, 0x00, 0xb4 };
	static const uint8_t x86_free[] = { 0x48, 0x85, 0xff, 0x0f, 0x84, 0xbf, 0x00, 0x00, 0x00 };
	struct pt_probe_place p;

	pt_probe_place(PT_ISA_A64, a64_free, sizeof(a64_free), 1, &p);
	CHECK_EQ_U64(p.skip, 4, "a64 free: past bti c");
	CHECK(p.emulated, "a64 free: cbz simulated");
	CHECK_STR(p.insn, "cbz", "a64 free: probed insn");
	CHECK_STR(p.skipped, "bti c", "a64 free: skipped");
	pt_probe_place(PT_ISA_X86_64, x86_free, sizeof(x86_free), 1, &p);
	CHECK_EQ_U64(p.skip, 3, "x86 free: past the test, as pt_probe_place_x86");
	pt_probe_place(PT_ISA_NONE, x86_free, sizeof(x86_free), 1, &p);
	CHECK_EQ_U64(p.skip, 0, "unknown code: the entry");
	CHECK(!p.emulated, "unknown code: nothing promised");

	CHECK(pt_probe_is_thunk(PT_ISA_X86_64, (const uint8_t *)"\xf3\x0f\x1e\xfa\xe9\0\0\0\0", 9),
	      "x86: endbr64; jmp rel32 is a thunk");
	CHECK(pt_probe_is_thunk(PT_ISA_X86_64, (const uint8_t *)"\xeb\x10", 2),
	      "x86: jmp rel8 is a thunk");
	CHECK(!pt_probe_is_thunk(PT_ISA_X86_64, (const uint8_t *)"\xe8\0\0\0\0", 5),
	      "x86: call is no thunk");
	CHECK(pt_probe_is_thunk(PT_ISA_A64, (const uint8_t *)"\x5f\x24\x03\xd5\xf0\xff\xff\x17", 8),
	      "a64: bti c; b is a thunk");
	CHECK(!pt_probe_is_thunk(PT_ISA_A64, (const uint8_t *)"\xeb\x10\x00\x00", 4),
	      "a64: x86 bytes are no thunk");
	CHECK(!pt_probe_is_thunk(PT_ISA_NONE, (const uint8_t *)"\xeb\x10", 2),
	      "unknown code: no thunk");
}

int main(void)
{
	test_glibc_vectors();
	test_other_forms();
	test_fuzz_short();
	test_real_libc();
	test_by_isa();
	return CHECK_DONE();
}
