// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_pyword_a64 — the Python frame words (bpf/pyframe.h) in arm64's layout, on any host: 48
 * user-address bits (bpf/arch/uva.h), so a code object's address keeps 45 bits and the
 * instruction index 17. The addresses are the kinds CPython's code objects have on Debian's
 * arm64 kernels (VA_BITS 48): the mmap area under 2^48 (0xffff....: pymalloc's arenas, large
 * mallocs), the brk heap after a PIE at 2/3 of TASK_SIZE (0xaaaa....). Both have bit 47 set:
 * x86-64's 44-bit field dropped it, and the script's frames under Debian's python3.11 came out
 * as "[python code 0x7fff805c06f0]" for 0xffff805c06f0 (issue 24).
 */
#define PT_ARCH_USER_VA_BITS 48
#include <stdint.h>
#include "check.h"
#include "bpf/pyframe.h"

int main(void)
{
	static const __u64 codes[] = {
		0xffff805c06f0ULL,   /* an mmap: a code object of the smoke set's script */
		0xaaaab1c2d3e0ULL,   /* a PIE's brk heap */
		0xfffffffffff8ULL,   /* the highest 8-byte-aligned user address */
		0x7f1234567890ULL,   /* below 2^47, as on x86-64 */
		0x8ULL,
	};
	unsigned int i;

	CHECK_EQ_U64(PT_PY_CODE_BITS, 45, "45 bits of code address (48 - 3 alignment bits)");
	CHECK_EQ_U64(PT_PY_IDX_MAX, (1u << 17) - 1, "17 bits of instruction index");
	for (i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
		__u64 w = pt_py_frame_word(codes[i], 1234);
		char what[96];

		snprintf(what, sizeof(what), "code 0x%llx round-trips", (unsigned long long)codes[i]);
		CHECK_EQ_U64(pt_py_word_code(w), codes[i], what);
		snprintf(what, sizeof(what), "its index too (code 0x%llx)", (unsigned long long)codes[i]);
		CHECK_EQ_U64(pt_py_word_idx(w), 1234, what);
		CHECK(w >> 63 && !pt_py_is_boundary(w), "tagged, not a boundary (code 0x%llx)",
		      (unsigned long long)codes[i]);
	}
	/* The widest fields side by side: neither spills into the other or the flag bits. */
	{
		__u64 w = pt_py_frame_word(0xfffffffffff8ULL, PT_PY_IDX_MAX);

		CHECK_EQ_U64(pt_py_word_code(w), 0xfffffffffff8ULL, "top address beside the top index");
		CHECK_EQ_U64(pt_py_word_idx(w), PT_PY_IDX_MAX, "top index beside the top address");
		CHECK(!pt_py_is_boundary(w), "still a frame, not a boundary");
		CHECK_EQ_U64(pt_py_word_idx(pt_py_frame_word(0x1000, 1u << 20)), PT_PY_IDX_MAX,
			     "an index beyond 17 bits saturates");
	}
	CHECK(pt_py_is_boundary(pt_py_boundary_word(PT_PY_B_ENTRY)), "entry boundary");
	return CHECK_DONE();
}
