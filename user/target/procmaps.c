// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * procmaps.c — /proc/PID/maps parsing and discovery of the allocator a process
 * really calls.
 *
 * "Really calls" means: the object ld.so binds `malloc` to. ld.so searches the
 * global scope in this order: the executable, LD_PRELOAD, /etc/ld.so.preload,
 * then DT_NEEDED breadth first; the first definition wins. We rebuild that order
 * from maps + each object's dynamic section. Address order is NOT load order:
 * libraries are mmapped top-down, so a preloaded jemalloc sits ABOVE libc.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <gelf.h>

#include "util/elfutil.h"
#include "target/procmaps.h"
#include "target/proc.h"
#include "util/file.h"

static const char *const fn_names[PT_FN_MAX] = {
	[PT_FN_MALLOC] = "malloc",
	[PT_FN_CALLOC] = "calloc",
	[PT_FN_REALLOC] = "realloc",
	[PT_FN_REALLOCARRAY] = "reallocarray",
	[PT_FN_FREE] = "free",
	[PT_FN_POSIX_MEMALIGN] = "posix_memalign",
	[PT_FN_ALIGNED_ALLOC] = "aligned_alloc",
	[PT_FN_MEMALIGN] = "memalign",
	[PT_FN_VALLOC] = "valloc",
	[PT_FN_PVALLOC] = "pvalloc",
};

const char *pt_alloc_fn_name(enum pt_alloc_fn fn)
{
	if ((unsigned int)fn >= PT_FN_MAX)
		return "?";
	return fn_names[fn];
}

/*
 * Checked against Debian 12's libjemalloc2 5.3.0, libtcmalloc-minimal4 2.10 and libmimalloc2.0
 * 2.0.9: every operator new is its own code (jemalloc inlines its fast path), so without these
 * probes a C++ program's allocations are invisible; jemalloc's sized delete (_ZdlPvm, what GCC
 * emits for `delete p` of a complete type) calls its sdallocx internals, so without them its
 * frees were missed and the blocks stayed "live". Several are aliases of one address (tcmalloc:
 * _ZdlPv == free) or one-instruction `jmp` thunks to another entry (jemalloc: _ZdlPv -> free@plt;
 * mimalloc: _ZdlPvm -> mi_free@plt); pt_plan_probes() probes each address once and skips thunks.
 */
static const struct {
	const char *name;
	enum pt_alloc_fn as;
} extra_fns[PT_EXTRA_FN_MAX] = {
	{ "_Znwm", PT_FN_MALLOC },
	{ "_Znam", PT_FN_MALLOC },
	{ "_ZnwmRKSt9nothrow_t", PT_FN_MALLOC },
	{ "_ZnamRKSt9nothrow_t", PT_FN_MALLOC },
	/* (size, align_val_t): the size is still rdi. */
	{ "_ZnwmSt11align_val_t", PT_FN_MALLOC },
	{ "_ZnamSt11align_val_t", PT_FN_MALLOC },
	{ "_ZnwmSt11align_val_tRKSt9nothrow_t", PT_FN_MALLOC },
	{ "_ZnamSt11align_val_tRKSt9nothrow_t", PT_FN_MALLOC },
	{ "_ZdlPv", PT_FN_FREE },
	{ "_ZdaPv", PT_FN_FREE },
	{ "_ZdlPvm", PT_FN_FREE },
	{ "_ZdaPvm", PT_FN_FREE },
	{ "_ZdlPvRKSt9nothrow_t", PT_FN_FREE },
	{ "_ZdaPvRKSt9nothrow_t", PT_FN_FREE },
	{ "_ZdlPvSt11align_val_t", PT_FN_FREE },
	{ "_ZdaPvSt11align_val_t", PT_FN_FREE },
	{ "_ZdlPvmSt11align_val_t", PT_FN_FREE },
	{ "_ZdaPvmSt11align_val_t", PT_FN_FREE },
	{ "_ZdlPvSt11align_val_tRKSt9nothrow_t", PT_FN_FREE },
	{ "_ZdaPvSt11align_val_tRKSt9nothrow_t", PT_FN_FREE },
	/* jemalloc: mallocx(size, flags), rallocx(ptr, size, flags), dallocx(ptr, flags),
	 * sdallocx(ptr, size, flags). xallocx resizes in place and is not followed. */
	{ "mallocx", PT_FN_MALLOC },
	{ "rallocx", PT_FN_REALLOC },
	{ "dallocx", PT_FN_FREE },
	{ "sdallocx", PT_FN_FREE },
	/* C23's sized frees, (ptr, size[, align]). */
	{ "free_sized", PT_FN_FREE },
	{ "free_aligned_sized", PT_FN_FREE },
};

