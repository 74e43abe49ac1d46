/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * elfutil.h — small libelf helpers shared by procmaps.c (allocator discovery) and
 * symbolize.c. Internal to user/; nothing here crosses the kernel/user line.
 * (Not named elf.h: with -Iuser that would shadow <elf.h> inside <gelf.h>.)
 *
 * Every helper tolerates malformed files: a truncated or corrupt ELF yields
 * -errno (usually -ENOEXEC), never a crash.
 */
#ifndef PEAKTRACE_ELFUTIL_H
#define PEAKTRACE_ELFUTIL_H
#include <stddef.h>
#include <stdint.h>
#include <libelf.h>

/* One PT_LOAD segment, kept to translate between file offsets and vaddrs. */
struct pt_elf_load {
	uint64_t off, vaddr, filesz, memsz;
	uint32_t flags;         /* PF_X | PF_W | PF_R */
};

struct pt_elf {
	int fd;
	int own_fd;             /* close fd in pt_elf_close() */
	Elf *elf;
	uint16_t type;          /* e_type: ET_EXEC, ET_DYN, ... */
	uint16_t machine;       /* e_machine: EM_X86_64, EM_AARCH64, ... */
	struct pt_elf_load *loads;
	int nloads;
};

/* Open path read-only; -errno on failure, -ENOEXEC if it is not an ELF file. */
int pt_elf_open(const char *path, struct pt_elf *e);
/* Same on an fd the caller keeps owning (it is not closed by pt_elf_close). */
int pt_elf_open_fd(int fd, struct pt_elf *e);
void pt_elf_close(struct pt_elf *e);

/* Translate through the PT_LOAD segment containing the address/offset.
 * 0 or -ENOENT when no segment contains it. */
int pt_elf_vaddr_to_off(const struct pt_elf_load *loads, int nloads, uint64_t vaddr, uint64_t *off);
int pt_elf_off_to_vaddr(const struct pt_elf_load *loads, int nloads, uint64_t off, uint64_t *vaddr);

struct pt_elf_sym {
	const char *name;
	uint64_t value, size;
	uint8_t type;           /* STT_* */
	uint8_t bind;           /* STB_* */
	uint8_t visibility;     /* STV_* */
	uint8_t hidden_ver;     /* .dynsym: non-default symbol version ("malloc@GLIBC_2.2.5") */
	uint16_t shndx;
};

/* Sections an ELF file may claim (real objects: under 100; a kernel module built with
 * -ffunction-sections, ~10k); more is refused before libelf reads them (elfutil.c shnum_ok). */
#define PT_ELF_SHNUM_MAX (1u << 16)

/* Entries of one symbol table looked at, at most (16M: 384 MiB of Elf64_Sym); the rest of a
 * larger one is not used. */
#define PT_ELF_SYMS_MAX (1u << 24)

/* Calls cb for every named symbol of every section of type sh_type (SHT_SYMTAB or
 * SHT_DYNSYM), its first PT_ELF_SYMS_MAX entries. cb returns non-zero to stop early. Returns 0 (also when there is no
 * such table) or -errno on a malformed table. */
typedef int (*pt_elf_sym_cb)(const struct pt_elf_sym *sym, void *ctx);
int pt_elf_foreach_sym(struct pt_elf *e, uint32_t sh_type, pt_elf_sym_cb cb, void *ctx);

/* True if the file has a section of that type holding data (not SHT_NOBITS). */
int pt_elf_has_section(struct pt_elf *e, uint32_t sh_type);

/* NT_GNU_BUILD_ID into buf; returns its length or -ENOENT. */
int pt_elf_build_id(struct pt_elf *e, uint8_t *buf, size_t bufsz);
/* File name from .gnu_debuglink (a plain name, never containing '/'); 0 or -ENOENT. */
int pt_elf_debuglink(struct pt_elf *e, char *buf, size_t bufsz);
/* DT_SONAME (NULL if none) and DT_NEEDED names, all malloc'd. 0 or -errno;
 * an object without a dynamic section returns 0 with nothing. */
int pt_elf_dynamic(struct pt_elf *e, char **soname, char ***needed, int *nneeded);
void pt_elf_free_strv(char **v, int n);
#endif
