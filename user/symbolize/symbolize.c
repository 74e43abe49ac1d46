// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * symbolize.c — address -> (module, function) for one target process.
 *
 * The target may exit, dlclose() a library or replace a file on disk before we
 * get to symbolize its stacks, so everything is cached:
 *  - mappings: a sorted, non-overlapping list. A refresh adds what is new; a range
 *    that was reused wins over the old one (only the overlapping part is dropped),
 *    ranges that disappeared stay.
 *  - modules: one per mapped file (path + device + inode). The file is opened as
 *    soon as an executable mapping of it is seen and the fd is kept, so deleted and
 *    unmapped objects still symbolize. Symbols are read lazily on the first lookup.
 *  - symbols: .symtab (or the one from a separate debug file) plus .dynsym, sorted
 *    and de-duplicated once, then binary searched.
 *  - source lines: libdw on the module's DWARF (its own, else the debug file's), opened
 *    on the module's first lookup and kept; libdw caches each CU's line table.
 * Not thread-safe: one symbolizer is used by one thread.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <gelf.h>
#include <elfutils/libdw.h>

#include "util/elfutil.h"
#include "util/fmt.h"
#include "target/procmaps.h"
#include "target/proc.h"
#include "symbolize/symbolize.h"
#include "symbolize/jitmap.h"

/* libstdc++'s demangler (extern "C" there, so callable from C as is). */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

enum mod_state { MOD_NEW = 0, MOD_LOADED, MOD_FAILED };

struct sym {
	uint64_t addr, end;	/* ELF vaddrs, [addr, end) */
	const char *disp;	/* demangled name, made on first use; NULL until then */
	uint32_t name;		/* offset of the raw name in module->names */
};

struct module {
	char *path;		/* as in maps, "" for anonymous memory */
	uint64_t inode;
	uint32_t dev_major, dev_minor;
	int is_file;
	int deleted;
	int fd;			/* kept open for the symbolizer's lifetime */
	enum mod_state state;
	uint64_t map_start, map_end;	/* some mapping of it, for map_files */
	struct pt_elf_load *loads;
	int nloads;
	struct sym *syms;
	size_t nsyms;
	char *names;
	char *build_id;		/* hex, NULL if none */
	/* DWARF: dw_state 0 = not tried yet, 1 = open (dw on dw_elf), -1 = none. */
	int dw_state;
	Dwarf *dw;
	struct pt_elf dw_elf;
};

struct map {
	uint64_t start, end, pgoff;
	struct module *mod;
};

struct range {
	uint64_t start, end;
};

struct pt_symbolizer {
	pid_t pid;
	struct map *maps;
	size_t nmaps;
	struct module **mods;
	size_t nmods, capmods;
	size_t last_mod;	/* consecutive maps lines are usually the same file */
	struct range *exec;	/* executable ranges ever seen, sorted and merged */
	size_t nexec;
	/* JIT code named in /tmp/perf-PID.map (Node --perf-basic-prof, Python -X perf), read
	 * incrementally and within budgets (perfmap.h): the runtime appends as it compiles. */
	struct jit_sym *jit;	/* in file order: a later line is newer code */
	size_t njit, capjit;
	struct pt_perfmap_reader pm;
	struct jit_names *names;	/* the names' blocks, newest first */
	/* Who names each address (jitmap.h): jit[0..jit_flat) flattened, the rest folded in at
	 * the next lookup. */
	struct pt_jit_seg *jit_seg;
	size_t njit_seg, jit_flat;
	/* Asked while the target lived: its root was ours (its paths may then be opened from our
	 * root once it is gone), and its uid (who may own its perf map). */
	bool same_root;
	bool have_uid;
	bool perfmap_refused;	/* said once: a perf map was there but not used */
	uid_t uid;
	/* exec: the image before this one, frozen, for the stacks recorded before first_stack */
	struct pt_symbolizer *prev;
	uint32_t first_stack;
};

struct jit_sym {
	uint64_t start, size;
	const char *name;	/* in a jit_names block */
};

/* The perf map's names, packed in blocks (one malloc per name would cost ~16 bytes of
 * overhead each, on up to half a million lines). */
struct jit_names {
	struct jit_names *next;
	size_t used, cap;
	char buf[];
};

#define JIT_NAMES_BLOCK (256u << 10)

/* The perf map's budget (pt_sym_perfmap_max). */
static uint64_t perfmap_max;

char *pt_demangle(const char *name)
{
	const char *at;
	char *raw, *d, *res = NULL;
	int status = -1;

	if (!name || strncmp(name, "_Z", 2) != 0)
		return NULL;
	/* .symtab may carry "name@@VERSION": demangle the name, keep the version. */
	at = strchr(name, '@');
	raw = at ? strndup(name, at - name) : (char *)name;
	if (!raw)
		return NULL;
	d = __cxa_demangle(raw, NULL, NULL, &status);
	if (at)
		free(raw);
	if (status != 0 || !d) {
		free(d);
		return NULL;
	}
	if (!at)
		return d;
	if (asprintf(&res, "%s%s", d, at) < 0)
		res = NULL;
	free(d);
	return res;
}