const char *pt_extra_fn_name(int i)
{
	return i >= 0 && i < PT_EXTRA_FN_MAX ? extra_fns[i].name : "?";
}

enum pt_alloc_fn pt_extra_fn_as(int i)
{
	return i >= 0 && i < PT_EXTRA_FN_MAX ? extra_fns[i].as : PT_FN_MAX;
}

const char *pt_allocator_kind_name(enum pt_allocator_kind k)
{
	switch (k) {
	case PT_ALLOC_GLIBC:	return "glibc";
	case PT_ALLOC_JEMALLOC:	return "jemalloc";
	case PT_ALLOC_TCMALLOC:	return "tcmalloc";
	case PT_ALLOC_MIMALLOC:	return "mimalloc";
	case PT_ALLOC_MUSL:	return "musl";
	case PT_ALLOC_OTHER:	return "other";
	}
	return "?";
}

/* ---- maps parsing ---------------------------------------------------------- */

#define DELETED_SUFFIX " (deleted)"

static int parse_line(char *line, struct pt_mapping *m)
{
	unsigned long long start, end, pgoff, inode;
	unsigned int maj, min;
	char perms[8];
	size_t len;
	char *p;
	int n = 0;

	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu%n",
		   &start, &end, perms, &pgoff, &maj, &min, &inode, &n) != 7 || n <= 0)
		return -EINVAL;
	if (end < start || strlen(perms) != 4)
		return -EINVAL;
	p = line + n;
	if (*p && *p != ' ' && *p != '\t' && *p != '\n')
		return -EINVAL;
	/* The path is the rest of the line and may itself contain spaces. */
	while (*p == ' ' || *p == '\t')
		p++;
	len = strlen(p);
	if (len && p[len - 1] == '\n')
		p[--len] = '\0';
	memset(m, 0, sizeof(*m));
	if (len > strlen(DELETED_SUFFIX) &&
	    strcmp(p + len - strlen(DELETED_SUFFIX), DELETED_SUFFIX) == 0 && p[0] == '/') {
		len -= strlen(DELETED_SUFFIX);
		m->deleted = 1;
	}
	m->path = strndup(p, len);
	if (!m->path)
		return -ENOMEM;
	m->start = start;
	m->end = end;
	m->pgoff = pgoff;
	m->inode = inode;
	m->dev_major = maj;
	m->dev_minor = min;
	memcpy(m->perms, perms, 5);
	return 0;
}

static int parse_stream(FILE *f, struct pt_maps *out)
{
	struct pt_mapping *v = NULL;
	char *line = NULL;
	size_t linecap = 0;
	int n = 0, cap = 0, err = 0;
	ssize_t len;

	errno = 0;
	while ((len = getline(&line, &linecap, f)) > 0) {
		if (len == 1 && line[0] == '\n')
			continue;
		if (n == cap) {
			struct pt_mapping *nv;

			cap = cap ? cap * 2 : 64;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				err = -ENOMEM;
				goto out;
			}
			v = nv;
		}
		err = parse_line(line, &v[n]);
		if (err)
			goto out;
		n++;
	}
	/* getline() returns -1 both at EOF and on a read error (e.g. ESRCH mid-read). */
	if (ferror(f))
		err = errno ? -errno : -EIO;
