/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* probeplace.h — where to put an entry uprobe so the kernel can emulate, not single-step. */
#ifndef PEAKTRACE_PROBEPLACE_H
#define PEAKTRACE_PROBEPLACE_H
#include <stddef.h>
#include <stdint.h>

struct pt_probe_place {
	uint32_t skip;         /* bytes to skip from the function entry (0 = at entry) */
	int emulated;          /* 1 if the instruction probed is one the x86 kernel emulates */
	char insn[48];         /* mnemonic-ish description of the probed instruction ("je rel32") */
	char skipped[48];      /* description of skipped instruction(s), "" if none */
};

/* Decide the placement given the first bytes of a function (x86-64 machine code).
 * may_skip: 0 when the probe must be at entry (the function also gets a uretprobe,
 * which reads the return address at [rsp] at entry). Pure function, unit tested. */
void pt_probe_place_x86(const uint8_t *code, size_t len, int may_skip, struct pt_probe_place *out);
/* The same for A64 code (arch/arm64.c pt_arm64_probe_place: "emulated" is simulated in the
 * trap, without the out-of-line step). */
void pt_probe_place_a64(const uint8_t *code, size_t len, int may_skip, struct pt_probe_place *out);
/* By the instruction set (enum pt_isa, arch/arch.h): x86-64's or A64's rule; any other stays
 * at the entry. */
void pt_probe_place(int isa, const uint8_t *code, size_t len, int may_skip,
		    struct pt_probe_place *out);
/* A one-instruction forwarding thunk: x86-64 `jmp rel32`/`jmp rel8` after an optional endbr64,
 * A64 `b` after an optional bti. Such an extra entry point (jemalloc's operator delete: jmp
 * free@plt) ends in another entry point that is probed. */
int pt_probe_is_thunk(int isa, const uint8_t *code, size_t len);
#endif
