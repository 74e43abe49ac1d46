// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * pyalloc.c — CPython's object allocator entry points for --python-objects, and the count of
 * pymalloc copies an optimized build inlines where no entry probe sees them.
 *
 * The exported functions are what every build has (Debian's python3.11 is stripped of its
 * local symbols, but .dynsym keeps these). They are probed with the malloc programs through
 * the same cookies (enum pt_alloc_fn): PyObject_Malloc as malloc, _Calloc as calloc, _Realloc
 * as realloc, _Free as free. Nested calls are the allocator's own nesting rule: a request over
 * 512 bytes goes PyObject_Malloc -> PyMem_RawMalloc -> malloc, and only the outermost call on
 * the thread is counted; PyObject_Free of such a block then reaches free(), which finds the
 * pointer already taken and stays quiet (free_checks_thread).
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "python/pyalloc.h"
#include "arch/arch.h"
#include "arch/arm64.h"
#include "util/elfutil.h"
#include "target/proc.h"

static const char *const names[PT_PYALLOC_FAMILIES][4] = {
	{ "PyObject_Malloc", "PyObject_Calloc", "PyObject_Realloc", "PyObject_Free" },
	{ "PyMem_Malloc", "PyMem_Calloc", "PyMem_Realloc", "PyMem_Free" },
};
static const enum pt_alloc_fn as_fn[4] = { PT_FN_MALLOC, PT_FN_CALLOC, PT_FN_REALLOC, PT_FN_FREE };

struct scan {
	uint64_t vaddr[PT_PYALLOC_FAMILIES][4], size[PT_PYALLOC_FAMILIES][4];
};

static int scan_cb(const struct pt_elf_sym *s, void *ctx)
{
	struct scan *sc = ctx;
	int f, i;

	if (s->type != STT_FUNC || !s->value || s->shndx == SHN_UNDEF)
		return 0;
	if (s->bind != STB_GLOBAL && s->bind != STB_WEAK)
		return 0;
	for (f = 0; f < PT_PYALLOC_FAMILIES; f++)
		for (i = 0; i < 4; i++)
			if (strcmp(s->name, names[f][i]) == 0) {
				sc->vaddr[f][i] = s->value;
				sc->size[f][i] = s->size;
			}
	return 0;
}

static int rex_w(uint8_t b)
{
	return (b & 0xf8) == 0x48;     /* REX.W, any of R/X/B */
}

uint64_t pt_pyalloc_guard_target(const uint8_t *c, size_t n, uint64_t vaddr)
{
	size_t i;

	for (i = 0; i + 7 <= n; i++) {
		int32_t imm;

		if (!rex_w(c[i]))
			continue;
		/* cmp $imm32, %rax: REX.W 3d imm32 */
		if (c[i + 1] == 0x3d && i + 6 <= n) {
			memcpy(&imm, c + i + 2, 4);
			if (imm > 0)
				return (uint64_t)imm;
		}
		/* cmp $imm32, %reg: REX.W 81 /7 (modrm 11 111 rrr) imm32 */
		if (c[i + 1] == 0x81 && (c[i + 2] & 0xf8) == 0xf8) {
			memcpy(&imm, c + i + 3, 4);
			if (imm > 0)
				return (uint64_t)imm;
		}
		/* lea disp32(%rip), %reg (a position-independent build): REX.W 8d modrm 00 rrr 101 */
		if (c[i + 1] == 0x8d && (c[i + 2] & 0xc7) == 0x05) {
			memcpy(&imm, c + i + 3, 4);
			return vaddr + i + 7 + (int64_t)imm;
		}
	}
	return 0;
}

uint32_t pt_pyalloc_count_guards(const uint8_t *c, size_t n, uint64_t vaddr, uint64_t target,
				 uint64_t skip_lo, uint64_t skip_hi)
{
	uint32_t count = 0;
	size_t i;

	if (!target)
		return 0;
	for (i = 0; i + 7 <= n; i++) {
		uint64_t at = vaddr + i;
		int32_t imm;
		size_t len = 0;     /* the compare's length when it names target */

		if (!rex_w(c[i]) || (at >= skip_lo && at < skip_hi))
			continue;
		if (c[i + 1] == 0x3d) {
			memcpy(&imm, c + i + 2, 4);
			len = imm > 0 && (uint64_t)imm == target ? 6 : 0;
		} else if (c[i + 1] == 0x81 && (c[i + 2] & 0xf8) == 0xf8) {
			memcpy(&imm, c + i + 3, 4);
			len = imm > 0 && (uint64_t)imm == target ? 7 : 0;
		} else if (c[i + 1] == 0x81 && c[i + 2] == 0x3d && i + 11 <= n) {
			/* cmpq $imm32, disp32(%rip): the allocator pointer compared in memory */
			memcpy(&imm, c + i + 7, 4);
			len = imm > 0 && (uint64_t)imm == target ? 11 : 0;
		} else if (c[i + 1] == 0x8d && (c[i + 2] & 0xc7) == 0x05) {
			memcpy(&imm, c + i + 3, 4);
			len = at + 7 + (int64_t)imm == target ? 7 : 0;
		}
		if (len) {
			count++;
			i += len - 1;
		}
	}
	return count;
}

