// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * boundary.c — --boundary start=LIB:SYM,end=LIB:SYM: invocation boundaries from uprobes on a
 * runtime's own functions, for runtimes whose Runtime API traffic is not visible (or not HTTP).
 */
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include "invocation/boundary.h"
#include "util/elfutil.h"
#include "target/procmaps.h"
#include "target/proc.h"
#include "symbolize/symbolize.h"

static int parse_point(const char *s, size_t n, struct pt_boundary_point *p, bool default_return)
{
	char buf[600], *colon, *mode;

	if (n == 0 || n >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, n);
	buf[n] = 0;
	p->at_return = default_return;
	mode = strrchr(buf, ':');
	if (mode && (strcmp(mode, ":entry") == 0 || strcmp(mode, ":return") == 0)) {
		p->at_return = strcmp(mode, ":return") == 0;
		*mode = 0;
	}
	/* LIB:SYM — the first colon: C++ names contain "::", file names rarely contain ':'. */
	colon = strchr(buf, ':');
	if (!colon || colon == buf || !colon[1])
		return -EINVAL;
	*colon = 0;
	if (strlen(buf) >= sizeof(p->lib) || strlen(colon + 1) >= sizeof(p->sym))
		return -EINVAL;
	strcpy(p->lib, buf);
	strcpy(p->sym, colon + 1);
	return 0;
}

int pt_boundary_parse(const char *spec, struct pt_boundary_spec *out)
{
	const char *s = spec, *comma;
	int have = 0;

	memset(out, 0, sizeof(*out));
	while (s && *s) {
		size_t n;

		const char *c1 = strstr(s + 1, ",end="), *c2 = strstr(s + 1, ",start=");

		/* The next key starts at the nearest ",end=" or ",start=". */
		comma = c1 && (!c2 || c1 < c2) ? c1 : c2;
		n = comma ? (size_t)(comma - s) : strlen(s);
		if (strncmp(s, "start=", 6) == 0) {
			if (parse_point(s + 6, n - 6, &out->start, true))
				return -EINVAL;
			have |= 1;
		} else if (strncmp(s, "end=", 4) == 0) {
			if (parse_point(s + 4, n - 4, &out->end, false))
				return -EINVAL;
			have |= 2;
		} else {
			return -EINVAL;
		}
		s = comma ? comma + 1 : NULL;
	}
	return have == 3 ? 0 : -EINVAL;
}

static bool lib_matches(const char *path, const char *lib)
{
	const char *base = strrchr(path, '/');

	if (strcmp(path, lib) == 0)
		return true;
	base = base ? base + 1 : path;
	return strncmp(base, lib, strlen(lib)) == 0;
}

struct symfind {
	const char *want;
	uint64_t value;
	bool found;
};

static int sym_cb(const struct pt_elf_sym *s, void *ctx)
{
	struct symfind *f = ctx;
	char *dem;

	if ((s->type != STT_FUNC && s->type != STT_GNU_IFUNC) || !s->value || s->shndx == SHN_UNDEF)
		return 0;
	if (strcmp(s->name, f->want) == 0) {
		f->value = s->value;
		f->found = true;
		return 1;
	}
	/* A demangled C++ name given with or without its parameter list. */
	if (s->name[0] == '_' && s->name[1] == 'Z' && (dem = pt_demangle(s->name))) {
		size_t n = strlen(f->want);
		bool eq = strncmp(dem, f->want, n) == 0 && (dem[n] == 0 || dem[n] == '(');

		free(dem);
		if (eq) {
			f->value = s->value;
			f->found = true;
			return 1;
		}
	}
	return 0;
}

static int resolve_in(const char *path, const struct pt_boundary_point *p, uint64_t *offset)
{
	struct symfind f = { .want = p->sym };
	struct pt_elf e;
	int err;

	err = pt_elf_open(path, &e);
	if (err)
		return err;
	pt_elf_foreach_sym(&e, SHT_SYMTAB, sym_cb, &f);
	if (!f.found)
		pt_elf_foreach_sym(&e, SHT_DYNSYM, sym_cb, &f);
	err = f.found ? pt_elf_vaddr_to_off(e.loads, e.nloads, f.value, offset) : -ENOENT;
	pt_elf_close(&e);
	return err;
}

int pt_boundary_resolve(pid_t pid, const char *const *paths, int npaths,
			const struct pt_boundary_point *p, char **open_path, uint64_t *offset)
{
	struct pt_maps maps = { 0 };
	int i, err = -ENOENT;

	*open_path = NULL;
	if (pid > 0) {
		err = pt_maps_read(pid, &maps);
		if (err)
			return err;
		err = -ENOENT;
		for (i = 0; i < maps.n; i++) {
			const struct pt_mapping *m = &maps.m[i];
			char *op;

			if (!m->path || m->path[0] != '/' || !strchr(m->perms, 'x') || !lib_matches(m->path, p->lib))
				continue;
			op = pt_target_path(pid, m->path);
			if (!op)
				continue;
			err = resolve_in(op, p, offset);
			if (!err) {
				*open_path = op;
				break;
			}
			free(op);
		}
		pt_maps_free(&maps);
		return err;
	}
	for (i = 0; i < npaths; i++) {
		if (!lib_matches(paths[i], p->lib))
			continue;
		err = resolve_in(paths[i], p, offset);
		if (!err) {
			*open_path = strdup(paths[i]);
			return *open_path ? 0 : -ENOMEM;
		}
	}
	return err;
}
