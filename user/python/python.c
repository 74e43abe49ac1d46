// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * python.c — CPython frames: detection, offsets, code-object names, location tables, and the
 * merge of Python frames into native stacks (the kernel side is
 * bpf/python.bpf.h).
 *
 * Offsets: CPython's internal structs change with each minor version (3.13 publishes
 * _Py_DebugOffsets, older ones nothing). The table below was produced with offsetof() against
 * each version's own headers (Py_BUILD_CORE, internal/pycore_*.h): Debian's 3.11.2
 * (/usr/include/python3.11) and pyenv's 3.11.7, 3.12.1 and 3.13.0, x86-64. 3.11.2 and 3.11.7
 * agree; patch releases do not change these layouts.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "python/python.h"
#include "util/elfutil.h"
#include "target/procmaps.h"
#include "target/proc.h"

/* What user space reads from code objects and strings, per version. */
struct py_user_off {
	uint32_t co_filename, co_name, co_qualname, co_linetable, co_firstlineno;
	uint32_t bytes_sval;       /* PyBytesObject.ob_sval */
	uint32_t ascii_size;       /* sizeof(PyASCIIObject): data of a compact ASCII str */
	uint32_t compact_size;     /* sizeof(PyCompactUnicodeObject): data of other compact strs */
};

static const struct {
	uint32_t minor;
	struct pt_py_offsets k;
	struct py_user_off u;
} tables[] = {
	{ 11, { .interp_head = 40, .threads_head = 16, .ts_next = 8, .ts_native_tid = 160,
		.ts_cframe = 56, .cframe_current = 8, .fr_code = 32, .fr_previous = 48,
		.fr_instr = 56, .fr_owner = 69, .fr_is_entry = 68, .co_code_adaptive = 184,
		.minor = 11 },
	  { 112, 120, 128, 136, 72, 32, 48, 72 } },
	{ 12, { .interp_head = 40, .threads_head = 72, .ts_next = 8, .ts_native_tid = 144,
		.ts_cframe = 56, .cframe_current = 0, .fr_code = 0, .fr_previous = 8,
		.fr_instr = 56, .fr_owner = 70, .fr_is_entry = 0, .co_code_adaptive = 192,
		.minor = 12 },
	  { 112, 120, 128, 136, 68, 32, 40, 56 } },
	{ 13, { .interp_head = 632, .threads_head = 7344, .ts_next = 8, .ts_native_tid = 160,
		.ts_cframe = 0, .cframe_current = 72, .fr_code = 0, .fr_previous = 8,
		.fr_instr = 56, .fr_owner = 70, .fr_is_entry = 0, .co_code_adaptive = 200,
		.minor = 13 },
	  { 112, 120, 128, 136, 68, 32, 40, 56 } },
};

/* ---- detection ------------------------------------------------------------------------ */

struct sym_scan {
	uint64_t runtime, version;
	bool have_runtime, have_version;
};

static int scan_cb(const struct pt_elf_sym *s, void *ctx)
{
	struct sym_scan *sc = ctx;

	if (!sc->have_runtime && strcmp(s->name, "_PyRuntime") == 0 && s->shndx) {
		sc->runtime = s->value;
		sc->have_runtime = true;
	} else if (!sc->have_version && strcmp(s->name, "Py_Version") == 0 && s->shndx) {
		sc->version = s->value;
		sc->have_version = true;
	}
	return sc->have_runtime && sc->have_version;
}