/* ---- modules ---------------------------------------------------------------- */

static void module_free(struct module *m)
{
	size_t i;

	if (!m)
		return;
	for (i = 0; i < m->nsyms; i++)
		if (m->syms[i].disp && m->syms[i].disp != m->names + m->syms[i].name)
			free((char *)m->syms[i].disp);
	free(m->syms);
	free(m->names);
	free(m->loads);
	free(m->build_id);
	if (m->dw_state > 0) {
		dwarf_end(m->dw);
		pt_elf_close(&m->dw_elf);
	}
	if (m->fd >= 0)
		close(m->fd);
	free(m->path);
	free(m);
}

/*
 * Open the module's file as the target sees it (target/proc.h, pt_mapped_open): the mapped
 * inode through the target's root or its map_files, else another file at that path rather
 * than no symbols (never for a deleted file: its path names another file now).
 */
static void module_open(struct pt_symbolizer *s, struct module *m)
{
	struct pt_mapped mp = { m->path, m->map_start, m->map_end, m->inode, m->deleted };
	int fd = pt_mapped_open(s->pid, &mp, PT_MAPPED_ANY_INODE |
				(s->same_root ? PT_MAPPED_SAME_ROOT : 0), NULL);

	m->fd = fd < 0 ? -1 : fd;
	if (m->fd < 0)
		m->state = MOD_FAILED;
}

static struct module *module_get(struct pt_symbolizer *s, const struct pt_mapping *pm)
{
	int is_file = pm->path[0] == '/';
	struct module *m, **nv;
	size_t i, k;

