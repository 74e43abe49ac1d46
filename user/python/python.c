// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * python.c — CPython frames: detection, offsets, code-object names, location tables, and the
 * merge of Python frames into native stacks (the kernel side is
 * bpf/python.bpf.h).
 *
 * Offsets: CPython's internal structs change with each minor version. 3.13+ publishes them in
 * _Py_DebugOffsets, at the start of _PyRuntime (its initializer: read from the file, cookie,
 * version and every offset checked, pt_py_debug_offsets). 3.11 and 3.12 publish nothing: the
 * table below was produced with offsetof() against each version's own headers (Py_BUILD_CORE,
 * internal/pycore_*.h): Debian's 3.11.2 (/usr/include/python3.11) and pyenv's 3.11.7 and
 * 3.12.1, x86-64 (3.11.2 and 3.11.7 agree), and is checked against the live target before
 * it is trusted (pt_py_check_live: another build may differ).
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include "python/python.h"
#include "util/elfutil.h"
#include "target/procmaps.h"
#include "target/proc.h"
#include "util/fmt.h"

static const struct {
	uint32_t minor;
	struct pt_py_offsets k;
	struct pt_py_user_off u;
} tables[] = {
	{ 11, { .interp_head = 40, .threads_head = 16, .ts_next = 8, .ts_native_tid = 160,
		.ts_cframe = 56, .cframe_current = 8, .fr_code = 32, .fr_previous = 48,
		.fr_instr = 56, .fr_owner = 69, .fr_is_entry = 68, .co_code_adaptive = 184,
		.minor = 11 },
	  { 112, 120, 128, 136, 72, 32, 48, 72, 16, 32, 24 } },
	{ 12, { .interp_head = 40, .threads_head = 72, .ts_next = 8, .ts_native_tid = 144,
		.ts_cframe = 56, .cframe_current = 0, .fr_code = 0, .fr_previous = 8,
		.fr_instr = 56, .fr_owner = 70, .fr_is_entry = 0, .co_code_adaptive = 192,
		.minor = 12 },
	  { 112, 120, 128, 136, 68, 32, 40, 56, 16, 32, 24 } },
};

/* ---- detection ------------------------------------------------------------------------ */

struct sym_scan {
	uint64_t runtime, version, code_type, str_type;
	bool have_runtime, have_version;
};

static int scan_cb(const struct pt_elf_sym *s, void *ctx)
{
	struct sym_scan *sc = ctx;

	if (!s->shndx)
		return 0;
	if (!sc->have_runtime && strcmp(s->name, "_PyRuntime") == 0) {
		sc->runtime = s->value;
		sc->have_runtime = true;
	} else if (!sc->have_version && strcmp(s->name, "Py_Version") == 0) {
		sc->version = s->value;
		sc->have_version = true;
	} else if (!sc->code_type && strcmp(s->name, "PyCode_Type") == 0) {
		sc->code_type = s->value;
	} else if (!sc->str_type && strcmp(s->name, "PyUnicode_Type") == 0) {
		sc->str_type = s->value;
	}
	return sc->have_runtime && sc->have_version && sc->code_type && sc->str_type;
}

/* ---- _Py_DebugOffsets (3.13+) ------------------------------------------------------------ */

/*
 * The 3.13 layout (Include/internal/pycore_runtime.h): an 8-byte cookie, then uint64 words,
 * each group of offsets led by the size of its structure. Byte positions of the words used;
 * checked against pyenv's 3.13.0 and Debian trixie's 3.13.5 (their offsets equal what
 * offsetof() gives against 3.13's headers).
 */
