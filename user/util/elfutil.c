// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * elfutil.c — libelf helpers: PT_LOAD translation, symbol iteration, build-id,
 * .gnu_debuglink and the dynamic section.
 *
 * Files come from other processes (and other containers), so nothing is trusted:
 * every libelf call is checked and every index is bounds-checked before use.
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <gelf.h>

#include "util/elfutil.h"

/* Version-index bit marking a non-default version ("sym@VER", not "sym@@VER"). */
#define PT_VERSYM_HIDDEN 0x8000

static int elf_lib_ready(void)
{
	static int ready;

	/* elf_version() must be called once before any other libelf call. */
	if (!ready) {
		if (elf_version(EV_CURRENT) == EV_NONE)
			return -ENOSYS;
		ready = 1;
	}
	return 0;
}

static int read_loads(struct pt_elf *e)
{
	size_t phnum, i;
	int n = 0;

	if (elf_getphdrnum(e->elf, &phnum) != 0)
		return -ENOEXEC;
	/* Corrupt headers can claim billions of entries; real objects have < 64. */
	if (phnum > 4096)
		return -ENOEXEC;
	if (!phnum)
		return 0;
	e->loads = calloc(phnum, sizeof(*e->loads));
	if (!e->loads)
		return -ENOMEM;
	for (i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e->elf, i, &ph))
			return -ENOEXEC;
		if (ph.p_type != PT_LOAD)
			continue;
		e->loads[n].off = ph.p_offset;
		e->loads[n].vaddr = ph.p_vaddr;
		e->loads[n].filesz = ph.p_filesz;
		e->loads[n].memsz = ph.p_memsz;
		e->loads[n].flags = ph.p_flags;
		n++;
	}
	e->nloads = n;
	return 0;
}

/* v's n bytes (n <= 8) at p, in the file's byte order (msb: big-endian). */
static uint64_t field(const unsigned char *p, int n, bool msb)
{
	uint64_t v = 0;

	for (int i = 0; i < n; i++)
		v |= (uint64_t)p[msb ? n - 1 - i : i] << (8 * i);
	return v;
}

/*
 * The section count the file claims, checked before libelf sees it: elf_begin builds a
 * descriptor for every section at once, so a forged header (e_shnum 0 and section 0's sh_size
 * as the count, ELF's extended numbering) over a sparse file made one open take minutes and
 * gigabytes (50M sections: still going after 120 s, 2.3 GB and growing). 0, or -ENOEXEC when
 * it claims more than PT_ELF_SHNUM_MAX. Not an ELF file: 0 (libelf says so).
 */
static int shnum_ok(int fd)
{
	unsigned char h[64], s0[64];
	uint64_t shoff, shnum;
	bool is64, msb;

	if (pread(fd, h, sizeof(h), 0) != (ssize_t)sizeof(h) || memcmp(h, ELFMAG, SELFMAG))
		return 0;
	is64 = h[EI_CLASS] == ELFCLASS64;
	msb = h[EI_DATA] == ELFDATA2MSB;
	shoff = is64 ? field(h + 0x28, 8, msb) : field(h + 0x20, 4, msb);
	shnum = is64 ? field(h + 0x3c, 2, msb) : field(h + 0x30, 2, msb);
	if (!shnum && shoff) {
		/* Extended numbering: the count is section 0's sh_size. */
		if (pread(fd, s0, sizeof(s0), (off_t)shoff) != (ssize_t)sizeof(s0))
			return 0;
		shnum = is64 ? field(s0 + 0x20, 8, msb) : field(s0 + 0x14, 4, msb);
	}
	return shnum > PT_ELF_SHNUM_MAX ? -ENOEXEC : 0;
}

int pt_elf_open_fd(int fd, struct pt_elf *e)
{
	GElf_Ehdr eh;
	int err;

	memset(e, 0, sizeof(*e));
	e->fd = -1;
	err = elf_lib_ready();
	if (err)
		return err;
	if (shnum_ok(fd))
		return -ENOEXEC;
	/* READ_MMAP: big executables stay on disk; only the pages we touch are read. */
	e->elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e->elf)
		return -ENOEXEC;
	if (elf_kind(e->elf) != ELF_K_ELF || !gelf_getehdr(e->elf, &eh)) {
		err = -ENOEXEC;
		goto fail;
	}
	e->fd = fd;
	e->type = eh.e_type;
	e->machine = eh.e_machine;
	err = read_loads(e);
	if (err)
		goto fail;
	return 0;
fail:
	pt_elf_close(e);
	return err;
}

