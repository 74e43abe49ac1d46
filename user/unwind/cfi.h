/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * cfi.h — compile an x86-64 or AArch64 ELF file's call-frame information (.eh_frame, else
 * .debug_frame) into the sorted pt_unwind_row table of bpf/unwind.h, for the BPF unwinder to
 * search. The rows follow the file's machine (its e_machine, at run time: the x86-64 host's
 * unit tests build AArch64 tables too); a table is for the BPF object of that machine only,
 * so the loader refuses files of another (unwind/unwind_maps.c, counted).
 *
 * The builder works from the file alone: it parses CIEs/FDEs and runs the DWARF CFA
 * instructions itself (no libdw, no libunwind), so what the kernel sees is exactly what this
 * code decided, and tests/unit/test_cfi.c checks it against binutils' independent decoder.
 */
#ifndef PEAKTRACE_CFI_H
#define PEAKTRACE_CFI_H
#include <stddef.h>
#include <stdint.h>
#include "bpf/unwind.h"

struct pt_elf;

struct pt_cfi_stats {
	uint32_t cies;          /* CIEs parsed */
	uint32_t fdes;          /* FDEs parsed (including the ones counted below) */
	uint32_t fdes_empty;    /* zero-length FDEs (linker leftovers): nothing to do */
	uint32_t fdes_dropped;  /* header undecodable, CIE missing or unusable, or above 4 GiB:
	                         * their range reads as PT_CFA_NONE */
	uint32_t fdes_overlap;  /* FDEs cut short because the next one started inside them */
	uint32_t rules;         /* rule rows the instructions produced, before merging */
	uint32_t rows;          /* rows in the table (= nrows) */
	uint32_t none_rows, end_rows, plt_rows, unsupported_rows; /* table rows of those kinds */
	uint32_t why[PT_UNW_WHY_COUNT]; /* unsupported rules by cause, before merging */
	int32_t hdr_fdes;       /* FDE count .eh_frame_hdr announces; -1 without a usable one */
	int32_t hdr_matched;    /* of those, entries naming the start of an FDE we parsed */
	uint8_t debug_frame;    /* the table came from .debug_frame (no usable .eh_frame) */
	uint8_t truncated;      /* the section ended inside an entry: later entries lost */
	uint32_t derefs;        /* FDE addresses read through DW_EH_PE_indirect: words outside
	                         * the section (the unwind cache does not keep such a table) */
};

struct pt_unwind_table {
	struct pt_unwind_row *rows; /* sorted by pc, strictly increasing */
	uint32_t nrows;
	uint16_t machine;       /* the ELF e_machine the rows are for: EM_X86_64, EM_AARCH64 */
	struct pt_cfi_stats stats;
};

/* One CFI section already in memory (tests, and callers that read it some other way). */
struct pt_cfi_section {
	const void *data;
	size_t size;
	uint64_t vaddr;         /* address of data[0]: base of DW_EH_PE_pcrel */
	uint64_t datarel;       /* base of DW_EH_PE_datarel (.got on x86-64) */
	int debug_frame;        /* .debug_frame rules: CIE id ~0, CIE pointers are offsets */
	uint16_t machine;       /* ELF e_machine of the rules: 0 or EM_X86_64, EM_AARCH64 */
	/* Reads the 8-byte word at a vaddr for DW_EH_PE_indirect FDE addresses (optional:
	 * without it such FDEs are dropped). Returns 0 or -errno. */
	int (*deref)(void *arg, uint64_t vaddr, uint64_t *val);
	void *deref_arg;
};

/* Build the table of an ELF file. 0, or -errno: -ENOENT (no such file, or no CFI section),
 * -ENOEXEC (not an ELF file or malformed headers), -EOPNOTSUPP (not x86-64 or AArch64 ELF64,
 * little-endian; pt_cfi_build_mem: a machine it does not know),
 * -E2BIG (more rows than PT_UNWIND_MAX_ROWS), -ENOMEM. Malformed CFI is not an error: it is
 * counted in out->stats and its range made PT_CFA_NONE or PT_CFA_UNSUPPORTED. On error
 * *out is left empty (nothing to free). */
int pt_cfi_build(const char *path, struct pt_unwind_table *out);
/* Same, on an ELF the caller opened (user/elfutil.h) and keeps owning. */
int pt_cfi_build_elf(struct pt_elf *e, struct pt_unwind_table *out);
/* SHA-256 of everything pt_cfi_build_elf builds e's table from (the CFI section's bytes, its
 * address and kind, the GOT's address), bar the words DW_EH_PE_indirect reads (stats.derefs):
 * the unwind cache's key beside the build id, which the file's author chooses freely.
 * 0, or pt_cfi_build_elf's -errno. */
int pt_cfi_elf_digest(struct pt_elf *e, uint8_t out[32]);
/* Same, from raw section bytes. */
int pt_cfi_build_mem(const struct pt_cfi_section *sec, struct pt_unwind_table *out);
void pt_cfi_free(struct pt_unwind_table *t);

/* The row in force at pc (a file vaddr): the last row with row.pc <= pc; NULL when pc lies
 * below the first row (no CFI there). */
const struct pt_unwind_row *pt_cfi_lookup(const struct pt_unwind_table *t, uint64_t pc);

/* Short names for reports: "rsp", "plt", ... and "cfa-expr", "rbp-rule", ... */
const char *pt_cfi_kind_str(unsigned kind);
const char *pt_cfi_why_str(unsigned why);
#endif