enum {
	DO_VERSION = 8, DO_FREE_THREADED = 16,
	DO_RT_SIZE = 24, DO_RT_INTERP_HEAD = 40,
	DO_IS_SIZE = 48, DO_IS_THREADS_HEAD = 72,
	DO_TS_SIZE = 152, DO_TS_NEXT = 168, DO_TS_CURRENT_FRAME = 184, DO_TS_NATIVE_TID = 200,
	DO_FR_SIZE = 224, DO_FR_PREVIOUS = 232, DO_FR_EXECUTABLE = 240, DO_FR_INSTR = 248,
	DO_FR_OWNER = 264,
	DO_CO_SIZE = 272, DO_CO_FILENAME = 280, DO_CO_NAME = 288, DO_CO_QUALNAME = 296,
	DO_CO_LINETABLE = 304, DO_CO_FIRSTLINENO = 312, DO_CO_ADAPTIVE = 344,
	DO_OB_SIZE = 352, DO_OB_TYPE = 360,
	DO_TP_SIZE = 368, DO_TP_NAME = 376,
	DO_BY_SIZE = 512, DO_BY_SVAL = 528,
	DO_UN_SIZE = 536, DO_UN_STATE = 544, DO_UN_LENGTH = 552, DO_UN_ASCII_SIZE = 560,
};

static uint64_t do_word(const uint8_t *buf, size_t at)
{
	uint64_t v;

	memcpy(&v, buf + at, sizeof(v));
	return v;
}

/* An offset into a structure: inside its size (read at size_at), room for len bytes, below
 * max (what a fixed read covers), aligned to align. */
static bool do_field(const uint8_t *buf, size_t at, size_t size_at, uint64_t len, uint64_t max,
		     uint64_t align, uint32_t *out, char *why, size_t wsize)
{
	uint64_t v = do_word(buf, at), size = do_word(buf, size_at);

	const char *bad = size > (64u << 20) ? "in a structure of implausible size" :
			  v + len > size ? "outside its structure" :
			  v + len > max ? "beyond the bytes peaktrace reads of it" :
			  (v & (align - 1)) ? "misaligned" : NULL;

	if (bad) {
		snprintf(why, wsize, "_Py_DebugOffsets word at +%zu is %" PRIu64 ": %s (size %" PRIu64 ")",
			 at, v, bad, size);
		return false;
	}
	*out = (uint32_t)v;
	return true;
}

int pt_py_debug_offsets(const uint8_t *buf, size_t len, uint32_t hexversion,
			struct pt_py_offsets *k, struct pt_py_user_off *u, char *why, size_t wsize)
{
	uint64_t ver;
	bool ok = true;
	uint32_t ob_type = 0;