	for (k = 0; k < s->nmods; k++) {
		i = (s->last_mod + k) % s->nmods;
		m = s->mods[i];
		if (m->is_file == is_file && strcmp(m->path, pm->path) == 0 &&
		    (!is_file || (m->inode == pm->inode && m->dev_major == pm->dev_major &&
				  m->dev_minor == pm->dev_minor))) {
			s->last_mod = i;
			/* Not opened yet: remember the freshest mapping and whether the
			 * file has been deleted since, for module_open(). */
			if (m->fd < 0) {
				m->deleted |= pm->deleted;
				m->map_start = pm->start;
				m->map_end = pm->end;
			}
			return m;
		}
	}
	if (s->nmods == s->capmods) {
		size_t cap = s->capmods ? s->capmods * 2 : 64;

		nv = realloc(s->mods, cap * sizeof(*nv));
		if (!nv)
			return NULL;
		s->mods = nv;
		s->capmods = cap;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->path = strdup(pm->path);
	if (!m->path) {
		free(m);
		return NULL;
	}
	m->fd = -1;
	m->is_file = is_file;
	m->deleted = pm->deleted;
	m->inode = pm->inode;
	m->dev_major = pm->dev_major;
	m->dev_minor = pm->dev_minor;
	m->map_start = pm->start;
	m->map_end = pm->end;
	/* Anonymous memory, [heap], [stack], [vdso]: nothing to read symbols from. */
	m->state = is_file ? MOD_NEW : MOD_FAILED;
	s->last_mod = s->nmods;
	s->mods[s->nmods++] = m;
	return m;
}

/* ---- symbol tables ---------------------------------------------------------- */

struct tmpsym {
	uint64_t addr, size;
	const char *name;	/* points into an open ELF's string table */
	int rank;
};

struct collect {
	struct tmpsym *v;
	size_t n, cap;
	int err;
	bool full;	/* SYMS_KEEP_MAX reached */
};

/* Function symbols kept per module (32 bytes each while sorting: 128 MiB at most). The largest
 * real tables (Chromium's, libxul's debug file) hold ~1-3M; a forged one could claim 16M
 * (PT_ELF_SYMS_MAX). The rest are not used, said once per module on stderr. */
#define SYMS_KEEP_MAX (4u << 20)

static int leading_underscores(const char *s)
{
	int n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

/* Several names often share an address (malloc, __libc_malloc, __malloc). Pick
 * the one a user expects, as perf does: global over weak over local, then
 * fewer leading underscores, then the shorter, then alphabetical. */
static int better(const struct tmpsym *a, const struct tmpsym *b)
{
	int ua, ub;
	size_t la, lb;

	if (a->rank != b->rank)
		return a->rank > b->rank;
	ua = leading_underscores(a->name);
	ub = leading_underscores(b->name);
	if (ua != ub)
		return ua < ub;
	la = strlen(a->name);
	lb = strlen(b->name);
	if (la != lb)
		return la < lb;
	return strcmp(a->name, b->name) < 0;
}

static int cmp_tmpsym(const void *pa, const void *pb)
{
	const struct tmpsym *a = pa, *b = pb;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	if (better(a, b))
		return -1;
	return better(b, a) ? 1 : 0;
}

static int collect_cb(const struct pt_elf_sym *s, void *ctx)
{
	struct collect *c = ctx;
	struct tmpsym *t;

	if ((s->type != STT_FUNC && s->type != STT_GNU_IFUNC) || !s->value ||
	    s->shndx == SHN_UNDEF)
		return 0;
	if (c->n >= SYMS_KEEP_MAX) {
		c->full = true;
		return 1;
	}
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 1024;

		t = realloc(c->v, cap * sizeof(*t));
		if (!t) {
			c->err = -ENOMEM;
			return 1;
		}
		c->v = t;
		c->cap = cap;
	}
	t = &c->v[c->n++];
	t->addr = s->value;
	t->size = s->size;
	t->name = s->name;
	t->rank = s->bind == STB_GLOBAL ? 3 : s->bind == STB_WEAK ? 2 :
		  s->bind == STB_GNU_UNIQUE ? 2 : 1;
	return 0;
}

static uint64_t load_end(const struct module *m, uint64_t vaddr)
{
	int i;

	for (i = 0; i < m->nloads; i++)
		if (vaddr >= m->loads[i].vaddr && vaddr - m->loads[i].vaddr < m->loads[i].memsz)
			return m->loads[i].vaddr + m->loads[i].memsz;
	return UINT64_MAX;
}

/* Sort, keep the best name per address, copy names into one block, and give
 * size-0 symbols (hand-written asm) the range up to the next symbol. */
static int build_symbols(struct module *m, struct collect *c)
{
	size_t i, j, n = 0, bytes = 0;
	char *p;

	if (!c->n)
		return 0;
	qsort(c->v, c->n, sizeof(*c->v), cmp_tmpsym);
	for (i = 0; i < c->n; i = j) {
		uint64_t size = c->v[i].size;

		for (j = i + 1; j < c->n && c->v[j].addr == c->v[i].addr; j++)
			if (c->v[j].size > size)
				size = c->v[j].size;
		c->v[n] = c->v[i];
		c->v[n].size = size;
		bytes += strlen(c->v[n].name) + 1;
		n++;
	}
	m->syms = calloc(n, sizeof(*m->syms));
	m->names = malloc(bytes);
	if (!m->syms || !m->names || bytes > UINT32_MAX) {
		free(m->syms);
		free(m->names);
		m->syms = NULL;
		m->names = NULL;
		return -ENOMEM;
	}
	p = m->names;
	for (i = 0; i < n; i++) {
		struct sym *s = &m->syms[i];
		size_t len = strlen(c->v[i].name) + 1;

		memcpy(p, c->v[i].name, len);
		s->name = (uint32_t)(p - m->names);
		p += len;
		s->addr = c->v[i].addr;
		if (c->v[i].size && c->v[i].addr + c->v[i].size > c->v[i].addr) {
			s->end = c->v[i].addr + c->v[i].size;
		} else {
			uint64_t lim = load_end(m, s->addr);

			s->end = i + 1 < n ? c->v[i + 1].addr : lim;
			if (s->end > lim)
				s->end = lim;
		}
	}
	m->nsyms = n;
	return 0;
}

/* The debug file rel inside pid's root (ours for pid <= 0), if it is one for this build. */
static int try_debug(pid_t pid, const char *rel, const uint8_t *id, int idlen, struct pt_elf *dbg)
{
	uint8_t did[64];
	int dlen, fd = pt_target_open(pid, rel, 0);

	if (fd < 0)
		return -1;
	if (pt_elf_open_fd(fd, dbg)) {
		close(fd);
		return -1;
	}
	dbg->own_fd = 1;
	if (!pt_elf_has_section(dbg, SHT_SYMTAB))
		goto reject;
	/* A stale debug file for another build would give plausible but wrong names. */
	if (idlen > 0) {
		dlen = pt_elf_build_id(dbg, did, sizeof(did));
		if (dlen > 0 && (dlen != idlen || memcmp(did, id, idlen) != 0))
			goto reject;
	}
	return 0;
reject:
	pt_elf_close(dbg);
	return -1;
}

/* Try rel inside the target's root, then in ours (debug packages are often installed on the
 * host only) — there only under /usr/lib/debug, where debug packages put their files: rel is
 * made of the target's paths and its .gnu_debuglink, which must not pick a host file. */
static int try_debug_roots(struct pt_symbolizer *s, const char *rel, const uint8_t *id,
			   int idlen, struct pt_elf *dbg)
{
	int ok = try_debug(s->pid, rel, id, idlen, dbg);

	if (ok && !strncmp(rel, "/usr/lib/debug/", 15) && !strstr(rel, "/../"))
		ok = try_debug(0, rel, id, idlen, dbg);
	return ok;
}

/* gdb's lookup order: build-id tree, then .gnu_debuglink next to the object, in
 * .debug/ beside it, and under /usr/lib/debug/<dir>. */
static int open_debug(struct pt_symbolizer *s, struct module *m, struct pt_elf *e,
		      struct pt_elf *dbg)
{
	char rel[PATH_MAX + 64], link[256], dir[PATH_MAX], *slash;
	uint8_t id[64];
	int idlen, i, n;

