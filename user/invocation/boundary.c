// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * boundary.c — --boundary start=LIB:SYM,end=LIB:SYM: invocation boundaries from uprobes on a
 * runtime's own functions, for runtimes whose Runtime API traffic is not visible (or not HTTP).
 */
#include <errno.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "invocation/boundary.h"
#include "invocation/invocation.h"
#include "util/elfutil.h"
#include "target/procmaps.h"
#include "target/proc.h"
#include "symbolize/symbolize.h"
#include "bpf/peaktrace.h"
#include "peaktrace.skel.h"

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

/* The symbol's file offset in e (closed here). */
static int resolve_in(struct pt_elf *ep, const struct pt_boundary_point *p, uint64_t *offset)
{
	struct symfind f = { .want = p->sym };
	struct pt_elf e = *ep;
	int err;

	pt_elf_foreach_sym(&e, SHT_SYMTAB, sym_cb, &f);
	if (!f.found)
		pt_elf_foreach_sym(&e, SHT_DYNSYM, sym_cb, &f);
	err = f.found ? pt_elf_vaddr_to_off(e.loads, e.nloads, f.value, offset) : -ENOENT;
	pt_elf_close(&e);
	return err;
}

int pt_boundary_resolve(pid_t pid, const char *const *paths, int npaths,
			const struct pt_boundary_point *p, char **open_path, int *open_fd,
			uint64_t *offset)
{
	struct pt_maps maps = { 0 };
	struct pt_elf e;
	int i, err = -ENOENT;

	*open_path = NULL;
	*open_fd = -1;
	if (pid > 0) {
		err = pt_maps_read(pid, &maps);
		if (err)
			return err;
		err = -ENOENT;
		for (i = 0; i < maps.n; i++) {
			const struct pt_mapping *m = &maps.m[i];
			struct pt_mapped mp = { m->path, m->start, m->end, m->inode, m->deleted };
			char *op = NULL;
			int fd;

			if (!m->path || m->path[0] != '/' || !strchr(m->perms, 'x') || !lib_matches(m->path, p->lib))
				continue;
			/* The mapped inode (inside the target's root, or map_files); op names it
			 * for the attach without resolving the target's path again. */
			fd = pt_mapped_open(pid, &mp, 0, &op);
			if (fd < 0)
				continue;
			if ((err = pt_elf_open_fd(fd, &e)) == 0) {
				/* resolve_in closes e, not the fd op may name. */
				e.own_fd = 0;
				err = resolve_in(&e, p, offset);
			}
			if (!err) {
				*open_path = op;
				*open_fd = fd;
				break;
			}
			close(fd);
			free(op);
		}
		pt_maps_free(&maps);
		return err;
	}
	for (i = 0; i < npaths; i++) {
		if (!lib_matches(paths[i], p->lib))
			continue;
		/* Launch mode: our own view of the program and its libraries. */
		err = pt_elf_open(paths[i], &e);
		if (!err)
			err = resolve_in(&e, p, offset);
		if (!err) {
			*open_path = strdup(paths[i]);
			return *open_path ? 0 : -ENOMEM;
		}
	}
	return err;
}

static void close_resolved(char *path, int fd)
{
	if (fd >= 0)
		close(fd);
	free(path);
}

/* Uprobes on the runtime's own functions mark invocation boundaries (--boundary start=..). */
int pt_attach_boundaries(struct peaktrace_bpf *skel, struct pt_links *links,
			 const struct pt_boundary_spec *spec, pid_t pid, const char *const *paths,
			 int npaths, bool launched, bool verbose)
{
	const struct pt_boundary_point *pts[2] = { &spec->start, &spec->end };
	int k, err;

	for (k = 0; k < 2; k++) {
		LIBBPF_OPTS(bpf_uprobe_opts, uo);
		char *path = NULL;
		uint64_t off;
		int fd;

		err = pt_boundary_resolve(launched ? 0 : pid, paths, npaths, pts[k], &path, &fd, &off);
		if (err) {
			fprintf(stderr, "peaktrace: --boundary %s: no function %s in an object matching %s%s\n",
				k ? "end" : "start", pts[k]->sym, pts[k]->lib,
				launched ? " (launch mode sees the program and the libraries it links)" : "");
			return err;
		}
		uo.retprobe = pts[k]->at_return;
		uo.bpf_cookie = k ? PT_BOUNDARY_END : PT_BOUNDARY_START;
		if (verbose)
			fprintf(stderr, "peaktrace: %s boundary: %s at %s+0x%" PRIx64 " (%s)\n", k ? "end" : "start",
				pts[k]->sym, path, off, pts[k]->at_return ? "return" : "entry");
		err = pt_links_add(links, bpf_program__attach_uprobe_opts(skel->progs.boundary_hit, pid,
									  path, off, &uo), 2);
		if (err) {
			fprintf(stderr, "peaktrace: failed to attach the %s boundary to %s in %s: %s\n",
				k ? "end" : "start", pts[k]->sym, path, strerror(-err));
			close_resolved(path, fd);
			return err;
		}
		close_resolved(path, fd);
	}
	return 0;
}