out:
	free(line);
	if (err) {
		struct pt_maps tmp = { .m = v, .n = n };

		pt_maps_free(&tmp);
		return err;
	}
	out->m = v;
	out->n = n;
	return 0;
}

int pt_maps_parse_file(const char *maps_path, struct pt_maps *out)
{
	FILE *f;
	int err;

	if (!out)
		return -EINVAL;
	out->m = NULL;
	out->n = 0;
	if (!maps_path)
		return -EINVAL;
	f = fopen(maps_path, "re");
	if (!f)
		return -errno;
	err = parse_stream(f, out);
	fclose(f);
	return err;
}

int pt_maps_read(pid_t pid, struct pt_maps *out)
{
	char path[64];
	int err;

	if (!out)
		return -EINVAL;
	out->m = NULL;
	out->n = 0;
	if (pid <= 0)
		return -EINVAL;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	err = pt_maps_parse_file(path, out);
	/* No /proc/PID at all means the process does not exist (any more). */
	if (err == -ENOENT)
		err = -ESRCH;
	return err;
}

void pt_maps_free(struct pt_maps *m)
{
	int i;

	if (!m)
		return;
	for (i = 0; i < m->n; i++)
		free(m->m[i].path);
	free(m->m);
	m->m = NULL;
	m->n = 0;
}

/* ---- allocator detection --------------------------------------------------- */

/* Names looked up per object: the probed entry points, then kind markers. */
enum {
	SYM_LIBC_MALLOC = PT_FN_MAX,	/* glibc's internal name, also exported */
	SYM_MALLCTL,			/* jemalloc */
	SYM_JE_MALLCTL,			/* jemalloc built with the je_ prefix */
	SYM_TC_MALLOC,			/* tcmalloc (gperftools) */
	SYM_MI_MALLOC,			/* mimalloc */
	SYM_EXTRA,			/* first of the PT_EXTRA_FN_MAX extra entry points */
	SYM_MAX = SYM_EXTRA + PT_EXTRA_FN_MAX,
};

static const char *const marker_names[SYM_EXTRA - PT_FN_MAX] = {
	"__libc_malloc", "mallctl", "je_mallctl", "tc_malloc", "mi_malloc",
};

struct sym_scan {
	uint64_t vaddr[SYM_MAX];
	int found[SYM_MAX];		/* 0 none, 1 non-default version, 2 default */
};

static int sym_index(const char *name)
{
	int i;

	for (i = 0; i < PT_FN_MAX; i++)
		if (strcmp(name, fn_names[i]) == 0)
			return i;
	for (i = PT_FN_MAX; i < SYM_EXTRA; i++)
		if (strcmp(name, marker_names[i - PT_FN_MAX]) == 0)
			return i;
	for (i = 0; i < PT_EXTRA_FN_MAX; i++)
		if (strcmp(name, extra_fns[i].name) == 0)
			return SYM_EXTRA + i;
	return -1;
}

static int scan_cb(const struct pt_elf_sym *s, void *ctx)
{
	struct sym_scan *sc = ctx;
	int idx, quality;

	/* Only a definition ld.so could bind a call to: a defined, exported function. */
	if (s->type != STT_FUNC || !s->value || s->shndx == SHN_UNDEF ||
	    (s->shndx >= SHN_LORESERVE && s->shndx != SHN_XINDEX))
		return 0;
	if (s->bind != STB_GLOBAL && s->bind != STB_WEAK && s->bind != STB_GNU_UNIQUE)
		return 0;
	if (s->visibility == STV_HIDDEN || s->visibility == STV_INTERNAL)
		return 0;
	idx = sym_index(s->name);
	if (idx < 0)
		return 0;
	/*
	 * A non-default version (libc_malloc_debug's "malloc@GLIBC_2.2.5") still
	 * interposes versioned references, so it counts; a default one is preferred
	 * when an object carries both.
	 */
	quality = s->hidden_ver ? 1 : 2;
	if (quality > sc->found[idx]) {
		sc->found[idx] = quality;
		sc->vaddr[idx] = s->value;
	}
	return 0;
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');

	return b ? b + 1 : path;
}