int pt_elf_open(const char *path, struct pt_elf *e)
{
	struct stat st;
	int fd, err;

	memset(e, 0, sizeof(*e));
	e->fd = -1;
	/* O_NONBLOCK: a path inside a hostile container could name a FIFO. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -ENOEXEC;
	}
	err = pt_elf_open_fd(fd, e);
	if (err) {
		close(fd);
		return err;
	}
	e->own_fd = 1;
	return 0;
}

void pt_elf_close(struct pt_elf *e)
{
	if (!e)
		return;
	if (e->elf)
		elf_end(e->elf);
	if (e->own_fd && e->fd >= 0)
		close(e->fd);
	free(e->loads);
	memset(e, 0, sizeof(*e));
	e->fd = -1;
}

int pt_elf_vaddr_to_off(const struct pt_elf_load *loads, int nloads, uint64_t vaddr, uint64_t *off)
{
	int i;

	/* Only the file-backed part of a segment has a file offset (.bss has none). */
	for (i = 0; i < nloads; i++) {
		const struct pt_elf_load *l = &loads[i];

		if (vaddr >= l->vaddr && vaddr - l->vaddr < l->filesz) {
			*off = vaddr - l->vaddr + l->off;
			return 0;
		}
	}
	return -ENOENT;
}

int pt_elf_off_to_vaddr(const struct pt_elf_load *loads, int nloads, uint64_t off, uint64_t *vaddr)
{
	int i;

	for (i = 0; i < nloads; i++) {
		const struct pt_elf_load *l = &loads[i];

		if (off >= l->off && off - l->off < l->filesz) {
			*vaddr = off - l->off + l->vaddr;
			return 0;
		}
	}
	/*
	 * Mappings are page granular while p_offset is not (libc's RW segment starts
	 * at 0x1cf8d0): an address in the page slack before a segment, or in its .bss
	 * tail, still belongs to that segment. Second, looser pass.
	 */
	for (i = 0; i < nloads; i++) {
		const struct pt_elf_load *l = &loads[i];
		uint64_t pstart = l->off & ~0xfffULL;

		if (off >= pstart && off - pstart < l->memsz + (l->off - pstart)) {
			*vaddr = off - l->off + l->vaddr;
			return 0;
		}
	}
	return -ENOENT;
}

static Elf_Scn *find_versym(Elf *elf, size_t dynsym_idx)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			return NULL;
		/* .gnu.version is parallel to .dynsym; sh_link names that table. */
		if (sh.sh_type == SHT_GNU_versym && sh.sh_link == dynsym_idx)
			return scn;
	}
	return NULL;
}

int pt_elf_foreach_sym(struct pt_elf *e, uint32_t sh_type, pt_elf_sym_cb cb, void *ctx)
{
	Elf_Scn *scn = NULL;
	size_t symsz;

	if (!e || !e->elf)
		return -EINVAL;
	symsz = gelf_fsize(e->elf, ELF_T_SYM, 1, EV_CURRENT);
	if (!symsz)
		return -ENOEXEC;
	while ((scn = elf_nextscn(e->elf, scn))) {
		Elf_Data *data, *vdata = NULL;
		size_t i, n, nver = 0;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			return -ENOEXEC;
		if (sh.sh_type != sh_type)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data || !data->d_buf)
			continue;
		n = data->d_size / symsz;
		/* The file is the target's: a sparse or forged table must not take minutes (the
		 * largest real ones, libxul's debug file, hold ~3M entries). */
		if (n > PT_ELF_SYMS_MAX)
			n = PT_ELF_SYMS_MAX;
		if (sh_type == SHT_DYNSYM) {
			Elf_Scn *vs = find_versym(e->elf, elf_ndxscn(scn));

			vdata = vs ? elf_getdata(vs, NULL) : NULL;
			if (vdata && vdata->d_buf)
				nver = vdata->d_size / sizeof(GElf_Versym);
			else
				vdata = NULL;
		}
		/* Index 0 is the reserved null symbol. */
		for (i = 1; i < n; i++) {
			struct pt_elf_sym s;
			GElf_Sym sym;
			GElf_Versym ver;
			const char *name;

			if (!gelf_getsym(data, (int)i, &sym))
				return -ENOEXEC;
			if (!sym.st_name)
				continue;
			name = elf_strptr(e->elf, sh.sh_link, sym.st_name);
			if (!name || !*name)
				continue;
			s.name = name;
			s.value = sym.st_value;
			s.size = sym.st_size;
			s.type = GELF_ST_TYPE(sym.st_info);
			s.bind = GELF_ST_BIND(sym.st_info);
			s.visibility = GELF_ST_VISIBILITY(sym.st_other);
			s.shndx = sym.st_shndx;
			s.hidden_ver = 0;
			if (vdata && i < nver && gelf_getversym(vdata, (int)i, &ver))
				s.hidden_ver = !!(ver & PT_VERSYM_HIDDEN);
			if (cb(&s, ctx))
				return 0;
		}
	}
	return 0;
}