/* path is the object's name as the target knows it; e is it opened (closed here). */
static int detect_elf(const char *path, struct pt_elf *e, struct pt_py_info *out)
{
	struct sym_scan sc = { 0 };
	struct stat st;
	uint64_t off;
	uint32_t hex = 0;
	size_t k;
	int ino_ok;

	/* Matched against the maps by inode: the loader's path may differ from the canonical one
	 * maps shows (symlinks, "../lib" in an rpath). The inode of what was read, not of a path
	 * looked up again. */
	ino_ok = fstat(e->fd, &st) == 0;
	pt_elf_foreach_sym(e, SHT_DYNSYM, scan_cb, &sc);
	if (!sc.have_runtime || !sc.have_version)
		pt_elf_foreach_sym(e, SHT_SYMTAB, scan_cb, &sc);
	if (!sc.have_runtime) {
		pt_elf_close(e);
		return -ENOENT;
	}
	/* Py_Version (3.11+) is a const in the file: PY_VERSION_HEX, 0x030b02f0 for 3.11.2. */
	if (!sc.have_version || pt_elf_vaddr_to_off(e->loads, e->nloads, sc.version, &off) ||
	    pread(e->fd, &hex, sizeof(hex), (off_t)off) != sizeof(hex) || (hex >> 24) != 3) {
		pt_elf_close(e);
		return -ENOTSUP;   /* 3.10 and older have no Py_Version */
	}
	memset(out, 0, sizeof(*out));
	out->hexversion = hex;
	out->minor = (hex >> 16) & 0xff;
	out->runtime_vaddr = sc.runtime;
	out->pie = e->type == ET_DYN;
	pt_elf_close(e);
	if (ino_ok)
		out->inode = st.st_ino;
	for (k = 0; k < sizeof(tables) / sizeof(tables[0]); k++) {
		if (tables[k].minor == out->minor) {
			out->off = tables[k].k;
			out->path = strdup(path);
			return out->path ? 0 : -ENOMEM;
		}
	}
	return -ENOTSUP;
}

int pt_py_detect(const char *const *paths, int npaths, struct pt_py_info *out)
{
	int k, err, ret = -ENOENT;

	for (k = 0; k < npaths; k++) {
		struct pt_elf e;

		/* Launch mode: our own view of the program and its libraries. */
		err = pt_elf_open(paths[k], &e);
		if (!err)
			err = detect_elf(paths[k], &e, out);
		if (err == 0)
			return 0;
		if (err == -ENOTSUP)
			ret = err;
	}
	return ret;
}

int pt_py_detect_pid(pid_t pid, struct pt_py_info *out)
{
	struct pt_maps maps = { 0 };
	int k, err, ret = -ENOENT;

	err = pt_maps_read(pid, &maps);
	if (err)
		return err;
	for (k = 0; k < maps.n; k++) {
		const struct pt_mapping *m = &maps.m[k];
		struct pt_mapped mp = { m->path, m->start, m->end, m->inode, m->deleted };
		struct pt_elf e;
		int fd;

		/* Each object once: its first mapping (pgoff 0). */
		if (!m->path || m->path[0] != '/' || m->pgoff != 0)
			continue;
		/* The mapped inode, inside the target's root or through map_files. */
		fd = pt_mapped_open(pid, &mp, 0, NULL);
		if (fd < 0)
			continue;
		err = pt_elf_open_fd(fd, &e);
		if (err) {
			close(fd);
			continue;
		}
		e.own_fd = 1;
		err = detect_elf(m->path, &e, out);
		if (err == 0) {
			ret = 0;
			break;
		}
		if (err == -ENOTSUP)
			ret = err;
	}
	pt_maps_free(&maps);
	return ret;
}

int pt_py_locate(pid_t pid, struct pt_py_info *info)
{
	struct pt_maps maps = { 0 };
	int k, ret = -ENOENT;

	if (pt_maps_read(pid, &maps))
		return -ENOENT;
	/* A shared object's first PT_LOAD maps file offset 0 at vaddr 0 (what ld and lld
	 * write): the mapping of offset 0 starts at the load bias. */
	for (k = 0; k < maps.n; k++) {
		if (maps.m[k].path && maps.m[k].pgoff == 0 &&
		    (info->inode ? maps.m[k].inode == info->inode : strcmp(maps.m[k].path, info->path) == 0)) {
			/* An executable (ET_EXEC) is where its vaddrs say. */
			info->off.runtime = (info->pie ? maps.m[k].start : 0) + info->runtime_vaddr;
			ret = 0;
			break;
		}
	}
	pt_maps_free(&maps);
	return ret;
}

void pt_py_info_free(struct pt_py_info *info)
{
	if (!info)
		return;
	free(info->path);
	info->path = NULL;
}

/* ---- location tables -------------------------------------------------------------------- */