static enum pt_allocator_kind classify(const char *path, const struct sym_scan *sc)
{
	const char *b = base_name(path);

	/* Specific allocators first: tcmalloc and mimalloc also export __libc_malloc
	 * to override glibc's, so that marker alone does not mean glibc. */
	/* musl is /lib/ld-musl-ARCH.so.1 when launched (the interpreter's name), but the maps of a
	 * running process show the symlink's target, e.g. /usr/lib/x86_64-linux-musl/libc.so (Debian's
	 * musl-tools): a "libc.so" without glibc's __libc_malloc is musl too. */
	if (strstr(path, "musl") || (strcmp(b, "libc.so") == 0 && !sc->found[SYM_LIBC_MALLOC]))
		return PT_ALLOC_MUSL;
	if (sc->found[SYM_MALLCTL] || sc->found[SYM_JE_MALLCTL])
		return PT_ALLOC_JEMALLOC;
	if (sc->found[SYM_TC_MALLOC])
		return PT_ALLOC_TCMALLOC;
	if (sc->found[SYM_MI_MALLOC])
		return PT_ALLOC_MIMALLOC;
	/* libc_malloc_debug.so forwards to __libc_malloc: glibc chunks underneath. */
	if (sc->found[SYM_LIBC_MALLOC] || strncmp(b, "libc.so", 7) == 0 ||
	    strncmp(b, "libc_malloc_debug.so", 20) == 0)
		return PT_ALLOC_GLIBC;
	return PT_ALLOC_OTHER;
}

/*
 * Fill out from e if it defines malloc. Returns 1 if it does, 0 if not, -errno.
 * .dynsym first (what ld.so binds to), .symtab for static executables.
 */
/* A program the dynamic loader starts (PT_INTERP): ld.so binds calls only to symbols in
 * .dynsym, so a malloc in its .symtab alone allocates for nobody else. */
static bool has_interp(struct pt_elf *e)
{
	size_t n, i;

	if (!e->elf || elf_getphdrnum(e->elf, &n) || n > 4096)
		return false;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(e->elf, (int)i, &ph) && ph.p_type == PT_INTERP)
			return true;
	}
	return false;
}

static int scan_object(struct pt_elf *e, const char *path, const char *open_path,
		       struct pt_allocator *out)
{
	struct sym_scan sc;
	struct stat st;
	uint64_t off;
	int err, i;

	memset(&sc, 0, sizeof(sc));
	err = pt_elf_foreach_sym(e, SHT_DYNSYM, scan_cb, &sc);
	if (err)
		return err;
	/* .symtab is for static programs (a dynamically linked one's can be huge: node's took
	 * ~0.2 s to walk, at an exec stop where the program waits). */
	if (!sc.found[PT_FN_MALLOC] && !has_interp(e)) {
		err = pt_elf_foreach_sym(e, SHT_SYMTAB, scan_cb, &sc);
		if (err)
			return err;
	}
	if (!sc.found[PT_FN_MALLOC])
		return 0;
	/* A uprobe needs a file offset; a malloc outside any PT_LOAD is bogus. */
	if (pt_elf_vaddr_to_off(e->loads, e->nloads, sc.vaddr[PT_FN_MALLOC], &off))
		return 0;

