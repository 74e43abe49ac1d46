// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * arch.c — which architecture this is, decided at compile time: the one place in user/ that
 * tests it. x86-64 and arm64 (make static ARCH=arm64) are ported; an architecture with parts
 * not ported names them in `unported` and refuses to trace, rather than print wrong figures.
 */
#include <elf.h>
#include <stdlib.h>
#include <string.h>
#include "arch/arch.h"

/* bpf/peaktrace.bpf.c's page-fault programs: each architecture's object has its own. */
#if defined(__x86_64__)
static const char *const fault_progs[] = { "on_page_fault_user", "on_page_fault_kernel", NULL };
static const struct pt_arch host = {
	"x86_64", PT_ISA_X86_64, NULL, EM_X86_64, PT_FAULTS_TRACEPOINTS, fault_progs,
};
#elif defined(__aarch64__)
#include <stddef.h>
#include <asm/ptrace.h>
#include "arch/arm64.h"
/* arm64.c's register offsets, checked against the target's own header when cross-compiled. */
_Static_assert(offsetof(struct user_pt_regs, regs[PT_A64_FP]) == 8 * PT_A64_FP, "x29");
_Static_assert(offsetof(struct user_pt_regs, sp) == 8 * PT_A64_SP, "sp");
_Static_assert(offsetof(struct user_pt_regs, pc) == 8 * PT_A64_PC, "pc");
_Static_assert(sizeof(struct user_pt_regs) == PT_A64_USER_REGS_SIZE, "user_pt_regs");
/* Nothing left unported (issue 24; arch/arm64.c has the pure parts): the stacks (frame 0 in
 * x30, AArch64 CFI rows, PAC-signed return addresses stripped: bpf/arch/arm64.bpf.h,
 * unwind/cfi.c), page faults (fentry on handle_mm_fault: bpf/rss.bpf.h rss_mm_fault), probe
 * placement and pymalloc guards in A64 code, aws-lambda-cpp's result pointer from x8, and
 * CPython's frames (their code objects' addresses have 48 bits: bpf/arch/uva.h). */
static const char *const fault_progs[] = { "on_mm_fault", NULL };
static const struct pt_arch host = {
	"aarch64", PT_ISA_A64, NULL, EM_AARCH64, PT_FAULTS_FENTRY, fault_progs,
};
#else
static const struct pt_arch host = {
	"unknown", PT_ISA_NONE, "everything: peaktrace knows x86-64 and arm64", EM_NONE, 0, NULL,
};
#endif

const struct pt_arch *pt_arch_host(void)
{
	return &host;
}

int pt_arch_isa_of_elf(unsigned int e_machine)
{
	if (e_machine == EM_X86_64)
		return PT_ISA_X86_64;
	return e_machine == EM_AARCH64 ? PT_ISA_A64 : PT_ISA_NONE;
}

int pt_arch_refuse(FILE *f)
{
	const char *go = getenv("PEAKTRACE_UNPORTED");

	if (!host.unported)
		return 0;
	if (go && strcmp(go, "1") == 0) {
		fprintf(f, "peaktrace: warning: PEAKTRACE_UNPORTED=1: tracing on %s without %s; "
			   "figures not to be trusted\n", host.name, host.unported);
		return 0;
	}
	fprintf(f, "peaktrace: tracing on %s is not ported yet: %s (`peaktrace diff`, "
		   "--check-kernel, --help and --version work)\n", host.name, host.unported);
	return 1;
}