/* Objects/locations.md (3.11+): entries of 1 + N bytes; the first has bit 7 set, the code in
 * bits 3..6 and the length - 1 (code units) in bits 0..2. Varints are 6-bit little-endian
 * chunks with 0x40 as the continuation bit; signed ones keep the sign in bit 0. */
static uint32_t read_varint(const uint8_t *t, size_t len, size_t *pos)
{
	uint32_t v = 0, shift = 0;

	while (*pos < len) {
		uint8_t b = t[(*pos)++];

		v |= (uint32_t)(b & 63) << shift;
		shift += 6;
		if (!(b & 64) || shift > 30)
			break;
	}
	return v;
}

static int read_svarint(const uint8_t *t, size_t len, size_t *pos)
{
	uint32_t v = read_varint(t, len, pos);

	return (v & 1) ? -(int)(v >> 1) : (int)(v >> 1);
}

int pt_py_line(const uint8_t *table, size_t len, int firstlineno, uint32_t idx)
{
	size_t pos = 0;
	uint32_t addr = 0;
	/* 64 bits: the deltas are the target's, and an int sum could overflow. */
	int64_t line = firstlineno;

	while (pos < len) {
		uint8_t first = table[pos++];
		uint32_t code = (first >> 3) & 15, n = (first & 7) + 1;
		int delta = 0;
		bool none = false;

		if (!(first & 0x80))
			return -1;      /* not at an entry start: a corrupt table */
		switch (code) {
		case 15:                /* no location */
			none = true;
			break;
		case 14:                /* long form: line delta, end line, columns */
			delta = read_svarint(table, len, &pos);
			read_varint(table, len, &pos);
			read_varint(table, len, &pos);
			read_varint(table, len, &pos);
			break;
		case 13:                /* no columns */
			delta = read_svarint(table, len, &pos);
			break;
		case 10: case 11: case 12:   /* one line, delta code - 10, two column bytes */
			delta = (int)code - 10;
			pos += 2;
			break;
		default:                /* short form, same line, one column byte */
			pos += 1;
			break;
		}
		line += delta;
		if (line < INT_MIN || line > INT_MAX)
			return -1;      /* no real line number: a corrupt table */
		if (idx < addr + n)
			return none ? -1 : (int)line;
		addr += n;
	}
	return -1;
}

void pt_py_format(char *buf, size_t size, const char *filename, const char *func, int line)
{
	const char *base = filename ? strrchr(filename, '/') : NULL;
	size_t blen;

	base = base ? base + 1 : (filename && *filename ? filename : "?");
	blen = strlen(base);
	if (blen > 3 && strcmp(base + blen - 3, ".py") == 0)
		blen -= 3;
	if (line >= 0)
		snprintf(buf, size, "%.*s:%s:%d", (int)blen, base, func && *func ? func : "?", line);
	else
		snprintf(buf, size, "%.*s:%s", (int)blen, base, func && *func ? func : "?");
}

/* ---- splicing --------------------------------------------------------------------------- */

