// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fuzz_cfi — the call-frame information compiler (user/unwind/cfi.h) on the CFI of a file the
 * target maps. Input: [0] mode, [1..8] vaddr of the section (little-endian), [9..16] datarel,
 * [17..18] size of an .eh_frame_hdr (mode 2), then the bytes. Modes:
 *   0: .eh_frame through pt_cfi_build_mem, DW_EH_PE_indirect words read from the section itself;
 *   1: .debug_frame through pt_cfi_build_mem;
 *   2: .eh_frame_hdr + .eh_frame in a small ELF file (a memfd) through pt_elf_open_fd and
 *      pt_cfi_build_elf: the header cross-check and the ELF-side reader.
 * Then the table's promises: rows strictly increasing, counts that add up, lookups that land.
 */
#include <errno.h>
#include <elf.h>
#include "unwind/cfi.h"
#include "util/elfutil.h"
#include "fuzz.h"

struct mem { const uint8_t *p; size_t n; uint64_t vaddr; };

static int mem_deref(void *arg, uint64_t vaddr, uint64_t *val)
{
	const struct mem *m = arg;

	if (vaddr < m->vaddr || vaddr - m->vaddr > m->n || m->n - (vaddr - m->vaddr) < 8)
		return -ENOENT;
	memcpy(val, m->p + (vaddr - m->vaddr), 8);
	return 0;
}

static void check_table(const struct pt_unwind_table *t)
{
	const struct pt_cfi_stats *s = &t->stats;

	FUZZ_ASSERT(s->rows == t->nrows);
	FUZZ_ASSERT(t->nrows <= PT_UNWIND_MAX_ROWS);
	FUZZ_ASSERT(s->none_rows + s->end_rows + s->plt_rows + s->unsupported_rows <= t->nrows);
	FUZZ_ASSERT(s->fdes_empty + s->fdes_dropped <= s->fdes);
	for (uint32_t i = 0; i < t->nrows; i++) {
		if (i)
			FUZZ_ASSERT(t->rows[i - 1].pc < t->rows[i].pc);
		FUZZ_ASSERT(pt_cfi_lookup(t, t->rows[i].pc) == &t->rows[i]);
		(void)pt_cfi_kind_str(t->rows[i].cfa_reg);
	}
	if (t->nrows) {
		FUZZ_ASSERT(t->rows[0].pc == 0 || pt_cfi_lookup(t, t->rows[0].pc - 1) == NULL);
		FUZZ_ASSERT(pt_cfi_lookup(t, UINT32_MAX) == &t->rows[t->nrows - 1]);
	}
	for (unsigned w = 0; w < PT_UNW_WHY_COUNT + 1; w++)
		(void)pt_cfi_why_str(w);
}

static void put(uint8_t *img, size_t *o, const void *p, size_t n)
{
	memcpy(img + *o, p, n);
	*o += n;
}

/* An x86-64 ET_DYN file: one PT_LOAD covering all of it at base, and sections
 * .eh_frame_hdr, .eh_frame, .got, .shstrtab. */