	idlen = pt_elf_build_id(e, id, sizeof(id));
	if (idlen >= 2) {
		n = snprintf(rel, sizeof(rel), "/usr/lib/debug/.build-id/%02x/", id[0]);
		for (i = 1; i < idlen; i++)
			n += snprintf(rel + n, sizeof(rel) - n, "%02x", id[i]);
		snprintf(rel + n, sizeof(rel) - n, ".debug");
		if (try_debug_roots(s, rel, id, idlen, dbg) == 0)
			return 0;
	}
	/* A file name (gdb's rule), never a path of its own. */
	if (pt_elf_debuglink(e, link, sizeof(link)) || strchr(link, '/') || !strcmp(link, "..") ||
	    !strcmp(link, "."))
		return -1;
	if (snprintf(dir, sizeof(dir), "%s", m->path) >= (int)sizeof(dir))
		return -1;
	slash = strrchr(dir, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	/* A truncated candidate path is skipped, never opened. */
	n = snprintf(rel, sizeof(rel), "%s/%s", dir, link);
	if (n < (int)sizeof(rel) && strcmp(rel, m->path) != 0 &&
	    try_debug_roots(s, rel, id, idlen, dbg) == 0)
		return 0;
	n = snprintf(rel, sizeof(rel), "%s/.debug/%s", dir, link);
	if (n < (int)sizeof(rel) && try_debug_roots(s, rel, id, idlen, dbg) == 0)
		return 0;
	n = snprintf(rel, sizeof(rel), "/usr/lib/debug%s/%s", dir, link);
	if (n < (int)sizeof(rel) && try_debug_roots(s, rel, id, idlen, dbg) == 0)
		return 0;
	return -1;
}

static void module_load(struct pt_symbolizer *s, struct module *m)
{
	struct collect c = { 0 };
	struct pt_elf e, dbg;
	int have_dbg = 0;

	if (m->state != MOD_NEW)
		return;
	if (m->fd < 0)
		module_open(s, m);
	m->state = MOD_FAILED;
	if (m->fd < 0 || pt_elf_open_fd(m->fd, &e))
		return;
	if (e.nloads) {
		m->loads = malloc(e.nloads * sizeof(*m->loads));
		if (!m->loads)
			goto out;
		memcpy(m->loads, e.loads, e.nloads * sizeof(*m->loads));
		m->nloads = e.nloads;
	}
	m->state = MOD_LOADED;
	{
		uint8_t id[64];
		int i, n = pt_elf_build_id(&e, id, sizeof(id));

		if (n > 0 && (m->build_id = malloc(2 * n + 1)))
			for (i = 0; i < n; i++)
				snprintf(m->build_id + 2 * i, 3, "%02x", id[i]);
	}
	if (pt_elf_has_section(&e, SHT_SYMTAB)) {
		pt_elf_foreach_sym(&e, SHT_SYMTAB, collect_cb, &c);
	} else if (open_debug(s, m, &e, &dbg) == 0) {
		have_dbg = 1;
		/* Debug files keep the original vaddrs, so their symbols apply as is. */
		pt_elf_foreach_sym(&dbg, SHT_SYMTAB, collect_cb, &c);
	}
	if (!c.err && !c.full)
		pt_elf_foreach_sym(&e, SHT_DYNSYM, collect_cb, &c);
	if (c.full) {
		char path[512];

		pt_sanitize(path, sizeof(path), m->path);   /* the target's path */
		fprintf(stderr, "peaktrace: warning: %s: more than %u function symbols: the rest are "
				"not used (their frames stay unnamed)\n", path, SYMS_KEEP_MAX);
	}
	/* On a malformed table or ENOMEM keep what was read: partial names beat none. */
	build_symbols(m, &c);
	free(c.v);
	if (have_dbg)
		pt_elf_close(&dbg);
out:
	pt_elf_close(&e);
}

/* ---- source lines ----------------------------------------------------------- */

/* Open the module's DWARF once: the file's own, else its debug file's (open_debug). */
static bool dwarf_ready(struct pt_symbolizer *s, struct module *m)
{
	struct pt_elf e;

	if (m->dw_state)
		return m->dw_state > 0;
	m->dw_state = -1;
	if (m->fd < 0 || pt_elf_open_fd(m->fd, &e))
		return false;
	m->dw = dwarf_begin_elf(e.elf, DWARF_C_READ, NULL);
	if (m->dw) {
		m->dw_elf = e;
		m->dw_state = 1;
		return true;
	}
	if (open_debug(s, m, &e, &m->dw_elf) == 0) {
		m->dw = dwarf_begin_elf(m->dw_elf.elf, DWARF_C_READ, NULL);
		if (m->dw)
			m->dw_state = 1;
		else
			pt_elf_close(&m->dw_elf);
	}
	pt_elf_close(&e);
	return m->dw_state > 0;
}

/* CUs asked per lookup in a module without aranges, at most: the file is the target's, and a
 * forged .debug_info of millions of empty CUs would be walked for every address (real programs:
 * ~10k CUs; the rest of a larger one goes without source lines). */
#define DWARF_CU_WALK_MAX (1u << 16)

/* The CU holding vaddr: through .debug_aranges, else — only in a module that has no aranges
 * at all (a compiler that left them out) — by asking every CU. Not for every miss: addresses
 * in code without DWARF (assembly) would walk every CU each. */
static bool dwarf_cu_of(struct module *m, uint64_t vaddr, Dwarf_Die *cu)
{
	Dwarf_Off off = 0, next;
	Dwarf_Aranges *ar;
	size_t hsize, nar = 0;
	unsigned int walked = 0;

	if (dwarf_addrdie(m->dw, vaddr, cu))
		return true;
	if (dwarf_getaranges(m->dw, &ar, &nar) == 0 && nar > 0)
		return false;
	while (walked++ < DWARF_CU_WALK_MAX && dwarf_nextcu(m->dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		if (dwarf_offdie(m->dw, off + hsize, cu) && dwarf_haspc(cu, vaddr) > 0)
			return true;
		off = next;
	}
	return false;
}

/* File and line of vaddr from the line table: for code inlined there, the inlined callee's
 * line (finding the outer function's call site, DW_AT_call_line, walks the CU's DIEs per
 * address: 100x the cost, measured). */
static void module_source(struct pt_symbolizer *s, struct module *m, uint64_t vaddr,
			  struct pt_symres *res)
{
	Dwarf_Line *ln;
	Dwarf_Die cu;
	int line = 0;

	if (!dwarf_ready(s, m) || !dwarf_cu_of(m, vaddr, &cu))
		return;
	if ((ln = dwarf_getsrc_die(&cu, vaddr)) && dwarf_lineno(ln, &line) == 0 && line > 0) {
		res->file = dwarf_linesrc(ln, NULL, NULL);
		res->line = res->file ? (uint32_t)line : 0;
	}
}

static struct sym *module_lookup(struct module *m, uint64_t vaddr)
{
	size_t lo = 0, hi = m->nsyms, i, k;

	/* Last symbol starting at or below vaddr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->syms[mid].addr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	/* Usually that one covers vaddr; a few steps back catch a function that
	 * encloses smaller labelled entry points (glibc's string functions). */
	for (k = 0, i = lo; i > 0 && k < 16; i--, k++)
		if (vaddr < m->syms[i - 1].end)
			return &m->syms[i - 1];
	return NULL;
}

static const char *sym_name(struct module *m, struct sym *sym)
{
	const char *raw = m->names + sym->name;

	if (!sym->disp) {
		char *d = pt_demangle(raw);

		sym->disp = d ? d : raw;
	}
	return sym->disp;
}

/* ---- mappings --------------------------------------------------------------- */

static int cmp_map(const void *pa, const void *pb)
{
	const struct map *a = pa, *b = pb;

	return a->start < b->start ? -1 : a->start > b->start ? 1 : 0;
}

static int cmp_range(const void *pa, const void *pb)
{
	const struct range *a = pa, *b = pb;

	return a->start < b->start ? -1 : a->start > b->start ? 1 : 0;
}

static int add_exec(struct pt_symbolizer *s, const struct range *add, size_t nadd)
{
	struct range *v;
	size_t i, n = 0;

	if (!nadd)
		return 0;
	v = realloc(s->exec, (s->nexec + nadd) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	memcpy(v + s->nexec, add, nadd * sizeof(*v));
	s->exec = v;
	qsort(v, s->nexec + nadd, sizeof(*v), cmp_range);
	for (i = 0; i < s->nexec + nadd; i++) {
		if (n && v[i].start <= v[n - 1].end) {
			if (v[i].end > v[n - 1].end)
				v[n - 1].end = v[i].end;
		} else {
			v[n++] = v[i];
		}
	}
	s->nexec = n;
	return 0;
}

static int push_map(struct map **v, size_t *n, size_t *cap, const struct map *m)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 256;
		struct map *nv = realloc(*v, nc * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		*v = nv;
		*cap = nc;
	}
	(*v)[(*n)++] = *m;
	return 0;
}

/* Old mappings minus the ranges now covered by nm (sorted, non-overlapping),
 * plus nm: the newest owner of a range wins, the rest of the history stays. */
static int merge_maps(struct pt_symbolizer *s, const struct map *nm, size_t nn)
{
	struct map *v = NULL;
	size_t n = 0, cap = 0, i, lo, hi;
	int err;

	for (i = 0; i < s->nmaps; i++) {
		const struct map *o = &s->maps[i];
		uint64_t cur = o->start;

		lo = 0;
		hi = nn;
		while (lo < hi) {	/* first new mapping ending after o->start */
			size_t mid = lo + (hi - lo) / 2;

			if (nm[mid].end <= o->start)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (; lo < nn && nm[lo].start < o->end && cur < o->end; lo++) {
			if (nm[lo].start > cur) {
				struct map piece = *o;

				piece.start = cur;
				piece.end = nm[lo].start;
				piece.pgoff = o->pgoff + (cur - o->start);
				err = push_map(&v, &n, &cap, &piece);
				if (err)
					goto fail;
			}
			if (nm[lo].end > cur)
				cur = nm[lo].end;
		}
		if (cur < o->end) {
			struct map piece = *o;

			piece.start = cur;
			piece.pgoff = o->pgoff + (cur - o->start);
			err = push_map(&v, &n, &cap, &piece);
			if (err)
				goto fail;
		}
	}
	for (i = 0; i < nn; i++) {
		err = push_map(&v, &n, &cap, &nm[i]);
		if (err)
			goto fail;
	}
	qsort(v, n, sizeof(*v), cmp_map);
	free(s->maps);
	s->maps = v;
	s->nmaps = n;
	return 0;
fail:
	free(v);
	return err;
}

/* The target's own pid, as it names its perf map inside its pid namespace (NSpid's last field). */
static pid_t ns_pid(pid_t pid)
{
	char v[256], *p = v, *end;
	pid_t last = pid;

	if (pt_proc_status_field(pid, "NSpid", v, sizeof(v)))
		return pid;
	for (;;) {
		long n = strtol(p, &end, 10);

		if (end == p)
			break;
		last = (pid_t)n;
		p = end;
	}
	return last;
}

/* The target's effective uid (/proc/PID/status "Uid:", the second field). */
static int target_uid(pid_t pid, uid_t *uid)
{
	unsigned long r, e;
	char v[128];

	if (pt_proc_status_field(pid, "Uid", v, sizeof(v)) || sscanf(v, "%lu %lu", &r, &e) != 2)
		return -1;
	*uid = (uid_t)e;
	return 0;
}

/*
 * The perf map's fd if it is a regular file (the target names what is there: a FIFO would
 * block a read until someone writes to it, and a device read forever) owned by the target's
 * uid or root: perf's rule, since any local user can write /tmp. Else -1, fd closed.
 */
static int perfmap_check(struct pt_symbolizer *s, int fd, bool root_ok, const char *path)
{
	struct stat st;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || !s->have_uid ||
	    !(st.st_uid == s->uid || (root_ok && st.st_uid == 0))) {
		/* Not silent: the JIT frames it would have named stay unnamed, and the user should
		 * know why (once: the map is looked at again at every refresh). */
		if (!s->perfmap_refused) {
			char why[96];

			s->perfmap_refused = true;
			if (!s->have_uid)
				snprintf(why, sizeof(why), "the target's uid is unknown");
			else if (fstat(fd, &st) || !S_ISREG(st.st_mode))
				snprintf(why, sizeof(why), "not a regular file");
			else
				snprintf(why, sizeof(why), "owned by uid %u, not the target's uid %u%s",
					 (unsigned)st.st_uid, (unsigned)s->uid, root_ok ? " or root" : "");
			fprintf(stderr, "peaktrace: warning: %s is not used (%s): JIT frames stay "
					"unnamed\n", path, why);
		}
		close(fd);
		return -1;
	}
	return fd;
}

/* A copy of name (len bytes) kept for the symbolizer's lifetime, or NULL. */
static const char *jit_name_keep(struct pt_symbolizer *s, const char *name, size_t len)
{
	struct jit_names *b = s->names;
	char *p;

	if (!b || b->cap - b->used < len + 1) {
		size_t cap = len + 1 > JIT_NAMES_BLOCK ? len + 1 : JIT_NAMES_BLOCK;

		b = malloc(sizeof(*b) + cap);
		if (!b)
			return NULL;
		b->next = s->names;
		b->used = 0;
		b->cap = cap;
		s->names = b;
	}
	p = b->buf + b->used;
	memcpy(p, name, len);
	p[len] = 0;
	b->used += len + 1;
	return p;
}

/* perfmap.h's pt_perfmap_line_fn: one well-formed line, kept in file order. */
static int jit_add(void *ctx, uint64_t start, uint64_t size, const char *name, size_t len)
{
	struct pt_symbolizer *s = ctx;

	if (s->njit == s->capjit) {
		size_t nc = s->capjit ? s->capjit * 2 : 256;
		struct jit_sym *j = realloc(s->jit, nc * sizeof(*j));

		if (!j)
			return -ENOMEM;
		s->jit = j;
		s->capjit = nc;
	}
	s->jit[s->njit].start = start;
	s->jit[s->njit].size = size;
	if (!(s->jit[s->njit].name = jit_name_keep(s, name, len)))
		return -ENOMEM;
	s->njit++;
	return 0;
}

/* Read what was appended to /tmp/perf-PID.map since the last call, within its budgets. */
static void perfmap_read(struct pt_symbolizer *s)
{
	struct pt_perfmap_limits lim;
	char path[128];
	int fd;

	/* Inside the target's root, as the target names it (its pid in its own namespace). */
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", ns_pid(s->pid));
	fd = pt_target_open(s->pid, path, 0);
	if (fd >= 0) {
		fd = perfmap_check(s, fd, true, path);
	} else if (fd == -ESRCH && s->same_root) {
		/* The target is gone (no /proc/PID/root): its map stays in our /tmp when it ran
		 * in our root, and is its own only if the target's uid owns it. */
		snprintf(path, sizeof(path), "/tmp/perf-%d.map", s->pid);
		fd = perfmap_check(s, pt_target_open(0, path, 0), false, path);
	}
	if (fd < 0)
		return;
	pt_perfmap_limits_init(&lim, perfmap_max);
	pt_perfmap_read(&s->pm, fd, &lim, jit_add, s);
	close(fd);
}

/*
 * Fold the lines read since the last lookup into the segments: the old segments stand for all
 * older lines (each keeps its line's index), and every new line is newer than all of them.
 * The lines stay in file order, so "newest" holds across incremental reads.
 */
static int jit_fold(struct pt_symbolizer *s)
{
	size_t nn = s->njit - s->jit_flat, n = s->njit_seg + nn, nout;
	struct pt_jit_seg *in = malloc(n * sizeof(*in)), *out;
	int err;

	if (!in)
		return -ENOMEM;
	if (s->njit_seg)
		memcpy(in, s->jit_seg, s->njit_seg * sizeof(*in));
	for (size_t k = 0; k < nn; k++) {
		const struct jit_sym *j = &s->jit[s->jit_flat + k];

		in[s->njit_seg + k].start = j->start;
		in[s->njit_seg + k].end = pt_jit_end(j->start, j->size);
		in[s->njit_seg + k].idx = s->jit_flat + k;
	}
	err = pt_jit_flatten(in, n, &out, &nout);
	free(in);
	if (err)
		return err;
	free(s->jit_seg);
	s->jit_seg = out;
	s->njit_seg = nout;
	s->jit_flat = s->njit;
	return 0;
}

/* The JIT symbol naming addr: the newest perf-map line covering it, as perf takes it. */
static const struct jit_sym *jit_lookup(struct pt_symbolizer *s, uint64_t addr)
{
	const struct pt_jit_seg *g;

	/* Out of memory: the lines folded before still name what they cover. */
	if (s->jit_flat < s->njit)
		jit_fold(s);
	g = pt_jit_find(s->jit_seg, s->njit_seg, addr);
	return g ? &s->jit[g->idx] : NULL;
}

int pt_sym_refresh(struct pt_symbolizer *s)
{
	struct pt_maps pm;
	struct map *nm = NULL;
	struct range *ex = NULL;
	size_t nn = 0, nex = 0;
	int i, err;

	if (!s)
		return -EINVAL;
	perfmap_read(s);
	err = pt_maps_read(s->pid, &pm);
	if (err)
		return err;	/* the cache stays as it was: an exited target still resolves */
	nm = calloc(pm.n ? pm.n : 1, sizeof(*nm));
	ex = calloc(pm.n ? pm.n : 1, sizeof(*ex));
	if (!nm || !ex) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < pm.n; i++) {
		const struct pt_mapping *p = &pm.m[i];
		struct module *m;

		if (p->end <= p->start)
			continue;
		m = module_get(s, p);
		if (!m) {
			err = -ENOMEM;
			goto out;
		}
		if (p->perms[2] == 'x') {
			ex[nex].start = p->start;
			ex[nex++].end = p->end;
			/* Pin the file now: later it may be unlinked or unmapped. */
			if (m->state == MOD_NEW && m->fd < 0) {
				m->map_start = p->start;
				m->map_end = p->end;
				module_open(s, m);
			}
		}
		nm[nn].start = p->start;
		nm[nn].end = p->end;
		nm[nn].pgoff = p->pgoff;
		nm[nn].mod = m;
		nn++;
	}
	qsort(nm, nn, sizeof(*nm), cmp_map);
	err = add_exec(s, ex, nex);
	if (!err)
		err = merge_maps(s, nm, nn);
out:
	free(nm);
	free(ex);
	pt_maps_free(&pm);
	return err;
}

struct pt_symbolizer *pt_sym_new(pid_t pid)
{
	struct pt_symbolizer *s;
	int err;