uint32_t pt_py_splice(const bool *is_eval, uint32_t nnative, const __u64 *w, uint32_t nw,
		      struct pt_py_item *out, uint32_t max, uint32_t *unmatched)
{
	uint32_t o = 0, k, j = 0, left = 0;
	bool trunc = false, trunc_done = false;

#define PUT(kd, ix) do { if (o < max) { out[o].kind = (kd); out[o].i = (ix); o++; } } while (0)
	if (unmatched)
		*unmatched = 0;
	for (k = 0; k < nw; k++)
		if (pt_py_is_boundary(w[k]) && (w[k] & 3) == PT_PY_B_TRUNC)
			trunc = true;
	for (k = 0; k < nnative; k++) {
		uint32_t start = j, frames = 0;

		if (!is_eval[k]) {
			PUT(PT_PY_ITEM_NATIVE, k);
			continue;
		}
		/* The next run of Python frames: up to and including its entry boundary. */
		for (; j < nw; j++) {
			if (pt_py_is_boundary(w[j])) {
				if ((w[j] & 3) == PT_PY_B_ENTRY) {
					j++;
					break;
				}
				continue;
			}
			frames++;
		}
		if (!frames) {
			/* No run for this eval frame (the chain was cut, or an empty call):
			 * keep the native frame, after saying where Python frames were lost. */
			if (trunc && !trunc_done && j >= nw) {
				PUT(PT_PY_ITEM_TRUNC, 0);
				trunc_done = true;
			}
			PUT(PT_PY_ITEM_NATIVE, k);
			continue;
		}
		for (; start < j; start++)
			if (!pt_py_is_boundary(w[start]))
				PUT(PT_PY_ITEM_PY, start);
		/* The chain was cut inside this run: its callers are lost from here. */
		if (trunc && !trunc_done && j >= nw) {
			PUT(PT_PY_ITEM_TRUNC, 0);
			trunc_done = true;
		}
	}
	/* Runs without a native eval frame (the native stack was cut short): at the root end. */
	for (; j < nw; j++) {
		if (!pt_py_is_boundary(w[j])) {
			PUT(PT_PY_ITEM_PY, j);
			left++;
		}
	}
	if (trunc && !trunc_done)
		PUT(PT_PY_ITEM_TRUNC, 0);
	if (unmatched)
		*unmatched = left;
#undef PUT
	return o;
}

/* ---- code objects ------------------------------------------------------------------------ */

/*
 * A code object's address is not its identity: module bodies, class bodies, exec()'d code and
 * lambdas are freed and their memory reused by other code objects. So names are taken per
 * stack, when the kernel announces the stack (PT_EV_PY_STACK) and the code objects it names are
 * alive: each stack keeps the records of its own words. Records are immutable; an address
 * maps to its latest record, reused only while the object still shows the same type, file,
 * name, line table and first line (one read of its header).
 */
struct code_rec {
	uint64_t code;
	bool ok;
	uint64_t sig[4];        /* ob_type, co_filename, co_qualname, co_linetable as read */
	int32_t firstlineno;
	char *name;             /* co_qualname */
	char *file;             /* co_filename */
	uint8_t *table;         /* co_linetable */
	size_t table_len;
	/* Labels by line: most code objects show one or two lines. */
	struct { int line; char *label; } *labels;
	uint32_t nlabels;
	char *func;             /* "module:qualname" (no line), made on first use */
};

struct stack_recs {
	uint32_t n;
	uint32_t *rec;          /* per word: record index + 1 (0: a boundary) */
};

struct pt_py_resolver {
	int mem_fd;
	struct py_user_off u;
	struct code_rec *recs;
	uint32_t nrecs, rcap;
	uint64_t *slot_code;    /* open addressing: code address -> latest record */
	uint32_t *slot_rec;
	uint32_t scap, sused;
	struct stack_recs *stacks;
	uint32_t nstacks;
	uint64_t unreadable;
	uint64_t code_type;     /* PyCode_Type's address, once seen */
};

struct pt_py_resolver *pt_py_resolver_new(pid_t pid, const struct pt_py_info *info)
{
	struct pt_py_resolver *r = calloc(1, sizeof(*r));
	char path[64];
	size_t k;

	if (!r)
		return NULL;
	for (k = 0; k < sizeof(tables) / sizeof(tables[0]); k++)
		if (tables[k].minor == info->minor)
			r->u = tables[k].u;
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	r->mem_fd = open(path, O_RDONLY | O_CLOEXEC);
	r->scap = 1024;
	r->slot_code = calloc(r->scap, sizeof(*r->slot_code));
	r->slot_rec = calloc(r->scap, sizeof(*r->slot_rec));
	if (!r->slot_code || !r->slot_rec) {
		pt_py_resolver_free(r);
		return NULL;
	}
	return r;
}

void pt_py_resolver_free(struct pt_py_resolver *r)
{
	uint32_t k, j;

	if (!r)
		return;
	for (k = 0; k < r->nrecs; k++) {
		free(r->recs[k].name);
		free(r->recs[k].file);
		free(r->recs[k].table);
		for (j = 0; j < r->recs[k].nlabels; j++)
			free(r->recs[k].labels[j].label);
		free(r->recs[k].labels);
		free(r->recs[k].func);
	}
	for (k = 0; k < r->nstacks; k++)
		free(r->stacks[k].rec);
	free(r->stacks);
	free(r->recs);
	free(r->slot_code);
	free(r->slot_rec);
	if (r->mem_fd >= 0)
		close(r->mem_fd);
	free(r);
}