static int elf_image(const uint8_t *hdr, size_t hn, const uint8_t *eh, size_t en, uint64_t base,
		     int *fdp)
{
	static const char strtab[] = "\0.eh_frame_hdr\0.eh_frame\0.got\0.shstrtab";
	size_t hoff = sizeof(Elf64_Ehdr) + sizeof(Elf64_Phdr), eoff = hoff + hn, goff = eoff + en;
	size_t soff = goff + 8, shoff = (soff + sizeof(strtab) + 7) & ~(size_t)7, o = 0;
	size_t total = shoff + 5 * sizeof(Elf64_Shdr);
	uint8_t *img = calloc(1, total);
	Elf64_Ehdr eh_ = { 0 };
	Elf64_Phdr ph = { 0 };
	Elf64_Shdr sh[5] = { { 0 } };
	uint64_t got = 0;

	if (!img)
		return -1;
	memcpy(eh_.e_ident, ELFMAG, SELFMAG);
	eh_.e_ident[EI_CLASS] = ELFCLASS64;
	eh_.e_ident[EI_DATA] = ELFDATA2LSB;
	eh_.e_ident[EI_VERSION] = EV_CURRENT;
	eh_.e_type = ET_DYN;
	eh_.e_machine = EM_X86_64;
	eh_.e_version = EV_CURRENT;
	eh_.e_phoff = sizeof(Elf64_Ehdr);
	eh_.e_shoff = shoff;
	eh_.e_ehsize = sizeof(Elf64_Ehdr);
	eh_.e_phentsize = sizeof(Elf64_Phdr);
	eh_.e_phnum = 1;
	eh_.e_shentsize = sizeof(Elf64_Shdr);
	eh_.e_shnum = 5;
	eh_.e_shstrndx = 4;
	ph.p_type = PT_LOAD;
	ph.p_flags = PF_R | PF_X;
	ph.p_vaddr = base;
	ph.p_filesz = ph.p_memsz = total;
	ph.p_align = 0x1000;
	sh[1] = (Elf64_Shdr){ .sh_name = 1, .sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC,
			      .sh_addr = base + hoff, .sh_offset = hoff, .sh_size = hn, .sh_addralign = 1 };
	sh[2] = (Elf64_Shdr){ .sh_name = 15, .sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC,
			      .sh_addr = base + eoff, .sh_offset = eoff, .sh_size = en, .sh_addralign = 1 };
	sh[3] = (Elf64_Shdr){ .sh_name = 25, .sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC | SHF_WRITE,
			      .sh_addr = base + goff, .sh_offset = goff, .sh_size = 8, .sh_addralign = 1 };
	sh[4] = (Elf64_Shdr){ .sh_name = 30, .sh_type = SHT_STRTAB, .sh_offset = soff,
			      .sh_size = sizeof(strtab), .sh_addralign = 1 };
	put(img, &o, &eh_, sizeof(eh_));
	put(img, &o, &ph, sizeof(ph));
	put(img, &o, hdr, hn);
	put(img, &o, eh, en);
	put(img, &o, &got, 8);
	put(img, &o, strtab, sizeof(strtab));
	o = shoff;
	put(img, &o, sh, sizeof(sh));
	*fdp = fuzz_memfd(img, total);
	free(img);
	return *fdp < 0 ? -1 : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pt_unwind_table t;
	uint64_t vaddr, datarel;
	uint16_t hn;
	int mode, err, fd;

	if (size < 19)
		return 0;
	mode = data[0] % 3;
	memcpy(&vaddr, data + 1, 8);
	memcpy(&datarel, data + 9, 8);
	memcpy(&hn, data + 17, 2);
	data += 19;
	size -= 19;
	if (mode < 2) {
		struct mem m = { data, size, vaddr };
		struct pt_cfi_section sec = {
			.data = data, .size = size, .vaddr = vaddr, .datarel = datarel,
			.debug_frame = mode == 1, .deref = mem_deref, .deref_arg = &m,
		};

		err = pt_cfi_build_mem(&sec, &t);
	} else {
		struct pt_elf e;

		if (hn > size)
			hn = (uint16_t)size;
		/* Tables describe vaddrs below 4 GiB: a base there, page aligned. */
		vaddr &= 0xfffff000ull;
		if (elf_image(data, hn, data + hn, size - hn, vaddr, &fd))
			return 0;
		err = pt_elf_open_fd(fd, &e);
		if (!err) {
			err = pt_cfi_build_elf(&e, &t);
			pt_elf_close(&e);
		}
		close(fd);
		if (err)
			return 0;
	}
	if (err) {
		FUZZ_ASSERT(err < 0 && !t.rows && !t.nrows);
		return 0;
	}
	check_table(&t);
	pt_cfi_free(&t);
	return 0;
}