	memset(out, 0, sizeof(*out));
	if (fstat(e->fd, &st) == 0) {
		out->dev = st.st_dev;
		out->ino = st.st_ino;
	}
	out->kind = classify(path, &sc);
	out->path = strdup(path);
	out->open_path = strdup(open_path);
	if (!out->path || !out->open_path)
		goto nomem;
	for (i = 0; i < PT_FN_MAX; i++) {
		if (!sc.found[i] || pt_elf_vaddr_to_off(e->loads, e->nloads, sc.vaddr[i], &off))
			continue;
		out->fn_vaddr[i] = sc.vaddr[i];
		out->fn_offset[i] = off;
		out->fn_symbol[i] = strdup(fn_names[i]);
		if (!out->fn_symbol[i])
			goto nomem;
	}
	if (out->kind == PT_ALLOC_JEMALLOC || out->kind == PT_ALLOC_TCMALLOC ||
	    out->kind == PT_ALLOC_MIMALLOC) {
		for (i = 0; i < PT_EXTRA_FN_MAX; i++) {
			if (!sc.found[SYM_EXTRA + i] ||
			    pt_elf_vaddr_to_off(e->loads, e->nloads, sc.vaddr[SYM_EXTRA + i], &off))
				continue;
			out->extra_vaddr[i] = sc.vaddr[SYM_EXTRA + i];
			out->extra_offset[i] = off;
		}
	}
	return 1;
nomem:
	pt_allocator_free(out);
	return -ENOMEM;
}

void pt_allocator_free(struct pt_allocator *a)
{
	int i;

	if (!a)
		return;
	if (a->own_fd)
		close(a->open_fd);
	free(a->path);
	free(a->open_path);
	for (i = 0; i < PT_FN_MAX; i++)
		free(a->fn_symbol[i]);
	memset(a, 0, sizeof(*a));
}

int pt_find_allocator_in(const char *const *paths, int npaths, struct pt_allocator *out)
{
	int i, ret, err = -ENOENT, opened = 0;

	if (!out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	if (!paths || npaths < 0)
		return -EINVAL;
	for (i = 0; i < npaths; i++) {
		struct pt_elf e;

		if (!paths[i])
			continue;
		ret = pt_elf_open(paths[i], &e);
		if (ret) {
			err = ret;
			continue;
		}
		opened++;
		ret = scan_object(&e, paths[i], paths[i], out);
		pt_elf_close(&e);
		if (ret < 0)
			return ret;
		if (ret > 0)
			return 0;
	}
	/* -ENOENT when something was readable but none defines malloc. */
	return opened ? -ENOENT : err;
}

/* One mapped file of the target, with what the load-order walk needs. */
struct obj {
	const struct pt_mapping *low;	/* its lowest mapping */
	int placed;			/* already in the search order */
	int examined;
	int ok;				/* opened as ELF */
	struct pt_elf e;
	char *open_path;
	char *soname;
	char **needed;
	int nneeded;
};

static int same_file(const struct pt_mapping *a, const struct pt_mapping *b)
{
	return a->inode == b->inode && a->dev_major == b->dev_major &&
	       a->dev_minor == b->dev_minor && strcmp(a->path, b->path) == 0;
}

static int collect_objs(const struct pt_maps *maps, struct obj **out, int *nout)
{
	struct obj *v;
	int i, j, n = 0;

	v = calloc(maps->n ? maps->n : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; i < maps->n; i++) {
		const struct pt_mapping *m = &maps->m[i];

		/* Only files; "[vdso]", "[heap]", anonymous and memfd-less shm are not. */
		if (m->path[0] != '/' || !m->inode)
			continue;
		for (j = 0; j < n; j++)
			if (same_file(v[j].low, m))
				break;
		if (j < n) {
			if (m->start < v[j].low->start)
				v[j].low = m;
			continue;
		}
		v[n].low = m;
		v[n].e.fd = -1;
		n++;
	}
	*out = v;
	*nout = n;
	return 0;
}

/* Open the object's file as the target maps it (target/proc.h, pt_mapped_open): inside the
 * target's root while the path there is the mapped inode, else map_files (deleted, replaced on
 * disk, or swapped for a symlink while the process runs). open_path names that inode, never the
 * path again: /proc/self/fd/N of the fd (keep_fd() below) or the map_files link. */
static int open_obj(pid_t pid, struct obj *o)
{
	const struct pt_mapping *m = o->low;
	struct pt_mapped mp = { m->path, m->start, m->end, m->inode, m->deleted };
	int fd = pt_mapped_open(pid, &mp, PT_MAPPED_ANY_INODE, &o->open_path);
	int err;

	if (fd < 0)
		return fd;
	err = pt_elf_open_fd(fd, &o->e);
	if (err) {
		close(fd);
		free(o->open_path);
		o->open_path = NULL;
		return err;
	}
	o->e.own_fd = 1;
	return 0;
}

/* The allocator found in o: keep the fd open_path names (libbpf opens the path again, as root,
 * when it attaches), so what is probed is the inode that was read. */
static int keep_fd(struct obj *o, struct pt_allocator *a)
{
	if (strncmp(a->open_path, "/proc/self/fd/", 14))
		return 0;	/* map_files: the kernel's link to the mapped inode */
	a->open_fd = fcntl(o->e.fd, F_DUPFD_CLOEXEC, 3);
	if (a->open_fd < 0)
		return -errno;
	a->own_fd = true;
	free(a->open_path);
	if (asprintf(&a->open_path, "/proc/self/fd/%d", a->open_fd) < 0) {
		a->open_path = NULL;
		return -ENOMEM;
	}
	return 0;
}

static void examine(pid_t pid, struct obj *o)
{
	if (o->examined)
		return;
	o->examined = 1;
	if (open_obj(pid, o))
		return;		/* not readable or not ELF (locale archive, fonts...) */
	o->ok = 1;
	/* Without DT_NEEDED the walk only loses precision; not an error. */
	if (pt_elf_dynamic(&o->e, &o->soname, &o->needed, &o->nneeded))
		o->nneeded = 0;
}

static void free_objs(struct obj *v, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		if (v[i].ok)
			pt_elf_close(&v[i].e);
		free(v[i].open_path);
		free(v[i].soname);
		pt_elf_free_strv(v[i].needed, v[i].nneeded);
	}
	free(v);
}