	if (pid <= 0) {
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->pid = pid;
	s->same_root = pt_target_same_root(pid);
	s->have_uid = target_uid(pid, &s->uid) == 0;
	err = pt_sym_refresh(s);
	if (err) {
		pt_sym_free(s);
		errno = -err;
		return NULL;
	}
	return s;
}

void pt_sym_free(struct pt_symbolizer *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->nmods; i++)
		module_free(s->mods[i]);
	free(s->mods);
	free(s->maps);
	free(s->exec);
	while (s->names) {
		struct jit_names *b = s->names;

		s->names = b->next;
		free(b);
	}
	free(s->jit);
	free(s->jit_seg);
	pt_sym_free(s->prev);
	free(s);
}

int pt_sym_exec(struct pt_symbolizer *s, uint32_t first_stack)
{
	struct pt_symbolizer *old = malloc(sizeof(*old));

	if (!old)
		return -ENOMEM;
	*old = *s;
	memset(s, 0, sizeof(*s));
	s->pid = old->pid;
	s->same_root = pt_target_same_root(s->pid);
	s->have_uid = target_uid(s->pid, &s->uid) == 0;
	s->prev = old;
	s->first_stack = first_stack;
	return pt_sym_refresh(s);
}

struct pt_symbolizer *pt_sym_for_stack(struct pt_symbolizer *s, uint32_t idx)
{
	while (s && s->prev && idx < s->first_stack)
		s = s->prev;
	return s;
}

uint32_t pt_sym_images(const struct pt_symbolizer *s)
{
	uint32_t n = 0;

	for (; s; s = s->prev)
		n++;
	return n;
}

void pt_sym_perfmap_max(uint64_t max_bytes)
{
	perfmap_max = max_bytes;
}

uint64_t pt_sym_perfmap_limit(void)
{
	return perfmap_max ? perfmap_max : PT_PERFMAP_MAX_BYTES;
}

void pt_sym_perfmap_stats(const struct pt_symbolizer *s, struct pt_perfmap_cut *cut, uint64_t *bytes)
{
	memset(cut, 0, sizeof(*cut));
	*bytes = 0;
	for (; s; s = s->prev) {
		pt_perfmap_cut_add(cut, &s->pm.cut);
		if (s->pm.size > *bytes)
			*bytes = s->pm.size;
	}
}

static const struct map *find_map(const struct pt_symbolizer *s, uint64_t addr)
{
	size_t lo = 0, hi = s->nmaps;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->maps[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && addr < s->maps[lo - 1].end)
		return &s->maps[lo - 1];
	return NULL;
}

int pt_sym_resolve(struct pt_symbolizer *s, uint64_t addr, struct pt_symres *res)
{
	const struct map *mp;
	struct module *m;
	struct sym *sym;
	uint64_t file_off, vaddr;

	if (!res)
		return -EINVAL;
	memset(res, 0, sizeof(*res));
	if (!s)
		return -EINVAL;
	mp = find_map(s, addr);
	if (!mp) {
		const struct jit_sym *j;

		/* JIT code in memory never seen in /proc/PID/maps: V8 reserves its code space
		 * PROT_NONE and makes it executable with mprotect (no mmap event asks for a
		 * refresh), and a short-lived program unmaps it at teardown before its exit
		 * stop. The perf map still names it. */
		if (!(j = jit_lookup(s, addr)))
			return -ENOENT;
		res->module = "";
		res->offset = addr - j->start;
		res->func = j->name;
		res->func_off = addr - j->start;
		return 0;
	}
	m = mp->mod;
	res->module = m->path;
	if (!m->is_file) {
		const struct jit_sym *j;

		/* Anonymous pgoff is the page number of the address, not a file offset. */
		res->offset = addr - mp->start;
		/* JIT code: named by the runtime's perf map, if it writes one. */
		if ((j = jit_lookup(s, addr))) {
			res->func = j->name;
			res->func_off = addr - j->start;
		}
		return 0;
	}
	file_off = addr - mp->start + mp->pgoff;
	res->offset = file_off;
	module_load(s, m);
	if (m->state != MOD_LOADED)
		return 0;
	/* file offset -> ELF vaddr: one rule for PIE, shared objects and ET_EXEC. */
	if (pt_elf_off_to_vaddr(m->loads, m->nloads, file_off, &vaddr))
		return 0;
	res->offset = vaddr;
	res->build_id = m->build_id;
	module_source(s, m, vaddr, res);
	sym = module_lookup(m, vaddr);
	if (sym) {
		res->func = sym_name(m, sym);
		res->func_off = vaddr - sym->addr;
	}
	return 0;
}

int pt_sym_is_code(struct pt_symbolizer *s, uint64_t addr)
{
	size_t lo = 0, hi;

	if (!s)
		return 0;
	hi = s->nexec;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->exec[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && addr < s->exec[lo - 1].end)
		return 1;
	/* JIT code named by the perf map is code even where no executable mapping of it was
	 * seen (see pt_sym_resolve). */
	return s->njit && jit_lookup(s, addr) != NULL;
}