uint64_t pt_py_unreadable(const struct pt_py_resolver *r)
{
	return r ? r->unreadable : 0;
}

static int rd(struct pt_py_resolver *r, uint64_t addr, void *buf, size_t len)
{
	if (r->mem_fd < 0 || !addr)
		return -1;
	return pread(r->mem_fd, buf, len, (off_t)addr) == (ssize_t)len ? 0 : -1;
}

static int rd64(struct pt_py_resolver *r, uint64_t addr, uint64_t *v)
{
	return rd(r, addr, v, sizeof(*v));
}

static size_t put_utf8(char *o, uint32_t c)
{
	if (c < 0x80) {
		o[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		o[0] = (char)(0xc0 | (c >> 6));
		o[1] = (char)(0x80 | (c & 63));
		return 2;
	}
	if (c < 0x10000) {
		o[0] = (char)(0xe0 | (c >> 12));
		o[1] = (char)(0x80 | ((c >> 6) & 63));
		o[2] = (char)(0x80 | (c & 63));
		return 3;
	}
	o[0] = (char)(0xf0 | (c >> 18));
	o[1] = (char)(0x80 | ((c >> 12) & 63));
	o[2] = (char)(0x80 | ((c >> 6) & 63));
	o[3] = (char)(0x80 | (c & 63));
	return 4;
}

/* A str object as UTF-8 (compact strings only: what the compiler makes for names). */
static char *read_str(struct pt_py_resolver *r, uint64_t obj)
{
	uint64_t len;
	uint32_t state, kind, ascii, compact, i;
	uint8_t *raw;
	char *out;
	size_t o = 0;

	if (rd64(r, obj + 16, &len) || rd(r, obj + 32, &state, sizeof(state)) || len > 4096)
		return NULL;
	/* state: interned:2, kind:3, compact:1, ascii:1 (3.11 .. 3.13) */
	kind = (state >> 2) & 7;
	compact = (state >> 5) & 1;
	ascii = (state >> 6) & 1;
	if (!compact || (kind != 1 && kind != 2 && kind != 4))
		return NULL;
	raw = malloc(len * kind + 1);
	out = malloc(len * 4 + 1);
	if (!raw || !out || rd(r, obj + (ascii ? r->u.ascii_size : r->u.compact_size), raw, len * kind)) {
		free(raw);
		free(out);
		return NULL;
	}
	for (i = 0; i < len; i++) {
		uint32_t c = kind == 1 ? raw[i] : kind == 2 ? ((uint16_t *)raw)[i] : ((uint32_t *)raw)[i];

		o += put_utf8(out + o, c > 0x10ffff ? '?' : c);
	}
	out[o] = 0;
	free(raw);
	return out;
}

static uint32_t slot_of(uint64_t key, uint32_t cap)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdULL;
	key ^= key >> 33;
	return (uint32_t)key & (cap - 1);
}

/* Slot of code in the address table (its own, or the empty one where it goes). */
static uint32_t slot_find(struct pt_py_resolver *r, uint64_t code)
{
	uint32_t s;

	for (s = slot_of(code, r->scap); r->slot_code[s]; s = (s + 1) & (r->scap - 1))
		if (r->slot_code[s] == code)
			break;
	return s;
}

static int slots_grow(struct pt_py_resolver *r)
{
	uint32_t ocap = r->scap, k, s;
	uint64_t *oc = r->slot_code;
	uint32_t *orc = r->slot_rec;

	r->scap *= 2;
	r->slot_code = calloc(r->scap, sizeof(*r->slot_code));
	r->slot_rec = calloc(r->scap, sizeof(*r->slot_rec));
	if (!r->slot_code || !r->slot_rec) {
		free(r->slot_code);
		free(r->slot_rec);
		r->slot_code = oc;
		r->slot_rec = orc;
		r->scap = ocap;
		return -ENOMEM;
	}
	for (k = 0; k < ocap; k++) {
		if (!oc[k])
			continue;
		s = slot_find(r, oc[k]);
		r->slot_code[s] = oc[k];
		r->slot_rec[s] = orc[k];
	}
	free(oc);
	free(orc);
	return 0;
}