/* Does a DT_NEEDED / LD_PRELOAD entry name this object? */
static int obj_matches(pid_t pid, struct obj *o, const char *name)
{
	const char *b = base_name(name);

	if (strchr(name, '/') && strcmp(name, o->low->path) == 0)
		return 1;
	/* ld.so also finds a library by file name in its search path ($LIB etc.). */
	if (strcmp(b, base_name(o->low->path)) == 0)
		return 1;
	examine(pid, o);
	return o->soname && strcmp(o->soname, b) == 0;
}

static int place(int *order, int *norder, struct obj *v, int idx)
{
	if (idx < 0 || v[idx].placed)
		return 0;
	v[idx].placed = 1;
	order[(*norder)++] = idx;
	return 1;
}

static void place_by_name(pid_t pid, int *order, int *norder, struct obj *v, int n, const char *name)
{
	int i;

	for (i = 0; i < n; i++)
		if (!v[i].placed && obj_matches(pid, &v[i], name)) {
			place(order, norder, v, i);
			return;
		}
}

/* Preload entries are separated by spaces or colons (ld.so(8)). */
static void place_list(pid_t pid, int *order, int *norder, struct obj *v, int n, char *list)
{
	char *save = NULL, *tok;

	for (tok = strtok_r(list, ": \t\n", &save); tok; tok = strtok_r(NULL, ": \t\n", &save))
		place_by_name(pid, order, norder, v, n, tok);
}

static void place_preloads(pid_t pid, int *order, int *norder, struct obj *v, int n)
{
	struct pt_environ env;
	const char *pre;
	char *buf;
	int fd;

	/* LD_PRELOAD as the target saw it at exec. */
	if (pt_environ_read(pid, &env) == 0) {
		if ((pre = pt_environ_get(&env, "LD_PRELOAD")) && (buf = strdup(pre))) {
			place_list(pid, order, norder, v, n, buf);
			free(buf);
		}
		pt_environ_free(&env);
	}
	/* Then the system-wide preload file, read inside the target's root. */
	fd = pt_target_open(pid, "/etc/ld.so.preload", 1 << 16);
	if (fd < 0)
		return;
	buf = pt_read_fd(fd, 1 << 16, NULL);
	if (buf) {
		place_list(pid, order, norder, v, n, buf);
		free(buf);
	}
}

