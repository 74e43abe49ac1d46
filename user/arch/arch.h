/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * arch.h — the architecture this binary was built for, and what of peaktrace is not ported to
 * it yet. arch.c is the one file of user/ that tests the architecture (the BPF side's is
 * bpf/arch/arch.bpf.h); arm64.c holds the AArch64 port's pure logic (issue 24).
 */
#ifndef PEAKTRACE_ARCH_H
#define PEAKTRACE_ARCH_H
#include <stdio.h>

struct pt_arch {
	const char *name;      /* uname -m's spelling: "x86_64", "aarch64" */
	int x86_code;          /* the machine code is x86-64's: attach/probeplace.c's decoder and
				* attach/probes.c's thunk test apply */
	const char *unported;  /* NULL, or what a tracing run would get wrong on it */
	unsigned int elf_machine; /* ELF e_machine of its code: the CFI tables the BPF unwinder
				   * reads are built for this machine only (unwind/cfi.h) */
};

const struct pt_arch *pt_arch_host(void);

/* Before a tracing run (main.c): on an architecture with unported parts, one line on f naming
 * them and 1 (the caller exits EXIT_UNSUPPORTED), unless PEAKTRACE_UNPORTED=1 asks to go on
 * anyway (a developer's run in the arm64 VM: a warning line, figures not to be trusted); 0
 * where everything is ported. */
int pt_arch_refuse(FILE *f);

#endif /* PEAKTRACE_ARCH_H */