/* The header fields that identify a code object, in one read: 0, or -1 if unreadable or
 * not code. */
static int code_sig(struct pt_py_resolver *r, uint64_t code, uint64_t sig[4], int32_t *first)
{
	uint8_t hdr[256];
	uint32_t need = r->u.co_linetable + 8;
	uint64_t tpname;
	char tn[5];

	if (need > sizeof(hdr) || rd(r, code, hdr, need))
		return -1;
	memcpy(&sig[0], hdr + 8, 8);
	memcpy(&sig[1], hdr + r->u.co_filename, 8);
	memcpy(&sig[2], hdr + r->u.co_qualname, 8);
	memcpy(&sig[3], hdr + r->u.co_linetable, 8);
	memcpy(first, hdr + r->u.co_firstlineno, sizeof(*first));
	/* ob_type's tp_name must be "code" (checked once per type object). A freed object
	 * fails here: glibc's tcache and pymalloc's free lists overwrite its first words
	 * (ob_refcnt, ob_type). */
	if (r->code_type && sig[0] == r->code_type)
		return 0;
	if (rd64(r, sig[0] + 24, &tpname) || rd(r, tpname, tn, 5) || memcmp(tn, "code", 5))
		return -1;
	r->code_type = sig[0];
	return 0;
}

/* The record of the code object now at this address (a new one if it changed): index + 1,
 * 0 when out of memory. */
static uint32_t code_record(struct pt_py_resolver *r, uint64_t code)
{
	uint64_t sig[4] = { 0 }, tlen;
	int32_t first = 0;
	struct code_rec *e;
	uint32_t s;
	bool ok;

	if (r->sused * 2 >= r->scap && slots_grow(r))
		return 0;
	s = slot_find(r, code);
	ok = code_sig(r, code, sig, &first) == 0;
	if (r->slot_code[s]) {
		e = &r->recs[r->slot_rec[s] - 1];
		/* Same object as before: keep its record. Unreadable now (freed since the stack
		 * was made: we read a little behind the target, e.g. while it finalizes) but read
		 * well before: the last object seen there is the best guess; another code object
		 * reusing the address would have read well, with another signature. */
		if (ok ? (e->ok && !memcmp(e->sig, sig, sizeof(sig)) && e->firstlineno == first) : 1)
			return r->slot_rec[s];
	}
	if (r->nrecs == r->rcap) {
		uint32_t nc = r->rcap ? r->rcap * 2 : 256;
		struct code_rec *n = realloc(r->recs, nc * sizeof(*n));

		if (!n)
			return 0;
		r->recs = n;
		r->rcap = nc;
	}
	e = &r->recs[r->nrecs];
	memset(e, 0, sizeof(*e));
	e->code = code;
	if (ok) {
		memcpy(e->sig, sig, sizeof(sig));
		e->firstlineno = first;
		e->file = read_str(r, sig[1]);
		e->name = read_str(r, sig[2]);
		if (rd64(r, sig[3] + 16, &tlen) == 0 && tlen < (1u << 20) &&
		    (e->table = malloc(tlen ? tlen : 1)) && rd(r, sig[3] + r->u.bytes_sval, e->table, tlen) == 0)
			e->table_len = tlen;
		e->ok = e->file && e->name;
	}
	if (!e->ok)
		r->unreadable++;
	r->nrecs++;
	if (!r->slot_code[s])
		r->sused++;
	r->slot_code[s] = code;
	r->slot_rec[s] = r->nrecs;
	return r->nrecs;
}