static int find_exe(pid_t pid, struct obj *v, int n)
{
	char link[64], target[PATH_MAX];
	struct stat st;
	ssize_t len;
	int i;

	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	len = readlink(link, target, sizeof(target) - 1);
	if (len > 0) {
		target[len] = '\0';
		if ((size_t)len > strlen(DELETED_SUFFIX) &&
		    strcmp(target + len - strlen(DELETED_SUFFIX), DELETED_SUFFIX) == 0)
			target[len - strlen(DELETED_SUFFIX)] = '\0';
		for (i = 0; i < n; i++)
			if (strcmp(v[i].low->path, target) == 0)
				return i;
	}
	/* Inode as a fallback (path differs e.g. when exe is reached via a bind mount);
	 * st_dev may not match maps' device on btrfs/overlayfs, so compare inode only. */
	if (stat(link, &st) == 0)
		for (i = 0; i < n; i++)
			if (v[i].low->inode == (uint64_t)st.st_ino)
				return i;
	return -1;
}

static int cmp_desc_addr(const void *a, const void *b, void *arg)
{
	const struct obj *v = arg;
	uint64_t x = v[*(const int *)a].low->start, y = v[*(const int *)b].low->start;

	return x < y ? 1 : x > y ? -1 : 0;
}

int pt_find_allocator(pid_t pid, struct pt_allocator *out)
{
	struct pt_maps maps;
	struct obj *v = NULL;
	int *order = NULL, *rest = NULL;
	int n = 0, norder = 0, nrest, i, j, ret, opened = 0;

	if (!out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	ret = pt_maps_read(pid, &maps);
	if (ret)
		return ret;
	/* An existing pid with no mappings is a kernel thread: nothing to probe. */
	if (maps.n == 0) {
		ret = -EINVAL;
		goto out;
	}
	ret = collect_objs(&maps, &v, &n);
	if (ret)
		goto out;
	order = calloc(n ? n : 1, sizeof(*order));
	rest = calloc(n ? n : 1, sizeof(*rest));
	if (!order || !rest) {
		ret = -ENOMEM;
		goto out;
	}

	place(order, &norder, v, find_exe(pid, v, n));
	place_preloads(pid, order, &norder, v, n);

	ret = -ENOENT;
	for (i = 0; i < norder || i < n; i++) {
		struct obj *o;

		if (i == norder) {
			/*
			 * Search list exhausted: what is left was dlopen()ed (or the exe
			 * was not identified). Mappings grow downwards, so the highest
			 * address was loaded first.
			 */
			for (nrest = 0, j = 0; j < n; j++)
				if (!v[j].placed)
					rest[nrest++] = j;
			if (!nrest)
				break;
			qsort_r(rest, nrest, sizeof(*rest), cmp_desc_addr, v);
			for (j = 0; j < nrest; j++)
				place(order, &norder, v, rest[j]);
		}
		o = &v[order[i]];
		examine(pid, o);
		if (!o->ok)
			continue;
		opened++;
		ret = scan_object(&o->e, o->low->path, o->open_path, out);
		if (ret > 0 && (ret = keep_fd(o, out)) == 0)
			ret = 1;
		if (ret < 0)
			pt_allocator_free(out);
		if (ret != 0)
			break;
		ret = -ENOENT;
		/* Breadth first, as ld.so builds its search list. */
		for (j = 0; j < o->nneeded; j++)
			place_by_name(pid, order, &norder, v, n, o->needed[j]);
	}
	if (ret > 0)
		ret = 0;
	else if (ret == -ENOENT && !opened && n)
		ret = -EACCES;	/* files were mapped but none could be read */
out:
	if (v)
		free_objs(v, n);
	free(order);
	free(rest);
	pt_maps_free(&maps);
	return ret;
}