int pt_elf_has_section(struct pt_elf *e, uint32_t sh_type)
{
	Elf_Scn *scn = NULL;

	if (!e || !e->elf)
		return 0;
	while ((scn = elf_nextscn(e->elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			return 0;
		/* In a separate debug file .dynsym is SHT_NOBITS and thus never matches. */
		if (sh.sh_type == sh_type && sh.sh_size > 0)
			return 1;
	}
	return 0;
}

static int note_build_id(Elf_Data *data, uint8_t *buf, size_t bufsz)
{
	size_t off = 0, next, name_off, desc_off;
	GElf_Nhdr nh;

	while (off < data->d_size &&
	       (next = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    name_off + 4 <= data->d_size &&
		    memcmp((char *)data->d_buf + name_off, "GNU", 4) == 0 &&
		    nh.n_descsz > 0 && nh.n_descsz <= bufsz &&
		    desc_off + nh.n_descsz <= data->d_size) {
			memcpy(buf, (char *)data->d_buf + desc_off, nh.n_descsz);
			return (int)nh.n_descsz;
		}
		off = next;
	}
	return -ENOENT;
}

int pt_elf_build_id(struct pt_elf *e, uint8_t *buf, size_t bufsz)
{
	Elf_Scn *scn = NULL;
	size_t phnum, i;
	int ret;

	if (!e || !e->elf)
		return -EINVAL;
	while ((scn = elf_nextscn(e->elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh))
			break;
		if (sh.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
		if (data && data->d_buf) {
			ret = note_build_id(data, buf, bufsz);
			if (ret > 0)
				return ret;
		}
	}
	/* Objects stripped of section headers still carry PT_NOTE. */
	if (elf_getphdrnum(e->elf, &phnum) != 0 || phnum > 4096)
		return -ENOENT;
	for (i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		Elf_Data *data;

		if (!gelf_getphdr(e->elf, i, &ph) || ph.p_type != PT_NOTE)
			continue;
		data = elf_getdata_rawchunk(e->elf, ph.p_offset, ph.p_filesz, ELF_T_NHDR);
		if (data && data->d_buf) {
			ret = note_build_id(data, buf, bufsz);
			if (ret > 0)
				return ret;
		}
	}
	return -ENOENT;
}

int pt_elf_debuglink(struct pt_elf *e, char *buf, size_t bufsz)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (!e || !e->elf || !bufsz)
		return -EINVAL;
	if (elf_getshdrstrndx(e->elf, &shstrndx) != 0)
		return -ENOENT;
	while ((scn = elf_nextscn(e->elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		const char *name;
		size_t len;

		if (!gelf_getshdr(scn, &sh))
			return -ENOENT;
		name = elf_strptr(e->elf, shstrndx, sh.sh_name);
		if (!name || strcmp(name, ".gnu_debuglink") != 0)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data || !data->d_buf || !data->d_size)
			return -ENOENT;
		/* NUL-terminated name, padding, CRC32; the name must end inside the data. */
		len = strnlen(data->d_buf, data->d_size);
		if (len == 0 || len == data->d_size || len >= bufsz)
			return -ENOENT;
		memcpy(buf, data->d_buf, len + 1);
		/* A link is a file name; refuse anything that could walk the tree. */
		if (strchr(buf, '/') || strcmp(buf, ".") == 0 || strcmp(buf, "..") == 0)
			return -ENOENT;
		return 0;
	}
	return -ENOENT;
}

void pt_elf_free_strv(char **v, int n)
{
	int i;

	if (!v)
		return;
	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

int pt_elf_dynamic(struct pt_elf *e, char **soname, char ***needed, int *nneeded)
{
	Elf_Scn *scn = NULL;
	char **v = NULL;
	int n = 0, cap = 0;

	*soname = NULL;
	*needed = NULL;
	*nneeded = 0;
	if (!e || !e->elf)
		return -EINVAL;
	/* Section view is enough: sstripped objects only lose load-order precision. */
	while ((scn = elf_nextscn(e->elf, scn))) {
		Elf_Data *data;
		GElf_Shdr sh;
		size_t i, cnt, dynsz;

		if (!gelf_getshdr(scn, &sh))
			break;
		if (sh.sh_type != SHT_DYNAMIC)
			continue;
		data = elf_getdata(scn, NULL);
		dynsz = gelf_fsize(e->elf, ELF_T_DYN, 1, EV_CURRENT);
		if (!data || !data->d_buf || !dynsz)
			break;
		cnt = data->d_size / dynsz;
		for (i = 0; i < cnt; i++) {
			GElf_Dyn dyn;
			const char *s;

			if (!gelf_getdyn(data, (int)i, &dyn) || dyn.d_tag == DT_NULL)
				break;
			if (dyn.d_tag != DT_NEEDED && dyn.d_tag != DT_SONAME)
				continue;
			s = elf_strptr(e->elf, sh.sh_link, dyn.d_un.d_val);
			if (!s || !*s)
				continue;
			if (dyn.d_tag == DT_SONAME) {
				if (*soname)
					continue;
				*soname = strdup(s);
				if (!*soname)
					goto nomem;
				continue;
			}
			if (n == cap) {
				char **nv;

				cap = cap ? cap * 2 : 8;
				nv = realloc(v, cap * sizeof(*v));
				if (!nv)
					goto nomem;
				v = nv;
			}
			v[n] = strdup(s);
			if (!v[n])
				goto nomem;
			n++;
		}
		break;
	}
	*needed = v;
	*nneeded = n;
	return 0;
nomem:
	pt_elf_free_strv(v, n);
	free(*soname);
	*soname = NULL;
	return -ENOMEM;
}
