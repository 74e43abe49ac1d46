// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fuzz_elf — an ELF file the target maps (its executable, its libraries: a container ships its
 * own) through every reader peaktrace has, on a memfd of the input:
 *   user/util/elfutil.h: pt_elf_open_fd, pt_elf_foreach_sym (.symtab, .dynsym with versions),
 *   pt_elf_has_section, pt_elf_build_id, pt_elf_debuglink, pt_elf_dynamic, the PT_LOAD
 *   translations both ways;
 *   user/unwind/cfi.h: pt_cfi_build_elf (.eh_frame + .eh_frame_hdr, else .debug_frame) and
 *   pt_cfi_elf_digest (the unwind cache's key: defined whenever a table is built);
 *   user/target/procmaps.h: pt_find_allocator_in (allocator discovery, by /proc/self/fd path);
 *   user/python/python.h: pt_py_detect (CPython's _PyRuntime and Py_Version).
 * The symbolizer's module loading is these same calls (pt_elf_open_fd, foreach_sym, build id,
 * debuglink) on an fd of the mapped file.
 */
#include <errno.h>
#include <gelf.h>
#include <stdio.h>
#include "util/elfutil.h"
#include "unwind/cfi.h"
#include "target/procmaps.h"
#include "python/python.h"
#include "fuzz.h"

static int count_sym(const struct pt_elf_sym *s, void *ctx)
{
	size_t *n = ctx;

	FUZZ_ASSERT(s->name && *s->name);
	(void)strlen(s->name);
	return ++*n > 100000;
}

static void translations(const struct pt_elf *e)
{
	for (int i = 0; i < e->nloads; i++) {
		const struct pt_elf_load *l = &e->loads[i];
		uint64_t probes[] = { l->vaddr, l->vaddr + l->filesz / 2, l->vaddr + l->memsz, l->off,
				      l->off + l->filesz, l->off & ~0xfffull };
		uint64_t v;

		for (size_t k = 0; k < sizeof(probes) / sizeof(probes[0]); k++) {
			(void)pt_elf_vaddr_to_off(e->loads, e->nloads, probes[k], &v);
			(void)pt_elf_off_to_vaddr(e->loads, e->nloads, probes[k], &v);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64], link[256], *soname, **needed;
	const char *paths[1] = { path };
	struct pt_unwind_table t;
	struct pt_allocator a;
	struct pt_py_info py = { 0 };
	uint8_t id[64];
	struct pt_elf e;
	size_t nsym = 0;
	int fd = fuzz_memfd(data, size), n, nneeded;

	if (fd < 0)
		return 0;
	if (pt_elf_open_fd(fd, &e) == 0) {
		translations(&e);
		pt_elf_foreach_sym(&e, SHT_SYMTAB, count_sym, &nsym);
		pt_elf_foreach_sym(&e, SHT_DYNSYM, count_sym, &nsym);
		(void)pt_elf_has_section(&e, SHT_SYMTAB);
		n = pt_elf_build_id(&e, id, sizeof(id));
		FUZZ_ASSERT(n == -ENOENT || (n > 0 && n <= (int)sizeof(id)));
		if (pt_elf_debuglink(&e, link, sizeof(link)) == 0) {
			FUZZ_ASSERT(*link && strlen(link) < sizeof(link) && !strchr(link, '/'));
			FUZZ_ASSERT(strcmp(link, ".") && strcmp(link, ".."));
		}
		if (pt_elf_dynamic(&e, &soname, &needed, &nneeded) == 0) {
			for (int i = 0; i < nneeded; i++)
				FUZZ_ASSERT(needed[i] && *needed[i]);
			free(soname);
			pt_elf_free_strv(needed, nneeded);
		}
		{
			uint8_t d[32];
			int dig = pt_cfi_elf_digest(&e, d), built = pt_cfi_build_elf(&e, &t);

			/* The cache key exists exactly when a table can be built from that input
			 * (both read the same sections): a table the digest does not cover never
			 * reaches the cache. */
			FUZZ_ASSERT(built != 0 || dig == 0);
			if (built == 0)
				pt_cfi_free(&t);
		}
		pt_elf_close(&e);
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (pt_find_allocator_in(paths, 1, &a) == 0)
		pt_allocator_free(&a);
	(void)pt_py_detect(paths, 1, &py);
	pt_py_info_free(&py);
	close(fd);
	return 0;
}