	memset(k, 0, sizeof(*k));
	memset(u, 0, sizeof(*u));
	if (len < 16 || memcmp(buf, "xdebugpy", 8)) {
		snprintf(why, wsize, "no \"xdebugpy\" cookie at the start of _PyRuntime");
		return -EPROTO;
	}
	ver = do_word(buf, DO_VERSION);
	if ((ver >> 16) != (hexversion >> 16)) {
		snprintf(why, wsize, "_Py_DebugOffsets version 0x%08" PRIx64 " is not Py_Version "
			 "0x%08x", ver, hexversion);
		return -EPROTO;
	}
	if (((ver >> 16) & 0xff) != 13) {
		snprintf(why, wsize, "the _Py_DebugOffsets layout of 3.%u is not known to this "
			 "peaktrace (3.13 only)", (unsigned)((ver >> 16) & 0xff));
		return -ENOTSUP;
	}
	if (len < PT_PY_DEBUG_OFFSETS_313) {
		snprintf(why, wsize, "_Py_DebugOffsets shorter than 3.13's");
		return -EPROTO;
	}
	if (do_word(buf, DO_FREE_THREADED)) {
		snprintf(why, wsize, "a free-threaded build (its objects and frames differ)");
		return -ENOTSUP;
	}
	/* Kernel side: the BPF walk reads 8-byte fields; a frame's fields within its first 72
	 * bytes (python.bpf.h PY_FRAME_READ). */
	ok = ok && do_field(buf, DO_RT_INTERP_HEAD, DO_RT_SIZE, 8, ~0ULL, 8, &k->interp_head, why, wsize);
	ok = ok && do_field(buf, DO_IS_THREADS_HEAD, DO_IS_SIZE, 8, ~0ULL, 8, &k->threads_head, why, wsize);
	ok = ok && do_field(buf, DO_TS_NEXT, DO_TS_SIZE, 8, ~0ULL, 8, &k->ts_next, why, wsize);
	ok = ok && do_field(buf, DO_TS_NATIVE_TID, DO_TS_SIZE, 8, ~0ULL, 8, &k->ts_native_tid, why, wsize);
	ok = ok && do_field(buf, DO_TS_CURRENT_FRAME, DO_TS_SIZE, 8, ~0ULL, 8, &k->cframe_current, why, wsize);
	ok = ok && do_field(buf, DO_FR_EXECUTABLE, DO_FR_SIZE, 8, 72, 8, &k->fr_code, why, wsize);
	ok = ok && do_field(buf, DO_FR_PREVIOUS, DO_FR_SIZE, 8, 72, 8, &k->fr_previous, why, wsize);
	ok = ok && do_field(buf, DO_FR_INSTR, DO_FR_SIZE, 8, 72, 8, &k->fr_instr, why, wsize);
	ok = ok && do_field(buf, DO_FR_OWNER, DO_FR_SIZE, 1, 72, 1, &k->fr_owner, why, wsize);
	/* co_code_adaptive is the flexible array at the end: at most the size. */
	ok = ok && do_field(buf, DO_CO_ADAPTIVE, DO_CO_SIZE, 0, 4096, 2, &k->co_code_adaptive, why, wsize);
	/* User side: a code object's header is read in one 256-byte read (code_sig). */
	ok = ok && do_field(buf, DO_CO_FILENAME, DO_CO_SIZE, 8, 256, 8, &u->co_filename, why, wsize);
	ok = ok && do_field(buf, DO_CO_NAME, DO_CO_SIZE, 8, 256, 8, &u->co_name, why, wsize);
	ok = ok && do_field(buf, DO_CO_QUALNAME, DO_CO_SIZE, 8, 256, 8, &u->co_qualname, why, wsize);
	ok = ok && do_field(buf, DO_CO_LINETABLE, DO_CO_SIZE, 8, 256, 8, &u->co_linetable, why, wsize);
	ok = ok && do_field(buf, DO_CO_FIRSTLINENO, DO_CO_SIZE, 4, 256, 4, &u->co_firstlineno, why, wsize);
	ok = ok && do_field(buf, DO_OB_TYPE, DO_OB_SIZE, 8, 64, 8, &ob_type, why, wsize);
	ok = ok && do_field(buf, DO_TP_NAME, DO_TP_SIZE, 8, 4096, 8, &u->tp_name, why, wsize);
	ok = ok && do_field(buf, DO_BY_SVAL, DO_BY_SIZE, 1, 4096, 1, &u->bytes_sval, why, wsize);
	ok = ok && do_field(buf, DO_UN_STATE, DO_UN_SIZE, 4, 4096, 4, &u->str_state, why, wsize);
	ok = ok && do_field(buf, DO_UN_LENGTH, DO_UN_SIZE, 8, 4096, 8, &u->str_length, why, wsize);
	ok = ok && do_field(buf, DO_UN_ASCII_SIZE, DO_UN_SIZE, 0, 4096, 8, &u->ascii_size, why, wsize);
	if (!ok)
		return -EPROTO;
	/* code_sig and the resolver take ob_type at 8 (a non-free-threaded PyObject). */
	if (ob_type != 8) {
		snprintf(why, wsize, "PyObject.ob_type at %u, not 8", ob_type);
		return -EPROTO;
	}
	/* PyCompactUnicodeObject: PyASCIIObject, then utf8_length and utf8 (3.12+). */
	u->compact_size = u->ascii_size + 16;
	k->minor = 13;
	return 0;
}

/* The 3.13+ offsets from the file's _PyRuntime initializer (the cookie and offsets are
 * constants: the process's copy starts as the file's). */