int pt_py_resolve_stack(struct pt_py_resolver *r, uint32_t idx, const __u64 *w, uint32_t n)
{
	struct stack_recs *st;
	uint32_t k;

	if (!r)
		return -EINVAL;
	if (idx >= r->nstacks) {
		uint32_t nn = idx + 1 > r->nstacks * 2 ? idx + 1 : r->nstacks * 2;
		struct stack_recs *ns = realloc(r->stacks, nn * sizeof(*ns));

		if (!ns)
			return -ENOMEM;
		memset(ns + r->nstacks, 0, (nn - r->nstacks) * sizeof(*ns));
		r->stacks = ns;
		r->nstacks = nn;
	}
	st = &r->stacks[idx];
	if (st->rec)
		return 0;   /* a stack never changes: resolved once, when it appeared */
	if (n > PT_MAX_PY_FRAMES)
		n = PT_MAX_PY_FRAMES;
	st->rec = calloc(n ? n : 1, sizeof(*st->rec));
	if (!st->rec)
		return -ENOMEM;
	st->n = n;
	for (k = 0; k < n; k++) {
		uint32_t j;

		if (!(w[k] & PT_PY_TAG) || pt_py_is_boundary(w[k]))
			continue;
		/* The frames of one stack were alive together: one address is one object
		 * (recursion repeats it). */
		for (j = 0; j < k; j++)
			if (st->rec[j] && pt_py_word_code(w[j]) == pt_py_word_code(w[k]))
				break;
		st->rec[k] = j < k ? st->rec[j] : code_record(r, pt_py_word_code(w[k]));
	}
	return 0;
}

int pt_py_frame_name(struct pt_py_resolver *r, uint32_t idx, uint32_t k, uint64_t word,
		     const char **name, const char **file, int *line, uint32_t *rec_id)
{
	struct code_rec *e = NULL;
	uint32_t ri = 0, j, wi;
	char buf[512], *lab, *dup;
	void *nl;

	*name = *file = NULL;
	*line = -1;
	*rec_id = 0;
	if (!r)
		return -ENOENT;
	/* A stack announced by the kernel has its records; one that was not (its event was
	 * lost) is read now. */
	if (idx >= r->nstacks || !r->stacks[idx].rec)
		pt_py_resolve_stack(r, idx, NULL, 0);
	if (idx < r->nstacks && k < r->stacks[idx].n)
		ri = r->stacks[idx].rec[k];
	if (!ri)
		ri = code_record(r, pt_py_word_code(word));
	if (!ri)
		return -ENOMEM;
	*rec_id = ri;
	e = &r->recs[ri - 1];
	if (!e->ok) {
		snprintf(buf, sizeof(buf), "[python code 0x%" PRIx64 "]", (uint64_t)pt_py_word_code(word));
		*line = -1;
	} else {
		wi = pt_py_word_idx(word);
		*line = wi ? pt_py_line(e->table, e->table_len, e->firstlineno, wi - 1) : -1;
		if (*line < 0)
			*line = e->firstlineno;
		pt_py_format(buf, sizeof(buf), e->file, e->name, *line);
	}
	for (j = 0; j < e->nlabels; j++)
		if (e->labels[j].line == *line)
			break;
	if (j == e->nlabels) {
		nl = realloc(e->labels, (e->nlabels + 1) * sizeof(*e->labels));
		dup = strdup(buf);
		if (!nl || !dup) {
			free(dup);
			if (nl)
				e->labels = nl;
			return -ENOMEM;
		}
		e->labels = nl;
		e->labels[j].line = *line;
		e->labels[j].label = dup;
		e->nlabels++;
	}
	lab = e->labels[j].label;
	*name = lab;
	*file = e->ok ? e->file : "";
	return e->ok ? 0 : -ENOENT;
}

int pt_py_frame_func(struct pt_py_resolver *r, uint32_t rec_id, const char **func, int *first)
{
	struct code_rec *e;
	char buf[512];

	*func = NULL;
	*first = 0;
	if (!r || !rec_id || rec_id > r->nrecs || !r->recs[rec_id - 1].ok)
		return -ENOENT;
	e = &r->recs[rec_id - 1];
	if (!e->func) {
		pt_py_format(buf, sizeof(buf), e->file, e->name, -1);
		e->func = strdup(buf);
		if (!e->func)
			return -ENOMEM;
	}
	*func = e->func;
	*first = e->firstlineno;
	return 0;
}