/*
 * aws-lambda-cpp (inside the official Node.js and Python runtime interface clients): get_next()
 * returning starts an invocation, post_success()/post_failure() end it; the request id comes
 * from their arguments. LOCAL symbols, found in .symtab of whichever mapped object has them.
 */
int pt_attach_aws_boundaries(struct peaktrace_bpf *skel, struct pt_links *links, pid_t pid,
			     const char *const *paths, int npaths, bool launched, bool quiet)
{
	static const struct { const char *sym; bool ret; uint64_t cookie; } fns[] = {
		{ "_ZN3aws14lambda_runtime7runtime8get_nextEv", true, PT_BOUNDARY_AWS_NEXT },
		{ "_ZN3aws14lambda_runtime7runtime8get_nextEv", false, PT_BOUNDARY_AWS_NEXT_CALL },
		{ "_ZN3aws14lambda_runtime7runtime12post_successERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEERKNS0_19invocation_responseE", false, PT_BOUNDARY_AWS_SUCCESS },
		{ "_ZN3aws14lambda_runtime7runtime12post_failureERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEERKNS0_19invocation_responseE", false, PT_BOUNDARY_AWS_FAILURE },
	};
	enum { N = sizeof(fns) / sizeof(fns[0]) };
	char *path[N] = { NULL };
	int fd[N] = { -1, -1, -1, -1 };
	uint64_t off[N];
	size_t k;
	int err = 0;

	/* All three first: none is attached unless the runtime is there whole. */
	for (k = 0; k < N && !err; k++) {
		struct pt_boundary_point pt = { .lib = "", .at_return = fns[k].ret };

		snprintf(pt.sym, sizeof(pt.sym), "%s", fns[k].sym);
		err = pt_boundary_resolve(launched ? 0 : pid, paths, npaths, &pt, &path[k], &fd[k], &off[k]);
		if (err && !quiet)
			fprintf(stderr, "peaktrace: --boundary uprobe: no aws-lambda-cpp runtime (%s) in the "
					"objects %s maps yet; its probes are set when it is mapped\n",
				k < 2 ? "runtime::get_next" : k == 2 ? "runtime::post_success" :
				"runtime::post_failure", launched ? "the program" : "the process");
	}
	for (k = 0; k < N && !err; k++) {
		LIBBPF_OPTS(bpf_uprobe_opts, uo);

		uo.retprobe = fns[k].ret;
		uo.bpf_cookie = fns[k].cookie;
		err = pt_links_add(links, bpf_program__attach_uprobe_opts(skel->progs.boundary_hit, pid,
									  path[k], off[k], &uo), 2);
		if (err) {
			fprintf(stderr, "peaktrace: failed to attach to aws-lambda-cpp in %s: %s\n", path[k],
				strerror(-err));
			err = err == -ENOENT ? -EIO : err;   /* -ENOENT means "not mapped yet" */
		}
	}
	for (k = 0; k < N; k++)
		close_resolved(path[k], fd[k]);
	return err;
}

int pt_aws_boundaries(struct peaktrace_bpf *skel, struct pt_links *links, pid_t pid, pid_t host_pid,
		      const char *const *paths, int npaths, bool launched, bool retry, bool *pending)
{
	int err = pt_attach_aws_boundaries(skel, links, pid, retry ? NULL : paths,
					   retry ? 0 : npaths, retry ? false : launched, retry);

	*pending = err == -ENOENT;
	/* Launch mode: the runtime may have entered get_next before these probes were set (no
	 * return probe for that call): its socket, found now, gives the first start (BPF:
	 * rapi_first_start; a no-op once get_next's entry probe has ended the init phase). */
	if (retry && !err)
		pt_rapi_seed(bpf_map__fd(skel->maps.rapi_fds), pid, host_pid);
	if (retry && !err)
		fprintf(stderr, "peaktrace: --boundary uprobe: aws-lambda-cpp is mapped now; its "
				"invocation boundaries are set\n");
	return err == -ENOENT ? 0 : err;
}