static int debug_offsets_from_file(struct pt_elf *e, uint64_t runtime, struct pt_py_info *out)
{
	uint8_t buf[PT_PY_DEBUG_OFFSETS_313];
	uint64_t off;
	ssize_t n;

	if (pt_elf_vaddr_to_off(e->loads, e->nloads, runtime, &off) ||
	    (n = pread(e->fd, buf, sizeof(buf), (off_t)off)) < 16) {
		snprintf(out->why, sizeof(out->why), "_PyRuntime (0x%" PRIx64 ") not readable in the file",
			 runtime);
		return -ENOTSUP;
	}
	if (pt_py_debug_offsets(buf, (size_t)n, out->hexversion, &out->off, &out->u, out->why,
				sizeof(out->why)))
		return -ENOTSUP;
	out->from_debug = true;
	return 0;
}

/* path is the object's name as the target knows it; e is it opened (closed here). */
static int detect_elf(const char *path, struct pt_elf *e, struct pt_py_info *out)
{
	struct sym_scan sc = { 0 };
	struct stat st;
	uint64_t off;
	uint32_t hex = 0;
	size_t k;
	int ino_ok, err = -ENOTSUP;

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
	memset(out, 0, sizeof(*out));
	out->path = strdup(path);
	if (!out->path) {
		pt_elf_close(e);
		return -ENOMEM;
	}
	/* Py_Version (3.11+) is a const in the file: PY_VERSION_HEX, 0x030b02f0 for 3.11.2. */
	if (!sc.have_version || pt_elf_vaddr_to_off(e->loads, e->nloads, sc.version, &off) ||
	    pread(e->fd, &hex, sizeof(hex), (off_t)off) != sizeof(hex) || (hex >> 24) != 3) {
		pt_elf_close(e);
		snprintf(out->why, sizeof(out->why), "older than 3.11 (no Py_Version)");
		return -ENOTSUP;
	}
	out->hexversion = hex;
	out->minor = (hex >> 16) & 0xff;
	out->runtime_vaddr = sc.runtime;
	out->code_type_vaddr = sc.code_type;
	out->str_type_vaddr = sc.str_type;
	out->pie = e->type == ET_DYN;
	if (ino_ok)
		out->inode = st.st_ino;
	if (out->minor >= 13) {
		err = debug_offsets_from_file(e, sc.runtime, out);
	} else {
		snprintf(out->why, sizeof(out->why), "3.%u has no offset table in this peaktrace",
			 out->minor);
		for (k = 0; k < sizeof(tables) / sizeof(tables[0]); k++) {
			if (tables[k].minor == out->minor) {
				out->off = tables[k].k;
				out->u = tables[k].u;
				out->why[0] = 0;
				err = 0;
			}
		}
	}
	pt_elf_close(e);
	return err;
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

/* The target's pid namespace, when it is not the initial one (a container), whichever
 * namespace peaktrace itself runs in: the BPF side's thread ids are the initial namespace's,
 * CPython's are its own. nsfs's device as the kernel encodes a dev_t (MKDEV: major << 20 |
 * minor), which bpf_get_ns_current_pid_tgid compares. */
static void pidns_of(pid_t pid, struct pt_py_offsets *o)
{
	struct stat its;

	o->ns_dev = o->ns_ino = 0;
	if (pt_proc_pidns(pid, &its) || (unsigned long long)its.st_ino == PT_PID_INIT_INO)
		return;
	o->ns_dev = ((uint64_t)major(its.st_dev) << 20) | minor(its.st_dev);
	o->ns_ino = its.st_ino;
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
	if (!ret)
		pidns_of(pid, &info->off);
	return ret;
}

void pt_py_info_free(struct pt_py_info *info)
{
	if (!info)
		return;
	free(info->path);
	info->path = NULL;
}

/* ---- checking the offsets against the live target ------------------------------------- */

#define CHECK_MAX_TIDS 4096

struct live {
	int fd;
	uint64_t bias;          /* load bias of the object defining _PyRuntime */
	const struct pt_py_info *info;
	uint64_t tids[CHECK_MAX_TIDS];
	uint32_t ntids;
};

static int lrd(struct live *l, uint64_t addr, void *buf, size_t len)
{
	return addr && pread(l->fd, buf, len, (off_t)addr) == (ssize_t)len ? 0 : -1;
}

/* The target's threads by the ids they know themselves by (NSpid's last field). */
static void live_tids(pid_t pid, struct live *l)
{
	char path[64], v[128];
	struct dirent *d;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		return;
	while ((d = readdir(dir)) && l->ntids < CHECK_MAX_TIDS) {
		char *last;
		long tid = strtol(d->d_name, NULL, 10);

		if (tid <= 0)
			continue;
		/* pt_proc_status_field takes a pid: the task's status is under the same name. */
		if (pt_proc_status_field((pid_t)tid, "NSpid", v, sizeof(v))) {
			l->tids[l->ntids++] = (uint64_t)tid;
			continue;
		}
		last = strrchr(v, '\t');
		last = last ? last + 1 : v;
		l->tids[l->ntids++] = strtoull(last, NULL, 10);
	}
	closedir(dir);
}

/* obj's type is the one at type_vaddr (when the symbol is known) or is named name. */
static bool live_is(struct live *l, uint64_t obj, uint64_t type_vaddr, const char *name)
{
	uint64_t type, tpname;
	char tn[8] = { 0 };
	size_t n = strlen(name) + 1;

	if (lrd(l, obj + 8, &type, sizeof(type)))
		return false;
	if (type_vaddr)
		return type == type_vaddr + l->bias;
	return lrd(l, type + l->info->u.tp_name, &tpname, sizeof(tpname)) == 0 &&
	       lrd(l, tpname, tn, n) == 0 && memcmp(tn, name, n) == 0;
}

/* The frames of thread state t: 1 when one is a code object named by a str, 0 when there is
 * no Python frame to check, -1 when a frame is not what the offsets say. */
static int live_frames(struct live *l, uint64_t t, char *why, size_t wsize)
{
	const struct pt_py_offsets *o = &l->info->off;
	uint64_t f = 0, code, name;
	uint8_t owner;
	int k;

	if (o->ts_cframe ? lrd(l, t + o->ts_cframe, &f, 8) || (f && lrd(l, f + o->cframe_current, &f, 8))
			 : lrd(l, t + o->cframe_current, &f, 8)) {
		snprintf(why, wsize, "thread state 0x%" PRIx64 ": current frame unreadable", t);
		return -1;
	}
	for (k = 0; k < 16 && f; k++) {
		if (lrd(l, f + o->fr_owner, &owner, 1) || lrd(l, f + o->fr_code, &code, 8)) {
			snprintf(why, wsize, "frame 0x%" PRIx64 " unreadable", f);
			return -1;
		}
		/* 3.12+: the entry shim (owned by the C stack) runs no code of its own. */
		if (!(owner == PT_PY_OWNED_BY_CSTACK && !o->fr_is_entry)) {
			if (!live_is(l, code, l->info->code_type_vaddr, "code")) {
				snprintf(why, wsize, "frame 0x%" PRIx64 ": f_code 0x%" PRIx64 " is not a code "
					 "object", f, code);
				return -1;
			}
			if (lrd(l, code + l->info->u.co_name, &name, 8) ||
			    !live_is(l, name, l->info->str_type_vaddr, "str")) {
				snprintf(why, wsize, "code object 0x%" PRIx64 ": co_name is not a str", code);
				return -1;
			}
			return 1;
		}
		if (lrd(l, f + o->fr_previous, &f, 8))
			f = 0;
	}
	return 0;
}

static int live_check(pid_t pid, struct live *l, char *why, size_t wsize)
{
	const struct pt_py_offsets *o = &l->info->off;
	uint64_t interp = 0, t = 0, tid;
	uint32_t k, j, states = 0, matched = 0;
	int framed = 0;

	if (lrd(l, o->runtime + o->interp_head, &interp, 8)) {
		snprintf(why, wsize, "_PyRuntime at 0x%" PRIx64 " unreadable", (uint64_t)o->runtime);
		return -EPROTO;
	}
	if (!interp || lrd(l, interp + o->threads_head, &t, 8) || !t)
		return -EAGAIN;   /* not initialized yet (launch mode, before Py_Initialize) */
	live_tids(pid, l);
	for (k = 0; k < PT_PY_MAX_THREADS && t && framed <= 0; k++, states++) {
		if (lrd(l, t + o->ts_native_tid, &tid, 8)) {
			snprintf(why, wsize, "thread state 0x%" PRIx64 " unreadable", t);
			return -EPROTO;
		}
		for (j = 0; j < l->ntids && l->tids[j] != tid; j++)
			;
		if (j < l->ntids) {
			matched++;
			framed = live_frames(l, t, why, wsize);
			if (framed < 0)
				return -EPROTO;
		}
		if (lrd(l, t + o->ts_next, &t, 8))
			break;
	}
	if (!matched) {
		snprintf(why, wsize, "none of the interpreter's %u thread states has a native_thread_id "
			 "of the target's threads", states);
		return -EPROTO;
	}
	return framed > 0 ? 0 : -EAGAIN;
}

/* A live check fails this many times in a row, 100 ms apart, before the offsets are refused:
 * the target runs while it is read, so one frame can be caught half-made (seen once under load
 * through the pyenv shim: its Python frames were all lost). */
#define PT_PY_CHECK_FAILS 3

int pt_py_check_live(pid_t pid, struct pt_py_info *info)
{
	struct live *l;
	char why[sizeof(info->why)];
	struct timespec now;
	uint64_t now_ns;
	int ret;

	if (info->check)
		return info->check > 0 ? 0 : -EPROTO;
	if (!info->off.runtime)
		return -EAGAIN;
	/* Undecided (the interpreter not up yet, no frame yet): at most one attempt per 100 ms
	 * of the poll loop. */
	clock_gettime(CLOCK_MONOTONIC, &now);
	now_ns = (uint64_t)now.tv_sec * 1000000000ULL + (uint64_t)now.tv_nsec;
	if (now_ns < info->check_next_ns)
		return -EAGAIN;
	info->check_next_ns = now_ns + 100000000ULL;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -EAGAIN;
	l->info = info;
	l->bias = info->off.runtime - info->runtime_vaddr;
	l->fd = pt_proc_mem_open(pid);
	if (l->fd < 0) {
		free(l);
		return -EAGAIN;
	}
	why[0] = 0;
	ret = live_check(pid, l, why, sizeof(why));
	close(l->fd);
	free(l);
	if (ret == -EPROTO && ++info->check_fails < PT_PY_CHECK_FAILS)
		return -EAGAIN;   /* a frame caught while it changed: ask again in 100 ms */
	if (ret == 0)
		info->check = 1;
	else if (ret == -EPROTO) {
		info->check = -1;
		if (info->from_debug)
			snprintf(info->why, sizeof(info->why), "its _Py_DebugOffsets fail on the live "
				 "target: %s", why);
		else
			snprintf(info->why, sizeof(info->why), "the 3.%u table's offsets fail on the live "
				 "target: %s", info->minor, why);
	}
	return ret;
}

void pt_py_warn(struct pt_py_info *info)
{
	char path[512];

	pt_sanitize(path, sizeof(path), info->path ? info->path : "?");
	info->lost = 1;
	if (info->minor)
		fprintf(stderr, "peaktrace: warning: CPython 3.%u in %s: Python frames cannot be read "
			"(%s); native frames only, counted in python_layout_failed\n", info->minor, path,
			info->why);
	else
		fprintf(stderr, "peaktrace: warning: CPython in %s: Python frames cannot be read (%s); "
			"native frames only, counted in python_layout_failed\n", path, info->why);
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
	struct pt_py_user_off u;
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

	if (!r)
		return NULL;
	r->u = info->u;
	r->mem_fd = pt_proc_mem_open(pid);
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

	if (rd64(r, obj + r->u.str_length, &len) || rd(r, obj + r->u.str_state, &state, sizeof(state)) ||
	    len > 4096)
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
	if (rd64(r, sig[0] + r->u.tp_name, &tpname) || rd(r, tpname, tn, 5) || memcmp(tn, "code", 5))
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