/* Read the bytes of the executable segment holding vaddr (bounded: 64 MiB). */
static uint8_t *read_text(struct pt_elf *e, uint64_t vaddr, uint64_t *seg_vaddr, size_t *len)
{
	int k;

	for (k = 0; k < e->nloads; k++) {
		const struct pt_elf_load *l = &e->loads[k];
		uint8_t *buf;
		ssize_t r;

		if (!(l->flags & PF_X) || vaddr < l->vaddr || vaddr >= l->vaddr + l->filesz)
			continue;
		if (l->filesz > (64u << 20))
			return NULL;
		buf = malloc(l->filesz ? l->filesz : 1);
		if (!buf)
			return NULL;
		r = pread(e->fd, buf, l->filesz, (off_t)l->off);
		if (r < 0) {
			free(buf);
			return NULL;
		}
		*seg_vaddr = l->vaddr;
		*len = (size_t)r;
		return buf;
	}
	return NULL;
}

static void count_inlined(struct pt_elf *e, const struct scan *sc, struct pt_pyalloc *out)
{
	uint64_t fn = sc->vaddr[PT_PYALLOC_OBJ][0], seg = 0, at, end;
	size_t len = 0, head;
	uint8_t *text = read_text(e, fn, &seg, &len);

	if (!text)
		return;
	/* The guard is among PyObject_Malloc's first instructions: after the size check and the
	 * load of the allocator pointer (x86-64: 48 bytes; A64: 32 instructions, as the file's
	 * own machine code, whatever the host's). */
	at = fn - seg;
	end = fn + (sc->size[PT_PYALLOC_OBJ][0] ? sc->size[PT_PYALLOC_OBJ][0] : 1);
	head = at < len ? len - at : 0;
	switch (pt_arch_isa_of_elf(e->machine)) {
	case PT_ISA_X86_64:
		if (head)
			out->guard_vaddr = pt_pyalloc_guard_target(text + at, head < 48 ? head : 48,
								   fn);
		out->inlined_sites = pt_pyalloc_count_guards(text, len, seg, out->guard_vaddr, fn,
							     end);
		break;
	case PT_ISA_A64:
		if (head)
			out->guard_vaddr = pt_arm64_pyalloc_guard_target(
				text + at, head < 128 ? head : 128, fn);
		out->inlined_sites = pt_arm64_pyalloc_count_guards(text, len, seg, out->guard_vaddr,
								   fn, end);
		break;
	}
	free(text);
}

static int fill(struct pt_elf *e, const char *path, const char *open_path, struct pt_pyalloc *out)
{
	struct scan sc;
	int f, i, err;

	memset(&sc, 0, sizeof(sc));
	err = pt_elf_foreach_sym(e, SHT_DYNSYM, scan_cb, &sc);
	if (err)
		return err;
	if (!sc.vaddr[PT_PYALLOC_OBJ][0])
		return -ENOENT;
	for (f = 0; f < PT_PYALLOC_FAMILIES; f++) {
		struct pt_allocator *a = &out->fam[f];

		a->kind = PT_ALLOC_OTHER;
		a->cookie_flags = PT_FN_PYOBJ;
		a->path = strdup(path);
		a->open_path = strdup(open_path);
		if (!a->path || !a->open_path)
			return -ENOMEM;
		for (i = 0; i < 4; i++) {
			uint64_t off;

			if (!sc.vaddr[f][i] || pt_elf_vaddr_to_off(e->loads, e->nloads, sc.vaddr[f][i], &off))
				continue;
			a->fn_vaddr[as_fn[i]] = sc.vaddr[f][i];
			a->fn_offset[as_fn[i]] = off;
			a->fn_symbol[as_fn[i]] = strdup(names[f][i]);
			if (!a->fn_symbol[as_fn[i]])
				return -ENOMEM;
		}
	}
	count_inlined(e, &sc, out);
	return 0;
}

int pt_pyalloc_find(const char *path, const char *open_path, struct pt_pyalloc *out)
{
	struct pt_elf e;
	int err;

	memset(out, 0, sizeof(*out));
	err = pt_elf_open(open_path, &e);
	if (err)
		return err;
	err = fill(&e, path, open_path, out);
	pt_elf_close(&e);
	if (err)
		pt_pyalloc_free(out);
	return err;
}

int pt_pyalloc_find_pid(pid_t pid, const char *path, uint64_t inode, struct pt_pyalloc *out)
{
	struct pt_maps maps = { 0 };
	char *opened = NULL;
	int k, fd = -ENOENT, err;
	struct pt_elf e;

	memset(out, 0, sizeof(*out));
	err = pt_maps_read(pid, &maps);
	if (err)
		return err;
	for (k = 0; k < maps.n && fd == -ENOENT; k++) {
		const struct pt_mapping *m = &maps.m[k];
		struct pt_mapped mp = { m->path, m->start, m->end, m->inode, m->deleted };

		if (m->inode != inode || !m->path || m->path[0] != '/')
			continue;
		fd = pt_mapped_open(pid, &mp, 0, &opened);
	}
	pt_maps_free(&maps);
	if (fd < 0)
		return fd;
	err = pt_elf_open_fd(fd, &e);
	if (err) {
		close(fd);
		free(opened);
		return err;
	}
	err = fill(&e, path, opened, out);
	pt_elf_close(&e);
	free(opened);
	if (err) {
		close(fd);
		pt_pyalloc_free(out);
		return err;
	}
	/* open_path may be /proc/self/fd/N of this fd: kept open until the probes are attached. */
	out->fam[PT_PYALLOC_OBJ].open_fd = fd;
	out->fam[PT_PYALLOC_OBJ].own_fd = true;
	return 0;
}

void pt_pyalloc_free(struct pt_pyalloc *p)
{
	int f;

	for (f = 0; f < PT_PYALLOC_FAMILIES; f++)
		pt_allocator_free(&p->fam[f]);
	memset(p, 0, sizeof(*p));
}
