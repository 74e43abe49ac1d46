/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * arch.h — the architecture this binary was built for, and what of peaktrace is not ported to
 * it yet. arch.c is the one file of user/ that tests the architecture (the BPF side's is
 * bpf/arch/arch.bpf.h); arm64.c holds the AArch64 port's pure logic (issue 24).
 */
#ifndef PEAKTRACE_ARCH_H
#define PEAKTRACE_ARCH_H
#include <stdio.h>

/* Whose machine code a decoder reads: x86-64's (attach/probeplace.c, python/pyalloc.c) or
 * A64 (arch/arm64.c). */
enum pt_isa { PT_ISA_NONE = 0, PT_ISA_X86_64, PT_ISA_A64 };

/* How this architecture's BPF object learns of page faults (bpf/arch/x86.bpf.h, arm64.bpf.h):
 * which programs the loader attaches, and which kernel feature they need (kernel/features.c). */
enum pt_arch_faults {
	PT_FAULTS_TRACEPOINTS = 1,  /* exceptions:page_fault_user/kernel (x86) */
	PT_FAULTS_FENTRY,           /* fentry on handle_mm_fault (arm64: no such tracepoints) */
};

struct pt_arch {
	const char *name;      /* uname -m's spelling: "x86_64", "aarch64" */
	int isa;               /* enum pt_isa: the code the kernel's uprobes run here (probe
				* placement, attach/probes.c's thunk test) */
	const char *unported;  /* NULL, or what a tracing run would get wrong on it */
	unsigned int elf_machine; /* ELF e_machine of its code: the CFI tables the BPF unwinder
				   * reads are built for this machine only (unwind/cfi.h) */

	enum pt_arch_faults faults;
	const char *const *fault_progs; /* the object's page-fault programs, NULL-terminated */
};

const struct pt_arch *pt_arch_host(void);
/* The instruction set of an ELF file by its e_machine (EM_X86_64, EM_AARCH64), else
 * PT_ISA_NONE: a file's code is decoded as what it is, whatever the host (the unit tests read
 * Debian's arm64 binaries on x86-64). */
int pt_arch_isa_of_elf(unsigned int e_machine);

/* Before a tracing run (main.c): on an architecture with unported parts, one line on f naming
 * them and 1 (the caller exits EXIT_UNSUPPORTED), unless PEAKTRACE_UNPORTED=1 asks to go on
 * anyway (a developer's run in the arm64 VM: a warning line, figures not to be trusted); 0
 * where everything is ported. */
int pt_arch_refuse(FILE *f);

#endif /* PEAKTRACE_ARCH_H */
